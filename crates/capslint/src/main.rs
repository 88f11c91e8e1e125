//! The `capslint` binary: parse the command line, run the command, map its outcome to an exit code.

mod cli;
mod color;
mod commands;

use std::process::ExitCode;

/// mimalloc: the parser allocates many small nodes, and the system allocator is measurably slower at that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::main()
}
