//! What the Python fixes write: the configured thread-count expression (`fix-thread-count`, default
//! `1`) as a keyword, a dict entry or a replaced value, with an `import` for each module the expression
//! names that the file does not bind (`int(os.environ["OMP_NUM_THREADS"])` needs `import os`).

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use capslint_diagnostics::fix::Edit;

/// Python's builtins that a thread-count expression may use without an import.
const BUILTINS: &[&str] = &["int", "float", "min", "max", "round", "len", "abs", "str", "bool", "sum", "divmod", "pow"];

/// The thread-count expression and the imports it needs, for one module.
#[derive(Debug, Clone, Default)]
pub struct FixWriter {
    expression: String,
    /// `import NAME` lines to add, and where.
    imports: Option<Edit>,
}

impl FixWriter {
    /// The writer for a module of `source` with top-level statements `body`: `expression` is the
    /// configured thread count, `names` the modules it names ([`imported_names_cached`]).
    pub fn new(expression: &str, names: &[String], body: &[Stmt], source: &str) -> Self {
        let needed: Vec<&String> = names.iter().filter(|name| !binds(body, name)).collect();
        let imports = (!needed.is_empty()).then(|| {
            let lines: String = needed.iter().map(|name| format!("import {name}\n")).collect();
            Edit::insertion(lines, import_position(body, source))
        });
        FixWriter { expression: expression.to_string(), imports }
    }

    /// The expression as written in the configuration.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// `edits` and the imports the expression needs.
    pub fn with_imports(&self, mut edits: Vec<Edit>) -> Vec<Edit> {
        edits.extend(self.imports.clone());
        edits
    }

    /// Replaces the value at `range` with the expression.
    pub fn replace(&self, range: TextRange) -> Vec<Edit> {
        self.with_imports(vec![Edit::replacement(self.expression.clone(), range)])
    }

    /// Adds `keyword=EXPRESSION` as the last argument of `call` (see [`append_item`]).
    pub fn add_keyword(&self, source: &str, call: &ast::ExprCall, keyword: &str) -> Vec<Edit> {
        let arguments = &call.arguments;
        let last = arguments
            .args
            .iter()
            .map(Ranged::range)
            .chain(arguments.keywords.iter().map(Ranged::range))
            .max_by_key(|range| range.end());
        let close = arguments.end() - TextSize::from(1);
        self.with_imports(append_item(source, last, close, &format!("{keyword}={}", self.expression)))
    }

    /// Adds `"key": EXPRESSION` to a dict display (`{...}`), or `key=EXPRESSION` to a `dict(...)` call,
    /// after its last entry; `None` for anything else.
    pub fn add_entry(&self, source: &str, dict: &Expr, key: &str) -> Option<Vec<Edit>> {
        match dict {
            Expr::Dict(dict) => {
                let last = dict.items.last().map(|item| {
                    TextRange::new(item.key.as_ref().map_or(item.value.start(), Ranged::start), item.value.end())
                });
                let item = format!("\"{key}\": {}", self.expression);
                Some(self.with_imports(append_item(source, last, dict.end() - TextSize::from(1), &item)))
            }
            Expr::Call(call)
                if matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "dict")
                    && call.arguments.args.is_empty() =>
            {
                Some(self.add_keyword(source, call, key))
            }
            _ => None,
        }
    }
}

/// [`imported_names`] of `expression`, parsed once per thread for as long as the expression stays the
/// same: a run has one or a few configurations, and every module it checks needs the answer.
pub fn imported_names_cached(expression: &str) -> std::rc::Rc<[String]> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, std::rc::Rc<[String]>)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some((cached, names)) if cached == expression => std::rc::Rc::clone(names),
        _ => {
            let names: std::rc::Rc<[String]> = imported_names(expression).into();
            *last = Some((expression.to_string(), std::rc::Rc::clone(&names)));
            names
        }
    })
}

/// The modules a thread-count expression names, which a file must import: the first names of its
/// attribute chains and calls that are not builtins (`os` in `int(os.environ["OMP_NUM_THREADS"])`).
pub fn imported_names(expression: &str) -> Vec<String> {
    let Ok(parsed) = ruff_python_parser::parse_expression(expression) else { return Vec::new() };
    let mut names = RootNames::default();
    names.visit_expr(parsed.expr());
    names.0.into_iter().filter(|name| !BUILTINS.contains(&name.as_str())).collect()
}

/// The edits that add `item` to a bracketed list (arguments, dict entries) whose last element is at
/// `last` and whose closing bracket is at `close`, in the list's own layout: written one element per
/// line, the item gets a line of its own after the last element's (after its comment, if any), in that
/// element's indentation, with a trailing comma when the last element has one; otherwise `, item` right
/// after the last element (or the item alone in an empty list).
pub fn append_item(source: &str, last: Option<TextRange>, close: TextSize, item: &str) -> Vec<Edit> {
    let Some(last) = last else { return vec![Edit::insertion(item, close)] };
    let (end, close_at) = (usize::from(last.end()), usize::from(close));
    let between = source.get(end..close_at).unwrap_or_default();
    let line_start = source[..usize::from(last.start())].rfind('\n').map_or(0, |index| index + 1);
    let indent = &source[line_start..usize::from(last.start())];
    let own_line = indent.chars().all(|character| character == ' ' || character == '\t');
    match between.find('\n') {
        Some(newline) if own_line => {
            let next_line = TextSize::from((end + newline + 1) as u32);
            if between[..newline].trim_start().starts_with(',') {
                vec![Edit::insertion(format!("{indent}{item},\n"), next_line)]
            } else {
                vec![Edit::insertion(",", last.end()), Edit::insertion(format!("{indent}{item}\n"), next_line)]
            }
        }
        _ => vec![Edit::insertion(format!(", {item}"), last.end())],
    }
}

/// The first names of the expression's attribute chains and calls (`os` in `os.environ`).
#[derive(Default)]
struct RootNames(Vec<String>);

impl<'a> Visitor<'a> for RootNames {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr {
            if !self.0.iter().any(|seen| seen == name.id.as_str()) {
                self.0.push(name.id.to_string());
            }
            return;
        }
        visitor::walk_expr(self, expr);
    }
}

/// Whether a top-level statement binds `name` (an import, an assignment, a definition).
fn binds(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|stmt| match stmt {
        Stmt::Import(import) => import.names.iter().any(|alias| {
            alias
                .asname
                .as_ref()
                .map_or_else(|| alias.name.split('.').next() == Some(name), |asname| asname.as_str() == name)
        }),
        Stmt::ImportFrom(import) => import.names.iter().any(|alias| {
            alias.asname.as_ref().map_or_else(|| alias.name.as_str() == name, |asname| asname.as_str() == name)
        }),
        Stmt::Assign(assign) => {
            assign.targets.iter().any(|target| matches!(target, Expr::Name(n) if n.id.as_str() == name))
        }
        Stmt::FunctionDef(function) => function.name.as_str() == name,
        Stmt::ClassDef(class) => class.name.as_str() == name,
        _ => false,
    })
}

/// Where new imports go: before the first top-level import that is not `from __future__`; else after
/// the module's docstring and `__future__` imports; else at the first statement (after leading comments).
fn import_position(body: &[Stmt], source: &str) -> TextSize {
    let line_start = |offset: TextSize| {
        let at = usize::from(offset).min(source.len());
        TextSize::from(source[..at].rfind('\n').map_or(0, |index| index + 1) as u32)
    };
    let next_line = |offset: TextSize| {
        let at = usize::from(offset).min(source.len());
        TextSize::from(source[at..].find('\n').map_or(source.len(), |index| at + index + 1) as u32)
    };
    let is_future =
        |stmt: &Stmt| matches!(stmt, Stmt::ImportFrom(import) if import.module.as_deref() == Some("__future__"));
    if let Some(import) =
        body.iter().find(|stmt| matches!(stmt, Stmt::Import(_) | Stmt::ImportFrom(_)) && !is_future(stmt))
    {
        return line_start(import.start());
    }
    let is_docstring =
        |stmt: &Stmt| matches!(stmt, Stmt::Expr(expr) if matches!(expr.value.as_ref(), Expr::StringLiteral(_)));
    let preamble = body.iter().take_while(|stmt| is_docstring(stmt) || is_future(stmt)).last();
    match (preamble, body.first()) {
        (Some(last), _) => next_line(last.end()),
        (None, Some(first)) => line_start(first.start()),
        (None, None) => TextSize::from(source.len() as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(expression: &str, source: &str) -> (FixWriter, String) {
        let parsed = ruff_python_parser::parse_module(source).unwrap();
        (FixWriter::new(expression, &imported_names(expression), parsed.suite(), source), source.to_string())
    }

    fn appended(source: &str, item: &str) -> String {
        let parsed = ruff_python_parser::parse_expression(source).unwrap();
        let edits = FixWriter::new("1", &[], &[], source).add_entry(source, parsed.expr(), item).unwrap();
        capslint_diagnostics::fix::apply::apply(source, &[&capslint_diagnostics::fix::Fix::safe("add", edits)]).text
    }

    #[test]
    fn an_entry_follows_the_layout_of_the_dict() {
        assert_eq!(appended("{\"a\": 1}", "k"), "{\"a\": 1, \"k\": 1}");
        assert_eq!(appended("{}", "k"), "{\"k\": 1}");
        assert_eq!(appended("{\n    \"a\": 1,  # why\n}", "k"), "{\n    \"a\": 1,  # why\n    \"k\": 1,\n}");
        assert_eq!(appended("{\n    \"a\": 1\n}", "k"), "{\n    \"a\": 1,\n    \"k\": 1\n}");
        assert_eq!(appended("{\"a\": 1,\n \"b\": 2}", "k"), "{\"a\": 1,\n \"b\": 2, \"k\": 1}");
    }

    #[test]
    fn imports_what_the_expression_names_and_the_file_lacks() {
        let (fix, _) = writer(
            "int(os.environ['OMP_NUM_THREADS'])",
            "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nx = 1\n",
        );
        assert_eq!(fix.imports, Some(Edit::insertion("import os\n", TextSize::from(46))));
        let (fix, _) = writer("int(os.environ['OMP_NUM_THREADS'])", "import numpy\nimport os.path\n");
        assert_eq!(fix.imports, None, "`import os.path` binds `os`");
        let (fix, _) = writer("1", "x = 1\n");
        assert_eq!(fix.imports, None);
        let (fix, _) = writer("caps.threads()", "# comment\nimport numpy as np\n");
        assert_eq!(fix.imports, Some(Edit::insertion("import caps\n", TextSize::from(10))));
    }
}
