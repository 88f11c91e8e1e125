//! Finding the files to check: a parallel walk that respects `.gitignore`, skips hidden and excluded
//! paths, and sorts what it finds; plus the kind of each file.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

use crate::confine::Refusal;
use crate::platform::{FileId, file_id};

pub mod sniff;
use crate::settings::SettingsResolver;

/// The kinds of file capslint checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    /// A Python source (`*.py`, `*.pyw`).
    Python,
    /// A YAML document stream (`*.yaml`, `*.yml`).
    Yaml,
    /// A Jupyter notebook (`*.ipynb`): its code cells are checked as Python.
    Notebook,
    /// A JSON file that may be a model configuration (`*.json`).
    Json,
    /// A TOML file that may be a model configuration (`*.toml`, except `pyproject.toml` and capslint's own
    /// configuration).
    Toml,
}

impl FileKind {
    /// The kind of a path, from its extension, whatever its case (`TRAIN.PY`, `Pod.YAML`).
    pub fn of(path: &Path) -> Option<FileKind> {
        let extension = path.extension()?.to_str()?;
        let lower = |wanted: &str| extension.eq_ignore_ascii_case(wanted);
        if lower("py") || lower("pyw") {
            Some(FileKind::Python)
        } else if lower("yaml") || lower("yml") {
            Some(FileKind::Yaml)
        } else if lower("ipynb") {
            Some(FileKind::Notebook)
        } else if lower("json") {
            Some(FileKind::Json)
        } else if lower("toml") && !crate::config::is_tool_configuration(path) {
            Some(FileKind::Toml)
        } else {
            None
        }
    }

    /// Whether files of this kind are checked only as model configurations (JSON, TOML): one that is too
    /// large, not UTF-8 or does not parse is skipped silently, never reported.
    pub fn is_model_config(self) -> bool {
        matches!(self, FileKind::Json | FileKind::Toml)
    }
}

/// The result of a walk.
#[derive(Debug, Default)]
pub struct Discovered {
    /// The files to check, sorted, each file once however many paths reach it.
    pub files: Vec<(PathBuf, FileKind)>,
    /// Directories and files that could not be read (the run must fail: they were not checked), one
    /// line each.
    pub errors: Vec<String>,
    /// Other problems met on the way (an invalid pattern in a `.gitignore`), one line each.
    pub warnings: Vec<String>,
    /// Files skipped because they lead outside the scanned roots (symbolic links), one line each.
    pub notes: Vec<String>,
    /// Configuration files met on the way that are invalid (the run must fail).
    pub config_errors: Vec<crate::settings::ResolveError>,
}

/// A path given on the command line that does not exist or cannot be looked up.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct MissingPath {
    /// The path as given.
    pub path: String,
    /// Why: `no such file or directory`, or the system's error (a name too long, a denied search).
    pub reason: String,
}

impl MissingPath {
    fn new(path: &Path, error: &std::io::Error) -> Self {
        let reason = match error.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            _ => error.to_string(),
        };
        MissingPath { path: path.display().to_string(), reason }
    }
}

/// A file the walk found, before the files reached by several paths are told apart ([`chosen`]).
#[derive(Debug, Clone)]
pub struct Found {
    /// The path it was reached by.
    pub path: PathBuf,
    /// Its kind.
    pub kind: FileKind,
    /// Its identity, when it could be read.
    id: Option<FileId>,
    /// Whether the path ends in a symbolic link.
    linked: bool,
    /// The bytes `path` sorts by ([`path_order_key`]), computed by the walk as it finds the file, so that
    /// choosing the run's files once the walk is done ([`chosen_indices`]) only compares them.
    order: Vec<u8>,
}

impl Found {
    /// The file at `path`, of kind `kind`, with its identity when known and whether `path` ends in a link.
    fn new(path: PathBuf, kind: FileKind, id: Option<FileId>, linked: bool) -> Found {
        let order = path_order_key(&path);
        Found { path, kind, id, linked, order }
    }

    /// The file, with the identity `id` its reader found (when it found one): for a walk that left the
    /// identities to the reader ([`Identities::FromTheReader`]).
    pub fn identified_as(self, id: Option<FileId>) -> Found {
        Found { id: id.or(self.id), ..self }
    }
}

/// The identity of the file at `path`, links followed, when the system can tell it (the file exists).
pub fn identity_of(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().and_then(|metadata| file_id(path, &metadata))
}

/// Where the identity of each file the walk finds comes from, which tells apart the paths that reach one
/// file ([`chosen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identities {
    /// The walk asks the system about each file's path as it finds it.
    FromTheWalk,
    /// The caller reads every file the walk finds and gives each its identity from the open file
    /// ([`Found::identified_as`]), which saves the walk a system call per file.
    FromTheReader,
}

/// Walks `paths`. Files named explicitly are checked whatever their ignore status (as ruff does), unless
/// `force_exclude` is set and they match an `exclude` pattern.
pub fn discover(
    paths: &[PathBuf],
    resolver: &SettingsResolver,
    force_exclude: bool,
) -> Result<Discovered, MissingPath> {
    let found = Mutex::new(Vec::new());
    let mut discovered = walk(paths, resolver, force_exclude, Identities::FromTheWalk, &|file| {
        found.lock().expect("walk results").push(file)
    })?;
    discovered.files = chosen(found.into_inner().expect("walk results"));
    Ok(discovered)
}

/// [`discover`], handing each file to `found` as soon as the walk finds it (from the walk's threads, in no
/// particular order, a file reached by several paths once for each): what it returns has every other
/// result, and no files. [`chosen`] then tells which of the files found are the ones to check, by the
/// identities the walk found or, with [`Identities::FromTheReader`], the ones the caller gave them (a file
/// named explicitly has its identity from the walk either way).
pub fn walk(
    paths: &[PathBuf],
    resolver: &SettingsResolver,
    force_exclude: bool,
    identities: Identities,
    found: &(dyn Fn(Found) + Sync),
) -> Result<Discovered, MissingPath> {
    let mut discovered = Discovered::default();
    let mut roots = Vec::new();
    let confinement = resolver.confinement();
    let cwd = resolver.root().cwd().to_path_buf();
    let shown = |path: &Path| display_name(path, &cwd);
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|error| MissingPath::new(path, &error))?;
        if metadata.is_dir() {
            // A directory named through a link out of its repository is not walked.
            match confinement.directory(path, &shown(path)) {
                Ok(_) => roots.push(path.clone()),
                Err(refusal) => discovered.notes.push(format!("{refusal}: skipped")),
            }
        } else if force_exclude
            && resolver.for_path(path).is_ok_and(|settings| settings.is_excluded_with_ancestors(path))
        {
            continue;
        } else {
            match confinement.resolve(path, &shown(path)) {
                Ok(resolved) => match FileKind::of(path).or_else(|| sniff::kind(&resolved)) {
                    Some(kind) => found(Found::new(path.clone(), kind, file_id(path, &metadata), path.is_symlink())),
                    // Named, so never dropped in silence.
                    None => discovered.warnings.push(format!(
                        "{}: not checked: neither its extension, a Python shebang nor a Kubernetes object \
                         (`apiVersion` and `kind`) tells a kind capslint checks",
                        shown(path)
                    )),
                },
                Err(refusal @ Refusal::Outside(_)) => discovered.notes.push(format!("{refusal}: skipped")),
                Err(refusal) => discovered.errors.push(format!("{refusal}: not read")),
            }
        }
    }
    // Ignore files apply as git applies them: in a work tree, from its top level down (never a
    // `.gitignore` above it), with `.git/info/exclude` and the user's global excludes; outside one, those
    // of the walked directories only.
    let (in_work_tree, elsewhere): (Vec<PathBuf>, Vec<PathBuf>) = roots
        .into_iter()
        .partition(|root| crate::confine::git_top_level(&crate::paths::absolute(root, &cwd)).is_some());
    for (roots, git) in [(in_work_tree, true), (elsewhere, false)] {
        let Some((first, rest)) = roots.split_first() else { continue };
        let mut builder = WalkBuilder::new(first);
        for root in rest {
            builder.add(root);
        }
        builder.hidden(true).git_ignore(true).git_exclude(true).follow_links(false);
        builder.require_git(git).parents(git).git_global(git);
        let config_errors = Mutex::new(Vec::new());
        let warnings = Mutex::new(Vec::new());
        let notes = Mutex::new(Vec::new());
        let errors = Mutex::new(Vec::new());
        let is_excluded =
            |path: &Path, is_dir: bool| match if is_dir { resolver.for_dir(path) } else { resolver.for_file(path) } {
                Ok(settings) => settings.is_excluded(path),
                Err(error) => {
                    config_errors.lock().expect("config errors").push(error);
                    true
                }
            };
        builder.build_parallel().run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(entry)
                        if entry.depth() > 0
                            && is_excluded(
                                entry.path(),
                                entry.file_type().is_some_and(|file_type| file_type.is_dir()),
                            ) =>
                    {
                        return if entry.file_type().is_some_and(|file_type| file_type.is_dir()) {
                            WalkState::Skip
                        } else {
                            WalkState::Continue
                        };
                    }
                    Ok(entry) => {
                        let is_file = entry.file_type().is_some_and(|file_type| file_type.is_file())
                            || (entry.path_is_symlink() && entry.path().is_file());
                        if is_file
                            && entry.path_is_symlink()
                            && FileKind::of(entry.path()).is_some()
                            && let Err(refusal) = confinement.file(entry.path(), &shown(entry.path()))
                        {
                            // A link out of the root: the file it leads to is not the repository's.
                            if refusal.is_confinement() {
                                notes.lock().expect("walk notes").push(format!("{refusal}: skipped"));
                            }
                        } else if is_file && let Some(kind) = FileKind::of(entry.path()) {
                            // A file that vanishes now keeps no identity; its read reports it.
                            let id = match identities {
                                Identities::FromTheWalk => identity_of(entry.path()),
                                Identities::FromTheReader => None,
                            };
                            let linked = entry.path_is_symlink();
                            found(Found::new(entry.into_path(), kind, id, linked));
                        }
                    }
                    // A directory that cannot be listed hides files that would have been checked.
                    Err(error) if error.io_error().is_some() => {
                        errors.lock().expect("walk errors").push(error.to_string())
                    }
                    Err(error) => warnings.lock().expect("walk warnings").push(error.to_string()),
                }
                WalkState::Continue
            })
        });
        discovered.warnings.extend(warnings.into_inner().expect("walk warnings"));
        discovered.notes.extend(notes.into_inner().expect("walk notes"));
        discovered.errors.extend(errors.into_inner().expect("walk errors"));
        discovered.config_errors.extend(config_errors.into_inner().expect("config errors"));
    }
    discovered.warnings.sort();
    discovered.notes.sort();
    discovered.errors.sort();
    Ok(discovered)
}

/// The files to check among those the walk `found`, sorted, each file once. A file reached more than once
/// is named by its first path in sorted order that is not a symbolic link (a fix writes the file itself,
/// never through a link): deterministic whatever the order of the arguments and of the walk.
pub fn chosen(found: Vec<Found>) -> Vec<(PathBuf, FileKind)> {
    let indices = chosen_indices(&found);
    let mut found: Vec<Option<Found>> = found.into_iter().map(Some).collect();
    indices.into_iter().filter_map(|index| found[index].take()).map(|file| (file.path, file.kind)).collect()
}

/// [`chosen`], as the positions in `found` of the files chosen, in the order `chosen` gives them.
pub fn chosen_indices(found: &[Found]) -> Vec<usize> {
    // The file each identity is named by: its first path in sorted order that is not a link. One pass,
    // so that the files are sorted once, in the order they are checked.
    let naming = |index: usize| (found[index].linked, &found[index].order);
    let mut named_by: rustc_hash::FxHashMap<&FileId, usize> = rustc_hash::FxHashMap::default();
    for (index, file) in found.iter().enumerate() {
        if let Some(id) = &file.id {
            named_by
                .entry(id)
                .and_modify(|chosen| {
                    if naming(index) < naming(*chosen) {
                        *chosen = index;
                    }
                })
                .or_insert(index);
        }
    }
    let mut kept: Vec<usize> =
        (0..found.len()).filter(|&index| found[index].id.as_ref().is_none_or(|id| named_by[id] == index)).collect();
    kept.sort_unstable_by(|&a, &b| (&found[a].order, found[a].kind).cmp(&(&found[b].order, found[b].kind)));
    kept.dedup_by(|a, b| found[*a].order == found[*b].order && found[*a].kind == found[*b].kind);
    kept
}

/// Bytes that sort as `path` sorts (`Path`'s order compares component by component): each component
/// as a tag of its kind, its bytes and a 0 byte, which no component holds. Computed once per file, so
/// sorting thousands of paths compares plain bytes instead of splitting both paths at every comparison.
fn path_order_key(path: &Path) -> Vec<u8> {
    use std::path::Component;
    let mut key = Vec::with_capacity(path.as_os_str().len() + 8);
    for component in path.components() {
        // `Component`'s own order: its kind first, in declaration order, then its text.
        let (tag, text) = match component {
            Component::Prefix(prefix) => (1, prefix.as_os_str()),
            Component::RootDir => (2, std::ffi::OsStr::new("")),
            Component::CurDir => (3, std::ffi::OsStr::new("")),
            Component::ParentDir => (4, std::ffi::OsStr::new("")),
            Component::Normal(text) => (5, text),
        };
        key.push(tag);
        key.extend_from_slice(text.as_encoded_bytes());
        key.push(0);
    }
    key
}

/// How a path is shown: relative to the working directory when it is below it.
pub fn display_name(path: &Path, cwd: &Path) -> String {
    let shown = path.strip_prefix(cwd).unwrap_or(path);
    let shown = shown.strip_prefix(".").unwrap_or(shown);
    shown.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_keys_sort_paths_as_paths_sort() {
        let paths: Vec<PathBuf> = [
            "a/b",
            "a-b",
            "a.py",
            "a/__init__.py",
            "a",
            "ab",
            "./a",
            "../a",
            "/a",
            "/",
            "a//b",
            "a/./b",
            "a b/c",
            "A/b",
            "é/x",
            "a/b/c",
            "a/bc",
            "a/b.c",
            ".",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        for left in &paths {
            for right in &paths {
                assert_eq!(
                    path_order_key(left).cmp(&path_order_key(right)),
                    left.cmp(right),
                    "{} against {}",
                    left.display(),
                    right.display()
                );
            }
        }
    }
}
