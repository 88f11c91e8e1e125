//! Kubernetes and Airflow pod-template YAML: the CAP2xx rules.

pub mod quantity;
pub mod yaml;
