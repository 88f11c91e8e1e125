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
mod select;
mod tree;
mod view;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ruff_text_size::{TextRange, TextSize};
use rustc_hash::{FxHashMap, FxHashSet};

use super::ManifestFile;
use super::model::{EnvSource, Object};
use crate::registry::Rule;
use crate::settings::Settings;
use crate::source::SourceFile;
use crate::suppress::yaml::DirectiveScan;
use load::{Loader, Rendered, Resource};
use tree::SourceId;
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

/// What the kustomizations of a scan contribute to the check.
#[derive(Debug, Default)]
pub struct Kustomized {
    /// The rendered objects with containers.
    pub views: Vec<KustomizeView>,
    /// `(file, object)` pairs checked through views, never as written.
    pub excluded: FxHashSet<(usize, usize)>,
    /// The objects of patch files (fragments, never workloads of their own).
    pub fragments: FxHashSet<(usize, usize)>,
    /// Files read for the renders that the scan did not include.
    pub extra_files: usize,
}

/// Renders the kustomizations in the directories of `scanned` (and of `files`), adding the files they
/// read to `files`; notes go to `notices`.
pub fn resolve(files: &mut Vec<ManifestFile>, scanned: &[ScannedYaml], notices: &mut Vec<String>) -> Kustomized {
    let mut kustomized = Kustomized::default();
    let mut dirs: BTreeMap<PathBuf, Arc<Settings>> = BTreeMap::new();
    let mut scanned_paths: FxHashSet<PathBuf> = FxHashSet::default();
    let entries = scanned
        .iter()
        .map(|entry| (entry.path.as_path(), &entry.settings))
        .chain(files.iter().map(|file| (file.file.path(), &file.settings)));
    for (path, settings) in entries {
        let Ok(canonical) = std::fs::canonicalize(path) else { continue };
        if let Some(dir) = canonical.parent() {
            dirs.entry(dir.to_path_buf()).or_insert_with(|| Arc::clone(settings));
        }
        scanned_paths.insert(canonical);
    }
    let candidates: Vec<(PathBuf, Arc<Settings>)> =
        dirs.into_iter().filter(|(dir, _)| Loader::kustomization_file(dir).is_some()).collect();
    if candidates.is_empty() {
        return kustomized;
    }
    let cwd = candidates[0].1.cwd().to_path_buf();
    let mut loader = Loader::new(cwd, Arc::clone(&candidates[0].1.confinement));
    let mut sources: FxHashMap<SourceId, usize> = FxHashMap::default();
    for (index, file) in files.iter().enumerate() {
        if let Ok(canonical) = std::fs::canonicalize(file.file.path()) {
            sources.insert(loader.add_known(canonical, Arc::clone(&file.file)), index);
        }
    }
    let mut results: Vec<Candidate> = Vec::new();
    for (dir, settings) in candidates {
        if loader.is_component(&dir) {
            continue;
        }
        let result = loader.render(&dir);
        results.push((dir, settings, result));
    }
    let included: FxHashSet<&PathBuf> = results
        .iter()
        .filter_map(|(_, _, result)| result.as_ref().ok())
        .flat_map(|rendered| &rendered.included)
        .collect();
    let mut roots = Vec::new();
    for (dir, settings, result) in &results {
        if included.contains(dir) {
            continue;
        }
        match result {
            Ok(rendered) => roots.push((dir.clone(), Arc::clone(settings), Arc::clone(rendered))),
            Err(reason) => notices.push(format!(
                "{}: kustomization not rendered: {reason}; its files are checked as written",
                loader.display(dir)
            )),
        }
    }
    notices.extend(loader.notes.iter().cloned());

    let mut context = Context { files, loader: &loader, sources, scanned: &scanned_paths, extra: 0 };
    for (dir, settings, rendered) in &roots {
        for source in &rendered.patch_files {
            let Some(file) = context.file(*source, settings) else { continue };
            for object in 0..context.files[file].objects.len() {
                kustomized.excluded.insert((file, object));
                kustomized.fragments.insert((file, object));
            }
        }
        let overlay = loader.display(dir);
        for resource in &rendered.resources {
            if let Some(view) = context.view(resource, rendered, dir, &overlay, settings) {
                kustomized.excluded.insert((view.file, view.object));
                kustomized.views.push(view);
            }
        }
    }
    let known = context.sources.clone();
    kustomized.extra_files = context.extra;
    let map = view::source_files(loader.file_count(), |source| known.get(&source).copied());
    for view in &mut kustomized.views {
        view.provenance.files = Arc::clone(&map);
    }
    kustomized
}

/// A kustomization directory of the scan, its settings and its render.
type Candidate = (PathBuf, Arc<Settings>, Result<Arc<Rendered>, String>);

/// The scan's files, grown by the files the renders read.
struct Context<'a> {
    files: &'a mut Vec<ManifestFile>,
    loader: &'a Loader,
    sources: FxHashMap<SourceId, usize>,
    scanned: &'a FxHashSet<PathBuf>,
    extra: usize,
}

impl Context<'_> {
    /// The scan's index of a source, adding it as a file when it is not one yet.
    fn file(&mut self, source: SourceId, settings: &Arc<Settings>) -> Option<usize> {
        if let Some(index) = self.sources.get(&source) {
            return Some(*index);
        }
        let loaded = self.loader.file(source);
        let in_scan = self.scanned.contains(&loaded.path);
        let mut rules = settings.rules_for(loaded.file.path());
        if !in_scan {
            // A file outside the scan is read, never reported for its own suppressions.
            rules.remove(Rule::UnusedSuppression);
            self.extra += 1;
        }
        self.files.push(manifest_of(Arc::clone(&loaded.file), Arc::clone(settings), rules));
        let index = self.files.len() - 1;
        self.sources.insert(source, index);
        Some(index)
    }

    /// The object of `file` whose `kind` is written at `origin`.
    fn object_at(&mut self, origin: tree::Origin, settings: &Arc<Settings>) -> Option<(usize, usize)> {
        let file = self.file(origin.source, settings)?;
        let object = self.files[file].objects.iter().position(|object| object.range == origin.range)?;
        Some((file, object))
    }

    /// The view of a rendered object with containers.
    fn view(
        &mut self,
        resource: &Resource,
        rendered: &Rendered,
        dir: &Path,
        overlay: &str,
        settings: &Arc<Settings>,
    ) -> Option<KustomizeView> {
        let emitted = emit::emit(&resource.tree);
        let mut merged = build_objects(&emitted.text).into_iter().next()?;
        if merged.pods.is_empty() {
            return None;
        }
        let (file, object) = self.object_at(resource.written, settings)?;
        let written = &self.files[file].objects[object];
        merged.name.clone_from(&written.name);
        merged.namespace.clone_from(&written.namespace);
        merged.config_map = None;
        view::shift(&mut merged);
        let mut used: Vec<SourceId> = emitted.spans.iter().map(|(_, origin)| origin.source).collect();
        used.sort_unstable();
        used.dedup();
        for source in used {
            self.file(source, settings);
        }
        let owners = resource.patches.iter().filter_map(|origin| self.object_at(*origin, settings)).collect();
        let label = if resource.patched || resource.home.as_path() != dir {
            let kustomization = rendered.kustomization?;
            // The `resources` entry that brought the object in, else the kustomization's first line.
            let first = |text: &str| text.find(|c: char| !c.is_whitespace()).unwrap_or_default();
            let range = match resource.via.filter(|via| via.source == kustomization) {
                Some(via) => via.range,
                None => TextRange::empty(TextSize::from(first(self.loader.file(kustomization).file.text()) as u32)),
            };
            Some((self.file(kustomization, settings)?, range, view::overlay_label(overlay)))
        } else {
            None
        };
        let fallback = (file, self.files[file].objects[object].range);
        let provenance = Provenance { spans: emitted, files: Arc::new(Vec::new()), fallback, label, owners };
        Some(KustomizeView { file, object, merged, provenance })
    }
}

/// A file read for a render, as a manifest file: its objects (for suppression annotations) and comments.
fn manifest_of(file: Arc<SourceFile>, settings: Arc<Settings>, rules: crate::selection::RuleSet) -> ManifestFile {
    let text = file.text();
    let mut objects = Vec::new();
    let mut directives = DirectiveScan::new(text);
    let _ = crate::yaml::for_each_document(text, |document| {
        super::build::objects(document, text, &mut objects);
        directives.document(document);
    });
    let directives = directives.finish(text);
    ManifestFile { file, settings, rules, objects, directives }
}

fn build_objects(text: &str) -> Vec<Object> {
    let mut objects = Vec::new();
    let _ = crate::yaml::for_each_document(text, |document| super::build::objects(document, text, &mut objects));
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
    let confinement = Arc::new(crate::confine::Confinement::new([root.to_path_buf()]));
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
