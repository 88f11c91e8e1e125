//! Airflow pod templates: a `KubernetesPodOperator(pod_template_file=...)` call merges its arguments into
//! the template's FIRST container (`PodGenerator.reconcile_containers` merges by list position):
//! `container_resources` replaces the container's `resources`, `env_vars` and `pod_runtime_info_envs`
//! are appended to its `env`, `cmds` and `arguments` replace `command` and `args`.
//!
//! The merged view is what runs, so it is the one checked: a template that a DAG of the scan uses is
//! reported through every such DAG (findings that agree are reported once, with a label at each
//! operator), and not on its own. A template file outside the scan is read when a DAG names it.

use std::path::{Component, Path, PathBuf};

use rustc_hash::FxHashMap;

use super::model::{EnvSource, EnvVar, Object, Resource, Resources, Value};
use super::rules::Merged;
use capslint_pod_template::{OverlayValue, PodTemplateCall, ResourcesOverlay, TemplateUse};

/// A template object seen through one operator.
#[derive(Debug)]
pub struct View {
    /// The template's file.
    pub file: usize,
    /// The object the arguments merge into.
    pub object: usize,
    /// The merged object.
    pub merged_object: Object,
    /// The operator.
    pub merged: Merged,
}

/// Where the template of `use_` is in the repository (resolved), or why it is not read (`None` when it is
/// simply not there). A relative path is looked up next to the DAG, then at the configuration's root, then
/// under each of `[airflow] template-roots`. An absolute path names a file of the Airflow worker's image,
/// never one of the machine running the check: it is looked up under `template-roots` by its longest
/// trailing part (`/opt/airflow/templates/gpu.yaml` as `<root>/opt/airflow/templates/gpu.yaml`, then
/// `<root>/airflow/templates/gpu.yaml`, ... then `<root>/gpu.yaml`). Nothing outside the run's roots is
/// opened.
pub fn find_template(use_: &TemplateUse) -> Result<PathBuf, Option<String>> {
    let written = &use_.call.template;
    let template = Path::new(written);
    let settings = &use_.settings;
    let candidates: Vec<PathBuf> = if template.is_absolute() {
        let parts: Vec<_> = template.components().filter(|part| matches!(part, Component::Normal(_))).collect();
        let parts = &parts;
        settings
            .template_roots
            .iter()
            .flat_map(|root| {
                (0..parts.len()).map(move |skip| parts[skip..].iter().fold(root.clone(), |path, part| path.join(part)))
            })
            .collect()
    } else {
        let dag_dir = use_.dag.path().parent().map(Path::to_path_buf).unwrap_or_default();
        [dag_dir, settings.root.clone()]
            .into_iter()
            .chain(settings.template_roots.iter().cloned())
            .map(|base| base.join(template))
            .collect()
    };
    let mut refused = None;
    for candidate in candidates {
        match settings.confinement.file(&candidate, written) {
            Ok(resolved) => return Ok(resolved),
            Err(refusal) if refusal.is_confinement() => refused = Some(refusal),
            Err(_) => {}
        }
    }
    let dag = use_.dag.display_name();
    Err(match refused {
        Some(refusal) => Some(format!("{dag}: the `pod_template_file` {refusal}: not read")),
        None if template.is_absolute() => Some(format!(
            "{dag}: the `pod_template_file` `{written}` is a path on the Airflow worker; it is checked when \
             `[airflow] template-roots` names the repository's directory that holds it"
        )),
        None => None,
    })
}

/// The object an operator merges into: the first `Pod` with a container (not one held in a ConfigMap).
pub fn target(objects: &[Object]) -> Option<usize> {
    objects.iter().position(|object| {
        object.kind == "Pod"
            && object.embedded.is_none()
            && object.pods.first().is_some_and(|pod| !pod.containers.is_empty())
    })
}

/// The template object as the operator runs it.
pub fn merge(object: &Object, call: &PodTemplateCall) -> Object {
    let mut object = object.clone();
    let Some(container) = object.pods.first_mut().and_then(|pod| pod.containers.first_mut()) else {
        return object;
    };
    // The operator runs the template's first container with its own `image` when the template has none:
    // merged, it is a whole container.
    container.partial = false;
    let at = container.anchor;
    let value = |text: &str| Value { text: text.to_string(), range: at };
    let resources = |list: &[(String, String)]| -> Vec<Resource> {
        list.iter().map(|(name, quantity)| Resource { name: name.clone(), value: value(quantity) }).collect()
    };
    match &call.resources {
        None => {}
        Some(ResourcesOverlay::Unknown) => container.resources_open = true,
        Some(ResourcesOverlay::Known { limits, requests }) => {
            container.resources = Resources { limits: resources(limits), requests: resources(requests) };
        }
    }
    for env in &call.env {
        let source = match &env.value {
            OverlayValue::Literal(text) => EnvSource::Literal(value(text)),
            OverlayValue::ResourceField { resource, divisor } => EnvSource::ResourceField {
                resource: value(resource),
                container: None,
                divisor: divisor.as_deref().map(value),
            },
            OverlayValue::Other => EnvSource::Other,
        };
        container.env.push(EnvVar { name: env.name.clone(), name_range: at, source });
    }
    container.env_open |= call.env_open;
    if call.command.is_some() {
        container.command.clone_from(&call.command);
    }
    if call.args.is_some() {
        container.args.clone_from(&call.args);
    }
    object
}

/// The label at the operator.
pub fn merged_label(call: &PodTemplateCall) -> String {
    match &call.task_id {
        Some(task) => format!("merged with the arguments of task `{task}`"),
        None => "merged with the arguments of this operator".to_string(),
    }
}

/// Canonical paths of files, for matching a template with a scanned file.
pub fn canonical_index<'a>(paths: impl Iterator<Item = (usize, &'a Path)>) -> FxHashMap<PathBuf, usize> {
    let directories = capslint_workspace::confine::ResolvedDirectories::default();
    paths.filter_map(|(index, path)| Some((directories.canonical(path)?, index))).collect()
}
