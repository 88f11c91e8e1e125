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
type Listing = Option<Arc<FxHashSet<OsString>>>;

/// The directories listed so far in a run, shared by every file's check.
#[derive(Debug, Default)]
pub struct Listings {
    listed: RwLock<FxHashMap<OsString, Listing>>,
}

impl Listings {
    /// Whether `directory` holds an entry named `name`: `None` when the directory could not be listed.
    pub fn contains(&self, directory: &Path, name: &OsStr) -> Option<bool> {
        Some(self.listing(directory)?.contains(name))
    }

    /// The names in `directory`, listed on first use.
    fn listing(&self, directory: &Path) -> Listing {
        if let Some(known) = self.listed.read().ok().and_then(|listed| listed.get(directory.as_os_str()).cloned()) {
            return known;
        }
        let listing = list(directory).map(Arc::new);
        if let Ok(mut listed) = self.listed.write() {
            listed.insert(directory.as_os_str().to_owned(), listing.clone());
        }
        listing
    }
}

/// The names of the entries of `directory`, at most [`MAX_LISTED_ENTRIES`] of them.
fn list(directory: &Path) -> Option<FxHashSet<OsString>> {
    let mut names = FxHashSet::default();
    for entry in std::fs::read_dir(directory).ok()? {
        let entry = entry.ok()?;
        if names.len() == MAX_LISTED_ENTRIES {
            return None;
        }
        names.insert(entry.file_name());
    }
    Some(names)
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
    }
}
