//! The composite GitHub Action, run the way a runner runs it: `action.yml` is parsed, each `run:` step is
//! executed by `bash --noprofile --norc -eo pipefail` with its `env:` (expressions evaluated) and the
//! `GITHUB_*` / `RUNNER_TEMP` variables and files a runner provides; `uses:` steps are skipped. The
//! freshly built capslint is on PATH, as an earlier step of a real workflow would put it.

use std::collections::BTreeMap;
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
            .env("RUNNER_TEMP", run.runner_temp.path());
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

/// PATH with the freshly built capslint first.
fn path_with_capslint() -> String {
    let bin = binary().parent().unwrap().display().to_string();
    format!("{bin}:{}", std::env::var("PATH").unwrap_or_default())
}

fn repository(files: &[(&str, &str)]) -> TempDir {
    project(files)
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
fn findings_become_annotations_a_sarif_file_and_a_failing_job() {
    let workspace = repository(&[("src/train.py", TRAIN), ("src/clean.py", CLEAN)]);
    let run = run_action(workspace, &[("sarif", "true")], &path_with_capslint());
    assert_eq!(run.skipped, ["github/codeql-action/upload-sarif@v4"]);

    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(&format!("Using {}", binary().display())), "uses the capslint on PATH: {stdout}");
    assert_eq!(run.output("install", "version"), env!("CARGO_PKG_VERSION"));

    let (_, code, stdout, _) = run.step("run");
    assert_eq!(*code, 0, "the run step records the exit code and lets the upload happen");
    assert_eq!(run.output("run", "exit-code"), "1");
    let annotations: Vec<&str> = stdout.lines().filter(|line| line.starts_with("::")).collect();
    assert_eq!(annotations.len(), 3, "{stdout}");
    assert!(annotations[0].starts_with("::error file=src/train.py,line=7,col=20,endLine=7,endColumn=29,title=CAP101"));
    assert!(annotations[1].starts_with("::warning file=src/train.py,line=8,"));

    let sarif_file = run.output("run", "sarif-file");
    assert!(sarif_file.starts_with(&run.runner_temp.path().display().to_string()), "{sarif_file}");
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(sarif_file).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "src/train.py");

    assert!(run.summary.contains("| 1 | `CAP101` | n-jobs-all-cores |"), "{}", run.summary);
    assert!(run.summary.contains("Found 3 findings."));

    let (_, code, stdout, _) = run.step("gate");
    assert_eq!(*code, 1, "{stdout}");
    assert_eq!(run.exit_code(), 1);
    drop(run.workspace);
}

#[test]
fn findings_can_be_reported_without_failing_and_without_annotations() {
    let workspace = repository(&[("train.py", TRAIN)]);
    let run = run_action(workspace, &[("fail-on-findings", "false"), ("annotations", "false")], &path_with_capslint());
    let (_, _, stdout, _) = run.step("run");
    assert!(!stdout.contains("::error"), "{stdout}");
    assert!(stdout.contains("× `Parallel(n_jobs=-1)`") && stdout.contains("Found 3 findings"), "{stdout}");
    assert_eq!(run.output("run", "sarif-file"), "", "no SARIF unless asked");
    assert_eq!(run.step("gate").1, 0);
    assert_eq!(run.exit_code(), 0);
}

#[test]
fn a_clean_repository_passes_and_errors_always_fail() {
    let run = run_action(repository(&[("train.py", CLEAN)]), &[], &path_with_capslint());
    assert_eq!(run.output("run", "exit-code"), "0");
    assert!(run.summary.contains("All checks passed."), "{}", run.summary);
    assert_eq!(run.exit_code(), 0);

    let broken = repository(&[("train.py", TRAIN), ("capslint.toml", "unknown = 1\n")]);
    let run = run_action(broken, &[("fail-on-findings", "false")], &path_with_capslint());
    assert_eq!(run.output("run", "exit-code"), "2");
    assert!(run.step("run").3.contains("unknown field `unknown`"));
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

#[test]
fn without_capslint_on_path_the_action_builds_it() {
    let system_path = "/usr/local/bin:/usr/bin:/bin";
    let found = Command::new("bash").args(["-c", "command -v capslint"]).env("PATH", system_path).output().unwrap();
    if found.status.success() {
        println!("SKIP: a capslint is installed system-wide");
        return;
    }
    let tools = TempDir::new().unwrap();
    let fakebin = fake_cargo(tools.path());
    let path = format!("{}:{system_path}", fakebin.display());

    let run = run_action(repository(&[("train.py", TRAIN)]), &[], &path);
    let (_, code, stdout, stderr) = run.step("install");
    assert_eq!(*code, 0, "{stdout}{stderr}");
    let root_dir = run.runner_temp.path().join("capslint");
    let log = std::fs::read_to_string(tools.path().join("cargo.log")).unwrap();
    assert_eq!(log.trim(), format!("install --locked --root {} --path {}", root_dir.display(), root().display()));
    // The next steps find it through $GITHUB_PATH.
    assert_eq!(run.output("run", "exit-code"), "1");
    assert_eq!(run.exit_code(), 1);

    let run = run_action(repository(&[("train.py", CLEAN)]), &[("version", "v0.1.0")], &path);
    assert_eq!(run.step("install").1, 0);
    let log = std::fs::read_to_string(tools.path().join("cargo.log")).unwrap();
    assert!(log.lines().last().unwrap().ends_with("capslint --version 0.1.0"), "{log}");
    assert_eq!(run.exit_code(), 0);
}
