//! Report formats, all rendered from the same diagnostics: one module per format.

mod concise;
mod excerpt;
mod full;
mod github;
mod gitlab;
mod json;
mod json_lines;
mod junit;
mod sarif;
pub mod statistics;
pub mod terminal;

use std::path::PathBuf;

use ruff_text_size::TextSize;

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fix::Applicability;
use capslint_diagnostics::source::SourceFile;

/// The output formats of `capslint check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A graphical report: the source line, an underline on the offending expression, label, help, code and link.
    Full,
    /// One line per finding: `path:row:col: CODE message`.
    Concise,
    /// A JSON array with ruff's schema.
    Json,
    /// One JSON object per line, with the fields of `json`.
    JsonLines,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitHub Actions workflow commands: annotations on the pull request's diff.
    Github,
    /// GitLab Code Quality JSON.
    Gitlab,
    /// JUnit XML: one test suite per file, one failing test case per finding.
    Junit,
}

/// How the human formats look.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Whether ANSI colors are used.
    pub color: bool,
    /// The width of the graphical report.
    pub width: usize,
    /// Findings whose fix is this safe or safer are marked fixable (`[*]`): what `--fix` would apply.
    pub fixable: Applicability,
}

impl Style {
    /// No color, a fixed width, safe fixes marked: stable output for files, pipes and tests.
    pub const PLAIN: Style = Style { color: false, width: 100, fixable: Applicability::Safe };
}

/// Everything a format needs besides the diagnostics: the look of the human formats, and the
/// directories that paths are made relative to for the CI systems.
#[derive(Debug, Clone)]
pub struct ReportContext {
    /// How the human formats look.
    pub style: Style,
    /// The directory the run started in: relative paths of checked files are relative to it.
    pub cwd: PathBuf,
    /// The repository root for `github` and `sarif` (`$GITHUB_WORKSPACE`); the working directory when unset.
    pub github_workspace: Option<PathBuf>,
    /// The project root for `gitlab` (`$CI_PROJECT_DIR`); the working directory when unset.
    pub gitlab_project_dir: Option<PathBuf>,
}

impl ReportContext {
    /// A context that reads no environment: paths relative to `cwd`.
    pub fn new(style: Style, cwd: PathBuf) -> Self {
        ReportContext { style, cwd, github_workspace: None, gitlab_project_dir: None }
    }

    /// A context with the CI roots taken from `$GITHUB_WORKSPACE` and `$CI_PROJECT_DIR` (when set and not empty).
    pub fn from_env(style: Style, cwd: PathBuf) -> Self {
        let directory = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
        ReportContext {
            github_workspace: directory("GITHUB_WORKSPACE"),
            gitlab_project_dir: directory("CI_PROJECT_DIR"),
            ..ReportContext::new(style, cwd)
        }
    }
}

/// `cell N, line R: ` for a place in a notebook, empty elsewhere: the formats whose regions point into
/// the notebook's JSON (SARIF, GitLab, JUnit) put it before the message, so the reader finds the cell.
fn cell_prefix(file: &SourceFile, offset: TextSize) -> String {
    file.cell_location(offset)
        .map(|place| format!("cell {}, line {}: ", place.cell, place.location.row))
        .unwrap_or_default()
}

/// `path:row:col` of a finding as the concise format writes it: `path:cell N:row:col` in a notebook,
/// with the row and column within the cell.
fn concise_location(diagnostic: &Diagnostic, path: &str) -> String {
    let start = diagnostic.shown_start();
    match diagnostic.cell() {
        Some(cell) => format!("{path}:cell {cell}:{}:{}", start.row, start.column),
        None => format!("{path}:{}:{}", start.row, start.column),
    }
}

/// Renders `diagnostics` in `format`, with paths relative to the working directory.
pub fn render(format: OutputFormat, diagnostics: &[Diagnostic], style: Style) -> String {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    render_with(format, diagnostics, &ReportContext::new(style, cwd))
}

/// Renders `diagnostics` in `format` within `context`.
pub fn render_with(format: OutputFormat, diagnostics: &[Diagnostic], context: &ReportContext) -> String {
    match format {
        OutputFormat::Full => full::render(diagnostics, context.style),
        OutputFormat::Concise => concise::render(diagnostics, context.style),
        OutputFormat::Json => json::render(diagnostics),
        OutputFormat::JsonLines => json_lines::render(diagnostics),
        OutputFormat::Sarif => sarif::render(diagnostics, context),
        OutputFormat::Github => github::render(diagnostics, context),
        OutputFormat::Gitlab => gitlab::render(diagnostics, context),
        OutputFormat::Junit => junit::render(diagnostics),
    }
}
