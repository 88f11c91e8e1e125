//! IPython syntax in a `.py` file: a notebook exported as a script may keep its line and cell magics
//! (`%matplotlib inline`, `%%time`), shell escapes (`!pip install x`, `files = !ls`) and help (`?model`,
//! `model.fit?`), which Python cannot parse. Such a file is parsed as a notebook's code is (IPython mode),
//! checked, and reported (CAP001) at its first escape command, since Python cannot run it.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, ModModule, PySourceType, Stmt};
use ruff_python_parser::{Parsed, parse_unchecked_source};
use ruff_text_size::{Ranged, TextRange};

use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// How much of an escape command a message quotes.
const MAX_QUOTED_CHARS: usize = 40;

/// A module parsed in IPython mode, and its first escape command.
pub struct IpythonModule {
    /// The parse.
    pub parsed: Parsed<ModModule>,
    /// The first escape command.
    pub first_escape: TextRange,
}

/// Whether IPython mode may read `text` better than Python mode did (`python`): one of its syntax errors
/// is at an escape character (`%`, `!`, `?`), where Python mode stops at every escape command.
pub fn may_hold_escapes(text: &str, python: &Parsed<ModModule>) -> bool {
    python
        .errors()
        .iter()
        .any(|error| matches!(text.as_bytes().get(usize::from(error.location.start())), Some(b'%' | b'!' | b'?')))
}

/// `text` parsed in IPython mode, or `None` where the parser gives up on it by panicking: it does on a few
/// malformed texts, an autocall escape (`,` `;` `/` at the start of a line) inside brackets where an
/// expression is due (`import[` then `,!x` on the next line).
pub fn parse(text: &str) -> Option<Parsed<ModModule>> {
    std::panic::catch_unwind(|| parse_unchecked_source(text, PySourceType::Ipynb)).ok()
}

/// The module `text` parsed in IPython mode, when that reads escape commands and leaves fewer syntax
/// errors than the `python_errors` of its parse as Python.
pub fn reparse(text: &str, python_errors: usize) -> Option<IpythonModule> {
    let parsed = parse(text)?;
    if parsed.errors().len() >= python_errors {
        return None;
    }
    let mut escapes = FirstEscape::default();
    escapes.visit_body(&parsed.syntax().body);
    let first_escape = escapes.first?;
    Some(IpythonModule { parsed, first_escape })
}

/// The CAP001 finding of a `.py` file that holds IPython syntax, at its first escape command.
pub fn finding(text: &str, escape: TextRange) -> Finding {
    // The first line, without a trailing comment (a shell's and IPython's own `  # ...`).
    let line = text[escape].lines().next().unwrap_or_default();
    let command = line.find(" #").map_or(line, |comment| &line[..comment]).trim();
    let quoted = match command.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((end, _)) => format!("{}...", &command[..end]),
        None => command.to_string(),
    };
    Finding::new(
        Rule::SyntaxError,
        escape,
        format!("this file holds IPython syntax (`{quoted}`), which Python cannot run"),
    )
    .label("IPython syntax")
    .help(
        "capslint checks the file as a notebook's code; to run it with Python, write the magics as calls \
         (`get_ipython().run_line_magic(...)`), or keep it as a notebook",
    )
}

/// The earliest escape command of a module, statement or expression (`files = !ls`).
#[derive(Default)]
struct FirstEscape {
    first: Option<TextRange>,
}

impl FirstEscape {
    fn found(&mut self, range: TextRange) {
        if self.first.is_none_or(|first| range.start() < first.start()) {
            self.first = Some(range);
        }
    }
}

impl<'a> Visitor<'a> for FirstEscape {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if let Stmt::IpyEscapeCommand(command) = stmt {
            self.found(command.range());
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::IpyEscapeCommand(command) = expr {
            self.found(command.range());
        }
        visitor::walk_expr(self, expr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_escape(text: &str) -> Option<&str> {
        let python = parse_unchecked_source(text, PySourceType::Python);
        if !may_hold_escapes(text, &python) {
            return None;
        }
        reparse(text, python.errors().len()).map(|module| &text[module.first_escape])
    }

    #[test]
    fn each_escape_kind_is_read_in_ipython_mode() {
        for (text, escape) in [
            ("import os\n%matplotlib inline\n", "%matplotlib inline"),
            ("!pip install lightgbm\n", "!pip install lightgbm"),
            ("x = 1\nfiles = !ls data\n", "!ls data"),
            ("?len\n", "?len"),
            ("model = 1\nmodel.fit?\n", "model.fit?"),
            ("%%time\nx = 1\n", "%%time"),
            ("for i in range(3):\n    %time f(i)\n", "%time f(i)"),
        ] {
            assert_eq!(first_escape(text), Some(escape), "{text}");
        }
    }

    #[test]
    fn a_text_the_ipython_parser_gives_up_on_is_not_ipython() {
        let text = "import[\n,! os\nx = 1\n";
        assert!(parse(text).is_none());
        assert_eq!(first_escape(text), None);
    }

    #[test]
    fn python_errors_are_not_ipython() {
        for text in ["x = (1,\n", "print \"x\"\n", "x = 1 %\n", "s = 'what?'\ny = (\n"] {
            assert_eq!(first_escape(text), None, "{text}");
        }
    }
}
