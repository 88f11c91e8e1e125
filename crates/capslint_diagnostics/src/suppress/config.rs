//! Suppressing CAP109 in YAML and TOML model configurations: the manifests' comment,
//! `# capslint: ignore[CAP109]` (or `[all-cores-in-config]`), on the line where the finding starts.
//! Applied through [`super::apply`], file by file. A CAP109 code that suppresses nothing is reported
//! (CAP002); codes of other rules are left to the manifest rules of the same file. JSON has no comments:
//! `per-file-ignores` or the baseline are the way there.

use ruff_text_size::{TextRange, TextSize};

use super::yaml::{Directive, DirectiveScan};
use crate::diagnostic::Finding;
use crate::registry::Rule;
use crate::selection::RuleSet;
use crate::source::SourceFile;

/// Whether a directive's code names CAP109.
fn names_rule(code: &str) -> bool {
    Rule::from_code_or_name(code) == Some(Rule::AllCoresInConfig)
}

/// The directives of a TOML text: the `# capslint:` comments, minus those inside `strings` (the ranges of
/// its strings and keys).
pub fn toml_directives(text: &str, mut strings: Vec<TextRange>) -> Vec<Directive> {
    let mut directives = DirectiveScan::new(text).finish(text);
    if directives.is_empty() {
        return directives;
    }
    strings.sort_by_key(|range| range.start());
    directives.retain(|directive| !inside(&strings, directive.start));
    directives
}

/// Whether `offset` lies inside one of `ranges`, sorted by start and not overlapping.
fn inside(ranges: &[TextRange], offset: TextSize) -> bool {
    let before = ranges.partition_point(|range| range.start() <= offset);
    before.checked_sub(1).is_some_and(|index| ranges[index].contains(offset))
}

/// Drops the CAP109 findings a directive suppresses, adds CAP002 for every CAP109 code that suppresses
/// nothing, and leaves in `directives` only the codes of other rules (for the manifest rules of the same
/// file).
pub(super) fn apply(
    findings: Vec<Finding>,
    slot: &mut Vec<Directive>,
    file: &SourceFile,
    rules: RuleSet,
) -> Vec<Finding> {
    if slot.iter().all(|directive| !directive.codes.iter().any(|(code, _)| names_rule(code))) {
        return findings;
    }
    let directives = std::mem::take(slot);
    let mut ours: Vec<(usize, String, TextRange, bool)> = Vec::new();
    let mut rest = Vec::with_capacity(directives.len());
    for mut directive in directives {
        let row = file.row(directive.start);
        let (mine, others): (Vec<_>, Vec<_>) = directive.codes.into_iter().partition(|(code, _)| names_rule(code));
        ours.extend(mine.into_iter().map(|(code, range)| (row, code, range, false)));
        if !others.is_empty() {
            directive.codes = others;
            rest.push(directive);
        }
    }
    let mut kept = Vec::with_capacity(findings.len());
    for finding in findings {
        let row = file.row(finding.range.start());
        let mut suppressed = false;
        for (directive_row, _, _, used) in &mut ours {
            if *directive_row == row && finding.rule == Rule::AllCoresInConfig {
                *used = true;
                suppressed = true;
            }
        }
        if !suppressed {
            kept.push(finding);
        }
    }
    if rules.contains(Rule::UnusedSuppression) {
        for (_, code, range, used) in ours {
            if !used {
                kept.push(
                    Finding::new(
                        Rule::UnusedSuppression,
                        range,
                        format!("`# capslint: ignore[{code}]` suppresses nothing"),
                    )
                    .label("unused")
                    .help(format!("remove `{code}` from the suppression")),
                );
            }
        }
    }
    *slot = rest;
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_inside_strings_are_not_directives() {
        let text = "a = \"x # capslint: ignore[CAP109]\"\nn_jobs = -1  # capslint: ignore[CAP109]\n";
        let string_start = TextSize::from(4);
        let strings = vec![TextRange::new(string_start, TextSize::from(34))];
        let directives = toml_directives(text, strings);
        assert_eq!(directives.len(), 1);
        assert_eq!(usize::from(directives[0].start), text.rfind('#').unwrap());
    }

    #[test]
    fn other_codes_are_left_for_the_manifest_rules() {
        let text = "n_jobs: -1  # capslint: ignore[CAP201, all-cores-in-config]\nx: 1  # capslint: ignore[CAP109]\n";
        let file = SourceFile::new("c.yaml".into(), "c.yaml".into(), text.to_string());
        let mut rest = DirectiveScan::new(text).finish(text);
        let finding = Finding::new(Rule::AllCoresInConfig, TextRange::new(TextSize::from(0), TextSize::from(10)), "x");
        let rules = RuleSet::defaults();
        let kept = apply(vec![finding], &mut rest, &file, rules);
        let codes: Vec<Rule> = kept.iter().map(|finding| finding.rule).collect();
        assert_eq!(codes, [Rule::UnusedSuppression]);
        assert_eq!(&text[kept[0].range], "CAP109");
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].codes.iter().map(|(code, _)| code.as_str()).collect::<Vec<_>>(), ["CAP201"]);
    }
}
