//! Arbitrary bytes through every parser of the runtime's kernel files and the Downward API value,
//! and, read as an environment block (`NAME=value` entries separated by NUL), through the cap
//! reading that `runtime` and `exec` share: no panic, and what `exec` accepts reads within the limit.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use capslint_pod::caps::Caps;
use capslint_pod::env::Env;
use capslint_pod::{cfs, cpuset, exec, limit, procfs};
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
    let entries = data.split(|&b| b == 0).filter_map(|entry| {
        let at = entry.iter().skip(1).position(|&b| b == b'=')? + 1;
        Some((OsString::from_vec(entry[..at].to_vec()), OsString::from_vec(entry[at + 1..].to_vec())))
    });
    let env = Env::from_entries(entries);
    let _ = Caps::read(&env);
    let limit = u64::from(data.first().copied().unwrap_or(1) % 8 + 1);
    if let Ok(plan) = exec::plan(&env, limit) {
        let caps = Caps::read(&plan.env);
        assert!(caps.caps.iter().all(|cap| cap.value.threads().is_none_or(|threads| threads <= limit)));
        assert!(caps.spinning.is_empty());
    }
});
