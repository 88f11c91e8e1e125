//! The text prefilter of configuration files. Every thread-count key contains `n_jobs` or `thread`; a
//! quoted key can spell them otherwise only through an escape that yields a letter or `_` (`\u`, `\U`,
//! `\x`) or, in YAML, a backslash before a line break; and a CAP109 suppression needs a `capslint:`
//! comment. A text with none of these has no CAP109 finding and no CAP109 suppression, so it is never
//! parsed: data files (`package.json`, datasets) cost a few substring scans at memory speed.

use memchr::{memchr_iter, memmem};

/// The words whose absence proves a text has nothing for CAP109, besides the escapes.
const WORDS: &[&str] = &["n_jobs", "thread", "capslint:"];

/// What may follow a backslash in an escape that spells a letter or `_`, or joins two lines (YAML).
const ESCAPES: &[u8] = b"uUx\n\r";

/// Whether `text` may hold a CAP109 finding or suppression. Each word is one SIMD substring search, so a
/// data file costs a few passes at memory speed.
pub fn may_have_findings(text: &str) -> bool {
    let bytes = text.as_bytes();
    WORDS.iter().any(|word| memmem::find(bytes, word.as_bytes()).is_some())
        || memchr_iter(b'\\', bytes).any(|at| bytes.get(at + 1).is_some_and(|next| ESCAPES.contains(next)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_words_escapes_and_directives_pass() {
        for text in [
            "n_jobs: -1",
            "{\"cv_n_jobs\": -1}",
            "nthread = 0",
            "num_threads: 0",
            "thread_count: -1",
            "\"n\\u005fjobs\": -1",
            "\"n_\\\n  jobs\": -1",
            "a: 1  # capslint: ignore[CAP109]",
        ] {
            assert!(may_have_findings(text), "{text}");
        }
        for text in ["{\"name\": \"app\", \"version\": \"1.0.0\"}", "jobs: 4\nworkers: -1\n", "path: \"C:\\\\data\""] {
            assert!(!may_have_findings(text), "{text}");
        }
    }
}
