//! Finding this process's CPU cgroup and the tightest CFS quota above it.
//!
//! The controller's hierarchy comes from `/proc/self/cgroup` (a v1 line naming `cpu`, else the
//! v2 `0::` line), its mount from `/proc/self/mountinfo`. The cgroup directory is the mount point
//! joined with the cgroup path made relative to the mount's root. This covers both layouts:
//!
//! - no cgroup namespace: the path (`/kubepods/pod1/ctr`) starts with the mount root
//!   (`/kubepods/pod1/ctr` for a container's bind mount, `/` for a host mount);
//! - a cgroup namespace: the path is `/` (or lies outside the mount root, as `/..`), so the
//!   mount point itself is the process's cgroup.
//!
//! From there the walk goes up to the mount point and keeps the smallest quota/period, since a
//! parent's quota (the pod cgroup) bounds every child (the container cgroup).

use std::path::{Component, Path, PathBuf};

use super::cfs::{self, Bandwidth, CfsError, Version};
use super::procfs::{CgroupLine, MountEntry};

/// Where this process's CPU controller lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuCgroup {
    /// The hierarchy's version.
    pub version: Version,
    /// The cgroup path as `/proc/self/cgroup` gives it.
    pub path: PathBuf,
    /// Where the hierarchy is mounted (under the cgroup root prefix).
    pub mount_point: PathBuf,
    /// The process's own cgroup directory (under the mount point).
    pub dir: PathBuf,
    /// Anything worth telling about how the directory was found.
    pub notes: Vec<String>,
}

/// Why no CPU cgroup could be located.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// `/proc/self/cgroup` names neither a v1 `cpu` hierarchy nor the v2 hierarchy.
    #[error("/proc/self/cgroup names no cpu controller hierarchy")]
    NoHierarchy,
    /// The hierarchy is not mounted where this process can see it.
    #[error("the cgroup v{0} cpu hierarchy is not mounted (no match in /proc/self/mountinfo)")]
    NotMounted(u8),
}

/// The tightest CFS quota found between the process's cgroup and the mount point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    /// Run time allowed per period, in microseconds.
    pub quota_us: u64,
    /// The period, in microseconds.
    pub period_us: u64,
    /// The cgroup directory that sets it.
    pub dir: PathBuf,
}

impl Quota {
    /// The quota in CPUs (`quota / period`).
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us as f64
    }

    /// The quota in whole CPUs, rounded down.
    pub fn whole_cpus(&self) -> u64 {
        self.quota_us / self.period_us
    }

    /// Whether this quota allows less CPU than `other`.
    pub fn is_tighter_than(&self, other: &Quota) -> bool {
        u128::from(self.quota_us) * u128::from(other.period_us)
            < u128::from(other.quota_us) * u128::from(self.period_us)
    }
}

/// Finds the CPU controller's cgroup directory; `cgroup_root` prefixes every mount point.
pub fn locate(lines: &[CgroupLine], mounts: &[MountEntry], cgroup_root: &Path) -> Result<CpuCgroup, LocateError> {
    let (version, line) = if let Some(line) = lines.iter().find(|l| l.has_controller("cpu")) {
        (Version::V1, line)
    } else if let Some(line) = lines.iter().find(|l| l.is_unified()) {
        (Version::V2, line)
    } else {
        return Err(LocateError::NoHierarchy);
    };
    let candidates: Vec<&MountEntry> = mounts
        .iter()
        .filter(|m| match version {
            Version::V1 => m.fs_type == "cgroup" && m.super_options.iter().any(|o| o == "cpu"),
            Version::V2 => m.fs_type == "cgroup2",
        })
        .collect();
    // Prefer the mount whose root is the longest prefix of the path; else the first one.
    let mount = candidates
        .iter()
        .filter(|m| relative_inside(&line.path, &m.root).is_some())
        .max_by_key(|m| m.root.components().count())
        .or_else(|| candidates.first())
        .ok_or(LocateError::NotMounted(version.number()))?;

    let mount_point = prefixed(cgroup_root, &mount.mount_point);
    let mut notes = Vec::new();
    let dir = match relative_inside(&line.path, &mount.root) {
        Some(relative) if relative.as_os_str().is_empty() => mount_point.clone(),
        Some(relative) => mount_point.join(relative),
        None => {
            notes.push(format!(
                "cgroup path {} lies outside the mount root {} (cgroup namespace): reading {}",
                line.path.display(),
                mount.root.display(),
                mount_point.display()
            ));
            mount_point.clone()
        }
    };
    let dir = if dir.is_dir() {
        dir
    } else {
        notes.push(format!("{} does not exist: reading {}", dir.display(), mount_point.display()));
        mount_point.clone()
    };
    Ok(CpuCgroup { version, path: line.path.clone(), mount_point, dir, notes })
}

/// `path` relative to `root`, when it lies inside it without `..` components.
fn relative_inside<'a>(path: &'a Path, root: &Path) -> Option<&'a Path> {
    let relative = path.strip_prefix(root).ok()?;
    relative.components().all(|c| matches!(c, Component::Normal(_))).then_some(relative)
}

/// Joins an absolute path from mountinfo under the directory that stands for `/`.
fn prefixed(root: &Path, absolute: &Path) -> PathBuf {
    match absolute.strip_prefix("/") {
        Ok(relative) => root.join(relative),
        Err(_) => root.join(absolute),
    }
}

/// Walks from the process's cgroup up to the mount point and returns the tightest quota.
pub fn tightest_quota(cgroup: &CpuCgroup) -> Result<Option<Quota>, CfsError> {
    let mut tightest: Option<Quota> = None;
    let mut dir = cgroup.dir.as_path();
    loop {
        if let Some(Bandwidth::Limited { quota_us, period_us }) = cfs::read_bandwidth(dir, cgroup.version)? {
            let quota = Quota { quota_us, period_us, dir: dir.to_owned() };
            if tightest.as_ref().is_none_or(|t| quota.is_tighter_than(t)) {
                tightest = Some(quota);
            }
        }
        if dir == cgroup.mount_point {
            break;
        }
        match dir.parent() {
            Some(parent) if parent.starts_with(&cgroup.mount_point) => dir = parent,
            _ => break,
        }
    }
    Ok(tightest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::{parse_mountinfo, parse_proc_cgroup};
    use std::fs;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let path = root.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, content).unwrap();
        }
        root
    }

    fn find(root: &Path, cgroup: &str, mountinfo: &str) -> Result<CpuCgroup, LocateError> {
        locate(&parse_proc_cgroup(cgroup.as_bytes()), &parse_mountinfo(mountinfo.as_bytes()), root)
    }

    const V1_HOST_MOUNT: &str = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";

    #[test]
    fn v1_host_mount_walks_up_to_the_tightest_parent() {
        let root = tree(&[
            ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"),
            ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"),
            ("sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpu.cfs_quota_us", "150000\n"),
            ("sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpu.cfs_period_us", "100000\n"),
            ("sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/ctr/cpu.cfs_quota_us", "400000\n"),
            ("sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/ctr/cpu.cfs_period_us", "100000\n"),
        ]);
        let cg = find(root.path(), "3:cpu,cpuacct:/kubepods/pod1/ctr\n0::/\n", V1_HOST_MOUNT).unwrap();
        assert_eq!(cg.version, Version::V1);
        assert!(cg.dir.ends_with("kubepods/pod1/ctr"));
        assert!(cg.notes.is_empty());
        let quota = tightest_quota(&cg).unwrap().unwrap();
        assert_eq!((quota.quota_us, quota.period_us), (150_000, 100_000));
        assert!(quota.dir.ends_with("kubepods/pod1"));
        assert_eq!(quota.whole_cpus(), 1);
    }

    #[test]
    fn container_bind_mount_strips_the_mount_root() {
        let root = tree(&[("sys/fs/cgroup/cpu.max", "200000 100000\n")]);
        let cg = find(
            root.path(),
            "0::/kubepods/pod1/ctr\n",
            "41 31 0:38 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
        )
        .unwrap();
        assert_eq!(cg.version, Version::V2);
        assert_eq!(cg.dir, root.path().join("sys/fs/cgroup"));
        let quota = tightest_quota(&cg).unwrap().unwrap();
        assert_eq!(quota.whole_cpus(), 2);
    }

    #[test]
    fn namespace_root_path_reads_the_mount_point() {
        let root = tree(&[("sys/fs/cgroup/cpu.max", "max 100000\n")]);
        let cg = find(root.path(), "0::/\n", "41 31 0:38 /kubepods/pod1/ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
            .unwrap();
        assert_eq!(cg.dir, root.path().join("sys/fs/cgroup"));
        assert_eq!(cg.notes.len(), 1, "{:?}", cg.notes);
        assert_eq!(tightest_quota(&cg).unwrap(), None);
    }

    #[test]
    fn a_path_escaping_the_mount_is_not_followed() {
        let root = tree(&[("sys/fs/cgroup/cpu.max", "50000 100000\n")]);
        let cg =
            find(root.path(), "0::/../../escape\n", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n").unwrap();
        assert_eq!(cg.dir, root.path().join("sys/fs/cgroup"));
        assert_eq!(tightest_quota(&cg).unwrap().unwrap().quota_us, 50_000);
    }

    #[test]
    fn a_missing_directory_falls_back_to_the_mount_point() {
        let root = tree(&[("sys/fs/cgroup/cpu.max", "100000 100000\n")]);
        let cg = find(root.path(), "0::/gone\n", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n").unwrap();
        assert_eq!(cg.dir, cg.mount_point);
        assert!(cg.notes[0].contains("does not exist"));
    }

    #[test]
    fn hybrid_prefers_the_v1_cpu_hierarchy() {
        let root = tree(&[
            ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "100000\n"),
            ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"),
        ]);
        let mountinfo = format!("{V1_HOST_MOUNT}41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
        let cg = find(root.path(), "0::/\n3:cpu,cpuacct:/\n", &mountinfo).unwrap();
        assert_eq!(cg.version, Version::V1);
        assert_eq!(tightest_quota(&cg).unwrap().unwrap().whole_cpus(), 1);
    }

    #[test]
    fn reports_what_cannot_be_located() {
        let root = Path::new("/nonexistent");
        assert_eq!(find(root, "1:name=systemd:/\n", V1_HOST_MOUNT), Err(LocateError::NoHierarchy));
        assert_eq!(find(root, "0::/\n", V1_HOST_MOUNT), Err(LocateError::NotMounted(2)));
        assert_eq!(find(root, "2:cpu:/\n", ""), Err(LocateError::NotMounted(1)));
    }

    #[test]
    fn garbage_in_a_quota_file_is_an_error_not_a_panic() {
        let root = tree(&[("sys/fs/cgroup/cpu.max", "lots 100000\n")]);
        let cg = find(root.path(), "0::/\n", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n").unwrap();
        assert!(tightest_quota(&cg).is_err());
    }

    #[test]
    fn compares_quotas_with_different_periods_exactly() {
        let q = |quota_us, period_us| Quota { quota_us, period_us, dir: PathBuf::new() };
        assert!(q(150_000, 100_000).is_tighter_than(&q(40_000, 25_000)));
        assert!(!q(40_000, 25_000).is_tighter_than(&q(150_000, 100_000)));
        assert!(!q(100_000, 100_000).is_tighter_than(&q(50_000, 50_000)));
    }
}
