//! `capslint runtime` and `capslint exec`: the in-pod check and the capping entrypoint.

use std::process::ExitCode;

/// Arguments of `capslint runtime`.
#[derive(Debug, Clone, clap::Args)]
pub struct RuntimeArgs {}

/// Arguments of `capslint exec`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExecArgs {}

/// Runs `capslint runtime`.
pub fn run_runtime(_args: &RuntimeArgs) -> ExitCode {
    eprintln!("error: `capslint runtime` is not available in this build");
    ExitCode::from(2)
}

/// Runs `capslint exec`.
pub fn run_exec(_args: &ExecArgs) -> ExitCode {
    eprintln!("error: `capslint exec` is not available in this build");
    ExitCode::from(2)
}
