//! The subcommands' implementations.

pub mod check;
pub mod rule;
