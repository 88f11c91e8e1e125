//! Byte offsets to LSP positions and back, in the position encoding the client and the server agreed on
//! (UTF-16 code units by default, UTF-8 bytes or UTF-32 characters when the client offers them). Lines
//! end at `\n`, `\r\n` or `\r`, as the protocol says.

use lsp_types::{Position, Range};
use ruff_text_size::{TextRange, TextSize};

/// How the `character` of a position counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// UTF-16 code units: the protocol's default.
    #[default]
    Utf16,
    /// Bytes.
    Utf8,
    /// Unicode scalar values.
    Utf32,
}

impl Encoding {
    /// The width of `character` in this encoding.
    fn width(self, character: char) -> u32 {
        match self {
            Encoding::Utf16 => character.len_utf16() as u32,
            Encoding::Utf8 => character.len_utf8() as u32,
            Encoding::Utf32 => 1,
        }
    }
}

/// The start of every line of a text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// The lines of `text`.
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut at = 0;
        while at < bytes.len() {
            match bytes[at] {
                b'\n' => starts.push(at + 1),
                b'\r' if bytes.get(at + 1) == Some(&b'\n') => {
                    starts.push(at + 2);
                    at += 1;
                }
                b'\r' => starts.push(at + 1),
                _ => {}
            }
            at += 1;
        }
        LineIndex { starts }
    }

    /// The position of the byte `offset` of `text` (clamped to the text, moved back to a character
    /// boundary).
    pub fn position(&self, text: &str, offset: usize, encoding: Encoding) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|start| *start <= offset) - 1;
        let start = self.starts[line];
        let character = text[start..offset].chars().map(|character| encoding.width(character)).sum();
        Position { line: line as u32, character }
    }

    /// The byte offset of `position` in `text`: a line past the end is the end of the text, a character
    /// past the end of its line is the end of that line (before its line break).
    pub fn offset(&self, text: &str, position: Position, encoding: Encoding) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else { return text.len() };
        let end = self.starts.get(position.line as usize + 1).copied().unwrap_or(text.len());
        let line = text[start..end].trim_end_matches(['\n', '\r']);
        let mut counted = 0;
        for (index, character) in line.char_indices() {
            if counted >= position.character {
                return start + index;
            }
            counted += encoding.width(character);
        }
        start + line.len()
    }

    /// The LSP range of a byte range of `text`.
    pub fn range(&self, text: &str, range: TextRange, encoding: Encoding) -> Range {
        Range {
            start: self.position(text, usize::from(range.start()), encoding),
            end: self.position(text, usize::from(range.end()), encoding),
        }
    }

    /// The byte range of an LSP range of `text`.
    pub fn text_range(&self, text: &str, range: Range, encoding: Encoding) -> TextRange {
        let start = self.offset(text, range.start, encoding);
        let end = self.offset(text, range.end, encoding).max(start);
        TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_positions_count_surrogate_pairs_twice() {
        let text = "a = '😀'\r\nb = 1\rc\n";
        let index = LineIndex::new(text);
        let b = text.find('b').unwrap();
        assert_eq!(index.position(text, b, Encoding::Utf16), Position { line: 1, character: 0 });
        let quote = text.rfind('\'').unwrap();
        assert_eq!(index.position(text, quote, Encoding::Utf16), Position { line: 0, character: 7 });
        assert_eq!(index.position(text, quote, Encoding::Utf8), Position { line: 0, character: 9 });
        assert_eq!(index.position(text, quote, Encoding::Utf32), Position { line: 0, character: 6 });
        assert_eq!(index.offset(text, Position { line: 0, character: 7 }, Encoding::Utf16), quote);
        assert_eq!(index.offset(text, Position { line: 2, character: 0 }, Encoding::Utf16), text.find('c').unwrap());
        // Past the end of a line: its end, before the line break.
        assert_eq!(index.offset(text, Position { line: 1, character: 99 }, Encoding::Utf16), b + 5);
        assert_eq!(index.offset(text, Position { line: 9, character: 0 }, Encoding::Utf16), text.len());
    }
}
