//! capslint's Kubernetes admission webhook: the manifest rules (CAP201-CAP210) on every object the
//! cluster admits, by the same code path `capslint check` runs on a YAML file.
//!
//! The AdmissionReview model ([`review`]); the object written as YAML and read back ([`render`]); the
//! findings on an object and the object `--fix` makes of it ([`verdict`]); the policy that picks the
//! answer ([`policy`]); the JSONPatch ([`patch`]); the endpoints ([`webhook`]); the reloading TLS
//! certificate ([`tls`]); the HTTPS server ([`server`]); and its metrics ([`metrics`]). The same rules
//! over a running cluster's objects, for `capslint audit`, read a `kubectl get -o json` listing
//! ([`audit`]).

pub mod audit;
pub mod metrics;
pub mod patch;
pub mod policy;
pub mod render;
pub mod review;
pub mod server;
pub mod tls;
pub mod verdict;
pub mod webhook;
