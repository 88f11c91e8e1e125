//! What built the receiver of a method call, and which argument of a call passes a value: the questions
//! both ways of following a call into a body ask ([`super::interprocedural`] for the module's own functions
//! and classes, [`super::crossmodule`] for other modules'), answered from the calling module's tree and
//! model alone.

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange, TextSize};

use super::checker::Checker;
use super::resolve::At;
use super::semantic::{Binding, BindingKind, ScopeKind};

/// The call that constructed the instance `receiver` is, read at `at` (the call on it), where the walk
/// sees it: `receiver` itself (`Model(params).fit()`), the one definition of a name (`model =
/// Model(params)`) with no other mention of the name between it and the call (nor any call, for a name
/// outside a function), or an attribute of the method's own receiver assigned in the block of the call,
/// before it (`self.model = Model(params)` then `self.model.fit()`), with no statement between that names
/// the receiver.
pub fn constructor_call<'a>(checker: &Checker<'_, 'a>, receiver: &'a Expr, at: At) -> Option<(&'a ast::ExprCall, At)> {
    let (value, at) = match receiver {
        Expr::Call(_) => (receiver, at),
        Expr::Name(name) => {
            let (value, at) = checker.resolver.watch(|| checker.resolver.definition(receiver, at)).0;
            // Nothing between the construction and the call may change the object: no other mention of
            // the name (`model.n_jobs = 2`, `reset(model)`, `model.set_params(...)`), and for a name
            // outside a function, which any function may rebind or change, no call at all.
            let between = checker.source.get(value.end().to_usize()..receiver.start().to_usize())?;
            let local = checker.resolver.model().scope_kind(at.scope) == ScopeKind::Function;
            if mentions(between, name.id.as_str()) || (!local && between.contains('(')) {
                return None;
            }
            (value, at)
        }
        Expr::Attribute(attribute) => return own_attribute_constructor(checker, attribute, at),
        _ => return None,
    };
    match value {
        Expr::Call(call) => Some((call, at)),
        _ => None,
    }
}

/// The argument that passes the value at `place` into a followed call (`call`, or the `constructor` of
/// its receiver): the one that holds `place` (the whole keyword argument for a keyword), or else one that
/// passes a name whose one reaching assignment holds it ([`passed_name_assigned_at`]).
pub fn argument_passing(
    checker: &Checker<'_, '_>,
    call: &ast::ExprCall,
    constructor: Option<&ast::ExprCall>,
    place: TextRange,
) -> Option<TextRange> {
    let calls = || std::iter::once(call).chain(constructor);
    match calls().find(|call| call.arguments.range().contains_range(place)) {
        Some(call) => {
            let keyword =
                call.arguments.keywords.iter().map(Ranged::range).find(|keyword| keyword.contains_range(place));
            Some(keyword.unwrap_or(place))
        }
        None => calls().find_map(|call| passed_name_assigned_at(checker, call, place)),
    }
}

/// The argument of `call` (the whole keyword argument for a keyword) that passes a name whose one
/// reaching assignment holds `place` (`jobs` of `fit(X, jobs)` after `jobs = -1`, for the place of `-1`).
fn passed_name_assigned_at(checker: &Checker<'_, '_>, call: &ast::ExprCall, place: TextRange) -> Option<TextRange> {
    let model = checker.resolver.model();
    let assigns = |expr: &Expr| {
        let Expr::Name(name) = expr else { return false };
        match model.reaching_bindings(name.id.as_str(), checker.scope, call.start()) {
            Some((_, [Binding { kind: BindingKind::Assign(value), range, .. }])) => {
                value.range().contains_range(place) || range.contains_range(place)
            }
            _ => false,
        }
    };
    let positional = call.arguments.args.iter().find(|argument| assigns(argument)).map(Ranged::range);
    positional.or_else(|| call.arguments.keywords.iter().find(|keyword| assigns(&keyword.value)).map(Ranged::range))
}

/// Whether `text` holds `name` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    let is_name_byte = crate::prefilter::is_name_byte;
    memchr::memmem::find_iter(text.as_bytes(), name.as_bytes()).any(|at| {
        let before = at.checked_sub(1).map(|index| text.as_bytes()[index]);
        let after = text.as_bytes().get(at + name.len()).copied();
        !before.is_some_and(is_name_byte) && !after.is_some_and(is_name_byte)
    })
}

/// [`constructor_call`] of `self.<attribute>` in a method of a class of this module.
fn own_attribute_constructor<'a>(
    checker: &Checker<'_, 'a>,
    attribute: &'a ast::ExprAttribute,
    at: At,
) -> Option<(&'a ast::ExprCall, At)> {
    let Expr::Name(base) = attribute.value.as_ref() else { return None };
    let model = checker.resolver.model();
    let call_start = at.offset;
    let (method_scope, [Binding { kind: BindingKind::Parameter, .. }]) =
        model.reaching_bindings(base.id.as_str(), at.scope, call_start)?
    else {
        return None;
    };
    let class = model.class_of(model.parent(method_scope)?)?;
    let method = class.body.iter().find_map(|stmt| match stmt {
        ast::Stmt::FunctionDef(method)
            if method.range.contains(call_start) && model.scope_of_node(method.start()) == Some(method_scope) =>
        {
            Some(method)
        }
        _ => None,
    })?;
    let first = method.parameters.posonlyargs.iter().chain(&method.parameters.args).next()?;
    if first.parameter.name.as_str() != base.id.as_str() {
        return None;
    }
    let (block, index) = block_holding(&method.body, call_start)?;
    for stmt in block[..index].iter().rev() {
        if let ast::Stmt::Assign(ast::StmtAssign { targets, value, .. }) = stmt
            && let [Expr::Attribute(target)] = targets.as_slice()
            && target.attr.as_str() == attribute.attr.as_str()
            && matches!(target.value.as_ref(), Expr::Name(name) if name.id == base.id)
        {
            let Expr::Call(constructor) = value.as_ref() else { return None };
            return Some((constructor, At { scope: method_scope, offset: stmt.start() }));
        }
        if names(stmt, base.id.as_str()) {
            return None;
        }
    }
    None
}

/// The block of `body` (or of a statement nested in it, not in a nested function or class) whose
/// statement at the returned index holds `offset`.
fn block_holding(body: &[ast::Stmt], offset: TextSize) -> Option<(&[ast::Stmt], usize)> {
    let index = body.iter().position(|stmt| stmt.range().contains(offset))?;
    let inner: Vec<&[ast::Stmt]> = match &body[index] {
        ast::Stmt::If(stmt) => std::iter::once(stmt.body.as_slice())
            .chain(stmt.elif_else_clauses.iter().map(|c| c.body.as_slice()))
            .collect(),
        ast::Stmt::For(stmt) => vec![&stmt.body, &stmt.orelse],
        ast::Stmt::While(stmt) => vec![&stmt.body, &stmt.orelse],
        ast::Stmt::With(stmt) => vec![&stmt.body],
        ast::Stmt::Try(stmt) => std::iter::once(stmt.body.as_slice())
            .chain(stmt.handlers.iter().map(|ast::ExceptHandler::ExceptHandler(handler)| handler.body.as_slice()))
            .chain([stmt.orelse.as_slice(), stmt.finalbody.as_slice()])
            .collect(),
        ast::Stmt::FunctionDef(_) | ast::Stmt::ClassDef(_) => return None,
        _ => return Some((body, index)),
    };
    match inner.into_iter().find_map(|block| block_holding(block, offset)) {
        Some(found) => Some(found),
        // The offset is in the statement's header (a condition, an iterable).
        None => Some((body, index)),
    }
}

/// Whether `stmt` names `name` anywhere.
fn names(stmt: &ast::Stmt, name: &str) -> bool {
    struct Finder<'n> {
        name: &'n str,
        found: bool,
    }
    impl<'b> Visitor<'b> for Finder<'_> {
        fn visit_expr(&mut self, expr: &'b Expr) {
            if let Expr::Name(found) = expr
                && found.id.as_str() == self.name
            {
                self.found = true;
            }
            ruff_python_ast::visitor::walk_expr(self, expr);
        }
    }
    let mut finder = Finder { name, found: false };
    finder.visit_stmt(stmt);
    finder.found
}
