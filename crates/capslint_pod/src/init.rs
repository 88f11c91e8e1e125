//! Running a child as init: spawn it, forward signals to it, reap every zombie, and end with its
//! exit status. What `capslint exec` does as PID 1, as tini and dumb-init do.
//!
//! The kernel delivers no signal to a PID namespace's init that it has no handler for, so a workload
//! that is PID 1 ignores the SIGTERM of `kubectl delete pod` and is killed at the end of the grace
//! period; and orphans re-parented to it stay zombies unless it reaps them. [`run`] stays PID 1
//! instead:
//!
//! - the child runs in its own process group, made the foreground group of the controlling terminal
//!   when standard input is one (so an interactive workload can read it);
//! - every signal this process can catch ([`forwarded`]) goes to the child's process group (and to
//!   the child, should it have left the group); not forwarded: SIGCHLD (kept to reap), the signals
//!   that report a fault of this process (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS,
//!   SIGABRT), SIGPIPE (which its own writes raise), and SIGKILL and SIGSTOP, which nothing catches;
//! - every child that exits is reaped, the workload and adopted orphans alike;
//! - once the child has exited, [`run`] returns how ([`Ended`]): its exit code, or 128+N when signal
//!   N killed it. What the child left running dies with the namespace when its init exits.
//!
//! Work to do while the child runs (sampling it, for a supervisor) is passed as [`Periodic`] and runs
//! on this thread between signals.
//!
//! Signals are blocked in this thread before the child is spawned and taken synchronously with
//! `sigtimedwait`, through `libc`: no handler runs, so nothing has to be async-signal-safe, and there
//! is no thread, pipe or async runtime (`signal-hook` would add a handler and a pipe to read, `nix` a
//! second wrapper of the same calls). Other threads of capslint block every signal
//! ([`super::stop::block_all_in_this_thread`]), so none is taken elsewhere; should a SIGCHLD still
//! be lost, the loop reaps at least once a second anyway. The child gets this thread's signal mask
//! from before, and the dispositions an `execvp` would give it.

use std::io;
use std::mem::MaybeUninit;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

/// The longest wait between two rounds of reaping, SIGCHLD or not: a thread that does not block
/// SIGCHLD could take it.
const REAP_AT_LEAST_EVERY: Duration = Duration::from_secs(1);

/// The child run as init.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    pid: libc::pid_t,
}

impl Workload {
    /// Its process ID, which is also its process group's.
    pub fn pid(self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Sends `signal` to its process group, and to itself if it has left the group.
    pub fn signal(self, signal: libc::c_int) {
        // SAFETY: kill and getpgid have no memory effects; a group or process already gone gives
        // ESRCH, which leaves nothing to do.
        unsafe {
            libc::kill(-self.pid, signal);
            let group = libc::getpgid(self.pid);
            if group != -1 && group != self.pid {
                libc::kill(self.pid, signal);
            }
        }
    }
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Exited(u8),
    /// This signal killed it.
    Killed(libc::c_int),
}

impl Ended {
    /// The exit code that reports it: the child's own, or 128+N when signal N killed it.
    pub fn code(self) -> u8 {
        match self {
            Self::Exited(code) => code,
            Self::Killed(signal) => u8::try_from(128 + signal).unwrap_or(u8::MAX),
        }
    }

    /// Decodes a `waitpid` status of a child that ended; `None` for one that did not.
    fn from_wait_status(status: libc::c_int) -> Option<Self> {
        if libc::WIFEXITED(status) {
            Some(Self::Exited(u8::try_from(libc::WEXITSTATUS(status) & 0xff).unwrap_or(u8::MAX)))
        } else if libc::WIFSIGNALED(status) {
            Some(Self::Killed(libc::WTERMSIG(status)))
        } else {
            None
        }
    }
}

/// Work done every `every` (at least a millisecond) while the child runs, between signals.
pub struct Periodic<'a> {
    /// Time from one call to the next.
    pub every: Duration,
    /// Called with the running child.
    pub work: &'a mut dyn FnMut(Workload),
}

/// Whether this process is the init of its PID namespace.
pub fn is_pid_1() -> bool {
    std::process::id() == 1
}

/// The signals forwarded to the child: every catchable signal but SIGCHLD, SIGPIPE and the fault
/// signals, real-time signals included.
pub fn forwarded() -> Vec<libc::c_int> {
    const KEPT: [libc::c_int; 11] = [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGCHLD,
        libc::SIGPIPE,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGFPE,
        libc::SIGILL,
        libc::SIGTRAP,
        libc::SIGSYS,
        libc::SIGABRT,
    ];
    // 32 to SIGRTMIN-1 belong to the C library's threads.
    (1..32).filter(|signal| !KEPT.contains(signal)).chain(libc::SIGRTMIN()..=libc::SIGRTMAX()).collect()
}

/// A set of signals.
struct SignalSet(libc::sigset_t);

impl SignalSet {
    fn empty() -> Self {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises the set it is given.
        unsafe {
            libc::sigemptyset(set.as_mut_ptr());
            Self(set.assume_init())
        }
    }

    fn of(signals: &[libc::c_int]) -> Self {
        let mut set = Self::empty();
        for signal in signals {
            // SAFETY: the set is initialised; an invalid number is refused with EINVAL.
            unsafe {
                libc::sigaddset(&mut set.0, *signal);
            }
        }
        set
    }
}

/// Blocks a set of signals in this thread until dropped, then restores the mask from before.
struct Blocked {
    before: SignalSet,
}

impl Blocked {
    fn block(set: &SignalSet) -> io::Result<Self> {
        let mut before = SignalSet::empty();
        // SAFETY: both sets are initialised; pthread_sigmask reads one and writes the other.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set.0, &mut before.0) };
        if rc == 0 { Ok(Self { before }) } else { Err(io::Error::from_raw_os_error(rc)) }
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        // SAFETY: the set is initialised.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.before.0, std::ptr::null_mut());
        }
    }
}

/// Runs `command` as init until it exits (see the module documentation), calling `periodic` while it
/// runs. An error means it could not be spawned.
pub fn run(mut command: Command, mut periodic: Option<Periodic<'_>>) -> io::Result<Ended> {
    let forwarded = forwarded();
    let taken = SignalSet::of(&[forwarded.as_slice(), &[libc::SIGCHLD]].concat());
    // Blocked before the spawn: nothing that arrives from now on is lost.
    let blocked = Blocked::block(&taken)?;
    let child_mask = blocked.before.0;
    command.process_group(0);
    // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe
    // functions (sigemptyset, sigaddset, sigprocmask, tcsetpgrp, getpgrp) on its own stack.
    unsafe {
        command.pre_exec(move || {
            take_the_terminal();
            libc::sigprocmask(libc::SIG_SETMASK, &child_mask, std::ptr::null_mut());
            Ok(())
        });
    }
    let child = command.spawn()?;
    let workload = Workload { pid: libc::pid_t::try_from(child.id()).unwrap_or(libc::pid_t::MAX) };
    // The child sets its group itself; setting it here too means no signal forwarded before the
    // child ran that far is lost. Once the child has run `execve` it fails, harmlessly.
    // SAFETY: setpgid has no memory effects.
    unsafe {
        libc::setpgid(workload.pid, workload.pid);
    }
    if let Some(periodic) = periodic.as_mut() {
        periodic.every = periodic.every.max(Duration::from_millis(1));
    }
    let mut next = periodic.as_ref().map(|periodic| Instant::now() + periodic.every);
    loop {
        if let Some(ended) = reap(workload.pid) {
            drop(blocked);
            return Ok(ended);
        }
        let timeout = next
            .map_or(REAP_AT_LEAST_EVERY, |at| at.saturating_duration_since(Instant::now()).min(REAP_AT_LEAST_EVERY));
        if let Some(signal) = wait_for_signal(&taken, timeout)
            && signal != libc::SIGCHLD
        {
            workload.signal(signal);
        }
        if let (Some(periodic), Some(at)) = (periodic.as_mut(), next.as_mut())
            && Instant::now() >= *at
        {
            (periodic.work)(workload);
            *at = Instant::now() + periodic.every;
        }
    }
}

/// In the child: makes its process group the foreground group of the controlling terminal on
/// standard input, if there is one, with SIGTTOU blocked so that a background group may do it.
///
/// # Safety
///
/// Only async-signal-safe calls: callable between `fork` and `execve`.
unsafe fn take_the_terminal() {
    // SAFETY: the sets live on this stack and are initialised before use.
    unsafe {
        let mut ttou = MaybeUninit::<libc::sigset_t>::uninit();
        let mut before = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(ttou.as_mut_ptr());
        libc::sigaddset(ttou.as_mut_ptr(), libc::SIGTTOU);
        libc::sigprocmask(libc::SIG_BLOCK, ttou.as_ptr(), before.as_mut_ptr());
        // Fails with ENOTTY when standard input is not this session's terminal: nothing to take.
        libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpgrp());
        libc::sigprocmask(libc::SIG_SETMASK, before.as_ptr(), std::ptr::null_mut());
    }
}

/// Reaps every child that has exited; how `workload` ended if it was one of them.
fn reap(workload: libc::pid_t) -> Option<Ended> {
    let mut ended = None;
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid, writable int.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid > 0 {
            if pid == workload {
                ended = Ended::from_wait_status(status);
            }
            continue;
        }
        // 0: children left, none exited; -1: none left (ECHILD), or interrupted.
        if pid == -1 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return ended;
    }
}

/// Waits for one of the (blocked) signals of `set`, for at most `timeout`.
fn wait_for_signal(set: &SignalSet, timeout: Duration) -> Option<libc::c_int> {
    let timespec = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below 10^9: fits an i32, hence a `c_long` on every target.
        tv_nsec: i32::try_from(timeout.subsec_nanos()).map_or(0, libc::c_long::from),
    };
    // SAFETY: the set is initialised, `info` is writable, the timeout is a valid timespec.
    let signal = unsafe {
        let mut info = MaybeUninit::<libc::siginfo_t>::uninit();
        libc::sigtimedwait(&set.0, info.as_mut_ptr(), &timespec)
    };
    // -1: the timeout passed (EAGAIN), or a signal outside the set interrupted the wait (EINTR).
    (signal > 0).then_some(signal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Set in the process a test re-runs itself in.
    const ALONE: &str = "CAPSLINT_INIT_TEST_ALONE";

    /// Runs `body` in a process of its own: [`run`] reaps every child of its process, which would take
    /// the children of tests running alongside. The test binary runs again with only the test `name`.
    fn alone(name: &str, body: impl FnOnce()) {
        if std::env::var_os(ALONE).is_some() {
            body();
            return;
        }
        let module = module_path!().split_once("::").map_or(module_path!(), |(_, rest)| rest);
        let test = format!("{module}::{name}");
        let output = Command::new(std::env::current_exe().unwrap())
            .args([test.as_str(), "--exact", "--test-threads=1", "--nocapture"])
            .env(ALONE, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let describe = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{describe}");
        assert!(stdout.contains("1 passed"), "{describe}");
    }

    fn sh(script: &str, args: &[&Path]) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script).args(args);
        command
    }

    /// Sends `signal` to this thread only: the other threads of the test harness do not block it.
    fn raise_here(signal: libc::c_int) {
        // SAFETY: pthread_kill on the calling thread.
        unsafe {
            libc::pthread_kill(libc::pthread_self(), signal);
        }
    }

    #[test]
    fn the_child_runs_in_its_own_group_with_periodic_work_until_it_exits() {
        alone("the_child_runs_in_its_own_group_with_periodic_work_until_it_exits", || {
            let dir = tempfile::tempdir().unwrap();
            let flag = dir.path().join("flag");
            // Exits 7 once the periodic work has made the flag (9 if it never does).
            let command = sh(
                "i=0; while [ ! -e \"$0\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; \
                 [ -e \"$0\" ] && exit 7; exit 9",
                &[&flag],
            );
            let mut groups = Vec::new();
            let mut work = |workload: Workload| {
                let pid = libc::pid_t::try_from(workload.pid()).unwrap();
                // SAFETY: getpgid has no memory effects.
                groups.push((pid, unsafe { libc::getpgid(pid) }));
                std::fs::write(&flag, "").unwrap();
            };
            let periodic = Periodic { every: Duration::from_millis(20), work: &mut work };
            assert_eq!(run(command, Some(periodic)).unwrap(), Ended::Exited(7));
            assert!(!groups.is_empty());
            assert!(groups.iter().all(|(pid, group)| pid == group), "{groups:?}");
        });
    }

    #[test]
    fn signals_go_to_the_child_and_its_death_by_one_is_128_plus_n() {
        alone("signals_go_to_the_child_and_its_death_by_one_is_128_plus_n", || {
            let dir = tempfile::tempdir().unwrap();
            let ready = dir.path().join("ready");
            // The child answers SIGUSR1 with exit 5 (and gives up with 9).
            let command = sh(
                "trap 'exit 5' USR1; touch \"$0\"; i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; exit 9",
                &[&ready],
            );
            let mut sent = false;
            let mut work = |_: Workload| {
                if !sent && ready.exists() {
                    raise_here(libc::SIGUSR1);
                    sent = true;
                }
            };
            let periodic = Periodic { every: Duration::from_millis(20), work: &mut work };
            assert_eq!(run(command, Some(periodic)).unwrap(), Ended::Exited(5));

            // `sleep` has no handler: the forwarded SIGTERM kills it.
            let mut command = Command::new("sleep");
            command.arg("30");
            let mut work = |_: Workload| raise_here(libc::SIGTERM);
            let periodic = Periodic { every: Duration::from_millis(20), work: &mut work };
            let ended = run(command, Some(periodic)).unwrap();
            assert_eq!(ended, Ended::Killed(libc::SIGTERM));
            assert_eq!(ended.code(), 143);
        });
    }

    #[test]
    fn orphans_adopted_are_reaped_while_the_child_runs() {
        alone("orphans_adopted_are_reaped_while_the_child_runs", || {
            // Orphans come to this process as they would to PID 1.
            crate::tree::adopt_orphans(true).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let orphan = dir.path().join("orphan");
            // A subshell leaves a short-lived orphan behind, then the child waits for the flag.
            let command = sh(
                "(sleep 0.2 & echo $! > \"$0\"); i=0; while [ ! -e \"$0.done\" ] && [ $i -lt 600 ]; do \
                 sleep 0.05; i=$((i+1)); done",
                &[&orphan],
            );
            let mut seen_orphan = None;
            let mut work = |_: Workload| {
                let Some(pid) = std::fs::read_to_string(&orphan).ok().and_then(|pid| pid.trim().parse::<u32>().ok())
                else {
                    return;
                };
                seen_orphan = Some(pid);
                // Reaped: its /proc entry is gone (a zombie keeps one).
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    std::fs::write(dir.path().join("orphan.done"), "").unwrap();
                }
            };
            let periodic = Periodic { every: Duration::from_millis(20), work: &mut work };
            assert_eq!(run(command, Some(periodic)).unwrap(), Ended::Exited(0));
            assert!(seen_orphan.is_some());
            assert!(dir.path().join("orphan.done").exists(), "the orphan was not reaped");
        });
    }

    /// The `SigBlk` mask of the calling thread.
    fn blocked_here() -> String {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        status.lines().find_map(|line| line.strip_prefix("SigBlk:")).unwrap().trim().to_owned()
    }

    #[test]
    fn a_command_that_cannot_start_is_an_error_and_the_mask_is_restored() {
        let before = blocked_here();
        let error = run(Command::new("/nonexistent/command"), None).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert_eq!(blocked_here(), before);
    }

    #[test]
    fn forwards_every_catchable_signal_but_its_own() {
        let signals = forwarded();
        for signal in [
            libc::SIGTERM,
            libc::SIGINT,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGWINCH,
            libc::SIGCONT,
            libc::SIGALRM,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
            libc::SIGRTMIN(),
            libc::SIGRTMAX(),
        ] {
            assert!(signals.contains(&signal), "{signal} is not forwarded");
        }
        for signal in [libc::SIGCHLD, libc::SIGPIPE, libc::SIGKILL, libc::SIGSTOP, libc::SIGSEGV, libc::SIGABRT] {
            assert!(!signals.contains(&signal), "{signal} is forwarded");
        }
        assert!(!signals.contains(&32) && !signals.contains(&33));
    }

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(Ended::Exited(7).code(), 7);
        assert_eq!(Ended::Killed(libc::SIGKILL).code(), 137);
        assert_eq!(Ended::from_wait_status(7 << 8), Some(Ended::Exited(7)));
        assert_eq!(Ended::from_wait_status(libc::SIGTERM), Some(Ended::Killed(libc::SIGTERM)));
        // Stopped (0x7f in the low byte): not an end.
        assert_eq!(Ended::from_wait_status((libc::SIGSTOP << 8) | 0x7f), None);
    }
}
