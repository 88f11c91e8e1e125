//! `check --add-noqa`: a suppression comment on the line of every finding, as ruff's `--add-noqa` does
//! (`# noqa: CAP101` in Python, `# capslint: ignore[CAP201]` in YAML), merged into a comment of that
//! kind already on the line. A file is rewritten only when the result still parses and checking it
//! again reports none of the findings suppressed; otherwise it is left alone, with a warning.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use ruff_text_size::{TextRange, TextSize};

use crate::lint::{self, Input};
use crate::report::terminal::escape_name;
use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fix::Edit;
use capslint_diagnostics::fix::apply::apply;
use capslint_diagnostics::registry::Rule;
use capslint_workspace::discover::FileKind;

/// Runs `--add-noqa` over `inputs`; `unread` are the paths that could not be listed.
pub fn run(inputs: Vec<Input>, unread: Vec<String>) -> ExitCode {
    let run = lint::check_inputs(inputs.clone());
    let mut errors = run.errors.clone();
    errors.extend(unread);
    let mut by_file: BTreeMap<PathBuf, Vec<&Diagnostic>> = BTreeMap::new();
    for diagnostic in &run.diagnostics {
        // A file that does not parse, an unused suppression or a budget stop is not silenced.
        if !matches!(diagnostic.rule(), Rule::SyntaxError | Rule::UnusedSuppression | Rule::AnalysisBudgetExceeded) {
            by_file.entry(diagnostic.file.path().to_path_buf()).or_default().push(diagnostic);
        }
    }
    let mut added = 0;
    for (path, diagnostics) in by_file {
        let Some(input) = inputs.iter().find(|input| input.path == path && input.contents.is_none()) else { continue };
        let file = &diagnostics[0].file;
        let name = escape_name(file.display_name()).into_owned();
        if file.cells().is_some() || !matches!(input.kind, FileKind::Python | FileKind::Yaml) {
            eprintln!("warning: {name}: suppression comments are not added to this kind of file");
            continue;
        }
        let text = file.text();
        let writable =
            input.settings.confinement.writable(&path, file.display_name()).map_err(|refusal| refusal.to_string());
        let writable = writable.and_then(|resolved| {
            let metadata = std::fs::metadata(&resolved).map_err(|error| error.to_string())?;
            capslint_workspace::atomic::may_rewrite(&metadata).map(|()| resolved)
        });
        let on_disk = match writable {
            Ok(resolved) => capslint_workspace::confine::open_regular(
                &resolved,
                file.display_name(),
                capslint_workspace::confine::MAX_FILE_BYTES,
            )
            .ok(),
            Err(why) => {
                eprintln!("warning: {name}: not changed: {}", escape_name(&why));
                continue;
            }
        };
        if on_disk.as_deref() != Some(text.as_bytes()) {
            eprintln!("warning: {name}: not changed: it is not UTF-8, or it changed while it was being checked");
            continue;
        }
        let edits = comment_edits(text, input.kind, &diagnostics);
        let fixes: Vec<capslint_diagnostics::fix::Fix> = edits
            .into_iter()
            .map(|edit| capslint_diagnostics::fix::Fix::safe("add a suppression", vec![edit]))
            .collect();
        let applied = apply(text, &fixes.iter().collect::<Vec<_>>());
        if applied.applied.is_empty() || applied.text == text {
            continue;
        }
        let mut again = input.clone();
        again.contents = Some(applied.text.clone().into_bytes());
        let checked = lint::check_inputs(vec![again]);
        let silenced =
            |rule: Rule| !matches!(rule, Rule::UnusedSuppression | Rule::SyntaxError | Rule::AnalysisBudgetExceeded);
        let still = checked.diagnostics.iter().filter(|diagnostic| silenced(diagnostic.rule())).count();
        // A file that did not parse before may take comments as long as they break nothing more.
        let syntax_errors = |diagnostics: &[Diagnostic], file: &std::path::Path| {
            diagnostics
                .iter()
                .filter(|diagnostic| diagnostic.rule() == Rule::SyntaxError && diagnostic.file.path() == file)
                .count()
        };
        let before = syntax_errors(&run.diagnostics, &path);
        let after = syntax_errors(&checked.diagnostics, &path);
        let breaks =
            if before == 0 { !super::run::parses(input.kind, &applied.text) || after > 0 } else { after > before };
        if breaks {
            eprintln!("warning: {name}: not changed: the comments would break the file");
            continue;
        }
        if still > 0 && input.kind == FileKind::Python {
            eprintln!("warning: {name}: {still} finding(s) could not be suppressed on their line");
        }
        if let Err(error) = capslint_workspace::atomic::rewrite(&path, applied.text.as_bytes()) {
            errors.push(format!("cannot write {}: {error}", path.display()));
            continue;
        }
        added += applied.applied.len();
    }
    for error in &errors {
        eprintln!("error: {}", escape_name(error));
    }
    // As ruff counts: the comments written (one per line, however many findings it silences).
    eprintln!("Added {added} suppression{}.", if added == 1 { "" } else { "s" });
    if errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) }
}

/// One edit per line that has findings: a new comment at the end of the line, or the codes added to the
/// suppression comment already there. Lines whose end is inside a string are skipped. `text` is the
/// checked text of the diagnostics' file, Python (a notebook's cells too) or YAML.
pub fn comment_edits(text: &str, kind: FileKind, diagnostics: &[&Diagnostic]) -> Vec<Edit> {
    let mut lines: BTreeMap<usize, Vec<&'static str>> = BTreeMap::new();
    for diagnostic in diagnostics {
        let start = usize::from(diagnostic.finding.range.start()).min(text.len());
        let line_end = text[start..].find('\n').map_or(text.len(), |index| start + index);
        let codes = lines.entry(line_end).or_default();
        if !codes.contains(&diagnostic.rule().code()) {
            codes.push(diagnostic.rule().code());
        }
    }
    let strings = if kind == FileKind::Python { python_strings(text) } else { Vec::new() };
    let mut edits = Vec::new();
    for (line_end, codes) in lines {
        if strings.iter().any(|range| usize::from(range.start()) < line_end && line_end < usize::from(range.end())) {
            continue;
        }
        let line_start = text[..line_end].rfind('\n').map_or(0, |index| index + 1);
        let line = text[line_start..line_end].trim_end_matches('\r');
        let content_end = line_start + line.trim_end().len();
        let at = TextSize::from(content_end as u32);
        let edit = match kind {
            FileKind::Python => merge_python(line, line_start, &codes)
                .unwrap_or_else(|| Edit::insertion(format!("  # noqa: {}", codes.join(", ")), at)),
            _ => merge_yaml(line, line_start, &codes)
                .unwrap_or_else(|| Edit::insertion(format!("  # capslint: ignore[{}]", codes.join(",")), at)),
        };
        // A comment that already names every code needs nothing.
        if !edit.content.is_empty() {
            edits.push(edit);
        }
    }
    edits
}

/// Codes added to a `# noqa: ...` comment already on the line (`None` when there is none).
fn merge_python(line: &str, line_start: usize, codes: &[&str]) -> Option<Edit> {
    let noqa = line.find("# noqa:")?;
    let list_start = noqa + "# noqa:".len();
    let list_len = line[list_start..]
        .find(|character: char| !(character.is_ascii_alphanumeric() || character == ',' || character == ' '))
        .unwrap_or(line.len() - list_start);
    let list = line[list_start..list_start + list_len].trim_end();
    let new: Vec<&str> =
        codes.iter().copied().filter(|code| !list.split([',', ' ']).any(|have| have == *code)).collect();
    let at = TextSize::from((line_start + list_start + list.len()) as u32);
    Some(Edit::insertion(new.iter().map(|code| format!(", {code}")).collect::<String>(), at))
}

/// Codes added to a `# capslint: ignore[...]` comment already on the line (`None` when there is none).
fn merge_yaml(line: &str, line_start: usize, codes: &[&str]) -> Option<Edit> {
    let open = line.find("capslint: ignore[")? + "capslint: ignore[".len();
    let close = open + line[open..].find(']')?;
    let list = &line[open..close];
    let new: Vec<&str> =
        codes.iter().copied().filter(|code| !list.split(',').any(|have| have.trim() == *code)).collect();
    let separator = if list.trim().is_empty() { "" } else { "," };
    let at = TextSize::from((line_start + close) as u32);
    Some(Edit::insertion(format!("{separator}{}", new.join(",")), at))
}

/// The ranges of the string tokens of a Python text (a line that ends inside one cannot take a comment).
fn python_strings(text: &str) -> Vec<TextRange> {
    use ruff_python_ast::token::TokenKind;
    use ruff_text_size::Ranged;
    let parsed = ruff_python_parser::parse_module(text);
    let Ok(parsed) = parsed else { return Vec::new() };
    parsed
        .tokens()
        .iter()
        .filter(|token| matches!(token.kind(), TokenKind::String | TokenKind::FStringMiddle | TokenKind::FStringStart))
        .map(|token| token.range())
        .collect()
}
