//! The limits of value resolution, and what reaching one reports. Resolution follows definitions a bounded
//! number of steps ([`Limit`]); a value it stops following is unknown. Where a rule needed that value (a
//! thread count, a params dict, a callee), the finding it could have been is reported as CAP003 instead
//! of silence, naming the limit and where the chain was cut. A chain within the limits is resolved in
//! full; the per-file work budget ([`super::budget`]) stops the whole file instead.

use ruff_text_size::TextRange;

use super::site::Site;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// Bounds recursion through names, so cyclic or very deep definitions cannot hang or overflow.
pub const MAX_DEPTH: u32 = 24;

/// How many alternative definitions of one name are followed before the value counts as unknown.
pub const MAX_ALTERNATIVES: usize = 16;

/// How many modules one lookup may pass through (re-exports, `__init__` aliases, base classes).
pub const MAX_HOPS: u32 = 8;

/// The largest module read: constants and params modules are small, and this bounds what one import costs.
pub const MAX_MODULE_BYTES: u64 = 1 << 20;

/// How many levels of an environment variable's source are followed (`V1EnvVar` -> `V1EnvVarSource` ->
/// `V1ResourceFieldSelector`, or the dicts that spell them), in a pod operator's `env_vars`.
pub const MAX_ENV_SOURCE_NESTING: u32 = 6;

/// How deeply nested dicts another module's summary keeps (`{"model": {"params": {"n_jobs": -1}}}`).
pub const MAX_DICT_NESTING: u32 = 4;

/// How many calls of this module's functions are followed one inside the other, from a call in the
/// module's own code: a value passed down a longer chain of calls is cut there.
pub const MAX_CALL_DEPTH: u32 = 3;

/// How many calls of one function of the module are followed into its body, per file: the calls beyond
/// them are not followed, and the first of them is reported as cut.
pub const MAX_CALL_SITES: u32 = 256;

/// How many bytes of other modules of the project one file builds semantic models of, to follow its
/// calls into their functions (each call builds its callee's module's model): the calls beyond are not
/// followed, and the first of them is reported as cut.
pub const MAX_MODULE_MODEL_BYTES: u64 = 16 << 20;
// Where an estimator with `n_jobs=-1` runs (`super::cluster_fits`): reaching one of these keeps the
// finding, so none hides one and none is CAP003.

/// How many uses (name loads, calls of a function) one question examines before it gives up, keeping
/// the finding.
pub const MAX_FIT_USES: usize = 64;

/// How many names and wrappers one question follows the estimator through: the name it is bound to,
/// aliases (`model = clf`, `model = clf.fit(X, y)`) and wrappers (`search = GridSearchCV(clf)`).
pub const MAX_FIT_FOLLOW_DEPTH: u32 = 4;

/// How many calls deep a use in a module-level function is followed to the block it is called in
/// (`with parallel_backend("dask"): main()` where `main()` calls `train()`, which fits).
pub const MAX_FIT_CALL_DEPTH: u32 = 2;

/// A bound on how far resolution follows a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// [`MAX_DEPTH`] nested steps: names followed to their definitions, dict merges, attribute hops,
    /// operands.
    Depth,
    /// More than [`MAX_ALTERNATIVES`] definitions of one name (or `return` values of one function) that
    /// agree as far as they are followed.
    Alternatives,
    /// More than [`MAX_HOPS`] modules of the project passed through by one import (re-exports, base classes).
    ModuleHops,
    /// More than [`MAX_ALTERNATIVES`] distinct values of one expression on different paths (branches,
    /// bindings, defaults, and the combinations of operands that differ by path).
    Paths,
    /// A module of the project larger than [`MAX_MODULE_BYTES`], not read.
    ModuleSize,
    /// A module of the project whose own analysis was refused or spent its work budget.
    ModuleBudget,
    /// A dict nested more than [`MAX_DICT_NESTING`] levels deep in another module.
    DictNesting,
    /// More than [`MAX_ENV_SOURCE_NESTING`] nested levels of an environment variable's source (a pod
    /// operator's `env_vars`).
    EnvSourceNesting,
    /// More than [`MAX_CALL_DEPTH`] calls of the module's functions, one inside the other.
    CallDepth,
    /// More than [`MAX_CALL_SITES`] calls of one function of the module followed into its body.
    CallSites,
    /// More than [`MAX_MODULE_MODEL_BYTES`] of other modules' code modelled to follow one file's calls.
    ModuleModels,
    /// The file's own work budget ([`super::budget`]), which reports the whole file instead.
    Budget,
}

impl Limit {
    /// The limit, as a message names it.
    pub fn describe(self) -> String {
        match self {
            Limit::Depth => format!("the resolution depth limit ({MAX_DEPTH} nested definitions, merges or operands)"),
            Limit::Alternatives => {
                format!("the limit of {MAX_ALTERNATIVES} definitions followed per name, all agreeing so far")
            }
            Limit::Paths => {
                format!("the limit of {MAX_ALTERNATIVES} distinct values followed per expression on different paths")
            }
            Limit::ModuleHops => format!("the limit of {MAX_HOPS} modules followed per import"),
            Limit::ModuleSize => format!("the {} MiB limit on modules read for imports", MAX_MODULE_BYTES >> 20),
            Limit::ModuleBudget => "that module's own analysis budget".to_string(),
            Limit::DictNesting => format!("the limit of {MAX_DICT_NESTING} nested dicts kept per imported value"),
            Limit::EnvSourceNesting => {
                format!(
                    "the limit of {MAX_ENV_SOURCE_NESTING} nested levels followed in an environment variable's source"
                )
            }
            Limit::CallDepth => {
                format!("the limit of {MAX_CALL_DEPTH} nested calls followed into the module's functions")
            }
            Limit::CallSites => format!("the limit of {MAX_CALL_SITES} calls followed into one function per file"),
            Limit::ModuleModels => format!(
                "the {} MiB limit on other modules' code analysed per file to follow calls into their functions",
                MAX_MODULE_MODEL_BYTES >> 20
            ),
            Limit::Budget => "this file's work budget".to_string(),
        }
    }
}

/// Where resolution reached a limit.
#[derive(Debug, Clone)]
pub struct Cut {
    /// The limit reached.
    pub limit: Limit,
    /// Where the chain was cut: the expression or definition not followed, when there is one.
    pub site: Option<Site>,
    /// What was being looked up there, when the site does not show it (an imported name, a module).
    pub subject: Option<String>,
}

impl Cut {
    /// A cut at `range` of the file being checked.
    pub fn here(limit: Limit, range: TextRange) -> Self {
        Cut { limit, site: Some(Site::Here(range)), subject: None }
    }

    /// A cut while looking up `subject` (an imported name, a module), at no place of the file being checked.
    pub fn at_subject(limit: Limit, subject: impl Into<String>) -> Self {
        Cut { limit, site: None, subject: Some(subject.into()) }
    }

    /// The CAP003 finding of a value a rule needed at `range` (whose source text is `needed`) that
    /// resolution stopped following at this cut; `place` names where (`` `b` (line 3)``), when the cut
    /// has a site.
    pub fn finding(&self, range: TextRange, needed: &str, place: Option<String>) -> Finding {
        let place = match (&self.subject, place) {
            (Some(subject), _) => format!(" at {subject}"),
            (None, Some(place)) => format!(" at {place}"),
            (None, None) => String::new(),
        };
        Finding::new(
            Rule::AnalysisBudgetExceeded,
            range,
            format!(
                "resolving `{}` reached {}: the chain was cut{place}, so a value there that asks for every core \
                 would not be reported",
                shortened(needed),
                self.limit.describe()
            ),
        )
        .label("not fully resolved")
        .help("shorten the chain of definitions, or pass the value directly")
    }
}

/// The first line of `text`, at most 40 characters.
pub(crate) fn shortened(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(40) {
        Some((end, _)) => format!("{}...", &line[..end]),
        None if line.len() < text.trim().len() => format!("{line}..."),
        None => line.to_string(),
    }
}
