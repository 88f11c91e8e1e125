//! SARIF 2.1.0 in the subset GitHub code scanning reads: one run whose driver lists the whole rule
//! catalogue (descriptions, the rule page as help, default level), and one result per finding with its
//! rule, level, message, exact region and a stable fingerprint. A finding in a file with syntax errors
//! (on a statement the parser recovered cleanly) has `inFileWithSyntaxErrors: true` in its property bag.
//!
//! Columns count Unicode code points (`columnKind: unicodeCodePoints`), 1-based, `endColumn` exclusive.
//! Paths are URIs relative to the repository root (`$GITHUB_WORKSPACE`, else the working directory) under
//! the base id `%SRCROOT%`; a file outside that root is an absolute `file://` URI without a base id.
//!
//! In a notebook, regions are in its JSON: the line of the source string that holds the code and the
//! columns of the code as written there (escapes count as written), and the message starts with
//! `cell N, line R: `, the place as Jupyter shows it.

use std::path::Path;

use serde::Serialize;

use super::ReportContext;
use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fingerprint;
use capslint_diagnostics::registry::{Family, Rule, Severity};
use capslint_diagnostics::source::{Location, SourceFile};
use capslint_workspace::paths::{absolute, relative_to, slashed};

/// The schema of the version we write.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The base id of every relative artifact URI.
const SRCROOT: &str = "%SRCROOT%";
/// GitHub truncates longer descriptions.
const MAX_DESCRIPTION: usize = 1024;

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    original_uri_base_ids: serde_json::Value,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    information_uri: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    rules: Vec<ReportingDescriptor>,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportingDescriptor {
    id: &'static str,
    name: &'static str,
    short_description: Text,
    full_description: Text,
    help: Help,
    help_uri: String,
    default_configuration: DefaultConfiguration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Help {
    text: &'static str,
    markdown: &'static str,
}

#[derive(Serialize)]
struct DefaultConfiguration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<&'static str>,
    precision: &'static str,
    #[serde(rename = "problem.severity")]
    problem_severity: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: [SarifLocation<'a>; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<RelatedLocation<'a>>,
    partial_fingerprints: PartialFingerprints,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<SarifFix<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<ResultProperties>,
}

/// The property bag of a result, written only when it has something to say.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties {
    /// Found in a file with syntax errors, on a statement the parser recovered cleanly.
    in_file_with_syntax_errors: bool,
}

/// A fix as SARIF writes it: one artifact change of replacements, with ruff's applicability in the
/// property bag.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifFix<'a> {
    description: Text,
    artifact_changes: [ArtifactChange<'a>; 1],
    properties: FixProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange<'a> {
    artifact_location: ArtifactLocation<'a>,
    replacements: Vec<Replacement>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement {
    deleted_region: Region,
    inserted_content: Text,
}

#[derive(Serialize)]
struct FixProperties {
    applicability: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifLocation<'a> {
    physical_location: PhysicalLocation<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RelatedLocation<'a> {
    id: usize,
    physical_location: PhysicalLocation<'a>,
    message: Text,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation<'a> {
    artifact_location: ArtifactLocation<'a>,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation<'a> {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

impl Region {
    fn new(start: Location, end: Location) -> Self {
        Region { start_line: start.row, start_column: start.column, end_line: end.row, end_column: end.column }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PartialFingerprints {
    primary_location_line_hash: String,
}

/// The SARIF level of a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// Percent-encodes a path for use as a URI reference: everything but unreserved characters and `/`.
fn encode_uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// An absolute directory as a `file://` URI that ends with `/`, as `originalUriBaseIds` requires.
fn directory_uri(directory: &Path) -> String {
    let slashed = slashed(directory);
    if slashed.is_empty() { "file:///".to_string() } else { format!("file:///{}/", encode_uri_path(&slashed)) }
}

/// Where a file is: relative to the root under `%SRCROOT%`, or an absolute `file://` URI.
fn artifact_location<'a>(file: &SourceFile, context: &ReportContext, root: &Path) -> ArtifactLocation<'a> {
    match relative_to(file, &context.cwd, root) {
        Some(relative) => ArtifactLocation { uri: encode_uri_path(&relative), uri_base_id: Some(SRCROOT) },
        None => {
            let absolute = slashed(&absolute(file.path(), &context.cwd));
            ArtifactLocation { uri: format!("file:///{}", encode_uri_path(&absolute)), uri_base_id: None }
        }
    }
}

/// The opening of a page's `## What it does` section on one line, within GitHub's limit: its first
/// paragraph, and the next block too when the paragraph ends with a colon (it introduces a list).
fn what_it_does(page: &str) -> String {
    let mut lines = page.lines().skip_while(|line| line.trim() != "## What it does").skip(1).peekable();
    let mut text = String::new();
    loop {
        while lines.next_if(|line| line.trim().is_empty()).is_some() {}
        let block: Vec<&str> = lines.by_ref().take_while(|line| !line.trim().is_empty()).map(str::trim).collect();
        if block.is_empty() || block[0].starts_with('#') {
            break;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&block.join(" "));
        if !text.ends_with(':') {
            break;
        }
    }
    truncate(&text, MAX_DESCRIPTION)
}

/// `text` cut to at most `max` characters, ending with an ellipsis when cut.
fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

fn tags(rule: Rule) -> Vec<&'static str> {
    match rule.family() {
        Family::Meta => vec!["capslint"],
        Family::Python => vec!["python", "performance", "cpu"],
        Family::Manifest => vec!["kubernetes", "performance", "cpu"],
        Family::Config => vec!["configuration", "performance", "cpu"],
    }
}

/// The finding's fix as SARIF `fixes` (none in a notebook, whose regions point into its JSON).
fn fixes<'a>(diagnostic: &Diagnostic, context: &ReportContext, root: &Path) -> Vec<SarifFix<'a>> {
    let file = &diagnostic.file;
    let Some(fix) = diagnostic.finding.fix.as_ref().filter(|fix| !fix.edits.is_empty() && file.cells().is_none())
    else {
        return Vec::new();
    };
    let replacements = fix
        .edits
        .iter()
        .map(|edit| Replacement {
            deleted_region: Region::new(file.location(edit.range.start()), file.location(edit.range.end())),
            inserted_content: Text { text: edit.content.clone() },
        })
        .collect();
    vec![SarifFix {
        description: Text { text: fix.message.clone() },
        artifact_changes: [ArtifactChange { artifact_location: artifact_location(file, context, root), replacements }],
        properties: FixProperties { applicability: fix.applicability.as_str() },
    }]
}

fn descriptor(rule: Rule) -> ReportingDescriptor {
    let page = rule.documentation();
    ReportingDescriptor {
        id: rule.code(),
        name: rule.name(),
        short_description: Text { text: truncate(rule.summary(), MAX_DESCRIPTION) },
        full_description: Text { text: what_it_does(page) },
        help: Help { text: page, markdown: page },
        help_uri: rule.url(),
        default_configuration: DefaultConfiguration { level: level(rule.default_severity()) },
        properties: RuleProperties {
            tags: tags(rule),
            precision: "high",
            problem_severity: level(rule.default_severity()),
        },
    }
}

fn result<'a>(
    diagnostic: &Diagnostic,
    fingerprint: fingerprint::Fingerprint,
    context: &ReportContext,
    root: &Path,
) -> SarifResult<'a> {
    let rule = diagnostic.rule();
    let finding = &diagnostic.finding;
    let file = &diagnostic.file;
    let mut message = super::cell_prefix(file, finding.range.start());
    message.push_str(&finding.message);
    if let Some(help) = &finding.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let secondary = finding.secondary.iter().map(|label| (file, label.range, &label.text));
    let related = finding.related.iter().map(|related| (&related.file, related.range, &related.text));
    let related_locations = secondary
        .chain(related)
        .enumerate()
        .map(|(index, (file, range, text))| RelatedLocation {
            id: index + 1,
            physical_location: PhysicalLocation {
                artifact_location: artifact_location(file, context, root),
                region: Region::new(file.file_location(range.start()), file.file_end_location(range.end())),
            },
            message: Text { text: format!("{}{text}", super::cell_prefix(file, range.start())) },
        })
        .collect();
    SarifResult {
        rule_id: rule.code(),
        rule_index: Rule::ALL.iter().position(|candidate| *candidate == rule).expect("every rule is in ALL"),
        level: level(diagnostic.severity),
        message: Text { text: message },
        locations: [SarifLocation {
            physical_location: PhysicalLocation {
                artifact_location: artifact_location(file, context, root),
                region: Region::new(diagnostic.file_start(), diagnostic.file_end()),
            },
        }],
        related_locations,
        fixes: fixes(diagnostic, context, root),
        partial_fingerprints: PartialFingerprints { primary_location_line_hash: fingerprint.line_hash() },
        properties: finding.in_file_with_syntax_errors.then_some(ResultProperties { in_file_with_syntax_errors: true }),
    }
}

/// Renders the diagnostics as a pretty-printed SARIF 2.1.0 log.
pub fn render(diagnostics: &[Diagnostic], context: &ReportContext) -> String {
    let root = absolute(context.github_workspace.as_deref().unwrap_or(&context.cwd), &context.cwd);
    let path_of = |diagnostic: &Diagnostic| {
        relative_to(&diagnostic.file, &context.cwd, &root).unwrap_or_else(|| diagnostic.file.display_name().into())
    };
    let fingerprints = fingerprint::fingerprints(diagnostics, path_of);
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "capslint",
                    information_uri: env!("CARGO_PKG_REPOSITORY"),
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    rules: Rule::ALL.iter().copied().map(descriptor).collect(),
                },
            },
            original_uri_base_ids: serde_json::json!({ SRCROOT: { "uri": directory_uri(&root) } }),
            column_kind: "unicodeCodePoints",
            results: diagnostics
                .iter()
                .zip(fingerprints)
                .map(|(diagnostic, fingerprint)| result(diagnostic, fingerprint, context, &root))
                .collect(),
        }],
    };
    let mut out = serde_json::to_string_pretty(&log).expect("SARIF serializes");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(encode_uri_path("src/my file#1.py"), "src/my%20file%231.py");
        assert_eq!(encode_uri_path("a:b/ü.py"), "a%3Ab/%C3%BC.py");
        assert_eq!(directory_uri(Path::new("/work/my repo")), "file:///work/my%20repo/");
    }

    #[test]
    fn full_description_is_the_first_paragraph_within_the_limit() {
        for rule in Rule::ALL {
            let text = what_it_does(rule.documentation());
            assert!(!text.is_empty(), "{} has no `What it does` paragraph", rule.code());
            assert!(text.chars().count() <= MAX_DESCRIPTION);
            assert!(!text.contains('\n'));
        }
        assert_eq!(truncate("abcdef", 4), "abc…");
    }
}
