//! The texts a fix run has changed and not yet written. Checking a file again reads it from memory, but
//! the cross-file readers (kustomize renders, pod templates, imported Python modules) open other files by
//! path: they read through [`crate::confine::Confinement::read_to_string`], which returns the edited text of such a file, so every
//! pass sees the files as they will be written. Empty outside a fix run.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rustc_hash::FxHashMap;

static EDITED: RwLock<Option<FxHashMap<PathBuf, Arc<str>>>> = RwLock::new(None);

/// Records the current texts of edited files (replacing what was recorded), keyed by canonical path.
pub fn set<'a>(texts: impl IntoIterator<Item = (&'a Path, &'a str)>) {
    let map: FxHashMap<PathBuf, Arc<str>> = texts
        .into_iter()
        .filter_map(|(path, text)| Some((std::fs::canonicalize(path).ok()?, Arc::from(text))))
        .collect();
    *EDITED.write().unwrap_or_else(std::sync::PoisonError::into_inner) = (!map.is_empty()).then_some(map);
}

/// Forgets every edited text.
pub fn clear() {
    *EDITED.write().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
}

/// The edited text of the file at `resolved` (a canonical path), when a fix run changed it. Readers
/// reach it through [`crate::confine::Confinement::read_to_string`], which resolves the path first.
pub fn get(resolved: &Path) -> Option<Arc<str>> {
    let guard = EDITED.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    guard.as_ref()?.get(resolved).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_text_is_read_instead_of_the_file() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("base.yaml");
        std::fs::write(&path, "on disk\n").unwrap();
        set([(path.as_path(), "edited\n")]);
        let confinement = crate::confine::Confinement::new([dir.path().to_path_buf()]);
        let through_another_name = dir.path().join(".").join("base.yaml");
        assert_eq!(confinement.read_to_string(&through_another_name, "base.yaml", 100).unwrap(), "edited\n");
        clear();
        assert_eq!(confinement.read_to_string(&path, "base.yaml", 100).unwrap(), "on disk\n");
    }
}
