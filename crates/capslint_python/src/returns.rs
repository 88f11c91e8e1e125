//! What a call of a function of the project returns, as far as the rules read it: the expressions of the
//! function's `return` statements ([`returns_of`]), and the one returned value the rules judge
//! ([`node_count_returned`]): a node-wide CPU count that a helper hands back (`def workers(): return
//! os.cpu_count() - 1`), which sizes a pool wherever the helper's result goes.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};

use super::calls::decorated_only_by;
use super::paths;
use super::value::{Resolved, Unknown, Value};

/// The `return` statements of a function's own body (not of the functions and classes it defines), each
/// value with the offset it is evaluated at; `None` for a generator or a coroutine, whose call returns
/// none of them.
pub fn returns_of(function: &ast::StmtFunctionDef) -> Option<Vec<(&Expr, TextSize)>> {
    if function.is_async {
        return None;
    }
    let mut collector = Collector::default();
    collector.visit_body(&function.body);
    (!collector.generator).then_some(collector.values)
}

/// The decorators that keep what a function returns: those that leave it callable as written, and
/// `functools`' caches, which hand back what it returned (`@functools.lru_cache def cpus(): ...`).
const RETURN_KEEPING_DECORATORS: &[&str] = &["staticmethod", "classmethod", "wraps", "lru_cache", "cache"];

/// Whether a call of `function` returns what its body returns: no decorator but those that keep it.
pub fn returns_as_written(function: &ast::StmtFunctionDef) -> bool {
    decorated_only_by(function, RETURN_KEEPING_DECORATORS)
}

/// What a call returns, given the values of its `return` statements: a node-wide CPU count when one of
/// them is one and every other path of every `return` is a known value that the pod's cap does not bound
/// (`return os.cpu_count() or 1`, `return 1 if n is None else n` with `n` a node count). A path that is
/// unknown, or bounded by the cap (a quota-aware helper falling back to the node), leaves the call
/// unknown: the function may well return the cap there.
pub fn node_count_returned<'a>(returned: impl IntoIterator<Item = Resolved<'a>>) -> Resolved<'a> {
    let unknown = || Resolved::of(Value::Unknown(Unknown::Other));
    let mut node = None;
    for resolved in returned {
        for path in paths::paths(&resolved) {
            match path.resolved.value {
                Value::Unknown(_) | Value::Capped => return unknown(),
                // The count's own call is what a label shows; a name the return read it through is the
                // function's business.
                value @ Value::NodeCpus { .. } if node.is_none() => node = Some(Resolved::of(value)),
                _ => {}
            }
        }
    }
    node.unwrap_or_else(unknown)
}

/// Collects the `return` values of one body and whether it yields.
#[derive(Default)]
struct Collector<'a> {
    values: Vec<(&'a Expr, TextSize)>,
    generator: bool,
}

impl<'a> Visitor<'a> for Collector<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            // Their bodies return for themselves.
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::Return(ast::StmtReturn { value: Some(value), .. }) => {
                self.values.push((value, stmt.start()));
                self.visit_expr(value);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Yield(_) | Expr::YieldFrom(_) => self.generator = true,
            // A lambda's body is its own function's.
            Expr::Lambda(_) => return,
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }
}

#[cfg(test)]
mod tests {
    use ruff_python_parser::parse_module;

    use super::*;
    use crate::site::Site;

    fn returned_texts(source: &str) -> Option<Vec<String>> {
        let parsed = parse_module(source).unwrap();
        let Stmt::FunctionDef(function) = &parsed.syntax().body[0] else { panic!("not a function") };
        returns_of(function)
            .map(|values| values.iter().map(|(expr, _)| source[expr.range().to_std_range()].to_string()).collect())
    }

    #[test]
    fn returns_in_every_block_count_but_not_those_of_nested_functions() {
        let source = "\
def f(x):
    def inner():
        return 1
    g = lambda: 2
    match x:
        case 0:
            return a
    for _ in x:
        pass
    else:
        return b
    try:
        return c
    except E:
        return d
    return
";
        assert_eq!(returned_texts(source), Some(vec!["a".into(), "b".into(), "c".into(), "d".into()]));
    }

    #[test]
    fn generators_and_coroutines_return_nothing_the_rules_read() {
        assert_eq!(returned_texts("def f():\n    yield 1\n    return 2\n"), None);
        assert_eq!(returned_texts("async def f():\n    return 2\n"), None);
    }

    fn node() -> Resolved<'static> {
        Resolved::of(Value::NodeCpus { call: "os.cpu_count", origin: Site::Here(Default::default()) })
    }

    #[test]
    fn a_node_count_on_one_path_with_known_others_is_the_call_value() {
        let returned = node_count_returned([node(), Resolved::of(Value::Int(1)), Resolved::of(Value::None)]);
        assert!(matches!(returned.value, Value::NodeCpus { call: "os.cpu_count", .. }));
    }

    #[test]
    fn an_unknown_or_capped_path_leaves_the_call_unknown() {
        for other in [Value::Unknown(Unknown::Parameter), Value::Capped] {
            let returned = node_count_returned([node(), Resolved::of(other)]);
            assert!(matches!(returned.value, Value::Unknown(_)));
        }
        assert!(matches!(node_count_returned([Resolved::of(Value::Int(4))]).value, Value::Unknown(_)));
        assert!(matches!(node_count_returned([]).value, Value::Unknown(_)));
    }
}
