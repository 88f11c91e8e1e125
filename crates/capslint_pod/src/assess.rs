//! The rules: from what was observed (limits, caps, loaded pools, throttling) to verdicts.
//!
//! Every rule is a pure function of [`Observations`], so each can be tested on hand-built input.

use super::caps::{self, CapValue, Caps};
use super::cfs::Throttling;
use super::cgroup::Quota;
use super::effective::Effective;
use super::limit::{DeclaredLimit, Undeclared};
use super::probe::{LibraryPool, Pool, ProbeReport};
use super::verdict::{Reason, Verdict};

/// Everything the rules look at.
#[derive(Debug, Clone, Copy)]
pub struct Observations<'a> {
    /// The Downward API limit, or why there is none.
    pub declared: Result<&'a DeclaredLimit, &'a Undeclared>,
    /// The tightest CFS quota, if any.
    pub quota: Option<&'a Quota>,
    /// The effective limit, if any bound is known.
    pub effective: Option<Effective>,
    /// The cap variables.
    pub caps: &'a Caps,
    /// The probe's report, unless the probe was skipped.
    pub probe: Option<&'a ProbeReport>,
    /// The measured throttling and the share above which it is a problem.
    pub throttling: Option<(Throttling, f64)>,
}

/// Applies every rule, in the order of [`Reason`].
pub fn assess(seen: &Observations<'_>) -> Vec<Verdict> {
    let limit = seen.effective.map(|e| e.threads);
    let pools = seen.probe.map(|p| (p.pools.as_slice(), p.library_pools.as_slice()));
    let joblib = seen.probe.and_then(|p| p.joblib_cpu_count);
    [
        seen.declared.err().map(undeclared),
        env_duplicate(seen.caps),
        caps_unset(seen.caps),
        limit.and_then(|limit| caps_exceed_limit(seen.caps, limit)),
        limit.zip(pools).and_then(|(limit, (pools, libraries))| cap_ineffective(seen.caps, limit, pools, libraries)),
        wait_policy_active(seen.caps),
        limit.and_then(|limit| process_parallelism_unbounded(seen.caps, limit, joblib)),
        seen.declared.ok().zip(seen.quota).and_then(|(d, q)| limit_mismatch(d, q)),
        seen.throttling.and_then(|(t, threshold)| throttled(t, threshold)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `cpu_limit_undeclared`: the limit is unknowable, which is as unsafe as exceeding it.
pub fn undeclared(why: &Undeclared) -> Verdict {
    let verdict = Verdict::new(Reason::CpuLimitUndeclared, why.to_string());
    match why.name() {
        Some(name) => verdict.field("limit_env", name),
        None => verdict,
    }
}

/// `env_duplicate`: the environment holds a variable the libraries read more than once; C's
/// `getenv` (libgomp, OpenBLAS, CPython) reads the first entry, other readers may take the last.
pub fn env_duplicate(caps: &Caps) -> Option<Verdict> {
    if caps.duplicates.is_empty() {
        return None;
    }
    let names = caps.duplicates.join(",");
    Some(
        Verdict::new(
            Reason::EnvDuplicate,
            format!(
                "the environment holds {} more than once: C's getenv (libgomp, OpenBLAS, CPython) reads the \
                 first entry, so the value checked may not be the value used; start through `capslint exec`, \
                 which passes one entry per name",
                caps.duplicates.join(", ")
            ),
        )
        .field("vars", names),
    )
}

/// `caps_unset`: a required cap is unset or empty, or any cap holds a value the libraries reject or
/// read differently.
pub fn caps_unset(caps: &Caps) -> Option<Verdict> {
    let problems: Vec<(&str, String)> = caps
        .caps
        .iter()
        .filter_map(|cap| {
            let problem = match (&cap.value, cap.required) {
                (CapValue::Unset, true) => format!("{} is not set", cap.name),
                (CapValue::Empty, true) => format!("{} is empty", cap.name),
                (CapValue::Invalid { raw, why }, _) => {
                    format!("{}={raw:?} is not read alike by the libraries: {why}", cap.name)
                }
                _ => return None,
            };
            Some((cap.name, problem))
        })
        .collect();
    if problems.is_empty() {
        return None;
    }
    let names: Vec<&str> = problems.iter().map(|(name, _)| *name).collect();
    let sentences: Vec<String> = problems.into_iter().map(|(_, p)| p).collect();
    Some(Verdict::new(Reason::CapsUnset, sentences.join("; ")).field("vars", names.join(",")))
}

/// `caps_exceed_limit`: a cap allows more threads or processes than the limit (for an OpenMP
/// list, its nested teams together).
pub fn caps_exceed_limit(caps: &Caps, limit: u64) -> Option<Verdict> {
    let over: Vec<(&str, String)> = caps
        .caps
        .iter()
        .filter_map(|cap| {
            let CapValue::Threads { raw, threads, note } = &cap.value else { return None };
            if *threads <= limit {
                return None;
            }
            let shown = match note {
                None => format!("{}={threads}", cap.name),
                Some(note) => format!("{}={raw} ({note})", cap.name),
            };
            Some((cap.name, shown))
        })
        .collect();
    if over.is_empty() {
        return None;
    }
    let values: Vec<&str> = over.iter().map(|(_, shown)| shown.as_str()).collect();
    let names: Vec<&str> = over.iter().map(|(n, _)| *n).collect();
    Some(
        Verdict::new(Reason::CapsExceedLimit, format!("{} above the limit of {limit}", values.join(", ")))
            .field("limit", limit)
            .field("vars", names.join(",")),
    )
}

/// A loaded pool as the rules compare it with the limit: a BLAS or OpenMP pool threadpoolctl sees,
/// or an ML library's own pool.
struct SeenPool {
    /// How it is named in the sentence (`libopenblas (blas openblas)`, `torch inter-op pool`).
    label: String,
    /// How it is named in the `pools=` field.
    key: String,
    threads: u64,
    /// The variables that size it, first one set wins.
    reads: &'static [&'static str],
}

fn seen_pools(pools: &[Pool], libraries: &[LibraryPool]) -> Vec<SeenPool> {
    let blas = pools.iter().filter_map(|pool| {
        Some(SeenPool {
            label: format!("{} ({} {})", pool.prefix(), pool.user_api(), pool.internal_api()),
            key: pool.prefix().to_owned(),
            threads: pool.num_threads()?,
            reads: caps::governing(pool.internal_api()),
        })
    });
    let ml = libraries.iter().filter(|pool| !caps::started_on_demand(&pool.library, &pool.pool)).filter_map(|pool| {
        Some(SeenPool {
            label: format!("{} {} pool ({})", pool.library, pool.pool, pool.reported_by),
            key: format!("{}:{}", pool.library, pool.pool),
            threads: pool.num_threads?,
            reads: caps::library_governing(&pool.library, &pool.pool),
        })
    });
    blas.chain(ml).collect()
}

/// `cap_ineffective`: a loaded pool (threadpoolctl's BLAS and OpenMP pools, and the pools torch,
/// numba, polars, ONNX Runtime, OpenCV and TensorFlow report) has more threads than the limit although caps
/// are set: the variable that governs it is within the limit (code raised the pool after import, or
/// the library ignores it), none of the set variables is one it reads (`MKL_NUM_THREADS` set while
/// numpy uses OpenBLAS). A pool started only on demand that no variable sizes (torch's inter-op
/// pool, [`caps::started_on_demand`]) is listed, not judged. A pool whose
/// variable is above the limit is `caps_exceed_limit`'s, and with no cap set at all it is
/// `caps_unset`'s.
pub fn cap_ineffective(caps: &Caps, limit: u64, pools: &[Pool], libraries: &[LibraryPool]) -> Option<Verdict> {
    if !caps.any_set() {
        return None;
    }
    let over: Vec<(SeenPool, String)> = seen_pools(pools, libraries)
        .into_iter()
        .filter(|pool| pool.threads > limit)
        .filter_map(|pool| {
            let why = match caps.first_set(pool.reads) {
                Some((_, value)) if value > limit => return None,
                Some((name, value)) => format!("although {name}={value}"),
                None if pool.reads.is_empty() => "and no variable sizes it: only code can".to_owned(),
                None => format!("it reads {}, none of them set", pool.reads.join(", ")),
            };
            Some((pool, why))
        })
        .collect();
    if over.is_empty() {
        return None;
    }
    let described: Vec<String> =
        over.iter().map(|(pool, why)| format!("{} runs {} threads {why}", pool.label, pool.threads)).collect();
    let keys: Vec<&str> = over.iter().map(|(pool, _)| pool.key.as_str()).collect();
    let most = over.iter().map(|(pool, _)| pool.threads).max().unwrap_or(limit);
    Some(
        Verdict::new(
            Reason::CapIneffective,
            format!(
                "{}; the limit is {limit}: the library ignores the cap, or code raised the pool \
                 after import",
                described.join("; ")
            ),
        )
        .field("limit", limit)
        .field("pools", keys.join(","))
        .field("num_threads", most),
    )
}

/// `wait_policy_active`: idle OpenMP threads spin: `OMP_WAIT_POLICY` is unset or not exactly
/// `passive`, or a knob (`GOMP_SPINCOUNT`, `KMP_BLOCKTIME`, `KMP_LIBRARY`) overrides it.
pub fn wait_policy_active(caps: &Caps) -> Option<Verdict> {
    if caps.spinning.is_empty() {
        return None;
    }
    let sentences: Vec<String> = caps
        .spinning
        .iter()
        .map(|spinning| match &spinning.raw {
            None => format!("{} is {}", spinning.name, spinning.why),
            Some(raw) => format!("{}={raw:?}: {}", spinning.name, spinning.why),
        })
        .collect();
    let names: Vec<&str> = caps.spinning.iter().map(|spinning| spinning.name).collect();
    let policy = caps.wait_policy.clone().unwrap_or_else(|| "unset".to_owned());
    let mut verdict = Verdict::new(Reason::WaitPolicyActive, sentences.join("; ")).field("omp_wait_policy", policy);
    if names.iter().any(|name| *name != caps::WAIT_POLICY) {
        verdict = verdict.field("vars", names.join(","));
    }
    Some(verdict)
}

/// `process_parallelism_unbounded`: `LOKY_MAX_CPU_COUNT` is unset or above the limit, or
/// `joblib.cpu_count()` is above it.
pub fn process_parallelism_unbounded(caps: &Caps, limit: u64, joblib_cpu_count: Option<u64>) -> Option<Verdict> {
    let loky = caps.get(caps::LOKY_MAX_CPU_COUNT).map(|cap| &cap.value);
    let mut problems = Vec::new();
    match loky.and_then(CapValue::threads) {
        None => problems.push("LOKY_MAX_CPU_COUNT is not set to a count".to_owned()),
        Some(n) if n > limit => problems.push(format!("LOKY_MAX_CPU_COUNT={n}")),
        Some(_) => {}
    }
    if let Some(n) = joblib_cpu_count.filter(|&n| n > limit) {
        problems.push(format!("joblib.cpu_count()={n}"));
    }
    if problems.is_empty() {
        return None;
    }
    let mut verdict = Verdict::new(
        Reason::ProcessParallelismUnbounded,
        format!("{}: loky/joblib may start more worker processes than the limit of {limit}", problems.join(", ")),
    )
    .field("limit", limit);
    if let Some(raw) = loky.and_then(CapValue::raw) {
        verdict = verdict.field("loky_max_cpu_count", raw);
    }
    if let Some(n) = joblib_cpu_count {
        verdict = verdict.field("joblib_cpu_count", n);
    }
    Some(verdict)
}

/// `limit_mismatch`: the declared limit is not the CFS quota (typically `limits.cpu: 1500m`
/// exposed as `2` because the Downward API rounds up).
pub fn limit_mismatch(declared: &DeclaredLimit, quota: &Quota) -> Option<Verdict> {
    let declared_scaled = u128::from(declared.millicores) * u128::from(quota.period_us);
    let quota_scaled = u128::from(quota.quota_us) * 1000;
    if declared_scaled == quota_scaled {
        return None;
    }
    let quota_cpus = format_cpus(quota.cpus());
    let rounded_up =
        declared.millicores.is_multiple_of(1000) && declared.whole_cpus() == quota.quota_us.div_ceil(quota.period_us);
    let why = if rounded_up {
        "the Downward API rounds limits.cpu up to whole CPUs: use whole-CPU limits"
    } else {
        "the variable does not carry the limit the cgroup enforces"
    };
    Some(
        Verdict::new(
            Reason::LimitMismatch,
            format!(
                "{}={} but the CFS quota is {quota_cpus} CPU ({}/{} us): {why}",
                declared.name, declared.raw, quota.quota_us, quota.period_us
            ),
        )
        .field("limit_env", &declared.name)
        .field("downward_api", format_cpus(declared.cpus()))
        .field("cgroup_quota", quota_cpus),
    )
}

/// `throttled`: the workload was throttled in more than `threshold` of the CFS periods.
pub fn throttled(throttling: Throttling, threshold: f64) -> Option<Verdict> {
    let share = throttling.share?;
    if share <= threshold {
        return None;
    }
    Some(
        Verdict::new(
            Reason::Throttled,
            format!(
                "{} of {} CFS periods throttled ({:.0}%, above {:.0}%) during the BLAS workload",
                throttling.throttled,
                throttling.periods,
                share * 100.0,
                threshold * 100.0
            ),
        )
        .field("share", format!("{share:.2}"))
        .field("nr_periods", throttling.periods)
        .field("nr_throttled", throttling.throttled)
        .field("throttled_usec", throttling.throttled_usec),
    )
}

/// Formats CPUs without trailing zeros: `1`, `1.5`, `0.25`.
pub fn format_cpus(cpus: f64) -> String {
    let text = format!("{cpus:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effective::Bound;
    use crate::env::Env;
    use std::path::PathBuf;

    const SAFE: [(&str, &str); 6] = [
        ("OMP_NUM_THREADS", "1"),
        ("OPENBLAS_NUM_THREADS", "1"),
        ("MKL_NUM_THREADS", "1"),
        ("NUMEXPR_NUM_THREADS", "1"),
        ("LOKY_MAX_CPU_COUNT", "1"),
        ("OMP_WAIT_POLICY", "passive"),
    ];

    /// Variables to change from [`SAFE`]: `None` removes one.
    type Changes<'a> = &'a [(&'a str, Option<&'a str>)];

    fn caps_with(changes: Changes<'_>) -> Caps {
        let mut vars: Vec<(&str, &str)> = SAFE.to_vec();
        for (name, value) in changes {
            vars.retain(|(n, _)| n != name);
            if let Some(value) = value {
                vars.push((name, value));
            }
        }
        Caps::read(&vars.into_iter().collect::<Env>())
    }

    fn declared(raw: &str, millicores: u64) -> DeclaredLimit {
        DeclaredLimit { name: "CPU_LIMIT".into(), raw: raw.into(), millicores }
    }

    fn quota(quota_us: u64) -> Quota {
        Quota { quota_us, period_us: 100_000, dir: PathBuf::from("/sys/fs/cgroup") }
    }

    fn pool(threads: u64) -> Pool {
        serde_json::from_value(serde_json::json!({
            "user_api": "blas", "internal_api": "openblas", "prefix": "libopenblas",
            "num_threads": threads, "filepath": "/x.so", "version": "0.3"
        }))
        .unwrap()
    }

    fn report(pools: Vec<Pool>, joblib: Option<u64>) -> ProbeReport {
        ProbeReport {
            python: "3.11".into(),
            executable: "python".into(),
            imported: vec![],
            stack: vec![],
            stack_errors: Default::default(),
            threadpoolctl_version: None,
            pools,
            library_pools: vec![],
            library_pool_errors: Default::default(),
            joblib_version: None,
            joblib_cpu_count: joblib,
            measure: None,
        }
    }

    fn reasons(caps: &Caps, declared: &DeclaredLimit, probe: Option<&ProbeReport>) -> Vec<Reason> {
        let q = quota(100_000);
        let seen = Observations {
            declared: Ok(declared),
            quota: Some(&q),
            effective: Some(Effective { threads: 1, source: Bound::DownwardApi }),
            caps,
            probe,
            throttling: None,
        };
        assess(&seen).into_iter().map(|v| v.reason).collect()
    }

    #[test]
    fn safe_caps_give_no_verdict() {
        let probe = report(vec![pool(1)], Some(1));
        assert_eq!(reasons(&caps_with(&[]), &declared("1", 1000), Some(&probe)), []);
    }

    #[test]
    fn each_unsafe_setting_gives_its_reason() {
        let one = declared("1", 1000);
        let probe = report(vec![pool(1)], Some(1));
        let cases: [(Changes, &[Reason]); 7] = [
            (&[("MKL_NUM_THREADS", None)], &[Reason::CapsUnset]),
            (&[("MKL_NUM_THREADS", Some(""))], &[Reason::CapsUnset]),
            (&[("NUMBA_NUM_THREADS", Some("many"))], &[Reason::CapsUnset]),
            (&[("OMP_NUM_THREADS", Some("2"))], &[Reason::CapsExceedLimit]),
            (&[("GOTO_NUM_THREADS", Some("8"))], &[Reason::CapsExceedLimit]),
            (&[("OMP_WAIT_POLICY", Some("active"))], &[Reason::WaitPolicyActive]),
            (&[("LOKY_MAX_CPU_COUNT", Some("4"))], &[Reason::CapsExceedLimit, Reason::ProcessParallelismUnbounded]),
        ];
        for (changes, expected) in cases {
            assert_eq!(reasons(&caps_with(changes), &one, Some(&probe)), expected, "{changes:?}");
        }
        assert_eq!(reasons(&caps_with(&[("OMP_WAIT_POLICY", None)]), &one, Some(&probe)), [Reason::WaitPolicyActive]);
        assert_eq!(
            reasons(&caps_with(&[("LOKY_MAX_CPU_COUNT", None)]), &one, Some(&probe)),
            [Reason::CapsUnset, Reason::ProcessParallelismUnbounded]
        );
    }

    #[test]
    fn a_pool_above_its_capped_variable_is_ineffective() {
        let one = declared("1", 1000);
        let big = report(vec![pool(1), pool(2)], Some(1));
        let caps = caps_with(&[]);
        assert_eq!(reasons(&caps, &one, Some(&big)), [Reason::CapIneffective]);
        let verdict = cap_ineffective(&caps, 1, &big.pools, &[]).unwrap();
        assert!(
            verdict.detail.starts_with("libopenblas (blas openblas) runs 2 threads although OPENBLAS_NUM_THREADS=1;"),
            "{}",
            verdict.detail
        );
        assert!(verdict.to_logfmt().contains(" pools=libopenblas num_threads=2 "));
        // OpenBLAS falls back to OMP_NUM_THREADS when its own variable is unset.
        let caps = caps_with(&[("OPENBLAS_NUM_THREADS", None)]);
        assert_eq!(reasons(&caps, &one, Some(&big)), [Reason::CapsUnset, Reason::CapIneffective]);
        let detail = cap_ineffective(&caps, 1, &big.pools, &[]).unwrap().detail;
        assert!(detail.contains("although OMP_NUM_THREADS=1"), "{detail}");
        // No probe, no pool check.
        assert_eq!(reasons(&caps_with(&[]), &one, None), []);
    }

    #[test]
    fn a_pool_that_reads_none_of_the_set_variables_is_ineffective() {
        // MKL_NUM_THREADS is set, but numpy uses OpenBLAS.
        let env: Env = [("MKL_NUM_THREADS", "1")].into_iter().collect();
        let caps = Caps::read(&env);
        let verdict = cap_ineffective(&caps, 1, &[pool(2)], &[]).unwrap();
        assert!(
            verdict
                .detail
                .contains("it reads OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS, OMP_NUM_THREADS, none of them set"),
            "{}",
            verdict.detail
        );
    }

    #[test]
    fn a_pool_explained_by_another_verdict_is_not_ineffective() {
        let one = declared("1", 1000);
        let big = report(vec![pool(2)], Some(1));
        // The variable itself is above the limit.
        let caps = caps_with(&[("OPENBLAS_NUM_THREADS", Some("2"))]);
        assert_eq!(reasons(&caps, &one, Some(&big)), [Reason::CapsExceedLimit]);
        let caps = caps_with(&[("OPENBLAS_NUM_THREADS", None), ("OMP_NUM_THREADS", Some("4"))]);
        assert_eq!(reasons(&caps, &one, Some(&big)), [Reason::CapsUnset, Reason::CapsExceedLimit]);
        // Nothing is capped at all.
        assert!(cap_ineffective(&Caps::read(&Env::default()), 1, &big.pools, &[]).is_none());
    }

    fn library_pool(library: &str, pool: &str, threads: Option<u64>) -> LibraryPool {
        LibraryPool {
            library: library.into(),
            pool: pool.into(),
            num_threads: threads,
            reported_by: "its getter".into(),
            version: None,
        }
    }

    #[test]
    fn an_ml_library_pool_above_the_limit_is_ineffective() {
        let one = declared("1", 1000);
        // numba's pool follows NUMBA_NUM_THREADS, which is not set: the required caps do not reach it.
        let mut probe = report(vec![pool(1)], Some(1));
        probe.library_pools = vec![library_pool("numba", "parallel", Some(2))];
        assert_eq!(reasons(&caps_with(&[]), &one, Some(&probe)), [Reason::CapIneffective]);
        let detail = cap_ineffective(&caps_with(&[]), 1, &[], &probe.library_pools).unwrap();
        assert!(
            detail.detail.contains(
                "numba parallel pool (its getter) runs 2 threads it reads NUMBA_NUM_THREADS, none of them set"
            ),
            "{}",
            detail.detail
        );
        assert!(detail.to_logfmt().contains(" pools=numba:parallel num_threads=2 "), "{}", detail.to_logfmt());
        // Set within the limit, the pool follows it.
        probe.library_pools = vec![library_pool("numba", "parallel", Some(1))];
        assert_eq!(reasons(&caps_with(&[("NUMBA_NUM_THREADS", Some("1"))]), &one, Some(&probe)), []);
        // torch's inter-op pool starts only with inter-op work and no variable sizes it: not judged.
        probe.library_pools =
            vec![library_pool("torch", "intra-op", Some(1)), library_pool("torch", "inter-op", Some(4))];
        assert!(cap_ineffective(&caps_with(&[]), 1, &[], &probe.library_pools).is_none());
        // torch's intra-op pool follows MKL_NUM_THREADS before OMP_NUM_THREADS.
        probe.library_pools = vec![library_pool("torch", "intra-op", Some(2))];
        let detail = cap_ineffective(&caps_with(&[]), 1, &[], &probe.library_pools).unwrap().detail;
        assert!(detail.contains("although MKL_NUM_THREADS=1"), "{detail}");
        // A size the library leaves to its variable is judged through the variable.
        probe.library_pools = vec![library_pool("tensorflow", "intra-op", None)];
        assert_eq!(
            reasons(&caps_with(&[("TF_NUM_INTRAOP_THREADS", Some("2"))]), &one, Some(&probe)),
            [Reason::CapsExceedLimit]
        );
        assert_eq!(reasons(&caps_with(&[]), &one, Some(&probe)), []);
    }

    #[test]
    fn joblib_above_the_limit_is_unbounded_process_parallelism() {
        let probe = report(vec![], Some(2));
        assert_eq!(reasons(&caps_with(&[]), &declared("1", 1000), Some(&probe)), [Reason::ProcessParallelismUnbounded]);
    }

    #[test]
    fn the_declared_limit_must_match_the_quota() {
        assert!(limit_mismatch(&declared("1", 1000), &quota(100_000)).is_none());
        assert!(limit_mismatch(&declared("1500m", 1500), &quota(150_000)).is_none());
        let rounded = limit_mismatch(&declared("2", 2000), &quota(150_000)).unwrap();
        assert!(rounded.detail.contains("rounds limits.cpu up"), "{}", rounded.detail);
        assert!(rounded.to_logfmt().contains(" downward_api=2 cgroup_quota=1.5 "), "{}", rounded.to_logfmt());
        let other = limit_mismatch(&declared("1", 1000), &quota(200_000)).unwrap();
        assert!(other.detail.contains("does not carry"), "{}", other.detail);
        // Different periods, same CPUs.
        let q = Quota { quota_us: 50_000, period_us: 50_000, dir: PathBuf::new() };
        assert!(limit_mismatch(&declared("1", 1000), &q).is_none());
    }

    #[test]
    fn an_undeclared_limit_is_reported_with_the_name_tried() {
        let caps = caps_with(&[]);
        let why = Undeclared::NotSet { name: "POD_CPU".into() };
        let seen = Observations {
            declared: Err(&why),
            quota: None,
            effective: None,
            caps: &caps,
            probe: None,
            throttling: None,
        };
        let verdicts = assess(&seen);
        assert_eq!(verdicts.len(), 1);
        assert!(verdicts[0].to_logfmt().contains("reason=cpu_limit_undeclared limit_env=POD_CPU "));
    }

    #[test]
    fn throttling_above_the_threshold_is_reported() {
        let t = |throttled, periods| Throttling {
            periods,
            throttled,
            throttled_usec: 0,
            share: (periods > 0).then(|| throttled as f64 / periods as f64),
        };
        assert!(throttled(t(9, 10), 0.25).is_some());
        assert!(throttled(t(2, 10), 0.25).is_none());
        assert!(throttled(t(0, 0), 0.25).is_none());
    }

    #[test]
    fn formats_cpus_compactly() {
        assert_eq!(format_cpus(1.0), "1");
        assert_eq!(format_cpus(1.5), "1.5");
        assert_eq!(format_cpus(0.25), "0.25");
        assert_eq!(format_cpus(2.0 / 3.0), "0.667");
    }
}
