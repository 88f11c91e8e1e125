//! The runtime tests' part: fixture trees under `fixtures/runtime/`, environments for `capslint
//! runtime` and `capslint exec`, the test interpreter, and real CPU cgroups that remove themselves.

use std::ffi::OsStr;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::root;

/// A fixture tree under `fixtures/runtime/`.
pub fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/runtime").join(name)
}

/// `PYTHONPATH` set to the workload modules of `fixtures/runtime/python/`.
pub fn fixture_pythonpath() -> (&'static str, String) {
    ("PYTHONPATH", fixture("python").display().to_string())
}

/// The `--proc-root`, `--cgroup-root` and `--sys-root` arguments for a fixture tree.
pub fn root_args(name: &str) -> Vec<String> {
    let dir = fixture(name);
    vec![
        format!("--proc-root={}", dir.join("proc").display()),
        format!("--cgroup-root={}", dir.display()),
        format!("--sys-root={}", dir.join("sys").display()),
    ]
}

/// The caps ADR-0096 requires, all set to `n`, and the passive wait policy.
pub fn safe_caps(n: u32) -> Vec<(&'static str, String)> {
    let mut vars: Vec<(&'static str, String)> =
        ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "LOKY_MAX_CPU_COUNT"]
            .into_iter()
            .map(|name| (name, n.to_string()))
            .collect();
    vars.push(("OMP_WAIT_POLICY", "passive".to_owned()));
    vars
}

/// Replaces (or, with `None`, removes) variables in a list.
pub fn with(
    mut vars: Vec<(&'static str, String)>,
    changes: &[(&'static str, Option<&str>)],
) -> Vec<(&'static str, String)> {
    for (name, value) in changes {
        vars.retain(|(n, _)| n != name);
        if let Some(value) = value {
            vars.push((name, (*value).to_owned()));
        }
    }
    vars
}

/// Set in every environment a runtime test builds: no Python the tests start writes bytecode, so the
/// workload modules of `fixtures/runtime/python/` leave no `__pycache__` in the source tree.
pub const PYTHON_NO_BYTECODE: (&str, &str) = ("PYTHONDONTWRITEBYTECODE", "1");

/// A command with an empty environment but for `PATH`, [`PYTHON_NO_BYTECODE`] and `vars`, so that none
/// of the caller's caps leak in, and with every signal at its default disposition, as a container's
/// first process starts: a test run under `nohup` or as a background job of a script (which ignore
/// SIGHUP, or SIGINT and SIGQUIT) must not hand its ignored signals to the workloads it signals.
pub fn clean_command(program: impl AsRef<OsStr>, vars: &[(&str, String)]) -> Command {
    let mut command = Command::new(program);
    // SAFETY: `signal` is async-signal-safe; the closure runs in the child between fork and exec and
    // touches no memory of the parent.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            for signal in 1..=libc::SIGRTMAX() {
                if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                    libc::signal(signal, libc::SIG_DFL);
                }
            }
            Ok(())
        });
    }
    command.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command.env(PYTHON_NO_BYTECODE.0, PYTHON_NO_BYTECODE.1);
    for (name, value) in vars {
        command.env(name, value);
    }
    command
}

/// Whether a missing interpreter or cgroup must fail the test instead of skipping it.
pub fn real_cgroup_required() -> bool {
    std::env::var_os("CAPSLINT_REQUIRE_REAL_CGROUP").is_some_and(|v| v == "1")
}

/// Skips the calling test with one clear line, or fails it when real runs are required.
///
/// The line goes straight to the process's stderr: the test harness captures `println!` and
/// `eprintln!` of passing tests, and a skip must stay visible.
pub fn skip(why: &str) {
    if real_cgroup_required() {
        panic!("CAPSLINT_REQUIRE_REAL_CGROUP=1 but {why}");
    }
    skip_inapplicable(why);
}

/// Skips a test that does not apply to this machine (whatever `CAPSLINT_REQUIRE_REAL_CGROUP` says).
pub fn skip_inapplicable(why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "SKIP: {why}");
}

/// The interpreter with numpy, threadpoolctl and joblib: `CAPSLINT_TEST_PYTHON`, else
/// `.venv-test/bin/python` (made by `scripts/test-setup`).
pub fn test_python() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CAPSLINT_TEST_PYTHON") {
        let path = PathBuf::from(path);
        return if path.exists() {
            Ok(path)
        } else {
            Err(format!("CAPSLINT_TEST_PYTHON={} does not exist", path.display()))
        };
    }
    let venv = root().join(".venv-test/bin/python");
    if venv.exists() {
        Ok(venv)
    } else {
        Err("no test interpreter: run scripts/test-setup (or set CAPSLINT_TEST_PYTHON)".to_owned())
    }
}

/// The JSON object a `--format json` run printed.
pub fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The `reason` of every verdict in a JSON report, in order.
pub fn reasons(report: &Value) -> Vec<String> {
    report["verdicts"]
        .as_array()
        .map(|verdicts| verdicts.iter().map(|v| v["reason"].as_str().unwrap_or("?").to_owned()).collect())
        .unwrap_or_default()
}

/// The v1 `cpu` hierarchy the real-cgroup tests create their cgroups in.
pub const CPU_HIERARCHY: &str = "/sys/fs/cgroup/cpu";

/// Serialises the real-cgroup tests: each measures CPU time, which parallel runs would distort.
pub static REAL_CGROUP_LOCK: Mutex<()> = Mutex::new(());

/// The number of the next [`TestCgroup`] of this process.
static NEXT_CGROUP: AtomicUsize = AtomicUsize::new(0);

/// A uniquely named child of the v1 `cpu` hierarchy with a CFS quota and the largest CPU weight,
/// removed on drop (after moving any process left in it back to the parent).
pub struct TestCgroup {
    /// The cgroup's directory under [`CPU_HIERARCHY`].
    dir: PathBuf,
}

impl TestCgroup {
    /// Creates `capslint-test-<pid>-<n>` with `quota_us` per `period_us`.
    pub fn create(quota_us: u64, period_us: u64) -> Result<Self, String> {
        let hierarchy = Path::new(CPU_HIERARCHY);
        if !hierarchy.join("cpu.cfs_quota_us").exists() {
            return Err(format!("{CPU_HIERARCHY} is not a cgroup v1 cpu hierarchy"));
        }
        let name = format!("capslint-test-{}-{}", std::process::id(), NEXT_CGROUP.fetch_add(1, Ordering::Relaxed));
        let dir = hierarchy.join(name);
        fs::create_dir(&dir).map_err(|e| format!("{CPU_HIERARCHY} is not writable ({e})"))?;
        let cgroup = Self { dir };
        let write = |file: &str, value: u64| {
            fs::write(cgroup.dir.join(file), value.to_string())
                .map_err(|e| format!("cannot write {file} in {}: {e}", cgroup.dir.display()))
        };
        // Period first: the quota is validated against it.
        write("cpu.cfs_period_us", period_us)?;
        write("cpu.cfs_quota_us", quota_us)?;
        // The largest weight, so that other load on the machine does not keep the cgroup below
        // its quota: the tests are about quota throttling, not about contention.
        write("cpu.shares", 262_144)?;
        Ok(cgroup)
    }

    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A command that joins this cgroup, then becomes `program args...`, with only `vars` set.
    pub fn command(&self, program: impl AsRef<OsStr>, args: &[&str], vars: &[(&str, String)]) -> Command {
        let mut command = clean_command("sh", vars);
        command.arg("-c").arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#).arg(&self.dir).arg(program).args(args);
        command
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        let parent = self.dir.parent().unwrap_or(Path::new(CPU_HIERARCHY)).join("cgroup.procs");
        for _ in 0..100 {
            if let Ok(procs) = fs::read_to_string(self.dir.join("cgroup.procs")) {
                for pid in procs.split_whitespace() {
                    let _ = fs::write(&parent, pid);
                }
            }
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("warning: could not remove {}", self.dir.display());
    }
}

/// Everything a real-cgroup test needs, or why it cannot run (already reported by [`skip`]).
pub struct RealSetup {
    /// The interpreter with numpy, threadpoolctl and joblib.
    pub python: PathBuf,
    /// The cgroup the test runs in.
    pub cgroup: TestCgroup,
}

/// Prepares a real-cgroup test with the given quota, or skips it (returning `None`).
pub fn real_setup(quota_us: u64, period_us: u64) -> Option<RealSetup> {
    let python = match test_python() {
        Ok(python) => python,
        Err(why) => {
            skip(&why);
            return None;
        }
    };
    match TestCgroup::create(quota_us, period_us) {
        Ok(cgroup) => Some(RealSetup { python, cgroup }),
        Err(why) => {
            skip(&why);
            None
        }
    }
}
