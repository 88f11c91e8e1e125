//! `capslint exec` against the real ML libraries (numba, polars, ONNX Runtime, OpenCV, Hugging Face
//! tokenizers' rayon pool, TensorFlow), in a real 1-CPU cgroup: under exec, every pool the library
//! starts during a parallel call (counted from `/proc/self/task` and the threads' names) and every
//! size it reports stay within the limit. The same call without exec, with only ADR-0096's five caps
//! set, shows what exec's extra variables prevent: the libraries that size their pools from the
//! node's CPUs or the affinity mask exceed the limit, the ones that read the quota (polars, rayon) do
//! not. `capslint runtime` reports these pools and judges them against the limit. The libraries come
//! from `scripts/test-setup` (`.venv-test-ml`; TensorFlow in `.venv-test-tensorflow`, only with
//! `--tensorflow`; PyTorch in `.venv-test-torch`, only with `--torch`).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::*;

/// The measured call, run with `python -c`: prints `{library, version, reported, pools}`.
const WORKLOAD: &str = include_str!("support/ml_pools.py");

/// The libraries `scripts/test-setup` installs only when asked (`--tensorflow`, `--torch`), each in an
/// environment of its own: the module, the variable naming its interpreter, the environment.
const OPTIONAL: &[(&str, &str, &str)] = &[
    ("tensorflow", "CAPSLINT_TEST_TENSORFLOW_PYTHON", ".venv-test-tensorflow"),
    ("torch", "CAPSLINT_TEST_TORCH_PYTHON", ".venv-test-torch"),
];

/// The ML environment's interpreter: `CAPSLINT_TEST_ML_PYTHON`, else `.venv-test-ml/bin/python`;
/// for an [`OPTIONAL`] library its own variable, else its own environment.
fn ml_python(module: &str) -> PathBuf {
    let (variable, venv) = OPTIONAL
        .iter()
        .find(|(optional, ..)| *optional == module)
        .map_or(("CAPSLINT_TEST_ML_PYTHON", ".venv-test-ml"), |(_, variable, venv)| (*variable, *venv));
    std::env::var_os(variable).map_or_else(|| root().join(venv).join("bin/python"), PathBuf::from)
}

/// The interpreter that has `module`, or `None` once the test is skipped: the [`OPTIONAL`] libraries
/// are a skip that never fails, the rest is what `scripts/test-setup` installs (a skip that fails under
/// `CAPSLINT_REQUIRE_REAL_CGROUP=1`).
fn python_with(module: &str) -> Option<PathBuf> {
    let python = ml_python(module);
    let found = python.exists()
        && clean_command(&python, &[])
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|output| output.status.success());
    if found {
        return Some(python);
    }
    if OPTIONAL.iter().any(|(optional, ..)| *optional == module) {
        skip_inapplicable(&format!("{module} is not installed (run scripts/test-setup --{module})"));
    } else {
        skip(&format!("{module} is not installed for {} (run scripts/test-setup)", python.display()));
    }
    None
}

/// [`python_with`], on a machine whose affinity mask has two CPUs or more, where a library's default
/// pool can exceed a limit of 1: `None` once the test is skipped, with `why` it does not apply otherwise.
fn python_with_two_cpus(module: &str, why: &str) -> Option<PathBuf> {
    let python = python_with(module)?;
    if affinity_cpus() < 2 {
        skip_inapplicable(why);
        return None;
    }
    Some(python)
}

/// The measured call's report; panics with the output when there is none.
fn report(output: &Output, what: &str) -> Value {
    assert_eq!(output.status.code(), Some(0), "{what}: the workload failed:\n{}", describe(output));
    let last = String::from_utf8_lossy(&output.stdout).lines().last().unwrap_or_default().to_owned();
    serde_json::from_str(&last).unwrap_or_else(|e| panic!("{what}: no report ({e}):\n{}", describe(output)))
}

/// The largest pool the call started and the largest size the library reported (0 when it reports
/// none, or leaves the size to its default).
fn largest(report: &Value) -> (u64, u64) {
    let most =
        |key: &str| report[key].as_object().map_or(0, |map| map.values().filter_map(Value::as_u64).max().unwrap_or(0));
    (most("pools"), most("reported"))
}

/// `capslint runtime --format json` on `python` with `module` imported as the workload imports it, the
/// variables `vars` and a Downward API limit of 1 (`CPU_LIMIT`); the cgroup is the fixture `root`, or the
/// process's own.
fn runtime_json(python: &Path, module: &str, vars: Vec<(&'static str, String)>, root: Option<&str>) -> Value {
    let mut vars = vars;
    vars.push(("CPU_LIMIT", "1".to_owned()));
    let mut command = clean_command(binary(), &vars);
    command.args(["runtime", "--format", "json", "--import", module, "--python"]).arg(python);
    if let Some(root) = root {
        command.args(root_args(root));
    }
    json(&command.output().unwrap())
}

/// How many CPUs this process may run on.
fn affinity_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Runs `module`'s parallel call in a 1-CPU cgroup under `capslint exec`, then without it (only
/// ADR-0096's five caps set); `exceeds_without_exec` says whether the library sizes its pool from more
/// than the quota.
fn check(module: &str, exceeds_without_exec: bool) {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(python) = python_with(module) else { return };
    let cgroup = match TestCgroup::create(100_000, 100_000) {
        Ok(cgroup) => cgroup,
        Err(why) => return skip(&why),
    };
    let python = python.to_str().unwrap();
    let script = ["-c", WORKLOAD, module];

    let capped_args: Vec<&str> = ["exec", "--quiet", "--", python].into_iter().chain(script).collect();
    let limit = [("CPU_LIMIT", "1".to_owned())];
    let output = cgroup.command(binary(), &capped_args, &limit).output().unwrap();
    let capped = report(&output, &format!("{module} under exec"));
    let (pool, reported) = largest(&capped);
    assert!(pool >= 1, "{module}: no pool was seen under exec: {capped}");
    assert!(pool <= 1, "{module} under exec started a pool of {pool} threads in a 1-CPU cgroup: {capped}");
    assert!(reported <= 1, "{module} under exec reports {reported} threads in a 1-CPU cgroup: {capped}");

    let output = cgroup.command(python, &script, &safe_caps(1)).output().unwrap();
    let bare = report(&output, &format!("{module} without exec"));
    let (pool, _) = largest(&bare);
    if !exceeds_without_exec {
        assert!(pool <= 1, "{module} reads the quota, yet started a pool of {pool} threads: {bare}");
    } else if affinity_cpus() < 2 {
        skip_inapplicable(&format!("{module}: one CPU in the affinity mask, so no default pool exceeds the limit"));
    } else {
        assert!(pool > 1, "{module} without exec stayed within the limit, so the test above proves nothing: {bare}");
    }
}

#[test]
fn numba_pool_stays_within_the_limit_under_exec() {
    check("numba", true);
}

#[test]
fn polars_pool_stays_within_the_limit_under_exec() {
    check("polars", false);
}

#[test]
fn onnxruntime_pool_stays_within_the_limit_under_exec() {
    check("onnxruntime", true);
}

#[test]
fn opencv_pool_stays_within_the_limit_under_exec() {
    check("cv2", true);
}

#[test]
fn tokenizers_rayon_pool_stays_within_the_limit_under_exec() {
    check("tokenizers", false);
}

#[test]
fn tensorflow_pools_stay_within_the_limit_under_exec() {
    check("tensorflow", true);
}

#[test]
fn torch_intra_op_pool_stays_within_the_limit_under_exec() {
    check("torch", false);
    // torch sizes its intra-op pool from the affinity mask when no variable is set: the measurement
    // above would have seen a pool beyond the limit.
    let Some(python) =
        python_with_two_cpus("torch", "torch: one CPU in the affinity mask, so no default pool exceeds the limit")
    else {
        return;
    };
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let cgroup = match TestCgroup::create(100_000, 100_000) {
        Ok(cgroup) => cgroup,
        Err(why) => return skip(&why),
    };
    let output = cgroup.command(python.to_str().unwrap(), &["-c", WORKLOAD, "torch"], &[]).output().unwrap();
    let bare = report(&output, "torch without any cap");
    let (pool, reported) = largest(&bare);
    assert!(pool > 1 && reported > 1, "torch without any cap stayed within the limit: {bare}");
}

#[test]
fn runtime_judges_torchs_intra_op_pool_and_lists_its_inter_op_pool() {
    let Some(python) =
        python_with_two_cpus("torch", "one CPU in the affinity mask: no torch pool exceeds a limit of 1")
    else {
        return;
    };
    let runtime = |vars| runtime_json(&python, "torch", vars, Some("v2-namespace"));
    let size = |report: &Value, pool: &str| {
        let pools = report["library_pools"].as_array().expect("library_pools");
        pools.iter().find(|p| p["library"] == "torch" && p["pool"] == pool).and_then(|p| p["num_threads"].as_u64())
    };
    let cpus = affinity_cpus() as u64;
    // ADR-0096's five caps bound the intra-op pool; the inter-op pool follows the affinity mask, which
    // no variable changes, and is listed without a verdict.
    let report = runtime(safe_caps(1));
    assert_eq!(size(&report, "intra-op"), Some(1), "{report}");
    assert_eq!(size(&report, "inter-op"), Some(cpus), "{report}");
    assert!(reasons(&report).iter().all(|reason| reason != "cap_ineffective"), "{report}");
    assert!(!report["verdicts"].to_string().contains("inter-op"), "{report}");
    // torch reads MKL_NUM_THREADS before OMP_NUM_THREADS, and sizes libgomp's pool from it: a cap of 1
    // in OMP_NUM_THREADS does not hold, and runtime says which pool ignores it.
    let report = runtime(with(safe_caps(1), &[("MKL_NUM_THREADS", Some("2"))]));
    assert_eq!(size(&report, "intra-op"), Some(2), "{report}");
    let verdicts = report["verdicts"].to_string();
    assert!(verdicts.contains("MKL_NUM_THREADS=2 above the limit of 1"), "{report}");
    assert!(verdicts.contains("runs 2 threads although OMP_NUM_THREADS=1"), "{report}");
}

#[test]
fn runtime_reports_the_ml_pools_and_judges_them_against_the_limit() {
    let Some(python) = python_with_two_cpus("numba", "one CPU in the affinity mask: no ML pool exceeds a limit of 1")
    else {
        return;
    };
    let runtime = |vars| runtime_json(&python, "cv2", vars, Some("v2-namespace"));
    // ADR-0096's five caps alone: numba sizes its pool from the affinity mask, ONNX Runtime from the
    // physical cores, OpenCV from the CPUs; all are above the limit, and runtime says so.
    let report = runtime(safe_caps(1));
    let pools = report["library_pools"].as_array().expect("library_pools");
    let size = |library: &str, pool: &str| {
        pools.iter().find(|p| p["library"] == library && p["pool"] == pool).and_then(|p| p["num_threads"].as_u64())
    };
    assert!(size("numba", "parallel").is_some_and(|n| n > 1), "{report}");
    assert!(size("polars", "compute").is_some(), "{report}");
    assert!(size("onnxruntime", "intra-op").is_some_and(|n| n > 1), "{report}");
    assert!(size("cv2", "parallel_for").is_some_and(|n| n > 1), "{report}");
    assert!(reasons(&report).contains(&"cap_ineffective".to_owned()), "{report}");
    let verdict = report["verdicts"].as_array().unwrap().iter().find(|v| v["reason"] == "cap_ineffective").unwrap();
    let detail = verdict["detail"].as_str().unwrap();
    assert!(
        detail.contains("numba parallel pool") && detail.contains("NUMBA_NUM_THREADS, none of them set"),
        "{detail}"
    );
    assert!(detail.contains("onnxruntime intra-op pool") && detail.contains("ORT_INTRA_OP_NUM_THREADS"), "{detail}");
    assert!(detail.contains("cv2 parallel_for pool") && detail.contains("OPENCV_FOR_THREADS_NUM"), "{detail}");
    // With the variables exec sets, every pool the libraries report is within the limit.
    let all = with(
        safe_caps(1),
        &[
            ("NUMBA_NUM_THREADS", Some("1")),
            ("POLARS_MAX_THREADS", Some("1")),
            ("ORT_INTRA_OP_NUM_THREADS", Some("1")),
            ("ORT_INTER_OP_NUM_THREADS", Some("1")),
            ("OPENCV_FOR_THREADS_NUM", Some("1")),
        ],
    );
    let report = runtime(all.clone());
    assert!(!reasons(&report).contains(&"cap_ineffective".to_owned()), "{report}");
    let pools = report["library_pools"].as_array().expect("library_pools");
    for pool in pools {
        assert!(pool["num_threads"].as_u64().is_none_or(|n| n <= 1), "{pool}");
    }
    // The text summary shows one row per pool, with what reported it.
    let mut vars = all;
    vars.push(("CPU_LIMIT", "1".to_owned()));
    let output = clean_command(binary(), &vars)
        .args(["runtime", "--import", "cv2", "--python"])
        .arg(&python)
        .args(root_args("v2-namespace"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    for row in ["numba parallel", "polars compute", "onnxruntime intra-op", "cv2 parallel_for"] {
        let line = text.lines().find(|line| line.trim_start().starts_with(row));
        let line = line.unwrap_or_else(|| panic!("no row {row:?}:\n{}", describe(&output)));
        assert_eq!(line.split_whitespace().nth(2), Some("1"), "{line}");
    }
    assert!(text.contains("numba.config.NUMBA_NUM_THREADS"), "{}", describe(&output));
}

#[test]
fn runtime_reports_tensorflows_pools_when_the_workload_imports_it() {
    let Some(python) =
        python_with_two_cpus("tensorflow", "one CPU in the affinity mask: no TensorFlow pool exceeds a limit of 1")
    else {
        return;
    };
    let runtime = |vars| runtime_json(&python, "tensorflow", vars, None);
    let tensorflow_pools = |report: &Value| -> Vec<Value> {
        let pools = report["library_pools"].as_array().expect("library_pools");
        pools.iter().filter(|pool| pool["library"] == "tensorflow").cloned().collect()
    };
    // Without its variables, TensorFlow sizes both pools from the affinity mask.
    let report = runtime(safe_caps(1));
    let pools = tensorflow_pools(&report);
    assert_eq!(pools.len(), 2, "{report}");
    for pool in &pools {
        assert_eq!(pool["num_threads"].as_u64(), Some(affinity_cpus() as u64), "{report}");
    }
    let verdict = report["verdicts"].as_array().unwrap().iter().find(|v| v["reason"] == "cap_ineffective");
    let detail = verdict.and_then(|v| v["detail"].as_str()).unwrap_or_else(|| panic!("no cap_ineffective: {report}"));
    assert!(detail.contains("TF_NUM_INTRAOP_THREADS") && detail.contains("TF_NUM_INTEROP_THREADS"), "{detail}");
    // With them, the size is the variables' (judged with the caps), and nothing is ineffective.
    let capped = with(safe_caps(1), &[("TF_NUM_INTRAOP_THREADS", Some("1")), ("TF_NUM_INTEROP_THREADS", Some("1"))]);
    let report = runtime(capped);
    assert!(tensorflow_pools(&report).iter().all(|pool| pool["num_threads"].is_null()), "{report}");
    assert!(!reasons(&report).contains(&"cap_ineffective".to_owned()), "{report}");
}
