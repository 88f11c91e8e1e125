//! Values through functions of other modules of the project: a call whose callee is an imported
//! module-level function of another module of the project (`from utils.gcp import etl_task`) is followed
//! into that function's body, read from the module's tree that the project index keeps
//! ([`super::project_module`]). The call's arguments are evaluated here and passed as values detached from
//! this file ([`super::detached`]); the body is walked by the rules over the other module's semantic
//! model, and what they find there because of the call's values (and not with the defaults alone) is
//! reported at the call, the use inside the function a related location in the other file. The other
//! module's own check is unchanged (it reads the same tree when it comes later in the run).
//!
//! Bounded as calls of the module's own functions are ([`super::interprocedural`]): the calls followed
//! one inside the other ([`MAX_CALL_DEPTH`], shared), the calls of one function per file
//! ([`crate::limits::MAX_CALL_SITES`]), the other modules' code modelled for one file (each call builds
//! its callee's module's model: [`crate::limits::MAX_MODULE_MODEL_BYTES`]), and the file's budget, which
//! pays for each walk of a body. A limit reached on a call whose values may matter is CAP003 at the call.

use std::sync::Arc;

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use super::calls::{self, Argument, Bound, CallFrames, Site};
use super::checker::Checker;
use super::cluster_fits::LazyFitIndex;
use super::detached::Detacher;
use super::interprocedural::{WALK_BYTES_PER_STEP, is_plain, is_relevant, through_message};
use super::libraries;
use super::limits::{Cut, Limit, MAX_CALL_DEPTH};
use super::lookup::ProjectFunction;
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
    let Some(import) = imported_callee(checker, call) else { return };
    // Each callee is looked up once per module: most calls of a file call the same few functions.
    let module = checker.source.as_ptr() as usize;
    let callee = checker.text(call.func.range());
    if checker.followed.is_not_followed(module, import, callee) {
        return;
    }
    let at = checker.at(call.start());
    let (qualified, _) = checker.resolver.watch(|| checker.resolver.qualified_name(&call.func, at));
    let Some(qualified) = qualified else { return };
    if libraries::is_known_callee(&qualified) {
        checker.followed.not_followed(module, import, callee);
        return;
    }
    if !checker.resolver.spend_walk(LOOKUP_STEPS, call.start()) {
        return;
    }
    let function = match project.function(&qualified, checker.resolver.caps()) {
        Ok(Some(function)) => function,
        Ok(None) => {
            checker.followed.not_followed(module, import, callee);
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
    let mut base = call.func.as_ref();
    while let Expr::Attribute(attribute) = base {
        base = &attribute.value;
    }
    let Expr::Name(name) = base else { return None };
    let model = checker.resolver.model();
    match model.reaching_bindings(name.id.as_str(), checker.scope, call.start()) {
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
    // Followed only where the prefilter would let a caller through: the function's own text holds a word
    // the rules need (`ProjectIndex::imports_module_with_findings`).
    if !is_plain(def) || !crate::prefilter::function_may_have_findings(module.file.text(), def.name.as_str()) {
        return;
    }
    let caller_file = checker.own_file();
    let call_at = checker.at(call.start());
    let def_at = At { scope: ScopeId::MODULE, offset: def.start() };
    let detacher = Detacher { resolver: &checker.resolver, file: &caller_file };
    let mut passes_known = false;
    let arguments: Vec<(String, Argument<'_>)> = calls::binding(def, call, false)
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
    if !passes_known {
        return;
    }
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
    let resolver =
        Resolver::new(&model, checker.resolver.caps(), checker.resolver.budget()).with_project(&*function.project);
    let fits = (crate::holds(module.file.text(), "parallel_backend")
        || crate::holds(module.file.text(), "parallel_config"))
    .then(|| std::rc::Rc::new(LazyFitIndex::new(body, false, checker.resolver.budget())));
    let walk = |arguments| {
        let frames = CallFrames::at_depth(depth).with_call(scope, arguments);
        let mut walker = checker.for_module_call(resolver.with_frames(frames), &module.file, def, scope);
        walker.cluster_fits = fits.clone();
        if !walker.followed.relevant(def, || is_relevant(&walker, def)) {
            return Vec::new();
        }
        walker.visit_body(&def.body);
        walker.into_parts().0
    };
    let baseline = checker.followed.baseline(def, depth, || {
        walk(calls::defaults(def, def_at)).into_iter().map(|finding| (finding.rule, finding.range)).collect()
    });
    let name = def.name.as_str();
    let findings = walk(arguments);
    for finding in findings {
        if !baseline.contains(&(finding.rule, finding.range)) {
            let moved = rehome(checker, finding, call, name, &module.file, &caller_file);
            checker.report(moved);
        }
    }
}

/// The dict of the keywords a call passes to `**kwargs`: written keywords, and the entries of its
/// `**` splats (one that is not a known dict leaves the dict open).
fn keywords_dict<'a>(checker: &Checker<'_, 'a>, keywords: &[&'a ast::Keyword], at: At) -> DictValue<'a> {
    let mut dict = DictValue::default();
    for keyword in keywords {
        match &keyword.arg {
            Some(arg) => dict.entries.push(DictEntry::written(arg.to_string(), keyword.range, &keyword.value, at)),
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
    call: &ast::ExprCall,
    name: &str,
    callee_file: &Arc<SourceFile>,
    caller_file: &Arc<SourceFile>,
) -> Finding {
    let inside = finding.range;
    let (here, elsewhere): (Vec<_>, Vec<_>) =
        finding.related.into_iter().partition(|related| Arc::ptr_eq(&related.file, caller_file));
    let passing = |range: TextRange| {
        if !call.arguments.range().contains_range(range) {
            return None;
        }
        let keyword = call.arguments.keywords.iter().map(Ranged::range).find(|keyword| keyword.contains_range(range));
        Some(keyword.unwrap_or(range))
    };
    let primary = here.iter().find_map(|related| passing(related.range)).unwrap_or(call.func.range());
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
