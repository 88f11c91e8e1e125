//! Python files that do not parse: the statements the parser recovered cleanly are checked and their
//! findings marked; the broken statements, and the values they bind or change, are never trusted. IPython
//! lines in a `.py` file and Python 2 are each one CAP001 that says so. Every input is built here.

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_linter::report::{self, OutputFormat, Style};
use capslint_workspace::settings::Overrides;

use crate::support::*;

/// Lints `text` as `broken.py` with the default settings.
fn lint(text: &str) -> Vec<Diagnostic> {
    lint_text("broken.py", text, &settings(&Overrides::default()))
}

/// `(row, code)` of every diagnostic, and the CAP001 messages.
fn summary(diagnostics: &[Diagnostic]) -> (Vec<(usize, String)>, Vec<String>) {
    let messages = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.rule().code() == "CAP001")
        .map(|diagnostic| diagnostic.finding.message.clone())
        .collect();
    (rows_and_codes(diagnostics), messages)
}

/// Ways to break the statement `CALL` (a call with a finding), each with the CAP001 message it gets:
/// unclosed brackets, Python 2, stray tokens, a bad indentation, a missing operand.
const BREAKAGES: &[(&str, &str)] = &[
    ("model = CALL.fit(X,\n", "Python syntax error"),
    ("model = [CALL\n", "Python syntax error"),
    ("print \"model\", CALL\n", "looks like Python 2 (a `print` statement)"),
    ("exec \"x = 1\"; CALL\n", "looks like Python 2 (an `exec` statement)"),
    ("model = `CALL`\n", "looks like Python 2 (a backtick repr)"),
    ("model = CALL if 0777 else None\n", "looks like Python 2 (an octal literal"),
    ("model = CALL ? 1\n", "Python syntax error"),
    ("model = CALL +\n", "Python syntax error"),
    ("    model = CALL\n", "Python syntax error: Unexpected indentation"),
    ("model = CALL $\n", "Python syntax error"),
];

#[test]
fn a_finding_inside_a_broken_statement_is_not_reported() {
    for (breakage, message) in BREAKAGES {
        let broken = breakage.replace("CALL", "RandomForestClassifier(n_jobs=-1)");
        let text = format!(
            "from sklearn.ensemble import RandomForestClassifier\n\n\
             forest = RandomForestClassifier(n_jobs=-1)\n\n{broken}\nother = RandomForestClassifier(n_jobs=-1)\n"
        );
        let diagnostics = lint(&text);
        let (found, messages) = summary(&diagnostics);
        let other_row = text.lines().position(|line| line.starts_with("other")).unwrap() + 1;
        let codes: Vec<&str> = found.iter().map(|(_, code)| code.as_str()).collect();
        assert_eq!(codes.iter().filter(|code| **code == "CAP001").count(), 1, "{broken}{}", render_full(&diagnostics));
        assert!(messages[0].contains(message), "{broken}: {messages:?}");
        assert!(found.contains(&(3, "CAP101".into())), "the statement before is checked: {broken}{found:?}");
        // An unclosed bracket swallows the rest of the file into the broken statement.
        if !breakage.contains(['(', '[']) || breakage.contains(')') {
            assert!(found.contains(&(other_row, "CAP101".into())), "the statement after is checked: {broken}{found:?}");
        }
        let broken_rows = 5..other_row;
        assert!(
            found.iter().all(|(row, code)| code == "CAP001" || !broken_rows.contains(row)),
            "a finding in the broken statement: {broken}{found:?}"
        );
        for diagnostic in &diagnostics {
            let marked = diagnostic.finding.in_file_with_syntax_errors;
            assert_eq!(marked, diagnostic.rule().code() != "CAP001", "{broken}: {}", diagnostic.finding.message);
            assert!(diagnostic.finding.fix.is_none(), "no fix is offered in a file that does not parse");
        }
    }
}

#[test]
fn a_value_bound_or_changed_in_a_broken_statement_is_not_trusted() {
    // Each broken statement, recovered as written, would give `params` an all-cores thread count.
    for broken in [
        "params = {\"n_jobs\": -1, \"seed\": `seed`}\n",
        "params[\"n_jobs\"] = -1 <> 0\n",
        "params.update(n_jobs=-1, seed=`seed`)\n",
        "params = dict(n_jobs=-1); print params\n",
    ] {
        let text = format!(
            "import lightgbm as lgb\n\nparams = {{\"n_jobs\": 2, \"objective\": \"binary\"}}\n{broken}\
             booster = lgb.train(params, data)\n"
        );
        let diagnostics = lint(&text);
        let codes: Vec<&str> = diagnostics.iter().map(|diagnostic| diagnostic.rule().code()).collect();
        assert_eq!(codes, ["CAP001"], "{broken}{}", render_full(&diagnostics));
    }
    // The same statements, written so that they parse: the value is followed.
    for fixed in ["params = {\"n_jobs\": -1, \"seed\": seed}\n", "params.update(n_jobs=-1, seed=seed)\n"] {
        let text = format!(
            "import lightgbm as lgb\n\nparams = {{\"n_jobs\": 2, \"objective\": \"binary\"}}\n{fixed}\
             booster = lgb.train(params, data)\n"
        );
        assert!(lint(&text).iter().any(|diagnostic| diagnostic.rule().code() == "CAP101"), "{fixed}");
    }
}

#[test]
fn an_import_in_a_broken_statement_names_nothing() {
    // `jl` would be joblib, whose `parallel_backend` defaults to every core, were the import trusted.
    let text = "import os\nimport joblib as jl; print os.getcwd()\nwith jl.parallel_backend(\"loky\"):\n    pass\n";
    let codes: Vec<String> = rows_and_codes(&lint(text)).into_iter().map(|(_, code)| code).collect();
    assert_eq!(codes, ["CAP001"]);
    let parses = "import os\nimport joblib as jl; print(os.getcwd())\nwith jl.parallel_backend(\"loky\"):\n    pass\n";
    assert!(lint(parses).iter().any(|diagnostic| diagnostic.rule().code() == "CAP101"));
}

#[test]
fn each_ipython_escape_in_a_py_file_is_one_cap001_and_the_file_is_checked() {
    for escape in [
        "%matplotlib inline",
        "%%time",
        "!pip install lightgbm",
        "!!ls",
        "files = !ls data",
        "?RandomForestClassifier",
        "RandomForestClassifier?",
        "RandomForestClassifier??",
        "%time x = 1",
    ] {
        let text = format!(
            "from sklearn.ensemble import RandomForestClassifier\n{escape}\n{escape}\n\
             model = RandomForestClassifier(n_jobs=-1)\n"
        );
        let diagnostics = lint(&text);
        let (found, messages) = summary(&diagnostics);
        assert_eq!(found, [(2, "CAP001".to_string()), (4, "CAP101".to_string())], "{escape}");
        let quoted = escape.strip_prefix("files = ").unwrap_or(escape);
        assert!(
            messages[0].starts_with(&format!("this file holds IPython syntax (`{quoted}`)")),
            "{escape}: {messages:?}"
        );
    }
}

#[test]
fn ipython_lines_and_python_2_in_one_file_are_two_cap001() {
    let text = "%matplotlib inline\nimport xgboost as xgb\nprint \"training\"\nxgb.XGBRegressor(nthread=-1)\n";
    let (found, messages) = summary(&lint(text));
    assert_eq!(found, [(1, "CAP001".to_string()), (3, "CAP001".to_string()), (4, "CAP101".to_string())]);
    assert!(messages[0].contains("IPython syntax") && messages[1].contains("Python 2"), "{messages:?}");
}

#[test]
fn a_python_2_file_is_one_cap001_at_its_first_construct() {
    let mut text = String::from("import os\nimport xgboost as xgb\n\nmode = 0755\n");
    for step in 0..200 {
        text.push_str(&format!("print \"step {step}\", `step`\nif step <> {step}:\n    raise ValueError, \"bad\"\n"));
    }
    text.push_str("model = xgb.XGBClassifier(nthread=-1)\n");
    let diagnostics = lint(&text);
    let (found, messages) = summary(&diagnostics);
    let last_row = text.lines().count();
    assert_eq!(found, [(4, "CAP001".to_string()), (last_row, "CAP101".to_string())]);
    assert_eq!(
        messages,
        ["this file looks like Python 2 (an octal literal without `0o`), which Python 3 cannot parse"]
    );
}

#[test]
fn the_mark_is_written_only_for_findings_in_files_with_syntax_errors() {
    let clean = lint("from joblib import Parallel\nParallel(n_jobs=-1)\n");
    let broken = lint("from joblib import Parallel\nParallel(n_jobs=-1)\nprint \"done\"\n");
    let json = |diagnostics: &[Diagnostic]| report::render(OutputFormat::Json, diagnostics, Style::PLAIN);
    assert!(!json(&clean).contains("in_file_with_syntax_errors"), "{}", json(&clean));
    let broken_json: serde_json::Value = serde_json::from_str(&json(&broken)).unwrap();
    let marks: Vec<(String, Option<bool>)> = broken_json
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["code"].as_str().unwrap().to_string(), item["in_file_with_syntax_errors"].as_bool()))
        .collect();
    assert_eq!(marks, [("CAP101".to_string(), Some(true)), ("CAP001".to_string(), None)]);
    let lines = report::render(OutputFormat::JsonLines, &broken, Style::PLAIN);
    assert_eq!(lines.matches("\"in_file_with_syntax_errors\":true").count(), 1, "{lines}");
    let sarif = report::render(OutputFormat::Sarif, &broken, Style::PLAIN);
    let sarif: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let properties: Vec<&serde_json::Value> =
        sarif["runs"][0]["results"].as_array().unwrap().iter().map(|result| &result["properties"]).collect();
    assert_eq!(properties, [&serde_json::json!({"inFileWithSyntaxErrors": true}), &serde_json::Value::Null]);
    let clean_sarif: serde_json::Value =
        serde_json::from_str(&report::render(OutputFormat::Sarif, &clean, Style::PLAIN)).unwrap();
    let results = clean_sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert!(results.iter().all(|result| result.get("properties").is_none()), "{results:?}");
}

#[test]
fn a_recovered_finding_is_suppressed_by_its_noqa_comment() {
    let text = "from joblib import Parallel\nParallel(n_jobs=-1)  # noqa: CAP101\nprint \"done\"\n";
    let codes: Vec<String> = rows_and_codes(&lint(text)).into_iter().map(|(_, code)| code).collect();
    assert_eq!(codes, ["CAP001"]);
    let ipython = "%matplotlib inline\nfrom joblib import Parallel\nParallel(n_jobs=-1)  # noqa: CAP101\n";
    let codes: Vec<String> = rows_and_codes(&lint(ipython)).into_iter().map(|(_, code)| code).collect();
    assert_eq!(codes, ["CAP001"]);
}

#[test]
fn a_notebook_with_a_python_2_cell_keeps_its_other_cells_and_their_fixes() {
    let cells = ["from joblib import Parallel\n", "print \"training\"\n", "Parallel(n_jobs=-1)\n"];
    let cells: Vec<serde_json::Value> = cells
        .iter()
        .map(|source| serde_json::json!({"cell_type": "code", "metadata": {}, "outputs": [], "source": [source]}))
        .collect();
    let notebook = serde_json::json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    let diagnostics = lint_text("train.ipynb", &notebook.to_string(), &settings(&Overrides::default()));
    let found: Vec<(Option<usize>, &str, bool, bool)> = diagnostics
        .iter()
        .map(|diagnostic| {
            let finding = &diagnostic.finding;
            (diagnostic.cell(), diagnostic.rule().code(), finding.in_file_with_syntax_errors, finding.fix.is_some())
        })
        .collect();
    assert_eq!(found, [(Some(2), "CAP001", false, false), (Some(3), "CAP101", true, true)]);
    assert!(diagnostics[0].finding.message.contains("looks like Python 2 (a `print` statement)"));
}

#[test]
fn many_broken_statements_on_one_line_or_on_many_lines_are_answered() {
    // Every error and statement is placed on its line by a binary search, never by a scan of the line:
    // 200,000 Python 2 statements on one line would otherwise cost a scan of megabytes per error.
    for broken in ["print x; ".repeat(200_000) + "\n", "print x\n".repeat(200_000)] {
        let text = format!("from joblib import Parallel\n{broken}Parallel(n_jobs=-1)\n");
        let (found, messages) = summary(&lint(&text));
        let last_row = text.lines().count();
        assert_eq!(found, [(2, "CAP001".to_string()), (last_row, "CAP101".to_string())]);
        assert!(messages[0].contains("Python 2 (a `print` statement)"), "{messages:?}");
    }
}
