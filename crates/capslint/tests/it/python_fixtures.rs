//! Every Python fixture: the findings must be exactly the `# expect:` markers (one code listed per
//! finding, and no finding reported twice), the full report and the JSON are snapshotted, and the
//! prefilter must not change anything.

use std::path::PathBuf;

use capslint_workspace::settings::Overrides;

use crate::support::*;

#[test]
fn findings_match_the_expect_markers() {
    let settings = settings(&Overrides::default());
    let fixtures = files_under("fixtures/python", &["py"]);
    assert!(fixtures.len() >= 17, "expected a fixture per rule and its clean twin, found {}", fixtures.len());
    let mut failures = Vec::new();
    for path in &fixtures {
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        let diagnostics = lint_file(path, &settings);
        if let Some(duplicate) = reported_twice(&diagnostics) {
            failures.push(format!("{}: reported twice: {duplicate}", path.display()));
        }
        // Neither side is de-duplicated: a code listed once on a line stands for exactly one finding.
        let expected = expectations(&text);
        let found = rows_and_codes(&diagnostics);
        if expected != found {
            failures.push(format!("{}:\n  expected {expected:?}\n  found    {found:?}", path.display()));
        }
    }
    assert!(failures.is_empty(), "fixtures disagree with their markers:\n{}", failures.join("\n"));
}

#[test]
fn clean_fixtures_produce_nothing() {
    let settings = settings(&Overrides::default());
    for path in files_under("fixtures/python", &["py"]) {
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with("_ok.py") || name.starts_with("clean") {
            let diagnostics = lint_file(&path, &settings);
            assert!(diagnostics.is_empty(), "{} must be clean:\n{}", path.display(), render_full(&diagnostics));
        }
    }
}

#[test]
fn full_and_json_reports_are_stable() {
    let settings = settings(&Overrides::default());
    for path in files_under("fixtures/python", &["py"]) {
        let diagnostics = lint_file(&path, &settings);
        assert_reports!(&path, &diagnostics, has_expect_markers(&path));
    }
}

#[test]
fn every_snapshot_is_the_report_of_a_fixture_with_findings() {
    let with_findings: Vec<PathBuf> =
        files_under("fixtures/python", &["py"]).into_iter().filter(|path| has_expect_markers(path)).collect();
    assert_snapshot_files(module_path!(), &with_findings);
}

#[test]
fn the_prefilter_is_exact() {
    let with = settings(&Overrides::default());
    let without = settings(&Overrides { no_prefilter: true, ..Overrides::default() });
    for path in files_under("fixtures", &["py", "yaml", "yml"]) {
        let text = without_markers(&std::fs::read_to_string(root().join(&path)).unwrap());
        let name = path.to_string_lossy();
        let filtered = render_json(&lint_text(&name, &text, &with));
        let unfiltered = render_json(&lint_text(&name, &text, &without));
        assert_eq!(filtered, unfiltered, "the prefilter changed the findings of {}", path.display());
    }
}

#[test]
fn strict_mode_reports_unknown_provenance() {
    let text = "import lightgbm as lgb\nfrom joblib import Parallel\n\ndef fit(X, y, n_jobs, **kwargs):\n    \
                Parallel(n_jobs=n_jobs)\n    return lgb.LGBMClassifier(**kwargs).fit(X, y)\n";
    let lenient = rows_and_codes(&lint_text("strict.py", text, &settings(&Overrides::default())));
    assert!(lenient.is_empty(), "unknown provenance must be silent by default: {lenient:?}");
    let strict =
        rows_and_codes(&lint_text("strict.py", text, &settings(&Overrides { strict: true, ..Overrides::default() })));
    assert_eq!(strict, vec![(5, "CAP103".to_string()), (6, "CAP102".to_string())]);
}

#[test]
fn strict_mode_keeps_the_function_s_own_finding_and_the_call_s() {
    // The body's unknown count is strict mode's; the call's all-cores value is reported at the call in both
    // modes; a call passing a cap adds nothing in either.
    let text = "import os\nfrom sklearn.ensemble import RandomForestClassifier\n\nCAP = int(os.environ[\"OMP_NUM_THREADS\"])\n\n\
                def train(X, y, jobs):\n    return RandomForestClassifier(n_jobs=jobs).fit(X, y)\n\n\
                train(1, 2, -1)\ntrain(1, 2, CAP)\n";
    let lenient = rows_and_codes(&lint_text("calls.py", text, &settings(&Overrides::default())));
    assert_eq!(lenient, vec![(9, "CAP101".to_string())]);
    let strict =
        rows_and_codes(&lint_text("calls.py", text, &settings(&Overrides { strict: true, ..Overrides::default() })));
    assert_eq!(strict, vec![(7, "CAP101".to_string()), (9, "CAP101".to_string())]);
}

#[test]
fn strict_mode_names_unknown_pod_operator_arguments_as_unknown() {
    let text = "from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator\n\n\
                def task(resources, env):\n    \
                return KubernetesPodOperator(task_id=\"t\", container_resources=resources, env_vars=env)\n";
    let lenient = rows_and_codes(&lint_text("kpo.py", text, &settings(&Overrides::default())));
    assert!(lenient.is_empty(), "unknown arguments must be silent by default: {lenient:?}");
    let strict = lint_text("kpo.py", text, &settings(&Overrides { strict: true, ..Overrides::default() }));
    let messages: Vec<&str> = strict.iter().map(|diagnostic| diagnostic.finding.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`KubernetesPodOperator` `t` takes its resources from a value capslint cannot see (strict mode): without \
             a CPU limit there, its pod gets no CFS quota",
            "`KubernetesPodOperator` `t` takes its environment from a value capslint cannot see (strict mode): \
             without a Downward API variable for `limits.cpu` there, the pod cannot size its thread caps from its \
             limit",
        ]
    );
}
