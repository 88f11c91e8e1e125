//! The command line: `check`, `rule`, `config`, `admission`, `audit`, `server`, `runtime`, `exec`,
//! `completion`.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::color::ColorChoice;
use crate::commands::{admission, audit, check, config, rule, server};
use capslint_pod as runtime;

/// capslint: stop CPU oversubscription before it reaches a cluster.
#[derive(Debug, Parser)]
#[command(name = "capslint", version, about, propagate_version = true)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
    /// When to color the output: `auto` colors a terminal unless `NO_COLOR` is set, and anything when
    /// `FORCE_COLOR` or `CLICOLOR_FORCE` is.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check Python sources and Kubernetes manifests for thread and process pools sized to the node.
    Check(check::CheckArgs),
    /// Print a rule's documentation, or list every rule.
    Rule(rule::RuleArgs),
    /// Print the configuration that applies to a file or directory, resolved, as TOML.
    Config(config::ConfigArgs),
    /// Serve a Kubernetes admission webhook that applies the manifest rules to every object admitted
    /// (`/validate`) and adds the thread caps `check --fix` adds (`/mutate`).
    Admission(admission::AdmissionArgs),
    /// Check a running cluster's objects (`kubectl get ... -A -o json` output) against the manifest rules.
    Audit(audit::AuditArgs),
    /// Run the language server on standard input and output: findings, fixes and rule help in the editor.
    Server(server::ServerArgs),
    /// Inside a pod: compare the thread caps and the loaded thread pools with the CPU limit.
    Runtime(runtime::RuntimeArgs),
    /// Set every thread cap from the pod's CPU limit, then replace this process with CMD (or, with
    /// --watch, run CMD and watch it for oversubscription and livelock).
    Exec(ExecCommandArgs),
    /// Print a shell completion script (bash, elvish, fish, powershell, zsh) to standard output.
    Completion(CompletionArgs),
}

/// Arguments of `capslint exec`: the caps, and the supervisor's options.
#[derive(Debug, Clone, clap::Args)]
pub struct ExecCommandArgs {
    /// Setting the caps and running the command.
    #[command(flatten)]
    pub exec: runtime::ExecArgs,
    /// Watching the command while it runs.
    #[command(flatten)]
    pub watch: capslint_watch::WatchArgs,
}

/// Arguments of `capslint completion`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompletionArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { 2 } else { 0 };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    crate::color::set_choice(cli.color);
    match &cli.command {
        Command::Check(args) => {
            // A panic while checking one file becomes that file's diagnostic; do not also print it raw.
            std::panic::set_hook(Box::new(|_| {}));
            run_in_pool(|| check::run(args))
        }
        Command::Rule(args) => rule::run(args),
        Command::Config(args) => config::run(args),
        Command::Admission(args) => admission::run(args),
        Command::Audit(args) => {
            std::panic::set_hook(Box::new(|_| {}));
            run_in_pool(|| audit::run(args))
        }
        Command::Server(args) => {
            // A panic while checking one document becomes its diagnostic; do not also print it raw.
            std::panic::set_hook(Box::new(|_| {}));
            server::run(args)
        }
        Command::Runtime(args) => {
            let mut args = args.clone();
            args.limit_env = args.limit_env.or_else(configured_limit_env);
            runtime::run_runtime(&args)
        }
        Command::Exec(args) => {
            let mut exec = args.exec.clone();
            exec.limit_env = exec.limit_env.or_else(configured_limit_env);
            capslint_watch::run_exec(&exec, &args.watch)
        }
        Command::Completion(args) => {
            clap_complete::generate(args.shell, &mut Cli::command(), "capslint", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
    }
}

/// `[runtime] limit-env` from the configuration that applies to the working directory, if any. A broken
/// configuration file must not stop a pod from starting, so errors here mean "not configured".
fn configured_limit_env() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    let config = capslint_workspace::config::discover(&cwd).ok()??;
    config.options.runtime.and_then(|runtime| runtime.limit_env)
}

/// Runs `work` on a thread pool whose threads have deep stacks, so deeply nested input is parsed and
/// walked without overflowing. The work ends the process when it is done (`check`, `audit`), so the
/// memory it frees is kept ([`keep_freed_memory`]).
fn run_in_pool(work: impl FnOnce() -> ExitCode + Send) -> ExitCode {
    const STACK_BYTES: usize = 256 * 1024 * 1024;
    keep_freed_memory();
    match rayon::ThreadPoolBuilder::new().stack_size(STACK_BYTES).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
}

/// Keeps the memory the allocator frees for reuse until the process ends, instead of returning it to the
/// system a few pages at a time: each return is a `madvise` and a TLB flush on every thread of the pool
/// (about 250 in a run over a thousand files). Only for the commands that end when their work is done,
/// never for the servers.
fn keep_freed_memory() {
    // SAFETY: `mi_option_set` stores the option's value, which mimalloc reads at its next purge.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// `mi_option_purge_delay` of `mimalloc.h` (v2 and v3), which the Rust bindings do not name: how long
/// freed memory waits before it is returned to the system, in milliseconds (10 in v2, which the binary
/// uses), or never (-1).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // SAFETY: reading an option has no precondition.
        let read = || unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        // mimalloc v2's default, which its neighbours in the enumeration do not have.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(read(), 10);
        }
        keep_freed_memory();
        assert_eq!(read(), -1);
    }
}
