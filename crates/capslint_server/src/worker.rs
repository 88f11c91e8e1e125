//! The worker thread: lints, fixes and resolves settings off the connection loop, one task at a time, so
//! the loop keeps reading the client's messages while a lint runs. A lint job for a project root that a
//! newer job has superseded is dropped before it starts ([`Generations`]); requests it answers itself
//! (fix all, show settings) go straight to the client. A panic in a task is contained to that task.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{ErrorCode, Message, RequestId, Response};
use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, TextEdit, WorkspaceEdit};

use capslint_diagnostics::fix::Applicability;
use capslint_workspace::config::ConfigFile;
use capslint_workspace::settings::Settings;

use crate::code_actions::{FIX_ALL, fixed_text, minimal_edit};
use crate::lint::{LintJob, LintOutcome, Snapshot, lint};
use crate::position::Encoding;
use crate::settings::{ClientOptions, SessionSettings};

/// Renders a file's resolved settings as `capslint config` prints them: the file, the configuration
/// file that applies (if any), the settings, and the directory names are relative to.
pub type RenderSettings = fn(&Path, Option<&ConfigFile>, &Settings, &Path) -> String;

/// The latest generation of each project root's lint.
#[derive(Debug, Default, Clone)]
pub struct Generations(Arc<Mutex<HashMap<PathBuf, u64>>>);

impl Generations {
    /// A new generation for `root`, newer than every job made so far.
    pub fn next(&self, root: &Path) -> u64 {
        let mut map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let generation = map.entry(root.to_path_buf()).or_default();
        *generation += 1;
        *generation
    }

    /// Whether a newer job than `generation` was made for `root`.
    fn superseded(&self, root: &Path, generation: u64) -> bool {
        let map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(root).is_some_and(|latest| *latest > generation)
    }
}

/// What the worker does.
pub enum Task {
    /// Lint the open documents of a root.
    Lint(LintJob),
    /// Answer a code action request: the quick fixes already found, and "fix all" computed here.
    FixAll {
        /// The request.
        id: RequestId,
        /// The document to fix.
        snapshot: Snapshot,
        /// Every open document of its root (the cross-file readers see their unsaved text).
        open: Vec<Snapshot>,
        /// Its project root.
        root: PathBuf,
        /// The actions found so far.
        actions: Vec<CodeActionOrCommand>,
    },
    /// Answer `capslint.showSettings` for a file.
    ShowSettings {
        /// The request.
        id: RequestId,
        /// The file.
        path: PathBuf,
    },
    /// A configuration file changed: resolve settings anew.
    Invalidate,
}

/// Starts the worker. Lint outcomes go to `outcomes`, responses to `client`.
pub fn spawn(
    client: Sender<Message>,
    outcomes: Sender<LintOutcome>,
    generations: Generations,
    options: ClientOptions,
    encoding: Encoding,
    render: RenderSettings,
) -> (Sender<Task>, std::thread::JoinHandle<()>) {
    let (sender, receiver) = crossbeam_channel::unbounded();
    let handle = std::thread::Builder::new()
        .name("capslint-worker".into())
        .spawn(move || {
            // Deep stacks, as the command line's pool has: deeply nested input is parsed and walked.
            const STACK_BYTES: usize = 256 * 1024 * 1024;
            let state = WorkerState {
                client,
                outcomes,
                generations,
                settings: SessionSettings::new(options),
                encoding,
                render,
            };
            match rayon::ThreadPoolBuilder::new().stack_size(STACK_BYTES).build() {
                Ok(pool) => pool.install(|| state.run(&receiver)),
                Err(_) => state.run(&receiver),
            }
        })
        .expect("the worker thread starts");
    (sender, handle)
}

struct WorkerState {
    client: Sender<Message>,
    outcomes: Sender<LintOutcome>,
    generations: Generations,
    settings: SessionSettings,
    encoding: Encoding,
    render: RenderSettings,
}

impl WorkerState {
    fn run(mut self, tasks: &Receiver<Task>) {
        while let Ok(task) = tasks.recv() {
            match task {
                Task::Lint(job) => {
                    if self.generations.superseded(&job.root, job.generation) {
                        continue;
                    }
                    let (root, generation) = (job.root.clone(), job.generation);
                    let documents = job.documents.clone();
                    let outcome = catch_unwind(AssertUnwindSafe(|| lint(job, &mut self.settings, self.encoding)))
                        .unwrap_or_else(|panic| LintOutcome {
                            root,
                            generation,
                            // Each document's version is answered, with nothing found, so no request waits.
                            documents: documents
                                .iter()
                                .map(|snapshot| crate::lint::linted(snapshot, Vec::new(), self.encoding, false))
                                .collect(),
                            elsewhere: Vec::new(),
                            errors: vec![format!(
                                "internal error while linting {} document(s): {}",
                                documents.len(),
                                capslint_diagnostics::contain::panic_reason(&*panic)
                            )],
                        });
                    if self.outcomes.send(outcome).is_err() {
                        return;
                    }
                }
                Task::FixAll { id, snapshot, open, root, actions } => {
                    let response = catch_unwind(AssertUnwindSafe(|| self.fix_all(&snapshot, &open, &root, actions)));
                    self.respond(id, response.map_err(|_| "internal error while fixing".to_string()).and_then(|r| r));
                }
                Task::ShowSettings { id, path } => {
                    let response = catch_unwind(AssertUnwindSafe(|| self.show_settings(&path)));
                    self.respond(id, response.map_err(|_| "internal error".to_string()).and_then(|r| r));
                }
                Task::Invalidate => self.settings.invalidate(),
            }
        }
    }

    fn respond(&self, id: RequestId, result: Result<serde_json::Value, String>) {
        let response = match result {
            Ok(value) => Response::new_ok(id, value),
            Err(message) => Response::new_err(id, ErrorCode::InternalError as i32, message),
        };
        let _ = self.client.send(Message::Response(response));
    }

    fn fix_all(
        &mut self,
        snapshot: &Snapshot,
        open: &[Snapshot],
        root: &Path,
        mut actions: Vec<CodeActionOrCommand>,
    ) -> Result<serde_json::Value, String> {
        let settings = self.settings.for_file(root, &snapshot.path)?;
        let allowed = if settings.unsafe_fixes { Applicability::Unsafe } else { Applicability::Safe };
        if let Some(fixed) = fixed_text(snapshot, open, root, settings, allowed) {
            let edit: TextEdit = minimal_edit(&snapshot.contents, &fixed, self.encoding);
            let changes = std::collections::HashMap::from([(snapshot.uri.clone(), vec![edit])]);
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "capslint: fix all safe findings".to_string(),
                kind: Some(CodeActionKind::from(FIX_ALL)),
                edit: Some(WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() }),
                ..CodeAction::default()
            }));
        }
        serde_json::to_value(actions).map_err(|error| error.to_string())
    }

    fn show_settings(&mut self, path: &Path) -> Result<serde_json::Value, String> {
        let root = SessionSettings::root_of(path);
        self.settings.refresh(&root);
        let settings = self.settings.for_file(&root, path)?;
        let config = SessionSettings::config_file(path)?;
        let rules: Vec<&str> = settings.rules_for(path).iter().map(|rule| rule.code()).collect();
        let rendered = (self.render)(path, config.as_ref(), &settings, &root);
        Ok(serde_json::json!({
            "file": path,
            "root": root,
            "configuration": config.as_ref().map(|config| &config.path),
            "rules": rules,
            "unsafeFixes": settings.unsafe_fixes,
            "settings": rendered,
        }))
    }
}
