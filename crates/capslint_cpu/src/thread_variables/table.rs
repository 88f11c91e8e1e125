//! The table of the variables that size thread and process pools: for each, the library that reads
//! it, how that library parses it ([`Grammar`]), when it is read, whether ADR-0096 requires it,
//! whether setting it where the library is absent changes nothing, and what `capslint exec` does
//! with it. The facts for the ML stack (numba, polars, rayon, OpenCV, TensorFlow) are the ones
//! checked against the real libraries in `docs/ml-stack.md`.

use super::grammar::Grammar;
use super::spin::WAIT_POLICY;

/// What a variable holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// A thread or process count: a cap, compared with the CPU limit.
    Count,
    /// The OpenMP wait policy (`passive` or `active`).
    WaitPolicy,
    /// How long an idle OpenMP thread spins before it sleeps ([`super::spin::SPIN_KNOBS`]).
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
    /// The library (or runtime) that reads it.
    pub library: &'static str,
    /// What it holds.
    pub holds: Holds,
    /// How the library parses a count (`None` for the wait policy and the spin knobs, which
    /// [`super::spin`] reads).
    pub grammar: Option<Grammar>,
    /// Read once, when one of the BLAS or OpenMP runtimes (or numexpr, numba, polars) that honours
    /// it loads (CAP106): setting it later changes nothing. Variables read when a pool is first
    /// built by a library CAP106 does not follow are not marked.
    pub read_at_load: bool,
    /// One of the caps ADR-0096 requires on every compute pod (the default `thread-caps`).
    pub required: bool,
    /// Setting it to the limit in a process that does not load the library changes nothing, and in
    /// one that does only bounds a pool: safe for `exec` to set everywhere.
    pub harmless_elsewhere: bool,
    /// What `capslint exec` does with it.
    pub on_exec: OnExec,
}

/// A count variable that only bounds a pool.
const fn count(
    name: &'static str,
    library: &'static str,
    grammar: Grammar,
    read_at_load: bool,
    required: bool,
    on_exec: OnExec,
) -> ThreadVariable {
    ThreadVariable {
        name,
        library,
        holds: Holds::Count,
        grammar: Some(grammar),
        read_at_load,
        required,
        harmless_elsewhere: true,
        on_exec,
    }
}

const fn spin_knob(name: &'static str, library: &'static str) -> ThreadVariable {
    ThreadVariable {
        name,
        library,
        holds: Holds::SpinCount,
        grammar: None,
        read_at_load: true,
        required: false,
        harmless_elsewhere: true,
        on_exec: OnExec::NotACap,
    }
}

/// Every variable, the required caps first in ADR-0096's order.
pub const THREAD_VARIABLES: &[ThreadVariable] = &[
    count("OMP_NUM_THREADS", "OpenMP", Grammar::OpenMpList, true, true, OnExec::Export),
    count("OPENBLAS_NUM_THREADS", "OpenBLAS", Grammar::Atoi, true, true, OnExec::Export),
    count("MKL_NUM_THREADS", "MKL", Grammar::MklUndocumented, true, true, OnExec::Export),
    count("NUMEXPR_NUM_THREADS", "NumExpr", Grammar::PythonInt, true, true, OnExec::Export),
    // joblib and loky read it on every call, not at import.
    count("LOKY_MAX_CPU_COUNT", "loky", Grammar::PythonInt, false, true, OnExec::Export),
    count("NUMEXPR_MAX_THREADS", "NumExpr", Grammar::PythonInt, true, false, OnExec::Export),
    count("VECLIB_MAXIMUM_THREADS", "Apple's Accelerate", Grammar::AccelerateUndocumented, true, false, OnExec::Export),
    count("BLIS_NUM_THREADS", "BLIS", Grammar::Strtol, true, false, OnExec::Export),
    count("NUMBA_NUM_THREADS", "numba", Grammar::NumbaInt, true, false, OnExec::Export),
    count("POLARS_MAX_THREADS", "polars", Grammar::PolarsUsize, true, false, OnExec::Export),
    // rayon's global pool (Hugging Face tokenizers, other Rust extensions), read when it is first
    // used; polars builds its own pool and does not read it.
    count("RAYON_NUM_THREADS", "rayon", Grammar::Rayon, false, false, OnExec::Export),
    // rayon's deprecated name, read only when RAYON_NUM_THREADS is unset or does not parse, which
    // exec never leaves it.
    count("RAYON_RS_NUM_CPUS", "rayon", Grammar::Rayon, false, false, OnExec::Check),
    // OpenCV's parallel_for pool, read at its first parallel call.
    count("OPENCV_FOR_THREADS_NUM", "OpenCV", Grammar::OpenCvSize, false, false, OnExec::Export),
    // ONNX Runtime's session pools, read when a session is created whose options leave the count at
    // 0 (the default); an explicit option wins. It does not read OMP_NUM_THREADS.
    count("ORT_INTRA_OP_NUM_THREADS", "ONNX Runtime", Grammar::OnnxRuntimeInt, false, false, OnExec::Export),
    count("ORT_INTER_OP_NUM_THREADS", "ONNX Runtime", Grammar::OnnxRuntimeInt, false, false, OnExec::Export),
    // TensorFlow's two pools, read when the first session or eager context builds them.
    count("TF_NUM_INTRAOP_THREADS", "TensorFlow", Grammar::TensorFlowInt64, false, false, OnExec::Export),
    count("TF_NUM_INTEROP_THREADS", "TensorFlow", Grammar::TensorFlowInt64, false, false, OnExec::Export),
    count("GOTO_NUM_THREADS", "OpenBLAS", Grammar::Atoi, true, false, OnExec::Check),
    // Overrides MKL_NUM_THREADS per domain; never set by exec, refused above the limit.
    count(MKL_DOMAIN_NUM_THREADS, "MKL", Grammar::MklDomains, true, false, OnExec::Check),
    // Python 3.13's override of `os.cpu_count()`, read on every call.
    count("PYTHON_CPU_COUNT", "CPython", Grammar::CpythonInt, false, false, OnExec::Export),
    ThreadVariable {
        name: WAIT_POLICY,
        library: "OpenMP",
        holds: Holds::WaitPolicy,
        grammar: None,
        read_at_load: true,
        required: false,
        harmless_elsewhere: true,
        on_exec: OnExec::NotACap,
    },
    spin_knob("GOMP_SPINCOUNT", "libgomp"),
    spin_knob("KMP_BLOCKTIME", "LLVM's OpenMP runtime"),
    spin_knob("KMP_LIBRARY", "LLVM's OpenMP runtime"),
];

/// MKL's per-domain counts (`MKL_DOMAIN_ALL=2, MKL_DOMAIN_BLAS=1`), which override
/// `MKL_NUM_THREADS` for their domain.
pub const MKL_DOMAIN_NUM_THREADS: &str = "MKL_DOMAIN_NUM_THREADS";

/// The process-count cap read by loky and joblib.
pub const LOKY_MAX_CPU_COUNT: &str = "LOKY_MAX_CPU_COUNT";

/// The table's entry for `name`.
pub fn find(name: &str) -> Option<&'static ThreadVariable> {
    THREAD_VARIABLES.iter().find(|variable| variable.name == name)
}

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
            assert_eq!(variable.holds == Holds::Count, variable.grammar.is_some(), "{}", variable.name);
            assert!(!variable.required || variable.holds == Holds::Count, "{}", variable.name);
        }
        assert!(is_cap("GOTO_NUM_THREADS") && !is_cap(WAIT_POLICY));
        assert!(is_read_at_load(WAIT_POLICY) && !is_read_at_load(LOKY_MAX_CPU_COUNT));
    }

    #[test]
    fn exec_exports_only_what_is_harmless_elsewhere() {
        for variable in THREAD_VARIABLES.iter().filter(|variable| variable.on_exec == OnExec::Export) {
            assert!(variable.harmless_elsewhere, "{}", variable.name);
        }
    }

    #[test]
    fn the_ml_stack_variables_are_caps_never_required_and_not_load_time() {
        let exported = [
            "RAYON_NUM_THREADS",
            "OPENCV_FOR_THREADS_NUM",
            "ORT_INTRA_OP_NUM_THREADS",
            "ORT_INTER_OP_NUM_THREADS",
            "TF_NUM_INTRAOP_THREADS",
            "TF_NUM_INTEROP_THREADS",
        ];
        for name in exported {
            let variable = find(name).unwrap();
            assert!(is_cap(name) && !variable.required && variable.on_exec == OnExec::Export, "{name}");
            // CAP106 maps load-time variables to the BLAS and OpenMP loaders, which do not read these.
            assert!(!is_read_at_load(name), "{name}");
        }
        assert_eq!(find("TF_NUM_INTEROP_THREADS").unwrap().library, "TensorFlow");
        assert_eq!(find("RAYON_RS_NUM_CPUS").unwrap().on_exec, OnExec::Check);
    }
}
