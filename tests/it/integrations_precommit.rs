//! The pre-commit hooks, run by pre-commit itself: `pre-commit try-repo` builds capslint from a copy of
//! this repository (`language: rust`) and runs it on a temporary git repository, once with a violation
//! and once fixed.
//!
//! pre-commit comes from PyPI into a virtual environment under `target/tmp` (made with
//! `$CAPSLINT_TEST_PYTHON`, else `python3`). Without Python, pip, git or the network the test prints a
//! SKIP line, unless `CAPSLINT_REQUIRE_INTEGRATIONS=1`, which turns that into a failure. The hook's
//! build is cached in `target/tmp/precommit-cargo`, so only the first run compiles the dependencies.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use crate::support::*;

const PRE_COMMIT: &str = "pre-commit==4.7.0";

fn required() -> bool {
    std::env::var("CAPSLINT_REQUIRE_INTEGRATIONS").is_ok_and(|value| value == "1")
}

/// Prints why the test cannot run, or fails when the integrations are required.
fn skip(reason: &str) {
    assert!(!required(), "CAPSLINT_REQUIRE_INTEGRATIONS=1 but {reason}");
    println!("SKIP integrations_precommit: {reason}");
}

fn output(command: &mut Command) -> Option<Output> {
    command.output().ok()
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// A virtual environment with pre-commit, made once and reused; `Err` says why there is none.
fn pre_commit() -> Result<PathBuf, String> {
    let venv = tmp().join("precommit-venv");
    let executable = venv.join("bin/pre-commit");
    let installed = output(Command::new(&executable).arg("--version")).is_some_and(|out| {
        String::from_utf8_lossy(&out.stdout).contains(PRE_COMMIT.trim_start_matches("pre-commit=="))
    });
    if installed {
        return Ok(executable);
    }
    let python = std::env::var("CAPSLINT_TEST_PYTHON").unwrap_or_else(|_| "python3".to_string());
    match output(Command::new(&python).args(["-m", "venv", "--clear"]).arg(&venv)) {
        Some(out) if out.status.success() => {}
        Some(out) => return Err(format!("`{python} -m venv` failed: {}", text(&out))),
        None => return Err(format!("no Python interpreter `{python}`")),
    }
    let pip = output(Command::new(venv.join("bin/python")).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        PRE_COMMIT,
    ]));
    match pip {
        Some(out) if out.status.success() => Ok(executable),
        Some(out) => Err(format!("`pip install {PRE_COMMIT}` failed (no network?): {}", text(&out))),
        None => Err("pip did not run".to_string()),
    }
}

fn git(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=capslint tests", "-c", "user.email=tests@capslint.invalid"])
        .args(["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?} failed: {}", text(&out));
    out
}

/// A git repository holding this repository's files (the working tree, uncommitted changes included),
/// at a stable path so that cargo's cache in `target/tmp` is reused between runs.
fn hook_repository() -> PathBuf {
    let repository = tmp().join("precommit-hook-repo");
    let _ = std::fs::remove_dir_all(&repository);
    std::fs::create_dir_all(&repository).unwrap();
    let listed = git(&root(), &["ls-files", "-z", "--cached", "--others", "--exclude-standard"]);
    for name in String::from_utf8(listed.stdout).unwrap().split('\0').filter(|name| !name.is_empty()) {
        let source = root().join(name);
        if source.is_file() {
            let target = repository.join(name);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&source, &target).unwrap();
        }
    }
    git(&repository, &["init", "-q"]);
    git(&repository, &["add", "-A"]);
    git(&repository, &["commit", "-q", "-m", "hooks under test"]);
    repository
}

/// `pre-commit try-repo HOOKS HOOK --all-files` in `project`.
fn try_repo(pre_commit: &Path, hooks: &Path, hook: &str, project: &Path, home: &Path) -> (i32, String) {
    let mut command = scrubbed(pre_commit);
    command
        .current_dir(project)
        .arg("try-repo")
        .arg(hooks)
        .args([hook, "--all-files", "--color", "never"])
        .env("PRE_COMMIT_HOME", home)
        // Cache the hook's build between runs, and keep it cheap: the hook mechanics are under test here,
        // not the optimiser.
        .env("CARGO_TARGET_DIR", tmp().join("precommit-cargo"))
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false");
    let out = command.output().expect("pre-commit runs");
    (out.status.code().unwrap_or(-1), text(&out))
}

#[test]
fn pre_commit_builds_the_hook_and_gates_a_commit() {
    if output(Command::new("git").arg("--version")).is_none() {
        return skip("git is not installed");
    }
    let pre_commit = match pre_commit() {
        Ok(pre_commit) => pre_commit,
        Err(reason) => return skip(&reason),
    };
    let started = Instant::now();
    let hooks = hook_repository();
    let project = project(&[
        ("src/train.py", TRAIN),
        ("vendor/third_party.py", TRAIN),
        ("capslint.toml", "extend-exclude = [\"vendor\"]\n"),
        ("k8s/job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"),
        ("README.md", "not checked\n"),
    ]);
    git(project.path(), &["init", "-q"]);
    git(project.path(), &["add", "-A"]);
    let home = tempfile::TempDir::new().unwrap();

    let (code, log) = try_repo(&pre_commit, &hooks, "capslint", project.path(), home.path());
    println!("first run (build included): {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(code, 1, "the hook must fail on a violation:\n{log}");
    assert!(log.contains("capslint") && log.contains("Failed"), "{log}");
    assert!(log.contains("src/train.py:7:20: CAP101") || log.contains("src/train.py:7:20]"), "{log}");
    assert!(!log.contains("vendor/third_party.py"), "--force-exclude keeps excluded files out:\n{log}");

    write(project.path(), "src/train.py", CLEAN);
    git(project.path(), &["add", "-A"]);
    let again = Instant::now();
    let (code, log) = try_repo(&pre_commit, &hooks, "capslint", project.path(), home.path());
    println!("second run: {:.1} s", again.elapsed().as_secs_f64());
    assert_eq!(code, 0, "the fixed file passes:\n{log}");
    assert!(log.contains("Passed"), "{log}");

    // The manifests hook looks at YAML only: the Python violation is not its business.
    write(project.path(), "src/train.py", TRAIN);
    git(project.path(), &["add", "-A"]);
    let (code, log) = try_repo(&pre_commit, &hooks, "capslint-manifests", project.path(), home.path());
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("capslint (Kubernetes manifests)") && log.contains("Passed"), "{log}");
    println!("pre-commit integration: {:.1} s in all", started.elapsed().as_secs_f64());
}
