//! CAP101 n-jobs-all-cores: a parallelism argument that means "every core of the node".

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::unbounded_joblib_parallel::Backend;
use crate::checker::{Checker, call_argument};
use crate::cli_option::{self, CliOption};
use crate::cluster_fits::Work;
use crate::libraries::{
    AllCpus, Booster, BoosterEntry, JoblibCall, KnobSite, PoolKnob, argument_knobs, booster_entry,
    is_joblib_estimator_library, is_query_call, is_thread_count_field, is_thread_count_keyword,
};
use crate::paths::paths;
use crate::resolve::{Resolved, Unknown, Value};
use crate::value::Alternative;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::fix::Fix;
use capslint_diagnostics::registry::Rule;

/// The help of an ML library's knob, whose count is not an `n_jobs`.
const KNOB_HELP: &str = "pass a count derived from the pod's CPU limit, e.g. `int(os.environ[\"OMP_NUM_THREADS\"])`, \
or `1` and let the thread caps use the budget";

const HELP: &str = "pass a count derived from the pod's CPU limit, e.g. `n_jobs=int(os.environ[\"OMP_NUM_THREADS\"])`, \
or `n_jobs=1` and let the thread caps use the budget";

/// Whether `value` means "all cores" for a call into `booster` (`<= 0` for XGBoost and LightGBM).
fn all_cores(value: i64, booster: Option<Booster>) -> bool {
    value < 0 || (value == 0 && matches!(booster, Some(Booster::LightGbm | Booster::XgBoost)))
}

fn meaning(value: i64, booster: Option<Booster>) -> String {
    match (value, booster) {
        (0, Some(booster)) => format!("{} treats 0 as \"every core OpenMP sees\"", booster.name()),
        (_, Some(Booster::XgBoost)) => "XGBoost treats any value <= 0 as \"every core\"".to_string(),
        (_, Some(Booster::LightGbm)) => "LightGBM treats a negative value as \"every core\"".to_string(),
        (-1, _) => "-1 means one worker per node core".to_string(),
        (value, _) => format!("{value} means \"all cores but {}\", still sized to the node", -value - 1),
    }
}

/// The first path of `resolved` whose value is an int that means "all cores" for a call into `booster`,
/// with that value.
fn all_cores_path<'a>(resolved: &Resolved<'a>, booster: Option<Booster>) -> Option<(i64, Alternative<'a>)> {
    paths(resolved).into_iter().find_map(|path| match path.resolved.value {
        Value::Int(value) if all_cores(value, booster) => Some((value, path)),
        _ => None,
    })
}

/// The first path of `resolved` whose value is a negative int, with that value.
fn negative_path<'a>(resolved: &Resolved<'a>) -> Option<(i64, Alternative<'a>)> {
    paths(resolved).into_iter().find_map(|path| match path.resolved.value {
        Value::Int(value) if value < 0 => Some((value, path)),
        _ => None,
    })
}

/// The first unknown path of `resolved`, when no path is known to mean "all cores".
fn unknown_path(resolved: &Resolved<'_>) -> Option<Unknown> {
    paths(resolved).into_iter().find_map(|path| match path.resolved.value {
        Value::Unknown(unknown) => Some(unknown),
        _ => None,
    })
}

/// Reports a value that means "all cores" on `path`; `value_at` is where the value is written, which the
/// unsafe fix replaces with the configured thread count (the path's own value when it has a place here).
fn report(
    checker: &mut Checker<'_, '_>,
    range: TextRange,
    subject: String,
    value: i64,
    booster: Option<Booster>,
    path: &Alternative<'_>,
    value_at: Option<TextRange>,
) {
    let finding = all_cores_finding(checker, range, subject, value, &meaning(value, booster), path, value_at);
    checker.report(finding);
}

/// The finding [`report`] reports.
fn all_cores_finding(
    checker: &Checker<'_, '_>,
    range: TextRange,
    subject: String,
    value: i64,
    meaning: &str,
    path: &Alternative<'_>,
    value_at: Option<TextRange>,
) -> Finding {
    let resolved = &path.resolved;
    let value_at = path.site.as_ref().and_then(|site| site.here()).or(value_at);
    let mut finding = Finding::new(
        Rule::NJobsAllCores,
        range,
        format!("{subject} asks for every CPU of the node, not the pod's CPU limit"),
    )
    .label(if resolved.binding.is_some() { format!("resolves to {value}: {meaning}") } else { meaning.to_string() })
    .help(HELP);
    if let Some(at) = value_at {
        let message = format!("Replace `{}` with `{}`", checker.text(at), checker.fixes.expression());
        finding = finding.fix(Fix::unsafe_edits(message, checker.fixes.replace(at)));
    }
    if let Some(binding) = resolved.binding.clone() {
        finding = checker.point_to(finding, binding, &format!("set to {value} here"));
    }
    checker.point_to_path(finding, path)
}

/// Under `--strict`: a thread count whose provenance capslint cannot trace, which may be all cores.
fn report_unknown(checker: &mut Checker<'_, '_>, range: TextRange, subject: &str, unknown: Unknown) {
    let provenance = match unknown {
        Unknown::Parameter => "a function parameter: each caller decides",
        Unknown::Other => "another module's value, a call's result, or a name bound differently on two paths",
        Unknown::Cut(_) => "another module's value that capslint stopped resolving at an analysis limit",
    };
    checker.report(
        Finding::new(
            Rule::NJobsAllCores,
            range,
            format!(
                "{subject}: the thread count's provenance is unknown (strict mode), it may be every CPU of the node"
            ),
        )
        .label(format!("provenance unknown: {provenance}"))
        .help(HELP),
    );
}

/// Thread-count keyword arguments of any call, `parallel_backend()` without `n_jobs`, and params dicts
/// with a `0` thread count passed to XGBoost or LightGBM.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::NJobsAllCores) || callee.is_some_and(is_query_call) {
        return;
    }
    // On a cluster backend, `n_jobs` counts the cluster's workers.
    if let Some(kind) = callee.and_then(JoblibCall::from_name)
        && super::unbounded_joblib_parallel::backend(checker, call, kind) == Backend::Cluster
    {
        return;
    }
    let booster = Checker::booster_of(callee);
    let arguments = checker.arguments(call);
    for argument in arguments.keywords() {
        let arg = argument.name();
        if !is_thread_count_keyword(arg) {
            continue;
        }
        let resolved = checker.eval_argument(argument);
        let display = checker.callee_display(call);
        let subject = match argument.splat {
            None => format!("`{display}({arg}={})`", argument.value_text(checker.source)),
            Some(splat) => format!(
                "`{arg}={}` passed to `{display}` through `**{}`",
                argument.value_text(checker.source),
                checker.text(splat)
            ),
        };
        if let Some((value, path)) = all_cores_path(&resolved, booster)
            && !(arg == "n_jobs" && (runs_only_on_cluster(checker, call, callee) || evaluates_on_dask(call)))
        {
            let value_at = argument.expr().map(|(expr, _)| expr.range());
            let meaning = meaning(value, booster);
            let finding = all_cores_finding(checker, argument.range(), subject, value, &meaning, &path, value_at);
            let finding = checker.point_to_splat(finding, argument);
            checker.report(finding);
        } else if let Some(unknown) = unknown_path(&resolved)
            && checker.strict
            // joblib's own `n_jobs` of unknown provenance is CAP103's, in strict mode too.
            && callee.and_then(JoblibCall::from_name).is_none()
        {
            report_unknown(checker, argument.range(), &subject, unknown);
        }
    }
    // joblib also takes `n_jobs` by position: `Parallel(-1)`, `parallel_backend("loky", -1)`.
    let positional = match callee.and_then(JoblibCall::from_name) {
        Some(JoblibCall::Parallel) => call.arguments.args.first(),
        Some(JoblibCall::ParallelBackend | JoblibCall::ParallelConfig) => call.arguments.args.get(1),
        None => None,
    };
    if let Some(argument) = positional.filter(|argument| !argument.is_starred_expr()) {
        let resolved = checker.eval(argument);
        if let Some((value, path)) = negative_path(&resolved) {
            let display = checker.callee_display(call);
            report(
                checker,
                argument.range(),
                format!(
                    "`{display}({}{})`",
                    if call.arguments.args.first().is_some_and(|first| first.range() == argument.range()) {
                        ""
                    } else {
                        "..., "
                    },
                    checker.text(argument.range())
                ),
                value,
                None,
                &path,
                Some(argument.range()),
            );
        }
    }
    if let Some(callee) = callee {
        ml_knobs(checker, call, callee);
    }
    if callee == Some("joblib.parallel_backend")
        && arguments.argument("n_jobs", Some(1)).is_none()
        && !arguments.is_open()
    {
        let display = checker.callee_display(call);
        checker.report(
            Finding::new(
                Rule::NJobsAllCores,
                call.func.range(),
                format!("`{display}(...)` without `n_jobs` defaults to `n_jobs=-1`: every CPU of the node"),
            )
            .label("`n_jobs` defaults to -1 here")
            .help("pass `n_jobs` explicitly, derived from the pod's CPU limit, or use `parallel_config`, whose default is unset")
            .fix(Fix::unsafe_edits(
                format!("Pass `n_jobs={}`", checker.fixes.expression()),
                checker.fixes.add_keyword(checker.source, call, "n_jobs"),
            )),
        );
    }
    // A params dict handed to a booster: a 0 entry means "all cores" there, a negative one everywhere.
    if booster.is_some() {
        let params = match callee.and_then(booster_entry) {
            Some((_, BoosterEntry::Train)) => call_argument(call, "params", Some(0)),
            _ => call_argument(call, "params", None),
        };
        // Splatted dicts are keyword arguments, checked above.
        if let Some(dict_expr) = params {
            let Value::Dict(dict) = checker.eval(dict_expr).value else { return };
            for entry in dict.effective_entries() {
                if !is_thread_count_keyword(&entry.key) {
                    continue;
                }
                let resolved = checker.eval_entry(entry, dict_expr.range());
                if let Some((value, path)) = all_cores_path(&resolved, booster) {
                    let display = checker.callee_display(call);
                    let subject =
                        format!("`\"{}\": {}` passed to `{display}`", entry.key, entry.value_text(checker.source));
                    // An entry another module defines is reported where the dict is used, with a label there.
                    let range = if entry.is_imported() { dict_expr.range() } else { entry.range };
                    let value_at = entry.expr().map(|(expr, _)| expr.range());
                    report(checker, range, subject, value, booster, &path, value_at);
                }
            }
        }
    }
}

/// The ML libraries' own knobs that have an "all CPUs" value (`tf.config.threading.set_*(0)`,
/// `cv2.setNumThreads(-1)`, `nlp.pipe(n_process=-1)`), except the negative values of thread-count keywords
/// (`study.optimize(n_jobs=-1)`), reported above for every call.
fn ml_knobs<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, callee: &str) {
    for knob in argument_knobs(callee) {
        let KnobSite::Argument { keyword, position } = knob.site else { continue };
        if knob.all == AllCpus::Never {
            continue;
        }
        let Some(argument) = checker.arguments(call).argument(keyword, position) else { continue };
        let resolved = checker.eval_argument(&argument);
        let Some((value, path)) = knob_all_path(&resolved, knob) else { continue };
        let by_keyword = argument.splat.is_some() || call.arguments.find_keyword(keyword).is_some();
        if by_keyword && is_thread_count_keyword(keyword) && value < 0 {
            continue;
        }
        let display = checker.callee_display(call);
        let subject = match argument.splat {
            None => format!("`{display}({})`", checker.text(argument.range())),
            Some(splat) => format!(
                "`{keyword}={}` passed to `{display}` through `**{}`",
                argument.value_text(checker.source),
                checker.text(splat)
            ),
        };
        let value_at = argument.expr().map(|(expr, _)| expr.range());
        let finding = all_cores_finding(checker, argument.range(), subject, value, knob.all_meaning, &path, value_at)
            .help(KNOB_HELP);
        let finding = checker.point_to_splat(finding, &argument);
        checker.report(finding);
    }
}

/// The first path of `resolved` whose value is an int that means every CPU for `knob`.
fn knob_all_path<'a>(resolved: &Resolved<'a>, knob: &PoolKnob) -> Option<(i64, Alternative<'a>)> {
    paths(resolved).into_iter().find_map(|path| match path.resolved.value {
        Value::Int(value) if knob.all.matches(value) => Some((value, path)),
        _ => None,
    })
}

/// Whether the call hands its evaluation to Dask (`TPOTClassifier(n_jobs=-1, use_dask=True)`): TPOT then
/// gives `n_jobs` to `dask.compute`, whose distributed scheduler runs the work on the cluster's own
/// workers, sized where the cluster starts.
fn evaluates_on_dask(call: &ast::ExprCall) -> bool {
    call.arguments.find_keyword("use_dask").is_some_and(|keyword| {
        matches!(keyword.value, Expr::BooleanLiteral(ast::ExprBooleanLiteral { value: true, .. }))
    })
}

/// Whether `call` starts joblib work of a library that parallelises through joblib (scikit-learn and the
/// like, not LightGBM's or XGBoost's OpenMP threads) that runs only inside joblib cluster-backend blocks,
/// where its `n_jobs` counts the cluster's workers: a function called there (`cross_val_score`), or an
/// estimator fitted and used only there.
fn runs_only_on_cluster<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) -> bool {
    let Some(callee) = callee.filter(|callee| is_joblib_estimator_library(callee)) else { return false };
    Checker::booster_of(Some(callee)).is_none()
        && checker
            .cluster_fits
            .as_ref()
            .is_some_and(|fits| fits.runs_only_on_cluster(&checker.resolver, call, Work::of_callee(callee)))
}

/// `parser.add_argument("--n-jobs", default=-1)`: every run without the flag gets all cores.
pub fn cli_option<'a>(checker: &mut Checker<'_, 'a>, option: &CliOption<'a>) {
    if !checker.enabled(Rule::NJobsAllCores) {
        return;
    }
    let Some(name) = option.name_matching(is_thread_count_keyword) else { return };
    let resolved = checker.eval(option.default);
    let negative = paths(&resolved).into_iter().find_map(|path| {
        let value = match &path.resolved.value {
            Value::Int(value) => Some(*value),
            Value::Str(text) if option.int_from_string => text.trim().parse::<i64>().ok(),
            _ => None,
        };
        value.filter(|value| *value < 0).map(|value| (value, path))
    });
    if let Some((value, path)) = negative {
        let subject =
            format!("the default `{}` of the command-line option `{name}`", checker.text(option.default.range()));
        report(checker, option.range, subject, value, None, &path, Some(option.default.range()));
    }
}

/// `{"n_jobs": -1}` anywhere: such a dict is splatted into a call sooner or later.
pub fn dict_literal<'a>(checker: &mut Checker<'_, 'a>, dict: &'a ast::ExprDict) {
    if !checker.enabled(Rule::NJobsAllCores) {
        return;
    }
    for item in &dict.items {
        let Some(Expr::StringLiteral(key)) = &item.key else { continue };
        let key = key.value.to_str();
        if !is_thread_count_keyword(key) {
            continue;
        }
        let resolved = checker.eval(&item.value);
        if let Some((value, path)) = negative_path(&resolved) {
            let range = TextRange::new(item.key.as_ref().map_or(item.value.start(), Ranged::start), item.value.end());
            report(
                checker,
                range,
                format!("`\"{key}\": {}`", checker.text(item.value.range())),
                value,
                None,
                &path,
                Some(item.value.range()),
            );
        } else if let Some(unknown) = unknown_path(&resolved)
            && checker.strict
        {
            let range = TextRange::new(item.key.as_ref().map_or(item.value.start(), Ranged::start), item.value.end());
            let subject = format!("`\"{key}\": {}`", checker.text(item.value.range()));
            report_unknown(checker, range, &subject, unknown);
        }
    }
}

/// `params["n_jobs"] = -1` and `model.n_jobs = -1`.
pub fn target_assignment<'a>(checker: &mut Checker<'_, 'a>, target: &'a Expr, value: &'a Expr) {
    if !checker.enabled(Rule::NJobsAllCores) {
        return;
    }
    if let Some(knob) = super::node_cpu_count::knob_attribute(checker, target) {
        let resolved = checker.eval(value);
        if let Some((number, path)) = knob_all_path(&resolved, knob) {
            let range = TextRange::new(target.start(), value.end());
            let subject = format!("`{}`", checker.text(range));
            let finding =
                all_cores_finding(checker, range, subject, number, knob.all_meaning, &path, Some(value.range()))
                    .help(KNOB_HELP);
            checker.report(finding);
        }
        return;
    }
    let key = match target {
        Expr::Subscript(subscript) => match checker.eval(&subscript.slice).value {
            Value::Str(key) => key,
            _ => return,
        },
        Expr::Attribute(attribute) => attribute.attr.to_string(),
        _ => return,
    };
    if !is_thread_count_keyword(&key) {
        return;
    }
    let resolved = checker.eval(value);
    if let Some((number, path)) = negative_path(&resolved) {
        let range = TextRange::new(target.start(), value.end());
        report(checker, range, format!("`{}`", checker.text(range)), number, None, &path, Some(value.range()));
    }
}

/// `def fit(X, n_jobs=-1)`: every caller that omits the argument gets all cores.
pub fn parameters<'a>(checker: &mut Checker<'_, 'a>, parameters: &'a ast::Parameters) {
    if !checker.enabled(Rule::NJobsAllCores) {
        return;
    }
    for parameter in parameters.iter_non_variadic_params() {
        let name = parameter.name().as_str();
        let Some(default) = parameter.default() else { continue };
        if !is_thread_count_field(name) {
            continue;
        }
        // `n_jobs: int = typer.Option(-1)`: the option's default is the parameter's.
        let default = match default {
            Expr::Call(call) => match cli_option::typer_default(call, checker.callee(call).as_deref()) {
                Some(option_default) => option_default,
                None => default,
            },
            _ => default,
        };
        let resolved = checker.eval(default);
        if let Some((value, path)) = negative_path(&resolved) {
            report(
                checker,
                parameter.range(),
                format!("the default `{}`", checker.text(parameter.range())),
                value,
                None,
                &path,
                Some(default.range()),
            );
        }
    }
}

/// Class attributes used as defaults (`n_jobs: int = -1`, `grid_search_n_jobs: int = -1` in a dataclass or
/// settings class).
pub fn class_body<'a>(checker: &mut Checker<'_, 'a>, body: &'a [Stmt]) {
    if !checker.enabled(Rule::NJobsAllCores) {
        return;
    }
    for stmt in body {
        if checker.is_distrusted(stmt) {
            continue;
        }
        let (target, value) = match stmt {
            Stmt::Assign(ast::StmtAssign { targets, value, .. }) if targets.len() == 1 => (&targets[0], value.as_ref()),
            Stmt::AnnAssign(ast::StmtAnnAssign { target, value: Some(value), .. }) => (target.as_ref(), value.as_ref()),
            _ => continue,
        };
        let Expr::Name(name) = target else { continue };
        if !is_thread_count_field(name.id.as_str()) {
            continue;
        }
        let resolved = checker.eval(value);
        if let Some((number, path)) = negative_path(&resolved) {
            let range = TextRange::new(stmt.start(), value.end());
            let subject = format!("the class default `{}`", checker.text(range));
            report(checker, range, subject, number, None, &path, Some(value.range()));
        }
    }
}
