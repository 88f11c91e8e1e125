//! JUnit XML, as Jenkins, GitLab, Azure Pipelines and most CI test viewers read it: one `<testsuite>` per
//! file with findings, one `<testcase>` with a `<failure>` per finding. A clean run is one passing test
//! case, so a viewer shows a green check rather than an empty report. In a notebook, `line` and `column`
//! are in its JSON (the source string's line), the message names the cell and the line within it, and
//! the body starts as the concise format does (`path:cell N:row:col`).

use std::fmt::Write;

use capslint_diagnostics::diagnostic::Diagnostic;

/// Escapes text for XML content and attribute values. Characters that XML 1.0 forbids (most control
/// characters) become U+FFFD; tab, newline and carriage return are written as character references so
/// attribute-value normalisation keeps them.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            other => out.push(other),
        }
    }
    out
}

/// The test-case class of a file: its path without the extension, as ruff names it.
fn classname(path: &str) -> &str {
    match path.rfind('.') {
        Some(dot) if dot > path.rfind('/').map_or(0, |slash| slash + 1) => &path[..dot],
        _ => path,
    }
}

/// Renders the diagnostics (sorted by file) as a JUnit XML document.
pub fn render(diagnostics: &[Diagnostic]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total = diagnostics.len();
    if total == 0 {
        out.push_str("<testsuites name=\"capslint\" tests=\"1\" failures=\"0\" errors=\"0\">\n");
        out.push_str("  <testsuite name=\"capslint\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\">\n");
        out.push_str("    <testcase name=\"no findings\" classname=\"capslint\"/>\n");
        out.push_str("  </testsuite>\n</testsuites>\n");
        return out;
    }
    let _ = writeln!(out, "<testsuites name=\"capslint\" tests=\"{total}\" failures=\"{total}\" errors=\"0\">");
    for group in diagnostics.chunk_by(|a, b| a.file.display_name() == b.file.display_name()) {
        let path = group[0].file.display_name();
        let count = group.len();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{count}\" failures=\"{count}\" errors=\"0\" skipped=\"0\">",
            escape(path)
        );
        for diagnostic in group {
            let (start, rule) = (diagnostic.file_start(), diagnostic.rule());
            let message = format!(
                "{}{}",
                super::cell_prefix(&diagnostic.file, diagnostic.finding.range.start()),
                diagnostic.finding.message
            );
            let mut body = format!(
                "{}: {} {}",
                super::concise_location(diagnostic, path),
                rule.code(),
                diagnostic.finding.message
            );
            if let Some(help) = &diagnostic.finding.help {
                let _ = write!(body, "\nhelp: {help}");
            }
            let _ = writeln!(
                out,
                "    <testcase name=\"{code} {name}\" classname=\"{class}\" file=\"{file}\" line=\"{row}\" \
                 column=\"{column}\">\n      <failure type=\"{code}\" message=\"{message}\">{body}</failure>\n    \
                 </testcase>",
                code = rule.code(),
                name = rule.name(),
                class = escape(classname(path)),
                file = escape(path),
                row = start.row,
                column = start.column,
                message = escape(&message),
                body = escape(&body),
            );
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_forbidden_characters() {
        assert_eq!(escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
        assert_eq!(escape("x\u{1}y\nz"), "x\u{fffd}y&#10;z");
    }

    #[test]
    fn classname_drops_only_the_extension() {
        assert_eq!(classname("src/train.py"), "src/train");
        assert_eq!(classname("k8s.d/job"), "k8s.d/job");
        assert_eq!(classname(".hidden"), ".hidden");
    }
}
