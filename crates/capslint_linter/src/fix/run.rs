//! `check --fix` and `--diff`: check, apply the fixes that are allowed, check the changed files again,
//! and repeat until nothing more applies (at most [`MAX_PASSES`] times), as ruff does. Only the files a
//! pass changed are checked again (with the files whose findings point into them); the cross-file phase
//! runs on every pass. A pass's result for a file is kept only when it still parses: otherwise the fixes
//! that break it are found one by one and dropped, with a note.

use std::collections::{BTreeMap, HashMap, HashSet};

use rayon::prelude::*;
use std::path::{Path, PathBuf};

use crate::lint::{self, FileResult, Input, RunResult};
use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fix::apply::apply;
use capslint_diagnostics::fix::{Applicability, Fix};
use capslint_diagnostics::registry::Rule;
use capslint_workspace::confine::{self, Refusal};
use capslint_workspace::discover::FileKind;

/// How many times the files are fixed and checked again before the run stops trying.
pub const MAX_PASSES: usize = 10;

/// One file the fixes changed.
#[derive(Debug, Clone)]
pub struct FixedFile {
    /// Where it is (as given).
    pub path: PathBuf,
    /// The name shown in reports.
    pub display_name: String,
    /// Its text before.
    pub original: String,
    /// Its text after every pass.
    pub fixed: String,
    /// Whether it came from standard input.
    pub stdin: bool,
    /// How many findings its fixes fixed, per rule.
    pub fixed_findings: BTreeMap<Rule, usize>,
}

/// What a fix run did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The last check: the findings that remain.
    pub run: RunResult,
    /// The files changed, in input order.
    pub files: Vec<FixedFile>,
    /// How many findings were fixed, per rule: the sum over [`Self::files`].
    pub fixed: BTreeMap<Rule, usize>,
    /// Fixes left out because the file would not parse after them, or files that cannot be rewritten.
    pub notes: Vec<String>,
}

impl Outcome {
    /// How many findings were fixed in all.
    pub fn fixed_count(&self) -> usize {
        self.fixed.values().sum()
    }

    /// Forgets the fixes of the files at `unwritten` (indexes into [`Self::files`]) that could not be
    /// written: the counts are of what is on disk.
    pub fn forget(&mut self, unwritten: &[usize]) {
        for &index in unwritten {
            for (rule, count) in &self.files[index].fixed_findings {
                if let Some(total) = self.fixed.get_mut(rule) {
                    *total -= count;
                }
            }
        }
        self.fixed.retain(|_, count| *count > 0);
    }
}

/// The current text of one input being fixed.
struct Working {
    original: String,
    current: String,
}

/// Checks `inputs`, applying every fix of applicability `allowed` or safer, pass after pass.
pub fn fix_inputs(inputs: Vec<Input>, allowed: Applicability) -> Outcome {
    let scanned = lint::scanned_yaml(&inputs);
    let mut results = lint::check_each(inputs.clone(), &lint::project_index(&inputs));
    let mut run = lint::combine(results.clone(), &scanned);
    let index: HashMap<PathBuf, usize> =
        inputs.iter().enumerate().map(|(position, input)| (input.path.clone(), position)).collect();
    let mut working: BTreeMap<usize, Working> = BTreeMap::new();
    let mut unfixable: HashSet<usize> = HashSet::new();
    let mut outcome = Outcome::default();
    let mut fixed: BTreeMap<usize, BTreeMap<Rule, usize>> = BTreeMap::new();
    for pass in 0..MAX_PASSES {
        let groups: Vec<(usize, Vec<&Diagnostic>)> = fixable(&run.diagnostics, allowed)
            .into_iter()
            .filter_map(|(path, diagnostics)| index.get(path).map(|&position| (position, diagnostics)))
            .filter(|(position, _)| !unfixable.contains(position))
            .collect();
        // The texts of files fixed for the first time, read in parallel.
        let first_reads: Vec<(usize, usize, Result<String, String>)> = groups
            .par_iter()
            .filter(|(position, _)| !working.contains_key(position))
            .map(|(position, diagnostics)| {
                let file = &diagnostics[0].file;
                (*position, diagnostics.len(), editable_text(&inputs[*position], file.text(), file.cells().is_some()))
            })
            .collect();
        for (position, count, read) in first_reads {
            match read {
                Ok(text) => {
                    working.insert(position, Working { original: text.clone(), current: text });
                }
                Err(why) => {
                    let fixes = if count == 1 { "1 fix".to_string() } else { format!("{count} fixes") };
                    outcome.notes.push(format!("{}: {fixes} not applied: {why}", inputs[position].display_name));
                    unfixable.insert(position);
                }
            }
        }
        // Each file's fixes applied in parallel. The check that follows parses the result; a file whose
        // CAP001 is off is parsed here instead.
        let applied: Vec<(usize, String, Vec<usize>, Vec<String>)> = groups
            .par_iter()
            .filter_map(|(position, diagnostics)| {
                let state = working.get(position)?;
                let input = &inputs[*position];
                let fixes: Vec<&Fix> =
                    diagnostics.iter().filter_map(|diagnostic| diagnostic.finding.fix.as_ref()).collect();
                let mut notes = Vec::new();
                if reports_syntax_errors(input) {
                    let all = apply(&state.current, &fixes);
                    return Some((*position, all.text, all.applied, notes));
                }
                let (text, applied) =
                    apply_parsing(&state.current, &fixes, input.kind, &input.display_name, &mut notes);
                Some((*position, text, applied, notes))
            })
            .collect();
        let mut before: HashMap<usize, (String, Vec<usize>)> = HashMap::new();
        let by_position: HashMap<usize, &Vec<&Diagnostic>> =
            groups.iter().map(|(position, diagnostics)| (*position, diagnostics)).collect();
        let mut changed = Vec::new();
        for (position, text, indexes, notes) in applied {
            outcome.notes.extend(notes);
            if indexes.is_empty() {
                continue;
            }
            for &index in &indexes {
                *fixed.entry(position).or_default().entry(by_position[&position][index].rule()).or_default() += 1;
            }
            let state = working.get_mut(&position).expect("read above");
            before.insert(position, (std::mem::replace(&mut state.current, text), indexes));
            changed.push(position);
        }
        if changed.is_empty() {
            break;
        }
        if pass + 1 == MAX_PASSES {
            outcome.notes.push(format!("fixes were still being applied after {MAX_PASSES} passes; run again"));
        }
        // Findings reported in other files that point into a changed file may have changed with it.
        let changed_paths: HashSet<&Path> = changed.iter().map(|&position| inputs[position].path.as_path()).collect();
        let mut rechecked: HashSet<usize> = changed.iter().copied().collect();
        for diagnostic in &run.diagnostics {
            let points_in =
                diagnostic.finding.related.iter().any(|related| changed_paths.contains(&related.file.path()));
            if points_in
                && let Some(&position) = index.get(diagnostic.file.path())
                && rechecked.insert(position)
            {
                changed.push(position);
            }
        }
        let again: Vec<Input> = changed
            .iter()
            .map(|&position| {
                let mut input = inputs[position].clone();
                if let Some(state) = working.get(&position) {
                    input.contents = Some(state.current.clone().into_bytes());
                }
                input
            })
            .collect();
        capslint_workspace::edited::set(
            working.iter().map(|(&position, state)| (inputs[position].path.as_path(), state.current.as_str())),
        );
        let fresh = lint::check_each(again, &lint::project_index(&inputs));
        let mut broken = Vec::new();
        for (&position, result) in changed.iter().zip(fresh) {
            if before.contains_key(&position) && has_syntax_error(&result) && !has_syntax_error(&results[position]) {
                broken.push(position);
            } else {
                results[position] = result;
            }
        }
        // A file the fixes broke: back to its text before this pass, then its fixes one at a time, each
        // kept only when the file still parses.
        if !broken.is_empty() {
            for &position in &broken {
                let (previous, indexes) = before.remove(&position).expect("changed this pass");
                let diagnostics = by_position[&position];
                for &index in &indexes {
                    *fixed.entry(position).or_default().entry(diagnostics[index].rule()).or_default() -= 1;
                }
                let fixes: Vec<&Fix> =
                    diagnostics.iter().filter_map(|diagnostic| diagnostic.finding.fix.as_ref()).collect();
                let input = &inputs[position];
                let (text, applied) =
                    apply_parsing(&previous, &fixes, input.kind, &input.display_name, &mut outcome.notes);
                for index in applied {
                    *fixed.entry(position).or_default().entry(diagnostics[index].rule()).or_default() += 1;
                }
                working.get_mut(&position).expect("read above").current = text;
            }
            capslint_workspace::edited::set(
                working.iter().map(|(&position, state)| (inputs[position].path.as_path(), state.current.as_str())),
            );
            let again: Vec<Input> = broken
                .iter()
                .map(|&position| Input {
                    contents: Some(working[&position].current.clone().into_bytes()),
                    ..inputs[position].clone()
                })
                .collect();
            for (position, result) in broken.iter().zip(lint::check_each(again, &lint::project_index(&inputs))) {
                results[*position] = result;
            }
        }
        run = lint::combine(results.clone(), &scanned);
    }
    capslint_workspace::edited::clear();
    outcome.files = working
        .into_iter()
        .filter(|(_, state)| state.current != state.original)
        .map(|(position, state)| FixedFile {
            path: inputs[position].path.clone(),
            display_name: inputs[position].display_name.clone(),
            original: state.original,
            fixed: state.current,
            stdin: inputs[position].contents.is_some(),
            fixed_findings: fixed.remove(&position).unwrap_or_default(),
        })
        .collect();
    for file in &mut outcome.files {
        file.fixed_findings.retain(|_, count| *count > 0);
        for (rule, count) in &file.fixed_findings {
            *outcome.fixed.entry(*rule).or_default() += count;
        }
    }
    outcome.run = run;
    outcome
}

/// The diagnostics whose fixes `allowed` lets apply, by file.
fn fixable(diagnostics: &[Diagnostic], allowed: Applicability) -> BTreeMap<&Path, Vec<&Diagnostic>> {
    let mut by_file: BTreeMap<&Path, Vec<&Diagnostic>> = BTreeMap::new();
    for diagnostic in diagnostics {
        if diagnostic.fixable(allowed) {
            by_file.entry(diagnostic.file.path()).or_default().push(diagnostic);
        }
    }
    by_file
}

/// The text the fixes edit, when it is the file's exact contents (a notebook's checked text is its
/// cells, and a file read through a PEP 263 encoding is not its bytes) and the file may be rewritten: a
/// regular file below the run's roots, named with no symbolic link on its path, that its mode lets the
/// user write.
fn editable_text(input: &Input, checked: &str, notebook: bool) -> Result<String, String> {
    if notebook {
        return Err("fixes in notebooks are shown, not applied".to_string());
    }
    let bytes = match &input.contents {
        Some(bytes) => bytes.clone(),
        None => {
            let resolved = input.settings.confinement.writable(&input.path, &input.display_name).map_err(
                |refusal| match refusal {
                    Refusal::Link(_) => "it is reached through a symbolic link; fixes are written only to the file \
                                         itself"
                        .to_string(),
                    refusal => format!("{refusal}"),
                },
            )?;
            let metadata = std::fs::metadata(&resolved).map_err(|error| format!("cannot read it again: {error}"))?;
            capslint_workspace::atomic::may_rewrite(&metadata)?;
            confine::open_regular(&resolved, &input.display_name, capslint_workspace::confine::MAX_FILE_BYTES)
                .map_err(|refusal| format!("cannot read it again: {refusal}"))?
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) if text == checked => Ok(text),
        Ok(_) => Err("it changed while it was being checked".to_string()),
        Err(_) => Err("it is not UTF-8".to_string()),
    }
}

/// Whether the checks of `input` report a file that does not parse (CAP001 is enabled for it).
fn reports_syntax_errors(input: &Input) -> bool {
    input.settings.rules_for(&input.path).contains(Rule::SyntaxError)
}

/// Whether a file's result reports that it does not parse.
fn has_syntax_error(result: &FileResult) -> bool {
    result.diagnostics.iter().any(|diagnostic| diagnostic.rule() == Rule::SyntaxError)
}

/// Applies `fixes` to `text`; when the result does not parse, applies them one at a time instead,
/// dropping each that breaks the file (with a note). Returns the text and the indexes applied.
fn apply_parsing(
    text: &str,
    fixes: &[&Fix],
    kind: FileKind,
    name: &str,
    notes: &mut Vec<String>,
) -> (String, Vec<usize>) {
    let all = apply(text, fixes);
    if all.applied.is_empty() || parses(kind, &all.text) {
        return (all.text, all.applied);
    }
    let mut current = text.to_string();
    let mut applied = Vec::new();
    for index in all.applied {
        let one = apply(&current, &[fixes[index]]);
        if one.applied.is_empty() {
            continue;
        }
        if parses(kind, &one.text) {
            current = one.text;
            applied.push(index);
        } else {
            notes.push(format!(
                "{name}: a fix was dropped because the file would not parse after it: {}",
                fixes[index].message
            ));
        }
    }
    (current, applied)
}

/// Whether `text` parses as a file of `kind`.
pub fn parses(kind: FileKind, text: &str) -> bool {
    match kind {
        FileKind::Python => ruff_python_parser::parse_module(text).is_ok(),
        FileKind::Yaml => capslint_yaml::for_each_document(text, |_| {}).is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use ruff_text_size::{TextRange, TextSize};

    use super::*;
    use capslint_diagnostics::fix::Edit;

    #[test]
    fn a_fix_that_breaks_the_file_is_dropped_and_the_others_kept() {
        let text = "f(n_jobs=-1)\ng(n_jobs=-1)\n";
        let good =
            Fix::safe("good", vec![Edit::replacement("1", TextRange::new(TextSize::from(9), TextSize::from(11)))]);
        let bad = Fix::safe("bad", vec![Edit::insertion("(", TextSize::from(22))]);
        let mut notes = Vec::new();
        let (fixed, applied) = apply_parsing(text, &[&good, &bad], FileKind::Python, "a.py", &mut notes);
        assert_eq!(fixed, "f(n_jobs=1)\ng(n_jobs=-1)\n");
        assert_eq!(applied, vec![0]);
        assert_eq!(notes, vec!["a.py: a fix was dropped because the file would not parse after it: bad"]);
    }
}
