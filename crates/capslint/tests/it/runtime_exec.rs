//! `capslint exec` against fixture trees: which caps it sets, keeps and refuses, and that the
//! command really replaces it (same PID, exit status and signals straight through, the signal
//! dispositions it inherited kept).

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};

use crate::support::*;

const CAP_NAMES: [&str; 18] = [
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "NUMEXPR_MAX_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "POLARS_MAX_THREADS",
    "RAYON_NUM_THREADS",
    "OPENCV_FOR_THREADS_NUM",
    "ORT_INTRA_OP_NUM_THREADS",
    "ORT_INTER_OP_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
    "LOKY_MAX_CPU_COUNT",
    "PYTHON_CPU_COUNT",
    "OMP_WAIT_POLICY",
];

/// `capslint exec` with the v2-nested tree (a 2-CPU pod quota, 4 CPUs in the cpuset).
fn exec(vars: &[(&str, String)], extra: &[&str], command: &[&str]) -> Command {
    let mut cmd = clean_command(binary(), vars);
    cmd.arg("exec").args(root_args("v2-nested")).args(extra).arg("--").args(command);
    cmd
}

/// The thread variables the command received, as `NAME=value` lines: any name that looks like one, so
/// a variable set beyond [`CAP_NAMES`] shows up too.
fn received(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| {
            let name = line.split('=').next().unwrap_or_default();
            CAP_NAMES.contains(&name)
                || ["_THREADS", "_CPU_COUNT", "_WAIT_POLICY"].iter().any(|end| name.ends_with(end))
        })
        .map(str::to_owned)
        .collect()
}

fn declared(n: &str) -> Vec<(&'static str, String)> {
    vec![("CPU_LIMIT", n.to_owned())]
}

#[test]
fn sets_every_cap_to_the_smallest_bound() {
    // Declared 4, quota 2, cpuset 4: every cap is 2.
    let output = exec(&declared("4"), &[], &["env"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let mut env = received(&output);
    env.sort();
    let mut expected: Vec<String> = CAP_NAMES
        .iter()
        .map(|n| {
            let value = if *n == "OMP_WAIT_POLICY" { "passive" } else { "2" };
            format!("{n}={value}")
        })
        .collect();
    expected.sort();
    assert_eq!(env, expected);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "event=pod_thread_caps_set severity=info limit=2 source=cgroup_quota \
             limit_env=CPU_LIMIT downward_api=4 cgroup_quota=2 cpuset=4 set=OMP_NUM_THREADS,"
        ),
        "{stderr}"
    );

    // --quiet logs nothing.
    let output = exec(&declared("4"), &["--quiet"], &["true"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty(), "{}", describe(&output));
}

#[test]
fn a_declared_limit_below_the_quota_wins() {
    let output = exec(&declared("1500m"), &[], &["env"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(received(&output).contains(&"OMP_NUM_THREADS=1".to_owned()));
}

#[test]
fn keeps_lower_values_and_replaces_empty_ones() {
    let vars = [
        declared("2"),
        vec![
            ("OMP_NUM_THREADS", "1".to_owned()),
            ("MKL_NUM_THREADS", String::new()),
            ("OMP_WAIT_POLICY", "PASSIVE".to_owned()),
        ],
    ]
    .concat();
    let output = exec(&vars, &[], &["env"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let env = received(&output);
    for line in ["OMP_NUM_THREADS=1", "MKL_NUM_THREADS=2", "OPENBLAS_NUM_THREADS=2", "OMP_WAIT_POLICY=PASSIVE"] {
        assert!(env.contains(&line.to_owned()), "{line} not in {env:?}");
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.trim_end().ends_with(" kept=OMP_NUM_THREADS,OMP_WAIT_POLICY"), "{stderr}");
}

/// Runs a refused exec and checks the command did not run.
fn refused(vars: &[(&str, String)], extra: &[&str]) -> String {
    let marker = tempfile::tempdir().unwrap();
    let ran = marker.path().join("ran");
    let output = exec(vars, extra, &["touch", ran.to_str().unwrap()]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(!ran.exists(), "the command ran");
    assert!(output.stdout.is_empty());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn refuses_without_a_declared_limit() {
    let stderr = refused(&safe_caps(1), &[]);
    assert_eq!(
        stderr,
        "event=pod_thread_caps_unsafe severity=error reason=cpu_limit_undeclared \
         detail=\"no CPU limit variable: set CPU_LIMIT (or pass --limit-env) from \
         valueFrom.resourceFieldRef.resource: limits.cpu\"\n"
    );
    // A named variable that is missing is named.
    let stderr = refused(&declared("2"), &["--limit-env", "POD_CPU_LIMIT"]);
    assert!(
        stderr.starts_with(
            "event=pod_thread_caps_unsafe severity=error reason=cpu_limit_undeclared \
             limit_env=POD_CPU_LIMIT detail=\"POD_CPU_LIMIT is not set"
        ),
        "{stderr}"
    );
}

#[test]
fn refuses_a_cap_above_the_limit() {
    let vars = [declared("2"), vec![("OPENBLAS_NUM_THREADS", "8".to_owned())]].concat();
    assert_eq!(
        refused(&vars, &[]),
        "event=pod_thread_caps_unsafe severity=error reason=caps_exceed_limit limit=2 \
         vars=OPENBLAS_NUM_THREADS detail=\"OPENBLAS_NUM_THREADS=8 above the limit of 2\"\n"
    );
}

#[test]
fn refuses_an_invalid_cap_or_an_active_wait_policy() {
    let vars = [declared("2"), vec![("NUMBA_NUM_THREADS", "all".to_owned())]].concat();
    assert!(refused(&vars, &[]).contains("reason=caps_unset vars=NUMBA_NUM_THREADS "));
    let vars = [declared("2"), vec![("OMP_WAIT_POLICY", "active".to_owned())]].concat();
    assert!(refused(&vars, &[]).contains("reason=wait_policy_active omp_wait_policy=active "));
}

#[test]
fn the_command_replaces_capslint() {
    let child = exec(&declared("2"), &["--quiet"], &["sh", "-c", "echo $$"]).stdout(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), pid.to_string());
}

#[test]
fn exit_status_and_signals_pass_through() {
    let status = exec(&declared("2"), &["--quiet"], &["sh", "-c", "exit 7"]).status().unwrap();
    assert_eq!(status.code(), Some(7));
    let status = exec(&declared("2"), &["--quiet"], &["sh", "-c", "kill -TERM $$"]).status().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM));
}

/// The hexadecimal signal mask of a `/proc/<pid>/status` line such as `SigIgn:`.
fn signal_mask(status: &str, key: &str) -> u64 {
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    u64::from_str_radix(line[key.len()..].trim(), 16).unwrap()
}

#[test]
fn the_command_gets_default_sigpipe_and_no_blocked_signals() {
    // The Rust runtime ignores SIGPIPE in capslint itself; the command must not inherit that,
    // or `producer | head` pipelines in the workload would stop dying on a closed pipe.
    let output = exec(&declared("2"), &["--quiet"], &["cat", "/proc/self/status"]).output().unwrap();
    let status = String::from_utf8_lossy(&output.stdout);
    let sigpipe_bit = 1u64 << (libc::SIGPIPE - 1);
    assert_eq!(signal_mask(&status, "SigIgn:") & sigpipe_bit, 0, "{status}");
    assert_eq!(signal_mask(&status, "SigBlk:"), 0, "{status}");
}

#[test]
fn a_signal_capslint_inherited_as_ignored_stays_ignored_for_the_command() {
    // As under `nohup`: capslint catches SIGHUP only where it was not ignored, so the command still
    // ignores it; SIGTERM, caught by capslint meanwhile, is back at its default for the command.
    let mut command = exec(&declared("2"), &["--quiet"], &["cat", "/proc/self/status"]);
    // SAFETY: `signal` is async-signal-safe; the closure runs between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let output = command.output().unwrap();
    let status = String::from_utf8_lossy(&output.stdout);
    let bit = |signal: libc::c_int| 1u64 << (signal - 1);
    assert_ne!(signal_mask(&status, "SigIgn:") & bit(libc::SIGHUP), 0, "{status}");
    assert_eq!(signal_mask(&status, "SigIgn:") & bit(libc::SIGTERM), 0, "{status}");
    assert_eq!(signal_mask(&status, "SigCgt:"), 0, "{status}");
}

#[test]
fn arguments_that_look_like_options_reach_the_command() {
    let output =
        exec(&declared("2"), &["--quiet"], &["sh", "-c", "echo \"$@\"", "sh", "--check", "-q"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "--check -q\n");
    // Without `--` too.
    let output = clean_command(binary(), &declared("2"))
        .args(["exec", "-q"])
        .args(root_args("v2-nested"))
        .args(["sh", "-c", "echo \"$@\"", "sh", "--help"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "--help\n");
}

#[test]
fn a_missing_command_exits_127() {
    let output = exec(&declared("2"), &["--quiet"], &["/nonexistent/command"]).output().unwrap();
    assert_eq!(output.status.code(), Some(127), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot run /nonexistent/command"));
}

#[test]
fn garbage_in_the_quota_is_an_error_not_a_guess() {
    let output = clean_command(binary(), &declared("2"))
        .arg("exec")
        .args(root_args("v2-garbage"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cpu.max"));
}
