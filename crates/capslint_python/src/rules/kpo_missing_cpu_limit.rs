//! CAP107 kpo-missing-cpu-limit and CAP108 kpo-missing-cpu-limit-ref: Airflow `KubernetesPodOperator`
//! (and its subclasses and the `@task.kubernetes` decorator) without a CPU limit or without the Downward
//! API variable that carries it. A call that gives `pod_template_file`, `pod_template_dict` or
//! `full_pod_spec` is left to the manifest rules, which check that template (see
//! [`crate::pod_templates`]).

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use crate::arguments::{Argument, CallArguments};
use crate::checker::{Checker, call_argument, kwargs_splats};
use crate::libraries::is_pod_operator;
use crate::limits::{Cut, Limit, MAX_ENV_SOURCE_NESTING};
use crate::resolve::{At, Value};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// What an argument tells about a requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    Present,
    Absent,
    Unknown,
}

fn task_id<'a>(checker: &Checker<'_, 'a>, arguments: &CallArguments<'a>) -> String {
    match arguments.keyword("task_id").map(|argument| checker.eval_argument(argument).value) {
        Some(Value::Str(task_id)) => format!(" `{task_id}`"),
        _ => String::new(),
    }
}

/// Whether the call passes `name`, or may through `default_args` dicts (and `partial(...)`), which can
/// carry operator arguments for every task of a DAG: a quoted key anywhere in the module means the value
/// may come from there.
fn keyword_text(checker: &Checker<'_, '_>, arguments: &CallArguments<'_>, name: &'static str) -> bool {
    arguments.keyword(name).is_some() || checker.mentions_quoted_key(name)
}

/// What an argument of the call tells through `presence` (which follows a value written in this file);
/// an entry another module defines is not followed.
fn argument_presence<'a>(argument: &Argument<'a>, presence: impl FnOnce(&'a Expr, At) -> Presence) -> Presence {
    match argument.expr() {
        Some((expr, at)) => presence(expr, at),
        None => Presence::Unknown,
    }
}

fn dict_key_presence<'a>(checker: &Checker<'_, 'a>, expr: &'a Expr, at: At, keys: &[&str]) -> Presence {
    match checker.eval_at(expr, at).value {
        Value::Dict(dict) => {
            if keys.iter().any(|key| dict.get(key).is_some()) {
                Presence::Present
            } else if dict.open {
                Presence::Unknown
            } else {
                Presence::Absent
            }
        }
        Value::None => Presence::Absent,
        _ => Presence::Unknown,
    }
}

/// `container_resources=k8s.V1ResourceRequirements(limits={"cpu": ...})`, or the dict form.
fn cpu_limit<'a>(checker: &Checker<'_, 'a>, expr: &'a Expr, at: At) -> Presence {
    let (expr, at) = checker.definition(expr, at);
    match expr {
        Expr::Call(call) => {
            let callee = checker.qualified_name_at(&call.func, at);
            let is_requirements = callee.as_deref().is_some_and(|name| name.ends_with("V1ResourceRequirements"))
                || checker.text(call.func.range()).ends_with("V1ResourceRequirements");
            if !is_requirements {
                return Presence::Unknown;
            }
            if kwargs_splats(call).next().is_some() {
                return Presence::Unknown;
            }
            match call_argument(call, "limits", Some(0)) {
                Some(limits) => dict_key_presence(checker, limits, at, &["cpu"]),
                None => Presence::Absent,
            }
        }
        Expr::Dict(_) => match checker.eval_at(expr, at).value {
            Value::Dict(dict) => match dict.get("limits").or_else(|| dict.get("limit_cpu")) {
                Some(entry) if entry.key == "limit_cpu" => Presence::Present,
                Some(entry) => match entry.expr() {
                    Some((expr, at)) => dict_key_presence(checker, expr, at, &["cpu"]),
                    None => Presence::Unknown,
                },
                None if dict.open => Presence::Unknown,
                None => Presence::Absent,
            },
            _ => Presence::Unknown,
        },
        Expr::NoneLiteral(_) => Presence::Absent,
        _ => Presence::Unknown,
    }
}

/// Whether one env entry (the list element at `element`) declares `resourceFieldRef: limits.cpu`.
fn env_entry_has_cpu_ref<'a>(
    checker: &Checker<'_, 'a>,
    expr: &'a Expr,
    at: At,
    depth: u32,
    element: TextRange,
) -> Presence {
    if depth > MAX_ENV_SOURCE_NESTING {
        checker.note_cut(Some(Cut::here(Limit::EnvSourceNesting, expr.range())), true, element);
        return Presence::Unknown;
    }
    let (expr, at) = checker.definition(expr, at);
    match expr {
        Expr::Call(call) => {
            let callee = checker.text(call.func.range());
            let last = callee.rsplit('.').next().unwrap_or(callee);
            match last {
                "V1EnvVar" => match call_argument(call, "value_from", Some(2)) {
                    Some(source) => env_entry_has_cpu_ref(checker, source, at, depth + 1, element),
                    None => Presence::Absent,
                },
                "V1EnvVarSource" => match call_argument(call, "resource_field_ref", None) {
                    Some(selector) => env_entry_has_cpu_ref(checker, selector, at, depth + 1, element),
                    None => Presence::Absent,
                },
                "V1ResourceFieldSelector" => {
                    match call_argument(call, "resource", Some(1)).map(|value| checker.eval_at(value, at).value) {
                        Some(Value::Str(resource)) if resource == "limits.cpu" => Presence::Present,
                        Some(Value::Str(_)) | None => Presence::Absent,
                        Some(_) => Presence::Unknown,
                    }
                }
                _ => Presence::Unknown,
            }
        }
        Expr::Dict(_) => match checker.eval_at(expr, at).value {
            Value::Dict(dict) => {
                let next = ["valueFrom", "value_from", "resourceFieldRef", "resource_field_ref"]
                    .iter()
                    .find_map(|key| dict.get(key));
                if let Some(entry) = next {
                    return match entry.expr() {
                        Some((expr, at)) => env_entry_has_cpu_ref(checker, expr, at, depth + 1, element),
                        None => Presence::Unknown,
                    };
                }
                match dict.get("resource").map(|entry| checker.eval_entry(entry, expr.range()).value) {
                    Some(Value::Str(resource)) if resource == "limits.cpu" => Presence::Present,
                    _ if dict.open => Presence::Unknown,
                    _ => Presence::Absent,
                }
            }
            _ => Presence::Unknown,
        },
        _ => Presence::Unknown,
    }
}

/// `env_vars=[...]` / `pod_runtime_info_envs=[...]`: a list of `V1EnvVar` or dicts; a `{name: value}` dict
/// cannot carry a Downward API reference.
fn env_has_cpu_ref<'a>(checker: &Checker<'_, 'a>, expr: &'a Expr, at: At) -> Presence {
    let (expr, at) = checker.definition(expr, at);
    match expr {
        Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => {
            let mut result = Presence::Absent;
            for element in elts {
                match env_entry_has_cpu_ref(checker, element, at, 0, element.range()) {
                    Presence::Present => return Presence::Present,
                    Presence::Unknown => result = Presence::Unknown,
                    Presence::Absent => {}
                }
            }
            result
        }
        // A dict known on every path (`{**defaults, **(overrides or {})}`).
        Expr::Dict(_) => match checker.eval_at(expr, at).value {
            Value::Dict(dict) if !dict.open => Presence::Absent,
            Value::OneOf(paths)
                if paths.iter().all(|path| matches!(&path.resolved.value, Value::Dict(dict) if !dict.open)) =>
            {
                Presence::Absent
            }
            _ => Presence::Unknown,
        },
        Expr::NoneLiteral(_) => Presence::Absent,
        _ => Presence::Unknown,
    }
}

/// Checks one operator call.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) {
    let wants_limit = checker.enabled(Rule::KpoMissingCpuLimit);
    let wants_ref = checker.enabled(Rule::KpoMissingCpuLimitRef);
    if !(wants_limit || wants_ref) || !callee.is_some_and(is_pod_operator) {
        return;
    }
    // Keywords written in the call and the entries of the dicts it splats.
    let arguments = checker.arguments(call);
    if ["pod_template_file", "pod_template_dict", "full_pod_spec"].iter().any(|name| arguments.keyword(name).is_some())
    {
        return;
    }
    let splat = arguments.is_open();
    let display = checker.callee_display(call);
    let task = task_id(checker, &arguments);

    if wants_limit {
        let presence = match arguments.keyword("container_resources").or_else(|| arguments.keyword("resources")) {
            Some(resources) => argument_presence(resources, |expr, at| cpu_limit(checker, expr, at)),
            None if splat || keyword_text(checker, &arguments, "container_resources") => Presence::Unknown,
            None => Presence::Absent,
        };
        if presence == Presence::Absent || (presence == Presence::Unknown && checker.strict) {
            let (message, label) = if presence == Presence::Absent {
                (
                    format!(
                        "`{display}`{task} has no CPU limit: its pod gets no CFS quota and the Downward API reports the node's CPUs"
                    ),
                    "no `limits={\"cpu\": ...}`",
                )
            } else {
                (
                    format!(
                        "`{display}`{task} takes its resources from a value capslint cannot see (strict mode): without a CPU limit there, its pod gets no CFS quota"
                    ),
                    "resources of unknown provenance",
                )
            };
            checker.report(
                Finding::new(Rule::KpoMissingCpuLimit, call.func.range(), message)
                    .label(label)
                    .help("pass `container_resources=k8s.V1ResourceRequirements(requests={\"cpu\": \"2\"}, limits={\"cpu\": \"2\"})`, a whole number of CPUs"),
            );
        }
    }
    if wants_ref {
        let sources: Vec<&Argument<'a>> =
            ["env_vars", "pod_runtime_info_envs"].iter().filter_map(|name| arguments.keyword(name)).collect();
        let mut presence = Presence::Absent;
        for source in sources {
            match argument_presence(source, |expr, at| env_has_cpu_ref(checker, expr, at)) {
                Presence::Present => {
                    presence = Presence::Present;
                    break;
                }
                Presence::Unknown => presence = Presence::Unknown,
                Presence::Absent => {}
            }
        }
        if presence == Presence::Absent
            && (splat
                || keyword_text(checker, &arguments, "env_vars") && arguments.keyword("env_vars").is_none()
                || keyword_text(checker, &arguments, "pod_runtime_info_envs")
                    && arguments.keyword("pod_runtime_info_envs").is_none())
        {
            presence = Presence::Unknown;
        }
        if presence == Presence::Absent || (presence == Presence::Unknown && checker.strict) {
            let (message, label) = if presence == Presence::Absent {
                (
                    format!(
                        "`{display}`{task} declares no Downward API variable for `limits.cpu`: the pod cannot size its thread caps from its limit"
                    ),
                    "no `resource_field_ref` to `limits.cpu`",
                )
            } else {
                (
                    format!(
                        "`{display}`{task} takes its environment from a value capslint cannot see (strict mode): without a Downward API variable for `limits.cpu` there, the pod cannot size its thread caps from its limit"
                    ),
                    "environment of unknown provenance",
                )
            };
            checker.report(
                Finding::new(Rule::KpoMissingCpuLimitRef, call.func.range(), message)
                    .label(label)
                    .help("add `env_vars=[k8s.V1EnvVar(name=\"CPU_LIMIT\", value_from=k8s.V1EnvVarSource(resource_field_ref=k8s.V1ResourceFieldSelector(resource=\"limits.cpu\")))]`"),
            );
        }
    }
}
