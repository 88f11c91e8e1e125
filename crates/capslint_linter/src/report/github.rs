//! GitHub Actions workflow commands: one `::error` or `::warning` line per finding, which the runner turns
//! into an annotation on the pull request's diff.
//!
//! The grammar is `::LEVEL key=value,key=value::DATA`. In DATA, `%`, `\r` and `\n` are percent-escaped; in
//! a property value, `:` and `,` are too. `col` and `endColumn` are given only when the finding starts and
//! ends on the same line, as GitHub ignores the annotation's columns otherwise. The message repeats
//! `path:row:col: CODE` because the log shows only the data, not the properties. Control characters in
//! paths and messages are escaped first, so none reaches the log raw.
//!
//! In a notebook, the properties point into its JSON (the line of the source string and the column of
//! the code as written there), which is the file the runner annotates, and the data starts as the
//! concise format does, with the cell: `path:cell N:row:col: CODE`.

use std::fmt::Write;

use super::ReportContext;
use super::terminal::escape_name;
use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::registry::Severity;
use capslint_diagnostics::source::Location;
use capslint_workspace::paths::project_path;

/// Escapes the data part of a workflow command.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Where the span ends, for an annotation whose `endLine` is the last line it covers: a span that ends
/// right after a line break (as YAML node spans do) ends at the end of the line before.
fn inclusive_end(diagnostic: &Diagnostic) -> Location {
    let (start, end) = (diagnostic.start(), diagnostic.end());
    if end.column > 1 || end.row <= start.row {
        return diagnostic.file_end();
    }
    let previous = diagnostic.file.line_range(end.row - 1);
    diagnostic.file.file_end_location(previous.end())
}

/// Renders one workflow command per diagnostic. Paths are relative to `$GITHUB_WORKSPACE` when the file
/// lies below it, which is how the runner maps an annotation to a file of the repository.
pub fn render(diagnostics: &[Diagnostic], context: &ReportContext) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        let path = escape_name(&project_path(&diagnostic.file, &context.cwd, context.github_workspace.as_deref()))
            .into_owned();
        let (start, end) = (diagnostic.file_start(), inclusive_end(diagnostic));
        let rule = diagnostic.rule();
        let level = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut properties = format!("file={},line={}", escape_property(&path), start.row);
        if start.row == end.row {
            let _ = write!(properties, ",col={},endLine={},endColumn={}", start.column, end.row, end.column);
        } else {
            let _ = write!(properties, ",endLine={}", end.row);
        }
        let _ = write!(properties, ",title={}", escape_property(&format!("{} {}", rule.code(), rule.name())));
        let message = escape_name(&diagnostic.finding.message);
        let mut data = format!("{}: {} {message}", super::concise_location(diagnostic, &path), rule.code());
        if let Some(help) = &diagnostic.finding.help {
            let _ = write!(data, "\nhelp: {}", escape_name(help));
        }
        let _ = writeln!(out, "::{level} {properties}::{}", escape_data(&data));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use ruff_text_size::{TextRange, TextSize};

    use super::*;
    use crate::report::Style;
    use capslint_diagnostics::diagnostic::Finding;
    use capslint_diagnostics::registry::Rule;
    use capslint_diagnostics::source::SourceFile;

    fn render_span(text: &str, start: u32, end: u32) -> String {
        let file = Arc::new(SourceFile::new("k8s/job.yaml".into(), "k8s/job.yaml".into(), text.to_string()));
        let range = TextRange::new(TextSize::from(start), TextSize::from(end));
        let diagnostic = Diagnostic {
            finding: Finding::new(Rule::NJobsAllCores, range, "100% wrong"),
            file,
            severity: Severity::Warning,
        };
        render(&[diagnostic], &ReportContext::new(Style::PLAIN, PathBuf::from("/repo")))
    }

    #[test]
    fn columns_only_for_spans_on_one_line() {
        let text = "a: 1\nb:\n  c: 2\n";
        assert_eq!(
            render_span(text, 5, 15),
            "::warning file=k8s/job.yaml,line=2,endLine=3,title=CAP101 n-jobs-all-cores::k8s/job.yaml:2:1: CAP101 \
             100%25 wrong\n"
        );
        assert_eq!(
            render_span(text, 0, 5),
            "::warning file=k8s/job.yaml,line=1,col=1,endLine=1,endColumn=5,title=CAP101 n-jobs-all-cores::\
             k8s/job.yaml:1:1: CAP101 100%25 wrong\n"
        );
    }

    #[test]
    fn escapes_data_and_properties() {
        assert_eq!(escape_data("100% a\r\nb: c, d"), "100%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
