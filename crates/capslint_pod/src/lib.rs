//! `capslint runtime` and `capslint exec`: the in-pod check and the capping entrypoint. The only crate
//! that touches Linux (cgroups, `/proc`, `prctl`, `memfd_create`, affinity); it shares nothing with the
//! linter but the vocabulary of `capslint_cpu`, so `capslint check` neither needs nor loads it.
//!
//! `runtime` reads the CPU limit from every source (Downward API variable, CFS quota, cpuset),
//! the thread-cap variables, and what the real libraries report once loaded (through an embedded
//! Python probe and threadpoolctl), then prints one verdict per problem. `exec` sets every cap
//! from the effective limit and replaces itself with the command, or, as PID 1, runs it as its init.
//!
//! One module per job: [`limit`] (the declared limit), [`procfs`], [`cgroup`] and [`cfs`] (the
//! CFS quota), [`cpuset`] (affinity and NUMA), [`system`] (all kernel reads under test-settable
//! roots), [`caps`] (the variables), [`effective`] (the combined limit), [`probe`] (Python) and [`tree`] (its process tree),
//! [`assess`] (the rules), [`verdict`] (the event lines), [`check`] and [`report`] (one check and
//! its rendering), [`exec`] (the entrypoint), [`init`] (a child run as init), [`stop`] (what stop
//! signals do to capslint itself).

#[cfg(target_os = "linux")]
pub mod assess;
#[cfg(target_os = "linux")]
pub mod caps;
#[cfg(target_os = "linux")]
pub mod cfs;
#[cfg(target_os = "linux")]
pub mod cgroup;
#[cfg(target_os = "linux")]
pub mod check;
#[cfg(target_os = "linux")]
pub mod cpuset;
#[cfg(target_os = "linux")]
pub mod effective;
#[cfg(target_os = "linux")]
pub mod env;
#[cfg(target_os = "linux")]
pub mod exec;
#[cfg(target_os = "linux")]
pub mod init;
#[cfg(target_os = "linux")]
pub mod limit;
#[cfg(target_os = "linux")]
pub mod probe;
#[cfg(target_os = "linux")]
pub mod procfs;
#[cfg(target_os = "linux")]
pub mod report;
#[cfg(target_os = "linux")]
pub mod stop;
#[cfg(target_os = "linux")]
pub mod system;
#[cfg(target_os = "linux")]
pub mod tree;
#[cfg(target_os = "linux")]
pub mod verdict;

use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::io::{self, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
#[cfg(target_os = "linux")]
use std::time::Duration;

#[cfg(target_os = "linux")]
use check::CheckOptions;
#[cfg(target_os = "linux")]
use env::Env;
#[cfg(target_os = "linux")]
use system::Roots;
#[cfg(target_os = "linux")]
use verdict::{Verdict, logfmt_value};

/// Exit code when no problem was found.
#[cfg(target_os = "linux")]
const EXIT_SAFE: u8 = 0;
/// Exit code when a problem was found (or `exec` refused to start).
#[cfg(target_os = "linux")]
const EXIT_UNSAFE: u8 = 1;
/// Exit code when the check could not be made.
const EXIT_ERROR: u8 = 2;

/// Output format of `capslint runtime`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A summary on stdout, one `event=pod_thread_caps_unsafe ...` line per problem on stderr.
    #[default]
    Text,
    /// One JSON object on stdout.
    Json,
}

/// How to run the Python probe.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// Python interpreter to probe with (a path, or a name looked up on PATH).
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: PathBuf,
    /// A module the workload imports, imported before the usual numeric stack (repeatable).
    #[arg(long = "import", value_name = "MOD")]
    pub imports: Vec<String>,
    /// Kill the probe after SECS seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = seconds)]
    pub timeout: f64,
}

/// Directories that stand for the kernel's file systems (for fixture trees in tests).
#[derive(Debug, Clone, clap::Args)]
pub struct RootArgs {
    /// Directory read as /proc (self/cgroup, self/mountinfo, self/status).
    #[arg(long, value_name = "DIR", default_value = "/proc", hide = true)]
    pub proc_root: PathBuf,
    /// Directory that stands for / when following the mount points in mountinfo.
    #[arg(long, value_name = "DIR", default_value = "/", hide = true)]
    pub cgroup_root: PathBuf,
    /// Directory read as /sys (devices/system/node).
    #[arg(long, value_name = "DIR", default_value = "/sys", hide = true)]
    pub sys_root: PathBuf,
}

#[cfg(target_os = "linux")]
impl RootArgs {
    fn roots(&self) -> Roots {
        Roots {
            proc_root: self.proc_root.clone(),
            cgroup_root: self.cgroup_root.clone(),
            sys_root: self.sys_root.clone(),
        }
    }
}

/// Arguments of `capslint runtime`.
#[derive(Debug, Clone, clap::Args)]
pub struct RuntimeArgs {
    /// Variable holding the Downward API limits.cpu [default: CPU_LIMIT, else the single *_CPU_LIMIT].
    #[arg(long, value_name = "NAME")]
    pub limit_env: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// How to run the Python probe.
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// Skip the Python probe: check the limits and variables only.
    #[arg(long, conflicts_with_all = ["imports", "measure"])]
    pub no_probe: bool,
    /// Run a BLAS workload for SECS seconds and report the share of CFS periods throttled.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub measure: Option<f64>,
    /// Share of throttled periods (0 to 1) above which --measure reports `throttled`.
    #[arg(long, value_name = "SHARE", default_value_t = 0.25, value_parser = share)]
    pub throttle_threshold: f64,
    /// Kernel file-system roots.
    #[command(flatten)]
    pub roots: RootArgs,
}

/// Arguments of `capslint exec`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExecArgs {
    /// Variable holding the Downward API limits.cpu [default: CPU_LIMIT, else the single *_CPU_LIMIT].
    #[arg(long, value_name = "NAME")]
    pub limit_env: Option<String>,
    /// Run the runtime probe on the capped environment first, and refuse on any verdict.
    #[arg(long)]
    pub check: bool,
    /// How to run the Python probe (with --check).
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// Do not log the caps that were set.
    #[arg(long, short)]
    pub quiet: bool,
    /// As PID 1, replace this process with CMD anyway instead of staying as its init (CMD then gets no
    /// signal it has no handler for, and nothing reaps its orphans).
    #[arg(long)]
    pub no_init: bool,
    /// Kernel file-system roots.
    #[command(flatten)]
    pub roots: RootArgs,
    /// The command to run, and its arguments.
    #[arg(value_name = "CMD", required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<OsString>,
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err("expected a number of seconds above 0".into()),
    }
}

fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.0..=1.0).contains(&s) => Ok(s),
        _ => Err("expected a share between 0 and 1".into()),
    }
}

/// Runs `capslint runtime`: 0 when safe, 1 when unsafe, 2 when the check could not be made, 128+N
/// when stopped by signal N.
#[cfg(target_os = "linux")]
pub fn run_runtime(args: &RuntimeArgs) -> ExitCode {
    stop::install();
    let roots = args.roots.roots();
    let options = CheckOptions {
        limit_env: args.limit_env.as_deref(),
        python: (!args.no_probe).then_some(args.probe.python.as_path()),
        imports: &args.probe.imports,
        timeout: Duration::from_secs_f64(args.probe.timeout),
        measure: args.measure,
        throttle_threshold: args.throttle_threshold,
        roots: &roots,
    };
    let report = match check::check(&Env::from_process(), &options) {
        Ok(report) => report,
        Err(error) => return fail_check(&error),
    };
    let written = match args.format {
        Format::Json => writeln!(io::stdout(), "{}", report::to_json(&report)),
        Format::Text => {
            print_verdicts(&report.verdicts);
            write!(io::stdout(), "{}", report::to_text(&report))
        }
    };
    if let Err(error) = written {
        return fail(&error);
    }
    ExitCode::from(if report.is_safe() { EXIT_SAFE } else { EXIT_UNSAFE })
}

/// What watches the workload when `exec` stays its parent (`capslint exec --watch`).
#[cfg(target_os = "linux")]
pub trait Supervisor {
    /// Called once the caps are set, before the command starts, with the effective limit in CPUs.
    fn begin(&mut self, effective_limit: u64);
    /// Time from one [`Supervisor::sample`] to the next.
    fn every(&self) -> Duration;
    /// Called every [`Supervisor::every`] while the command runs.
    fn sample(&mut self, workload: init::Workload);
    /// The exit code of `exec` once the command `ended`.
    fn exit_code(&mut self, ended: init::Ended) -> u8;
}

/// Runs `capslint exec`: on success it does not return (the command replaces this process), or, as
/// init, returns the command's exit status.
#[cfg(target_os = "linux")]
pub fn run_exec(args: &ExecArgs) -> ExitCode {
    run_exec_supervised(args, None)
}

/// Runs `capslint exec`, with `supervisor` (when given) watching the command as its parent: then
/// `exec` stays the command's init whatever its PID, and exits with the supervisor's code.
#[cfg(target_os = "linux")]
pub fn run_exec_supervised(args: &ExecArgs, supervisor: Option<&mut dyn Supervisor>) -> ExitCode {
    stop::install();
    let env = Env::from_process();
    let roots = args.roots.roots();
    let declared = match limit::resolve(&env, args.limit_env.as_deref()) {
        Ok(declared) => declared,
        Err(why) => {
            print_verdicts(&[assess::undeclared(&why)]);
            return ExitCode::from(EXIT_UNSAFE);
        }
    };
    let system = match system::observe(&roots) {
        Ok(system) => system,
        Err(error) => return fail(&error),
    };
    let cpuset = system.cpuset.as_ref().map(Vec::len);
    let Some(effective) = effective::effective(Some(&declared), system.quota.as_ref(), cpuset) else {
        return fail(&"no CPU limit is known");
    };
    let plan = match exec::plan(&env, effective.threads) {
        Ok(plan) => plan,
        Err(verdicts) => {
            print_verdicts(&verdicts);
            return ExitCode::from(EXIT_UNSAFE);
        }
    };
    if args.check {
        let options = CheckOptions {
            limit_env: args.limit_env.as_deref(),
            python: Some(args.probe.python.as_path()),
            imports: &args.probe.imports,
            timeout: Duration::from_secs_f64(args.probe.timeout),
            measure: None,
            throttle_threshold: 1.0,
            roots: &roots,
        };
        match check::check(&plan.env, &options) {
            Ok(report) if report.is_safe() => {}
            Ok(report) => {
                print_verdicts(&report.verdicts);
                return ExitCode::from(EXIT_UNSAFE);
            }
            Err(error) => return fail_check(&error),
        }
    }
    if !args.quiet {
        eprintln!("{}", caps_set_line(&plan, &declared, &system, effective));
    }
    let started = match supervisor {
        Some(supervisor) => {
            supervisor.begin(effective.threads);
            let every = supervisor.every();
            let mut work = |workload| supervisor.sample(workload);
            let periodic = init::Periodic { every, work: &mut work };
            exec::start_supervised(&args.command, &plan, periodic).map(|ended| supervisor.exit_code(ended))
        }
        None => exec::start(&args.command, &plan, exec::Start::for_this_process(args.no_init)).map(|e| e.code()),
    };
    let error = match started {
        Ok(code) => return ExitCode::from(code),
        Err(error) => error,
    };
    let program = args.command.first().map(|p| p.to_string_lossy()).unwrap_or_default();
    eprintln!("capslint exec: cannot run {program}: {error}");
    // The shell's conventions: 127 when the command is not found, 126 when it cannot run.
    ExitCode::from(if error.kind() == io::ErrorKind::NotFound { 127 } else { 126 })
}

/// The line `exec` logs before replacing itself.
#[cfg(target_os = "linux")]
fn caps_set_line(
    plan: &exec::Plan,
    declared: &limit::DeclaredLimit,
    system: &system::SystemView,
    effective: effective::Effective,
) -> String {
    let names = |vars: &[(&str, String)]| {
        let names: Vec<&str> = vars.iter().map(|(name, _)| *name).collect();
        if names.is_empty() { "none".to_owned() } else { names.join(",") }
    };
    let quota = system.quota.as_ref().map_or_else(|| "none".to_owned(), |q| assess::format_cpus(q.cpus()));
    let cpuset = system.cpuset.as_ref().map_or_else(|| "unknown".to_owned(), |c| c.len().to_string());
    format!(
        "event=pod_thread_caps_set severity=info limit={} source={} limit_env={} downward_api={} \
         cgroup_quota={quota} cpuset={cpuset} set={} kept={}",
        plan.limit,
        effective.source.as_str(),
        logfmt_value(&declared.name),
        logfmt_value(&declared.raw),
        names(&plan.set),
        names(&plan.kept),
    )
}

#[cfg(target_os = "linux")]
fn print_verdicts(verdicts: &[Verdict]) {
    let mut stderr = io::stderr().lock();
    for verdict in verdicts {
        // Nothing better to do when stderr is gone; the exit code still tells.
        let _ = writeln!(stderr, "{}", verdict.to_logfmt());
    }
}

/// Reports a check that could not be completed: exit 2, or 128+N when signal N stopped its probe.
#[cfg(target_os = "linux")]
fn fail_check(error: &check::CheckError) -> ExitCode {
    match error {
        check::CheckError::Probe(probe::ProbeError::Stopped { signal }) => {
            let _ = writeln!(io::stderr(), "error: {error}");
            ExitCode::from(stop::exit_code(*signal))
        }
        _ => fail(error),
    }
}

#[cfg(target_os = "linux")]
fn fail(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: {error}");
    ExitCode::from(EXIT_ERROR)
}

/// Runs `capslint runtime` outside Linux, where there is no cgroup, `/proc` or pod to read: says so, and
/// exits 2.
#[cfg(not(target_os = "linux"))]
pub fn run_runtime(_args: &RuntimeArgs) -> ExitCode {
    outside_linux("runtime")
}

/// Runs `capslint exec` outside Linux, where there is no cgroup, `/proc` or pod to read: says so, runs
/// nothing, and exits 2.
#[cfg(not(target_os = "linux"))]
pub fn run_exec(_args: &ExecArgs) -> ExitCode {
    outside_linux("exec")
}

/// Says that `capslint VERB` runs in a Linux pod only, and exits 2.
#[cfg(not(target_os = "linux"))]
fn outside_linux(verb: &str) -> ExitCode {
    eprintln!("error: {}", outside_linux_message(verb, std::env::consts::OS));
    ExitCode::from(EXIT_ERROR)
}

/// Why `capslint VERB` does not run on the system `os` (as `std::env::consts::OS` names it).
#[cfg(any(not(target_os = "linux"), test))]
fn outside_linux_message(verb: &str, os: &str) -> String {
    let os = match os {
        "macos" => "macOS",
        "windows" => "Windows",
        other => other,
    };
    format!(
        "capslint {verb} runs inside a Linux pod: it reads the cgroup CPU quota, /proc and the Downward API; \
         on {os} use `capslint check`"
    )
}

#[cfg(test)]
mod tests {
    use super::outside_linux_message;

    #[test]
    fn outside_linux_the_verbs_say_where_they_run_and_what_to_use() {
        assert_eq!(
            outside_linux_message("runtime", "macos"),
            "capslint runtime runs inside a Linux pod: it reads the cgroup CPU quota, /proc and the Downward API; \
             on macOS use `capslint check`"
        );
        assert!(outside_linux_message("exec", "windows").starts_with("capslint exec runs inside a Linux pod: "));
        assert!(outside_linux_message("exec", "windows").ends_with("; on Windows use `capslint check`"));
        assert!(outside_linux_message("runtime", "freebsd").ends_with("; on freebsd use `capslint check`"));
    }
}
