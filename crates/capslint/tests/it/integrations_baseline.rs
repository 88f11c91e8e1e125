//! Adopting capslint in a repository that already has findings: the shipped fixtures (dozens of real
//! violations) play the repository. A baseline records them, survives unrelated edits, lets new
//! findings through, and reports entries that no longer match as CAP002 on the baseline file.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::*;

const BASELINE: &str = "capslint-baseline.json";

/// A repository made of the Python fixtures (under `legacy/`) plus `src/train.py`.
fn repository() -> tempfile::TempDir {
    let dir = project(&[("src/train.py", TRAIN)]);
    for entry in fs::read_dir(root().join("fixtures/python")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "py") {
            let name = format!("legacy/{}", path.file_name().unwrap().to_string_lossy());
            write(dir.path(), &name, &fs::read_to_string(&path).unwrap());
        }
    }
    dir
}

fn concise(dir: &Path, args: &[&str]) -> (i32, Vec<String>) {
    let (code, stdout, stderr) = run(check(dir).args(["--output-format", "concise"]).args(args));
    assert_ne!(code, 2, "{stderr}");
    let findings = stdout.lines().filter(|line| line.contains(": CAP")).map(str::to_string).collect();
    (code, findings)
}

fn prepend_everywhere(dir: &Path, header: &str) {
    for folder in ["legacy", "src"] {
        for entry in fs::read_dir(dir.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let text = fs::read_to_string(&path).unwrap();
            fs::write(&path, format!("{header}{text}")).unwrap();
        }
    }
}

#[test]
fn a_baseline_hides_todays_findings_across_line_shifts_and_lets_new_ones_through() {
    let dir = repository();
    let (code, today) = concise(dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(today.len() > 40, "the fixtures have many findings, got {}", today.len());

    let (code, stdout, stderr) = run(check(dir.path()).args(["--write-baseline", BASELINE]));
    assert_eq!((code, stdout.as_str()), (0, ""));
    let said: Vec<&str> = stderr.lines().filter(|line| !line.starts_with("note: ")).collect();
    assert_eq!(said, [format!("Recorded {} findings in {BASELINE}.", today.len())]);
    let baseline: Value = serde_json::from_str(&fs::read_to_string(dir.path().join(BASELINE)).unwrap()).unwrap();
    assert_eq!(baseline["version"], 1);
    let entries = baseline["findings"].as_array().unwrap();
    assert_eq!(entries.len(), today.len());
    for entry in entries {
        let keys: Vec<&str> = entry.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["code", "fingerprint", "message", "path"]);
        assert!(!entry["path"].as_str().unwrap().contains('\\'));
    }

    let (code, findings) = concise(dir.path(), &["--baseline", BASELINE]);
    assert_eq!((code, findings.len()), (0, 0), "{findings:?}");

    // Unrelated edits above every finding keep every fingerprint.
    prepend_everywhere(dir.path(), "# Copyright the authors.\n# Licensed under MIT.\n\n");
    let (code, findings) = concise(dir.path(), &["--baseline", BASELINE]);
    assert_eq!((code, findings.len()), (0, 0), "{findings:?}");

    // A new violation, even one identical to a recorded line, is reported, and only it.
    let train = dir.path().join("src/train.py");
    let text = fs::read_to_string(&train).unwrap();
    let duplicate = "results = Parallel(n_jobs=-1)(delayed(abs)(x) for x in range(9))\n";
    fs::write(&train, format!("{text}{duplicate}")).unwrap();
    let (code, findings) = concise(dir.path(), &["--baseline", BASELINE]);
    assert_eq!(code, 1);
    assert_eq!(
        findings,
        ["src/train.py:13:20: CAP101 `Parallel(n_jobs=-1)` asks for every CPU of the node, not the pod's CPU limit"]
    );

    // From a subdirectory, with the baseline named relative to it, the same.
    let (_, findings) = concise(&dir.path().join("src"), &["--baseline", "../capslint-baseline.json", "."]);
    assert_eq!(
        findings,
        ["train.py:13:20: CAP101 `Parallel(n_jobs=-1)` asks for every CPU of the node, not the pod's CPU limit"]
    );
}

#[test]
fn a_fixed_finding_leaves_a_stale_entry_reported_on_the_baseline() {
    let dir = repository();
    assert_eq!(run(check(dir.path()).args(["--write-baseline", BASELINE])).0, 0);
    let train = dir.path().join("src/train.py");
    fs::write(&train, TRAIN.replace("lgb.LGBMClassifier()", "lgb.LGBMClassifier(n_jobs=1)")).unwrap();

    let (code, findings) = concise(dir.path(), &["--baseline", BASELINE]);
    assert_eq!(code, 1);
    assert_eq!(findings.len(), 1, "{findings:?}");
    let text = fs::read_to_string(dir.path().join(BASELINE)).unwrap();
    let entry_line = text.lines().position(|line| line.contains("\"path\": \"src/train.py\"")).unwrap();
    // The stale entry is the CAP102 one: find its fingerprint line.
    let baseline: Value = serde_json::from_str(&text).unwrap();
    let stale = baseline["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["path"] == "src/train.py" && entry["code"] == "CAP102")
        .unwrap();
    let fingerprint = stale["fingerprint"].as_str().unwrap();
    let row = text.lines().position(|line| line.contains(fingerprint)).unwrap() + 1;
    let column = text.lines().nth(row - 1).unwrap().find(fingerprint).unwrap() + 1;
    assert!(row > entry_line);
    assert_eq!(
        findings[0],
        format!("{BASELINE}:{row}:{column}: CAP002 baseline entry for `CAP102` in `src/train.py` matches no finding")
    );

    // The full report shows the entry in the JSON file; CAP002 is a warning, so the exit code is 1.
    let (_, stdout, _) = run(check(dir.path()).args(["--baseline", BASELINE]));
    assert!(stdout.contains(&format!("╭─[{BASELINE}:{row}:{column}]")), "{stdout}");
    assert!(stdout.contains("stale entry"));

    // Checking another file alone does not call its entries stale, nor does a run without CAP102.
    let (code, findings) = concise(dir.path(), &["--baseline", BASELINE, "legacy"]);
    assert_eq!((code, findings.len()), (0, 0), "{findings:?}");
    let (code, findings) = concise(dir.path(), &["--baseline", BASELINE, "--ignore", "CAP102"]);
    assert_eq!((code, findings.len()), (0, 0), "{findings:?}");
    let (code, findings) = concise(dir.path(), &["--baseline", BASELINE, "--ignore", "CAP002"]);
    assert_eq!((code, findings.len()), (0, 0), "{findings:?}");

    // Rewriting the baseline drops the entry.
    assert_eq!(run(check(dir.path()).args(["--write-baseline", BASELINE])).0, 0);
    assert_eq!(concise(dir.path(), &["--baseline", BASELINE]).0, 0);
}

#[test]
fn each_entry_absorbs_one_finding() {
    let line = "results = Parallel(n_jobs=-1)(delayed(abs)(x) for x in range(9))\n";
    let header = "from joblib import Parallel, delayed\n";
    let dir = project(&[("jobs.py", &format!("{header}{line}{line}"))]);
    assert_eq!(run(check(dir.path()).args(["--write-baseline", BASELINE])).0, 0);
    assert_eq!(concise(dir.path(), &["--baseline", BASELINE]).1.len(), 0);
    write(dir.path(), "jobs.py", &format!("{header}{line}{line}{line}"));
    let (code, findings) = concise(dir.path(), &["--baseline", BASELINE]);
    assert_eq!((code, findings.len()), (1, 1), "three identical findings, two recorded: {findings:?}");
    write(dir.path(), "jobs.py", &format!("{header}{line}"));
    let (_, findings) = concise(dir.path(), &["--baseline", BASELINE]);
    assert_eq!(findings.len(), 1, "one of the two entries is stale: {findings:?}");
    assert!(findings[0].contains("CAP002"));
}

#[test]
fn a_bad_baseline_is_a_usage_error() {
    let dir = project(&[("train.py", TRAIN)]);
    let (code, _, stderr) = run(check(dir.path()).args(["--baseline", "missing.json"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read baseline missing.json"), "{stderr}");

    write(dir.path(), BASELINE, "{\n  \"version\": 1,\n  \"findings\": [\n    {\"code\": \"CAP101\"}\n  ]\n}\n");
    let (code, _, stderr) = run(check(dir.path()).args(["--baseline", BASELINE]));
    assert_eq!(code, 2);
    assert!(stderr.contains("missing field `path`"), "{stderr}");
    assert!(stderr.contains(&format!("[{BASELINE}:4:")), "points into the file: {stderr}");

    write(dir.path(), BASELINE, "{\"version\": 7, \"findings\": []}\n");
    let (code, _, stderr) = run(check(dir.path()).args(["--baseline", BASELINE]));
    assert_eq!(code, 2);
    assert!(stderr.contains("version 7 is not supported"), "{stderr}");

    let (code, _, stderr) = run(check(dir.path()).args(["--baseline", BASELINE, "--write-baseline", "other.json"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

#[test]
fn findings_outside_the_baseline_reach_every_format() {
    let dir = project(&[("train.py", TRAIN)]);
    assert_eq!(run(check(dir.path()).args(["--write-baseline", "ci/baseline.json"])).0, 0);
    write(dir.path(), "new.py", CLEAN.replace("n_jobs=1", "n_jobs=-1").as_str());
    let (code, stdout, _) = run(check(dir.path()).args(["--baseline", "ci/baseline.json", "--output-format", "sarif"]));
    assert_eq!(code, 1);
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "new.py");
}
