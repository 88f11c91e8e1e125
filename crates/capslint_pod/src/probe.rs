//! Running the embedded Python probe: what the real libraries report once the workload's modules
//! are loaded.
//!
//! The probe (`probe.py`, embedded at build time) writes one JSON object to an anonymous in-memory
//! file passed as descriptor 3, which this process reads only once the probe's whole process tree
//! is gone ([`super::tree`]): a helper the imported code forks can neither hold the report back nor
//! outlive the probe. It runs with exactly the environment given (so `exec --check` probes the
//! capped environment), in its own session, under a timeout after which the session is killed.
//!
//! The probe dies with capslint: the kernel sends it SIGKILL when capslint's thread that started it
//! ends (`PR_SET_PDEATHSIG`), and a stop signal to capslint kills its whole group and tree
//! ([`super::stop`]) before capslint exits with 128+N ([`ProbeError::Stopped`]). The threads that
//! wait for the probe and read its stderr block every signal, so that signals reach the thread that
//! runs the command (the init of `exec` takes them there, and one of these threads may outlive the
//! probe).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::env::Env;
use super::{stop, tree};

/// The probe's source, run with `python -c`.
pub const PROBE_SOURCE: &str = include_str!("probe.py");

/// What to run and how.
#[derive(Debug, Clone)]
pub struct ProbeRequest<'a> {
    /// The interpreter: a path, or a name looked up on `PATH`.
    pub python: &'a Path,
    /// The workload's own modules, imported before the usual stack.
    pub imports: &'a [String],
    /// Run a BLAS workload this long, reading this `cpu.stat` before and after.
    pub measure: Option<(f64, &'a Path)>,
    /// Kill the probe after this long.
    pub timeout: Duration,
    /// The probe's whole environment.
    pub env: &'a Env,
}

/// One loaded thread pool, as `threadpoolctl.threadpool_info()` describes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct Pool {
    /// threadpoolctl's dictionary, field names and values as it gives them.
    pub info: Map<String, Value>,
}

impl Pool {
    fn text(&self, key: &str) -> Option<&str> {
        self.info.get(key).and_then(Value::as_str)
    }

    /// `num_threads`: the pool's current size.
    pub fn num_threads(&self) -> Option<u64> {
        self.info.get("num_threads").and_then(Value::as_u64)
    }

    /// `user_api`: `blas` or `openmp`.
    pub fn user_api(&self) -> &str {
        self.text("user_api").unwrap_or("?")
    }

    /// `internal_api`: `openblas`, `mkl`, `blis`, `flexiblas` or `openmp`.
    pub fn internal_api(&self) -> &str {
        self.text("internal_api").unwrap_or("?")
    }

    /// `prefix`: the library file's name prefix (`libscipy_openblas`, `libgomp`, ...).
    pub fn prefix(&self) -> &str {
        self.text("prefix").unwrap_or("?")
    }

    /// `version`, when the library reports one.
    pub fn version(&self) -> Option<&str> {
        self.text("version")
    }
}

/// A pool of an ML library that threadpoolctl does not see, as the library itself reports it
/// (torch, numba, polars, ONNX Runtime, OpenCV, TensorFlow).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct LibraryPool {
    /// The module: `torch`, `numba`, `polars`, `onnxruntime`, `cv2` or `tensorflow`.
    pub library: String,
    /// Which of its pools: `intra-op`, `inter-op`, `parallel`, `compute`, `parallel_for`.
    pub pool: String,
    /// Its size; `None` when the library leaves it to a variable the caps judge.
    pub num_threads: Option<u64>,
    /// Where the size comes from (`torch.get_num_threads()`, ...).
    pub reported_by: String,
    /// The library's version.
    pub version: Option<String>,
}

/// The BLAS workload's raw `cpu.stat` readings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Measurement {
    /// How long the workload ran, in seconds.
    pub seconds: f64,
    /// Matrix products computed.
    pub iterations: u64,
    /// `cpu.stat` just before.
    pub cpu_stat_before: String,
    /// `cpu.stat` just after.
    pub cpu_stat_after: String,
}

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProbeReport {
    /// The interpreter's version (`3.11.7`).
    pub python: String,
    /// `sys.executable`.
    pub executable: String,
    /// The user's modules, all imported.
    pub imported: Vec<String>,
    /// Modules of the usual stack that were installed and imported.
    pub stack: Vec<String>,
    /// Modules of the usual stack that are installed but failed to import, with the error.
    pub stack_errors: BTreeMap<String, String>,
    /// threadpoolctl's version.
    pub threadpoolctl_version: Option<String>,
    /// `threadpoolctl.threadpool_info()`.
    pub pools: Vec<Pool>,
    /// The pools of the ML libraries the workload loaded, as each reports them.
    #[serde(default)]
    pub library_pools: Vec<LibraryPool>,
    /// Libraries whose report of their pools failed, with the error.
    #[serde(default)]
    pub library_pool_errors: BTreeMap<String, String>,
    /// joblib's version, when installed.
    pub joblib_version: Option<String>,
    /// `joblib.cpu_count()`, when joblib is installed.
    pub joblib_cpu_count: Option<u64>,
    /// The workload's readings, with `--measure`.
    #[serde(default)]
    pub measure: Option<Measurement>,
}

/// Why the probe gave no report.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The interpreter does not exist.
    #[error("Python interpreter not found: {0} (pass --python PATH)")]
    NotFound(PathBuf),
    /// The interpreter could not be started.
    #[error("cannot run {python}: {source}")]
    Spawn {
        /// The interpreter.
        python: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The probe ran past the timeout and was killed.
    #[error("the probe ({python}) did not finish within {seconds} s and was killed (raise --timeout)")]
    Timeout {
        /// The interpreter.
        python: PathBuf,
        /// The timeout.
        seconds: f64,
    },
    /// threadpoolctl is not importable.
    #[error("threadpoolctl is not installed for {python} ({message}): pip install threadpoolctl")]
    ThreadpoolctlMissing {
        /// The interpreter.
        python: PathBuf,
        /// Python's error.
        message: String,
    },
    /// A module given with `--import` failed to import.
    #[error("--import {module} failed: {message}")]
    ImportFailed {
        /// The module.
        module: String,
        /// Python's error.
        message: String,
    },
    /// The `--measure` workload failed.
    #[error("--measure failed: {0}")]
    MeasureFailed(String),
    /// A stop signal reached capslint while the probe ran; the probe's tree was killed.
    #[error("stopped by {}: the probe and every process it started were killed", stop::signal_name(*.signal))]
    Stopped {
        /// The signal.
        signal: libc::c_int,
    },
    /// The probe did not print a report.
    #[error("the probe ({python}) {status} without a report{}", stderr_tail(.stderr))]
    NoReport {
        /// The interpreter.
        python: PathBuf,
        /// How it ended.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
}

fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = &lines[lines.len().saturating_sub(8)..];
    format!(":\n  {}", tail.join("\n  "))
}

/// The descriptor the probe writes its report to.
const REPORT_FD: libc::c_int = 3;

/// The most of the report that is read (a report is a few kilobytes).
const REPORT_LIMIT: u64 = 16 << 20;

/// The most of the probe's stderr kept for messages (its end).
const STDERR_TAIL: usize = 64 << 10;

/// Runs the probe and parses its report.
///
/// This process becomes the reaper of the probe's orphans, and every child it did not have before
/// the probe started is killed when the probe ends: call it from a process that starts no other
/// children meanwhile (the `runtime` and `exec` commands).
pub fn run(request: &ProbeRequest<'_>) -> Result<ProbeReport, ProbeError> {
    let python = request.python.to_owned();
    let spawn_error = |source: io::Error| ProbeError::Spawn { python: python.clone(), source };
    let mut report = report_channel().map_err(spawn_error)?;
    let config = serde_json::json!({
        "imports": request.imports,
        "measure_seconds": request.measure.map(|(seconds, _)| seconds),
        "cpu_stat": request.measure.map(|(_, path)| path.to_string_lossy().into_owned()),
        "report_fd": REPORT_FD,
    });
    let before = tree::children();
    // Without it (not Linux, or refused) orphans go to init; the session is still killed whole.
    let _ = tree::adopt_orphans(true);
    let mut command = Command::new(request.python);
    command
        .arg("-c")
        .arg(PROBE_SOURCE)
        .arg(config.to_string())
        .env_clear()
        .envs(request.env.iter())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let report_fd = report.as_raw_fd();
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe
    // functions (setsid, prctl, getppid, dup2, fcntl).
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            // SIGKILL when this thread ends; a parent already gone would never send it.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            let rc = if report_fd == REPORT_FD {
                libc::fcntl(REPORT_FD, libc::F_SETFD, 0)
            } else {
                libc::dup2(report_fd, REPORT_FD)
            };
            if rc == -1 { Err(io::Error::last_os_error()) } else { Ok(()) }
        });
    }
    let child = command.spawn().map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => ProbeError::NotFound(python.clone()),
        _ => ProbeError::Spawn { python: python.clone(), source },
    })?;
    let stoppable = stop::ProbeGroup::register(child.id());
    let waited = wait_with_timeout(child, request.timeout, &before);
    drop(stoppable);
    if let Some(signal) = stop::caught() {
        return Err(ProbeError::Stopped { signal });
    }
    let output = waited.map_err(spawn_error)?;
    let Some(status) = output.status else {
        return Err(ProbeError::Timeout { python, seconds: request.timeout.as_secs_f64() });
    };
    let mut written = Vec::new();
    report
        .seek(SeekFrom::Start(0))
        .and_then(|_| (&mut report).take(REPORT_LIMIT).read_to_end(&mut written))
        .map_err(spawn_error)?;
    parse_report(&python, status, &written, &output.stderr)
}

/// An anonymous in-memory file (`memfd_create`), closed on exec in this process's other children.
///
/// Made as the system call itself: glibc wraps it only since 2.27, and the Linux wheels run on glibc
/// 2.17 and newer (manylinux2014). Kernels older than 3.17 answer `ENOSYS`, which the caller reports.
fn report_channel() -> io::Result<File> {
    // SAFETY: the name is a valid NUL-terminated string; the returned descriptor is owned below.
    let fd = unsafe {
        libc::syscall(libc::SYS_memfd_create, c"capslint-probe-report".as_ptr(), libc::MFD_CLOEXEC as libc::c_uint)
    } as libc::c_int;
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The outcome of a child run under a timeout.
struct Output {
    /// `None` when the child was killed at the timeout.
    status: Option<ExitStatus>,
    /// The end of its stderr.
    stderr: Vec<u8>,
}

/// How long to keep reading stderr after the child ended (a helper the tree walk could not kill
/// may still hold it).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Waits for `child` (killing its session at the timeout), then kills whatever it left behind: its
/// process group and every child of this process not in `before`. Only then is stderr drained.
fn wait_with_timeout(mut child: Child, timeout: Duration, before: &BTreeSet<u32>) -> io::Result<Output> {
    let stderr = tail_reader(child.stderr.take());
    // Block instead of polling: a poll loop would burn CPU time in the very cgroup whose
    // throttling `--measure` reads.
    let exited = exit_notifier(child.id());
    let status = match exited.recv_timeout(timeout) {
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // Not reaped yet (only this thread reaps), so the PID is still the child's, and the
            // child leads its own session: the whole group goes.
            tree::kill_group(child.id());
            child.kill()?;
            child.wait()?;
            None
        }
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => Some(child.wait()?),
    };
    tree::kill_group(child.id());
    tree::kill_adopted(before);
    Ok(Output { status, stderr: stderr.recv_timeout(DRAIN_GRACE).unwrap_or_default() })
}

/// Signals when the process `pid` has exited, without reaping it (`waitid` with `WNOWAIT`), so
/// the caller can still kill it by PID safely until it calls `wait` itself.
fn exit_notifier(pid: u32) -> mpsc::Receiver<()> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        stop::block_all_in_this_thread();
        let pid = libc::id_t::from(pid);
        loop {
            // SAFETY: `info` is a valid, writable siginfo_t; waitid only writes into it.
            let rc = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT)
            };
            if rc == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break;
            }
        }
        // On an error the child is no longer waitable; the caller's `wait` reports why.
        let _ = tx.send(());
    });
    rx
}

/// Reads a pipe to its end on a thread, keeping only its last [`STDERR_TAIL`] bytes.
fn tail_reader(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        thread::spawn(move || {
            stop::block_all_in_this_thread();
            let mut tail = Vec::new();
            let mut chunk = [0u8; 8192];
            // A read error ends the stream; what was read so far is kept.
            while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > 2 * STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
            let keep = tail.len().saturating_sub(STDERR_TAIL);
            let _ = tx.send(tail.split_off(keep));
        });
    }
    rx
}

/// The probe's failure report.
#[derive(Deserialize)]
struct Failure {
    error: String,
    #[serde(default)]
    module: String,
    #[serde(default)]
    message: String,
}

fn parse_report(python: &Path, status: ExitStatus, stdout: &[u8], stderr: &[u8]) -> Result<ProbeReport, ProbeError> {
    let stderr = String::from_utf8_lossy(stderr).into_owned();
    let no_report =
        |what: String| ProbeError::NoReport { python: python.to_owned(), status: what, stderr: stderr.clone() };
    let ended = if status.success() { "exited".to_owned() } else { format!("failed ({status})") };
    let line = String::from_utf8_lossy(stdout);
    let value: Value = serde_json::from_str(line.trim()).map_err(|_| no_report(ended.clone()))?;
    if value.get("ok") == Some(&Value::Bool(true)) {
        return serde_json::from_value(value).map_err(|e| no_report(format!("{ended}, its report unreadable ({e}),")));
    }
    let failure: Failure =
        serde_json::from_value(value).map_err(|e| no_report(format!("{ended}, its report unreadable ({e}),")))?;
    Err(match failure.error.as_str() {
        "threadpoolctl_missing" => {
            ProbeError::ThreadpoolctlMissing { python: python.to_owned(), message: failure.message }
        }
        "import_failed" => ProbeError::ImportFailed { module: failure.module, message: failure.message },
        "measure_failed" => ProbeError::MeasureFailed(failure.message),
        other => no_report(format!("{ended} reporting {other:?} {}", failure.message)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::time::Instant;

    fn ok() -> ExitStatus {
        ExitStatus::from_raw(0)
    }

    #[test]
    fn parses_a_report_keeping_pool_fields_verbatim() {
        let stdout = br#"{"ok": true, "python": "3.11.7", "executable": "/v/bin/python",
            "imported": ["m"], "stack": ["numpy"], "stack_errors": {},
            "threadpoolctl_version": "3.8.0", "joblib_version": "1.6.0", "joblib_cpu_count": 1,
            "pools": [{"user_api": "blas", "internal_api": "openblas", "num_threads": 2,
                       "prefix": "libscipy_openblas", "filepath": "/x.so", "version": "0.3.31",
                       "threading_layer": "pthreads", "architecture": "Haswell"}]}"#;
        let report = parse_report(Path::new("python3"), ok(), stdout, b"").unwrap();
        let pool = &report.pools[0];
        assert_eq!(pool.num_threads(), Some(2));
        assert_eq!((pool.user_api(), pool.internal_api()), ("blas", "openblas"));
        assert_eq!(pool.info["architecture"], "Haswell");
        assert_eq!(report.joblib_cpu_count, Some(1));
        assert_eq!(report.measure, None);
        assert!(report.library_pools.is_empty() && report.library_pool_errors.is_empty());
    }

    #[test]
    fn parses_the_pools_the_ml_libraries_report() {
        let stdout = br#"{"ok": true, "python": "3.11.7", "executable": "/v/bin/python",
            "imported": [], "stack": ["numba", "tensorflow"], "stack_errors": {},
            "threadpoolctl_version": "3.8.0", "joblib_version": null, "joblib_cpu_count": null, "pools": [],
            "library_pools": [
                {"library": "numba", "pool": "parallel", "num_threads": 8,
                 "reported_by": "numba.config.NUMBA_NUM_THREADS", "version": "0.68.1"},
                {"library": "tensorflow", "pool": "intra-op", "num_threads": null,
                 "reported_by": "tf.config.threading.get_intra_op_parallelism_threads()", "version": "2.21.0"}],
            "library_pool_errors": {"polars": "AttributeError: thread_pool_size"}}"#;
        let report = parse_report(Path::new("python3"), ok(), stdout, b"").unwrap();
        assert_eq!(report.library_pools.len(), 2);
        assert_eq!(report.library_pools[0].num_threads, Some(8));
        assert_eq!(report.library_pools[1].num_threads, None);
        assert_eq!(report.library_pool_errors["polars"], "AttributeError: thread_pool_size");
    }

    #[test]
    fn maps_the_probes_failures() {
        let missing = br#"{"ok": false, "error": "threadpoolctl_missing", "message": "No module"}"#;
        let err = parse_report(Path::new("/py"), ok(), missing, b"").unwrap_err();
        assert!(err.to_string().contains("pip install threadpoolctl"), "{err}");
        let import = br#"{"ok": false, "error": "import_failed", "module": "m", "message": "boom"}"#;
        let err = parse_report(Path::new("/py"), ok(), import, b"").unwrap_err();
        assert_eq!(err.to_string(), "--import m failed: boom");
    }

    #[test]
    fn garbage_output_is_an_error_with_the_stderr_tail() {
        let err =
            parse_report(Path::new("/py"), ExitStatus::from_raw(256), b"not json", b"Traceback\nSyntaxError: bad\n")
                .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("without a report"), "{text}");
        assert!(text.contains("SyntaxError: bad"), "{text}");
        let err = parse_report(Path::new("/py"), ok(), br#"{"ok": true}"#, b"").unwrap_err();
        assert!(err.to_string().contains("unreadable"), "{err}");
        let err = parse_report(Path::new("/py"), ok(), b"[1,2]", b"").unwrap_err();
        assert!(err.to_string().contains("unreadable"), "{err}");
    }

    #[test]
    fn kills_a_probe_that_outlives_the_timeout() {
        let child = Command::new("sleep").arg("30").stderr(Stdio::piped()).spawn().unwrap();
        let start = Instant::now();
        let output = wait_with_timeout(child, Duration::from_millis(200), &tree::children()).unwrap();
        assert!(output.status.is_none());
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_missing_interpreter_names_the_path() {
        let env = Env::default();
        let err = run(&ProbeRequest {
            python: Path::new("/nonexistent/python3"),
            imports: &[],
            measure: None,
            timeout: Duration::from_secs(5),
            env: &env,
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "Python interpreter not found: /nonexistent/python3 (pass --python PATH)");
    }
}
