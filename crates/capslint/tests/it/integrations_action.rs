//! The composite GitHub Action, run the way a runner runs it: `action.yml` is parsed, each `run:` step is
//! executed by `bash --noprofile --norc -eo pipefail` with its `env:` (expressions evaluated) and the
//! `GITHUB_*` / `RUNNER_TEMP` variables and files a runner provides; `uses:` steps are skipped.
//!
//! The freshly built capslint is on PATH, as an earlier step of a real workflow would put it, behind a
//! wrapper that counts how often the analysis runs; or nothing is, and the install step installs the
//! wheel with pip or uv from a local wheelhouse standing in for PyPI, or builds with a stand-in cargo.
//! What the job shows (annotations, listing, summary) is compared with what capslint's own formats
//! print for the same files.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use saphyr::{LoadableYamlNode, Yaml};
use serde_json::Value;
use tempfile::TempDir;

use crate::support::*;

fn action() -> Yaml<'static> {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let text = TEXT.get_or_init(|| std::fs::read_to_string(root().join("action.yml")).expect("action.yml"));
    let mut documents = Yaml::load_from_str(text).expect("action.yml is YAML");
    assert_eq!(documents.len(), 1);
    documents.remove(0)
}

fn text(node: &Yaml<'_>) -> Option<String> {
    match node {
        Yaml::Value(scalar) => Some(match scalar {
            saphyr::Scalar::String(text) => text.to_string(),
            saphyr::Scalar::Boolean(value) => value.to_string(),
            saphyr::Scalar::Integer(value) => value.to_string(),
            other => panic!("unexpected scalar {other:?}"),
        }),
        _ => None,
    }
}

/// The scalar at `path` (keys into nested mappings), when there is one.
fn field(node: &Yaml<'_>, path: &[&str]) -> Option<String> {
    let mut current = node;
    for key in path {
        current = current.as_mapping_get(key)?;
    }
    text(current)
}

fn entries<'a>(node: &'a Yaml<'a>) -> Vec<(String, &'a Yaml<'a>)> {
    node.as_mapping()
        .map(|mapping| mapping.iter().map(|(key, value)| (text(key).expect("a scalar key"), value)).collect())
        .unwrap_or_default()
}

/// One run of the action: its inputs and what each step printed.
struct Run {
    workspace: TempDir,
    runner_temp: TempDir,
    /// (step id, exit code, stdout, stderr) of every executed step, in order.
    steps: Vec<(String, i32, String, String)>,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    summary: String,
    skipped: Vec<String>,
}

impl Run {
    fn step(&self, id: &str) -> &(String, i32, String, String) {
        self.steps.iter().find(|step| step.0 == id).unwrap_or_else(|| panic!("step {id} did not run"))
    }

    fn output(&self, step: &str, name: &str) -> &str {
        self.outputs.get(step).and_then(|outputs| outputs.get(name)).map_or("", String::as_str)
    }

    /// The job's outcome: the exit code of the first failing step (a runner stops there), else 0.
    fn exit_code(&self) -> i32 {
        self.steps.iter().map(|step| step.1).find(|code| *code != 0).unwrap_or(0)
    }
}

/// Evaluates the `${{ ... }}` expressions the action uses in `env:` values.
fn evaluate(
    value: &str,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("a closed expression") + start;
        let expression = rest[start + 3..end].trim();
        let parts: Vec<&str> = expression.split('.').collect();
        let resolved = match parts.as_slice() {
            ["inputs", name] => inputs.get(*name).unwrap_or_else(|| panic!("unknown input {name}")).clone(),
            ["steps", step, "outputs", name] => {
                outputs.get(*step).and_then(|outputs| outputs.get(*name)).cloned().unwrap_or_default()
            }
            ["github", "action_path"] => root().display().to_string(),
            _ => panic!("the test cannot evaluate `{expression}`: keep the action's expressions simple"),
        };
        out.push_str(&resolved);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Parses a `$GITHUB_OUTPUT` file: `name=value` lines and `name<<DELIMITER` blocks.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut outputs = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let value: Vec<&str> = lines.by_ref().take_while(|line| *line != delimiter).collect();
            outputs.insert(name.to_string(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            outputs.insert(name.to_string(), value.to_string());
        }
    }
    outputs
}

/// Runs the action's steps in `workspace` with `inputs` over the defaults, and `path` as PATH.
fn run_action(workspace: TempDir, overrides: &[(&str, &str)], path: &str) -> Run {
    run_action_with(workspace, overrides, path, &[])
}

/// [`run_action`] with more variables in every step's environment.
fn run_action_with(workspace: TempDir, overrides: &[(&str, &str)], path: &str, env: &[(&str, OsString)]) -> Run {
    let action = action();
    let mut inputs: BTreeMap<String, String> = entries(&action["inputs"])
        .into_iter()
        .map(|(name, input)| (name, field(input, &["default"]).unwrap_or_default()))
        .collect();
    for (name, value) in overrides {
        assert!(inputs.contains_key(*name), "the action has no input `{name}`");
        inputs.insert((*name).to_string(), (*value).to_string());
    }
    let runner_temp = TempDir::new().unwrap();
    let files = TempDir::new().unwrap();
    let summary_file = files.path().join("step_summary.md");
    let path_file = files.path().join("path.txt");
    std::fs::write(&summary_file, "").unwrap();
    std::fs::write(&path_file, "").unwrap();
    let mut run = Run {
        workspace,
        runner_temp,
        steps: Vec::new(),
        outputs: BTreeMap::new(),
        summary: String::new(),
        skipped: Vec::new(),
    };
    let mut extra_path: Vec<String> = Vec::new();
    let steps = action["runs"]["steps"].as_sequence().expect("steps");
    for (index, step) in steps.iter().enumerate() {
        let id = field(step, &["id"]).unwrap_or_else(|| format!("step{index}"));
        if let Some(uses) = field(step, &["uses"]) {
            run.skipped.push(uses);
            continue;
        }
        let script = field(step, &["run"]).expect("a run step");
        assert_eq!(field(step, &["shell"]).as_deref(), Some("bash"), "{id}: composite steps must name their shell");
        assert!(!script.contains("${{"), "{id}: never interpolate expressions into `run:` (script injection)");
        assert!(field(step, &["if"]).is_none(), "{id}: the test does not evaluate `if:` on run steps");
        let output_file = files.path().join(format!("output_{id}.txt"));
        std::fs::write(&output_file, "").unwrap();
        let script_file = files.path().join(format!("{id}.sh"));
        std::fs::write(&script_file, &script).unwrap();
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script_file)
            .current_dir(run.workspace.path())
            .env_clear()
            .env("PATH", extra_path.iter().map(String::as_str).chain([path]).collect::<Vec<_>>().join(":"))
            .env("HOME", std::env::var("HOME").unwrap_or_default())
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", run.workspace.path())
            .env("GITHUB_ACTION_PATH", root())
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_PATH", &path_file)
            .env("GITHUB_STEP_SUMMARY", &summary_file)
            .env("RUNNER_TEMP", run.runner_temp.path())
            .envs(env.iter().map(|(name, value)| (name, value)));
        for (name, value) in step.as_mapping_get("env").map(entries).unwrap_or_default() {
            command.env(name, evaluate(&text(value).unwrap_or_default(), &inputs, &run.outputs));
        }
        let output = command.output().expect("bash runs");
        let code = output.status.code().unwrap_or(-1);
        run.outputs.insert(id.clone(), parse_outputs(&std::fs::read_to_string(&output_file).unwrap()));
        extra_path = std::fs::read_to_string(&path_file).unwrap().lines().rev().map(str::to_string).collect();
        run.steps.push((
            id,
            code,
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        ));
        if code != 0 {
            break;
        }
    }
    run.summary = std::fs::read_to_string(&summary_file).unwrap();
    run
}

const VERSION: &str = env!("CARGO_PKG_VERSION");
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A directory with a `capslint` that logs its arguments to `capslint.log` beside it, then runs the
/// freshly built binary: PATH with it first counts how often the action runs the analysis.
fn counted_capslint(dir: &Path) -> String {
    let bin = dir.join("counted");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/usr/bin/env bash\necho \"$*\" >>'{log}'\nexec '{binary}' \"$@\"\n",
        log = dir.join("capslint.log").display(),
        binary = binary().display()
    );
    std::fs::write(bin.join("capslint"), script).unwrap();
    Command::new("chmod").arg("+x").arg(bin.join("capslint")).status().unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// The analyses the counted capslint ran (its `--version` calls left out).
fn analyses(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("capslint.log"))
        .unwrap_or_default()
        .lines()
        .filter(|line| *line != "--version")
        .map(str::to_string)
        .collect()
}

/// PATH with the freshly built capslint first.
fn path_with_capslint() -> String {
    let bin = binary().parent().unwrap().display().to_string();
    format!("{bin}:{}", std::env::var("PATH").unwrap_or_default())
}

fn repository(files: &[(&str, &str)]) -> TempDir {
    project(files)
}

/// The workflow command lines of a step's output.
fn commands(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|line| line.starts_with("::")).collect()
}

#[test]
fn the_action_is_a_composite_with_inputs_passed_through_the_environment() {
    let action = action();
    assert_eq!(field(&action, &["runs", "using"]).as_deref(), Some("composite"));
    let inputs: Vec<String> = entries(&action["inputs"]).into_iter().map(|(name, _)| name).collect();
    for name in ["args", "version", "path", "sarif", "annotations", "fail-on-findings"] {
        assert!(inputs.contains(&name.to_string()), "input {name}");
    }
    assert_eq!(field(&action, &["inputs", "args", "default"]).as_deref(), Some("check ."));
    assert_eq!(
        field(&action, &["inputs", "version", "default"]).as_deref(),
        Some(VERSION),
        "the action installs its own release by default"
    );
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let upload = steps.iter().find(|step| field(step, &["uses"]).is_some()).expect("an upload step");
    assert!(field(upload, &["uses"]).unwrap().starts_with("github/codeql-action/upload-sarif@"));
    assert_eq!(field(upload, &["with", "sarif_file"]).as_deref(), Some("${{ steps.run.outputs.sarif-file }}"));
    assert!(field(upload, &["if"]).unwrap().contains("inputs.sarif == 'true'"));
    // The gate comes after the upload, so a failing job still uploads its SARIF.
    let ids: Vec<String> = steps.iter().filter_map(|step| field(step, &["id"])).collect();
    assert_eq!(ids, ["install", "run", "upload", "gate"]);
    for script in ["install", "run", "gate"] {
        let status = Command::new("bash").arg("-n").arg(root().join(format!("action/{script}.sh"))).status().unwrap();
        assert!(status.success(), "action/{script}.sh has a syntax error");
    }
}

#[test]
fn findings_become_annotations_a_sarif_file_and_a_failing_job_from_one_analysis() {
    let workspace = repository(&[("src/train.py", TRAIN), ("src/clean.py", CLEAN)]);
    let counter = TempDir::new().unwrap();
    let run = run_action(workspace, &[("sarif", "true")], &counted_capslint(counter.path()));
    assert_eq!(run.skipped, ["github/codeql-action/upload-sarif@v4"]);

    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(&format!("Using {}", counter.path().join("counted/capslint").display())), "{stdout}");
    assert_eq!(run.output("install", "version"), VERSION);

    let (_, code, stdout, stderr) = run.step("run");
    assert_eq!(*code, 0, "the run step records the exit code and lets the upload happen: {stderr}");
    assert_eq!(run.output("run", "exit-code"), "1");
    let annotations = commands(stdout);
    assert_eq!(annotations.len(), 3, "{stdout}");
    assert!(annotations[0].starts_with("::error file=src/train.py,line=7,col=20,endLine=7,endColumn=29,title=CAP101"));
    assert!(annotations[1].starts_with("::warning file=src/train.py,line=8,"));
    assert!(stdout.contains("Found 3 findings (2 errors, 1 warning)."), "{stdout}");

    let sarif_file = run.output("run", "sarif-file");
    assert!(sarif_file.starts_with(&run.runner_temp.path().display().to_string()), "{sarif_file}");
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(sarif_file).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "src/train.py");

    assert!(run.summary.contains("| 1 | `CAP101` | n-jobs-all-cores |"), "{}", run.summary);
    assert!(run.summary.contains("Found 3 findings."));

    // Annotations, SARIF and summary all come from one run of the analysis.
    let ran = analyses(counter.path());
    assert_eq!(ran.len(), 1, "capslint analysed the workspace more than once: {ran:?}");
    assert!(ran[0].starts_with("check . --output-format sarif --output-file "), "{ran:?}");

    let (_, code, stdout, _) = run.step("gate");
    assert_eq!(*code, 1, "{stdout}");
    assert_eq!(run.exit_code(), 1);
    drop(run.workspace);
}

/// A workspace holding `fixtures/` and files whose names and contents need every escape.
fn hostile_workspace() -> TempDir {
    let workspace = TempDir::new().unwrap();
    let copied = Command::new("cp").arg("-R").arg(root().join("fixtures")).arg(workspace.path()).status().unwrap();
    assert!(copied.success());
    write(workspace.path(), ODD_PATH, ODD);
    write(workspace.path(), "ctl\r\u{1b}[31mname\n.py", TRAIN);
    write(workspace.path(), "percent%0A,colon:.py", "from joblib import Parallel\nx = Parallel(n_jobs=-1)\n");
    workspace
}

/// `capslint check` with `args` in `dir` as it runs inside Actions, with the given output format.
fn capslint_in_actions(dir: &Path, args: &[&str]) -> String {
    let (_, stdout, stderr) = run(capslint(dir).args(args).env("GITHUB_WORKSPACE", dir).env("GITHUB_ACTIONS", "true"));
    assert!(!stdout.is_empty(), "{stderr}");
    stdout
}

#[test]
fn the_annotations_are_what_the_github_format_prints() {
    let workspace = hostile_workspace();
    let expected =
        capslint_in_actions(workspace.path(), &["check", ".", "--select", "ALL", "--output-format", "github"]);
    let statistics = capslint_in_actions(workspace.path(), &["check", ".", "--select", "ALL", "--statistics"]);
    let run = run_action(workspace, &[("args", "check . --select ALL")], &path_with_capslint());
    let (_, code, stdout, stderr) = run.step("run");
    assert_eq!(*code, 0, "{stderr}");
    let produced: Vec<&str> = commands(stdout);
    let wanted: Vec<&str> = expected.lines().collect();
    assert!(wanted.len() > 300, "the fixtures have findings of every kind: {}", wanted.len());
    for (line, (ours, theirs)) in produced.iter().zip(&wanted).enumerate() {
        assert_eq!(ours, theirs, "annotation {line} differs");
    }
    assert_eq!(produced.len(), wanted.len());
    for needle in ["file=odd%2Cdir%3A100%25/", "%0Ahelp: ", "ctl\\r\\x1b[31mname\\n.py", "percent%250A%2Ccolon%3A.py"] {
        assert!(produced.iter().any(|line| line.contains(needle)), "no annotation escapes `{needle}`");
    }
    assert!(produced.iter().any(|line| line.contains(".ipynb,") && line.contains(":cell ")), "notebooks");

    // The summary counts what `--statistics` counts.
    for line in statistics.lines().filter(|line| line.contains('\t')) {
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        let row = format!("| {} | `{}` | {} |", fields[0], fields[1], fields[2]);
        assert!(run.summary.contains(&row), "the summary lacks {row}:\n{}", run.summary);
    }
    assert!(run.summary.contains(statistics.lines().last().unwrap()), "{}", run.summary);
}

#[test]
fn without_annotations_the_log_lists_the_findings_as_the_concise_format_does() {
    let workspace = hostile_workspace();
    let expected = capslint_in_actions(workspace.path(), &["check", ".", "--output-format", "concise"]);
    let run = run_action(workspace, &[("annotations", "false"), ("fail-on-findings", "false")], &path_with_capslint());
    let (_, _, stdout, _) = run.step("run");
    assert!(commands(stdout).is_empty(), "{stdout}");
    let summary = ["Found ", "All checks passed", "[*] ", "No fixes applied"];
    let finding = |line: &&str| !summary.iter().any(|start| line.starts_with(start));
    let listing: Vec<&str> = stdout.lines().filter(finding).collect();
    let wanted: Vec<&str> = expected.lines().filter(finding).collect();
    assert!(wanted.len() > 300, "{}", wanted.len());
    for (line, (ours, theirs)) in listing.iter().zip(&wanted).enumerate() {
        assert_eq!(ours, theirs, "line {line} of the listing differs");
    }
    assert_eq!(listing.len(), wanted.len());
    // The totals (without the file count, which SARIF does not carry), then the fixes counted as concise does.
    let hints: Vec<&str> = expected.lines().filter(|line| line.starts_with("[*] ")).collect();
    assert_eq!(hints.len(), 1, "the fixtures have fixable findings: {expected}");
    let last: Vec<&str> = stdout.lines().rev().take(2).collect();
    assert_eq!(last[0], hints[0], "the listing ends with the fixes counted as concise counts them");
    assert!(last[1].starts_with("Found ") && last[1].ends_with(" warnings)."), "then the totals: {stdout}");
    assert_eq!(run.output("run", "sarif-file"), "", "no SARIF output unless asked");
    assert_eq!(run.step("gate").1, 0);
    assert_eq!(run.exit_code(), 0);
}

#[test]
fn a_span_that_ends_after_a_line_break_ends_on_the_line_before() {
    // The case of src/report/github.rs's own test, through the SARIF the action reads.
    let dir = project(&[("k8s/job.yaml", "a: 1\nb:\n  c: 2\n")]);
    let sarif = |end_line: u32, end_column: u32| {
        serde_json::json!({"runs": [{
            "tool": {"driver": {"name": "capslint", "rules": [{"id": "CAP101", "name": "n-jobs-all-cores"}]}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": format!("file://{}/", dir.path().display())}},
            "results": [{"ruleId": "CAP101", "ruleIndex": 0, "level": "warning",
                "message": {"text": "100% wrong"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": "k8s/job.yaml", "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": 1, "startColumn": 1, "endLine": end_line, "endColumn": end_column}}}]}]}]})
    };
    let report = |value: Value| {
        let file = dir.path().join("report.sarif");
        std::fs::write(&file, value.to_string()).unwrap();
        let out = Command::new(host_python())
            .arg(root().join("action/report.py"))
            .arg(&file)
            .arg("--annotations")
            .current_dir(dir.path())
            .output()
            .expect("python runs");
        assert!(out.status.success(), "{}", combined(&out));
        String::from_utf8(out.stdout).unwrap().lines().next().unwrap().to_string()
    };
    assert_eq!(
        report(sarif(2, 1)),
        "::warning file=k8s/job.yaml,line=1,col=1,endLine=1,endColumn=5,title=CAP101 n-jobs-all-cores::\
         k8s/job.yaml:1:1: CAP101 100%25 wrong"
    );
    assert_eq!(
        report(sarif(4, 1)),
        "::warning file=k8s/job.yaml,line=1,endLine=3,title=CAP101 n-jobs-all-cores::k8s/job.yaml:1:1: CAP101 \
         100%25 wrong"
    );
}

#[test]
fn a_clean_repository_passes_and_errors_always_fail() {
    let run = run_action(repository(&[("train.py", CLEAN)]), &[], &path_with_capslint());
    assert_eq!(run.output("run", "exit-code"), "0");
    assert!(run.step("run").2.contains("All checks passed."), "{}", run.step("run").2);
    assert!(run.summary.contains("All checks passed."), "{}", run.summary);
    assert_eq!(run.exit_code(), 0);

    let broken = repository(&[("train.py", TRAIN), ("capslint.toml", "unknown = 1\n")]);
    let run = run_action(broken, &[("fail-on-findings", "false")], &path_with_capslint());
    assert_eq!(run.output("run", "exit-code"), "2");
    assert!(run.step("run").3.contains("unknown field `unknown`"));
    assert!(run.step("run").2.contains("::warning title=capslint::capslint wrote no report (exit code 2)"));
    assert_eq!(run.exit_code(), 2, "a configuration error fails even with fail-on-findings: false");
}

#[test]
fn arguments_are_split_not_evaluated() {
    let workspace = repository(&[("train.py", TRAIN), ("lib/ok.py", CLEAN)]);
    let marker = workspace.path().join("pwned");
    let args = format!("check lib $(touch {}) `touch {}`", marker.display(), marker.display());
    let run = run_action(workspace, &[("args", &args)], &path_with_capslint());
    assert!(!marker.exists(), "an argument was executed by the shell");
    assert_eq!(run.output("run", "exit-code"), "2", "the odd arguments are paths that do not exist");

    let run = run_action(
        repository(&[("train.py", TRAIN), ("lib/ok.py", CLEAN)]),
        &[("args", "check lib")],
        &path_with_capslint(),
    );
    assert_eq!(run.output("run", "exit-code"), "0", "only lib/ is checked");
}

#[test]
fn arguments_that_name_their_own_output_run_as_they_are() {
    let counter = TempDir::new().unwrap();
    let run = run_action(
        repository(&[("train.py", TRAIN)]),
        &[("args", "check . --output-format concise")],
        &counted_capslint(counter.path()),
    );
    assert!(run.step("run").2.contains("train.py:7:20: CAP101"), "{}", run.step("run").2);
    assert_eq!(run.output("run", "exit-code"), "1");
    assert_eq!(analyses(counter.path()), ["check . --output-format concise"]);
    assert_eq!(run.exit_code(), 1);

    let run = run_action(repository(&[]), &[("args", "rule CAP101")], &path_with_capslint());
    assert!(run.step("run").2.contains("n-jobs-all-cores"), "{}", run.step("run").2);
    assert_eq!(run.exit_code(), 0);
}

/// A fake `cargo` that records its arguments and installs the real binary into `--root`.
fn fake_cargo(dir: &Path) -> PathBuf {
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("cargo.log");
    let script = format!(
        "#!/usr/bin/env bash\nset -eu\necho \"$*\" >>'{log}'\nroot=\"\"\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --root ]; then root=\"$2\"; fi\n  shift\ndone\nmkdir -p \"$root/bin\"\ncp '{binary}' \"$root/bin/capslint\"\n",
        log = log.display(),
        binary = binary().display()
    );
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, script).unwrap();
    Command::new("chmod").arg("+x").arg(&cargo).status().unwrap();
    bin
}

/// A directory with `python3` (the tests' interpreter) and nothing else, as runners have Python.
fn python_bin(dir: &Path) -> PathBuf {
    let out = Command::new(host_python()).args(["-c", "import sys; print(sys.executable)"]).output().unwrap();
    let executable = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let bin = dir.join("pythonbin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(executable, bin.join("python3")).unwrap();
    bin
}

/// Whether a capslint is installed system-wide, which the install tests need absent.
fn system_capslint() -> bool {
    Command::new("bash").args(["-c", "command -v capslint"]).env("PATH", SYSTEM_PATH).status().unwrap().success()
}

#[test]
fn without_capslint_the_action_installs_the_wheel_with_pip() {
    if system_capslint() {
        return note("SKIP integrations_action: a capslint is installed system-wide");
    }
    let house = match wheelhouse("wheelhouse-action-pip", &[]) {
        Ok(house) => house,
        Err(reason) => return skip_integration("integrations_action", &reason),
    };
    let tools = TempDir::new().unwrap();
    let path = format!("{}:{SYSTEM_PATH}", python_bin(tools.path()).display());
    let index = [("PIP_FIND_LINKS", house.into_os_string()), ("PIP_NO_INDEX", OsString::from("1"))];
    let run = run_action_with(repository(&[("train.py", TRAIN)]), &[], &path, &index);
    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 0, "{stdout}{stderr}");
    assert!(stderr.contains(&format!("Installing capslint {VERSION} from the package index with python3 -m pip")));
    let bin = run.runner_temp.path().join("capslint-bin");
    assert!(stdout.contains(&format!("Installed capslint {VERSION} into {}", bin.display())), "{stdout}");
    let on_path: Vec<String> = std::fs::read_dir(&bin)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(on_path, ["capslint"], "the job's later steps keep their own python and pip");
    assert_eq!(run.output("install", "version"), VERSION);
    // The next steps run the installed wheel, found through $GITHUB_PATH.
    assert_eq!(run.output("run", "exit-code"), "1");
    assert_eq!(commands(&run.step("run").2).len(), 3, "{}", run.step("run").2);
    assert_eq!(run.exit_code(), 1);
}

#[test]
fn with_uv_on_path_the_action_installs_the_wheel_with_uv() {
    if system_capslint() {
        return note("SKIP integrations_action: a capslint is installed system-wide");
    }
    let uv = match tool_venv("uv", &["uv==0.13.9"])
        .and_then(|bin| wheelhouse("wheelhouse-action-uv", &[]).map(|house| (bin, house)))
    {
        Ok(found) => found,
        Err(reason) => return skip_integration("integrations_action", &reason),
    };
    let (uv_bin, house) = uv;
    let tools = TempDir::new().unwrap();
    let uv_only = tools.path().join("uvbin");
    std::fs::create_dir_all(&uv_only).unwrap();
    std::os::unix::fs::symlink(uv_bin.join("uv"), uv_only.join("uv")).unwrap();
    let path = format!("{}:{}:{SYSTEM_PATH}", uv_only.display(), python_bin(tools.path()).display());
    let index = [
        ("UV_FIND_LINKS", house.into_os_string()),
        ("UV_OFFLINE", OsString::from("1")),
        ("UV_PYTHON_DOWNLOADS", OsString::from("never")),
        ("UV_CACHE_DIR", tools.path().join("uv-cache").into_os_string()),
    ];
    let run = run_action_with(repository(&[("train.py", CLEAN)]), &[], &path, &index);
    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 0, "{stdout}{stderr}");
    assert!(stderr.contains(&format!("Installing capslint {VERSION} from the package index with uv")), "{stderr}");
    assert_eq!(run.output("install", "version"), VERSION);
    assert_eq!(run.output("run", "exit-code"), "0");
    assert_eq!(run.exit_code(), 0);
}

#[test]
fn a_wheel_that_cannot_be_installed_falls_back_to_cargo_or_fails_clearly() {
    if system_capslint() {
        return note("SKIP integrations_action: a capslint is installed system-wide");
    }
    let tools = TempDir::new().unwrap();
    let empty_index = tools.path().join("empty-index");
    std::fs::create_dir_all(&empty_index).unwrap();
    let offline = [("PIP_FIND_LINKS", empty_index.into_os_string()), ("PIP_NO_INDEX", OsString::from("1"))];
    let python = python_bin(tools.path()).display().to_string();
    let fakebin = fake_cargo(tools.path());
    let with_cargo = format!("{}:{python}:{SYSTEM_PATH}", fakebin.display());

    let run = run_action_with(repository(&[("train.py", TRAIN)]), &[], &with_cargo, &offline);
    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(&format!("capslint {VERSION} could not be installed from the package index")), "{stdout}");
    let root_dir = run.runner_temp.path().join("capslint");
    let log = std::fs::read_to_string(tools.path().join("cargo.log")).unwrap();
    // The action's checkout is the workspace; the binary is its crates/capslint.
    let binary_crate = root().join("crates/capslint");
    assert_eq!(log.trim(), format!("install --locked --root {} --path {}", root_dir.display(), binary_crate.display()));
    assert_eq!(run.output("run", "exit-code"), "1");
    assert_eq!(run.exit_code(), 1);

    // `version: source` builds without trying the wheel; `path` names the source.
    let run = run_action_with(
        repository(&[("train.py", CLEAN)]),
        &[("version", "source"), ("path", "/src/capslint")],
        &with_cargo,
        &offline,
    );
    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 0, "{stdout}{stderr}");
    assert!(!stderr.contains("from the package index"), "{stderr}");
    let log = std::fs::read_to_string(tools.path().join("cargo.log")).unwrap();
    assert!(log.lines().last().unwrap().ends_with("--path /src/capslint"), "{log}");
    assert_eq!(run.exit_code(), 0);

    // Another version than the one on PATH: the wheel is tried, then the source is built, with a warning.
    let path = format!("{}:{}", binary().parent().unwrap().display(), with_cargo);
    let run = run_action_with(repository(&[("train.py", CLEAN)]), &[("version", "v9.9.9")], &path, &offline);
    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(&format!("capslint {VERSION} is on PATH, but 9.9.9 was asked for")), "{stdout}");
    assert!(stderr.contains("Installing capslint 9.9.9 from the package index"), "{stderr}");
    assert!(
        stdout
            .contains(&format!("::warning title=capslint::capslint 9.9.9 was asked for, but {VERSION} was installed"))
    );

    // Neither the wheel nor cargo: the job fails at once, and says what to do.
    let run = run_action_with(repository(&[("train.py", CLEAN)]), &[], &format!("{python}:{SYSTEM_PATH}"), &offline);
    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("::error title=capslint::cargo is not installed"), "{stderr}");
    assert_eq!(run.exit_code(), 2);
}
