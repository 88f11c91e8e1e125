//! Suppressions in manifests: the `capslint.io/ignore: "CAP202,CAP203"` annotation on an object's
//! metadata (in the spirit of `ignore-check.kube-linter.io/<check>`), and a `# capslint: ignore[CAP201]`
//! comment on the line where the finding starts or on the line of its container's `- name:`. A code that
//! suppresses nothing, or names no rule, is reported as CAP002. Applied through [`super::apply`], once
//! for the whole scan: a finding in one file (a ConfigMap) can be suppressed in another (at the
//! container that reads it).

use ruff_text_size::{TextRange, TextSize};
use rustc_hash::{FxHashMap, FxHashSet};

use super::unused;
use crate::diagnostic::Finding;
use crate::registry::{Family, Rule};
use crate::selection::RuleSet;
use crate::source::SourceFile;
use capslint_yaml::Node;

const PREFIX: &str = "capslint:";

/// The annotation that exempts an object from rules.
pub const IGNORE_ANNOTATION: &str = "capslint.io/ignore";

/// One code of a `capslint.io/ignore` annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoreCode {
    /// The code or rule name as written.
    pub code: String,
    /// Where it is written, for an unused-suppression report.
    pub range: TextRange,
}

/// A finding of the manifest rules with what can suppress it.
#[derive(Debug, Clone)]
pub struct Reported {
    /// The file it is reported in (an index into the scan's files).
    pub file: usize,
    /// The finding.
    pub finding: Finding,
    /// The objects whose `capslint.io/ignore` annotation suppresses it: `(file, object)`.
    pub owners: Vec<(usize, usize)>,
    /// Lines where a `# capslint: ignore[...]` comment suppresses it: `(file, offset on the line)`.
    pub lines: Vec<(usize, TextSize)>,
}

/// What can suppress findings in one manifest file: its objects' annotations and its comments.
#[derive(Debug)]
pub struct ManifestSuppressions<'a> {
    /// The file.
    pub file: &'a SourceFile,
    /// The rules enabled for it (CAP002 is reported only for enabled rules).
    pub rules: RuleSet,
    /// Its objects, in document order: their annotation codes, and how to name them in a report.
    pub objects: Vec<(&'a [IgnoreCode], String)>,
    /// Its `# capslint: ignore[...]` comments.
    pub directives: &'a [Directive],
}

/// One `# capslint: ignore[...]` comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Where the comment starts.
    pub start: TextSize,
    /// The codes, each with its range.
    pub codes: Vec<(String, TextRange)>,
}

/// Parses the directive of a comment whose `#` is at `hash` in `text`.
fn parse(text: &str, hash: usize) -> Option<Directive> {
    let line_end = text[hash..].find('\n').map_or(text.len(), |index| hash + index);
    let comment = &text[hash + 1..line_end];
    let rest = comment.trim_start().strip_prefix(PREFIX)?.trim_start();
    let inner = rest.strip_prefix("ignore")?.trim_start().strip_prefix('[')?;
    let close = inner.find(']')?;
    // `inner` is a suffix of the line.
    let inner_start = line_end - inner.len();
    let mut codes = Vec::new();
    let mut offset = 0;
    for piece in inner[..close].split(',') {
        let code = piece.trim();
        let code_start = inner_start + offset + (piece.len() - piece.trim_start().len());
        offset += piece.len() + 1;
        if !code.is_empty() {
            codes.push((code.to_string(), TextRange::at(TextSize::from(code_start as u32), TextSize::of(code))));
        }
    }
    (!codes.is_empty()).then(|| Directive { start: TextSize::from(hash as u32), codes })
}

/// Finds the directives of a file. A `#` counts only where YAML starts a comment (at the start of a line
/// or after whitespace) and outside every scalar, so a quoted or block string that mentions one is text:
/// the candidates are found in the text, then each document's scalars are noted, then
/// [`DirectiveScan::finish`] keeps the candidates outside them.
pub struct DirectiveScan {
    found: Vec<Directive>,
    scalars: Vec<TextRange>,
}

impl DirectiveScan {
    /// The candidates of `text`.
    pub fn new(text: &str) -> Self {
        let found = memchr::memmem::find_iter(text.as_bytes(), PREFIX)
            .filter_map(|at| {
                let before = text[..at].trim_end_matches([' ', '\t']);
                let hash = before.len().checked_sub(1).filter(|hash| text.as_bytes()[*hash] == b'#')?;
                let starts_comment = hash == 0 || matches!(text.as_bytes()[hash - 1], b' ' | b'\t' | b'\n' | b'\r');
                starts_comment.then(|| parse(text, hash)).flatten()
            })
            .collect();
        DirectiveScan { found, scalars: Vec::new() }
    }

    /// Notes the scalars of one document that hold a candidate (nothing to do when the text has none): the
    /// others cannot hide one, and keeping only these bounds what is kept by the candidates, not the file.
    pub fn document(&mut self, document: Node<'_>) {
        if self.found.is_empty() {
            return;
        }
        let mut stack = vec![document];
        while let Some(node) = stack.pop() {
            if node.scalar().is_some() {
                let range = node.range();
                // The candidates are in text order: the first at or after the scalar's start is the one to test.
                let first = self.found.partition_point(|directive| directive.start < range.start());
                if self.found.get(first).is_some_and(|directive| range.contains(directive.start)) {
                    self.scalars.push(range);
                }
                continue;
            }
            stack.extend(node.items());
            for (key, value) in node.entries() {
                stack.push(key);
                stack.push(value);
            }
        }
    }

    /// The directives of `text` (the text given to [`DirectiveScan::new`]): the candidates outside every
    /// scalar. A quoted scalar's range runs on to the next token, over a comment after it: it ends at its
    /// closing quote here.
    pub fn finish(self, text: &str) -> Vec<Directive> {
        let DirectiveScan { mut found, mut scalars } = self;
        // Scalars do not overlap: the one that could hold a comment is the last that starts before it.
        scalars.sort_by_key(|range| range.start());
        found.retain(|directive| {
            let before = scalars.partition_point(|range| range.start() <= directive.start);
            !before.checked_sub(1).is_some_and(|index| {
                let range = scalars[index];
                range.contains(directive.start) && quoted_end(text, range).is_none_or(|end| directive.start < end)
            })
        });
        found
    }
}

/// Where a quoted scalar written at `range` ends (after its closing quote); `None` when it is not quoted
/// or its quote does not close within `range`.
pub fn quoted_end(text: &str, range: TextRange) -> Option<TextSize> {
    let written = text.get(usize::from(range.start())..usize::from(range.end()))?;
    let bytes = written.as_bytes();
    let quote = *bytes.first().filter(|first| matches!(first, b'\'' | b'"'))?;
    let mut index = 1;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' if quote == b'"' => index += 2,
            b'\'' if quote == b'\'' && bytes.get(index + 1) == Some(&b'\'') => index += 2,
            byte if byte == quote => return Some(range.start() + TextSize::from(index as u32 + 1)),
            _ => index += 1,
        }
    }
    None
}

/// Whether an annotation or directive code names `rule`.
fn names(code: &str, rule: Rule) -> bool {
    code.eq_ignore_ascii_case(rule.code()) || code.eq_ignore_ascii_case(rule.name())
}

/// Drops the suppressed findings and adds CAP002 for every code that suppressed nothing; returns
/// `(file, finding)` pairs, `file` an index into `files`.
pub(super) fn apply(files: &[ManifestSuppressions<'_>], reported: Vec<Reported>) -> Vec<(usize, Finding)> {
    let mut used_annotations: FxHashSet<(usize, usize, usize)> = FxHashSet::default();
    let mut used_directives: FxHashSet<(usize, usize, usize)> = FxHashSet::default();
    let mut by_row: FxHashMap<(usize, usize), Vec<usize>> = FxHashMap::default();
    for (file_index, file) in files.iter().enumerate() {
        for (index, directive) in file.directives.iter().enumerate() {
            by_row.entry((file_index, file.file.row(directive.start))).or_default().push(index);
        }
    }
    let mut kept = Vec::new();
    for item in reported {
        let rule = item.finding.rule;
        let mut suppressed = false;
        for &(file, object) in &item.owners {
            for (index, code) in files[file].objects[object].0.iter().enumerate() {
                if names(&code.code, rule) {
                    used_annotations.insert((file, object, index));
                    suppressed = true;
                }
            }
        }
        for &(file, offset) in &item.lines {
            let on_row = by_row.get(&(file, files[file].file.row(offset))).map_or(&[][..], Vec::as_slice);
            for &directive_index in on_row {
                let directive = &files[file].directives[directive_index];
                for (code_index, (code, _)) in directive.codes.iter().enumerate() {
                    if names(code, rule) {
                        used_directives.insert((file, directive_index, code_index));
                        suppressed = true;
                    }
                }
            }
        }
        if !suppressed {
            kept.push((item.file, item.finding));
        }
    }
    for (file_index, file) in files.iter().enumerate() {
        if !file.rules.contains(Rule::UnusedSuppression) {
            continue;
        }
        for (object_index, (codes, object)) in file.objects.iter().enumerate() {
            for (index, code) in codes.iter().enumerate() {
                if used_annotations.contains(&(file_index, object_index, index)) {
                    continue;
                }
                let description = format!("`{IGNORE_ANNOTATION}: {}` on {object}", code.code);
                if let Some(finding) = unused_code(file, &code.code, code.range, &description) {
                    kept.push((file_index, finding));
                }
            }
        }
        for (directive_index, directive) in file.directives.iter().enumerate() {
            for (code_index, (code, range)) in directive.codes.iter().enumerate() {
                if used_directives.contains(&(file_index, directive_index, code_index)) {
                    continue;
                }
                let description = format!("`# capslint: ignore[{code}]`");
                if let Some(finding) = unused_code(file, code, *range, &description) {
                    let fix = directive_range(file.file.text(), directive)
                        .map(|whole| super::removal_fix(file.file.text(), whole, &directive.codes, code_index));
                    kept.push((file_index, finding.fix_if(fix)));
                }
            }
        }
    }
    kept
}

/// The whole `# capslint: ignore[...]` comment, from its `#` to its `]`.
fn directive_range(text: &str, directive: &Directive) -> Option<TextRange> {
    let last = usize::from(directive.codes.last()?.1.end());
    let close = last + text.get(last..)?.find(']')? + 1;
    Some(TextRange::new(directive.start, TextSize::from(close as u32)))
}

/// CAP002 for an unused code, unless it names a rule that is not enabled for the file.
fn unused_code(file: &ManifestSuppressions<'_>, code: &str, range: TextRange, description: &str) -> Option<Finding> {
    match Rule::from_code_or_name(code) {
        Some(rule) if !file.rules.contains(rule) || rule.family() == Family::Meta => None,
        Some(_) => Some(unused(
            range,
            format!("{description} suppresses nothing"),
            format!("remove `{code}` from the suppression"),
        )),
        None => Some(
            Finding::new(Rule::UnusedSuppression, range, format!("{description} names no capslint rule"))
                .label("unknown code")
                .help("use a code (`CAP201`) or a rule name (`missing-cpu-limit`); `capslint rule --all` lists them"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directives(text: &str) -> Vec<Directive> {
        let mut scan = DirectiveScan::new(text);
        capslint_yaml::for_each_document(text, |document| scan.document(document)).unwrap();
        scan.finish(text)
    }

    #[test]
    fn a_comment_after_a_quoted_value_is_a_directive_and_one_inside_is_not() {
        let text = "a: 'x'  # capslint: ignore[CAP205]\nb: \"y \\\" # capslint: ignore[CAP201]\"  # capslint: ignore[CAP202]\nc: 'it''s # capslint: ignore[CAP203]'\n";
        let codes: Vec<String> =
            directives(text).into_iter().flat_map(|directive| directive.codes).map(|(code, _)| code).collect();
        assert_eq!(codes, vec!["CAP205", "CAP202"]);
    }

    fn codes(text: &str) -> Vec<String> {
        directives(text).into_iter().flat_map(|directive| directive.codes).map(|(code, _)| code).collect()
    }

    #[test]
    fn comments_are_directives_scalars_are_not() {
        assert_eq!(codes("a: 1  # capslint: ignore[CAP201, CAP203]\n"), vec!["CAP201", "CAP203"]);
        assert_eq!(codes("# capslint: ignore[missing-cpu-limit]\na: 1\n"), vec!["missing-cpu-limit"]);
        assert!(codes("a: \"x # capslint: ignore[CAP201]\"\n").is_empty());
        assert!(codes("a: |\n  # capslint: ignore[CAP201]\n").is_empty());
        assert!(codes("a: x#capslint:ignore[CAP201]\n").is_empty());
        assert!(codes("a: 1 # capslint: ignore\n").is_empty());
    }

    #[test]
    fn code_ranges_point_at_the_codes() {
        let text = "a: 1  # capslint: ignore[ CAP201 ,CAP203]\n";
        let directive = directives(text).remove(0);
        for (code, range) in directive.codes {
            assert_eq!(&text[range], code);
        }
    }
}
