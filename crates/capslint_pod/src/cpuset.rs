//! The CPUs this process may run on, and how they spread over NUMA nodes.
//!
//! The live process asks the kernel (`sched_getaffinity`); a fixture tree gives the same list as
//! `Cpus_allowed_list` in `<proc-root>/self/status`. NUMA nodes come from
//! `<sys-root>/devices/system/node/node*/cpulist`. Barrier-synchronised code runs at the speed of
//! its slowest worker, so a cpuset spread unevenly over nodes is worth seeing (KEP-2902).

use std::io;
use std::mem::size_of;
use std::path::Path;

/// The highest CPU number accepted in a list; the kernel's own limit (`NR_CPUS`) is 8192.
const MAX_CPU: u32 = 65_535;

/// Why a CPU list (`0-3,8,10-11`) could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a CPU list ({0:?}): expected e.g. 0-3,8,10-11")]
pub struct CpuListError(pub String);

/// Parses a kernel CPU list (`0-3,8,10-11`) into sorted, distinct CPU numbers.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, CpuListError> {
    let error = || CpuListError(text.trim().chars().take(80).collect());
    let number = |s: &str| -> Result<u32, CpuListError> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(error());
        }
        s.parse().ok().filter(|&n| n <= MAX_CPU).ok_or_else(error)
    };
    let mut cpus = Vec::new();
    for item in text.trim().split(',').filter(|item| !item.is_empty()) {
        let (first, last) = match item.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => (number(item)?, number(item)?),
        };
        if first > last {
            return Err(error());
        }
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats sorted CPU numbers as a kernel CPU list (`0-3,8`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &cpu in cpus {
        match ranges.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(cpu) => *last = cpu,
            _ => ranges.push((cpu, cpu)),
        }
    }
    ranges.iter().map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") }).collect::<Vec<_>>().join(",")
}

/// The CPUs the current process may run on, from `sched_getaffinity(2)`.
pub fn current_affinity() -> io::Result<Vec<u32>> {
    let word_bits = libc::c_ulong::BITS as usize;
    let mut words = 1024 / word_bits;
    loop {
        let mut mask: Vec<libc::c_ulong> = vec![0; words];
        // SAFETY: `mask` is a writable buffer of exactly the size passed; the kernel writes at
        // most that many bytes of CPU mask into it.
        let rc = unsafe {
            libc::sched_getaffinity(0, words * size_of::<libc::c_ulong>(), mask.as_mut_ptr().cast::<libc::cpu_set_t>())
        };
        if rc == 0 {
            let cpus = mask
                .iter()
                .enumerate()
                .flat_map(|(w, &word)| {
                    (0..word_bits).filter(move |bit| word >> bit & 1 == 1).map(move |bit| (w * word_bits + bit) as u32)
                })
                .collect();
            return Ok(cpus);
        }
        let error = io::Error::last_os_error();
        // EINVAL: the mask is smaller than the kernel's; try a larger one.
        if error.raw_os_error() == Some(libc::EINVAL) && words * word_bits <= MAX_CPU as usize {
            words *= 2;
            continue;
        }
        return Err(error);
    }
}

/// Reads `Cpus_allowed_list` from the text of a `/proc/<pid>/status` file.
pub fn cpus_allowed_from_status(status: &str) -> Option<Result<Vec<u32>, CpuListError>> {
    status.lines().find_map(|line| line.strip_prefix("Cpus_allowed_list:")).map(parse_cpu_list)
}

/// The cpuset's CPUs on one NUMA node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShare {
    /// The node number.
    pub node: u32,
    /// The cpuset's CPUs that belong to it.
    pub cpus: Vec<u32>,
}

/// How a cpuset spreads over NUMA nodes: only the nodes it uses are listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaSpread {
    /// The nodes the cpuset spans, by node number.
    pub nodes: Vec<NodeShare>,
}

impl NumaSpread {
    /// Whether every spanned node holds the same number of the cpuset's CPUs.
    pub fn is_even(&self) -> bool {
        self.nodes.windows(2).all(|pair| pair[0].cpus.len() == pair[1].cpus.len())
    }
}

/// Reads the NUMA layout under `sys_root` and intersects it with `cpuset`; `None` when the
/// system exposes no node directory.
pub fn numa_spread(sys_root: &Path, cpuset: &[u32]) -> Option<NumaSpread> {
    let entries = std::fs::read_dir(sys_root.join("devices/system/node")).ok()?;
    let mut nodes: Vec<NodeShare> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let node = name.to_str()?.strip_prefix("node")?.parse().ok()?;
            let list = std::fs::read_to_string(entry.path().join("cpulist")).ok()?;
            let on_node = parse_cpu_list(&list).ok()?;
            let cpus: Vec<u32> = cpuset.iter().copied().filter(|cpu| on_node.binary_search(cpu).is_ok()).collect();
            (!cpus.is_empty()).then_some(NodeShare { node, cpus })
        })
        .collect();
    nodes.sort_by_key(|n| n.node);
    Some(NumaSpread { nodes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_formats_cpu_lists() {
        assert_eq!(parse_cpu_list("0-2,4-6\n"), Ok(vec![0, 1, 2, 4, 5, 6]));
        assert_eq!(parse_cpu_list("3,1,1-2"), Ok(vec![1, 2, 3]));
        assert_eq!(parse_cpu_list("\n"), Ok(vec![]));
        assert_eq!(format_cpu_list(&[0, 1, 2, 4, 5, 6, 9]), "0-2,4-6,9");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[u32::MAX]), u32::MAX.to_string());
    }

    #[test]
    fn rejects_bad_cpu_lists() {
        for bad in ["a", "1-", "-1", "3-1", "1--2", "1,x", "0-99999999", "1.5", " 1 - 2 "] {
            assert!(parse_cpu_list(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn affinity_matches_the_kernels_status_file() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let from_status = cpus_allowed_from_status(&status).unwrap().unwrap();
        assert_eq!(current_affinity().unwrap(), from_status);
    }

    #[test]
    fn reads_cpus_allowed_list_from_status() {
        let status = "Name:\tx\nCpus_allowed:\t77\nCpus_allowed_list:\t0-2,4-6\n";
        assert_eq!(cpus_allowed_from_status(status), Some(Ok(vec![0, 1, 2, 4, 5, 6])));
        assert_eq!(cpus_allowed_from_status("Name:\tx\n"), None);
    }

    #[test]
    fn intersects_the_cpuset_with_numa_nodes() {
        let sys = tempfile::tempdir().unwrap();
        for (node, list) in [("node0", "0-3\n"), ("node1", "4-7\n"), ("node2", "8-11\n")] {
            let dir = sys.path().join("devices/system/node").join(node);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("cpulist"), list).unwrap();
        }
        std::fs::create_dir_all(sys.path().join("devices/system/node/power")).unwrap();
        let spread = numa_spread(sys.path(), &[1, 2, 3, 4, 5]).unwrap();
        let counts: Vec<(u32, usize)> = spread.nodes.iter().map(|n| (n.node, n.cpus.len())).collect();
        assert_eq!(counts, [(0, 3), (1, 2)]);
        assert!(!spread.is_even());
        assert!(numa_spread(sys.path(), &[2, 3, 4, 5]).unwrap().is_even());
        assert!(numa_spread(Path::new("/nonexistent"), &[0]).is_none());
    }
}
