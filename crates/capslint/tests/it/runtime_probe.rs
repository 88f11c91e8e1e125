//! The Python probe's failure modes are clear errors (exit 2), never a crash or a hang: a missing
//! interpreter, a missing threadpoolctl, a workload module that fails to import, a timeout; and the
//! probe never outlives capslint, stopped by a signal (exit 128+N) or killed outright.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

/// `capslint runtime` on the v2-namespace tree with a safe environment and the given probe options.
fn runtime(extra: &[&str], vars: &[(&str, String)]) -> Output {
    let mut all = safe_caps(1);
    all.push(("CPU_LIMIT", "1500m".to_owned()));
    all.extend(vars.iter().cloned());
    clean_command(binary(), &all).arg("runtime").args(root_args("v2-namespace")).args(extra).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Writes an executable shell script.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn a_missing_interpreter_names_the_path_tried() {
    let output = runtime(&["--python", "/nonexistent/bin/python3"], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert_eq!(stderr(&output), "error: Python interpreter not found: /nonexistent/bin/python3 (pass --python PATH)\n");
    assert!(output.stdout.is_empty());
}

#[test]
fn a_hanging_probe_is_killed_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let python = script(dir.path(), "python", "exec sleep 30");
    let start = Instant::now();
    let output = runtime(&["--python", &python, "--timeout", "0.5"], &[]);
    assert!(start.elapsed() < Duration::from_secs(10), "not killed in time");
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(stderr(&output).contains("did not finish within 0.5 s and was killed"), "{}", describe(&output));
}

#[test]
fn an_interpreter_that_is_not_python_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let python = script(dir.path(), "python", "echo 'not a probe report'; echo oops >&2; exit 3");
    let output = runtime(&["--python", &python], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let text = stderr(&output);
    assert!(text.contains("failed (exit status: 3) without a report"), "{text}");
    assert!(text.contains("oops"), "{text}");
}

#[test]
fn a_missing_threadpoolctl_says_how_to_install_it() {
    let python = match test_python() {
        Ok(python) => python,
        Err(why) => return skip(&why),
    };
    // `-S` skips site-packages: a real interpreter without threadpoolctl.
    let dir = tempfile::tempdir().unwrap();
    let bare = script(dir.path(), "python", &format!("exec '{}' -S \"$@\"", python.display()));
    let output = runtime(&["--python", &bare], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let text = stderr(&output);
    assert!(text.starts_with("error: threadpoolctl is not installed for "), "{text}");
    assert!(text.trim_end().ends_with(": pip install threadpoolctl"), "{text}");
}

#[test]
fn a_workload_module_that_fails_to_import_is_an_error() {
    let python = match test_python() {
        Ok(python) => python.display().to_string(),
        Err(why) => return skip(&why),
    };
    let pythonpath = fixture_pythonpath();
    let args = ["--python", &python, "--import", "capslint_fixture_broken"];
    let output = runtime(&args, std::slice::from_ref(&pythonpath));
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert_eq!(
        stderr(&output),
        "error: --import capslint_fixture_broken failed: RuntimeError: this module fails on purpose\n"
    );
    let args = ["--python", &python, "--import", "no_such_module_anywhere"];
    let output = runtime(&args, &[pythonpath]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(stderr(&output).contains("ModuleNotFoundError"), "{}", describe(&output));
}

#[test]
fn output_printed_by_imported_modules_does_not_break_the_report() {
    let python = match test_python() {
        Ok(python) => python.display().to_string(),
        Err(why) => return skip(&why),
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chatty.py"),
        "import os, sys\nprint('hello from chatty')\nos.write(1, b'raw bytes on fd 1\\n')\n",
    )
    .unwrap();
    let pythonpath = ("PYTHONPATH", dir.path().display().to_string());
    let args = ["--python", &python, "--import", "chatty", "--format", "json"];
    let output = runtime(&args, &[pythonpath]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let report = json(&output);
    // Without the probe's redirection this text would precede the report and break it.
    assert_eq!(report["python"]["imported"][0], "chatty");
}

/// Helpers that imported code leaves behind: each module writes the helper's PID to a file.
const FORKING_MODULES: [(&str, &str); 3] = [
    // A plain fork: the helper inherits every descriptor of the probe, and stays in its group.
    (
        "capslint_probe_forks",
        "import os, time\n\
         pid = os.fork()\n\
         if pid == 0:\n    time.sleep(1000)\n    os._exit(0)\n\
         open(os.environ['PID_DIR'] + '/forks', 'w').write(str(pid))\n",
    ),
    // A daemon: double fork and a new session, so it leaves the probe's group and is orphaned.
    (
        "capslint_probe_daemon",
        "import os, time\n\
         if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n\
         \x20       open(os.environ['PID_DIR'] + '/daemon', 'w').write(str(os.getpid()))\n\
         \x20       time.sleep(1000)\n    os._exit(0)\n\
         time.sleep(0.3)\n",
    ),
    // A module that never finishes importing, with a helper in a session of its own.
    (
        "capslint_probe_hangs",
        "import os, time\n\
         if os.fork() == 0:\n    os.setsid()\n\
         \x20   open(os.environ['PID_DIR'] + '/hangs', 'w').write(str(os.getpid()))\n\
         \x20   time.sleep(1000)\n    os._exit(0)\n\
         time.sleep(1000)\n",
    ),
];

/// Runs the real probe importing `module` (written to a scratch directory), and returns the
/// output, how long it took, and the PIDs of the helpers the module started.
fn probe_forking(module: &str, timeout: &str) -> Option<(Output, Duration, Vec<u32>)> {
    let python = match test_python() {
        Ok(python) => python,
        Err(why) => {
            skip(&why);
            return None;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, source) in FORKING_MODULES {
        std::fs::write(dir.path().join(format!("{name}.py")), source).unwrap();
    }
    let scratch = dir.path().display().to_string();
    let vars = [("PYTHONPATH", scratch.clone()), ("PID_DIR", scratch)];
    let start = Instant::now();
    let python = python.display().to_string();
    let output = runtime(&["--python", &python, "--import", module, "--timeout", timeout, "--format", "json"], &vars);
    let took = start.elapsed();
    let pids = ["forks", "daemon", "hangs"]
        .iter()
        .filter_map(|name| std::fs::read_to_string(dir.path().join(name)).ok())
        .map(|pid| pid.trim().parse().unwrap())
        .collect();
    Some((output, took, pids))
}

fn assert_gone(pids: &[u32]) {
    for pid in pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "helper {pid} outlived the probe");
    }
}

#[test]
fn a_helper_forked_at_import_neither_loses_the_report_nor_outlives_the_probe() {
    for module in ["capslint_probe_forks", "capslint_probe_daemon"] {
        let Some((output, took, pids)) = probe_forking(module, "60") else { return };
        assert_eq!(output.status.code(), Some(0), "{module}: {}", describe(&output));
        let report = json(&output);
        assert_eq!(report["python"]["imported"][0], module, "{module}");
        assert_eq!(pids.len(), 1, "{module}: the helper did not start");
        assert_gone(&pids);
        // No waiting for a helper that holds a pipe: well below the timeout.
        assert!(took < Duration::from_secs(30), "{module}: took {took:?}");
    }
}

#[test]
fn a_timeout_kills_the_whole_tree_and_returns_promptly() {
    let Some((output, took, pids)) = probe_forking("capslint_probe_hangs", "1") else { return };
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(stderr(&output).contains("did not finish within 1 s and was killed"), "{}", describe(&output));
    assert_eq!(pids.len(), 1, "the helper did not start");
    assert_gone(&pids);
    assert!(took < Duration::from_secs(1) + Duration::from_secs(5), "took {took:?}");
}

/// A workload module that starts two helpers (one in the probe's process group, one in a session of
/// its own), says so, and never finishes importing: a probe to stop in the middle.
const SLOW_MODULE: &str = "import os, time\n\
    if os.fork() == 0:\n    time.sleep(1000)\n    os._exit(0)\n\
    if os.fork() == 0:\n    os.setsid()\n    time.sleep(1000)\n    os._exit(0)\n\
    open(os.environ['PID_DIR'] + '/started', 'w').write('%d\\n' % os.getpid())\n\
    time.sleep(1000)\n";

/// Starts capslint with `args`, the slow module imported by the real probe, then `tail`, and waits
/// until the module runs. Returns capslint, the probe's PID, the scratch directory and the marker
/// every process of the run carries; `None` when the test interpreter is missing (skipped).
fn stop_in_the_middle(args: &[&str], tail: &[&str]) -> Option<(Child, u32, tempfile::TempDir, Marker)> {
    let python = match test_python() {
        Ok(python) => python.display().to_string(),
        Err(why) => {
            skip(&why);
            return None;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("capslint_probe_slow.py"), SLOW_MODULE).unwrap();
    let scratch = dir.path().display().to_string();
    let marker = Marker::new();
    let mut vars = safe_caps(1);
    vars.extend([("CPU_LIMIT", "1".to_owned()), ("PYTHONPATH", scratch.clone()), ("PID_DIR", scratch), marker.var()]);
    let mut child = clean_command(binary(), &vars)
        .args(args)
        .args(root_args("v2-nested"))
        .args(["--python", &python, "--import", "capslint_probe_slow"])
        .args(tail)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let Some(started) = wait_for_file(&dir.path().join("started"), Duration::from_secs(60)) else {
        let _ = child.kill();
        panic!("the probe never imported the slow module: {}", describe(&child.wait_with_output().unwrap()));
    };
    Some((child, started.trim().parse().unwrap(), dir, marker))
}

/// Waits for capslint to exit after a signal, as a grace period would.
fn exited(mut child: Child) -> Output {
    let status = wait_within(&mut child, Duration::from_secs(30));
    if status.is_none() {
        let _ = child.kill();
    }
    let output = child.wait_with_output().unwrap();
    assert!(status.is_some(), "capslint did not exit: {}", describe(&output));
    output
}

#[test]
fn a_stop_signal_mid_probe_kills_the_probe_and_its_helpers_and_exits_128_plus_n() {
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let Some((child, probe, _dir, marker)) = stop_in_the_middle(&["runtime"], &[]) else { return };
        send_signal(child.id(), signal);
        let output = exited(child);
        assert_eq!(output.status.code(), Some(code), "SIG{signal}: {}", describe(&output));
        assert_eq!(
            stderr(&output),
            format!("error: stopped by SIG{signal}: the probe and every process it started were killed\n")
        );
        let left = marker.wait_until_gone(Duration::from_secs(10));
        assert!(left.is_empty(), "SIG{signal}: processes of the probe {probe} left: {left:?}");
    }
}

#[test]
fn a_stop_signal_while_exec_checks_kills_the_probe_and_runs_nothing() {
    let marker_dir = tempfile::tempdir().unwrap();
    let ran = marker_dir.path().join("ran");
    let command = ["--", "touch", ran.to_str().unwrap()];
    let Some((child, probe, _dir, marker)) = stop_in_the_middle(&["exec", "--check"], &command) else { return };
    send_signal(child.id(), "TERM");
    let output = exited(child);
    assert_eq!(output.status.code(), Some(143), "{}", describe(&output));
    let left = marker.wait_until_gone(Duration::from_secs(10));
    assert!(left.is_empty(), "processes of the probe {probe} left: {left:?}");
    assert!(!ran.exists(), "the command ran");
}

#[test]
fn the_probe_dies_with_a_capslint_killed_outright() {
    let Some((child, probe, _dir, marker)) = stop_in_the_middle(&["runtime"], &[]) else { return };
    // No handler runs on SIGKILL: the kernel kills the probe (its parent-death signal). The helpers it
    // forked are not the probe, and the marker kills them at the end of the test.
    send_signal(child.id(), "KILL");
    let output = exited(child);
    assert_eq!(output.status.signal(), Some(libc::SIGKILL), "{}", describe(&output));
    let deadline = Instant::now() + Duration::from_secs(10);
    while marker.processes().contains(&probe) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!marker.processes().contains(&probe), "the probe {probe} outlived capslint");
}
