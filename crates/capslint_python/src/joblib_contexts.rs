//! The joblib contexts enclosing the code being walked (`with parallel_config(...)`,
//! `with parallel_backend(...)`, a cap helper): the backend they set and whether they cap each worker's
//! threads. The checker keeps them, innermost last; CAP103 pushes and reads them, CAP101 asks about the
//! backend (and [`super::cluster_fits`] about the blocks an estimator runs in).

use super::libraries::JOBLIB_CLUSTER_BACKENDS;

/// How a joblib context manager configures the `Parallel` calls inside it.
#[derive(Debug, Clone)]
pub struct ParallelContext {
    /// The backend it sets, if it names one.
    pub backend: Option<Backend>,
    /// Whether it bounds the threads of each worker (`inner_max_num_threads`, or a cap helper).
    pub inner_capped: bool,
}

/// A joblib backend, as far as CAP103 cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `loky` or `multiprocessing`: worker processes that each size their own thread pools.
    Process,
    /// `threading` or `sequential`: no new process.
    Threads,
    /// A cluster (`ray`, `dask`, `spark`, `ipyparallel`): `n_jobs` counts the cluster's workers, which
    /// are sized where the cluster runs, not by this process.
    Cluster,
    /// Something else (another registered backend, an expression).
    Other,
}

impl Backend {
    /// The backend a joblib backend name selects (`"loky"`, `"dask"`, ...).
    pub fn of_name(name: &str) -> Backend {
        match name {
            "loky" | "multiprocessing" => Backend::Process,
            "threading" | "sequential" => Backend::Threads,
            name if JOBLIB_CLUSTER_BACKENDS.contains(&name) => Backend::Cluster,
            _ => Backend::Other,
        }
    }
}
