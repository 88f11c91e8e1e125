//! Where an estimator runs: whether every place an estimator built with `n_jobs=-1` is fitted, scored or
//! evaluated lies inside a joblib cluster-backend block (`with parallel_backend("dask"):`), where its
//! `n_jobs` counts the cluster's workers. The estimator is followed from its construction by name (the
//! module's names across a notebook's cells, a function's own names), through aliases, wrappers of its
//! library (`GridSearchCV(clf)`, `make_pipeline(..., clf)`) and the methods that return it (`fit`), and
//! into the module-level functions that use it and are called inside such a block (two calls deep).
//!
//! One pass over the module builds a [`FitIndex`] of the name loads and calls with the role each plays
//! (`clf.fit(...)`, an argument, a binding, an escape); each question then examines a bounded number of
//! them ([`MAX_FIT_USES`], [`MAX_FIT_FOLLOW_DEPTH`], [`MAX_FIT_CALL_DEPTH`]) and spends the file's budget.
//! Anything it cannot see (a use outside every cluster block, the estimator returned, stored or passed
//! to an unknown function, a limit reached) answers "not only on a cluster", which keeps the finding:
//! no limit here can hide one.

use std::cell::Cell;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::FxHashMap;

use super::budget::Budget;
use super::joblib_contexts::Backend;
use super::libraries::{self, JoblibCall};
use super::limits::{MAX_FIT_CALL_DEPTH, MAX_FIT_FOLLOW_DEPTH, MAX_FIT_USES};
use super::resolve::{At, Resolver, Value};
use super::semantic::{ScopeId, ScopeKind};

/// Where a name load or call is, as far as the backend it runs on is concerned.
#[derive(Debug, Clone, Copy)]
struct Place<'a> {
    offset: TextSize,
    scope: ScopeId,
    /// Whether the innermost joblib context around it, in its own function body, is a cluster backend.
    cluster: bool,
    /// The module-level function whose body it is in (not nested in another function or a lambda), whose
    /// calls decide the backend it runs on otherwise.
    runs_with: Option<&'a str>,
}

/// What the value of an expression (a name load, a call) becomes.
#[derive(Debug, Clone, Copy)]
enum Role<'a> {
    /// Bound to a plain name: `name = <value>`.
    Bound { name: &'a str, target: TextRange },
    /// The receiver of a method call: `<value>.method(...)`; the call is recorded too.
    Receiver { method: &'a str, call: &'a ast::ExprCall },
    /// An argument of a call, directly or inside a list, tuple or dict literal.
    Argument(&'a ast::ExprCall),
    /// Called: `<value>(...)`.
    Callee,
    /// Read without running or keeping it: an expression statement, an attribute read or written, a
    /// comparison.
    Inert,
    /// Named in an IPython escape command (`%time clf.fit(X, y)`), which runs there.
    Magic,
    /// Anything else: returned, stored, put in a container, bound by unpacking.
    Escape,
}

#[derive(Debug, Clone, Copy)]
struct Occurrence<'a> {
    place: Place<'a>,
    role: Role<'a>,
}

/// The name loads and calls of one module with their roles and places, built once per module that
/// enters a joblib context.
#[derive(Debug)]
pub struct FitIndex<'m, 'a> {
    names: FxHashMap<&'a str, Vec<Occurrence<'a>>>,
    calls: FxHashMap<TextRange, Occurrence<'a>>,
    /// Whether some statements were not trusted after syntax errors: uses there are not seen.
    blind: bool,
    budget: &'m Budget,
}

/// A [`FitIndex`] built when a rule first asks it a question: most modules that name a cluster backend
/// have no finding that asks.
pub struct LazyFitIndex<'m, 'a> {
    body: &'a [Stmt],
    blind: bool,
    budget: &'m Budget,
    index: std::cell::OnceCell<FitIndex<'m, 'a>>,
}

impl<'m, 'a> LazyFitIndex<'m, 'a> {
    /// The index of `body`, to build on first use ([`FitIndex::build`]).
    pub fn new(body: &'a [Stmt], blind: bool, budget: &'m Budget) -> Self {
        LazyFitIndex { body, blind, budget, index: std::cell::OnceCell::new() }
    }

    /// [`FitIndex::runs_only_on_cluster`], the index built with the module-level view of `resolver`'s
    /// module if it was not yet.
    pub fn runs_only_on_cluster(&self, resolver: &Resolver<'_, 'a>, call: &'a ast::ExprCall, work: Work) -> bool {
        let index =
            self.index.get_or_init(|| FitIndex::build(&resolver.at_module(), self.body, self.blind, self.budget));
        index.runs_only_on_cluster(resolver, call, work)
    }
}

impl<'m, 'a> FitIndex<'m, 'a> {
    /// Indexes `body`; `blind` when some of its statements are not checked (syntax errors), which makes
    /// every question answer "not only on a cluster".
    pub fn build(resolver: &Resolver<'_, 'a>, body: &'a [Stmt], blind: bool, budget: &'m Budget) -> Self {
        let mut builder = Builder {
            resolver,
            index: FitIndex { names: FxHashMap::default(), calls: FxHashMap::default(), blind, budget },
            scope: ScopeId::MODULE,
            backends: Vec::new(),
            runs_with: None,
        };
        builder.visit_body(body);
        builder.index
    }

    /// Whether the `work` that `call` (a call with an all-cores `n_jobs`) starts runs only inside
    /// cluster-backend blocks: for a function, the call itself must be in one; for an estimator or a
    /// search, every place it runs must be, at least one must exist, and it must never escape where its
    /// uses cannot be seen.
    pub fn runs_only_on_cluster(&self, resolver: &Resolver<'_, 'a>, call: &'a ast::ExprCall, work: Work) -> bool {
        if self.blind {
            return false;
        }
        let Some(occurrence) = self.calls.get(&call.range()).copied() else { return false };
        let question = Question { index: self, resolver, examined: Cell::new(0) };
        if work == Work::AtCall {
            return question.on_cluster(occurrence.place, 0);
        }
        // Resolution this question does is not a value a rule needs: a limit it reaches keeps the finding.
        let (runs, _cut) = resolver.watch(|| question.value_runs(occurrence, 0, work == Work::Search));
        matches!(runs, Some(uses) if uses > 0)
    }
}

/// When the joblib workers a call's `n_jobs` sizes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// At the call: a function (`cross_val_score(..., n_jobs=-1)`).
    AtCall,
    /// Whenever the estimator it builds is fitted, used or evaluated (`RandomForestClassifier`).
    Estimator,
    /// Whenever the search it builds is fitted (`GridSearchCV`): its `predict` and `score` use the
    /// refitted estimator, not the search's workers.
    Search,
}

impl Work {
    /// The work of a callee, by its qualified name: a class (capitalised) or a factory (`make_union`)
    /// builds an estimator, a search when its name ends in `SearchCV`; anything else is a function.
    pub fn of_callee(callee: &str) -> Work {
        let name = callee.rsplit('.').next().unwrap_or_default();
        if !name.starts_with(|first: char| first.is_ascii_uppercase()) && !name.starts_with("make_") {
            Work::AtCall
        } else if name.ends_with("SearchCV") {
            Work::Search
        } else {
            Work::Estimator
        }
    }
}

/// One question about one estimator, with its count of uses examined.
struct Question<'q, 'm, 'a> {
    index: &'q FitIndex<'m, 'a>,
    resolver: &'q Resolver<'q, 'a>,
    examined: Cell<usize>,
}

impl<'a> Question<'_, '_, 'a> {
    /// Counts one more use examined at `offset`; false once the limit or the file's budget is reached.
    fn examine(&self, offset: TextSize) -> bool {
        let examined = self.examined.get() + 1;
        self.examined.set(examined);
        examined <= MAX_FIT_USES && self.index.budget.spend(1, offset)
    }

    /// How many places run the value of `occurrence`, all on a cluster backend; `None` when one runs
    /// elsewhere or cannot be seen.
    fn value_runs(&self, occurrence: Occurrence<'a>, depth: u32, fit_only: bool) -> Option<usize> {
        // Each step examines one use, which also bounds the recursion of a chain of calls on results.
        if !self.examine(occurrence.place.offset) {
            return None;
        }
        let place = occurrence.place;
        match occurrence.role {
            Role::Inert => Some(0),
            Role::Escape | Role::Callee => None,
            Role::Magic => self.on_cluster(place, 0).then_some(1),
            Role::Bound { name, target } => {
                if depth >= MAX_FIT_FOLLOW_DEPTH {
                    return None;
                }
                self.binding_runs(name, place.scope, target, depth + 1, fit_only)
            }
            Role::Receiver { method, call } => {
                // A search's own `n_jobs` runs its fits; `predict` and `score` go to the refitted estimator.
                let runs_here = !fit_only || method.starts_with("fit") || method == "partial_fit";
                if runs_here && !self.on_cluster(place, 0) {
                    return None;
                }
                // `fit` and `set_params` return the estimator itself: follow what becomes of it.
                let returned = if matches!(method, "fit" | "partial_fit" | "set_params") {
                    match self.index.calls.get(&call.range()) {
                        Some(Occurrence { role: Role::Inert, .. }) => 0,
                        Some(result) => self.value_runs(*result, depth, fit_only)?,
                        None => return None,
                    }
                } else {
                    0
                };
                Some(usize::from(runs_here) + returned)
            }
            Role::Argument(outer) => match self.receiver_kind(outer, place) {
                Receiver::Harmless => Some(0),
                Receiver::Runs => self.on_cluster(place, 0).then_some(1),
                Receiver::Wraps if depth < MAX_FIT_FOLLOW_DEPTH => match self.index.calls.get(&outer.range()) {
                    Some(wrapper) => self.value_runs(*wrapper, depth + 1, false),
                    None => None,
                },
                Receiver::Wraps | Receiver::Unknown => None,
            },
        }
    }

    /// The uses of the value bound to `name` at `target` in `scope`, up to a rebinding.
    fn binding_runs(&self, name: &str, scope: ScopeId, target: TextRange, depth: u32, fit_only: bool) -> Option<usize> {
        let model = self.resolver.model();
        let mut runs = 0;
        for occurrence in self.index.names.get(name).map_or(&[][..], Vec::as_slice) {
            let place = occurrence.place;
            // Every load of the name is looked at: the file's budget bounds a name loaded everywhere.
            if !self.index.budget.spend(1, place.offset) {
                return None;
            }
            let Some((found, bindings)) = model.reaching_bindings(name, place.scope, place.offset) else { continue };
            if found != scope {
                continue;
            }
            // In the binding's own scope, the flow decides; a function or lambda nested in it may run
            // whenever, so its use counts whichever binding it reads.
            let ours = place.scope != scope || bindings.iter().any(|binding| binding.range == target);
            if ours {
                runs += self.value_runs(*occurrence, depth, fit_only)?;
            }
        }
        Some(runs)
    }

    /// Whether code at `place` runs on a cluster backend: inside such a block in its own function, or in
    /// a module-level function every call of which is (`calls` levels followed so far).
    fn on_cluster(&self, place: Place<'a>, calls: u32) -> bool {
        if place.cluster {
            return true;
        }
        let Some(function) = place.runs_with else { return false };
        if calls >= MAX_FIT_CALL_DEPTH {
            return false;
        }
        let mut called = false;
        for occurrence in self.index.names.get(function).map_or(&[][..], Vec::as_slice) {
            if !self.examine(occurrence.place.offset) {
                return false;
            }
            // Any other load of the name (a callback, a decorator's argument) calls it where it cannot be
            // seen, except the objective of an optimisation run in the calling thread.
            let runs_there = match occurrence.role {
                Role::Callee => true,
                Role::Argument(outer) => runs_objective_in_caller_thread(outer),
                _ => false,
            };
            if !runs_there || !self.on_cluster(occurrence.place, calls + 1) {
                return false;
            }
            called = true;
        }
        called
    }

    /// What the callee of `outer` does with an estimator passed to it at `place`.
    fn receiver_kind(&self, outer: &'a ast::ExprCall, place: Place<'a>) -> Receiver {
        let at = At { scope: place.scope, offset: outer.start() };
        if let Expr::Name(name) = outer.func.as_ref() {
            let model = self.resolver.model();
            if HARMLESS_BUILTINS.contains(&name.id.as_str())
                && model.reaching_bindings(name.id.as_str(), place.scope, outer.start()).is_none()
                && !model.has_star_imports()
            {
                return Receiver::Harmless;
            }
        }
        let Some(callee) = self.resolver.qualified_name(&outer.func, at) else { return Receiver::Unknown };
        if !libraries::is_joblib_estimator_library(&callee) || JoblibCall::from_name(&callee).is_some() {
            return Receiver::Unknown;
        }
        let last = callee.rsplit('.').next().unwrap_or_default();
        if last.starts_with(|first: char| first.is_ascii_uppercase()) || last.starts_with("make_") {
            Receiver::Wraps
        } else if last == "clone" {
            Receiver::Unknown
        } else {
            Receiver::Runs
        }
    }
}

/// What a callee does with an estimator passed to it.
enum Receiver {
    /// A builtin that only shows it (`print(clf)`).
    Harmless,
    /// A function of the estimator's library that fits or evaluates it there (`cross_val_score`).
    Runs,
    /// A class or factory of the estimator's library that keeps it (`GridSearchCV`, `make_pipeline`).
    Wraps,
    /// Anything else: what it does is not known.
    Unknown,
}

/// Builtins that show an object without running it.
const HARMLESS_BUILTINS: &[&str] = &["print", "repr", "str", "type", "isinstance", "id", "display"];

/// The single pass that builds a [`FitIndex`].
struct Builder<'r, 'm, 'a> {
    resolver: &'r Resolver<'r, 'a>,
    index: FitIndex<'m, 'a>,
    scope: ScopeId,
    /// The backends of the joblib contexts around the code, innermost last (`None`: one that sets none).
    backends: Vec<Option<Backend>>,
    runs_with: Option<&'a str>,
}

/// Whether `call` runs a function passed to it before it returns, in the calling thread, where the
/// joblib backend of the caller's block applies (joblib keeps it per thread): optuna's
/// `study.optimize(objective, ...)` with `n_jobs` absent or 1 (more jobs run the objective in a thread
/// pool, outside the block's backend).
fn runs_objective_in_caller_thread(call: &ast::ExprCall) -> bool {
    let Expr::Attribute(attribute) = call.func.as_ref() else { return false };
    attribute.attr.as_str() == "optimize"
        && call.arguments.find_keyword("n_jobs").is_none_or(|keyword| {
            matches!(&keyword.value, Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Int(int), .. }) if int.as_u64() == Some(1))
        })
}

impl<'a> Builder<'_, '_, 'a> {
    fn place(&self, offset: TextSize) -> Place<'a> {
        let cluster = self.backends.iter().rev().find_map(|backend| *backend) == Some(Backend::Cluster);
        Place { offset, scope: self.scope, cluster, runs_with: self.runs_with }
    }

    fn record_name(&mut self, name: &'a str, offset: TextSize, role: Role<'a>) {
        let occurrence = Occurrence { place: self.place(offset), role };
        self.index.names.entry(name).or_default().push(occurrence);
    }

    /// Visits `expr`, whose value becomes what `role` says.
    fn visit_in_role(&mut self, expr: &'a Expr, role: Role<'a>) {
        match expr {
            Expr::Name(name) if name.ctx == ExprContext::Load => {
                self.record_name(name.id.as_str(), name.start(), role);
            }
            Expr::Call(call) => self.visit_call(call, role),
            Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. })
                if matches!(role, Role::Argument(_)) =>
            {
                for element in elts {
                    self.visit_in_role(element, role);
                }
            }
            Expr::Dict(dict) if matches!(role, Role::Argument(_)) => {
                for item in &dict.items {
                    if let Some(key) = &item.key {
                        self.visit_expr(key);
                        self.visit_in_role(&item.value, role);
                    } else {
                        self.visit_expr(&item.value);
                    }
                }
            }
            Expr::Attribute(attribute) => {
                // `clf.classes_`, `clf.n_jobs = 2`; a method read without a call (`clf.fit`) escapes.
                let fitted_or_written = attribute.attr.as_str().ends_with('_') || attribute.ctx != ExprContext::Load;
                self.visit_in_role(&attribute.value, if fitted_or_written { Role::Inert } else { Role::Escape });
            }
            Expr::Compare(compare) => {
                self.visit_in_role(&compare.left, Role::Inert);
                for comparator in &compare.comparators {
                    self.visit_in_role(comparator, Role::Inert);
                }
            }
            Expr::IpyEscapeCommand(command) => self.record_magic(&command.value, command.start()),
            _ => self.walk_scoped(expr),
        }
    }

    fn visit_call(&mut self, call: &'a ast::ExprCall, role: Role<'a>) {
        // A call whose value escapes is kept only when it may be one a question starts from.
        if !matches!(role, Role::Escape) || call.arguments.find_keyword("n_jobs").is_some() {
            self.index.calls.insert(call.range(), Occurrence { place: self.place(call.start()), role });
        }
        match call.func.as_ref() {
            Expr::Attribute(attribute) => {
                self.visit_in_role(&attribute.value, Role::Receiver { method: attribute.attr.as_str(), call });
            }
            Expr::Name(name) => self.record_name(name.id.as_str(), name.start(), Role::Callee),
            func => self.visit_expr(func),
        }
        for argument in &call.arguments.args {
            match argument {
                Expr::Starred(_) => self.visit_expr(argument),
                _ => self.visit_in_role(argument, Role::Argument(call)),
            }
        }
        for keyword in &call.arguments.keywords {
            if keyword.arg.is_some() {
                self.visit_in_role(&keyword.value, Role::Argument(call));
            } else {
                self.visit_expr(&keyword.value);
            }
        }
    }

    /// The names in an IPython escape command: IPython runs it where it is written.
    fn record_magic(&mut self, command: &'a str, offset: TextSize) {
        let mut rest = command;
        let mut start = 0;
        while let Some(found) = rest.find(|character: char| character.is_alphabetic() || character == '_') {
            let word = &rest[found..];
            let end =
                word.find(|character: char| !(character.is_alphanumeric() || character == '_')).unwrap_or(word.len());
            // `.fit` after a name is an attribute, not a name.
            let preceded_by_dot = command[..start + found].ends_with('.');
            if !preceded_by_dot {
                self.record_name(&word[..end], offset, Role::Magic);
            }
            start += found + end;
            rest = &command[start..];
        }
    }

    /// Walks `expr`'s children, entering the scope it opens (a lambda or comprehension).
    fn walk_scoped(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(lambda) => {
                if let Some(parameters) = &lambda.parameters {
                    for parameter in parameters.iter_non_variadic_params() {
                        if let Some(default) = parameter.default() {
                            self.visit_expr(default);
                        }
                    }
                }
                // A lambda's body runs whenever it is called: no context, no known caller.
                let backends = std::mem::take(&mut self.backends);
                let runs_with = self.runs_with.take();
                let outer = self.enter_scope(lambda.start());
                self.visit_expr(&lambda.body);
                self.scope = outer;
                self.runs_with = runs_with;
                self.backends = backends;
            }
            Expr::ListComp(ast::ExprListComp { range, .. })
            | Expr::SetComp(ast::ExprSetComp { range, .. })
            | Expr::Generator(ast::ExprGenerator { range, .. })
            | Expr::DictComp(ast::ExprDictComp { range, .. }) => {
                let outer = self.enter_scope(range.start());
                visitor::walk_expr(self, expr);
                self.scope = outer;
            }
            _ => visitor::walk_expr(self, expr),
        }
    }

    fn enter_scope(&mut self, start: TextSize) -> ScopeId {
        let outer = self.scope;
        if let Some(scope) = self.resolver.model().scope_of_node(start) {
            self.scope = scope;
        }
        outer
    }

    /// The backend a `with` item's context manager sets, if it is a joblib context; `Some(None)` for one
    /// that sets no backend.
    fn with_backend(&self, item: &'a ast::WithItem) -> Option<Option<Backend>> {
        let Expr::Call(call) = &item.context_expr else { return None };
        let at = At { scope: self.scope, offset: call.start() };
        let (callee, _cut) = self.resolver.watch(|| self.resolver.qualified_name(&call.func, at));
        let kind = JoblibCall::from_name(&callee?)?;
        if kind == JoblibCall::Parallel {
            return None;
        }
        let backend = call.arguments.find_keyword("backend").map(|keyword| &keyword.value).or_else(|| {
            // `parallel_backend(backend, ...)` and `parallel_config(backend=None, ...)`: first positional.
            call.arguments.args.first().filter(|argument| !argument.is_starred_expr())
        });
        let Some(backend) = backend else { return Some(None) };
        let (value, _cut) =
            self.resolver.watch(|| self.resolver.eval(backend, At { scope: self.scope, offset: backend.start() }));
        Some(Some(match value.value {
            Value::Str(name) => Backend::of_name(&name),
            Value::None => Backend::Process,
            _ => Backend::Other,
        }))
    }
}

impl<'a> Visitor<'a> for Builder<'_, '_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Expr(ast::StmtExpr { value, .. }) => self.visit_in_role(value, Role::Inert),
            Stmt::Assign(assign) => {
                for target in &assign.targets {
                    self.visit_expr(target);
                }
                match assign.targets.as_slice() {
                    [Expr::Name(name)] => {
                        self.visit_in_role(&assign.value, Role::Bound { name: name.id.as_str(), target: name.range() })
                    }
                    _ => self.visit_expr(&assign.value),
                }
            }
            Stmt::AnnAssign(ast::StmtAnnAssign { target, annotation, value: Some(value), .. }) => {
                self.visit_expr(annotation);
                self.visit_expr(target);
                match target.as_ref() {
                    Expr::Name(name) => {
                        self.visit_in_role(value, Role::Bound { name: name.id.as_str(), target: name.range() });
                    }
                    _ => self.visit_expr(value),
                }
            }
            Stmt::With(with_stmt) => {
                let mut pushed = 0;
                for item in &with_stmt.items {
                    self.visit_with_item(item);
                    if let Some(backend) = self.with_backend(item) {
                        self.backends.push(backend);
                        pushed += 1;
                    }
                }
                self.visit_body(&with_stmt.body);
                self.backends.truncate(self.backends.len() - pushed);
            }
            Stmt::FunctionDef(function) => {
                for decorator in &function.decorator_list {
                    self.visit_decorator(decorator);
                }
                for parameter in function.parameters.iter_non_variadic_params() {
                    if let Some(default) = parameter.default() {
                        self.visit_expr(default);
                    }
                }
                // A body runs when the function is called: no context of its own; a module-level
                // function's calls are followed.
                let module_level = self.scope == ScopeId::MODULE
                    && self.resolver.model().scope_kind(self.scope) == ScopeKind::Module
                    && self.runs_with.is_none();
                let backends = std::mem::take(&mut self.backends);
                let runs_with = std::mem::replace(&mut self.runs_with, module_level.then_some(function.name.as_str()));
                let outer = self.enter_scope(function.start());
                self.visit_body(&function.body);
                self.scope = outer;
                self.runs_with = runs_with;
                self.backends = backends;
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_decorator(decorator);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
                // The body runs where the class is defined; its methods are not module-level functions.
                let outer = self.enter_scope(class.start());
                self.visit_body(&class.body);
                self.scope = outer;
            }
            Stmt::IpyEscapeCommand(command) => self.record_magic(&command.value, command.start()),
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        self.visit_in_role(expr, Role::Escape);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_of_a_callee_follows_its_name() {
        assert_eq!(Work::of_callee("sklearn.model_selection.cross_val_score"), Work::AtCall);
        assert_eq!(Work::of_callee("sklearn.inspection.permutation_importance"), Work::AtCall);
        assert_eq!(Work::of_callee("sklearn.ensemble.RandomForestClassifier"), Work::Estimator);
        assert_eq!(Work::of_callee("sklearn.pipeline.Pipeline"), Work::Estimator);
        assert_eq!(Work::of_callee("sklearn.pipeline.make_union"), Work::Estimator);
        assert_eq!(Work::of_callee("sklearn.model_selection.GridSearchCV"), Work::Search);
        assert_eq!(Work::of_callee("skopt.BayesSearchCV"), Work::Search);
    }

    #[test]
    fn backends_are_classified_by_name() {
        for (name, backend) in [
            ("dask", Backend::Cluster),
            ("ray", Backend::Cluster),
            ("spark", Backend::Cluster),
            ("ipyparallel", Backend::Cluster),
            ("loky", Backend::Process),
            ("threading", Backend::Threads),
            ("custom", Backend::Other),
        ] {
            assert_eq!(Backend::of_name(name), backend, "{name}");
        }
    }
}
