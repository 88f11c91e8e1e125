//! Tools the integration tests install from PyPI (pre-commit, actionlint, shellcheck, uv, maturin), each
//! pinned, in its own virtual environment under `target/tmp`, made once and reused; and how such a test
//! skips when a tool cannot be had.
//!
//! Without Python, pip or the network a test prints a `SKIP` line and passes, unless
//! `CAPSLINT_REQUIRE_INTEGRATIONS=1`, which turns the skip into a failure (`.ci/run` sets it).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// Whether the integrations must run (`CAPSLINT_REQUIRE_INTEGRATIONS=1`).
pub fn integrations_required() -> bool {
    std::env::var("CAPSLINT_REQUIRE_INTEGRATIONS").is_ok_and(|value| value == "1")
}

/// Prints why `test` cannot run, or fails when the integrations are required.
pub fn skip_integration(test: &str, reason: &str) {
    assert!(!integrations_required(), "CAPSLINT_REQUIRE_INTEGRATIONS=1 but {test} cannot run: {reason}");
    note(&format!("SKIP {test}: {reason}"));
}

/// Prints a line that the test run shows even when the test passes (a measurement, a skip): written to
/// standard error directly, which the test harness does not capture.
pub fn note(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The directory for the tests' own files that outlive a run (`target/tmp`).
pub fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// The build directory under [`tmp`] that the tests building capslint from source in the dev profile
/// share (`cargo install --debug`, the pre-commit hooks built with maturin), and the settings they share
/// it with: neither incremental state nor debug information, which would only take disk (gigabytes for a
/// build of every dependency), and the same for each, so that one build of the dependencies serves both.
pub fn shared_dev_build() -> (PathBuf, [(&'static str, &'static str); 2]) {
    (tmp().join("install-cargo"), [("CARGO_INCREMENTAL", "0"), ("CARGO_PROFILE_DEV_DEBUG", "false")])
}

/// The interpreter that makes the tools' environments: `CAPSLINT_TEST_PYTHON`, else `python3`.
pub fn host_python() -> String {
    std::env::var("CAPSLINT_TEST_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Standard output and standard error of a finished command, together.
pub fn combined(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Runs `command`; `Err` says what failed, with its output.
pub fn checked(command: &mut Command, what: &str) -> Result<Output, String> {
    match command.output() {
        Ok(output) if output.status.success() => Ok(output),
        Ok(output) => Err(format!("{what} failed ({}): {}", output.status, combined(&output))),
        Err(error) => Err(format!("{what} could not start: {error}")),
    }
}

/// Serialises the making of environments within this test process; a lock file does across processes.
static MAKING: Mutex<()> = Mutex::new(());

/// A virtual environment `target/tmp/<name>-venv` holding exactly the pinned `requirements`
/// (`name==version`), made when missing or different; returns its `bin` directory.
pub fn tool_venv(name: &str, requirements: &[&str]) -> Result<PathBuf, String> {
    let _guard = MAKING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let venv = tmp().join(format!("{name}-venv"));
    let lock = File::create(tmp().join(format!("{name}-venv.lock"))).map_err(|error| error.to_string())?;
    lock.lock().map_err(|error| error.to_string())?;
    let bin = venv.join("bin");
    if has_requirements(&bin, requirements) {
        return Ok(bin);
    }
    let python = host_python();
    checked(Command::new(&python).args(["-m", "venv", "--clear"]).arg(&venv), &format!("`{python} -m venv`"))?;
    let mut pip = Command::new(bin.join("python"));
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).args(requirements);
    checked(&mut pip, &format!("`pip install {}` (no network?)", requirements.join(" ")))?;
    if has_requirements(&bin, requirements) {
        Ok(bin)
    } else {
        Err(format!("{} does not hold {requirements:?} after installing them", venv.display()))
    }
}

/// Whether the environment of `bin` has every requirement at its pinned version.
fn has_requirements(bin: &Path, requirements: &[&str]) -> bool {
    let check = "import sys\nfrom importlib.metadata import version\n\
                 sys.exit(any(version(n) != v for n, v in (r.split('==') for r in sys.argv[1:])))";
    Command::new(bin.join("python"))
        .args(["-c", check])
        .args(requirements)
        .output()
        .is_ok_and(|output| output.status.success())
}
