//! Model configuration files (CAP109): every fixture of `fixtures/config/` linted together as one run,
//! its findings matched against its `# expect:` markers (JSON, which has no comments: the table below),
//! the full and JSON reports snapshotted; the prefilter is exact; file selection, data files, broken and
//! hostile input through the binary; and the Python and manifest rules are unaffected by the new rule.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::*;
use assert_cmd::Command;
use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::registry::Rule;
use capslint_linter::lint::{Input, check_inputs};
use capslint_workspace::discover::FileKind;
use capslint_workspace::settings::Overrides;
use proptest::prelude::*;
use tempfile::TempDir;

/// The findings of the JSON fixtures: `(row, code)`.
const JSON_EXPECTED: &[(&str, &[(usize, &str)])] = &[
    ("fixtures/config/models/lightgbm.json", &[(9, "CAP109"), (17, "CAP109")]),
    ("fixtures/config/web/package.json", &[]),
    ("fixtures/config/web/tsconfig.json", &[]),
];

const EXTENSIONS: &[&str] = &["yaml", "yml", "json", "toml"];

/// Every fixture capslint reads (`pyproject.toml` is not one).
fn fixtures() -> Vec<PathBuf> {
    files_under("fixtures/config", EXTENSIONS).into_iter().filter(|path| FileKind::of(path).is_some()).collect()
}

/// The diagnostics of the whole run, by file.
fn by_file() -> BTreeMap<PathBuf, Vec<Diagnostic>> {
    lint_together_by_file(&fixtures())
}

fn expected(path: &Path, text: &str) -> Vec<(usize, String)> {
    if path.extension().is_some_and(|extension| extension == "json") {
        let (_, rows) = JSON_EXPECTED
            .iter()
            .find(|(name, _)| Path::new(name) == path)
            .unwrap_or_else(|| panic!("{} is missing from JSON_EXPECTED", path.display()));
        return rows.iter().map(|(row, code)| (*row, code.to_string())).collect();
    }
    expectations(text)
}

#[test]
fn findings_match_the_expectations() {
    let grouped = by_file();
    assert!(grouped.len() >= 11, "expected the configuration fixtures, found {}", grouped.len());
    let mut failures = Vec::new();
    for (path, diagnostics) in &grouped {
        let text = fs::read_to_string(root().join(path)).unwrap();
        let expected = expected(path, &text);
        let found = rows_and_codes(diagnostics);
        if expected != found {
            failures.push(format!("{}:\n  expected {expected:?}\n  found    {found:?}", path.display()));
        }
    }
    assert!(failures.is_empty(), "fixtures disagree with their expectations:\n{}", failures.join("\n"));
}

#[test]
fn look_alikes_produce_nothing() {
    for (path, diagnostics) in by_file() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if stem.ends_with("_ok") || name == "package.json" || name == "tsconfig.json" || name == "config.yaml" {
            assert!(diagnostics.is_empty(), "{} must be clean:\n{}", path.display(), render_full(&diagnostics));
        }
    }
}

#[test]
fn spans_cover_exactly_the_key_and_its_value() {
    let mut seen = 0;
    for diagnostics in by_file().values() {
        for diagnostic in diagnostics.iter().filter(|diagnostic| diagnostic.rule() == Rule::AllCoresInConfig) {
            let text = &diagnostic.file.text()[diagnostic.finding.range];
            let (key, value) = text.split_once([':', '=']).unwrap_or_else(|| panic!("no separator in `{text}`"));
            // A dotted TOML key (`cv.n_jobs`) is reported from its first segment.
            let key = key.trim_end().trim_matches('"');
            let last = key.rsplit('.').next().unwrap_or_default();
            assert!(
                last.bytes().all(|byte| byte.is_ascii_lowercase() || byte == b'_')
                    && (last.ends_with("n_jobs") || last.contains("thread")),
                "`{text}` does not start with a thread-count key"
            );
            assert!(
                value.trim_start().parse::<i64>().is_ok_and(|value| value <= 0),
                "`{text}` does not end with the value"
            );
            assert!(diagnostic.finding.message.contains(key), "{}", diagnostic.finding.message);
            seen += 1;
        }
    }
    assert_eq!(seen, 11);
}

/// Whether a fixture expects findings (its markers, or its row in [`JSON_EXPECTED`]).
fn expects_findings(path: &Path) -> bool {
    let text = fs::read_to_string(root().join(path)).expect("a readable fixture");
    !expected(path, &text).is_empty()
}

#[test]
fn full_and_json_reports_are_stable() {
    for (path, diagnostics) in by_file() {
        assert_reports!(&path, &diagnostics, expects_findings(&path));
    }
}

#[test]
fn every_snapshot_is_the_report_of_a_fixture_with_findings() {
    let with_findings: Vec<PathBuf> = fixtures().into_iter().filter(|path| expects_findings(path)).collect();
    assert_snapshot_files(module_path!(), &with_findings);
}

#[test]
fn the_prefilter_is_exact() {
    let with = settings(&Overrides::default());
    let without = settings(&Overrides { no_prefilter: true, ..Overrides::default() });
    for path in fixtures() {
        let text = without_markers(&fs::read_to_string(root().join(&path)).unwrap());
        let name = path.to_string_lossy();
        let filtered = render_json(&lint_text(&name, &text, &with));
        let unfiltered = render_json(&lint_text(&name, &text, &without));
        assert_eq!(filtered, unfiltered, "the prefilter changed the findings of {}", path.display());
    }
    // Keys the prefilter's words do not spell, written with escapes.
    for (name, text) in [
        ("escaped.json", "{\"n\\u005fjobs\": -1}\n"),
        ("escaped.yaml", "\"n\\x5fjobs\": -1\n? \"cv_n_\\\n  jobs\"\n: -2\n"),
        ("escaped.toml", "\"num\\u005fthreads\" = 0\n"),
        ("directive.yaml", "a: 1  # capslint: ignore[CAP109]\n"),
    ] {
        let filtered = rows_and_codes(&lint_text(name, text, &with));
        let unfiltered = rows_and_codes(&lint_text(name, text, &without));
        assert!(!filtered.is_empty(), "{name}: {text}");
        assert_eq!(filtered, unfiltered, "{name}");
    }
}

#[test]
fn python_and_manifest_rules_are_unaffected() {
    let with = settings(&Overrides::default());
    let without = settings(&Overrides { ignore: vec!["CAP109".into()], ..Overrides::default() });
    let files = files_under("fixtures", &["py", "yaml", "yml"]);
    let files: Vec<&PathBuf> = files.iter().filter(|path| !path.starts_with("fixtures/config")).collect();
    assert!(files.len() > 50, "{}", files.len());
    for path in files {
        let text = fs::read_to_string(root().join(path)).unwrap();
        let name = path.to_string_lossy();
        assert_eq!(
            render_json(&lint_text(&name, &text, &with)),
            render_json(&lint_text(&name, &text, &without)),
            "CAP109 changed the findings of {}",
            path.display()
        );
    }
}

#[test]
fn suppressions_in_yaml_and_toml() {
    let settings = settings(&Overrides::default());
    let yaml = "n_jobs: -1  # capslint: ignore[CAP109]\nnthread: 0  # capslint: ignore[CAP201]\nx: 1  # capslint: ignore[CAP109]\n";
    assert_eq!(
        rows_and_codes(&lint_text("params.yaml", yaml, &settings)),
        [(2, "CAP109".to_string()), (3, "CAP002".to_string())]
    );
    let toml = "n_jobs = -1  # capslint: ignore[all-cores-in-config]\ns = \"\"\"\n# capslint: ignore[CAP109]\n\"\"\"\n";
    assert!(lint_text("train.toml", toml, &settings).is_empty());
    // Ignoring CAP002 or CAP109 itself silences the unused suppression.
    let quiet = self::settings(&Overrides { ignore: vec!["CAP109".into()], ..Overrides::default() });
    assert!(lint_text("params.yaml", yaml, &quiet).is_empty());
}

fn capslint(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("capslint").expect("binary");
    command.current_dir(dir).env("NO_COLOR", "1").args(["check", "--isolated", "--output-format", "concise"]);
    command
}

fn project(files: &[(&str, &[u8])]) -> TempDir {
    let dir = TempDir::new().unwrap();
    for (name, bytes) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }
    dir
}

#[test]
fn file_selection_through_the_binary() {
    let dir = project(&[
        ("conf/model/rf.yaml", b"n_jobs: -1\n"),
        ("models/xgb.json", b"{\"nthread\": 0}\n"),
        ("train.toml", b"num_threads = -1\n"),
        ("pyproject.toml", b"[tool.other]\nn_jobs = -1\n"),
        ("capslint.toml", b"# n_jobs = -1 is never read here\n"),
        ("node_modules/pkg/config.json", b"{\"n_jobs\": -1}\n"),
        (".vscode/settings.json", b"{\"n_jobs\": -1}\n"),
        ("generated/params.json", b"{\"n_jobs\": -1}\n"),
        (".gitignore", b"generated/\n"),
        ("broken.json", b"{\"n_jobs\": -1,\n"),
        ("broken.toml", b"n_jobs = -1\nn_jobs = -2\n"),
        ("latin1.json", b"{\"name\": \"caf\xe9\", \"n_jobs\": -1}\n"),
        ("bom.json", "\u{feff}{\"n_jobs\": -1}\n".as_bytes()),
    ]);
    // A file above the size limit is skipped without being read (a sparse file).
    fs::File::create(dir.path().join("huge.json")).unwrap().set_len(65 << 20).unwrap();
    let output = capslint(dir.path()).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "");
    let findings: Vec<&str> = stdout.lines().filter(|line| line.contains(": CAP")).collect();
    assert_eq!(
        findings,
        [
            "bom.json:1:2: CAP109 `n_jobs: -1` asks for every CPU of the node, not the pod's CPU limit",
            "conf/model/rf.yaml:1:1: CAP109 `n_jobs: -1` asks for every CPU of the node, not the pod's CPU limit",
            "models/xgb.json:1:2: CAP109 `nthread: 0` asks for every CPU of the node, not the pod's CPU limit",
            "train.toml:1:1: CAP109 `num_threads = -1` asks for every CPU of the node, not the pod's CPU limit",
        ],
        "{stdout}"
    );
    // Named on the command line, a tool configuration is still not a model configuration.
    capslint(dir.path()).arg("pyproject.toml").assert().code(0);
    // Standard input is read as the file it is named after.
    capslint(dir.path())
        .args(["--stdin-filename", "params.json", "-"])
        .write_stdin("{\"train\": {\"n_jobs\": -1}}")
        .assert()
        .code(1)
        .stdout(predicates::str::contains("params.json:1:12: CAP109 `train.n_jobs: -1`"));
}

#[test]
fn hostile_configurations_are_answered_quickly() {
    let settings = settings(&Overrides::default());
    let wide: String = format!("[{}{{\"n_jobs\": -1}}]", "{\"thread\": 1, \"x\": [1, 2, 3]},".repeat(200_000));
    let cases: Vec<(&str, String, usize)> = vec![
        ("deep.json", format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000)), 0),
        ("deep_maps.json", format!("{}-1{}", "{\"n_jobs\":".repeat(100_000), "}".repeat(100_000)), 0),
        ("deep.toml", format!("n_jobs = {}-1{}\n", "[".repeat(100_000), "]".repeat(100_000)), 0),
        ("dotted.toml", format!("{}.n_jobs = -1\n", vec!["a"; 100_000].join(".")), 0),
        ("inline.toml", format!("a = {}1{}\n", "{nthread = 0, b = ".repeat(50_000), "}".repeat(50_000)), 0),
        ("deep.yaml", format!("{}n_jobs: -1\n", "- ".repeat(100_000)), 0),
        ("wide.json", wide, 1),
    ];
    for (name, text, findings) in cases {
        let started = Instant::now();
        let diagnostics = lint_text(name, &text, &settings);
        assert!(started.elapsed() < Duration::from_secs(10), "{name} took {:?}", started.elapsed());
        let codes: Vec<&str> = diagnostics.iter().map(|diagnostic| diagnostic.rule().code()).collect();
        assert!(codes.iter().all(|code| *code == "CAP109"), "{name}: {codes:?}");
        assert_eq!(codes.len(), findings, "{name}: {codes:?}");
    }
}

fn mutated(bytes: &[u8], cuts: &[(usize, usize, u8)]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    for (at, len, byte) in cuts {
        let start = at % bytes.len().max(1);
        let end = (start + len).min(bytes.len());
        bytes.splice(start..end, [*byte]);
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Cut and spliced JSON and TOML fixtures never make capslint panic, and every span lies on
    /// character boundaries. (YAML fixtures are mutated by `no_panic.rs`.)
    #[test]
    fn mutated_configurations_never_panic(
        index in any::<usize>(),
        cuts in proptest::collection::vec((any::<usize>(), 0usize..8, proptest::sample::select(b"{}[]\":,=-#\\\n0x\xc3\xa9".to_vec())), 1..8),
    ) {
        let fixtures: Vec<PathBuf> = fixtures().into_iter().filter(|path| {
            path.extension().is_some_and(|extension| extension == "json" || extension == "toml")
        }).collect();
        let path = &fixtures[index % fixtures.len()];
        let bytes = mutated(&fs::read(root().join(path)).unwrap(), &cuts);
        let settings = Arc::new(settings(&Overrides { select: Some(vec!["ALL".into()]), ..Overrides::default() }));
        let input = Input {
            path: path.clone(),
            display_name: path.display().to_string(),
            kind: FileKind::of(path).unwrap(),
            contents: Some(bytes),
            settings,
        };
        for diagnostic in check_inputs(vec![input]).diagnostics {
            prop_assert!(!diagnostic.finding.message.starts_with("internal error"), "{}", diagnostic.finding.message);
            let text = diagnostic.file.text();
            let range = diagnostic.finding.range;
            prop_assert!(text.get(usize::from(range.start())..usize::from(range.end())).is_some());
        }
    }
}
