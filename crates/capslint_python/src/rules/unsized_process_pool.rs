//! CAP104 unsized-process-pool: process pools whose worker count defaults to (or is taken from) the
//! node's CPUs.

use ruff_python_ast as ast;
use ruff_text_size::Ranged;

use crate::checker::{Checker, call_argument, kwargs_splats};
use crate::libraries::{PROCESS_POOLS, describe_counter};
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
    let Some(count) = call_argument(call, keyword, Some(index)) else {
        if kwargs_splats(call).next().is_some() && !checker.strict {
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
    let range = call.arguments.find_keyword(keyword).map_or(count.range(), Ranged::range);
    let resolved = checker.eval(count);
    let finding = match resolved.value {
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
            checker.point_to(finding, origin, "counts every CPU of the node")
        }
        Value::Unknown(_) if checker.strict => Finding::new(
            Rule::UnsizedProcessPool,
            range,
            format!("`{display}` takes its worker count from a value capslint cannot see (strict mode)"),
        )
        .label("worker count of unknown provenance"),
        _ => return,
    };
    checker.report(finding.help(help));
}
