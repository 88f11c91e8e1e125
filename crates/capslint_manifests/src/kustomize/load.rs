//! Reading and rendering kustomizations: the files they name (every read within a size limit, counted
//! against a budget shared by the whole scan), their `resources` (files, and directories rendered
//! recursively with a cycle check and a depth limit), `components`, patches of every form, and the
//! transformers that matter to containers (`namespace`, `namePrefix`/`nameSuffix`, `images`, labels),
//! in kustomize's order. A directory is rendered once and reused by every overlay above it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::inline::{self, LineMap};
use super::json_patch;
use super::merge;
use super::select::{Identity, Selector};
use super::tree::{Data, Origin, SourceId, Tree};
use capslint_diagnostics::source::SourceFile;
use capslint_workspace::confine::{Confinement, Refusal};

/// The file names kustomize reads as a kustomization.
pub const KUSTOMIZATION_FILES: &[&str] = &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// How deep kustomizations may include each other.
const MAX_NESTING: usize = 32;

/// The largest file read.
const MAX_FILE_BYTES: u64 = capslint_workspace::confine::MAX_FILE_BYTES;

/// How many bytes all renders of a scan may read.
const MAX_TOTAL_BYTES: u64 = 256 << 20;

/// How much work (tree nodes read, copied and patched) all renders of a scan may do.
const MAX_WORK: usize = 20_000_000;

/// An object produced by a render.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The object.
    pub tree: Tree,
    /// Its kind and every name and namespace it has had.
    pub identity: Identity,
    /// Where its `kind` is written in its resource file: the object as written.
    pub written: Origin,
    /// Where the `kind` of every patch document applied to it is written (a patch file's objects).
    pub patches: Vec<Origin>,
    /// Whether a patch changed it.
    pub patched: bool,
    /// The kustomization directory that lists its file.
    pub home: PathBuf,
    /// The entry of the rendered kustomization's `resources` or `components` that brought it in.
    pub via: Option<Origin>,
    /// Whether only its identity is kept (a kind without containers, often large: CRDs, ConfigMaps).
    pub stub: bool,
}

/// Kinds without containers whose bodies are not kept (patches still find them by identity).
const STUB_KINDS: &[&str] = &["CustomResourceDefinition", "ConfigMap", "Secret"];

/// The identity of an object, without its body.
fn stub(tree: &Tree) -> Tree {
    let mut stub = Tree::map(tree.origin);
    if let Data::Map(entries) = &tree.data {
        for (key, value) in
            entries.iter().filter(|(key, _)| matches!(key.text.as_str(), "apiVersion" | "kind" | "metadata"))
        {
            stub.set(&key.text, key.origin, value.clone());
        }
    }
    stub
}

/// What rendering one kustomization directory produced.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    /// Its objects, in kustomize's order.
    pub resources: Vec<Resource>,
    /// The kustomization file.
    pub kustomization: Option<SourceId>,
    /// Every kustomization directory it read below itself.
    pub included: Vec<PathBuf>,
    /// The patch files it applied.
    pub patch_files: Vec<SourceId>,
}

/// A file read for a render.
#[derive(Debug)]
pub struct Loaded {
    /// Its canonical path.
    pub path: PathBuf,
    /// Its text.
    pub file: Arc<SourceFile>,
    documents: Option<Result<Arc<Vec<Tree>>, String>>,
}

/// Reads files and renders kustomizations, caching both.
#[derive(Debug)]
pub struct Loader {
    cwd: PathBuf,
    confinement: Arc<Confinement>,
    files: Vec<Loaded>,
    by_path: FxHashMap<PathBuf, SourceId>,
    rendered: FxHashMap<PathBuf, Result<Arc<Rendered>, String>>,
    /// Notes about what a kustomization has that capslint does not evaluate, by kustomization file.
    pub notes: Vec<String>,
    bytes: u64,
    work: usize,
}

/// A patch, ready to apply.
struct Patch {
    target: Option<Selector>,
    body: Body,
    /// The patch file, when it is one.
    file: Option<SourceId>,
    /// Where the patch is listed, for messages.
    listed: String,
}

enum Body {
    Strategic(Vec<Tree>),
    Operations(Vec<json_patch::Op>),
}

/// A parsed kustomization.
struct Kustomization {
    dir: PathBuf,
    source: SourceId,
    resources: Vec<Tree>,
    components: Vec<Tree>,
    strategic: Vec<Patch>,
    patches: Vec<Patch>,
    json6902: Vec<Patch>,
    namespace: Option<Tree>,
    prefix: Option<Tree>,
    suffix: Option<Tree>,
    images: Vec<Tree>,
    labels: Vec<(String, Tree)>,
}

/// Kinds that have no namespace (the namespace transformer leaves them alone).
const CLUSTER_KINDS: &[&str] = &[
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "APIService",
    "ClusterIssuer",
];

impl Loader {
    /// A loader resolving displayed paths against `cwd`, reading only what `confinement` admits.
    pub fn new(cwd: PathBuf, confinement: Arc<Confinement>) -> Loader {
        Loader {
            cwd,
            confinement,
            files: Vec::new(),
            by_path: FxHashMap::default(),
            rendered: FxHashMap::default(),
            notes: Vec::new(),
            bytes: 0,
            work: 0,
        }
    }

    /// Registers a file already read (a file of the scan), so it is not read again.
    pub fn add_known(&mut self, path: PathBuf, file: Arc<SourceFile>) -> SourceId {
        if let Some(id) = self.by_path.get(&path) {
            return *id;
        }
        let id = self.files.len() as SourceId;
        self.by_path.insert(path.clone(), id);
        self.files.push(Loaded { path, file, documents: None });
        id
    }

    /// How many files were read or registered.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Whether `dir` holds a `kind: Component` kustomization (applied by overlays, never on its own).
    pub fn is_component(&mut self, dir: &Path) -> bool {
        let Some(path) = Self::kustomization_file(dir) else { return false };
        let Ok(source) = self.read(&path) else { return false };
        let Ok(documents) = self.documents(source) else { return false };
        documents.first().and_then(|root| root.get("kind")).and_then(Tree::text) == Some("Component")
    }

    /// The file of a source.
    pub fn file(&self, source: SourceId) -> &Loaded {
        &self.files[source as usize]
    }

    /// The path as shown to users.
    pub fn display(&self, path: &Path) -> String {
        let shown = capslint_workspace::discover::display_name(path, &self.cwd);
        if shown.is_empty() { ".".to_string() } else { shown }
    }

    /// The kustomization file of `dir`, if it has one.
    pub fn kustomization_file(dir: &Path) -> Option<PathBuf> {
        KUSTOMIZATION_FILES.iter().map(|name| dir.join(name)).find(|path| path.is_file())
    }

    fn charge(&mut self, work: usize) -> Result<(), String> {
        self.work = self.work.saturating_add(work);
        if self.work > MAX_WORK {
            return Err("the kustomizations of the scan are too large to render".to_string());
        }
        Ok(())
    }

    /// Reads a file (once), within the size limits and the run's roots.
    fn read(&mut self, path: &Path) -> Result<SourceId, String> {
        let display = self.display(path);
        let canonical = self.confinement.file(path, &display).map_err(|refusal| refusal.to_string())?;
        if let Some(id) = self.by_path.get(&canonical) {
            return Ok(*id);
        }
        let text =
            self.confinement.read_to_string(&canonical, &display, MAX_FILE_BYTES).map_err(|refusal| match refusal {
                Refusal::TooLarge(..) | Refusal::NotRegular(_) => format!("`{display}` is not a file capslint reads"),
                Refusal::Io(..) => format!("`{display}` is not UTF-8 text"),
                refusal => refusal.to_string(),
            })?;
        self.bytes += text.len() as u64;
        if self.bytes > MAX_TOTAL_BYTES {
            return Err("the kustomizations of the scan read too many bytes to render".to_string());
        }
        Ok(self.add_known(canonical, Arc::new(SourceFile::new(path.to_path_buf(), display, text))))
    }

    /// The resolved path of a directory a kustomization names, when it is below the run's roots.
    fn directory(&self, dir: &Path) -> Result<PathBuf, String> {
        let display = self.display(dir);
        self.confinement.directory(dir, &display).map_err(|refusal| refusal.to_string())
    }

    /// The documents of a file, parsed once.
    fn documents(&mut self, source: SourceId) -> Result<Arc<Vec<Tree>>, String> {
        if let Some(documents) = &self.files[source as usize].documents {
            return documents.clone();
        }
        let file = Arc::clone(&self.files[source as usize].file);
        let mut trees = Vec::new();
        let mut too_deep = false;
        let parsed = capslint_yaml::for_each_document(file.text(), |document| {
            let stub = document
                .get("kind")
                .and_then(capslint_yaml::Node::as_str)
                .is_some_and(|kind| STUB_KINDS.contains(&kind));
            let tree = if stub {
                Tree::from_node_keys(document, source, &["apiVersion", "kind", "metadata"])
            } else {
                Tree::from_node(document, source)
            };
            match tree {
                Some(tree) => trees.push(tree),
                None => too_deep = true,
            }
        });
        let result = match parsed {
            Err(error) => Err(format!("`{}` does not parse: {}", file.display_name(), error.message)),
            Ok(()) if too_deep => Err(format!("`{}` nests too deep", file.display_name())),
            Ok(()) => {
                let size: usize = trees.iter().map(Tree::size).sum();
                self.charge(size)?;
                Ok(Arc::new(trees))
            }
        };
        self.files[source as usize].documents = Some(result.clone());
        result
    }

    /// Renders the kustomization of `dir` (cached).
    pub fn render(&mut self, dir: &Path) -> Result<Arc<Rendered>, String> {
        self.render_nested(dir, &mut Vec::new())
    }

    /// Drops the cached render of `dir` (a root, once planned or checked), keeping the renders of its bases.
    pub fn forget(&mut self, dir: &Path) {
        if let Ok(dir) = self.directory(dir) {
            self.rendered.remove(&dir);
        }
    }

    /// Starts the work budget afresh, for a second pass over renders that the first pass did within it.
    pub fn restart_budget(&mut self) {
        self.work = 0;
    }

    fn render_nested(&mut self, dir: &Path, stack: &mut Vec<PathBuf>) -> Result<Arc<Rendered>, String> {
        let dir = self.directory(dir)?;
        if let Some(position) = stack.iter().position(|open| *open == dir) {
            let cycle: Vec<String> = stack[position..].iter().chain([&dir]).map(|path| self.display(path)).collect();
            return Err(format!("kustomizations include each other in a cycle: {}", cycle.join(" -> ")));
        }
        if stack.len() >= MAX_NESTING {
            return Err(format!("kustomizations nest deeper than {MAX_NESTING} levels"));
        }
        if let Some(done) = self.rendered.get(&dir) {
            return done.clone();
        }
        self.charge(1)?;
        stack.push(dir.clone());
        let result = self.render_uncached(&dir, stack).map(Arc::new);
        stack.pop();
        self.rendered.insert(dir, result.clone());
        result
    }

    fn render_uncached(&mut self, dir: &Path, stack: &mut Vec<PathBuf>) -> Result<Rendered, String> {
        let kustomization = self.kustomization(dir)?;
        let mut rendered = Rendered { kustomization: Some(kustomization.source), ..Rendered::default() };
        self.accumulate(&kustomization, &mut rendered, stack, true)?;
        // A base reached along several paths (a diamond) is listed once: the lists grow with the directories
        // below, not with the paths to them.
        rendered.included.sort_unstable();
        rendered.included.dedup();
        rendered.patch_files.sort_unstable();
        rendered.patch_files.dedup();
        Ok(rendered)
    }

    /// Adds a kustomization's resources and components to `rendered`, then applies its transformers.
    fn accumulate(
        &mut self,
        kustomization: &Kustomization,
        rendered: &mut Rendered,
        stack: &mut Vec<PathBuf>,
        top: bool,
    ) -> Result<(), String> {
        for entry in &kustomization.resources {
            let before = rendered.resources.len();
            self.resource(kustomization, entry, rendered, stack)?;
            if top {
                for resource in &mut rendered.resources[before..] {
                    resource.via = Some(entry.origin);
                }
            }
        }
        for entry in &kustomization.components {
            let before = rendered.resources.len();
            let text = entry.text().unwrap_or_default();
            if is_remote(text) {
                return Err(format!("the remote component `{text}`"));
            }
            let dir =
                self.directory(&kustomization.dir.join(text)).map_err(|error| format!("the component {error}"))?;
            if stack.contains(&dir) || stack.len() >= MAX_NESTING {
                return Err(format!("the component `{text}` includes itself or nests too deep"));
            }
            let component = self.kustomization(&dir)?;
            rendered.included.push(dir.clone());
            stack.push(dir);
            let result = self.accumulate(&component, rendered, stack, false);
            stack.pop();
            result?;
            if top {
                for resource in &mut rendered.resources[before..] {
                    resource.via = Some(entry.origin);
                }
            }
        }
        self.transform(kustomization, rendered)
    }

    /// Adds the objects of one `resources` entry: a file's documents, or a directory's render.
    fn resource(
        &mut self,
        kustomization: &Kustomization,
        entry: &Tree,
        rendered: &mut Rendered,
        stack: &mut Vec<PathBuf>,
    ) -> Result<(), String> {
        let Some(text) = entry.text() else { return Ok(()) };
        if is_remote(text) {
            return Err(format!("the remote resource `{text}`"));
        }
        let path = kustomization.dir.join(text);
        let resolved = self
            .confinement
            .resolve(&path, &self.display(&path))
            .map_err(|refusal| format!("the resource {refusal}"))?;
        if resolved.is_dir() {
            let below = self.render_nested(&resolved, stack)?;
            rendered.included.push(resolved);
            rendered.included.extend(below.included.iter().cloned());
            rendered.patch_files.extend(below.patch_files.iter().copied());
            self.charge(below.resources.iter().map(|resource| resource.tree.size()).sum())?;
            rendered.resources.extend(below.resources.iter().cloned());
            return Ok(());
        }
        let source = self.read(&path).map_err(|error| format!("the resource {error}"))?;
        let documents = self.documents(source)?;
        for document in documents.iter() {
            objects_of(document, &mut |tree| {
                let written = tree.get("kind").map_or(tree.origin, |kind| kind.origin);
                let identity = Identity::of(tree);
                let stub = STUB_KINDS.contains(&identity.kind.as_str());
                rendered.resources.push(Resource {
                    identity,
                    tree: if stub { self::stub(tree) } else { tree.clone() },
                    stub,
                    written,
                    patches: Vec::new(),
                    patched: false,
                    home: kustomization.dir.clone(),
                    via: None,
                });
            });
        }
        Ok(())
    }

    /// Reads and parses the kustomization of `dir`.
    fn kustomization(&mut self, dir: &Path) -> Result<Kustomization, String> {
        let path = Self::kustomization_file(dir)
            .ok_or_else(|| format!("`{}` has no kustomization.yaml", self.display(dir)))?;
        let source = self.read(&path)?;
        let documents = self.documents(source)?;
        let shown = self.file(source).file.display_name().to_string();
        let Some(root) = documents.first().filter(|root| matches!(root.data, Data::Map(_))) else {
            return Err(format!("`{shown}` is not a kustomization"));
        };
        let list = |key: &str| root.get(key).map(|list| list.items().to_vec()).unwrap_or_default();
        let has = |key: &str| {
            root.get(key).is_some_and(|value| {
                !value.is_null() && !value.items().is_empty()
                    || value.text().is_some()
                    || matches!(value.data, Data::Map(ref entries) if !entries.is_empty())
            })
        };
        for (key, what) in [
            ("helmCharts", "Helm charts (`helmCharts`)"),
            ("helmChartInflationGenerator", "Helm charts (`helmChartInflationGenerator`)"),
            ("transformers", "transformer plugins (`transformers`)"),
        ] {
            if has(key) {
                return Err(format!("`{shown}` uses {what}, which capslint does not evaluate"));
            }
        }
        if let Some(replacements) = root.get("replacements")
            && self.touches_containers(replacements, dir)
        {
            return Err(format!("`{shown}` has `replacements` into containers, which capslint does not evaluate"));
        }
        for (key, what) in [
            ("vars", "`vars` are not substituted (`$(VAR)` values are checked as written)"),
            ("generators", "generator plugins (`generators`) are not run"),
            ("openapi", "its `openapi` schema is not read (lists of custom kinds are replaced, not merged)"),
        ] {
            if has(key) {
                self.notes.push(format!("{shown}: kustomize {what}"));
            }
        }
        let mut resources = list("resources");
        resources.extend(list("bases"));
        let text_of = |key: &str| root.get(key).filter(|value| value.text().is_some()).cloned();
        let mut labels = Vec::new();
        for (key, value) in entries(root.get("commonLabels")) {
            labels.push((key, value));
        }
        for item in list("labels") {
            labels.extend(entries(item.get("pairs")));
        }
        let mut kustomization = Kustomization {
            dir: dir.to_path_buf(),
            source,
            resources,
            components: list("components"),
            strategic: Vec::new(),
            patches: Vec::new(),
            json6902: Vec::new(),
            namespace: text_of("namespace"),
            prefix: text_of("namePrefix"),
            suffix: text_of("nameSuffix"),
            images: list("images"),
            labels,
        };
        for item in list("patchesStrategicMerge") {
            let patch = self.patch(&kustomization, None, &item, None, true)?;
            kustomization.strategic.push(patch);
        }
        for item in list("patches") {
            let body = item.get("patch").unwrap_or(&item);
            let patch = self.patch(&kustomization, item.get("path"), body, item.get("target"), false)?;
            kustomization.patches.push(patch);
        }
        for item in list("patchesJson6902") {
            let target =
                item.get("target").ok_or_else(|| format!("`{shown}`: a `patchesJson6902` entry without `target`"))?;
            let body = item.get("patch").unwrap_or(&item);
            let patch = self.patch(&kustomization, item.get("path"), body, Some(target), false)?;
            kustomization.json6902.push(patch);
        }
        Ok(kustomization)
    }

    /// Whether `replacements` (inline, or in the files they name) write into containers.
    fn touches_containers(&mut self, replacements: &Tree, dir: &Path) -> bool {
        replacements.items().iter().any(|item| match item.get("path").and_then(Tree::text) {
            Some(path) => match self.read(&dir.join(path)) {
                Ok(source) => self.file(source).file.text().contains("containers"),
                Err(_) => true,
            },
            None => mentions(item, "containers"),
        })
    }

    /// A patch: from a file at `path`, else the inline `body` (a string holding YAML, or for
    /// `patchesStrategicMerge` a file name), applied to `target` or to what it names itself.
    fn patch(
        &mut self,
        kustomization: &Kustomization,
        path: Option<&Tree>,
        body: &Tree,
        target: Option<&Tree>,
        names_file: bool,
    ) -> Result<Patch, String> {
        let shown = self.file(kustomization.source).file.display_name().to_string();
        let target = target
            .map(Selector::parse)
            .transpose()
            .map_err(|what| format!("`{shown}` selects patch targets with {what}, which capslint does not evaluate"))?;
        let file_name = match path.and_then(Tree::text) {
            Some(path) => Some(path.to_string()),
            // A `patchesStrategicMerge` string without a line break is a file name.
            None if names_file => {
                body.as_str().filter(|text| !text.contains('\n') && !text.trim().is_empty()).map(str::to_string)
            }
            None => None,
        };
        let (documents, file) = match &file_name {
            Some(name) => {
                let name = name.trim();
                if is_remote(name) {
                    return Err(format!("`{shown}`: the remote patch `{name}`"));
                }
                let source = self.read(&kustomization.dir.join(name)).map_err(|error| format!("the patch {error}"))?;
                ((*self.documents(source)?).clone(), Some(source))
            }
            None => {
                let text = body.as_str().ok_or_else(|| format!("`{shown}`: a patch without `path` or `patch`"))?;
                (self.inline(kustomization.source, body, text)?, None)
            }
        };
        let listed = file_name.map_or_else(|| format!("an inline patch of `{shown}`"), |name| format!("`{name}`"));
        let documents: Vec<Tree> = documents.into_iter().filter(|document| !document.is_null()).collect();
        let body = match documents.as_slice() {
            [single] if json_patch::is_operations(single) => Body::Operations(json_patch::parse(single)?),
            _ => Body::Strategic(documents),
        };
        if matches!(body, Body::Operations(_)) && target.is_none() {
            return Err(format!("`{shown}`: the JSON patch {listed} has no `target`"));
        }
        Ok(Patch { target, body, file, listed })
    }

    /// The documents of an inline patch, with origins in the kustomization file.
    fn inline(&mut self, source: SourceId, node: &Tree, text: &str) -> Result<Vec<Tree>, String> {
        let map = LineMap::new(self.file(source).file.text(), node.origin.range, text);
        let mut documents = Vec::new();
        let mut too_deep = false;
        capslint_yaml::for_each_document(text, |document| match Tree::from_node(document, source) {
            Some(mut tree) => {
                inline::remap(&mut tree, &map, source);
                documents.push(tree);
            }
            None => too_deep = true,
        })
        .map_err(|error| format!("an inline patch does not parse: {}", error.message))?;
        if too_deep {
            return Err("an inline patch nests too deep".to_string());
        }
        self.charge(documents.iter().map(Tree::size).sum())?;
        Ok(documents)
    }

    /// Applies a kustomization's transformers to everything accumulated, in kustomize's order.
    fn transform(&mut self, kustomization: &Kustomization, rendered: &mut Rendered) -> Result<(), String> {
        for patch in &kustomization.strategic {
            self.apply(patch, rendered, true)?;
        }
        for patch in &kustomization.patches {
            self.apply(patch, rendered, patch.target.is_none())?;
        }
        if let Some(namespace) = &kustomization.namespace {
            let text = namespace.text().unwrap_or_default().to_string();
            let origin = namespace.origin;
            for resource in rendered.resources.iter_mut() {
                if resource.identity.kind == "Namespace" {
                    // kustomize renames the Namespace objects to the namespace it sets.
                    metadata(&mut resource.tree, origin).set("name", origin, Tree::string(text.clone(), origin));
                    resource.identity.names.push(text.clone());
                } else if !CLUSTER_KINDS.contains(&resource.identity.kind.as_str()) {
                    metadata(&mut resource.tree, origin).set("namespace", origin, Tree::string(text.clone(), origin));
                    resource.identity.namespaces.push(text.clone());
                }
            }
        }
        let prefix = kustomization.prefix.as_ref().and_then(Tree::text).unwrap_or_default().to_string();
        let suffix = kustomization.suffix.as_ref().and_then(Tree::text).unwrap_or_default().to_string();
        if !prefix.is_empty() || !suffix.is_empty() {
            for resource in rendered.resources.iter_mut().filter(|resource| resource.identity.kind != "Namespace") {
                let Some(name) = resource.tree.path(&["metadata", "name"]) else { continue };
                let renamed = format!("{prefix}{}{suffix}", name.text().unwrap_or_default());
                let origin = name.origin;
                metadata(&mut resource.tree, origin).set("name", origin, Tree::string(renamed.clone(), origin));
                resource.identity.names.push(renamed);
            }
        }
        for resource in rendered.resources.iter_mut() {
            for (key, value) in &kustomization.labels {
                let origin = value.origin;
                let metadata = metadata(&mut resource.tree, origin);
                if metadata.get("labels").is_none_or(|labels| !matches!(labels.data, Data::Map(_))) {
                    metadata.set("labels", origin, Tree::map(origin));
                }
                if let Some(labels) = metadata.get_mut("labels") {
                    labels.set(key, origin, value.clone());
                }
            }
        }
        for patch in &kustomization.json6902 {
            self.apply(patch, rendered, false)?;
        }
        if !kustomization.images.is_empty() {
            for resource in rendered.resources.iter_mut() {
                set_images(&mut resource.tree, &kustomization.images);
            }
        }
        Ok(())
    }

    /// Applies one patch to the objects it selects; `exactly_one` when it names its target itself (as
    /// in kustomize, such a patch must find it).
    fn apply(&mut self, patch: &Patch, rendered: &mut Rendered, exactly_one: bool) -> Result<(), String> {
        rendered.patch_files.extend(patch.file);
        let documents: Vec<(Option<Selector>, Option<&Tree>)> = match &patch.body {
            Body::Operations(_) => vec![(patch.target.clone(), None)],
            Body::Strategic(documents) => documents
                .iter()
                .map(|document| {
                    (Some(patch.target.clone().unwrap_or_else(|| Selector::of_patch(document))), Some(document))
                })
                .collect(),
        };
        for (selector, document) in documents {
            let selector = selector.unwrap_or_default();
            let chosen: Vec<usize> = rendered
                .resources
                .iter()
                .enumerate()
                .filter(|(_, resource)| selector.matches(&resource.identity, &resource.tree))
                .map(|(index, _)| index)
                .collect();
            self.charge(rendered.resources.len() + 1)?;
            if exactly_one && chosen.len() != 1 {
                let what =
                    if chosen.is_empty() { "matches no object of its overlay" } else { "matches several objects" };
                return Err(format!("the patch {} {what}", patch.listed));
            }
            let mut deleted = Vec::new();
            for index in chosen {
                let resource = &mut rendered.resources[index];
                if resource.stub {
                    continue;
                }
                self.work = self.work.saturating_add(resource.tree.size());
                match (&patch.body, document) {
                    (Body::Operations(ops), _) => json_patch::apply(&mut resource.tree, ops)
                        .map_err(|error| format!("the patch {}: {error}", patch.listed))?,
                    (Body::Strategic(_), Some(document)) if merge::deletes_object(document) => deleted.push(index),
                    (Body::Strategic(_), Some(document)) => {
                        merge::apply(&mut resource.tree, document);
                        if patch.file.is_some() {
                            resource.patches.push(document.get("kind").map_or(document.origin, |kind| kind.origin));
                        }
                    }
                    (Body::Strategic(_), None) => {}
                }
                resource.patched = true;
            }
            for index in deleted.into_iter().rev() {
                rendered.resources.remove(index);
            }
            self.charge(0)?;
        }
        Ok(())
    }
}

/// The objects of a document: itself, or the items of a `List`.
fn objects_of(document: &Tree, add: &mut impl FnMut(&Tree)) {
    let kind = document.get("kind").and_then(Tree::as_str);
    if document.get("apiVersion").and_then(Tree::as_str).is_none() || kind.is_none() {
        return;
    }
    match document.get("items").filter(|items| matches!(items.data, Data::Seq(_))) {
        Some(items) if kind.is_some_and(|kind| kind.ends_with("List")) => {
            for item in items.items() {
                objects_of(item, add);
            }
        }
        _ => add(document),
    }
}

/// The `metadata` mapping of an object, created at `origin` when missing.
fn metadata(tree: &mut Tree, origin: Origin) -> &mut Tree {
    if tree.get("metadata").is_none_or(|metadata| !matches!(metadata.data, Data::Map(_))) {
        tree.set("metadata", origin, Tree::map(origin));
    }
    tree.get_mut("metadata").expect("just set")
}

/// The entries of a mapping with string values.
fn entries(map: Option<&Tree>) -> Vec<(String, Tree)> {
    match map.map(|map| &map.data) {
        Some(Data::Map(entries)) => entries.iter().map(|(key, value)| (key.text.clone(), value.clone())).collect(),
        _ => Vec::new(),
    }
}

/// Whether a tree mentions `word` in a scalar.
fn mentions(tree: &Tree, word: &str) -> bool {
    match &tree.data {
        Data::Map(entries) => entries.iter().any(|(key, value)| key.text.contains(word) || mentions(value, word)),
        Data::Seq(items) => items.iter().any(|item| mentions(item, word)),
        Data::Scalar(text, _) => text.contains(word),
        Data::Null => false,
    }
}

/// Whether a `resources` entry is a remote base (a URL or a Git repository).
fn is_remote(entry: &str) -> bool {
    let entry = entry.trim();
    entry.contains("://")
        || entry.starts_with("git@")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || entry.starts_with("bitbucket.org/")
        || entry.contains("?ref=")
        || entry.contains(".git//")
}

/// The `images` transformer: every `image` of a container whose name (without tag or digest) is an
/// entry's `name` takes its `newName`, `newTag` and `digest`.
fn set_images(tree: &mut Tree, images: &[Tree]) {
    let mut pending = vec![tree];
    while let Some(tree) = pending.pop() {
        match &mut tree.data {
            Data::Map(entries) => {
                for (key, value) in entries.iter_mut() {
                    if matches!(key.text.as_str(), "containers" | "initContainers")
                        && let Data::Seq(items) = &mut value.data
                    {
                        for item in items.iter_mut() {
                            if let Some(image) = item.get_mut("image") {
                                retag(image, images);
                            }
                        }
                    }
                    pending.push(value);
                }
            }
            Data::Seq(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
}

fn retag(image: &mut Tree, images: &[Tree]) {
    let Some(written) = image.text().map(str::to_string) else { return };
    let (without_digest, digest) =
        written.split_once('@').map_or((written.as_str(), None), |(name, digest)| (name, Some(digest)));
    let tag_at = without_digest.rfind(':').filter(|colon| !without_digest[colon + 1..].contains('/'));
    let (name, tag) = match tag_at {
        Some(colon) => (&without_digest[..colon], Some(&without_digest[colon + 1..])),
        None => (without_digest, None),
    };
    let Some(entry) = images.iter().find(|entry| entry.get("name").and_then(Tree::text) == Some(name)) else { return };
    let field = |key: &str| entry.get(key).and_then(Tree::text);
    let mut renamed = field("newName").unwrap_or(name).to_string();
    if let Some(digest) = field("digest") {
        renamed = format!("{renamed}@{digest}");
    } else if let Some(tag) = field("newTag") {
        renamed = format!("{renamed}:{tag}");
    } else {
        if let Some(tag) = tag {
            renamed = format!("{renamed}:{tag}");
        }
        if let Some(digest) = digest {
            renamed = format!("{renamed}@{digest}");
        }
    }
    let origin = ["digest", "newTag", "newName"]
        .iter()
        .find_map(|key| entry.get(key))
        .map_or(entry.origin, |value| value.origin);
    *image = Tree::string(renamed, origin);
}
