//! Jupyter notebooks (`*.ipynb`) as Python sources, by ruff's conventions: the code cells that run as
//! Python, in cell order, each followed by a line break, make one module, parsed in IPython mode. Names
//! bound in one cell are seen in the next, and execution order (CAP106) is cell order. Findings, `# noqa`
//! comments and fingerprints work on that module; reports locate findings by cell through [`CellMap`].
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
    /// The code cells that run as Python, in order, each followed by a line break.
    pub text: String,
    /// Where each cell is in `text`, and in the notebook's JSON.
    pub cells: CellMap,
}

/// Reads the notebook whose JSON is `raw` into its Python module. A notebook whose kernel runs another
/// language has an empty module.
pub fn read(raw: &str) -> Result<Module, ReadError> {
    let document = json::parse(raw)?;
    let mut builder = capslint_diagnostics::source::cells::Builder::new(raw);
    if document.is_python {
        for cell in &document.code_cells {
            let source: String = cell.pieces.iter().map(|piece| piece.text.as_str()).collect();
            if magics::runs_as_python(&source) {
                builder.push(cell.number, cell.offset, &cell.pieces);
            }
        }
    }
    let (text, cells) = builder.finish();
    Ok(Module { text, cells })
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
    let code = Arc::new(
        SourceFile::new(file.path().to_path_buf(), file.display_name().to_string(), module.text)
            .with_cells(module.cells),
    );
    let path = capslint_workspace::paths::absolute(file.path(), settings.cwd());
    if settings.prefilter
        && !crate::prefilter::may_have_findings(code.text())
        && !project.imports_module_with_findings(&path, code.text())
    {
        return (code, Vec::new());
    }
    let Some(cells) = code.cells() else { return (code, Vec::new()) };
    let project = crate::ProjectContext { index: project, file: &path };
    let outcome = crate::check_notebook(code.text(), cells, rules, settings, Some(project));
    let scope = capslint_diagnostics::suppress::Scope::Python {
        file: &code,
        rules,
        comments: &outcome.comments,
        findings: outcome.findings,
    };
    let findings = capslint_diagnostics::suppress::apply(scope).into_iter().map(|(_, finding)| finding).collect();
    (code, findings)
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
