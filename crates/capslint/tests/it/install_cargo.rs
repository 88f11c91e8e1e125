//! README.md's `cargo install` line, run as written against a clone of this repository (the working
//! tree committed into a fresh repository, reached by a `file://` URL): it installs the `capslint` binary
//! and nothing else, although the repository holds a second package with binaries (the fuzzing crate),
//! which is why the line names the package. Cheap on a second run: `--debug` and a build directory kept
//! in `target/tmp` (shared with the pre-commit hooks built from source) are the only flags added.

use std::process::Command;

use crate::integrations_docs::CARGO_INSTALL;
use crate::support::*;

const README_URL: &str = "https://github.com/capslint/capslint";

fn skip(reason: &str) {
    skip_integration("install_cargo", reason);
}

/// The `cargo install` lines of README.md's shell snippets.
fn readme_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut in_shell = false;
    let mut lines = Vec::new();
    for line in readme.lines() {
        match line.trim() {
            "```sh" => in_shell = true,
            "```" => in_shell = false,
            text if in_shell && text.starts_with("cargo install") => {
                lines.push(text.split(" #").next().unwrap().trim().to_string());
            }
            _ => {}
        }
    }
    lines
}

/// `cargo ARGS` with a clean environment for cargo: the tests' own target directory is not the install's,
/// and the build's settings are those of [`shared_dev_build`].
fn cargo(args: &[String]) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()));
    command.args(args).env_remove("CARGO_TARGET_DIR").env_remove("RUSTFLAGS");
    command.envs(shared_dev_build().1);
    command
}

/// Removes what an earlier run built of this workspace's own crates from the kept build directory, so only
/// the dependencies are reused: every run installs from a new commit of the same `file://` source, and
/// cargo reuses a git source's workspace members built from an earlier commit of it.
fn forget_the_workspace_crates(target_dir: &std::path::Path) {
    for kept in [".fingerprint", "deps", "build"] {
        let Ok(entries) = std::fs::read_dir(target_dir.join("debug").join(kept)) else { continue };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("capslint") {
                let path = entry.path();
                let _ = if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
            }
        }
    }
}

#[test]
fn the_readme_cargo_install_line_installs_capslint_alone() {
    assert_eq!(readme_lines(), [CARGO_INSTALL], "README.md gives one `cargo install` line, the one tested here");
    if !has_git() {
        return skip("git is not installed");
    }
    let clone = snapshot("install-cargo-repo");
    let url = format!("file://{}", clone.display());
    let install_root = tempfile::TempDir::new().unwrap();
    let mut args: Vec<String> = CARGO_INSTALL
        .split_whitespace()
        .skip(1)
        .map(|word| if word == README_URL { url.clone() } else { word.to_string() })
        .collect();
    assert!(args.contains(&url), "the line installs from {README_URL}");
    args.extend(["--root".to_string(), install_root.path().display().to_string(), "--debug".to_string()]);
    let target_dir = shared_dev_build().0;
    forget_the_workspace_crates(&target_dir);
    args.extend(["--target-dir".to_string(), target_dir.display().to_string()]);

    let started = std::time::Instant::now();
    let out = cargo(&args).output().expect("cargo runs");
    note(&format!("cargo install from a clone: {:.1} s", started.elapsed().as_secs_f64()));
    let log = combined(&out);
    if !out.status.success() && (log.contains("failed to download") || log.contains("failed to query")) {
        return skip(&format!("crates.io cannot be reached: {log}"));
    }
    assert!(out.status.success(), "`{}` failed:\n{log}", args.join(" "));

    let bin = install_root.path().join("bin");
    let installed: Vec<String> = std::fs::read_dir(&bin)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(installed, ["capslint"], "only capslint is installed");
    let version = Command::new(bin.join("capslint")).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("capslint {}", env!("CARGO_PKG_VERSION")));

    // Without the package's name cargo refuses: the fuzzing crate has binaries too.
    let plain: Vec<String> = ["install", "--locked", "--git", &url, "--root"]
        .into_iter()
        .map(str::to_string)
        .chain([install_root.path().join("plain").display().to_string()])
        .collect();
    let out = cargo(&plain).output().expect("cargo runs");
    assert!(!out.status.success(), "{}", combined(&out));
    assert!(combined(&out).contains("multiple packages with binaries found"), "{}", combined(&out));
}
