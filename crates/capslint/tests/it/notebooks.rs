//! Jupyter notebooks end to end: which cells are checked (code cells, magics, automagics, cell magics),
//! findings located by cell in every format (snapshots of full, concise and JSON; exact regions in the
//! notebook's JSON for SARIF, GitHub, GitLab and JUnit), `# noqa` and baselines in cells, discovery and
//! exclusion, unreadable notebooks, and hostile ones.

use std::path::PathBuf;
use std::sync::Arc;

use assert_cmd::Command;

use crate::support::{capslint, check, project, root};
use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_linter::lint::{self, Input};
use capslint_linter::report::{self, OutputFormat, Style};
use capslint_workspace::discover::FileKind;
use capslint_workspace::settings::{Overrides, Settings};
use proptest::prelude::*;
use serde_json::{Value, json};
use tempfile::TempDir;

const FIXTURES: &str = "fixtures/notebooks";
/// How many modules written by a notebook's cells are checked.
const MAX_WRITTEN: usize = capslint_python::notebook::MAX_WRITTEN_MODULES;
const TRAIN: &str = "fixtures/notebooks/train_churn.ipynb";
const STRINGS: &str = "fixtures/notebooks/string_sources.ipynb";

fn settings(overrides: &Overrides) -> Settings {
    Settings::resolve(None, overrides, &root()).expect("valid settings")
}

/// Lints `bytes` as the file `name` with the library.
fn lint_bytes(name: &str, bytes: &[u8], settings: &Settings) -> lint::RunResult {
    let path = PathBuf::from(name);
    let input = Input {
        kind: FileKind::of(&path).expect("a known file kind"),
        path,
        display_name: name.to_string(),
        contents: Some(bytes.to_vec()),
        settings: Arc::new(settings.clone()),
    };
    lint::check_inputs(vec![input])
}

fn lint_text(name: &str, text: &str) -> Vec<Diagnostic> {
    lint_bytes(name, text.as_bytes(), &settings(&Overrides::default())).diagnostics
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).expect("fixture is readable")
}

/// `(cell, row, code)` of every diagnostic, as the reader finds it.
fn places(diagnostics: &[Diagnostic]) -> Vec<(usize, usize, String)> {
    let mut found: Vec<_> = diagnostics
        .iter()
        .map(|diagnostic| {
            let cell = diagnostic.cell().expect("a finding in a cell");
            (cell, diagnostic.shown_start().row, diagnostic.rule().code().to_string())
        })
        .collect();
    found.sort();
    found
}

/// The source of each cell of a notebook, with its 1-based number and type.
fn cells(notebook: &str) -> Vec<(usize, String, String)> {
    let value: Value = serde_json::from_str(notebook).expect("a notebook");
    let cells = value["cells"].as_array().cloned().unwrap_or_else(|| {
        value["worksheets"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|sheet| sheet["cells"].as_array().unwrap().clone())
            .collect()
    });
    cells
        .iter()
        .enumerate()
        .map(|(index, cell)| {
            let source = cell.get("source").or_else(|| cell.get("input")).cloned().unwrap_or(Value::Null);
            let text = match source {
                Value::String(text) => text,
                Value::Array(lines) => lines.iter().map(|line| line.as_str().unwrap()).collect(),
                _ => String::new(),
            };
            (index + 1, cell["cell_type"].as_str().unwrap().to_string(), text)
        })
        .collect()
}

/// `(cell, row, code)` of every `# expect: CODE[, CODE]` marker in the code cells.
fn expectations(notebook: &str) -> Vec<(usize, usize, String)> {
    let mut expected = Vec::new();
    for (cell, kind, text) in cells(notebook) {
        if kind != "code" {
            continue;
        }
        for (index, line) in text.lines().enumerate() {
            if let Some(position) = line.find("# expect:") {
                for code in line[position + "# expect:".len()..].split(',') {
                    expected.push((cell, index + 1, code.trim().to_string()));
                }
            }
        }
    }
    expected.sort();
    expected
}

/// The notebook with every `# expect:` marker blanked out: the markers name rule codes, which would let
/// every notebook through the prefilter.
fn without_markers(notebook: &str) -> String {
    let mut value: Value = serde_json::from_str(notebook).unwrap();
    for cell in value["cells"].as_array_mut().into_iter().flatten() {
        if let Some(lines) = cell["source"].as_array_mut() {
            for line in lines {
                let text = line.as_str().unwrap();
                if let Some(position) = text.find("# expect:") {
                    *line =
                        Value::String(format!("{}{}", &text[..position], if text.ends_with('\n') { "\n" } else { "" }));
                }
            }
        }
    }
    serde_json::to_string_pretty(&value).unwrap()
}

/// A notebook (nbformat 4, sources as lists of lines) of `(cell_type, source)` cells.
fn notebook(cells: &[(&str, &str)]) -> String {
    let cells: Vec<Value> = cells
        .iter()
        .map(|(kind, source)| {
            let lines: Vec<&str> = source.split_inclusive('\n').collect();
            let mut cell = json!({"cell_type": kind, "metadata": {}, "source": lines});
            if *kind == "code" {
                cell["outputs"] = json!([]);
                cell["execution_count"] = Value::Null;
            }
            cell
        })
        .collect();
    let notebook = json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    serde_json::to_string_pretty(&notebook).unwrap() + "\n"
}

/// The 1-based line and column (in characters) of `needle` in `text`, the `nth` occurrence.
fn raw_place(text: &str, needle: &str, nth: usize) -> (usize, usize) {
    let offset = text.match_indices(needle).nth(nth).unwrap_or_else(|| panic!("{needle} in the text")).0;
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

/// Exit code, standard output and standard error.
fn run(command: &mut Command) -> (i32, String, String) {
    let output = command.output().expect("capslint runs");
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("UTF-8 output");
    (output.status.code().unwrap_or(-1), text(output.stdout), text(output.stderr))
}

fn report_of(format: &str, paths: &[&str]) -> String {
    let (code, stdout, stderr) = run(check(&root()).args(["--output-format", format]).args(paths));
    assert_eq!(code, 1, "{format}: findings expected; stderr: {stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    stdout
}

#[test]
fn findings_match_the_markers_in_code_cells() {
    let mut checked = 0;
    for name in [
        "train_churn.ipynb",
        "string_sources.ipynb",
        "features_v3.ipynb",
        "notes_no_code.ipynb",
        "cluster_fits.ipynb",
        "written_scripts.ipynb",
    ] {
        let path = format!("{FIXTURES}/{name}");
        let text = read(&path);
        assert_eq!(places(&lint_text(&path, &text)), expectations(&text), "{path}");
        checked += 1;
    }
    assert_eq!(checked, 6);
}

#[test]
fn markdown_shell_and_magic_cells_never_fire() {
    let text = read(TRAIN);
    let found = places(&lint_text(TRAIN, &text));
    let kinds = cells(&text);
    // The markdown cells, `!pip`, the automagic `pip install`, `%matplotlib`, `%%bash`, `booster?` and
    // the suppressed cell: no finding, no CAP001.
    for quiet in [1, 2, 3, 4, 6, 7, 8, 12, 14, 15] {
        assert!(
            found.iter().all(|(cell, _, _)| *cell != quiet),
            "cell {quiet} ({:?}) fired: {found:?}",
            kinds[quiet - 1]
        );
    }
    assert!(kinds[0].2.contains("n_jobs=-1") && kinds[0].1 == "markdown");
    assert!(kinds[2].2 == "pip install pyarrow");
    assert!(kinds[13].2 == "booster?");
    assert!(kinds.iter().any(|(_, _, source)| source.starts_with("%%bash") && source.contains("n_jobs=-1")));
    assert!(found.iter().all(|(_, _, code)| code != "CAP001"), "{found:?}");
    // The `%%time` cell is checked, its body on the rows the cell shows.
    assert!(found.contains(&(10, 2, "CAP101".to_string())), "{found:?}");
}

#[test]
fn an_estimator_fitted_only_on_a_cluster_backend_in_a_later_cell_is_silent() {
    let build = "from joblib import parallel_backend\nfrom sklearn.ensemble import RandomForestClassifier\n\
                 clf = RandomForestClassifier(n_jobs=-1)\n";
    let on_dask = "with parallel_backend(\"dask\"):\n    clf.fit(X, y)\n";
    let silent = notebook(&[("code", build), ("markdown", "Fit"), ("code", on_dask)]);
    assert!(lint_text("dask.ipynb", &silent).is_empty());
    // A line magic runs where it is written: a fit timed before the block runs on loky.
    for timed in ["%time clf.fit(X, y)\n", "%timeit -n 1 clf.fit(X, y)\n", "score = %time clf.score(X, y)\n"] {
        let loky_first = notebook(&[("code", build), ("code", timed), ("code", on_dask)]);
        assert_eq!(places(&lint_text("timed.ipynb", &loky_first)), vec![(1, 3, "CAP101".to_string())], "{timed}");
    }
    // Inside the block, the same magic runs on the cluster.
    let timed_inside =
        notebook(&[("code", build), ("code", "with parallel_backend(\"dask\"):\n    %time clf.fit(X, y)\n")]);
    assert!(lint_text("inside.ipynb", &timed_inside).is_empty());
    // A cell magic's body is checked: `%%time` over the block is the block.
    let cell_magic = notebook(&[("code", build), ("code", &format!("%%time\n{on_dask}"))]);
    assert!(lint_text("cell.ipynb", &cell_magic).is_empty());
}

#[test]
fn thread_caps_are_judged_in_cell_order() {
    let late = notebook(&[
        ("code", "import numpy as np\n"),
        ("markdown", "Caps"),
        ("code", "import os\nos.environ['OMP_NUM_THREADS'] = '2'\n"),
    ]);
    let diagnostics = lint_text("late.ipynb", &late);
    assert_eq!(places(&diagnostics), vec![(3, 2, "CAP106".to_string())]);
    assert!(diagnostics[0].finding.label.contains("cell 1, line 1"), "{}", diagnostics[0].finding.label);
    let early =
        notebook(&[("code", "import os\nos.environ['OMP_NUM_THREADS'] = '2'\n"), ("code", "import numpy as np\n")]);
    assert!(lint_text("early.ipynb", &early).is_empty());
}

#[test]
fn full_concise_and_json_reports_are_stable() {
    let paths = [FIXTURES];
    insta::assert_snapshot!("full", report_of("full", &paths));
    insta::assert_snapshot!("concise", report_of("concise", &paths));
    insta::assert_snapshot!("json", report_of("json", &paths));
}

#[test]
fn json_locations_are_within_the_cell() {
    let report: Value = serde_json::from_str(&report_of("json", &[TRAIN])).unwrap();
    let unused = report.as_array().unwrap().iter().find(|item| item["code"] == "CAP002").expect("CAP002");
    assert_eq!(unused["cell"], 13);
    assert_eq!(unused["location"], json!({"column": 32, "row": 3}));
    assert_eq!(unused["end_location"], json!({"column": 38, "row": 3}));
    assert_eq!(unused["noqa_row"], 3);
    let broken: Value = serde_json::from_str(&report_of("json", &["fixtures/notebooks/broken.ipynb"])).unwrap();
    assert_eq!(broken[0]["cell"], Value::Null);
    assert_eq!(broken[0]["location"], json!({"column": 3, "row": 13}));
}

#[test]
fn sarif_regions_point_into_the_notebook_json() {
    let log: Value = serde_json::from_str(&report_of("sarif", &[TRAIN, STRINGS])).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let regions: Vec<(String, String, Value, String)> = results
        .iter()
        .map(|result| {
            let location = &result["locations"][0]["physicalLocation"];
            let message = result["message"]["text"].as_str().unwrap();
            (
                result["ruleId"].as_str().unwrap().to_string(),
                location["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                location["region"].clone(),
                message.split(": ").next().unwrap().to_string(),
            )
        })
        .collect();
    let train = read(TRAIN);
    let region = |needle: &str, nth: usize, len: usize| {
        let (line, column) = raw_place(&train, needle, nth);
        json!({"startLine": line, "startColumn": column, "endLine": line, "endColumn": column + len})
    };
    let expected = vec![
        (
            "CAP101",
            STRINGS,
            json!({"startLine": 20, "startColumn": 65, "endLine": 20, "endColumn": 74}),
            "cell 3, line 2",
        ),
        ("CAP106", TRAIN, region("os.environ[\\\"OMP_NUM_THREADS\\\"] = \\\"4\\\"", 0, 39), "cell 5, line 2"),
        ("CAP101", TRAIN, region("n_jobs=-1)  # expect", 0, 9), "cell 9, line 4"),
        ("CAP101", TRAIN, region("n_jobs=-1)  # expect", 1, 9), "cell 10, line 2"),
        ("CAP102", TRAIN, region("lgb.LGBMClassifier", 0, 18), "cell 11, line 3"),
        ("CAP002", TRAIN, region("CAP104", 0, 6), "cell 13, line 3"),
    ];
    let expected: Vec<(String, String, Value, String)> = expected
        .into_iter()
        .map(|(code, path, region, place)| (code.to_string(), path.to_string(), region, place.to_string()))
        .collect();
    assert_eq!(regions, expected);
    // The region of the CAP106 finding, read back from the file, is the statement as written in the JSON.
    let line = train.lines().nth(regions[1].2["startLine"].as_u64().unwrap() as usize - 1).unwrap();
    let start = regions[1].2["startColumn"].as_u64().unwrap() as usize - 1;
    let end = regions[1].2["endColumn"].as_u64().unwrap() as usize - 1;
    assert_eq!(
        line.chars().skip(start).take(end - start).collect::<String>(),
        r#"os.environ[\"OMP_NUM_THREADS\"] = \"4\""#
    );
}

#[test]
fn github_annotations_point_into_the_notebook_json() {
    let out = report_of("github", &[STRINGS, "fixtures/notebooks/broken.ipynb"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "::error file=fixtures/notebooks/broken.ipynb,line=13,col=3,endLine=13,endColumn=3,title=CAP001 syntax-error::\
         fixtures/notebooks/broken.ipynb:13:3: CAP001 notebook is not valid JSON: expected `,` or `]`%0Ahelp: open and \
         save the notebook in Jupyter, or exclude it (`extend-exclude`)"
    );
    assert!(
        lines[1].starts_with(
            "::error file=fixtures/notebooks/string_sources.ipynb,line=20,col=65,endLine=20,endColumn=74,\
             title=CAP101 n-jobs-all-cores::fixtures/notebooks/string_sources.ipynb:cell 3:2:22: CAP101 \
             `Parallel(n_jobs=-1)` asks"
        ),
        "{}",
        lines[1]
    );
    let train = report_of("github", &[TRAIN]);
    let (line, column) = raw_place(&read(TRAIN), "lgb.LGBMClassifier", 0);
    let expected = format!(
        "::warning file={TRAIN},line={line},col={column},endLine={line},endColumn={},title=CAP102 \
         missing-thread-count::{TRAIN}:cell 11:3:11: CAP102 ",
        column + 18
    );
    assert!(train.lines().any(|annotation| annotation.starts_with(&expected)), "{expected}\n{train}");
}

#[test]
fn gitlab_and_junit_name_the_cell() {
    let report: Value = serde_json::from_str(&report_of("gitlab", &[STRINGS])).unwrap();
    assert_eq!(
        report[0]["location"]["positions"],
        json!({"begin": {"line": 20, "column": 65}, "end": {"line": 20, "column": 74}})
    );
    assert!(report[0]["description"].as_str().unwrap().starts_with("CAP101: cell 3, line 2: `Parallel(n_jobs=-1)`"));
    let junit = report_of("junit", &[STRINGS]);
    assert!(junit.contains(&format!("file=\"{STRINGS}\" line=\"20\" column=\"65\">")), "{junit}");
    assert!(junit.contains("message=\"cell 3, line 2: `Parallel(n_jobs=-1)`"), "{junit}");
    assert!(junit.contains(&format!(">{STRINGS}:cell 3:2:22: CAP101 `Parallel(n_jobs=-1)`")), "{junit}");
}

#[test]
fn a_named_notebook_is_one_file_checked() {
    let (code, stdout, _) = run(check(&root()).args(["fixtures/notebooks/notes_no_code.ipynb"]));
    assert_eq!((code, stdout.as_str()), (0, "All checks passed (1 file checked).\n"));
    let (code, stdout, _) = run(check(&root()).args(["--output-format", "concise", TRAIN]));
    assert_eq!(code, 1);
    assert!(stdout.contains("\nFound 5 findings (3 errors, 2 warnings) in 1 of 1 file checked.\n"), "{stdout}");
}

#[test]
fn the_walk_finds_notebooks_and_exclude_patterns_apply() {
    let nb = notebook(&[("code", "from joblib import Parallel\nParallel(n_jobs=-1)\n")]);
    let dir = project(&[
        ("notebooks/eda.ipynb", &nb),
        ("notebooks/.ipynb_checkpoints/eda-checkpoint.ipynb", &nb),
        ("train.py", "x = 1\n"),
    ]);
    let (code, stdout, _) = run(check(dir.path()).args(["--output-format", "concise"]));
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        "notebooks/eda.ipynb:cell 1:2:10: CAP101 `Parallel(n_jobs=-1)` asks for every CPU of the node, not the pod's CPU \
         limit\nFound 1 finding (1 error, 0 warnings) in 1 of 2 files checked.\n"
    );
    std::fs::write(dir.path().join("capslint.toml"), "extend-exclude = [\"*.ipynb\"]\n").unwrap();
    let configured = |args: &[&str]| {
        let mut command = capslint(dir.path());
        command.args(["check", "--output-format", "concise"]).args(args);
        run(&mut command)
    };
    assert_eq!(configured(&[]), (0, "All checks passed (1 file checked).\n".to_string(), String::new()));
    let (code, stdout, _) = configured(&["notebooks/eda.ipynb"]);
    assert_eq!(code, 1, "a notebook named on the command line is checked: {stdout}");
    let (code, stdout, _) = configured(&["--force-exclude", "notebooks/eda.ipynb"]);
    assert_eq!((code, stdout.as_str()), (0, "All checks passed (0 files checked).\n"));
}

#[test]
fn an_unreadable_notebook_is_cap001_and_every_other_file_is_checked() {
    let good = notebook(&[("code", "from joblib import Parallel\nParallel(n_jobs=-1)\n")]);
    let dir = project(&[
        ("broken.ipynb", &read("fixtures/notebooks/broken.ipynb")),
        ("array.ipynb", "[{\"cell_type\": \"code\"}]"),
        ("empty.ipynb", ""),
        ("good.ipynb", &good),
        ("train.py", "from joblib import Parallel\nParallel(n_jobs=-1)\n"),
    ]);
    let (code, stdout, stderr) = run(check(dir.path()).args(["--output-format", "concise"]));
    assert_eq!((code, stderr.as_str()), (1, ""));
    assert_eq!(
        stdout,
        "array.ipynb:1:1: CAP001 not a Jupyter notebook: the file is JSON but not an object\n\
         broken.ipynb:13:3: CAP001 notebook is not valid JSON: expected `,` or `]`\n\
         empty.ipynb:1:1: CAP001 notebook is not valid JSON: EOF while parsing a value\n\
         good.ipynb:cell 1:2:10: CAP101 `Parallel(n_jobs=-1)` asks for every CPU of the node, not the pod's CPU limit\n\
         train.py:2:10: CAP101 `Parallel(n_jobs=-1)` asks for every CPU of the node, not the pod's CPU limit\n\
         Found 5 findings (5 errors, 0 warnings) in 5 of 5 files checked.\n\
         No fixes applied or available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n",
        "a notebook's fix is shown, never applied: only the Python file's counts"
    );
}

#[test]
fn what_is_not_a_notebook_is_said_clearly() {
    let message = |text: &str| {
        let diagnostics = lint_text("x.ipynb", text);
        assert_eq!(diagnostics.len(), 1, "{text}");
        (diagnostics[0].start().row, diagnostics[0].start().column, diagnostics[0].finding.message.clone())
    };
    assert_eq!(message("{\"metadata\": {}}"), (1, 1, "not a Jupyter notebook: no `cells` list".into()));
    assert_eq!(message("{\"cells\": 3}"), (1, 11, "not a Jupyter notebook: `cells` is not a list".into()));
    assert_eq!(
        message("{\"nbformat\": 1, \"cells_v1\": []}").2,
        "nbformat 1 notebooks are not supported: open and save it in Jupyter to convert it"
    );
    assert_eq!(
        message("{\"cells\": [\n {\"cell_type\": \"code\", \"source\": {\"text\": \"n_jobs\"}}]}"),
        (2, 34, "notebook cell 1: `source` is not a string or a list of strings".into())
    );
    assert_eq!(message("{\"cells\": [], \"cells\": []}").2, "not a Jupyter notebook: duplicate field `cells`");
    // Not valid UTF-8: the byte's offset, as for any other file.
    let run = lint_bytes("x.ipynb", b"{\"cells\": [\"\xff\"]}", &settings(&Overrides::default()));
    assert_eq!(run.diagnostics[0].finding.message, "file is not valid UTF-8 (invalid byte at offset 12)");
}

#[test]
fn notebooks_of_other_kernels_are_not_python() {
    let mut value: Value =
        serde_json::from_str(&notebook(&[("code", "model <- ranger(num.threads = -1)\nn_jobs=-1 ?\n")])).unwrap();
    value["metadata"] = json!({"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}});
    assert!(lint_text("r.ipynb", &value.to_string()).is_empty());
}

#[test]
fn noqa_works_in_cells() {
    let nb = notebook(&[
        ("code", "from joblib import Parallel\n"),
        ("code", "Parallel(n_jobs=-1)  # noqa\nParallel(n_jobs=-1)  # noqa: CAP101, CAP104\n"),
    ]);
    let diagnostics = lint_text("noqa.ipynb", &nb);
    assert_eq!(places(&diagnostics), vec![(2, 2, "CAP002".to_string())]);
    assert_eq!(diagnostics[0].shown_start().column, 38);
}

#[test]
fn baseline_fingerprints_survive_cells_added_above() {
    let training = ("code", "from joblib import Parallel\nParallel(n_jobs=-1)\nParallel(n_jobs=-1)\n");
    let dir = project(&[("nb.ipynb", &notebook(&[("markdown", "# Run"), training]))]);
    let (code, _, stderr) = run(check(dir.path()).args(["--write-baseline", "baseline.json"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("Recorded 2 findings"), "{stderr}");
    let moved = notebook(&[
        ("code", "import os\n\n"),
        ("markdown", "# Run\n\nMore words."),
        ("code", "pip install joblib"),
        ("markdown", "# Run"),
        training,
    ]);
    std::fs::write(dir.path().join("nb.ipynb"), moved).unwrap();
    let (code, stdout, stderr) =
        run(check(dir.path()).args(["--baseline", "baseline.json", "--output-format", "concise"]));
    // The baseline is JSON too: read as a possible model configuration (CAP109), where nothing fires.
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "All checks passed (2 files checked).\n", ""));
    let edited = notebook(&[training, ("code", "Parallel(n_jobs=-1)  # a new one\n")]);
    std::fs::write(dir.path().join("nb.ipynb"), edited).unwrap();
    let (code, stdout, _) = run(check(dir.path()).args(["--baseline", "baseline.json", "--output-format", "concise"]));
    assert_eq!(code, 1);
    assert!(stdout.starts_with("nb.ipynb:cell 2:1:10: CAP101 "), "{stdout}");
}

#[test]
fn the_prefilter_is_exact_on_notebooks() {
    let with = settings(&Overrides::default());
    let without = settings(&Overrides { no_prefilter: true, ..Overrides::default() });
    for name in [
        "train_churn.ipynb",
        "string_sources.ipynb",
        "notes_no_code.ipynb",
        "broken.ipynb",
        "cluster_fits.ipynb",
        "written_scripts.ipynb",
    ] {
        let path = format!("{FIXTURES}/{name}");
        let text = read(&path);
        let text = if name == "broken.ipynb" { text } else { without_markers(&text) };
        let render = |settings: &Settings| {
            report::render(OutputFormat::Json, &lint_bytes(&path, text.as_bytes(), settings).diagnostics, Style::PLAIN)
        };
        assert_eq!(render(&with), render(&without), "the prefilter changed the findings of {path}");
    }
}

#[test]
fn standard_input_named_as_a_notebook_is_one() {
    let nb = notebook(&[("markdown", "x"), ("code", "from joblib import Parallel\nParallel(n_jobs=-1)\n")]);
    let dir = TempDir::new().unwrap();
    let (code, stdout, _) = run(check(dir.path())
        .args(["--output-format", "concise", "--stdin-filename", "eda.ipynb", "-"])
        .write_stdin(nb));
    assert_eq!(code, 1);
    assert!(stdout.starts_with("eda.ipynb:cell 2:2:10: CAP101 "), "{stdout}");
}

/// Lints hostile bytes as a notebook: no panic (an internal error would be a CAP001 that says so), no
/// I/O error, at most findings.
fn assert_survives(name: &str, bytes: &[u8]) -> Vec<Diagnostic> {
    let run = lint_bytes(name, bytes, &settings(&Overrides::default()));
    assert!(run.errors.is_empty(), "{name}: {:?}", run.errors);
    for diagnostic in &run.diagnostics {
        assert!(!diagnostic.finding.message.contains("internal error"), "{name}: {}", diagnostic.finding.message);
        for format in
            [OutputFormat::Full, OutputFormat::Concise, OutputFormat::Json, OutputFormat::Sarif, OutputFormat::Github]
        {
            report::render(format, std::slice::from_ref(diagnostic), Style::PLAIN);
        }
    }
    run.diagnostics
}

#[test]
fn code_the_ipython_parser_gives_up_on_is_a_syntax_error() {
    // An autocall escape inside an open bracket makes the parser's IPython mode panic; the code is then
    // read as Python and reported by its first syntax error, in a notebook and in a `.py` file alike (whose
    // statements the parser recovered are checked).
    let broken = "import[\n,! os\nfrom joblib import Parallel\nParallel(n_jobs=-1)\n";
    let in_notebook = assert_survives("broken.ipynb", notebook(&[("code", broken)]).as_bytes());
    assert_eq!(places(&in_notebook), vec![(1, 1, "CAP001".to_string())]);
    let in_script = assert_survives("broken.py", broken.as_bytes());
    let codes: Vec<&str> = in_script.iter().map(|diagnostic| diagnostic.rule().code()).collect();
    assert_eq!(codes, ["CAP001", "CAP101"]);
    for found in [&in_notebook[0], &in_script[0]] {
        assert!(found.finding.message.starts_with("Python syntax error: "), "{}", found.finding.message);
    }
}

#[test]
fn hostile_notebooks_are_answered() {
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let deep_objects = format!("{}1{}", "{\"a\":".repeat(200_000), "}".repeat(200_000));
    let code = "from joblib import Parallel\nParallel(n_jobs=-1)\n";
    let huge_output = format!(
        "{{\"cells\": [{{\"cell_type\": \"code\", \"source\": {}, \"outputs\": [{{\"data\": {{\"image/png\": \"{}\"}}}}]}}]}}",
        serde_json::to_string(code).unwrap(),
        "iVBORw0KGgo".repeat(2_000_000)
    );
    let found = assert_survives("huge.ipynb", huge_output.as_bytes());
    assert_eq!(places(&found), vec![(1, 2, "CAP101".to_string())]);
    let many_lines = notebook(&[("code", &format!("{}Parallel(n_jobs=-1)\n", "x = 1\n".repeat(100_000)))]);
    assert_eq!(places(&assert_survives("long.ipynb", many_lines.as_bytes())), vec![(1, 100_001, "CAP101".to_string())]);
    // Many cells writing modules, with a long cell before them: bounded work, CAP003 where checking stops.
    let mut writing: Vec<(&str, String)> = vec![("code", "x = 1\n".repeat(100_000))];
    for index in 0..20_000 {
        let magic = if index % 2 == 0 { "%%writefile job.py" } else { "%%writefile -a job.py" };
        writing.push(("code", format!("{magic}\nfrom joblib import Parallel\nParallel(n_jobs=-1)\n")));
    }
    let writing: Vec<(&str, &str)> = writing.iter().map(|(kind, source)| (*kind, source.as_str())).collect();
    let found = places(&assert_survives("writing.ipynb", notebook(&writing).as_bytes()));
    assert_eq!(found.iter().filter(|(_, _, code)| code == "CAP003").count(), 1, "{:?}", &found[found.len() - 3..]);
    assert_eq!(found.len(), 2 * MAX_WRITTEN + 1);
    let cases: Vec<(&str, String)> = vec![
        (
            "deep outputs",
            format!("{{\"cells\": [{{\"cell_type\": \"code\", \"source\": \"n_jobs\", \"outputs\": {deep}}}]}}"),
        ),
        ("deep metadata", format!("{{\"cells\": [], \"metadata\": {deep_objects}}}")),
        ("deep source", format!("{{\"cells\": [{{\"cell_type\": \"code\", \"source\": {deep}}}]}}")),
        ("deep cells", format!("{{\"cells\": {deep}}}")),
        ("deep top level", deep.clone()),
        ("deep object", deep_objects.clone()),
        ("source null", "{\"cells\": [{\"cell_type\": \"code\", \"source\": null}]}".into()),
        ("source number", "{\"cells\": [{\"cell_type\": \"code\", \"source\": 1e999}]}".into()),
        ("source list of lists", "{\"cells\": [{\"cell_type\": \"code\", \"source\": [[\"n_jobs\"]]}]}".into()),
        ("cell type number", "{\"cells\": [{\"cell_type\": 4, \"source\": \"x\"}]}".into()),
        ("lone surrogate", "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"\\ud800 n_jobs=-1\"}]}".into()),
        (
            "surrogate pair",
            "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"s='\\ud83d\\ude00'; Parallel(n_jobs=-1)\"}]}".into(),
        ),
        ("byte order mark", format!("\u{feff}{}", notebook(&[("code", code)]))),
        (
            "carriage returns",
            notebook(&[("code", "from joblib import Parallel\r\nParallel(\rn_jobs=-1)\r")]).replace('\n', "\r\n"),
        ),
        (
            "unclosed bracket across cells",
            notebook(&[("code", "Parallel(\n"), ("markdown", "m"), ("code", "n_jobs=-1")]),
        ),
        ("unclosed string", notebook(&[("code", "'''n_jobs\n"), ("code", "x = 1\n")])),
        ("escape commands only", notebook(&[("code", "!ls (((\n%time n_jobs=-1\n?Parallel\nParallel??\n")])),
        ("empty written module", notebook(&[("code", "%%writefile a.py"), ("code", "%%file -a a.py\n")])),
        ("written module left open", notebook(&[("code", "%%writefile a.py\n'''n_jobs\n"), ("code", "x = (\n")])),
        ("whitespace", " \n\t".into()),
        ("null", "null".into()),
        ("worksheets not a list", "{\"worksheets\": {\"cells\": []}}".into()),
        (
            "empty cells",
            "{\"cells\": [{\"cell_type\": \"code\", \"source\": []}, {\"cell_type\": \"code\", \"source\": \"\"}]}"
                .into(),
        ),
    ];
    for (name, text) in &cases {
        assert_survives(&format!("{name}.ipynb"), text.as_bytes());
    }
    assert_survives("latin1.ipynb", b"{\"cells\": [{\"cell_type\": \"code\", \"source\": \"# caf\xe9\\nn_jobs\"}]}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any edit of a real notebook's bytes is answered: findings, CAP001, never a panic.
    #[test]
    fn edited_notebooks_are_answered(edits in proptest::collection::vec((0usize..1_000_000, any::<u8>(), 0u8..3), 1..8)) {
        let mut bytes = read(STRINGS).into_bytes();
        for (at, byte, kind) in edits {
            let at = at % (bytes.len() + 1);
            match kind {
                0 => bytes.insert(at, byte),
                1 if at < bytes.len() => { bytes.remove(at); }
                _ if at < bytes.len() => bytes[at] = byte,
                _ => {}
            }
        }
        assert_survives("edited.ipynb", &bytes);
    }
}

#[test]
fn a_module_a_cell_writes_is_checked_as_a_program_of_its_own() {
    let notebook_imports = ("code", "import numpy as np\nN_JOBS = -1\n");
    // The job sets its caps before its own imports: the notebook's `numpy` is another process's.
    let caps_first = "%%writefile train.py\nimport os\nos.environ['OMP_NUM_THREADS'] = '2'\nimport numpy\n";
    let text = notebook(&[notebook_imports, ("code", caps_first)]);
    assert!(lint_text("caps.ipynb", &text).is_empty());
    // Its own imports count, in its own order.
    let caps_late = "%%writefile train.py\nimport numpy\nimport os\nos.environ['OMP_NUM_THREADS'] = '2'\n";
    let text = notebook(&[notebook_imports, ("code", caps_late)]);
    assert_eq!(places(&lint_text("late.ipynb", &text)), [(2, 4, "CAP106".to_string())]);
    // The notebook's names are not bound in the job, and the job's are not in the notebook.
    let job = "%%writefile job.py\nfrom sklearn.svm import SVC\nfrom sklearn.model_selection import GridSearchCV\n\
               search = GridSearchCV(SVC(), {}, n_jobs=N_JOBS)\nLOCAL = -1\n";
    let notebook_code = "from sklearn.ensemble import RandomForestClassifier\nRandomForestClassifier(n_jobs=LOCAL)\n";
    let text = notebook(&[notebook_imports, ("code", job), ("code", notebook_code)]);
    assert!(lint_text("names.ipynb", &text).is_empty());
    // `%%file` writes a module too; other files are not Python.
    let alias = "%%file job.py\nfrom joblib import Parallel\nParallel(n_jobs=-1)\n";
    let not_python = "%%writefile run.sh\npython -c 'Parallel(n_jobs=-1)'\n";
    let text = notebook(&[("code", alias), ("code", not_python)]);
    assert_eq!(places(&lint_text("alias.ipynb", &text)), [(1, 3, "CAP101".to_string())]);
}

#[test]
fn cells_that_append_to_a_written_module_are_part_of_it_and_each_version_is_checked() {
    let first = "%%writefile train.py\nfrom joblib import Parallel\nWORKERS = -1\n";
    let appended = "%%writefile -a train.py\nParallel(n_jobs=WORKERS)\n";
    let other = "%%writefile score.py\nfrom joblib import Parallel\nParallel(n_jobs=WORKERS)\n";
    let rewritten = "%%writefile train.py\nfrom joblib import Parallel\nParallel(n_jobs=WORKERS)\n";
    let appended_again = "%%writefile --append train.py\nWORKERS = -2\nParallel(n_jobs=WORKERS)\n";
    let text = notebook(&[
        ("code", first),
        ("code", appended),
        ("code", other),
        ("code", rewritten),
        ("code", appended_again),
    ]);
    // The appended cell sees the first cell's `WORKERS`; `score.py` and the rewritten `train.py` do not,
    // and the cell that appends to the rewritten file sees its own.
    let diagnostics = lint_text("versions.ipynb", &text);
    assert_eq!(places(&diagnostics), [(2, 2, "CAP101".to_string()), (5, 3, "CAP101".to_string())]);
    // A value set in another cell of the module is named by its cell and line.
    assert!(diagnostics[0].finding.label.contains("`WORKERS` cell 1, line 3"), "{}", diagnostics[0].finding.label);
}

#[test]
fn a_notebook_that_writes_too_many_modules_says_where_checking_stopped() {
    let count = capslint_python::notebook::MAX_WRITTEN_MODULES + 3;
    let scripts: Vec<String> = (0..count)
        .map(|index| format!("%%writefile job_{index}.py\nfrom joblib import Parallel\nParallel(n_jobs=-1)\n"))
        .collect();
    let cells: Vec<(&str, &str)> = scripts.iter().map(|script| ("code", script.as_str())).collect();
    let diagnostics = lint_text("many.ipynb", &notebook(&cells));
    let found = places(&diagnostics);
    let checked = capslint_python::notebook::MAX_WRITTEN_MODULES;
    assert_eq!(found.iter().filter(|(_, _, code)| code == "CAP101").count(), checked);
    // At the first line of the first module not checked.
    assert_eq!(found.last(), Some(&(checked + 1, 2, "CAP003".to_string())), "{found:?}");
    let budget: Vec<Diagnostic> =
        diagnostics.into_iter().filter(|diagnostic| diagnostic.rule().code() == "CAP003").collect();
    insta::assert_snapshot!("written_budget_full", report::render(OutputFormat::Full, &budget, Style::PLAIN));
    insta::assert_snapshot!("written_budget_json", report::render(OutputFormat::Json, &budget, Style::PLAIN));
}

#[test]
fn a_written_module_that_does_not_parse_is_cap001_in_its_cell_and_noqa_works_there() {
    let broken = "%%writefile train.py\nfrom joblib import Parallel\ndef broken(:\n    pass\n";
    let suppressed = "%%writefile serve.py\nfrom sklearn.ensemble import RandomForestClassifier as Forest\n\
                      Forest(n_jobs=-1)  # noqa: CAP101\nForest(n_jobs=2)  # noqa: CAP101\n";
    let notebook_code = "from sklearn.ensemble import RandomForestClassifier\nRandomForestClassifier(n_jobs=-1)\n";
    let text = notebook(&[("code", broken), ("code", suppressed), ("code", notebook_code)]);
    assert_eq!(
        places(&lint_text("broken.ipynb", &text)),
        [(1, 3, "CAP001".to_string()), (2, 4, "CAP002".to_string()), (3, 2, "CAP101".to_string())]
    );
}

#[test]
fn a_cell_that_does_not_parse_leaves_the_other_cells_checked() {
    let text = notebook(&[
        ("code", "from sklearn.ensemble import RandomForestClassifier\n"),
        ("code", "print \"python 2\"\n"),
        ("code", "model = RandomForestClassifier(n_jobs=-1)\n"),
        ("code", "def broken(:\n    pass\n"),
        ("code", "other = RandomForestClassifier(n_jobs=-2)\n"),
    ]);
    let found = places(&lint_text("py2.ipynb", &text));
    assert_eq!(
        found,
        [(2, 1, "CAP001".to_string()), (3, 1, "CAP101".to_string()), (5, 1, "CAP101".to_string())],
        "the syntax error is reported once, at the first cell that does not parse, and the cells that parse are checked"
    );
}
