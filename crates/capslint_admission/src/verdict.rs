//! An admitted object's findings, by the code path `capslint check` runs on a YAML file: the object is
//! written as block YAML ([`crate::render`]) and handed to the lint pipeline as an in-memory input with
//! the configured settings, so rule selection, severities and the `capslint.io/ignore` and
//! `capslint.io/compute` annotations apply as they do to a file. The fixed object comes from the same
//! pipeline's `--fix` run.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fix::Applicability;
use capslint_diagnostics::registry::{Rule, Severity};
use capslint_linter::fix::run as fixing;
use capslint_linter::lint::{self, Input};
use capslint_workspace::discover::FileKind;
use capslint_workspace::settings::Settings;

use crate::render::{self, Rendered};

/// One finding on an admitted object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The rule's code (`CAP202`).
    pub code: &'static str,
    /// The rule's message.
    pub message: String,
    /// The container it is about, when it is about one.
    pub container: Option<String>,
    /// The JSON pointer of the field it points at.
    pub pointer: String,
    /// Its configured severity.
    pub severity: Severity,
}

impl Found {
    /// `CAP202 (container `main`): message`.
    pub fn line(&self) -> String {
        match &self.container {
            Some(container) => format!("{} (container `{container}`): {}", self.code, self.message),
            None => format!("{}: {}", self.code, self.message),
        }
    }
}

/// What checking an object gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Its findings, in the order `check` reports them.
    pub findings: Vec<Found>,
    /// Why (part of) it could not be checked: the object is admitted, with this as a warning.
    pub unchecked: Vec<String>,
}

/// Checks objects with one set of settings.
#[derive(Debug, Clone)]
pub struct Checker {
    settings: Arc<Settings>,
}

impl Checker {
    /// A checker with `settings` (as `check` resolves them: configuration file, `--select`, `--ignore`).
    pub fn new(settings: Arc<Settings>) -> Self {
        Checker { settings }
    }

    /// The settings objects are checked with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The in-memory input of `rendered`, named `name` (`admission/NAMESPACE/KIND-NAME.yaml`, which is
    /// what `per-file-ignores` patterns match).
    fn input(&self, rendered: &Rendered, name: &str) -> Input {
        Input {
            path: PathBuf::from(name),
            display_name: name.to_string(),
            kind: FileKind::Yaml,
            contents: Some(rendered.text.clone().into_bytes()),
            settings: Arc::clone(&self.settings),
        }
    }

    /// The findings on `object`, shown as `name`.
    pub fn check(&self, object: &Value, name: &str) -> Verdict {
        let rendered = render::to_yaml(object);
        let run = lint::check_inputs(vec![self.input(&rendered, name)]);
        let mut verdict = verdict(object, &rendered, &run.diagnostics);
        verdict.unchecked.extend(run.errors);
        verdict
    }

    /// `object` as `check --fix` leaves it (safe fixes only), or `None` when no fix applies or the object
    /// cannot be written as YAML and read back unchanged.
    pub fn fixed(&self, object: &Value, name: &str) -> Option<Value> {
        let rendered = render::to_yaml(object);
        // A value that does not survive the trip (a number past what YAML's integers hold) would be
        // changed by the patch: such objects are not mutated.
        if render::from_yaml(&rendered.text).as_ref() != Some(object) {
            return None;
        }
        let outcome = fixing::fix_inputs(vec![self.input(&rendered, name)], Applicability::Safe);
        let file = outcome.files.into_iter().next()?;
        render::from_yaml(&file.fixed).filter(|fixed| fixed != object)
    }
}

/// The findings of `diagnostics` on `object`, rendered as `rendered`. A file-level CAP001 or CAP003 (the
/// object could not be analysed) is not a finding on it but a reason it was not checked.
fn verdict(object: &Value, rendered: &Rendered, diagnostics: &[Diagnostic]) -> Verdict {
    let mut verdict = Verdict::default();
    for diagnostic in diagnostics {
        let finding = &diagnostic.finding;
        if matches!(finding.rule, Rule::SyntaxError | Rule::AnalysisBudgetExceeded) {
            verdict.unchecked.push(format!("{}: {}", finding.rule.code(), finding.message));
            continue;
        }
        let pointer = rendered.pointer_at(finding.range.start()).to_string();
        verdict.findings.push(Found {
            code: finding.rule.code(),
            message: finding.message.clone(),
            container: container_at(object, &pointer),
            pointer,
            severity: diagnostic.severity,
        });
    }
    verdict
}

/// The name of the container whose item `pointer` is in (a `containers`, `initContainers` or
/// `ephemeralContainers` list, at any depth of a workload's template).
fn container_at(object: &Value, pointer: &str) -> Option<String> {
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    let list = segments
        .iter()
        .rposition(|segment| matches!(*segment, "containers" | "initContainers" | "ephemeralContainers"))?;
    let index = segments.get(list + 1)?;
    let container = object.pointer(&format!("/{}/{index}", segments[..=list].join("/")))?;
    container["name"].as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checker() -> Checker {
        use capslint_workspace::settings::Overrides;
        Checker::new(Arc::new(Settings::resolve(None, &Overrides::default(), std::path::Path::new(".")).unwrap()))
    }

    fn pod(extra: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": extra}, "spec": {
            "containers": [{"name": "main", "image": "registry.example.com/ml/train:1", "command": ["python", "t.py"],
                "resources": {"limits": {"cpu": "2"}}}]
        }})
    }

    #[test]
    fn findings_name_their_container_and_field() {
        let verdict = checker().check(&pod(json!({})), "admission/ml/Pod-p.yaml");
        let found = verdict.findings.iter().find(|found| found.code == "CAP203").expect("CAP203");
        assert_eq!(found.container.as_deref(), Some("main"));
        assert!(found.pointer.starts_with("/spec/containers/0"), "{}", found.pointer);
        assert!(verdict.unchecked.is_empty());
    }

    #[test]
    fn the_fixed_object_keeps_every_value_exactly() {
        let mut object = pod(json!({"note": "line\nbreak: \"quoted\" #hash"}));
        let limits = &mut object["spec"]["containers"][0]["resources"]["limits"];
        limits["huge"] = json!(u64::MAX);
        limits["negative"] = json!(i64::MIN);
        limits["float"] = json!(1.5e300);
        let fixed = checker().fixed(&object, "p.yaml").expect("the block is added");
        let mut without_env = fixed.clone();
        without_env["spec"]["containers"][0].as_object_mut().unwrap().remove("env");
        assert_eq!(without_env, object);
    }

    #[test]
    fn the_container_of_a_pointer() {
        let object = json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}}});
        assert_eq!(container_at(&object, "/spec/template/spec/containers/1/env"), Some("b".into()));
        assert_eq!(container_at(&object, "/spec/template/spec/containers/0"), Some("a".into()));
        assert_eq!(container_at(&object, "/spec/template"), None);
    }
}
