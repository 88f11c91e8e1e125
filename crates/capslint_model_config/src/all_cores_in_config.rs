//! CAP109 all-cores-in-config: a thread-count key of a model configuration file whose value means
//! "every core of the node". The keys are those of the Python rules (`n_jobs`, `thread_count`,
//! `nthread`, `nthreads`, `num_threads`, `num_thread`, and prefixed fields such as `cv_n_jobs`); what a
//! value means depends on the library the key belongs to.

use capslint_cpu::keywords::{THREAD_COUNT_KEYWORDS, is_thread_count_field};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

use ruff_text_size::TextRange;

use super::candidate::{Candidate, Found, MAX_CANDIDATES};
use capslint_diagnostics::selection::RuleSet;

const HELP: &str = "write a count within the pod's CPU limit (`1`, and let the thread caps use the budget), or have \
the code that reads this key take it from `OMP_NUM_THREADS`";

/// The keys where `0` means "every core" too: LightGBM's `num_threads` (the OpenMP default) and XGBoost's
/// `nthread`. A prefixed key (`loader_num_threads`) may belong to anything, so only a negative value
/// counts there.
const ZERO_MEANS_ALL: &[&str] = &["num_threads", "num_thread", "nthread", "nthreads"];

/// Whether `key` holds a thread count: a thread-count keyword or a prefixed one (`grid_search_n_jobs`).
pub fn is_thread_count_key(key: &str) -> bool {
    is_thread_count_field(key)
}

/// Whether `value` under the thread-count key `key` means "every core".
pub fn is_all_cores(key: &str, value: i64) -> bool {
    value < 0 || (value == 0 && ZERO_MEANS_ALL.contains(&key))
}

/// The keyword a key ends with: the key itself, or the keyword after its prefix.
fn keyword_of(key: &str) -> &str {
    THREAD_COUNT_KEYWORDS
        .iter()
        .filter(|keyword| key.ends_with(*keyword))
        .max_by_key(|keyword| keyword.len())
        .copied()
        .unwrap_or(key)
}

/// What `value` means to the library that reads `key`.
fn meaning(key: &str, value: i64) -> String {
    match (keyword_of(key), value) {
        ("num_threads" | "num_thread", 0) => {
            "LightGBM reads 0 as the OpenMP default: one thread per core OpenMP sees, quota ignored".to_string()
        }
        ("num_threads" | "num_thread", _) => {
            "LightGBM reads a value <= 0 as the OpenMP default: one thread per core OpenMP sees, quota ignored"
                .to_string()
        }
        ("nthread" | "nthreads", 0) => "XGBoost treats 0 as \"every core OpenMP sees\"".to_string(),
        ("nthread" | "nthreads", _) => "XGBoost treats any value <= 0 as \"every core\"".to_string(),
        ("thread_count", -1) => "CatBoost reads -1 as one thread per node core".to_string(),
        (_, -1) => {
            "-1 means one worker per node core (joblib, scikit-learn, LightGBM and XGBoost estimators)".to_string()
        }
        (_, value) => format!("{value} means \"all cores but {}\", still sized to the node", value.unsigned_abs() - 1),
    }
}

/// The finding for a candidate.
pub fn finding(candidate: &Candidate) -> Finding {
    Finding::new(
        Rule::AllCoresInConfig,
        candidate.range,
        format!(
            "`{}{}{}` asks for every CPU of the node, not the pod's CPU limit",
            candidate.path,
            candidate.syntax.separator(),
            candidate.value
        ),
    )
    .label(meaning(&candidate.key, candidate.value))
    .help(HELP)
}

/// The CAP109 finding of every candidate `found` kept, then CAP003 (when `rules` has it) if some were left out.
pub fn findings(found: &Found, rules: RuleSet) -> Vec<Finding> {
    let mut findings: Vec<Finding> = found.candidates.iter().map(finding).collect();
    if found.truncated && rules.contains(Rule::AnalysisBudgetExceeded) {
        let last = found.candidates.last().map_or_else(TextRange::default, |candidate| candidate.range);
        findings.push(
            Finding::new(
                Rule::AnalysisBudgetExceeded,
                TextRange::empty(last.end()),
                format!(
                    "more than {MAX_CANDIDATES} thread-count keys set to every core: the first {MAX_CANDIDATES} are \
                     reported, the rest of the file is not analysed"
                ),
            )
            .label("analysis stops here")
            .help("a file with this many is data, not a model configuration: exclude it (`extend-exclude`)"),
        );
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_means_all_only_for_lightgbm_and_xgboost_keys() {
        assert!(is_all_cores("n_jobs", -1));
        assert!(is_all_cores("cv_n_jobs", -2));
        assert!(!is_all_cores("n_jobs", 0));
        assert!(!is_all_cores("thread_count", 0));
        assert!(is_all_cores("num_threads", 0));
        assert!(is_all_cores("nthread", 0));
        assert!(!is_all_cores("loader_num_threads", 0));
        assert!(!is_all_cores("n_jobs", 4));
    }

    #[test]
    fn keys_are_the_python_rules_keywords() {
        for key in ["n_jobs", "thread_count", "nthread", "nthreads", "num_threads", "num_thread", "grid_search_n_jobs"]
        {
            assert!(is_thread_count_key(key), "{key}");
        }
        for key in ["N_JOBS", "jobs", "_n_jobs", "n_jobs_", "threads", "num_workers"] {
            assert!(!is_thread_count_key(key), "{key}");
        }
    }

    #[test]
    fn meanings_name_the_library() {
        assert!(meaning("num_threads", 0).starts_with("LightGBM reads 0"));
        assert!(meaning("nthreads", -1).starts_with("XGBoost treats any value <= 0"));
        assert!(meaning("thread_count", -1).starts_with("CatBoost"));
        assert!(meaning("cv_n_jobs", -1).starts_with("-1 means one worker per node core"));
        assert_eq!(meaning("n_jobs", -3), "-3 means \"all cores but 2\", still sized to the node");
        assert_eq!(
            meaning("n_jobs", i64::MIN),
            format!("{} means \"all cores but {}\", still sized to the node", i64::MIN, i64::MAX)
        );
    }
}
