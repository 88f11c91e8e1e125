//! The entries of the directories an import search looks in, each directory listed once per run: most
//! candidates of an import (`utils/gcp.py`, `src/utils/gcp/__init__.py`, the standard library's and
//! installed packages' names in every directory above a file) do not exist, and a set of names answers
//! each of them without a system call. Only names are read here, never a file's contents: whether a file
//! that exists may be read is the confinement's to say.

use std::ffi::{OsStr, OsString};
use std::io::ErrorKind;
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
        let listing = if self.is_known_missing(directory) { Some(Entries::default()) } else { list(directory) };
        let listing = listing.map(Arc::new);
        let answer = listing.as_deref().map(&question);
        if let Ok(mut listed) = self.listed.write() {
            listed.insert(directory.as_os_str().to_owned(), listing);
        }
        answer
    }
}

impl Listings {
    /// Whether the listing of `directory`'s parent, when it was listed already, lacks `directory`: then
    /// nothing is below it, and no system call needs to say so.
    fn is_known_missing(&self, directory: &Path) -> bool {
        let (Some(parent), Some(name)) = (directory.parent(), directory.file_name()) else { return false };
        self.listed.read().ok().is_some_and(
            |listed| matches!(listed.get(parent.as_os_str()), Some(Some(entries)) if !entries.names.contains(name)),
        )
    }
}

/// The entries of `directory`, at most [`MAX_LISTED_ENTRIES`] of them; none when it does not exist or is
/// not a directory.
fn list(directory: &Path) -> Option<Entries> {
    let mut entries = Entries::default();
    let listing = match std::fs::read_dir(directory) {
        Ok(listing) => listing,
        Err(error) if matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => return Some(entries),
        Err(_) => return None,
    };
    for entry in listing {
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
        // A directory that does not exist, or is a file, holds nothing.
        assert_eq!(listings.contains(&directory.path().join("missing"), OsStr::new("gcp.py")), Some(false));
        assert_eq!(listings.contains(&directory.path().join("gcp.py"), OsStr::new("x.py")), Some(false));
        assert_eq!(listings.has_module_or_package(directory.path(), "gcp"), Some(true));
        assert_eq!(listings.has_module_or_package(directory.path(), "utils"), Some(true));
        assert_eq!(listings.has_module_or_package(directory.path(), "gcp.py"), Some(true));
        assert_eq!(listings.has_module_or_package(directory.path(), "time"), Some(false));
        assert_eq!(listings.has_module_or_package(&directory.path().join("missing"), "gcp"), Some(false));
    }

    #[test]
    fn below_a_name_its_listed_parent_lacks_nothing_is_listed() {
        let directory = tempfile::tempdir().unwrap();
        let listings = Listings::default();
        assert_eq!(listings.contains(directory.path(), OsStr::new("later")), Some(false));
        // Made after the parent was listed: the run answers from the parent's listing, as of when it read it.
        std::fs::create_dir(directory.path().join("later")).unwrap();
        std::fs::write(directory.path().join("later/gcp.py"), "").unwrap();
        assert_eq!(listings.has_module_or_package(&directory.path().join("later"), "gcp"), Some(false));
        // A directory whose parent was never listed is listed itself.
        std::fs::create_dir_all(directory.path().join("fresh/utils")).unwrap();
        std::fs::write(directory.path().join("fresh/utils/gcp.py"), "").unwrap();
        assert_eq!(listings.has_module_or_package(&directory.path().join("fresh/utils"), "gcp"), Some(true));
    }

    #[cfg(unix)]
    #[test]
    fn an_unreadable_directory_is_not_taken_for_an_empty_one() {
        use std::os::unix::fs::PermissionsExt;
        let directory = tempfile::tempdir().unwrap();
        let closed = directory.path().join("closed");
        std::fs::create_dir(&closed).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
        let readable = std::fs::read_dir(&closed).is_ok();
        let answer = Listings::default().contains(&closed, OsStr::new("gcp.py"));
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Root reads it anyway; anyone else cannot, and the listing then answers nothing.
        assert_eq!(answer, if readable { Some(false) } else { None });
    }
}
