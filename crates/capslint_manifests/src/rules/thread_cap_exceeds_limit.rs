//! CAP204 thread-cap-exceeds-limit: a thread cap above what the CPU limit allows. A literal above
//! `floor(limits.cpu)` (a cap of 1 is always allowed); a cap from the Downward API `limits.cpu` while the
//! limit is fractional (it is rounded up: 3500m gives 4), with `divisor: 1m` (millicores: a thousand times
//! the limit), or on a container without a CPU limit (the kubelet then reports the node's allocatable
//! CPUs). A literal from a ConfigMap is reported at the ConfigMap's value, with a label at the container.

use ruff_text_size::TextRange;

use super::{Checker, ContainerContext, CpuLimit, LIMITS_CPU};
use crate::configmaps::ConfigMapRef;
use crate::env::{Origin, Resolved};
use crate::model::{EnvSource, EnvVar, Value as Scalar};
use capslint_cpu::quantity::Quantity;
use capslint_cpu::thread_variables::count::{self, Count};
use capslint_cpu::thread_variables::{Value, nesting};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// Checks one app container.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    if !checker.enabled(Rule::ThreadCapExceedsLimit) || context.container.resources_open {
        return;
    }
    let namespace = context.object.namespace.as_deref();
    for name in context.cap_variables() {
        let Some(origin) = context.env.explicit(name) else { continue };
        match context.env.resolve(origin, namespace, context.file, &context.project.config_maps) {
            Resolved::Literal { value, map, reference } => {
                literal(checker, context, name, Written { value, map, reference });
            }
            Resolved::ResourceField { var } => {
                // `OMP_NUM_THREADS: $(CPU_LIMIT)`: the cap's own value is where the finding goes.
                let written = match origin {
                    Origin::Env { var: own, .. } if !std::ptr::eq(own, var) => match &own.source {
                        EnvSource::Literal(value) => Some(value),
                        _ => None,
                    },
                    _ => None,
                };
                downward(checker, context, name, written, var);
            }
            Resolved::Exec | Resolved::Unknown => {}
        }
    }
}

/// A cap's literal value, and where it is written: in `env`, or in a ConfigMap through `envFrom`
/// (`map` only) or `configMapKeyRef` (`map` and the `env` entry that picks the key).
#[derive(Clone, Copy)]
struct Written<'p> {
    value: &'p Scalar,
    map: Option<ConfigMapRef<'p>>,
    reference: Option<&'p EnvVar>,
}

fn literal<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>, name: &str, written: Written<'p>) {
    let value = written.value;
    if crate::placeholder::is_placeholder(&value.text) {
        return;
    }
    let threads = match count::read(name, &value.text) {
        Count::Empty => return,
        Count::Refused(why) => return misread(checker, context, name, written, &why),
        Count::Levels(levels) if count::takes_list(name) => {
            let active = nesting::active_levels(|knob| literal_value(context, knob), levels.len());
            match nesting::team_bound(&levels, &active) {
                Some(threads) => i128::from(threads),
                None => {
                    let why = match active {
                        nesting::ActiveLevels::Unlimited(why) => why,
                        nesting::ActiveLevels::Limited(_) => "nesting".to_owned(),
                    };
                    let why = format!(
                        "{why}, and each nested level starts {} threads per thread: nested teams have no bound",
                        levels.last().copied().unwrap_or_default()
                    );
                    return misread(checker, context, name, written, &why);
                }
            }
        }
        Count::Levels(levels) => i128::from(levels[0]),
    };
    let Some(limit) = context.limit.quantity() else { return };
    let allowed = limit.floor().max(1);
    if threads <= allowed {
        return;
    }
    let (limit_text, whose_limit) = match context.limit {
        CpuLimit::Valid { resource, pod_level: true, .. } => (resource.value.text.clone(), "the pod's CPU limit"),
        CpuLimit::Valid { resource, .. } => (resource.value.text.clone(), "its CPU limit"),
        _ => (limit.to_string(), "its CPU limit"),
    };
    let arithmetic = if limit.floor() >= 1 {
        format!("{threads} > floor({limit_text}) = {allowed}")
    } else {
        format!("{threads} > 1, the most a CPU limit of {limit_text} allows")
    };
    let subject = context.subject();
    let message = match (written.map, written.reference) {
        (Some(map), Some(_)) => format!(
            "`{name}={threads}` (from ConfigMap `{}`) in {subject} exceeds {whose_limit}: {arithmetic}",
            map.data.name
        ),
        (Some(map), None) => format!(
            "`{name}={threads}` from ConfigMap `{}` exceeds the CPU limit of {subject}: {arithmetic}",
            map.data.name
        ),
        (None, _) => format!("`{name}={threads}` in {subject} exceeds {whose_limit}: {arithmetic}"),
    };
    let finding = Finding::new(Rule::ThreadCapExceedsLimit, value.range, message)
        .label(format!("{threads} threads for a limit of {limit_text}"))
        .help(format!(
            "set `{name}` to at most {allowed}, or take it from the limit: `valueFrom: {{resourceFieldRef: \
             {{resource: limits.cpu}}}}` with a whole-number limit"
        ));
    report_where_written(checker, context, written, finding, &format!(" (CPU limit {limit_text})"));
}

/// Reports a finding made at a cap's value where the user can act on it: at the value in `env`; at
/// the `env` entry that picks a ConfigMap key, with a label at the ConfigMap's value; at the
/// ConfigMap's value for `envFrom`, with a label at the container (`used by ...{container_note}`).
fn report_where_written<'p>(
    checker: &mut Checker<'p>,
    context: &ContainerContext<'p>,
    written: Written<'p>,
    finding: Finding,
    container_note: &str,
) {
    let value = written.value;
    match (written.map, written.reference) {
        (Some(map), Some(reference)) => {
            // `configMapKeyRef`: the container picked the key, so the finding is at its `env` entry.
            let text = format!("`{}` in ConfigMap `{}`", value.text, map.data.name);
            let finding = Finding { range: reference.name_range, ..finding };
            let finding = if map.file == context.file {
                finding.secondary(value.range, text)
            } else {
                finding.related(std::sync::Arc::clone(&context.project.files[map.file].file), value.range, text)
            };
            checker.report(context, finding);
        }
        (None, _) => checker.report(context, finding),
        (Some(map), None) => {
            let label = format!("used by {}{container_note}", context.subject());
            let finding = context.label_container(finding, map.file, label);
            checker.report_at(context, map.file, map.object, finding);
        }
    }
}

/// A literal of the container's own environment (or its ConfigMaps), as the libraries see it;
/// what cannot be resolved counts as unset.
fn literal_value<'p>(context: &ContainerContext<'p>, name: &str) -> Value<'p> {
    let Some(origin) = context.env.explicit(name) else { return Value::Unset };
    let namespace = context.object.namespace.as_deref();
    match context.env.resolve(origin, namespace, context.file, &context.project.config_maps) {
        Resolved::Literal { value, .. } => Value::Text(value.text.as_str()),
        _ => Value::Unset,
    }
}

/// A cap whose value the libraries reject or read differently, or whose nested teams have no
/// bound: reported whatever the limit.
fn misread<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>, name: &str, written: Written<'p>, why: &str) {
    let value = written.value;
    let finding = Finding::new(
        Rule::ThreadCapExceedsLimit,
        value.range,
        format!("`{name}: {:?}` in {} is not a count the libraries all keep to: {why}", value.text, context.subject()),
    )
    .label("read differently by the libraries")
    .help(format!("write a plain count within the CPU limit, such as `{name}: \"1\"`"));
    report_where_written(checker, context, written, finding, "");
}

fn downward<'p>(
    checker: &mut Checker<'p>,
    context: &ContainerContext<'p>,
    name: &str,
    written: Option<&'p Scalar>,
    var: &'p EnvVar,
) {
    let EnvSource::ResourceField { resource, container: named, divisor } = &var.source else { return };
    if resource.text != LIMITS_CPU {
        return;
    }
    let (cap, via) = match written {
        Some(value) => (format!("`{name}={}`", value.text), format!(" (`{}` reads `limits.cpu`)", var.name)),
        None => (format!("`{name}`"), String::new()),
    };
    // The finding is at the cap's own value; the Downward API declaration it reads gets a label.
    let place = |finding: Finding, at: TextRange, label: String| match written {
        Some(value) => Finding { range: value.range, ..finding }.secondary(at, label),
        None => finding,
    };
    if let Some(divisor) = divisor
        && Quantity::parse(&divisor.text).is_ok_and(|divisor| divisor.millis() == 1)
    {
        let finding = Finding::new(
            Rule::ThreadCapExceedsLimit,
            divisor.range,
            format!(
                "{cap} in {} takes `limits.cpu` with `divisor: {}`{via}: the value is in millicores, a thousand \
                 times the number of CPUs",
                context.subject(),
                divisor.text
            ),
        )
        .label("millicores, not CPUs")
        .help("remove the divisor (the default, `1`, gives whole CPUs)");
        checker.report(context, place(finding, divisor.range, "millicores".to_string()));
        return;
    }
    let (limit, whose) = match named.as_deref().filter(|named| Some(*named) != context.container.name.as_deref()) {
        None => (context.limit, "it".to_string()),
        Some(other) => {
            let sibling = context
                .pod
                .containers
                .iter()
                .chain(&context.pod.init_containers)
                .find(|candidate| candidate.name.as_deref() == Some(other));
            match sibling {
                Some(sibling) => (CpuLimit::of(sibling, context.pod), format!("container `{other}`")),
                None => return,
            }
        }
    };
    let finding = match limit {
        CpuLimit::Missing | CpuLimit::Zero(_) => place(
            Finding::new(
                Rule::ThreadCapExceedsLimit,
                resource.range,
                format!(
                    "{cap} in {} takes `limits.cpu` from the Downward API{via}, but {whose} has no CPU limit: the \
                     kubelet reports the node's allocatable CPUs",
                    context.subject()
                ),
            )
            .label("the node's CPU count")
            .help("add `resources: {limits: {cpu: \"2\"}}` with a whole number of CPUs"),
            resource.range,
            "no limit: the node's CPU count".to_string(),
        ),
        CpuLimit::Valid { quantity, resource: limit, .. } if !quantity.is_whole() => {
            let whole = quantity.floor().max(1);
            place(
                Finding::new(
                    Rule::ThreadCapExceedsLimit,
                    resource.range,
                    format!(
                        "{cap} in {} takes `limits.cpu` from the Downward API{via}, which rounds the fractional \
                         limit {} up: {} threads for {} CPUs",
                        context.subject(),
                        limit.value.text,
                        quantity.ceil(),
                        cpus(quantity)
                    ),
                )
                .label(format!("rounds up to {}", quantity.ceil()))
                .help(format!("make the CPU limit a whole number (`cpu: \"{whole}\"`), or set `{name}` to {whole}")),
                resource.range,
                format!("{} rounded up to {}", limit.value.text, quantity.ceil()),
            )
        }
        _ => return,
    };
    checker.report(context, finding);
}

/// `3.5`, `0.25`, for messages.
pub fn cpus(quantity: Quantity) -> String {
    let millis = quantity.millis();
    let whole = millis / 1000;
    let fraction = format!("{:03}", (millis % 1000).abs());
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}
