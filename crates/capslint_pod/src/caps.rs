//! The thread-cap environment variables: which exist, which ADR-0096 requires, and what they hold.

use super::env::{Env, Value};
use capslint_cpu::thread_variables::spin::{self, Spinning};
use capslint_cpu::thread_variables::{Holds, Reading, THREAD_VARIABLES, read_cap};

pub use capslint_cpu::thread_variables::{LOKY_MAX_CPU_COUNT, PASSIVE, WAIT_POLICY};

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

/// The variables an ML library's own pool reads its size from, in the library's order of
/// precedence (the first one set wins); empty when no variable sizes it (torch's inter-op pool: only
/// `torch.set_num_interop_threads` does).
pub fn library_governing(library: &str, pool: &str) -> &'static [&'static str] {
    match (library, pool) {
        // `aten/src/ATen/ParallelCommon.cpp`: MKL_NUM_THREADS, when set, overrides OMP_NUM_THREADS.
        ("torch", "intra-op") => &["MKL_NUM_THREADS", "OMP_NUM_THREADS"],
        ("numba", _) => &["NUMBA_NUM_THREADS"],
        ("polars", _) => &["POLARS_MAX_THREADS"],
        ("cv2", _) => &["OPENCV_FOR_THREADS_NUM"],
        ("onnxruntime", "intra-op") => &["ORT_INTRA_OP_NUM_THREADS"],
        ("onnxruntime", "inter-op") => &["ORT_INTER_OP_NUM_THREADS"],
        ("tensorflow", "intra-op") => &["TF_NUM_INTRAOP_THREADS"],
        ("tensorflow", "inter-op") => &["TF_NUM_INTEROP_THREADS"],
        _ => &[],
    }
}

/// Whether an ML library's pool starts only when the workload runs work of its kind, and no variable
/// sizes it: torch's inter-op pool, whose threads `at::launch` (TorchScript `fork`, inter-op parallel
/// graphs) starts on first use. Its getter reports a size before any thread exists, and nothing `exec`
/// sets could bound it, so `runtime` lists it without judging it; `exec --watch` sees its threads if they
/// start.
pub fn started_on_demand(library: &str, pool: &str) -> bool {
    matches!((library, pool), ("torch", "inter-op"))
}

/// What one thread-cap variable holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CapValue {
    /// Not set.
    Unset,
    /// Set to the empty string; the libraries ignore it.
    Empty,
    /// A count every library that reads the variable reads alike.
    Threads {
        /// The value as written.
        raw: String,
        /// The most threads the libraries start from it ([`UNBOUNDED`] for nested teams
        /// without bound).
        threads: u64,
        /// How an OpenMP list or nesting was counted.
        note: Option<String>,
    },
    /// Set to a value the libraries reject or read differently.
    Invalid {
        /// The value as written (lossily decoded when not UTF-8).
        raw: String,
        /// How the libraries read it.
        why: String,
    },
}

/// The thread count of nested OpenMP teams that nothing bounds.
pub const UNBOUNDED: u64 = u64::MAX;

/// `threads` for messages: the number, or "unbounded".
pub fn show_threads(threads: u64) -> String {
    if threads == UNBOUNDED { "unbounded".to_owned() } else { threads.to_string() }
}

impl CapValue {
    /// The value as written, if set.
    pub fn raw(&self) -> Option<&str> {
        match self {
            Self::Unset => None,
            Self::Empty => Some(""),
            Self::Threads { raw, .. } | Self::Invalid { raw, .. } => Some(raw),
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
    /// The thread and process caps, in the order of [`capslint_cpu::thread_variables::THREAD_VARIABLES`]
    /// (the required ones first).
    pub caps: Vec<Cap>,
    /// `OMP_WAIT_POLICY` as written; `None` when unset.
    pub wait_policy: Option<String>,
    /// Every reason idle OpenMP threads spin: the policy, then the knobs that override it.
    pub spinning: Vec<Spinning>,
    /// Variables the environment holds more than once (C's `getenv` reads the first entry).
    pub duplicates: Vec<String>,
}

impl Caps {
    /// Reads every cap variable from `env`, as the libraries read them.
    pub fn read(env: &Env) -> Self {
        let value = |name: &str| env.value(name);
        let caps = THREAD_VARIABLES
            .iter()
            .filter(|variable| variable.holds == Holds::Count)
            .map(|variable| Cap {
                name: variable.name,
                required: variable.required,
                value: cap_value(env, variable.name),
            })
            .collect();
        let wait_policy = match env.value(WAIT_POLICY) {
            Value::Unset => None,
            Value::Text(text) => Some(text.to_owned()),
            Value::NotUtf8 => Some("<not UTF-8>".to_owned()),
        };
        let duplicates = env
            .duplicates()
            .iter()
            .map(|name| name.to_string_lossy().into_owned())
            .filter(|name| is_read_by_runtimes(name))
            .collect();
        Self { caps, wait_policy, spinning: spin::spinning(value), duplicates }
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

    /// Whether `OMP_WAIT_POLICY` is exactly `passive` (in any case), as every OpenMP runtime reads it.
    pub fn wait_policy_is_passive(&self) -> bool {
        self.spinning.iter().all(|spinning| spinning.name != WAIT_POLICY)
    }
}

/// Whether a variable is one the thread pools, the nesting or the spinning of the libraries depend
/// on, or the Downward API limit: a duplicate of it makes the environment ambiguous.
fn is_read_by_runtimes(name: &str) -> bool {
    const PREFIXES: [&str; 13] = [
        "OMP_",
        "GOMP_",
        "KMP_",
        "MKL_",
        "OPENBLAS_",
        "GOTO_",
        "BLIS_",
        "NUMEXPR_",
        "NUMBA_",
        "POLARS_",
        "RAYON_",
        "TF_NUM_",
        "ORT_",
    ];
    THREAD_VARIABLES.iter().any(|variable| variable.name == name)
        || PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        || name == "CPU_LIMIT"
        || name.ends_with("_CPU_LIMIT")
}

fn cap_value(env: &Env, name: &str) -> CapValue {
    let raw = || match env.value(name) {
        Value::Text(text) => text.to_owned(),
        _ => "<not UTF-8>".to_owned(),
    };
    match read_cap(name, |name| env.value(name)) {
        Reading::Unset => CapValue::Unset,
        Reading::Empty => CapValue::Empty,
        Reading::Threads { threads, note } => {
            CapValue::Threads { raw: raw(), threads: threads.unwrap_or(UNBOUNDED), note }
        }
        Reading::Refused(why) => CapValue::Invalid { raw: raw(), why },
    }
}

/// Reads the value `raw` of the cap `name` on its own (no nesting knobs set), as the libraries do.
#[cfg(test)]
fn parse_cap(name: &str, raw: &str) -> CapValue {
    let env: Env = [(name, raw)].into_iter().collect();
    cap_value(&env, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_thread_counts() {
        assert_eq!(parse_cap("MKL_NUM_THREADS", "2").threads(), Some(2));
        assert_eq!(parse_cap("MKL_NUM_THREADS", ""), CapValue::Empty);
        for bad in [" 2 ", "  ", "0", "-1", "two", "1.5", "+2", "99999999999999999999999", "4,2", "\u{a0}1"] {
            assert!(matches!(parse_cap("MKL_NUM_THREADS", bad), CapValue::Invalid { .. }), "{bad:?}");
        }
    }

    #[test]
    fn omp_nested_lists_count_every_active_level() {
        let value = parse_cap("OMP_NUM_THREADS", "4,2,1");
        assert_eq!(value.threads(), Some(8));
        let CapValue::Threads { note: Some(note), .. } = value else {
            panic!("no note: {value:?}");
        };
        assert!(note.contains("at most 8 threads"), "{note}");
        assert_eq!(parse_cap("OMP_NUM_THREADS", "1,64").threads(), Some(UNBOUNDED));
        assert!(matches!(parse_cap("OMP_NUM_THREADS", ",2"), CapValue::Invalid { .. }));
        let nested: Env = [("OMP_NUM_THREADS", "2"), ("OMP_MAX_ACTIVE_LEVELS", "2")].into_iter().collect();
        assert_eq!(Caps::read(&nested).get("OMP_NUM_THREADS").unwrap().value.threads(), Some(4));
    }

    #[test]
    fn reads_every_cap_and_the_wait_policy() {
        let env: Env =
            [("OMP_NUM_THREADS", "1"), ("GOTO_NUM_THREADS", "8"), ("OMP_WAIT_POLICY", "PASSIVE")].into_iter().collect();
        let caps = Caps::read(&env);
        assert_eq!(caps.caps.len(), capslint_cpu::thread_variables::caps().count());
        assert!(caps.caps[..5].iter().all(|c| c.required));
        assert_eq!(caps.get("OMP_NUM_THREADS").unwrap().value.threads(), Some(1));
        assert_eq!(caps.get("MKL_NUM_THREADS").unwrap().value, CapValue::Unset);
        assert_eq!(caps.get("GOTO_NUM_THREADS").unwrap().value.threads(), Some(8));
        assert!(caps.wait_policy_is_passive());
        assert!(caps.spinning.is_empty() && caps.duplicates.is_empty());
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
    fn finds_the_variable_that_governs_a_library_pool() {
        let env: Env =
            [("OMP_NUM_THREADS", "2"), ("MKL_NUM_THREADS", "1"), ("NUMBA_NUM_THREADS", "3")].into_iter().collect();
        let caps = Caps::read(&env);
        assert_eq!(caps.first_set(library_governing("torch", "intra-op")), Some(("MKL_NUM_THREADS", 1)));
        assert_eq!(caps.first_set(library_governing("numba", "parallel")), Some(("NUMBA_NUM_THREADS", 3)));
        assert!(library_governing("torch", "inter-op").is_empty());
        assert_eq!(library_governing("tensorflow", "inter-op"), ["TF_NUM_INTEROP_THREADS"]);
        assert_eq!(library_governing("cv2", "parallel_for"), ["OPENCV_FOR_THREADS_NUM"]);
    }

    #[test]
    fn only_passive_without_spin_knobs_is_passive() {
        for (policy, passive) in [
            (None, false),
            (Some("active"), false),
            (Some(""), false),
            (Some("Passive"), true),
            (Some("passive "), false),
        ] {
            let env: Env = policy.map(|p| ("OMP_WAIT_POLICY", p)).into_iter().collect();
            assert_eq!(Caps::read(&env).wait_policy_is_passive(), passive, "{policy:?}");
        }
        let env: Env = [("OMP_WAIT_POLICY", "passive"), ("GOMP_SPINCOUNT", "infinite")].into_iter().collect();
        let caps = Caps::read(&env);
        assert!(caps.wait_policy_is_passive());
        assert_eq!(caps.spinning.len(), 1);
    }

    #[test]
    fn records_duplicates_of_the_variables_the_runtimes_read() {
        let env: Env =
            [("OMP_NUM_THREADS", "64"), ("OMP_NUM_THREADS", "1"), ("PATH", "/a"), ("PATH", "/b")].into_iter().collect();
        let caps = Caps::read(&env);
        assert_eq!(caps.duplicates, ["OMP_NUM_THREADS"]);
        assert_eq!(caps.get("OMP_NUM_THREADS").unwrap().value.threads(), Some(64));
    }
}
