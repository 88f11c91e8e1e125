//! The two admission endpoints, from a request body to the review they answer with: `/validate` (the
//! verdict: refused in `deny` mode, warnings in `warn` mode) and `/mutate` (the `--fix` patch). No I/O:
//! the server hands bodies in and writes answers out.

use std::sync::Arc;

use serde_json::Value;

use capslint_diagnostics::registry::Severity;

use crate::metrics::Metrics;
use crate::patch;
use crate::policy::{Mode, Policy};
use crate::review::{self, AdmissionRequest, AdmissionResponse, Malformed, ReviewResponse};
use crate::verdict::{Checker, Found, Verdict};

/// How many characters of one warning the API server passes on unshortened.
pub const MAX_WARNING_CHARS: usize = 256;

/// How many findings become warnings (or lines of a refusal); the rest are counted in one more.
pub const MAX_WARNINGS: usize = 20;

/// How a request ended, the `outcome` label of the request counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Admitted without findings (or unchanged by the mutation).
    Allowed,
    /// Admitted with warnings.
    Warned,
    /// Refused.
    Denied,
    /// Admitted with a patch.
    Patched,
    /// Admitted unchecked (an operation without an object, an excluded namespace, `capslint.io/mode: off`).
    Skipped,
    /// Answered HTTP 400.
    Malformed,
}

impl Outcome {
    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Allowed => "allowed",
            Outcome::Warned => "warned",
            Outcome::Denied => "denied",
            Outcome::Patched => "patched",
            Outcome::Skipped => "skipped",
            Outcome::Malformed => "malformed",
        }
    }
}

/// The answer to one body.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The review to send (HTTP 200).
    Review(ReviewResponse, Outcome),
    /// The body is not a review: HTTP 400 with this message.
    BadRequest(Malformed),
}

impl Answer {
    /// The outcome label.
    pub fn outcome(&self) -> Outcome {
        match self {
            Answer::Review(_, outcome) => *outcome,
            Answer::BadRequest(_) => Outcome::Malformed,
        }
    }
}

/// The webhook: how objects are checked, the policy, the metrics.
#[derive(Debug)]
pub struct Webhook {
    checker: Checker,
    policy: Policy,
    metrics: Arc<Metrics>,
}

/// A request with an object to look at, and what the policy says of it.
struct Subject<'a> {
    object: &'a Value,
    name: String,
    mode: Mode,
    warnings: Vec<String>,
}

impl Webhook {
    /// A webhook that checks with `checker` under `policy`, counting into `metrics`.
    pub fn new(checker: Checker, policy: Policy, metrics: Arc<Metrics>) -> Self {
        Webhook { checker, policy, metrics }
    }

    /// The metrics it counts into.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Reads `body` and the policy: the subject to check, or the answer already decided.
    fn subject<'a>(&self, request: &'a AdmissionRequest) -> Result<Subject<'a>, Box<AdmissionResponse>> {
        let uid = &request.uid;
        let object = match (&request.object, request.operation.as_str()) {
            (Some(object), "CREATE" | "UPDATE" | "") if object.is_object() => object,
            _ => return Err(Box::new(AdmissionResponse::allow(uid))),
        };
        if request.sub_resource.as_deref().is_some_and(|sub| !sub.is_empty()) {
            return Err(Box::new(AdmissionResponse::allow(uid)));
        }
        let kind = object["kind"].as_str().unwrap_or(&request.kind.kind).to_string();
        let decision = self.policy.decide(&kind, request.namespace.as_deref(), object);
        let warnings: Vec<String> = decision.note.into_iter().collect();
        if decision.skipped.is_some() {
            return Err(Box::new(AdmissionResponse { warnings, ..AdmissionResponse::allow(uid) }));
        }
        Ok(Subject { object, name: input_name(request, object, &kind), mode: decision.mode, warnings })
    }

    /// Reads `body` and applies the policy: a malformed review is a bad request, a request the policy
    /// skips is admitted as it is, and `decide` answers the others.
    fn review(
        &self,
        body: &[u8],
        decide: impl FnOnce(&AdmissionRequest, &Subject<'_>) -> (AdmissionResponse, Outcome),
    ) -> Answer {
        let request = match review::parse(body) {
            Ok(request) => request,
            Err(malformed) => return Answer::BadRequest(malformed),
        };
        let (response, outcome) = match self.subject(&request) {
            Ok(subject) => decide(&request, &subject),
            Err(response) => (*response, Outcome::Skipped),
        };
        Answer::Review(ReviewResponse::new(response), outcome)
    }

    /// `/validate`: the findings on the object, as a refusal (`deny`) or as warnings (`warn`).
    /// Warning-severity findings are warnings in either mode.
    pub fn validate(&self, body: &[u8]) -> Answer {
        self.review(body, |request, subject| {
            let verdict = self.checker.check(subject.object, &subject.name);
            if request.dry_run != Some(true) {
                for found in &verdict.findings {
                    self.metrics.finding(found.code);
                }
            }
            respond(&request.uid, subject, &verdict)
        })
    }

    /// `/mutate`: the patch that adds what `check --fix` adds to the object. Always admits.
    pub fn mutate(&self, body: &[u8]) -> Answer {
        self.review(body, |request, subject| {
            let mut response =
                AdmissionResponse { warnings: subject.warnings.clone(), ..AdmissionResponse::allow(&request.uid) };
            let Some(fixed) = self.checker.fixed(subject.object, &subject.name) else {
                return (response, Outcome::Allowed);
            };
            let operations = patch::between(subject.object, &fixed);
            if operations.0.is_empty() {
                return (response, Outcome::Allowed);
            }
            response.patch_type = Some(patch::PATCH_TYPE);
            response.patch = Some(patch::encode(&operations));
            (response, Outcome::Patched)
        })
    }
}

/// The response to `verdict` on `subject`.
fn respond(uid: &str, subject: &Subject<'_>, verdict: &Verdict) -> (AdmissionResponse, Outcome) {
    let mut warnings = subject.warnings.clone();
    warnings.extend(verdict.unchecked.iter().map(|why| shorten(&format!("capslint: not checked: {why}"))));
    let (refusing, warning): (Vec<&Found>, Vec<&Found>) =
        verdict.findings.iter().partition(|found| subject.mode == Mode::Deny && found.severity == Severity::Error);
    for found in warning.iter().take(MAX_WARNINGS) {
        warnings.push(shorten(&format!("capslint {}", found.line())));
    }
    if warning.len() > MAX_WARNINGS {
        warnings.push(format!("capslint: {} more findings", warning.len() - MAX_WARNINGS));
    }
    if !refusing.is_empty() {
        let plural = if refusing.len() == 1 { "" } else { "s" };
        let mut message = format!("capslint: {} finding{plural} in {}:", refusing.len(), subject.name);
        for found in refusing.iter().take(MAX_WARNINGS) {
            message.push_str("\n  ");
            message.push_str(&found.line());
        }
        if refusing.len() > MAX_WARNINGS {
            message.push_str(&format!("\n  and {} more", refusing.len() - MAX_WARNINGS));
        }
        let response = AdmissionResponse { warnings, ..AdmissionResponse::deny(uid, message) };
        return (response, Outcome::Denied);
    }
    let outcome = if warnings.is_empty() { Outcome::Allowed } else { Outcome::Warned };
    (AdmissionResponse { warnings, ..AdmissionResponse::allow(uid) }, outcome)
}

/// `text` cut to [`MAX_WARNING_CHARS`] characters, ending with `…` when cut.
fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_WARNING_CHARS {
        return text.to_string();
    }
    let mut short: String = text.chars().take(MAX_WARNING_CHARS - 1).collect();
    short.push('…');
    short
}

/// The name the object is checked as: `admission/NAMESPACE/KIND-NAME.yaml` (`_` for a cluster-scoped
/// object, the `generateName` prefix for an object not yet named), what findings and `per-file-ignores`
/// see.
fn input_name(request: &AdmissionRequest, object: &Value, kind: &str) -> String {
    let metadata = &object["metadata"];
    let namespace = request
        .namespace
        .as_deref()
        .filter(|namespace| !namespace.is_empty())
        .or_else(|| metadata["namespace"].as_str())
        .unwrap_or("_");
    let name = metadata["name"]
        .as_str()
        .or(request.name.as_deref())
        .filter(|name| !name.is_empty())
        .or_else(|| metadata["generateName"].as_str())
        .unwrap_or("unnamed");
    let safe = |text: &str| -> String {
        text.chars().map(|c| if c.is_ascii_alphanumeric() || "-._".contains(c) { c } else { '_' }).collect()
    };
    format!("admission/{}/{}-{}.yaml", safe(namespace), safe(kind), safe(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use capslint_workspace::settings::{Overrides, Settings};
    use serde_json::json;

    fn webhook(mode: Mode) -> Webhook {
        let settings = Settings::resolve(None, &Overrides::default(), std::path::Path::new(".")).unwrap();
        let policy = Policy { mode, ..Policy::default() };
        Webhook::new(Checker::new(Arc::new(settings)), policy, Arc::new(Metrics::default()))
    }

    fn pod(env: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train"}, "spec": {"containers": [{
            "name": "train", "image": "registry.example.com/ml/train:1", "command": ["python", "train.py"],
            "resources": {"limits": {"cpu": "2"}}, "env": env
        }]}})
    }

    fn body(object: &Value, operation: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({"apiVersion": review::API_VERSION, "kind": review::KIND, "request": {
            "uid": "u-1", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "namespace": "ml",
            "operation": operation, "object": object
        }}))
        .unwrap()
    }

    fn review_of(answer: Answer) -> (Value, Outcome) {
        let Answer::Review(review, outcome) = answer else { panic!("a review expected") };
        (serde_json::from_slice(&review.to_json()).unwrap(), outcome)
    }

    #[test]
    fn deny_refuses_and_warn_warns_with_the_same_findings() {
        let object = pod(json!([]));
        let (denied, outcome) = review_of(webhook(Mode::Deny).validate(&body(&object, "CREATE")));
        assert_eq!(outcome, Outcome::Denied);
        assert!(denied["response"]["status"]["message"].as_str().unwrap().contains("CAP203 (container `train`)"));
        let (warned, outcome) = review_of(webhook(Mode::Warn).validate(&body(&object, "CREATE")));
        assert_eq!(outcome, Outcome::Warned);
        assert_eq!(warned["response"]["allowed"], true);
        assert!(warned["response"]["warnings"].to_string().contains("CAP203"));
        let (deleted, outcome) = review_of(webhook(Mode::Deny).validate(&body(&object, "DELETE")));
        assert_eq!((deleted["response"]["allowed"].clone(), outcome), (json!(true), Outcome::Skipped));
    }

    #[test]
    fn many_findings_are_capped_in_the_message_and_the_warnings() {
        let container = |index: usize| {
            json!({"name": format!("c{index}"), "image": "registry.example.com/ml/train:1",
                   "command": ["python", "t.py"], "resources": {"limits": {"cpu": "2"}}})
        };
        let object = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "wide"},
                            "spec": {"containers": (0..40).map(container).collect::<Vec<_>>()}});
        let (denied, _) = review_of(webhook(Mode::Deny).validate(&body(&object, "CREATE")));
        let message = denied["response"]["status"]["message"].as_str().unwrap();
        assert_eq!(message.lines().count(), 1 + MAX_WARNINGS + 1, "{message}");
        assert!(message.ends_with("and 20 more"), "{message}");
        let warnings = denied["response"]["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), MAX_WARNINGS + 1);
        assert!(warnings.iter().all(|warning| warning.as_str().unwrap().chars().count() <= MAX_WARNING_CHARS));
    }

    #[test]
    fn the_mutation_adds_the_block_once() {
        let object = pod(json!([{"name": "EPOCHS", "value": "3"}]));
        let (mutated, outcome) = review_of(webhook(Mode::Deny).mutate(&body(&object, "CREATE")));
        assert_eq!(outcome, Outcome::Patched);
        assert_eq!(mutated["response"]["patchType"], "JSONPatch");
        let patch = base64::engine::general_purpose::STANDARD.decode(mutated["response"]["patch"].as_str().unwrap());
        let patch: json_patch::Patch = serde_json::from_slice(&patch.unwrap()).unwrap();
        let mut patched = object.clone();
        json_patch::patch(&mut patched, &patch).unwrap();
        let env = patched["spec"]["containers"][0]["env"].as_array().unwrap();
        assert_eq!(env[0], json!({"name": "EPOCHS", "value": "3"}));
        assert!(env.iter().any(|var| var == &json!({"name": "OMP_WAIT_POLICY", "value": "passive"})));
        let (again, outcome) = review_of(webhook(Mode::Deny).mutate(&body(&patched, "CREATE")));
        assert_eq!(outcome, Outcome::Allowed);
        assert!(again["response"].get("patch").is_none());
        let (validated, _) = review_of(webhook(Mode::Deny).validate(&body(&patched, "CREATE")));
        assert_eq!(validated["response"]["allowed"], true, "{validated}");
    }

    #[test]
    fn long_warnings_are_shortened_on_a_character() {
        let long = "é".repeat(300);
        let short = shorten(&long);
        assert_eq!(short.chars().count(), MAX_WARNING_CHARS);
        assert!(short.ends_with('…'));
        assert_eq!(shorten("short"), "short");
    }

    #[test]
    fn the_input_name_is_a_safe_path() {
        let request = AdmissionRequest { namespace: Some("ml".into()), ..AdmissionRequest::default() };
        let object = serde_json::json!({"metadata": {"generateName": "train-../"}});
        assert_eq!(input_name(&request, &object, "Pod"), "admission/ml/Pod-train-.._.yaml");
    }
}
