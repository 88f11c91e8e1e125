//! The graphical report, rendered by miette with an explicitly built handler (theme, width, links as
//! text) so the output is the same in a terminal, a pipe and a snapshot. Locations in other files
//! (`Finding::related`) are rendered as related diagnostics, each with its own source. miette reads each
//! file through an [`Excerpt`]: only the rows the report shows, so rendering is linear in the number of
//! findings, and long rows are cut around the span. File names, messages and source text are made inert
//! for the terminal. In a notebook, the excerpt is the cell's (`path:cell N:row:col`, rows numbered within
//! the cell); a label in another cell is rendered as a related diagnostic with its own cell.

use std::borrow::Cow;
use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceCode};
use rayon::prelude::*;
use ruff_text_size::TextRange;

use super::Style;
use super::excerpt::{CONTEXT_LINES, Excerpt};
use super::terminal;
use capslint_diagnostics::diagnostic::{Diagnostic, Label};
use capslint_diagnostics::fix::{Applicability, Fix};
use capslint_diagnostics::registry::Severity;

/// One diagnostic seen through miette's eyes.
struct MietteView<'a> {
    diagnostic: &'a Diagnostic,
    message: Cow<'a, str>,
    help: Option<Cow<'a, str>>,
    /// Whether the finding is marked fixable (`CODE [*]`).
    fixable: bool,
    source: Excerpt<'a>,
    /// The secondary labels drawn in `source` (in a notebook, those in the primary span's cell).
    secondary: Vec<&'a Label>,
    related: Vec<RelatedView<'a>>,
}

/// A location elsewhere (another file, another cell of a notebook) that contributes to a diagnostic.
struct RelatedView<'a> {
    range: TextRange,
    text: Cow<'a, str>,
    source: Excerpt<'a>,
}

impl fmt::Debug for RelatedView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for RelatedView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for RelatedView<'_> {}

impl miette::Diagnostic for RelatedView<'_> {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Advice)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let label = LabeledSpan::new_primary_with_span(Some("here".to_string()), self.source.span(self.range));
        Some(Box::new(std::iter::once(label)))
    }
}

impl fmt::Debug for MietteView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for MietteView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MietteView<'_> {}

impl miette::Diagnostic for MietteView<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let code = self.diagnostic.rule().code();
        Some(if self.fixable { Box::new(format!("{code} [*]")) } else { Box::new(code) })
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }

    fn url<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.diagnostic.rule().url()))
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let finding = &self.diagnostic.finding;
        let label = (!finding.label.is_empty()).then(|| terminal::escape_name(&finding.label).into_owned());
        let primary = LabeledSpan::new_primary_with_span(label, self.source.span(finding.range));
        let secondary = self.secondary.iter().map(|label| {
            LabeledSpan::new_with_span(
                Some(terminal::escape_name(&label.text).into_owned()),
                self.source.span(label.range),
            )
        });
        Some(Box::new(std::iter::once(primary).chain(secondary)))
    }

    fn related<'b>(&'b self) -> Option<Box<dyn Iterator<Item = &'b dyn miette::Diagnostic> + 'b>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(self.related.iter().map(|related| related as &dyn miette::Diagnostic)))
    }
}

/// The diagnostic with every file it shows cut to an excerpt.
fn view(diagnostic: &Diagnostic, fixable: Applicability) -> MietteView<'_> {
    let finding = &diagnostic.finding;
    let file = &diagnostic.file;
    let cell_of = |range: TextRange| file.cells().and_then(|cells| cells.cell_number(range.start()));
    let (secondary, elsewhere): (Vec<&Label>, Vec<&Label>) =
        finding.secondary.iter().partition(|label| cell_of(label.range) == cell_of(finding.range));
    let ranges: Vec<_> = std::iter::once(finding.range).chain(secondary.iter().map(|label| label.range)).collect();
    let in_other_cells = elsewhere.into_iter().map(|label| RelatedView {
        range: label.range,
        text: terminal::escape_text(&label.text),
        source: Excerpt::new(file, file.display_name(), &[label.range]),
    });
    let in_other_files = finding.related.iter().map(|related| RelatedView {
        range: related.range,
        text: terminal::escape_text(&related.text),
        source: Excerpt::new(&related.file, related.file.display_name(), &[related.range]),
    });
    MietteView {
        diagnostic,
        message: terminal::escape_text(&finding.message),
        help: help_with_fix(finding.help.as_deref(), finding.fix.as_ref()),
        fixable: diagnostic.fixable(fixable),
        source: Excerpt::new(file, file.display_name(), &ranges),
        secondary,
        related: in_other_cells.chain(in_other_files).collect(),
    }
}

/// The help line, then the fix's message with what applies it (`fix: ...`, `unsafe fix: ...`,
/// `suggested fix: ...` for a display-only one).
fn help_with_fix<'a>(help: Option<&'a str>, fix: Option<&'a Fix>) -> Option<Cow<'a, str>> {
    let Some(fix) = fix else { return help.map(terminal::escape_text) };
    let kind = match fix.applicability {
        Applicability::Safe => "fix",
        Applicability::Unsafe => "unsafe fix (--unsafe-fixes)",
        Applicability::DisplayOnly => "suggested fix (not applied)",
    };
    let line = format!("{kind}: {}", terminal::escape_text(&fix.message));
    Some(Cow::Owned(match help {
        Some(help) => format!("{}\n{line}", terminal::escape_text(help)),
        None => line,
    }))
}

/// Renders every diagnostic, separated by blank lines.
pub fn render(diagnostics: &[Diagnostic], style: Style) -> String {
    let theme = if style.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_links(false)
        .with_width(style.width)
        .with_context_lines(CONTEXT_LINES);
    // Each report is independent: render them in parallel, then join them in order.
    let reports: Vec<String> = diagnostics
        .par_iter()
        .map(|diagnostic| {
            let view = view(diagnostic, style.fixable);
            let mut out = String::new();
            if handler.render_report(&mut out, &view).is_err() {
                out = format!("{}: {}\n", diagnostic.rule().code(), view.message);
            }
            out.push('\n');
            out
        })
        .collect();
    reports.concat()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use ruff_text_size::TextSize;

    use super::*;
    use capslint_diagnostics::diagnostic::Finding;
    use capslint_diagnostics::registry::Rule;
    use capslint_diagnostics::source::SourceFile;

    #[test]
    fn a_label_in_another_cell_is_shown_with_its_cell() {
        let raw = r#"{"cells": [{"cell_type": "code", "source": "import numpy\n"},
            {"cell_type": "markdown", "source": "text"},
            {"cell_type": "code", "source": "import os\nos.environ['OMP_NUM_THREADS'] = '1'"}]}"#;
        let module = capslint_python::notebook::read(raw).unwrap();
        let text = module.text.clone();
        let file =
            Arc::new(SourceFile::new(PathBuf::from("a.ipynb"), "a.ipynb".into(), module.text).with_cells(module.cells));
        let at = |needle: &str, len: usize| {
            TextRange::at(TextSize::try_from(text.find(needle).unwrap()).unwrap(), TextSize::try_from(len).unwrap())
        };
        let finding = Finding::new(Rule::LateThreadCap, at("os.environ", 10), "late")
            .label("set here")
            .secondary(at("import numpy", 12), "imported here")
            .secondary(at("import os", 9), "os");
        let diagnostic = Diagnostic { finding, file, severity: Severity::Error };
        let out = render(&[diagnostic], super::super::Style::PLAIN);
        assert!(out.contains("╭─[a.ipynb:cell 3:2:1]"), "{out}");
        assert!(out.contains("╭─[a.ipynb:cell 1:1:1]"), "{out}");
        assert!(out.contains(" 1 │ import os"), "{out}");
        assert!(out.contains("imported here"), "{out}");
    }
}
