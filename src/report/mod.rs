//! Report formats, all rendered from the same diagnostics.

mod concise;
mod full;
mod json;

use crate::diagnostic::Diagnostic;

/// The output formats of `capslint check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A graphical report: the source line, an underline on the offending expression, label, help, code and link.
    Full,
    /// One line per finding: `path:row:col: CODE message`.
    Concise,
    /// A JSON array with ruff's schema.
    Json,
}

/// How the human formats look.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Whether ANSI colors are used.
    pub color: bool,
    /// The width of the graphical report.
    pub width: usize,
}

impl Style {
    /// No color, a fixed width: stable output for files, pipes and tests.
    pub const PLAIN: Style = Style { color: false, width: 100 };
}

/// Renders `diagnostics` in `format`.
pub fn render(format: OutputFormat, diagnostics: &[Diagnostic], style: Style) -> String {
    match format {
        OutputFormat::Full => full::render(diagnostics, style),
        OutputFormat::Concise => concise::render(diagnostics),
        OutputFormat::Json => json::render(diagnostics),
    }
}
