//! Reading one sample of the workload and its cgroup from the real files.
//!
//! - the process tree: every process below this one (`/proc/*/stat`, parent links; as the reaper of
//!   the workload's orphans, this process keeps even daemonised helpers below it), each process's
//!   thread count, and its runnable threads from `/proc/<pid>/task/*/stat` (state `R`: running, or
//!   waiting for a CPU, throttled ones included);
//! - the workload's CPU time: user and system time of the live processes and of the children they,
//!   and this process, waited for;
//! - the CPU limit: the tightest CFS quota from this process's cgroup up, read as `capslint runtime`
//!   reads it ([`capslint_pod::cgroup::tightest_quota`]), every sample (a pod can be resized in
//!   place); without a quota, the effective limit `exec` set the caps from;
//! - the throttling counters of `cpu.stat` where the quota is set (v1 and v2 names), and v2's
//!   `cpu.pressure`;
//! - the age of the heartbeat file, when one is watched.
//!
//! Every read is bounded ([`MAX_PROCESSES`], [`MAX_TASKS`]); a file that vanished between listing
//! and reading (a process that exited) is skipped.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use capslint_pod::cfs::{self, CpuStat, Version};
use capslint_pod::cgroup::{self, CpuCgroup};
use capslint_pod::procfs;

use crate::pressure::{self, Pressure};
use crate::procstat::{self, ProcStat};

/// The most entries of `/proc` looked at in one sample.
pub const MAX_PROCESSES: usize = 65_536;
/// The most thread `stat` files read in one sample; threads past it are not counted as runnable.
pub const MAX_TASKS: usize = 65_536;
/// How many processes an event names: those holding the most threads.
pub const TOP_PROCESSES: usize = 3;

/// One process of the tree and its threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessThreads {
    /// Its process ID.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Its threads.
    pub threads: u64,
}

/// What the heartbeat file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heartbeat {
    /// No heartbeat file is watched.
    NotWatched,
    /// The file does not exist (yet).
    Missing,
    /// Time since the file was last modified.
    Age(Duration),
}

/// One sample of the workload and its cgroup.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The CPU limit, in CPUs.
    pub limit: f64,
    /// Processes in the tree.
    pub processes: u64,
    /// Threads in the tree.
    pub threads: u64,
    /// Threads of the tree that are runnable.
    pub runnable: u64,
    /// CPU time the workload used so far, in seconds.
    pub cpu_seconds: f64,
    /// The throttling counters, where the cgroup has them.
    pub cpu_stat: Option<CpuStat>,
    /// CPU pressure, on cgroup v2.
    pub pressure: Option<Pressure>,
    /// The heartbeat file.
    pub heartbeat: Heartbeat,
    /// The processes holding the most threads, most first (at most [`TOP_PROCESSES`]).
    pub top: Vec<ProcessThreads>,
}

/// Reads samples.
#[derive(Debug, Clone)]
pub struct Sampler {
    cgroup: Option<CpuCgroup>,
    fallback_limit: f64,
    heartbeat: Option<PathBuf>,
    ticks_per_second: f64,
}

impl Sampler {
    /// A sampler for the tree below this process, in this process's CPU cgroup; `fallback_limit`
    /// stands for the limit when the cgroup sets no quota.
    pub fn new(fallback_limit: u64, heartbeat: Option<PathBuf>) -> Self {
        Self { cgroup: own_cgroup(), fallback_limit: fallback_limit as f64, heartbeat, ticks_per_second: ticks() }
    }

    /// Reads one sample now.
    pub fn sample(&self) -> Sample {
        let quota = self.cgroup.as_ref().and_then(|cgroup| cgroup::tightest_quota(cgroup).ok().flatten());
        let limit = quota.as_ref().map_or(self.fallback_limit, capslint_pod::cgroup::Quota::cpus);
        let stat_dir = quota.as_ref().map(|q| q.dir.clone()).or_else(|| self.cgroup.as_ref().map(|c| c.dir.clone()));
        let cpu_stat = stat_dir
            .and_then(|dir| fs::read_to_string(dir.join("cpu.stat")).ok())
            .and_then(|text| cfs::parse_cpu_stat(&text));
        let pressure = self
            .cgroup
            .as_ref()
            .filter(|cgroup| cgroup.version == Version::V2)
            .and_then(|cgroup| fs::read_to_string(cgroup.dir.join("cpu.pressure")).ok())
            .and_then(|text| pressure::parse_pressure(&text));
        let tree = read_tree(Path::new("/proc"), std::process::id());
        Sample {
            limit,
            processes: tree.processes,
            threads: tree.threads,
            runnable: tree.runnable,
            cpu_seconds: tree.ticks as f64 / self.ticks_per_second,
            cpu_stat,
            pressure,
            heartbeat: self.heartbeat.as_deref().map_or(Heartbeat::NotWatched, heartbeat_age),
            top: tree.top,
        }
    }
}

/// This process's CPU cgroup, as `capslint runtime` finds it.
fn own_cgroup() -> Option<CpuCgroup> {
    let lines = procfs::parse_proc_cgroup(&fs::read("/proc/self/cgroup").ok()?);
    let mounts = procfs::parse_mountinfo(&fs::read("/proc/self/mountinfo").ok()?);
    cgroup::locate(&lines, &mounts, Path::new("/")).ok()
}

/// Clock ticks per second (`stat`'s time unit).
fn ticks() -> f64 {
    // SAFETY: sysconf has no memory effects.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

fn heartbeat_age(path: &Path) -> Heartbeat {
    match fs::metadata(path).and_then(|meta| meta.modified()) {
        Ok(modified) => Heartbeat::Age(SystemTime::now().duration_since(modified).unwrap_or_default()),
        Err(_) => Heartbeat::Missing,
    }
}

/// The tree below one process, summed.
#[derive(Debug, Default, PartialEq)]
pub struct Tree {
    /// Processes below the root.
    pub processes: u64,
    /// Their threads.
    pub threads: u64,
    /// Their runnable threads.
    pub runnable: u64,
    /// Their CPU time and that of every child waited for (the root's included), in clock ticks.
    pub ticks: u64,
    /// The processes holding the most threads.
    pub top: Vec<ProcessThreads>,
}

/// Reads the tree of processes below `root` under the directory `proc` (`/proc`).
pub fn read_tree(proc: &Path, root: u32) -> Tree {
    let mut stats: HashMap<u32, ProcStat> = HashMap::new();
    if let Ok(entries) = fs::read_dir(proc) {
        for entry in entries.filter_map(Result::ok).take(MAX_PROCESSES) {
            let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
            if let Some(stat) = read_stat(&entry.path().join("stat")) {
                stats.insert(pid, stat);
            }
        }
    }
    let members = descendants(&stats, root);
    let mut tree =
        Tree { ticks: stats.get(&root).map_or(0, |me| me.cutime.saturating_add(me.cstime)), ..Tree::default() };
    let mut tasks_left = MAX_TASKS;
    let mut holders = Vec::new();
    for pid in members {
        let Some(stat) = stats.get(&pid) else { continue };
        tree.processes += 1;
        tree.threads += stat.num_threads;
        tree.ticks = tree.ticks.saturating_add(stat.ticks_with_children());
        tree.runnable += runnable_threads(&proc.join(pid.to_string()).join("task"), &mut tasks_left);
        holders.push(ProcessThreads { pid, comm: stat.comm.clone(), threads: stat.num_threads });
    }
    holders.sort_by(|a, b| b.threads.cmp(&a.threads).then(a.pid.cmp(&b.pid)));
    holders.truncate(TOP_PROCESSES);
    tree.top = holders;
    tree
}

/// The processes below `root` (not `root` itself), by parent links.
fn descendants(stats: &HashMap<u32, ProcStat>, root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, stat) in stats {
        if *pid != root {
            children.entry(stat.ppid).or_default().push(*pid);
        }
    }
    let mut found = Vec::new();
    let mut stack = vec![root];
    // Each process has one parent: every pid is pushed at most once, cycles cannot form.
    while let Some(pid) = stack.pop() {
        for child in children.remove(&pid).unwrap_or_default() {
            found.push(child);
            stack.push(child);
        }
    }
    found.sort_unstable();
    found
}

/// The runnable threads among the `stat` files under `task`, reading at most `left` of them.
fn runnable_threads(task: &Path, left: &mut usize) -> u64 {
    let Ok(entries) = fs::read_dir(task) else { return 0 };
    let mut runnable = 0;
    for entry in entries.filter_map(Result::ok) {
        if *left == 0 {
            break;
        }
        *left -= 1;
        if read_stat(&entry.path().join("stat")).is_some_and(|stat| stat.is_runnable()) {
            runnable += 1;
        }
    }
    runnable
}

fn read_stat(path: &Path) -> Option<ProcStat> {
    procstat::parse_stat(&fs::read_to_string(path).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat_line(pid: u32, comm: &str, state: char, ppid: u32, utime: u64, threads: u64) -> String {
        format!("{pid} ({comm}) {state} {ppid} 1 1 0 -1 0 0 0 0 0 {utime} 0 0 0 20 0 {threads} 0 1 2 3\n")
    }

    /// A fake `/proc`: each process with its task directory.
    fn fake_proc(processes: &[(u32, &str, u32, u64, &[char])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (pid, comm, ppid, utime, states) in processes {
            let process = dir.path().join(pid.to_string());
            fs::create_dir_all(process.join("task")).unwrap();
            let first = states.first().copied().unwrap_or('S');
            fs::write(process.join("stat"), stat_line(*pid, comm, first, *ppid, *utime, states.len() as u64)).unwrap();
            for (i, state) in states.iter().enumerate() {
                let tid = pid * 100 + i as u32;
                let task = process.join("task").join(tid.to_string());
                fs::create_dir_all(&task).unwrap();
                fs::write(task.join("stat"), stat_line(tid, comm, *state, *ppid, 0, 1)).unwrap();
            }
        }
        fs::create_dir_all(dir.path().join("self")).unwrap();
        dir
    }

    #[test]
    fn sums_the_tree_below_the_root_only() {
        let proc = fake_proc(&[
            (1, "init", 0, 0, &['S']),
            (10, "capslint", 1, 5, &['S']),
            (11, "python", 10, 300, &['R', 'R', 'R', 'S']),
            (12, "worker", 11, 200, &['R', 'S']),
            (13, "orphan", 10, 7, &['R']),
            (20, "elsewhere", 1, 900, &['R', 'R']),
        ]);
        let tree = read_tree(proc.path(), 10);
        assert_eq!((tree.processes, tree.threads, tree.runnable, tree.ticks), (3, 7, 5, 507));
        let top: Vec<(u32, &str, u64)> = tree.top.iter().map(|p| (p.pid, p.comm.as_str(), p.threads)).collect();
        assert_eq!(top, [(11, "python", 4), (12, "worker", 2), (13, "orphan", 1)]);
        // Nothing below a leaf, nothing below a process that does not exist.
        assert_eq!(read_tree(proc.path(), 13).processes, 0);
        assert_eq!(read_tree(proc.path(), 99), Tree::default());
    }

    #[test]
    fn a_deep_chain_and_a_parent_cycle_are_walked_without_recursion_or_loops() {
        // A chain 300 processes deep below the root, and two processes that name each other as parent.
        let mut processes: Vec<(u32, String, u32, u64, Vec<char>)> =
            (0..300u32).map(|i| (100 + i, format!("p{i}"), if i == 0 { 10 } else { 99 + i }, 1, vec!['R'])).collect();
        processes.push((5000, "a".into(), 5001, 1, vec!['R']));
        processes.push((5001, "b".into(), 5000, 1, vec!['R']));
        let borrowed: Vec<(u32, &str, u32, u64, &[char])> = processes
            .iter()
            .map(|(pid, comm, ppid, utime, states)| (*pid, comm.as_str(), *ppid, *utime, &states[..]))
            .collect();
        let proc = fake_proc(&borrowed);
        let tree = read_tree(proc.path(), 10);
        assert_eq!((tree.processes, tree.runnable, tree.ticks), (300, 300, 300));
        assert_eq!(read_tree(proc.path(), 5000).processes, 1);
    }

    #[test]
    fn a_missing_proc_is_an_empty_tree() {
        assert_eq!(read_tree(Path::new("/nonexistent"), 1), Tree::default());
    }

    #[test]
    fn reads_the_live_tree_of_this_process() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let tree = read_tree(Path::new("/proc"), std::process::id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(tree.processes >= 1, "{tree:?}");
        assert!(tree.top.iter().any(|p| p.pid == child.id() && p.comm == "sleep" && p.threads == 1), "{tree:?}");
    }

    #[test]
    fn reads_a_heartbeat_age() {
        let dir = tempfile::tempdir().unwrap();
        let beat = dir.path().join("beat");
        assert_eq!(heartbeat_age(&beat), Heartbeat::Missing);
        fs::write(&beat, "").unwrap();
        assert!(matches!(heartbeat_age(&beat), Heartbeat::Age(age) if age < Duration::from_secs(60)));
    }
}
