//! CAP107 kpo-missing-cpu-limit and CAP108 kpo-missing-cpu-limit-ref: Airflow `KubernetesPodOperator`
//! (and its subclasses and the `@task.kubernetes` decorator) without a CPU limit or without the Downward
//! API variable that carries it. A call that gives `pod_template_file`, `pod_template_dict` or
//! `full_pod_spec` is left to the manifest rules, which check that template: [`pod_template_calls`]
//! collects what such a call merges into its `pod_template_file`.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::diagnostic::Finding;
use crate::k8s::{EnvOverlay, OverlayValue, PodTemplateCall, ResourcesOverlay};
use crate::python::checker::{Checker, call_argument, kwargs_splats};
use crate::python::resolve::{At, Resolver, Value};
use crate::python::semantic::ScopeId;
use crate::registry::Rule;

/// What an argument tells about a requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    Present,
    Absent,
    Unknown,
}

/// Whether the callee is a pod operator.
fn is_pod_operator(callee: &str) -> bool {
    callee.strip_prefix("airflow.KubernetesPodOperator.").is_some_and(|class| class.ends_with("PodOperator"))
}

fn task_id<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall) -> String {
    match call_argument(call, "task_id", None).map(|expr| checker.eval(expr).value) {
        Some(Value::Str(task_id)) => format!(" `{task_id}`"),
        _ => String::new(),
    }
}

/// Whether the call passes `name`, or may through `default_args` dicts (and `partial(...)`), which can
/// carry operator arguments for every task of a DAG: a quoted key anywhere in the module means the value
/// may come from there.
fn keyword_text(checker: &Checker<'_, '_>, call: &ast::ExprCall, name: &'static str) -> bool {
    call.arguments.find_keyword(name).is_some() || checker.mentions_quoted_key(name)
}

fn dict_key_presence<'a>(checker: &Checker<'_, 'a>, expr: &'a Expr, at: At, keys: &[&str]) -> Presence {
    match checker.resolver.eval(expr, at).value {
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
    let (expr, at) = checker.resolver.definition(expr, at);
    match expr {
        Expr::Call(call) => {
            let callee = checker.resolver.qualified_name(&call.func, at);
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
        Expr::Dict(_) => match checker.resolver.eval(expr, at).value {
            Value::Dict(dict) => match dict.get("limits").or_else(|| dict.get("limit_cpu")) {
                Some(entry) if entry.key == "limit_cpu" => Presence::Present,
                Some(entry) => dict_key_presence(checker, entry.value, entry.at, &["cpu"]),
                None if dict.open => Presence::Unknown,
                None => Presence::Absent,
            },
            _ => Presence::Unknown,
        },
        Expr::NoneLiteral(_) => Presence::Absent,
        _ => Presence::Unknown,
    }
}

/// Whether one env entry declares `resourceFieldRef: limits.cpu`.
fn env_entry_has_cpu_ref<'a>(checker: &Checker<'_, 'a>, expr: &'a Expr, at: At, depth: u32) -> Presence {
    if depth > 6 {
        return Presence::Unknown;
    }
    let (expr, at) = checker.resolver.definition(expr, at);
    match expr {
        Expr::Call(call) => {
            let callee = checker.text(call.func.range());
            let last = callee.rsplit('.').next().unwrap_or(callee);
            match last {
                "V1EnvVar" => match call_argument(call, "value_from", Some(2)) {
                    Some(source) => env_entry_has_cpu_ref(checker, source, at, depth + 1),
                    None => Presence::Absent,
                },
                "V1EnvVarSource" => match call_argument(call, "resource_field_ref", None) {
                    Some(selector) => env_entry_has_cpu_ref(checker, selector, at, depth + 1),
                    None => Presence::Absent,
                },
                "V1ResourceFieldSelector" => {
                    match call_argument(call, "resource", Some(1)).map(|value| checker.resolver.eval(value, at).value) {
                        Some(Value::Str(resource)) if resource == "limits.cpu" => Presence::Present,
                        Some(Value::Str(_)) | None => Presence::Absent,
                        Some(_) => Presence::Unknown,
                    }
                }
                _ => Presence::Unknown,
            }
        }
        Expr::Dict(_) => match checker.resolver.eval(expr, at).value {
            Value::Dict(dict) => {
                let next = ["valueFrom", "value_from", "resourceFieldRef", "resource_field_ref"]
                    .iter()
                    .find_map(|key| dict.get(key));
                if let Some(entry) = next {
                    return env_entry_has_cpu_ref(checker, entry.value, entry.at, depth + 1);
                }
                match dict.get("resource").map(|entry| checker.resolver.eval(entry.value, entry.at).value) {
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
    let (expr, at) = checker.resolver.definition(expr, at);
    match expr {
        Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => {
            let mut result = Presence::Absent;
            for element in elts {
                match env_entry_has_cpu_ref(checker, element, at, 0) {
                    Presence::Present => return Presence::Present,
                    Presence::Unknown => result = Presence::Unknown,
                    Presence::Absent => {}
                }
            }
            result
        }
        Expr::Dict(_) => match checker.resolver.eval(expr, at).value {
            Value::Dict(dict) if !dict.open => Presence::Absent,
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
    if ["pod_template_file", "pod_template_dict", "full_pod_spec"]
        .iter()
        .any(|name| call.arguments.find_keyword(name).is_some())
    {
        return;
    }
    let splat = kwargs_splats(call).next().is_some();
    let at = checker.at(call.range().start());
    let display = checker.callee_display(call);
    let task = task_id(checker, call);

    if wants_limit {
        let presence =
            match call_argument(call, "container_resources", None).or_else(|| call_argument(call, "resources", None)) {
                Some(resources) => cpu_limit(checker, resources, at),
                None if splat || keyword_text(checker, call, "container_resources") => Presence::Unknown,
                None => Presence::Absent,
            };
        if presence == Presence::Absent || (presence == Presence::Unknown && checker.strict) {
            let reason = if presence == Presence::Absent {
                "has no CPU limit"
            } else {
                "has a CPU limit capslint cannot see (strict mode)"
            };
            checker.report(
                Finding::new(Rule::KpoMissingCpuLimit, call.func.range(), format!("`{display}`{task} {reason}: its pod gets no CFS quota and the Downward API reports the node's CPUs"))
                    .label("no `limits={\"cpu\": ...}`")
                    .help("pass `container_resources=k8s.V1ResourceRequirements(requests={\"cpu\": \"2\"}, limits={\"cpu\": \"2\"})`, a whole number of CPUs"),
            );
        }
    }
    if wants_ref {
        let sources: Vec<&Expr> =
            ["env_vars", "pod_runtime_info_envs"].iter().filter_map(|name| call_argument(call, name, None)).collect();
        let mut presence = Presence::Absent;
        for source in sources {
            match env_has_cpu_ref(checker, source, at) {
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
                || keyword_text(checker, call, "env_vars") && call.arguments.find_keyword("env_vars").is_none()
                || keyword_text(checker, call, "pod_runtime_info_envs")
                    && call.arguments.find_keyword("pod_runtime_info_envs").is_none())
        {
            presence = Presence::Unknown;
        }
        if presence == Presence::Absent || (presence == Presence::Unknown && checker.strict) {
            let reason = if presence == Presence::Absent { "declares no" } else { "may lack a (strict mode)" };
            checker.report(
                Finding::new(Rule::KpoMissingCpuLimitRef, call.func.range(), format!("`{display}`{task} {reason} Downward API variable for `limits.cpu`: the pod cannot size its thread caps from its limit"))
                    .label("no `resource_field_ref` to `limits.cpu`")
                    .help("add `env_vars=[k8s.V1EnvVar(name=\"CPU_LIMIT\", value_from=k8s.V1EnvVarSource(resource_field_ref=k8s.V1ResourceFieldSelector(resource=\"limits.cpu\")))]`"),
            );
        }
    }
}

/// Every pod operator call of a module that names its `pod_template_file` with a string (a literal or a
/// constant), with what the call merges into the template's first container.
pub fn pod_template_calls<'a>(resolver: &Resolver<'_, 'a>, body: &'a [Stmt]) -> Vec<PodTemplateCall> {
    let mut finder = TemplateFinder { resolver, scope: ScopeId::MODULE, calls: Vec::new() };
    finder.visit_body(body);
    finder.calls
}

/// Walks a module for operator calls, tracking the scope names are resolved in.
struct TemplateFinder<'r, 'm, 'a> {
    resolver: &'r Resolver<'m, 'a>,
    scope: ScopeId,
    calls: Vec<PodTemplateCall>,
}

impl<'a> TemplateFinder<'_, '_, 'a> {
    fn enter(&mut self, start: ruff_text_size::TextSize) -> ScopeId {
        let outer = self.scope;
        if let Some(scope) = self.resolver.model().scope_of_node(start) {
            self.scope = scope;
        }
        outer
    }

    fn call(&mut self, call: &'a ast::ExprCall) {
        let at = At { scope: self.scope, offset: call.range().start() };
        let callee = self.resolver.qualified_name(&call.func, at);
        if !callee.as_deref().is_some_and(is_pod_operator) {
            return;
        }
        let Some(template) = call_argument(call, "pod_template_file", None) else { return };
        let Value::Str(template) = self.resolver.eval(template, at).value else { return };
        let text = |name: &str| match call_argument(call, name, None).map(|expr| self.resolver.eval(expr, at).value) {
            Some(Value::Str(text)) => Some(text),
            _ => None,
        };
        let splat = kwargs_splats(call).next().is_some();
        let mut overlay = PodTemplateCall {
            template,
            call: call.func.range(),
            task_id: text("task_id"),
            resources: match call_argument(call, "container_resources", None) {
                Some(resources) => overlay_resources(self.resolver, resources, at),
                None if splat => Some(ResourcesOverlay::Unknown),
                None => None,
            },
            env_open: splat,
            command: call_argument(call, "cmds", None).and_then(|expr| strings(self.resolver, expr, at)),
            args: call_argument(call, "arguments", None).and_then(|expr| strings(self.resolver, expr, at)),
            ..PodTemplateCall::default()
        };
        for name in ["env_vars", "pod_runtime_info_envs"] {
            if let Some(env) = call_argument(call, name, None) {
                overlay_env(self.resolver, env, at, &mut overlay);
            }
        }
        self.calls.push(overlay);
    }
}

impl<'a> Visitor<'a> for TemplateFinder<'_, '_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(function) => {
                crate::python::visit_function_header(self, function);
                let outer = self.enter(function.range.start());
                self.visit_body(&function.body);
                self.scope = outer;
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_decorator(decorator);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
                let outer = self.enter(class.range.start());
                self.visit_body(&class.body);
                self.scope = outer;
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => {
                self.call(call);
                visitor::walk_expr(self, expr);
            }
            Expr::Lambda(ast::ExprLambda { range, .. })
            | Expr::ListComp(ast::ExprListComp { range, .. })
            | Expr::SetComp(ast::ExprSetComp { range, .. })
            | Expr::Generator(ast::ExprGenerator { range, .. })
            | Expr::DictComp(ast::ExprDictComp { range, .. }) => {
                let outer = self.enter(range.start());
                visitor::walk_expr(self, expr);
                self.scope = outer;
            }
            _ => visitor::walk_expr(self, expr),
        }
    }
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

/// `{"cpu": "2"}`, when every entry is readable.
fn quantities<'a>(resolver: &Resolver<'_, 'a>, expr: Option<&'a Expr>, at: At) -> Option<Vec<(String, String)>> {
    let Some(expr) = expr else { return Some(Vec::new()) };
    match resolver.eval(expr, at).value {
        Value::Dict(dict) if !dict.open => dict
            .effective_entries()
            .map(|entry| Some((entry.key.clone(), scalar_text(resolver.eval(entry.value, entry.at).value)?)))
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
                quantities(resolver, call_argument(call, "limits", Some(0)), at),
                quantities(resolver, call_argument(call, "requests", Some(1)), at),
            )
        }
        Expr::Dict(_) => match resolver.eval(expr, at).value {
            Value::Dict(dict) if !dict.open => known(
                quantities(resolver, dict.get("limits").map(|entry| entry.value), at),
                quantities(resolver, dict.get("requests").map(|entry| entry.value), at),
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
                    let value = match scalar_text(resolver.eval(entry.value, entry.at).value) {
                        Some(text) => OverlayValue::Literal(text),
                        None => OverlayValue::Other,
                    };
                    overlay.env.push(EnvOverlay { name: entry.key.clone(), value });
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
            let value = |key: &str| dict.get(key).map(|entry| entry.value);
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
    if depth > 4 {
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
                return env_source(resolver, entry.value, entry.at, depth + 1);
            }
            match dict.get("resource").and_then(|entry| scalar_text(resolver.eval(entry.value, entry.at).value)) {
                Some(resource) => OverlayValue::ResourceField {
                    resource,
                    divisor: dict
                        .get("divisor")
                        .and_then(|entry| scalar_text(resolver.eval(entry.value, entry.at).value)),
                },
                None => OverlayValue::Other,
            }
        }
        _ => OverlayValue::Other,
    }
}
