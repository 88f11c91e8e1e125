//! What the kernel says about this process's CPUs: its cgroup and CFS quota, its cpuset and the
//! NUMA nodes under it. Every file is read under a root that tests can point at a fixture tree.

use std::path::{Path, PathBuf};

use super::cfs::CfsError;
use super::cgroup::{self, CpuCgroup, Quota};
use super::cpuset::{self, NumaSpread};
use super::procfs;

/// The directories that stand for `/proc`, `/sys` and `/` (for mount points).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// Stands for `/proc`: `self/cgroup`, `self/mountinfo` and `self/status` are read under it.
    pub proc_root: PathBuf,
    /// Stands for `/` when following the mount points listed in mountinfo.
    pub cgroup_root: PathBuf,
    /// Stands for `/sys`: the NUMA nodes are read under it.
    pub sys_root: PathBuf,
}

impl Roots {
    /// The real roots: `/proc`, `/`, `/sys`.
    pub fn live() -> Self {
        Self { proc_root: PathBuf::from("/proc"), cgroup_root: PathBuf::from("/"), sys_root: PathBuf::from("/sys") }
    }

    /// Whether `proc_root` is the live `/proc`, so the cpuset can come from `sched_getaffinity`.
    pub fn is_live_proc(&self) -> bool {
        self.proc_root == Path::new("/proc")
    }
}

/// What was found.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemView {
    /// The CPU controller's cgroup, when it could be located.
    pub cgroup: Option<CpuCgroup>,
    /// The tightest CFS quota from the process's cgroup up to the mount point.
    pub quota: Option<Quota>,
    /// The CPUs the process may run on, sorted; `None` when unknown (a fixture without status).
    pub cpuset: Option<Vec<u32>>,
    /// How the cpuset spreads over NUMA nodes.
    pub numa: Option<NumaSpread>,
    /// How things were found, and what could not be.
    pub notes: Vec<String>,
}

/// A kernel file that exists but cannot be trusted: reading on would misstate the limit.
#[derive(Debug, thiserror::Error)]
pub enum SystemError {
    /// A quota file is unreadable or garbled.
    #[error(transparent)]
    Quota(#[from] CfsError),
    /// The cpuset could not be read.
    #[error("cannot read the cpuset: {0}")]
    Cpuset(String),
}

/// Reads the cgroup, quota, cpuset and NUMA layout under `roots`.
pub fn observe(roots: &Roots) -> Result<SystemView, SystemError> {
    let mut notes = Vec::new();
    let cgroup = locate_cgroup(roots, &mut notes);
    let quota = match &cgroup {
        Some(cgroup) => cgroup::tightest_quota(cgroup)?,
        None => None,
    };
    let cpuset = read_cpuset(roots, &mut notes)?;
    let numa = cpuset.as_deref().and_then(|cpus| cpuset::numa_spread(&roots.sys_root, cpus));
    if let Some(spread) = numa.as_ref().filter(|s| !s.is_even()) {
        let counts: Vec<String> = spread.nodes.iter().map(|n| format!("node {}: {}", n.node, n.cpus.len())).collect();
        notes.push(format!(
            "the cpuset spreads unevenly over NUMA nodes ({}): barrier-synchronised code runs \
             at the speed of the node with the fewest CPUs",
            counts.join(", ")
        ));
    }
    Ok(SystemView { cgroup, quota, cpuset, numa, notes })
}

fn locate_cgroup(roots: &Roots, notes: &mut Vec<String>) -> Option<CpuCgroup> {
    let read = |name: &str| {
        let path = roots.proc_root.join("self").join(name);
        std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let (lines, mounts) = match (read("cgroup"), read("mountinfo")) {
        (Ok(lines), Ok(mounts)) => (procfs::parse_proc_cgroup(&lines), procfs::parse_mountinfo(&mounts)),
        (Err(e), _) | (_, Err(e)) => {
            notes.push(format!("no CFS quota read: {e}"));
            return None;
        }
    };
    match cgroup::locate(&lines, &mounts, &roots.cgroup_root) {
        Ok(mut cgroup) => {
            notes.append(&mut cgroup.notes);
            Some(cgroup)
        }
        Err(e) => {
            notes.push(format!("no CFS quota read: {e}"));
            None
        }
    }
}

fn read_cpuset(roots: &Roots, notes: &mut Vec<String>) -> Result<Option<Vec<u32>>, SystemError> {
    if roots.is_live_proc() {
        return cpuset::current_affinity()
            .map(Some)
            .map_err(|e| SystemError::Cpuset(format!("sched_getaffinity: {e}")));
    }
    let path = roots.proc_root.join("self/status");
    let Ok(status) = std::fs::read(&path) else {
        notes.push(format!("no cpuset read: cannot read {}", path.display()));
        return Ok(None);
    };
    match cpuset::cpus_allowed_from_status(&String::from_utf8_lossy(&status)) {
        Some(Ok(cpus)) => Ok(Some(cpus)),
        Some(Err(e)) => Err(SystemError::Cpuset(format!("{}: {e}", path.display()))),
        None => {
            notes.push(format!("no cpuset read: no Cpus_allowed_list in {}", path.display()));
            Ok(None)
        }
    }
}
