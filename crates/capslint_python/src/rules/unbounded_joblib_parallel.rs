//! CAP103 unbounded-joblib-parallel: joblib parallelism sized from node cores or data, or process
//! workers without an inner thread cap (ADR-0096: `n_jobs x threads_per_process <= limit`).

use ruff_python_ast as ast;

use crate::arguments::{Argument, CallArguments};
use crate::checker::{Checker, call_argument};
pub use crate::joblib_contexts::{Backend, ParallelContext};
use crate::libraries::{JoblibCall, describe_counter};
use crate::paths::paths;
use crate::resolve::{Unknown, Value};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// Enters a `with` item: a joblib context manager (`parallel_config(...)`, `parallel_backend(...)`) or a
/// cap helper configures the `Parallel` calls in its body. Returns whether a context was pushed onto
/// [`Checker::contexts`] (the walk pops it after the body).
pub fn enter_with_item<'a>(checker: &mut Checker<'_, 'a>, item: &'a ast::WithItem) -> bool {
    let ast::Expr::Call(call) = &item.context_expr else { return false };
    let Some(callee) = checker.callee(call) else { return false };
    if checker.resolver.is_cap_helper(&callee) {
        checker.contexts.push(ParallelContext { backend: None, inner_capped: true });
        return true;
    }
    let Some(kind) = JoblibCall::from_name(&callee) else { return false };
    if kind == JoblibCall::Parallel {
        return false;
    }
    let backend = call_argument(call, "backend", Some(0)).map(|backend| backend_of(checker, backend));
    let inner_capped = call_argument(call, "inner_max_num_threads", None)
        .is_some_and(|value| !matches!(checker.eval(value).value, Value::None));
    checker.contexts.push(ParallelContext { backend, inner_capped });
    true
}

/// Classifies a backend argument.
fn backend_of<'a>(checker: &Checker<'_, 'a>, expr: &'a ast::Expr) -> Backend {
    match checker.eval(expr).value {
        Value::Str(name) => Backend::of_name(&name),
        Value::None => Backend::Process,
        _ => Backend::Other,
    }
}

/// The positional index of `n_jobs` and `backend` in each entry point's signature.
const fn positions(kind: JoblibCall) -> (usize, usize) {
    match kind {
        // Parallel(n_jobs=None, backend=None, ...)
        JoblibCall::Parallel => (0, 1),
        // parallel_config(backend=None, n_jobs=None, ...), parallel_backend(backend, n_jobs=-1, ...)
        JoblibCall::ParallelConfig | JoblibCall::ParallelBackend => (1, 0),
    }
}

/// The backend a joblib call runs on: its own arguments, else (for `Parallel`) the innermost enclosing
/// context's.
pub fn backend<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall, kind: JoblibCall) -> Backend {
    let (_, backend_index) = positions(kind);
    if let Some(prefer) = call_argument(call, "prefer", None)
        && matches!(checker.eval(prefer).value, Value::Str(ref value) if value == "threads")
    {
        return Backend::Threads;
    }
    if let Some(require) = call_argument(call, "require", None)
        && matches!(checker.eval(require).value, Value::Str(ref value) if value == "sharedmem")
    {
        return Backend::Threads;
    }
    match call_argument(call, "backend", Some(backend_index)) {
        Some(expr) => backend_of(checker, expr),
        None if kind == JoblibCall::Parallel => {
            checker.contexts.iter().rev().find_map(|context| context.backend).unwrap_or(Backend::Process)
        }
        None => Backend::Process,
    }
}

fn inner_capped<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall, kind: JoblibCall) -> bool {
    let own = kind != JoblibCall::Parallel
        && call_argument(call, "inner_max_num_threads", None)
            .is_some_and(|value| !matches!(checker.eval(value).value, Value::None));
    own || checker.contexts.iter().any(|context| context.inner_capped)
}

/// Checks `Parallel`, `parallel_config` and `parallel_backend` calls.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::UnboundedJoblibParallel) {
        return;
    }
    let Some(kind) = callee.and_then(JoblibCall::from_name) else { return };
    let (n_jobs_index, _) = positions(kind);
    let arguments = checker.arguments(call);
    let Some(n_jobs) = arguments.argument("n_jobs", Some(n_jobs_index)) else { return };
    let display = checker.callee_display(call);
    let resolved = checker.eval_argument(&n_jobs);
    // The first path whose value is bad for this rule is reported, labelled.
    for path in paths(&resolved) {
        let Some(finding) = path_finding(checker, call, kind, &arguments, &n_jobs, &display, &path.resolved.value)
        else {
            continue;
        };
        let finding = finding.help(
            "derive `n_jobs` from the pod's CPU limit and pair it with `inner_max_num_threads` in an enclosing \
             `parallel_config(backend=\"loky\", inner_max_num_threads=...)` so that n_jobs x threads <= limit",
        );
        let finding = match path.resolved.binding.clone() {
            Some(binding) => checker.point_to(finding, binding, "defined here"),
            None => finding,
        };
        let finding = checker.point_to_path(finding, &path);
        let finding = checker.point_to_splat(finding, &n_jobs);
        checker.report(finding);
        return;
    }
}

/// The finding of one path's value of `n_jobs`, if that value is bad.
fn path_finding<'a>(
    checker: &Checker<'_, 'a>,
    call: &'a ast::ExprCall,
    kind: JoblibCall,
    arguments: &CallArguments<'a>,
    n_jobs: &Argument<'a>,
    display: &str,
    value: &Value<'a>,
) -> Option<Finding> {
    let argument_range = n_jobs.range();
    Some(match value {
        Value::NodeCpus { call: counter, origin } => {
            let mut finding = Finding::new(Rule::UnboundedJoblibParallel, argument_range, {
                let (counter, what) = describe_counter(counter);
                format!("`{display}` sizes its workers from `{counter}`: {what}")
            })
            .label("one worker per node core");
            finding = checker.point_to(finding, origin.clone(), "counts every CPU of the node");
            finding
        }
        Value::DataSize { origin } => {
            let mut finding = Finding::new(
                Rule::UnboundedJoblibParallel,
                argument_range,
                format!("`{display}` sizes its workers from the size of the data, unbounded by the pod's CPU limit"),
            )
            .label("one worker per item");
            finding = checker.point_to(finding, origin.clone(), "grows with the data");
            finding
        }
        Value::Int(1) | Value::Int(i64::MIN..=0) | Value::None => return None,
        count @ (Value::Int(_) | Value::Capped) => {
            let workers = match count {
                Value::Int(value) => value.to_string(),
                _ => format!("`{}`", n_jobs.value_text(checker.source)),
            };
            if backend(checker, call, kind) != Backend::Process || inner_capped(checker, call, kind) {
                return None;
            }
            Finding::new(
                Rule::UnboundedJoblibParallel,
                argument_range,
                format!(
                    "`{display}` starts {workers} worker processes without an inner thread cap: each one sizes its own \
                     BLAS/OpenMP pools, so workers x threads exceeds the limit"
                ),
            )
            .label("process workers, each with uncapped threads")
        }
        Value::Unknown(Unknown::Parameter | Unknown::Other) if checker.strict => {
            if arguments.is_open() && arguments.keyword("n_jobs").is_none() {
                return None;
            }
            Finding::new(
                Rule::UnboundedJoblibParallel,
                argument_range,
                format!("`{display}` takes `n_jobs` from a value capslint cannot see (strict mode)"),
            )
            .label("n_jobs of unknown provenance")
        }
        _ => return None,
    })
}
