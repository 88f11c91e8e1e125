//! The map from a notebook's Python (its code cells, concatenated) back to the notebook: the cell a
//! place is in, its row and column within that cell (what Jupyter and ruff show), and the line and
//! column in the notebook's JSON of the source string that holds it (where a CI annotation goes).

use ruff_source_file::LineIndex;
use ruff_text_size::{TextRange, TextSize};

use super::Location;

/// One string of a cell's source, as the notebook's JSON holds it.
#[derive(Debug)]
pub struct SourceString<'a> {
    /// The decoded text.
    pub text: String,
    /// The string as written, between its quotes.
    pub raw: &'a str,
    /// Where `raw` starts in the file's text (just after the opening quote).
    pub offset: usize,
}

/// Where a place is in a notebook, as Jupyter shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CellLocation {
    /// The cell's 1-based position among all the notebook's cells.
    pub cell: usize,
    /// The row and column within the cell, 1-based.
    pub location: Location,
}

/// The code cells of one notebook, in the order they were concatenated.
#[derive(Debug, Default)]
pub struct CellMap {
    cells: Vec<CodeCell>,
}

/// One code cell within the concatenated text.
#[derive(Debug)]
struct CodeCell {
    /// Its 1-based position among all the notebook's cells.
    number: usize,
    /// Where its source starts in the concatenated text.
    start: TextSize,
    /// Its source's length, without the line break added after it.
    len: TextSize,
    /// Where its source value starts in the notebook's JSON: 1-based line and column.
    anchor: Location,
    /// Its source strings, in order.
    pieces: Box<[Piece]>,
}

/// One source string of a cell.
#[derive(Debug)]
struct Piece {
    /// Where its text starts within the cell's source.
    start: TextSize,
    /// The line and column, in the notebook's JSON, of the first character after its opening quote.
    at: Location,
    /// The string as written between its quotes (escapes and all).
    raw: Box<str>,
}

impl CodeCell {
    fn end(&self) -> TextSize {
        self.start + self.len
    }

    /// `offset` moved into the cell's source.
    fn clamp(&self, offset: TextSize) -> TextSize {
        offset.clamp(self.start, self.end())
    }
}

impl CellMap {
    /// The cell that holds `offset`: the last one starting at or before it (the concatenated text
    /// ends with the line break after the last cell, which belongs to it).
    fn cell_at(&self, offset: TextSize) -> Option<&CodeCell> {
        let index = self.cells.partition_point(|cell| cell.start <= offset);
        self.cells.get(index.saturating_sub(1))
    }

    /// The number of the cell that holds `offset`.
    pub fn cell_number(&self, offset: TextSize) -> Option<usize> {
        self.cell_at(offset).map(|cell| cell.number)
    }

    /// The byte range, in the concatenated text, of the source of the cell that holds `offset`.
    pub fn cell_range(&self, offset: TextSize) -> Option<TextRange> {
        self.cell_at(offset).map(|cell| TextRange::new(cell.start, cell.end()))
    }

    /// The cell of `offset` and its row and column within the cell, given the concatenated `text` and
    /// its line index. A place after the cell's source (the line break added after it) is at its end.
    pub fn locate(&self, offset: TextSize, text: &str, lines: &LineIndex) -> Option<CellLocation> {
        let cell = self.cell_at(offset)?;
        let position = lines.line_column(cell.clamp(offset), text);
        let first_row = lines.line_index(cell.start).get();
        let location = Location { row: position.line.get() + 1 - first_row, column: position.column.get() };
        Some(CellLocation { cell: cell.number, location })
    }

    /// Where `offset` of the concatenated `text` is in the notebook's JSON: the line of the source
    /// string that holds it, and the column of its character as written there (escapes count as
    /// written). `end` marks the end of a span: one at the start of a string then belongs to the
    /// string before.
    pub fn file_location(&self, offset: TextSize, text: &str, end: bool) -> Option<Location> {
        let cell = self.cell_at(offset)?;
        let relative = cell.clamp(offset) - cell.start;
        let count = cell.pieces.partition_point(|piece| {
            if end && relative > TextSize::from(0) { piece.start < relative } else { piece.start <= relative }
        });
        let Some(piece) = count.checked_sub(1).and_then(|index| cell.pieces.get(index)) else {
            return Some(cell.anchor);
        };
        let decoded = text.get(usize::from(cell.start + piece.start)..usize::from(cell.start + relative))?;
        let column = piece.at.column + written_length(&piece.raw, decoded.chars().count());
        Some(Location { row: piece.at.row, column })
    }
}

/// How many characters the first `decoded` characters of a JSON string take as written: an escape
/// takes two (`\n`), six (`\u00e9`) or twelve (a surrogate pair) for one character.
fn written_length(raw: &str, decoded: usize) -> usize {
    let bytes = raw.as_bytes();
    let mut at = 0;
    let mut written = 0;
    for _ in 0..decoded {
        let Some(&byte) = bytes.get(at) else { break };
        if byte != b'\\' {
            let width = raw[at..].chars().next().map_or(1, char::len_utf8);
            at += width;
            written += 1;
            continue;
        }
        let length = match bytes.get(at + 1) {
            Some(b'u') => {
                let high = raw.get(at + 2..at + 6).and_then(|hex| u16::from_str_radix(hex, 16).ok());
                let pair =
                    high.is_some_and(|unit| (0xd800..0xdc00).contains(&unit)) && raw.get(at + 6..at + 8) == Some("\\u");
                if pair { 12 } else { 6 }
            }
            Some(_) => 2,
            None => 1,
        };
        at += length;
        written += length;
    }
    written
}

/// Builds the concatenated text of a notebook's code cells and its [`CellMap`], reading each source
/// string's position in the notebook's JSON on the way (strings come in the order of the file).
pub struct Builder<'a> {
    raw: &'a str,
    text: String,
    cells: Vec<CodeCell>,
    /// How far the JSON has been read for positions, and the line and column there.
    read: usize,
    position: Location,
}

impl<'a> Builder<'a> {
    /// A builder for the notebook whose JSON is `raw`.
    pub fn new(raw: &'a str) -> Self {
        Builder { raw, text: String::new(), cells: Vec::new(), read: 0, position: Location { row: 1, column: 1 } }
    }

    /// Appends the code cell `number`, whose source value starts at `offset` in the JSON and is made of
    /// `pieces`, followed by a line break. Returns where the cell starts in the concatenated text.
    pub fn push(&mut self, number: usize, offset: usize, pieces: &[SourceString<'_>]) -> TextSize {
        let start = TextSize::of(self.text.as_str());
        let anchor = self.position_at(offset);
        let mut mapped = Vec::with_capacity(pieces.len());
        for piece in pieces {
            let at = self.position_at(piece.offset);
            mapped.push(Piece { start: TextSize::of(self.text.as_str()) - start, at, raw: piece.raw.into() });
            self.text.push_str(&piece.text);
        }
        let len = TextSize::of(self.text.as_str()) - start;
        self.text.push('\n');
        self.cells.push(CodeCell { number, start, len, anchor, pieces: mapped.into_boxed_slice() });
        start
    }

    /// The concatenated text and its map.
    pub fn finish(self) -> (String, CellMap) {
        (self.text, CellMap { cells: self.cells })
    }

    /// The 1-based line and column (in characters) of the byte `offset` of the JSON, counting line
    /// breaks as the rest of capslint does (`\n`, `\r\n`, `\r`). Reads on from the last position asked
    /// for, so a whole notebook is read once.
    fn position_at(&mut self, offset: usize) -> Location {
        if offset < self.read {
            self.read = 0;
            self.position = Location { row: 1, column: 1 };
        }
        let Some(segment) = self.raw.get(self.read..offset) else { return self.position };
        let bytes = segment.as_bytes();
        let mut line_start = None;
        let mut at = 0;
        while let Some(found) = memchr::memchr2(b'\n', b'\r', &bytes[at..]) {
            at += found + 1;
            if bytes[at - 1] == b'\r' && bytes.get(at) == Some(&b'\n') {
                at += 1;
            }
            self.position.row += 1;
            line_start = Some(at);
        }
        match line_start {
            Some(start) => self.position.column = 1 + segment[start..].chars().count(),
            None => self.position.column += segment.chars().count(),
        }
        self.read = offset;
        self.position
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_lengths_count_escapes_as_written() {
        assert_eq!(written_length(r"abc", 2), 2);
        assert_eq!(written_length(r"a\nb", 2), 3);
        assert_eq!(written_length(r#"\"x\u00e9y"#, 4), 10);
        assert_eq!(written_length(r"\ud83d\ude00z", 2), 13);
        assert_eq!(written_length("é\\tx", 3), 4);
        assert_eq!(written_length(r"ab", 5), 2);
        assert_eq!(written_length(r"a\", 2), 2);
    }
}
