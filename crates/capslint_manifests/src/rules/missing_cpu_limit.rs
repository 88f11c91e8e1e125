//! CAP201 missing-cpu-limit: a container or init container without `resources.limits.cpu` (the pod-level
//! `spec.resources.limits.cpu` counts), with a limit of `0` (which Kubernetes treats as none), or with a
//! limit that is not a valid quantity (the API server rejects it, so the container has no usable limit).

use super::{Checker, ContainerContext, CpuLimit};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

const HELP: &str =
    "add `resources: {requests: {cpu: \"2\"}, limits: {cpu: \"2\"}}` to the container, with a whole number of CPUs";

/// Checks one container.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    if !checker.enabled(Rule::MissingCpuLimit) {
        return;
    }
    let subject = context.subject();
    let finding = match context.limit {
        CpuLimit::Missing if !context.container.partial => Finding::new(
            Rule::MissingCpuLimit,
            context.container.anchor,
            format!(
                "{subject} has no CPU limit: it gets no CFS quota, and the Downward API `limits.cpu` reports the \
                 node's allocatable CPUs"
            ),
        )
        .label("no `resources.limits.cpu`")
        .help(HELP)
        .fix_if(crate::fix::limit_from_request(context)),
        CpuLimit::Zero(resource) => Finding::new(
            Rule::MissingCpuLimit,
            resource.value.range,
            format!(
                "{subject} has `limits.cpu: {}`, which Kubernetes treats as no limit: the Downward API reports the \
                 node's allocatable CPUs",
                resource.value.text
            ),
        )
        .label("0 means no limit")
        .help(HELP),
        CpuLimit::Invalid(resource) => Finding::new(
            Rule::MissingCpuLimit,
            resource.value.range,
            format!(
                "{subject} has `limits.cpu: {}`, which is not a valid Kubernetes quantity: the API server rejects \
                 it, so the container has no usable CPU limit",
                resource.value.text
            ),
        )
        .label("not a CPU quantity")
        .help("write a whole number of CPUs (`cpu: \"2\"`) or millicores (`cpu: 2000m`)"),
        _ => return,
    };
    checker.report(context, finding);
}
