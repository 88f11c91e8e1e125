//! The `capslint` binary: parse the command line, run the command, map its outcome to an exit code.
//! It dispatches and prints; what a command does lives in the crates below it (the README's design
//! section draws them).

mod allocator;
mod cli;
mod color;
mod commands;
mod error_report;

use std::process::ExitCode;

/// mimalloc: the parser allocates many small nodes, and the system allocator is measurably slower at that.
#[global_allocator]
static GLOBAL: allocator::Mimalloc = allocator::Mimalloc;

fn main() -> ExitCode {
    cli::main()
}
