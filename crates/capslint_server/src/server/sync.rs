//! The client's notifications: the documents and notebooks kept in step with the editor (open, change,
//! save, close), watched files, and `$/cancelRequest`. Each change schedules a lint of its document's
//! project root.

use std::time::Instant;

use lsp_server::{ErrorCode, Notification, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::{
    DidChangeNotebookDocumentParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidCloseNotebookDocumentParams, DidCloseTextDocumentParams, DidOpenNotebookDocumentParams,
    DidOpenTextDocumentParams, Uri, notification,
};

use super::{DEBOUNCE, Server};
use crate::documents::{Cell, CellChanges, DocumentStore};
use crate::worker::Task;

impl Server<'_> {
    /// Handles a notification; one that is unknown or malformed is ignored, as the protocol says.
    pub(super) fn notification(&mut self, notification: Notification) {
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
}
