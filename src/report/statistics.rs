//! `--statistics`: how many findings each rule produced, most frequent first, as ruff prints them.

use std::fmt::Write;

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::registry::Rule;

/// One rule's count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleCount {
    /// The rule's code.
    pub code: &'static str,
    /// The rule's name.
    pub name: &'static str,
    /// How many findings it produced.
    pub count: usize,
}

/// The counts per rule, by descending count, then by code.
pub fn count(diagnostics: &[Diagnostic]) -> Vec<RuleCount> {
    let mut counts: Vec<RuleCount> = Rule::ALL
        .iter()
        .map(|rule| RuleCount {
            code: rule.code(),
            name: rule.name(),
            count: diagnostics.iter().filter(|diagnostic| diagnostic.rule() == *rule).count(),
        })
        .filter(|count| count.count > 0)
        .collect();
    counts.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(b.code)));
    counts
}

/// `count<TAB>code<TAB>name` lines, the count right-aligned, then a total line.
pub fn render_text(diagnostics: &[Diagnostic]) -> String {
    let counts = count(diagnostics);
    let width = counts.iter().map(|count| count.count.to_string().len()).max().unwrap_or(1);
    let mut out = String::new();
    for count in &counts {
        let _ = writeln!(out, "{:>width$}\t{}\t{}", count.count, count.code, count.name);
    }
    let total = diagnostics.len();
    if total == 0 {
        out.push_str("All checks passed.\n");
    } else {
        let _ = writeln!(out, "Found {total} finding{}.", if total == 1 { "" } else { "s" });
    }
    out
}

/// The counts as a JSON array of `{code, name, count}`.
pub fn render_json(diagnostics: &[Diagnostic]) -> String {
    let mut out = serde_json::to_string_pretty(&count(diagnostics)).expect("counts serialize");
    out.push('\n');
    out
}
