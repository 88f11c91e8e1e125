//! Code actions on a document's findings: each finding's fix as a quick fix (an unsafe one only when
//! the editor turned unsafe fixes on, as `--unsafe-fixes` does; a display-only one never), a
//! suppression comment for the finding's line (`# noqa: CAPxxx` in Python and notebooks,
//! `# capslint: ignore[CAPxxx]` in YAML and TOML, as `check --add-noqa` writes them), and
//! `source.fixAll.capslint`: every fix `check --fix` would apply, by the same engine.

use std::collections::HashMap;
use std::sync::Arc;

use lsp_types::{CodeAction, CodeActionKind, Range, TextEdit, Uri, WorkspaceEdit};
use ruff_text_size::{TextRange, TextSize};

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fix::{Applicability, Edit};
use capslint_diagnostics::registry::Rule;
use capslint_linter::fix::{noqa, run as fixing};
use capslint_workspace::discover::FileKind;
use capslint_workspace::settings::Settings;

use crate::diagnostics::to_lsp;
use crate::lint::{Linted, Snapshot, input, with_open_texts};
use crate::position::{Encoding, LineIndex};

/// The kind of the action that applies every safe fix.
pub const FIX_ALL: &str = "source.fixAll.capslint";

/// Whether the client asked for actions of `kind` (`only` absent: every kind).
pub fn wanted(only: Option<&[CodeActionKind]>, kind: &CodeActionKind) -> bool {
    only.is_none_or(|only| {
        only.iter()
            .any(|asked| kind.as_str() == asked.as_str() || kind.as_str().starts_with(&format!("{}.", asked.as_str())))
    })
}

/// Whether two ranges touch (an empty request range at a finding's edge counts).
fn overlaps(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The quick fixes and suppressions of the findings of `linted` whose range in the client document `uri`
/// touches `range`.
pub fn for_range(
    linted: &Linted,
    kind: FileKind,
    uri: &Uri,
    range: Range,
    allowed: Applicability,
    only: Option<&[CodeActionKind]>,
) -> Vec<CodeAction> {
    let Some(first) = linted.diagnostics.first() else { return Vec::new() };
    let lines = LineIndex::new(first.file.text());
    let mut actions = Vec::new();
    for diagnostic in &linted.diagnostics {
        let Some((at, lsp)) = to_lsp(diagnostic, &linted.placer, &lines) else { continue };
        if at != *uri || !overlaps(lsp.range, range) {
            continue;
        }
        if wanted(only, &CodeActionKind::QUICKFIX) {
            actions.extend(quick_fix(linted, diagnostic, &lines, &lsp, allowed));
            actions.extend(suppression(linted, kind, diagnostic, &lines, &lsp));
        }
    }
    actions
}

/// The finding's fix, when it may be applied under `allowed`.
fn quick_fix(
    linted: &Linted,
    diagnostic: &Diagnostic,
    lines: &LineIndex,
    lsp: &lsp_types::Diagnostic,
    allowed: Applicability,
) -> Option<CodeAction> {
    let fix = diagnostic.finding.fix.as_ref().filter(|fix| fix.applies(allowed))?;
    let edit = workspace_edit(linted, diagnostic, lines, &fix.edits)?;
    let code = diagnostic.rule().code();
    let safety = if fix.applicability == Applicability::Unsafe { " (unsafe)" } else { "" };
    Some(CodeAction {
        title: format!("{code}: {}{safety}", fix.message),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![lsp.clone()]),
        edit: Some(edit),
        is_preferred: Some(fix.applicability == Applicability::Safe),
        ..CodeAction::default()
    })
}

/// A suppression comment for the finding's line, where the file kind takes one. A file that does not
/// parse, an unused suppression and a budget stop are not suppressed, as `--add-noqa` leaves them.
fn suppression(
    linted: &Linted,
    kind: FileKind,
    diagnostic: &Diagnostic,
    lines: &LineIndex,
    lsp: &lsp_types::Diagnostic,
) -> Option<CodeAction> {
    let rule = diagnostic.rule();
    if matches!(rule, Rule::SyntaxError | Rule::UnusedSuppression | Rule::AnalysisBudgetExceeded) {
        return None;
    }
    let (comment_kind, comment) = match kind {
        FileKind::Python | FileKind::Notebook => (FileKind::Python, format!("# noqa: {}", rule.code())),
        FileKind::Yaml | FileKind::Toml => (FileKind::Yaml, format!("# capslint: ignore[{}]", rule.code())),
        FileKind::Json => return None,
    };
    let edits = noqa::comment_edits(diagnostic.file.text(), comment_kind, &[diagnostic]);
    if edits.is_empty() {
        return None;
    }
    let edit = workspace_edit(linted, diagnostic, lines, &edits)?;
    Some(CodeAction {
        title: format!("{}: suppress with `{comment}`", rule.code()),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![lsp.clone()]),
        edit: Some(edit),
        ..CodeAction::default()
    })
}

/// `edits` of the diagnostic's checked text as a workspace edit of the client's documents; `None` when
/// an edit spans cells of a notebook.
fn workspace_edit(
    linted: &Linted,
    diagnostic: &Diagnostic,
    lines: &LineIndex,
    edits: &[Edit],
) -> Option<WorkspaceEdit> {
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for edit in edits {
        let (uri, range) = linted.placer.place_edit(&diagnostic.file, lines, edit.range)?;
        changes.entry(uri).or_default().push(TextEdit { range, new_text: edit.content.clone() });
    }
    Some(WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() })
}

/// The text of `snapshot` after every fix `check --fix` applies under `allowed` (and the passes after
/// them), or `None` when nothing changes. A notebook's fixes are not applied, as on the command line.
pub fn fixed_text(
    snapshot: &Snapshot,
    open: &[Snapshot],
    root: &std::path::Path,
    settings: Arc<Settings>,
    allowed: Applicability,
) -> Option<String> {
    if snapshot.cells.is_some() {
        return None;
    }
    let input = input(snapshot, root, settings);
    let outcome = with_open_texts(open, || fixing::fix_inputs(vec![input], allowed));
    let fixed = outcome.files.into_iter().next()?.fixed;
    (fixed != snapshot.contents).then_some(fixed)
}

/// The one edit that turns `old` into `new`: the span between their common prefix and suffix.
pub fn minimal_edit(old: &str, new: &str, encoding: Encoding) -> TextEdit {
    let mut prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let longest = old.len().min(new.len()) - prefix;
    let mut suffix = old.bytes().rev().zip(new.bytes().rev()).take(longest).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    let range = TextRange::new(TextSize::from(prefix as u32), TextSize::from((old.len() - suffix) as u32));
    TextEdit {
        range: LineIndex::new(old).range(old, range, encoding),
        new_text: new[prefix..new.len() - suffix].to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimal_edit_spans_what_changed() {
        let old = "Parallel(n_jobs=-1)\nx = 'é'\n";
        let new = "Parallel(n_jobs=1)\nx = 'é'\n";
        let edit = minimal_edit(old, new, Encoding::Utf16);
        assert_eq!(edit.new_text, "");
        assert_eq!((edit.range.start.character, edit.range.end.character), (16, 17));
        let same = minimal_edit("aaa", "aaaa", Encoding::Utf16);
        assert_eq!((same.range.start.character, same.new_text.as_str()), (3, "a"));
    }

    #[test]
    fn kinds_asked_for_include_their_subkinds() {
        let fix_all = CodeActionKind::from(FIX_ALL);
        assert!(wanted(None, &fix_all));
        assert!(wanted(Some(&[CodeActionKind::SOURCE_FIX_ALL]), &fix_all));
        assert!(wanted(Some(&[CodeActionKind::SOURCE]), &fix_all));
        assert!(!wanted(Some(&[CodeActionKind::QUICKFIX]), &fix_all));
    }
}
