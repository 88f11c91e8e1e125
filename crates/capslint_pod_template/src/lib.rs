//! The Airflow bridge: what a DAG's `KubernetesPodOperator(pod_template_file=...)` call states about the
//! pod it runs. The Python analysis finds these facts (`capslint_python` collects them in its one walk of
//! a DAG file); the manifest analysis (`capslint_manifests`) merges them into the template and checks the
//! result. Neither side imports the other: data flows from Python, through the pipeline
//! (`capslint_linter`), into the manifests. This crate holds the data alone, no behaviour.

use std::sync::Arc;

use ruff_text_size::TextRange;

use capslint_diagnostics::selection::RuleSet;
use capslint_diagnostics::source::SourceFile;
use capslint_workspace::settings::Settings;

/// What a `KubernetesPodOperator` call that names a `pod_template_file` merges into it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodTemplateCall {
    /// `pod_template_file`, as written.
    pub template: String,
    /// The operator (the callee of the call), where labels point.
    pub call: TextRange,
    /// `task_id`, when it is a literal.
    pub task_id: Option<String>,
    /// `container_resources`, when given.
    pub resources: Option<ResourcesOverlay>,
    /// `env_vars` and `pod_runtime_info_envs` entries capslint can read.
    pub env: Vec<EnvOverlay>,
    /// Part of the env could not be read.
    pub env_open: bool,
    /// `cmds`, when given.
    pub command: Option<Vec<String>>,
    /// `arguments`, when given.
    pub args: Option<Vec<String>>,
}

/// `container_resources` of an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourcesOverlay {
    /// `limits` and `requests` as `(resource, quantity)`.
    Known {
        /// `limits`.
        limits: Vec<(String, String)>,
        /// `requests`.
        requests: Vec<(String, String)>,
    },
    /// Given, but not readable statically.
    Unknown,
}

/// One environment variable an operator adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvOverlay {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: OverlayValue,
}

/// The value of an environment variable an operator adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverlayValue {
    /// A literal.
    Literal(String),
    /// `V1ResourceFieldSelector(resource=..., divisor=...)`.
    ResourceField {
        /// `resource`.
        resource: String,
        /// `divisor`, when given.
        divisor: Option<String>,
    },
    /// Another source (a secret, a field reference).
    Other,
}

/// A call, with the DAG it is in.
#[derive(Debug, Clone)]
pub struct TemplateUse {
    /// The DAG file.
    pub dag: Arc<SourceFile>,
    /// The DAG's settings (used for a template outside the scan).
    pub settings: Arc<Settings>,
    /// The rules enabled for the DAG.
    pub rules: RuleSet,
    /// The call.
    pub call: PodTemplateCall,
}
