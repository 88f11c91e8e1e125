//! `capslint rule CODE` prints a rule's documentation; `capslint rule --all` lists the catalogue. The pages
//! are the files in `rules/`, compiled into the binary, so the binary and the docs cannot drift.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::process::ExitCode;

use serde::Serialize;

use capslint_diagnostics::registry::Rule;

/// How `capslint rule` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RuleFormat {
    /// The page (rendered on a terminal, Markdown otherwise), or a table for `--all`.
    Text,
    /// JSON: one object, or an array for `--all`.
    Json,
}

/// Arguments of `capslint rule`.
#[derive(Debug, Clone, clap::Args)]
pub struct RuleArgs {
    /// The rule's code or name.
    #[arg(required_unless_present = "all")]
    pub rule: Option<String>,
    /// List every rule: code, name, severity, summary.
    #[arg(long, conflicts_with = "rule")]
    pub all: bool,
    /// How to print.
    #[arg(long, value_enum, default_value_t = RuleFormat::Text)]
    pub output_format: RuleFormat,
}

/// A rule as `--output-format json` prints it.
#[derive(Debug, Serialize)]
struct RuleInfo {
    code: &'static str,
    name: &'static str,
    severity: &'static str,
    summary: &'static str,
    url: String,
    enabled_by_default: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    explanation: Option<&'static str>,
}

impl RuleInfo {
    fn new(rule: Rule, with_page: bool) -> Self {
        RuleInfo {
            code: rule.code(),
            name: rule.name(),
            severity: rule.default_severity().as_str(),
            summary: rule.summary(),
            url: rule.url(),
            enabled_by_default: rule.enabled_by_default(),
            explanation: with_page.then(|| rule.documentation()),
        }
    }
}

/// The catalogue as a table: code, name, default severity, summary.
pub fn table() -> String {
    let mut out = String::new();
    for rule in Rule::ALL {
        let default = if rule.enabled_by_default() { "" } else { " (off by default)" };
        let _ = writeln!(
            out,
            "{}  {:<34} {:<8} {}{default}",
            rule.code(),
            rule.name(),
            rule.default_severity(),
            rule.summary()
        );
    }
    out
}

const BOLD: &str = "\x1b[1m";
const BOLD_UNDERLINE: &str = "\x1b[1;4m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// Styles inline Markdown: `**strong**` in bold, `` `code` `` in cyan (markers removed).
fn inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let strong = rest.find("**");
        let code = rest.find('`');
        let (start, marker, style) = match (strong, code) {
            (Some(s), Some(c)) if s < c => (s, "**", BOLD),
            (Some(s), None) => (s, "**", BOLD),
            (_, Some(c)) => (c, "`", CYAN),
            (None, None) => break,
        };
        let after = &rest[start + marker.len()..];
        let Some(end) = after.find(marker) else { break };
        out.push_str(&rest[..start]);
        out.push_str(style);
        out.push_str(&after[..end]);
        out.push_str(RESET);
        rest = &after[end + marker.len()..];
    }
    out.push_str(rest);
    out
}

/// Renders a rule page for a terminal: headings without their `#` (bold when `color`), code blocks
/// indented by four spaces without their fences, inline emphasis and code styled when `color`.
pub fn render_markdown(page: &str, color: bool) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            if line.is_empty() {
                out.push('\n');
            } else {
                let _ = writeln!(out, "    {line}");
            }
            continue;
        }
        let heading = line
            .strip_prefix("# ")
            .map(|text| (text, BOLD_UNDERLINE))
            .or_else(|| line.strip_prefix("## ").or_else(|| line.strip_prefix("### ")).map(|text| (text, BOLD)));
        match (heading, color) {
            (Some((text, style)), true) => {
                let _ = writeln!(out, "{style}{text}{RESET}");
            }
            (Some((text, _)), false) => {
                let _ = writeln!(out, "{text}");
            }
            (None, true) => {
                let _ = writeln!(out, "{}", inline(line));
            }
            (None, false) => {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    out
}

/// Runs `capslint rule`.
pub fn run(args: &RuleArgs) -> ExitCode {
    if args.all {
        match args.output_format {
            RuleFormat::Text => print!("{}", table()),
            RuleFormat::Json => {
                let rules: Vec<RuleInfo> = Rule::ALL.iter().map(|rule| RuleInfo::new(*rule, false)).collect();
                println!("{}", serde_json::to_string_pretty(&rules).expect("rules serialize"));
            }
        }
        return ExitCode::SUCCESS;
    }
    let name = args.rule.as_deref().unwrap_or_default();
    let Some(rule) = Rule::from_code_or_name(name) else {
        eprintln!("error: unknown rule `{name}`; run `capslint rule --all` for the list");
        return ExitCode::from(2);
    };
    match args.output_format {
        RuleFormat::Json => {
            println!("{}", serde_json::to_string_pretty(&RuleInfo::new(rule, true)).expect("rule serializes"));
        }
        RuleFormat::Text if std::io::stdout().is_terminal() => {
            let color = crate::color::enabled(crate::color::Stream::Stdout);
            print!("{}", render_markdown(rule.documentation(), color));
        }
        RuleFormat::Text => print!("{}", rule.documentation()),
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# CAP999: demo\n\n## Example\nUse **this** and `that`.\n```python\nx = 1\n\ny = 2\n```\n";

    #[test]
    fn renders_headings_and_code_blocks_for_a_terminal() {
        let plain = render_markdown(PAGE, false);
        assert_eq!(plain, "CAP999: demo\n\nExample\nUse **this** and `that`.\n    x = 1\n\n    y = 2\n");
        let colored = render_markdown(PAGE, true);
        assert!(colored.starts_with("\x1b[1;4mCAP999: demo\x1b[0m\n"));
        assert!(colored.contains("\x1b[1mExample\x1b[0m"));
        assert!(colored.contains("Use \x1b[1mthis\x1b[0m and \x1b[36mthat\x1b[0m."));
        assert!(colored.contains("    x = 1\n"));
        assert!(!colored.contains("```"));
    }

    #[test]
    fn unbalanced_markers_are_left_alone() {
        assert_eq!(inline("a `b"), "a `b");
        assert_eq!(inline("2 ** 3"), "2 ** 3");
    }
}
