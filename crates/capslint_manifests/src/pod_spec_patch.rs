//! Argo `podSpecPatch`: a YAML (or JSON) string that Argo merges into the pod spec when it creates the
//! pod, by strategic merge: containers by `name`, their `resources` by resource name, their `env` by
//! variable name, and pod-level `resources`. The patch is parsed and applied, so a limit or a variable it
//! sets counts as set. Every value it contributes is placed at the `podSpecPatch` string, whose inside
//! has no byte offsets in the file. A patch that holds workflow parameters (`{{inputs.parameters.cpu}}`)
//! or does not parse is unknown: what it mentions (resources, env) is then not reported missing.

use ruff_text_size::TextRange;

use super::containers;
use super::kinds::ContainerNode;
use super::model::{Container, Pod, Resources};
use super::relocate;
use capslint_yaml::{self as yaml, Node};

/// What a patch sets, owned and placed at the patch.
#[derive(Debug, Default)]
struct Patch {
    resources: Option<Resources>,
    containers: Vec<Container>,
    init_containers: Vec<Container>,
}

/// Applies the `podSpecPatch` string at `node` to `pod`.
pub fn apply(pod: &mut Pod, node: Node<'_>) {
    let Some(text) = node.text() else { return };
    match parse(&text, node.range()) {
        Some(patch) => merge(pod, patch),
        None => {
            let (resources, env) = (text.contains("resources"), text.contains("env"));
            for container in pod.containers.iter_mut().chain(pod.init_containers.iter_mut()) {
                container.resources_open |= resources;
                container.env_open |= env;
            }
        }
    }
}

fn parse(text: &str, at: TextRange) -> Option<Patch> {
    if text.contains("{{") {
        return None;
    }
    let mut patch = None;
    let mut documents = 0;
    yaml::for_each_document(text, |document| {
        documents += 1;
        if document.is_mapping() {
            patch = Some(read(document, at));
        }
    })
    .ok()?;
    if documents != 1 {
        return None;
    }
    patch
}

fn read(document: Node<'_>, at: TextRange) -> Patch {
    let containers = |key: &str, init: bool| -> Vec<Container> {
        document
            .get(key)
            .into_iter()
            .flat_map(Node::items)
            .filter(|item| item.is_mapping())
            .map(|item| {
                let found = ContainerNode { node: item, default_name: None, key: None, partial: true };
                let mut container = containers::container(found, init);
                relocate::container(&mut container, &|_| at);
                container
            })
            .collect()
    };
    let mut resources = document.get("resources").filter(|node| node.is_mapping()).map(containers::resources);
    if let Some(resources) = &mut resources {
        relocate::resources(resources, &|_| at);
    }
    Patch {
        resources,
        containers: containers("containers", false),
        init_containers: containers("initContainers", true),
    }
}

fn merge(pod: &mut Pod, patch: Patch) {
    if let Some(resources) = patch.resources {
        merge_resources(&mut pod.resources, resources);
    }
    for (targets, patches) in
        [(&mut pod.containers, patch.containers), (&mut pod.init_containers, patch.init_containers)]
    {
        for patch in patches {
            // Argo names the container of a `container` or `script` template `main`.
            let Some(target) = targets.iter_mut().find(|target| target.name.is_some() && target.name == patch.name)
            else {
                continue;
            };
            merge_resources(&mut target.resources, patch.resources);
            for variable in patch.env {
                target.env.retain(|existing| existing.name != variable.name);
                target.env.push(variable);
            }
            target.env_open |= patch.env_open;
            target.env_from.extend(patch.env_from);
        }
    }
}

/// Later entries win ([`Resources::limit`] reads the last one of a name).
fn merge_resources(into: &mut Resources, patch: Resources) {
    into.limits.extend(patch.limits);
    into.requests.extend(patch.requests);
}
