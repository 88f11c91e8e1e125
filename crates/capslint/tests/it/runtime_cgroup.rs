//! `capslint runtime` and `capslint exec` in a real CPU-limited cgroup (v1 `cpu` hierarchy) with
//! a real numpy/OpenBLAS and threadpoolctl (installed by `scripts/test-setup`).
//!
//! Each test creates its own cgroup and removes it afterwards. Without a writable hierarchy or
//! the test interpreter a test prints `SKIP: <why>` and passes, unless
//! `CAPSLINT_REQUIRE_REAL_CGROUP=1`, which turns the skip into a failure.

use std::process::{Output, Stdio};

use serde_json::Value;

use crate::support::*;

/// One CPU: 100 ms of CPU time per 100 ms period.
const ONE_CPU: (u64, u64) = (100_000, 100_000);

/// Runs `capslint runtime --format json` in the setup's cgroup with exactly `vars` set.
fn runtime_json(setup: &RealSetup, vars: &[(&str, String)], extra: &[&str]) -> (Output, Value) {
    let python = setup.python.display().to_string();
    let mut args = vec!["runtime", "--format", "json", "--python", &python];
    args.extend_from_slice(extra);
    let output = setup.cgroup.command(binary(), &args, vars).output().unwrap();
    let report = json(&output);
    (output, report)
}

fn declared(n: &str) -> (&'static str, String) {
    ("CPU_LIMIT", n.to_owned())
}

fn pool_threads(report: &Value) -> Vec<u64> {
    report["pools"]
        .as_array()
        .unwrap_or_else(|| panic!("no pools in {report}"))
        .iter()
        .filter_map(|pool| pool["num_threads"].as_u64())
        .collect()
}

fn openblas_threads(report: &Value) -> u64 {
    report["pools"]
        .as_array()
        .and_then(|pools| pools.iter().find(|p| p["internal_api"] == "openblas"))
        .and_then(|p| p["num_threads"].as_u64())
        .unwrap_or_else(|| panic!("no OpenBLAS pool in {report}"))
}

#[test]
fn safe_caps_pass() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let mut vars = safe_caps(1);
    vars.push(declared("1"));
    let (output, report) = runtime_json(&setup, &vars, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(reasons(&report), Vec::<String>::new());
    assert_eq!(report["safe"], true);
    let limit = &report["limit"];
    assert_eq!(limit["downward_api"], 1.0);
    assert_eq!(limit["cgroup_quota"], 1.0);
    assert_eq!(limit["effective"], 1);
    assert_eq!(limit["cgroup"]["version"], 1);
    assert_eq!(limit["cgroup"]["quota_dir"].as_str(), Some(setup.cgroup.dir().to_str().unwrap()));
    assert_eq!(openblas_threads(&report), 1);
    assert_eq!(report["joblib_cpu_count"], 1);
    assert!(report["pools"][0]["filepath"].is_string(), "threadpoolctl fields kept");

    // The text format says the same: a summary on stdout, nothing on stderr.
    let python = setup.python.display().to_string();
    let output = setup.cgroup.command(binary(), &["runtime", "--python", &python], &vars).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("result: safe"), "{stdout}");
    assert!(output.stderr.is_empty(), "{}", describe(&output));
}

#[test]
fn undeclared_limit_fails() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let (output, report) = runtime_json(&setup, &safe_caps(1), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["cpu_limit_undeclared"]);
    // The quota is still read and used for the other checks.
    assert_eq!(report["limit"]["effective"], 1);
    assert_eq!(report["limit"]["source"], "cgroup_quota");
}

#[test]
fn unset_caps_fail() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    // Nothing capped: OpenBLAS sizes its pool to the node (2 CPUs here), not to the quota.
    let vars = vec![declared("1"), ("OMP_WAIT_POLICY", "passive".to_owned())];
    let (output, report) = runtime_json(&setup, &vars, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["caps_unset", "process_parallelism_unbounded"]);
    let detail = report["verdicts"][0]["detail"].as_str().unwrap();
    for name in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"] {
        assert!(detail.contains(name), "{detail}");
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    assert_eq!(openblas_threads(&report), cores);

    // One missing cap is enough.
    let vars = with(safe_caps(1), &[("MKL_NUM_THREADS", None)]);
    let (output, report) = runtime_json(&setup, &[vars, vec![declared("1")]].concat(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["caps_unset"]);
}

#[test]
fn a_cap_the_loaded_blas_does_not_read_is_ineffective() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 {
        return skip_inapplicable("one CPU: an uncapped OpenBLAS pool cannot exceed a 1-CPU limit");
    }
    // MKL_NUM_THREADS is set, but numpy's BLAS is OpenBLAS, which does not read it.
    let vars = [
        declared("1"),
        ("MKL_NUM_THREADS", "1".to_owned()),
        ("LOKY_MAX_CPU_COUNT", "1".to_owned()),
        ("OMP_WAIT_POLICY", "passive".to_owned()),
    ];
    let (output, report) = runtime_json(&setup, &vars, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["caps_unset", "cap_ineffective"]);
    let detail = report["verdicts"][1]["detail"].as_str().unwrap();
    assert!(detail.contains("it reads OPENBLAS_NUM_THREADS"), "{detail}");
}

#[test]
fn cap_above_the_limit_fails() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let vars = with(safe_caps(1), &[("OPENBLAS_NUM_THREADS", Some("2"))]);
    let (output, report) = runtime_json(&setup, &[vars, vec![declared("1")]].concat(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["caps_exceed_limit"]);
    assert!(report["verdicts"][0]["detail"].as_str().unwrap().contains("OPENBLAS_NUM_THREADS=2"));
    // The real library followed the variable.
    assert_eq!(openblas_threads(&report), 2);
}

#[test]
fn active_wait_policy_fails() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let vars = with(safe_caps(1), &[("OMP_WAIT_POLICY", Some("active"))]);
    let vars = [vars, vec![declared("1")]].concat();
    let (output, report) = runtime_json(&setup, &vars, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["wait_policy_active"]);

    // In text format the verdict is one logfmt line on stderr.
    let python = setup.python.display().to_string();
    let output = setup.cgroup.command(binary(), &["runtime", "--python", &python], &vars).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "event=pod_thread_caps_unsafe severity=error reason=wait_policy_active \
         omp_wait_policy=active detail=\"OMP_WAIT_POLICY=\\\"active\\\": idle OpenMP threads spin \
         at barriers\"\n"
    );
}

#[test]
fn unbounded_process_parallelism_fails() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let vars = with(safe_caps(1), &[("LOKY_MAX_CPU_COUNT", Some("2"))]);
    let (output, report) = runtime_json(&setup, &[vars, vec![declared("1")]].concat(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["caps_exceed_limit", "process_parallelism_unbounded"]);
}

#[test]
fn module_raising_the_blas_pool_at_import_fails() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let mut vars = safe_caps(1);
    vars.extend([declared("1"), fixture_pythonpath()]);
    // Without the module, the caps hold.
    let (output, report) = runtime_json(&setup, &vars, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(pool_threads(&report), [1]);
    // With it, the variables are still right but the loaded pool is not.
    let (output, report) = runtime_json(&setup, &vars, &["--import", "capslint_fixture_raise_pool"]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["cap_ineffective"]);
    assert_eq!(openblas_threads(&report), 2);
    assert_eq!(report["python"]["imported"][0], "capslint_fixture_raise_pool");
}

#[test]
fn downward_api_value_rounded_up_from_the_quota_fails() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // limits.cpu: 1500m gives a 150000/100000 quota, and the Downward API (divisor 1) says 2.
    let Some(setup) = real_setup(150_000, 100_000) else {
        return;
    };
    let mut vars = safe_caps(1);
    vars.push(declared("2"));
    let (output, report) = runtime_json(&setup, &vars, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["limit_mismatch"]);
    assert_eq!(report["limit"]["downward_api"], 2.0);
    assert_eq!(report["limit"]["cgroup_quota"], 1.5);
    assert_eq!(report["limit"]["effective"], 1);
    assert_eq!(report["limit"]["source"], "cgroup_quota");

    // Millicores that match the quota are fine.
    let mut vars = safe_caps(1);
    vars.push(declared("1500m"));
    let (output, report) = runtime_json(&setup, &vars, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(reasons(&report), Vec::<String>::new());
}

#[test]
fn measure_reports_throttling_of_an_oversized_pool() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let mut vars = safe_caps(1);
    vars.extend([declared("1"), fixture_pythonpath()]);
    let args = ["--measure", "1", "--import", "capslint_fixture_raise_pool"];
    let (output, report) = runtime_json(&setup, &vars, &args);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert_eq!(reasons(&report), ["cap_ineffective", "throttled"]);
    let throttling = &report["throttling"];
    assert!(throttling["nr_periods"].as_u64().unwrap() >= 5, "{throttling}");
    assert!(throttling["share"].as_f64().unwrap() > 0.25, "{throttling}");
    let cpu_stat = setup.cgroup.dir().join("cpu.stat");
    assert_eq!(throttling["cpu_stat"].as_str(), cpu_stat.to_str());
}

#[test]
fn measure_finds_no_throttling_with_safe_caps() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let mut vars = safe_caps(1);
    vars.push(declared("1"));
    let (output, report) = runtime_json(&setup, &vars, &["--measure", "1"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(report["throttling"]["share"].as_f64().unwrap() <= 0.25, "{report}");
}

/// Prints the caps the command received and the pools the real libraries report.
const SHOW_CAPS: &str = r#"
import json, os
import numpy, threadpoolctl
names = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
         "NUMEXPR_MAX_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS", "NUMBA_NUM_THREADS",
         "POLARS_MAX_THREADS", "LOKY_MAX_CPU_COUNT", "PYTHON_CPU_COUNT", "OMP_WAIT_POLICY"]
print(json.dumps({"env": {n: os.environ.get(n) for n in names}, "pid": os.getpid(),
                  "pools": threadpoolctl.threadpool_info()}))
"#;

#[test]
fn exec_sets_the_caps_from_the_quota() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    // The pod declares 2 but the cgroup allows 1: the caps follow the smaller.
    let python = setup.python.display().to_string();
    let child = setup
        .cgroup
        .command(binary(), &["exec", "--", &python, "-c", SHOW_CAPS], &[declared("2")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shell_pid = child.id();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let shown = json(&output);
    for (name, value) in shown["env"].as_object().unwrap() {
        let expected = if name == "OMP_WAIT_POLICY" { "passive" } else { "1" };
        assert_eq!(value, expected, "{name}");
    }
    assert_eq!(openblas_threads(&shown), 1, "the real OpenBLAS follows the cap");
    // sh execs capslint, which execs Python: one process throughout.
    assert_eq!(shown["pid"], shell_pid);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "event=pod_thread_caps_set severity=info limit=1 source=cgroup_quota \
             limit_env=CPU_LIMIT downward_api=2 cgroup_quota=1 cpuset="
        ),
        "{stderr}"
    );
}

#[test]
fn exec_refuses_without_a_declared_limit() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let marker = tempfile::tempdir().unwrap();
    let ran = marker.path().join("ran");
    let output = setup.cgroup.command(binary(), &["exec", "--", "touch", ran.to_str().unwrap()], &[]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("event=pod_thread_caps_unsafe severity=error reason=cpu_limit_undeclared "), "{stderr}");
    assert!(!ran.exists(), "the command must not run");
}

#[test]
fn exec_check_probes_the_capped_environment() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(setup) = real_setup(ONE_CPU.0, ONE_CPU.1) else {
        return;
    };
    let python = setup.python.display().to_string();
    let vars = [declared("1"), fixture_pythonpath()];
    // Nothing is set by hand: exec's own caps make the check pass.
    let output = setup
        .cgroup
        .command(binary(), &["exec", "--check", "--python", &python, "--", "true"], &vars)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    // A workload module that raises the pool is caught before the command starts.
    let args = ["exec", "--check", "--python", &python, "--import", "capslint_fixture_raise_pool", "--", "true"];
    let output = setup.cgroup.command(binary(), &args, &vars).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("reason=cap_ineffective"), "{stderr}");
    assert!(!stderr.contains("pod_thread_caps_set"), "{stderr}");
}
