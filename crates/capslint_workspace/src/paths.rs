//! Paths made comparable: normalised lexically, absolute, and relative to a root (a configuration's
//! directory, the repository for GitHub, `$CI_PROJECT_DIR` for GitLab, a baseline's directory), with
//! forward slashes.

use std::path::{Component, Path, PathBuf};

use capslint_diagnostics::source::SourceFile;

/// Removes `.` components and resolves `..` against the preceding component, without touching the file
/// system (so it works for files that do not exist, such as a `--stdin-filename`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` with forward slashes, whatever the platform.
pub fn slashed(path: &Path) -> String {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_string()),
            Component::RootDir | Component::Prefix(_) | Component::CurDir => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The absolute, normalised path of a checked file, given the working directory the run started in.
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        // A walk from `.` names every file `./...`: that leading `.` is dropped as the join is made, so
        // the joined path is normal without walking its components.
        cwd.join(path.strip_prefix(".").unwrap_or(path))
    };
    if is_normal(&joined) { joined } else { normalize(&joined) }
}

/// Whether an absolute path is already what [`normalize`] makes of it: no empty, `.` or `..` segment.
/// A byte check, much cheaper than walking the components, for the paths of a walk that nearly all are.
fn is_normal(path: &Path) -> bool {
    // On Windows an absolute path starts with a drive or a share, never `/`: such a path is normalised.
    let bytes = path.as_os_str().as_encoded_bytes();
    bytes == b"/"
        || bytes
            .strip_prefix(b"/")
            .is_some_and(|rest| rest.split(|byte| *byte == b'/').all(|segment| !matches!(segment, b"" | b"." | b"..")))
}

/// `file`'s path relative to `root` with forward slashes, when the file lies below `root`. Symbolic
/// links are resolved when the lexical comparison fails (e.g. `/tmp` being a link to `/private/tmp`).
pub fn relative_to(file: &SourceFile, cwd: &Path, root: &Path) -> Option<String> {
    relative_path(file.path(), cwd, root)
}

/// `path` (relative to `cwd`, or absolute) relative to `root` with forward slashes, when it lies below `root`.
pub fn relative_path(path: &Path, cwd: &Path, root: &Path) -> Option<String> {
    let path = absolute(path, cwd);
    let root = absolute(root, cwd);
    if let Ok(relative) = path.strip_prefix(&root) {
        return Some(slashed(relative));
    }
    let (path, root) = (path.canonicalize().ok()?, root.canonicalize().ok()?);
    path.strip_prefix(&root).ok().map(slashed)
}

/// The name a report shows for `file` relative to `root` (when given), else the display name with
/// forward slashes.
pub fn project_path(file: &SourceFile, cwd: &Path, root: Option<&Path>) -> String {
    root.and_then(|root| relative_to(file, cwd, root)).unwrap_or_else(|| file.display_name().replace('\\', "/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> SourceFile {
        SourceFile::new(PathBuf::from(path), path.to_string(), String::new())
    }

    #[test]
    fn normalizes_dots_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("./x/y")), PathBuf::from("x/y"));
        assert_eq!(normalize(Path::new("../x")), PathBuf::from("../x"));
    }

    #[test]
    fn absolute_paths_are_normal_whatever_the_shortcut() {
        let cwd = Path::new("/repo");
        for (path, expected) in [
            ("a/b.py", "/repo/a/b.py"),
            (".hidden/b.py", "/repo/.hidden/b.py"),
            ("./a/./b.py", "/repo/a/b.py"),
            ("./a/b.py", "/repo/a/b.py"),
            (".", "/repo"),
            ("./", "/repo"),
            ("./../b.py", "/b.py"),
            ("a/../b.py", "/repo/b.py"),
            ("a//b.py", "/repo/a/b.py"),
            ("a/b/", "/repo/a/b"),
            ("/x/..y/z", "/x/..y/z"),
            ("/x/../y", "/y"),
            ("/", "/"),
        ] {
            assert_eq!(absolute(Path::new(path), cwd), PathBuf::from(expected), "{path}");
            assert_eq!(absolute(Path::new(path), cwd), normalize(&cwd.join(path)), "{path}");
        }
    }

    #[test]
    fn paths_relative_to_a_root() {
        let cwd = Path::new("/repo/sub");
        assert_eq!(relative_to(&file("a.py"), cwd, Path::new("/repo")).as_deref(), Some("sub/a.py"));
        assert_eq!(relative_to(&file("../b/c.py"), cwd, Path::new("/repo")).as_deref(), Some("b/c.py"));
        assert_eq!(relative_to(&file("/elsewhere/c.py"), cwd, Path::new("/repo")), None);
        assert_eq!(project_path(&file("./a.py"), cwd, None), "./a.py");
        assert_eq!(project_path(&file("a.py"), cwd, Some(Path::new("."))), "a.py");
    }
}
