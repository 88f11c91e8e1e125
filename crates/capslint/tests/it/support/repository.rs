//! git for the tests: commands with a fixed identity, and this repository's working tree committed into a
//! fresh repository, which is what pre-commit and `cargo install --git` clone.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::root;
use super::tools::{combined, tmp};

/// Whether git is installed.
pub fn has_git() -> bool {
    Command::new("git").arg("--version").output().is_ok_and(|output| output.status.success())
}

/// `git ARGS` in `dir`, with a fixed identity and no signing; panics when it fails.
pub fn git(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=capslint tests", "-c", "user.email=tests@capslint.invalid"])
        .args(["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?} failed: {}", combined(&out));
    out
}

/// A git repository at `target/tmp/<name>` holding this repository's files as the working tree has them
/// (uncommitted changes included, ignored files left out), in one commit.
pub fn snapshot(name: &str) -> PathBuf {
    copy_into_repository(&root(), &tmp().join(name))
}

/// A git repository at `target/tmp/<name>` holding the files of `dir` of this repository, in one commit.
pub fn snapshot_of(dir: &str, name: &str) -> PathBuf {
    copy_into_repository(&root().join(dir), &tmp().join(name))
}

fn copy_into_repository(source: &Path, repository: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(repository);
    std::fs::create_dir_all(repository).unwrap();
    let listed = git(source, &["ls-files", "-z", "--cached", "--others", "--exclude-standard", "."]);
    for name in String::from_utf8(listed.stdout).unwrap().split('\0').filter(|name| !name.is_empty()) {
        let file = source.join(name);
        if file.is_file() {
            let target = repository.join(name);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&file, &target).unwrap();
        }
    }
    git(repository, &["init", "-q"]);
    git(repository, &["add", "-A"]);
    git(repository, &["commit", "-q", "-m", "snapshot under test"]);
    repository.to_path_buf()
}
