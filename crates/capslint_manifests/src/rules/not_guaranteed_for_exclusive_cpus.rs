//! CAP207 not-guaranteed-for-exclusive-cpus (off by default): a container with an integer CPU limit whose
//! pod is not Guaranteed QoS, so the static CPU Manager will not pin it to exclusive cores. Guaranteed
//! means every container, init containers included, has CPU and memory limits, and requests equal to
//! them (an absent request defaults to the limit); with pod-level resources, the pod's requests equal
//! its limits.

use ruff_text_size::TextRange;

use super::{Checker, ContainerContext};
use crate::model::{Container, Resources};
use capslint_cpu::quantity::Quantity;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// Why a set of resources breaks Guaranteed QoS, and where.
fn not_guaranteed(resources: &Resources, fallback: TextRange, whose: &str) -> Option<(String, TextRange)> {
    for name in ["cpu", "memory"] {
        let Some(limit) = resources.limit(name) else {
            return Some((format!("{whose} has no {name} limit"), fallback));
        };
        let Some(request) = resources.request(name) else { continue };
        let equal = match (Quantity::parse(&limit.value.text), Quantity::parse(&request.value.text)) {
            (Ok(limit), Ok(request)) => limit == request,
            _ => limit.value.text == request.value.text,
        };
        if !equal {
            return Some((
                format!("{whose} requests {name} `{}` but is limited to `{}`", request.value.text, limit.value.text),
                request.value.range,
            ));
        }
    }
    None
}

fn container_reason(container: &Container) -> Option<(String, TextRange)> {
    let kind = if container.init { "init container" } else { "container" };
    not_guaranteed(&container.resources, container.anchor, &format!("{kind} `{}`", container.display_name()))
}

/// Checks a pod: every app container with an integer CPU limit, once the pod's QoS is known.
pub fn check<'p>(checker: &mut Checker<'p>, contexts: &[ContainerContext<'p>]) {
    let Some(first) = contexts.first() else { return };
    if !checker.enabled(Rule::NotGuaranteedForExclusiveCpus) || contexts.iter().any(|context| context.container.partial)
    {
        return;
    }
    let pod = first.pod;
    let pod_level = pod.resources.limit("cpu").is_some() || pod.resources.limit("memory").is_some();
    let reason = if pod_level {
        not_guaranteed(&pod.resources, first.container.anchor, "the pod-level `resources`")
    } else {
        contexts.iter().find_map(|context| container_reason(context.container))
    };
    let Some((reason, at)) = reason else { return };
    for context in contexts.iter().filter(|context| !context.container.init && !context.container.resources_open) {
        let Some(limit) = context.container.resources.limit("cpu") else { continue };
        let Ok(quantity) = Quantity::parse(&limit.value.text) else { continue };
        if quantity.millis() <= 0 || !quantity.is_whole() {
            continue;
        }
        let mut finding = Finding::new(
            Rule::NotGuaranteedForExclusiveCpus,
            limit.value.range,
            format!(
                "{} has an integer CPU limit but its pod is not Guaranteed ({reason}): the static CPU Manager will \
                 not give it exclusive cores",
                context.subject()
            ),
        )
        .label("integer CPU limit")
        .help("give every container of the pod requests equal to its limits, for cpu and memory");
        if at != limit.value.range {
            finding = finding.secondary(at, "breaks Guaranteed QoS");
        }
        checker.report(context, finding);
    }
}
