//! `path:row:col: CODE message`, one line per finding.

use std::fmt::Write;

use crate::diagnostic::Diagnostic;

/// Renders one line per diagnostic.
pub fn render(diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        let start = diagnostic.start();
        let _ = writeln!(
            out,
            "{}:{}:{}: {} {}",
            diagnostic.file.display_name(),
            start.row,
            start.column,
            diagnostic.rule().code(),
            diagnostic.finding.message
        );
    }
    out
}
