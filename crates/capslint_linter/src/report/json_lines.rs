//! One JSON object per line (JSON Lines), with the fields of the `json` format: a stream that `jq -c`
//! and log shippers read one finding at a time.

use std::fmt::Write;

use super::json::JsonDiagnostic;
use capslint_diagnostics::diagnostic::Diagnostic;

/// Renders one compact JSON object per diagnostic, each on its own line.
pub fn render(diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        let line = serde_json::to_string(&JsonDiagnostic::new(diagnostic)).expect("diagnostics serialize");
        let _ = writeln!(out, "{line}");
    }
    out
}
