//! Fixes: the edits a rule proposes, how safe they are, and applying them.
//!
//! A rule attaches at most one [`Fix`] to a finding: a message and the [`Edit`]s (replacements of byte
//! ranges of the finding's own file) that resolve it. Its [`Applicability`] says when `--fix` applies it,
//! as in ruff: safe fixes by default, unsafe ones with `--unsafe-fixes`, display-only ones never (they
//! are shown, and their message says what stops them).

pub mod apply;
pub mod diff;

use ruff_text_size::{TextRange, TextSize};
use serde::Serialize;

/// When a fix may be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown, never applied: the edit needs a decision only the user can make.
    DisplayOnly,
    /// Applied with `--unsafe-fixes`: it changes what runs in a way the user should review.
    Unsafe,
    /// Applied with `--fix`.
    Safe,
}

impl Applicability {
    /// The name in JSON and SARIF (`safe`, `unsafe`, `display-only`).
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::DisplayOnly => "display-only",
            Applicability::Unsafe => "unsafe",
            Applicability::Safe => "safe",
        }
    }
}

/// One replacement: `content` instead of the bytes of `range` (an empty range inserts).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Edit {
    /// The bytes replaced, in the finding's file.
    pub range: TextRange,
    /// What replaces them.
    pub content: String,
}

impl Edit {
    /// Inserts `content` at `at`.
    pub fn insertion(content: impl Into<String>, at: TextSize) -> Self {
        Edit { range: TextRange::empty(at), content: content.into() }
    }

    /// Replaces `range` with `content`.
    pub fn replacement(content: impl Into<String>, range: TextRange) -> Self {
        Edit { range, content: content.into() }
    }

    /// Deletes `range`.
    pub fn deletion(range: TextRange) -> Self {
        Edit { range, content: String::new() }
    }
}

/// A finding's fix: what it does, how safe it is, and its edits (sorted, not overlapping).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fix {
    /// When it may be applied.
    pub applicability: Applicability,
    /// What it does, in one line (`Set `n_jobs` to `1``).
    pub message: String,
    /// The edits, sorted by position.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// A fix of `applicability` made of `edits` (sorted here).
    pub fn new(applicability: Applicability, message: impl Into<String>, mut edits: Vec<Edit>) -> Self {
        edits.sort_by_key(|edit| (edit.range.start(), edit.range.end()));
        Fix { applicability, message: message.into(), edits }
    }

    /// A safe fix.
    pub fn safe(message: impl Into<String>, edits: Vec<Edit>) -> Self {
        Fix::new(Applicability::Safe, message, edits)
    }

    /// An unsafe fix.
    pub fn unsafe_edits(message: impl Into<String>, edits: Vec<Edit>) -> Self {
        Fix::new(Applicability::Unsafe, message, edits)
    }

    /// A fix that is shown but never applied; `message` says what to do and why it is not automatic.
    pub fn display_only(message: impl Into<String>, edits: Vec<Edit>) -> Self {
        Fix::new(Applicability::DisplayOnly, message, edits)
    }

    /// Where its edits start and end (empty at 0 for a fix without edits).
    pub fn range(&self) -> TextRange {
        let start = self.edits.first().map_or(TextSize::from(0), |edit| edit.range.start());
        let end = self.edits.iter().map(|edit| edit.range.end()).max().unwrap_or(start);
        TextRange::new(start, end)
    }

    /// Whether `--fix` applies it under `allowed`.
    pub fn applies(&self, allowed: Applicability) -> bool {
        !self.edits.is_empty() && self.applicability != Applicability::DisplayOnly && self.applicability >= allowed
    }
}
