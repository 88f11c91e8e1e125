//! Moves the ranges of a model built from a string (an Argo `podSpecPatch`, an object held in a
//! ConfigMap's `data`) into the file that writes the string: `place` turns a range of the string into a
//! range of the file (the exact place, or the whole string when the inside has no exact place). A
//! container moved this way has no layout: fixes never edit inside a string.

use ruff_text_size::TextRange;

use super::model::{Container, EnvSource, EnvVar, IgnoreCode, Object, Resource, Resources, Value};

/// Moves every range of `object`: its `kind`, annotation codes, pods and containers.
pub fn object(object: &mut Object, place: &impl Fn(TextRange) -> TextRange) {
    object.range = place(object.range);
    for IgnoreCode { range, .. } in &mut object.ignore {
        *range = place(*range);
    }
    for pod in &mut object.pods {
        resources(&mut pod.resources, place);
        for found in pod.containers.iter_mut().chain(pod.init_containers.iter_mut()) {
            container(found, place);
        }
    }
}

/// Moves every range of `container` and drops its layout.
pub fn container(container: &mut Container, place: &impl Fn(TextRange) -> TextRange) {
    container.anchor = place(container.anchor);
    container.layout = None;
    resources(&mut container.resources, place);
    for variable in &mut container.env {
        env(variable, place);
    }
    for entry in &mut container.env_from {
        entry.range = place(entry.range);
    }
}

/// Moves the ranges of every quantity of `resources`.
pub fn resources(resources: &mut Resources, place: &impl Fn(TextRange) -> TextRange) {
    for Resource { value, .. } in resources.limits.iter_mut().chain(resources.requests.iter_mut()) {
        value.range = place(value.range);
    }
}

fn env(variable: &mut EnvVar, place: &impl Fn(TextRange) -> TextRange) {
    variable.name_range = place(variable.name_range);
    let relocate = |value: &mut Value| value.range = place(value.range);
    match &mut variable.source {
        EnvSource::Literal(value) => relocate(value),
        EnvSource::ResourceField { resource, divisor, .. } => {
            relocate(resource);
            if let Some(divisor) = divisor {
                relocate(divisor);
            }
        }
        EnvSource::ConfigMapKey { .. } | EnvSource::Other => {}
    }
}
