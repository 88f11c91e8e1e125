//! The model of a container, built from its mapping: its resources, env, envFrom, command and where its
//! text is written. Shared by the objects of a stream ([`super::build`]) and Argo's pod spec patches
//! ([`super::pod_spec_patch`]), which both read containers and neither of which the other needs.

use ruff_text_size::{TextRange, TextSize};

use super::kinds::ContainerNode;
use super::model::{
    Container, ContainerLayout, EnvFrom, EnvFromSource, EnvSource, EnvVar, MappingLayout, Resource, Resources, Value,
};
use capslint_yaml::Node;

/// A scalar's text and where it is written.
pub(super) fn value(node: Node<'_>) -> Value {
    Value { text: node.text().map(|text| text.into_owned()).unwrap_or_default(), range: node.range() }
}

/// `resources.limits` and `resources.requests` of a `resources` mapping.
pub(super) fn resources(node: Node<'_>) -> Resources {
    let list = |key: &str| {
        node.get(key)
            .into_iter()
            .flat_map(Node::entries)
            .filter(|(_, quantity)| !quantity.is_null())
            .filter_map(|(name, quantity)| Some(Resource { name: name.as_str()?.to_string(), value: value(quantity) }))
            .collect()
    };
    Resources { limits: list("limits"), requests: list("requests") }
}

/// The container a container mapping describes.
pub(super) fn container(found: ContainerNode<'_>, init: bool) -> Container {
    let node = found.node;
    let name_node = node.get("name").filter(|name| name.as_str().is_some());
    let anchor = name_node
        .map(Node::range)
        .or(found.key)
        .or_else(|| node.entries().next().map(|(key, _)| key.range()))
        .unwrap_or_else(|| TextRange::empty(node.start()));
    let (env, env_open) = match node.get("env") {
        Some(list) if list.is_sequence() => (list.items().filter_map(env_var).collect(), false),
        Some(list) if list.is_null() => (Vec::new(), false),
        Some(_) => (Vec::new(), true),
        None => (Vec::new(), false),
    };
    let strings = |key: &str| -> Option<Vec<String>> {
        let node = node.get(key).filter(|node| !node.is_null())?;
        if let Some(text) = node.text() {
            return Some(vec![text.into_owned()]);
        }
        Some(node.items().map(|item| item.text().map(|text| text.into_owned()).unwrap_or_default()).collect())
    };
    Container {
        name: name_node.and_then(Node::as_str).map(str::to_string).or(found.default_name.map(str::to_string)),
        anchor,
        init,
        // A container without an image cannot run as written: it is a fragment (a patch, a template
        // completed elsewhere), so only the values it writes are checked.
        partial: found.partial || node.get("image").is_none_or(Node::is_null),
        resources: node.get("resources").or_else(|| node.get("resourcesPerNode")).map(resources).unwrap_or_default(),
        env,
        env_open,
        env_from: node.get("envFrom").into_iter().flat_map(Node::items).map(env_from).collect(),
        image: node.get("image").and_then(Node::as_str).map(str::to_string),
        command: strings("command"),
        args: strings("args"),
        resources_open: false,
        layout: layout(node, name_node),
    }
}

/// Where the container mapping `node` and its `env` are written (`None` when it came through an alias).
fn layout(node: Node<'_>, name: Option<Node<'_>>) -> Option<ContainerLayout> {
    if node.via_alias() {
        return None;
    }
    let env = node.entry("env");
    let env_items = env.and_then(|(_, list)| {
        let first = list.items().next()?;
        Some((first.start(), content_end(list, 0)?))
    });
    let mapping = |node: Node<'_>| {
        (node.is_mapping() && !node.via_alias()).then(|| MappingLayout {
            start: node.start(),
            first_key: node.entries().next().map(|(key, _)| key.start()),
        })
    };
    let resources = node.get("resources");
    Some(ContainerLayout {
        resources: resources.and_then(mapping),
        limits: resources.and_then(|resources| resources.get("limits")).and_then(mapping),
        start: node.start(),
        name: name.filter(|name| !name.via_alias()).map(Node::range),
        env_key: env.map(|(key, _)| key.range()),
        env_items,
    })
}

/// Where the last scalar under `node` ends: the end of its written content, which a block collection's
/// own range (running to the next token) overshoots. `None` past a depth of 64 or through an alias.
fn content_end(node: Node<'_>, depth: usize) -> Option<TextSize> {
    if depth > 64 || node.via_alias() {
        return None;
    }
    if node.is_mapping() {
        let mut end = None;
        for (key, value) in node.entries() {
            end = end.max(content_end(key, depth + 1)).max(content_end(value, depth + 1));
        }
        return end;
    }
    if node.is_sequence() {
        return node.items().filter_map(|item| content_end(item, depth + 1)).max();
    }
    Some(node.range().end())
}

fn env_var(item: Node<'_>) -> Option<EnvVar> {
    let name_node = item.get("name")?;
    let name = name_node.as_str()?.to_string();
    let source = match item.get("valueFrom").filter(|from| from.is_mapping()) {
        Some(from) => {
            if let Some(field) = from.get("resourceFieldRef") {
                EnvSource::ResourceField {
                    resource: field
                        .get("resource")
                        .map(value)
                        .unwrap_or(Value { text: String::new(), range: TextRange::empty(field.start()) }),
                    container: field.get("containerName").and_then(Node::as_str).map(str::to_string),
                    divisor: field.get("divisor").filter(|divisor| !divisor.is_null()).map(value),
                }
            } else if let Some(reference) = from.get("configMapKeyRef") {
                EnvSource::ConfigMapKey {
                    name: reference.get("name").and_then(Node::text).map(|text| text.into_owned()).unwrap_or_default(),
                    key: reference.get("key").and_then(Node::text).map(|text| text.into_owned()).unwrap_or_default(),
                }
            } else {
                EnvSource::Other
            }
        }
        None => EnvSource::Literal(match item.get("value").filter(|value| !value.is_null()) {
            Some(node) => value(node),
            None => Value { text: String::new(), range: name_node.range() },
        }),
    };
    Some(EnvVar { name, name_range: name_node.range(), source })
}

fn env_from(item: Node<'_>) -> EnvFrom {
    let prefix = item.get("prefix").and_then(Node::text).map(|text| text.into_owned()).unwrap_or_default();
    let source = match item.path(&["configMapRef", "name"]).and_then(Node::as_str) {
        Some(name) => EnvFromSource::ConfigMap(name.to_string()),
        None => EnvFromSource::Opaque,
    };
    EnvFrom { source, prefix, range: item.range() }
}
