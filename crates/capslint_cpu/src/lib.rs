//! capslint's vocabulary of CPU caps, shared by the static analysis and the in-pod verbs: the thread
//! variables each library reads ([`thread_variables`]), the keyword arguments that take a thread count
//! ([`keywords`]), Kubernetes CPU quantities ([`quantity`]) and the variable the Downward API fills with
//! the CPU limit ([`DEFAULT_LIMIT_ENV`]).
//!
//! It knows nothing of files, findings or processes: it may depend on no other capslint crate.

pub mod keywords;
pub mod quantity;
pub mod thread_variables;

/// The variable `capslint exec` and `capslint runtime` read the CPU limit from when `--limit-env` is not
/// given and it is set, and the one `--fix` declares from `resourceFieldRef: limits.cpu`.
pub const DEFAULT_LIMIT_ENV: &str = "CPU_LIMIT";
