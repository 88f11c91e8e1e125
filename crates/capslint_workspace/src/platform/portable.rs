//! The implementation where the unix API is not (Windows), with the standard library alone. There is no
//! `O_NOFOLLOW`: a symbolic link (on Windows, any name-surrogate reparse point: a symbolic link, a
//! junction, a mount point) is refused by the metadata of its path before it is opened, and the opened
//! file is compared with that metadata after. A file's identity is its canonical path. A rewritten file
//! keeps its read-only attribute (there is no owner or group to keep), and that attribute is what makes
//! a file read-only. There are no system trees.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Trees of the system that are never read: none here, as no file system of the kernel's is mounted
/// below a path a repository could name.
pub const SYSTEM_TREES: &[&str] = &[];

/// Opens the regular file `path` to read it, refusing a symbolic link at its end and anything that is
/// not a regular file before it is opened, and a file replaced between that look and the open.
pub fn open_read(path: &Path) -> io::Result<File> {
    open_unfollowed(path, OpenOptions::new().read(true))
}

/// Reads from `file` into the spare capacity of `bytes` and extends `bytes` by what was read (0 at the end
/// of the file); the spare capacity is zeroed first.
pub fn read_into_spare(file: &mut File, bytes: &mut Vec<u8>) -> io::Result<usize> {
    use std::io::Read;
    let filled = bytes.len();
    bytes.resize(bytes.capacity(), 0);
    let read = file.read(&mut bytes[filled..]);
    bytes.truncate(filled + *read.as_ref().unwrap_or(&0));
    read
}

/// Opens the existing regular file `path` to write it in place, refusing what [`open_read`] refuses.
pub fn open_write(path: &Path) -> io::Result<File> {
    open_unfollowed(path, OpenOptions::new().write(true))
}

/// Opens `path` with `options` when its own metadata (the link's, for a link) says it is a regular file,
/// and the open file is still the file that metadata describes.
fn open_unfollowed(path: &Path, options: &OpenOptions) -> io::Result<File> {
    let before = fs::symlink_metadata(path)?;
    if before.file_type().is_symlink() {
        return Err(io::Error::other("a symbolic link, not followed"));
    }
    if !before.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let file = options.open(path)?;
    if !same_file(&before, &file.metadata()?) {
        return Err(io::Error::other("replaced while it was opened"));
    }
    Ok(file)
}

/// Whether two looks at a regular file saw the same file: the same type, size, and times of creation
/// and of the last change.
fn same_file(before: &Metadata, after: &Metadata) -> bool {
    after.is_file()
        && !after.file_type().is_symlink()
        && before.len() == after.len()
        && before.modified().ok() == after.modified().ok()
        && before.created().ok() == after.created().ok()
}

/// The identity of a file whatever the path that reaches it (a `./` prefix, a symbolic link): its
/// canonical path. Two hard links of one file are two files here.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileId(PathBuf);

/// The identity of the file at `path`, whose metadata (links followed) is `metadata`; none when the
/// file is gone.
pub fn file_id(path: &Path, _metadata: &Metadata) -> Option<FileId> {
    fs::canonicalize(path).ok().map(FileId)
}

/// Whether `named` (absolute and normal, as the user named a file) is the path the file resolves to
/// (`resolved`, canonical): then no symbolic link is on the way. Windows spells a canonical path in its
/// verbatim form (`\\?\C:\repo`, `\\?\UNC\server\share`), which is compared without that prefix.
pub fn same_path(named: &Path, resolved: &Path) -> bool {
    named == resolved || named == without_verbatim_prefix(resolved)
}

/// `path` without the verbatim prefix of a drive (`\\?\C:\` becomes `C:\`) or of a network share
/// (`\\?\UNC\server\share` becomes `\\server\share`); any other path as it is.
fn without_verbatim_prefix(path: &Path) -> PathBuf {
    let Some(text) = path.to_str() else { return path.to_path_buf() };
    if let Some(share) = text.strip_prefix(r"\\?\UNC\") {
        return PathBuf::from(format!(r"\\{share}"));
    }
    match text.strip_prefix(r"\\?\") {
        Some(drive) if drive.as_bytes().get(1) == Some(&b':') => PathBuf::from(drive),
        _ => path.to_path_buf(),
    }
}

/// Why a checked file may not be rewritten: its read-only attribute is set.
pub fn may_rewrite(metadata: &Metadata) -> Result<(), String> {
    if metadata.permissions().readonly() {
        return Err("it is read-only (its read-only attribute is set)".to_string());
    }
    Ok(())
}

/// Whether the file has other names (hard links): the standard library does not tell, so a file is
/// always replaced whole, and another name of it keeps the old text.
pub fn has_other_names(_metadata: &Metadata) -> bool {
    false
}

/// Gives the open file `file` the permissions (the read-only attribute) of the file `metadata`
/// describes.
pub fn keep_identity(file: &File, metadata: &Metadata) -> io::Result<()> {
    file.set_permissions(metadata.permissions())
}

/// Creates the new file `path` (never an existing one). Who else may open it is what its directory
/// gives new files.
pub fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

#[cfg(test)]
mod tests {
    //! The portable implementation, run on the system the tests run on: links are made with the unix
    //! API, so the tests that need one are unix's.

    use std::io::{Read, Write};

    use super::*;

    #[test]
    fn a_read_into_spare_capacity_appends_what_it_read_as_the_unix_twin_does() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("a.py");
        fs::write(&path, "import os\n").unwrap();
        for read_into_spare in [read_into_spare, crate::platform::read_into_spare] {
            let mut file = File::open(&path).unwrap();
            let mut bytes = b"#!".to_vec();
            bytes.reserve_exact(4);
            let room = bytes.capacity() - bytes.len();
            assert_eq!(read_into_spare(&mut file, &mut bytes).unwrap(), room);
            bytes.reserve(64);
            assert_eq!(read_into_spare(&mut file, &mut bytes).unwrap(), 10 - room);
            assert_eq!(read_into_spare(&mut file, &mut bytes).unwrap(), 0);
            assert_eq!(bytes, b"#!import os\n");
        }
    }

    #[test]
    fn a_regular_file_is_opened_to_read_and_to_write() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("a.py");
        fs::write(&path, "old").unwrap();
        let mut text = String::new();
        open_read(&path).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "old");
        open_write(&path).unwrap().write_all(b"new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn a_directory_or_a_missing_file_is_not_opened() {
        let directory = tempfile::TempDir::new().unwrap();
        let error = open_read(directory.path()).unwrap_err();
        assert_eq!(error.to_string(), "not a regular file");
        assert_eq!(open_write(&directory.path().join("gone.py")).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_or_a_fifo_at_the_end_of_the_path_is_never_opened() {
        let directory = tempfile::TempDir::new().unwrap();
        let target = directory.path().join("target.py");
        let link = directory.path().join("link.py");
        fs::write(&target, "x = 1\n").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(open_read(&link).unwrap_err().to_string(), "a symbolic link, not followed");
        assert_eq!(open_write(&link).unwrap_err().to_string(), "a symbolic link, not followed");
        // A FIFO would block an open until a writer came: it is refused before.
        let fifo = directory.path().join("fifo.py");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert_eq!(open_read(&fifo).unwrap_err().to_string(), "not a regular file");
    }

    #[test]
    fn a_file_replaced_between_the_look_and_the_open_is_refused() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("a.py");
        fs::write(&path, "short").unwrap();
        let before = fs::symlink_metadata(&path).unwrap();
        let other = directory.path().join("b.py");
        fs::write(&other, "a longer text").unwrap();
        fs::rename(&other, &path).unwrap();
        let after = File::open(&path).unwrap().metadata().unwrap();
        assert!(!same_file(&before, &after));
        assert!(same_file(&after, &fs::symlink_metadata(&path).unwrap()));
    }

    #[test]
    fn identity_is_the_canonical_path() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("a.py");
        fs::write(&path, "").unwrap();
        fs::copy(&path, directory.path().join("b.py")).unwrap();
        let metadata = fs::metadata(&path).unwrap();
        let dotted = directory.path().join(".").join("a.py");
        assert_eq!(file_id(&path, &metadata), file_id(&dotted, &metadata));
        assert_ne!(file_id(&path, &metadata), file_id(&directory.path().join("b.py"), &metadata));
        assert_eq!(file_id(&directory.path().join("gone.py"), &metadata), None);
        assert!(!has_other_names(&metadata));
    }

    #[test]
    fn a_verbatim_canonical_path_is_the_path_named() {
        let same = |named: &str, resolved: &str| same_path(Path::new(named), Path::new(resolved));
        assert!(same(r"C:\repo\a.py", r"\\?\C:\repo\a.py"));
        assert!(same(r"\\server\share\a.py", r"\\?\UNC\server\share\a.py"));
        assert!(same("/repo/a.py", "/repo/a.py"));
        assert!(!same(r"C:\repo\link.py", r"\\?\C:\repo\a.py"));
        assert!(!same(r"C:\repo\a.py", r"\\?\Volume{0}\repo\a.py"));
    }

    #[test]
    fn the_read_only_attribute_is_kept_and_refuses_a_rewrite() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("a.py");
        fs::write(&path, "").unwrap();
        assert_eq!(may_rewrite(&fs::metadata(&path).unwrap()), Ok(()));
        let mut permissions = fs::metadata(&path).unwrap().permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&path, permissions).unwrap();
        let read_only = fs::metadata(&path).unwrap();
        assert_eq!(may_rewrite(&read_only), Err("it is read-only (its read-only attribute is set)".to_string()));
        let copy = create_private(&directory.path().join("b.py")).unwrap();
        keep_identity(&copy, &read_only).unwrap();
        assert!(fs::metadata(directory.path().join("b.py")).unwrap().permissions().readonly());
        assert!(create_private(&path).is_err(), "an existing file is never created again");
        assert!(SYSTEM_TREES.is_empty());
    }
}
