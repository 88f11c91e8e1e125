//! Values through the module's own functions: a call of a function this module defines is followed into
//! the function's body, its parameters bound to the call's arguments ([`super::calls`]). What the rules
//! find there because of the call's values (and not in the body with its defaults alone) is reported at
//! the call, with a label at the use inside the function; the body's own findings stay where they are, so
//! a problem is reported once, and a call that passes bounded values reports nothing.
//!
//! Bounded: [`MAX_CALL_DEPTH`] calls followed one inside the other, [`MAX_CALL_SITES`] calls of one function
//! per file, each body walked paying the file's budget, and a call of a function already being followed
//! (recursion) not followed again. A limit reached on a call whose values may matter is CAP003 at the call.
//! Only plain functions are followed: a decorated function (other than `staticmethod`, `classmethod` or a
//! `functools.wraps`-style wrapper) may be called with anything.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;
use rustc_hash::FxHashSet;

use super::calls::{self, Argument, CallFrames, Instance, Site, has_decorator, is_plain};
use super::checker::Checker;
use super::libraries;
use super::limits::{Cut, Limit, MAX_CALL_DEPTH};
use super::resolve::{At, Value};
use super::semantic::{Binding, BindingKind, ScopeId, is_receiver_name};
use capslint_diagnostics::diagnostic::Finding;

/// How many bytes of a function's body one unit of the file's budget pays for, each time the body is
/// walked for a call.
pub const WALK_BYTES_PER_STEP: u64 = 16;

/// How many functions of the module the search for a relevant one passes through before it counts the
/// function as relevant.
const MAX_RELEVANCE_FUNCTIONS: usize = 64;

/// Follows `call` into the body of the function of this module it calls, when it does, and reports at
/// the call what the call's values cause there. Whether the callee is a function of this module: a call
/// of another module's function is [`super::crossmodule`]'s.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall) -> bool {
    // A call that passes nothing sees the body with its defaults alone, unless it is a method called on
    // an instance constructed in view, whose constructor may pass values: nothing to look up for it.
    if call.arguments.is_empty() && !may_be_called_on_a_constructed_instance(call) {
        return false;
    }
    let Some(Callee { function, def_scope, receiver, constructor }) = callee(checker, call, checker.at(call.start()))
    else {
        return false;
    };
    if !is_plain(function) {
        return true;
    }
    let model = checker.resolver.model();
    let Some(scope) = model.scope_of_node(function.range.start()) else { return true };
    let frames = checker.resolver.frames().map(|frames| CallFrames::clone(frames)).unwrap_or_default();
    if frames.follows(scope) {
        return true;
    }
    if !checker.followed.relevant(function, || is_relevant(checker, function)) {
        return true;
    }
    let def_at = At { scope: def_scope, offset: function.range.start() };
    let arguments = calls::bind(function, def_at, call, checker.at(call.start()), receiver);
    // The instance's `__init__`, bound by its constructor call, for what the method reads of `self`.
    let mut instance_frames = frames.clone();
    let mut passes_known = passes_known_value(checker, &arguments);
    if let Some(constructor) = &constructor
        && let Some(init) = constructor.init
        && let Some(init_scope) = model.scope_of_node(init.range.start())
        && !frames.follows(init_scope)
        && let Some(receiver) = function.parameters.posonlyargs.iter().chain(&function.parameters.args).next()
    {
        let init_at = At { scope: def_scope, offset: init.range.start() };
        let init_arguments = calls::bind(init, init_at, constructor.call, constructor.at, true);
        passes_known |= passes_known_value(checker, &init_arguments);
        instance_frames.bind(init_scope, init_arguments);
        let instance = Instance { class: constructor.class, receiver: receiver.parameter.name.as_str(), init_scope };
        instance_frames.set_instance(scope, instance);
    }
    if !passes_known {
        return true;
    }
    let depth = frames.depth();
    if depth >= MAX_CALL_DEPTH as usize {
        checker.note_cut(Some(Cut::here(Limit::CallDepth, call.range())), true, call.range());
        return true;
    }
    match checker.followed.take_site(function) {
        Site::Followed => {}
        // Once per function: every later call is cut by the same limit.
        Site::FirstBeyond => {
            checker.note_cut(Some(Cut::here(Limit::CallSites, call.func.range())), true, call.range());
            return true;
        }
        Site::Beyond => return true,
    }
    let units = u64::from(function.range.len().to_u32()) / WALK_BYTES_PER_STEP + 1;
    if !checker.resolver.spend_walk(units, call.start()) {
        return true;
    }
    let body = Body { function, scope, def_scope };
    let baseline = checker.followed.baseline(function, depth, || {
        body.walk(checker, &frames, calls::defaults(function, def_at))
            .into_iter()
            .map(|finding| (finding.rule, finding.range))
            .collect()
    });
    for finding in body.walk(checker, &instance_frames, arguments) {
        if !baseline.contains(&(finding.rule, finding.range)) {
            let constructor = constructor.as_ref().map(|constructor| constructor.call);
            let moved = rehome(checker, finding, call, constructor, function.name.as_str());
            checker.report(moved);
        }
    }
    true
}

/// Whether `call` calls a method on a receiver other than the method's own (`model.fit()`, not
/// `self.fit()` nor `fit()`): the only calls [`constructed`] may find a constructor for.
fn may_be_called_on_a_constructed_instance(call: &ast::ExprCall) -> bool {
    matches!(call.func.as_ref(), Expr::Attribute(attribute) if own_receiver(&attribute.value).is_none())
}

/// The method's own receiver `receiver` names, when it is `self` or `cls`.
fn own_receiver(receiver: &Expr) -> Option<&ast::ExprName> {
    match receiver {
        Expr::Name(base) if is_receiver_name(base.id.as_str()) => Some(base),
        _ => None,
    }
}

/// The function of this module a call calls.
struct Callee<'a> {
    function: &'a ast::StmtFunctionDef,
    /// The scope its `def` is in.
    def_scope: ScopeId,
    /// Whether the call passes the first parameter as its receiver (`self.fit(...)`).
    receiver: bool,
    /// For a method called on an instance the walk saw constructed, the constructor call.
    constructor: Option<Constructor<'a>>,
}

/// The call that constructed the instance a method is called on (`Model(params)` of
/// `Model(params).fit()`, or of `model = Model(params)` then `model.fit()`).
struct Constructor<'a> {
    class: &'a ast::StmtClassDef,
    /// The class's own `__init__`, when it defines one, plainly: without it, the method still takes the
    /// call's values, and what it reads of the instance is unknown.
    init: Option<&'a ast::StmtFunctionDef>,
    call: &'a ast::ExprCall,
    /// Where the constructor call is evaluated.
    at: At,
}

/// A method called on an instance of a class of this module that the walk sees constructed
/// ([`super::receivers::constructor_call`]: directly, `Model(params).fit()`; through the one definition of
/// a name, `model = Model(params)`, that nothing changes before the call; or through `self.model` assigned
/// just before in the same block): the method, with its constructor. Only a plain method, defined once in
/// the class; the class's own plain `__init__`, when it has one, binds the instance.
fn constructed<'a>(checker: &Checker<'_, 'a>, attribute: &'a ast::ExprAttribute, at: At) -> Option<Callee<'a>> {
    let model = checker.resolver.model();
    // A limit reached here only means the method is not followed: the rules report what they need.
    let (call, at) = super::receivers::constructor_call(checker, &attribute.value, at)?;
    let Expr::Name(class_name) = call.func.as_ref() else { return None };
    let (_, [Binding { kind: BindingKind::Class(class), .. }]) =
        model.reaching_bindings(class_name.id.as_str(), at.scope, at.offset)?
    else {
        return None;
    };
    let class_scope = model.scope_of_node(class.range.start())?;
    let method_of = |name: &str| match model.final_bindings(name, class_scope)? {
        [Binding { kind: BindingKind::Function(function), .. }] if function.decorator_list.is_empty() => {
            Some(*function)
        }
        _ => None,
    };
    let function = method_of(attribute.attr.as_str())?;
    // Without a plain `__init__` of its own, what the method reads of the instance is unknown.
    let init = method_of("__init__");
    Some(Callee {
        function,
        def_scope: class_scope,
        receiver: true,
        constructor: Some(Constructor { class, init, call, at }),
    })
}

/// The function of this module `call`, read at `at`, calls: a function by its name (`train(...)`), a
/// method of the enclosing class through the method's own receiver (`self.fit(...)`, `cls.build(...)`),
/// which the class defines once, or a method of an instance the walk sees constructed ([`constructed`]).
fn callee<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall, at: At) -> Option<Callee<'a>> {
    let model = checker.resolver.model();
    match call.func.as_ref() {
        Expr::Name(name) => {
            let (def_scope, [Binding { kind: BindingKind::Function(function), .. }]) =
                model.reaching_bindings(name.id.as_str(), at.scope, at.offset)?
            else {
                return None;
            };
            Some(Callee { function, def_scope, receiver: false, constructor: None })
        }
        Expr::Attribute(attribute) => {
            let Some(base) = own_receiver(&attribute.value) else { return constructed(checker, attribute, at) };
            let (function, class_scope) =
                model.own_method(base.id.as_str(), attribute.attr.as_str(), at.scope, at.offset)?;
            let receiver = !has_decorator(function, "staticmethod");
            Some(Callee { function, def_scope: class_scope, receiver, constructor: None })
        }
        _ => None,
    }
}

/// A function whose body is walked for a call.
struct Body<'a> {
    function: &'a ast::StmtFunctionDef,
    scope: ScopeId,
    def_scope: ScopeId,
}

impl<'a> Body<'a> {
    /// The findings of the body with the parameters bound to `arguments`, inside the calls of `frames`.
    fn walk(
        &self,
        checker: &Checker<'_, 'a>,
        frames: &CallFrames<'a>,
        arguments: Vec<(String, Argument<'a>)>,
    ) -> Vec<Finding> {
        let resolver = checker.resolver.with_frames(frames.with_call(self.scope, arguments));
        let mut body = checker.for_call(resolver, self.function, self.scope, self.def_scope);
        body.visit_body(&self.function.body);
        body.into_parts().0
    }
}

/// Whether the call passes a value capslint knows (a constant, a dict, a node count, a cap...) or keywords
/// that `**kwargs` collects: otherwise the body sees what it sees without the call.
fn passes_known_value<'a>(checker: &Checker<'_, 'a>, arguments: &[(String, Argument<'a>)]) -> bool {
    arguments.iter().any(|(_, argument)| match argument {
        Argument::Expr { expr, at, passed: true } => {
            !matches!(checker.resolver.watch(|| checker.resolver.eval(expr, *at)).0.value, Value::Unknown(_))
        }
        Argument::Keywords { keywords, .. } => !keywords.is_empty(),
        Argument::Expr { passed: false, .. } => false,
        Argument::Value(resolved) => !matches!(resolved.value, Value::Unknown(_)),
    })
}

/// Whether the body of `function`, or of a function of the module it calls as a followed call would find
/// it ([`callee`]: by name, through `self` or `cls`, or on an instance constructed in view; at most
/// [`MAX_RELEVANCE_FUNCTIONS`] followed, beyond which it counts as relevant), holds anything a rule checks:
/// a call of a callee a rule knows, or one of the words without which no rule fires
/// ([`crate::prefilter_words`]).
pub fn is_relevant<'a>(checker: &Checker<'_, 'a>, function: &'a ast::StmtFunctionDef) -> bool {
    let model = checker.resolver.model();
    let mut seen: FxHashSet<usize> = FxHashSet::default();
    let mut reached = Vec::new();
    let mut pending = vec![function];
    while let Some(current) = pending.pop() {
        if !seen.insert(std::ptr::from_ref(current) as usize) {
            continue;
        }
        if seen.len() > MAX_RELEVANCE_FUNCTIONS {
            return true;
        }
        // A function whose answer an earlier search found: it holds for all that function reaches.
        match checker.followed.known_relevance(current) {
            Some(true) => return true,
            Some(false) => continue,
            None => reached.push(current),
        }
        let text = checker.source.get(current.range.to_std_range()).unwrap_or_default();
        if crate::prefilter::names_a_word(text) {
            return true;
        }
        let Some(scope) = model.scope_of_node(current.range.start()) else { continue };
        let mut calls = Calls::default();
        calls.visit_body(&current.body);
        for call in calls.found {
            let at = At { scope, offset: call.start() };
            if let Some(Callee { function, .. }) = callee(checker, call, at) {
                pending.push(function);
                continue;
            }
            let (callee, _) = checker.resolver.watch(|| checker.resolver.qualified_name(&call.func, at));
            if callee.is_some_and(|callee| libraries::is_known_callee(&callee)) {
                return true;
            }
        }
    }
    // Nothing reached is relevant, so no function on the way is: each is answered once per file.
    for function in reached {
        checker.followed.not_relevant(function);
    }
    false
}

/// The calls of a body.
#[derive(Default)]
struct Calls<'a> {
    found: Vec<&'a ast::ExprCall>,
}

impl<'a> Visitor<'a> for Calls<'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            self.found.push(call);
        }
        visitor::walk_expr(self, expr);
    }
}

/// How a moved finding's message names the calls it came through.
const THROUGH: &str = " (through the value this call passes to `";

/// A finding of a function's body caused by the values `call` passes, moved to the call: at the argument
/// that passes the value when a label shows which (the whole keyword argument, where a rule checking the
/// call itself reports), else at the callee's name, with a label at the use inside the function.
fn rehome(
    checker: &Checker<'_, '_>,
    finding: Finding,
    call: &ast::ExprCall,
    constructor: Option<&ast::ExprCall>,
    name: &str,
) -> Finding {
    let inside = finding.range;
    let primary = finding
        .secondary
        .iter()
        .find_map(|label| super::receivers::argument_passing(checker, call, constructor, label.range))
        .unwrap_or(call.func.range());
    let message = through_message(finding.message, !finding.related.is_empty(), name);
    let mut moved = Finding::new(finding.rule, primary, message).label(finding.label);
    if let Some(help) = finding.help {
        moved = moved.help(help);
    }
    for label in finding.secondary {
        if !primary.contains_range(label.range) {
            moved = checker.point_to(moved, label.range, &label.text);
        }
    }
    for related in finding.related {
        moved = moved.related(related.file, related.range, related.text);
    }
    checker.point_to(moved, inside, &format!("the value is used here, in `{name}`"))
}

/// The message of a finding moved to a call of `name`: the places in other files it named dropped (the
/// moved finding names its own) and the call added to the calls it came through, the outermost first.
pub fn through_message(mut message: String, names_related: bool, name: &str) -> String {
    if names_related && let Some(end) = message.rfind(" (see ") {
        message.truncate(end);
    }
    match message.rfind(THROUGH) {
        Some(start) => {
            let inner = message[start + THROUGH.len()..].trim_end_matches(')').to_string();
            format!("{}{THROUGH}{name}`, then `{inner})", &message[..start])
        }
        None => format!("{message}{THROUGH}{name}`)"),
    }
}
