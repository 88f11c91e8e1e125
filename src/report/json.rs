//! A JSON array with ruff's schema: `code`, `message`, `filename`, `location`, `end_location`, `url`,
//! `fix`, `noqa_row` (rows and columns 1-based), so tools that read ruff's JSON read ours. In a notebook,
//! `cell` is the cell's 1-based position and the rows and columns are within that cell, as ruff emits
//! them.

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::source::Location;

/// A location with ruff's key order (`column`, then `row`).
#[derive(Serialize)]
struct JsonLocation {
    column: usize,
    row: usize,
}

impl From<Location> for JsonLocation {
    fn from(location: Location) -> Self {
        JsonLocation { column: location.column, row: location.row }
    }
}

/// One diagnostic in ruff's JSON schema (keys in ruff's order).
#[derive(Serialize)]
pub(super) struct JsonDiagnostic<'a> {
    cell: Option<usize>,
    code: &'static str,
    end_location: JsonLocation,
    filename: &'a str,
    fix: Option<()>,
    location: JsonLocation,
    message: &'a str,
    noqa_row: usize,
    url: String,
}

impl<'a> JsonDiagnostic<'a> {
    /// The JSON view of `diagnostic`.
    pub(super) fn new(diagnostic: &'a Diagnostic) -> Self {
        let location = diagnostic.shown_start();
        JsonDiagnostic {
            cell: diagnostic.cell(),
            code: diagnostic.rule().code(),
            end_location: diagnostic.shown_end().into(),
            filename: diagnostic.file.display_name(),
            fix: None,
            location: location.into(),
            message: &diagnostic.finding.message,
            noqa_row: location.row,
            url: diagnostic.rule().url(),
        }
    }
}

/// Renders the diagnostics as a pretty-printed JSON array.
pub fn render(diagnostics: &[Diagnostic]) -> String {
    let items: Vec<JsonDiagnostic<'_>> = diagnostics.iter().map(JsonDiagnostic::new).collect();
    let mut out = serde_json::to_string_pretty(&items).expect("diagnostics serialize");
    out.push('\n');
    out
}
