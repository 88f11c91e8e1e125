//! The graphical report, rendered by miette with an explicitly built handler (theme, width, links as
//! text) so the output is the same in a terminal, a pipe and a snapshot. Locations in other files
//! (`Finding::related`) are rendered as related diagnostics, each with its own source.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents, SourceCode, SourceSpan,
    SpanContents,
};
use ruff_text_size::TextRange;

use crate::diagnostic::Diagnostic;
use crate::registry::Severity;

use super::Style;

/// A file's text with the name miette shows in the `╭─[name:row:col]` header.
struct NamedText<'a> {
    name: &'a str,
    text: &'a str,
}

impl SourceCode for NamedText<'_> {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let contents = self.text.read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.to_string(),
            contents.data(),
            *contents.span(),
            contents.line(),
            contents.column(),
            contents.line_count(),
        )))
    }
}

/// One diagnostic seen through miette's eyes.
struct MietteView<'a> {
    diagnostic: &'a Diagnostic,
    source: NamedText<'a>,
    related: Vec<RelatedView<'a>>,
}

/// A location in another file that contributes to a diagnostic.
struct RelatedView<'a> {
    related: &'a crate::diagnostic::Related,
    source: NamedText<'a>,
}

impl fmt::Debug for RelatedView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.related.text)
    }
}

impl fmt::Display for RelatedView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.related.text)
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
        let label = LabeledSpan::new_primary_with_span(Some("here".to_string()), span(self.related.range));
        Some(Box::new(std::iter::once(label)))
    }
}

impl fmt::Debug for MietteView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.finding.message)
    }
}

impl fmt::Display for MietteView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.finding.message)
    }
}

impl std::error::Error for MietteView<'_> {}

fn span(range: TextRange) -> SourceSpan {
    SourceSpan::new(usize::from(range.start()).into(), usize::from(range.len()))
}

impl miette::Diagnostic for MietteView<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.diagnostic.rule().code()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.diagnostic.finding.help.as_ref().map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }

    fn url<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.diagnostic.rule().url()))
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let finding = &self.diagnostic.finding;
        let label = (!finding.label.is_empty()).then(|| finding.label.clone());
        let primary = LabeledSpan::new_primary_with_span(label, span(finding.range));
        let secondary = finding
            .secondary
            .iter()
            .map(|label| LabeledSpan::new_with_span(Some(label.text.clone()), span(label.range)));
        Some(Box::new(std::iter::once(primary).chain(secondary)))
    }

    fn related<'b>(&'b self) -> Option<Box<dyn Iterator<Item = &'b dyn miette::Diagnostic> + 'b>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(self.related.iter().map(|related| related as &dyn miette::Diagnostic)))
    }
}

/// Renders every diagnostic, separated by blank lines.
pub fn render(diagnostics: &[Diagnostic], style: Style) -> String {
    let theme = if style.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_links(false).with_width(style.width);
    let mut out = String::new();
    for diagnostic in diagnostics {
        let related = diagnostic
            .finding
            .related
            .iter()
            .map(|related| RelatedView {
                related,
                source: NamedText { name: related.file.display_name(), text: related.file.text() },
            })
            .collect();
        let view = MietteView {
            diagnostic,
            source: NamedText { name: diagnostic.file.display_name(), text: diagnostic.file.text() },
            related,
        };
        if handler.render_report(&mut out, &view).is_err() {
            out.push_str(&format!("{}: {}\n", diagnostic.rule().code(), diagnostic.finding.message));
        }
        out.push('\n');
    }
    out
}
