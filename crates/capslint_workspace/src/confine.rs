//! Confinement: the directories a run may read below, and the one way a file is opened there.
//!
//! `capslint check` runs on pull requests, where every path it follows comes from the code under review: a
//! kustomization's `resources`, a DAG's `pod_template_file`, a symbolic link, an imported module. Every such
//! path goes through [`Confinement`]: it is resolved (`..` and symbolic links), and opened only when it is a
//! regular file below one of the run's roots; FIFOs, sockets and devices are never opened, and nothing
//! under `/proc`, `/sys` or `/dev` is, whatever the roots.
//!
//! The root of a path named on the command line is the top level of the git work tree that holds it;
//! outside a work tree, the directory of the nearest configuration file above it, else the path itself
//! (its directory, for a file). See [`Confinement::root_of`].

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::platform::{self, FileId};

/// Files larger than this are not read: they are reported (CAP001) instead of parsed: a syntax tree takes tens of bytes per
/// byte of source, so this bounds the memory one hostile file can take.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The files whose presence makes a directory a project root outside a git work tree.
const PROJECT_MARKERS: &[&str] = &crate::config::CONFIG_FILE_NAMES;

/// The directories a run may read below (canonical: links resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    roots: Vec<PathBuf>,
}

/// Why a path was not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// It does not exist (or a directory on the way cannot be searched).
    #[error("`{0}` does not exist")]
    Missing(String),
    /// It resolves outside every root.
    #[error("`{0}` resolves outside the scanned root")]
    Outside(String),
    /// It is not a regular file (a FIFO, a socket, a device, a directory where a file was expected).
    #[error("`{0}` is not a regular file")]
    NotRegular(String),
    /// It is named through a symbolic link (the file itself, or a directory on its path), where a write
    /// would land in the link's target instead of the file named.
    #[error("`{0}` is reached through a symbolic link")]
    Link(String),
    /// It is under `/proc`, `/sys` or `/dev`.
    #[error("`{0}` is a system file")]
    System(String),
    /// It is larger than the reader takes.
    #[error("`{0}` is larger than {1} bytes")]
    TooLarge(String, u64),
    /// The system refused to open or read it.
    #[error("`{0}`: {1}")]
    Io(String, String),
}

impl Refusal {
    /// Whether the path is outside the roots or a system file: what confinement refuses, as opposed to a
    /// file that is simply missing or unreadable.
    pub fn is_confinement(&self) -> bool {
        matches!(self, Refusal::Outside(_) | Refusal::System(_))
    }
}

impl Confinement {
    /// A confinement to exactly `roots` (each resolved; a root that does not exist is dropped).
    pub fn new(roots: impl IntoIterator<Item = PathBuf>) -> Confinement {
        let mut roots: Vec<PathBuf> = roots.into_iter().filter_map(|root| std::fs::canonicalize(root).ok()).collect();
        roots.sort();
        roots.dedup();
        // A root below another adds nothing.
        let mut kept: Vec<PathBuf> = Vec::with_capacity(roots.len());
        for root in roots {
            if !kept.iter().any(|outer| root.starts_with(outer)) {
                kept.push(root);
            }
        }
        Confinement { roots: kept }
    }

    /// The confinement of a run on `paths` (relative to `cwd`): the root of each ([`Self::root_of`]). No
    /// path at all means the working directory.
    pub fn of_paths(paths: &[PathBuf], cwd: &Path) -> Confinement {
        if paths.is_empty() {
            return Confinement::new([Self::root_of(cwd, cwd)]);
        }
        Confinement::new(paths.iter().map(|path| Self::root_of(path, cwd)))
    }

    /// The root of a path named on the command line: the top level of the git work tree that holds it;
    /// outside a work tree, the directory of the nearest configuration file above it, else the path
    /// itself (a directory) or its directory (a file). The working directory plays no part: a run from
    /// `/` is no wider than a run from the project.
    ///
    /// The root is found from the path as written, and only then resolved: a directory of the repository
    /// that is a symbolic link to somewhere else does not carry the root with it, so what is named through
    /// it stays outside.
    pub fn root_of(path: &Path, cwd: &Path) -> PathBuf {
        let absolute = crate::paths::absolute(path, cwd);
        let start =
            if absolute.is_dir() { absolute.as_path() } else { absolute.parent().unwrap_or(absolute.as_path()) };
        let root = git_top_level(start)
            .or_else(|| {
                start.ancestors().find(|ancestor| PROJECT_MARKERS.iter().any(|marker| ancestor.join(marker).is_file()))
            })
            .unwrap_or(start);
        std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
    }

    /// The roots, resolved.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a resolved path is below a root and outside the system trees.
    pub fn contains(&self, resolved: &Path) -> bool {
        !is_system(resolved) && self.roots.iter().any(|root| resolved.starts_with(root))
    }

    /// Where `path` leads (links and `..` resolved), when that is below a root. `shown` names the path in
    /// the refusal as the user wrote it.
    pub fn resolve(&self, path: &Path, shown: &str) -> Result<PathBuf, Refusal> {
        let resolved = std::fs::canonicalize(path).map_err(|_| Refusal::Missing(shown.to_string()))?;
        if is_system(&resolved) {
            return Err(Refusal::System(shown.to_string()));
        }
        if !self.contains(&resolved) {
            return Err(Refusal::Outside(shown.to_string()));
        }
        Ok(resolved)
    }

    /// The resolved path of a directory below a root.
    pub fn directory(&self, path: &Path, shown: &str) -> Result<PathBuf, Refusal> {
        let resolved = self.resolve(path, shown)?;
        if !resolved.is_dir() {
            return Err(Refusal::NotRegular(shown.to_string()));
        }
        Ok(resolved)
    }

    /// The resolved path of a regular file below a root, found without opening anything.
    pub fn file(&self, path: &Path, shown: &str) -> Result<PathBuf, Refusal> {
        let resolved = self.resolve(path, shown)?;
        match std::fs::symlink_metadata(&resolved) {
            Ok(metadata) if metadata.is_file() => Ok(resolved),
            Ok(_) => Err(Refusal::NotRegular(shown.to_string())),
            Err(_) => Err(Refusal::Missing(shown.to_string())),
        }
    }

    /// [`Confinement::file`], with the directory that holds `path` resolved once per `directories`: a
    /// regular file (not a link) named in a directory resolves to the directory's resolution and its
    /// name; a path that cannot be looked up (a missing file) is missing, as its resolution would be.
    /// Anything else (a link, a directory) is resolved as [`Confinement::file`] resolves it.
    pub fn file_in(&self, directories: &ResolvedDirectories, path: &Path, shown: &str) -> Result<PathBuf, Refusal> {
        let (Some(directory), Some(std::path::Component::Normal(name))) =
            (path.parent(), path.components().next_back())
        else {
            return self.file(path, shown);
        };
        match std::fs::symlink_metadata(path) {
            Ok(metadata) if metadata.is_file() && !directory.as_os_str().is_empty() => {
                let resolved =
                    directories.resolve(directory).ok_or_else(|| Refusal::Missing(shown.to_string()))?.join(name);
                if is_system(&resolved) {
                    return Err(Refusal::System(shown.to_string()));
                }
                if !self.contains(&resolved) {
                    return Err(Refusal::Outside(shown.to_string()));
                }
                Ok(resolved)
            }
            Err(_) => Err(Refusal::Missing(shown.to_string())),
            Ok(_) => self.file(path, shown),
        }
    }

    /// The resolved path of a file that may be rewritten in place: a regular file below a root, named with
    /// no symbolic link on its path (a write through a link would change a file the link's author chose).
    pub fn writable(&self, path: &Path, shown: &str) -> Result<PathBuf, Refusal> {
        let resolved = self.file(path, shown)?;
        let named = std::path::absolute(path).map(|absolute| crate::paths::normalize(&absolute));
        if named.is_ok_and(|named| platform::same_path(&named, &resolved)) {
            Ok(resolved)
        } else {
            Err(Refusal::Link(shown.to_string()))
        }
    }

    /// Reads the regular file `path` below a root, at most `limit` bytes: the text a fix run has edited
    /// when it has ([`crate::edited`]), else the file's. `shown` names it in a refusal.
    pub fn read_to_string(&self, path: &Path, shown: &str, limit: u64) -> Result<String, Refusal> {
        self.read_resolved(self.file(path, shown)?, shown, limit)
    }

    /// [`Confinement::read_to_string`] of a file already resolved by [`Confinement::file`].
    fn read_resolved(&self, resolved: PathBuf, shown: &str, limit: u64) -> Result<String, Refusal> {
        if let Some(text) = crate::edited::get(&resolved) {
            return Ok(text.to_string());
        }
        let bytes = open_regular(&resolved, shown, limit)?;
        String::from_utf8(bytes).map_err(|_| Refusal::Io(shown.to_string(), "not UTF-8 text".to_string()))
    }
}

/// The directories of one run resolved so far (links and `..` resolved, as `realpath` does), each once:
/// resolving a path asks the system about each of its components, so the files of one directory share
/// the resolution of their directory ([`Confinement::file_in`]).
#[derive(Debug, Default)]
pub struct ResolvedDirectories {
    resolved: std::sync::RwLock<std::collections::HashMap<PathBuf, Option<PathBuf>>>,
}

impl ResolvedDirectories {
    /// [`std::fs::canonicalize`] of `path`, through the resolved directories: anything but a link, named
    /// in a directory, is its directory's resolution and its name (one system call, once the directory is
    /// known); a link is resolved whole. `None` where `canonicalize` fails.
    pub fn canonical(&self, path: &Path) -> Option<PathBuf> {
        if let (Some(directory), Some(std::path::Component::Normal(name))) =
            (path.parent(), path.components().next_back())
            && std::fs::symlink_metadata(path).is_ok_and(|metadata| !metadata.file_type().is_symlink())
        {
            let directory = if directory.as_os_str().is_empty() { Path::new(".") } else { directory };
            return self.resolve(directory).map(|directory| directory.join(name));
        }
        std::fs::canonicalize(path).ok()
    }

    /// Where `directory` leads, resolved on first use (`None`: it does not exist).
    fn resolve(&self, directory: &Path) -> Option<PathBuf> {
        if let Some(known) = self.resolved.read().ok().and_then(|resolved| resolved.get(directory).cloned()) {
            return known;
        }
        let resolved = self.resolve_once(directory);
        if let Ok(mut known) = self.resolved.write() {
            known.insert(directory.to_path_buf(), resolved.clone());
        }
        resolved
    }

    /// Where `directory` leads: a directory that is not a link, named in its parent, is its parent's
    /// resolution and its name, so a new directory costs one system call once its parent is known. A link,
    /// a `..` at the end or a missing directory is resolved whole.
    fn resolve_once(&self, directory: &Path) -> Option<PathBuf> {
        if let (Some(parent), Some(std::path::Component::Normal(name))) =
            (directory.parent(), directory.components().next_back())
            && !parent.as_os_str().is_empty()
            && std::fs::symlink_metadata(directory).is_ok_and(|metadata| metadata.is_dir())
        {
            return self.resolve(parent).map(|parent| parent.join(name));
        }
        std::fs::canonicalize(directory).ok()
    }
}

/// A [`Confinement`] that resolves the directories of the files it is asked about once each
/// ([`ResolvedDirectories`]): for a run that looks at many files of the same directories.
#[derive(Debug)]
pub struct ConfinedReader {
    confinement: Arc<Confinement>,
    directories: ResolvedDirectories,
}

impl ConfinedReader {
    /// A reader within `confinement`.
    pub fn new(confinement: Arc<Confinement>) -> Self {
        ConfinedReader { confinement, directories: ResolvedDirectories::default() }
    }

    /// [`Confinement::file`], through the resolved directories.
    pub fn file(&self, path: &Path, shown: &str) -> Result<PathBuf, Refusal> {
        self.confinement.file_in(&self.directories, path, shown)
    }

    /// [`Confinement::read_to_string`], through the resolved directories.
    pub fn read_to_string(&self, path: &Path, shown: &str, limit: u64) -> Result<String, Refusal> {
        self.confinement.read_resolved(self.file(path, shown)?, shown, limit)
    }
}

/// Reads a regular file whose path has no symbolic link (a resolved path, or one the walk found without
/// following links): it is opened without following a link, without blocking, and its type checked again
/// on the open file before a byte is read.
pub fn open_regular(path: &Path, shown: &str, limit: u64) -> Result<Vec<u8>, Refusal> {
    open_regular_identified(path, shown, limit).map(|(bytes, _)| bytes)
}

/// [`open_regular`], with the identity of the file read, taken from the open file's `fstat` (which the
/// read makes anyway): it tells the paths that reach one file apart without asking the system about
/// each path.
pub fn open_regular_identified(path: &Path, shown: &str, limit: u64) -> Result<(Vec<u8>, Option<FileId>), Refusal> {
    let io = |error: io::Error| Refusal::Io(shown.to_string(), error.to_string());
    let file = platform::open_read(path).map_err(io)?;
    let (bytes, metadata) = read_opened(file, shown, limit)?;
    Ok((bytes, platform::file_id(path, &metadata)))
}

/// The bytes of an open file, when it is a regular file of at most `limit` bytes, and its metadata.
fn read_opened(mut file: File, shown: &str, limit: u64) -> Result<(Vec<u8>, std::fs::Metadata), Refusal> {
    let io = |error: io::Error| Refusal::Io(shown.to_string(), error.to_string());
    let metadata = file.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(Refusal::NotRegular(shown.to_string()));
    }
    if metadata.len() > limit {
        return Err(Refusal::TooLarge(shown.to_string(), limit));
    }
    let bytes = read_sized(&mut file, metadata.len(), limit).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(Refusal::TooLarge(shown.to_string(), limit));
    }
    Ok((bytes, metadata))
}

/// The bytes of `file`, whose `fstat` gave `size`, read up to `limit + 1` bytes. The first read asks for
/// one byte more than `size`: when it returns exactly `size` bytes the file is whole, and no second read
/// (returning nothing) is needed to learn it. A file that is larger than it said (it grew, or its file
/// system reports no size) is read on to its end or past the limit; a short read is read on too.
fn read_sized(file: &mut File, size: u64, limit: u64) -> io::Result<Vec<u8>> {
    let cap = limit.saturating_add(1);
    let mut bytes = Vec::with_capacity(size.saturating_add(1).min(cap) as usize);
    loop {
        if bytes.len() == bytes.capacity() {
            if bytes.len() as u64 >= cap {
                break;
            }
            // Larger than its `fstat` said: grow as `read_to_end` does, to at most one byte past the limit.
            let grown = (bytes.len() as u64).saturating_mul(2).max(8192).min(cap) as usize;
            bytes.reserve_exact(grown - bytes.len());
        }
        match platform::read_into_spare(file, &mut bytes) {
            Ok(0) => break,
            Ok(_) if size > 0 && bytes.len() as u64 == size => break,
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(bytes)
}

/// Whether a resolved path is under one of the system's trees (`/proc`, `/sys` or `/dev` on unix).
pub fn is_system(resolved: &Path) -> bool {
    platform::SYSTEM_TREES.iter().any(|tree| resolved.starts_with(tree))
}

/// The top level of the git work tree holding `directory`: the nearest ancestor with a `.git` (a
/// directory, or the file of a linked work tree or submodule).
pub fn git_top_level(directory: &Path) -> Option<&Path> {
    directory.ancestors().find(|ancestor| crate::config::is_work_tree_top(ancestor))
}

#[cfg(test)]
mod tests {
    use std::fs;
    #[cfg(unix)]
    use std::os::unix::fs::symlink;

    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::TempDir::new().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let repo = base.join("repo");
        let outside = base.join("outside");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("deploy")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.yaml"), "secret\n").unwrap();
        fs::write(repo.join("deploy/pod.yaml"), "kind: Pod\n").unwrap();
        (dir, repo, outside)
    }

    #[test]
    fn the_root_is_the_git_top_level_whatever_the_path_named() {
        let (_dir, repo, _) = tree();
        assert_eq!(Confinement::root_of(&repo.join("deploy/pod.yaml"), Path::new("/")), repo);
        assert_eq!(Confinement::root_of(Path::new("deploy"), &repo), repo);
        assert_eq!(Confinement::of_paths(&[], &repo.join("deploy")).roots(), [repo]);
    }

    #[test]
    fn outside_a_work_tree_the_root_is_the_project_or_the_path() {
        let (_dir, _, outside) = tree();
        fs::create_dir_all(outside.join("project/sub")).unwrap();
        assert_eq!(Confinement::root_of(Path::new("project/sub"), &outside), outside.join("project/sub"));
        fs::write(outside.join("project/capslint.toml"), "").unwrap();
        assert_eq!(Confinement::root_of(&outside.join("project/sub"), Path::new("/")), outside.join("project"));
        assert_eq!(
            Confinement::root_of(&outside.join("secret.yaml"), Path::new("/")),
            outside,
            "a file's own directory when nothing else applies"
        );
        assert_eq!(Confinement::root_of(&outside.join("project/sub/a.py"), &outside), outside.join("project"));
    }

    #[cfg(unix)]
    #[test]
    fn paths_that_leave_the_root_are_refused_however_they_are_written() {
        let (_dir, repo, outside) = tree();
        let confinement = Confinement::new([repo.clone()]);
        symlink(outside.join("secret.yaml"), repo.join("deploy/link.yaml")).unwrap();
        symlink(&outside, repo.join("deploy/dir")).unwrap();
        for path in [
            repo.join("deploy/../../outside/secret.yaml"),
            outside.join("secret.yaml"),
            repo.join("deploy/link.yaml"),
            repo.join("deploy/dir/secret.yaml"),
        ] {
            assert_eq!(
                confinement.read_to_string(&path, "x", 1 << 20),
                Err(Refusal::Outside("x".into())),
                "{}",
                path.display()
            );
        }
        assert_eq!(confinement.read_to_string(&repo.join("deploy/./pod.yaml"), "x", 1 << 20).unwrap(), "kind: Pod\n");
    }

    #[cfg(unix)]
    #[test]
    fn resolved_directories_canonicalise_as_the_system_does() {
        let (_dir, repo, outside) = tree();
        symlink(outside.join("secret.yaml"), repo.join("deploy/link.yaml")).unwrap();
        symlink(repo.join("deploy"), repo.join("alias")).unwrap();
        fs::create_dir_all(repo.join("deploy/sub")).unwrap();
        fs::write(repo.join("deploy/sub/job.yaml"), "kind: Job\n").unwrap();
        symlink("../deploy/sub", repo.join("deploy/relative")).unwrap();
        let directories = ResolvedDirectories::default();
        let paths = [
            repo.join("deploy/pod.yaml"),
            repo.join("alias/pod.yaml"),
            repo.join("deploy/relative/job.yaml"),
            repo.join("deploy/sub/../pod.yaml"),
            repo.join("deploy/link.yaml"),
            repo.join("deploy/missing.yaml"),
            repo.join("missing/pod.yaml"),
            repo.join("deploy/.."),
            repo.join("deploy"),
            // Relative to the working directory (the crate's, under `cargo test`).
            PathBuf::from("Cargo.toml"),
            PathBuf::from("./src/lib.rs"),
        ];
        // Twice: the second time from the resolved directories.
        for _ in 0..2 {
            for path in &paths {
                assert_eq!(directories.canonical(path), fs::canonicalize(path).ok(), "{}", path.display());
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_reader_with_resolved_directories_answers_as_the_confinement_does() {
        let (_dir, repo, outside) = tree();
        let confinement = Arc::new(Confinement::new([repo.clone()]));
        let reader = ConfinedReader::new(Arc::clone(&confinement));
        symlink(outside.join("secret.yaml"), repo.join("deploy/link.yaml")).unwrap();
        symlink(&outside, repo.join("deploy/dir")).unwrap();
        symlink(repo.join("deploy"), repo.join("alias")).unwrap();
        fs::write(repo.join("deploy/pod.yaml"), "kind: Pod\n").unwrap();
        // Links in the middle of a path, one of them relative: below them, each directory is resolved
        // from its parent's resolution.
        fs::create_dir_all(repo.join("deploy/sub/deeper")).unwrap();
        fs::create_dir_all(outside.join("nested")).unwrap();
        fs::write(repo.join("deploy/sub/deeper/job.yaml"), "kind: Job\n").unwrap();
        fs::write(outside.join("nested/secret.yaml"), "secret\n").unwrap();
        symlink("../deploy/sub", repo.join("deploy/relative")).unwrap();
        let paths = [
            repo.join("alias/sub/deeper/job.yaml"),
            repo.join("deploy/relative/deeper/job.yaml"),
            repo.join("deploy/dir/nested/secret.yaml"),
            repo.join("deploy/sub/deeper/../../relative/deeper/job.yaml"),
            repo.join("deploy/sub/deeper/job.yaml"),
            repo.join("deploy/pod.yaml"),
            repo.join("alias/pod.yaml"),
            repo.join("deploy/../deploy/pod.yaml"),
            repo.join("deploy/link.yaml"),
            repo.join("deploy/dir/secret.yaml"),
            repo.join("deploy/../../outside/secret.yaml"),
            repo.join("deploy/missing.yaml"),
            repo.join("deploy"),
            outside.join("secret.yaml"),
        ];
        // Twice: the second time from the resolved directories.
        for _ in 0..2 {
            for path in &paths {
                assert_eq!(reader.file(path, "x"), confinement.file(path, "x"), "{}", path.display());
                assert_eq!(
                    reader.read_to_string(path, "x", 1 << 20),
                    confinement.read_to_string(path, "x", 1 << 20),
                    "{}",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn a_file_is_read_whole_whatever_size_its_metadata_gave() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("module.py");
        let text: Vec<u8> = (0..100_000u32).map(|at| b'a' + (at % 26) as u8).collect();
        fs::write(&path, &text).unwrap();
        let read = |size: u64, limit: u64| read_sized(&mut File::open(&path).unwrap(), size, limit).unwrap();
        // The size `fstat` gives, a smaller one (the file grew), none (a file system without sizes).
        for size in [100_000, 99_999, 1, 0] {
            assert_eq!(read(size, 1 << 20), text, "size {size}");
        }
        // Past the limit: one byte more than the limit is read, for the caller to refuse.
        assert_eq!(read(0, 5000).len(), 5001);
        assert_eq!(read(100_000, 50_000).len(), 50_001);
        fs::write(&path, "").unwrap();
        assert_eq!(read(0, 1 << 20), b"");
        assert_eq!(open_regular(&path, "x", 10).unwrap(), b"");
        fs::write(&path, "12345678901").unwrap();
        assert_eq!(open_regular(&path, "x", 10), Err(Refusal::TooLarge("x".into(), 10)));
        assert_eq!(open_regular(&path, "x", 11).unwrap(), b"12345678901");
    }

    #[cfg(unix)]
    #[test]
    fn special_and_system_files_are_never_opened() {
        let (_dir, repo, _) = tree();
        let fifo = repo.join("deploy/fifo.yaml");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let everything = Confinement::new([PathBuf::from("/")]);
        assert_eq!(everything.read_to_string(&fifo, "x", 1 << 20), Err(Refusal::NotRegular("x".into())));
        assert_eq!(everything.read_to_string(Path::new("/dev/null"), "x", 1 << 20), Err(Refusal::System("x".into())));
        // Each system tree of this system, named and reached through a link.
        let trees: Vec<&Path> =
            crate::platform::SYSTEM_TREES.iter().map(Path::new).filter(|tree| tree.exists()).collect();
        assert!(!trees.is_empty());
        for (index, tree) in trees.into_iter().enumerate() {
            assert_eq!(everything.read_to_string(tree, "x", 1 << 20), Err(Refusal::System("x".into())), "{tree:?}");
            let link = repo.join(format!("deploy/system-{index}.yaml"));
            symlink(tree, &link).unwrap();
            assert!(everything.read_to_string(&link, "x", 1 << 20).unwrap_err().is_confinement(), "{tree:?}");
        }
        symlink("/dev/null", repo.join("deploy/null.yaml")).unwrap();
        assert!(everything.read_to_string(&repo.join("deploy/null.yaml"), "x", 1 << 20).unwrap_err().is_confinement());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_the_end_of_a_resolved_path_is_not_followed_when_opened() {
        let (_dir, repo, outside) = tree();
        let link = repo.join("deploy/link.yaml");
        symlink(outside.join("secret.yaml"), &link).unwrap();
        assert!(matches!(open_regular(&link, "x", 1 << 20), Err(Refusal::Io(..))));
    }

    #[cfg(unix)]
    #[test]
    fn only_files_named_without_a_link_are_writable() {
        let (_dir, repo, outside) = tree();
        let confinement = Confinement::new([repo.clone()]);
        symlink(repo.join("deploy/pod.yaml"), repo.join("deploy/alias.yaml")).unwrap();
        symlink(repo.join("deploy"), repo.join("linked")).unwrap();
        assert_eq!(confinement.writable(&repo.join("deploy/pod.yaml"), "x"), Ok(repo.join("deploy/pod.yaml")));
        assert_eq!(
            confinement.writable(&repo.join("deploy/../deploy/pod.yaml"), "x"),
            Ok(repo.join("deploy/pod.yaml"))
        );
        assert_eq!(confinement.writable(&repo.join("deploy/alias.yaml"), "x"), Err(Refusal::Link("x".into())));
        assert_eq!(confinement.writable(&repo.join("linked/pod.yaml"), "x"), Err(Refusal::Link("x".into())));
        assert_eq!(confinement.writable(&outside.join("secret.yaml"), "x"), Err(Refusal::Outside("x".into())));
    }

    #[test]
    fn roots_below_other_roots_are_merged() {
        let (_dir, repo, outside) = tree();
        let confinement = Confinement::new([repo.join("deploy"), repo.clone(), outside.clone()]);
        assert_eq!(confinement.roots(), [outside, repo]);
    }
}
