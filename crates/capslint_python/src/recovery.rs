//! Which statements of a module that does not parse are trusted. The parser recovers from syntax errors
//! and returns a tree anyway; only the statements it recovered cleanly are checked.
//!
//! A statement is distrusted when a syntax error, or a name the parser made up in place of a missing
//! expression, touches any line the statement spans: the parser resumes after an error on the next
//! token, which may be anywhere on that line (`print "x"` is the name `print` and then the string). For a
//! compound statement (`def`, `class`, `if`, `try`, ...), an error on its first line, or on a line of it
//! that no statement of its bodies covers (a clause header such as `except E:`), distrusts the whole
//! statement; an error inside a body distrusts only the statements there that it touches. A distrusted
//! statement is not checked, and the names it binds are unknown ([`super::semantic`]).

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::FxHashSet;

/// The distrusted statements of a module, by range.
#[derive(Debug, Default)]
pub struct Distrusted {
    statements: FxHashSet<TextRange>,
}

impl Distrusted {
    /// Nothing distrusted: a module that parsed.
    pub fn none() -> Self {
        Distrusted::default()
    }

    /// The statements of `body` that the syntax errors at `errors` (and the names the parser invented)
    /// make untrustworthy, in the module whose text is `text`.
    pub fn find(text: &str, body: &[Stmt], errors: impl IntoIterator<Item = TextRange>) -> Self {
        let mut invented = InventedNames::default();
        invented.visit_body(body);
        let end = TextSize::try_from(text.len()).unwrap_or(TextSize::new(u32::MAX));
        let lines = ErrorLines::new(text, errors.into_iter().chain(invented.ranges).filter(|range| range.end() <= end));
        let mut distrusted = Distrusted::default();
        if !lines.is_empty() {
            distrusted.classify(body, &lines);
        }
        distrusted
    }

    /// Whether `stmt` is distrusted (its enclosing statements may be trusted).
    pub fn contains(&self, stmt: &Stmt) -> bool {
        !self.statements.is_empty() && self.statements.contains(&stmt.range())
    }

    /// Whether every statement is trusted.
    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    fn classify(&mut self, body: &[Stmt], lines: &ErrorLines) {
        // Iterative over an explicit stack: a deeply nested module must not overflow the walk's stack.
        let mut pending: Vec<&[Stmt]> = vec![body];
        while let Some(body) = pending.pop() {
            for stmt in body {
                let span = lines.span(stmt.range());
                if !lines.touches(span) {
                    continue;
                }
                let bodies = child_bodies(stmt);
                let first_line = lines.span(TextRange::empty(stmt.start()));
                if bodies.is_empty() || lines.touches(first_line) {
                    self.statements.insert(stmt.range());
                    continue;
                }
                // The lines of the statement that no child statement covers: its clause headers.
                let mut children: Vec<(TextSize, TextSize)> =
                    bodies.iter().flat_map(|body| body.iter()).map(|child| lines.span(child.range())).collect();
                children.sort_unstable();
                let one = TextSize::from(1);
                let mut covered_to = first_line.1;
                let mut header_error = false;
                for (start, end) in children {
                    if start > covered_to + one && lines.touches((covered_to + one, start - one)) {
                        header_error = true;
                        break;
                    }
                    covered_to = covered_to.max(end);
                }
                header_error |= span.1 > covered_to && lines.touches((covered_to + one, span.1));
                if header_error {
                    self.statements.insert(stmt.range());
                } else {
                    pending.extend(bodies);
                }
            }
        }
    }
}

/// The bodies of statements nested in a compound statement, in source order.
fn child_bodies(stmt: &Stmt) -> Vec<&[Stmt]> {
    match stmt {
        Stmt::FunctionDef(function) => vec![&function.body],
        Stmt::ClassDef(class) => vec![&class.body],
        Stmt::If(if_stmt) => std::iter::once(&if_stmt.body[..])
            .chain(if_stmt.elif_else_clauses.iter().map(|clause| &clause.body[..]))
            .collect(),
        Stmt::For(for_stmt) => vec![&for_stmt.body, &for_stmt.orelse],
        Stmt::While(while_stmt) => vec![&while_stmt.body, &while_stmt.orelse],
        Stmt::With(with_stmt) => vec![&with_stmt.body],
        Stmt::Try(try_stmt) => std::iter::once(&try_stmt.body[..])
            .chain(try_stmt.handlers.iter().map(|handler| {
                let ast::ExceptHandler::ExceptHandler(handler) = handler;
                &handler.body[..]
            }))
            .chain([&try_stmt.orelse[..], &try_stmt.finalbody[..]])
            .collect(),
        Stmt::Match(match_stmt) => match_stmt.cases.iter().map(|case| &case.body[..]).collect(),
        _ => Vec::new(),
    }
}

/// Where the lines of a text break: found once, so that the line of any offset is a binary search away
/// (a text of one long line with many errors must not cost a scan of the line per error).
pub struct LineBreaks {
    breaks: Vec<usize>,
    len: usize,
}

impl LineBreaks {
    /// The line breaks of `text`.
    pub fn new(text: &str) -> Self {
        LineBreaks { breaks: memchr::memchr_iter(b'\n', text.as_bytes()).collect(), len: text.len() }
    }

    /// Where the line holding `offset` starts.
    pub fn line_start(&self, offset: usize) -> usize {
        let before = self.breaks.partition_point(|at| *at < offset);
        before.checked_sub(1).map_or(0, |index| self.breaks[index] + 1)
    }

    /// Where the line holding `offset` ends: its line break, or the end of the text.
    pub fn line_end(&self, offset: usize) -> usize {
        let at = self.breaks.partition_point(|at| *at < offset);
        self.breaks.get(at).copied().unwrap_or(self.len)
    }

    /// Whether a line break is at `offset`.
    fn is_break(&self, offset: usize) -> bool {
        self.breaks.binary_search(&offset).is_ok()
    }
}

/// The lines that syntax errors touch, as sorted, disjoint spans from the start of an error's first line
/// to the end of its last line (the line break excluded).
struct ErrorLines {
    breaks: LineBreaks,
    spans: Vec<(TextSize, TextSize)>,
}

impl ErrorLines {
    fn new(text: &str, errors: impl Iterator<Item = TextRange>) -> Self {
        let mut lines = ErrorLines { breaks: LineBreaks::new(text), spans: Vec::new() };
        let mut spans: Vec<(TextSize, TextSize)> = errors
            .map(|error| {
                // An error at the start of a line with nothing to point at (the end of the file after an
                // unclosed bracket) is the end of the line before.
                let start = usize::from(error.start());
                if error.is_empty() && start > 0 && lines.breaks.is_break(start - 1) {
                    lines.span(TextRange::empty(error.start() - TextSize::from(1)))
                } else {
                    lines.span(error)
                }
            })
            .collect();
        spans.sort_unstable();
        for (start, end) in spans {
            match lines.spans.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => lines.spans.push((start, end)),
            }
        }
        lines
    }

    fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// From the start of the line of `range.start()` to the end of the line of `range.end()`.
    fn span(&self, range: TextRange) -> (TextSize, TextSize) {
        let start = usize::from(range.start()).min(self.breaks.len);
        let end = usize::from(range.end()).min(self.breaks.len).max(start);
        // The last byte of the range: a line break there belongs to the line it ends.
        let last = if end > start { end - 1 } else { start };
        let line_start = self.breaks.line_start(start);
        let line_end = self.breaks.line_end(last);
        (TextSize::try_from(line_start).unwrap_or_default(), TextSize::try_from(line_end).unwrap_or_default())
    }

    /// Whether an error's lines intersect the span (both ends included).
    fn touches(&self, (start, end): (TextSize, TextSize)) -> bool {
        let first = self.spans.partition_point(|span| span.1 < start);
        self.spans.get(first).is_some_and(|span| span.0 <= end)
    }
}

/// The names the parser made up where an expression was missing (`x = ` is `x = <invalid name>`).
#[derive(Default)]
struct InventedNames {
    ranges: Vec<TextRange>,
}

impl<'a> Visitor<'a> for InventedNames {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr
            && name.is_invalid()
        {
            self.ranges.push(name.range);
        }
        visitor::walk_expr(self, expr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_ast::PySourceType;
    use ruff_python_parser::parse_unchecked_source;

    /// The source text of the distrusted statements, in source order.
    fn distrusted(text: &str) -> Vec<String> {
        let parsed = parse_unchecked_source(text, PySourceType::Python);
        let errors = parsed.errors().iter().map(|error| error.location);
        let found = Distrusted::find(text, &parsed.syntax().body, errors);
        let mut ranges: Vec<TextRange> = found.statements.iter().copied().collect();
        ranges.sort_by_key(|range| range.start());
        ranges.into_iter().map(|range| text[range].to_string()).collect()
    }

    #[test]
    fn a_module_that_parses_distrusts_nothing() {
        assert!(distrusted("import os\nx = os.cpu_count()\n").is_empty());
    }

    #[test]
    fn the_statements_on_an_error_line_are_distrusted() {
        let found = distrusted("a = 1\nprint \"hello\", a\nb = 2\n");
        assert_eq!(found, ["print", "\"hello\", a"]);
    }

    #[test]
    fn an_unclosed_call_distrusts_the_statements_it_swallows() {
        let found = distrusted("a = f(n_jobs=-1,\nb = 2\nc = g(n_jobs=-1)\nd = 3\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("a = f(") && found[0].contains("c = g(n_jobs=-1)"), "{found:?}");
    }

    #[test]
    fn an_error_at_the_end_of_the_file_distrusts_the_statement_left_open() {
        let found = distrusted("a = 1\nb = f(x,\n\nc = g(n_jobs=-1)\n");
        assert_eq!(found, ["b = f(x,\n\nc = g(n_jobs=-1)\n"]);
    }

    #[test]
    fn an_error_in_a_body_distrusts_only_the_statements_it_touches() {
        let found = distrusted("def f():\n    x = 1\n    y = `x`\n    return x\n");
        assert!(found.iter().all(|text| !text.starts_with("def") && !text.contains("return")), "{found:?}");
        assert!(found.iter().any(|text| text.starts_with("y =")), "{found:?}");
    }

    #[test]
    fn an_error_in_a_header_distrusts_the_whole_statement() {
        assert_eq!(distrusted("def f(x)\n    return x\nz = 1\n"), ["def f(x)\n    return x"]);
        let clause = "try:\n    a = 1\nexcept (ValueError, e:\n    pass\nz = 1\n";
        assert_eq!(distrusted(clause), ["try:\n    a = 1\nexcept (ValueError, e:\n    pass"]);
    }

    #[test]
    fn an_invented_name_distrusts_its_statement() {
        let text = "x = \ny = 2\n";
        let found = distrusted(text);
        assert_eq!(found, ["x ="]);
    }
}
