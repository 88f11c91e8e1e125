//! The connection loop: reads the client's messages, keeps the documents in step, schedules lints
//! (debounced, every open document of the changed document's project root) on the worker, and answers
//! requests from the latest findings. Diagnostics are pulled (`textDocument/diagnostic`,
//! `workspace/diagnostic`) when the client can pull them, else pushed (`publishDiagnostics`). A finding
//! linted from an old version of a document is dropped. Nothing the client sends stops the loop but
//! `exit` or the end of its input.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    CodeActionOrCommand, CodeActionParams, DidChangeNotebookDocumentParams, DidChangeTextDocumentParams,
    DidChangeWatchedFilesParams, DidCloseNotebookDocumentParams, DidCloseTextDocumentParams,
    DidOpenNotebookDocumentParams, DidOpenTextDocumentParams, DocumentDiagnosticParams, ExecuteCommandParams,
    HoverParams, Uri, notification, request,
};

use capslint_diagnostics::fix::Applicability;
use capslint_workspace::discover::FileKind;

use crate::code_actions::{self, FIX_ALL};
use crate::documents::{Cell, CellChanges, DocumentStore};
use crate::lint::{LintJob, LintOutcome, Linted, Published, Snapshot};
use crate::position::Encoding;
use crate::settings::SessionSettings;
use crate::worker::{Generations, Task};

/// How long after a change the lint starts: changes that come faster are linted once.
pub const DEBOUNCE: Duration = Duration::from_millis(20);

/// The command that returns a file's resolved settings.
pub const SHOW_SETTINGS: &str = "capslint.showSettings";

/// What the client said it can do, as far as the server cares.
#[derive(Debug, Clone, Default)]
pub struct ClientCapabilities {
    /// It pulls diagnostics.
    pub pull: bool,
    /// It accepts `workspace/diagnostic/refresh`.
    pub refresh: bool,
    /// It lets the server register file watchers.
    pub watch: bool,
}

/// The state of the connection loop.
pub struct Server<'c> {
    connection: &'c Connection,
    documents: DocumentStore,
    results: HashMap<Uri, Linted>,
    roots: HashMap<Uri, PathBuf>,
    encoding: Encoding,
    capabilities: ClientCapabilities,
    generations: Generations,
    /// Roots to lint, and when.
    due: HashMap<PathBuf, Instant>,
    /// Per root, the generation of the last outcome taken and its findings in files that are not open.
    elsewhere: HashMap<PathBuf, (u64, Published)>,
    pending_documents: Vec<(RequestId, Uri)>,
    pending_workspace: Vec<RequestId>,
    /// Hover and code action requests on a document being linted: answered from the findings of the
    /// version they were asked on.
    deferred: Vec<(RequestId, Deferred)>,
    tasks: Sender<Task>,
    outcomes: Receiver<LintOutcome>,
    shown_errors: HashSet<String>,
    next_request: i32,
}

/// A request that waits for the lint of its document's current version.
enum Deferred {
    Hover(HoverParams),
    CodeActions(CodeActionParams),
}

impl Deferred {
    /// The client document it is about.
    fn uri(&self) -> &Uri {
        match self {
            Deferred::Hover(params) => &params.text_document_position_params.text_document.uri,
            Deferred::CodeActions(params) => &params.text_document.uri,
        }
    }
}

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `exit` after `shutdown`.
    Exit,
    /// `exit` without `shutdown`: the protocol asks for exit code 1.
    ExitWithoutShutdown,
    /// The client's input ended.
    Disconnected,
}

impl<'c> Server<'c> {
    /// The loop's state, before any document is open.
    pub fn new(
        connection: &'c Connection,
        encoding: Encoding,
        capabilities: ClientCapabilities,
        generations: Generations,
        tasks: Sender<Task>,
        outcomes: Receiver<LintOutcome>,
    ) -> Self {
        Server {
            connection,
            documents: DocumentStore::default(),
            results: HashMap::new(),
            roots: HashMap::new(),
            encoding,
            capabilities,
            generations,
            due: HashMap::new(),
            elsewhere: HashMap::new(),
            pending_documents: Vec::new(),
            pending_workspace: Vec::new(),
            deferred: Vec::new(),
            tasks,
            outcomes,
            shown_errors: HashSet::new(),
            next_request: 0,
        }
    }

    /// Runs until `exit` or the end of the client's input.
    pub fn run(&mut self) -> Ending {
        let mut shut_down = false;
        loop {
            let timeout = self
                .due
                .values()
                .min()
                .map_or(Duration::from_secs(3600), |due| due.saturating_duration_since(Instant::now()));
            let receiver = self.connection.receiver.clone();
            let outcomes = self.outcomes.clone();
            select! {
                recv(receiver) -> message => match message {
                    Err(_) => return Ending::Disconnected,
                    Ok(Message::Notification(notification)) if notification.method == notification::Exit::METHOD => {
                        return if shut_down { Ending::Exit } else { Ending::ExitWithoutShutdown };
                    }
                    Ok(Message::Request(request)) if request.method == request::Shutdown::METHOD => {
                        shut_down = true;
                        self.send(Response::new_ok(request.id, serde_json::Value::Null));
                    }
                    Ok(Message::Request(request)) if shut_down => {
                        self.send(Response::new_err(request.id, ErrorCode::InvalidRequest as i32, "the server is shutting down".into()));
                    }
                    Ok(Message::Request(request)) => self.request(request),
                    Ok(Message::Notification(notification)) => self.notification(notification),
                    Ok(Message::Response(_)) => {}
                },
                recv(outcomes) -> outcome => {
                    if let Ok(outcome) = outcome {
                        self.outcome(outcome);
                    }
                }
                default(timeout) => {}
            }
            self.start_due();
        }
    }

    fn send(&self, response: Response) {
        let _ = self.connection.sender.send(Message::Response(response));
    }

    fn notify(&self, method: &str, params: serde_json::Value) {
        let _ = self.connection.sender.send(Message::Notification(Notification::new(method.to_string(), params)));
    }

    fn request_client(&mut self, method: &str, params: serde_json::Value) {
        self.next_request += 1;
        let id = RequestId::from(format!("capslint-{}", self.next_request));
        let _ = self.connection.sender.send(Message::Request(Request::new(id, method.to_string(), params)));
    }

    /// Asks the client to watch the configuration files and the files other documents' findings depend
    /// on.
    pub fn register_watchers(&mut self) {
        if !self.capabilities.watch {
            return;
        }
        let globs = ["**/capslint.toml", "**/.capslint.toml", "**/pyproject.toml", "**/*.py", "**/*.{yaml,yml}"];
        let watchers: Vec<serde_json::Value> =
            globs.iter().map(|glob| serde_json::json!({"globPattern": glob})).collect();
        self.request_client(
            "client/registerCapability",
            serde_json::json!({"registrations": [{
                "id": "capslint-watched-files",
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {"watchers": watchers},
            }]}),
        );
    }

    // ----- notifications -----

    fn notification(&mut self, notification: Notification) {
        let method = notification.method.as_str();
        let params = notification.params;
        match method {
            notification::DidOpenTextDocument::METHOD => {
                let Ok(params) = serde_json::from_value::<DidOpenTextDocumentParams>(params) else { return };
                let document = params.text_document;
                self.documents.open_text(document.uri.clone(), document.text, document.version, document.language_id);
                self.schedule(&document.uri);
            }
            notification::DidChangeTextDocument::METHOD => {
                let Ok(params) = serde_json::from_value::<DidChangeTextDocumentParams>(params) else { return };
                let uri = params.text_document.uri;
                if self.documents.change_text(&uri, params.text_document.version, params.content_changes, self.encoding)
                {
                    self.schedule(&uri);
                }
            }
            notification::DidSaveTextDocument::METHOD | "notebookDocument/didSave" => {
                // Saved text can change what other documents read from disk, and a configuration may have
                // changed beside it: lint the root again.
                if let Some(uri) = params
                    .pointer("/textDocument/uri")
                    .or_else(|| params.pointer("/notebookDocument/uri"))
                    .and_then(|uri| serde_json::from_value::<Uri>(uri.clone()).ok())
                {
                    self.schedule(&uri);
                }
            }
            notification::DidCloseTextDocument::METHOD => {
                let Ok(params) = serde_json::from_value::<DidCloseTextDocumentParams>(params) else { return };
                let uri = params.text_document.uri;
                self.close(&uri, |documents| documents.close_text(&uri));
            }
            "notebookDocument/didOpen" => {
                let Ok(params) = serde_json::from_value::<DidOpenNotebookDocumentParams>(params) else { return };
                let notebook = params.notebook_document;
                let cells = notebook
                    .cells
                    .iter()
                    .map(|cell| Cell { uri: cell.document.clone(), kind: cell.kind.clone() })
                    .collect();
                let texts = params
                    .cell_text_documents
                    .into_iter()
                    .map(|item| (item.uri, item.text, item.version, item.language_id))
                    .collect();
                self.documents.open_notebook(notebook.uri.clone(), notebook.version, cells, notebook.metadata, texts);
                self.schedule(&notebook.uri);
            }
            "notebookDocument/didChange" => {
                let Ok(params) = serde_json::from_value::<DidChangeNotebookDocumentParams>(params) else { return };
                let uri = params.notebook_document.uri;
                let mut changes = CellChanges::default();
                if let Some(cells) = params.change.cells {
                    if let Some(structure) = cells.structure {
                        let inserted: Vec<Cell> = structure
                            .array
                            .cells
                            .unwrap_or_default()
                            .into_iter()
                            .map(|cell| Cell { uri: cell.document, kind: cell.kind })
                            .collect();
                        changes.structure =
                            Some((structure.array.start as usize, structure.array.delete_count as usize, inserted));
                        changes.opened = structure
                            .did_open
                            .unwrap_or_default()
                            .into_iter()
                            .map(|item| (item.uri, item.text, item.version, item.language_id))
                            .collect();
                        changes.closed =
                            structure.did_close.unwrap_or_default().into_iter().map(|item| item.uri).collect();
                    }
                    changes.texts = cells
                        .text_content
                        .unwrap_or_default()
                        .into_iter()
                        .map(|content| (content.document.uri, content.document.version, content.changes))
                        .collect();
                }
                let version = params.notebook_document.version;
                if self.documents.change_notebook(&uri, version, params.change.metadata, changes, self.encoding) {
                    self.schedule(&uri);
                }
            }
            "notebookDocument/didClose" => {
                let Ok(params) = serde_json::from_value::<DidCloseNotebookDocumentParams>(params) else { return };
                let uri = params.notebook_document.uri;
                self.close(&uri, |documents| documents.close_notebook(&uri));
            }
            notification::DidChangeWatchedFiles::METHOD => {
                let Ok(params) = serde_json::from_value::<DidChangeWatchedFilesParams>(params) else { return };
                let configuration = params.changes.iter().any(|change| {
                    crate::uri::to_path(&change.uri).is_some_and(|path| {
                        path.file_name()
                            .and_then(|name| name.to_str())
                            .is_some_and(|name| capslint_workspace::config::CONFIG_FILE_NAMES.contains(&name))
                    })
                });
                if configuration {
                    let _ = self.tasks.send(Task::Invalidate);
                }
                for uri in self.documents.linted() {
                    self.schedule(&uri);
                }
            }
            notification::Cancel::METHOD => {
                let Some(id) = params.get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
                else {
                    return;
                };
                let waiting = |server: &Self| {
                    server.pending_documents.len() + server.pending_workspace.len() + server.deferred.len()
                };
                let before = waiting(self);
                self.pending_documents.retain(|(pending, _)| *pending != id);
                self.pending_workspace.retain(|pending| *pending != id);
                self.deferred.retain(|(pending, _)| *pending != id);
                if waiting(self) < before {
                    self.send(Response::new_err(id, ErrorCode::RequestCanceled as i32, "canceled".into()));
                }
            }
            _ => {}
        }
    }

    /// Closes a document: its findings are forgotten (and cleared in the client), and the other
    /// documents of its root are linted again.
    fn close(&mut self, uri: &Uri, close: impl FnOnce(&mut DocumentStore)) {
        let root = self.roots.remove(uri);
        if let Some(linted) = self.results.remove(uri)
            && !self.capabilities.pull
        {
            for (document, _) in linted.published {
                self.notify(
                    notification::PublishDiagnostics::METHOD,
                    serde_json::json!({"uri": document, "diagnostics": []}),
                );
            }
        }
        close(&mut self.documents);
        if let Some(root) = root {
            self.due.insert(root, Instant::now() + DEBOUNCE);
        }
        self.answer_pending();
    }

    /// Lints `uri`'s root soon.
    fn schedule(&mut self, uri: &Uri) {
        let Some(owner) = self.documents.owner(uri) else { return };
        let root = match self.roots.get(&owner) {
            Some(root) => root.clone(),
            None => {
                let Some(path) = crate::uri::to_path(&owner) else {
                    // Only files are linted: a document of another scheme has no findings.
                    self.answer_pending();
                    return;
                };
                let root = SessionSettings::root_of(&path);
                self.roots.insert(owner.clone(), root.clone());
                root
            }
        };
        self.due.insert(root, Instant::now() + DEBOUNCE);
    }

    /// Sends the lint jobs whose time has come.
    fn start_due(&mut self) {
        let now = Instant::now();
        let ready: Vec<PathBuf> =
            self.due.iter().filter(|(_, due)| **due <= now).map(|(root, _)| root.clone()).collect();
        for root in ready {
            self.due.remove(&root);
            let documents = self.snapshots(&root);
            let generation = self.generations.next(&root);
            if documents.is_empty() {
                // The root's last document closed: its findings in other files go with it.
                self.take_elsewhere(&root, generation, Vec::new());
                continue;
            }
            let _ = self.tasks.send(Task::Lint(LintJob { root, generation, documents }));
        }
        self.answer_pending();
    }

    /// The open documents of `root` that `check` would lint, as they are now. Others get an empty result.
    fn snapshots(&mut self, root: &PathBuf) -> Vec<Snapshot> {
        let mut out = Vec::new();
        for uri in self.documents.linted() {
            if self.roots.get(&uri) != Some(root) {
                continue;
            }
            match self.snapshot(&uri) {
                Some(snapshot) => out.push(snapshot),
                None => {
                    let version = self.documents.version(&uri).unwrap_or_default();
                    let placer = crate::diagnostics::Placer { uri: uri.clone(), cells: None, encoding: self.encoding };
                    let published = vec![(uri.clone(), Vec::new())];
                    self.results.insert(
                        uri.clone(),
                        Linted { uri, version, diagnostics: Vec::new(), published, placer, unsafe_fixes: false },
                    );
                }
            }
        }
        out
    }

    /// A document as it is now, when it is a file of a kind `check` lints.
    fn snapshot(&self, uri: &Uri) -> Option<Snapshot> {
        let path = crate::uri::to_path(uri)?;
        if let Some(notebook) = self.documents.notebook(uri) {
            return Some(Snapshot {
                uri: uri.clone(),
                path,
                kind: FileKind::Notebook,
                version: notebook.version,
                contents: self.documents.notebook_json(uri)?,
                cells: Some(notebook.cells.iter().map(|cell| cell.uri.clone()).collect()),
            });
        }
        let document = self.documents.text(uri)?;
        let kind = FileKind::of(&path).or(match document.language_id.as_str() {
            "python" => Some(FileKind::Python),
            "yaml" => Some(FileKind::Yaml),
            _ => None,
        })?;
        if kind == FileKind::Notebook {
            return None;
        }
        Some(Snapshot {
            uri: uri.clone(),
            path,
            kind,
            version: document.version,
            contents: document.text.clone(),
            cells: None,
        })
    }

    /// Takes a lint's findings: those of documents that changed since are dropped.
    fn outcome(&mut self, outcome: LintOutcome) {
        for error in outcome.errors {
            eprintln!("capslint server: {error}");
            if self.shown_errors.insert(error.clone()) {
                self.notify(
                    notification::ShowMessage::METHOD,
                    serde_json::json!({"type": 1, "message": format!("capslint: {error}")}),
                );
            }
        }
        self.take_elsewhere(&outcome.root, outcome.generation, outcome.elsewhere);
        // The documents whose findings changed though the client is not waiting for them: a pulling
        // client is asked to pull again.
        let asked: HashSet<Uri> =
            self.pending_documents.iter().filter_map(|(_, uri)| self.documents.owner(uri)).collect();
        let mut changed_unasked = false;
        for linted in outcome.documents {
            if self.documents.version(&linted.uri) != Some(linted.version) {
                continue;
            }
            let same = self.results.get(&linted.uri).is_some_and(|old| old.published == linted.published);
            if !self.capabilities.pull && !same {
                for (uri, diagnostics) in &linted.published {
                    let version = (*uri == linted.uri).then_some(linted.version);
                    self.notify(
                        notification::PublishDiagnostics::METHOD,
                        serde_json::json!({"uri": uri, "diagnostics": diagnostics, "version": version}),
                    );
                }
            }
            changed_unasked |= !same && self.results.contains_key(&linted.uri) && !asked.contains(&linted.uri);
            self.results.insert(linted.uri.clone(), linted);
        }
        self.answer_pending();
        if self.capabilities.pull && self.capabilities.refresh && changed_unasked {
            self.request_client("workspace/diagnostic/refresh", serde_json::Value::Null);
        }
    }

    /// Takes the findings a lint made in files that are not open: pushed (and those of the previous lint
    /// that are gone, cleared) unless a newer lint of the root was taken already; a pulling client reads
    /// them in the workspace report.
    fn take_elsewhere(&mut self, root: &PathBuf, generation: u64, found: Published) {
        let previous = match self.elsewhere.get(root) {
            Some((taken, _)) if *taken > generation => return,
            Some((_, previous)) => previous.clone(),
            None => Vec::new(),
        };
        let open: HashSet<Uri> = self.results.values().flat_map(|linted| linted.placer.documents()).collect();
        let found: Published =
            found.into_iter().filter(|(uri, _)| !open.contains(uri) && self.documents.owner(uri).is_none()).collect();
        if !self.capabilities.pull {
            for (uri, _) in &previous {
                if !found.iter().any(|(other, _)| other == uri) && self.documents.owner(uri).is_none() {
                    self.notify(
                        notification::PublishDiagnostics::METHOD,
                        serde_json::json!({"uri": uri, "diagnostics": []}),
                    );
                }
            }
            for (uri, diagnostics) in &found {
                if !previous.contains(&(uri.clone(), diagnostics.clone())) {
                    self.notify(
                        notification::PublishDiagnostics::METHOD,
                        serde_json::json!({"uri": uri, "diagnostics": diagnostics}),
                    );
                }
            }
        }
        self.elsewhere.insert(root.clone(), (generation, found));
    }

    /// Whether the findings of a linted document are of its current version.
    fn current(&self, uri: &Uri) -> Option<&Linted> {
        let linted = self.results.get(uri)?;
        (self.documents.version(uri) == Some(linted.version)).then_some(linted)
    }

    /// Answers the diagnostic requests whose documents are linted.
    fn answer_pending(&mut self) {
        for (id, request) in std::mem::take(&mut self.deferred) {
            if self.waits_for_lint(request.uri()) {
                self.deferred.push((id, request));
                continue;
            }
            match request {
                Deferred::Hover(params) => self.hover(id, params),
                Deferred::CodeActions(params) => self.code_actions(id, params),
            }
        }
        let pending = std::mem::take(&mut self.pending_documents);
        for (id, uri) in pending {
            match self.document_report(&uri) {
                Some(report) => self.send(Response::new_ok(id, report)),
                None => self.pending_documents.push((id, uri)),
            }
        }
        if !self.pending_workspace.is_empty() && self.all_current() {
            let report = self.workspace_report();
            for id in std::mem::take(&mut self.pending_workspace) {
                self.send(Response::new_ok(id, report.clone()));
            }
        }
    }

    fn all_current(&self) -> bool {
        self.documents.linted().iter().all(|uri| self.current(uri).is_some() || crate::uri::to_path(uri).is_none())
    }

    /// The full report of a client document, `None` while it waits for a lint.
    fn document_report(&self, uri: &Uri) -> Option<serde_json::Value> {
        let Some(owner) = self.documents.owner(uri) else {
            return Some(serde_json::json!({"kind": "full", "items": []}));
        };
        if crate::uri::to_path(&owner).is_none() {
            return Some(serde_json::json!({"kind": "full", "items": []}));
        }
        let linted = self.current(&owner)?;
        let items = linted.published.iter().find(|(document, _)| document == uri).map(|(_, items)| items.clone());
        Some(serde_json::json!({"kind": "full", "items": items.unwrap_or_default()}))
    }

    fn workspace_report(&self) -> serde_json::Value {
        let mut items = Vec::new();
        for linted in self.results.values() {
            for (uri, diagnostics) in &linted.published {
                let version = self.documents.text(uri).map(|document| document.version);
                items.push(serde_json::json!({"kind": "full", "uri": uri, "version": version, "items": diagnostics}));
            }
        }
        for (_, found) in self.elsewhere.values() {
            for (uri, diagnostics) in found {
                items.push(serde_json::json!({"kind": "full", "uri": uri, "version": null, "items": diagnostics}));
            }
        }
        serde_json::json!({"items": items})
    }

    // ----- requests -----

    fn request(&mut self, request: Request) {
        let Request { id, method, params } = request;
        let invalid = |error: serde_json::Error| {
            Response::new_err(id.clone(), ErrorCode::InvalidParams as i32, format!("invalid parameters: {error}"))
        };
        match method.as_str() {
            request::DocumentDiagnosticRequest::METHOD => {
                match serde_json::from_value::<DocumentDiagnosticParams>(params) {
                    Ok(params) => {
                        let uri = params.text_document.uri;
                        match self.document_report(&uri) {
                            Some(report) => self.send(Response::new_ok(id, report)),
                            None => self.pending_documents.push((id, uri)),
                        }
                    }
                    Err(error) => self.send(invalid(error)),
                }
            }
            request::WorkspaceDiagnosticRequest::METHOD => {
                if self.all_current() && self.due.is_empty() {
                    let report = self.workspace_report();
                    self.send(Response::new_ok(id, report));
                } else {
                    self.pending_workspace.push(id);
                }
            }
            request::CodeActionRequest::METHOD => match serde_json::from_value::<CodeActionParams>(params) {
                Ok(params) if self.waits_for_lint(&params.text_document.uri) => {
                    self.deferred.push((id, Deferred::CodeActions(params)));
                }
                Ok(params) => self.code_actions(id, params),
                Err(error) => self.send(invalid(error)),
            },
            request::HoverRequest::METHOD => match serde_json::from_value::<HoverParams>(params) {
                Ok(params) if self.waits_for_lint(&params.text_document_position_params.text_document.uri) => {
                    self.deferred.push((id, Deferred::Hover(params)));
                }
                Ok(params) => self.hover(id, params),
                Err(error) => self.send(invalid(error)),
            },
            request::ExecuteCommand::METHOD => match serde_json::from_value::<ExecuteCommandParams>(params) {
                Ok(params) if params.command == SHOW_SETTINGS => {
                    let argument = params.arguments.first();
                    let text = argument
                        .and_then(|argument| argument.get("uri").or(Some(argument)))
                        .and_then(|value| value.as_str())
                        .map(str::to_string);
                    let path = text.and_then(|text| match text.parse::<Uri>() {
                        Ok(uri) if text.contains(':') && !text.starts_with('/') => crate::uri::to_path(&uri),
                        _ => Some(PathBuf::from(text)),
                    });
                    match path.filter(|path| path.is_absolute()) {
                        Some(path) => {
                            let _ = self.tasks.send(Task::ShowSettings { id, path });
                        }
                        None => self.send(Response::new_err(
                            id,
                            ErrorCode::InvalidParams as i32,
                            format!("{SHOW_SETTINGS} takes a file URI or an absolute path"),
                        )),
                    }
                }
                Ok(params) => self.send(Response::new_err(
                    id,
                    ErrorCode::InvalidParams as i32,
                    format!("unknown command `{}`", params.command),
                )),
                Err(error) => self.send(invalid(error)),
            },
            _ => {
                self.send(Response::new_err(id, ErrorCode::MethodNotFound as i32, format!("unknown method `{method}`")))
            }
        }
    }

    /// Whether the document `uri` belongs to is a file whose current version is not linted yet. It will
    /// be: every change schedules its root, and every lint answers each version it was given.
    fn waits_for_lint(&self, uri: &Uri) -> bool {
        let Some(owner) = self.documents.owner(uri) else { return false };
        self.roots.contains_key(&owner) && self.current(&owner).is_none()
    }

    fn hover(&self, id: RequestId, params: HoverParams) {
        let position = params.text_document_position_params;
        let uri = position.text_document.uri;
        let hover = self
            .documents
            .owner(&uri)
            .and_then(|owner| self.current(&owner))
            .and_then(|linted| crate::hover::hover(linted, &uri, position.position));
        self.send(Response::new_ok(id, hover));
    }

    fn code_actions(&mut self, id: RequestId, params: CodeActionParams) {
        let uri = params.text_document.uri;
        let only = params.context.only.as_deref();
        let Some(owner) = self.documents.owner(&uri) else {
            self.send(Response::new_ok(id, Vec::<CodeActionOrCommand>::new()));
            return;
        };
        // Quick fixes come from the findings of the current version; none while it is being linted.
        let current = self.current(&owner);
        let actions: Vec<CodeActionOrCommand> = match current {
            Some(linted) => {
                let allowed = if linted.unsafe_fixes { Applicability::Unsafe } else { Applicability::Safe };
                let kind = self.snapshot(&owner).map_or(FileKind::Python, |snapshot| snapshot.kind);
                code_actions::for_range(linted, kind, &uri, params.range, allowed, only)
                    .into_iter()
                    .map(CodeActionOrCommand::CodeAction)
                    .collect()
            }
            None => Vec::new(),
        };
        // "Fix all" runs the fix engine on the text as it is now (an editor asks for it on save, right
        // after the last change): when asked for or offered with the rest, unless the findings of the
        // current version show nothing fixable. The settings' own `unsafe-fixes` is read on the worker.
        let fixable = current
            .is_none_or(|linted| linted.diagnostics.iter().any(|diagnostic| diagnostic.fixable(Applicability::Unsafe)));
        let fix_all = code_actions::wanted(only, &lsp_types::CodeActionKind::from(FIX_ALL)) && fixable;
        match (fix_all, self.snapshot(&owner), self.roots.get(&owner).cloned()) {
            (true, Some(snapshot), Some(root)) if snapshot.cells.is_none() => {
                let open = self.snapshots(&root);
                let _ = self.tasks.send(Task::FixAll { id, snapshot, open, root, actions });
            }
            _ => self.send(Response::new_ok(id, actions)),
        }
    }
}
