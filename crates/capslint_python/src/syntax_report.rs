//! What a Python module with syntax errors reports besides its findings: one CAP001 (as Python 2, at
//! its first Python 2 construct, when it has one; else at its first error), and the marking of the
//! findings of the statements the parser recovered ([`super::recovery`]).

use ruff_python_ast::ModModule;
use ruff_python_parser::Parsed;

use super::{PythonOutcome, python2};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;
use capslint_diagnostics::selection::RuleSet;

/// The CAP001 finding of a module with syntax errors: once, as Python 2, at the first Python 2 construct
/// when it has one, else at its first error; `None` when it has none.
pub fn finding(text: &str, parsed: &Parsed<ModModule>) -> Option<Finding> {
    let error = parsed.errors().first()?;
    if let Some(construct) = python2::first_construct(text, parsed.errors(), parsed.unsupported_syntax_errors()) {
        return Some(
            Finding::new(
                Rule::SyntaxError,
                construct.range,
                format!("this file looks like Python 2 ({}), which Python 3 cannot parse", construct.what),
            )
            .label("Python 2 syntax")
            .help("port the file to Python 3: until then, the statements that do not parse are not checked"),
        );
    }
    Some(
        Finding::new(Rule::SyntaxError, error.location, format!("Python syntax error: {}", error.error))
            .label("cannot parse this")
            .help("fix the syntax: the statements it breaks are not checked"),
    )
}

/// What becomes of the fixes of findings in a file with syntax errors.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Fixes {
    /// Kept: the code they edit parses on its own (a notebook's other cells).
    Kept,
    /// Dropped: a fix is applied only when the fixed file parses, which it never would.
    Dropped,
}

/// The outcome of a file with syntax errors: its findings marked as found there, and its CAP001
/// findings when enabled.
pub fn with_syntax_errors(
    mut outcome: PythonOutcome,
    syntax_findings: impl IntoIterator<Item = Finding>,
    rules: RuleSet,
    fixes: Fixes,
) -> PythonOutcome {
    for finding in &mut outcome.findings {
        if finding.rule != Rule::AnalysisBudgetExceeded {
            finding.in_file_with_syntax_errors = true;
            if fixes == Fixes::Dropped {
                finding.fix = None;
            }
        }
    }
    if rules.contains(Rule::SyntaxError) {
        outcome.findings.extend(syntax_findings);
    }
    outcome
}
