//! CAP105 node-cpu-count: `os.cpu_count()` and friends flowing into a parallelism argument.
//!
//! Where a more specific rule covers the same argument (CAP103 for joblib's `n_jobs`, CAP104 for a
//! process pool's size), that rule reports it and this one stays quiet, unless the specific rule is off.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use crate::arguments::Argument;
use crate::checker::Checker;
use crate::cli_option::CliOption;
use crate::env::EnvWrite;
use crate::libraries::{
    JoblibCall, KnobSite, ML_LIBRARIES, PARALLELISM_KEYWORDS, POSITIONAL_PARALLELISM, PROCESS_POOLS, PoolKnob,
    argument_knobs, attribute_knob, describe_counter, is_thread_count_keyword,
};
use crate::paths::paths;
use crate::resolve::{Resolved, Value};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

const HELP: &str = "derive the count from the pod's CPU limit (the Downward API variable or a thread cap such as \
`int(os.environ[\"OMP_NUM_THREADS\"])`): `os.cpu_count()` ignores the cgroup quota";

/// Reports `value` when it is a node CPU count; `target` names what receives it (built only then).
fn check_value<'a>(
    checker: &mut Checker<'_, 'a>,
    range: TextRange,
    value: &'a Expr,
    target: impl FnOnce(&Checker<'_, 'a>) -> String,
) {
    let resolved = checker.eval(value);
    check_resolved(checker, range, &resolved, None, target);
}

/// Reports `resolved` when a path of it is a node CPU count (an argument passed through a splat labels
/// the splat).
fn check_resolved<'a>(
    checker: &mut Checker<'_, 'a>,
    range: TextRange,
    resolved: &Resolved<'a>,
    argument: Option<&Argument<'a>>,
    target: impl FnOnce(&Checker<'_, 'a>) -> String,
) {
    let node = paths(resolved).into_iter().find_map(|path| match &path.resolved.value {
        Value::NodeCpus { call, origin } => Some((*call, origin.clone(), path)),
        _ => None,
    });
    let Some((counter, origin, path)) = node else { return };
    let target = target(checker);
    let mut finding = Finding::new(Rule::NodeCpuCount, range, {
        let (counter, what) = describe_counter(counter);
        format!("{target} is sized from `{counter}`, which counts {what}")
    })
    .label("node-wide CPU count")
    .help(HELP);
    finding = checker.point_to(finding, origin, "counts every CPU of the node");
    finding = checker.point_to_path(finding, &path);
    if let Some(argument) = argument {
        finding = checker.point_to_splat(finding, argument);
    }
    checker.report(finding);
}

/// Whether a more specific rule reports this argument.
fn covered_elsewhere(checker: &Checker<'_, '_>, callee: Option<&str>, argument: &str) -> bool {
    let Some(callee) = callee else { return false };
    (argument == "n_jobs" && JoblibCall::from_name(callee).is_some() && checker.enabled(Rule::UnboundedJoblibParallel))
        || (PROCESS_POOLS.iter().any(|(name, keyword, _)| *name == callee && *keyword == argument)
            && checker.enabled(Rule::UnsizedProcessPool))
}

/// Names a command-line option sizing a pool goes by, besides the parallelism keywords.
const POOL_SIZE_OPTIONS: &[&str] =
    &["jobs", "workers", "n_workers", "threads", "processes", "n_processes", "num_processes", "procs", "nprocs"];

/// Whether a command-line option with this destination sizes a pool (`--n-jobs`, `--workers`).
fn is_parallelism_option(name: &str) -> bool {
    name != "limits" && (PARALLELISM_KEYWORDS.contains(&name) || POOL_SIZE_OPTIONS.contains(&name))
}

/// Parallelism keywords and known positional thread-count arguments.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::NodeCpuCount) {
        return;
    }
    for argument in checker.arguments(call).keywords() {
        let arg = argument.name();
        if !PARALLELISM_KEYWORDS.contains(&arg) || covered_elsewhere(checker, callee, arg) {
            continue;
        }
        let resolved = checker.eval_argument(argument);
        check_resolved(checker, argument.range(), &resolved, Some(argument), |checker| {
            format!("`{}({arg}=...)`", checker.callee_display(call))
        });
    }
    let Some(callee) = callee else { return };
    // The ML libraries' own knobs whose keyword is not a parallelism keyword everywhere
    // (`nlp.pipe(n_process=...)`, `ray.init(num_cpus=...)`, `LocalCluster(threads_per_worker=...)`).
    for knob in argument_knobs(callee) {
        let KnobSite::Argument { keyword, position } = knob.site else { continue };
        let Some(argument) = checker.arguments(call).argument(keyword, position) else { continue };
        // What the loops around this one check already.
        let by_keyword = argument.splat.is_some() || call.arguments.find_keyword(keyword).is_some();
        if (by_keyword && PARALLELISM_KEYWORDS.contains(&keyword))
            || (!by_keyword && POSITIONAL_PARALLELISM.iter().any(|(name, _)| *name == callee))
        {
            continue;
        }
        let resolved = checker.eval_argument(&argument);
        check_resolved(checker, argument.range(), &resolved, Some(&argument), |checker| {
            format!("`{}({keyword}=...)`", checker.callee_display(call))
        });
    }
    for &(name, index) in POSITIONAL_PARALLELISM {
        if name != callee {
            continue;
        }
        let Some(argument) = call.arguments.args.get(index) else { continue };
        let keyword =
            PROCESS_POOLS.iter().find(|(pool, ..)| *pool == callee).map_or("n_jobs", |(_, keyword, _)| *keyword);
        let is_joblib_or_pool =
            JoblibCall::from_name(callee).is_some() || PROCESS_POOLS.iter().any(|(pool, ..)| *pool == callee);
        if is_joblib_or_pool && covered_elsewhere(checker, Some(callee), keyword) {
            continue;
        }
        check_value(checker, argument.range(), argument, |checker| format!("`{}(...)`", checker.callee_display(call)));
    }
}

/// `parser.add_argument("--workers", default=os.cpu_count())`.
pub fn cli_option<'a>(checker: &mut Checker<'_, 'a>, option: &CliOption<'a>) {
    if !checker.enabled(Rule::NodeCpuCount) {
        return;
    }
    if let Some(name) = option.name_matching(is_parallelism_option) {
        let name = name.to_string();
        check_value(checker, option.range, option.default, |_| format!("the command-line option `{name}`"));
    }
}

/// `{"n_jobs": os.cpu_count()}`.
pub fn dict_literal<'a>(checker: &mut Checker<'_, 'a>, dict: &'a ast::ExprDict) {
    if !checker.enabled(Rule::NodeCpuCount) {
        return;
    }
    for item in &dict.items {
        let Some(Expr::StringLiteral(key)) = &item.key else { continue };
        let key_text = key.value.to_str();
        if is_thread_count_keyword(key_text) || matches!(key_text, "max_workers" | "processes" | "num_workers") {
            let range = TextRange::new(key.start(), item.value.end());
            check_value(checker, range, &item.value, |_| format!("`\"{key_text}\"`"));
        }
    }
}

/// `os.environ["OMP_NUM_THREADS"] = str(os.cpu_count())`: a cap set to the node's size caps nothing.
pub fn env_write<'a>(checker: &mut Checker<'_, 'a>, write: &EnvWrite<'a>) {
    if !checker.enabled(Rule::NodeCpuCount) {
        return;
    }
    for (variable, value) in &write.variables {
        if let Some(value) = value
            && checker.resolver.is_cap_variable(variable)
        {
            check_value(checker, write.range, value, |_| format!("the thread cap `{variable}`"));
        }
    }
}

/// `options.intra_op_num_threads = os.cpu_count()` on an object whose attribute is an ML library's knob
/// (an ONNX Runtime `SessionOptions`, followed by name).
pub fn target_assignment<'a>(checker: &mut Checker<'_, 'a>, target: &'a Expr, value: &'a Expr) {
    if !checker.enabled(Rule::NodeCpuCount) {
        return;
    }
    let Some(knob) = knob_attribute(checker, target) else { return };
    let attribute = knob.name();
    check_value(checker, TextRange::new(target.start(), value.end()), value, |checker| {
        let Expr::Attribute(target) = target else { return format!("`{attribute}`") };
        format!("`{}.{attribute}`", checker.text(target.value.range()))
    });
}

/// The knob an assignment target `object.attribute` sets, when `object` is made by a call capslint knows.
pub fn knob_attribute<'a>(checker: &Checker<'_, 'a>, target: &'a Expr) -> Option<&'static PoolKnob> {
    let Expr::Attribute(attribute) = target else { return None };
    let name = attribute.attr.as_str();
    // Only the knobs' own attribute names are worth resolving the object for.
    let is_knob = |knob: &PoolKnob| matches!(knob.site, KnobSite::Attribute(known) if known == name);
    if !ML_LIBRARIES.iter().any(|library| library.knobs.iter().any(is_knob)) {
        return None;
    }
    let object = checker.qualified_name_at(&attribute.value, checker.at(attribute.start()))?;
    attribute_knob(object.strip_suffix("()")?, name)
}
