//! Leniency where the YAML that Kubernetes users write is accepted by libyaml and go-yaml (kubectl) but
//! not by saphyr, which follows the YAML 1.2 indentation rules to the letter: a flow collection whose
//! continuation lines (or closing bracket) sit at the indentation of the key that holds it, and a quoted
//! scalar continued at that indentation or less (down to column 0, after an escaped line break, or with a
//! tab first). Inside a flow collection or a quoted scalar, leading white space of a continuation line
//! carries no meaning (the lines are folded), so indenting such a line further changes nothing the
//! document says: [`Repairs`] inserts the spaces and maps every offset of the repaired text back to the
//! file as written. A quoted scalar gets all its spaces in one repair; each repair costs a parse of the
//! file, within [`MAX_REPARSED_BYTES`].

/// How many repairs one file may get before its error stands (fewer for a large file: see
/// [`MAX_REPARSED_BYTES`]).
pub const MAX_REPAIRS: usize = 1024;

/// How many bytes the parses of one file may cover in all, repairs included: a large file gets fewer
/// repairs, so every file is answered in time linear in its size.
pub const MAX_REPARSED_BYTES: usize = 64 << 20;

/// Spaces inserted at line starts of the text as written, and the offset mapping they imply.
#[derive(Debug, Clone, Default)]
pub struct Repairs {
    /// `(offset of a line start in the text as written, spaces inserted there)`, sorted by offset.
    insertions: Vec<(usize, usize)>,
    /// For each insertion, where it starts in the repaired text and how many spaces are inserted up to
    /// its end: an offset maps back in a binary search.
    shifted: Vec<(usize, usize)>,
}

impl Repairs {
    /// Whether nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.insertions.is_empty()
    }

    /// The text as written with the insertions applied.
    pub fn apply(&self, original: &str) -> String {
        let mut repaired =
            String::with_capacity(original.len() + self.insertions.iter().map(|(_, n)| n).sum::<usize>());
        let mut from = 0;
        for &(at, spaces) in &self.insertions {
            repaired.push_str(&original[from..at]);
            repaired.extend(std::iter::repeat_n(' ', spaces));
            from = at;
        }
        repaired.push_str(&original[from..]);
        repaired
    }

    /// The offset in the text as written of the byte at `offset` in the repaired text (an inserted space
    /// maps to the line start it was inserted at).
    pub fn original(&self, offset: usize) -> usize {
        let count = self.shifted.partition_point(|&(start, _)| start <= offset);
        let Some(index) = count.checked_sub(1) else { return offset };
        let ((start, through), (at, spaces)) = (self.shifted[index], self.insertions[index]);
        if offset < start + spaces { at } else { offset - through }
    }

    /// Adds the repair for a saphyr error with `message` at `offset` of the `repaired` text, if it is
    /// one of the lenient cases; false when there is nothing to repair.
    pub fn add(&mut self, repaired: &str, offset: usize, message: &str) -> bool {
        let lines: Vec<(usize, usize)> = if message.ends_with("invalid indentation in quoted scalar") {
            // The error points at the opening quote.
            quoted_continuations(repaired, offset)
        } else if message.ends_with("tab cannot be used as indentation") {
            // The error points at a tab that starts a continuation line of a quoted scalar.
            opening_quote(repaired, offset).map(|quote| quoted_continuations(repaired, quote)).unwrap_or_default()
        } else if message.ends_with("invalid indentation") || message.ends_with("invalid indentation in flow construct")
        {
            // The error points at the first character of the line that is not indented enough.
            vec![(line_start(repaired, offset), 1)]
        } else {
            return false;
        };
        if lines.is_empty() {
            return false;
        }
        // Every line start is mapped back before any insertion is added: each added insertion would shift
        // the mapping of the starts after it.
        let starts: Vec<(usize, usize)> =
            lines.into_iter().map(|(line, spaces)| (self.original(line), spaces)).collect();
        for (at, spaces) in starts {
            match self.insertions.binary_search_by_key(&at, |&(at, _)| at) {
                Ok(index) => self.insertions[index].1 += spaces,
                Err(index) => self.insertions.insert(index, (at, spaces)),
            }
        }
        let mut through = 0;
        self.shifted = self
            .insertions
            .iter()
            .map(|&(at, spaces)| {
                let start = at + through;
                through += spaces;
                (start, through)
            })
            .collect();
        true
    }
}

fn line_start(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset].iter().rposition(|byte| matches!(byte, b'\n' | b'\r')).map_or(0, |index| index + 1)
}

fn indentation(text: &str, line: usize) -> usize {
    text.as_bytes()[line..].iter().take_while(|byte| **byte == b' ').count()
}

/// The continuation lines of the quoted scalar whose opening quote is at `offset` that are not indented
/// more than the line it starts on: `(line start, spaces to insert there)`. A line break escaped with `\\`
/// in a double-quoted scalar continues it as any other; leading tabs do not count as indentation.
fn quoted_continuations(text: &str, offset: usize) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let Some(&quote) = bytes.get(offset).filter(|byte| matches!(byte, b'"' | b'\'')) else { return Vec::new() };
    let required = indentation(text, line_start(text, offset)) + 1;
    let mut lines = Vec::new();
    let mut index = offset + 1;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' if quote == b'"' && !matches!(bytes.get(index + 1), Some(b'\n' | b'\r')) => index += 2,
            b'\\' if quote == b'"' => index += 1,
            b'\'' if quote == b'\'' && bytes.get(index + 1) == Some(&b'\'') => index += 2,
            byte if byte == quote => break,
            b'\n' | b'\r' => {
                index += 1;
                if bytes[index - 1] == b'\r' && bytes.get(index) == Some(&b'\n') {
                    index += 1;
                }
                let spaces = indentation(text, index);
                let blank = bytes[index..].iter().take_while(|byte| **byte == b' ' || **byte == b'\t').count();
                let next = bytes.get(index + blank);
                // Blank lines carry no indentation requirement.
                if spaces < required && !matches!(next, None | Some(b'\n' | b'\r')) {
                    lines.push((index, required - spaces));
                }
            }
            _ => index += 1,
        }
    }
    lines
}

/// The opening quote of the quoted scalar that the continuation line holding `offset` belongs to: the
/// nearest quote before that line that is not escaped and that no quote of its kind closes before the line.
/// A few candidates are tried, each scanned up to the line: a repair costs what a parse of the file costs.
fn opening_quote(text: &str, offset: usize) -> Option<usize> {
    const CANDIDATES: usize = 16;
    let bytes = text.as_bytes();
    let line = line_start(text, offset);
    let mut before = line;
    for _ in 0..CANDIDATES {
        let quote = bytes[..before].iter().rposition(|byte| matches!(byte, b'"' | b'\''))?;
        let backslashes = bytes[..quote].iter().rev().take_while(|byte| **byte == b'\\').count();
        let escaped = bytes[quote] == b'"' && backslashes % 2 == 1;
        if !escaped && !closes_before(&bytes[..line], quote) {
            return Some(quote);
        }
        before = quote;
    }
    None
}

/// Whether the quoted scalar opening at `quote` closes within `bytes`.
fn closes_before(bytes: &[u8], quote: usize) -> bool {
    let kind = bytes[quote];
    let mut index = quote + 1;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' if kind == b'"' => index += 2,
            b'\'' if kind == b'\'' && bytes.get(index + 1) == Some(&b'\'') => index += 2,
            byte if byte == kind => return true,
            _ => index += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_continuations_of_one_scalar_are_repaired_at_their_own_line_starts() {
        // Three continuation lines of one quoted scalar, with multi-byte characters among them.
        let original = ": \"\n:\n\u{fffd}\\\u{fffd}\n}";
        let mut repairs = Repairs::default();
        assert!(repairs.add(original, 2, "invalid indentation in quoted scalar"));
        assert_eq!(repairs.apply(original), ": \"\n :\n \u{fffd}\\\u{fffd}\n }");
    }

    #[test]
    fn offsets_map_back_through_insertions() {
        let original = "a: [\n1,\n2]\n";
        let mut repairs = Repairs::default();
        assert!(repairs.add(original, 5, "invalid indentation"));
        assert!(repairs.add(&repairs.apply(original), 9, "invalid indentation"));
        let repaired = repairs.apply(original);
        assert_eq!(repaired, "a: [\n 1,\n 2]\n");
        for (at, expected) in [(0, 0), (5, 5), (6, 5), (7, 6), (9, 8), (10, 8), (11, 9), (13, 11)] {
            assert_eq!(repairs.original(at), expected, "{at}");
        }
    }

    #[test]
    fn quoted_scalars_indent_their_continuation_lines() {
        let text = "a:\n  b: \"x\n  y\\\"\n\n   z\n  w\"\n";
        let at = text.find('"').unwrap();
        let lines = quoted_continuations(text, at);
        let starts: Vec<(&str, usize)> = lines.iter().map(|&(line, spaces)| (&text[line..line + 3], spaces)).collect();
        assert_eq!(starts, [("  y", 1), ("  w", 1)]);
    }

    #[test]
    fn a_quoted_scalar_gets_all_its_spaces_in_one_repair() {
        let text = "a:\n  b: [\"x\ny\\\n\tz\"]\n";
        let at = text.find('"').unwrap();
        let mut repairs = Repairs::default();
        assert!(repairs.add(text, at, "invalid indentation in quoted scalar"));
        // Both continuation lines, the one after an escaped line break too, and the one a tab starts.
        assert_eq!(repairs.apply(text), "a:\n  b: [\"x\n   y\\\n   \tz\"]\n");
    }

    #[test]
    fn a_tab_at_the_start_of_a_continuation_line_finds_its_quote() {
        let text = "a: \"closed\"\nb: ['it''s\n\tlong']\n";
        let tab = text.find('\t').unwrap();
        let mut repairs = Repairs::default();
        assert!(repairs.add(text, tab, "tab cannot be used as indentation"));
        assert_eq!(repairs.apply(text), "a: \"closed\"\nb: ['it''s\n \tlong']\n");
        assert_eq!(repairs.original(text.len() + 1), text.len());
    }

    #[test]
    fn other_errors_are_not_repaired() {
        assert!(!Repairs::default().add("a: [\n", 3, "did not find expected ',' or ']'"));
    }
}
