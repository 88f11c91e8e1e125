//! The prose of a Python text: its comments and its docstrings (string literals that are whole
//! statements), which Python never runs. A library's own source names its knobs in prose all the time
//! (`n_jobs : int, default=None`, "see `joblib.Parallel`"); a file whose words all sit there has no
//! finding, yet the word search alone would let it through to the parser.
//!
//! [`without_prose`] blanks the prose with a scan of the text's strings, comments and brackets, exact for
//! what it accepts: where the scan cannot be sure where a string ends (an f-string whose replacement
//! field holds a quote, a comment or a backslash; a backslash before a brace), or the text does not
//! tokenize (a string left open, brackets that do not balance), it answers `None` and the text is
//! searched whole, as before. A comment that may be a suppression (`# noqa: CAP101`) is never prose: an
//! unused one is itself a finding. [`may_all_be_prose`] is the cheap test that picks the texts worth the
//! scan.

use super::is_name_byte;

/// Whether each of the word matches starting at `starts` (in increasing order) may be in prose: after a
/// `#` on its line, or after an odd number of `"""` or of `'''`. An over-approximation that selects the
/// texts worth [`without_prose`]'s scan; it stops at the first match that is plainly code. Each byte is
/// looked at once, however many matches share a line.
pub fn may_all_be_prose(text: &str, starts: impl Iterator<Item = usize>) -> bool {
    let bytes = text.as_bytes();
    // Where the bytes before the matches were looked at up to, and what they held.
    let mut looked_to = 0;
    let mut hash_on_line = false;
    let mut triple_quotes = [0usize; 2];
    for start in starts {
        let unseen = &bytes[looked_to..start];
        for (count, quotes) in triple_quotes.iter_mut().zip([&b"\"\"\""[..], &b"'''"[..]]) {
            *count += memchr::memmem::find_iter(unseen, quotes).count();
        }
        let line = memchr::memrchr2(b'\n', b'\r', unseen).map_or(unseen, |newline| &unseen[newline + 1..]);
        hash_on_line = (hash_on_line && line.len() == unseen.len()) || memchr::memchr(b'#', line).is_some();
        looked_to = start;
        if !hash_on_line && triple_quotes.iter().all(|count| count % 2 == 0) {
            return false;
        }
    }
    true
}

/// `text` with its comments and docstrings blanked (every byte but line breaks replaced by a space), or
/// `None` when the scan cannot read the text with certainty (see the module's documentation).
pub fn without_prose(text: &str) -> Option<String> {
    let ranges = prose_ranges(text)?;
    Some(crate::blank::blanked(text, ranges.into_iter().map(|(start, end)| start..end)))
}

/// The byte ranges of the comments and docstrings of `text` that [`without_prose`] blanks, in order.
fn prose_ranges(text: &str) -> Option<Vec<(usize, usize)>> {
    let mut scan = Scan { bytes: text.as_bytes(), at: 0, depth: 0, at_statement_start: true, prose: Vec::new() };
    scan.run()?;
    Some(scan.prose)
}

/// The scan of [`without_prose`]: where it is, and the prose found so far.
struct Scan<'t> {
    bytes: &'t [u8],
    at: usize,
    /// How many brackets are open: a line break inside brackets does not end a statement.
    depth: usize,
    /// Whether only blanks came since the start of the current logical line (outside brackets).
    at_statement_start: bool,
    /// The byte ranges of the prose found.
    prose: Vec<(usize, usize)>,
}

impl Scan<'_> {
    fn run(&mut self) -> Option<()> {
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b' ' | b'\t' | b'\x0c' => self.at += 1,
                b'\n' | b'\r' => {
                    self.at += 1;
                    if self.depth == 0 {
                        self.at_statement_start = true;
                    }
                }
                b'\\' => {
                    // Outside strings, a backslash only continues a line; the joined line is not a
                    // statement's start.
                    self.at = line_break_end(self.bytes, self.at + 1)?;
                    self.at_statement_start = false;
                }
                b'#' => self.comment(),
                b'(' | b'[' | b'{' => {
                    self.depth += 1;
                    self.at += 1;
                    self.at_statement_start = false;
                }
                b')' | b']' | b'}' => {
                    self.depth = self.depth.checked_sub(1)?;
                    self.at += 1;
                    self.at_statement_start = false;
                }
                b'"' | b'\'' => self.string(self.at, Prefix::default())?,
                byte if is_name_byte(byte) => {
                    let start = self.at;
                    let end = start + self.bytes[start..].iter().take_while(|byte| is_name_byte(**byte)).count();
                    let before_a_quote = matches!(self.bytes.get(end), Some(b'"' | b'\''));
                    match before_a_quote.then(|| Prefix::of(&self.bytes[start..end])).flatten() {
                        Some(prefix) => self.string(start, prefix)?,
                        None => {
                            self.at = end;
                            self.at_statement_start = false;
                        }
                    }
                }
                _ => {
                    self.at += 1;
                    self.at_statement_start = false;
                }
            }
        }
        (self.depth == 0).then_some(())
    }

    /// The comment at `self.at`, to its line's end: prose unless it may name a rule's code.
    fn comment(&mut self) {
        let start = self.at;
        let end = memchr::memchr2(b'\n', b'\r', &self.bytes[start..]).map_or(self.bytes.len(), |end| start + end);
        let comment = &self.bytes[start..end];
        if !comment.windows(3).any(|window| window.eq_ignore_ascii_case(b"cap")) {
            self.prose.push((start, end));
        }
        self.at = end;
    }

    /// The string literal whose prefix starts at `start` (its quote at `self.at` after the prefix): prose
    /// when it is a whole statement, a logical line of its own.
    fn string(&mut self, start: usize, prefix: Prefix) -> Option<()> {
        let quote_at = start + prefix.length;
        let end = if prefix.interpolated {
            interpolated_string_end(self.bytes, quote_at)?
        } else {
            string_end(self.bytes, quote_at)?
        };
        let after = end + self.bytes[end..].iter().take_while(|byte| matches!(byte, b' ' | b'\t' | b'\x0c')).count();
        let ends_the_line = matches!(self.bytes.get(after), None | Some(b'\n' | b'\r' | b'#'));
        if self.at_statement_start && self.depth == 0 && ends_the_line {
            self.prose.push((start, end));
        }
        self.at = end;
        self.at_statement_start = false;
        Some(())
    }
}

/// The prefix of a string literal: its length, and whether it makes an f- or t-string.
#[derive(Debug, Default, Clone, Copy)]
struct Prefix {
    length: usize,
    interpolated: bool,
}

impl Prefix {
    /// The prefix that `name` (a run of name characters right before a quote) is, or `None` when it is a
    /// name: one or two of `r`, `b`, `u`, `f`, `t` in any case, as Python combines them.
    fn of(name: &[u8]) -> Option<Prefix> {
        let lower = match *name {
            [first] => [first.to_ascii_lowercase(), 0],
            [first, second] => [first.to_ascii_lowercase(), second.to_ascii_lowercase()],
            _ => return None,
        };
        let valid = matches!(
            lower,
            [b'r' | b'u' | b'b' | b'f' | b't', 0] | [b'b', b'r'] | [b'r', b'b' | b'f' | b't'] | [b'f' | b't', b'r']
        );
        valid.then(|| Prefix { length: name.len(), interpolated: lower.iter().any(|byte| matches!(byte, b'f' | b't')) })
    }
}

/// Where the line break that a backslash continues at `at` ends, or `None` when no line break follows it.
fn line_break_end(bytes: &[u8], at: usize) -> Option<usize> {
    match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b'\r'), Some(b'\n')) => Some(at + 2),
        (Some(b'\n' | b'\r'), _) => Some(at + 1),
        _ => None,
    }
}

/// The quotes that open the literal at `quote_at`: the quote byte and whether it is tripled.
fn opening(bytes: &[u8], quote_at: usize) -> (u8, bool) {
    let quote = bytes[quote_at];
    (quote, bytes[quote_at..].starts_with(&[quote; 3]))
}

/// Where the plain (not interpolated) string literal opened at `quote_at` ends, past its closing quotes;
/// `None` when it is left open. A backslash escapes the byte after it in raw strings too, for where the
/// literal ends.
fn string_end(bytes: &[u8], quote_at: usize) -> Option<usize> {
    let (quote, triple) = opening(bytes, quote_at);
    let mut at = quote_at + if triple { 3 } else { 1 };
    loop {
        let found = at + memchr::memchr3(quote, b'\\', b'\n', &bytes[at..])?;
        // A lone `\r` ends a line too, which a single-quoted literal cannot span.
        if !triple && memchr::memchr(b'\r', &bytes[at..found]).is_some() {
            return None;
        }
        match bytes[found] {
            b'\\' => at = escaped_end(bytes, found)?,
            b'\n' if !triple => return None,
            b'\n' => at = found + 1,
            _ if !triple => return Some(found + 1),
            _ if bytes[found..].starts_with(&[quote; 3]) => return Some(found + 3),
            _ => at = found + 1,
        }
    }
}

/// Where the escape whose backslash is at `at` ends: past the byte it escapes, or past a whole line break.
fn escaped_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at + 1)? {
        b'\r' if bytes.get(at + 2) == Some(&b'\n') => Some(at + 3),
        _ => Some(at + 2),
    }
}

/// How deeply f- and t-strings may nest inside one another's replacement fields for the scan to read
/// them; deeper, it gives up.
const MAX_NESTED_INTERPOLATIONS: usize = 8;

/// Where the f- or t-string opened at `quote_at` ends, past its closing quotes; `None` when it is left
/// open or the scan cannot be sure: a replacement field that holds a `#` or a backslash outside a nested
/// string, a line break in a field of a single-quoted literal, a backslash before a brace or `N` (whether
/// a brace then opens a field depends on the version and on the prefix), or strings nested deeper than
/// [`MAX_NESTED_INTERPOLATIONS`].
fn interpolated_string_end(bytes: &[u8], quote_at: usize) -> Option<usize> {
    interpolated_string_end_nested(bytes, quote_at, 0)
}

/// [`interpolated_string_end`] for a literal nested `nesting` replacement fields deep.
fn interpolated_string_end_nested(bytes: &[u8], quote_at: usize, nesting: usize) -> Option<usize> {
    let (quote, triple) = opening(bytes, quote_at);
    let mut at = quote_at + if triple { 3 } else { 1 };
    loop {
        match *bytes.get(at)? {
            b'\\' => {
                if matches!(bytes.get(at + 1)?, b'{' | b'}' | b'N') {
                    return None;
                }
                at = escaped_end(bytes, at)?;
            }
            b'\n' | b'\r' if !triple => return None,
            b'{' if bytes.get(at + 1) == Some(&b'{') => at += 2,
            b'}' if bytes.get(at + 1) == Some(&b'}') => at += 2,
            b'{' => at = replacement_field_end(bytes, at, triple, nesting)?,
            b'}' => return None,
            byte if byte == quote && !triple => return Some(at + 1),
            byte if byte == quote && bytes[at..].starts_with(&[quote; 3]) => return Some(at + 3),
            _ => at += 1,
        }
    }
}

/// Where the replacement field opened by the `{` at `at` ends, past its `}`: its brackets (and the
/// nested fields of its format spec) balanced, without comments or backslashes outside the strings it
/// holds. A string in the field (`f"{', '.join(names)}"`, and since Python 3.12 one in the enclosing
/// quote, as the parser reads it) is read whole, an f- or t-string with its own fields; in a field of a
/// single-quoted literal it may not span lines.
fn replacement_field_end(bytes: &[u8], at: usize, triple: bool, nesting: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut index = at;
    loop {
        match *bytes.get(index)? {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (bytes[index] == b'}').then_some(index + 1);
                }
            }
            b'"' | b'\'' => {
                let prefix_length = bytes[..index].iter().rev().take_while(|byte| is_name_byte(**byte)).count();
                let end = match Prefix::of(&bytes[index - prefix_length..index]) {
                    Some(prefix) if prefix.interpolated && nesting < MAX_NESTED_INTERPOLATIONS => {
                        interpolated_string_end_nested(bytes, index, nesting + 1)?
                    }
                    Some(prefix) if prefix.interpolated => return None,
                    _ => string_end(bytes, index)?,
                };
                if !triple && memchr::memchr2(b'\n', b'\r', &bytes[index..end]).is_some() {
                    return None;
                }
                index = end;
                continue;
            }
            b'#' | b'\\' => return None,
            b'\n' | b'\r' if !triple => return None,
            _ => {}
        }
        index += 1;
    }
}

#[cfg(test)]
mod tests {
    use ruff_python_ast::token::TokenKind;
    use ruff_python_ast::visitor::{self, Visitor};
    use ruff_python_ast::{Expr, PySourceType, Stmt};
    use ruff_python_parser::parse_unchecked_source;
    use ruff_text_size::Ranged;

    use super::*;

    /// The prose of `text` as the parser reads it: its comments (but those that name `cap` in any case)
    /// and its statements that are a string, an f-string or a t-string; `None` when it does not parse.
    fn parser_prose(text: &str) -> Option<Vec<(usize, usize)>> {
        struct StringStatements(Vec<(usize, usize)>);
        impl<'a> Visitor<'a> for StringStatements {
            fn visit_stmt(&mut self, stmt: &'a Stmt) {
                if let Stmt::Expr(statement) = stmt
                    && matches!(
                        *statement.value,
                        Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::FString(_) | Expr::TString(_)
                    )
                {
                    self.0.push((statement.range.start().to_usize(), statement.range.end().to_usize()));
                }
                visitor::walk_stmt(self, stmt);
            }
        }
        let parsed = parse_unchecked_source(text, PySourceType::Python);
        if !parsed.errors().is_empty() {
            return None;
        }
        let mut statements = StringStatements(Vec::new());
        statements.visit_body(&parsed.syntax().body);
        let comments = parsed
            .tokens()
            .iter()
            .filter(|token| token.kind() == TokenKind::Comment)
            .map(|token| (token.start().to_usize(), token.end().to_usize()))
            .filter(|(start, end)| !text[*start..*end].to_ascii_lowercase().contains("cap"));
        let mut prose: Vec<_> = statements.0.into_iter().chain(comments).collect();
        prose.sort_unstable();
        Some(prose)
    }

    /// Checks the scan of `text` against the parser: every range it blanks is prose to the parser too.
    /// Returns the scan's ranges.
    fn assert_only_prose_blanked(text: &str) -> Option<Vec<(usize, usize)>> {
        let scanned = prose_ranges(text);
        if let (Some(scanned), Some(parsed)) = (&scanned, parser_prose(text)) {
            for range in scanned {
                assert!(parsed.contains(range), "{range:?} ({:?}) is not prose in {text:?}", &text[range.0..range.1]);
            }
        }
        scanned
    }

    /// Asserts that the scan finds exactly the parser's prose in `text`.
    fn assert_same_prose(text: &str) {
        assert_eq!(prose_ranges(text), parser_prose(text), "in {text:?}");
    }

    #[test]
    fn docstrings_and_comments_are_prose() {
        for text in [
            "\"\"\"Module: n_jobs=-1.\"\"\"\nimport os\n",
            "def fit(X):\n    '''Uses `joblib.Parallel`.'''\n    return X\n",
            "class A:\n    r\"\"\"n_jobs : int\n\n    ``-1`` means all.\n    \"\"\"\n\n    x = 1\n",
            "x = 1  # n_jobs=-1 would use every core\n",
            "# comment\n\"doc\"  # and a comment after it\n",
            "def f():\n    \"\"\"a \\\"quoted\\\" n_jobs\"\"\"\n    \"\"\"\"inner quote\" n_jobs\"\"\"\n",
            "if x:\n    b'bytes statement'\nelse:\n    f'{x} n_jobs'\n",
            "s = 1\r\n'''crlf docstring'''\r\n# crlf comment\r\n",
            "f'{x:{width}} {{n_jobs}} {y!r:>10}'\n",
            "rf'{x}\\d+ n_jobs'\n",
            "t'{x} n_jobs'\n",
            "u'n_jobs'\n",
            "def f():\n    \"\"\"Doc.\"\"\"\n    return f\"\"\"{\n        x\n    } n_jobs\"\"\"\n",
        ] {
            assert_same_prose(text);
        }
    }

    #[test]
    fn strings_that_are_values_are_code() {
        for text in [
            "x = 'n_jobs'\n",
            "params = {\"n_jobs\": -1}\n",
            "(\n    'n_jobs'\n)\n",
            "x = \\\n    'n_jobs'\n",
            "'n_jobs'.upper()\n",
            "'a' 'n_jobs'\n",
            "'a'\\\n'n_jobs'\n",
            "'n_jobs'; x = 1\n",
            "def f(n: 'n_jobs'): pass\n",
            "print('''\nn_jobs\n''')\n",
            "x = [\n    \"\"\"n_jobs\"\"\",\n]\n",
            "class A: 'n_jobs'\n",
            // An escaped quote does not close a literal: the line below stays inside it.
            "x = '''\\'''\n'n_jobs'\n'''\n",
            "x = r'\\''\n'n_jobs'.strip()\n",
        ] {
            let scanned = assert_only_prose_blanked(text).expect("the scan reads it");
            let words_blanked = scanned.iter().any(|(start, end)| text[*start..*end].contains("n_jobs"));
            assert!(!words_blanked, "a value was blanked in {text:?}");
        }
    }

    #[test]
    fn a_comment_that_may_be_a_suppression_is_kept() {
        let text = "x = 1  # noqa: CAP101\ny = 2  # Capslint: n_jobs\nz = 3  # n_jobs\n";
        let blanked = without_prose(text).expect("the scan reads it");
        assert_eq!(blanked, "x = 1  # noqa: CAP101\ny = 2  # Capslint: n_jobs\nz = 3          \n");
    }

    #[test]
    fn what_the_scan_cannot_read_with_certainty_is_searched_whole() {
        for text in [
            // Comments and backslashes outside strings in replacement fields (Python 3.12).
            "f'''{x # n_jobs\n}'''\n",
            "f'{x \\\n}'\n",
            // A string that spans lines in a field of a single-quoted literal.
            "f'{\"\"\"a\nb\"\"\"}'\n",
            // Left open inside a field.
            "f'{\"n_jobs}'\n",
            // A backslash before a brace or a named character.
            "f'\\{x}'\n",
            "f'\\N{DASH} n_jobs'\n",
            // Left open, or not balanced.
            "'n_jobs\n",
            "\"\"\"n_jobs\n",
            "x = (1\n",
            "x = 1)\n",
            "x = 1 \\ y\n",
            "'a\rn_jobs'\n",
        ] {
            assert_eq!(prose_ranges(text), None, "in {text:?}");
        }
        // f-strings nested deeper than the scan reads.
        let deep = format!("{}x{}\n", "f'{".repeat(12), "}'".repeat(12));
        assert_eq!(prose_ranges(&deep), None);
    }

    #[test]
    fn strings_in_replacement_fields_are_read_whole() {
        for text in [
            "f'{d[\"n_jobs\"]}'\n",
            "f'{d['n_jobs']}'\n",
            "f\"{', '.join(names)} n_jobs\"\n",
            "def f():\n    \"\"\"Doc.\"\"\"\n    raise ValueError(f\"{', '.join(x)!r} n_jobs\")\n",
            "f'{\"\\n\".join(x)}'\n",
            "f'{f\"{x['a']}\"} n_jobs'\n",
            "f'''{\"\"\"a\nb\"\"\"} n_jobs'''\n",
            "f'{x:{\">\"}10} n_jobs'\n",
            "x = f'{rf\"{y}\\d\"}'  # n_jobs\n",
        ] {
            assert!(prose_ranges(text).is_some(), "not read: {text:?}");
            assert_same_prose(text);
        }
    }

    #[test]
    fn every_shape_of_string_is_read_as_the_parser_reads_it() {
        let prefixes = ["", "r", "b", "Rb", "f", "rF", "t", "u"];
        let quotes = ["'", "\"", "'''", "\"\"\""];
        let contents = ["n_jobs", "a\\'b\\\"c", "{x}", "{x:{w}}", "{{}}", "\\\\", "\\\n", "'\"", "# c", "{ (a, [b]) }"];
        let contexts = [
            "{}\n",
            "def f():\n    {}\n    return 1\n",
            "x = {}\n",
            "(\n{}\n)\n",
            "x = \\\n{}\n",
            "{}.upper()\n",
            "{} 'tail'\n",
            "{}  # after\n",
            "{}; y = 1\n",
            "if x:\n    pass\n{}\n",
        ];
        let mut read = 0;
        for prefix in prefixes {
            for quote in quotes {
                for content in contents {
                    for context in contexts {
                        let literal = format!("{prefix}{quote}{content}{quote}");
                        let text = context.replace("{}", &literal);
                        read += usize::from(assert_only_prose_blanked(&text).is_some());
                    }
                }
            }
        }
        // Most shapes are read, not given up on.
        assert!(read > 2000, "only {read} shapes read");
    }

    #[test]
    fn the_fixtures_are_read_as_the_parser_reads_them() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        // The hostile fixtures nest deep: the parser and the visit recurse once per level.
        let read = std::thread::Builder::new()
            .stack_size(crate::ANALYSIS_STACK_BYTES)
            .spawn(move || {
                let texts = walkdir(&fixtures).into_iter().filter_map(|path| std::fs::read_to_string(path).ok());
                texts.filter(|text| assert_only_prose_blanked(text).is_some()).count()
            })
            .expect("a thread starts")
            .join()
            .expect("every fixture is read as the parser reads it");
        assert!(read > 60, "only {read} fixtures read");
    }

    /// The `.py` files below `directory`.
    fn walkdir(directory: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(directory).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                found.extend(walkdir(&path));
            } else if path.extension().is_some_and(|extension| extension == "py") {
                found.push(path);
            }
        }
        found
    }

    /// Texts made of pieces that matter to where strings, comments and statements start and end, drawn
    /// by a fixed linear congruential sequence.
    fn token_soups(count: usize, seed: u64) -> impl Iterator<Item = String> {
        const PIECES: &[&str] = &[
            "'",
            "\"",
            "'''",
            "\"\"\"",
            "f'",
            "f\"",
            "rb'",
            "t\"\"\"",
            "\\",
            "\\\n",
            "\n",
            "\r\n",
            "    ",
            "#",
            " n_jobs ",
            "x",
            "=",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "{{",
            "}}",
            ":",
            ";",
            ".upper()",
            "!r",
            "\\N{DASH}",
            // Strings nested in replacement fields.
            "{'",
            "'}",
            "{\"",
            "\"}",
            "def f():\n    ",
            "if x:\n    ",
            "1",
            " ",
        ];
        let mut state = seed;
        (0..count).map(move |_| {
            let mut next = || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 33) as usize
            };
            let length = 1 + next() % 24;
            (0..length).map(|_| PIECES[next() % PIECES.len()]).collect()
        })
    }

    #[test]
    fn random_texts_are_read_as_the_parser_reads_them() {
        // `PROSE_TEXTS` draws more of them (a million ran clean with four seeds).
        let count: usize = std::env::var("PROSE_TEXTS").ok().and_then(|n| n.parse().ok()).unwrap_or(20_000);
        let mut read = 0;
        let mut parsed = 0;
        for text in token_soups(count, 7) {
            let scanned = assert_only_prose_blanked(&text);
            read += usize::from(scanned.is_some_and(|ranges| !ranges.is_empty()));
            parsed += usize::from(parser_prose(&text).is_some());
        }
        // About one text in thirty parses and has prose: the oracle is asked thousands of times.
        assert!(read > count / 50 && parsed > count / 50, "{read} texts with prose read, {parsed} parsed, of {count}");
    }

    #[test]
    fn the_cheap_test_passes_matches_in_prose_and_stops_at_code() {
        let text = "\"\"\"n_jobs\"\"\"\n# n_jobs\nx = n_jobs\n";
        let at = |from: usize| from + text[from..].find("n_jobs").unwrap();
        let [first, second, third] = [at(0), at(at(0) + 1), at(at(at(0) + 1) + 1)];
        assert!(may_all_be_prose(text, [first, second].into_iter()));
        assert!(!may_all_be_prose(text, [first, second, third].into_iter()));
    }
}
