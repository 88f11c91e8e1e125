//! The subcommands' implementations.

pub mod admission;
pub mod check;
pub mod config;
pub mod rule;
