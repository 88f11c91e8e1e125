//! The keyword arguments by which the libraries take a thread count (`n_jobs`, `nthread`, `num_threads`...):
//! what the Python rules look for in calls and the model-configuration rule looks for in config files.

/// Keyword arguments that size a thread or process pool and where a negative value means "all cores"
/// (`n_jobs`) or, for LightGBM and XGBoost, any value `<= 0` does.
pub const THREAD_COUNT_KEYWORDS: &[&str] =
    &["n_jobs", "thread_count", "nthread", "nthreads", "num_threads", "num_thread"];

/// Whether `keyword` names a thread count for a booster (any alias the libraries accept).
pub fn is_thread_count_keyword(keyword: &str) -> bool {
    THREAD_COUNT_KEYWORDS.contains(&keyword)
}

/// A parameter or class field that holds a thread count for some part of the program: a thread-count
/// keyword, or one with a prefix (`grid_search_n_jobs`, `cv_n_jobs`, `loader_num_threads`).
pub fn is_thread_count_field(name: &str) -> bool {
    is_thread_count_keyword(name)
        || THREAD_COUNT_KEYWORDS
            .iter()
            .any(|keyword| name.strip_suffix(keyword).is_some_and(|prefix| prefix.len() > 1 && prefix.ends_with('_')))
}
