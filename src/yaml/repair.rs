//! Leniency where the YAML that Kubernetes users write is accepted by libyaml and go-yaml (kubectl) but
//! not by saphyr, which follows the YAML 1.2 indentation rules to the letter: a flow collection whose
//! continuation lines (or closing bracket) sit at the indentation of the key that holds it, and a quoted
//! scalar continued at that indentation. Inside a flow collection or a quoted scalar, leading white
//! space of a continuation line carries no meaning (the lines are folded), so indenting such a line
//! further changes nothing the document says: [`Repairs`] inserts the spaces and maps every offset of
//! the repaired text back to the file as written.

/// How many repairs one file may get before its error stands: each costs a parse of the file.
pub const MAX_REPAIRS: usize = 64;

/// How many bytes the parses of one file may cover in all, repairs included: a large file gets fewer
/// repairs, so every file is answered in time linear in its size.
pub const MAX_REPARSED_BYTES: usize = 64 << 20;

/// Spaces inserted at line starts of the text as written, and the offset mapping they imply.
#[derive(Debug, Clone, Default)]
pub struct Repairs {
    /// `(offset of a line start in the text as written, spaces inserted there)`, sorted by offset.
    insertions: Vec<(usize, usize)>,
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
        let mut inserted = 0;
        for &(at, spaces) in &self.insertions {
            let start = at + inserted;
            if offset < start {
                break;
            }
            if offset < start + spaces {
                return at;
            }
            inserted += spaces;
        }
        offset - inserted
    }

    /// Adds the repair for a saphyr error with `message` at `offset` of the `repaired` text, if it is
    /// one of the lenient cases; false when there is nothing to repair.
    pub fn add(&mut self, repaired: &str, offset: usize, message: &str) -> bool {
        let lines: Vec<usize> = if message.ends_with("invalid indentation in quoted scalar") {
            quoted_continuations(repaired, offset)
        } else if message.ends_with("invalid indentation") || message.ends_with("invalid indentation in flow construct")
        {
            // The error points at the first character of the line that is not indented enough.
            vec![line_start(repaired, offset)]
        } else {
            return false;
        };
        if lines.is_empty() {
            return false;
        }
        // Every line start is mapped back before any insertion is added: each added insertion would shift
        // the mapping of the starts after it.
        let starts: Vec<usize> = lines.into_iter().map(|line| self.original(line)).collect();
        for at in starts {
            match self.insertions.binary_search_by_key(&at, |&(at, _)| at) {
                Ok(index) => self.insertions[index].1 += 1,
                Err(index) => self.insertions.insert(index, (at, 1)),
            }
        }
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

/// The starts of the continuation lines of the quoted scalar whose opening quote is at `offset` that are
/// not indented more than the line it starts on.
fn quoted_continuations(text: &str, offset: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let Some(&quote) = bytes.get(offset).filter(|byte| matches!(byte, b'"' | b'\'')) else { return Vec::new() };
    let required = indentation(text, line_start(text, offset)) + 1;
    let mut lines = Vec::new();
    let mut index = offset + 1;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' if quote == b'"' => index += 2,
            b'\'' if quote == b'\'' && bytes.get(index + 1) == Some(&b'\'') => index += 2,
            byte if byte == quote => break,
            b'\n' | b'\r' => {
                index += 1;
                if bytes[index - 1] == b'\r' && bytes.get(index) == Some(&b'\n') {
                    index += 1;
                }
                let blank = bytes[index..].iter().take_while(|byte| **byte == b' ' || **byte == b'\t').count();
                let next = bytes.get(index + blank);
                // Blank lines carry no indentation requirement.
                if blank < required && !matches!(next, None | Some(b'\n' | b'\r')) {
                    lines.push(index);
                }
            }
            _ => index += 1,
        }
    }
    lines
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
        let starts: Vec<&str> = lines.iter().map(|&line| &text[line..line + 3]).collect();
        assert_eq!(starts, ["  y", "  w"]);
    }

    #[test]
    fn other_errors_are_not_repaired() {
        assert!(!Repairs::default().add("a: [\n", 3, "did not find expected ',' or ']'"));
    }
}
