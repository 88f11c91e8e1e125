//! Finding the files to check: a parallel walk that respects `.gitignore`, skips hidden and excluded
//! paths, and sorts what it finds; plus the kind of each file.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

use crate::settings::SettingsResolver;

/// The kinds of file capslint checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    /// A Python source (`*.py`, `*.pyw`).
    Python,
    /// A YAML document stream (`*.yaml`, `*.yml`).
    Yaml,
}

impl FileKind {
    /// The kind of a path, from its extension.
    pub fn of(path: &Path) -> Option<FileKind> {
        match path.extension()?.to_str()? {
            "py" | "pyw" => Some(FileKind::Python),
            "yaml" | "yml" => Some(FileKind::Yaml),
            _ => None,
        }
    }
}

/// The result of a walk.
#[derive(Debug, Default)]
pub struct Discovered {
    /// The files to check, sorted, without duplicates.
    pub files: Vec<(PathBuf, FileKind)>,
    /// Problems met on the way (unreadable directories), one line each.
    pub warnings: Vec<String>,
    /// Configuration files met on the way that are invalid (the run must fail).
    pub config_errors: Vec<crate::settings::ResolveError>,
}

/// A path given on the command line that does not exist.
#[derive(Debug, thiserror::Error)]
#[error("{path}: no such file or directory")]
pub struct MissingPath {
    /// The path as given.
    pub path: String,
}

/// Walks `paths`. Files named explicitly are checked whatever their ignore status (as ruff does), unless
/// `force_exclude` is set and they match an `exclude` pattern.
pub fn discover(
    paths: &[PathBuf],
    resolver: &SettingsResolver,
    force_exclude: bool,
) -> Result<Discovered, MissingPath> {
    let mut discovered = Discovered::default();
    let mut roots = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|_| MissingPath { path: path.display().to_string() })?;
        if metadata.is_dir() {
            roots.push(path.clone());
        } else if let Some(kind) = FileKind::of(path)
            && !(force_exclude
                && resolver.for_path(path).is_ok_and(|settings| settings.is_excluded_with_ancestors(path)))
        {
            discovered.files.push((path.clone(), kind));
        }
    }
    if let Some((first, rest)) = roots.split_first() {
        let mut builder = WalkBuilder::new(first);
        for root in rest {
            builder.add(root);
        }
        builder.hidden(true).git_ignore(true).git_global(false).git_exclude(true).parents(true).follow_links(false);
        builder.require_git(false);
        let config_errors = Mutex::new(Vec::new());
        let found = Mutex::new(Vec::new());
        let warnings = Mutex::new(Vec::new());
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
                        if is_file && let Some(kind) = FileKind::of(entry.path()) {
                            found.lock().expect("walk results").push((entry.into_path(), kind));
                        }
                    }
                    Err(error) => warnings.lock().expect("walk warnings").push(error.to_string()),
                }
                WalkState::Continue
            })
        });
        discovered.files.extend(found.into_inner().expect("walk results"));
        discovered.warnings.extend(warnings.into_inner().expect("walk warnings"));
        discovered.config_errors.extend(config_errors.into_inner().expect("config errors"));
    }
    discovered.files.sort();
    discovered.files.dedup();
    discovered.warnings.sort();
    Ok(discovered)
}

/// How a path is shown: relative to the working directory when it is below it.
pub fn display_name(path: &Path, cwd: &Path) -> String {
    let shown = path.strip_prefix(cwd).unwrap_or(path);
    let shown = shown.strip_prefix(".").unwrap_or(shown);
    shown.display().to_string()
}
