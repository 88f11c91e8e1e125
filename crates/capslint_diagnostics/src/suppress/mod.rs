//! Suppression, the stage between the rules and the report, for every kind of file. [`apply`] is its one
//! entry point: it drops the findings an inline suppression covers and reports (CAP002) every code of a
//! suppression that covered nothing. What a suppression looks like depends on the kind of file:
//!
//! - Python: `# noqa` comments ([`python`]), applied file by file;
//! - manifests: `capslint.io/ignore` annotations and `# capslint: ignore[...]` comments ([`yaml`]),
//!   applied once to the whole scan, because a finding in one file can be suppressed in another;
//! - model configurations (CAP109): the same comments in YAML and TOML ([`config`]), file by file.
//!
//! A baseline ([`capslint_linter::baseline`]) is applied apart, by `capslint check`, to the diagnostics of the whole
//! run once the cross-file checks are done. It matches a diagnostic by fingerprint ([`crate::fingerprint`]:
//! rule, file, the text of the finding's lines, and its occurrence among the findings that share these,
//! in report order), not by a suppression on its line, so it needs every diagnostic of a file, of every
//! kind, in their final order; and it reports a stale entry on the baseline file, not on a checked one.
//! Its CAP002 wording is here with the others: [`stale_baseline_entry`].

pub mod config;
pub mod python;
pub mod yaml;

pub use yaml::{ManifestSuppressions, Reported};

use ruff_text_size::{TextRange, TextSize};

use crate::diagnostic::Finding;
use crate::fix::{Edit, Fix};
use crate::registry::Rule;
use crate::selection::RuleSet;
use crate::source::SourceFile;

/// The findings one pass of the stage judges, with what can suppress them.
pub enum Scope<'a> {
    /// One Python file: its findings, and its comments, where a `# noqa` may be.
    Python {
        /// The file.
        file: &'a SourceFile,
        /// The rules enabled for it (CAP002 is reported only for enabled rules).
        rules: RuleSet,
        /// The byte ranges of its comments.
        comments: &'a [TextRange],
        /// Its findings.
        findings: Vec<Finding>,
    },
    /// Every manifest of the scan, with their annotations and `# capslint: ignore[...]` comments, and the
    /// findings of all of them, each with the objects and lines that can suppress it.
    /// One model configuration (YAML or TOML): its CAP109 findings and its `# capslint: ignore[...]`
    /// comments, from which the CAP109 codes are taken (the rest is for the manifest rules of the file).
    Config {
        /// The file.
        file: &'a SourceFile,
        /// The rules enabled for it.
        rules: RuleSet,
        /// Its CAP109 findings.
        findings: Vec<Finding>,
        /// Its comments: on return, without their CAP109 codes.
        directives: &'a mut Vec<yaml::Directive>,
    },
    Manifests {
        /// The files.
        files: &'a [ManifestSuppressions<'a>],
        /// The findings.
        reported: Vec<Reported>,
    },
}

/// Applies the inline suppressions of `scope`: returns the findings no suppression covers, plus CAP002
/// for every suppression code that covered nothing, each with the index of its file in the scope (`0`
/// for the one file of a Python scope).
pub fn apply(scope: Scope<'_>) -> Vec<(usize, Finding)> {
    match scope {
        Scope::Python { file, rules, comments, findings } => {
            python::apply(findings, comments, file, rules).into_iter().map(|finding| (0, finding)).collect()
        }
        Scope::Config { file, rules, findings, directives } => {
            config::apply(findings, directives, file, rules).into_iter().map(|finding| (0, finding)).collect()
        }
        Scope::Manifests { files, reported } => yaml::apply(files, reported),
    }
}

/// CAP002 for a code of an inline suppression that suppresses nothing.
fn unused(range: TextRange, message: String, help: String) -> Finding {
    Finding::new(Rule::UnusedSuppression, range, message).label("unused").help(help)
}

/// The safe fix of an unused code: the whole comment `directive` when it is the only code (with the
/// blanks before it, and its line when nothing else is on it), else the code with one separator.
pub fn removal_fix(text: &str, directive: TextRange, codes: &[(String, TextRange)], index: usize) -> Fix {
    let code = &codes[index].0;
    if codes.len() <= 1 {
        let start = usize::from(directive.start());
        let line_start = text[..start].rfind('\n').map_or(0, |newline| newline + 1);
        let blank_from = text[line_start..start].trim_end_matches([' ', '\t']).len() + line_start;
        let end = usize::from(directive.end()).min(text.len());
        let rest_of_line = text[end..].find('\n').map_or(&text[end..], |newline| &text[end..end + newline]);
        let range = if blank_from == line_start && rest_of_line.trim().is_empty() {
            // The comment is the whole line: the line goes.
            let line_end = text[end..].find('\n').map_or(text.len(), |newline| end + newline + 1);
            TextRange::new(TextSize::from(line_start as u32), TextSize::from(line_end as u32))
        } else {
            TextRange::new(TextSize::from(blank_from as u32), directive.end())
        };
        return Fix::safe("Remove the unused suppression comment", vec![Edit::deletion(range)]);
    }
    let range = match index {
        0 => TextRange::new(codes[0].1.start(), codes[1].1.start()),
        _ => TextRange::new(codes[index - 1].1.end(), codes[index].1.end()),
    };
    Fix::safe(format!("Remove `{code}` from the suppression"), vec![Edit::deletion(range)])
}

/// CAP002 for a baseline entry that matched no finding: `range` is the entry's fingerprint in the
/// baseline file, `code` and `path` say what it recorded.
pub fn stale_baseline_entry(range: TextRange, code: &str, path: &str) -> Finding {
    Finding::new(
        Rule::UnusedSuppression,
        range,
        format!("baseline entry for `{code}` in `{path}` matches no finding"),
    )
    .label("stale entry")
    .help("the finding was fixed or its line changed: remove the entry, or rewrite the baseline with `--write-baseline`")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use ruff_text_size::TextSize;

    use super::*;

    #[test]
    fn a_python_scope_keeps_what_no_noqa_covers_and_reports_unused_codes() {
        let text = "f(n_jobs=-1)  # noqa: CAP101\ng(n_jobs=-1)  # noqa: CAP102\n";
        let file = SourceFile::new(PathBuf::from("a.py"), "a.py".into(), text.into());
        // Each comment runs from its `#` to the end of its line.
        let comments: Vec<TextRange> = text
            .match_indices('#')
            .map(|(hash, _)| {
                TextRange::new(
                    TextSize::from(hash as u32),
                    TextSize::from(text[hash..].find('\n').unwrap() as u32 + hash as u32),
                )
            })
            .collect();
        let finding_at = |needle: &str| {
            let start = TextSize::from(text.find(needle).unwrap() as u32);
            Finding::new(Rule::NJobsAllCores, TextRange::at(start, TextSize::from(1)), "n_jobs=-1")
        };
        let rules: RuleSet =
            [Rule::NJobsAllCores, Rule::MissingThreadCount, Rule::UnusedSuppression].into_iter().collect();
        let scope = Scope::Python {
            file: &file,
            rules,
            comments: &comments,
            findings: vec![finding_at("f("), finding_at("g(")],
        };
        let kept: Vec<(usize, Rule, usize)> = apply(scope)
            .into_iter()
            .map(|(index, finding)| (index, finding.rule, file.row(finding.range.start())))
            .collect();
        assert_eq!(kept, [(0, Rule::NJobsAllCores, 2), (0, Rule::UnusedSuppression, 2)]);
    }
}
