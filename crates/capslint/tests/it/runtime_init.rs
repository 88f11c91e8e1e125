//! `capslint exec` as PID 1 of a new PID namespace, as in a container: it stays the workload's
//! init, forwarding signals, reaping orphans and exiting with the workload's status; `--no-init`
//! gives the plain exec, where the kernel drops the SIGTERM the workload has no handler for.
//!
//! The workloads are real Python scripts that install no signal handler. The namespaces come from
//! `unshare --pid --fork --mount-proc`: capslint is the child of `unshare`, and PID 1 inside.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::support::*;

/// How long a workload may take to start, and capslint to end after a signal: a pod's grace period.
const GRACE: Duration = Duration::from_secs(30);

/// A workload that says it runs (its PID and process group, on a line of `ready`), then sleeps.
const SLEEPER: &str = "import os, sys, time\n\
    open(sys.argv[1] + '.tmp', 'w').write('%d %d\\n' % (os.getpid(), os.getpgrp()))\n\
    os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n\
    time.sleep(1000)\n";

/// A workload that leaves an orphan, waits up to `argv[1]` seconds for it to exit and be reaped,
/// then prints the orphan's state (`gone` once reaped) and every zombie of the namespace.
const ORPHANS: &str = "import os, sys, time\n\
    def state(pid):\n\
    \x20   try:\n\
    \x20       return open('/proc/%s/stat' % pid).read().rsplit(')', 1)[1].split()[0]\n\
    \x20   except OSError:\n\
    \x20       return 'gone'\n\
    r, w = os.pipe()\n\
    child = os.fork()\n\
    if child == 0:\n\
    \x20   orphan = os.fork()\n\
    \x20   if orphan == 0:\n\
    \x20       time.sleep(0.2)\n\
    \x20       os._exit(0)\n\
    \x20   os.write(w, str(orphan).encode())\n\
    \x20   os._exit(0)\n\
    os.close(w)\n\
    orphan = int(os.read(r, 64))\n\
    os.waitpid(child, 0)\n\
    deadline = time.monotonic() + float(sys.argv[1])\n\
    while time.monotonic() < deadline and state(orphan) not in ('Z', 'gone'):\n\
    \x20   time.sleep(0.02)\n\
    while time.monotonic() < deadline and state(orphan) != 'gone':\n\
    \x20   time.sleep(0.02)\n\
    zombies = [pid for pid in os.listdir('/proc') if pid.isdigit() and state(pid) == 'Z']\n\
    print('orphan %s zombies %s' % (state(orphan), ','.join(zombies) or 'none'))\n";

/// What a namespace test needs: the interpreter and a scratch directory with the workloads.
struct Setup {
    python: String,
    dir: tempfile::TempDir,
    marker: Marker,
}

impl Setup {
    /// The interpreter and the workloads, or `None` (skipped, or failed when real runs are required)
    /// when the interpreter or PID namespaces are missing.
    fn new() -> Option<Self> {
        let python = match test_python().and_then(|python| pid_namespaces().map(|()| python)) {
            Ok(python) => python.display().to_string(),
            Err(why) => {
                skip(&why);
                return None;
            }
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sleeper.py"), SLEEPER).unwrap();
        std::fs::write(dir.path().join("orphans.py"), ORPHANS).unwrap();
        Some(Self { python, dir, marker: Marker::new() })
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![("CPU_LIMIT", "2".to_owned()), self.marker.var()]
    }

    /// `capslint exec --quiet [extra] -- command...` with the v2-nested tree, as PID 1 of a new PID
    /// namespace.
    fn as_pid_1(&self, extra: &[&str], command: &[&str]) -> Command {
        let mut unshare = clean_command("unshare", &self.vars());
        unshare.args(UNSHARE_PID).arg(binary()).arg("exec").arg("--quiet");
        unshare.args(root_args("v2-nested")).args(extra).arg("--").args(command);
        unshare
    }

    /// The same `capslint exec`, started directly (not PID 1).
    fn plain(&self, command: &[&str]) -> Command {
        let mut exec = clean_command(binary(), &self.vars());
        exec.arg("exec").arg("--quiet").args(root_args("v2-nested")).arg("--").args(command);
        exec
    }

    /// Starts the sleeper as PID 1's workload (`extra` passed to exec), waits until it runs, and
    /// returns `unshare`, the PID of the namespace's PID 1 seen from here, and the workload's PID and
    /// process group inside.
    fn start_sleeper(&self, extra: &[&str]) -> (Child, u32, (u32, u32)) {
        let ready = self.path("ready");
        let mut unshare = self
            .as_pid_1(extra, &[&self.python, &self.path("sleeper.py"), &ready])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let Some(line) = wait_for_file(Path::new(&ready), GRACE) else {
            let _ = unshare.kill();
            panic!("the workload did not start: {}", describe(&unshare.wait_with_output().unwrap()));
        };
        let ids: Vec<u32> = line.split_whitespace().map(|id| id.parse().unwrap()).collect();
        let init = children_of(unshare.id());
        assert_eq!(init.len(), 1, "unshare has one child, PID 1 inside: {init:?}");
        (unshare, init[0], (ids[0], ids[1]))
    }
}

/// Waits for `unshare` to end within [`GRACE`] (killing the namespace if not) and returns its output.
fn ended(mut unshare: Child, init: u32) -> Output {
    let status = wait_within(&mut unshare, GRACE);
    if status.is_none() {
        let _ = Command::new("kill").args(["-KILL", &init.to_string()]).status();
    }
    let output = unshare.wait_with_output().unwrap();
    assert!(status.is_some(), "the namespace did not end within {GRACE:?}: {}", describe(&output));
    output
}

#[test]
fn sigterm_to_pid_1_ends_the_workload_and_exits_143() {
    let Some(setup) = Setup::new() else { return };
    let (unshare, init, (pid, group)) = setup.start_sleeper(&[]);
    // The workload is not PID 1, and leads its own process group.
    assert_ne!(pid, 1);
    assert_eq!(pid, group);
    send_signal(init, "TERM");
    let output = ended(unshare, init);
    // 143: the workload died of the forwarded SIGTERM, and capslint exits as a shell reports it.
    assert_eq!(output.status.code(), Some(143), "{}", describe(&output));
    assert_eq!(setup.marker.wait_until_gone(GRACE), Vec::<u32>::new());
}

#[test]
fn other_signals_reach_the_workload_too() {
    let Some(setup) = Setup::new() else { return };
    // Each kills the workload (Python ends an unhandled KeyboardInterrupt by dying of SIGINT).
    for (signal, code) in [("INT", 130), ("HUP", 129), ("USR1", 138), ("USR2", 140), ("ALRM", 142)] {
        let _ = std::fs::remove_file(setup.path("ready"));
        let (unshare, init, _) = setup.start_sleeper(&[]);
        send_signal(init, signal);
        let output = ended(unshare, init);
        assert_eq!(output.status.code(), Some(code), "SIG{signal}: {}", describe(&output));
    }
}

#[test]
fn the_workload_exit_status_passes_through() {
    let Some(setup) = Setup::new() else { return };
    let output = setup.as_pid_1(&[], &[&setup.python, "-c", "import sys; sys.exit(7)"]).output().unwrap();
    assert_eq!(output.status.code(), Some(7), "{}", describe(&output));
    let kill_itself = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)";
    let output = setup.as_pid_1(&[], &[&setup.python, "-c", kill_itself]).output().unwrap();
    assert_eq!(output.status.code(), Some(137), "{}", describe(&output));
    let output = setup.as_pid_1(&[], &[&setup.python, "-c", "pass"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    // A command that does not exist: the shell's 127, as with the plain exec.
    let output = setup.as_pid_1(&[], &["/nonexistent/command"]).output().unwrap();
    assert_eq!(output.status.code(), Some(127), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot run /nonexistent/command"));
}

#[test]
fn an_orphan_that_exits_is_reaped_while_the_workload_runs() {
    let Some(setup) = Setup::new() else { return };
    let output = setup.as_pid_1(&[], &[&setup.python, &setup.path("orphans.py"), "30"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "orphan gone zombies none\n", "{}", describe(&output));

    // The same workload as PID 1 itself (`--no-init`) reaps nothing: the orphan stays a zombie, which
    // the workload sees.
    let output = setup.as_pid_1(&["--no-init"], &[&setup.python, &setup.path("orphans.py"), "2"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("orphan Z zombies "), "{}", describe(&output));
    assert!(!stdout.contains("zombies none"), "{}", describe(&output));
}

#[test]
fn no_init_as_pid_1_is_the_plain_exec_and_the_kernel_drops_sigterm() {
    let Some(setup) = Setup::new() else { return };
    let (unshare, init, (pid, _)) = setup.start_sleeper(&["--no-init"]);
    // The workload replaced capslint: it is PID 1.
    assert_eq!(pid, 1);
    send_signal(init, "TERM");
    std::thread::sleep(Duration::from_millis(500));
    let state = process_state(init);
    assert!(state.is_some_and(|state| state != 'Z'), "SIGTERM ended PID 1 ({state:?})");
    send_signal(init, "KILL");
    let output = ended(unshare, init);
    assert!(!output.status.success(), "{}", describe(&output));
    assert_eq!(setup.marker.wait_until_gone(GRACE), Vec::<u32>::new());
}

/// The lines of `/proc/self/status` that describe signals (`SigBlk:`, `SigIgn:`, `SigCgt:`).
fn signal_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| ["SigBlk:", "SigIgn:", "SigCgt:"].iter().any(|key| line.starts_with(key)))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_workload_gets_the_environment_and_signal_state_of_the_plain_exec() {
    let Some(setup) = Setup::new() else { return };
    let env = |mut command: Command| {
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        let mut lines: Vec<String> = String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect();
        lines.sort();
        lines
    };
    let plain = env(setup.plain(&["env"]));
    assert!(plain.contains(&"OMP_NUM_THREADS=2".to_owned()), "{plain:?}");
    assert!(plain.contains(&"OMP_WAIT_POLICY=passive".to_owned()), "{plain:?}");
    assert_eq!(env(setup.as_pid_1(&[], &["env"])), plain);
    assert_eq!(env(setup.as_pid_1(&["--no-init"], &["env"])), plain);

    // No signal blocked, none caught, SIGPIPE at its default, as the plain exec gives; and as PID 1 the
    // same state as the plain exec in the same namespace (what the C library of each process in the
    // chain ignores varies: `unshare` is one more).
    let status = ["cat", "/proc/self/status"];
    let plain = signal_lines(&setup.plain(&status).output().unwrap());
    let init = signal_lines(&setup.as_pid_1(&[], &status).output().unwrap());
    for lines in [&plain, &init] {
        let mask = |key: &str| {
            let line = lines.iter().find(|line| line.starts_with(key)).unwrap();
            u64::from_str_radix(line[key.len()..].trim(), 16).unwrap()
        };
        assert_eq!(mask("SigBlk:"), 0, "{lines:?}");
        assert_eq!(mask("SigCgt:"), 0, "{lines:?}");
        assert_eq!(mask("SigIgn:") & (1 << (libc::SIGPIPE - 1)), 0, "{lines:?}");
    }
    assert_eq!(signal_lines(&setup.as_pid_1(&["--no-init"], &status).output().unwrap()), init);
}
