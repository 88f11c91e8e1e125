//! Every manifest fixture, linted together as one run (ConfigMaps, Airflow DAGs and VRAM budgets cross
//! files): the findings of each file must be exactly its `# expect:` markers, the `*_ok` files produce
//! nothing, and the full report and the JSON of every file are snapshotted.

use std::collections::BTreeMap;
use std::path::PathBuf;

use capslint_diagnostics::diagnostic::Diagnostic;

use crate::support::*;

fn fixtures() -> Vec<PathBuf> {
    let mut files = files_under("fixtures/k8s", &["yaml", "yml"]);
    files.extend(files_under("fixtures/airflow", &["yaml", "yml", "py"]));
    files
}

/// The diagnostics of the whole run, by file.
fn by_file() -> BTreeMap<PathBuf, Vec<Diagnostic>> {
    lint_together_by_file(&fixtures())
}

#[test]
fn findings_match_the_expect_markers() {
    let grouped = by_file();
    assert!(grouped.len() >= 30, "expected fixtures per rule and per kind, found {}", grouped.len());
    let mut failures = Vec::new();
    for (path, diagnostics) in &grouped {
        // The markers cover findings by `(line, code)`, so a finding reported twice must fail here.
        if let Some(duplicate) = reported_twice(diagnostics) {
            failures.push(format!("{}: reported twice: {duplicate}", path.display()));
        }
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        let mut expected = expectations(&text);
        expected.dedup();
        let mut found = rows_and_codes(diagnostics);
        found.dedup();
        if expected != found {
            failures.push(format!("{}:\n  expected {expected:?}\n  found    {found:?}", path.display()));
        }
    }
    assert!(failures.is_empty(), "fixtures disagree with their markers:\n{}", failures.join("\n"));
}

#[test]
fn clean_fixtures_produce_nothing() {
    for (path, diagnostics) in by_file() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if stem.ends_with("_ok") {
            assert!(diagnostics.is_empty(), "{} must be clean:\n{}", path.display(), render_full(&diagnostics));
        }
    }
}

#[test]
fn every_rule_has_a_firing_fixture() {
    let grouped = by_file();
    let fired: std::collections::BTreeSet<&str> =
        grouped.values().flatten().map(|diagnostic| diagnostic.rule().code()).collect();
    for code in [
        "CAP001", "CAP002", "CAP201", "CAP202", "CAP203", "CAP204", "CAP205", "CAP206", "CAP207", "CAP208", "CAP209",
        "CAP210",
    ] {
        assert!(fired.contains(code), "no manifest fixture fires {code}");
    }
}

#[test]
fn full_and_json_reports_are_stable() {
    for (path, diagnostics) in by_file() {
        assert_reports!(&path, &diagnostics, has_expect_markers(&path));
    }
}

#[test]
fn every_snapshot_is_the_report_of_a_fixture_with_findings() {
    let with_findings: Vec<PathBuf> = fixtures().into_iter().filter(|path| has_expect_markers(path)).collect();
    assert_snapshot_files(module_path!(), &with_findings);
}
