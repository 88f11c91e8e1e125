//! The CFS bandwidth files of one cgroup: the quota (`cpu.max` on v2, `cpu.cfs_quota_us` and
//! `cpu.cfs_period_us` on v1) and the throttling counters (`cpu.stat`).

use std::io;
use std::path::{Path, PathBuf};

/// The cgroup version of a hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// A v1 hierarchy with the `cpu` controller.
    V1,
    /// The v2 unified hierarchy.
    V2,
}

impl Version {
    /// The version as a number, 1 or 2.
    pub fn number(self) -> u8 {
        match self {
            Self::V1 => 1,
            Self::V2 => 2,
        }
    }
}

/// The bandwidth limit set on one cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bandwidth {
    /// No quota (`max` on v2, `-1` on v1).
    Unlimited,
    /// `quota_us` of CPU time per `period_us` of wall time.
    Limited {
        /// Run time allowed per period, in microseconds.
        quota_us: u64,
        /// The period, in microseconds.
        period_us: u64,
    },
}

/// A bandwidth file that could not be read or understood.
#[derive(Debug, thiserror::Error)]
pub enum CfsError {
    /// The file exists but reading it failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The file's content is not what the kernel writes.
    #[error("{path}: unexpected content {content:?}: {expected}")]
    Content {
        /// The file.
        path: PathBuf,
        /// What was found (trimmed).
        content: String,
        /// What was expected.
        expected: &'static str,
    },
}

/// Reads a file that may legitimately be missing: `Ok(None)` when it does not exist.
fn read_optional(path: &Path) -> Result<Option<String>, CfsError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CfsError::Read { path: path.to_owned(), source }),
    }
}

fn content_error(path: &Path, content: &str, expected: &'static str) -> CfsError {
    CfsError::Content { path: path.to_owned(), content: content.trim().chars().take(80).collect(), expected }
}

/// Reads the bandwidth limit of the cgroup directory `dir`; `Ok(None)` when it has no such files.
pub fn read_bandwidth(dir: &Path, version: Version) -> Result<Option<Bandwidth>, CfsError> {
    match version {
        Version::V2 => {
            let path = dir.join("cpu.max");
            let Some(text) = read_optional(&path)? else {
                return Ok(None);
            };
            parse_cpu_max(&text)
                .map(Some)
                .ok_or_else(|| content_error(&path, &text, "expected \"max PERIOD\" or \"QUOTA PERIOD\""))
        }
        Version::V1 => {
            let quota_path = dir.join("cpu.cfs_quota_us");
            let period_path = dir.join("cpu.cfs_period_us");
            let (Some(quota), Some(period)) = (read_optional(&quota_path)?, read_optional(&period_path)?) else {
                return Ok(None);
            };
            let period_us = parse_period(&period)
                .ok_or_else(|| content_error(&period_path, &period, "expected a positive number of microseconds"))?;
            let bandwidth = parse_v1_quota(&quota, period_us).ok_or_else(|| {
                content_error(&quota_path, &quota, "expected -1 or a positive number of microseconds")
            })?;
            Ok(Some(bandwidth))
        }
    }
}

/// Parses v2 `cpu.max`: `max 100000` or `150000 100000`.
pub fn parse_cpu_max(text: &str) -> Option<Bandwidth> {
    let mut fields = text.split_whitespace();
    let (quota, period) = (fields.next()?, fields.next()?);
    if fields.next().is_some() {
        return None;
    }
    let period_us = parse_period(period)?;
    if quota == "max" {
        return Some(Bandwidth::Unlimited);
    }
    let quota_us = parse_period(quota)?;
    Some(Bandwidth::Limited { quota_us, period_us })
}

/// Parses v1 `cpu.cfs_quota_us` (`-1` for no quota) given the period already read.
pub fn parse_v1_quota(text: &str, period_us: u64) -> Option<Bandwidth> {
    let text = text.trim();
    if text == "-1" {
        return Some(Bandwidth::Unlimited);
    }
    Some(Bandwidth::Limited { quota_us: parse_period(text)?, period_us })
}

fn parse_period(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|&n: &u64| n > 0)
}

/// The throttling counters of `cpu.stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuStat {
    /// Enforcement periods that elapsed while the cgroup had runnable tasks.
    pub nr_periods: u64,
    /// Periods in which the cgroup ran out of quota.
    pub nr_throttled: u64,
    /// Total time throttled, in microseconds (v1's `throttled_time` is in nanoseconds).
    pub throttled_usec: u64,
}

/// Parses `cpu.stat` (v1 or v2 keys); `None` when the throttling counters are absent.
pub fn parse_cpu_stat(text: &str) -> Option<CpuStat> {
    let (mut periods, mut throttled, mut usec) = (None, None, None);
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(key), Some(value), None) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let Ok(value) = value.parse::<u64>() else {
            continue;
        };
        match key {
            "nr_periods" => periods = Some(value),
            "nr_throttled" => throttled = Some(value),
            "throttled_usec" => usec = Some(value),
            "throttled_time" => usec = usec.or(Some(value / 1000)),
            _ => {}
        }
    }
    Some(CpuStat { nr_periods: periods?, nr_throttled: throttled?, throttled_usec: usec.unwrap_or(0) })
}

/// What happened between two `cpu.stat` readings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throttling {
    /// Periods that elapsed.
    pub periods: u64,
    /// Periods that were throttled.
    pub throttled: u64,
    /// Time throttled, in microseconds.
    pub throttled_usec: u64,
    /// `throttled / periods`; `None` when no period elapsed (no quota, or nothing ran).
    pub share: Option<f64>,
}

/// The difference between two readings of the same `cpu.stat` (saturating: counters only grow).
pub fn throttling_between(before: CpuStat, after: CpuStat) -> Throttling {
    let periods = after.nr_periods.saturating_sub(before.nr_periods);
    let throttled = after.nr_throttled.saturating_sub(before.nr_throttled);
    Throttling {
        periods,
        throttled,
        throttled_usec: after.throttled_usec.saturating_sub(before.throttled_usec),
        share: (periods > 0).then(|| throttled.min(periods) as f64 / periods as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_max() {
        assert_eq!(parse_cpu_max("max 100000\n"), Some(Bandwidth::Unlimited));
        assert_eq!(
            parse_cpu_max("150000 100000\n"),
            Some(Bandwidth::Limited { quota_us: 150_000, period_us: 100_000 })
        );
        for garbage in [
            "",
            "max",
            "150000",
            "max 0",
            "0 100000",
            "-1 100000",
            "1.5 100000",
            "a b",
            "1 2 3",
            "max max",
            "99999999999999999999999 100000",
        ] {
            assert_eq!(parse_cpu_max(garbage), None, "{garbage:?}");
        }
    }

    #[test]
    fn parses_v1_quota() {
        assert_eq!(parse_v1_quota("-1\n", 100_000), Some(Bandwidth::Unlimited));
        assert_eq!(
            parse_v1_quota("50000\n", 100_000),
            Some(Bandwidth::Limited { quota_us: 50_000, period_us: 100_000 })
        );
        for garbage in ["", "-2", "0", "max", "1e5", " - 1"] {
            assert_eq!(parse_v1_quota(garbage, 100_000), None, "{garbage:?}");
        }
    }

    #[test]
    fn parses_v1_and_v2_cpu_stat() {
        let v1 = "nr_periods 10\nnr_throttled 4\nthrottled_time 2500000\nnr_bursts 0\n";
        assert_eq!(parse_cpu_stat(v1), Some(CpuStat { nr_periods: 10, nr_throttled: 4, throttled_usec: 2500 }));
        let v2 = "usage_usec 5\nuser_usec 3\nsystem_usec 2\nnr_periods 7\nnr_throttled 1\nthrottled_usec 900\n";
        assert_eq!(parse_cpu_stat(v2), Some(CpuStat { nr_periods: 7, nr_throttled: 1, throttled_usec: 900 }));
        // v2 without the cpu controller enabled has no throttling counters.
        assert_eq!(parse_cpu_stat("usage_usec 5\nuser_usec 3\n"), None);
        assert_eq!(parse_cpu_stat("nr_periods x\nnr_throttled 1\n"), None);
        assert_eq!(parse_cpu_stat("\u{0}\u{1}garbage"), None);
    }

    #[test]
    fn computes_the_throttled_share() {
        let stat = |p, t, u| CpuStat { nr_periods: p, nr_throttled: t, throttled_usec: u };
        let t = throttling_between(stat(10, 2, 100), stat(20, 7, 600));
        assert_eq!((t.periods, t.throttled, t.throttled_usec), (10, 5, 500));
        assert_eq!(t.share, Some(0.5));
        assert_eq!(throttling_between(stat(3, 1, 0), stat(3, 1, 0)).share, None);
        // A counter reset (the cgroup was recreated) must not underflow.
        let reset = throttling_between(stat(50, 40, 9), stat(5, 1, 1));
        assert_eq!((reset.periods, reset.share), (0, None));
    }

    #[test]
    fn reads_files_and_reports_missing_ones_as_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_bandwidth(dir.path(), Version::V2).unwrap().is_none());
        assert!(read_bandwidth(dir.path(), Version::V1).unwrap().is_none());
        std::fs::write(dir.path().join("cpu.max"), "garbage\n").unwrap();
        let err = read_bandwidth(dir.path(), Version::V2).unwrap_err();
        assert!(err.to_string().contains("unexpected content \"garbage\""), "{err}");
        std::fs::write(dir.path().join("cpu.cfs_quota_us"), "200000\n").unwrap();
        std::fs::write(dir.path().join("cpu.cfs_period_us"), "100000\n").unwrap();
        assert_eq!(
            read_bandwidth(dir.path(), Version::V1).unwrap(),
            Some(Bandwidth::Limited { quota_us: 200_000, period_us: 100_000 })
        );
    }
}
