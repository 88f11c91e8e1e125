//! What SIGTERM, SIGINT and SIGHUP do to `capslint runtime` and `capslint exec` before the command
//! runs: capslint exits with 128+N, and never leaves a probe behind.
//!
//! The handlers [`install`] sets touch only atomics and call `kill` and `_exit`, which are
//! async-signal-safe. While a probe runs, its process group is registered ([`ProbeGroup`]): the
//! handler kills that group and records the signal, the thread waiting for the probe wakes up as the
//! probe dies, kills what the probe left ([`super::tree`]) and reports the signal ([`caught`]), and
//! the command exits with 128+N. Without a probe running, the handler exits with 128+N at once. A
//! probe whose parent dies without running a handler (SIGKILL) gets SIGKILL from the kernel
//! (`PR_SET_PDEATHSIG`, set by [`super::probe`]).
//!
//! A signal the process inherited as ignored (`nohup`) keeps its disposition, so the command `exec`
//! runs inherits it as before; `execve` resets the handled ones to their default.
//!
//! Built on `libc`'s `sigaction` directly: the handlers need nothing but three async-signal-safe
//! calls, which `signal-hook` would route through its own registry and a pipe read by a thread, and
//! which `nix` would wrap once more.

use std::sync::Once;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signals that stop capslint while it runs.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The process group of the probe that runs, or 0.
static PROBE_GROUP: AtomicI32 = AtomicI32::new(0);

/// The stop signal caught while a probe ran, or 0.
static CAUGHT: AtomicI32 = AtomicI32::new(0);

/// Installs the handlers of [`STOP_SIGNALS`] (once), except on signals the process inherited as
/// ignored.
pub fn install() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        for signal in STOP_SIGNALS {
            // SAFETY: `sigaction` reads and writes only the two structures given; the handler is an
            // `extern "C" fn(c_int)` (no SA_SIGINFO) that is async-signal-safe.
            unsafe {
                let mut current: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut current) != 0 || current.sa_sigaction != libc::SIG_DFL
                {
                    continue;
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigfillset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    });
}

extern "C" fn on_stop_signal(signal: libc::c_int) {
    // Recorded before the group is read: a probe that unregisters after this read sees the signal.
    CAUGHT.store(signal, Ordering::SeqCst);
    let group = PROBE_GROUP.load(Ordering::SeqCst);
    // SAFETY: `kill` and `_exit` are async-signal-safe and touch no memory of this process.
    unsafe {
        if group > 0 {
            libc::kill(-group, libc::SIGKILL);
        } else {
            libc::_exit(128 + signal);
        }
    }
}

/// The probe's process group, registered with the handlers until dropped: a stop signal meanwhile
/// kills the group and is recorded for [`caught`], instead of exiting at once.
#[derive(Debug)]
pub struct ProbeGroup {
    pgid: libc::pid_t,
}

impl ProbeGroup {
    /// Registers the process group `pgid` (the probe leads it).
    pub fn register(pgid: u32) -> Self {
        let pgid = libc::pid_t::try_from(pgid).unwrap_or(0);
        CAUGHT.store(0, Ordering::SeqCst);
        PROBE_GROUP.store(pgid, Ordering::SeqCst);
        Self { pgid }
    }
}

impl Drop for ProbeGroup {
    fn drop(&mut self) {
        // Only this registration's: another one may have replaced it (tests run probes in parallel).
        let _ = PROBE_GROUP.compare_exchange(self.pgid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// The stop signal caught while a [`ProbeGroup`] was registered; read once it is dropped.
pub fn caught() -> Option<libc::c_int> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The exit code for a stop by `signal`: 128+N, as a shell reports a process killed by signal N.
pub fn exit_code(signal: libc::c_int) -> u8 {
    u8::try_from(128 + signal).unwrap_or(u8::MAX)
}

/// The name of a stop signal (`SIGTERM`), or the number of another signal.
pub fn signal_name(signal: libc::c_int) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    name.to_owned()
}

/// Blocks every signal in the calling thread, so that the process's signals go to its main thread:
/// what a helper thread calls first.
pub fn block_all_in_this_thread() {
    // SAFETY: `set` is initialised by `sigfillset` before use; both calls only read and write it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_exits_as_a_shell_reports_the_signal() {
        assert_eq!(exit_code(libc::SIGTERM), 143);
        assert_eq!(exit_code(libc::SIGINT), 130);
        assert_eq!(exit_code(libc::SIGHUP), 129);
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
        assert_eq!(signal_name(40), "signal 40");
    }

    #[test]
    fn a_helper_thread_blocks_every_signal() {
        let blocked = std::thread::spawn(|| {
            block_all_in_this_thread();
            let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
            let mask = status.lines().find_map(|line| line.strip_prefix("SigBlk:")).unwrap().trim().to_owned();
            u64::from_str_radix(&mask, 16).unwrap()
        })
        .join()
        .unwrap();
        // All but SIGKILL and SIGSTOP, which cannot be blocked.
        let term = 1u64 << (libc::SIGTERM - 1);
        let kill = 1u64 << (libc::SIGKILL - 1);
        assert_ne!(blocked & term, 0, "{blocked:x}");
        assert_eq!(blocked & kill, 0, "{blocked:x}");
    }
}
