//! The objects of a running cluster as inputs of a lint run: `kubectl get pods,deployments,... -A -o json`
//! (a `List` with `items`, a typed list such as `PodList` whose items name no kind, or one object), each
//! object written as block YAML ([`crate::render`]) and named `NAMESPACE/KIND/NAME`, so that any report
//! `check` can print lists the findings per namespace and workload.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use capslint_linter::lint::Input;
use capslint_workspace::discover::FileKind;
use capslint_workspace::settings::Settings;

use crate::render;

/// The largest listing read (a cluster's objects, as JSON).
pub const MAX_LISTING_BYTES: u64 = 512 * 1024 * 1024;

/// What a listing holds.
#[derive(Debug, Default)]
pub struct Listing {
    /// One input per object.
    pub inputs: Vec<Input>,
    /// Pods skipped because a controller owns them (their owner is in the listing, or was checked when
    /// it was admitted).
    pub owned_pods: usize,
}

/// The objects of `json`, checked with `settings`; controller-owned pods only when `check_owned_pods`.
pub fn listing(json: &[u8], settings: &Arc<Settings>, check_owned_pods: bool) -> Result<Listing, String> {
    let text = std::str::from_utf8(json)
        .map_err(|error| format!("the listing is not UTF-8 (invalid byte at offset {})", error.valid_up_to()))?;
    let root: Value = serde_json::from_str(text).map_err(|error| format!("the listing is not JSON: {error}"))?;
    let mut found = Listing::default();
    let (items, kind, api_version) = match root.get("items").and_then(Value::as_array) {
        Some(items) => {
            let list_kind = root["kind"].as_str().unwrap_or("List");
            // A typed list (`PodList`) names its items' kind only in its own.
            let kind = list_kind.strip_suffix("List").filter(|kind| !kind.is_empty()).map(str::to_string);
            (items.clone(), kind, root["apiVersion"].as_str().map(str::to_string))
        }
        None if root.is_object() => (vec![root], None, None),
        None => return Err("the listing is neither a `List` with `items` nor an object".to_string()),
    };
    for mut item in items {
        let Some(object) = item.as_object_mut() else { continue };
        if let Some(kind) = &kind {
            object.entry("kind").or_insert_with(|| Value::String(kind.clone()));
        }
        if let Some(api_version) = &api_version {
            object.entry("apiVersion").or_insert_with(|| Value::String(api_version.clone()));
        }
        let metadata = &item["metadata"];
        let owned = crate::policy::owned_by_checked_controller(&item);
        let item_kind = item["kind"].as_str().unwrap_or("Unknown").to_string();
        if item_kind == "Pod" && owned && !check_owned_pods {
            found.owned_pods += 1;
            continue;
        }
        let namespace = metadata["namespace"].as_str().filter(|namespace| !namespace.is_empty()).unwrap_or("_");
        let name = metadata["name"].as_str().unwrap_or("unnamed");
        let display = format!("{}/{}/{}", safe(namespace), safe(&item_kind), safe(name));
        let rendered = render::to_yaml(&item);
        found.inputs.push(Input {
            path: PathBuf::from(&display),
            display_name: display,
            kind: FileKind::Yaml,
            contents: Some(rendered.text.into_bytes()),
            settings: Arc::clone(settings),
        });
    }
    Ok(found)
}

/// A name usable as one component of a path.
fn safe(text: &str) -> String {
    let safe: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() || "-._".contains(c) { c } else { '_' }).collect();
    if safe.chars().all(|c| c == '.') { safe.replace('.', "_") } else { safe }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_workspace::settings::Overrides;

    fn settings() -> Arc<Settings> {
        Arc::new(Settings::resolve(None, &Overrides::default(), std::path::Path::new(".")).unwrap())
    }

    #[test]
    fn a_typed_list_names_its_items_kind() {
        let json = br#"{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a","namespace":"ml"}}]}"#;
        let found = listing(json, &settings(), false).unwrap();
        assert_eq!(found.inputs[0].display_name, "ml/Pod/a");
        let text = String::from_utf8(found.inputs[0].contents.clone().unwrap()).unwrap();
        assert!(text.contains("kind: \"Pod\"") && text.contains("apiVersion: \"v1\""), "{text}");
    }

    #[test]
    fn owned_pods_are_counted_not_checked() {
        let json = br#"{"kind":"List","items":[
            {"kind":"Pod","metadata":{"name":"a","ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","controller":true}]}},
            {"kind":"Deployment","metadata":{"name":"..","namespace":"ml/x"}}]}"#;
        let found = listing(json, &settings(), false).unwrap();
        assert_eq!(found.owned_pods, 1);
        assert_eq!(found.inputs.len(), 1);
        assert_eq!(found.inputs[0].display_name, "ml_x/Deployment/__");
        assert_eq!(listing(json, &settings(), true).unwrap().inputs.len(), 2);
    }

    #[test]
    fn what_is_not_a_listing_is_an_error() {
        assert!(listing(b"[1, 2]", &settings(), false).is_err());
        assert!(listing(b"\xff", &settings(), false).is_err());
    }
}
