//! A JSON array with ruff's schema: `code`, `message`, `filename`, `location`, `end_location`, `url`,
//! `fix`, `noqa_row` (rows and columns 1-based), so tools that read ruff's JSON read ours. In a notebook,
//! `cell` is the cell's 1-based position and the rows and columns are within that cell, as ruff emits
//! them. A finding in a file with syntax errors (on a statement the parser recovered cleanly) also has
//! `"in_file_with_syntax_errors": true`; the key is absent otherwise.

use serde::Serialize;

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fix::Fix;
use capslint_diagnostics::source::Location;

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

/// A fix in ruff's schema: `applicability`, `edits` (`content`, `end_location`, `location`), `message`.
#[derive(Serialize)]
pub(super) struct JsonFix<'a> {
    applicability: &'static str,
    edits: Vec<JsonEdit<'a>>,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    content: &'a str,
    end_location: JsonLocation,
    location: JsonLocation,
}

impl<'a> JsonFix<'a> {
    fn new(diagnostic: &'a Diagnostic, fix: &'a Fix) -> Self {
        let file = &diagnostic.file;
        let place = |offset| file.cell_location(offset).map_or_else(|| file.location(offset), |place| place.location);
        JsonFix {
            applicability: fix.applicability.as_str(),
            edits: fix
                .edits
                .iter()
                .map(|edit| JsonEdit {
                    content: &edit.content,
                    end_location: place(edit.range.end()).into(),
                    location: place(edit.range.start()).into(),
                })
                .collect(),
            message: &fix.message,
        }
    }
}

/// One diagnostic in ruff's JSON schema (keys in ruff's order).
#[derive(Serialize)]
pub(super) struct JsonDiagnostic<'a> {
    cell: Option<usize>,
    code: &'static str,
    end_location: JsonLocation,
    filename: &'a str,
    fix: Option<JsonFix<'a>>,
    /// Only written when true: a file that parses (almost every file) keeps ruff's schema exactly.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    in_file_with_syntax_errors: bool,
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
            fix: diagnostic.finding.fix.as_ref().map(|fix| JsonFix::new(diagnostic, fix)),
            in_file_with_syntax_errors: diagnostic.finding.in_file_with_syntax_errors,
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
