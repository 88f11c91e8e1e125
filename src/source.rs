//! A checked file's text with the line index that maps byte offsets to rows and columns.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ruff_source_file::LineIndex;
use ruff_text_size::{TextRange, TextSize};

/// A 1-based row and a 1-based column counted in characters (as ruff does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Location {
    /// 1-based line number.
    pub row: usize,
    /// 1-based column, in Unicode scalar values.
    pub column: usize,
}

/// The contents of one input (a file on disk or standard input) and how to name it.
#[derive(Debug)]
pub struct SourceFile {
    path: PathBuf,
    display_name: String,
    text: String,
    line_index: OnceLock<LineIndex>,
}

impl SourceFile {
    /// Wraps `text` read from `path`, shown to users as `display_name`.
    pub fn new(path: PathBuf, display_name: String, text: String) -> Self {
        SourceFile { path, display_name, text, line_index: OnceLock::new() }
    }

    /// The path the text was read from (for stdin: the `--stdin-filename`, or `-`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The name shown in reports: relative to the working directory when possible.
    pub fn display_name(&self) -> &str {
        &self.display_name
    }

    /// The full text.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn line_index(&self) -> &LineIndex {
        self.line_index.get_or_init(|| LineIndex::from_source_text(&self.text))
    }

    /// The row and column of a byte offset.
    pub fn location(&self, offset: TextSize) -> Location {
        let line_column = self.line_index().line_column(offset, &self.text);
        Location { row: line_column.line.get(), column: line_column.column.get() }
    }

    /// The 1-based row of a byte offset.
    pub fn row(&self, offset: TextSize) -> usize {
        self.line_index().line_index(offset).get()
    }

    /// How many rows the text has (a text that ends with a line break has an empty last row).
    pub fn line_count(&self) -> usize {
        self.line_index().line_count()
    }

    /// The byte range of the given 1-based row, without its line terminator.
    pub fn line_range(&self, row: usize) -> TextRange {
        let index = self.line_index();
        let one_indexed = ruff_source_file::OneIndexed::new(row).unwrap_or(ruff_source_file::OneIndexed::MIN);
        let range = index.line_range(one_indexed, &self.text);
        let line = &self.text[range];
        let trimmed = line.trim_end_matches(['\n', '\r']);
        TextRange::at(range.start(), TextSize::of(trimmed))
    }
}
