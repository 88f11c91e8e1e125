//! kustomize, natively: every directory of the scan with a `kustomization.yaml` (or `.yml`, or
//! `Kustomization`) is rendered as `kubectl kustomize` would render it ([`load`]: `resources`, `bases`,
//! `components`, `patches`, `patchesStrategicMerge`, `patchesJson6902`, `namespace`,
//! `namePrefix`/`nameSuffix`, `images`, labels), and the rules run on each overlay's effective objects
//! ([`view`]). Strategic merge follows kustomize ([`merge`]), JSON 6902 operations too ([`json_patch`]).
//!
//! - **Which kustomizations.** An overlay is rendered when no other rendered kustomization of the scan
//!   includes it (a base that overlays include is checked through them); a `kind: Component` only
//!   through the overlays that use it.
//! - **Bases and overlays.** An object that an overlay renders is checked as the overlay renders it, not
//!   as written; two overlays that leave a value alone agree on its finding, which is reported once with
//!   a label per overlay. A finding is placed where the offending value is written (the patch's CPU line,
//!   the base's container name when nothing sets an env variable), labelled "in overlay `...`" when an
//!   overlay or a patch made the object. Messages name objects as their base writes them.
//! - **Patches** are never checked as objects of their own once an overlay that applies them is rendered;
//!   a patch file whose kustomization is not rendered keeps the partial check of [`patch_files`].
//! - **Cost.** [`Plan`] renders each base once per run, whatever its fan-in, and the overlays one at a
//!   time: memory holds the shared bases and one overlay's views, time follows each overlay's output.
//! - **What is not evaluated.** A kustomization with remote resources, Helm charts, transformer plugins,
//!   `replacements` into containers, a selector capslint cannot read, a patch that misses its target, a
//!   cycle, or past the render budget is not rendered: a note says why, and its files are checked as
//!   written. `vars`, generator plugins and `openapi` schemas get a note while the render goes on;
//!   ConfigMap and Secret generators are skipped silently (a variable from a generated ConfigMap is
//!   unknown, as any ConfigMap outside the scan).

mod emit;
mod inline;
mod json_patch;
mod load;
mod merge;
pub mod patch_files;
mod plan;
mod select;
mod tree;
mod view;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ManifestFile;
use super::model::{EnvSource, Object};
use capslint_diagnostics::source::SourceFile;
use capslint_diagnostics::suppress::yaml::DirectiveScan;
use capslint_workspace::settings::Settings;
use load::Loader;
pub use plan::{Plan, RootViews};
pub use view::Provenance;

/// A YAML file of the scan, with its settings: kustomizations are looked for in their directories.
#[derive(Debug, Clone)]
pub struct ScannedYaml {
    /// The path as given.
    pub path: PathBuf,
    /// Its settings.
    pub settings: Arc<Settings>,
}

/// One object of an overlay, as the rules check it.
#[derive(Debug)]
pub struct KustomizeView {
    /// The file where the object is written (its base).
    pub file: usize,
    /// The object in that file.
    pub object: usize,
    /// The rendered object, its ranges virtual.
    pub merged: Object,
    /// Where its ranges are written.
    pub provenance: Provenance,
}

/// A file read for a render, as a manifest file: its objects (for suppression annotations) and comments.
fn manifest_of(
    file: Arc<SourceFile>,
    settings: Arc<Settings>,
    rules: capslint_diagnostics::selection::RuleSet,
) -> ManifestFile {
    let text = file.text();
    let mut objects = Vec::new();
    let mut directives = DirectiveScan::new(text);
    let mut embedded = super::embedded::Scan::default();
    let _ = capslint_yaml::for_each_document(text, |document| {
        super::build::objects(document, text, &mut objects, Some(&mut embedded));
        directives.document(document);
    });
    let mut directives = directives.finish(text);
    directives.append(&mut embedded.directives);
    directives.sort_by_key(|directive| directive.start);
    ManifestFile { file, settings, rules, objects, directives }
}

fn build_objects(text: &str) -> Vec<Object> {
    let mut objects = Vec::new();
    let _ =
        capslint_yaml::for_each_document(text, |document| super::build::objects(document, text, &mut objects, None));
    objects
}

/// A rendered object reduced to what the rules read, for comparing a render with `kubectl kustomize`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RenderedObject {
    /// `kind`.
    pub kind: String,
    /// `metadata.name`, as rendered.
    pub name: String,
    /// `metadata.namespace`, as rendered.
    pub namespace: Option<String>,
    /// Its containers (init containers first), pod by pod.
    pub containers: Vec<RenderedContainer>,
}

/// A container reduced to its image, resources and environment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RenderedContainer {
    /// `name`.
    pub name: String,
    /// `image`.
    pub image: Option<String>,
    /// `resources.limits`, sorted by name.
    pub limits: Vec<(String, String)>,
    /// `resources.requests`, sorted by name.
    pub requests: Vec<(String, String)>,
    /// `env`, in order: the literal value, or `valueFrom` described (`resourceFieldRef limits.cpu`).
    pub env: Vec<(String, String)>,
}

/// Renders the kustomization of `dir` as capslint sees it, reading nothing outside `root`.
pub fn render(dir: &Path, root: &Path) -> Result<Vec<RenderedObject>, String> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let confinement = Arc::new(capslint_workspace::confine::Confinement::new([root.to_path_buf()]));
    let mut loader = Loader::new(cwd, confinement);
    let rendered = loader.render(dir)?;
    let mut objects: Vec<RenderedObject> = rendered
        .resources
        .iter()
        .flat_map(|resource| build_objects(&emit::emit(&resource.tree).text))
        .filter(|object| !object.pods.is_empty())
        .map(|object| reduce(&object))
        .collect();
    objects.sort();
    Ok(objects)
}

/// The objects with containers of a YAML stream (`kubectl kustomize` output), reduced the same way.
pub fn summarize(text: &str) -> Vec<RenderedObject> {
    let mut objects: Vec<RenderedObject> =
        build_objects(text).iter().filter(|object| !object.pods.is_empty()).map(reduce).collect();
    objects.sort();
    objects
}

fn reduce(object: &Object) -> RenderedObject {
    let pairs = |list: &[super::model::Resource]| {
        let mut pairs: Vec<(String, String)> =
            list.iter().map(|resource| (resource.name.clone(), resource.value.text.clone())).collect();
        pairs.sort();
        pairs
    };
    let containers = object
        .pods
        .iter()
        .flat_map(|pod| pod.init_containers.iter().chain(&pod.containers))
        .map(|container| RenderedContainer {
            name: container.display_name().to_string(),
            image: container.image.clone(),
            limits: pairs(&container.resources.limits),
            requests: pairs(&container.resources.requests),
            env: container
                .env
                .iter()
                .map(|env| {
                    let value = match &env.source {
                        EnvSource::Literal(value) => value.text.clone(),
                        EnvSource::ResourceField { resource, .. } => format!("resourceFieldRef {}", resource.text),
                        EnvSource::ConfigMapKey { name, key } => format!("configMapKeyRef {name}/{key}"),
                        EnvSource::Other => "valueFrom".to_string(),
                    };
                    (env.name.clone(), value)
                })
                .collect(),
        })
        .collect();
    RenderedObject {
        kind: object.kind.clone(),
        name: object.name.clone().unwrap_or_default(),
        namespace: object.namespace.clone(),
        containers,
    }
}
