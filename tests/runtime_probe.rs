//! The Python probe's failure modes are clear errors (exit 2), never a crash or a hang: a missing
//! interpreter, a missing threadpoolctl, a workload module that fails to import, a timeout.

mod runtime_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use runtime_support::*;

/// `capslint runtime` on the v2-namespace tree with a safe environment and the given probe options.
fn runtime(extra: &[&str], vars: &[(&str, String)]) -> Output {
    let mut all = safe_caps(1);
    all.push(("CPU_LIMIT", "1500m".to_owned()));
    all.extend(vars.iter().cloned());
    clean_command(bin(), &all).arg("runtime").args(root_args("v2-namespace")).args(extra).output().unwrap()
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
    let pythonpath = ("PYTHONPATH", fixture("python").display().to_string());
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
