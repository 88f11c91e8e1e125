//! How a call of a function of this module binds its arguments to the function's parameters, as Python
//! binds them: positional arguments in order, keywords by name, defaults evaluated where the `def` is,
//! keyword-only parameters by keyword alone, `**kwargs` as the dict of the keywords no parameter takes.
//! `*args`, and every parameter a `*` splat could fill, stay unknown; an unknown `**` splat leaves every
//! parameter it could fill unknown. [`CallFrames`] holds the bindings of the calls being followed, one
//! function scope per call, for the resolver to read a parameter's value from; [`FollowedCalls`] what one
//! file's analysis has followed so far.

use std::cell::RefCell;
use std::rc::Rc;

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::TextRange;
use rustc_hash::{FxHashMap, FxHashSet};

use super::limits::{MAX_CALL_SITES, MAX_MODULE_MODEL_BYTES};
use super::semantic::ScopeId;
use super::value::{At, Resolved};
use capslint_diagnostics::registry::Rule;

/// The decorators that leave a function callable as written.
const TRANSPARENT_DECORATORS: &[&str] = &["staticmethod", "classmethod", "wraps"];

/// What one parameter is bound to by a call.
#[derive(Debug, Clone)]
pub enum Argument<'a> {
    /// An expression, evaluated at `at`: the call's argument where the call is, or the parameter's
    /// default where the `def` is.
    Expr {
        /// The expression.
        expr: &'a Expr,
        /// Where it is evaluated.
        at: At,
        /// Whether the call passes it (rather than the default).
        passed: bool,
    },
    /// `**kwargs`: the keywords of the call that no parameter takes (and its `**` splats), evaluated at
    /// the call.
    Keywords {
        /// The keywords, in the call's order.
        keywords: Vec<&'a ast::Keyword>,
        /// Where the call is.
        at: At,
    },
    /// A value a call in another module passes, evaluated there (its places are in that module).
    Value(Resolved<'a>),
}

/// The parameters of the functions whose calls are being followed, each function's scope once: a call
/// of a function already followed (recursion) is not followed again. A method called on an instance the
/// walk saw constructed (`Model(params).fit()`) also knows that instance.
#[derive(Debug, Clone, Default)]
pub struct CallFrames<'a> {
    bound: FxHashMap<(ScopeId, String), Argument<'a>>,
    scopes: Vec<ScopeId>,
    calls: usize,
    instances: FxHashMap<ScopeId, Instance<'a>>,
}

/// The instance a followed method runs on: its class, and the scope of the class's `__init__`, whose
/// parameters the constructor call bound.
#[derive(Debug, Clone, Copy)]
pub struct Instance<'a> {
    /// The class.
    pub class: &'a ast::StmtClassDef,
    /// The name of the method's receiver (`self`).
    pub receiver: &'a str,
    /// The scope of `__init__`.
    pub init_scope: ScopeId,
}

impl<'a> CallFrames<'a> {
    /// These frames and one more call: the function of `scope` with its parameters bound to `arguments`.
    #[must_use]
    pub fn with_call(&self, scope: ScopeId, arguments: Vec<(String, Argument<'a>)>) -> Rc<Self> {
        let mut frames = self.clone();
        frames.bind(scope, arguments);
        frames.calls += 1;
        Rc::new(frames)
    }

    /// Frames for a module other than the caller's, whose calls start `depth` calls deep.
    #[must_use]
    pub fn at_depth(depth: usize) -> Self {
        CallFrames { calls: depth, ..CallFrames::default() }
    }

    /// Binds the parameters of the function of `scope` (a constructor's `__init__`) to `arguments`.
    pub fn bind(&mut self, scope: ScopeId, arguments: Vec<(String, Argument<'a>)>) {
        self.scopes.push(scope);
        self.bound.extend(arguments.into_iter().map(|(name, argument)| ((scope, name), argument)));
    }

    /// Makes the method of `scope` run on `instance`.
    pub fn set_instance(&mut self, scope: ScopeId, instance: Instance<'a>) {
        self.instances.insert(scope, instance);
    }

    /// The instance the method of `scope` runs on, when the walk saw it constructed.
    pub fn instance(&self, scope: ScopeId) -> Option<&Instance<'a>> {
        self.instances.get(&scope)
    }

    /// What the parameter `name` of the function of `scope` is bound to, when a followed call binds it.
    pub fn get(&self, scope: ScopeId, name: &str) -> Option<&Argument<'a>> {
        if !self.scopes.contains(&scope) {
            return None;
        }
        self.bound.get(&(scope, name.to_string()))
    }

    /// Whether a call of the function of `scope` is already being followed.
    pub fn follows(&self, scope: ScopeId) -> bool {
        self.scopes.contains(&scope)
    }

    /// How many calls are being followed, one inside the other.
    pub fn depth(&self) -> usize {
        self.calls
    }
}

/// The arguments `call` (evaluated at `call_at`) binds to the parameters of `function` (whose `def` is
/// evaluated at `def_at`): the parameters it leaves unknown are absent. A method called through its
/// instance or class (`self.fit(...)`) has its first parameter bound to that receiver: `receiver` is then
/// true, and the first parameter stays unknown.
pub fn bind<'a>(
    function: &'a ast::StmtFunctionDef,
    def_at: At,
    call: &'a ast::ExprCall,
    call_at: At,
    receiver: bool,
) -> Vec<(String, Argument<'a>)> {
    binding(function, call, receiver)
        .into_iter()
        .map(|(name, bound)| {
            let argument = match bound {
                Bound::Passed(expr) => Argument::Expr { expr, at: call_at, passed: true },
                Bound::Default(expr) => Argument::Expr { expr, at: def_at, passed: false },
                Bound::Keywords(keywords) => Argument::Keywords { keywords, at: call_at },
            };
            (name, argument)
        })
        .collect()
}

/// What one parameter is bound to, before evaluation: the function (`'f`) and the call (`'c`) may be in
/// different modules.
#[derive(Debug, Clone)]
pub enum Bound<'f, 'c> {
    /// An argument of the call.
    Passed(&'c Expr),
    /// The parameter's default.
    Default(&'f Expr),
    /// `**kwargs`: the call's keywords that no parameter takes.
    Keywords(Vec<&'c ast::Keyword>),
}

/// The parameters of `function` that `call` binds, as [`bind`] binds them, not yet placed.
pub fn binding<'f, 'c>(
    function: &'f ast::StmtFunctionDef,
    call: &'c ast::ExprCall,
    receiver: bool,
) -> Vec<(String, Bound<'f, 'c>)> {
    let parameters = &function.parameters;
    let arguments = &call.arguments;
    let mut positional: Vec<&ast::ParameterWithDefault> =
        parameters.posonlyargs.iter().chain(&parameters.args).collect();
    // The receiver takes the first parameter, which no argument or keyword binds.
    if receiver && !positional.is_empty() {
        positional.remove(0);
    }
    // A `*splat` fills the positional parameters from its index on, as many as it holds.
    let star = arguments.args.iter().position(Expr::is_starred_expr);
    let unknown_from = star.unwrap_or(usize::MAX);
    // An unknown `**splat` may fill any parameter a keyword can.
    let double_star = arguments.keywords.iter().any(|keyword| keyword.arg.is_none());
    let mut bound: Vec<(String, Bound<'f, 'c>)> = Vec::new();
    let mut unknown: Vec<&str> = Vec::new();
    for (index, parameter) in positional.iter().enumerate() {
        let name = parameter.parameter.name.as_str();
        if index >= unknown_from {
            unknown.push(name);
        } else if let Some(expr) = arguments.args.get(index) {
            bound.push((name.to_string(), Bound::Passed(expr)));
        }
    }
    let takes_keyword = |name: &str| {
        positional
            .iter()
            .copied()
            .filter(|parameter| !parameters.posonlyargs.iter().any(|only| std::ptr::eq(only, *parameter)))
            .chain(&parameters.kwonlyargs)
            .any(|parameter| parameter.parameter.name.as_str() == name)
    };
    let mut extra: Vec<&'c ast::Keyword> = Vec::new();
    for keyword in &arguments.keywords {
        match &keyword.arg {
            Some(arg) if takes_keyword(arg.as_str()) => {
                let name = arg.as_str();
                bound.retain(|(bound_name, _)| bound_name != name);
                bound.push((name.to_string(), Bound::Passed(&keyword.value)));
            }
            _ => extra.push(keyword),
        }
    }
    // Defaults, for the parameters nothing passes and no splat may fill.
    for parameter in positional.iter().copied().chain(parameters.kwonlyargs.iter()) {
        let name = parameter.parameter.name.as_str();
        let passed = bound.iter().any(|(bound_name, _)| bound_name == name);
        let may_be_splatted = unknown.contains(&name) || double_star;
        if !passed
            && !may_be_splatted
            && let Some(default) = parameter.default.as_deref()
        {
            bound.push((name.to_string(), Bound::Default(default)));
        }
    }
    if let Some(kwargs) = &parameters.kwarg {
        bound.push((kwargs.name.to_string(), Bound::Keywords(extra)));
    }
    bound
}

/// The value an instance's `__init__` gives its attribute `attribute` (`self.params = params`), with where
/// to evaluate it and the assignment's target: only when that is the one assignment of the attribute in
/// the class's methods, a statement of `__init__`'s own body (not inside an `if` or a loop).
pub fn instance_assignment<'a>(
    instance: &Instance<'a>,
    attribute: &str,
    init: &'a ast::StmtFunctionDef,
) -> Option<(&'a Expr, ruff_text_size::TextSize, TextRange)> {
    let mut assignments = AttributeAssignments { attribute, count: 0 };
    for stmt in &instance.class.body {
        if let ast::Stmt::FunctionDef(method) = stmt {
            ruff_python_ast::visitor::Visitor::visit_body(&mut assignments, &method.body);
        }
    }
    if assignments.count != 1 {
        return None;
    }
    init.body.iter().find_map(|stmt| match stmt {
        ast::Stmt::Assign(ast::StmtAssign { targets, value, range, .. })
            if matches!(targets.as_slice(), [Expr::Attribute(target)] if is_receiver_attribute(target, instance.receiver, attribute)) =>
        {
            Some((value.as_ref(), ruff_text_size::Ranged::start(range), ruff_text_size::Ranged::range(&targets[0])))
        }
        ast::Stmt::AnnAssign(ast::StmtAnnAssign { target, value: Some(value), range, .. })
            if matches!(target.as_ref(), Expr::Attribute(target) if is_receiver_attribute(target, instance.receiver, attribute)) =>
        {
            Some((value.as_ref(), ruff_text_size::Ranged::start(range), ruff_text_size::Ranged::range(target.as_ref())))
        }
        _ => None,
    })
}

/// Whether `target` is `<receiver>.<attribute>`.
fn is_receiver_attribute(target: &ast::ExprAttribute, receiver: &str, attribute: &str) -> bool {
    target.attr.as_str() == attribute
        && matches!(target.value.as_ref(), Expr::Name(name) if name.id.as_str() == receiver)
}

/// Counts the assignments of any object's attribute of one name in a body (`x.params = ...`,
/// `x.params += ...`, `for x.params in ...`): any of them may change what a method reads.
struct AttributeAssignments<'n> {
    attribute: &'n str,
    count: usize,
}

impl<'a> ruff_python_ast::visitor::Visitor<'a> for AttributeAssignments<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Attribute(attribute) = expr
            && matches!(attribute.ctx, ast::ExprContext::Store)
            && attribute.attr.as_str() == self.attribute
        {
            self.count += 1;
        }
        ruff_python_ast::visitor::walk_expr(self, expr);
    }
}

/// The parameters' defaults, evaluated where the `def` is: what the body sees whatever a call passes for
/// the other parameters (`**kwargs` stays unknown).
pub fn defaults<'a>(function: &'a ast::StmtFunctionDef, def_at: At) -> Vec<(String, Argument<'a>)> {
    function
        .parameters
        .iter_non_variadic_params()
        .filter_map(|parameter| {
            let default = parameter.default.as_deref()?;
            Some((parameter.parameter.name.to_string(), Argument::Expr { expr: default, at: def_at, passed: false }))
        })
        .collect()
}

/// The findings of a body, by rule and place.
pub type FindingKeys = FxHashSet<(Rule, TextRange)>;

/// What one file's analysis keeps about the calls it followed into the module's functions, shared by the
/// walk of the module and the walks of the bodies it follows calls into. Functions are keyed by the
/// address of their `def` (the tree outlives the analysis).
#[derive(Debug, Default)]
pub struct FollowedCalls {
    /// How many calls of each function were followed.
    sites: RefCell<FxHashMap<usize, u32>>,
    /// Whether each function's body, or a function of the module it calls, holds anything a rule checks.
    relevant: RefCell<FxHashMap<usize, bool>>,
    /// The findings of each function's body as a call passing nothing would give them, by nesting depth:
    /// what a call's own findings are compared with.
    baselines: RefCell<FxHashMap<(usize, usize), Rc<FindingKeys>>>,
    /// How many bytes of other modules' code were modelled to follow calls into their functions.
    model_bytes: std::cell::Cell<u64>,
    /// The callees, as written, that no call is followed into because the project defines nothing to
    /// follow for them: by the module whose code calls them (its text's address), the import that binds
    /// their first name (its offset) and what was looked up.
    unfollowed: RefCell<FxHashMap<(usize, u32, Lookup), FxHashSet<String>>>,
}

/// What a callee was looked up as in the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lookup {
    /// A module-level function the call runs.
    Function,
    /// A class whose instances' methods are called.
    Class,
}

impl FollowedCalls {
    /// Counts one more call of `function` to follow: whether it is within [`MAX_CALL_SITES`], the first
    /// call beyond, or a later one.
    pub fn take_site(&self, function: &ast::StmtFunctionDef) -> Site {
        let mut sites = self.sites.borrow_mut();
        let count = sites.entry(key(function)).or_default();
        *count = count.saturating_add(1);
        match *count {
            count if count <= MAX_CALL_SITES => Site::Followed,
            count if count == MAX_CALL_SITES + 1 => Site::FirstBeyond,
            _ => Site::Beyond,
        }
    }

    /// Whether `callee`, as written in the code at `module` under the import at `import`, was found to be
    /// no `lookup` of the project to follow ([`FollowedCalls::not_followed`]).
    pub fn is_not_followed(&self, module: usize, import: u32, lookup: Lookup, callee: &str) -> bool {
        self.unfollowed.borrow().get(&(module, import, lookup)).is_some_and(|callees| callees.contains(callee))
    }

    /// Records that `callee` is no `lookup` of the project to follow, so that it is not looked up again.
    pub fn not_followed(&self, module: usize, import: u32, lookup: Lookup, callee: &str) {
        self.unfollowed.borrow_mut().entry((module, import, lookup)).or_default().insert(callee.to_string());
    }

    /// Counts `bytes` more of another module's code to model for a call: whether they are within
    /// [`MAX_MODULE_MODEL_BYTES`] for the file, the first call beyond, or a later one.
    pub fn take_model_bytes(&self, bytes: u64) -> Site {
        let before = self.model_bytes.get();
        let after = before.saturating_add(bytes);
        if after <= MAX_MODULE_MODEL_BYTES {
            self.model_bytes.set(after);
            Site::Followed
        } else if before <= MAX_MODULE_MODEL_BYTES {
            self.model_bytes.set(MAX_MODULE_MODEL_BYTES + 1);
            Site::FirstBeyond
        } else {
            Site::Beyond
        }
    }

    /// Whether `function` is relevant, computed by `compute` the first time.
    pub fn relevant(&self, function: &ast::StmtFunctionDef, compute: impl FnOnce() -> bool) -> bool {
        if let Some(known) = self.known_relevance(function) {
            return known;
        }
        let relevant = compute();
        self.relevant.borrow_mut().insert(key(function), relevant);
        relevant
    }

    /// Whether `function` is relevant, when that is known already.
    pub fn known_relevance(&self, function: &ast::StmtFunctionDef) -> Option<bool> {
        self.relevant.borrow().get(&key(function)).copied()
    }

    /// Records that `function` is not relevant: nothing it reaches is.
    pub fn not_relevant(&self, function: &ast::StmtFunctionDef) {
        self.relevant.borrow_mut().insert(key(function), false);
    }

    /// The findings of `function`'s body at nesting `depth` with its defaults alone, computed by `compute`
    /// the first time.
    pub fn baseline(
        &self,
        function: &ast::StmtFunctionDef,
        depth: usize,
        compute: impl FnOnce() -> FindingKeys,
    ) -> Rc<FindingKeys> {
        if let Some(known) = self.baselines.borrow().get(&(key(function), depth)) {
            return Rc::clone(known);
        }
        let baseline = Rc::new(compute());
        self.baselines.borrow_mut().insert((key(function), depth), Rc::clone(&baseline));
        baseline
    }
}

/// Whether a call of a function is followed ([`FollowedCalls::take_site`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// Within the limit: followed.
    Followed,
    /// The first call beyond the limit: not followed, and reported as the limit's cut.
    FirstBeyond,
    /// A later call beyond the limit: not followed, the cut already reported.
    Beyond,
}

fn key(function: &ast::StmtFunctionDef) -> usize {
    std::ptr::from_ref(function) as usize
}

/// Whether the function is called as written: no decorator but the ones that keep it so.
pub fn is_plain(function: &ast::StmtFunctionDef) -> bool {
    decorated_only_by(function, TRANSPARENT_DECORATORS)
}

/// Whether `function` is decorated with `name`, called or not, by its last name (`@staticmethod`,
/// `@functools.lru_cache(maxsize=1)` for `lru_cache`).
pub fn has_decorator(function: &ast::StmtFunctionDef, name: &str) -> bool {
    function.decorator_list.iter().any(|decorator| decorator_name(&decorator.expression) == Some(name))
}

/// The last name of a decorator expression, called or not.
fn decorator_name(expression: &Expr) -> Option<&str> {
    let expr = match expression {
        Expr::Call(call) => call.func.as_ref(),
        expr => expr,
    };
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attribute) => Some(attribute.attr.as_str()),
        _ => None,
    }
}

/// Whether every decorator of `function` is one of `names` (by its last name, called or not:
/// `functools.lru_cache(maxsize=1)` is `lru_cache`).
pub fn decorated_only_by(function: &ast::StmtFunctionDef, names: &[&str]) -> bool {
    function
        .decorator_list
        .iter()
        .all(|decorator| decorator_name(&decorator.expression).is_some_and(|name| names.contains(&name)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_ast::Stmt;
    use ruff_text_size::{Ranged, TextSize};

    /// What `call` (the module's last statement) binds to the parameters of the module's first `def`:
    /// each parameter with the source text of its value, `default:` for a default, and the keywords of
    /// `**kwargs` as `{...}`.
    fn bound(source: &str) -> Vec<String> {
        let parsed = ruff_python_parser::parse_module(source).unwrap();
        let body = &parsed.syntax().body;
        let Stmt::FunctionDef(function) = &body[0] else { panic!("no def") };
        let Some(Stmt::Expr(statement)) = body.last() else { panic!("no call") };
        let Expr::Call(call) = statement.value.as_ref() else { panic!("no call") };
        let at = At { scope: ScopeId::MODULE, offset: TextSize::default() };
        let receiver = source.contains("self");
        let mut bound: Vec<String> = bind(function, at, call, at, receiver)
            .into_iter()
            .map(|(name, argument)| match argument {
                Argument::Expr { expr, passed: true, .. } => format!("{name}={}", &source[expr.range()]),
                Argument::Expr { expr, passed: false, .. } => format!("{name}=default:{}", &source[expr.range()]),
                Argument::Keywords { keywords, .. } => {
                    let names: Vec<&str> =
                        keywords.iter().map(|k| k.arg.as_ref().map_or("**", |arg| arg.as_str())).collect();
                    format!("{name}={{{}}}", names.join(","))
                }
                Argument::Value(_) => unreachable!("`bind` evaluates nothing"),
            })
            .collect();
        bound.sort();
        bound
    }

    #[test]
    fn positional_keyword_and_default_parameters() {
        assert_eq!(bound("def f(a, b, c=3):\n    pass\nf(1, c=5)\n"), ["a=1", "c=5"]);
        assert_eq!(bound("def f(a, b=2, *, c=3):\n    pass\nf(1)\n"), ["a=1", "b=default:2", "c=default:3"]);
        assert_eq!(bound("def f(a, /, b):\n    pass\nf(1, b=2)\n"), ["a=1", "b=2"]);
    }

    #[test]
    fn kwargs_collects_the_keywords_no_parameter_takes() {
        assert_eq!(
            bound("def f(a, /, name, **kw):\n    pass\nf(1, 'x', a=2, cmds=[])\n"),
            ["a=1", "kw={a,cmds}", "name='x'"]
        );
        assert_eq!(bound("def f(name, **kw):\n    pass\nf('x')\n"), ["kw={}", "name='x'"]);
    }

    #[test]
    fn a_method_called_through_its_receiver_binds_after_it() {
        assert_eq!(bound("def fit(self, params, n=1):\n    pass\nself.fit({}, n=2)\n"), ["n=2", "params={}"]);
    }

    #[test]
    fn splats_leave_what_they_may_fill_unknown() {
        // `*args` fills the positional parameters from its place on; `**mapping` any parameter by keyword.
        assert_eq!(bound("def f(a, b=2, c=3):\n    pass\nf(1, *rest, c=4)\n"), ["a=1", "c=4"]);
        assert_eq!(bound("def f(a, b=2, **kw):\n    pass\nf(1, **options)\n"), ["a=1", "kw={**}"]);
        assert_eq!(bound("def f(a, *args, n=1):\n    pass\nf(1, 2, 3)\n"), ["a=1", "n=default:1"]);
    }

    #[test]
    fn frames_bind_each_function_once() {
        let frames = CallFrames::default();
        let scope = ScopeId::MODULE;
        assert!(!frames.follows(scope));
        let inner = frames.with_call(scope, Vec::new());
        assert!(inner.follows(scope));
        assert_eq!(inner.depth(), 1);
        assert!(inner.get(scope, "n").is_none());
    }
}
