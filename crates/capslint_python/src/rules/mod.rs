//! The Python rules, one module per rule, each named after its rule (CAP107 kpo-missing-cpu-limit and
//! CAP108 kpo-missing-cpu-limit-ref share one module: the same operator analysis).

pub mod kpo_missing_cpu_limit;
pub mod late_thread_cap;
pub mod missing_thread_count;
pub mod ml_pool_default_sized;
pub mod n_jobs_all_cores;
pub mod node_cpu_count;
pub mod unbounded_joblib_parallel;
pub mod unsized_process_pool;
