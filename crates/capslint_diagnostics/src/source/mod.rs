//! A checked file's text with the line index that maps byte offsets to rows and columns; for a notebook,
//! its Python module with the map back to cells and to the notebook's JSON.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ruff_source_file::LineIndex;
use ruff_text_size::{TextRange, TextSize};

pub mod cells;

use cells::{CellLocation, CellMap};

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
    cells: Option<Box<CellMap>>,
}

impl SourceFile {
    /// Wraps `text` read from `path`, shown to users as `display_name`.
    pub fn new(path: PathBuf, display_name: String, text: String) -> Self {
        SourceFile { path, display_name, text, line_index: OnceLock::new(), cells: None }
    }

    /// Marks the text as a notebook's Python module, whose places `cells` maps back to the notebook.
    #[must_use]
    pub fn with_cells(mut self, cells: CellMap) -> Self {
        self.cells = Some(Box::new(cells));
        self
    }

    /// For a notebook's module, the map back to the notebook.
    pub fn cells(&self) -> Option<&CellMap> {
        self.cells.as_deref()
    }

    /// For a notebook's module, the cell of a byte offset and the row and column within that cell.
    pub fn cell_location(&self, offset: TextSize) -> Option<CellLocation> {
        self.cells()?.locate(offset, &self.text, self.line_index())
    }

    /// Where a byte offset is in the file as stored: for a notebook's module, the line and column in the
    /// notebook's JSON of the source string that holds it; otherwise [`SourceFile::location`].
    pub fn file_location(&self, offset: TextSize) -> Location {
        self.cells()
            .and_then(|cells| cells.file_location(offset, &self.text, false))
            .unwrap_or_else(|| self.location(offset))
    }

    /// [`SourceFile::file_location`] for the end of a span: in a notebook's JSON, an end at the start of
    /// a source string is the end of the string before.
    pub fn file_end_location(&self, offset: TextSize) -> Location {
        self.cells()
            .and_then(|cells| cells.file_location(offset, &self.text, true))
            .unwrap_or_else(|| self.location(offset))
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

    /// Builds the line index now, on this thread, if it is not built yet: locating a byte offset
    /// ([`SourceFile::location`]) then costs a lookup wherever it is asked.
    pub fn index_lines(&self) {
        self.line_index();
    }

    fn line_index(&self) -> &LineIndex {
        self.line_index.get_or_init(|| LineIndex::from_source_text(&self.text))
    }

    /// `offset` within the text: at most its length, and on a character boundary (moved back to the start
    /// of the character it falls in), so that no range a report is given can slice the text apart.
    pub fn clamp(&self, offset: TextSize) -> TextSize {
        let mut offset = usize::from(offset).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        TextSize::from(offset as u32)
    }

    /// The row and column of a byte offset.
    pub fn location(&self, offset: TextSize) -> Location {
        let line_column = self.line_index().line_column(self.clamp(offset), &self.text);
        Location { row: line_column.line.get(), column: line_column.column.get() }
    }

    /// The 1-based row of a byte offset.
    pub fn row(&self, offset: TextSize) -> usize {
        self.line_index().line_index(self.clamp(offset)).get()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_index_is_built_when_asked_and_then_only_looked_up() {
        let file = SourceFile::new(PathBuf::from("a.py"), "a.py".into(), "x = 1\nyé = 2\n".into());
        assert!(file.line_index.get().is_none(), "built lazily");
        file.index_lines();
        assert!(file.line_index.get().is_some());
        assert_eq!(file.location(TextSize::from(9)), Location { row: 2, column: 3 });
    }
}
