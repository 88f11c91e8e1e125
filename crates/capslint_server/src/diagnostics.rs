//! capslint's diagnostics as LSP diagnostics: the code with a link to the rule's page, the severity the
//! configuration gives it, the labels of the same file and the places in other files as related
//! information, `Unnecessary` for an unused suppression. A notebook's findings are placed in the cells
//! they are in ([`Placer`]).

use std::path::Path;
use std::str::FromStr;

use lsp_types::{
    CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, Location, NumberOrString, Range,
    Uri,
};
use ruff_text_size::{TextRange, TextSize};

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::registry::{Rule, Severity};
use capslint_diagnostics::source::SourceFile;

use crate::position::{Encoding, LineIndex};

/// The name diagnostics are reported under.
pub const SOURCE: &str = "capslint";

/// Places byte ranges of a linted document's checked text in the client's documents: the document
/// itself, or, for a notebook, the cell a range starts in.
#[derive(Debug, Clone)]
pub struct Placer {
    /// The linted document.
    pub uri: Uri,
    /// For a notebook, its cells' URIs in order (cell `n` is at `n - 1`).
    pub cells: Option<Vec<Uri>>,
    /// The agreed position encoding.
    pub encoding: Encoding,
}

impl Placer {
    /// Where `range` of `file` (the document's checked text) is: the client document and the range in
    /// it. In a notebook, a range that runs past the end of its first cell ends there.
    pub fn place(&self, file: &SourceFile, lines: &LineIndex, range: TextRange) -> Option<(Uri, Range)> {
        let (Some(cells), Some(map)) = (&self.cells, file.cells()) else {
            return Some((self.uri.clone(), lines.range(file.text(), range, self.encoding)));
        };
        let number = map.cell_number(range.start())?;
        let cell = map.cell_range(range.start())?;
        let uri = cells.get(number.checked_sub(1)?)?.clone();
        let text = &file.text()[cell];
        let clamp = |offset: TextSize| offset.clamp(cell.start(), cell.end()) - cell.start();
        let relative = TextRange::new(clamp(range.start()), clamp(range.end()));
        Some((uri, LineIndex::new(text).range(text, relative, self.encoding)))
    }

    /// Like [`Placer::place`], for an edit: `None` unless the whole range is in one cell.
    pub fn place_edit(&self, file: &SourceFile, lines: &LineIndex, range: TextRange) -> Option<(Uri, Range)> {
        if let Some(map) = file.cells().filter(|_| self.cells.is_some()) {
            let cell = map.cell_range(range.start())?;
            if range.end() > cell.end() {
                return None;
            }
        }
        self.place(file, lines, range)
    }

    /// Every client document of the linted document: the document, or the notebook's cells.
    pub fn documents(&self) -> Vec<Uri> {
        self.cells.clone().unwrap_or_else(|| vec![self.uri.clone()])
    }
}

/// The LSP diagnostic of `diagnostic`, and the document it is in.
pub fn to_lsp(diagnostic: &Diagnostic, placer: &Placer, lines: &LineIndex) -> Option<(Uri, lsp_types::Diagnostic)> {
    let finding = &diagnostic.finding;
    let (uri, range) = placer.place(&diagnostic.file, lines, finding.range)?;
    let rule = finding.rule;
    let mut related: Vec<DiagnosticRelatedInformation> = finding
        .secondary
        .iter()
        .filter_map(|label| {
            let (uri, range) = placer.place(&diagnostic.file, lines, label.range)?;
            Some(DiagnosticRelatedInformation { location: Location { uri, range }, message: label.text.clone() })
        })
        .collect();
    for other in &finding.related {
        let Some(uri) = file_uri(other.file.path(), diagnostic.file.path()) else { continue };
        let text = other.file.text();
        let range = LineIndex::new(text).range(text, other.range, placer.encoding);
        related.push(DiagnosticRelatedInformation { location: Location { uri, range }, message: other.text.clone() });
    }
    let mut message = finding.message.clone();
    if let Some(help) = &finding.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let lsp = lsp_types::Diagnostic {
        range,
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(rule.code().to_string())),
        code_description: Uri::from_str(&rule.url()).ok().map(|href| CodeDescription { href }),
        source: Some(SOURCE.to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: (rule == Rule::UnusedSuppression).then(|| vec![DiagnosticTag::UNNECESSARY]),
        data: None,
    };
    Some((uri, lsp))
}

/// The URI of a file the linter read, relative paths taken from the directory of `beside`.
fn file_uri(path: &Path, beside: &Path) -> Option<Uri> {
    if path.is_absolute() { crate::uri::from_path(path) } else { crate::uri::from_path(&beside.parent()?.join(path)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_diagnostics::diagnostic::Finding;
    use std::sync::Arc;

    #[test]
    fn a_finding_becomes_a_diagnostic_with_its_rule_page() {
        let text = "from joblib import Parallel\nParallel(n_jobs=-1)\n";
        let file = Arc::new(SourceFile::new("/p/a.py".into(), "a.py".into(), text.into()));
        let start = TextSize::try_from(text.find("n_jobs").unwrap()).unwrap();
        let range = TextRange::at(start, TextSize::from(9));
        let finding = Finding::new(Rule::NJobsAllCores, range, "all cores").help("use 1");
        let diagnostic = Diagnostic { finding, file, severity: Severity::Error };
        let uri = Uri::from_str("file:///p/a.py").unwrap();
        let placer = Placer { uri: uri.clone(), cells: None, encoding: Encoding::Utf16 };
        let (at, lsp) = to_lsp(&diagnostic, &placer, &LineIndex::new(text)).unwrap();
        assert_eq!(at, uri);
        assert_eq!((lsp.range.start.line, lsp.range.start.character, lsp.range.end.character), (1, 9, 18));
        assert_eq!(lsp.code, Some(NumberOrString::String("CAP101".into())));
        assert_eq!(lsp.code_description.unwrap().href.as_str(), Rule::NJobsAllCores.url());
        assert_eq!(lsp.message, "all cores\nhelp: use 1");
        assert_eq!(lsp.severity, Some(DiagnosticSeverity::ERROR));
    }
}
