//! Files replaced whole or not at all: a report (`--output-file`) or a baseline (`--write-baseline`) is
//! written to a temporary file in the destination's directory, flushed to disk, then renamed over the
//! destination. A run that fails or is killed mid-write leaves the previous file as it was (and at
//! worst a `.*.capslint-tmp` file next to it), never an empty or truncated one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

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
    let (temporary, mut file) = create_temporary(directory, &destination)?;
    let written = (|| {
        fill(&mut file)?;
        if let Some(metadata) = &existing {
            // The new file keeps the permissions of the one it replaces.
            file.set_permissions(metadata.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temporary, &destination)
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

/// A new file next to `destination`, with a name no other writer uses.
fn create_temporary(directory: &Path, destination: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = destination.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    loop {
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temporary = directory.join(format!(".{name}.{}-{unique}.capslint-tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temporary) {
            Ok(file) => return Ok((temporary, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
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
