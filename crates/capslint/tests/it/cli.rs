//! The binary end to end: exit codes, formats, selection, stdin, suppressions, bad input.

use std::fs;

use predicates::prelude::*;

use crate::support::*;

const BAD: &str =
    "from joblib import Parallel, delayed\n\nresults = Parallel(n_jobs=-1)(delayed(abs)(x) for x in range(9))\n";
const GOOD: &str =
    "from joblib import Parallel, delayed\n\nresults = Parallel(n_jobs=1)(delayed(abs)(x) for x in range(9))\n";

#[test]
fn exit_codes_follow_ruff() {
    let dir = project(&[("good.py", GOOD)]);
    check(dir.path()).assert().code(0).stdout(predicate::str::contains("All checks passed"));
    let dir = project(&[("bad.py", BAD)]);
    check(dir.path()).assert().code(1).stdout(predicate::str::contains("CAP101"));
    check(dir.path()).arg("--exit-zero").assert().code(0);
    check(dir.path())
        .arg("missing/")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing/: no such file or directory"));
    check(dir.path())
        .args(["--select", "CAP9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown rule selector"));
}

#[test]
fn concise_format_is_one_line_per_finding() {
    let dir = project(&[("bad.py", BAD)]);
    check(dir.path())
        .args(["--output-format", "concise", "bad.py"])
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with("bad.py:3:20: CAP101 "));
}

#[test]
fn json_format_uses_ruffs_schema() {
    let dir = project(&[("bad.py", BAD)]);
    let output = check(dir.path()).args(["--output-format", "json"]).output().unwrap();
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    let first = &value[0];
    assert_eq!(first["code"], "CAP101");
    assert_eq!(first["filename"], "bad.py");
    assert_eq!(first["location"], serde_json::json!({"row": 3, "column": 20}));
    assert_eq!(first["end_location"], serde_json::json!({"row": 3, "column": 29}));
    assert_eq!(first["noqa_row"], 3);
    assert!(first["url"].as_str().unwrap().ends_with("CAP101.md"));
    assert_eq!(
        first["fix"],
        serde_json::json!({
            "applicability": "unsafe",
            "edits": [{"content": "1", "end_location": {"row": 3, "column": 29}, "location": {"row": 3, "column": 27}}],
            "message": "Replace `-1` with `1`",
        })
    );
}

#[test]
fn selection_by_code_prefix_and_ignore() {
    let dir = project(&[("bad.py", BAD)]);
    check(dir.path()).args(["--select", "CAP104"]).assert().code(0);
    check(dir.path()).args(["--select", "CAP1"]).assert().code(1);
    check(dir.path()).args(["--ignore", "CAP101"]).assert().code(0);
    check(dir.path()).args(["--select", "CAP104", "--extend-select", "n-jobs-all-cores"]).assert().code(1);
}

#[test]
fn stdin_takes_a_display_name() {
    let dir = project(&[]);
    check(dir.path())
        .args(["--output-format", "concise", "--stdin-filename", "dags/train.py", "-"])
        .write_stdin(BAD)
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with("dags/train.py:3:20: CAP101"));
}

#[test]
fn a_syntax_error_does_not_stop_the_other_files() {
    let dir = project(&[("a_broken.py", "from joblib import Parallel\ndef f(:\n"), ("b_bad.py", BAD)]);
    check(dir.path())
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
    check(dir.path()).assert().code(0).stdout(predicate::str::contains("1 file checked"));
    // A file named explicitly is checked whatever its ignore status.
    check(dir.path()).arg("generated/bad.py").assert().code(1);
}

#[test]
fn noqa_suppresses_and_unused_noqa_is_reported() {
    let text =
        format!("{}\nimport os  # noqa: CAP101\n", BAD.trim_end().replace("range(9))", "range(9))  # noqa: CAP101"));
    let dir = project(&[("suppressed.py", &text)]);
    check(dir.path())
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
    check(dir.path())
        .args(["--output-format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("latin1.py:1:11: CAP001 file is not valid UTF-8"));
}

#[test]
fn a_config_error_points_into_the_file() {
    let dir = project(&[("capslint.toml", "select = [\"CAP1\"]\nunknown-key = 1\n"), ("good.py", GOOD)]);
    capslint(dir.path())
        .arg("check")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown field `unknown-key`, expected one of"))
        .stderr(predicate::str::contains("capslint.toml:2:1"));
}

#[test]
fn rule_prints_the_documentation() {
    capslint(&root())
        .args(["rule", "CAP106"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("# CAP106: late-thread-cap"));
    capslint(&root())
        .args(["rule", "--all"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("CAP101  n-jobs-all-cores"));
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
    capslint(dir.path())
        .args(["check", "--output-format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("bad.py:3:20: CAP101"))
        .stdout(predicate::str::contains("legacy/").not())
        .stdout(predicate::str::contains("generated").not());
    // `--isolated` ignores them all.
    check(dir.path()).args(["--output-format", "concise"]).assert().stdout(predicate::str::contains("legacy/bad.py"));
}

#[test]
fn a_pep_263_coding_declaration_is_honoured() {
    let dir = project(&[]);
    fs::write(
        dir.path().join("big5.py"),
        b"# -*- coding: big5 -*-\n# \xa4\xa4\xa4\xe5\nfrom joblib import Parallel\nParallel(n_jobs=-1)\n",
    )
    .unwrap();
    check(dir.path())
        .args(["--output-format", "concise"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("big5.py:4:10: CAP101"))
        .stdout(predicate::str::contains("CAP001").not());
}

#[test]
fn a_finding_past_column_65535_renders_in_every_format() {
    let text = format!("from joblib import Parallel\nx = 1;{} Parallel(n_jobs=-1)\n", "y = 2;".repeat(14_000));
    let column = text.lines().nth(1).unwrap().find("n_jobs").unwrap() + 1;
    assert!(column > 65_535);
    let dir = project(&[("wide.py", &text)]);
    let output = check(dir.path()).arg("wide.py").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&format!("╭─[wide.py:2:{column}]")), "{stdout}");
    // The long line is cut to a window around the span, which is still underlined.
    assert!(stdout.contains("… Parallel(n_jobs=-1)") || stdout.contains("y = 2; Parallel(n_jobs=-1)"), "{stdout}");
    assert!(stdout.contains("────┬────"), "{stdout}");
    assert!(stdout.lines().all(|line| line.chars().count() < 400), "a line of the report is not cut");
    for format in ["concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"] {
        let output = check(dir.path()).args(["--output-format", format, "wide.py"]).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{format}");
        assert!(String::from_utf8(output.stdout).unwrap().contains(&column.to_string()), "{format}");
    }
}

#[test]
fn many_findings_are_all_rendered_in_every_format() {
    let count = 3_000;
    let text = format!("from joblib import Parallel\n{}", "Parallel(n_jobs=-1)\n".repeat(count));
    let dir = project(&[("many.py", &text)]);
    let render = |format: &str| {
        let output = check(dir.path()).args(["--output-format", format, "many.py"]).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{format}");
        String::from_utf8(output.stdout).unwrap()
    };
    let full = render("full");
    assert_eq!(full.matches("  × `Parallel(n_jobs=-1)`").count(), count);
    assert!(full.contains(&format!("╭─[many.py:{}:10]", count + 1)));
    assert!(full.ends_with(&format!(
        "Found {count} findings ({count} errors, 0 warnings) in 1 of 1 file checked.\nNo fixes applied or available ({count} \
         hidden fixes can be enabled with the `--unsafe-fixes` option).\n"
    )));
    assert_eq!(render("concise").lines().filter(|line| line.starts_with("many.py:")).count(), count);
    let json: serde_json::Value = serde_json::from_str(&render("json")).unwrap();
    assert_eq!(json.as_array().unwrap().len(), count);
    assert_eq!(render("json-lines").lines().count(), count);
    let sarif: serde_json::Value = serde_json::from_str(&render("sarif")).unwrap();
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), count);
    assert_eq!(render("github").lines().filter(|line| line.starts_with("::error ")).count(), count);
    let gitlab: serde_json::Value = serde_json::from_str(&render("gitlab")).unwrap();
    assert_eq!(gitlab.as_array().unwrap().len(), count);
    assert_eq!(render("junit").matches("<failure ").count(), count);
    // A baseline of them all matches them all, and one entry too many is reported once.
    check(dir.path()).args(["--write-baseline", "baseline.json", "many.py"]).assert().code(0);
    check(dir.path()).args(["--baseline", "baseline.json", "many.py"]).assert().code(0);
    fs::write(dir.path().join("many.py"), text.replacen("Parallel(n_jobs=-1)\n", "", 1)).unwrap();
    check(dir.path())
        .args(["--output-format", "concise", "--baseline", "baseline.json", "many.py"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("baseline.json:").count(1))
        .stdout(predicate::str::contains("CAP002"));
}

#[test]
fn control_characters_in_file_names_are_escaped() {
    let dir = project(&[]);
    let name = "evil\u{1b}[2J\nfake.py:1:1: CAP000 \u{7f}.py";
    fs::write(dir.path().join(name), BAD).unwrap();
    for format in ["full", "concise", "github"] {
        let output = check(dir.path()).args(["--output-format", format]).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{format}");
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7f}'), "{format}: {stdout:?}");
        assert!(stdout.contains("evil\\x1b[2J\\nfake.py:1:1: CAP000 \\x7f.py"), "{format}: {stdout}");
        assert!(!stdout.lines().any(|line| line.starts_with("fake.py")), "{format}: {stdout}");
    }
    // Standard error too, when the file cannot be read.
    let output = check(dir.path()).arg(format!("{name}/missing.py")).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(!String::from_utf8(output.stderr).unwrap().contains('\u{1b}'));
}

#[test]
fn a_file_reached_twice_is_checked_once() {
    let dir = project(&[("a.py", BAD), ("sub/b.py", BAD)]);
    std::os::unix::fs::symlink("a.py", dir.path().join("link.py")).unwrap();
    fs::hard_link(dir.path().join("sub/b.py"), dir.path().join("sub/hard.py")).unwrap();
    let concise = |args: &[&str]| {
        let output = check(dir.path()).args(["--output-format", "concise"]).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(1));
        String::from_utf8(output.stdout).unwrap()
    };
    let both = ["a.py:3:20: CAP101", "sub/b.py:3:20: CAP101"];
    let cases: [(&[&str], &[&str]); 6] = [
        (&["a.py", "./a.py"], &both[..1]),
        (&["link.py", "a.py"], &both[..1]),
        (&["."], &both),
        (&[".", "./"], &both),
        (&["a.py", "."], &both),
        (&["sub", "sub/b.py", "sub/hard.py", "."], &both),
    ];
    for (args, expected) in cases {
        let stdout = concise(args);
        let found: Vec<&str> = stdout
            .lines()
            .filter(|line| line.contains("CAP101"))
            .map(|line| &line[..line.find(" CAP101").unwrap() + 7])
            .collect();
        assert_eq!(found, expected, "{args:?}: {stdout}");
    }
    // The order of the arguments does not change which path names the file.
    assert_eq!(concise(&["./a.py", "a.py", "link.py"]), concise(&["link.py", "a.py", "./a.py"]));
}

#[test]
fn stdin_has_the_file_size_limit_and_encoding_rules() {
    let dir = project(&[]);
    check(dir.path())
        .args(["--output-format", "concise", "--stdin-filename", "big5.py", "-"])
        .write_stdin(
            &b"# -*- coding: big5 -*-\n# \xa4\xa4\xa4\xe5\nfrom joblib import Parallel\nParallel(n_jobs=-1)\n"[..],
        )
        .assert()
        .code(1)
        .stdout(predicate::str::contains("big5.py:4:10: CAP101"))
        .stdout(predicate::str::contains("CAP001").not());
    check(dir.path())
        .args(["--output-format", "concise", "--stdin-filename", "latin1.py", "-"])
        .write_stdin(&b"n_jobs = '\xe9'\n"[..])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("latin1.py:1:11: CAP001 file is not valid UTF-8"));
    let mut huge = vec![b'#'; capslint_workspace::confine::MAX_FILE_BYTES as usize + 10];
    huge[0] = b'\n';
    check(dir.path())
        .args(["--output-format", "concise", "--stdin-filename", "huge.py", "-"])
        .write_stdin(huge)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("huge.py:1:1: CAP001 file is 64 MiB, above the 64 MiB"));
}

#[test]
fn a_report_or_baseline_cut_short_leaves_the_old_file_whole() {
    let text = format!("from joblib import Parallel\n{}", "Parallel(n_jobs=-1)\n".repeat(200));
    let dir = project(&[("many.py", &text), ("baseline.json", "old baseline\n"), ("report.txt", "old report\n")]);
    // A file size limit of 1 KiB stops the writer mid-file (SIGXFSZ), as a kill would.
    for args in ["--write-baseline baseline.json", "--output-format concise --output-file report.txt"] {
        let status = scrubbed("sh")
            .current_dir(dir.path())
            .args(["-c", &format!("ulimit -f 1 && exec \"$0\" check --isolated {args} many.py")])
            .arg(binary())
            .status()
            .unwrap();
        assert!(!status.success(), "{args}");
    }
    assert_eq!(fs::read_to_string(dir.path().join("baseline.json")).unwrap(), "old baseline\n");
    assert_eq!(fs::read_to_string(dir.path().join("report.txt")).unwrap(), "old report\n");
    // Without the limit, both are replaced.
    check(dir.path()).args(["--write-baseline", "baseline.json", "many.py"]).assert().code(0);
    check(dir.path()).args(["--output-format", "concise", "--output-file", "report.txt", "many.py"]).assert().code(1);
    assert!(fs::read_to_string(dir.path().join("baseline.json")).unwrap().contains("\"findings\""));
    // 200 findings, the summary line, and the line about the hidden unsafe fixes.
    assert_eq!(fs::read_to_string(dir.path().join("report.txt")).unwrap().lines().count(), 202);
}

#[test]
fn the_prefilter_sees_words_spelled_indirectly() {
    // None of these files contains a rule's word as written; Python reads one in each.
    let files = [
        ("concatenated.py", "import joblib\n\nparams = {\"n_\" \"jobs\": -1}\n"),
        ("escaped.py", "import joblib\n\nparams = {\"\\x6e_jobs\": -1}\n"),
        ("named.py", "import joblib\n\nparams = {\"\\N{LATIN SMALL LETTER N}_jobs\": -1}\n"),
        ("continued.py", "import joblib\n\nparams = {\"n_\\\njobs\": -1}\n"),
        ("fullwidth.py", "from sklearn.ensemble import RandomForestClassifier as F\n\nF(\u{ff4e}_jobs=-1)\n"),
        ("environ.py", "import os\n\nimport numpy\n\nos.environ[\"OMP_NUM_\" \"THREADS\"] = \"1\"\n"),
        (
            "spaced.py",
            "from airflow.decorators import task\n\n\n@task.kubernetes (image=\"python\")\ndef train():\n    pass\n",
        ),
    ];
    let dir = project(&files);
    let concise = |extra: &[&str]| {
        let output = check(dir.path()).args(["--output-format", "concise"]).args(extra).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let parsed_always = concise(&["--no-prefilter"]);
    for (name, _) in files {
        assert!(parsed_always.contains(&format!("{name}:")), "{name} has no finding: {parsed_always}");
    }
    assert_eq!(concise(&[]), parsed_always);
}

#[test]
fn methods_of_another_module_s_class_are_followed_from_files_that_construct_it() {
    // `main.py` holds no rule's word, nor does `commented.py` in its code: the prefilter lets both through
    // because they call a class of the project that may have findings, as it does `renamed.py`, which
    // imports it under another name. `typed.py` imports the class but never constructs it, so no method
    // of it is followed there: dropped by the prefilter, and silent with it off. Both modes agree.
    let selector = "from joblib import Parallel, delayed\n\n\nclass Selector:\n    def __init__(self, path, jobs=1):\n        \
                    self.jobs = jobs\n\n    def fit(self, frame):\n        \
                    return Parallel(n_jobs=self.jobs)(delayed(len)(part) for part in frame)\n";
    let files = [
        ("selection.py", selector),
        ("main.py", "from selection import Selector\n\nSelector(None, -1).fit([])\n"),
        ("commented.py", "from selection import Selector\n\n# n_jobs\nSelector(None, -1).fit([])\n"),
        ("worded.py", "from selection import Selector\n\nn_jobs = None\nSelector(None, -1).fit([])\n"),
        ("renamed.py", "from selection import Selector as Chooser\n\nChooser(None, -1).fit([])\n"),
        ("typed.py", "from selection import Selector\n\n\ndef run(chosen: Selector):\n    return chosen.fit([-1])\n"),
    ];
    let dir = project(&files);
    let concise = |extra: &[&str]| {
        let output = check(dir.path()).args(["--output-format", "concise"]).args(extra).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let filtered = concise(&[]);
    for place in
        ["main.py:3:16: CAP101", "commented.py:4:16: CAP101", "worded.py:4:16: CAP101", "renamed.py:3:15: CAP101"]
    {
        assert!(filtered.contains(place), "{place}: {filtered}");
    }
    assert!(!filtered.contains("typed.py"), "{filtered}");
    assert_eq!(concise(&["--no-prefilter"]), filtered);
}
