//! The Python half of the Airflow bridge ([`capslint_pod_template`]): what a `KubernetesPodOperator` call
//! that names a `pod_template_file` merges into the template's first container, read from the call's
//! arguments with the module's resolver. The manifest rules check the merged template.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use super::arguments::{Argument, CallArguments};
use super::checker::{call_argument, kwargs_splats};
use super::limits::{Cut, Limit, MAX_ENV_SOURCE_NESTING};
use super::resolve::{At, DictEntry, Resolver, Value};
use capslint_pod_template::{EnvOverlay, OverlayValue, PodTemplateCall, ResourcesOverlay};

/// What a pod operator `call` (its callee already known to be one) merges into its `pod_template_file`,
/// when it names one with a string (a literal or a constant). The checker calls this for every such call
/// of its one walk of the module.
pub fn template_call<'a>(resolver: &Resolver<'_, 'a>, call: &'a ast::ExprCall, at: At) -> Option<PodTemplateCall> {
    // Keywords written in the call and the entries of the dicts it splats.
    let arguments = CallArguments::read(call, at, |splat| resolver.eval(splat, at).value);
    let template = arguments.keyword("pod_template_file")?;
    let Value::Str(template) = resolver.eval_entry(&template.entry).value else { return None };
    let text = |name: &str| match arguments.keyword(name).map(|argument| resolver.eval_entry(&argument.entry).value) {
        Some(Value::Str(text)) => Some(text),
        _ => None,
    };
    // An argument written in this file, as its expression and where to evaluate it.
    let written = |name: &str| arguments.keyword(name).map(Argument::expr);
    let splat = arguments.is_open();
    let mut overlay = PodTemplateCall {
        template,
        call: call.func.range(),
        task_id: text("task_id"),
        resources: match written("container_resources") {
            Some(Some((resources, at))) => overlay_resources(resolver, resources, at),
            Some(None) => Some(ResourcesOverlay::Unknown),
            None if splat => Some(ResourcesOverlay::Unknown),
            None => None,
        },
        env_open: splat,
        command: written("cmds").flatten().and_then(|(expr, at)| strings(resolver, expr, at)),
        args: written("arguments").flatten().and_then(|(expr, at)| strings(resolver, expr, at)),
        ..PodTemplateCall::default()
    };
    for name in ["env_vars", "pod_runtime_info_envs"] {
        match written(name) {
            Some(Some((env, at))) => overlay_env(resolver, env, at, &mut overlay),
            Some(None) => overlay.env_open = true,
            None => {}
        }
    }
    Some(overlay)
}

/// A value as the text Kubernetes reads (`"2"`, `2`, `1.5`).
fn scalar_text(value: Value<'_>) -> Option<String> {
    match value {
        Value::Str(text) => Some(text),
        Value::Int(number) => Some(number.to_string()),
        Value::Float(number) if number.is_finite() => Some(number.to_string()),
        _ => None,
    }
}

/// A list of strings (`cmds=["capslint", "exec", "--", "python"]`).
fn strings<'a>(resolver: &Resolver<'_, 'a>, expr: &'a Expr, at: At) -> Option<Vec<String>> {
    let (expr, at) = resolver.definition(expr, at);
    let (Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. })) = expr else { return None };
    elts.iter().map(|element| scalar_text(resolver.eval(element, at).value)).collect()
}

/// `{"cpu": "2"}`, when every entry is readable; nothing when `value` is absent.
fn quantities<'a>(resolver: &Resolver<'_, 'a>, value: Option<Value<'a>>) -> Option<Vec<(String, String)>> {
    let Some(value) = value else { return Some(Vec::new()) };
    match value {
        Value::Dict(dict) if !dict.open => dict
            .effective_entries()
            .map(|entry| Some((entry.key.to_string(), scalar_text(resolver.eval_entry(entry).value)?)))
            .collect(),
        Value::None => Some(Vec::new()),
        _ => None,
    }
}

/// `container_resources=k8s.V1ResourceRequirements(limits=..., requests=...)`, or the dict form.
fn overlay_resources<'a>(resolver: &Resolver<'_, 'a>, expr: &'a Expr, at: At) -> Option<ResourcesOverlay> {
    let (expr, at) = resolver.definition(expr, at);
    let known = |limits, requests| match (limits, requests) {
        (Some(limits), Some(requests)) => ResourcesOverlay::Known { limits, requests },
        _ => ResourcesOverlay::Unknown,
    };
    Some(match expr {
        Expr::NoneLiteral(_) => return None,
        Expr::Call(call)
            if resolver_text_ends(call, "V1ResourceRequirements") && kwargs_splats(call).next().is_none() =>
        {
            known(
                quantities(
                    resolver,
                    call_argument(call, "limits", Some(0)).map(|limits| resolver.eval(limits, at).value),
                ),
                quantities(
                    resolver,
                    call_argument(call, "requests", Some(1)).map(|requests| resolver.eval(requests, at).value),
                ),
            )
        }
        Expr::Dict(_) => match resolver.eval(expr, at).value {
            Value::Dict(dict) if !dict.open => known(
                quantities(resolver, dict.get("limits").map(|entry| resolver.eval_entry(entry).value)),
                quantities(resolver, dict.get("requests").map(|entry| resolver.eval_entry(entry).value)),
            ),
            _ => ResourcesOverlay::Unknown,
        },
        _ => ResourcesOverlay::Unknown,
    })
}

/// Whether the callee of `call` is written as `...name`.
fn resolver_text_ends(call: &ast::ExprCall, name: &str) -> bool {
    match &*call.func {
        Expr::Name(callee) => callee.id.as_str() == name,
        Expr::Attribute(attribute) => attribute.attr.as_str() == name,
        _ => false,
    }
}

/// `env_vars=[k8s.V1EnvVar(...), {"name": ..., "value": ...}]` or `env_vars={"NAME": "value"}`.
fn overlay_env<'a>(resolver: &Resolver<'_, 'a>, expr: &'a Expr, at: At, overlay: &mut PodTemplateCall) {
    let (expr, at) = resolver.definition(expr, at);
    match expr {
        Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => {
            for element in elts {
                match env_entry(resolver, element, at) {
                    Some(entry) => overlay.env.push(entry),
                    None => overlay.env_open = true,
                }
            }
        }
        Expr::NoneLiteral(_) => {}
        _ => match resolver.eval(expr, at).value {
            Value::Dict(dict) => {
                overlay.env_open |= dict.open;
                for entry in dict.effective_entries() {
                    let value = match scalar_text(resolver.eval_entry(entry).value) {
                        Some(text) => OverlayValue::Literal(text),
                        None => OverlayValue::Other,
                    };
                    overlay.env.push(EnvOverlay { name: entry.key.to_string(), value });
                }
            }
            _ => overlay.env_open = true,
        },
    }
}

/// One `V1EnvVar(name=..., value=... | value_from=...)` or its dict form.
fn env_entry<'a>(resolver: &Resolver<'_, 'a>, expr: &'a Expr, at: At) -> Option<EnvOverlay> {
    let (expr, at) = resolver.definition(expr, at);
    let (name, value, source) = match expr {
        Expr::Call(call) if resolver_text_ends(call, "V1EnvVar") => (
            call_argument(call, "name", Some(0))?,
            call_argument(call, "value", Some(1)),
            call_argument(call, "value_from", Some(2)),
        ),
        Expr::Dict(_) => {
            let Value::Dict(dict) = resolver.eval(expr, at).value else { return None };
            // Entries another module defines have no expression to follow.
            if dict.entries.iter().any(DictEntry::is_imported) {
                return None;
            }
            let value = |key: &str| dict.get(key).and_then(|entry| entry.expr()).map(|(expr, _)| expr);
            (value("name")?, value("value"), value("valueFrom").or_else(|| value("value_from")))
        }
        _ => return None,
    };
    let Value::Str(name) = resolver.eval(name, at).value else { return None };
    let value = match (value, source) {
        (_, Some(source)) => env_source(resolver, source, at, 0),
        (Some(value), None) => {
            scalar_text(resolver.eval(value, at).value).map_or(OverlayValue::Other, OverlayValue::Literal)
        }
        (None, None) => OverlayValue::Literal(String::new()),
    };
    Some(EnvOverlay { name, value })
}

/// `V1EnvVarSource(resource_field_ref=V1ResourceFieldSelector(resource="limits.cpu"))`, or a dict form.
fn env_source<'a>(resolver: &Resolver<'_, 'a>, expr: &'a Expr, at: At, depth: u32) -> OverlayValue {
    if depth > MAX_ENV_SOURCE_NESTING {
        resolver.note_limit(Cut::here(Limit::EnvSourceNesting, expr.range()));
        return OverlayValue::Other;
    }
    let (expr, at) = resolver.definition(expr, at);
    let text = |expr: Option<&'a Expr>| expr.and_then(|expr| scalar_text(resolver.eval(expr, at).value));
    match expr {
        Expr::Call(call) if resolver_text_ends(call, "V1EnvVarSource") => {
            match call_argument(call, "resource_field_ref", None) {
                Some(selector) => env_source(resolver, selector, at, depth + 1),
                None => OverlayValue::Other,
            }
        }
        Expr::Call(call) if resolver_text_ends(call, "V1ResourceFieldSelector") => {
            match text(call_argument(call, "resource", None)) {
                Some(resource) => {
                    OverlayValue::ResourceField { resource, divisor: text(call_argument(call, "divisor", None)) }
                }
                None => OverlayValue::Other,
            }
        }
        Expr::Dict(_) => {
            let Value::Dict(dict) = resolver.eval(expr, at).value else { return OverlayValue::Other };
            if let Some(entry) = dict.get("resourceFieldRef").or_else(|| dict.get("resource_field_ref")) {
                return match entry.expr() {
                    Some((expr, at)) => env_source(resolver, expr, at, depth + 1),
                    None => OverlayValue::Other,
                };
            }
            match dict.get("resource").and_then(|entry| scalar_text(resolver.eval_entry(entry).value)) {
                Some(resource) => OverlayValue::ResourceField {
                    resource,
                    divisor: dict.get("divisor").and_then(|entry| scalar_text(resolver.eval_entry(entry).value)),
                },
                None => OverlayValue::Other,
            }
        }
        _ => OverlayValue::Other,
    }
}
