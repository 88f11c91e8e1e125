//! The mutation: the RFC 6902 patch from the submitted object to the object `check --fix` makes of it
//! (so the webhook and `--fix` cannot drift), base64-encoded as the AdmissionResponse carries it.

use base64::Engine;
use serde_json::Value;

/// The patch type the AdmissionResponse names.
pub const PATCH_TYPE: &str = "JSONPatch";

/// The operations that turn `original` into `fixed`.
pub fn between(original: &Value, fixed: &Value) -> json_patch::Patch {
    json_patch::diff(original, fixed)
}

/// `patch` as JSON, base64-encoded (standard alphabet, padded).
pub fn encode(patch: &json_patch::Patch) -> String {
    let json = serde_json::to_vec(patch).unwrap_or_else(|_| b"[]".to_vec());
    base64::engine::general_purpose::STANDARD.encode(json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_added_variable_is_one_add_and_the_patch_applies() {
        let original = json!({"spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]}});
        let fixed = json!({"spec": {"containers": [{"name": "main", "env": [
            {"name": "A", "value": "1"},
            {"name": "OMP_WAIT_POLICY", "value": "passive"}
        ]}]}});
        let patch = between(&original, &fixed);
        let ops = serde_json::to_value(&patch).unwrap();
        assert_eq!(
            ops,
            json!([{"op": "add", "path": "/spec/containers/0/env/1", "value": {"name": "OMP_WAIT_POLICY", "value": "passive"}}])
        );
        let mut patched = original.clone();
        json_patch::patch(&mut patched, &patch).unwrap();
        assert_eq!(patched, fixed);
    }

    #[test]
    fn the_patch_is_base64_of_its_json() {
        let patch = between(&json!({}), &json!({"a": 1}));
        let decoded = base64::engine::general_purpose::STANDARD.decode(encode(&patch)).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&decoded).unwrap(),
            json!([{"op": "add", "path": "/a", "value": 1}])
        );
    }
}
