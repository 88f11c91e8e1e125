//! The instance a method's receiver stands for when no constructor call of its class was followed: the
//! class's own `__init__`, its parameters unknown, tells what the instance's attributes hold
//! (`self.learner_params = {"num_threads": n_jobs}` read by `lgb.train(self.learner_params)` in `fit`).
//!
//! Only the attribute's one assignment in the class counts ([`super::calls::instance_assignment`]), and
//! only while nothing in the class may change a thread count in it: a subscript store whose key may be
//! a thread-count key or is not known, a mutating method call, a `del`, or a store in a function nested
//! in a method makes the attribute unknown. So does a value no rule judges ([`may_size_a_pool`]).

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};

use super::calls::Instance;
use super::semantic::{Binding, BindingKind, ScopeId, SemanticModel};
use super::value::Value;

/// Dict methods that change the dict they are called on.
const MUTATING_METHODS: &[&str] = &["update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"];

/// The instance of the class whose method `scope` is, when `receiver` is that method's receiver (its
/// first parameter; a static or class method has none), and the class's `__init__`. The instance's
/// receiver is `__init__`'s own, whatever the method calls its.
pub fn enclosing_instance<'a>(
    model: &SemanticModel<'a>,
    scope: ScopeId,
    receiver: &str,
) -> Option<(Instance<'a>, &'a ast::StmtFunctionDef)> {
    let class = model.class_of(model.parent(scope)?)?;
    let method = methods(class).find(|method| model.scope_of_node(method.range.start()) == Some(scope))?;
    receiver_of(method).filter(|name| *name == receiver)?;
    let init = class_init(model, model.parent(scope)?)?;
    let init_scope = model.scope_of_node(init.range.start())?;
    Some((Instance { class, receiver: receiver_of(init)?, init_scope }, init))
}

/// The `__init__` the class body `class_scope` ends with, when it binds that name once, to a function.
pub fn class_init<'a>(model: &SemanticModel<'a>, class_scope: ScopeId) -> Option<&'a ast::StmtFunctionDef> {
    match model.final_bindings("__init__", class_scope)? {
        [Binding { kind: BindingKind::Function(init), .. }] => Some(*init),
        _ => None,
    }
}

/// The keys of the subscript stores into `<object>.<attribute>` in the methods of `class` (`self.params[
/// key] = value`), each with the scope and offset to evaluate it at; `None` when the class changes the
/// attribute's dict in another way (a mutating method, a `del`, a store in a nested function).
pub fn stored_keys<'a>(
    model: &SemanticModel<'a>,
    class: &'a ast::StmtClassDef,
    attribute: &str,
) -> Option<Vec<(&'a Expr, ScopeId, TextSize)>> {
    let mut keys = Vec::new();
    for method in methods(class) {
        let mut stores = Stores { attribute, nested: 0, keys: Vec::new(), other: false };
        stores.visit_body(&method.body);
        if stores.other {
            return None;
        }
        let scope = model.scope_of_node(method.range.start())?;
        keys.extend(stores.keys.into_iter().map(|key| (key, scope, key.start())));
    }
    Some(keys)
}

/// Whether `value` may size a pool as the rules judge one: a count that means every core (at most 0), one
/// derived from the node or the data, one bounded by the pod's limit, a dict that may hold a count, or a
/// choice of which one is any of these. An attribute holding anything else (`self.verbose = 2`) is left
/// unknown: knowing it would only send the walk into the functions it is passed to, to no finding.
pub fn may_size_a_pool(value: &Value<'_>) -> bool {
    match value {
        Value::Int(count) => *count <= 0,
        Value::NodeCpus { .. } | Value::DataSize { .. } | Value::Capped | Value::Dict(_) => true,
        Value::OneOf(alternatives) => {
            alternatives.iter().any(|alternative| may_size_a_pool(&alternative.resolved.value))
        }
        _ => false,
    }
}

/// The methods defined in a class's body.
fn methods(class: &ast::StmtClassDef) -> impl Iterator<Item = &ast::StmtFunctionDef> {
    class.body.iter().filter_map(|stmt| match stmt {
        Stmt::FunctionDef(function) => Some(function),
        _ => None,
    })
}

/// The name of a method's receiver: its first positional parameter, unless a decorator makes it a static
/// or class method.
fn receiver_of(method: &ast::StmtFunctionDef) -> Option<&str> {
    let static_or_class = method.decorator_list.iter().any(|decorator| {
        let name = match &decorator.expression {
            Expr::Name(name) => name.id.as_str(),
            Expr::Attribute(attribute) => attribute.attr.as_str(),
            _ => return true,
        };
        matches!(name, "staticmethod" | "classmethod")
    });
    if static_or_class {
        return None;
    }
    let parameters = &method.parameters;
    parameters.posonlyargs.iter().chain(&parameters.args).next().map(|parameter| parameter.parameter.name.as_str())
}

/// Whether `expr` is `<name>.<attribute>`.
fn is_attribute_of_a_name(expr: &Expr, attribute: &str) -> bool {
    matches!(expr, Expr::Attribute(ast::ExprAttribute { value, attr, .. })
        if attr.as_str() == attribute && matches!(value.as_ref(), Expr::Name(_)))
}

/// Collects what a method's body does to the dicts held in attributes named `attribute`.
struct Stores<'a, 'n> {
    attribute: &'n str,
    /// How many functions, lambdas and classes nested in the method the visit is in.
    nested: u32,
    keys: Vec<&'a Expr>,
    /// A change that is not a subscript store with a key to judge.
    other: bool,
}

impl<'a> Visitor<'a> for Stores<'a, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let nests = matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_));
        self.nested += u32::from(nests);
        visitor::walk_stmt(self, stmt);
        self.nested -= u32::from(nests);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Subscript(subscript) if is_attribute_of_a_name(&subscript.value, self.attribute) => {
                match subscript.ctx {
                    ast::ExprContext::Store if self.nested == 0 => self.keys.push(&subscript.slice),
                    ast::ExprContext::Store | ast::ExprContext::Del => self.other = true,
                    _ => {}
                }
            }
            Expr::Call(call)
                if matches!(call.func.as_ref(), Expr::Attribute(method)
                    if MUTATING_METHODS.contains(&method.attr.as_str())
                        && is_attribute_of_a_name(&method.value, self.attribute)) =>
            {
                self.other = true;
            }
            _ => {}
        }
        let nests = matches!(expr, Expr::Lambda(_));
        self.nested += u32::from(nests);
        visitor::walk_expr(self, expr);
        self.nested -= u32::from(nests);
    }
}
