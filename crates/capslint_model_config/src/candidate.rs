//! What a format's walker hands to the rule: a thread-count key whose integer value means "every core",
//! where the pair is written and the path that leads to it.

use ruff_text_size::TextRange;

/// How the file writes a key and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// `key: value`.
    Yaml,
    /// `"key": value`.
    Json,
    /// `key = value`.
    Toml,
}

impl Syntax {
    /// What separates a key from its value in messages.
    pub const fn separator(self) -> &'static str {
        match self {
            Syntax::Yaml | Syntax::Json => ": ",
            Syntax::Toml => " = ",
        }
    }
}

/// A thread-count key with an all-cores integer value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The key, decoded (`n_jobs`, `cv_n_jobs`).
    pub key: String,
    /// The path of the key from the document's root, the key included (`model.params.n_jobs`).
    pub path: String,
    /// The value.
    pub value: i64,
    /// From the start of the key to the end of the value.
    pub range: TextRange,
    /// The file's syntax.
    pub syntax: Syntax,
}

/// How many candidates one file may report: a file with more is a data set, and its findings would take
/// more memory than the file (a finding is about a kilobyte, a candidate a few bytes of text).
pub const MAX_CANDIDATES: usize = 1_000;

/// The candidates of one file, at most [`MAX_CANDIDATES`], in the order found.
#[derive(Debug, Default)]
pub struct Found {
    /// The candidates kept.
    pub candidates: Vec<Candidate>,
    /// Whether more were found than are kept.
    pub truncated: bool,
}

impl Found {
    /// Keeps `candidate`, unless [`MAX_CANDIDATES`] are kept already.
    pub fn push(&mut self, candidate: Candidate) {
        if self.candidates.len() < MAX_CANDIDATES {
            self.candidates.push(candidate);
        } else {
            self.truncated = true;
        }
    }
}
