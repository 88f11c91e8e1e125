//! The command line: `check`, `rule`, `runtime`, `exec`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::runtime;

/// capslint: stop CPU oversubscription before it reaches a cluster.
#[derive(Debug, Parser)]
#[command(name = "capslint", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inside a pod: compare the thread caps and the loaded thread pools with the CPU limit.
    Runtime(runtime::RuntimeArgs),
    /// Set every thread cap from the pod's CPU limit, then replace this process with CMD.
    Exec(runtime::ExecArgs),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Runtime(args) => runtime::run_runtime(args),
        Command::Exec(args) => runtime::run_exec(args),
    }
}
