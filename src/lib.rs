//! capslint: a linter and CI gate that stops CPU oversubscription before it reaches a cluster.
//!
//! The data flows one way: discover -> prefilter -> parse -> model -> rules -> suppress -> report.

pub mod cli;
pub mod runtime;
