//! The effective limit: the floor of the smallest bound among the declared limit, the CFS quota
//! and the cpuset, and never less than one thread.

use std::cmp::Ordering;

use super::cgroup::Quota;
use super::limit::DeclaredLimit;

/// One of the three sources of a CPU limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The Downward API variable.
    DownwardApi,
    /// The CFS quota of the cgroup.
    CgroupQuota,
    /// The CPUs the process may run on.
    Cpuset,
}

impl Bound {
    /// The name used in JSON and in verdict fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DownwardApi => "downward_api",
            Self::CgroupQuota => "cgroup_quota",
            Self::Cpuset => "cpuset",
        }
    }
}

/// The thread count every cap must stay within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effective {
    /// Whole CPUs: the floor of the smallest bound, at least 1.
    pub threads: u64,
    /// The bound that is the smallest (the first in the order above on a tie).
    pub source: Bound,
}

/// An exact CPU amount as a fraction `numerator / denominator`.
#[derive(Debug, Clone, Copy)]
struct Cpus {
    numerator: u64,
    denominator: u64,
}

impl Cpus {
    fn cmp(self, other: Self) -> Ordering {
        (u128::from(self.numerator) * u128::from(other.denominator))
            .cmp(&(u128::from(other.numerator) * u128::from(self.denominator)))
    }
}

/// Combines the bounds that are known; `None` when none is.
pub fn effective(declared: Option<&DeclaredLimit>, quota: Option<&Quota>, cpuset: Option<usize>) -> Option<Effective> {
    let bounds = [
        declared.map(|d| (Bound::DownwardApi, Cpus { numerator: d.millicores, denominator: 1000 })),
        quota.map(|q| (Bound::CgroupQuota, Cpus { numerator: q.quota_us, denominator: q.period_us })),
        cpuset.filter(|&n| n > 0).map(|n| (Bound::Cpuset, Cpus { numerator: n as u64, denominator: 1 })),
    ];
    let (source, smallest) = bounds
        .into_iter()
        .flatten()
        .reduce(|best, next| if next.1.cmp(best.1) == Ordering::Less { next } else { best })?;
    Some(Effective { threads: (smallest.numerator / smallest.denominator).max(1), source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn declared(millicores: u64) -> DeclaredLimit {
        DeclaredLimit { name: "CPU_LIMIT".into(), raw: String::new(), millicores }
    }

    fn quota(quota_us: u64, period_us: u64) -> Quota {
        Quota { quota_us, period_us, dir: PathBuf::new() }
    }

    #[test]
    fn takes_the_floor_of_the_smallest_bound() {
        let e = effective(Some(&declared(2000)), Some(&quota(150_000, 100_000)), Some(8)).unwrap();
        assert_eq!((e.threads, e.source), (1, Bound::CgroupQuota));
        let e = effective(Some(&declared(3500)), Some(&quota(400_000, 100_000)), Some(8)).unwrap();
        assert_eq!((e.threads, e.source), (3, Bound::DownwardApi));
        let e = effective(Some(&declared(16_000)), None, Some(2)).unwrap();
        assert_eq!((e.threads, e.source), (2, Bound::Cpuset));
    }

    #[test]
    fn ties_go_to_the_declared_limit_then_the_quota() {
        let e = effective(Some(&declared(2000)), Some(&quota(200_000, 100_000)), Some(2)).unwrap();
        assert_eq!(e.source, Bound::DownwardApi);
        let e = effective(None, Some(&quota(50_000, 25_000)), Some(2)).unwrap();
        assert_eq!(e.source, Bound::CgroupQuota);
    }

    #[test]
    fn never_goes_below_one_thread() {
        let e = effective(Some(&declared(250)), Some(&quota(25_000, 100_000)), Some(4)).unwrap();
        assert_eq!(e.threads, 1);
    }

    #[test]
    fn unknown_bounds_are_left_out() {
        assert_eq!(effective(None, None, None), None);
        assert_eq!(effective(None, None, Some(0)), None);
        assert_eq!(effective(None, None, Some(3)).unwrap().threads, 3);
    }
}
