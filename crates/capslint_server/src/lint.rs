//! Linting open documents: their unsaved text through the pipeline `check` runs on standard input
//! ([`capslint_linter::lint::Input`] with its contents), every open document of a project root in one
//! run so findings across files (manifests together, imported modules) are the same as `check` finds on
//! those files. The cross-file readers (imported modules, kustomize bases) see the unsaved text of the
//! open documents too: it is recorded as edited text ([`capslint_workspace::edited`]) for the run.

use std::path::{Path, PathBuf};

use lsp_types::Uri;

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_linter::lint::{self, Input};
use capslint_workspace::discover::{FileKind, display_name};

use crate::diagnostics::{Placer, to_lsp};
use crate::position::{Encoding, LineIndex};
use crate::settings::SessionSettings;

/// LSP diagnostics by client document.
pub type Published = Vec<(Uri, Vec<lsp_types::Diagnostic>)>;

/// One open document, as it was when a lint was asked for.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The linted document (a notebook's URI for a notebook).
    pub uri: Uri,
    /// Its file.
    pub path: PathBuf,
    /// The kind of file, from its path as `check` decides it.
    pub kind: FileKind,
    /// The version linted.
    pub version: i32,
    /// Its text; a notebook's JSON.
    pub contents: String,
    /// For a notebook, its cells' URIs in order.
    pub cells: Option<Vec<Uri>>,
}

impl Snapshot {
    /// The placer of this document's findings.
    pub fn placer(&self, encoding: Encoding) -> Placer {
        Placer { uri: self.uri.clone(), cells: self.cells.clone(), encoding }
    }
}

/// Every open document of one project root, to lint together.
#[derive(Debug, Clone)]
pub struct LintJob {
    /// The project root.
    pub root: PathBuf,
    /// The root's generation when the job was made: a job older than the root's latest is dropped.
    pub generation: u64,
    /// The documents.
    pub documents: Vec<Snapshot>,
}

/// The findings of one document.
#[derive(Debug, Clone)]
pub struct Linted {
    /// The document.
    pub uri: Uri,
    /// The version linted.
    pub version: i32,
    /// capslint's diagnostics, for code actions and hover.
    pub diagnostics: Vec<Diagnostic>,
    /// The LSP diagnostics of each client document (a notebook's cells), empty ones included.
    pub published: Published,
    /// How to place ranges of the checked text in the client's documents.
    pub placer: Placer,
    /// Whether unsafe fixes are offered (the editor's option, or the configuration's `unsafe-fixes`).
    pub unsafe_fixes: bool,
}

/// What a job produced.
#[derive(Debug)]
pub struct LintOutcome {
    /// The project root.
    pub root: PathBuf,
    /// The job's generation.
    pub generation: u64,
    /// Each document's findings.
    pub documents: Vec<Linted>,
    /// Findings in files that are not open (a kustomization's base, the module a value comes from),
    /// by file.
    pub elsewhere: Published,
    /// A configuration that cannot be used, or files that cannot be checked.
    pub errors: Vec<String>,
}

/// The input `check` would make of a snapshot, with `settings`.
pub fn input(
    snapshot: &Snapshot,
    root: &Path,
    settings: std::sync::Arc<capslint_workspace::settings::Settings>,
) -> Input {
    Input {
        path: snapshot.path.clone(),
        display_name: display_name(&snapshot.path, root),
        kind: snapshot.kind,
        contents: Some(snapshot.contents.clone().into_bytes()),
        settings,
    }
}

/// The unsaved texts of the open documents, read instead of their files by the cross-file readers
/// while `work` runs.
pub fn with_open_texts<T>(documents: &[Snapshot], work: impl FnOnce() -> T) -> T {
    let texts: Vec<(&Path, &str)> = documents
        .iter()
        .filter(|snapshot| snapshot.cells.is_none())
        .map(|snapshot| (snapshot.path.as_path(), snapshot.contents.as_str()))
        .collect();
    capslint_workspace::edited::set(texts);
    let result = work();
    capslint_workspace::edited::clear();
    result
}

/// Lints every document of `job` in one run.
pub fn lint(job: LintJob, settings: &mut SessionSettings, encoding: Encoding) -> LintOutcome {
    settings.refresh(&job.root);
    let mut errors = Vec::new();
    let mut inputs = Vec::new();
    let mut unsafe_fixes = std::collections::HashMap::new();
    for snapshot in &job.documents {
        match settings.for_file(&job.root, &snapshot.path) {
            Ok(resolved) => {
                unsafe_fixes.insert(snapshot.path.clone(), resolved.unsafe_fixes);
                inputs.push(input(snapshot, &job.root, resolved));
            }
            Err(error) => errors.push(error),
        }
    }
    let run = if errors.is_empty() {
        with_open_texts(&job.documents, || lint::check_documents(inputs))
    } else {
        lint::RunResult::default()
    };
    errors.extend(run.errors);
    errors.dedup();
    let mut by_path: std::collections::HashMap<&Path, Vec<Diagnostic>> = std::collections::HashMap::new();
    let mut other_files: std::collections::BTreeMap<PathBuf, Vec<Diagnostic>> = std::collections::BTreeMap::new();
    for diagnostic in run.diagnostics {
        match job.documents.iter().find(|snapshot| snapshot.path == diagnostic.file.path()) {
            Some(snapshot) => by_path.entry(snapshot.path.as_path()).or_default().push(diagnostic),
            None => other_files.entry(diagnostic.file.path().to_path_buf()).or_default().push(diagnostic),
        }
    }
    let documents = job
        .documents
        .iter()
        .map(|snapshot| {
            let diagnostics = by_path.remove(snapshot.path.as_path()).unwrap_or_default();
            let unsafe_fixes = unsafe_fixes.get(&snapshot.path).copied().unwrap_or(false);
            linted(snapshot, diagnostics, encoding, unsafe_fixes)
        })
        .collect();
    let elsewhere = other_files
        .into_iter()
        .filter_map(|(path, diagnostics)| {
            let path = if path.is_absolute() { path } else { job.root.join(path) };
            let uri = crate::uri::from_path(&path)?;
            let placer = Placer { uri: uri.clone(), cells: None, encoding };
            let lines = LineIndex::new(diagnostics[0].file.text());
            let converted =
                diagnostics.iter().filter_map(|diagnostic| to_lsp(diagnostic, &placer, &lines)).map(|(_, lsp)| lsp);
            Some((uri, converted.collect()))
        })
        .collect();
    LintOutcome { root: job.root, generation: job.generation, documents, elsewhere, errors }
}

/// A document's findings, converted for the client.
pub fn linted(snapshot: &Snapshot, diagnostics: Vec<Diagnostic>, encoding: Encoding, unsafe_fixes: bool) -> Linted {
    let placer = snapshot.placer(encoding);
    let mut published: Published = placer.documents().into_iter().map(|uri| (uri, Vec::new())).collect();
    let lines = diagnostics.first().map(|first| LineIndex::new(first.file.text()));
    for diagnostic in &diagnostics {
        let Some(lines) = &lines else { break };
        let own;
        // Every diagnostic of a document is in the same checked text, but build the index anew if not.
        let lines = if std::ptr::eq(diagnostic.file.text(), diagnostics[0].file.text()) {
            lines
        } else {
            own = LineIndex::new(diagnostic.file.text());
            &own
        };
        if let Some((uri, lsp)) = to_lsp(diagnostic, &placer, lines)
            && let Some((_, list)) = published.iter_mut().find(|(document, _)| *document == uri)
        {
            list.push(lsp);
        }
    }
    Linted { uri: snapshot.uri.clone(), version: snapshot.version, diagnostics, published, placer, unsafe_fixes }
}
