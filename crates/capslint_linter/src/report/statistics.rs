//! `--statistics`: how many findings each rule produced, most frequent first, as ruff prints them.

use std::fmt::Write;

use serde::Serialize;

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fix::Applicability;
use capslint_diagnostics::registry::Rule;

/// One rule's count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleCount {
    /// The rule's code.
    pub code: &'static str,
    /// The rule's name.
    pub name: &'static str,
    /// How many findings it produced.
    pub count: usize,
    /// Whether `--fix` would fix some of them.
    pub fixable: bool,
}

/// The counts per rule, by descending count, then by code; a rule is fixable when a fix of `allowed`
/// applicability (or safer) would apply to one of its findings.
pub fn count(diagnostics: &[Diagnostic], allowed: Applicability) -> Vec<RuleCount> {
    let mut counts: Vec<RuleCount> = Rule::ALL
        .iter()
        .map(|rule| RuleCount {
            code: rule.code(),
            name: rule.name(),
            count: diagnostics.iter().filter(|diagnostic| diagnostic.rule() == *rule).count(),
            fixable: diagnostics.iter().any(|diagnostic| diagnostic.rule() == *rule && diagnostic.fixable(allowed)),
        })
        .filter(|count| count.count > 0)
        .collect();
    counts.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(b.code)));
    counts
}

/// `count<TAB>code<TAB>name` lines (`[*] name` when fixable, as ruff writes it), the count
/// right-aligned, then a total line.
pub fn render_text(diagnostics: &[Diagnostic], allowed: Applicability) -> String {
    let counts = count(diagnostics, allowed);
    let width = counts.iter().map(|count| count.count.to_string().len()).max().unwrap_or(1);
    let mut out = String::new();
    for count in &counts {
        let marker = if count.fixable { "[*] " } else { "" };
        let _ = writeln!(out, "{:>width$}\t{}\t{marker}{}", count.count, count.code, count.name);
    }
    let total = diagnostics.len();
    if total == 0 {
        out.push_str("All checks passed.\n");
    } else {
        let _ = writeln!(out, "Found {total} finding{}.", if total == 1 { "" } else { "s" });
    }
    out
}

/// The counts as a JSON array of `{code, name, count, fixable}`.
pub fn render_json(diagnostics: &[Diagnostic], allowed: Applicability) -> String {
    let mut out = serde_json::to_string_pretty(&count(diagnostics, allowed)).expect("counts serialize");
    out.push('\n');
    out
}
