//! The per-file pipeline: read -> prefilter ([`capslint_python::prefilter`]) -> parse and check -> suppress
//! ([`capslint_diagnostics::suppress`]), run in parallel over files with each file's failure (unreadable, not UTF-8, a
//! panic) contained to that file. Manifests are then checked together (a cross-file phase, suppressed
//! there), because ConfigMaps, Airflow pod templates and VRAM budgets span files. A run over paths may
//! start on each file as the walk finds it ([`crate::while_walking`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use ruff_text_size::{TextRange, TextSize};

use capslint_diagnostics::contain::panic_reason;
use capslint_diagnostics::diagnostic::{Diagnostic, Finding};
use capslint_diagnostics::registry::{Family, Rule};
use capslint_diagnostics::source::SourceFile;
use capslint_diagnostics::suppress::{self, Scope};
use capslint_manifests as k8s;
use capslint_model_config as model_config;
use capslint_pod_template as pod_template;
use capslint_python::notebook;
use capslint_python::prefilter;
use capslint_python::{self as python, ProjectContext, ProjectIndex};
use capslint_workspace::FileId;
use capslint_workspace::confine::{self, Confinement, MAX_FILE_BYTES, Refusal};
use capslint_workspace::discover::{self, FileKind};
use capslint_workspace::settings::Settings;

/// One input to check.
#[derive(Debug, Clone)]
pub struct Input {
    /// Where to read it (`None` for text already in memory, e.g. stdin).
    pub path: PathBuf,
    /// The name shown in reports.
    pub display_name: String,
    /// The kind of file.
    pub kind: FileKind,
    /// The bytes, when they were read already (standard input, see [`read_stdin`]): size limit and
    /// decoding (UTF-8, a BOM, a PEP 263 coding line) apply to them as to a file's.
    pub contents: Option<Vec<u8>>,
    /// The settings that apply to this file (the nearest configuration).
    pub settings: Arc<Settings>,
}

/// What checking one file produced.
#[derive(Debug, Default, Clone)]
pub struct FileResult {
    /// Its diagnostics.
    pub diagnostics: Vec<Diagnostic>,
    /// I/O problems that stop the file from being checked (exit code 2).
    pub errors: Vec<String>,
    /// A parsed manifest, checked in the cross-file phase.
    pub manifest: Option<k8s::ManifestFile>,
    /// Airflow operators of a DAG that name a `pod_template_file`.
    pub pod_templates: Vec<pod_template::TemplateUse>,
    /// Informational lines (a skipped Helm chart template).
    pub notices: Vec<String>,
    /// The identity of the file read, when it was read from disk: what tells apart the paths that reach
    /// one file ([`capslint_workspace::discover::chosen`]).
    pub file_id: Option<FileId>,
}

/// Everything a run produced, sorted.
#[derive(Debug, Default)]
pub struct RunResult {
    /// Diagnostics, sorted by file, row, column, code.
    pub diagnostics: Vec<Diagnostic>,
    /// I/O errors, sorted.
    pub errors: Vec<String>,
    /// Informational lines, sorted, without duplicates.
    pub notices: Vec<String>,
    /// How many files were checked.
    pub files_checked: usize,
}

/// Checks every input in parallel, then the manifests together, and merges the results in a
/// deterministic order.
pub fn check_inputs(inputs: Vec<Input>) -> RunResult {
    let scanned = scanned_yaml(&inputs);
    let project = project_index(&inputs);
    let results = check_each(inputs, &project);
    drop_aside(project);
    combine(results, &scanned)
}

/// Frees the run's project index on a thread of its own: it holds every module parsed for the run, and
/// the report need not wait for their trees to be freed.
pub(crate) fn drop_aside(project: ProjectIndex) {
    // When no thread can be had, the index is freed here, with the closure that could not run.
    let _ = std::thread::Builder::new().name("capslint-free".into()).spawn(move || drop(project));
}

/// [`check_inputs`] for documents an editor holds, their text in memory (`contents`): the directories of
/// the YAML ones are where kustomizations are looked for, as they are for YAML files read from disk (the
/// cross-file readers see the documents' text when it is recorded as edited,
/// [`capslint_workspace::edited`]).
pub fn check_documents(inputs: Vec<Input>) -> RunResult {
    let scanned: Vec<k8s::ScannedYaml> = inputs
        .iter()
        .filter(|input| input.kind == FileKind::Yaml)
        .map(|input| k8s::ScannedYaml { path: input.path.clone(), settings: Arc::clone(&input.settings) })
        .collect();
    let project = project_index(&inputs);
    let results = check_each(inputs, &project);
    drop_aside(project);
    combine(results, &scanned)
}

/// The modules that imported names resolve through, read on demand (within the run's roots) and shared by
/// every file of `inputs`.
pub fn project_index(inputs: &[Input]) -> ProjectIndex {
    let cwd = std::env::current_dir().unwrap_or_default();
    let confinement = inputs
        .first()
        .map_or_else(|| Arc::new(Confinement::of_paths(&[], &cwd)), |input| Arc::clone(&input.settings.confinement));
    ProjectIndex::new(cwd, confinement)
}

/// The YAML files read from disk: their directories are where kustomizations are looked for.
pub fn scanned_yaml(inputs: &[Input]) -> Vec<k8s::ScannedYaml> {
    inputs
        .iter()
        .filter(|input| input.kind == FileKind::Yaml && input.contents.is_none())
        .map(|input| k8s::ScannedYaml { path: input.path.clone(), settings: Arc::clone(&input.settings) })
        .collect()
}

/// The per-file phase of [`check_inputs`]: each input checked in parallel, results in input order.
pub fn check_each(inputs: Vec<Input>, project: &ProjectIndex) -> Vec<FileResult> {
    inputs.into_par_iter().map(|input| check_input_in(input, project)).collect()
}

/// The cross-file phase of [`check_inputs`]: the manifests (and the pod templates that DAGs name)
/// checked together, kustomizations rendered from the directories of `scanned`, and everything merged
/// in a deterministic order. An internal error there is contained to the kustomization render or the
/// object it happens in ([`contained`](capslint_diagnostics::contain::contained), a CAP001 finding), or is an error of the run with every finding
/// kept when no object carries it (the VRAM sums); only one in suppression itself loses the phase's
/// findings, and is an error of the run.
pub fn combine(results: Vec<FileResult>, scanned: &[k8s::ScannedYaml]) -> RunResult {
    let mut run = RunResult { files_checked: results.len(), ..RunResult::default() };
    let mut manifests = Vec::new();
    let mut pod_templates = Vec::new();
    for result in results {
        run.diagnostics.extend(result.diagnostics);
        run.errors.extend(result.errors);
        run.notices.extend(result.notices);
        manifests.extend(result.manifest);
        pod_templates.extend(result.pod_templates);
    }
    // A directory of kustomizations and inline patches has no manifest of its own, yet renders objects.
    if !manifests.is_empty() || !pod_templates.is_empty() || !scanned.is_empty() {
        let outcome = match catch_unwind(AssertUnwindSafe(|| k8s::check(manifests, pod_templates, scanned))) {
            Ok(outcome) => outcome,
            Err(panic) => {
                run.errors.push(format!("internal error while checking manifests: {}", panic_reason(&*panic)));
                k8s::Outcome::default()
            }
        };
        run.diagnostics.extend(outcome.diagnostics);
        run.errors.extend(outcome.errors);
        run.notices.extend(outcome.notices);
        run.files_checked += outcome.extra_files;
    }
    capslint_diagnostics::diagnostic::sort_by_key(&mut run.diagnostics);
    run.errors.sort();
    run.notices.sort();
    run.notices.dedup();
    run
}

/// Reads and checks one input, turning a panic into a CAP001 internal error for that file alone.
/// Manifests come back parsed, for [`check_inputs`] to check together.
pub fn check_input(input: Input) -> FileResult {
    let project = project_index(std::slice::from_ref(&input));
    check_input_in(input, &project)
}

/// [`check_input`] with the run's [`ProjectIndex`].
pub(crate) fn check_input_in(input: Input, project: &ProjectIndex) -> FileResult {
    let display_name = input.display_name.clone();
    let path = input.path.clone();
    let settings = Arc::clone(&input.settings);
    let result = contain_panic(path, display_name, &settings, || check_input_inner(input, project));
    capslint_diagnostics::diagnostic::index_lines(&result.diagnostics);
    result
}

/// Runs one file's check; a panic becomes an internal-error diagnostic (CAP001) for that file alone.
fn contain_panic(
    path: PathBuf,
    display_name: String,
    settings: &Settings,
    check: impl FnOnce() -> FileResult,
) -> FileResult {
    match catch_unwind(AssertUnwindSafe(check)) {
        Ok(result) => result,
        Err(panic) => not_checked(
            Arc::new(SourceFile::new(path, display_name, String::new())),
            settings,
            TextSize::from(0),
            format!("internal error while checking this file: {}", panic_reason(&*panic)),
            "not checked",
            "please report this with the file attached",
        ),
    }
}

/// The one diagnostic of a file that could not be checked (CAP001 at `at`), with the severity `settings`
/// give that rule: a panic, a file too large to parse, text that is not UTF-8.
fn not_checked(
    file: Arc<SourceFile>,
    settings: &Settings,
    at: TextSize,
    message: String,
    label: &str,
    help: &str,
) -> FileResult {
    let finding = Finding::new(Rule::SyntaxError, TextRange::empty(at), message).label(label).help(help);
    FileResult {
        diagnostics: vec![Diagnostic { finding, severity: settings.severity(Rule::SyntaxError), file }],
        ..FileResult::default()
    }
}

/// Why a file could not be read.
enum ReadError {
    /// Too large to parse within bounded memory: reported as a finding.
    TooLarge(u64),
    /// Missing, not a regular file, or unreadable: an I/O error of the run.
    Io(String),
}

/// Reads standard input, at most one byte more than [`MAX_FILE_BYTES`]: enough to tell that it is too
/// large without holding more than a file may take.
pub fn read_stdin() -> std::io::Result<Vec<u8>> {
    use std::io::Read;

    let mut bytes = Vec::new();
    std::io::stdin().lock().take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads a regular file: one open (non-blocking, so a FIFO cannot stall the run; not through a symbolic
/// link), one `fstat`, one read; with the file's identity, from that `fstat`. A file the walk reached
/// through a link inside the roots is opened where the link leads, once [`Confinement`] has admitted it.
fn read(path: &Path, confinement: &Confinement) -> Result<(Vec<u8>, Option<FileId>), ReadError> {
    let shown = path.display().to_string();
    let read = match confine::open_regular_identified(path, &shown, MAX_FILE_BYTES) {
        Err(Refusal::Io(..)) if path.is_symlink() => confinement
            .file(path, &shown)
            .and_then(|resolved| confine::open_regular_identified(&resolved, &shown, MAX_FILE_BYTES)),
        read => read,
    };
    read.map_err(|refusal| match refusal {
        Refusal::TooLarge(..) => ReadError::TooLarge(std::fs::metadata(path).map_or(MAX_FILE_BYTES + 1, |m| m.len())),
        Refusal::Io(shown, error) => ReadError::Io(format!("{shown}: {error}")),
        Refusal::NotRegular(shown) => ReadError::Io(format!("{shown}: not a regular file")),
        refusal => ReadError::Io(format!("{refusal}: not read")),
    })
}

/// `bytes`, unless they are more than [`MAX_FILE_BYTES`]: the limit files and standard input share.
fn within_limit(bytes: Vec<u8>) -> Result<Vec<u8>, ReadError> {
    if bytes.len() as u64 > MAX_FILE_BYTES { Err(ReadError::TooLarge(bytes.len() as u64)) } else { Ok(bytes) }
}

fn check_input_inner(mut input: Input, project: &ProjectIndex) -> FileResult {
    let from_disk = input.contents.is_none();
    let (read, file_id) = match input.contents.take() {
        Some(bytes) => (within_limit(bytes), None),
        None => match read(&input.path, &input.settings.confinement) {
            Ok((bytes, id)) => (Ok(bytes), id),
            // A file that exists but could not be read is still one file, however many paths reach it.
            Err(error) => (Err(error), discover::identity_of(&input.path)),
        },
    };
    FileResult { file_id, ..check_read(input, read, from_disk, project) }
}

/// Checks the file of `input`, whose bytes were `read` (from disk, or given with the input).
fn check_read(input: Input, read: Result<Vec<u8>, ReadError>, from_disk: bool, project: &ProjectIndex) -> FileResult {
    let settings = Arc::clone(&input.settings);
    let settings = settings.as_ref();
    let rules = settings.rules_for(&input.path);
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(ReadError::Io(error)) => return FileResult { errors: vec![error], ..FileResult::default() },
        Err(ReadError::TooLarge(size)) => {
            if !rules.contains(Rule::SyntaxError) || input.kind.is_model_config() {
                return FileResult::default();
            }
            return not_checked(
                Arc::new(SourceFile::new(input.path, input.display_name, String::new())),
                settings,
                TextSize::from(0),
                format!("file is {} MiB, above the {} MiB capslint analyses", size >> 20, MAX_FILE_BYTES >> 20),
                "not analysed",
                "generated or data files this large should be excluded (`extend-exclude`)",
            );
        }
    };
    // Whether the text is the file's bytes on disk, as the project index would read them.
    let mut as_on_disk = from_disk;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // PEP 263: a Python file may declare another (ASCII-compatible) encoding. Its syntax is ASCII, so a
        // lossy decoding changes only the contents of strings and comments, which no rule reads.
        Err(error) if input.kind == FileKind::Python && declares_python_encoding(error.as_bytes()) => {
            as_on_disk = false;
            String::from_utf8_lossy(error.as_bytes()).into_owned()
        }
        Err(_) if input.kind.is_model_config() => return FileResult::default(),
        Err(error) => {
            let valid_up_to = error.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(error.as_bytes()).into_owned();
            // YAML that is not a Kubernetes manifest is none of capslint's business, encoded or not.
            if input.kind == FileKind::Yaml && !k8s::looks_like_manifest(&lossy) {
                return FileResult::default();
            }
            // The valid prefix is the same in the lossy text, so the offset carries over.
            let offset = TextSize::from(valid_up_to as u32);
            if !rules.contains(Rule::SyntaxError) {
                return FileResult::default();
            }
            return not_checked(
                Arc::new(SourceFile::new(input.path, input.display_name, lossy)),
                settings,
                offset,
                format!("file is not valid UTF-8 (invalid byte at offset {valid_up_to})"),
                "invalid UTF-8 here",
                "save the file as UTF-8",
            );
        }
    };
    let mut file = Arc::new(SourceFile::new(input.path, input.display_name, text));
    let mut result = FileResult::default();
    let findings = match input.kind {
        FileKind::Python => {
            let (findings, templates) = check_python(&file, rules, settings, project, as_on_disk);
            result.pod_templates = templates
                .into_iter()
                .map(|call| pod_template::TemplateUse {
                    dag: Arc::clone(&file),
                    settings: Arc::clone(&input.settings),
                    rules,
                    call,
                })
                .collect();
            findings
        }
        FileKind::Yaml => {
            let parsed = k8s::parse(Arc::clone(&file), Arc::clone(&input.settings), rules);
            result.manifest = parsed.manifest;
            result.notices.extend(parsed.notice);
            parsed.findings
        }
        FileKind::Notebook => {
            // The findings are in the notebook's Python, or in its JSON when it cannot be read.
            let (checked, findings) = notebook::check(&file, rules, settings, project);
            file = checked;
            findings
        }
        FileKind::Json => model_config::check_json(&file, rules, settings),
        FileKind::Toml => model_config::check_toml(&file, rules, settings),
    };
    result.diagnostics = findings
        .into_iter()
        .map(|finding| Diagnostic { severity: settings.severity(finding.rule), finding, file: Arc::clone(&file) })
        .collect();
    result
}

/// Whether the first two lines carry a PEP 263 coding declaration (`# -*- coding: latin-1 -*-`).
fn declares_python_encoding(bytes: &[u8]) -> bool {
    bytes.split(|byte| *byte == b'\n').take(2).any(|line| {
        let line = String::from_utf8_lossy(line);
        let trimmed = line.trim_start();
        trimmed.starts_with('#') && ["coding:", "coding="].iter().any(|marker| trimmed.contains(marker))
    })
}

fn check_python(
    file: &SourceFile,
    rules: capslint_diagnostics::selection::RuleSet,
    settings: &Settings,
    project: &ProjectIndex,
    as_on_disk: bool,
) -> (Vec<Finding>, Vec<pod_template::PodTemplateCall>) {
    let any_python = rules.iter().any(|rule| rule.family() == Family::Python);
    let any_manifest = rules.iter().any(|rule| rule.family() == Family::Manifest);
    if !any_python && !any_manifest && !rules.contains(Rule::SyntaxError) {
        return (Vec::new(), Vec::new());
    }
    let path = capslint_workspace::paths::absolute(file.path(), settings.cwd());
    // The project index answers for a file as read from disk, and learns from it what it may ask again
    // when another file imports it.
    let passes = |text: &str| {
        if as_on_disk { project.may_have_findings(&path, text) } else { prefilter::may_have_findings(text) }
    };
    // A file that calls a function of another module of the project may have findings at the call.
    if settings.prefilter && !passes(file.text()) && !project.imports_module_with_findings(&path, file.text()) {
        return (Vec::new(), Vec::new());
    }
    let outcome = python::check(file.text(), rules, settings, Some(ProjectContext { index: project, file: &path }));
    let scope = Scope::Python { file, rules, comments: &outcome.comments, findings: outcome.findings };
    let findings = suppress::apply(scope).into_iter().map(|(_, finding)| finding).collect();
    (findings, outcome.pod_templates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_workspace::settings::Overrides;

    #[test]
    fn a_panic_in_one_file_becomes_its_diagnostic() {
        let settings = Settings::resolve(None, &Overrides::default(), Path::new(".")).unwrap();
        let result =
            contain_panic(PathBuf::from("boom.py"), "boom.py".into(), &settings, || panic!("index out of bounds"));
        assert!(result.errors.is_empty());
        let [diagnostic] = result.diagnostics.as_slice() else { panic!("one diagnostic expected") };
        assert_eq!(diagnostic.rule(), Rule::SyntaxError);
        assert_eq!(diagnostic.file.display_name(), "boom.py");
        assert_eq!(diagnostic.finding.message, "internal error while checking this file: index out of bounds");
    }
}
