//! Hover on a finding: the rule's code, name and summary, the finding's message, the opening section of
//! the rule's page (`## What it does`, embedded in the binary) and a link to the page.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position, Uri};

use capslint_diagnostics::registry::Rule;

use crate::diagnostics::to_lsp;
use crate::lint::Linted;
use crate::position::LineIndex;

/// The hover of the findings of `linted` under `position` of the client document `uri`.
pub fn hover(linted: &Linted, uri: &Uri, position: Position) -> Option<Hover> {
    let first = linted.diagnostics.first()?;
    let lines = LineIndex::new(first.file.text());
    let mut sections = Vec::new();
    for diagnostic in &linted.diagnostics {
        let Some((at, lsp)) = to_lsp(diagnostic, &linted.placer, &lines) else { continue };
        if at == *uri && lsp.range.start <= position && position <= lsp.range.end {
            sections.push(rule_help(diagnostic.rule(), &diagnostic.finding.message));
        }
    }
    if sections.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: sections.join("\n\n---\n\n"),
        }),
        range: None,
    })
}

/// The Markdown that explains a finding of `rule`.
pub fn rule_help(rule: Rule, message: &str) -> String {
    let mut out = format!("**{}** `{}`: {}\n\n{message}\n", rule.code(), rule.name(), rule.summary());
    let section = what_it_does(rule.documentation());
    if !section.is_empty() {
        out.push('\n');
        out.push_str(&section);
        out.push('\n');
    }
    out.push_str(&format!("\n[{} documentation]({})", rule.code(), rule.url()));
    out
}

/// The `## What it does` section of a rule page, without its heading.
fn what_it_does(page: &str) -> String {
    let lines: Vec<&str> = page
        .lines()
        .skip_while(|line| line.trim() != "## What it does")
        .skip(1)
        .take_while(|line| !line.starts_with("## "))
        .collect();
    lines.join("\n").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_holds_the_pages_opening_section_and_link() {
        let help = rule_help(Rule::NJobsAllCores, "`n_jobs=-1` uses every core");
        assert!(help.starts_with("**CAP101** `n-jobs-all-cores`"));
        assert!(help.contains("Reports a parallelism argument"));
        assert!(!help.contains("## "));
        assert!(help.ends_with(&format!("({})", Rule::NJobsAllCores.url())));
    }
}
