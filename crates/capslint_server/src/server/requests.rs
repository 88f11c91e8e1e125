//! The client's requests: pulled diagnostic reports, code actions, hover and the `capslint.showSettings`
//! command; an unknown method is answered with `MethodNotFound`, bad parameters with `InvalidParams`.

use std::path::PathBuf;

use lsp_server::{ErrorCode, Request, RequestId, Response};
use lsp_types::request::Request as _;
use lsp_types::{
    CodeActionOrCommand, CodeActionParams, DocumentDiagnosticParams, ExecuteCommandParams, HoverParams, Uri, request,
};

use capslint_diagnostics::fix::Applicability;
use capslint_workspace::discover::FileKind;

use super::{Deferred, SHOW_SETTINGS, Server};
use crate::code_actions::{self, FIX_ALL};
use crate::worker::Task;

impl Server<'_> {
    /// The full report of a client document, `None` while it waits for a lint.
    pub(super) fn document_report(&self, uri: &Uri) -> Option<serde_json::Value> {
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

    /// The full report of every open document, and of the files their lints found findings in.
    pub(super) fn workspace_report(&self) -> serde_json::Value {
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

    /// Answers a request: at once, once its document is linted, or on the worker.
    pub(super) fn request(&mut self, request: Request) {
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
    pub(super) fn waits_for_lint(&self, uri: &Uri) -> bool {
        let Some(owner) = self.documents.owner(uri) else { return false };
        self.roots.contains_key(&owner) && self.current(&owner).is_none()
    }

    /// The hover of a finding under the cursor.
    pub(super) fn hover(&self, id: RequestId, params: HoverParams) {
        let position = params.text_document_position_params;
        let uri = position.text_document.uri;
        let hover = self
            .documents
            .owner(&uri)
            .and_then(|owner| self.current(&owner))
            .and_then(|linted| crate::hover::hover(linted, &uri, position.position));
        self.send(Response::new_ok(id, hover));
    }

    /// The code actions at a range, "fix all" computed on the worker.
    pub(super) fn code_actions(&mut self, id: RequestId, params: CodeActionParams) {
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
