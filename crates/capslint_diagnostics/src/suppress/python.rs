//! Inline suppressions for Python: `# noqa` (everything on the line) and `# noqa: CAP101, CAP102`, the
//! convention of flake8 and ruff, so users can list `CAP` under ruff's `lint.external`. A `# noqa` that
//! names a capslint code and suppresses nothing is itself reported (CAP002); other tools' codes
//! (`E501`) are theirs to judge. Applied through [`super::apply`].

use ruff_text_size::{TextRange, TextSize};

use super::unused;
use crate::diagnostic::Finding;
use crate::registry::Rule;
use crate::selection::RuleSet;
use crate::source::SourceFile;

/// One `# noqa` comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Noqa {
    /// The comment's range.
    pub range: TextRange,
    /// `None` for a bare `# noqa`; otherwise every code named, with its range.
    pub codes: Option<Vec<(String, TextRange)>>,
}

/// Parses a `# noqa` directive out of a comment that starts at `start`.
pub fn parse_noqa(comment: &str, start: TextSize) -> Option<Noqa> {
    let bytes = comment.as_bytes();
    // Most comments have no `q`: they are passed over with one search.
    memchr::memchr2(b'q', b'Q', bytes)?;
    let mut search_from = 0;
    while let Some(hash) = comment[search_from..].find('#').map(|index| index + search_from) {
        let after_hash = hash + 1;
        let rest = &comment[after_hash..];
        let trimmed = rest.trim_start();
        let noqa_at = after_hash + (rest.len() - trimmed.len());
        if trimmed.as_bytes().get(..4).is_some_and(|word| word.eq_ignore_ascii_case(b"noqa")) {
            let mut cursor = noqa_at + 4;
            let range = TextRange::new(start + TextSize::from(hash as u32), start + TextSize::of(comment));
            // `# noqa:CODES`, `# noqa: CODES`; anything else after `noqa` makes it a bare noqa.
            if bytes.get(cursor) != Some(&b':') {
                return Some(Noqa { range, codes: None });
            }
            cursor += 1;
            let mut codes = Vec::new();
            loop {
                while bytes.get(cursor).is_some_and(|byte| *byte == b' ' || *byte == b',' || *byte == b'\t') {
                    cursor += 1;
                }
                let code_start = cursor;
                while bytes.get(cursor).is_some_and(u8::is_ascii_uppercase) {
                    cursor += 1;
                }
                let letters_end = cursor;
                while bytes.get(cursor).is_some_and(u8::is_ascii_digit) {
                    cursor += 1;
                }
                if letters_end == code_start || cursor == letters_end {
                    break;
                }
                let code = &comment[code_start..cursor];
                let code_range =
                    TextRange::new(start + TextSize::from(code_start as u32), start + TextSize::from(cursor as u32));
                codes.push((code.to_string(), code_range));
            }
            return Some(Noqa { range, codes: if codes.is_empty() { None } else { Some(codes) } });
        }
        search_from = after_hash;
    }
    None
}

/// Applies the `# noqa` comments among `comments` to the findings of `file`; returns the findings kept
/// plus CAP002 for unused codes.
pub(super) fn apply(findings: Vec<Finding>, comments: &[TextRange], file: &SourceFile, rules: RuleSet) -> Vec<Finding> {
    let directives: Vec<(usize, Noqa)> = comments
        .iter()
        .filter_map(|range| parse_noqa(&file.text()[*range], range.start()).map(|noqa| (file.row(range.start()), noqa)))
        .collect();
    if directives.is_empty() {
        return findings;
    }
    let mut used: Vec<Vec<bool>> =
        directives.iter().map(|(_, noqa)| vec![false; noqa.codes.as_ref().map_or(0, Vec::len)]).collect();
    let mut kept = Vec::with_capacity(findings.len());
    for finding in findings {
        let row = file.row(finding.range.start());
        let mut suppressed = false;
        for (index, (directive_row, noqa)) in directives.iter().enumerate() {
            if *directive_row != row {
                continue;
            }
            match &noqa.codes {
                None => suppressed = true,
                Some(codes) => {
                    for (code_index, (code, _)) in codes.iter().enumerate() {
                        if code == finding.rule.code() {
                            used[index][code_index] = true;
                            suppressed = true;
                        }
                    }
                }
            }
        }
        if !suppressed {
            kept.push(finding);
        }
    }
    if rules.contains(Rule::UnusedSuppression) {
        for ((_, noqa), used) in directives.iter().zip(&used) {
            let all = noqa.codes.as_deref().unwrap_or_default();
            for (index, ((code, range), used)) in noqa.codes.iter().flatten().zip(used).enumerate() {
                let Some(rule) = Rule::from_code_or_name(code).filter(|rule| rule.code() == code) else { continue };
                if *used || !rules.contains(rule) {
                    continue;
                }
                kept.push(
                    unused(
                        *range,
                        format!("`# noqa: {code}` suppresses nothing on this line"),
                        format!("remove `{code}` from the `# noqa` comment"),
                    )
                    .fix(super::removal_fix(file.text(), noqa.range, all, index)),
                );
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(comment: &str) -> Option<Vec<String>> {
        parse_noqa(comment, TextSize::from(0))
            .expect("a noqa")
            .codes
            .map(|codes| codes.into_iter().map(|(code, _)| code).collect())
    }

    #[test]
    fn parses_the_flake8_forms() {
        assert_eq!(codes("# noqa"), None);
        assert_eq!(codes("#noqa"), None);
        assert_eq!(codes("# NOQA"), None);
        assert_eq!(codes("# noqa: CAP101"), Some(vec!["CAP101".into()]));
        assert_eq!(codes("# noqa:CAP101,CAP102"), Some(vec!["CAP101".into(), "CAP102".into()]));
        assert_eq!(codes("# noqa: E501, CAP101 because"), Some(vec!["E501".into(), "CAP101".into()]));
        assert_eq!(codes("# type: ignore  # noqa: CAP103"), Some(vec!["CAP103".into()]));
        assert_eq!(parse_noqa("# not a suppression", TextSize::from(0)), None);
        assert_eq!(parse_noqa("# ━━━━ 100%", TextSize::from(0)), None);
        assert_eq!(parse_noqa("#━", TextSize::from(0)), None);
        assert_eq!(parse_noqa("# é — not one either", TextSize::from(0)), None);
        assert_eq!(codes("# é — # noqa: CAP101"), Some(vec!["CAP101".into()]));
    }

    #[test]
    fn code_ranges_point_into_the_comment() {
        let comment = "# noqa: E501, CAP101";
        let noqa = parse_noqa(comment, TextSize::from(10)).unwrap();
        let (_, range) = &noqa.codes.unwrap()[1];
        assert_eq!(u32::from(range.start()), 10 + 14);
        assert_eq!(u32::from(range.len()), 6);
    }
}
