//! The pre-commit hooks, run by pre-commit itself on a temporary git repository whose
//! `.pre-commit-config.yaml` names them: once with a violation (the hook environment is installed then)
//! and once fixed (warm):
//!
//! - the mirror (`pre-commit-mirror/`, what `capslint/capslint-pre-commit` publishes): its hook
//!   environment is installed from the wheel, with a local wheelhouse standing in for PyPI
//!   (`PIP_FIND_LINKS`, `PIP_NO_INDEX`) and no cargo on PATH; the first and the warm run are timed;
//! - this repository's `language: system` hooks, with the freshly built capslint on PATH;
//! - this repository's source-build hooks (`pip install` of pyproject.toml, maturin, `cargo --locked`),
//!   built cheaply (the dev profile, a build directory kept in `target/tmp`).
//!
//! pre-commit comes from PyPI, pinned (see [`crate::support::tool_venv`]).

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::support::*;

const PRE_COMMIT: &str = "pre-commit==4.7.0";
/// The mirror's build backend, put in the wheelhouse so that nothing comes from the index.
const MIRROR_BACKEND: &str = "setuptools==84.2.1";

fn skip(reason: &str) {
    skip_integration("integrations_precommit", reason);
}

fn pre_commit() -> Result<std::path::PathBuf, String> {
    if !has_git() {
        return Err("git is not installed".to_string());
    }
    tool_venv("precommit", &[PRE_COMMIT]).map(|bin| bin.join("pre-commit"))
}

/// PATH without the directories that hold cargo or rustc: the hook must not need a Rust toolchain.
fn path_without_rust() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|dir| !dir.join("cargo").exists() && !dir.join("rustc").exists())
        .map(|dir| dir.display().to_string())
        .collect::<Vec<_>>()
        .join(":")
}

/// A project with a violation in `src/`, the same in an excluded `vendor/`, and a manifest.
fn sample_project() -> tempfile::TempDir {
    let project = project(&[
        ("src/train.py", TRAIN),
        ("vendor/third_party.py", TRAIN),
        ("capslint.toml", "extend-exclude = [\"vendor\"]\n"),
        ("k8s/job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"),
        ("README.md", "not checked\n"),
    ]);
    git(project.path(), &["init", "-q"]);
    git(project.path(), &["add", "-A"]);
    project
}

/// `pre-commit run --all-files` in `project`, with `env`; the exit code and the log.
fn run_hooks(pre_commit: &Path, project: &Path, home: &Path, env: &[(&str, OsString)]) -> (i32, String) {
    let mut command = scrubbed(pre_commit);
    command.current_dir(project).args(["run", "--all-files", "--color", "never"]).env("PRE_COMMIT_HOME", home);
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().expect("pre-commit runs");
    (out.status.code().unwrap_or(-1), combined(&out))
}

/// The status pre-commit printed for the hook named `name` (`Passed`, `Failed`, ...).
fn status<'a>(log: &'a str, name: &str) -> &'a str {
    log.lines()
        .find_map(|line| line.strip_prefix(name).filter(|rest| rest.starts_with('.')))
        .map(|rest| rest.trim_start_matches('.'))
        .unwrap_or_else(|| panic!("no status for the hook `{name}`:\n{log}"))
}

/// The project's `.pre-commit-config.yaml` names the hooks `ids` of the repository `hooks` at its
/// commit. The first run installs the hook environment and fails on the violation (excluded files stay
/// out; the manifests hook ignores Python), the second, warm, passes once it is fixed. Returns the
/// durations of both runs.
fn gate_a_commit(pre_commit: &Path, hooks: &Path, ids: (&str, &str), env: &[(&str, OsString)]) -> (f64, f64) {
    let project = sample_project();
    let rev = String::from_utf8(git(hooks, &["rev-parse", "HEAD"]).stdout).unwrap();
    let config = format!(
        "repos:\n  - repo: {}\n    rev: {}\n    hooks:\n      - id: {}\n      - id: {}\n",
        hooks.display(),
        rev.trim(),
        ids.0,
        ids.1
    );
    write(project.path(), ".pre-commit-config.yaml", &config);
    git(project.path(), &["add", "-A"]);
    let home = tempfile::TempDir::new().unwrap();

    let started = Instant::now();
    let (code, log) = run_hooks(pre_commit, project.path(), home.path(), env);
    let first = started.elapsed().as_secs_f64();
    assert_eq!(code, 1, "the hook must fail on a violation:\n{log}");
    assert_eq!(status(&log, "capslint"), "Failed", "{log}");
    assert_eq!(status(&log, "capslint (Kubernetes manifests)"), "Passed", "YAML only:\n{log}");
    assert!(log.contains("src/train.py:7:20: CAP101") || log.contains("src/train.py:7:20]"), "{log}");
    assert!(!log.contains("vendor/third_party.py"), "--force-exclude keeps excluded files out:\n{log}");

    write(project.path(), "src/train.py", CLEAN);
    git(project.path(), &["add", "-A"]);
    let again = Instant::now();
    let (code, log) = run_hooks(pre_commit, project.path(), home.path(), env);
    let second = again.elapsed().as_secs_f64();
    assert_eq!(code, 0, "the fixed file passes:\n{log}");
    assert_eq!(status(&log, "capslint"), "Passed", "{log}");
    assert!(!log.contains("Installing environment"), "the second run reuses the hook environment:\n{log}");
    (first, second)
}

#[test]
fn the_mirror_installs_the_wheel_in_seconds_without_rust() {
    let pre_commit = match pre_commit() {
        Ok(pre_commit) => pre_commit,
        Err(reason) => return skip(&reason),
    };
    let house = match wheelhouse("wheelhouse-precommit", &[MIRROR_BACKEND]) {
        Ok(house) => house,
        Err(reason) => return skip(&reason),
    };
    let mirror = snapshot_of("pre-commit-mirror", "precommit-mirror-repo");
    let path = path_without_rust();
    let which = Command::new("sh").args(["-c", "command -v cargo rustc"]).env("PATH", &path).output().unwrap();
    assert!(which.stdout.is_empty(), "cargo is still on PATH: {}", combined(&which));
    let env = [
        ("PATH", OsString::from(&path)),
        ("PIP_FIND_LINKS", house.clone().into_os_string()),
        ("PIP_NO_INDEX", "1".into()),
        ("PIP_DISABLE_PIP_VERSION_CHECK", "1".into()),
    ];
    let (first, warm) = gate_a_commit(&pre_commit, &mirror, ("capslint", "capslint-manifests"), &env);
    note(&format!(
        "pre-commit mirror: first run (hook environment installed from the wheel) {first:.1} s, warm run {warm:.1} s"
    ));
    assert!(first < 120.0, "installing the hook took {first:.1} s: something is built instead of installed");
}

#[test]
fn the_system_hooks_run_the_capslint_on_path() {
    let pre_commit = match pre_commit() {
        Ok(pre_commit) => pre_commit,
        Err(reason) => return skip(&reason),
    };
    let hooks = snapshot("precommit-hook-repo-system");
    let bin = binary().parent().unwrap().display().to_string();
    let env = [("PATH", OsString::from(format!("{bin}:{}", path_without_rust())))];
    let (first, warm) = gate_a_commit(&pre_commit, &hooks, ("capslint-system", "capslint-manifests-system"), &env);
    note(&format!("pre-commit system hooks: first run {first:.1} s, warm run {warm:.1} s"));

    // Without capslint on PATH the system hook cannot run, and says so.
    let project = sample_project();
    let rev = String::from_utf8(git(&hooks, &["rev-parse", "HEAD"]).stdout).unwrap();
    let config = format!(
        "repos:\n  - repo: {}\n    rev: {}\n    hooks:\n      - id: capslint-system\n",
        hooks.display(),
        rev.trim()
    );
    write(project.path(), ".pre-commit-config.yaml", &config);
    git(project.path(), &["add", "-A"]);
    let home = tempfile::TempDir::new().unwrap();
    let env = [("PATH", OsString::from(path_without_rust()))];
    let (code, log) = run_hooks(&pre_commit, project.path(), home.path(), &env);
    assert_ne!(code, 0, "{log}");
    assert!(log.contains("capslint") && log.contains("not found"), "{log}");
}

#[test]
fn the_source_hooks_build_capslint_with_maturin() {
    let pre_commit = match pre_commit() {
        Ok(pre_commit) => pre_commit,
        Err(reason) => return skip(&reason),
    };
    let hooks = snapshot("precommit-hook-repo-source");
    // The hook mechanics are under test here, not the optimiser: the dev profile, and cargo's build kept
    // between runs (shared with the `cargo install` test, which builds the same profile).
    let (target_dir, settings) = shared_dev_build();
    let mut env =
        vec![("CARGO_TARGET_DIR", target_dir.into_os_string()), ("MATURIN_PEP517_ARGS", "--profile dev".into())];
    env.extend(settings.map(|(name, value)| (name, OsString::from(value))));
    let (first, warm) = gate_a_commit(&pre_commit, &hooks, ("capslint", "capslint-manifests"), &env);
    note(&format!("pre-commit source hooks: first run (build included) {first:.1} s, warm run {warm:.1} s"));
}
