//! CAP206 fractional-cpu-limit: a CPU limit that is not a whole number of CPUs (`1500m`, `2.5`). Caps
//! derived from it are rounded up and oversubscribe, the CFS quota is spread over more runnable threads
//! than it can serve, and the static CPU Manager never grants exclusive cores.

use super::thread_cap_exceeds_limit::cpus;
use super::{Checker, ContainerContext};
use crate::model::Resource;
use capslint_cpu::quantity::Quantity;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

fn fractional(resource: &Resource) -> Option<Quantity> {
    Quantity::parse(&resource.value.text).ok().filter(|quantity| quantity.millis() > 0 && !quantity.is_whole())
}

fn finding(resource: &Resource, quantity: Quantity, whose: &str) -> Finding {
    let whole = quantity.floor().max(1);
    Finding::new(
        Rule::FractionalCpuLimit,
        resource.value.range,
        format!(
            "{whose} has a fractional CPU limit `{}` ({} CPUs): thread caps derived from it are rounded up, and the \
             static CPU Manager never grants exclusive cores",
            resource.value.text,
            cpus(quantity)
        ),
    )
    .label("not a whole number of CPUs")
    .help(format!("use a whole number of CPUs, e.g. `cpu: \"{whole}\"`, in requests and limits"))
}

/// Checks one app container's own limit.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    if !checker.enabled(Rule::FractionalCpuLimit) || context.container.resources_open || context.runs_no_thread_pools()
    {
        return;
    }
    let Some(resource) = context.container.resources.limit("cpu") else { return };
    if let Some(quantity) = fractional(resource) {
        checker.report(context, finding(resource, quantity, &context.subject()));
    }
}

/// Checks the pod-level limit once per pod.
pub fn check_pod_level<'p>(checker: &mut Checker<'p>, contexts: &[ContainerContext<'p>]) {
    let Some(first) = contexts.first() else { return };
    if !checker.enabled(Rule::FractionalCpuLimit) {
        return;
    }
    let Some(resource) = first.pod.resources.limit("cpu") else { return };
    if let Some(quantity) = fractional(resource) {
        let role = first.pod.role.as_ref().map(|role| format!(" ({role})")).unwrap_or_default();
        let whose = format!("the pod-level `resources` of {}{role}", first.object.describe());
        let finding = finding(resource, quantity, &whose);
        checker.report(first, finding);
    }
}
