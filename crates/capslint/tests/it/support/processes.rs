//! Processes the runtime tests start and watch: everything a test started carries its own
//! environment marker and is found (and killed at the end) through `/proc`; children of a process;
//! waits bounded by a deadline; and new PID namespaces through `unshare`.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The variable that marks the processes of one test.
const MARKER: &str = "CAPSLINT_TEST_MARKER";

/// The number of the next [`Marker`] of this process.
static NEXT_MARKER: AtomicUsize = AtomicUsize::new(0);

/// An environment entry unique to one test, inherited by everything it starts; when dropped, every
/// process still carrying it is killed, so a failing test leaves nothing running.
pub struct Marker {
    value: String,
}

impl Marker {
    /// A new marker.
    pub fn new() -> Self {
        Self { value: format!("{}-{}", std::process::id(), NEXT_MARKER.fetch_add(1, Ordering::Relaxed)) }
    }

    /// The variable to set on a command: `(name, value)`.
    pub fn var(&self) -> (&'static str, String) {
        (MARKER, self.value.clone())
    }

    /// The living processes that carry the marker (a zombie has no environment left).
    pub fn processes(&self) -> Vec<u32> {
        let entry = format!("{MARKER}={}", self.value);
        let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|environ| environ.split(|byte| *byte == 0).any(|var| var == entry.as_bytes()))
            })
            .collect()
    }

    /// Waits up to `within` for no process to carry the marker; the ones still there.
    pub fn wait_until_gone(&self, within: Duration) -> Vec<u32> {
        let deadline = Instant::now() + within;
        loop {
            let left = self.processes();
            if left.is_empty() || Instant::now() >= deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Default for Marker {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        for pid in self.processes() {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).stderr(Stdio::null()).status();
        }
    }
}

/// The state letter of `/proc/PID/stat` (`R`, `S`, `Z`...), or `None` when the process is gone.
pub fn process_state(pid: u32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].split_whitespace().next()?.chars().next()
}

/// The children of `pid`, read from `/proc`.
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            fs::read_to_string(format!("/proc/{child}/stat")).ok().is_some_and(|stat| {
                let after_name = stat.rfind(')').map_or("", |end| &stat[end + 1..]);
                after_name.split_whitespace().nth(1) == Some(pid.to_string().as_str())
            })
        })
        .collect()
}

/// Waits up to `within` for `path` to exist and hold a line; its contents.
pub fn wait_for_file(path: &Path, within: Duration) -> Option<String> {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(text) = fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return Some(text);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to `within` for `child` to exit; `None` if it still runs.
pub fn wait_within(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` (a name such as `TERM`) to `pid`.
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status().unwrap();
    assert!(status.success(), "kill -{signal} {pid} failed");
}

/// The arguments that run a program as PID 1 of a new PID namespace, with its own `/proc`.
pub const UNSHARE_PID: [&str; 4] = ["--pid", "--fork", "--mount-proc", "--"];

/// Whether `unshare` can make new PID namespaces here, or why not.
pub fn pid_namespaces() -> Result<(), String> {
    static USABLE: OnceLock<Result<(), String>> = OnceLock::new();
    USABLE
        .get_or_init(|| match Command::new("unshare").args(UNSHARE_PID).arg("true").output() {
            Ok(output) if output.status.success() => Ok(()),
            Ok(output) => Err(format!(
                "unshare cannot make a PID namespace here ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )),
            Err(error) => Err(format!("unshare is not available: {error}")),
        })
        .clone()
}
