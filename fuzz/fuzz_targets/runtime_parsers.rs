//! Arbitrary bytes through every parser of the runtime's kernel files and the Downward API value.
#![no_main]

use capslint::runtime::{cfs, cpuset, limit, procfs};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = procfs::parse_proc_cgroup(data);
    let _ = procfs::parse_mountinfo(data);
    let text = String::from_utf8_lossy(data);
    let _ = cfs::parse_cpu_max(&text);
    let _ = cfs::parse_v1_quota(&text, 100_000);
    let _ = cfs::parse_v1_quota(&text, 0);
    let _ = cfs::parse_cpu_stat(&text);
    let _ = limit::parse_quantity(&text);
    if let Ok(cpus) = cpuset::parse_cpu_list(&text) {
        let _ = cpuset::format_cpu_list(&cpus);
    }
    let _ = cpuset::cpus_allowed_from_status(&text);
});
