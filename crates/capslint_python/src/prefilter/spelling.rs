//! How Python can spell a word without writing it: the prefilter's second look at a file whose text
//! contains none of the words the rules need.
//!
//! The rules read identifiers, attribute names and string literal values. Python forms those from
//! more than the letters written in the file:
//!
//! - implicit concatenation: `"n_" "jobs"`, `("n_"  # comment` + a new line + `"jobs")`, `"n_" r"jobs"`;
//! - escape sequences in string literals: `"\x6e_jobs"`, `"\u006e_jobs"`, `"\156_jobs"`,
//!   `"\N{LATIN SMALL LETTER N}_jobs"`, and a backslash before a line break, which joins the lines;
//! - NFKC normalisation of identifiers: `ｎ_jobs=-1` (fullwidth `n`) is the keyword `n_jobs`;
//! - blanks between a name and the `(` of its call, for the words that end with `(`
//!   (`@task.kubernetes (image=...)`): [`is_called_at`], which the word search asks where it finds the name.
//!
//! [`unfolded`] undoes all three, over-approximating (it also decodes raw strings and folds characters
//! inside strings, which only makes more files parsed), and returns the texts to search as well. It
//! first checks, without allocating, whether any of them can form a word character next to another (a
//! concatenation between two letters, an escape that decodes to a letter, a compatibility character
//! that folds to one): real code rarely has one, so the common case costs one scan.

use unicode_normalization::UnicodeNormalization;

/// The texts Python reads `text` as, for the word search, when an indirect spelling could form a word;
/// empty when none can. The first text has its escapes decoded; the second also has implicit
/// concatenations joined. Both are NFKC-folded when the text has a character that folds to a word
/// character.
pub fn unfolded(text: &str) -> Vec<String> {
    if !may_spell_a_word(text) {
        return Vec::new();
    }
    let (decoded, joined) = rewrite(text.as_bytes());
    // Decoded escapes never need folding (Python does not fold string contents), only the file's own
    // characters do.
    let needs_folding = !text.is_ascii() && folds_to_a_word_char(text);
    let fold = |bytes: Vec<u8>| {
        // Escapes decode to whole characters, so the text stays UTF-8; lossy only as a fallback.
        let text =
            String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        if needs_folding { fold_non_ascii(&text) } else { text }
    };
    vec![fold(decoded), fold(joined)]
}

/// Whether a call's `(` follows at `end`, or after blanks, line breaks, backslash continuations or
/// comments: Python reads `name (` and `name \\\n (` as the call `name(`.
pub fn is_called_at(bytes: &[u8], end: usize) -> bool {
    bytes.get(skip_gap(bytes, end)) == Some(&b'(')
}

/// Where the blanks, line breaks, backslash continuations and comments that start at `from` end.
fn skip_gap(bytes: &[u8], from: usize) -> usize {
    let mut index = from;
    loop {
        match bytes.get(index) {
            Some(b' ' | b'\t' | b'\x0c' | b'\n' | b'\r') => index += 1,
            Some(b'\\') if matches!(bytes.get(index + 1), Some(b'\n' | b'\r')) => index += 2,
            Some(b'#') => index = memchr::memchr2(b'\n', b'\r', &bytes[index..]).map_or(bytes.len(), |end| index + end),
            _ => return index,
        }
    }
}

/// A character that can be part of a word the rules need (`n_jobs`, `n-jobs`, `kubernetes(`), other
/// than its first.
fn is_word_byte(byte: Option<&u8>) -> bool {
    byte.is_some_and(|byte| is_first_word_byte(Some(byte)) || *byte == b'(')
}

/// A character that can start a word, or go on with one: `(` only ends one.
fn is_first_word_byte(byte: Option<&u8>) -> bool {
    byte.is_some_and(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-') || *byte >= 0x80)
}

/// What NFKC can put into an identifier that matters to the word search: the words in identifier
/// position (`n_jobs`, `Pool`) are letters and `_` only, so a character that folds to a digit (`²`) or to
/// punctuation cannot form one.
fn is_identifier_letter(character: char) -> bool {
    character.is_ascii_alphabetic() || character == '_'
}

/// NFKC applied to the runs of non-ASCII characters only, ASCII copied as it is: the same words as
/// folding the whole text (a decomposition depends on the character alone; a composition only
/// builds non-ASCII characters), at the cost of the few non-ASCII runs.
fn fold_non_ascii(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = rest.bytes().position(|byte| !byte.is_ascii()).unwrap_or(rest.len());
        folded.push_str(&rest[..ascii]);
        rest = &rest[ascii..];
        let other = rest.char_indices().find(|(_, character)| character.is_ascii()).map_or(rest.len(), |(at, _)| at);
        folded.extend(rest[..other].nfkc());
        rest = &rest[other..];
    }
    folded
}

fn is_word_char(character: char) -> bool {
    character.is_ascii() && is_word_byte(Some(&(character as u8)))
}

/// Whether some indirect spelling in `text` could put a word character next to another.
fn may_spell_a_word(text: &str) -> bool {
    let bytes = text.as_bytes();
    for at in memchr::memchr3_iter(b'\\', b'"', b'\'', bytes) {
        let relevant = if bytes[at] == b'\\' {
            match escape(bytes, at) {
                Escape::Char(character, _) => is_word_char(character),
                Escape::LineBreak(end) => {
                    at > 0 && is_first_word_byte(bytes.get(at - 1)) && is_word_byte(bytes.get(end))
                }
                Escape::Name(_) => true,
                Escape::Other => false,
            }
        } else {
            may_continue_after(bytes.get(at + 1))
                && ends_with_word_char(bytes, at)
                && joined_end(bytes, at)
                    .is_some_and(|end| is_word_byte(bytes.get(end)) && junction_spells(bytes, at, end))
        };
        if relevant {
            return true;
        }
    }
    !text.is_ascii() && folds_to_a_word_char(text)
}

/// Whether the byte after a quote can lead to another literal joined to this one: blanks, a line break,
/// a backslash continuation, a comment, a prefix letter or a quote. Most quotes are followed by `,`, `)`
/// or `:` and are passed over at once.
fn may_continue_after(byte: Option<&u8>) -> bool {
    matches!(
        byte,
        Some(
            b' ' | b'\t'
                | b'\x0c'
                | b'\n'
                | b'\r'
                | b'\\'
                | b'#'
                | b'"'
                | b'\''
                | b'r'
                | b'R'
                | b'b'
                | b'B'
                | b'u'
                | b'U'
                | b'f'
                | b'F'
                | b't'
                | b'T'
        )
    )
}

/// How far from a junction of two literals a word the rules need can reach: longer than any of them.
const WORD_REACH: usize = 40;

/// Whether joining the literal whose closing quote is at `at` with the one whose text starts at `end`
/// can form a word the rules need across the junction, judged on the word characters on both sides.
/// To the right the word may run on through further joined literals (`"n_" "jo" "bs"`), which are
/// followed. To the left it need not be: a word that also crosses an earlier junction is found at that
/// one, whose left side holds the word's start. An escape stops a side: one that decodes to a word
/// character is a site of its own ([`may_spell_a_word`]).
fn junction_spells(bytes: &[u8], at: usize, end: usize) -> bool {
    // Every word in one automaton, its overlapping matches asked once per junction.
    static WORDS: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        aho_corasick::AhoCorasick::new(crate::prefilter_words()).expect("prefilter words are valid patterns")
    });
    let left = bytes[..at].iter().rev().take(WORD_REACH).take_while(|byte| is_first_word_byte(Some(byte))).count();
    let mut joined = Vec::with_capacity(left + WORD_REACH);
    joined.extend_from_slice(&bytes[at - left..at]);
    let mut from = end;
    // Each literal followed adds a character or ends the chain, except empty ones, which `joined_end`
    // passes over: at most WORD_REACH literals.
    for _ in 0..WORD_REACH {
        let room = left + WORD_REACH - joined.len();
        let run = bytes[from..].iter().take(room).take_while(|byte| is_word_byte(Some(byte))).count();
        joined.extend_from_slice(&bytes[from..from + run]);
        let stop = from + run;
        match bytes.get(stop) {
            Some(b'"' | b'\'') if run < room => match joined_end(bytes, stop) {
                Some(next) => from = next,
                None => break,
            },
            _ => break,
        }
    }
    words.find_overlapping_iter(&joined).any(|found| found.start() < left && found.end() > left)
}

/// Whether the character before the quote at `at` is a word character as written: not the letter of
/// an escape such as `\n` (an odd run of backslashes before it), which the escape check covers.
fn ends_with_word_char(bytes: &[u8], at: usize) -> bool {
    if at == 0 || !is_first_word_byte(bytes.get(at - 1)) {
        return false;
    }
    let backslashes = bytes[..at - 1].iter().rev().take_while(|byte| **byte == b'\\').count();
    backslashes % 2 == 0
}

/// Whether NFKC turns some character of `text` into text with an ASCII word character (`ｎ`, `ﬁ`, `ℕ`).
/// Text already in NFKC (the quick check says so for nearly every file) has none.
fn folds_to_a_word_char(text: &str) -> bool {
    use unicode_normalization::{IsNormalized, is_nfkc_quick};

    const CHUNK: usize = 64;
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let end = (start + CHUNK).min(bytes.len());
        if !bytes[start..end].is_ascii() {
            // The characters that overlap this chunk: ASCII ones are skipped in bulk.
            let from = (0..=start).rev().find(|at| text.is_char_boundary(*at)).unwrap_or(0);
            let to = (end..=bytes.len()).find(|at| text.is_char_boundary(*at)).unwrap_or(bytes.len());
            let folds = text[from..to].chars().filter(|character| !character.is_ascii()).any(|character| {
                is_nfkc_quick(std::iter::once(character)) != IsNormalized::Yes
                    && std::iter::once(character).nfkc().any(is_identifier_letter)
            });
            if folds {
                return true;
            }
            start = to;
        } else {
            start = end;
        }
    }
    false
}

/// An escape sequence in a string literal.
enum Escape {
    /// A character, and where the sequence ends.
    Char(char, usize),
    /// A backslash before a line break: nothing, up to this offset.
    LineBreak(usize),
    /// `\N{...}`: the named character, and where the sequence ends.
    Name(Option<(char, usize)>),
    /// Anything else (`\n`, `\\`, `\"`): two bytes kept as they are.
    Other,
}

/// The escape sequence that starts with the backslash at `at`.
fn escape(bytes: &[u8], at: usize) -> Escape {
    let hex = |from: usize, count: usize| {
        let digits = bytes.get(from..from + count)?;
        let text = std::str::from_utf8(digits).ok()?;
        let value = u32::from_str_radix(text, 16).ok()?;
        char::from_u32(value).map(|character| (character, from + count))
    };
    match bytes.get(at + 1) {
        Some(b'\n') => Escape::LineBreak(at + 2),
        Some(b'\r') => Escape::LineBreak(if bytes.get(at + 2) == Some(&b'\n') { at + 3 } else { at + 2 }),
        Some(b'x') => hex(at + 2, 2).map_or(Escape::Other, |(character, end)| Escape::Char(character, end)),
        Some(b'u') => hex(at + 2, 4).map_or(Escape::Other, |(character, end)| Escape::Char(character, end)),
        Some(b'U') => hex(at + 2, 8).map_or(Escape::Other, |(character, end)| Escape::Char(character, end)),
        Some(b'0'..=b'7') => {
            let digits = bytes[at + 1..].iter().take(3).take_while(|byte| matches!(byte, b'0'..=b'7')).count();
            let value =
                bytes[at + 1..at + 1 + digits].iter().fold(0u32, |value, byte| value * 8 + u32::from(byte - b'0'));
            char::from_u32(value).map_or(Escape::Other, |character| Escape::Char(character, at + 1 + digits))
        }
        Some(b'N') if bytes.get(at + 2) == Some(&b'{') => {
            let close = memchr::memchr(b'}', &bytes[at + 3..]).map(|index| at + 3 + index);
            Escape::Name(close.and_then(|close| {
                let name = std::str::from_utf8(&bytes[at + 3..close]).ok()?;
                unicode_names2::character(name).map(|character| (character, close + 1))
            }))
        }
        _ => Escape::Other,
    }
}

/// When the quote at `at` may close a string literal that an implicitly concatenated one follows, the
/// offset just after the next literal's opening quote (and prefix): between them only blanks, line
/// breaks, backslash continuations, comments, and a string prefix. Empty literals in the chain are
/// passed over (`"n_" "" "jobs"`).
fn joined_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut quote = at;
    loop {
        let mut index = skip_gap(bytes, quote + 1);
        let prefix = bytes[index..].iter().take(2).take_while(|byte| b"rRbBuUfFtT".contains(byte)).count();
        index += prefix;
        if !matches!(bytes.get(index), Some(b'"' | b'\'')) {
            return None;
        }
        if matches!(bytes.get(index + 1), Some(b'"' | b'\'')) {
            // An empty literal: the chain goes on after it.
            quote = index + 1;
            continue;
        }
        return Some(index + 1);
    }
}

/// The text with escapes decoded, and the text with escapes decoded and implicit concatenations joined.
fn rewrite(bytes: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut joined = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        match byte {
            b'\\' => {
                let (text, end) = match escape(bytes, index) {
                    Escape::Char(character, end) | Escape::Name(Some((character, end))) => {
                        (character.to_string().into_bytes(), end)
                    }
                    Escape::LineBreak(end) => (Vec::new(), end),
                    Escape::Name(None) | Escape::Other => {
                        (bytes[index..(index + 2).min(bytes.len())].to_vec(), (index + 2).min(bytes.len()))
                    }
                };
                decoded.extend_from_slice(&text);
                joined.extend_from_slice(&text);
                index = end;
            }
            b'"' | b'\'' => match joined_end(bytes, index) {
                Some(end) => {
                    decoded.extend_from_slice(&bytes[index..end]);
                    index = end;
                }
                None => {
                    decoded.push(byte);
                    joined.push(byte);
                    index += 1;
                }
            },
            _ => {
                // Text up to the next backslash or quote is copied as it is.
                let end = memchr::memchr3(b'\\', b'"', b'\'', &bytes[index..]).map_or(bytes.len(), |run| index + run);
                decoded.extend_from_slice(&bytes[index..end]);
                joined.extend_from_slice(&bytes[index..end]);
                index = end;
            }
        }
    }
    (decoded, joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spells(text: &str, word: &str) -> bool {
        unfolded(text).iter().any(|unfolded| unfolded.contains(word))
    }

    #[test]
    fn implicit_concatenation_is_joined() {
        assert!(spells("p = {\"n_\" \"jobs\": -1}\n", "n_jobs"));
        assert!(spells("p = {'n_' 'jo' \"bs\": -1}\n", "n_jobs"));
        assert!(spells("p = {\"n_\" \"\" r'jobs': -1}\n", "n_jobs"));
        assert!(spells("p = {\"n_\"  # the key\n    \"jobs\": -1}\n", "n_jobs"));
        assert!(spells("p = {\"n_\" \\\n \"jobs\": -1}\n", "n_jobs"));
        assert!(spells("os.environ['OMP_NUM_' 'THREADS'] = '1'\n", "OMP_NUM_THREADS"));
        assert!(spells("getattr(joblib, \"Pa\" \"rallel\")\n", "Parallel"));
    }

    #[test]
    fn escapes_are_decoded() {
        assert!(spells("p = {\"\\x6e_jobs\": -1}\n", "n_jobs"));
        assert!(spells("p = {\"\\u006e_jobs\": -1}\n", "n_jobs"));
        assert!(spells("p = {\"\\U0000006e_jobs\": -1}\n", "n_jobs"));
        assert!(spells("p = {\"\\156_jobs\": -1}\n", "n_jobs"));
        assert!(spells("p = {\"\\N{LATIN SMALL LETTER N}_jobs\": -1}\n", "n_jobs"));
        assert!(spells("p = {\"n_\\\njobs\": -1}\n", "n_jobs"));
        // An escaped backslash is not an escape.
        assert!(!spells("p = \"\\\\x6e_jobs\"\n", "n_jobs"));
    }

    #[test]
    fn calls_after_a_gap_are_seen() {
        let called = |text: &str| is_called_at(text.as_bytes(), text.find("kubernetes").unwrap() + "kubernetes".len());
        assert!(called("@task.kubernetes (image='x')\n"));
        assert!(called("f = task.kubernetes \\\n  (image='x')\n"));
        assert!(called("@task.kubernetes(image='x')\n"));
        assert!(!called("# kubernetes\nx = 1\n"));
    }

    #[test]
    fn identifiers_are_nfkc_folded() {
        assert!(spells("model = X(\u{ff4e}_jobs=-1)\n", "n_jobs"));
        assert!(spells("\u{ff30}arallel(n)\n", "Parallel"));
    }

    #[test]
    fn ordinary_code_needs_no_second_look() {
        let text = "\"\"\"Docstring.\"\"\"\nx = {'a': \"b\", 'c': r'\\d+'}\nmessage = (\"a long \" \"message\")\nprint(\"\\n\\t\", 'é')\nerror = (\"first line\\n\" \"Second line\")\n";
        assert!(unfolded(text).is_empty());
    }

    #[test]
    fn ordinary_concatenations_need_no_second_look() {
        assert!(!may_spell_a_word("msg = (\"the pool is\" \" full\")\nx = (\"some text\" \"more text\" + y)\n"));
        assert!(may_spell_a_word("p = {\"n_\" \"jobs\": -1}\n"));
        assert!(may_spell_a_word("k = \"Pa\" \"rallel\"\n"));
        // A chain of short literals is judged as a whole.
        assert!(may_spell_a_word("p = {'n' '_' 'jobs': -1}\n"));
        assert!(may_spell_a_word("p = {'n' '_' 'jo'  # split\n  'bs': -1}\n"));
        assert!(may_spell_a_word("p = {\"x n\" '_' \"\" 'jo' 'bs': -1}\n"));
        // A literal whose text starts or ends with a quote of the other kind, or a prefix letter before
        // an opening quote, joins into no word.
        assert!(!may_spell_a_word("msg = (\"must be \"\n    f\"'decision_function', got {x}\")\n"));
        assert!(!may_spell_a_word("msg = (\"check that 'dense' 'arpack' & 'randomized' agree\")\n"));
        assert!(!may_spell_a_word("MSG = r\"'percentiles' values must be in [0, 1]\"\n"));
    }

    #[test]
    fn folding_the_non_ascii_runs_finds_what_folding_everything_finds() {
        for text in ["ｎ_jobs=-1", "x = 'R²' # ﬁt", "Ｐｏｏｌ(4)", "caf\u{e9} e\u{301} ™", "plain ascii"] {
            let whole: String = text.nfkc().collect();
            let runs = fold_non_ascii(text);
            for word in ["n_jobs", "Pool", "fit", "TM"] {
                assert_eq!(whole.contains(word), runs.contains(word), "{text:?} {word}");
            }
        }
        // A superscript digit folds, but into no letter: nothing to unfold.
        assert!(!folds_to_a_word_char("r_squared = 'R²'"));
        assert!(folds_to_a_word_char("ｎ_jobs = -1"));
    }
}
