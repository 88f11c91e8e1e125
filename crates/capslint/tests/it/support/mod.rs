//! Shared by every integration test: the repository and the binary under test, commands that run the
//! binary with an environment no outer CI system leaks into, temporary projects and sample texts.
//!
//! [`lint`] lints through the library and reads the fixtures' `# expect:` markers; [`lsp`] drives
//! `capslint server` over its standard input and output; [`runtime`] holds what
//! the `capslint runtime` and `capslint exec` tests need (fixture trees, the test interpreter, real CPU
//! cgroups), and [`processes`] how they watch what they start (markers, PID namespaces). The distribution's tests share [`tools`] (pinned tools from PyPI, and how their tests skip),
//! [`wheel`] (the wheel, built once), [`elf`] (the glibc versions a binary needs) and [`repository`]
//! (git, and the working tree as a repository to clone); [`rusage`] measures a child's peak memory. All
//! are re-exported here, so a test needs one `use crate::support::*;`.

mod elf;
mod lint;
mod lsp;
mod processes;
mod repository;
mod runtime;
mod rusage;
mod tools;
mod wheel;

pub use elf::*;
pub use lint::*;
pub use lsp::*;
pub use processes::*;
pub use repository::*;
pub use runtime::*;
pub use rusage::*;
pub use tools::*;
pub use wheel::*;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use tempfile::TempDir;

/// Variables that change capslint's behaviour and must come from the test alone.
pub const LEAKY_VARIABLES: &[&str] = &[
    "GITHUB_ACTIONS",
    "GITHUB_WORKSPACE",
    "CI_PROJECT_DIR",
    "CAPSLINT_OUTPUT_FORMAT",
    "CAPSLINT_OUTPUT_FILE",
    "RUST_BACKTRACE",
    "FORCE_COLOR",
    "CLICOLOR_FORCE",
];

/// The tests run from the repository root, as a user runs `capslint check` from a repository's: the
/// fixtures are named by paths relative to it, and reports show paths relative to the working directory.
/// Set before the first test starts (cargo starts a test binary in its package's directory).
#[ctor::ctor(unsafe)]
fn run_from_the_repository_root() {
    std::env::set_current_dir(root()).expect("the repository root exists");
}

/// The repository root (this crate is `crates/capslint`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/capslint is two levels below the root")
        .to_path_buf()
}

/// The integration tests' own directory (`crates/capslint/tests`).
pub fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The freshly built binary.
pub fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_capslint"))
}

/// `program` (the binary, or a program that runs it) without color and without the variables of
/// [`LEAKY_VARIABLES`]: how every test that runs the binary starts it.
pub fn scrubbed(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command.env("NO_COLOR", "1");
    for name in LEAKY_VARIABLES {
        command.env_remove(name);
    }
    command
}

/// `capslint` in `dir`, without color and without the CI variables of the outer environment.
pub fn capslint(dir: &Path) -> Command {
    let mut command = Command::from_std(scrubbed(binary()));
    command.current_dir(dir);
    command
}

/// `capslint check --isolated` in `dir`.
pub fn check(dir: &Path) -> Command {
    let mut command = capslint(dir);
    command.args(["check", "--isolated"]);
    command
}

/// A temporary directory with `files` (path, text) written into it.
pub fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().expect("temp dir");
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    dir
}

/// Writes `text` to `dir/name`, creating directories.
pub fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
    fs::write(path, text).expect("write file");
}

/// The exit code, standard output and standard error of a finished command.
pub fn outcome(output: &Output) -> (i32, String, String) {
    (
        output.status.code().expect("exited normally"),
        String::from_utf8(output.stdout.clone()).expect("UTF-8 stdout"),
        String::from_utf8(output.stderr.clone()).expect("UTF-8 stderr"),
    )
}

/// Runs `command` and returns its outcome.
pub fn run(command: &mut Command) -> (i32, String, String) {
    outcome(&command.output().expect("the command runs"))
}

/// Describes a finished command for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status: {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Python with findings of an error rule (CAP101, CAP103) and a warning rule (CAP102); CAP103 has a
/// secondary label on the `os.cpu_count()` it traces to.
pub const TRAIN: &str = "import os

import lightgbm as lgb
from joblib import Parallel, delayed

workers = os.cpu_count()
results = Parallel(n_jobs=-1)(delayed(abs)(x) for x in range(9))
model = lgb.LGBMClassifier()
more = Parallel(n_jobs=workers)(delayed(abs)(x) for x in range(9))
";

/// A clean counterpart.
pub const CLEAN: &str = "from joblib import Parallel, delayed

results = Parallel(n_jobs=1)(delayed(abs)(x) for x in range(9))
";

/// One CAP101 finding after non-ASCII text on its line, in a file whose path needs escaping everywhere.
pub const ODD_PATH: &str = "odd,dir:100%/my <model> & 'co'.py";
/// The text of [`ODD_PATH`].
pub const ODD: &str =
    "from joblib import Parallel\n\n# é — not a suppression\nlabel = \"é\"; out = Parallel(n_jobs=-1)\n";

/// Snapshots the full and JSON reports of a fixture that expects findings, and asserts that one that
/// expects none reports nothing ([`assert_reports_nothing`]). A macro, so that the snapshots are named
/// after the test module that uses it.
macro_rules! assert_reports {
    ($path:expr, $diagnostics:expr, $expects_findings:expr) => {{
        let (path, diagnostics): (&std::path::Path, &[capslint_diagnostics::diagnostic::Diagnostic]) =
            ($path, $diagnostics);
        if $expects_findings {
            insta::assert_snapshot!(snapshot_name(path, "full"), render_full(diagnostics));
            insta::assert_snapshot!(snapshot_name(path, "json"), render_json(diagnostics));
        } else {
            assert_reports_nothing(path, diagnostics);
        }
    }};
}
pub(crate) use assert_reports;
