//! The rule catalogue: every code, its kebab-case name, family, default severity and documentation page.
//!
//! Codes are a contract: they never change meaning and are never reused.

use std::fmt;

/// How serious a finding is by default; configurable per rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth fixing, but not provably harmful on its own.
    Warning,
    /// Provably oversubscribes or hides the limit.
    Error,
}

impl Severity {
    /// The lowercase name used in every output format.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which kind of input a rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Meta rules that apply to every file (`CAP0xx`).
    Meta,
    /// Python sources (`CAP1xx`).
    Python,
    /// Kubernetes and Airflow pod-template YAML (`CAP2xx`).
    Manifest,
    /// Model configuration files read by training code: JSON, TOML, and YAML documents that are not
    /// Kubernetes objects (CAP109, numbered with the Python rules whose keywords it reads).
    Config,
}

macro_rules! rules {
    ($( $(#[$doc:meta])* ($variant:ident, $code:literal, $name:literal, $family:ident, $severity:ident, $default_on:literal, $summary:literal) ),* $(,)?) => {
        /// A rule of the catalogue.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $( $(#[$doc])* $variant, )*
        }

        impl Rule {
            /// Every rule, in code order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The stable code, e.g. `CAP101`.
            pub const fn code(self) -> &'static str {
                match self { $(Rule::$variant => $code,)* }
            }

            /// The kebab-case name, e.g. `n-jobs-all-cores`.
            pub const fn name(self) -> &'static str {
                match self { $(Rule::$variant => $name,)* }
            }

            /// The kind of input the rule looks at.
            pub const fn family(self) -> Family {
                match self { $(Rule::$variant => Family::$family,)* }
            }

            /// The severity from the catalogue (configurable per rule).
            pub const fn default_severity(self) -> Severity {
                match self { $(Rule::$variant => Severity::$severity,)* }
            }

            /// Whether the rule runs when no selection names it explicitly.
            pub const fn enabled_by_default(self) -> bool {
                match self { $(Rule::$variant => $default_on,)* }
            }

            /// One line that says what the rule flags.
            pub const fn summary(self) -> &'static str {
                match self { $(Rule::$variant => $summary,)* }
            }

            /// The rule's documentation page (`rules/<CODE>.md` of the repository), embedded at build time.
            pub const fn documentation(self) -> &'static str {
                match self { $(Rule::$variant => include_str!(concat!(env!("CAPSLINT_RULES_DIR"), "/", $code, ".md")),)* }
            }
        }
    };
}

rules! {
    /// A Python or YAML file that does not parse.
    (SyntaxError, "CAP001", "syntax-error", Meta, Error, true,
        "A file that capslint needs to analyse does not parse"),
    /// An inline suppression that suppresses nothing.
    (UnusedSuppression, "CAP002", "unused-suppression", Meta, Warning, true,
        "A suppression comment or baseline entry matches no finding"),
    /// A file whose analysis would exceed the per-file work budget.
    (AnalysisBudgetExceeded, "CAP003", "analysis-budget-exceeded", Meta, Error, true,
        "A file whose analysis exceeded the per-file work budget (nesting, size or resolution steps)"),
    /// `n_jobs=-1` and friends.
    (NJobsAllCores, "CAP101", "n-jobs-all-cores", Python, Error, true,
        "A parallelism argument that means \"all cores\" (`n_jobs=-1`, XGBoost/LightGBM `<= 0`, `parallel_backend()` without `n_jobs`)"),
    /// Gradient-boosting models without a thread count.
    (MissingThreadCount, "CAP102", "missing-thread-count", Python, Warning, true,
        "A LightGBM, XGBoost or CatBoost model or training call without an explicit thread count"),
    /// joblib parallelism that is unbounded or not paired with an inner thread cap.
    (UnboundedJoblibParallel, "CAP103", "unbounded-joblib-parallel", Python, Error, true,
        "joblib parallelism sized from node cores or data, or process workers without an inner thread cap"),
    /// Process pools without a worker count.
    (UnsizedProcessPool, "CAP104", "unsized-process-pool", Python, Error, true,
        "A process pool created without a worker count, or with one derived from node cores"),
    /// `os.cpu_count()` used for sizing.
    (NodeCpuCount, "CAP105", "node-cpu-count", Python, Error, true,
        "A node-wide CPU count (`os.cpu_count()` and friends) flows into a parallelism argument"),
    /// A thread cap set after the library that reads it was imported.
    (LateThreadCap, "CAP106", "late-thread-cap", Python, Error, true,
        "A load-time thread variable is set after a library that reads it was imported"),
    /// Airflow KubernetesPodOperator without a CPU limit.
    (KpoMissingCpuLimit, "CAP107", "kpo-missing-cpu-limit", Python, Error, true,
        "An Airflow KubernetesPodOperator without a CPU limit"),
    /// Airflow KubernetesPodOperator without the Downward API variable.
    (KpoMissingCpuLimitRef, "CAP108", "kpo-missing-cpu-limit-ref", Python, Warning, true,
        "An Airflow KubernetesPodOperator whose env lacks the Downward API `limits.cpu` variable"),
    /// `n_jobs: -1` and friends in a model configuration file.
    (AllCoresInConfig, "CAP109", "all-cores-in-config", Config, Error, true,
        "A thread-count key of a model configuration file (JSON, YAML, TOML) set to an all-cores value (`n_jobs: -1`)"),
    /// An ML library's pool left at the size the library takes from the node.
    (MlPoolDefaultSized, "CAP110", "ml-pool-default-sized", Python, Warning, true,
        "An ONNX Runtime `InferenceSession` whose session options leave the thread pool at its node-sized default"),
    /// A container without a CPU limit.
    (MissingCpuLimit, "CAP201", "missing-cpu-limit", Manifest, Error, true,
        "A container without `resources.limits.cpu` (or with `0`, or with an invalid quantity)"),
    /// A container without the Downward API variable for its CPU limit.
    (MissingCpuLimitRef, "CAP202", "missing-cpu-limit-ref", Manifest, Warning, true,
        "A container whose `env` has no `resourceFieldRef: limits.cpu` variable"),
    /// A container that does not set every thread cap.
    (MissingThreadCaps, "CAP203", "missing-thread-caps", Manifest, Error, true,
        "A container that sets none or only some of the required thread caps"),
    /// A thread cap above the CPU limit.
    (ThreadCapExceedsLimit, "CAP204", "thread-cap-exceeds-limit", Manifest, Error, true,
        "A thread cap above `floor(limits.cpu)`, or taken from a rounded-up, millicore or missing limit"),
    /// `OMP_WAIT_POLICY` not passive.
    (OmpWaitPolicyNotPassive, "CAP205", "omp-wait-policy-not-passive", Manifest, Warning, true,
        "A container with thread caps or a CPU limit whose `OMP_WAIT_POLICY` is not `passive`"),
    /// A CPU limit that is not a whole number of CPUs.
    (FractionalCpuLimit, "CAP206", "fractional-cpu-limit", Manifest, Warning, true,
        "A CPU limit that is not a whole number of CPUs"),
    /// An integer CPU limit in a pod that is not Guaranteed.
    (NotGuaranteedForExclusiveCpus, "CAP207", "not-guaranteed-for-exclusive-cpus", Manifest, Warning, false,
        "A container with an integer CPU limit whose pod is not Guaranteed QoS (no exclusive cores)"),
    /// A GPU tenant without a VRAM budget.
    (GpuWithoutVramBudget, "CAP208", "gpu-without-vram-budget", Manifest, Error, true,
        "A container requesting a GPU without a VRAM budget on the configured extended resource"),
    /// VRAM budgets that exceed the advertised capacity.
    (GpuVramOvercommit, "CAP209", "gpu-vram-overcommit", Manifest, Error, true,
        "The VRAM budgets of always-on workloads, times replicas, exceed the advertised capacity"),
    /// An extended resource the API server rejects.
    (ExtendedResourceMismatch, "CAP210", "extended-resource-mismatch", Manifest, Error, true,
        "An extended resource whose request differs from its limit, lacks a limit, or is not an integer"),
}

impl Rule {
    /// Looks a rule up by its exact code (`CAP101`) or name (`n-jobs-all-cores`), case-insensitively.
    pub fn from_code_or_name(text: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|rule| rule.code().eq_ignore_ascii_case(text) || rule.name().eq_ignore_ascii_case(text))
    }

    /// The public URL of the rule's documentation page.
    pub fn url(self) -> String {
        format!("{DOCS_BASE_URL}/{}.md", self.code())
    }
}

/// Where the rule pages are published.
pub const DOCS_BASE_URL: &str = "https://github.com/capslint/capslint/blob/main/rules";

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}
