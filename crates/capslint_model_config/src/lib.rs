//! Model configuration files: the JSON, TOML and YAML that training code reads its parameters from
//! (Hydra/OmegaConf `conf/`, DVC `params.yaml`, JSON model configs), checked by CAP109
//! (all-cores-in-config). It knows no Python and no Kubernetes object: the manifest analysis asks it
//! whether a YAML document is a configuration ([`YamlScan`]) or a data file ([`yaml_is_data`]).
//!
//! A file is parsed only when the text prefilter lets it through, and once, with byte spans: JSON with
//! serde_json, TOML with `toml`'s document parser; YAML comes through the manifest parser, where every
//! document that is not a Kubernetes object is a configuration ([`YamlScan`]). Each format's walker yields
//! the thread-count keys whose integer value means "every core", the rule words the finding, and
//! `# capslint: ignore[CAP109]` comments (YAML, TOML) suppress. A JSON or TOML file that is not UTF-8,
//! is larger than capslint reads or does not parse is skipped silently: most such files are data or
//! another tool's configuration (a `tsconfig.json` with comments), and capslint is not their checker.

mod all_cores_in_config;
mod candidate;
mod data_file;
mod path;
mod prefilter;
mod walk_json;
mod walk_toml;
mod walk_yaml;

use ruff_text_size::TextSize;

use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;
use capslint_diagnostics::selection::RuleSet;
use capslint_diagnostics::source::SourceFile;
use capslint_diagnostics::suppress::yaml::Directive;
use capslint_workspace::settings::Settings;
use capslint_yaml::Node;

pub use data_file::yaml_is_data;

/// CAP003 for a YAML data file that may hold a thread-count key (see [`yaml_is_data`]).
pub fn data_file_not_analysed(text: &str) -> Finding {
    data_file::not_analysed(text, false)
}
pub use prefilter::may_have_findings;

/// A text without its byte order mark, and where the rest starts.
fn without_bom(text: &str) -> (&str, TextSize) {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, TextSize::of('\u{feff}')),
        None => (text, TextSize::from(0)),
    }
}

/// Whether CAP109 has anything to do in `text`.
fn wanted(text: &str, rules: RuleSet, settings: &Settings) -> bool {
    rules.contains(Rule::AllCoresInConfig) && (!settings.prefilter || may_have_findings(text))
}

/// CAP109 in a JSON file; nothing when it does not parse.
pub fn check_json(file: &SourceFile, rules: RuleSet, settings: &Settings) -> Vec<Finding> {
    if !wanted(file.text(), rules, settings) {
        return Vec::new();
    }
    let (text, base) = without_bom(file.text());
    let Ok(found) = walk_json::candidates(text, base) else { return Vec::new() };
    all_cores_in_config::findings(&found, rules)
}

/// CAP109 in a TOML file, with its `# capslint: ignore[CAP109]` comments; nothing when it does not parse.
pub fn check_toml(file: &SourceFile, rules: RuleSet, settings: &Settings) -> Vec<Finding> {
    if !wanted(file.text(), rules, settings) {
        return Vec::new();
    }
    let (text, base) = without_bom(file.text());
    // A data file (a lock file, a table of values) builds no tree: see `data_file`.
    if data_file::toml_is_data(text) {
        return if rules.contains(Rule::AnalysisBudgetExceeded) {
            vec![data_file::not_analysed(text, true)]
        } else {
            Vec::new()
        };
    }
    let with_strings = memchr::memmem::find(text.as_bytes(), b"capslint:").is_some();
    let Some(walked) = walk_toml::walk(text, base, with_strings) else { return Vec::new() };
    let findings = all_cores_in_config::findings(&walked.found, rules);
    let mut directives = if with_strings {
        capslint_diagnostics::suppress::config::toml_directives(file.text(), walked.strings)
    } else {
        Vec::new()
    };
    let scope = capslint_diagnostics::suppress::Scope::Config { file, rules, findings, directives: &mut directives };
    capslint_diagnostics::suppress::apply(scope).into_iter().map(|(_, finding)| finding).collect()
}

/// CAP109 over the documents of a YAML stream as the manifest parser reads them: every document that is
/// not a Kubernetes object is walked as a configuration.
#[derive(Debug)]
pub struct YamlScan {
    active: bool,
    found: candidate::Found,
}

impl YamlScan {
    /// A scan of `text`, active when CAP109 is enabled and the prefilter lets the text through.
    pub fn new(text: &str, rules: RuleSet, settings: &Settings) -> Self {
        YamlScan { active: wanted(text, rules, settings), found: candidate::Found::default() }
    }

    /// Whether the scan needs the documents.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Checks one document, unless it is a Kubernetes object.
    pub fn document(&mut self, document: Node<'_>) {
        if self.active && !walk_yaml::is_kubernetes_object(document) {
            walk_yaml::candidates(document, &mut self.found);
        }
    }

    /// The findings of the stream, with the file's `# capslint: ignore[...]` `directives` applied; returns
    /// them and the directives left for the manifest rules (those that name other rules).
    pub fn finish(
        self,
        file: &SourceFile,
        rules: RuleSet,
        directives: Vec<Directive>,
    ) -> (Vec<Finding>, Vec<Directive>) {
        if !self.active {
            return (Vec::new(), directives);
        }
        let findings = all_cores_in_config::findings(&self.found, rules);
        let mut directives = directives;
        let scope =
            capslint_diagnostics::suppress::Scope::Config { file, rules, findings, directives: &mut directives };
        let findings = capslint_diagnostics::suppress::apply(scope).into_iter().map(|(_, finding)| finding).collect();
        (findings, directives)
    }
}
