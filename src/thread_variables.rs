//! The environment variables that size thread and process pools, in one table read by the Python
//! rules, the manifest rules, `capslint runtime` and `capslint exec`.

/// What a variable holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// A thread or process count: a cap, compared with the CPU limit.
    Count,
    /// The OpenMP wait policy (`passive` or `active`).
    WaitPolicy,
    /// How long an idle OpenMP thread spins before it sleeps.
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
    /// Not a count: the wait policy has its own handling, the spin count is left alone.
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
    // Python 3.13's override of `os.cpu_count()`, read on every call.
    count("PYTHON_CPU_COUNT", false, false, OnExec::Export),
    ThreadVariable {
        name: "OMP_WAIT_POLICY",
        holds: Holds::WaitPolicy,
        read_at_load: true,
        required: false,
        on_exec: OnExec::NotACap,
    },
    ThreadVariable {
        name: "GOMP_SPINCOUNT",
        holds: Holds::SpinCount,
        read_at_load: true,
        required: false,
        on_exec: OnExec::NotACap,
    },
];

/// The OpenMP wait policy variable; `passive` makes idle threads sleep instead of spin.
pub const WAIT_POLICY: &str = "OMP_WAIT_POLICY";

/// The process-count cap read by loky and joblib.
pub const LOKY_MAX_CPU_COUNT: &str = "LOKY_MAX_CPU_COUNT";

/// The names of the variables matching `keep`, in table order.
fn names(keep: fn(&ThreadVariable) -> bool) -> impl Iterator<Item = &'static str> {
    THREAD_VARIABLES.iter().filter(move |variable| keep(variable)).map(|variable| variable.name)
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
