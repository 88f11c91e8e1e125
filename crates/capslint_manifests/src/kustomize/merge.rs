//! Strategic merge patches as kustomize applies them: mappings merge key by key, a `null` value deletes
//! its key, scalars are replaced. For the built-in workload kinds (whose schema kustomize knows), lists
//! with a merge key (`containers`, `initContainers` and `env` by `name`, `volumeMounts` by `mountPath`,
//! ...) merge item by item: the patch's items first, in its order (each merged into the item of the same
//! key), then the target's other items; `$patch: delete` removes an item, `- $patch: replace` replaces the
//! list. Every other list, and every list of another kind (a CRD), is replaced whole, as `kubectl
//! kustomize` does. Merge keys are never replaced, so a container keeps the name written in its base.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::tree::{Data, Tree};

/// The built-in kinds whose lists kustomize merges by key: `(apiVersion, kind)`.
const SCHEMA_KINDS: &[(&str, &str)] = &[
    ("v1", "Pod"),
    ("v1", "PodTemplate"),
    ("v1", "ReplicationController"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("batch/v1beta1", "CronJob"),
];

/// Whether lists of an object of this kind merge by key.
pub fn has_schema(object: &Tree) -> bool {
    let field = |key: &str| object.get(key).and_then(Tree::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    SCHEMA_KINDS.iter().any(|(version, name)| *version == api_version && *name == kind)
}

/// The merge key of a list field of a schema kind.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers" | "initContainers" | "ephemeralContainers" | "env" | "volumes" | "imagePullSecrets" => "name",
        "ports" => "containerPort",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "hostAliases" => "ip",
        _ => return None,
    })
}

/// What a patch directive (`$patch`) says about the node it is in.
fn directive(tree: &Tree) -> Option<&str> {
    tree.get("$patch").and_then(Tree::text)
}

/// Whether a patch document deletes the object it names (`$patch: delete` at its top).
pub fn deletes_object(patch: &Tree) -> bool {
    directive(patch) == Some("delete")
}

/// Merges `patch` into `target`, an object (the patch's own `apiVersion`, `kind`, `metadata.name` and
/// `metadata.namespace` only select the target).
pub fn apply(target: &mut Tree, patch: &Tree) {
    let schema = has_schema(target);
    let mut patch = patch.clone();
    patch.remove("apiVersion");
    patch.remove("kind");
    if let Some(metadata) = patch.get_mut("metadata") {
        metadata.remove("name");
        metadata.remove("namespace");
    }
    merge_map(target, &patch, schema, None);
}

/// Merges the mapping `patch` into `target`, leaving `keep` (a list item's merge key) as it is.
fn merge_map(target: &mut Tree, patch: &Tree, schema: bool, keep: Option<&str>) {
    let Data::Map(entries) = &patch.data else { return };
    if directive(patch) == Some("replace") || !matches!(target.data, Data::Map(_)) {
        *target = strip(patch);
        return;
    }
    let Data::Map(targets) = &mut target.data else { return };
    // Keys are looked up, not scanned for, so a patch of many keys costs what it is long.
    let mut positions: FxHashMap<String, usize> =
        targets.iter().enumerate().map(|(position, (key, _))| (key.text.clone(), position)).collect();
    let mut removed = vec![false; targets.len()];
    for (key, value) in entries {
        if key.text.starts_with('$') || Some(key.text.as_str()) == keep {
            continue;
        }
        if value.is_null() || directive(value) == Some("delete") {
            if let Some(position) = positions.remove(&key.text) {
                removed[position] = true;
            }
            continue;
        }
        match positions.get(&key.text) {
            Some(position) => merge_value(&mut targets[*position].1, value, &key.text, schema),
            None => {
                positions.insert(key.text.clone(), targets.len());
                targets.push((key.clone(), strip(value)));
                removed.push(false);
            }
        }
    }
    let mut position = 0;
    targets.retain(|_| {
        position += 1;
        !removed[position - 1]
    });
}

fn merge_value(target: &mut Tree, patch: &Tree, field: &str, schema: bool) {
    match &patch.data {
        Data::Map(_) => merge_map(target, patch, schema, None),
        Data::Seq(items) => match (schema.then(|| merge_key(field)).flatten(), &mut target.data) {
            (Some(key), Data::Seq(existing)) => *existing = merge_list(existing, items, key, schema),
            _ => *target = strip(patch),
        },
        _ => *target = patch.clone(),
    }
}

/// The list `existing` with `patch` merged in by `key`.
fn merge_list(existing: &[Tree], patch: &[Tree], key: &str, schema: bool) -> Vec<Tree> {
    if patch.iter().any(|item| directive(item) == Some("replace")) {
        return patch.iter().filter(|item| directive(item).is_none()).map(strip).collect();
    }
    let mut used = vec![false; existing.len()];
    // The items of each key, in order: a lookup per patch item, not a scan.
    let mut by_key: FxHashMap<&str, VecDeque<usize>> = FxHashMap::default();
    for (index, candidate) in existing.iter().enumerate() {
        if let Some(value) = candidate.get(key).and_then(Tree::text) {
            by_key.entry(value).or_default().push_back(index);
        }
    }
    let mut merged = Vec::with_capacity(existing.len() + patch.len());
    for item in patch {
        let wanted = item.get(key).and_then(Tree::text);
        let found = wanted.and_then(|wanted| by_key.get_mut(wanted)).and_then(VecDeque::pop_front);
        if directive(item) == Some("delete") {
            if let Some(index) = found {
                used[index] = true;
            }
            continue;
        }
        match found {
            Some(index) => {
                used[index] = true;
                let mut target = existing[index].clone();
                merge_map(&mut target, item, schema, Some(key));
                merged.push(target);
            }
            None => merged.push(strip(item)),
        }
    }
    merged.extend(existing.iter().zip(&used).filter(|(_, used)| !**used).map(|(item, _)| item.clone()));
    merged
}

/// A patch subtree without its directives, as it is inserted.
fn strip(tree: &Tree) -> Tree {
    let data = match &tree.data {
        Data::Map(entries) => Data::Map(
            entries
                .iter()
                .filter(|(key, _)| !key.text.starts_with('$'))
                .map(|(key, value)| (key.clone(), strip(value)))
                .collect(),
        ),
        Data::Seq(items) => Data::Seq(items.iter().filter(|item| directive(item).is_none()).map(strip).collect()),
        other => other.clone(),
    };
    Tree { data, origin: tree.origin }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kustomize::tree::parse_document as tree;

    fn names(list: &Tree) -> Vec<String> {
        list.items().iter().map(|item| item.get("name").and_then(Tree::text).unwrap_or("?").to_string()).collect()
    }

    const BASE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n      \
                        containers:\n      - name: main\n        image: x\n        env: [{name: A, value: '1'}, {name: \
                        B, value: '2'}]\n        resources: {limits: {cpu: '2', memory: 1Gi}}\n      - {name: side, image: \
                        y}\n";

    #[test]
    fn containers_and_env_merge_by_name_in_kubectl_order() {
        let mut target = tree(BASE, 0);
        let patch = tree(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n      \
             containers:\n      - name: main\n        env: [{name: C, value: '3'}, {name: A, value: '9'}, {name: B, \
             $patch: delete}]\n        resources: {limits: {cpu: 500m, memory: null}}\n      - {name: side, $patch: \
             delete}\n      - {name: new, image: z}\n",
            1,
        );
        apply(&mut target, &patch);
        let containers = target.path(&["spec", "template", "spec", "containers"]).unwrap();
        assert_eq!(names(containers), ["main", "new"]);
        let main = &containers.items()[0];
        assert_eq!(names(main.get("env").unwrap()), ["C", "A"]);
        assert_eq!(main.get("env").unwrap().items()[1].get("value").unwrap().text(), Some("9"));
        // The merge key stays the base's; the values set come from the patch.
        assert_eq!(main.get("name").unwrap().origin.source, 0);
        let cpu = main.path(&["resources", "limits", "cpu"]).unwrap();
        assert_eq!((cpu.text(), cpu.origin.source), (Some("500m"), 1));
        assert!(main.path(&["resources", "limits", "memory"]).is_none());
        assert_eq!(main.get("image").unwrap().origin.source, 0);
    }

    #[test]
    fn lists_of_other_kinds_are_replaced() {
        let mut target = tree(&BASE.replace("apps/v1", "example.com/v1"), 0);
        let patch = tree("spec:\n  template:\n    spec:\n      containers: [{name: main, env: []}]\n", 1);
        apply(&mut target, &patch);
        let containers = target.path(&["spec", "template", "spec", "containers"]).unwrap();
        assert_eq!(names(containers), ["main"]);
        assert!(containers.items()[0].get("image").is_none());
    }

    #[test]
    fn replace_directives_and_deleted_objects() {
        let mut target = tree(BASE, 0);
        let patch = tree(
            "spec:\n  template:\n    spec:\n      containers:\n      - $patch: replace\n      - {name: only, image: q}\n",
            1,
        );
        apply(&mut target, &patch);
        assert_eq!(names(target.path(&["spec", "template", "spec", "containers"]).unwrap()), ["only"]);
        assert!(deletes_object(&tree("kind: Deployment\n$patch: delete\n", 1)));
    }
}
