//! Baselines, for adopting capslint in a repository that already has findings: `--write-baseline FILE`
//! records today's findings, `--baseline FILE` reports only the others, and an entry that no longer
//! matches anything is reported as CAP002 on the baseline file, so the file shrinks as code is fixed.
//!
//! The file is JSON, `{"version": 1, "findings": [{"code", "path", "fingerprint", "message"}]}`. Paths are
//! relative to the baseline file's directory, so the same file works from any working directory.
//! Fingerprints ([`capslint_diagnostics::fingerprint`]) ignore line numbers: inserting lines elsewhere keeps them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::{NamedSource, SourceSpan};
use ruff_text_size::{TextRange, TextSize};
use serde::{Deserialize, Serialize};

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fingerprint;
use capslint_diagnostics::registry::{Rule, Severity};
use capslint_diagnostics::selection::RuleSet;
use capslint_diagnostics::source::SourceFile;
use capslint_diagnostics::suppress;
use capslint_workspace::paths::{absolute, relative_path};

/// The format version this build reads and writes.
pub const VERSION: u32 = 1;

/// The contents of a baseline file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    /// The format version: [`VERSION`].
    pub version: u32,
    /// The recorded findings.
    pub findings: Vec<Entry>,
}

/// One recorded finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The rule's code.
    pub code: String,
    /// The file, relative to the baseline's directory, with forward slashes.
    pub path: String,
    /// The finding's identity ([`fingerprint::Fingerprint::unique`]).
    pub fingerprint: String,
    /// The message when it was recorded (for readers; not used for matching).
    pub message: String,
}

/// A file that was checked in this run, and what ran on it: a baseline entry for it that matches
/// nothing is stale only if its rule ran.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The path as given to the linter.
    pub path: PathBuf,
    /// The rules that ran on it.
    pub rules: RuleSet,
    /// The configured severity of CAP002 for it.
    pub unused_suppression: Severity,
}

/// A baseline that cannot be read.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum BaselineError {
    /// The file cannot be read or written.
    #[error("cannot {action} baseline {path}: {source}")]
    #[diagnostic(code("capslint::baseline"))]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a baseline.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Invalid(Box<InvalidBaseline>),
}

/// A baseline file that does not parse, and where.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("invalid baseline {path}: {message}")]
#[diagnostic(code("capslint::baseline"), help("write a new one with `capslint check --write-baseline {path}`"))]
pub struct InvalidBaseline {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The file's text.
    #[source_code]
    pub source_code: NamedSource<String>,
    /// Where.
    #[label("here")]
    pub span: Option<SourceSpan>,
}

/// The key of a checked file in a baseline: its path relative to the baseline's directory, else its
/// absolute path.
fn key(path: &Path, cwd: &Path, directory: &Path) -> String {
    relative_path(path, cwd, directory).unwrap_or_else(|| absolute(path, cwd).to_string_lossy().replace('\\', "/"))
}

/// The directory a baseline's paths are relative to.
fn directory_of(baseline: &Path, cwd: &Path) -> PathBuf {
    let absolute = absolute(baseline, cwd);
    absolute.parent().map_or(absolute.clone(), Path::to_path_buf)
}

/// The baseline entries of `diagnostics`, in report order, for a baseline written to `baseline`.
pub fn record(diagnostics: &[Diagnostic], baseline: &Path, cwd: &Path) -> BaselineFile {
    let directory = directory_of(baseline, cwd);
    let path_of = |diagnostic: &Diagnostic| key(diagnostic.file.path(), cwd, &directory);
    let fingerprints = fingerprint::fingerprints(diagnostics, path_of);
    let mut findings: Vec<Entry> = diagnostics
        .iter()
        .zip(fingerprints)
        .map(|(diagnostic, fingerprint)| Entry {
            code: diagnostic.rule().code().to_string(),
            path: path_of(diagnostic),
            fingerprint: fingerprint.unique(),
            message: diagnostic.finding.message.clone(),
        })
        .collect();
    findings.sort_by(|a, b| a.path.cmp(&b.path));
    BaselineFile { version: VERSION, findings }
}

/// Writes the baseline of `diagnostics` to `path` (creating its directory; the file is replaced whole or
/// not at all); returns the number of entries.
pub fn write(diagnostics: &[Diagnostic], path: &Path, cwd: &Path) -> Result<usize, BaselineError> {
    let file = record(diagnostics, path, cwd);
    let mut text = serde_json::to_string_pretty(&file).expect("baseline serializes");
    text.push('\n');
    let io_error = |source| BaselineError::Io { action: "write", path: path.display().to_string(), source };
    capslint_workspace::atomic::write(path, text.as_bytes()).map_err(io_error)?;
    Ok(file.findings.len())
}

/// A loaded baseline, with its text for pointing at stale entries.
#[derive(Debug)]
pub struct Baseline {
    file: Arc<SourceFile>,
    directory: PathBuf,
    entries: Vec<Entry>,
}

impl Baseline {
    /// Reads and validates the baseline at `path`.
    pub fn load(path: &Path, cwd: &Path) -> Result<Baseline, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Io {
            action: "read",
            path: path.display().to_string(),
            source,
        })?;
        let invalid = |message: String, span: Option<SourceSpan>| {
            BaselineError::Invalid(Box::new(InvalidBaseline {
                path: path.display().to_string(),
                message,
                source_code: NamedSource::new(path.display().to_string(), text.clone()),
                span,
            }))
        };
        let parsed: BaselineFile = serde_json::from_str(&text).map_err(|error| {
            let offset = offset_of(&text, error.line(), error.column());
            invalid(error.to_string(), Some(SourceSpan::from((offset, 0))))
        })?;
        if parsed.version != VERSION {
            let at = text.find("\"version\"").map(|start| SourceSpan::from((start, "\"version\"".len())));
            return Err(invalid(format!("version {} is not supported (expected {VERSION})", parsed.version), at));
        }
        let display_name = capslint_workspace::discover::display_name(path, cwd);
        Ok(Baseline {
            file: Arc::new(SourceFile::new(path.to_path_buf(), display_name, text)),
            directory: directory_of(path, cwd),
            entries: parsed.findings,
        })
    }

    /// Drops the diagnostics the baseline records (each entry matches at most one finding) and adds
    /// CAP002 for every entry of a `checked` file that matched nothing although its rule ran.
    ///
    /// Apart from the suppression stage ([`capslint_diagnostics::suppress::apply`]): it runs on the diagnostics of the
    /// whole run, after the cross-file checks, because fingerprints count occurrences in report order.
    pub fn apply(&self, diagnostics: Vec<Diagnostic>, checked: &[Checked], cwd: &Path) -> Vec<Diagnostic> {
        let mut unmatched: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for (index, entry) in self.entries.iter().enumerate().rev() {
            unmatched.entry((entry.path.clone(), entry.fingerprint.clone())).or_default().push(index);
        }
        let path_of = |diagnostic: &Diagnostic| key(diagnostic.file.path(), cwd, &self.directory);
        let fingerprints = fingerprint::fingerprints(&diagnostics, path_of);
        let mut matched = vec![false; self.entries.len()];
        let mut kept = Vec::with_capacity(diagnostics.len());
        for (diagnostic, fingerprint) in diagnostics.into_iter().zip(fingerprints) {
            match unmatched.get_mut(&(path_of(&diagnostic), fingerprint.unique())).and_then(Vec::pop) {
                Some(index) => matched[index] = true,
                None => kept.push(diagnostic),
            }
        }
        let checked: HashMap<String, &Checked> =
            checked.iter().map(|file| (key(&file.path, cwd, &self.directory), file)).collect();
        let quoted = quoted_fingerprints(self.file.text());
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (entry, matched) in self.entries.iter().zip(matched) {
            let nth = seen.entry(entry.fingerprint.as_str()).or_insert(0);
            let occurrence = *nth;
            *nth += 1;
            let Some(file) = checked.get(&entry.path) else { continue };
            let rule_ran =
                Rule::ALL.iter().find(|rule| rule.code() == entry.code).is_none_or(|rule| file.rules.contains(*rule));
            if matched || !rule_ran || !file.rules.contains(Rule::UnusedSuppression) {
                continue;
            }
            let range = match quoted.get(entry.fingerprint.as_str()) {
                Some(starts) => starts
                    .get(occurrence)
                    .map(|start| TextRange::at(TextSize::from(*start as u32), TextSize::of(&entry.fingerprint)))
                    .unwrap_or_default(),
                None => self.fingerprint_range(&entry.fingerprint, occurrence),
            };
            kept.push(Diagnostic {
                finding: suppress::stale_baseline_entry(range, &entry.code, &entry.path),
                file: Arc::clone(&self.file),
                severity: file.unused_suppression,
            });
        }
        capslint_diagnostics::diagnostic::sort_by_key(&mut kept);
        kept
    }

    /// The range of the `nth` occurrence of `"fingerprint"` in the baseline's text (the start of the file
    /// when it cannot be found, e.g. because the file escapes it differently). A scan of the whole text:
    /// only for a fingerprint that is not 16 hex digits, which [`quoted_fingerprints`] indexes.
    fn fingerprint_range(&self, fingerprint: &str, nth: usize) -> TextRange {
        let quoted = format!("\"{fingerprint}\"");
        self.file
            .text()
            .match_indices(&quoted)
            .nth(nth)
            .map(|(start, _)| TextRange::at(TextSize::from(start as u32 + 1), TextSize::of(fingerprint)))
            .unwrap_or_default()
    }
}

/// Where each quoted 16-hex-digit string (the shape of a fingerprint) occurs in `text`, the offsets of
/// its first digit in order: one pass over the text, so pointing at stale entries stays linear.
fn quoted_fingerprints(text: &str) -> HashMap<&str, Vec<usize>> {
    const DIGITS: usize = 16;
    let bytes = text.as_bytes();
    let mut found: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut index = 0;
    while let Some(quote) = memchr::memchr(b'"', &bytes[index..]).map(|at| index + at) {
        let digits = quote + 1..quote + 1 + DIGITS;
        let closed = bytes.get(digits.end) == Some(&b'"');
        if closed && bytes[digits.clone()].iter().all(u8::is_ascii_hexdigit) {
            found.entry(&text[digits.clone()]).or_default().push(digits.start);
            index = digits.end + 1;
        } else {
            index = quote + 1;
        }
    }
    found
}

/// The byte offset of a 1-based line and column (as serde_json reports them) in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fingerprints_are_found_in_one_pass() {
        let text = r#"{"a": "0123456789abcdef", "b": "0123456789abcdef", "c": "short", "d": "0123456789abcdefg"}"#;
        let found = quoted_fingerprints(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found["0123456789abcdef"], [7, 32]);
    }

    #[test]
    fn offsets_of_line_and_column() {
        let text = "{\n  \"a\": 1,\n}\n";
        assert_eq!(offset_of(text, 1, 1), 0);
        assert_eq!(offset_of(text, 2, 3), 4);
        assert_eq!(offset_of(text, 99, 1), text.len());
    }

    #[test]
    fn the_file_format_round_trips_and_rejects_unknown_keys() {
        let file = BaselineFile {
            version: VERSION,
            findings: vec![Entry {
                code: "CAP101".into(),
                path: "src/train.py".into(),
                fingerprint: "0123456789abcdef".into(),
                message: "m".into(),
            }],
        };
        let text = serde_json::to_string(&file).unwrap();
        assert_eq!(serde_json::from_str::<BaselineFile>(&text).unwrap(), file);
        assert!(serde_json::from_str::<BaselineFile>(r#"{"version":1,"findings":[],"extra":1}"#).is_err());
    }
}
