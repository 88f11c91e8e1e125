//! GitLab Code Quality: a JSON array of issues in the subset of the Code Climate format that GitLab reads
//! (`description`, `check_name`, `fingerprint`, `severity`, `location.path`, `location.positions`), so
//! findings appear in the merge request widget and the diff.
//!
//! GitLab shows only the first issue of a fingerprint, so fingerprints are unique per finding; paths are
//! relative to `$CI_PROJECT_DIR`. In a notebook, positions are in its JSON (the line of the source string)
//! and the description names the cell and the line within it.

use std::collections::HashSet;

use serde::Serialize;

use super::ReportContext;
use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fingerprint;
use capslint_diagnostics::registry::Severity;
use capslint_diagnostics::source::Location;
use capslint_workspace::paths::project_path;

#[derive(Serialize)]
struct Issue {
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    check_name: &'static str,
    categories: [&'static str; 1],
    fingerprint: String,
    severity: &'static str,
    location: IssueLocation,
}

#[derive(Serialize)]
struct IssueLocation {
    path: String,
    positions: Positions,
}

#[derive(Serialize)]
struct Positions {
    begin: Position,
    end: Position,
}

#[derive(Serialize)]
struct Position {
    line: usize,
    column: usize,
}

impl From<Location> for Position {
    fn from(location: Location) -> Self {
        Position { line: location.row, column: location.column }
    }
}

/// Code Quality severities: `major` for errors, `minor` for warnings.
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "major",
        Severity::Warning => "minor",
    }
}

/// Renders the diagnostics as a Code Quality report (a pretty-printed JSON array).
pub fn render(diagnostics: &[Diagnostic], context: &ReportContext) -> String {
    let root = context.gitlab_project_dir.as_deref();
    let path_of = |diagnostic: &Diagnostic| project_path(&diagnostic.file, &context.cwd, root);
    let fingerprints = fingerprint::fingerprints(diagnostics, path_of);
    let mut used = HashSet::new();
    let issues: Vec<Issue> = diagnostics
        .iter()
        .zip(fingerprints)
        .map(|(diagnostic, fingerprint)| {
            // Identities are unique by construction; a hash collision is re-salted so GitLab shows both.
            let mut unique = fingerprint.unique();
            let mut salt = 0u32;
            while !used.insert(unique.clone()) {
                salt += 1;
                unique = fingerprint::Fingerprint { occurrence: fingerprint.occurrence ^ (salt << 16), ..fingerprint }
                    .unique();
            }
            let rule = diagnostic.rule();
            Issue {
                kind: "issue",
                description: format!(
                    "{}: {}{}",
                    rule.code(),
                    super::cell_prefix(&diagnostic.file, diagnostic.finding.range.start()),
                    diagnostic.finding.message
                ),
                check_name: rule.code(),
                categories: ["Performance"],
                fingerprint: unique,
                severity: severity(diagnostic.severity),
                location: IssueLocation {
                    path: path_of(diagnostic),
                    positions: Positions { begin: diagnostic.file_start().into(), end: diagnostic.file_end().into() },
                },
            }
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&issues).expect("issues serialize");
    out.push('\n');
    out
}
