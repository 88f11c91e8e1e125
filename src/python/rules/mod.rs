//! The Python rules, one module per rule (CAP107 and CAP108 share the operator analysis).

pub mod kpo;
pub mod late_thread_cap;
pub mod missing_thread_count;
pub mod n_jobs_all_cores;
pub mod node_cpu_count;
pub mod unbounded_joblib_parallel;
pub mod unsized_process_pool;
