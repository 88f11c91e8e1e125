//! capslint: a linter and CI gate that stops CPU oversubscription before it reaches a cluster.
//!
//! The data flows one way: discover -> prefilter -> parse -> model -> rules -> suppress -> report.

pub mod atomic;
pub mod baseline;
pub mod cli;
pub mod color;
pub mod commands;
pub mod config;
pub mod confine;
pub mod diagnostic;
pub mod discover;
pub mod edited;
pub mod fingerprint;
pub mod fix;
pub mod k8s;
pub mod lint;
pub mod model_config;
pub mod notebook;
pub mod paths;
pub mod pod_template;
pub mod prefilter;
pub mod python;
pub mod registry;
pub mod report;
pub mod runtime;
pub mod selection;
pub mod settings;
pub mod source;
pub mod suppress;
pub mod thread_variables;
pub mod yaml;
