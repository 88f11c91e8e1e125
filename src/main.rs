//! The `capslint` binary: parse the command line, run the command, map its outcome to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    capslint::cli::main()
}
