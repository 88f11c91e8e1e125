//! Linting through the library: a file or a text, the fixtures' `# expect:` markers, reports rendered
//! without color, snapshot names.

use std::path::{Path, PathBuf};

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_linter::lint::{self, Input};
use capslint_linter::report::{self, OutputFormat, Style};
use capslint_workspace::discover::FileKind;
use capslint_workspace::settings::{ConfigSource, Overrides, Settings, SettingsResolver};

use super::{root, tests_dir};
/// Settings with every default rule, plus the given overrides.
pub fn settings(overrides: &Overrides) -> Settings {
    Settings::resolve(None, overrides, &root()).expect("valid settings")
}

/// Lints `text` as if it were the file `name`.
pub fn lint_text(name: &str, text: &str, settings: &Settings) -> Vec<Diagnostic> {
    let path = PathBuf::from(name);
    let kind = FileKind::of(&path).expect("a known file kind");
    let input = Input {
        path,
        display_name: name.to_string(),
        kind,
        contents: Some(text.as_bytes().to_vec()),
        settings: std::sync::Arc::new(settings.clone()),
    };
    lint::check_inputs(vec![input]).diagnostics
}

/// Lints a file of the repository, shown by its path relative to the root.
pub fn lint_file(relative: &Path, settings: &Settings) -> Vec<Diagnostic> {
    let text = std::fs::read_to_string(root().join(relative)).expect("fixture is readable");
    lint_text(&relative.to_string_lossy(), &text, settings)
}

/// Lints files of the repository together, as one run of `capslint check` from the root would: each file
/// with the settings of its nearest configuration file, manifests checked across files.
pub fn lint_together(relative: &[PathBuf]) -> Vec<Diagnostic> {
    let resolver = SettingsResolver::new(ConfigSource::Hierarchical, Overrides::default(), root()).expect("settings");
    let inputs = relative
        .iter()
        .map(|path| Input {
            path: path.clone(),
            display_name: path.to_string_lossy().into_owned(),
            kind: FileKind::of(path).expect("a known file kind"),
            contents: None,
            settings: resolver.for_path(path).expect("valid configuration"),
        })
        .collect();
    lint::check_inputs(inputs).diagnostics
}

/// The diagnostics of one run over `relative`, grouped by file, every file present (with no diagnostic
/// when it reports nothing); a diagnostic in a file that was not linted fails.
pub fn lint_together_by_file(relative: &[PathBuf]) -> std::collections::BTreeMap<PathBuf, Vec<Diagnostic>> {
    let mut grouped: std::collections::BTreeMap<PathBuf, Vec<Diagnostic>> =
        relative.iter().map(|path| (path.clone(), Vec::new())).collect();
    for diagnostic in lint_together(relative) {
        let path = PathBuf::from(diagnostic.file.display_name());
        grouped
            .get_mut(&path)
            .unwrap_or_else(|| panic!("a finding in an unexpected file {}", path.display()))
            .push(diagnostic);
    }
    grouped
}

/// `(row, code)` of every diagnostic.
pub fn rows_and_codes(diagnostics: &[Diagnostic]) -> Vec<(usize, String)> {
    let mut found: Vec<(usize, String)> =
        diagnostics.iter().map(|diagnostic| (diagnostic.start().row, diagnostic.rule().code().to_string())).collect();
    found.sort();
    found
}

/// The first finding reported twice (the same rule, span and message), as `row:column CODE message`:
/// comparing `(row, code)` pairs with the markers would let it through whenever the markers are
/// de-duplicated too.
pub fn reported_twice(diagnostics: &[Diagnostic]) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    diagnostics.iter().find_map(|diagnostic| {
        let finding = &diagnostic.finding;
        let key = (diagnostic.rule().code(), finding.range, finding.message.as_str());
        (!seen.insert(key)).then(|| {
            let start = diagnostic.start();
            format!("{}:{} {} {}", start.row, start.column, key.0, key.2)
        })
    })
}

/// `(row, code)` of every `# expect: CODE[, CODE]` marker.
pub fn expectations(text: &str) -> Vec<(usize, String)> {
    let mut expected = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if let Some(position) = line.find("# expect:") {
            for code in line[position + "# expect:".len()..].split(',') {
                let code = code.split_whitespace().next().unwrap_or_default();
                if !code.is_empty() {
                    expected.push((index + 1, code.to_string()));
                }
            }
        }
    }
    expected.sort();
    expected
}

/// Whether the fixture at `relative` (to the root) has `# expect:` markers, that is findings to snapshot.
pub fn has_expect_markers(relative: &Path) -> bool {
    !expectations(&std::fs::read_to_string(root().join(relative)).expect("fixture is readable")).is_empty()
}

/// `text` with every `# expect:` marker blanked out (same length, so spans do not move): the markers name
/// rule codes, which would let every fixture through the prefilter (it looks for `# noqa: CAPxxx`).
pub fn without_markers(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| match line.find("# expect:") {
            Some(position) => {
                let body = line.trim_end_matches(['\r', '\n']);
                format!("{}{}{}", &line[..position], " ".repeat(body.len() - position), &line[body.len()..])
            }
            None => line.to_string(),
        })
        .collect()
}

/// The full (graphical) report without color.
pub fn render_full(diagnostics: &[Diagnostic]) -> String {
    report::render(OutputFormat::Full, diagnostics, Style::PLAIN)
}

/// The JSON report.
pub fn render_json(diagnostics: &[Diagnostic]) -> String {
    report::render(OutputFormat::Json, diagnostics, Style::PLAIN)
}

/// Every file with the given extension under `dir` (relative to the root), sorted.
pub fn files_under(dir: &str, extensions: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walk(&root().join(dir))
        .into_iter()
        .filter(|path| path.extension().and_then(|ext| ext.to_str()).is_some_and(|ext| extensions.contains(&ext)))
        .map(|path| path.strip_prefix(root()).expect("under root").to_path_buf())
        .collect();
    files.sort();
    files
}

/// Every file under `dir`, at any depth, in directory order.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("fixture dir").flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}

/// The insta snapshot name of a fixture's report of one `kind` (`full`, `json`): its path relative to the
/// root with the separators spelled `__`, then the kind.
pub fn snapshot_name(path: &Path, kind: &str) -> String {
    format!("{}__{kind}", path.to_string_lossy().replace(['/', '\\'], "__"))
}

/// Asserts that a fixture without `# expect:` markers reports nothing: no diagnostic, an empty full
/// report and an empty JSON array (what an empty snapshot of either report would have stood for).
pub fn assert_reports_nothing(path: &Path, diagnostics: &[Diagnostic]) {
    assert!(
        diagnostics.is_empty(),
        "{} has no `# expect:` marker but {} findings:\n{}",
        path.display(),
        diagnostics.len(),
        render_full(diagnostics)
    );
    assert_eq!(render_full(diagnostics), "", "{}: the full report of no finding", path.display());
    assert_eq!(render_json(diagnostics), "[]\n", "{}: the JSON report of no finding", path.display());
}

/// Asserts that the snapshot files of the test module `module` (its `module_path!()`) are exactly the
/// full and JSON reports of `with_findings`, and that none of them is empty: a fixture that reports
/// nothing is checked by [`assert_reports_nothing`], and a snapshot no test reads any more fails here.
pub fn assert_snapshot_files(module: &str, with_findings: &[PathBuf]) {
    let prefix = format!("{}__", module.replace("::", "__"));
    let mut expected: Vec<String> = with_findings
        .iter()
        .flat_map(|path| ["full", "json"].map(|kind| format!("{prefix}{}.snap", snapshot_name(path, kind))))
        .collect();
    expected.sort();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(tests_dir().join("it/snapshots")).expect("the snapshot directory") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
        if !name.starts_with(&prefix) || !name.ends_with(".snap") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a readable snapshot");
        // The body follows the second `---` line of the header.
        let body = text.splitn(3, "---\n").nth(2).unwrap_or_default().trim();
        assert!(
            !body.is_empty() && body != "[]",
            "{name} is an empty snapshot: assert that nothing is reported instead"
        );
        found.push(name);
    }
    found.sort();
    assert_eq!(found, expected, "the snapshot files of {module} are not the reports of its fixtures with findings");
}
