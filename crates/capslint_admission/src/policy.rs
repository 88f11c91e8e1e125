//! Which answer an object gets: the webhook's mode (`deny` or `warn`), overridden per namespace by the
//! configured namespace modes and per object by the `capslint.io/mode` annotation (or label) of the
//! object; namespaces left alone, and pods a controller owns (checked through their owner).

use serde_json::Value;

/// The annotation (or label) that sets the mode of one object: `deny`, `warn` or `off`.
pub const MODE_ANNOTATION: &str = "capslint.io/mode";

/// What the webhook does with an object that has findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Refuse it, with the findings as the message.
    Deny,
    /// Admit it, with the findings as warnings.
    Warn,
    /// Neither check nor change it.
    Off,
}

impl Mode {
    /// Reads `deny`, `warn` or `off` (`disabled` and `false` are `off`).
    pub fn parse(text: &str) -> Option<Mode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "deny" | "enforce" => Some(Mode::Deny),
            "warn" => Some(Mode::Warn),
            "off" | "disabled" | "false" => Some(Mode::Off),
            _ => None,
        }
    }

    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Deny => "deny",
            Mode::Warn => "warn",
            Mode::Off => "off",
        }
    }
}

/// The webhook's policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The mode of objects that do not set their own.
    pub mode: Mode,
    /// Namespaces whose objects are admitted unchecked and unchanged.
    pub exclude_namespaces: Vec<String>,
    /// The mode of each namespace named, over [`Self::mode`] (an object's annotation still wins).
    pub namespace_modes: Vec<(String, Mode)>,
    /// Check pods that a controller owns (by default they are checked through their owner, whose
    /// template the webhook saw when it was admitted).
    pub check_owned_pods: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            mode: Mode::Warn,
            exclude_namespaces: Vec::new(),
            namespace_modes: Vec::new(),
            check_owned_pods: false,
        }
    }
}

/// The mode an object gets, and a note when its annotation could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The mode.
    pub mode: Mode,
    /// Why the object is not checked, when it is not.
    pub skipped: Option<String>,
    /// A warning about the object's `capslint.io/mode` value.
    pub note: Option<String>,
}

impl Policy {
    /// The mode for `object` of kind `kind` in `namespace`.
    pub fn decide(&self, kind: &str, namespace: Option<&str>, object: &Value) -> Decision {
        let mut decision = Decision { mode: self.mode, skipped: None, note: None };
        if let Some(namespace) = namespace.filter(|namespace| self.exclude_namespaces.iter().any(|n| n == namespace)) {
            decision.mode = Mode::Off;
            decision.skipped = Some(format!("namespace `{namespace}` is excluded"));
            return decision;
        }
        if let Some((_, mode)) =
            namespace.and_then(|namespace| self.namespace_modes.iter().find(|(named, _)| named == namespace))
        {
            decision.mode = *mode;
        }
        let metadata = &object["metadata"];
        let set =
            metadata["annotations"][MODE_ANNOTATION].as_str().or_else(|| metadata["labels"][MODE_ANNOTATION].as_str());
        if let Some(text) = set {
            match Mode::parse(text) {
                Some(mode) => decision.mode = mode,
                None => {
                    decision.note = Some(format!(
                        "capslint: `{MODE_ANNOTATION}: {text}` is not `deny`, `warn` or `off`; the mode `{}` applies",
                        decision.mode.name()
                    ))
                }
            }
        }
        if decision.mode == Mode::Off {
            decision.skipped = Some(format!("`{MODE_ANNOTATION}` is `off`"));
            return decision;
        }
        if kind == "Pod" && !self.check_owned_pods && owned_by_checked_controller(object) {
            decision.skipped = Some("the pod's controller was checked when it was admitted".to_string());
        }
        decision
    }
}

/// The built-in controllers whose pods are their pod template as the webhook admitted it: a pod one of
/// them owns was checked (and patched) through its owner. The pods of every other controller (Ray, Argo,
/// Spark, training and serving operators...) are built at run time from specs the webhook never saw as
/// pod templates, and are checked themselves.
pub const TEMPLATE_CONTROLLERS: &[(&str, &str)] = &[
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("v1", "ReplicationController"),
];

/// Whether `object`'s controller (its owner reference with `controller: true`) is one of the
/// [`TEMPLATE_CONTROLLERS`].
pub fn owned_by_checked_controller(object: &Value) -> bool {
    object["metadata"]["ownerReferences"].as_array().is_some_and(|owners| {
        owners.iter().any(|owner| {
            owner["controller"].as_bool() == Some(true)
                && TEMPLATE_CONTROLLERS.iter().any(|(api_version, kind)| {
                    owner["apiVersion"].as_str() == Some(*api_version) && owner["kind"].as_str() == Some(*kind)
                })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_annotation_overrides_the_mode() {
        let policy = Policy { mode: Mode::Deny, ..Policy::default() };
        let warned = json!({"metadata": {"annotations": {"capslint.io/mode": "warn"}}});
        assert_eq!(policy.decide("Pod", None, &warned).mode, Mode::Warn);
        let off = json!({"metadata": {"labels": {"capslint.io/mode": "off"}}});
        assert!(policy.decide("Deployment", None, &off).skipped.is_some());
        let typo = json!({"metadata": {"annotations": {"capslint.io/mode": "strict"}}});
        let decision = policy.decide("Pod", None, &typo);
        assert_eq!(decision.mode, Mode::Deny);
        assert!(decision.note.unwrap().contains("strict"));
    }

    #[test]
    fn a_namespace_mode_applies_under_the_annotation() {
        let policy =
            Policy { mode: Mode::Warn, namespace_modes: vec![("prod".into(), Mode::Deny)], ..Policy::default() };
        assert_eq!(policy.decide("Pod", Some("prod"), &json!({})).mode, Mode::Deny);
        assert_eq!(policy.decide("Pod", Some("dev"), &json!({})).mode, Mode::Warn);
        let warned = json!({"metadata": {"annotations": {"capslint.io/mode": "warn"}}});
        assert_eq!(policy.decide("Pod", Some("prod"), &warned).mode, Mode::Warn);
        let off = Policy { namespace_modes: vec![("scratch".into(), Mode::Off)], ..Policy::default() };
        assert!(off.decide("Pod", Some("scratch"), &json!({})).skipped.is_some());
    }

    #[test]
    fn excluded_namespaces_and_owned_pods_are_skipped() {
        let policy = Policy { mode: Mode::Deny, exclude_namespaces: vec!["kube-system".into()], ..Policy::default() };
        assert!(policy.decide("Pod", Some("kube-system"), &json!({})).skipped.is_some());
        assert!(policy.decide("Pod", Some("ml"), &json!({})).skipped.is_none());
        let owned = json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": true}]}});
        assert!(policy.decide("Pod", Some("ml"), &owned).skipped.is_some());
        // A pod an operator builds at run time is checked itself.
        let ray = json!({"metadata": {"ownerReferences": [{"apiVersion": "ray.io/v1", "kind": "RayCluster", "controller": true}]}});
        assert!(policy.decide("Pod", Some("ml"), &ray).skipped.is_none());
        assert!(policy.decide("ReplicaSet", Some("ml"), &owned).skipped.is_none());
        let checked = Policy { check_owned_pods: true, ..policy };
        assert!(checked.decide("Pod", Some("ml"), &owned).skipped.is_none());
    }
}
