//! CAP104 unsized-process-pool: process pools whose worker count defaults to (or is taken from) the
//! node's CPUs.

use ruff_python_ast as ast;
use ruff_text_size::{Ranged, TextRange};

use crate::checker::Checker;
use crate::libraries::{PROCESS_POOLS, describe_counter};
use crate::paths::paths;
use crate::resolve::Value;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// Checks `multiprocessing.Pool`, `ProcessPoolExecutor` and loky executors.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::UnsizedProcessPool) {
        return;
    }
    let Some(&(_, keyword, index)) = callee.and_then(|callee| PROCESS_POOLS.iter().find(|(name, ..)| *name == callee))
    else {
        return;
    };
    let display = checker.callee_display(call);
    let help = format!(
        "pass `{keyword}=` derived from the pod's CPU limit, e.g. `{keyword}=int(os.environ[\"LOKY_MAX_CPU_COUNT\"])`"
    );
    let arguments = checker.arguments(call);
    let Some(count) = arguments.argument(keyword, Some(index)) else {
        if arguments.is_open() && !checker.strict {
            return;
        }
        checker.report(
            Finding::new(
                Rule::UnsizedProcessPool,
                call.func.range(),
                format!(
                    "`{display}()` without `{keyword}` starts one process per node CPU, not per CPU of the pod's limit"
                ),
            )
            .label(format!("no `{keyword}`"))
            .help(help),
        );
        return;
    };
    let range = count.range();
    let resolved = checker.eval_argument(&count);
    let bad = paths(&resolved).into_iter().find_map(|path| {
        let finding = path_finding(checker, range, &display, keyword, &path.resolved.value)?;
        Some(checker.point_to_path(finding, &path))
    });
    if let Some(finding) = bad {
        let finding = checker.point_to_splat(finding, &count);
        checker.report(finding.help(help));
    }
}

/// The finding of one path's value of the worker count, if that value is bad.
fn path_finding(
    checker: &Checker<'_, '_>,
    range: TextRange,
    display: &str,
    keyword: &str,
    value: &Value<'_>,
) -> Option<Finding> {
    Some(match value {
        Value::None => Finding::new(
            Rule::UnsizedProcessPool,
            range,
            format!("`{display}({keyword}=None)` starts one process per node CPU, not per CPU of the pod's limit"),
        )
        .label("None means every CPU of the node"),
        Value::NodeCpus { call: counter, origin } => {
            let finding = Finding::new(Rule::UnsizedProcessPool, range, {
                let (counter, what) = describe_counter(counter);
                format!("`{display}` sizes its pool from `{counter}`: {what}")
            })
            .label("one process per node core");
            checker.point_to(finding, origin.clone(), "counts every CPU of the node")
        }
        Value::Unknown(_) if checker.strict => Finding::new(
            Rule::UnsizedProcessPool,
            range,
            format!("`{display}` takes its worker count from a value capslint cannot see (strict mode)"),
        )
        .label("worker count of unknown provenance"),
        _ => return None,
    })
}
