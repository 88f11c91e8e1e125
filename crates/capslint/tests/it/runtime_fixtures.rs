//! `capslint runtime --no-probe` on fixture trees (`fixtures/runtime/<case>/`): cgroup v2 and v1,
//! nested hierarchies, cgroup namespaces, unlimited quotas, NUMA spread and garbage files, read
//! through the same code as the live system with `--proc-root`, `--cgroup-root` and `--sys-root`.

use std::process::Output;

use serde_json::Value;

use crate::support::*;

fn runtime(case: &str, vars: &[(&str, String)], extra: &[&str]) -> Output {
    clean_command(binary(), vars).arg("runtime").arg("--no-probe").args(root_args(case)).args(extra).output().unwrap()
}

fn runtime_json(case: &str, vars: &[(&str, String)]) -> (Output, Value) {
    let output = runtime(case, vars, &["--format", "json"]);
    let report = json(&output);
    (output, report)
}

fn caps_and_limit(caps: u32, limit: &str) -> Vec<(&'static str, String)> {
    let mut vars = safe_caps(caps);
    vars.push(("CPU_LIMIT", limit.to_owned()));
    vars
}

#[test]
fn v2_namespace_reads_the_mount_point_and_catches_a_rounded_limit() {
    let (output, report) = runtime_json("v2-namespace", &caps_and_limit(1, "2"));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let limit = &report["limit"];
    assert_eq!(limit["cgroup"]["version"], 2);
    assert_eq!(limit["cgroup"]["path"], "/");
    assert_eq!(limit["cgroup_quota"], 1.5);
    assert_eq!(limit["cgroup"]["quota_us"], 150_000);
    assert_eq!(limit["cpuset"], 8);
    assert_eq!(limit["effective"], 1);
    assert_eq!(limit["source"], "cgroup_quota");
    assert_eq!(reasons(&report), ["limit_mismatch"]);
    assert_eq!(report["pools"], Value::Null);

    // The exact declared value passes.
    let (output, report) = runtime_json("v2-namespace", &caps_and_limit(1, "1500m"));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(reasons(&report), Vec::<String>::new());
    assert_eq!(report["safe"], true);
}

#[test]
fn v2_nested_walks_up_to_the_pod_quota() {
    let (output, report) = runtime_json("v2-nested", &caps_and_limit(2, "2"));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let cgroup = &report["limit"]["cgroup"];
    assert!(cgroup["dir"].as_str().unwrap().ends_with("cri-containerd-9a7b.scope"), "{cgroup}");
    assert!(cgroup["quota_dir"].as_str().unwrap().ends_with("kubepods-burstable-pod1f2e.slice"), "{cgroup}");
    assert_eq!(report["limit"]["cgroup_quota"], 2.0);
    assert_eq!(report["limit"]["effective"], 2);

    // A cap of 4 passes nowhere within 2 CPUs.
    let (output, report) = runtime_json("v2-nested", &caps_and_limit(4, "2"));
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(reasons(&report), ["caps_exceed_limit", "process_parallelism_unbounded"]);
}

#[test]
fn v1_nested_compares_quotas_with_different_periods() {
    // The container allows 250000/100000, its pod 100000/50000 = 2 CPUs.
    let (output, report) = runtime_json("v1-nested", &caps_and_limit(2, "2"));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let limit = &report["limit"];
    assert_eq!(limit["cgroup"]["version"], 1);
    assert_eq!(limit["cgroup"]["quota_us"], 100_000);
    assert_eq!(limit["cgroup"]["period_us"], 50_000);
    assert!(limit["cgroup"]["quota_dir"].as_str().unwrap().ends_with("/pod1f2e"));
    assert_eq!(limit["cgroup_quota"], 2.0);
}

#[test]
fn v1_namespace_falls_back_to_the_mount_point() {
    let (output, report) = runtime_json("v1-namespace", &caps_and_limit(1, "1"));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(report["limit"]["cgroup_quota"], 1.0);
    assert_eq!(report["limit"]["cpuset"], 2);
    let notes = report["notes"].to_string();
    assert!(notes.contains("cgroup namespace"), "{notes}");
    // No NUMA directory in this tree: reported as unknown, not as an error.
    assert_eq!(report["numa"], Value::Null);
}

#[test]
fn unlimited_quota_and_uneven_numa_spread_are_reported() {
    let (output, report) = runtime_json("v2-unlimited-numa", &caps_and_limit(8, "8"));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let limit = &report["limit"];
    assert_eq!(limit["cgroup_quota"], Value::Null);
    assert_eq!(limit["cpuset"], 8);
    assert_eq!(limit["cpuset_list"], "4-11");
    assert_eq!(limit["effective"], 8);
    let numa = &report["numa"];
    assert_eq!(numa["even"], false);
    assert_eq!(
        numa["nodes"],
        serde_json::json!([
            {"node": 0, "cpus": 2, "cpu_list": "4-5"},
            {"node": 1, "cpus": 6, "cpu_list": "6-11"},
        ])
    );
    assert!(report["notes"].to_string().contains("unevenly"), "{report}");

    // The text summary shows the nodes side by side.
    let output = runtime("v2-unlimited-numa", &caps_and_limit(8, "8"), &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("  node 0                   2        4-5\n"), "{stdout}");
    assert!(stdout.contains("  node 1                   6        6-11\n"), "{stdout}");
}

#[test]
fn garbage_in_cpu_max_is_an_error() {
    let output = runtime("v2-garbage", &caps_and_limit(1, "1"), &["--format", "json"]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("cpu.max: unexpected content \"lots 100000\""), "{stderr}");
}

#[test]
fn text_format_prints_a_summary_and_one_event_line_per_problem() {
    let vars = with(caps_and_limit(1, "2"), &[("OMP_NUM_THREADS", Some("4,2")), ("OMP_WAIT_POLICY", None)]);
    let output = runtime("v2-namespace", &vars, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "event=pod_thread_caps_unsafe severity=error reason=caps_exceed_limit limit=1 \
             vars=OMP_NUM_THREADS detail=\"OMP_NUM_THREADS=4,2 (a list enables nesting, and each nested \
             level starts 2 threads per thread: nested teams have no bound) above the limit of 1\"",
            "event=pod_thread_caps_unsafe severity=error reason=wait_policy_active \
             omp_wait_policy=unset detail=\"OMP_WAIT_POLICY is not set: idle OpenMP threads spin at \
             barriers before they sleep (libgomp about 300,000 times, LLVM's runtime 200 ms)\"",
            "event=pod_thread_caps_unsafe severity=error reason=limit_mismatch \
             limit_env=CPU_LIMIT downward_api=2 cgroup_quota=1.5 detail=\"CPU_LIMIT=2 but the \
             CFS quota is 1.5 CPU (150000/100000 us): the Downward API rounds limits.cpu up to \
             whole CPUs: use whole-CPU limits\"",
        ]
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("limit\n  downward_api             2        CPU_LIMIT=2\n"), "{stdout}");
    assert!(stdout.contains("nested teams have no bound"), "{stdout}");
    assert!(stdout.ends_with("result: unsafe (3 problems, listed on stderr)\n"), "{stdout}");
}

#[test]
fn the_limit_variable_is_found_by_name_or_by_suffix() {
    let caps = safe_caps(1);
    // A single *_CPU_LIMIT is used when CPU_LIMIT is not set.
    let vars = [caps.clone(), vec![("CVN_POD_CPU_LIMIT", "1500m".to_owned())]].concat();
    let (output, report) = runtime_json("v2-namespace", &vars);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(report["limit"]["limit_env"], "CVN_POD_CPU_LIMIT");
    assert_eq!(report["limit"]["downward_api"], 1.5);

    // Two candidates are ambiguous.
    let vars = [vars, vec![("OTHER_CPU_LIMIT", "1".to_owned())]].concat();
    let (_, report) = runtime_json("v2-namespace", &vars);
    assert_eq!(reasons(&report), ["cpu_limit_undeclared"]);
    assert!(report["limit"]["undeclared"].as_str().unwrap().contains("--limit-env"));

    // --limit-env settles it.
    let output = clean_command(binary(), &vars)
        .args(["runtime", "--no-probe", "--format", "json", "--limit-env", "OTHER_CPU_LIMIT"])
        .args(root_args("v2-namespace"))
        .output()
        .unwrap();
    let report = json(&output);
    assert_eq!(report["limit"]["limit_env"], "OTHER_CPU_LIMIT");
    assert_eq!(reasons(&report), ["limit_mismatch"]);

    // A value that is not a CPU quantity is not a declaration.
    let (_, report) = runtime_json("v2-namespace", &[caps, vec![("CPU_LIMIT", "2 CPUs".to_owned())]].concat());
    assert_eq!(reasons(&report), ["cpu_limit_undeclared"]);
    assert_eq!(report["limit"]["limit_env"], "CPU_LIMIT");
}

#[test]
fn the_root_options_stay_out_of_the_help() {
    let output = clean_command(binary(), &[]).args(["runtime", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    for shown in ["--python", "--import", "--limit-env", "--format", "--measure", "--timeout"] {
        assert!(help.contains(shown), "{shown} missing from:\n{help}");
    }
    assert!(!help.contains("--proc-root"), "{help}");
}
