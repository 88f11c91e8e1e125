//! Which kustomizations of a scan are rendered, and rendering them one at a time.
//!
//! Planning renders every kustomization directory of the scan once, only to learn which others it
//! includes: an overlay that no other rendered kustomization includes is a root. A root's own render is
//! dropped as soon as it is planned, while the bases it read stay cached, so a base is loaded, parsed and
//! rendered once however many overlays share it, and memory holds the shared bases, not every overlay.
//! Each root is then rendered again, alone, when its objects are checked ([`Plan::render_root`]): the cost
//! of the check follows the size of each overlay's output, and only one overlay's views are alive at a time.
//!
//! A panic while rendering or while building a view is contained: it becomes a CAP001 finding on the
//! kustomization file, whose files are then checked as written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ruff_text_size::{TextRange, TextSize};
use rustc_hash::{FxHashMap, FxHashSet};

use super::load::{Loader, Rendered, Resource};
use super::tree::{self, SourceId};
use super::{KustomizeView, Provenance, ScannedYaml, build_objects, emit, manifest_of, view};
use crate::ManifestFile;
use capslint_diagnostics::contain::contained;
use capslint_diagnostics::diagnostic::{Diagnostic, Finding};
use capslint_diagnostics::registry::Rule;
use capslint_diagnostics::source::SourceFile;
use capslint_workspace::confine::ResolvedDirectories;
use capslint_workspace::settings::Settings;

/// A kustomization directory that is rendered and checked: no other rendered kustomization includes it.
struct Root {
    dir: PathBuf,
    settings: Arc<Settings>,
}

/// The kustomizations of a scan: the roots to render, and the loader that holds their shared bases.
pub struct Plan {
    loader: Loader,
    roots: Vec<Root>,
    /// The scan's file index of every source already registered as a file.
    sources: FxHashMap<SourceId, usize>,
    /// The canonical paths of the scan's YAML files.
    scanned: FxHashSet<PathBuf>,
    /// How many files the renders read that the scan did not include.
    extra: usize,
    /// CAP001 findings of internal errors while rendering.
    diagnostics: Vec<Diagnostic>,
}

/// What one rendered root contributes to the check.
#[derive(Debug, Default)]
pub struct RootViews {
    /// Its rendered objects with containers.
    pub views: Vec<KustomizeView>,
    /// The objects of the patch files it applied, `(file, object)`: fragments, never workloads of their own.
    pub fragments: Vec<(usize, usize)>,
}

impl Plan {
    /// Plans the kustomizations in the directories of `scanned` (and of `files`): renders each once to find
    /// the roots, and notes in `notices` every root that cannot be rendered and why.
    pub fn new(files: &[ManifestFile], scanned: &[ScannedYaml], notices: &mut Vec<String>) -> Option<Plan> {
        let mut dirs: std::collections::BTreeMap<PathBuf, Arc<Settings>> = std::collections::BTreeMap::new();
        let mut scanned_paths: FxHashSet<PathBuf> = FxHashSet::default();
        let directories = ResolvedDirectories::default();
        let entries = scanned
            .iter()
            .map(|entry| (entry.path.as_path(), &entry.settings))
            .chain(files.iter().map(|file| (file.file.path(), &file.settings)));
        for (path, settings) in entries {
            let Some(canonical) = directories.canonical(path) else { continue };
            if let Some(dir) = canonical.parent() {
                dirs.entry(dir.to_path_buf()).or_insert_with(|| Arc::clone(settings));
            }
            scanned_paths.insert(canonical);
        }
        let candidates: Vec<(PathBuf, Arc<Settings>)> =
            dirs.into_iter().filter(|(dir, _)| Loader::kustomization_file(dir).is_some()).collect();
        let first = candidates.first()?;
        let mut loader = Loader::new(first.1.cwd().to_path_buf(), Arc::clone(&first.1.confinement));
        let mut sources: FxHashMap<SourceId, usize> = FxHashMap::default();
        for (index, file) in files.iter().enumerate() {
            if let Some(canonical) = directories.canonical(file.file.path()) {
                sources.insert(loader.add_known(canonical, Arc::clone(&file.file)), index);
            }
        }
        let mut diagnostics = Vec::new();
        let mut included: FxHashSet<PathBuf> = FxHashSet::default();
        let mut planned: Vec<(PathBuf, Arc<Settings>, Result<(), String>)> = Vec::new();
        for (dir, settings) in candidates {
            if loader.is_component(&dir) {
                continue;
            }
            let result = match contained(|| loader.render(&dir)) {
                Ok(Ok(rendered)) => {
                    included.extend(rendered.included.iter().cloned());
                    Ok(())
                }
                Ok(Err(reason)) => Err(reason),
                Err(panic) => {
                    diagnostics.push(internal_error(&loader, &dir, &settings, "rendering this kustomization", &panic));
                    Err(format!("internal error: {panic}"))
                }
            };
            // Only what other kustomizations include stays cached: the roots are rendered again, one at a
            // time, when they are checked.
            if !included.contains(&dir) {
                loader.forget(&dir);
            }
            planned.push((dir, settings, result));
        }
        let mut roots = Vec::new();
        for (dir, settings, result) in planned {
            if included.contains(&dir) {
                continue;
            }
            match result {
                Ok(()) => roots.push(Root { dir, settings }),
                Err(reason) => notices.push(format!(
                    "{}: kustomization not rendered: {reason}; its files are checked as written",
                    loader.display(&dir)
                )),
            }
        }
        notices.append(&mut loader.notes);
        // Checking renders every root again, and may: the budget bounds each pass over the roots.
        loader.restart_budget();
        Some(Plan { loader, roots, sources, scanned: scanned_paths, extra: 0, diagnostics })
    }

    /// How many roots there are.
    pub fn root_count(&self) -> usize {
        self.roots.len()
    }

    /// Renders root `index` again and builds the views of its objects, adding the files they are written in
    /// to `files`. A panic in the render or in one object's view becomes a CAP001 finding on the
    /// kustomization file (kept in the plan); an object whose view could not be built is checked as written.
    pub fn render_root(&mut self, index: usize, files: &mut Vec<ManifestFile>) -> RootViews {
        let Root { dir, settings } = &self.roots[index];
        let (dir, settings) = (dir.clone(), Arc::clone(settings));
        let rendered = match contained(|| self.loader.render(&dir)) {
            Ok(Ok(rendered)) => rendered,
            // Planned renders repeat: a failure here is a render that depends on more than its inputs.
            Ok(Err(_)) => return RootViews::default(),
            Err(panic) => {
                let diagnostic = internal_error(&self.loader, &dir, &settings, "rendering this kustomization", &panic);
                self.diagnostics.push(diagnostic);
                return RootViews::default();
            }
        };
        self.loader.forget(&dir);
        let mut root = RootViews::default();
        let mut context = Context {
            files,
            loader: &self.loader,
            sources: &mut self.sources,
            scanned: &self.scanned,
            extra: &mut self.extra,
        };
        for source in &rendered.patch_files {
            let Some(file) = context.file(*source, &settings) else { continue };
            root.fragments.extend((0..context.files[file].objects.len()).map(|object| (file, object)));
        }
        let overlay = self.loader.display(&dir);
        for resource in &rendered.resources {
            match contained(|| context.view(resource, &rendered, &dir, &overlay, &settings)) {
                Ok(Some(view)) => root.views.push(view),
                Ok(None) => {}
                Err(panic) => {
                    let what = format!("rendering {} in overlay `{overlay}`", resource.identity.describe());
                    self.diagnostics.push(internal_error(&self.loader, &dir, &settings, &what, &panic));
                }
            }
        }
        let map = view::source_files(self.loader.file_count(), |source| self.sources.get(&source).copied());
        for view in &mut root.views {
            view.provenance.files = Arc::clone(&map);
        }
        root
    }

    /// How many files the renders read that the scan did not include, and the CAP001 findings of internal
    /// errors while rendering.
    pub fn finish(self) -> (usize, Vec<Diagnostic>) {
        (self.extra, self.diagnostics)
    }
}

/// CAP001 on the kustomization file of `dir`: an internal error while doing `what`.
fn internal_error(loader: &Loader, dir: &Path, settings: &Settings, what: &str, reason: &str) -> Diagnostic {
    let path = Loader::kustomization_file(dir).unwrap_or_else(|| dir.to_path_buf());
    let file = Arc::new(SourceFile::new(path.clone(), loader.display(&path), String::new()));
    let finding = Finding::new(
        Rule::SyntaxError,
        TextRange::empty(TextSize::from(0)),
        format!("internal error while {what}: {reason}; the files of this kustomization are checked as written"),
    )
    .label("not rendered")
    .help("please report this with the kustomization attached");
    Diagnostic { severity: settings.severity(Rule::SyntaxError), finding, file }
}

/// The scan's files, grown by the files one root's render reads.
struct Context<'a> {
    files: &'a mut Vec<ManifestFile>,
    loader: &'a Loader,
    sources: &'a mut FxHashMap<SourceId, usize>,
    scanned: &'a FxHashSet<PathBuf>,
    extra: &'a mut usize,
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
            *self.extra += 1;
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
        let mut emitted = emit::emit(&resource.tree);
        let mut merged = build_objects(&emitted.text).into_iter().next()?;
        // Only the spans are needed from here on: the text is as large as the object.
        emitted.text = String::new();
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
