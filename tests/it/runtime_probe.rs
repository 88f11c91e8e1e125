//! The Python probe's failure modes are clear errors (exit 2), never a crash or a hang: a missing
//! interpreter, a missing threadpoolctl, a workload module that fails to import, a timeout.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
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
