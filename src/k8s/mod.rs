//! Kubernetes and Airflow pod-template YAML: the CAP2xx rules.

pub mod build;
pub mod exec;
pub mod kinds;
pub mod model;
pub mod quantity;
pub mod yaml;
