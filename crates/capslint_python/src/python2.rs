//! Python 2, recognised where Python 3's parser fails: a file whose syntax errors include a `print` or
//! `exec` statement, a backtick repr, an octal or long literal, the `<>` operator, `raise E, message` or a
//! `ur` string prefix is reported once as Python 2, at the first such construct, instead of by its first
//! syntax error. An unparenthesized `except E, e:` clause counts too when the file has syntax errors (it
//! parses: Python 3.14 reads it as two exception types).

use ruff_python_parser::{ParseError, ParseErrorType, UnsupportedSyntaxError, UnsupportedSyntaxErrorKind};
use ruff_text_size::{TextRange, TextSize};

use super::recovery::LineBreaks;

/// A Python 2 construct and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Construct {
    /// Where it is written.
    pub range: TextRange,
    /// What it is, for messages ("a `print` statement").
    pub what: &'static str,
}

/// The first Python 2 construct among the syntax errors of `text`, if any.
pub fn first_construct(text: &str, errors: &[ParseError], unsupported: &[UnsupportedSyntaxError]) -> Option<Construct> {
    let breaks = LineBreaks::new(text);
    let at_errors = errors.iter().filter_map(|error| classify(text, &breaks, error));
    let clauses = unsupported
        .iter()
        .filter(|error| matches!(error.kind, UnsupportedSyntaxErrorKind::UnparenthesizedExceptionTypes))
        .map(|error| Construct { range: error.range, what: "an `except E, e:` clause" });
    at_errors.chain(clauses).min_by_key(|construct| construct.range.start())
}

fn classify(text: &str, breaks: &LineBreaks, error: &ParseError) -> Option<Construct> {
    let range = error.location;
    let start = usize::from(range.start());
    let token = text.get(start..usize::from(range.end()))?;
    let line_start = breaks.line_start(start);
    let before = &text[line_start..start];
    let construct = |what| Some(Construct { range, what });
    if token.starts_with('`') {
        return construct("a backtick repr");
    }
    if token.len() > 1 && token.starts_with('0') && token.bytes().all(|byte| byte.is_ascii_digit()) {
        return construct("an octal literal without `0o`");
    }
    if matches!(token, "L" | "l") && before.ends_with(|c: char| c.is_ascii_hexdigit()) && ends_with_number(before) {
        return construct("a long integer literal");
    }
    if token.starts_with('>') && before.ends_with('<') {
        return Some(Construct {
            range: TextRange::new(range.start() - TextSize::from(1), range.end()),
            what: "the `<>` operator",
        });
    }
    if token.starts_with(['"', '\'']) && ends_with_word(before, &["ur", "uR", "Ur", "UR"]) {
        return Some(Construct {
            range: TextRange::new(range.start() - TextSize::from(2), range.end()),
            what: "a `ur` string prefix",
        });
    }
    if matches!(error.error, ParseErrorType::SimpleStatementsOnSameLine) {
        let keyword = before.trim_end();
        for (word, what) in [("print", "a `print` statement"), ("exec", "an `exec` statement")] {
            if ends_with_word(keyword, &[word]) {
                let word_start = line_start + keyword.len() - word.len();
                return Some(Construct {
                    range: TextRange::new(TextSize::try_from(word_start).ok()?, range.end()),
                    what,
                });
            }
        }
    }
    if matches!(error.error, ParseErrorType::UnparenthesizedTupleExpression)
        && before.trim_start().starts_with("raise ")
    {
        return construct("a `raise E, message` statement");
    }
    None
}

/// Whether `text` ends with one of `words`, not preceded by a character of a name or an attribute access.
fn ends_with_word(text: &str, words: &[&str]) -> bool {
    words.iter().any(|word| {
        text.strip_suffix(word)
            .is_some_and(|rest| !rest.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.'))
    })
}

/// Whether `text` ends with a number literal (`10`, `0x1F`), the digits of a long literal before its `L`.
fn ends_with_number(text: &str) -> bool {
    let word = text.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    text[word.len()..].starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_ast::PySourceType;
    use ruff_python_parser::parse_unchecked_source;

    fn first(text: &str) -> Option<(String, &'static str)> {
        let parsed = parse_unchecked_source(text, PySourceType::Python);
        first_construct(text, parsed.errors(), parsed.unsupported_syntax_errors())
            .map(|construct| (text[construct.range].to_string(), construct.what))
    }

    #[test]
    fn each_construct_is_recognised() {
        let cases = [
            ("x = 1\nprint \"hello\", x\n", "print \"hello\"", "a `print` statement"),
            ("print x\n", "print x", "a `print` statement"),
            ("if x: print x\n", "print x", "a `print` statement"),
            ("exec \"code\"\n", "exec \"code\"", "an `exec` statement"),
            ("y = `x`\n", "`", "a backtick repr"),
            ("mode = 0777\n", "0777", "an octal literal without `0o`"),
            ("big = 10L\n", "L", "a long integer literal"),
            ("if a <> b:\n    pass\n", "<>", "the `<>` operator"),
            ("raise ValueError, \"bad\"\n", "ValueError, \"bad\"", "a `raise E, message` statement"),
            ("s = ur\"abc\"\n", "ur\"abc\"", "a `ur` string prefix"),
        ];
        for (text, construct, what) in cases {
            assert_eq!(first(text), Some((construct.to_string(), what)), "{text}");
        }
    }

    #[test]
    fn the_first_construct_is_named() {
        let text = "try:\n    f()\nexcept ValueError, e:\n    print e\n";
        assert_eq!(first(text), Some(("ValueError, e".to_string(), "an `except E, e:` clause")));
    }

    #[test]
    fn a_number_after_a_multibyte_character_is_read_by_characters() {
        assert!(ends_with_number("\u{FFFD}0"));
        assert!(ends_with_number("é = 10"));
        assert!(!ends_with_number("\u{FFFD}x0"));
        assert!(!ends_with_number("é"));
    }

    #[test]
    fn a_long_literal_after_a_multibyte_character_is_recognised() {
        assert_eq!(first("x = é10L\n"), None);
        assert_eq!(first("x = [é, 10L]\n"), Some(("L".to_string(), "a long integer literal")));
        assert_eq!(first("\u{FFFD}0l\n"), Some(("l".to_string(), "a long integer literal")));
    }

    #[test]
    fn python_3_errors_are_not_python_2() {
        for text in ["x = (1,\n", "def f(:\n    pass\n", "x = 1 +\n", "printer \"x\"\n", "a.print x\n", "x = 0\n"] {
            assert_eq!(first(text), None, "{text}");
        }
    }
}
