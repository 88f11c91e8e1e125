//! The texts a fix run has changed and not yet written. Checking a file again reads it from memory, but
//! the cross-file readers (kustomize renders, pod templates, imported Python modules) open other files by
//! path: they read through [`read_to_string`], which returns the edited text of such a file, so every
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

/// The text of `path`: its edited text when a fix run changed it, else the file's.
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    let guard = EDITED.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(map) = guard.as_ref()
        && let Ok(canonical) = std::fs::canonicalize(path)
        && let Some(text) = map.get(&canonical)
    {
        return Ok(text.to_string());
    }
    drop(guard);
    std::fs::read_to_string(path)
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
        let through_another_name = dir.path().join(".").join("base.yaml");
        assert_eq!(read_to_string(&through_another_name).unwrap(), "edited\n");
        clear();
        assert_eq!(read_to_string(&path).unwrap(), "on disk\n");
    }
}
