//! The thread-cap environment variables: which exist, which ADR-0096 requires, and what they hold.

use super::env::{Env, Value};
use crate::thread_variables::{Holds, THREAD_VARIABLES};

pub use crate::thread_variables::{LOKY_MAX_CPU_COUNT, WAIT_POLICY};

/// The value `OMP_WAIT_POLICY` must have.
pub const PASSIVE: &str = "passive";

/// The variables a thread pool reads its size from, by threadpoolctl's `internal_api`, in the
/// library's order of precedence (the first one set wins).
pub fn governing(internal_api: &str) -> &'static [&'static str] {
    match internal_api {
        "openblas" => &["OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"],
        "mkl" => &["MKL_NUM_THREADS", "OMP_NUM_THREADS"],
        "blis" => &["BLIS_NUM_THREADS", "OMP_NUM_THREADS"],
        _ => &["OMP_NUM_THREADS"],
    }
}

/// What one thread-cap variable holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CapValue {
    /// Not set.
    Unset,
    /// Set to the empty string (or only whitespace); the libraries ignore it.
    Empty,
    /// A usable thread count.
    Threads {
        /// The value as written.
        raw: String,
        /// The count the libraries use.
        threads: u64,
        /// A remark on how it was read (OpenMP's nested list syntax).
        note: Option<String>,
    },
    /// Set, but not a positive integer.
    Invalid {
        /// The value as written (lossily decoded when not UTF-8).
        raw: String,
    },
}

impl CapValue {
    /// The value as written, if set.
    pub fn raw(&self) -> Option<&str> {
        match self {
            Self::Unset => None,
            Self::Empty => Some(""),
            Self::Threads { raw, .. } | Self::Invalid { raw } => Some(raw),
        }
    }

    /// The thread count, when usable.
    pub fn threads(&self) -> Option<u64> {
        match self {
            Self::Threads { threads, .. } => Some(*threads),
            _ => None,
        }
    }
}

/// One thread-cap variable and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cap {
    /// The variable name.
    pub name: &'static str,
    /// Whether ADR-0096 requires it.
    pub required: bool,
    /// What it holds.
    pub value: CapValue,
}

/// Every cap variable, as found in one environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caps {
    /// The thread and process caps, in the order of [`crate::thread_variables::THREAD_VARIABLES`]
    /// (the required ones first).
    pub caps: Vec<Cap>,
    /// `OMP_WAIT_POLICY` as written; `None` when unset.
    pub wait_policy: Option<String>,
}

impl Caps {
    /// Reads every cap variable from `env`.
    pub fn read(env: &Env) -> Self {
        let caps = THREAD_VARIABLES
            .iter()
            .filter(|variable| variable.holds == Holds::Count)
            .map(|variable| Cap {
                name: variable.name,
                required: variable.required,
                value: read_cap(env, variable.name),
            })
            .collect();
        let wait_policy = match env.value(WAIT_POLICY) {
            Value::Unset => None,
            Value::Text(text) => Some(text.to_owned()),
            Value::NotUtf8 => Some("<not UTF-8>".to_owned()),
        };
        Self { caps, wait_policy }
    }

    /// Looks up one cap by name.
    pub fn get(&self, name: &str) -> Option<&Cap> {
        self.caps.iter().find(|cap| cap.name == name)
    }

    /// The first of `names` that holds a usable thread count, with that count.
    pub fn first_set(&self, names: &[&str]) -> Option<(&'static str, u64)> {
        names.iter().find_map(|name| {
            let cap = self.get(name)?;
            Some((cap.name, cap.value.threads()?))
        })
    }

    /// Whether any cap variable holds a usable thread count.
    pub fn any_set(&self) -> bool {
        self.caps.iter().any(|cap| cap.value.threads().is_some())
    }

    /// Whether `OMP_WAIT_POLICY` is `passive` (case-insensitively, as OpenMP runtimes read it).
    pub fn wait_policy_is_passive(&self) -> bool {
        self.wait_policy.as_deref().is_some_and(|policy| policy.trim().eq_ignore_ascii_case(PASSIVE))
    }
}

fn read_cap(env: &Env, name: &str) -> CapValue {
    match env.value(name) {
        Value::Unset => CapValue::Unset,
        Value::NotUtf8 => CapValue::Invalid { raw: "<not UTF-8>".to_owned() },
        Value::Text(raw) => parse_cap(name, raw),
    }
}

/// Reads the value of the cap `name`: a positive integer, or for `OMP_NUM_THREADS` also
/// OpenMP's nested list (`4,2`), whose first level is the count of the outermost team.
pub fn parse_cap(name: &str, raw: &str) -> CapValue {
    let text = raw.trim();
    if text.is_empty() {
        return CapValue::Empty;
    }
    let (first, note) = match text.split_once(',') {
        Some((first, _)) if name == "OMP_NUM_THREADS" => {
            (first.trim(), Some(format!("nested list {text:?}: the first level ({}) is counted", first.trim())))
        }
        _ => (text, None),
    };
    let threads = (!first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()))
        .then(|| first.parse::<u64>().ok())
        .flatten()
        .filter(|&n| n > 0);
    match threads {
        Some(threads) => CapValue::Threads { raw: raw.to_owned(), threads, note },
        None => CapValue::Invalid { raw: raw.to_owned() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_thread_counts() {
        assert_eq!(parse_cap("MKL_NUM_THREADS", "2").threads(), Some(2));
        assert_eq!(parse_cap("MKL_NUM_THREADS", " 2 ").threads(), Some(2));
        assert_eq!(parse_cap("MKL_NUM_THREADS", ""), CapValue::Empty);
        assert_eq!(parse_cap("MKL_NUM_THREADS", "  "), CapValue::Empty);
        for bad in ["0", "-1", "two", "1.5", "+2", "99999999999999999999999", "4,2"] {
            assert_eq!(parse_cap("MKL_NUM_THREADS", bad), CapValue::Invalid { raw: bad.into() }, "{bad:?}");
        }
    }

    #[test]
    fn omp_nested_lists_count_the_first_level() {
        let value = parse_cap("OMP_NUM_THREADS", "4,2");
        assert_eq!(value.threads(), Some(4));
        let CapValue::Threads { note: Some(note), .. } = value else {
            panic!("no note: {value:?}");
        };
        assert!(note.contains("first level (4)"), "{note}");
        assert!(matches!(parse_cap("OMP_NUM_THREADS", ",2"), CapValue::Invalid { .. }));
    }

    #[test]
    fn reads_every_cap_and_the_wait_policy() {
        let env: Env = [("OMP_NUM_THREADS", "1"), ("GOTO_NUM_THREADS", "8"), ("OMP_WAIT_POLICY", "PASSIVE ")]
            .into_iter()
            .collect();
        let caps = Caps::read(&env);
        assert_eq!(caps.caps.len(), crate::thread_variables::caps().count());
        assert!(caps.caps[..5].iter().all(|c| c.required));
        assert_eq!(caps.get("OMP_NUM_THREADS").unwrap().value.threads(), Some(1));
        assert_eq!(caps.get("MKL_NUM_THREADS").unwrap().value, CapValue::Unset);
        assert_eq!(caps.get("GOTO_NUM_THREADS").unwrap().value.threads(), Some(8));
        assert!(caps.wait_policy_is_passive());
    }

    #[test]
    fn finds_the_variable_that_governs_a_pool() {
        let env: Env = [("OMP_NUM_THREADS", "3"), ("GOTO_NUM_THREADS", "x")].into_iter().collect();
        let caps = Caps::read(&env);
        // GOTO_NUM_THREADS is invalid, so OpenBLAS falls through to OMP_NUM_THREADS.
        assert_eq!(caps.first_set(governing("openblas")), Some(("OMP_NUM_THREADS", 3)));
        assert_eq!(caps.first_set(governing("mkl")), Some(("OMP_NUM_THREADS", 3)));
        assert_eq!(caps.first_set(&["MKL_NUM_THREADS"]), None);
        assert!(caps.any_set());
        assert!(!Caps::read(&Env::default()).any_set());
    }

    #[test]
    fn only_passive_is_passive() {
        for (policy, passive) in [(None, false), (Some("active"), false), (Some(""), false), (Some("Passive"), true)] {
            let env: Env = policy.map(|p| ("OMP_WAIT_POLICY", p)).into_iter().collect();
            assert_eq!(Caps::read(&env).wait_policy_is_passive(), passive, "{policy:?}");
        }
    }
}
