//! CAP202 missing-cpu-limit-ref: a container whose `env` declares no variable from the Downward API
//! `resourceFieldRef: limits.cpu` (for this container), so the process cannot size its thread caps from
//! its limit (ADR-0096's `cpu_limit_undeclared`).

use super::{Checker, ContainerContext, LIMITS_CPU};
use crate::model::EnvSource;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// Checks one app container.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    let container = context.container;
    if !checker.enabled(Rule::MissingCpuLimitRef) || container.partial || context.runs_no_thread_pools() {
        return;
    }
    let declared = container.env.iter().any(|var| match &var.source {
        EnvSource::ResourceField { resource, container: named, .. } => {
            resource.text == LIMITS_CPU && named.as_deref().is_none_or(|named| Some(named) == container.name.as_deref())
        }
        _ => false,
    });
    if declared || (container.env_open && !checker.strict()) {
        return;
    }
    let mut finding = Finding::new(
        Rule::MissingCpuLimitRef,
        container.anchor,
        format!(
            "{} declares no Downward API variable for `limits.cpu`: the process cannot size its thread caps from \
             its CPU limit",
            context.subject()
        ),
    )
    .label("no `resourceFieldRef: limits.cpu` in `env`")
    .help("add to `env`: `- {name: CPU_LIMIT, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}`");
    finding = finding.fix_if(crate::fix::adr_block(context));
    checker.report(context, finding);
}
