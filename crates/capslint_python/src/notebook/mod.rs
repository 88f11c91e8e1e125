//! Jupyter notebooks (`*.ipynb`) as Python sources, by ruff's conventions: the code cells that run as
//! Python, in cell order, each followed by a line break, make one module, parsed in IPython mode. Names
//! bound in one cell are seen in the next, and execution order (CAP106) is cell order. Findings, `# noqa`
//! comments and fingerprints work on that module; reports locate findings by cell through [`CellMap`].
//! A cell that writes a Python module (`%%writefile train.py`) holds a program that runs elsewhere: it is
//! placed in the same text and map, and checked as a module of its own.
//!
//! - `json`: the notebook's JSON to code cells, with the position of each source string;
//! - `magics`: which code cells are Python to IPython;
//! - `cells`: the concatenated text and its map back to cells and to the JSON.

mod json;
mod magics;

use std::sync::Arc;

use ruff_text_size::{TextRange, TextSize};

pub use capslint_diagnostics::source::cells::{CellLocation, CellMap};
pub use json::ReadError;

use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::{Family, Rule};
use capslint_diagnostics::selection::RuleSet;
use capslint_diagnostics::source::SourceFile;
use capslint_workspace::settings::Settings;

/// A notebook's Python: its code cells concatenated, and the map back to the notebook.
#[derive(Debug)]
pub struct Module {
    /// The code cells that run as Python, and those that write a Python module to a file, in order,
    /// each followed by a line break.
    pub text: String,
    /// Where each cell is in `text`, and in the notebook's JSON.
    pub cells: CellMap,
    /// The modules the notebook's cells write (`%%writefile train.py`), each as the bodies, in `text`, of
    /// the cell that writes the file and of the cells that append to it after it: each runs in a
    /// process of its own, not in the notebook's kernel.
    pub written: Vec<Vec<TextRange>>,
}

/// Reads the notebook whose JSON is `raw` into its Python module. A notebook whose kernel runs another
/// language has an empty module.
pub fn read(raw: &str) -> Result<Module, ReadError> {
    let document = json::parse(raw)?;
    let mut builder = capslint_diagnostics::source::cells::Builder::new(raw);
    // Each file's versions, in order: a cell that writes it starts one, a cell that appends joins the last.
    let mut written: Vec<Vec<TextRange>> = Vec::new();
    let mut last_version: rustc_hash::FxHashMap<String, usize> = rustc_hash::FxHashMap::default();
    if document.is_python {
        for cell in &document.code_cells {
            let source: String = cell.pieces.iter().map(|piece| piece.text.as_str()).collect();
            let module = magics::written_python_module(&source);
            if module.is_none() && !magics::runs_as_python(&source) {
                continue;
            }
            let start = usize::from(builder.push(cell.number, cell.offset, &cell.pieces));
            if let Some(module) = module {
                let body = TextRange::new(to_size(start + module.body), to_size(start + source.len()));
                match last_version.get(module.file) {
                    Some(&version) if module.appends => written[version].push(body),
                    _ => {
                        last_version.insert(module.file.to_string(), written.len());
                        written.push(vec![body]);
                    }
                }
            }
        }
    }
    let (text, cells) = builder.finish();
    Ok(Module { text, cells, written })
}

/// An offset into the notebook's code, which the file size limit keeps far below 4 GiB.
fn to_size(offset: usize) -> TextSize {
    TextSize::try_from(offset).unwrap_or(TextSize::from(u32::MAX))
}

/// `text` up to the end of the last of `kept` (ranges in order), with everything but `kept` blanked.
fn only(text: &str, kept: &[TextRange]) -> String {
    let end = kept.last().map_or(0, |range| usize::from(range.end()));
    let mut gaps = Vec::with_capacity(kept.len());
    let mut from = 0;
    for range in kept {
        gaps.push(from..usize::from(range.start()));
        from = usize::from(range.end());
    }
    crate::blank::blanked(&text[..end], gaps)
}

/// Checks a notebook: `file` holds its JSON. Returns the file the findings are in with the findings:
/// the notebook's Python module, whose locations map back to cells, or `file` itself with one CAP001
/// finding when it is not a notebook that can be read.
pub fn check(
    file: &Arc<SourceFile>,
    rules: RuleSet,
    settings: &Settings,
    project: &crate::ProjectIndex,
) -> (Arc<SourceFile>, Vec<Finding>) {
    let any_python = rules.iter().any(|rule| rule.family() == Family::Python);
    if !any_python && !rules.contains(Rule::SyntaxError) {
        return (Arc::clone(file), Vec::new());
    }
    let module = match read(file.text()) {
        Ok(module) => module,
        Err(error) => {
            let findings = rules.contains(Rule::SyntaxError).then(|| unreadable(&error)).into_iter().collect();
            return (Arc::clone(file), findings);
        }
    };
    let written = module.written;
    let code = Arc::new(
        SourceFile::new(file.path().to_path_buf(), file.display_name().to_string(), module.text)
            .with_cells(module.cells),
    );
    let path = capslint_workspace::paths::absolute(file.path(), settings.cwd());
    let may_have_findings = |text: &str| {
        !settings.prefilter
            || crate::prefilter::may_have_findings(text)
            || project.imports_module_with_findings(&path, text)
    };
    if !may_have_findings(code.text()) {
        return (code, Vec::new());
    }
    let Some(cells) = code.cells() else { return (code, Vec::new()) };
    let context = crate::ProjectContext { index: project, file: &path };
    // The notebook's own module leaves out the modules its cells write; each of those is checked alone.
    let notebook_text = if written.is_empty() {
        std::borrow::Cow::Borrowed(code.text())
    } else {
        let cells_written = written.iter().flatten().filter_map(|body| cells.cell_range(body.start()));
        std::borrow::Cow::Owned(crate::blank::blanked(
            code.text(),
            cells_written.map(|cell| cell.start().into()..cell.end().into()),
        ))
    };
    let mut outcome = crate::PythonOutcome::default();
    if written.is_empty() || may_have_findings(&notebook_text) {
        outcome = crate::check_cells(&notebook_text, cells, crate::CellCode::Notebook, rules, settings, Some(context));
    }
    // Each module is checked as a text as long as the notebook up to its last cell: the work is bounded.
    let checked = within_the_written_budget(&written, code.text().len());
    if let Some(first_unchecked) = written.get(checked)
        && rules.contains(Rule::AnalysisBudgetExceeded)
    {
        outcome.findings.push(past_the_written_budget(first_unchecked[0], written.len(), checked));
    }
    for bodies in &written[..checked] {
        let script = only(code.text(), bodies);
        if may_have_findings(&script) {
            let checked =
                crate::check_cells(&script, cells, crate::CellCode::WrittenModule, rules, settings, Some(context));
            outcome.findings.extend(checked.findings);
            outcome.comments.extend(checked.comments);
        }
    }
    outcome.comments.sort_by_key(|comment| comment.start());
    let scope = capslint_diagnostics::suppress::Scope::Python {
        file: &code,
        rules,
        comments: &outcome.comments,
        findings: outcome.findings,
    };
    let findings = capslint_diagnostics::suppress::apply(scope).into_iter().map(|(_, finding)| finding).collect();
    (code, findings)
}

/// How many modules written by a notebook's cells are checked at most.
pub const MAX_WRITTEN_MODULES: usize = 32;

/// How many bytes of text the modules written by a notebook's cells may take together, each counted as
/// long as the notebook up to its last cell: 8 times the notebook's code, and at least 64 MiB.
fn written_bytes_budget(code_bytes: usize) -> usize {
    code_bytes.saturating_mul(8).max(64 << 20)
}

/// How many of the `written` modules (each as its cells' bodies) of a notebook whose code is `code_bytes`
/// long are checked: the first ones within [`MAX_WRITTEN_MODULES`] and [`written_bytes_budget`].
fn within_the_written_budget(written: &[Vec<TextRange>], code_bytes: usize) -> usize {
    let mut bytes_left = written_bytes_budget(code_bytes);
    written
        .iter()
        .take(MAX_WRITTEN_MODULES)
        .take_while(|bodies| {
            let length = bodies.last().map_or(0, |body| usize::from(body.end()));
            let within = length <= bytes_left;
            bytes_left = bytes_left.saturating_sub(length);
            within
        })
        .count()
}

/// The CAP003 finding at the first module of a notebook's cells past the bounds ([`MAX_WRITTEN_MODULES`],
/// [`written_bytes_budget`]); `checked` modules were checked before it.
fn past_the_written_budget(body: TextRange, count: usize, checked: usize) -> Finding {
    Finding::new(
        Rule::AnalysisBudgetExceeded,
        TextRange::empty(body.start()),
        format!(
            "this notebook's cells write {count} Python modules: the first {checked} are checked, this one and \
             those after it are past the notebook's budget (at most {MAX_WRITTEN_MODULES} modules, each as long \
             as the notebook up to it, 8 times its code in all)"
        ),
    )
    .label("not checked from here")
    .help("split the notebook, or keep the modules as files of the repository, where each is checked")
}

/// The CAP001 finding of a notebook that cannot be read.
fn unreadable(error: &ReadError) -> Finding {
    let at = TextSize::try_from(error.offset).unwrap_or_default();
    Finding::new(Rule::SyntaxError, TextRange::empty(at), error.message.clone())
        .label("cannot read the notebook here")
        .help("open and save the notebook in Jupyter, or exclude it (`extend-exclude`)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notebook(cells: &[(&str, &str)]) -> String {
        let cells: Vec<serde_json::Value> = cells
            .iter()
            .map(|(kind, source)| {
                let lines: Vec<String> = source.split_inclusive('\n').map(str::to_string).collect();
                serde_json::json!({"cell_type": kind, "metadata": {}, "source": lines})
            })
            .collect();
        serde_json::to_string_pretty(&serde_json::json!({"cells": cells, "nbformat": 4, "nbformat_minor": 5})).unwrap()
    }

    #[test]
    fn written_modules_are_checked_within_a_count_and_a_byte_budget() {
        let module_ending_at = |end: u32| vec![TextRange::new(TextSize::from(end - 1), TextSize::from(end))];
        // Small modules: the count decides.
        let small: Vec<_> = (1..=40).map(|index| module_ending_at(index * 100)).collect();
        assert_eq!(within_the_written_budget(&small, 4_000), MAX_WRITTEN_MODULES);
        assert_eq!(within_the_written_budget(&small[..5], 4_000), 5);
        // Modules late in a large notebook: the bytes decide, 8 times the code (64 MiB at least).
        let code = 32u32 << 20;
        let late: Vec<_> = (0..10).map(|_| module_ending_at(code)).collect();
        assert_eq!(within_the_written_budget(&late, code as usize), 8, "8 * 32 MiB is the budget, 9 are past it");
        let tiny_notebook: Vec<_> = (0..3).map(|_| module_ending_at(30 << 20)).collect();
        assert_eq!(within_the_written_budget(&tiny_notebook, 100), 2, "the 64 MiB floor");
    }

    #[test]
    fn code_cells_that_run_as_python_are_concatenated() {
        let raw = notebook(&[
            ("markdown", "# Train\nn_jobs=-1 is bad\n"),
            ("code", "%matplotlib inline\nimport numpy as np"),
            ("code", "pip install lightgbm"),
            ("code", "%%bash\nls\n"),
            ("code", "%%time\nx = 1\n"),
        ]);
        let module = read(&raw).unwrap();
        assert_eq!(module.text, "%matplotlib inline\nimport numpy as np\n%%time\nx = 1\n\n");
        let file = SourceFile::new("a.ipynb".into(), "a.ipynb".into(), module.text).with_cells(module.cells);
        let at = |needle: &str| TextSize::try_from(file.text().find(needle).unwrap()).unwrap();
        let location = |needle: &str| file.cell_location(at(needle)).unwrap();
        assert_eq!((location("import").cell, location("import").location.row), (2, 2));
        assert_eq!(
            (location("x = 1").cell, location("x = 1").location.row, location("x = 1").location.column),
            (5, 2, 1)
        );
        // In the JSON, each line is a string of the list on its own line.
        let import = file.file_location(at("numpy"));
        let line = raw.lines().nth(import.row - 1).unwrap();
        assert_eq!(line.trim(), "\"import numpy as np\"");
        assert_eq!(line.chars().nth(import.column - 1), Some('n'));
        // The end of the text (after the last cell) is the end of the last cell.
        let end = file.cell_location(TextSize::of(file.text())).unwrap();
        assert_eq!((end.cell, end.location.row, end.location.column), (5, 3, 1));
    }

    #[test]
    fn columns_in_the_json_count_escapes_as_written() {
        let raw = "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"s = \\\"\\u00e9\\\"; Parallel(n_jobs=-1)\"}]}";
        let module = read(raw).unwrap();
        let file = SourceFile::new("a.ipynb".into(), "a.ipynb".into(), module.text).with_cells(module.cells);
        let offset = TextSize::try_from(file.text().find("n_jobs").unwrap()).unwrap();
        let location = file.file_location(offset);
        assert_eq!(location.row, 1);
        assert_eq!(&raw[location.column - 1..location.column + 5], "n_jobs");
        assert_eq!(file.cell_location(offset).unwrap().location.column, 19);
    }
}
