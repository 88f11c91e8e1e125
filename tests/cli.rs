//! The binary end to end: exit codes, formats, selection, stdin, suppressions, bad input.

use std::fs;

use assert_cmd::Command;
use predicates::prelude::*;
use tempfile::TempDir;

fn capslint(dir: &TempDir) -> Command {
    let mut command = Command::cargo_bin("capslint").expect("binary");
    command
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CAPSLINT_OUTPUT_FORMAT");
    command.arg("check").arg("--isolated");
    command
}

fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

const BAD: &str =
    "from joblib import Parallel, delayed\n\nresults = Parallel(n_jobs=-1)(delayed(abs)(x) for x in range(9))\n";
const GOOD: &str =
    "from joblib import Parallel, delayed\n\nresults = Parallel(n_jobs=1)(delayed(abs)(x) for x in range(9))\n";

#[test]
fn exit_codes_follow_ruff() {
    let dir = project(&[("good.py", GOOD)]);
    capslint(&dir).assert().code(0).stdout(predicate::str::contains("All checks passed"));
    let dir = project(&[("bad.py", BAD)]);
    capslint(&dir).assert().code(1).stdout(predicate::str::contains("CAP101"));
    capslint(&dir).arg("--exit-zero").assert().code(0);
    capslint(&dir)
        .arg("missing/")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing/: no such file or directory"));
    capslint(&dir)
        .args(["--select", "CAP9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown rule selector"));
}

#[test]
fn concise_format_is_one_line_per_finding() {
    let dir = project(&[("bad.py", BAD)]);
    capslint(&dir)
        .args(["--output-format", "concise", "bad.py"])
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with("bad.py:3:20: CAP101 "));
}

#[test]
fn json_format_uses_ruffs_schema() {
    let dir = project(&[("bad.py", BAD)]);
    let output = capslint(&dir).args(["--output-format", "json"]).output().unwrap();
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    let first = &value[0];
    assert_eq!(first["code"], "CAP101");
    assert_eq!(first["filename"], "bad.py");
    assert_eq!(first["location"], serde_json::json!({"row": 3, "column": 20}));
    assert_eq!(first["end_location"], serde_json::json!({"row": 3, "column": 29}));
    assert_eq!(first["noqa_row"], 3);
    assert!(first["url"].as_str().unwrap().ends_with("CAP101.md"));
    assert!(first["fix"].is_null());
}

#[test]
fn selection_by_code_prefix_and_ignore() {
    let dir = project(&[("bad.py", BAD)]);
    capslint(&dir).args(["--select", "CAP104"]).assert().code(0);
    capslint(&dir).args(["--select", "CAP1"]).assert().code(1);
    capslint(&dir).args(["--ignore", "CAP101"]).assert().code(0);
    capslint(&dir).args(["--select", "CAP104", "--extend-select", "n-jobs-all-cores"]).assert().code(1);
}

#[test]
fn stdin_takes_a_display_name() {
    let dir = project(&[]);
    capslint(&dir)
        .args(["--output-format", "concise", "--stdin-filename", "dags/train.py", "-"])
        .write_stdin(BAD)
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with("dags/train.py:3:20: CAP101"));
}

#[test]
fn a_syntax_error_does_not_stop_the_other_files() {
    let dir = project(&[("a_broken.py", "from joblib import Parallel\ndef f(:\n"), ("b_bad.py", BAD)]);
    capslint(&dir)
        .args(["--output-format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("a_broken.py:2:7: CAP001"))
        .stdout(predicate::str::contains("b_bad.py:3:20: CAP101"));
}

#[test]
fn gitignored_hidden_and_virtualenv_files_are_skipped() {
    let dir = project(&[
        (".gitignore", "generated/\n"),
        ("generated/bad.py", BAD),
        (".hidden/bad.py", BAD),
        ("venv/lib/bad.py", BAD),
        ("src/good.py", GOOD),
    ]);
    capslint(&dir).assert().code(0).stdout(predicate::str::contains("1 file checked"));
    // A file named explicitly is checked whatever its ignore status.
    capslint(&dir).arg("generated/bad.py").assert().code(1);
}

#[test]
fn noqa_suppresses_and_unused_noqa_is_reported() {
    let text =
        format!("{}\nimport os  # noqa: CAP101\n", BAD.trim_end().replace("range(9))", "range(9))  # noqa: CAP101"));
    let dir = project(&[("suppressed.py", &text)]);
    capslint(&dir)
        .args(["--output-format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("suppressed.py:4:20: CAP002"))
        .stdout(predicate::str::contains("CAP101").count(1));
}

#[test]
fn non_utf8_and_binary_files_are_reported_not_fatal() {
    let dir = project(&[("good.py", GOOD)]);
    fs::write(dir.path().join("latin1.py"), b"n_jobs = '\xe9'\n").unwrap();
    capslint(&dir)
        .args(["--output-format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("latin1.py:1:11: CAP001 file is not valid UTF-8"));
}

#[test]
fn a_config_error_points_into_the_file() {
    let dir = project(&[("capslint.toml", "select = [\"CAP1\"]\nunknown-key = 1\n"), ("good.py", GOOD)]);
    let mut command = Command::cargo_bin("capslint").unwrap();
    command
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .arg("check")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown field `unknown-key`, expected one of"))
        .stderr(predicate::str::contains("capslint.toml:2:1"));
}

#[test]
fn rule_prints_the_documentation() {
    let mut command = Command::cargo_bin("capslint").unwrap();
    command.args(["rule", "CAP106"]).assert().code(0).stdout(predicate::str::starts_with("# CAP106: late-thread-cap"));
    let mut command = Command::cargo_bin("capslint").unwrap();
    command.args(["rule", "--all"]).assert().code(0).stdout(predicate::str::contains("CAP101  n-jobs-all-cores"));
}

#[test]
fn the_nearest_configuration_applies_to_each_file() {
    let dir = project(&[
        ("bad.py", BAD),
        ("legacy/capslint.toml", "ignore = [\"CAP101\"]\n"),
        ("legacy/bad.py", BAD),
        ("pkg/pyproject.toml", "[project]\nname = \"pkg\"\n\n[tool.capslint]\nextend-exclude = [\"generated\"]\n"),
        ("pkg/generated/bad.py", BAD),
    ]);
    let mut command = Command::cargo_bin("capslint").unwrap();
    command
        .current_dir(dir.path())
        .args(["check", "--output-format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("bad.py:3:20: CAP101"))
        .stdout(predicate::str::contains("legacy/").not())
        .stdout(predicate::str::contains("generated").not());
    // `--isolated` ignores them all.
    capslint(&dir).args(["--output-format", "concise"]).assert().stdout(predicate::str::contains("legacy/bad.py"));
}

#[test]
fn a_pep_263_coding_declaration_is_honoured() {
    let dir = project(&[]);
    fs::write(
        dir.path().join("big5.py"),
        b"# -*- coding: big5 -*-\n# \xa4\xa4\xa4\xe5\nfrom joblib import Parallel\nParallel(n_jobs=-1)\n",
    )
    .unwrap();
    capslint(&dir)
        .args(["--output-format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("big5.py:4:10: CAP101"))
        .stdout(predicate::str::contains("CAP001").not());
}
