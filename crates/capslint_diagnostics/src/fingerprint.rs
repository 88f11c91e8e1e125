//! Stable identities of findings: a content hash that survives unrelated edits, for baselines, SARIF
//! `partialFingerprints` and GitLab Code Quality.
//!
//! A finding's identity is its rule, its file (as a project-relative path), the whitespace-normalised text
//! of the first and the last line of its span, and its occurrence index among findings that agree on all
//! of these. Line numbers play no part, so inserting or deleting lines elsewhere in the file keeps every
//! identity; editing the offending line makes it a new finding. The hash is FNV-1a with a final mix,
//! written out here so that it can never change under us with a toolchain or a dependency.

use std::collections::HashMap;

use ruff_text_size::TextSize;

use crate::diagnostic::Diagnostic;

/// The identity of one finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    /// The hash of rule, path and line text.
    pub content: u64,
    /// How many earlier findings (in report order) share `content`: 0 for the first.
    pub occurrence: u32,
}

impl Fingerprint {
    /// One hash of content and occurrence, unique per finding: 16 lowercase hex digits.
    pub fn unique(self) -> String {
        let mut hasher = Hasher::new();
        hasher.write(&self.content.to_le_bytes());
        hasher.write(&self.occurrence.to_le_bytes());
        format!("{:016x}", hasher.finish())
    }

    /// The content hash and the 1-based occurrence, in the `HASH:N` shape of GitHub's
    /// `primaryLocationLineHash`.
    pub fn line_hash(self) -> String {
        format!("{:016x}:{}", self.content, self.occurrence + 1)
    }
}

/// FNV-1a (64 bit), finished with the SplitMix64 mixer so that nearby inputs spread over all bits.
struct Hasher(u64);

impl Hasher {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Hasher(Self::OFFSET)
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// Writes a field followed by a separator byte that UTF-8 text never contains, so that fields
    /// cannot run into each other (`ab` + `c` differs from `a` + `bc`).
    fn field(&mut self, text: &str) {
        self.write(text.as_bytes());
        self.write(&[0xff]);
    }

    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A line with every run of whitespace collapsed to one space and the ends trimmed, so re-indenting a
/// block keeps its findings' identities.
fn normalized(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The hash of rule, path and the text of the first and last line of the diagnostic's span.
pub fn content_hash(diagnostic: &Diagnostic, path: &str) -> u64 {
    let file = &diagnostic.file;
    let range = diagnostic.finding.range;
    let first_row = file.row(range.start());
    // The row of the span's last byte: a YAML node's span often ends just after a line break, and the
    // line that follows is not part of the finding.
    let last_row = if range.is_empty() { first_row } else { file.row(range.end() - TextSize::from(1)) };
    let mut hasher = Hasher::new();
    hasher.field(diagnostic.rule().code());
    hasher.field(&path.replace('\\', "/"));
    hasher.field(&normalized(&file.text()[file.line_range(first_row)]));
    if last_row != first_row {
        hasher.field(&normalized(&file.text()[file.line_range(last_row)]));
    }
    hasher.finish()
}

/// The fingerprint of every diagnostic, in order. `path_of` names each diagnostic's file as the
/// consumer expects it (relative to the repository, the baseline, ...). Occurrences count in the order
/// given, which is the report order (file, row, column, code), so they are deterministic.
pub fn fingerprints(diagnostics: &[Diagnostic], path_of: impl Fn(&Diagnostic) -> String) -> Vec<Fingerprint> {
    let mut seen: HashMap<u64, u32> = HashMap::new();
    diagnostics
        .iter()
        .map(|diagnostic| {
            let content = content_hash(diagnostic, &path_of(diagnostic));
            let count = seen.entry(content).or_insert(0);
            let fingerprint = Fingerprint { content, occurrence: *count };
            *count += 1;
            fingerprint
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ruff_text_size::TextRange;

    use super::*;
    use crate::diagnostic::Finding;
    use crate::registry::{Rule, Severity};
    use crate::source::SourceFile;

    fn diagnostic_at(text: &str, needle: &str, nth: usize, rule: Rule) -> Diagnostic {
        let start = text.match_indices(needle).nth(nth).expect("needle in text").0;
        let range = TextRange::at(TextSize::from(start as u32), TextSize::of(needle));
        let file = Arc::new(SourceFile::new("train.py".into(), "train.py".into(), text.to_string()));
        Diagnostic { finding: Finding::new(rule, range, "message"), file, severity: Severity::Error }
    }

    fn fingerprint_of(text: &str, needle: &str, nth: usize) -> Fingerprint {
        let diagnostics: Vec<Diagnostic> =
            (0..=nth).map(|index| diagnostic_at(text, needle, index, Rule::NJobsAllCores)).collect();
        fingerprints(&diagnostics, |_| "train.py".to_string())[nth]
    }

    #[test]
    fn inserting_lines_elsewhere_keeps_the_identity() {
        let before = "import x\nmodel = X(n_jobs=-1)\n";
        let after = "import x\n\n# a comment\nimport y\n    model   =   X(n_jobs=-1)\n";
        assert_eq!(fingerprint_of(before, "n_jobs=-1", 0), fingerprint_of(after, "n_jobs=-1", 0));
    }

    #[test]
    fn editing_the_line_changes_the_identity() {
        let before = "model = X(n_jobs=-1)\n";
        let after = "model = Y(n_jobs=-1)\n";
        assert_ne!(fingerprint_of(before, "n_jobs=-1", 0), fingerprint_of(after, "n_jobs=-1", 0));
    }

    #[test]
    fn identical_lines_are_told_apart_by_occurrence() {
        let text = "a = X(n_jobs=-1)\na = X(n_jobs=-1)\n";
        let first = fingerprint_of(text, "n_jobs=-1", 0);
        let second = fingerprint_of(text, "n_jobs=-1", 1);
        assert_eq!(first.content, second.content);
        assert_eq!((first.occurrence, second.occurrence), (0, 1));
        assert_ne!(first.unique(), second.unique());
        assert!(second.line_hash().ends_with(":2"));
    }

    #[test]
    fn rule_and_path_are_part_of_the_identity() {
        let text = "a = X(n_jobs=-1)\n";
        let cap101 = diagnostic_at(text, "n_jobs=-1", 0, Rule::NJobsAllCores);
        let cap105 = diagnostic_at(text, "n_jobs=-1", 0, Rule::NodeCpuCount);
        assert_ne!(content_hash(&cap101, "a.py"), content_hash(&cap105, "a.py"));
        assert_ne!(content_hash(&cap101, "a.py"), content_hash(&cap101, "b.py"));
        assert_eq!(content_hash(&cap101, "dir\\a.py"), content_hash(&cap101, "dir/a.py"));
    }

    #[test]
    fn a_span_ending_after_a_line_break_ignores_the_next_line() {
        let span = "- name: trainer\n  image: x\n";
        let before = format!("containers:\n{span}- name: sidecar\n");
        let after = format!("containers:\n{span}- name: logger\n");
        assert_eq!(fingerprint_of(&before, span, 0), fingerprint_of(&after, span, 0));
        let edited = "containers:\n- name: trainer\n  image: y\n- name: sidecar\n";
        let edited_span = "- name: trainer\n  image: y\n";
        assert_ne!(fingerprint_of(&before, span, 0), fingerprint_of(edited, edited_span, 0));
    }

    #[test]
    fn the_hash_is_pinned() {
        // Baselines written by earlier versions must keep matching: this value may never change.
        let text = "model = X(n_jobs=-1)\n";
        let diagnostic = diagnostic_at(text, "n_jobs=-1", 0, Rule::NJobsAllCores);
        let fingerprint = Fingerprint { content: content_hash(&diagnostic, "src/train.py"), occurrence: 0 };
        assert_eq!(fingerprint.unique(), PINNED);
    }

    const PINNED: &str = "b867f3d9ebfcbeb2";
}
