//! The unix implementation (Linux, macOS, the BSDs): files opened with `O_NOFOLLOW`, `O_NONBLOCK` and
//! `O_NOCTTY`; a file's identity is its device and inode; a rewritten file keeps its owner, group and
//! mode, and the mode's write bits are read for the effective user and its groups.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Trees of the system that are never read: their files are the kernel's and the machine's, not code.
pub const SYSTEM_TREES: &[&str] = &["/proc", "/sys", "/dev"];

/// Opens `path` to read it without following a symbolic link at its end (the open fails), without
/// blocking (a FIFO opens at once) and without making a terminal the controlling one. The caller checks
/// the type of what was opened.
pub fn open_read(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY).open(path)
}

/// Reads from `file` into the spare capacity of `bytes` and extends `bytes` by what was read (0 at the end
/// of the file): the spare capacity is not zeroed first, as a safe read into a slice needs it to be.
pub fn read_into_spare(file: &mut File, bytes: &mut Vec<u8>) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let spare = bytes.spare_capacity_mut();
    // SAFETY: `read` writes at most `spare.len()` bytes, into memory the vector owns and has not
    // initialised; it returns how many it wrote, or -1 having written none.
    let read = unsafe { libc::read(file.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
    let read = usize::try_from(read).map_err(|_| io::Error::last_os_error())?;
    // SAFETY: the first `read` bytes of the spare capacity were just written.
    unsafe { bytes.set_len(bytes.len() + read) };
    Ok(read)
}

/// Opens the existing file `path` to write it in place, without following a symbolic link at its end
/// or blocking.
pub fn open_write(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)
}

/// The identity of a file whatever the path that reaches it (a `./` prefix, a symbolic link, a hard
/// link): its device and inode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileId(u64, u64);

/// The identity of the file at `path`, whose metadata (links followed) is `metadata`.
pub fn file_id(_path: &Path, metadata: &Metadata) -> Option<FileId> {
    Some(FileId(metadata.dev(), metadata.ino()))
}

/// Whether `named` (absolute and normal, as the user named a file) is the path the file resolves to
/// (`resolved`, canonical): then no symbolic link is on the way.
pub fn same_path(named: &Path, resolved: &Path) -> bool {
    named == resolved
}

/// Why a checked file may not be rewritten, if its mode does not let the user running capslint write it:
/// the owner's write bit for its owner (root included, so a file made read-only stays so under a CI
/// container's root), the group's for a member of its group, the others' otherwise.
pub fn may_rewrite(metadata: &Metadata) -> Result<(), String> {
    let uid = unsafe { libc::geteuid() };
    let in_group = metadata.gid() == unsafe { libc::getegid() } || supplementary_groups().contains(&metadata.gid());
    let bit = if metadata.uid() == uid || uid == 0 {
        0o200
    } else if in_group {
        0o020
    } else {
        0o002
    };
    if metadata.mode() & bit == 0 {
        return Err(format!("it is read-only (mode {:04o})", metadata.mode() & 0o7777));
    }
    Ok(())
}

/// The supplementary groups of the process.
fn supplementary_groups() -> Vec<libc::gid_t> {
    let count = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    if count <= 0 {
        return Vec::new();
    }
    let mut groups = vec![0; count as usize];
    let count = unsafe { libc::getgroups(count, groups.as_mut_ptr()) };
    groups.truncate(count.max(0) as usize);
    groups
}

/// Whether the file has other names (hard links), which a replacement would leave with the old text.
pub fn has_other_names(metadata: &Metadata) -> bool {
    metadata.nlink() > 1
}

/// Gives the open file `file` the owner, group and mode of the file `metadata` describes. An
/// unprivileged user cannot give a file away: the owner is kept only when it is the user's own.
pub fn keep_identity(file: &File, metadata: &Metadata) -> io::Result<()> {
    // The owner first: a change of owner clears the set-id bits the mode then restores.
    if let Err(error) = std::os::unix::fs::fchown(file, Some(metadata.uid()), Some(metadata.gid()))
        && metadata.uid() != unsafe { libc::geteuid() }
    {
        return Err(error);
    }
    file.set_permissions(fs::Permissions::from_mode(metadata.mode() & 0o7777))
}

/// Creates the new file `path` (never an existing one), readable and writable by its owner alone
/// (mode 0600).
pub fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_the_same_through_a_hard_link_and_a_symbolic_link_and_not_as_a_copy() {
        let directory = tempfile::TempDir::new().unwrap();
        let original = directory.path().join("a.py");
        fs::write(&original, "x = 1\n").unwrap();
        fs::hard_link(&original, directory.path().join("b.py")).unwrap();
        std::os::unix::fs::symlink(&original, directory.path().join("c.py")).unwrap();
        fs::copy(&original, directory.path().join("d.py")).unwrap();
        let id = |name: &str| {
            let path = directory.path().join(name);
            file_id(&path, &fs::metadata(&path).unwrap()).unwrap()
        };
        assert_eq!(id("a.py"), id("b.py"));
        assert_eq!(id("a.py"), id("c.py"));
        assert_ne!(id("a.py"), id("d.py"));
        assert!(has_other_names(&fs::metadata(&original).unwrap()));
        assert!(!has_other_names(&fs::metadata(directory.path().join("d.py")).unwrap()));
    }

    #[test]
    fn a_link_at_the_end_of_the_path_is_never_opened() {
        let directory = tempfile::TempDir::new().unwrap();
        let target = directory.path().join("target.py");
        let link = directory.path().join("link.py");
        fs::write(&target, "x = 1\n").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(open_read(&target).is_ok());
        assert!(open_read(&link).is_err());
        assert!(open_write(&link).is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "x = 1\n");
    }

    #[test]
    fn the_owners_write_bit_decides_for_the_owner() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("a.py");
        fs::write(&path, "").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(may_rewrite(&fs::metadata(&path).unwrap()), Ok(()));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o466)).unwrap();
        assert_eq!(may_rewrite(&fs::metadata(&path).unwrap()), Err("it is read-only (mode 0466)".to_string()));
    }
}
