//! `check --fix` and friends, end to end: the diff of every fixture under `fixtures/fix/` (snapshots),
//! then proof that the fixed file is right: it parses (Python compiles, YAML loads with PyYAML and differs
//! from the original only in the containers' `env`), the fixed findings are gone and none appeared,
//! comments and blank lines survive, and a second `--fix` changes nothing.

use std::fs;
use std::path::Path;

use crate::support::*;

const FIXTURES: &[&str] = &[
    "python_thread_counts.py",
    "manifest_env_block.yaml",
    "manifest_flush_and_indented.yaml",
    "manifest_limit_from_request.yaml",
];

/// The findings of `name` in `dir` as `(code, message)` pairs.
fn findings(dir: &Path, name: &str) -> Vec<(String, String)> {
    let (_, stdout, _) = run(check(dir).args(["--output-format", "json", name]));
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["code"].as_str().unwrap().to_string(), item["message"].as_str().unwrap().to_string()))
        .collect()
}

/// The lines that are comments or blank, in order.
fn comments_and_blanks(text: &str) -> Vec<&str> {
    text.lines().filter(|line| line.trim().is_empty() || line.trim_start().starts_with('#')).collect()
}

fn python() -> Option<String> {
    std::env::var("CAPSLINT_TEST_PYTHON").ok()
}

/// Whether `fixed` is `original` plus container `env` entries, `OMP_WAIT_POLICY` values and CPU limits equal
/// to the request, as PyYAML reads both: every container's `env` is compared without the variables the
/// fixes add, its `resources` without a `limits.cpu` equal to `requests.cpu`.
const SAME_BUT_ENV: &str = r#"
import sys, yaml
added = {"CPU_LIMIT", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
         "LOKY_MAX_CPU_COUNT", "OMP_WAIT_POLICY"}
def strip(node):
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "env" and isinstance(value, list):
                value = [item for item in value if item.get("name") not in added]
                if not value:
                    continue
            if key == "resources" and isinstance(value, dict):
                limits = dict(value.get("limits") or {})
                if "cpu" in limits and str(limits["cpu"]) == str((value.get("requests") or {}).get("cpu")):
                    del limits["cpu"]
                value = {k: v for k, v in value.items() if k != "limits"}
                if limits:
                    value["limits"] = limits
            out[key] = strip(value)
        return out
    if isinstance(node, list):
        return [strip(item) for item in node]
    return node
original = [strip(doc) for doc in yaml.safe_load_all(open(sys.argv[1]))]
fixed = [strip(doc) for doc in yaml.safe_load_all(open(sys.argv[2]))]
sys.exit(0 if original == fixed else 1)
"#;

#[test]
fn every_fix_is_right_and_a_second_run_changes_nothing() {
    for name in FIXTURES {
        let original = fs::read_to_string(root().join("fixtures/fix").join(name)).unwrap();
        let dir = project(&[(name, &original)]);
        let before = findings(dir.path(), name);

        let (code, diff, stderr) = run(check(dir.path()).args(["--diff", "--unsafe-fixes", name]));
        assert_eq!(code, 1, "{name}: --diff exits 1 when there is a fix: {stderr}");
        assert_eq!(fs::read_to_string(dir.path().join(name)).unwrap(), original, "--diff writes nothing");
        insta::assert_snapshot!(format!("fix_diff__{name}"), diff);

        let (_, _, stderr) =
            run(check(dir.path()).args(["--fix", "--unsafe-fixes", "--output-format", "concise", name]));
        let fixed = fs::read_to_string(dir.path().join(name)).unwrap();
        assert_ne!(fixed, original, "{name}: {stderr}");
        assert_eq!(diff, fix_diff(name, &original, &fixed), "--diff shows exactly what --fix writes");

        let after = findings(dir.path(), name);
        for finding in &after {
            assert!(before.contains(finding), "{name}: a fix made a new finding {finding:?}");
        }
        assert!(after.len() < before.len(), "{name}: nothing was fixed");
        let (_, concise, _) = run(check(dir.path()).args(["--unsafe-fixes", "--output-format", "concise", name]));
        assert!(!concise.contains("[*]"), "{name}: a fixable finding remains:\n{concise}");

        let kept = comments_and_blanks(&original);
        let mut now = comments_and_blanks(&fixed).into_iter();
        for line in kept {
            assert!(now.any(|other| other == line), "{name}: lost the line {line:?}");
        }

        let kind = if name.ends_with(".py") {
            capslint_workspace::discover::FileKind::Python
        } else {
            capslint_workspace::discover::FileKind::Yaml
        };
        assert!(capslint_linter::fix::run::parses(kind, &fixed), "{name}: the fixed file does not parse");
        if let Some(python) = python() {
            let fixed_path = dir.path().join(name);
            let original_path = dir.path().join(format!("original-{name}"));
            fs::write(&original_path, &original).unwrap();
            let status = if name.ends_with(".py") {
                std::process::Command::new(&python)
                    .args(["-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())"])
                    .arg(&fixed_path)
                    .status()
            } else {
                std::process::Command::new(&python)
                    .args(["-c", SAME_BUT_ENV])
                    .arg(&original_path)
                    .arg(&fixed_path)
                    .status()
            };
            assert!(status.unwrap().success(), "{name}: Python rejects the fixed file, or it differs beyond `env`");
            fs::remove_file(original_path).unwrap();
        }

        let (code, _, _) = run(check(dir.path()).args(["--fix", "--unsafe-fixes", name]));
        assert_eq!(fs::read_to_string(dir.path().join(name)).unwrap(), fixed, "{name}: a second --fix changed it");
        assert!(code <= 1);
        let (code, diff, _) = run(check(dir.path()).args(["--diff", "--unsafe-fixes", name]));
        assert_eq!((code, diff.as_str()), (0, ""), "{name}: nothing left to fix");
    }
}

fn fix_diff(name: &str, old: &str, new: &str) -> String {
    capslint_diagnostics::fix::diff::unified(name, old, new)
}

#[test]
fn unsafe_fixes_need_the_flag_and_the_configuration_can_turn_them_on() {
    let text = fs::read_to_string(root().join("fixtures/fix/python_thread_counts.py")).unwrap();
    let dir = project(&[("train.py", &text)]);
    let (code, diff, _) = run(check(dir.path()).args(["--diff", "train.py"]));
    assert_eq!(code, 1);
    assert!(diff.contains("\n-x = 1  # noqa: CAP105\n") && diff.contains("\n+x = 1\n"), "the safe CAP002 fix:\n{diff}");
    assert!(diff.contains("\n+y = 2  # explained\n"), "the rest of a comment stays:\n{diff}");
    assert!(!diff.contains("n_jobs=1"), "no unsafe fix without --unsafe-fixes:\n{diff}");
    let (_, stdout, _) = run(check(dir.path()).args(["--output-format", "concise", "train.py"]));
    assert!(stdout.contains("hidden fixes can be enabled with the `--unsafe-fixes` option"), "{stdout}");

    // `fix = true` and `unsafe-fixes = true` in the configuration, with the thread count to write.
    let dir = project(&[
        ("train.py", &text),
        (
            "capslint.toml",
            "fix = true\nunsafe-fixes = true\nfix-thread-count = \"int(os.environ['OMP_NUM_THREADS'])\"\n",
        ),
    ]);
    let (code, stdout, _) = run(capslint(dir.path()).args(["check", "--output-format", "concise", "train.py"]));
    let fixed = fs::read_to_string(dir.path().join("train.py")).unwrap();
    assert!(fixed.contains("n_jobs=int(os.environ['OMP_NUM_THREADS'])"), "{fixed}");
    assert!(fixed.contains("\"\"\"\nimport os\nimport lightgbm"), "the import the expression needs:\n{fixed}");
    assert!(stdout.contains(" fixed, "), "{stdout}");
    assert_eq!(code, 1, "findings without a fix remain");
    // `--no-fix` overrides the configuration.
    let dir = project(&[("train.py", &text), ("capslint.toml", "fix = true\n")]);
    run(capslint(dir.path()).args(["check", "--no-fix", "train.py"]));
    assert_eq!(fs::read_to_string(dir.path().join("train.py")).unwrap(), text);
    // A thread count that is not an expression is a configuration error.
    let dir = project(&[("train.py", &text), ("capslint.toml", "fix-thread-count = \"int(\"\n")]);
    let (code, _, stderr) = run(capslint(dir.path()).args(["check", "train.py"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("is not a Python expression"), "{stderr}");
}

#[test]
fn fix_only_reports_the_count_and_sarif_carries_the_fixes() {
    let text = fs::read_to_string(root().join("fixtures/fix/manifest_env_block.yaml")).unwrap();
    let dir = project(&[("job.yaml", &text)]);
    let (_, sarif, _) = run(check(dir.path()).args(["--output-format", "sarif", "job.yaml"]));
    let sarif: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let fix = results.iter().find_map(|result| result["fixes"].get(0)).expect("a result with fixes");
    assert_eq!(fix["properties"]["applicability"], "safe");
    let replacement = &fix["artifactChanges"][0]["replacements"][0];
    assert!(replacement["insertedContent"]["text"].as_str().unwrap().contains("resource: limits.cpu"));
    assert_eq!(fix["artifactChanges"][0]["artifactLocation"]["uri"], "job.yaml");

    let (code, stdout, stderr) = run(check(dir.path()).args(["--fix-only", "job.yaml"]));
    assert_eq!((code, stdout.as_str()), (0, ""));
    assert_eq!(stderr, "Fixed 5 findings.\n");
    let (_, statistics, _) = run(check(dir.path()).args(["--statistics", "job.yaml"]));
    assert!(statistics.contains("CAP203\tmissing-thread-caps"), "{statistics}");
    assert!(!statistics.contains("[*]"), "the display-only fix of the fractional limit is not counted:\n{statistics}");
}

#[test]
fn add_noqa_silences_every_finding_in_python_and_yaml() {
    let python = fs::read_to_string(root().join("fixtures/fix/python_thread_counts.py")).unwrap();
    let yaml = fs::read_to_string(root().join("fixtures/fix/manifest_env_block.yaml")).unwrap();
    let dir = project(&[("train.py", &python), ("job.yaml", &yaml)]);
    let select = "CAP1,CAP2";
    let (code, _, stderr) = run(check(dir.path()).args(["--add-noqa", "--select", select]));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = run(check(dir.path()).args(["--select", select, "--output-format", "concise"]));
    assert_eq!(code, 0, "{stdout}");
    let python = fs::read_to_string(dir.path().join("train.py")).unwrap();
    assert!(python.contains("results = Parallel(n_jobs=-1)(delayed(abs)(x) for x in range(9))  # noqa: CAP101\n"));
    assert!(python.contains("x = 1  # noqa: CAP105\n"), "a suppression already there is left alone:\n{python}");
    let yaml = fs::read_to_string(dir.path().join("job.yaml")).unwrap();
    assert!(yaml.contains("- name: train   # the trainer  # capslint: ignore[CAP202,CAP203,CAP205]\n"), "{yaml}");
    assert!(yaml.contains("value: 'active'  # capslint: ignore[CAP205]\n"), "after a quoted value:\n{yaml}");
}

#[test]
fn standard_input_gets_its_fixed_source_on_stdout_and_the_report_on_stderr() {
    let dir = project(&[]);
    let bad = "from joblib import Parallel\nParallel(n_jobs=-1)\n";
    let output = check(dir.path())
        .args(["--fix", "--unsafe-fixes", "--output-format", "concise", "-"])
        .write_stdin(bad)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "from joblib import Parallel\nParallel(n_jobs=1)\n");
    assert!(String::from_utf8_lossy(&output.stderr).contains("1 fixed, 0 remaining"));
    // Nothing to fix: the source comes back as it was.
    let output = check(dir.path()).args(["--fix", "-"]).write_stdin("x = 1\n").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "x = 1\n");
    assert_eq!(output.status.code(), Some(0));
}

/// A copy of the directory tree `fixtures/fix/NAME` in a temporary directory.
fn copy_tree(name: &str) -> tempfile::TempDir {
    let dir = project(&[]);
    let source = root().join("fixtures/fix").join(name);
    let mut stack = vec![source.clone()];
    while let Some(directory) = stack.pop() {
        for entry in fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            let target = dir.path().join(path.strip_prefix(&source).unwrap());
            if path.is_dir() {
                fs::create_dir_all(&target).unwrap();
                stack.push(path);
            } else {
                fs::copy(&path, &target).unwrap();
            }
        }
    }
    dir
}

#[test]
fn in_a_kustomize_overlay_the_base_carries_the_fix_and_the_overlay_still_renders() {
    let dir = copy_tree("kustomize");
    let patch = fs::read_to_string(dir.path().join("overlays/prod/cpu.yaml")).unwrap();
    let (code, diff, _) = run(check(dir.path()).arg("--diff"));
    assert_eq!(code, 1);
    insta::assert_snapshot!("fix_diff__kustomize", diff);
    let (code, stdout, _) = run(check(dir.path()).args(["--fix", "--output-format", "concise"]));
    assert_eq!(code, 0, "every finding is fixed:\n{stdout}");
    assert!(stdout.contains("(3 fixed, 0 remaining)"), "{stdout}");
    assert_eq!(fs::read_to_string(dir.path().join("overlays/prod/cpu.yaml")).unwrap(), patch, "the patch is untouched");
    let (code, _, _) = run(check(dir.path()).arg("--diff"));
    assert_eq!(code, 0, "a second run has nothing to fix");
    let rendered =
        std::process::Command::new("kubectl").args(["kustomize", "overlays/prod"]).current_dir(dir.path()).output();
    match rendered {
        Ok(output) if output.status.success() => {
            let text = String::from_utf8_lossy(&output.stdout);
            assert!(text.contains("value: passive") && text.contains("resource: limits.cpu"), "{text}");
            assert!(text.contains("value: $(CPU_LIMIT)"), "{text}");
        }
        _ => println!("SKIP kubectl kustomize: kubectl is not installed"),
    }
}
