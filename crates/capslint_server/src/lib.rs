//! capslint's language server (`capslint server`): the findings of `check` in the editor, on the text
//! as it is typed. Built on `lsp-server` and `lsp-types` (synchronous, channels, no async runtime).
//!
//! - [`server`]: the connection loop: documents kept in step, lints scheduled and stale results
//!   dropped, requests answered;
//! - [`documents`]: the open text documents and notebooks, with their versions;
//! - [`settings`]: the settings each file is linted with, reloaded when a configuration changes;
//! - [`lint`] and [`worker`]: linting the unsaved text through `check`'s pipeline, off the loop;
//! - [`diagnostics`], [`code_actions`], [`hover`]: findings as the protocol shows them, their fixes and
//!   suppressions, the rule's documentation;
//! - [`position`] and [`uri`]: positions and file URIs as the protocol writes them;
//! - [`transport`]: the framing on standard input and output.
//!
//! It sits above `capslint_linter` and below the binary, which alone depends on it.

// `lsp_types::Uri` hashes and compares by its text alone; clippy sees the parser's cells inside it.
#![allow(clippy::mutable_key_type)]

pub mod code_actions;
pub mod diagnostics;
pub mod documents;
pub mod hover;
pub mod lint;
pub mod position;
pub mod server;
pub mod settings;
pub mod transport;
pub mod uri;
pub mod worker;

use lsp_server::Connection;
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, DiagnosticOptions, DiagnosticServerCapabilities,
    ExecuteCommandOptions, HoverProviderCapability, Notebook, NotebookCellSelector, NotebookDocumentFilter,
    NotebookDocumentSyncOptions, NotebookSelector, OneOf, PositionEncodingKind, SaveOptions, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
};

use crate::position::Encoding;
use crate::server::{ClientCapabilities, Ending, SHOW_SETTINGS, Server};
use crate::settings::ClientOptions;
pub use crate::worker::RenderSettings;

/// How the server ended, for the exit code: `Ok` after `shutdown` and `exit` or when the client went
/// away; an error for a protocol failure or `exit` without `shutdown`.
pub type Outcome = Result<(), String>;

/// Serves one client over standard input and output until it exits or disconnects. `render` prints a
/// file's resolved settings for `capslint.showSettings`.
pub fn run_stdio(render: RenderSettings) -> Outcome {
    let (connection, _reader, writer) = transport::stdio();
    let ending = serve(&connection, render)?;
    // The responses sent so far are written before the process ends: the writer ends once the loop's
    // sender is gone and the worker, idle after `shutdown`, has dropped its own.
    drop(connection);
    if ending != Ending::Disconnected {
        let _ = writer.join();
    }
    match ending {
        Ending::Exit | Ending::Disconnected => Ok(()),
        Ending::ExitWithoutShutdown => Err("exit without shutdown".to_string()),
    }
}

/// Runs the initialization handshake and the connection loop on `connection`.
pub fn serve(connection: &Connection, render: RenderSettings) -> Result<Ending, String> {
    let (id, params) = match connection.initialize_start() {
        Ok(start) => start,
        // The client went away before initializing: nothing to serve.
        Err(error) if error.to_string().contains("disconnected") => return Ok(Ending::Disconnected),
        Err(error) => return Err(error.to_string()),
    };
    let encoding = negotiated_encoding(&params);
    let capabilities = client_capabilities(&params);
    let options = ClientOptions::from_initialization(params.get("initializationOptions"));
    let result = serde_json::json!({
        "capabilities": server_capabilities(encoding, capabilities.pull),
        "serverInfo": {"name": "capslint", "version": env!("CARGO_PKG_VERSION")},
    });
    // The `initialized` notification that should follow is not waited for: a client that sends its
    // documents without it is served all the same (the loop ignores the notification).
    let response = lsp_server::Response::new_ok(id, result);
    if connection.sender.send(lsp_server::Message::Response(response)).is_err() {
        return Ok(Ending::Disconnected);
    }
    let generations = worker::Generations::default();
    let (outcome_sender, outcomes) = crossbeam_channel::unbounded();
    let (tasks, _worker) = worker::spawn(
        connection.sender.clone(),
        outcome_sender,
        generations.clone(),
        options.clone(),
        encoding,
        render,
    );
    let mut server = Server::new(connection, encoding, capabilities, generations, tasks, outcomes);
    server.register_watchers();
    Ok(server.run())
}

/// UTF-8 when the client offers it (no conversion), else UTF-16, the protocol's default.
fn negotiated_encoding(params: &serde_json::Value) -> Encoding {
    let offered = params.pointer("/capabilities/general/positionEncodings").and_then(|list| list.as_array());
    let offers = |name: &str| offered.is_some_and(|list| list.iter().any(|item| item.as_str() == Some(name)));
    if offers("utf-8") {
        Encoding::Utf8
    } else if offers("utf-16") || offered.is_none() {
        Encoding::Utf16
    } else if offers("utf-32") {
        Encoding::Utf32
    } else {
        Encoding::Utf16
    }
}

/// What the client's capabilities say, read leniently (a client that sends odd capabilities gets the
/// defaults).
fn client_capabilities(params: &serde_json::Value) -> ClientCapabilities {
    let flag = |pointer: &str| params.pointer(pointer).and_then(serde_json::Value::as_bool).unwrap_or(false);
    ClientCapabilities {
        pull: params.pointer("/capabilities/textDocument/diagnostic").is_some_and(serde_json::Value::is_object),
        refresh: flag("/capabilities/workspace/diagnostics/refreshSupport"),
        watch: flag("/capabilities/workspace/didChangeWatchedFiles/dynamicRegistration"),
    }
}

/// What the server offers.
fn server_capabilities(encoding: Encoding, pull: bool) -> ServerCapabilities {
    let position_encoding = match encoding {
        Encoding::Utf8 => PositionEncodingKind::UTF8,
        Encoding::Utf16 => PositionEncodingKind::UTF16,
        Encoding::Utf32 => PositionEncodingKind::UTF32,
    };
    ServerCapabilities {
        position_encoding: Some(position_encoding),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
            ..TextDocumentSyncOptions::default()
        })),
        notebook_document_sync: Some(OneOf::Left(NotebookDocumentSyncOptions {
            // Jupyter notebooks, by type and by name.
            notebook_selector: vec![
                NotebookSelector::ByCells {
                    notebook: Some(Notebook::String("jupyter-notebook".to_string())),
                    cells: vec![NotebookCellSelector { language: "python".to_string() }],
                },
                NotebookSelector::ByCells {
                    notebook: Some(Notebook::NotebookDocumentFilter(NotebookDocumentFilter::ByPattern {
                        notebook_type: None,
                        scheme: None,
                        pattern: "**/*.ipynb".to_string(),
                    })),
                    cells: vec![NotebookCellSelector { language: "python".to_string() }],
                },
            ],
            save: Some(true),
        })),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::SOURCE_FIX_ALL,
                CodeActionKind::from(code_actions::FIX_ALL),
            ]),
            ..CodeActionOptions::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        diagnostic_provider: pull.then(|| {
            DiagnosticServerCapabilities::Options(DiagnosticOptions {
                identifier: Some(diagnostics::SOURCE.to_string()),
                inter_file_dependencies: true,
                workspace_diagnostics: true,
                ..DiagnosticOptions::default()
            })
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![SHOW_SETTINGS.to_string()],
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}
