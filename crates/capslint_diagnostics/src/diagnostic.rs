//! Findings as rules produce them, and diagnostics as every report format renders them.

use std::sync::Arc;

use ruff_text_size::{TextRange, TextSize};

use crate::fix::{Applicability, Fix};
use crate::registry::{Rule, Severity};
use crate::source::{Location, SourceFile};

/// A secondary span in the same file, with its own short label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The byte range the label points at.
    pub range: TextRange,
    /// What the reader should notice there.
    pub text: String,
}

/// A span in another file that contributes to a finding (e.g. a container counted in a cross-file total).
#[derive(Debug, Clone)]
pub struct Related {
    /// The other file.
    pub file: Arc<SourceFile>,
    /// The byte range in that file.
    pub range: TextRange,
    /// What it contributes.
    pub text: String,
}

/// What a rule reports: a code, the exact span of the offending expression or node, and the words around it.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The rule that fired.
    pub rule: Rule,
    /// The offending expression or YAML node.
    pub range: TextRange,
    /// One line that names the callee or container and the problem.
    pub message: String,
    /// The label under the primary span.
    pub label: String,
    /// The fix, in one line.
    pub help: Option<String>,
    /// Other places in the same file that explain the finding.
    pub secondary: Vec<Label>,
    /// Places in other files that explain the finding.
    pub related: Vec<Related>,
    /// The edits that resolve it, when a rule can write them.
    pub fix: Option<Fix>,
    /// Whether it was found in a file with syntax errors, on a statement the parser recovered cleanly
    /// (the file's CAP001 says why the rest was not checked).
    pub in_file_with_syntax_errors: bool,
}

impl Finding {
    /// A finding of `rule` at `range` with `message`; the label defaults to empty.
    pub fn new(rule: Rule, range: TextRange, message: impl Into<String>) -> Self {
        Finding {
            rule,
            range,
            message: message.into(),
            label: String::new(),
            help: None,
            secondary: Vec::new(),
            related: Vec::new(),
            fix: None,
            in_file_with_syntax_errors: false,
        }
    }

    /// Attaches the fix.
    #[must_use]
    pub fn fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }

    /// Attaches the fix, when there is one.
    #[must_use]
    pub fn fix_if(mut self, fix: Option<Fix>) -> Self {
        if fix.is_some() {
            self.fix = fix;
        }
        self
    }

    /// Sets the label under the primary span.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets the one-line fix.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a labelled secondary span in the same file.
    #[must_use]
    pub fn secondary(mut self, range: TextRange, text: impl Into<String>) -> Self {
        self.secondary.push(Label { range, text: text.into() });
        self
    }

    /// Names the places in other files at the end of the message (`(see settings.py:3:1)`), for the
    /// one-line formats, which show no labels.
    #[must_use]
    pub fn naming_related_places(mut self) -> Self {
        if self.related.is_empty() {
            return self;
        }
        let places: Vec<String> = self
            .related
            .iter()
            .map(|related| {
                let location = related.file.location(related.range.start());
                format!("{}:{}:{}", related.file.display_name(), location.row, location.column)
            })
            .collect();
        self.message.push_str(&format!(" (see {})", places.join(", ")));
        self
    }

    /// Adds a labelled span in another file.
    #[must_use]
    pub fn related(mut self, file: Arc<SourceFile>, range: TextRange, text: impl Into<String>) -> Self {
        self.related.push(Related { file, range, text: text.into() });
        self
    }
}

/// A finding placed in its file, with the severity the configuration gives its rule.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// What the rule reported.
    pub finding: Finding,
    /// The file it is in.
    pub file: Arc<SourceFile>,
    /// The configured severity.
    pub severity: Severity,
}

impl Diagnostic {
    /// The rule that fired.
    pub fn rule(&self) -> Rule {
        self.finding.rule
    }

    /// Where the primary span starts.
    pub fn start(&self) -> Location {
        self.file.location(self.finding.range.start())
    }

    /// Where the primary span ends (exclusive column, as ruff reports it).
    pub fn end(&self) -> Location {
        self.file.location(self.finding.range.end())
    }

    /// For a finding in a notebook, the cell it starts in (its 1-based position in the notebook).
    pub fn cell(&self) -> Option<usize> {
        self.file.cell_location(self.finding.range.start()).map(|location| location.cell)
    }

    /// Where the primary span starts as the reader finds it: in a notebook, the row and column within
    /// its cell ([`Diagnostic::cell`]); otherwise [`Diagnostic::start`].
    pub fn shown_start(&self) -> Location {
        self.file.cell_location(self.finding.range.start()).map_or_else(|| self.start(), |location| location.location)
    }

    /// Where the primary span ends as the reader finds it: in a notebook, within the cell it starts in
    /// (a span that runs into a later cell ends with its first cell).
    pub fn shown_end(&self) -> Location {
        self.file.cell_location(self.end_in_cell()).map_or_else(|| self.end(), |location| location.location)
    }

    /// Where the primary span ends, cut at the end of the cell it starts in for a notebook.
    fn end_in_cell(&self) -> TextSize {
        let cell = self.file.cells().and_then(|cells| cells.cell_range(self.finding.range.start()));
        cell.map_or(self.finding.range.end(), |cell| self.finding.range.end().min(cell.end()))
    }

    /// Where the primary span starts in the file as stored: in a notebook, in its JSON (see
    /// [`SourceFile::file_location`]); otherwise [`Diagnostic::start`].
    pub fn file_start(&self) -> Location {
        self.file.file_location(self.finding.range.start())
    }

    /// Where the primary span ends in the file as stored (see [`Diagnostic::file_start`]).
    pub fn file_end(&self) -> Location {
        self.file.file_end_location(self.end_in_cell())
    }

    /// Whether `--fix` applies its fix when fixes of `allowed` applicability (or safer) apply.
    /// A notebook's fixes are shown, never applied: its cells are not its bytes.
    pub fn fixable(&self, allowed: Applicability) -> bool {
        self.file.cells().is_none() && self.finding.fix.as_ref().is_some_and(|fix| fix.applies(allowed))
    }

    /// The ordering key of every report: file, then row and column, then code.
    pub fn sort_key(&self) -> (&str, Location, &'static str, Location) {
        (self.file.display_name(), self.start(), self.rule().code(), self.end())
    }
}

/// Builds the line index of every file `diagnostics` point into ([`SourceFile::index_lines`]). A run calls
/// it on the thread that checked the file, so that the run's sort ([`sort_by_key`]) and report, on one
/// thread after the pool is done, only look locations up.
pub fn index_lines(diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        diagnostic.file.index_lines();
        for related in &diagnostic.finding.related {
            related.file.index_lines();
        }
    }
}

/// Sorts `diagnostics` by [`Diagnostic::sort_key`] (stable), each key computed once: its locations are
/// looked up in the file's line index, which costs more than comparing them.
pub fn sort_by_key(diagnostics: &mut Vec<Diagnostic>) {
    let mut keyed: Vec<_> = std::mem::take(diagnostics)
        .into_iter()
        .map(|diagnostic| ((diagnostic.start(), diagnostic.rule().code(), diagnostic.end()), diagnostic))
        .collect();
    keyed.sort_by(|(a, first), (b, second)| (first.file.display_name(), a).cmp(&(second.file.display_name(), b)));
    diagnostics.extend(keyed.into_iter().map(|(_, diagnostic)| diagnostic));
}
