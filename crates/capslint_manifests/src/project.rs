//! The cross-file phase: after every file is parsed (in parallel), index the ConfigMaps, merge Airflow
//! operators into their pod templates, render kustomize overlays ([`super::kustomize`]), run the rules file
//! by file and overlay object by overlay object (in parallel), sum the VRAM budgets of the whole scan,
//! apply suppressions, and produce diagnostics in a deterministic order.

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::ManifestFile;
use super::airflow::{self, View};
use super::configmaps::{ConfigMapIndex, ConfigMapRef};
use super::env::Env;
use super::kustomize::{self, KustomizeView, ScannedYaml};
use super::model::Object;
use super::rules::{self, Checker, ContainerContext, CpuLimit, Merged, Project, Reported};
use capslint_diagnostics::contain::contained;
use capslint_diagnostics::diagnostic::{Diagnostic, Finding};
use capslint_diagnostics::registry::Rule;
use capslint_diagnostics::source::SourceFile;
use capslint_diagnostics::suppress::{self, ManifestSuppressions, Scope};
use capslint_pod_template::TemplateUse;
use capslint_workspace::confine::ConfinedReader;

/// What the cross-file phase produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The diagnostics of every manifest.
    pub diagnostics: Vec<Diagnostic>,
    /// Informational lines.
    pub notices: Vec<String>,
    /// Manifests that were read only because a DAG names them.
    pub extra_files: usize,
    /// Internal errors that no single file or object can carry.
    pub errors: Vec<String>,
}

/// Runs the manifest rules over every parsed file and the Airflow operators that use them as templates.
pub fn check(mut files: Vec<ManifestFile>, mut uses: Vec<TemplateUse>, scanned: &[ScannedYaml]) -> Outcome {
    files.sort_by(|a, b| (a.file.display_name(), a.file.path()).cmp(&(b.file.display_name(), b.file.path())));
    let mut outcome = Outcome::default();
    mark_patches_partial(&mut files);
    let views = resolve_templates(&mut files, &mut uses, &mut outcome);

    // Kustomize overlays, one root at a time: a root's views are checked and dropped before the next root is
    // rendered, so memory holds one overlay's objects, not every overlay's.
    let mut overlay_reported: Vec<Reported> = Vec::new();
    let mut rendered: FxHashSet<(usize, usize)> = FxHashSet::default();
    let mut fragments: FxHashSet<(usize, usize)> = FxHashSet::default();
    if let Some(mut plan) = kustomize::Plan::new(&files, scanned, &mut outcome.notices) {
        for root in 0..plan.root_count() {
            let root = plan.render_root(root, &mut files);
            fragments.extend(root.fragments);
            rendered.extend(root.views.iter().map(|view| (view.file, view.object)));
            let project = project(&files);
            overlay_reported.par_extend(root.views.par_iter().flat_map_iter(|view| check_overlay(&project, view)));
            // Overlays that agree on a finding make one: merged as they come, what is kept follows the
            // distinct findings, not the number of overlays.
            overlay_reported = merge_duplicates(overlay_reported);
        }
        let (extra, diagnostics) = plan.finish();
        outcome.extra_files += extra;
        outcome.diagnostics.extend(diagnostics);
    }
    rendered.extend(fragments.iter().copied());
    let project = project(&files);

    let mut views_by_object: FxHashMap<(usize, usize), Vec<&View>> = FxHashMap::default();
    for view in &views {
        views_by_object.entry((view.file, view.object)).or_default().push(view);
    }
    let mut excluded: FxHashSet<(usize, usize)> = views_by_object.keys().copied().collect();
    excluded.extend(fragments.iter().copied());
    let mut reported: Vec<Reported> = (0..files.len())
        .into_par_iter()
        .flat_map_iter(|index| check_file(&project, index, &views_by_object, &rendered))
        .collect();
    reported.append(&mut overlay_reported);
    match contained(|| rules::gpu_vram_overcommit::check(&project, &excluded)) {
        Ok(found) => reported.extend(found),
        Err(panic) => outcome.errors.push(format!("internal error while summing VRAM budgets: {panic}")),
    }

    let suppressions: Vec<ManifestSuppressions<'_>> = files
        .iter()
        .map(|file| ManifestSuppressions {
            file: &file.file,
            rules: file.rules,
            objects: file
                .objects
                .iter()
                .map(|object| {
                    // Only an annotation that suppresses nothing is named in a report.
                    let name = if object.ignore.is_empty() { String::new() } else { object.describe() };
                    (object.ignore.as_slice(), name)
                })
                .collect(),
            directives: &file.directives,
        })
        .collect();
    let findings = suppress::apply(Scope::Manifests { files: &suppressions, reported: merge_duplicates(reported) });
    outcome.diagnostics.extend(findings.into_iter().map(|(file, finding)| {
        let manifest = &files[file];
        Diagnostic {
            severity: manifest.settings.severity(finding.rule),
            finding: finding.naming_related_places(),
            file: Arc::clone(&manifest.file),
        }
    }));
    outcome
}

/// The project of `files`: them and the index of their ConfigMaps.
fn project(files: &[ManifestFile]) -> Project<'_> {
    let mut config_maps = ConfigMapIndex::default();
    for (file_index, file) in files.iter().enumerate() {
        for (object_index, object) in file.objects.iter().enumerate() {
            if let Some(data) = &object.config_map {
                config_maps.insert(ConfigMapRef { file: file_index, object: object_index, data });
            }
        }
    }
    Project { files, config_maps }
}

/// The containers of kustomize patch files are fragments ([`super::kustomize::patch_files`]): checked as
/// partial, unless an overlay that applies them is rendered (then they are not checked on their own).
fn mark_patches_partial(files: &mut [ManifestFile]) {
    let Some(first) = files.first() else { return };
    let (cwd, confinement) = (first.settings.cwd().to_path_buf(), Arc::clone(&first.settings.confinement));
    let reader = ConfinedReader::new(confinement);
    let patches = kustomize::patch_files::patch_files(files.iter().map(|file| file.file.path()), &cwd, &reader);
    if patches.is_empty() {
        return;
    }
    for file in
        files.iter_mut().filter(|file| patches.contains(&capslint_workspace::paths::absolute(file.file.path(), &cwd)))
    {
        for pod in file.objects.iter_mut().flat_map(|object| object.pods.iter_mut()) {
            for container in pod.containers.iter_mut().chain(pod.init_containers.iter_mut()) {
                container.partial = true;
            }
        }
    }
}

/// Finds the template of every operator call, reading the ones outside the scan, and builds the merged
/// views. Returns the views; CAP001 of templates that do not parse goes into `outcome`.
fn resolve_templates(files: &mut Vec<ManifestFile>, uses: &mut [TemplateUse], outcome: &mut Outcome) -> Vec<View> {
    if uses.is_empty() {
        return Vec::new();
    }
    uses.sort_by(|a, b| (a.dag.display_name(), a.call.call.start()).cmp(&(b.dag.display_name(), b.call.call.start())));
    let mut by_path = airflow::canonical_index(files.iter().enumerate().map(|(index, file)| (index, file.file.path())));
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut views = Vec::new();
    for use_ in uses.iter() {
        let canonical = match airflow::find_template(use_) {
            Ok(canonical) => canonical,
            Err(note) => {
                outcome.notices.extend(note);
                continue;
            }
        };
        let path = canonical.clone();
        let file_index = match by_path.get(&canonical) {
            Some(index) => *index,
            None => match read_template(&path, &cwd, use_, outcome) {
                Some(manifest) => {
                    files.push(manifest);
                    outcome.extra_files += 1;
                    by_path.insert(canonical, files.len() - 1);
                    files.len() - 1
                }
                None => continue,
            },
        };
        let Some(object) = airflow::target(&files[file_index].objects) else { continue };
        views.push(View {
            file: file_index,
            object,
            merged_object: airflow::merge(&files[file_index].objects[object], &use_.call),
            merged: Merged {
                dag: Arc::clone(&use_.dag),
                call: use_.call.call,
                text: airflow::merged_label(&use_.call),
            },
        });
    }
    views
}

/// Reads and parses a template that is not part of the scan.
fn read_template(path: &Path, cwd: &Path, use_: &TemplateUse, outcome: &mut Outcome) -> Option<ManifestFile> {
    let display = capslint_workspace::discover::display_name(path, cwd);
    let text =
        use_.settings.confinement.read_to_string(path, &display, capslint_workspace::confine::MAX_FILE_BYTES).ok()?;
    let file = Arc::new(SourceFile::new(path.to_path_buf(), display, text));
    let parsed = super::parse(Arc::clone(&file), Arc::clone(&use_.settings), use_.rules);
    outcome.notices.extend(parsed.notice);
    outcome.diagnostics.extend(parsed.findings.into_iter().map(|finding| Diagnostic {
        severity: use_.settings.severity(finding.rule),
        finding,
        file: Arc::clone(&file),
    }));
    parsed.manifest
}

/// Runs the per-container rules over one file: its objects, or their merged views when Airflow operators
/// use them as templates; objects that kustomize overlays render (`rendered`) are checked through them.
fn check_file(
    project: &Project<'_>,
    file_index: usize,
    views: &FxHashMap<(usize, usize), Vec<&View>>,
    rendered: &FxHashSet<(usize, usize)>,
) -> Vec<Reported> {
    let file = &project.files[file_index];
    let mut reported = Vec::new();
    for (object_index, object) in file.objects.iter().enumerate() {
        let checked = contained(|| {
            let mut found = Vec::new();
            match views.get(&(file_index, object_index)) {
                Some(views) => {
                    for view in views {
                        let mut checker = Checker::new(file.rules, file.settings.strict, Some(&view.merged));
                        check_object(&mut checker, project, file_index, object_index, &view.merged_object);
                        found.extend(checker.into_reported());
                    }
                }
                None if rendered.contains(&(file_index, object_index)) => {}
                None => {
                    let mut checker = Checker::new(file.rules, file.settings.strict, None);
                    check_object(&mut checker, project, file_index, object_index, object);
                    found.extend(checker.into_reported());
                }
            }
            found
        });
        match checked {
            Ok(found) => reported.extend(found),
            Err(panic) => reported.push(internal_error(file_index, object, &object.describe(), &panic)),
        }
    }
    reported
}

/// CAP001 at an object of `file` whose check panicked: the file's other objects, and every other file, are
/// still checked.
fn internal_error(file: usize, object: &Object, what: &str, reason: &str) -> Reported {
    let finding =
        Finding::new(Rule::SyntaxError, object.range, format!("internal error while checking {what}: {reason}"))
            .label("not checked")
            .help("please report this with the file attached");
    Reported { file, finding, owners: Vec::new(), lines: Vec::new() }
}

/// Runs the per-container rules over one object of a kustomize overlay, placing what they report in the
/// files that wrote each value.
fn check_overlay(project: &Project<'_>, view: &KustomizeView) -> Vec<Reported> {
    let file = &project.files[view.file];
    let checked = contained(|| {
        let mut checker = Checker::new(file.rules, file.settings.strict, None).placed_by(&view.provenance);
        check_object(&mut checker, project, view.file, view.object, &view.merged);
        checker.into_reported()
    });
    checked.unwrap_or_else(|panic| {
        let written = &file.objects[view.object];
        let what = format!("{} as an overlay renders it", written.describe());
        vec![internal_error(view.file, written, &what, &panic)]
    })
}

fn check_object<'p>(
    checker: &mut Checker<'p>,
    project: &'p Project<'p>,
    file: usize,
    object_index: usize,
    object: &'p Object,
) {
    let settings = &project.files[file].settings;
    let namespace = object.namespace.as_deref();
    for pod in &object.pods {
        let contexts: Vec<ContainerContext<'p>> = pod
            .init_containers
            .iter()
            .chain(&pod.containers)
            .map(|container| ContainerContext {
                project,
                file,
                object_index,
                object,
                pod,
                container,
                env: Env::of(container, namespace, file, &project.config_maps),
                limit: CpuLimit::of(container, pod),
                settings,
            })
            .collect();
        rules::check_pod(checker, &contexts);
    }
}

/// Findings that several views of one template agree on are reported once, with every operator labelled.
fn merge_duplicates(mut reported: Vec<Reported>) -> Vec<Reported> {
    let key = |item: &Reported| (item.file, item.finding.range.start(), item.finding.rule, item.finding.range.end());
    reported.sort_by(|a, b| key(a).cmp(&key(b)).then_with(|| a.finding.message.cmp(&b.finding.message)));
    let mut merged: Vec<Reported> = Vec::with_capacity(reported.len());
    for item in reported {
        if let Some(last) = merged.last_mut()
            && key(last) == key(&item)
            && last.finding.message == item.finding.message
        {
            for related in item.finding.related {
                let duplicate = last
                    .finding
                    .related
                    .iter()
                    .any(|existing| existing.range == related.range && existing.file.path() == related.file.path());
                if !duplicate {
                    last.finding.related.push(related);
                }
            }
            last.owners.extend(item.owners);
            last.lines.extend(item.lines);
            continue;
        }
        merged.push(item);
    }
    merged
}
