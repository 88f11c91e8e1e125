//! The subcommands' implementations.

pub mod admission;
pub mod audit;
pub mod check;
pub mod config;
pub mod rule;
pub mod server;
pub mod settings_args;
