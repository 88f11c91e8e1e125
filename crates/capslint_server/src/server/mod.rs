//! The connection loop: reads the client's messages, keeps the documents in step, schedules lints
//! (debounced, every open document of the changed document's project root) on the worker, and answers
//! requests from the latest findings. Diagnostics are pulled (`textDocument/diagnostic`,
//! `workspace/diagnostic`) when the client can pull them, else pushed (`publishDiagnostics`). A finding
//! linted from an old version of a document is dropped. Nothing the client sends stops the loop but
//! `exit` or the end of its input. What each notification does is in `sync`, what each request
//! answers in `requests`.

mod requests;
mod sync;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{CodeActionParams, HoverParams, Uri, notification, request};

use capslint_workspace::discover::FileKind;

use crate::documents::DocumentStore;
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
}
