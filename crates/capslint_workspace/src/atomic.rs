//! Files replaced whole or not at all: a report (`--output-file`) or a baseline (`--write-baseline`) is
//! written to a temporary file in the destination's directory, flushed to disk, then renamed over the
//! destination. A run that fails or is killed mid-write leaves the previous file as it was (and at
//! worst a `.*.capslint-tmp` file next to it), never an empty or truncated one.
//!
//! A checked file that `--fix` or `--add-noqa` rewrites keeps its identity ([`rewrite`]): its owner,
//! group and mode, and its other names when it has several hard links (then it is written in place, as
//! replacing it would leave the other names with the old text). A file its mode does not let the user
//! write is not touched ([`may_rewrite`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::platform;

/// Replaces `path` with `contents`, creating its directory.
pub fn write(path: &Path, contents: &[u8]) -> io::Result<()> {
    write_with(path, |file| file.write_all(contents))
}

/// Replaces `path` with what `fill` writes, creating its directory: the destination changes only once
/// `fill` succeeded and the data is on disk. A destination that is not a regular file (`/dev/stdout`, a
/// FIFO) cannot be replaced and is written in place. A symbolic link is followed: its target is replaced.
pub fn write_with(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let destination = match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => fs::canonicalize(path).unwrap_or_else(|_| path.into()),
        _ => path.to_path_buf(),
    };
    let existing = fs::metadata(&destination).ok();
    if existing.as_ref().is_some_and(|metadata| !metadata.is_file()) {
        let mut file = OpenOptions::new().write(true).truncate(true).open(&destination)?;
        return fill(&mut file).and_then(|()| file.flush());
    }
    let directory = destination.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(directory)?;
    replace(directory, &destination, |file| {
        fill(file)?;
        if let Some(metadata) = &existing {
            // The new file keeps the permissions of the one it replaces.
            file.set_permissions(metadata.permissions())?;
        }
        Ok(())
    })
}

/// Replaces `destination` (in `directory`) with a temporary file that `fill` writes, once `fill` succeeded
/// and the data is on disk; on failure the temporary file is removed and `destination` is untouched.
fn replace(directory: &Path, destination: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let (temporary, mut file) = create_temporary(directory, destination)?;
    let written = (|| {
        fill(&mut file)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temporary, destination)
    })();
    if let Err(error) = written {
        let _ = fs::remove_file(&temporary);
        return Err(error);
    }
    // The rename is durable once the directory is: best effort, some file systems refuse to sync one.
    if let Ok(directory) = File::open(directory) {
        let _ = directory.sync_all();
    }
    Ok(())
}

/// Why a checked file may not be rewritten, if its mode does not let the user running capslint write it:
/// on unix, the owner's write bit for its owner (root included, so a file made read-only stays so under
/// a CI container's root), the group's for a member of its group, the others' otherwise; elsewhere, its
/// read-only attribute.
pub fn may_rewrite(metadata: &fs::Metadata) -> Result<(), String> {
    platform::may_rewrite(metadata)
}

/// Rewrites the regular file `path` (named with no symbolic link on its path) with `contents`, keeping
/// what makes it the same file: a file with several hard links is written in place; any other is
/// replaced whole or not at all through a temporary file in its directory, created with mode 0600 (so
/// no other user can open it while it fills) and given the original owner, group and mode before it is
/// renamed over the original. Where there is no unix API, the original's read-only attribute is what
/// is kept, and hard links are not told apart.
pub fn rewrite(path: &Path, contents: &[u8]) -> io::Result<()> {
    let metadata = fs::symlink_metadata(path)?;
    if !metadata.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    may_rewrite(&metadata).map_err(io::Error::other)?;
    if platform::has_other_names(&metadata) {
        let mut file = platform::open_write(path)?;
        file.write_all(contents)?;
        file.set_len(contents.len() as u64)?;
        return file.sync_all();
    }
    let directory = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    replace(directory, path, |file| {
        file.write_all(contents)?;
        platform::keep_identity(file, &metadata)
    })
}

/// A new file next to `destination`, with a name no other writer uses, readable and writable by its
/// owner alone.
fn create_temporary(directory: &Path, destination: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = destination.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    loop {
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temporary = directory.join(format!(".{name}.{}-{unique}.capslint-tmp", std::process::id()));
        match platform::create_private(&temporary) {
            Ok(file) => return Ok((temporary, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::*;

    fn entries(directory: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            fs::read_dir(directory).unwrap().map(|entry| entry.unwrap().file_name().to_string_lossy().into()).collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_file_and_leaves_nothing_behind() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("out/report.json");
        write(&path, b"first").unwrap();
        write(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        assert_eq!(entries(&directory.path().join("out")), ["report.json"]);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_whole() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("baseline.json");
        fs::write(&path, "old baseline").unwrap();
        let failed = write_with(&path, |file| {
            file.write_all(b"half of the new")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), "old baseline");
        assert_eq!(entries(directory.path()), ["baseline.json"]);
    }

    #[test]
    fn the_destination_is_untouched_until_the_new_content_is_complete() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("report.txt");
        fs::write(&path, "old").unwrap();
        write_with(&path, |file| {
            file.write_all(b"new")?;
            // Mid-write, the destination still holds the old content.
            assert_eq!(fs::read_to_string(&path).unwrap(), "old");
            Ok(())
        })
        .unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_rewritten_file_keeps_its_mode_and_its_hard_links() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("train.py");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        rewrite(&path, b"new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o640);
        assert_eq!(entries(directory.path()), ["train.py"]);
        let other = directory.path().join("other-name.py");
        fs::hard_link(&path, &other).unwrap();
        let inode = fs::metadata(&path).unwrap().ino();
        rewrite(&path, b"newer, and longer").unwrap();
        assert_eq!(fs::read_to_string(&other).unwrap(), "newer, and longer");
        assert_eq!(fs::metadata(&path).unwrap().ino(), inode);
        rewrite(&path, b"short").unwrap();
        assert_eq!(fs::read_to_string(&other).unwrap(), "short");
    }

    #[cfg(unix)]
    #[test]
    fn the_temporary_file_is_private_while_it_fills() {
        let directory = tempfile::TempDir::new().unwrap();
        let destination = directory.path().join("secret.py");
        let (temporary, _file) = create_temporary(directory.path(), &destination).unwrap();
        assert_eq!(fs::metadata(&temporary).unwrap().mode() & 0o777, 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_file_is_not_rewritten() {
        let directory = tempfile::TempDir::new().unwrap();
        let path = directory.path().join("train.py");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
        let error = rewrite(&path, b"new").unwrap_err();
        assert_eq!(error.to_string(), "it is read-only (mode 0444)");
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_followed_and_kept() {
        let directory = tempfile::TempDir::new().unwrap();
        let target = directory.path().join("target.json");
        let link = directory.path().join("link.json");
        fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
    }
}
