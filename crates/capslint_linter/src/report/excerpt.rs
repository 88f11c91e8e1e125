//! What the graphical report shows of a file: only the rows around the labelled spans, each long row cut
//! to a window around its labels, control characters drawn as pictures, and the spans re-based into
//! that text. miette reads it through [`SourceCode`] with the file's real row numbers and columns, so a
//! report costs what it shows rather than the size of the file, and a finding at column 100,000 renders
//! like one at column 10. In a notebook, the excerpt keeps to the cell of the first span: its rows are
//! numbered within the cell and the name says which cell (`path:cell N`), as ruff shows them.

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};
use ruff_text_size::{TextRange, TextSize};

use super::terminal;
use capslint_diagnostics::source::SourceFile;

/// Rows shown before and after a label (miette's default, which the report keeps).
pub const CONTEXT_LINES: usize = 1;
/// Rows up to this many bytes are shown whole; longer ones are cut to a window.
const MAX_ROW_CHARS: usize = 200;
/// Characters kept on either side of the labels in a cut row.
const MARGIN_CHARS: usize = 60;
/// Marks the side where a row was cut.
const ELLIPSIS: &str = "…";

/// One shown row.
#[derive(Debug)]
struct Row {
    /// The 0-based row in the file.
    real: usize,
    /// The byte window of the file shown in this row.
    start: usize,
    end: usize,
    /// Where the row starts in the excerpt's text.
    at: usize,
    /// The row's length in the excerpt's text, without its line break.
    len: usize,
    /// The bytes of the left ellipsis (0 when the row is not cut on the left).
    prefix: usize,
}

/// A file's rows around some spans, for miette.
pub struct Excerpt<'f> {
    file: &'f SourceFile,
    name: String,
    text: String,
    rows: Vec<Row>,
    /// Excerpt offsets of label starts and the file offsets they come from, for the header's column.
    starts: Vec<(usize, usize)>,
    /// The 0-based row of the file that is shown as row 1 less one: the rows before a notebook's cell.
    base: usize,
}

impl<'f> Excerpt<'f> {
    /// The rows of `file` that miette needs to show `ranges`, named `name` in the header.
    pub fn new(file: &'f SourceFile, name: &str, ranges: &[TextRange]) -> Self {
        let text = file.text();
        let ends_with_break = text.ends_with(['\n', '\r']);
        // 1-based, the last row that has text or a line break.
        let mut last = if ends_with_break { file.line_count() - 1 } else { file.line_count() }.max(1);
        let mut first_row = 1;
        let mut name = terminal::escape_name(name).into_owned();
        // A notebook's cell: its own rows (the line break added after it is not one of them).
        let cells = file.cells().zip(ranges.first());
        if let Some((cells, range)) = cells
            && let (Some(cell), Some(number)) = (cells.cell_range(range.start()), cells.cell_number(range.start()))
        {
            first_row = file.row(cell.start());
            last = file.row(cell.end().checked_sub(TextSize::from(1)).unwrap_or(cell.start()).max(cell.start()));
            name = format!("{name}:cell {number}");
        }
        let row_of = |offset: usize| file.row(TextSize::from(offset as u32)).clamp(first_row, last);

        let mut points: Vec<(usize, usize)> = Vec::with_capacity(ranges.len() * 2);
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for range in ranges {
            let (start, end) = (usize::from(file.clamp(range.start())), usize::from(file.clamp(range.end())));
            let first = row_of(start);
            let final_row = if end > start { row_of(end - 1) } else { first };
            spans.push((first.saturating_sub(CONTEXT_LINES).max(first_row), (final_row + CONTEXT_LINES).min(last)));
            points.push((first, start));
            points.push((row_of(end), end));
        }
        spans.sort_unstable();
        points.sort_unstable();
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        for (first, final_row) in spans {
            match blocks.last_mut() {
                Some(block) if first <= block.1 + 1 => block.1 = block.1.max(final_row),
                _ => blocks.push((first, final_row)),
            }
        }

        let mut excerpt =
            Excerpt { file, name, text: String::new(), rows: Vec::new(), starts: Vec::new(), base: first_row - 1 };
        let mut next_point = 0;
        for (first, final_row) in blocks {
            for row in first..=final_row {
                while points.get(next_point).is_some_and(|(point_row, _)| *point_row < row) {
                    next_point += 1;
                }
                let on_row = points[next_point..].iter().take_while(|(point_row, _)| *point_row == row);
                let offsets: Vec<usize> = on_row.map(|(_, offset)| *offset).collect();
                excerpt.push_row(row, &offsets);
            }
        }
        excerpt.starts = ranges
            .iter()
            .map(|range| {
                let start = usize::from(file.clamp(range.start()));
                (excerpt.offset(start), start)
            })
            .collect();
        excerpt
    }

    /// Appends the 1-based `row`, cut around `offsets` (the label starts and ends on it) when it is long.
    fn push_row(&mut self, row: usize, offsets: &[usize]) {
        let text = self.file.text();
        let content = self.file.line_range(row);
        let (line_start, line_end) = (usize::from(content.start()), usize::from(content.end()));
        let (start, end) = if line_end - line_start <= MAX_ROW_CHARS {
            (line_start, line_end)
        } else {
            let clamp = |offset: usize| offset.clamp(line_start, line_end);
            let low = offsets.iter().copied().map(clamp).min();
            let high = offsets.iter().copied().map(clamp).max();
            let back = |from: usize, count: usize| {
                text[line_start..from].char_indices().rev().take(count).last().map_or(from, |(at, _)| line_start + at)
            };
            let forward = |from: usize, count: usize| {
                text[from..line_end].char_indices().nth(count).map_or(line_end, |(at, _)| from + at)
            };
            match (low, high) {
                (Some(low), Some(high)) => {
                    let start = back(low, MARGIN_CHARS);
                    (start, forward(high, MARGIN_CHARS).min(forward(start, MAX_ROW_CHARS)))
                }
                _ => (line_start, forward(line_start, MAX_ROW_CHARS)),
            }
        };
        let at = self.text.len();
        if start > line_start {
            self.text.push_str(ELLIPSIS);
        }
        let prefix = self.text.len() - at;
        for character in text[start..end].chars() {
            self.text.push(terminal::picture(character).unwrap_or(character));
        }
        if end < line_end {
            self.text.push_str(ELLIPSIS);
        }
        self.rows.push(Row { real: row - 1, start, end, at, len: self.text.len() - at, prefix });
        if row < self.file.line_count() {
            // The row ends with a line break (any of the three), which miette reads as `\n`.
            self.text.push('\n');
        }
    }

    /// The bytes `text[from..to]` of a shown window take in the excerpt.
    fn shown_len(&self, from: usize, to: usize) -> usize {
        self.file.text()[from..to]
            .chars()
            .map(|character| terminal::picture(character).unwrap_or(character).len_utf8())
            .sum()
    }

    /// Where the file offset `offset` is in the excerpt: a point left of a cut row's window is at its
    /// start, a point right of it at its end.
    fn offset(&self, offset: usize) -> usize {
        let row = self.file.row(TextSize::from(offset as u32)) - 1;
        let index = self.rows.partition_point(|shown| shown.real < row).min(self.rows.len() - 1);
        let shown = &self.rows[index];
        if shown.real > row {
            return shown.at;
        }
        if shown.real < row || offset > shown.end {
            return shown.at + shown.len;
        }
        if offset < shown.start {
            return shown.at;
        }
        shown.at + shown.prefix + self.shown_len(shown.start, offset)
    }

    /// `range` of the file as a span of the excerpt.
    pub fn span(&self, range: TextRange) -> SourceSpan {
        let start = self.offset(usize::from(self.file.clamp(range.start())));
        let end = self.offset(usize::from(self.file.clamp(range.end()))).max(start);
        SourceSpan::new(start.into(), end - start)
    }

    /// The index of the shown row that holds the excerpt offset `at`.
    fn row_at(&self, at: usize) -> usize {
        self.rows.partition_point(|shown| shown.at <= at).saturating_sub(1)
    }

    /// The 0-based column in the file of the label that starts at the excerpt offset `at`.
    fn column(&self, at: usize) -> usize {
        let real = self.starts.iter().find(|(start, _)| *start == at).map(|(_, real)| *real);
        let real = real.unwrap_or_else(|| self.rows[self.row_at(at)].start);
        self.file.location(TextSize::from(real as u32)).column - 1
    }
}

impl SourceCode for Excerpt<'_> {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        if span.offset() + span.len() > self.text.len() {
            return Err(MietteError::OutOfBounds);
        }
        let last_byte = span.offset() + span.len().saturating_sub(1);
        let (mut first, mut last) = (self.row_at(span.offset()), self.row_at(last_byte));
        // Context rows, within the block of adjacent rows the span is in.
        for _ in 0..context_lines_before {
            if first > 0 && self.rows[first - 1].real + 1 == self.rows[first].real {
                first -= 1;
            }
        }
        for _ in 0..context_lines_after {
            if last + 1 < self.rows.len() && self.rows[last].real + 1 == self.rows[last + 1].real {
                last += 1;
            }
        }
        let (start, column) = if context_lines_before == 0 {
            (span.offset(), self.column(span.offset()))
        } else {
            (self.rows[first].at, 0)
        };
        let end = self.rows.get(last + 1).map_or(self.text.len(), |next| next.at);
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            &self.text.as_bytes()[start..end],
            SourceSpan::new(start.into(), end - start),
            self.rows[first].real - self.base,
            column,
            last - first + 1,
        )))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn file(text: &str) -> SourceFile {
        SourceFile::new(PathBuf::from("a.py"), "a.py".into(), text.to_string())
    }

    fn range(text: &str, needle: &str) -> TextRange {
        let start = text.find(needle).expect("needle");
        TextRange::at(TextSize::from(start as u32), TextSize::of(needle))
    }

    fn shown<'a>(excerpt: &'a Excerpt<'_>, range: TextRange) -> &'a str {
        let span = excerpt.span(range);
        &excerpt.text[span.offset()..span.offset() + span.len()]
    }

    #[test]
    fn only_rows_around_the_spans_are_kept() {
        let text = "a\nb\nc\nd = X(n_jobs=-1)\ne\nf\ng\nh\ni = 2\nj\n";
        let source = file(text);
        let ranges = [range(text, "n_jobs=-1"), range(text, "i = 2")];
        let excerpt = Excerpt::new(&source, "a.py", &ranges);
        assert_eq!(excerpt.text, "c\nd = X(n_jobs=-1)\ne\nh\ni = 2\nj\n");
        assert_eq!(shown(&excerpt, ranges[0]), "n_jobs=-1");
        assert_eq!(shown(&excerpt, ranges[1]), "i = 2");
        let contents = excerpt.read_span(&excerpt.span(ranges[1]), 1, 1).unwrap();
        assert_eq!(contents.data(), b"h\ni = 2\nj\n");
        assert_eq!((contents.line(), contents.line_count()), (7, 3));
        let header = excerpt.read_span(&excerpt.span(ranges[0]), 0, 0).unwrap();
        assert_eq!((header.line(), header.column()), (3, 6));
    }

    #[test]
    fn long_rows_are_cut_around_the_label() {
        let text = format!("import x\nx = 1;{} Parallel(n_jobs=-1)\n", "y = 2;".repeat(20_000));
        let source = file(&text);
        let label = range(&text, "n_jobs=-1");
        let excerpt = Excerpt::new(&source, "a.py", &[label]);
        assert_eq!(shown(&excerpt, label), "n_jobs=-1");
        let row = excerpt.text.lines().nth(1).unwrap();
        assert!(row.starts_with(ELLIPSIS) && row.ends_with("Parallel(n_jobs=-1)"), "{row}");
        assert!(row.chars().count() < MAX_ROW_CHARS);
        let header = excerpt.read_span(&excerpt.span(label), 0, 0).unwrap();
        assert_eq!(header.column() + 1, text.lines().nth(1).unwrap().find("n_jobs").unwrap() + 1);
    }

    #[test]
    fn lone_carriage_returns_and_control_characters() {
        let text = "a: 1\rb: \x1b[2J\rc: 3\r";
        let source = file(text);
        let label = range(text, "\x1b[2J");
        let excerpt = Excerpt::new(&source, "a.yaml", &[label]);
        assert_eq!(excerpt.text, "a: 1\nb: ␛[2J\nc: 3\n");
        assert_eq!(shown(&excerpt, label), "␛[2J");
    }

    #[test]
    fn a_notebook_excerpt_keeps_to_its_cell() {
        let raw = r#"{"cells": [{"cell_type": "code", "source": "import numpy\n"},
            {"cell_type": "markdown", "source": "text"},
            {"cell_type": "code", "source": "x = 1\ny = X(n_jobs=-1)"},
            {"cell_type": "code", "source": "z = 2"}]}"#;
        let module = capslint_python::notebook::read(raw).unwrap();
        let source = SourceFile::new(PathBuf::from("a.ipynb"), "a.ipynb".into(), module.text).with_cells(module.cells);
        let label = range(source.text(), "n_jobs=-1");
        let excerpt = Excerpt::new(&source, "a.ipynb", &[label]);
        assert_eq!(excerpt.text, "x = 1\ny = X(n_jobs=-1)\n");
        assert_eq!(excerpt.name, "a.ipynb:cell 3");
        let contents = excerpt.read_span(&excerpt.span(label), 1, 1).unwrap();
        assert_eq!((contents.line(), contents.line_count()), (0, 2));
        let header = excerpt.read_span(&excerpt.span(label), 0, 0).unwrap();
        assert_eq!((header.line(), header.column()), (1, 6));
    }

    #[test]
    fn empty_text_and_spans_at_the_end() {
        let source = file("");
        let excerpt = Excerpt::new(&source, "a.py", &[TextRange::default()]);
        assert_eq!(excerpt.text, "");
        let contents = excerpt.read_span(&excerpt.span(TextRange::default()), 1, 1).unwrap();
        assert_eq!(contents.data(), b"");
        let text = "a\nb\n";
        let source = file(text);
        let end = TextRange::empty(TextSize::of(text));
        let excerpt = Excerpt::new(&source, "a.py", &[end]);
        assert_eq!(excerpt.text, "a\nb\n");
        assert_eq!(excerpt.span(end).offset(), 3);
    }
}
