//! The prefilter: a text search that tells, before parsing, that a Python file cannot have a finding, so
//! that most files of a repository are never parsed. It looks for the words the rules need
//! ([`crate::prefilter_words`]), written out or spelled indirectly ([`spelling`]); it may let a
//! file through that has no finding, never the other way round.

pub mod spelling;

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

/// A multi-pattern substring search, in one pass: SIMD (Teddy) where the CPU has it, an automaton
/// otherwise. It matches a text that contains any of its words, one of its whole names (a word not
/// preceded by a name's character), or both words of one of its pairs.
pub struct WordSearch {
    packed: Option<aho_corasick::packed::Searcher>,
    automaton: AhoCorasick,
    /// What a match of each pattern means, by pattern index.
    roles: Vec<Role>,
}

/// What a match of one pattern of a [`WordSearch`] means.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// The text matches.
    Word,
    /// The text matches where the match does not continue a name (`n_process`, not `gaussian_process`).
    WholeName,
    /// One word of a pair, by its bit: the text matches once both bits of a pair are seen.
    PairWord(u32),
}

impl WordSearch {
    /// A search for any of `words`.
    pub fn new(words: &[&str]) -> Self {
        Self::with_pairs(words, &[], &[])
    }

    /// A search for any of `words`, any of `whole_names` where it does not continue a name, or both
    /// words of one of `pairs`.
    pub fn with_pairs(words: &[&str], whole_names: &[&str], pairs: &[(&str, &str)]) -> Self {
        assert!(pairs.len() * 2 <= 64, "pair words fit the bit set of a search");
        let mut patterns: Vec<&str> = Vec::new();
        let mut roles = Vec::new();
        patterns.extend(words);
        roles.extend(words.iter().map(|_| Role::Word));
        patterns.extend(whole_names);
        roles.extend(whole_names.iter().map(|_| Role::WholeName));
        for (index, (first, second)) in pairs.iter().enumerate() {
            patterns.extend([*first, *second]);
            roles.extend([Role::PairWord(2 * index as u32), Role::PairWord(2 * index as u32 + 1)]);
        }
        WordSearch {
            packed: aho_corasick::packed::Searcher::new(patterns.iter().copied()),
            automaton: AhoCorasick::new(&patterns).expect("prefilter words are valid patterns"),
            roles,
        }
    }

    /// The leftmost match in `text` at or after `from`.
    fn find_from(&self, text: &str, from: usize) -> Option<aho_corasick::Match> {
        let span = aho_corasick::Span { start: from, end: text.len() };
        match &self.packed {
            Some(packed) => packed.find_in(text, span),
            None => self.automaton.find(aho_corasick::Input::new(text).span(span)),
        }
    }

    /// Whether `text` contains any of the words, a whole name, or both words of a pair.
    pub fn is_match(&self, text: &str) -> bool {
        let mut seen = 0u64;
        let mut from = 0;
        while let Some(found) = self.find_from(text, from) {
            from = found.end();
            match self.roles[found.pattern().as_usize()] {
                Role::Word => return true,
                Role::WholeName if !continues_a_name(text.as_bytes(), found.start()) => return true,
                // Another word may start inside this one.
                Role::WholeName => from = found.start() + 1,
                Role::PairWord(bit) => {
                    seen |= 1 << bit;
                    let pair = 0b11 << (bit & !1);
                    if seen & pair == pair {
                        return true;
                    }
                }
            }
        }
        false
    }
}

/// Whether the byte before `at` is one a Python name holds (a letter, a digit, `_`, or part of a
/// non-ASCII character), so that a word found at `at` continues that name.
fn continues_a_name(bytes: &[u8], at: usize) -> bool {
    at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] >= 0x80)
}

fn python_prefilter() -> &'static WordSearch {
    static SEARCH: OnceLock<WordSearch> = OnceLock::new();
    SEARCH.get_or_init(|| {
        let words: Vec<&str> =
            crate::prefilter_words().into_iter().filter(|word| !crate::PREFILTER_WHOLE_NAMES.contains(word)).collect();
        WordSearch::with_pairs(&words, crate::PREFILTER_WHOLE_NAMES, crate::PREFILTER_WORD_PAIRS)
    })
}

/// The names of the prefilter words that end with a call's `(` (`kubernetes(`), which Python also reads
/// with blanks before the `(`.
fn called_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| crate::prefilter_words().into_iter().filter_map(|word| word.strip_suffix('(')).collect())
}

/// Whether a Python text contains one of the words the rules need, written out or spelled indirectly
/// (implicit concatenation, escapes, NFKC-folded identifiers, blanks before a call's `(`: see
/// [`spelling`]). A text for which this is false has no findings, so it is never parsed.
pub fn may_have_findings(text: &str) -> bool {
    let search = python_prefilter();
    search.is_match(text)
        || called_names().iter().any(|name| spelling::called_after_a_gap(text, name))
        || spelling::unfolded(text).iter().any(|unfolded| search.is_match(unfolded))
}

/// Whether `text` holds one of the words the rules need as written (or both words of a pair), without the
/// indirect spellings [`may_have_findings`] also looks for: the cheap test of a function's own text.
pub fn names_a_word(text: &str) -> bool {
    python_prefilter().is_match(text)
}

/// Whether a module-level function `name` of the Python text `text` may have findings when a call of it is
/// followed: the text of one of its top-level definitions (`def name(`, `async def name(`, from that line to
/// the next line that starts at column 0 with anything but a comment or the signature's closing bracket)
/// passes [`may_have_findings`]. Searched in the text, never parsed: the prefilter lets a file through by
/// it, and following a call into another module asks the same question, so the two always agree.
pub fn function_may_have_findings(text: &str, name: &str) -> bool {
    top_level_definitions(text).any(|(defined, definition)| defined == name && may_have_findings(definition))
}

/// The module-level functions of `text` that may have findings when a call of them is followed, each
/// as [`function_may_have_findings`] answers for it, found in one pass over the text.
pub fn functions_with_findings(text: &str) -> rustc_hash::FxHashSet<&str> {
    top_level_definitions(text).filter(|(_, definition)| may_have_findings(definition)).map(|(name, _)| name).collect()
}

/// Each top-level definition of a function in `text`: its name and its text.
fn top_level_definitions(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let starts = memchr::memmem::find_iter(text.as_bytes(), b"def ").filter_map(move |at| {
        let line_start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
        let prefix = &text[line_start..at];
        if !(prefix.is_empty() || prefix == "async ") {
            return None;
        }
        let rest = text[at + 4..].trim_start();
        let length = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let (name, after) = rest.split_at(length);
        (!name.is_empty() && after.trim_start().starts_with('(')).then_some((name, line_start))
    });
    starts.map(move |(name, start)| {
        let mut end = text.len();
        let mut offset = start;
        for (index, line) in text[start..].split_inclusive('\n').enumerate() {
            if index > 0 {
                let first = line.chars().next();
                let continues = matches!(first, None | Some(' ' | '\t' | '\n' | '\r' | '#' | ')' | ']'));
                if !continues {
                    end = offset;
                    break;
                }
            }
            offset += line.len();
        }
        (name, &text[start..end])
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_function_is_searched_in_its_own_text() {
        let module = "import os\n\ndef shout(text):\n    return text.upper()\n\n\ndef etl(task_id, **kwargs):\n    \
                      return KubernetesPodOperator(task_id=task_id, **kwargs)\n\nasync def fit(\n    x,\n) -> None:\n    \
                      Parallel(n_jobs=-1)\nVALUE = 1\n";
        assert!(super::function_may_have_findings(module, "etl"));
        assert!(super::function_may_have_findings(module, "fit"));
        assert!(!super::function_may_have_findings(module, "shout"));
        assert!(!super::function_may_have_findings(module, "missing"));
        assert!(!super::function_may_have_findings(module, "et"));
        let mut found: Vec<&str> = super::functions_with_findings(module).into_iter().collect();
        found.sort_unstable();
        assert_eq!(found, ["etl", "fit"]);
    }

    use super::*;

    #[test]
    fn words_written_out_or_spelled_indirectly_let_a_file_through() {
        assert!(may_have_findings("Parallel(n_jobs=-1)(delayed(f)(x) for x in xs)\n"));
        assert!(may_have_findings("f(**{\"n_\" \"jobs\": -1})\n"));
        assert!(may_have_findings("@task.kubernetes (image=\"python\")\ndef f(): ...\n"));
        assert!(!may_have_findings("import json\nprint(json.dumps({}))\n"));
        // A project's operator, imported from another module: its name and the keyword every call writes.
        assert!(may_have_findings("from plugins import TrainOperator\nTrainOperator(task_id=\"t\")\n"));
        assert!(!may_have_findings("from scipy.sparse.linalg import LinearOperator\nLinearOperator((2, 2), f)\n"));
    }

    #[test]
    fn a_pair_matches_only_with_both_words_in_any_order() {
        let search = WordSearch::with_pairs(&["alpha"], &[], &[("beta", "gamma")]);
        assert!(search.is_match("gamma then beta"));
        assert!(search.is_match("beta, gamma"));
        assert!(!search.is_match("beta beta beta"));
        assert!(!search.is_match("gamma"));
        assert!(search.is_match("alpha"));
    }

    #[test]
    fn a_whole_name_matches_only_where_it_does_not_continue_a_name() {
        let search = WordSearch::with_pairs(&["alpha"], &["n_process"], &[]);
        assert!(!search.is_match("from sklearn import gaussian_process\n"));
        assert!(!search.is_match("x.gaussian_process_n_process_é_n_process"));
        assert!(search.is_match("nlp.pipe(texts, n_process=-1)"));
        assert!(search.is_match("{\"n_process\": -1}"));
        assert!(search.is_match("n_process = 2"));
        // A match rejected at one place does not hide one that starts inside it or after it.
        assert!(search.is_match("gaussian_process(n_process=2)"));
        assert!(may_have_findings("nlp.pipe(texts, n_process=-1)\n"));
        assert!(!may_have_findings("from sklearn.gaussian_process import GaussianProcessRegressor\n"));
        // Spelled indirectly, it is still found.
        assert!(may_have_findings("nlp.pipe(texts, **{\"n_\" \"process\": -1})\n"));
    }

    #[test]
    fn a_word_search_finds_any_of_its_words() {
        let search = WordSearch::new(&["alpha", "beta"]);
        assert!(search.is_match("an alphabet"));
        assert!(search.is_match("betamax"));
        assert!(!search.is_match("gamma"));
    }
}
