//! Kubernetes and Airflow pod-template YAML: the CAP2xx rules. It reads manifests only through
//! `capslint_workspace`'s confinement and knows no Python: what a DAG says about its pods arrives as
//! `capslint_pod_template` data, handed over by the pipeline.
//!
//! Each file is parsed on its own, in parallel: the hostile-input guard, saphyr, then the typed model
//! (objects, pod specs, containers, ConfigMaps). The rules run afterwards over the whole scan
//! ([`check`]), because `envFrom` ConfigMaps, Airflow operators, kustomize overlays and VRAM budgets cross
//! files.

pub mod airflow;
mod build;
mod configmaps;
mod containers;
mod embedded;
mod env;
mod exec;
mod fix;
mod helm;
mod infrastructure;
mod kinds;
pub mod kustomize;
pub mod model;
pub(crate) mod placeholder;
mod pod_spec_patch;
mod project;
mod relocate;
mod rules;

use std::sync::Arc;

use ruff_text_size::TextRange;

use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::{Family, Rule};
use capslint_diagnostics::selection::RuleSet;
use capslint_diagnostics::source::SourceFile;
use capslint_diagnostics::suppress::yaml::{Directive, DirectiveScan};
use capslint_workspace::settings::Settings;
use capslint_yaml as yaml;

pub use capslint_diagnostics::suppress::yaml::IGNORE_ANNOTATION;
pub use kustomize::ScannedYaml;
pub use project::{Outcome, check};
pub use rules::Reported;

/// A parsed manifest file, waiting for the cross-file phase.
#[derive(Debug, Clone)]
pub struct ManifestFile {
    /// The file.
    pub file: Arc<SourceFile>,
    /// Its settings.
    pub settings: Arc<Settings>,
    /// The rules enabled for it.
    pub rules: RuleSet,
    /// Its Kubernetes objects, in document order.
    pub objects: Vec<model::Object>,
    /// Its `# capslint: ignore[...]` comments.
    pub directives: Vec<Directive>,
}

/// What parsing one YAML file produced.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The model, when the file holds Kubernetes objects.
    pub manifest: Option<ManifestFile>,
    /// CAP001, when a file that looks like a manifest does not parse.
    pub findings: Vec<Finding>,
    /// An informational line (a skipped Helm chart template).
    pub notice: Option<String>,
}

/// Whether `text` may hold a Kubernetes object: every object has a `kind` key, which YAML can only spell
/// without the letters `kind` through a `\` escape in a double-quoted key.
pub fn may_contain_objects(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"kind").is_some() || text.contains('\\')
}

/// Whether a text that does not parse is meant to be a manifest: it has `apiVersion:` and `kind:` keys at
/// the start of a line (after indentation or a list dash). Lines end where YAML's do: at `\n`, `\r\n`
/// or a lone `\r`.
pub fn looks_like_manifest(text: &str) -> bool {
    let starts = |key: &str| {
        text.split(['\n', '\r']).any(|line| {
            let line = line.trim_start();
            let line = line.strip_prefix("- ").map_or(line, str::trim_start);
            line.starts_with(key)
        })
    };
    starts("apiVersion:") && starts("kind:")
}

/// Parses one YAML file into its model. Documents that are not Kubernetes objects (CI workflows, compose
/// files, configuration) are only checked as model configurations (CAP109); a file that does not parse
/// produces CAP001 when it looks like a manifest; a document too large to analyse (past
/// [`capslint_yaml::node_budget`]), or a data file, produces CAP003 when it may hold a finding; a Helm chart
/// template produces a notice.
pub fn parse(file: Arc<SourceFile>, settings: Arc<Settings>, rules: RuleSet) -> Parsed {
    let mut parsed = Parsed::default();
    let wanted = rules.iter().any(|rule| rule.family() == Family::Manifest)
        || rules.contains(Rule::SyntaxError)
        || rules.contains(Rule::AllCoresInConfig);
    if !wanted {
        return parsed;
    }
    let text = file.text();
    if let Some(chart) = helm::chart_of(file.path(), file.display_name(), text) {
        parsed.notice = Some(helm::notice(&chart));
        return parsed;
    }
    let mut configs = capslint_model_config::YamlScan::new(text, rules, &settings);
    if settings.prefilter && !may_contain_objects(text) && !configs.is_active() {
        return parsed;
    }
    // A data file (more values than a document may have, and no manifest) builds no tree: CAP003 when it
    // may hold a thread-count key, nothing otherwise.
    if capslint_model_config::yaml_is_data(text) && !looks_like_manifest(text) {
        if configs.is_active() && rules.contains(Rule::AnalysisBudgetExceeded) {
            parsed.findings.push(capslint_model_config::data_file_not_analysed(text));
        }
        return parsed;
    }
    let mut objects = Vec::new();
    let mut directives = DirectiveScan::new(text);
    let mut embedded = embedded::Scan::default();
    let loaded = yaml::for_each_document(text, |document| {
        build::objects(document, text, &mut objects, Some(&mut embedded));
        configs.document(document);
        directives.document(document);
    });
    if let Err(error) = loaded {
        if error.too_large {
            if (configs.is_active() || looks_like_manifest(text)) && rules.contains(Rule::AnalysisBudgetExceeded) {
                parsed.findings.push(
                    Finding::new(Rule::AnalysisBudgetExceeded, TextRange::empty(error.offset), error.message)
                        .label("too large to analyse")
                        .help("split the document, or exclude the file if it is generated data (`extend-exclude`)"),
                );
            }
            return parsed;
        }
        if rules.contains(Rule::SyntaxError) && looks_like_manifest(text) {
            parsed.findings.push(
                Finding::new(Rule::SyntaxError, TextRange::empty(error.offset), error.message)
                    .label(if error.refused { "refused here" } else { "cannot parse this" })
                    .help("fix the YAML; the manifest rules run only on files that parse"),
            );
        }
        return parsed;
    }
    let mut directives = directives.finish(text);
    directives.append(&mut embedded.directives);
    directives.sort_by_key(|directive| directive.start);
    let (findings, directives) = configs.finish(&file, rules, directives);
    parsed.findings = findings;
    if objects.is_empty() {
        return parsed;
    }
    parsed.manifest = Some(ManifestFile { file, settings, rules, objects, directives });
    parsed
}
