//! The integration tests, in one test crate (one binary to build and link): each module covers one
//! area, and all of them share [`support`].
//!
//! Run one area with a filter on the module path, e.g. `cargo test --test it runtime_` or
//! `cargo test --test it cli::`.

mod support;

mod admission;
mod audit;
mod build_profile;
mod cli;
mod cli_conventions;
mod config_files;
mod confinement;
mod discovery;
mod docs_site;
mod fix_identity;
mod fixes;
mod hostile;
mod install_cargo;
mod install_wheel;
mod integrations_action;
mod integrations_baseline;
mod integrations_config;
mod integrations_docs;
mod integrations_formats;
mod integrations_precommit;
mod integrations_workflows;
mod k8s_cli;
mod k8s_fixtures;
mod k8s_hostile;
mod k8s_kustomize;
mod k8s_rewritten;
mod memory;
mod no_panic;
mod notebooks;
mod portability;
mod python_fixtures;
mod python_limits;
mod python_recovery;
mod release_versions;
mod rule_docs;
mod runtime_cgroup;
mod runtime_differential;
mod runtime_exec;
mod runtime_fixtures;
mod runtime_init;
mod runtime_ml_stack;
mod runtime_probe;
mod runtime_watch;
mod server;
mod server_clients;
mod workspace_layout;
mod yaml_corpus;
