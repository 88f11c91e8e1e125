//! The subcommands' implementations.

pub mod check;
pub mod config;
pub mod rule;
pub mod server;
