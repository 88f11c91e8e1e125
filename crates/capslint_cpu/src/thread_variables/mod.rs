//! The environment variables that size thread and process pools, in one table read by the Python
//! rules, the manifest rules, `capslint runtime` and `capslint exec`, and how the libraries read
//! their values: [`count`] (one count or an OpenMP list), [`nesting`] (how many threads a list really
//! starts), [`spin`] (whether idle threads spin). `runtime`, `exec` and the manifest rules all read
//! values through [`read_cap`] and [`spin::spinning`], so what one accepts the others accept.

pub mod count;
pub mod nesting;
pub mod spin;

pub use spin::{PASSIVE, WAIT_POLICY};

/// A variable's setting in an environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// The variable is not set.
    Unset,
    /// The variable is set to valid UTF-8 text (possibly empty).
    Text(&'a str),
    /// The variable is set to bytes that are not UTF-8.
    NotUtf8,
}

/// A count variable's value in an environment, read as every library that reads it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Not set.
    Unset,
    /// Set to the empty string: the libraries ignore it.
    Empty,
    /// Every reader gets at most `threads` threads (`None`: nested teams without bound).
    Threads {
        /// The bound, the product of the active nesting levels for an OpenMP list.
        threads: Option<u64>,
        /// How a list or nesting was counted.
        note: Option<String>,
    },
    /// The readers reject the value or read it differently: why.
    Refused(String),
}

/// Reads the count variable `name` in the environment that `value` looks up.
pub fn read_cap<'a>(name: &str, value: impl Fn(&str) -> Value<'a>) -> Reading {
    let counted = match value(name) {
        Value::Unset => return Reading::Unset,
        Value::NotUtf8 => count::not_utf8(),
        Value::Text(raw) => count::read(name, raw),
    };
    let levels = match counted {
        count::Count::Empty => return Reading::Empty,
        count::Count::Refused(why) => return Reading::Refused(why),
        count::Count::Levels(levels) => levels,
    };
    if !count::takes_list(name) {
        return Reading::Threads { threads: levels.first().copied(), note: None };
    }
    let active = nesting::active_levels(&value, levels.len());
    let threads = nesting::team_bound(&levels, &active);
    let note = match (&active, threads) {
        (nesting::ActiveLevels::Limited(1), _) if levels.len() == 1 => None,
        (nesting::ActiveLevels::Unlimited(why), None) => Some(format!(
            "{why}, and each nested level starts {} threads per thread: nested teams have no bound",
            levels.last().copied().unwrap_or_default()
        )),
        (nesting::ActiveLevels::Unlimited(why), Some(threads)) => {
            Some(format!("{why}: the nested teams hold at most {threads} threads"))
        }
        (nesting::ActiveLevels::Limited(depth), Some(threads)) => {
            Some(format!("{depth} active nesting levels: the nested teams hold at most {threads} threads"))
        }
        (nesting::ActiveLevels::Limited(depth), None) => {
            Some(format!("{depth} active nesting levels: the nested teams hold more threads than can be counted"))
        }
    };
    Reading::Threads { threads, note }
}

/// What a variable holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// A thread or process count: a cap, compared with the CPU limit.
    Count,
    /// The OpenMP wait policy (`passive` or `active`).
    WaitPolicy,
    /// How long an idle OpenMP thread spins before it sleeps ([`spin::SPIN_KNOBS`]).
    SpinCount,
}

/// What `capslint exec` does with a count variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnExec {
    /// Set to the effective limit when unset or empty; refused when above it.
    Export,
    /// Left alone, refused when above the limit (OpenBLAS reads `GOTO_NUM_THREADS` only when
    /// `OPENBLAS_NUM_THREADS` is unset, which `exec` never leaves it).
    Check,
    /// Not a count: the wait policy is set to `passive`, a spin knob is checked, never set.
    NotACap,
}

/// One variable and every place capslint uses it.
#[derive(Debug, Clone, Copy)]
pub struct ThreadVariable {
    /// The variable's name.
    pub name: &'static str,
    /// What it holds.
    pub holds: Holds,
    /// Read once, when the library that honours it loads (CAP106): setting it later changes nothing.
    pub read_at_load: bool,
    /// One of the caps ADR-0096 requires on every compute pod (the default `thread-caps`).
    pub required: bool,
    /// What `capslint exec` does with it.
    pub on_exec: OnExec,
}

const fn count(name: &'static str, read_at_load: bool, required: bool, on_exec: OnExec) -> ThreadVariable {
    ThreadVariable { name, holds: Holds::Count, read_at_load, required, on_exec }
}

const fn spin_knob(name: &'static str) -> ThreadVariable {
    ThreadVariable { name, holds: Holds::SpinCount, read_at_load: true, required: false, on_exec: OnExec::NotACap }
}

/// Every variable, the required caps first in ADR-0096's order.
pub const THREAD_VARIABLES: &[ThreadVariable] = &[
    count("OMP_NUM_THREADS", true, true, OnExec::Export),
    count("OPENBLAS_NUM_THREADS", true, true, OnExec::Export),
    count("MKL_NUM_THREADS", true, true, OnExec::Export),
    count("NUMEXPR_NUM_THREADS", true, true, OnExec::Export),
    // joblib and loky read it on every call, not at import.
    count("LOKY_MAX_CPU_COUNT", false, true, OnExec::Export),
    count("NUMEXPR_MAX_THREADS", true, false, OnExec::Export),
    count("VECLIB_MAXIMUM_THREADS", true, false, OnExec::Export),
    count("BLIS_NUM_THREADS", true, false, OnExec::Export),
    count("NUMBA_NUM_THREADS", true, false, OnExec::Export),
    count("POLARS_MAX_THREADS", true, false, OnExec::Export),
    count("GOTO_NUM_THREADS", true, false, OnExec::Check),
    // Overrides MKL_NUM_THREADS per domain; never set by exec, refused above the limit.
    count(count::MKL_DOMAIN_NUM_THREADS, true, false, OnExec::Check),
    // Python 3.13's override of `os.cpu_count()`, read on every call.
    count("PYTHON_CPU_COUNT", false, false, OnExec::Export),
    ThreadVariable {
        name: "OMP_WAIT_POLICY",
        holds: Holds::WaitPolicy,
        read_at_load: true,
        required: false,
        on_exec: OnExec::NotACap,
    },
    spin_knob("GOMP_SPINCOUNT"),
    spin_knob("KMP_BLOCKTIME"),
    spin_knob("KMP_LIBRARY"),
];

/// The process-count cap read by loky and joblib.
pub const LOKY_MAX_CPU_COUNT: &str = "LOKY_MAX_CPU_COUNT";

/// The names of the variables matching `keep`, in table order.
fn names(keep: fn(&ThreadVariable) -> bool) -> impl Iterator<Item = &'static str> {
    THREAD_VARIABLES.iter().filter(move |variable| keep(variable)).map(|variable| variable.name)
}

/// The library that reads `name` and, when it is unset, falls back to `OMP_NUM_THREADS` (OpenBLAS
/// through `GOTO_NUM_THREADS` first: `driver/others/openblas_env.c`; MKL: "MKL_NUM_THREADS takes
/// precedence over OMP_NUM_THREADS"; numexpr: `utils.py` `_init_num_threads`). loky has no such fallback.
pub fn omp_fallback_reader(name: &str) -> Option<&'static str> {
    match name {
        "OPENBLAS_NUM_THREADS" | "GOTO_NUM_THREADS" => Some("OpenBLAS"),
        "MKL_NUM_THREADS" => Some("MKL"),
        "NUMEXPR_NUM_THREADS" => Some("NumExpr"),
        _ => None,
    }
}

/// Every count variable: what counts as a cap when read, and what is compared with the limit when set.
pub fn caps() -> impl Iterator<Item = &'static str> {
    names(|variable| variable.holds == Holds::Count)
}

/// The caps ADR-0096 requires.
pub fn required_caps() -> impl Iterator<Item = &'static str> {
    names(|variable| variable.required)
}

/// The variables libraries read once, at load time (CAP106).
pub fn read_at_load() -> impl Iterator<Item = &'static str> {
    names(|variable| variable.read_at_load)
}

/// Whether `name` is a count variable.
pub fn is_cap(name: &str) -> bool {
    caps().any(|cap| cap == name)
}

/// Whether `name` is read at load time.
pub fn is_read_at_load(name: &str) -> bool {
    read_at_load().any(|variable| variable == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = THREAD_VARIABLES.iter().map(|variable| variable.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), THREAD_VARIABLES.len());
    }

    #[test]
    fn the_required_caps_are_adr_0096s_five_and_come_first() {
        let required: Vec<&str> = required_caps().collect();
        assert_eq!(
            required,
            ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "LOKY_MAX_CPU_COUNT"]
        );
        assert!(THREAD_VARIABLES[..required.len()].iter().all(|variable| variable.required));
    }

    #[test]
    fn only_counts_are_caps_and_exec_handles_every_count() {
        for variable in THREAD_VARIABLES {
            assert_eq!(variable.holds == Holds::Count, variable.on_exec != OnExec::NotACap, "{}", variable.name);
            assert!(!variable.required || variable.holds == Holds::Count, "{}", variable.name);
        }
        assert!(is_cap("GOTO_NUM_THREADS") && !is_cap(WAIT_POLICY));
        assert!(is_read_at_load(WAIT_POLICY) && !is_read_at_load(LOKY_MAX_CPU_COUNT));
    }
}
