//! `capslint exec --watch`: a supervisor that stays the parent of the workload and sees
//! oversubscription and livelock while they happen, not only at start.
//!
//! `exec` sets the caps once, before the workload starts; pools built later
//! (`torch.set_num_threads(os.cpu_count())`, a dependency's process pool) are invisible to it. With
//! `--watch`, `exec` runs the workload as its child (its init, PID 1 or not: signals forwarded, the
//! exit status passed through) and every interval samples the workload's process tree and its cgroup.
//!
//! One module per job: [`args`] (the options and their durations), [`procstat`] (parsing
//! `/proc/<pid>/stat`), [`pressure`] (parsing `cpu.pressure`), [`sampler`] (reading the real files
//! into a [`sampler::Sample`]), [`judge`] (the verdicts over the window, with hysteresis),
//! [`terminate`] (when to stop a livelocked workload), [`event`] (the logfmt lines), [`metrics`]
//! (the Prometheus endpoint) and
//! [`supervisor`] (all of them, driven by `exec`).

pub mod args;
#[cfg(target_os = "linux")]
pub mod event;
#[cfg(target_os = "linux")]
pub mod judge;
#[cfg(target_os = "linux")]
pub mod metrics;
pub mod pressure;
pub mod procstat;
#[cfg(target_os = "linux")]
pub mod sampler;
#[cfg(target_os = "linux")]
pub mod supervisor;
pub mod terminate;

pub use args::WatchArgs;

/// The exit code of `exec --watch` when it terminated a workload suspected of livelock
/// (`EX_TEMPFAIL`: the run may succeed when started again with its parallelism capped).
pub const EXIT_LIVELOCK_TERMINATED: u8 = 75;

use std::process::ExitCode;

/// Runs `capslint exec`, supervised when `watch.watch` is set.
#[cfg(target_os = "linux")]
pub fn run_exec(exec: &capslint_pod::ExecArgs, watch: &WatchArgs) -> ExitCode {
    if watch.watch {
        let mut supervisor = match supervisor::Watch::new(watch) {
            Ok(supervisor) => supervisor,
            Err(error) => {
                eprintln!("error: cannot serve the metrics: {error}");
                return ExitCode::from(2);
            }
        };
        capslint_pod::run_exec_supervised(exec, Some(&mut supervisor))
    } else {
        capslint_pod::run_exec(exec)
    }
}

/// Runs `capslint exec` outside Linux, which says it runs only in a Linux pod.
#[cfg(not(target_os = "linux"))]
pub fn run_exec(exec: &capslint_pod::ExecArgs, _watch: &WatchArgs) -> ExitCode {
    capslint_pod::run_exec(exec)
}
