//! Values through functions of other modules of the project: a call whose callee is an imported
//! module-level function of another module of the project (`from utils.gcp import etl_task`) is followed
//! into that function's body, read from the module's tree that the project index keeps
//! ([`super::project_module`]). The call's arguments are evaluated here and passed as values detached from
//! this file ([`super::detached`]); the body is walked by the rules over the other module's semantic
//! model, and what they find there because of the call's values (and not with the defaults alone) is
//! reported at the call, the use inside the function a related location in the other file. The other
//! module's own check is unchanged (it reads the same tree when it comes later in the run).
//!
//! A method called on an instance of a class of another module is followed the same way when the walk
//! sees the instance constructed (`Model(params).fit()`, through a name, or through an attribute of the
//! method's receiver assigned just before): the class's own `__init__`, when it has a plain one, is bound
//! to the constructor's values.
//!
//! Bounded as calls of the module's own functions are ([`super::interprocedural`]): the calls followed
//! one inside the other ([`MAX_CALL_DEPTH`], shared), the calls of one function per file
//! ([`crate::limits::MAX_CALL_SITES`]), the other modules' code modelled for one file (each call builds
//! its callee's module's model: [`crate::limits::MAX_MODULE_MODEL_BYTES`]), and the file's budget, which
//! pays for each walk of a body. A limit reached on a call whose values may matter is CAP003 at the call.

use std::sync::Arc;

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use super::calls::{self, Argument, Bound, CallFrames, Instance, Lookup, Site, is_plain};
use super::checker::Checker;
use super::cluster_fits::LazyFitIndex;
use super::detached::Detacher;
use super::interprocedural::{WALK_BYTES_PER_STEP, is_relevant, through_message};
use super::libraries;
use super::limits::{Cut, Limit, MAX_CALL_DEPTH};
use super::lookup::{ProjectFunction, ProjectLookup};
use super::own_instance::may_size_a_pool;
use super::project_module::ProjectModule;
use super::receivers;
use super::recovery::Distrusted;
use super::resolve::{At, Resolver, Value};
use super::semantic::{BindingKind, ScopeId, SemanticModel};
use super::value::{DictEntry, DictValue, Resolved};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::source::SourceFile;

/// What looking up a callee in the project costs, in units of the file's budget.
const LOOKUP_STEPS: u64 = 64;

/// Follows `call` into the body of the function of another module of the project it calls, when it
/// does, and reports at the call what the call's values cause there.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall) {
    let Some(project) = checker.resolver.project() else { return };
    // A call that passes nothing has nothing to report at the call: the body sees its defaults alone.
    if call.arguments.is_empty() {
        return;
    }
    let Some(import) = imported_callee(checker, call) else {
        method_call(checker, call);
        return;
    };
    // Each callee is looked up once per module: most calls of a file call the same few functions.
    let module = checker.source.as_ptr() as usize;
    let callee = checker.text(call.func.range());
    if checker.followed.is_not_followed(module, import, Lookup::Function, callee) {
        return;
    }
    let at = checker.at(call.start());
    let (qualified, _) = checker.resolver.watch(|| checker.resolver.qualified_name(&call.func, at));
    let Some(qualified) = qualified else { return };
    if libraries::is_known_callee(&qualified) {
        checker.followed.not_followed(module, import, Lookup::Function, callee);
        return;
    }
    if !checker.resolver.spend_walk(LOOKUP_STEPS, call.start()) {
        return;
    }
    let function = match project.function(&qualified, checker.resolver.caps()) {
        Ok(Some(function)) => function,
        Ok(None) => {
            checker.followed.not_followed(module, import, Lookup::Function, callee);
            return;
        }
        Err(cut) => {
            let passes_known = call
                .arguments
                .args
                .iter()
                .chain(call.arguments.keywords.iter().map(|keyword| &keyword.value))
                .any(|expr| is_known(&checker.resolver.watch(|| checker.resolver.eval(expr, at)).0));
            checker.note_cut(Some(cut), passes_known, call.range());
            return;
        }
    };
    follow(checker, call, &function);
}

/// Where the import is that binds the callee's name, when the callee is such a name or an attribute of
/// one (`gcp.etl_task`).
fn imported_callee(checker: &Checker<'_, '_>, call: &ast::ExprCall) -> Option<u32> {
    imported_callee_at(checker, call, checker.at(call.start()))
}

/// [`imported_callee`] of a call evaluated at `at`.
fn imported_callee_at(checker: &Checker<'_, '_>, call: &ast::ExprCall, at: At) -> Option<u32> {
    let mut base = call.func.as_ref();
    while let Expr::Attribute(attribute) = base {
        base = &attribute.value;
    }
    let Expr::Name(name) = base else { return None };
    let model = checker.resolver.model();
    match model.reaching_bindings(name.id.as_str(), at.scope, at.offset) {
        Some((_, [binding])) if matches!(binding.kind, BindingKind::Import(_)) => Some(binding.range.start().to_u32()),
        _ => None,
    }
}

fn is_known(resolved: &Resolved<'_>) -> bool {
    !matches!(resolved.value, Value::Unknown(_))
}

/// Follows `call` into `function`, its arguments bound to the values the call passes.
fn follow<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, function: &ProjectFunction<'_>) {
    let module = Arc::clone(&function.module);
    let Some(def) = module.function(function.def) else { return };
    // The project gives only a function the prefilter would let a caller through for
    // (`ProjectIndex::imports_module_with_findings`): one that may have findings when followed.
    if !is_plain(def) {
        return;
    }
    let caller_file = checker.own_file();
    let def_at = At { scope: ScopeId::MODULE, offset: def.start() };
    let (arguments, passes_known) = detached_arguments(checker, &caller_file, (def, def_at), call, false);
    if !passes_known {
        return;
    }
    let target = Target { module: &module, project: &*function.project, def, instance: None };
    walk_into(checker, call, &target, arguments, &caller_file);
}

/// The parameters of `def` (its `def` evaluated at `def_at`) bound to what `call` passes, evaluated here
/// and detached from this file, and whether any of those values is known.
fn detached_arguments<'a, 'f>(
    checker: &Checker<'_, 'a>,
    caller_file: &Arc<SourceFile>,
    (def, def_at): (&'f ast::StmtFunctionDef, At),
    call: &'a ast::ExprCall,
    receiver: bool,
) -> (Vec<(String, Argument<'f>)>, bool) {
    let call_at = checker.at(call.start());
    let detacher = Detacher { resolver: &checker.resolver, file: caller_file };
    let mut passes_known = false;
    let arguments = calls::binding(def, call, receiver)
        .into_iter()
        .map(|(name, bound)| {
            let argument = match bound {
                Bound::Passed(expr) => {
                    let (resolved, _) = checker.resolver.watch(|| checker.resolver.eval(expr, call_at));
                    passes_known |= is_known(&resolved);
                    Argument::Value(detacher.resolved(&resolved.through(expr.range())))
                }
                Bound::Default(expr) => Argument::Expr { expr, at: def_at, passed: false },
                Bound::Keywords(keywords) => {
                    passes_known |= !keywords.is_empty();
                    let dict = keywords_dict(checker, &keywords, call_at);
                    Argument::Value(detacher.resolved(&Resolved::of(Value::Dict(std::rc::Rc::new(dict)))))
                }
            };
            (name, argument)
        })
        .collect();
    (arguments, passes_known)
}

/// A body of another module that a call is followed into.
struct Target<'t> {
    module: &'t ProjectModule,
    /// The project as that module sees it.
    project: &'t dyn ProjectLookup,
    /// The function or method.
    def: &'t ast::StmtFunctionDef,
    /// For a method, the instance it is called on.
    instance: Option<ForeignInstance<'t>>,
}

/// An instance of a class of another module, constructed in view of the call: its class, the class's own
/// `__init__` if any, and the constructor call with the arguments it binds to `__init__`'s parameters.
struct ForeignInstance<'t> {
    class: &'t ast::StmtClassDef,
    /// The class's own `__init__`, when it defines one plainly: without it, what the method reads of the
    /// instance is unknown.
    init: Option<&'t ast::StmtFunctionDef>,
    constructor: &'t ast::ExprCall,
    arguments: Vec<(String, Argument<'t>)>,
}

/// Walks `target`'s body for `call` with its parameters bound to `arguments` (and, for a method, its
/// instance's `__init__` to the constructor's), within the limits of following calls, and reports at
/// the call what the call's values cause there and the body's defaults alone do not.
fn walk_into<'a, 't>(
    checker: &mut Checker<'_, 'a>,
    call: &'a ast::ExprCall,
    target: &Target<'t>,
    arguments: Vec<(String, Argument<'t>)>,
    caller_file: &Arc<SourceFile>,
) {
    let (module, def) = (target.module, target.def);
    let depth = checker.resolver.frames().map_or(0, |frames| frames.depth());
    if depth >= MAX_CALL_DEPTH as usize {
        checker.note_cut(Some(Cut::here(Limit::CallDepth, call.range())), true, call.range());
        return;
    }
    match checker.followed.take_site(def) {
        Site::Followed => {}
        Site::FirstBeyond => {
            checker.note_cut(Some(Cut::here(Limit::CallSites, call.func.range())), true, call.range());
            return;
        }
        Site::Beyond => return,
    }
    match checker.followed.take_model_bytes(module.file.text().len() as u64) {
        Site::Followed => {}
        Site::FirstBeyond => {
            checker.note_cut(Some(Cut::here(Limit::ModuleModels, call.func.range())), true, call.range());
            return;
        }
        Site::Beyond => return,
    }
    let units = u64::from(def.range.len().to_u32()) / WALK_BYTES_PER_STEP + 1;
    if !checker.resolver.spend_walk(units, call.start()) {
        return;
    }
    let body = &module.parsed.syntax().body;
    let model = SemanticModel::build(body, &Distrusted::none());
    let Some(scope) = model.scope_of_node(def.start()) else { return };
    let def_scope = model.parent(scope).unwrap_or(ScopeId::MODULE);
    // The defaults alone see no instance; the call sees the one its constructor built.
    let frames = CallFrames::at_depth(depth);
    let mut instance_frames = frames.clone();
    if let Some(instance) = &target.instance
        && let Some(init) = instance.init
    {
        let Some(init_scope) = model.scope_of_node(init.start()) else { return };
        let Some(receiver) = def.parameters.posonlyargs.iter().chain(&def.parameters.args).next() else { return };
        instance_frames.bind(init_scope, instance.arguments.clone());
        let receiver = receiver.parameter.name.as_str();
        instance_frames.set_instance(scope, Instance { class: instance.class, receiver, init_scope });
    }
    let resolver =
        Resolver::new(&model, checker.resolver.caps(), checker.resolver.budget()).with_project(target.project);
    let fits = (crate::holds(module.file.text(), "parallel_backend")
        || crate::holds(module.file.text(), "parallel_config"))
    .then(|| std::rc::Rc::new(LazyFitIndex::new(body, false, checker.resolver.budget())));
    let walk = |frames: &CallFrames<'t>, arguments| {
        let frames = frames.with_call(scope, arguments);
        let mut walker = checker.for_module_call(resolver.with_frames(frames), &module.file, def, (scope, def_scope));
        walker.cluster_fits = fits.clone();
        if !walker.followed.relevant(def, || is_relevant(&walker, def)) {
            return Vec::new();
        }
        walker.visit_body(&def.body);
        walker.into_parts().0
    };
    let def_at = At { scope: def_scope, offset: def.start() };
    let baseline = checker.followed.baseline(def, depth, || {
        walk(&frames, calls::defaults(def, def_at)).into_iter().map(|finding| (finding.rule, finding.range)).collect()
    });
    let name = def.name.as_str();
    let constructor = target.instance.as_ref().map(|instance| instance.constructor);
    for finding in walk(&instance_frames, arguments) {
        // Through an instance, only what a value from this file causes: a default of the class's own
        // (`self.params.get("n_jobs", -1)` for a `params` without the key) is reported in its module.
        let from_caller = || finding.related.iter().any(|related| Arc::ptr_eq(&related.file, caller_file));
        if !baseline.contains(&(finding.rule, finding.range)) && (target.instance.is_none() || from_caller()) {
            let moved = rehome(checker, finding, (call, constructor), name, &module.file, caller_file);
            checker.report(moved);
        }
    }
}

/// Follows a method call on an instance of a class of another module of the project that the walk sees
/// constructed ([`receivers::constructor_call`]) into the method's body, with the class's own `__init__`
/// (when it has a plain one) bound to the constructor's arguments: a class that may have findings when
/// followed, as the prefilter asks of the classes a file imports
/// ([`crate::project::ProjectIndex::imports_module_with_findings`]).
fn method_call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall) {
    let Expr::Attribute(attribute) = call.func.as_ref() else { return };
    let Some(project) = checker.resolver.project() else { return };
    let Some((constructor, constructor_at)) =
        receivers::constructor_call(checker, &attribute.value, checker.at(call.start()))
    else {
        return;
    };
    if call.arguments.is_empty() && constructor.arguments.is_empty() {
        return;
    }
    // Each imported class is looked up once per module, as callees are.
    let Some(import) = imported_callee_at(checker, constructor, constructor_at) else { return };
    let module_key = checker.source.as_ptr() as usize;
    let class_name = checker.text(constructor.func.range());
    if checker.followed.is_not_followed(module_key, import, Lookup::Class, class_name) {
        return;
    }
    let (qualified, _) = checker.resolver.watch(|| checker.resolver.qualified_name(&constructor.func, constructor_at));
    let Some(qualified) = qualified else { return };
    if !checker.resolver.spend_walk(LOOKUP_STEPS, call.start()) {
        return;
    }
    // Asked of the class's text, before its module is parsed: most classes are not the project's, or
    // hold no word the rules need.
    if libraries::is_known_callee(&qualified) || !project.class_may_have_findings(&qualified) {
        checker.followed.not_followed(module_key, import, Lookup::Class, class_name);
        return;
    }
    if !(passes_a_pool_size(checker, call, checker.at(call.start()))
        || passes_a_pool_size(checker, constructor, constructor_at))
    {
        return;
    }
    let class = match project.class(&qualified, checker.resolver.caps()) {
        Ok(Some(class)) => class,
        Ok(None) => {
            checker.followed.not_followed(module_key, import, Lookup::Class, class_name);
            return;
        }
        Err(cut) => {
            checker.note_cut(Some(cut), true, call.range());
            return;
        }
    };
    let module = Arc::clone(&class.module);
    let Some(class_def) = module.class(class.def) else { return };
    let plain_method = |name: &str| {
        let mut methods = class_def.body.iter().filter_map(|stmt| match stmt {
            ast::Stmt::FunctionDef(method) if method.name.as_str() == name => Some(method),
            _ => None,
        });
        match (methods.next(), methods.next()) {
            (Some(method), None) if method.decorator_list.is_empty() => Some(method),
            _ => None,
        }
    };
    let Some(method) = plain_method(attribute.attr.as_str()) else { return };
    // Without a plain `__init__` of its own, what the method reads of the instance is unknown.
    let init = plain_method("__init__");
    let module_level = |name: &str| project.defines_with_findings(module.file.path(), name);
    let relevant = || method_may_have_findings(module.file.text(), class_def, method, module_level);
    if !checker.followed.relevant(method, relevant) {
        return;
    }
    let caller_file = checker.own_file();
    // Methods are evaluated in their class's scope, which the other module's model places: the
    // defaults of their parameters are constants or module-level names in practice, looked up there.
    let def_at = At { scope: ScopeId::MODULE, offset: class_def.start() };
    let (arguments, passes_method) = detached_arguments(checker, &caller_file, (method, def_at), call, true);
    let (init_arguments, passes_init) = match init {
        Some(init) => detached_arguments(checker, &caller_file, (init, def_at), constructor, true),
        None => (Vec::new(), false),
    };
    if !(passes_method || passes_init) {
        return;
    }
    let instance = ForeignInstance { class: class_def, init, constructor, arguments: init_arguments };
    let target = Target { module: &module, project: &*class.project, def: method, instance: Some(instance) };
    walk_into(checker, call, &target, arguments, &caller_file);
}

/// Whether `method` of `class`, in the module's `text`, may have findings when a call of it is followed,
/// as a followed function may: its own text holds a word the rules need, or it names a method of the class
/// that does (`self._fit(X, y, workers)`, however many methods lie between) or a definition of the module
/// that may have findings (`module_level`, [`crate::prefilter::definitions::with_findings`]).
fn method_may_have_findings(
    text: &str,
    class: &ast::StmtClassDef,
    method: &ast::StmtFunctionDef,
    module_level: impl Fn(&str) -> bool,
) -> bool {
    let mut methods: rustc_hash::FxHashMap<&str, Vec<&ast::StmtFunctionDef>> = rustc_hash::FxHashMap::default();
    for stmt in &class.body {
        if let ast::Stmt::FunctionDef(method) = stmt {
            methods.entry(method.name.as_str()).or_default().push(method);
        }
    }
    // Each name is looked up once, whichever method writes it.
    let mut seen = rustc_hash::FxHashSet::from_iter([method.name.as_str(), class.name.as_str()]);
    let mut pending = vec![method];
    while let Some(current) = pending.pop() {
        let current_text = text.get(current.range.to_std_range()).unwrap_or_default();
        if crate::prefilter::names_a_word(current_text) {
            return true;
        }
        for name in crate::prefilter::definitions::identifiers(current_text) {
            if seen.insert(name) {
                if module_level(name) {
                    return true;
                }
                pending.extend(methods.get(name).into_iter().flatten().copied());
            }
        }
    }
    false
}

/// Whether `call` (evaluated at `at`) passes a value that may size a pool
/// ([`crate::own_instance::may_size_a_pool`]) positionally, through `**`, or by a keyword that names a
/// thread count, or a dict by any keyword: what a method or a constructor of another module's class must
/// be passed for its body to be walked. A constructor's `random_state=0` sends no walk.
fn passes_a_pool_size<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall, at: At) -> bool {
    let value = |expr: &'a Expr| checker.resolver.watch(|| checker.resolver.eval(expr, at)).0.value;
    let positional = call.arguments.args.iter().any(|argument| {
        let argument = if let Expr::Starred(starred) = argument { starred.value.as_ref() } else { argument };
        may_size_a_pool(&value(argument))
    });
    positional
        || call.arguments.keywords.iter().any(|keyword| match (&keyword.arg, value(&keyword.value)) {
            (_, Value::Dict(_)) => true,
            (Some(name), value) => {
                capslint_cpu::keywords::is_thread_count_field(name.as_str()) && may_size_a_pool(&value)
            }
            (None, value) => may_size_a_pool(&value),
        })
}

/// The dict of the keywords a call passes to `**kwargs`: written keywords, and the entries of its
/// `**` splats (one that is not a known dict leaves the dict open).
fn keywords_dict<'a>(checker: &Checker<'_, 'a>, keywords: &[&'a ast::Keyword], at: At) -> DictValue<'a> {
    let mut dict = DictValue::default();
    for keyword in keywords {
        match &keyword.arg {
            Some(arg) => dict.entries.push(DictEntry::written(arg.as_str(), keyword.range, &keyword.value, at)),
            None => match checker.resolver.watch(|| checker.resolver.eval(&keyword.value, at)).0.value {
                Value::Dict(splat) => dict.entries.extend(splat.effective_entries().cloned()),
                _ => dict.open = true,
            },
        }
    }
    dict.dedup();
    dict
}

/// A finding of another module's function body caused by the values `call` passes, moved to the call:
/// at the argument that passes the value when a place the finding names is in it (the whole keyword
/// argument), else at the callee's name; its labels in the other module become related locations there,
/// the use inside the function among them.
fn rehome(
    checker: &Checker<'_, '_>,
    finding: Finding,
    (call, constructor): (&ast::ExprCall, Option<&ast::ExprCall>),
    name: &str,
    callee_file: &Arc<SourceFile>,
    caller_file: &Arc<SourceFile>,
) -> Finding {
    let inside = finding.range;
    let (here, elsewhere): (Vec<_>, Vec<_>) =
        finding.related.into_iter().partition(|related| Arc::ptr_eq(&related.file, caller_file));
    let primary = here
        .iter()
        .find_map(|related| receivers::argument_passing(checker, call, constructor, related.range))
        .unwrap_or(call.func.range());
    let names_related = !here.is_empty() || !elsewhere.is_empty();
    let message = through_message(finding.message, names_related, name);
    let mut moved = Finding::new(finding.rule, primary, message).label(finding.label);
    if let Some(help) = finding.help {
        moved = moved.help(help);
    }
    for related in here {
        if !primary.contains_range(related.range) {
            moved = checker.point_to(moved, related.range, &related.text);
        }
    }
    for label in finding.secondary {
        moved = moved.related(Arc::clone(callee_file), label.range, label.text);
    }
    for related in elsewhere {
        moved = moved.related(related.file, related.range, related.text);
    }
    moved.related(Arc::clone(callee_file), inside, format!("the value is used here, in `{name}`"))
}
