//! Rendering a check's [`Report`]: a human summary (text) or one JSON object.
//!
//! The JSON schema is documented in `docs/runtime.md`; keep the two in step.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use super::assess::format_cpus;
use super::caps::{self, CapValue, PASSIVE, WAIT_POLICY};
use super::check::Report;
use super::cpuset::format_cpu_list;
use super::probe::LibraryPool;
use super::verdict::JsonVerdict;

/// The report as the JSON object printed by `capslint runtime --format json`, on one line.
pub fn to_json(report: &Report) -> String {
    let system = &report.system;
    let declared = report.declared.as_ref().ok();
    let quota = system.quota.as_ref();
    let json = JsonReport {
        limit: JsonLimit {
            downward_api: declared.map(|d| d.cpus()),
            cgroup_quota: quota.map(|q| q.cpus()),
            cpuset: system.cpuset.as_ref().map(Vec::len),
            effective: report.effective.map(|e| e.threads),
            source: report.effective.map(|e| e.source.as_str()),
            limit_env: match &report.declared {
                Ok(d) => Some(d.name.as_str()),
                Err(why) => why.name(),
            },
            limit_env_value: declared.map(|d| d.raw.as_str()),
            undeclared: report.declared.as_ref().err().map(ToString::to_string),
            cgroup: system.cgroup.as_ref().map(|cg| JsonCgroup {
                version: cg.version.number(),
                path: cg.path.to_string_lossy(),
                dir: cg.dir.to_string_lossy(),
                quota_dir: quota.map(|q| q.dir.to_string_lossy()),
                quota_us: quota.map(|q| q.quota_us),
                period_us: quota.map(|q| q.period_us),
            }),
            cpuset_list: system.cpuset.as_deref().map(format_cpu_list),
        },
        numa: system.numa.as_ref().map(|spread| JsonNuma {
            nodes: spread
                .nodes
                .iter()
                .map(|n| JsonNode { node: n.node, cpus: n.cpus.len(), cpu_list: format_cpu_list(&n.cpus) })
                .collect(),
            even: spread.is_even(),
        }),
        caps: JsonCaps(report),
        pools: report.probe.as_ref().map(|p| p.pools.iter().map(|pool| &pool.info).collect()),
        library_pools: report.probe.as_ref().map(|p| p.library_pools.as_slice()),
        joblib_cpu_count: report.probe.as_ref().and_then(|p| p.joblib_cpu_count),
        python: report.probe.as_ref().map(|p| JsonPython {
            executable: &p.executable,
            version: &p.python,
            threadpoolctl: p.threadpoolctl_version.as_deref(),
            joblib: p.joblib_version.as_deref(),
            imported: &p.imported,
            stack: &p.stack,
            stack_errors: &p.stack_errors,
            library_pool_errors: &p.library_pool_errors,
        }),
        throttling: report.measured.as_ref().map(|m| JsonThrottling {
            seconds: m.seconds,
            cpu_stat: m.cpu_stat.to_string_lossy(),
            nr_periods: m.throttling.periods,
            nr_throttled: m.throttling.throttled,
            throttled_usec: m.throttling.throttled_usec,
            share: m.throttling.share,
            threshold: m.threshold,
        }),
        notes: &system.notes,
        verdicts: report.verdicts.iter().map(|v| v.to_json()).collect(),
        safe: report.is_safe(),
    };
    // Serialising these types cannot fail: every key is a string, and serde_json writes a
    // non-finite float as null.
    serde_json::to_string(&json).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
}

#[derive(Serialize)]
struct JsonReport<'a> {
    limit: JsonLimit<'a>,
    numa: Option<JsonNuma>,
    caps: JsonCaps<'a>,
    pools: Option<Vec<&'a Map<String, Value>>>,
    library_pools: Option<&'a [LibraryPool]>,
    joblib_cpu_count: Option<u64>,
    python: Option<JsonPython<'a>>,
    throttling: Option<JsonThrottling<'a>>,
    notes: &'a [String],
    verdicts: Vec<JsonVerdict<'a>>,
    safe: bool,
}

#[derive(Serialize)]
struct JsonLimit<'a> {
    downward_api: Option<f64>,
    cgroup_quota: Option<f64>,
    cpuset: Option<usize>,
    effective: Option<u64>,
    source: Option<&'static str>,
    limit_env: Option<&'a str>,
    limit_env_value: Option<&'a str>,
    undeclared: Option<String>,
    cgroup: Option<JsonCgroup<'a>>,
    cpuset_list: Option<String>,
}

#[derive(Serialize)]
struct JsonCgroup<'a> {
    version: u8,
    path: Cow<'a, str>,
    dir: Cow<'a, str>,
    quota_dir: Option<Cow<'a, str>>,
    quota_us: Option<u64>,
    period_us: Option<u64>,
}

#[derive(Serialize)]
struct JsonNuma {
    nodes: Vec<JsonNode>,
    even: bool,
}

#[derive(Serialize)]
struct JsonNode {
    node: u32,
    cpus: usize,
    cpu_list: String,
}

/// The caps as one object keyed by variable name, in the order of the `caps` module's lists.
struct JsonCaps<'a>(&'a Report);

impl Serialize for JsonCaps<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Cap<'a> {
            value: Option<&'a str>,
            threads: Option<u64>,
            required: bool,
            note: Option<&'a str>,
        }
        #[derive(Serialize)]
        struct WaitPolicy<'a> {
            value: Option<&'a str>,
            passive: bool,
        }
        let caps = &self.0.caps;
        let mut map = serializer.serialize_map(Some(caps.caps.len() + 1))?;
        for cap in &caps.caps {
            let note = match &cap.value {
                CapValue::Threads { note, .. } => note.as_deref(),
                _ => None,
            };
            let threads = cap.value.threads().filter(|&threads| threads != caps::UNBOUNDED);
            let entry = Cap { value: cap.value.raw(), threads, required: cap.required, note };
            map.serialize_entry(cap.name, &entry)?;
        }
        let policy = WaitPolicy { value: caps.wait_policy.as_deref(), passive: caps.wait_policy_is_passive() };
        map.serialize_entry(WAIT_POLICY, &policy)?;
        map.end()
    }
}

#[derive(Serialize)]
struct JsonPython<'a> {
    executable: &'a str,
    version: &'a str,
    threadpoolctl: Option<&'a str>,
    joblib: Option<&'a str>,
    imported: &'a [String],
    stack: &'a [String],
    stack_errors: &'a BTreeMap<String, String>,
    library_pool_errors: &'a BTreeMap<String, String>,
}

#[derive(Serialize)]
struct JsonThrottling<'a> {
    seconds: f64,
    cpu_stat: Cow<'a, str>,
    nr_periods: u64,
    nr_throttled: u64,
    throttled_usec: u64,
    share: Option<f64>,
    threshold: f64,
}

/// The human summary printed on stdout by `capslint runtime` (verdict lines go to stderr).
pub fn to_text(report: &Report) -> String {
    let mut out = String::new();
    let system = &report.system;
    let unknown = || "unknown".to_owned();

    out.push_str("limit\n");
    let (declared, declared_from) = match &report.declared {
        Ok(d) => (format_cpus(d.cpus()), format!("{}={}", d.name, d.raw)),
        Err(why) => ("undeclared".to_owned(), why.to_string()),
    };
    row(&mut out, "downward_api", &declared, &declared_from);
    let (quota, quota_from) = match (&system.quota, &system.cgroup) {
        (Some(q), Some(cg)) => (
            format_cpus(q.cpus()),
            format!("{}/{} us, cgroup v{} {}", q.quota_us, q.period_us, cg.version.number(), q.dir.display()),
        ),
        (None, Some(cg)) => {
            ("none".to_owned(), format!("no quota up to cgroup v{} {}", cg.version.number(), cg.mount_point.display()))
        }
        _ => (unknown(), "no cpu cgroup found".to_owned()),
    };
    row(&mut out, "cgroup_quota", &quota, &quota_from);
    match &system.cpuset {
        Some(cpus) => row(&mut out, "cpuset", &cpus.len().to_string(), &format_cpu_list(cpus)),
        None => row(&mut out, "cpuset", &unknown(), ""),
    }
    match report.effective {
        Some(e) => row(&mut out, "effective", &e.threads.to_string(), &format!("from {}", e.source.as_str())),
        None => row(&mut out, "effective", &unknown(), ""),
    }

    if let Some(spread) = &system.numa {
        out.push_str("numa\n");
        for node in &spread.nodes {
            row(&mut out, &format!("node {}", node.node), &node.cpus.len().to_string(), &format_cpu_list(&node.cpus));
        }
    }

    out.push_str("caps\n");
    for cap in &report.caps.caps {
        let value = match &cap.value {
            CapValue::Unset => "unset".to_owned(),
            CapValue::Empty => "\"\"".to_owned(),
            CapValue::Threads { raw, .. } => raw.clone(),
            CapValue::Invalid { raw, .. } => format!("{raw:?} (invalid)"),
        };
        let remark = match &cap.value {
            CapValue::Threads { note: Some(note), .. } => note.as_str(),
            _ if cap.required => "required",
            _ => "",
        };
        row(&mut out, cap.name, &value, remark);
    }
    let policy = report.caps.wait_policy.clone().unwrap_or_else(|| "unset".to_owned());
    row(&mut out, "OMP_WAIT_POLICY", &policy, &format!("required: {PASSIVE}"));

    if let Some(probe) = &report.probe {
        let _ = writeln!(
            out,
            "pools (threadpoolctl {}, Python {} {})",
            probe.threadpoolctl_version.as_deref().unwrap_or("?"),
            probe.python,
            probe.executable
        );
        if probe.pools.is_empty() {
            out.push_str("  none loaded\n");
        }
        for pool in &probe.pools {
            let name = format!("{} {}", pool.user_api(), pool.internal_api());
            let threads = pool.num_threads().map_or_else(unknown, |n| n.to_string());
            let version = pool.version().map(|v| format!(" {v}")).unwrap_or_default();
            row(&mut out, &name, &threads, &format!("{}{version}", pool.prefix()));
        }
        for pool in &probe.library_pools {
            let name = format!("{} {}", pool.library, pool.pool);
            let threads = pool.num_threads.map_or_else(|| "variable".to_owned(), |n| n.to_string());
            let version = pool.version.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
            row(&mut out, &name, &threads, &format!("{}{version}", pool.reported_by));
        }
        let joblib = probe.joblib_cpu_count.map_or_else(|| "not installed".to_owned(), |n| n.to_string());
        row(&mut out, "joblib.cpu_count()", &joblib, "");
        for (module, error) in &probe.stack_errors {
            let _ = writeln!(out, "note: {module} is installed but failed to import: {error}");
        }
        for (module, error) in &probe.library_pool_errors {
            let _ = writeln!(out, "note: {module} did not report its pools: {error}");
        }
    }

    if let Some(m) = &report.measured {
        let share = m.throttling.share.map_or_else(|| "n/a".to_owned(), |s| format!("{:.0}%", s * 100.0));
        let _ = writeln!(
            out,
            "throttling: {} of {} CFS periods throttled ({share}) during {:.1} s of BLAS work ({})",
            m.throttling.throttled,
            m.throttling.periods,
            m.seconds,
            m.cpu_stat.display()
        );
    }

    for note in &system.notes {
        let _ = writeln!(out, "note: {note}");
    }
    if report.is_safe() {
        out.push_str("result: safe\n");
    } else {
        let _ = writeln!(
            out,
            "result: unsafe ({} problem{}, listed on stderr)",
            report.verdicts.len(),
            if report.verdicts.len() == 1 { "" } else { "s" }
        );
    }
    out
}

fn row(out: &mut String, label: &str, value: &str, remark: &str) {
    let line = format!("  {label:<24} {value:<8} {remark}");
    out.push_str(line.trim_end());
    out.push('\n');
}
