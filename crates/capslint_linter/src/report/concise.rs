//! `path:row:col: CODE message`, one line per finding (`path:cell N:row:col: CODE message` in a
//! notebook, as ruff writes it): control characters in the path or the message are escaped, so each
//! finding stays one line and nothing reaches the terminal raw.

use std::fmt::Write;

use super::Style;
use super::terminal::escape_name;
use capslint_diagnostics::diagnostic::Diagnostic;

/// Renders one line per diagnostic; `[*]` after the code marks a finding `--fix` would fix.
pub fn render(diagnostics: &[Diagnostic], style: Style) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        let _ = writeln!(
            out,
            "{}: {}{} {}",
            super::concise_location(diagnostic, &escape_name(diagnostic.file.display_name())),
            diagnostic.rule().code(),
            if diagnostic.fixable(style.fixable) { " [*]" } else { "" },
            escape_name(&diagnostic.finding.message)
        );
    }
    out
}
