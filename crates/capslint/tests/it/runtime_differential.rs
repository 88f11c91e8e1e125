//! `capslint exec` against the real libraries, in a real CPU-limited cgroup: for a table of values
//! (lists, ASCII and Unicode white space, signs, hex, huge, empty, duplicate entries, nesting and
//! spin knobs), whenever exec lets the workload start, the OpenMP teams (libgomp, through a program
//! built here with `gcc -fopenmp`) and the BLAS pools (numpy's OpenBLAS, through threadpoolctl)
//! that really exist stay within the limit, and idle threads do not spin. Refusing is always
//! allowed; starting an oversubscribed workload never is.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::*;

/// The values tried for each count variable.
const VALUES: &[&str] = &[
    "1",
    "2",
    "64",
    "1,64",
    "64,1",
    "1,1",
    "1,1,64",
    "\u{a0}1",
    "\u{2003}1",
    "1\u{3000}",
    "\u{ff11}",
    " 1",
    "1 ",
    "\t1",
    "1\n",
    "+1",
    "-1",
    "0",
    "00",
    "01",
    "0x1",
    "1e0",
    "1.0",
    "1a",
    "",
    "   ",
    ",1",
    "1,",
    "1,,1",
    "4294967297",
    "18446744073709551617",
    "99999999999999999999999",
];

/// What the OpenMP program printed: the teams it really ran.
struct Teams {
    team_product: u64,
    os_threads_peak: u64,
    idle_cpu_ms: u64,
}

/// Builds the OpenMP program once, or says why it cannot be built.
fn openmp_program() -> Result<&'static Path, String> {
    static PROGRAM: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let out = std::env::temp_dir().join(format!("capslint-openmp-teams-{}", std::process::id()));
            let source = tests_dir().join("it/support/openmp_teams.c");
            let built = Command::new("gcc").args(["-O1", "-fopenmp", "-o"]).arg(&out).arg(&source).output();
            match built {
                Ok(output) if output.status.success() => Ok(out),
                Ok(output) => Err(format!("gcc -fopenmp failed: {}", String::from_utf8_lossy(&output.stderr))),
                Err(e) => Err(format!("gcc is not available ({e})")),
            }
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

/// Runs `capslint exec -- program` in `cgroup` with exactly the environment `entries` (in order,
/// repeated names included, as a parent's `execve` can pass them), then `PATH` and
/// [`PYTHON_NO_BYTECODE`].
///
/// The child joins the cgroup and calls `execve` itself: a shell in between would rebuild the
/// environment and drop repeated names.
fn exec_in(cgroup: &TestCgroup, entries: &[(String, String)], program: &[&str]) -> Output {
    let executable = CString::new(binary().as_os_str().as_bytes()).unwrap();
    let args: Vec<CString> = ["capslint", "exec", "--quiet", "--"]
        .into_iter()
        .chain(program.iter().copied())
        .map(|arg| CString::new(arg).unwrap())
        .collect();
    let block: Vec<CString> = entries
        .iter()
        .map(|(name, value)| CString::new(format!("{name}={value}")).unwrap())
        .chain(std::env::var("PATH").ok().map(|path| CString::new(format!("PATH={path}")).unwrap()))
        .chain([CString::new(format!("{}={}", PYTHON_NO_BYTECODE.0, PYTHON_NO_BYTECODE.1)).unwrap()])
        .collect();
    let procs = CString::new(cgroup.dir().join("cgroup.procs").into_os_string().into_encoded_bytes()).unwrap();
    let mut command = Command::new(binary());
    // SAFETY: the closure runs in the forked child and calls only async-signal-safe functions
    // (getpid, open, write, close, execve), with pointers into vectors built before the fork.
    unsafe {
        command.pre_exec(move || {
            let mut digits = [0u8; 20];
            let mut at = digits.len();
            let mut pid = libc::getpid() as u64;
            loop {
                at -= 1;
                digits[at] = b'0' + (pid % 10) as u8;
                pid /= 10;
                if pid == 0 {
                    break;
                }
            }
            let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
            if fd < 0 || libc::write(fd, digits[at..].as_ptr().cast(), digits.len() - at) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::close(fd);
            let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
            argv.push(std::ptr::null());
            let mut envp: Vec<*const libc::c_char> = block.iter().map(|e| e.as_ptr()).collect();
            envp.push(std::ptr::null());
            libc::execve(executable.as_ptr(), argv.as_ptr(), envp.as_ptr());
            Err(std::io::Error::last_os_error())
        });
    }
    command.output().unwrap()
}

/// Whether exec refused to start (exit 1 with a verdict); panics on anything but a refusal or a
/// start.
fn refused(output: &Output, what: &str) -> bool {
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(1) && stderr.contains("event=pod_thread_caps_unsafe") {
        return true;
    }
    assert_eq!(output.status.code(), Some(0), "{what}: neither refused nor started cleanly:\n{}", describe(output));
    false
}

fn teams(output: &Output, what: &str) -> Teams {
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{what}: no report from the OpenMP program ({e}):\n{}", describe(output)));
    let field = |key: &str| report[key].as_u64().unwrap_or_else(|| panic!("{what}: no {key} in {report}"));
    Teams {
        team_product: field("team_product"),
        os_threads_peak: field("os_threads_peak"),
        idle_cpu_ms: field("idle_cpu_ms"),
    }
}

fn entries(vars: &[(&str, &str)]) -> Vec<(String, String)> {
    vars.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
}

/// A declared limit of `limit` CPUs, then `vars`.
fn limited(limit: &str, vars: &[(&str, &str)]) -> Vec<(String, String)> {
    [entries(&[("CPU_LIMIT", limit)]), entries(vars)].concat()
}

/// Sets up a real cgroup of `cpus` CPUs and the OpenMP program, or skips.
fn setup(cpus: u64) -> Option<(TestCgroup, &'static Path)> {
    let program = match openmp_program() {
        Ok(program) => program,
        Err(why) => {
            skip(&why);
            return None;
        }
    };
    match TestCgroup::create(cpus * 100_000, 100_000) {
        Ok(cgroup) => Some((cgroup, program)),
        Err(why) => {
            skip(&why);
            None
        }
    }
}

/// Asserts that what started stayed within `limit` threads.
fn assert_within(output: &Output, limit: u64, what: &str) -> bool {
    if refused(output, what) {
        return false;
    }
    let teams = teams(output, what);
    assert!(teams.team_product <= limit, "{what}: started nested teams of {} threads", teams.team_product);
    assert!(teams.os_threads_peak <= limit, "{what}: started {} OS threads", teams.os_threads_peak);
    true
}

#[test]
fn libgomp_teams_never_exceed_a_one_cpu_limit() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some((cgroup, program)) = setup(1) else { return };
    let program = program.to_str().unwrap();
    let mut started = Vec::new();
    for name in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS"] {
        for value in VALUES {
            let what = format!("{name}={value:?}");
            let output = exec_in(&cgroup, &limited("1", &[(name, value)]), &[program]);
            if assert_within(&output, 1, &what) {
                started.push(what);
            }
        }
    }
    // The plain safe values do start: refusing everything would pass the loop above.
    for safe in ["OMP_NUM_THREADS=\"1\"", "OMP_NUM_THREADS=\"1,1\"", "OMP_NUM_THREADS=\"\"", "GOTO_NUM_THREADS=\"1\""] {
        assert!(started.iter().any(|s| s == safe), "{safe} was refused; started: {started:?}");
    }
}

#[test]
fn nesting_knobs_never_multiply_teams_past_the_limit() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some((cgroup, program)) = setup(2) else { return };
    let program = program.to_str().unwrap();
    let cases: &[&[(&str, &str)]] = &[
        &[("OMP_NESTED", "true")],
        &[("OMP_NESTED", "TRUE"), ("OMP_NUM_THREADS", "2")],
        &[("OMP_NESTED", " true")],
        &[("OMP_MAX_ACTIVE_LEVELS", "3")],
        &[("OMP_MAX_ACTIVE_LEVELS", "3"), ("OMP_NUM_THREADS", "2,1")],
        &[("OMP_MAX_ACTIVE_LEVELS", "+3")],
        &[("OMP_MAX_ACTIVE_LEVELS", "1"), ("OMP_NUM_THREADS", "2,2")],
        &[("OMP_MAX_ACTIVE_LEVELS", "1"), ("OMP_NESTED", "true")],
        &[("OMP_MAX_ACTIVE_LEVELS", "0"), ("OMP_NESTED", "true"), ("OMP_PROC_BIND", "spread,close")],
        &[("OMP_NUM_THREADS", "2,1")],
        &[("OMP_NUM_THREADS", "1,2")],
        &[("OMP_NUM_THREADS", "2,2,1")],
        &[("OMP_PROC_BIND", "spread,close")],
        &[("OMP_PROC_BIND", "spread")],
        &[("OMP_MAX_ACTIVE_LEVELS_ALL", "3")],
    ];
    let mut started = 0;
    for vars in cases {
        let what = format!("{vars:?}");
        let all = limited("2", vars);
        started += usize::from(assert_within(&exec_in(&cgroup, &all, &[program]), 2, &what));
    }
    assert!(started >= 2, "bounded nesting was refused too");
}

#[test]
fn idle_threads_do_not_spin_when_exec_starts_the_workload() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some((cgroup, program)) = setup(2) else { return };
    let program = program.to_str().unwrap();
    let cases: &[&[(&str, &str)]] = &[
        &[],
        &[("OMP_WAIT_POLICY", "PASSIVE")],
        &[("OMP_WAIT_POLICY", "active")],
        &[("OMP_WAIT_POLICY", " passive")],
        &[("OMP_WAIT_POLICY", "\u{a0}passive")],
        &[("OMP_WAIT_POLICY", "passive\u{a0}")],
        &[("GOMP_SPINCOUNT", "infinite")],
        &[("GOMP_SPINCOUNT", "INFINITY")],
        &[("GOMP_SPINCOUNT", "1000000000")],
        &[("GOMP_SPINCOUNT", "10G")],
        &[("GOMP_SPINCOUNT", "0")],
        &[("KMP_BLOCKTIME", "infinite")],
        &[("KMP_LIBRARY", "turnaround")],
    ];
    let mut started = 0;
    for vars in cases {
        let what = format!("{vars:?}");
        let all = limited("2", vars);
        let output = exec_in(&cgroup, &all, &[program]);
        if !assert_within(&output, 2, &what) {
            continue;
        }
        started += 1;
        // One thread sleeps 300 ms while the other waits at a barrier: a spinning waiter burns
        // about 300 ms of CPU, a sleeping one next to none.
        let idle = teams(&output, &what).idle_cpu_ms;
        assert!(idle < 150, "{what}: the idle thread burnt {idle} ms at the barrier");
    }
    assert!(started >= 3, "safe wait settings were refused too");
}

#[test]
fn duplicate_entries_reach_the_workload_as_the_one_exec_checked() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some((cgroup, program)) = setup(1) else { return };
    let program = program.to_str().unwrap();
    // getenv reads the first entry: 64 first must be refused, whatever comes after.
    let first_high = entries(&[("CPU_LIMIT", "1"), ("OMP_NUM_THREADS", "64"), ("OMP_NUM_THREADS", "1")]);
    assert!(refused(&exec_in(&cgroup, &first_high, &[program]), "64 then 1"));
    // 1 first: exec passes one entry, the 1 it checked, and the teams follow it.
    let first_low = entries(&[("CPU_LIMIT", "1"), ("OMP_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "64")]);
    assert!(assert_within(&exec_in(&cgroup, &first_low, &[program]), 1, "1 then 64"));
    let output = exec_in(&cgroup, &first_low, &["sh", "-c", "env | grep -c '^OMP_NUM_THREADS='"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "1", "{}", describe(&output));
    // A repeated limit is as ambiguous: the first is the one read.
    let limit_twice = entries(&[("CPU_LIMIT", "64"), ("CPU_LIMIT", "1")]);
    let output = exec_in(&cgroup, &limit_twice, &["sh", "-c", "echo $OMP_NUM_THREADS"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "1", "{}", describe(&output));
}

#[test]
fn openblas_pools_never_exceed_a_one_cpu_limit() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let python = match test_python() {
        Ok(python) => python,
        Err(why) => return skip(&why),
    };
    let cgroup = match TestCgroup::create(100_000, 100_000) {
        Ok(cgroup) => cgroup,
        Err(why) => return skip(&why),
    };
    let python = python.to_str().unwrap();
    let script = "import json, numpy, threadpoolctl; print(json.dumps(threadpoolctl.threadpool_info()))";
    let mut started = 0;
    for name in ["OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"] {
        for value in VALUES {
            let what = format!("{name}={value:?}");
            let output = exec_in(&cgroup, &limited("1", &[(name, value)]), &[python, "-c", script]);
            if refused(&output, &what) {
                continue;
            }
            started += 1;
            let pools: Value = serde_json::from_slice(&output.stdout)
                .unwrap_or_else(|e| panic!("{what}: no pools ({e}):\n{}", describe(&output)));
            let pools = pools.as_array().unwrap();
            assert!(!pools.is_empty(), "{what}: numpy loaded no BLAS pool");
            for pool in pools {
                let threads = pool["num_threads"].as_u64().unwrap();
                assert!(threads <= 1, "{what}: {} runs {threads} threads", pool["internal_api"]);
            }
        }
    }
    assert!(started >= 3, "the safe values were refused too");
}
