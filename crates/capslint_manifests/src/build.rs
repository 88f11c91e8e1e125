//! Builds the typed model from a YAML stream: every document (and every `List` item) that is a
//! Kubernetes object, with its pod specs, containers and ConfigMap data.

use capslint_diagnostics::suppress::yaml::IGNORE_ANNOTATION;

/// The annotation that says whether an object's containers run compute (`"true"`) or not (`"false"`).
pub const COMPUTE_ANNOTATION: &str = "capslint.io/compute";
use ruff_text_size::{TextRange, TextSize};

use super::containers::{self, resources, value};
use super::embedded;
use super::kinds::{self, PodNode};
use super::model::{ConfigMapData, IgnoreCode, Object, Pod};
use capslint_yaml::Node;

/// Adds every Kubernetes object of one document (the document itself, or the items of a `List`) to
/// `objects`, in order. With `embedded`, the objects held as strings in a ConfigMap's `data` follow their
/// ConfigMap ([`super::embedded`]); without, such strings stay strings.
pub fn objects(document: Node<'_>, text: &str, objects: &mut Vec<Object>, mut embedded: Option<&mut embedded::Scan>) {
    let mut pending: Vec<Node<'_>> = vec![document];
    while let Some(node) = pending.pop() {
        let Some((api_version, kind)) = identity(node) else { continue };
        let items = node.get("items").filter(|items| items.is_sequence());
        if let Some(items) = items.filter(|_| kind == "List" || kind.ends_with("List")) {
            let mut items: Vec<Node<'_>> = items.items().collect();
            items.reverse();
            pending.extend(items);
            continue;
        }
        let built = object(node, api_version, kind, text);
        let holder = built.config_map.is_some().then(|| (objects.len(), built.describe(), built.compute));
        objects.push(built);
        if let (Some((index, describe, compute)), Some(scan)) = (holder, embedded.as_deref_mut()) {
            let holder = embedded::Holder { index, describe: &describe, compute };
            embedded::objects(node, text, holder, objects, scan, &|document, text, built| {
                self::objects(document, text, built, None)
            });
        }
    }
}

/// `(apiVersion, kind)` of a mapping that has both as strings.
fn identity(node: Node<'_>) -> Option<(&str, &str)> {
    Some((node.get("apiVersion")?.as_str()?, node.get("kind")?.as_str()?))
}

fn object(node: Node<'_>, api_version: &str, kind: &str, text: &str) -> Object {
    let metadata = node.get("metadata");
    let string = |key: &str| metadata.and_then(|metadata| metadata.get(key)).and_then(Node::as_str).map(str::to_string);
    let name = string("name").or_else(|| string("generateName"));
    let namespace = string("namespace");
    let ignore = metadata
        .and_then(|metadata| metadata.path(&["annotations", IGNORE_ANNOTATION]))
        .map(|annotation| ignore_codes(annotation, text))
        .unwrap_or_default();
    // `capslint.io/compute: "true"` or `"false"`: whether the thread-cap rules check its containers.
    let compute = metadata
        .and_then(|metadata| metadata.path(&["annotations", COMPUTE_ANNOTATION]))
        .and_then(|annotation| annotation.text())
        .and_then(|text| match text.trim().to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        });
    let located = kinds::locate(kind, api_version, node);
    let config_map = (kind == "ConfigMap" && api_version == "v1").then(|| {
        let entries = node
            .get("data")
            .into_iter()
            .flat_map(Node::entries)
            .filter_map(|(key, data)| Some((key.as_str()?.to_string(), value(data))));
        ConfigMapData::new(name.clone().unwrap_or_default(), namespace.clone(), entries)
    });
    Object {
        compute,
        kind: kind.to_string(),
        api_version: api_version.to_string(),
        name,
        namespace,
        range: node.get("kind").map_or_else(|| node.range(), Node::range),
        ignore,
        always_on: located.always_on,
        pods: located.pods.into_iter().map(pod).collect(),
        config_map,
        embedded: None,
    }
}

/// The codes of the annotation, each with the range where it is written.
fn ignore_codes(annotation: Node<'_>, text: &str) -> Vec<IgnoreCode> {
    let Some(value) = annotation.as_str() else { return Vec::new() };
    let range = annotation.range();
    let raw = text.get(range.to_std_range()).unwrap_or_default();
    let mut search_from = 0;
    let mut codes = Vec::new();
    for code in
        value.split(|character: char| character == ',' || character.is_whitespace()).filter(|code| !code.is_empty())
    {
        // Codes are ASCII words, written the same in the source as in the value.
        let at = raw[search_from..].find(code).map(|index| index + search_from);
        let code_range = match at {
            Some(index) => {
                search_from = index + code.len();
                TextRange::at(range.start() + TextSize::from(index as u32), TextSize::of(code))
            }
            None => range,
        };
        codes.push(IgnoreCode { code: code.to_string(), range: code_range });
    }
    codes
}

fn pod(node: PodNode<'_>) -> Pod {
    let mut pod = Pod {
        role: node.role,
        replicas: node.replicas,
        containers: node.containers.into_iter().map(|container| containers::container(container, false)).collect(),
        init_containers: node
            .init_containers
            .into_iter()
            .map(|container| containers::container(container, true))
            .collect(),
        resources: node.resources.map(resources).unwrap_or_default(),
    };
    // A pod spec patch (Argo `podSpecPatch`) sets what the YAML does not show.
    if let Some(patch) = node.patch {
        super::pod_spec_patch::apply(&mut pod, patch);
    }
    pod
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_yaml as yaml;

    fn all_objects(text: &str) -> Vec<Object> {
        let mut found = Vec::new();
        yaml::for_each_document(text, |document| objects(document, text, &mut found, None)).unwrap();
        found
    }

    /// `(kind, role, container names)` of every pod found.
    fn pods(text: &str) -> Vec<(String, Option<String>, Vec<String>)> {
        all_objects(text)
            .into_iter()
            .flat_map(|object| {
                object.pods.into_iter().map(move |pod| {
                    let names = pod.init_containers.iter().chain(&pod.containers).map(|c| c.display_name().to_string());
                    (object.kind.clone(), pod.role, names.collect())
                })
            })
            .collect()
    }

    #[test]
    fn pod_specs_of_core_kinds_and_lists() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: batch/v1\n  kind: CronJob\n  spec:\n    \
                    jobTemplate:\n      spec:\n        template:\n          spec:\n            containers: [{name: a, image: \
                    x}]\n- apiVersion: v1\n  kind: Pod\n  spec:\n    initContainers: [{name: i}]\n    containers: [{name: \
                    b}]\n---\napiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n  template:\n    spec:\n      \
                    containers: [{name: c}]\n";
        assert_eq!(
            pods(text),
            vec![
                ("CronJob".into(), None, vec!["a".into()]),
                ("Pod".into(), None, vec!["i".into(), "b".into()]),
                ("Deployment".into(), None, vec!["c".into()]),
            ]
        );
    }

    #[test]
    fn pod_specs_of_crds() {
        let text = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec:\n  templates:\n  - name: steps\n    steps: \
                    []\n  - name: t\n    container: {image: x}\n    sidecars: [{name: s, image: y}]\n---\napiVersion: \
                    kubeflow.org/v1\nkind: PyTorchJob\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      \
                    template:\n        spec:\n          containers: [{name: pytorch}]\n---\napiVersion: ray.io/v1\nkind: \
                    RayCluster\nspec:\n  headGroupSpec:\n    template:\n      spec:\n        containers: [{name: head}]\n  \
                    workerGroupSpecs:\n  - groupName: gpu\n    template:\n      spec:\n        containers: [{name: \
                    worker}]\n---\napiVersion: example.com/v1\nkind: Custom\nspec:\n  a:\n    b:\n      containers: [{name: \
                    c, image: x}]\n  notes:\n    containers: [{name: not-a-container}]\n";
        assert_eq!(
            pods(text),
            vec![
                ("Workflow".into(), Some("template `t`".into()), vec!["main".into(), "s".into()]),
                ("PyTorchJob".into(), Some("`Worker` replicas".into()), vec!["pytorch".into()]),
                ("RayCluster".into(), Some("head group".into()), vec!["head".into()]),
                ("RayCluster".into(), Some("worker group `gpu`".into()), vec!["worker".into()]),
                ("Custom".into(), None, vec!["c".into()]),
            ]
        );
    }

    #[test]
    fn values_read_through_aliases_point_at_the_alias() {
        let text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    env: &env\n    - {name: X, value: \
                    \"1\"}\n  - name: b\n    env: *env\n";
        let object = all_objects(text).remove(0);
        let [a, b] = &object.pods[0].containers[..] else { panic!("two containers") };
        assert_eq!(&text[a.env[0].name_range], "X");
        assert_eq!(&text[b.env[0].name_range], "*env");
    }
}
