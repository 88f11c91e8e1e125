//! One runtime check of one environment: read the limits and caps, run the probe, measure if
//! asked, and apply the rules.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::assess::{self, Observations};
use super::caps::Caps;
use super::cfs::{self, Throttling};
use super::effective::{self, Effective};
use super::env::Env;
use super::limit::{self, DeclaredLimit, Undeclared};
use super::probe::{self, ProbeError, ProbeReport, ProbeRequest};
use super::system::{self, Roots, SystemError, SystemView};
use super::verdict::Verdict;

/// How to check.
#[derive(Debug, Clone)]
pub struct CheckOptions<'a> {
    /// `--limit-env` (or the config key `runtime.limit-env`).
    pub limit_env: Option<&'a str>,
    /// The interpreter to probe with; `None` skips the probe.
    pub python: Option<&'a Path>,
    /// The workload's modules to import.
    pub imports: &'a [String],
    /// The probe's timeout.
    pub timeout: Duration,
    /// Seconds of BLAS work to measure throttling over, if any.
    pub measure: Option<f64>,
    /// The throttled share of periods above which `throttled` is reported.
    pub throttle_threshold: f64,
    /// Where to read the kernel's files.
    pub roots: &'a Roots,
}

/// Throttling measured during the probe's BLAS workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The difference between the two `cpu.stat` readings.
    pub throttling: Throttling,
    /// How long the workload ran, in seconds.
    pub seconds: f64,
    /// The `cpu.stat` that was read.
    pub cpu_stat: PathBuf,
    /// The share above which it is a problem.
    pub threshold: f64,
}

/// Everything one check found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The Downward API limit, or why there is none.
    pub declared: Result<DeclaredLimit, Undeclared>,
    /// The cgroup, quota, cpuset and NUMA layout.
    pub system: SystemView,
    /// The effective limit.
    pub effective: Option<Effective>,
    /// The cap variables.
    pub caps: Caps,
    /// The probe's report, unless skipped.
    pub probe: Option<ProbeReport>,
    /// The throttling measurement, with `--measure`.
    pub measured: Option<Measured>,
    /// The problems found; empty when safe.
    pub verdicts: Vec<Verdict>,
}

impl Report {
    /// Whether no problem was found.
    pub fn is_safe(&self) -> bool {
        self.verdicts.is_empty()
    }
}

/// Why a check could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A kernel file could not be trusted.
    #[error(transparent)]
    System(#[from] SystemError),
    /// The probe failed.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// `--measure` was asked for but cannot be done.
    #[error("--measure: {0}")]
    Measure(String),
}

/// Checks `env` against the limits found under `options.roots`.
pub fn check(env: &Env, options: &CheckOptions<'_>) -> Result<Report, CheckError> {
    let declared = limit::resolve(env, options.limit_env);
    let system = system::observe(options.roots)?;
    let effective =
        effective::effective(declared.as_ref().ok(), system.quota.as_ref(), system.cpuset.as_ref().map(Vec::len));
    let caps = Caps::read(env);

    let cpu_stat = match options.measure {
        Some(_) => Some(cpu_stat_path(&system)?),
        None => None,
    };
    let probe = match options.python {
        Some(python) => Some(probe::run(&ProbeRequest {
            python,
            imports: options.imports,
            measure: options.measure.zip(cpu_stat.as_deref()),
            timeout: options.timeout,
            env,
        })?),
        None => None,
    };
    let measured = match (&probe, cpu_stat) {
        (Some(report), Some(cpu_stat)) => Some(measured(report, cpu_stat, options.throttle_threshold)?),
        _ => None,
    };

    let verdicts = assess::assess(&Observations {
        declared: declared.as_ref(),
        quota: system.quota.as_ref(),
        effective,
        caps: &caps,
        probe: probe.as_ref(),
        throttling: measured.as_ref().map(|m| (m.throttling, m.threshold)),
    });
    Ok(Report { declared, system, effective, caps, probe, measured, verdicts })
}

/// The `cpu.stat` to read around the workload: the cgroup that sets the quota, else the
/// process's own.
fn cpu_stat_path(system: &SystemView) -> Result<PathBuf, CheckError> {
    let dir = match (&system.quota, &system.cgroup) {
        (Some(quota), _) => &quota.dir,
        (None, Some(cgroup)) => &cgroup.dir,
        (None, None) => {
            return Err(CheckError::Measure("no cpu cgroup found, so there is no cpu.stat to read".into()));
        }
    };
    Ok(dir.join("cpu.stat"))
}

fn measured(report: &ProbeReport, cpu_stat: PathBuf, threshold: f64) -> Result<Measured, CheckError> {
    let measurement =
        report.measure.as_ref().ok_or_else(|| CheckError::Measure("the probe returned no measurement".into()))?;
    let parse = |text: &str| {
        cfs::parse_cpu_stat(text).ok_or_else(|| {
            CheckError::Measure(format!("{} has no throttling counters (nr_periods, nr_throttled)", cpu_stat.display()))
        })
    };
    let before = parse(&measurement.cpu_stat_before)?;
    let after = parse(&measurement.cpu_stat_after)?;
    Ok(Measured {
        throttling: cfs::throttling_between(before, after),
        seconds: measurement.seconds,
        cpu_stat,
        threshold,
    })
}
