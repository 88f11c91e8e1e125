//! The entries of the directories an import search looks in, each directory listed once per run: most
//! candidates of an import (`utils/gcp.py`, `src/utils/gcp/__init__.py`, the standard library's and
//! installed packages' names in every directory above a file) do not exist, and a set of names answers
//! each of them without a system call. Only names are read here, never a file's contents: whether a file
//! that exists may be read is the confinement's to say.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::{Arc, RwLock};

use rustc_hash::{FxHashMap, FxHashSet};

/// How many entries a directory's listing keeps; a larger directory is not listed, and its candidates are
/// asked of the file system one by one.
pub const MAX_LISTED_ENTRIES: usize = 1 << 16;

/// The names in one directory (`None`: unreadable, or more than [`MAX_LISTED_ENTRIES`]).
type Listing = Option<Arc<Entries>>;

/// The entries of one directory: every name, and the names an import finds there.
#[derive(Debug, Default)]
struct Entries {
    /// Every entry's name.
    names: FxHashSet<OsString>,
    /// The names an import of a module or package finds: every entry's name, and the name of each
    /// `.py` file without its extension (`gcp` for `gcp.py`).
    importable: FxHashSet<OsString>,
}

/// The directories listed so far in a run, shared by every file's check.
#[derive(Debug, Default)]
pub struct Listings {
    listed: RwLock<FxHashMap<OsString, Listing>>,
}

impl Listings {
    /// Whether `directory` holds an entry named `name`: `None` when the directory could not be listed.
    pub fn contains(&self, directory: &Path, name: &OsStr) -> Option<bool> {
        self.answer(directory, |entries| entries.names.contains(name))
    }

    /// Whether `directory` holds a module or package named `name` (`name.py`, `name/`, or any other entry
    /// `name`): `None` when the directory could not be listed.
    pub fn has_module_or_package(&self, directory: &Path, name: &str) -> Option<bool> {
        self.answer(directory, |entries| entries.importable.contains(OsStr::new(name)))
    }

    /// What `question` answers of the entries of `directory`, listed on first use.
    fn answer(&self, directory: &Path, question: impl Fn(&Entries) -> bool) -> Option<bool> {
        if let Some(known) = self
            .listed
            .read()
            .ok()
            .and_then(|listed| listed.get(directory.as_os_str()).map(|listing| listing.as_deref().map(&question)))
        {
            return known;
        }
        let listing = list(directory).map(Arc::new);
        let answer = listing.as_deref().map(&question);
        if let Ok(mut listed) = self.listed.write() {
            listed.insert(directory.as_os_str().to_owned(), listing);
        }
        answer
    }
}

/// The entries of `directory`, at most [`MAX_LISTED_ENTRIES`] of them.
fn list(directory: &Path) -> Option<Entries> {
    let mut entries = Entries::default();
    for entry in std::fs::read_dir(directory).ok()? {
        let entry = entry.ok()?;
        if entries.names.len() == MAX_LISTED_ENTRIES {
            return None;
        }
        let name = entry.file_name();
        // A module is imported by a name, which is text: a name that is not has no stem to import.
        if let Some(stem) = name.to_str().and_then(|name| name.strip_suffix(".py")) {
            entries.importable.insert(OsString::from(stem));
        }
        entries.importable.insert(name.clone());
        entries.names.insert(name);
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_answers_for_its_names_and_a_missing_one_for_none() {
        let directory = tempfile::tempdir().unwrap();
        std::fs::write(directory.path().join("gcp.py"), "").unwrap();
        std::fs::create_dir(directory.path().join("utils")).unwrap();
        let listings = Listings::default();
        assert_eq!(listings.contains(directory.path(), OsStr::new("gcp.py")), Some(true));
        assert_eq!(listings.contains(directory.path(), OsStr::new("utils")), Some(true));
        assert_eq!(listings.contains(directory.path(), OsStr::new("time.py")), Some(false));
        assert_eq!(listings.contains(&directory.path().join("missing"), OsStr::new("gcp.py")), None);
        assert_eq!(listings.has_module_or_package(directory.path(), "gcp"), Some(true));
        assert_eq!(listings.has_module_or_package(directory.path(), "utils"), Some(true));
        assert_eq!(listings.has_module_or_package(directory.path(), "gcp.py"), Some(true));
        assert_eq!(listings.has_module_or_package(directory.path(), "time"), Some(false));
        assert_eq!(listings.has_module_or_package(&directory.path().join("missing"), "gcp"), None);
    }
}
