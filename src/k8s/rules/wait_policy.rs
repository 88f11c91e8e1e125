//! CAP205 omp-wait-policy-not-passive: a container with thread caps or a CPU limit whose `OMP_WAIT_POLICY`
//! is absent or not `passive` (case-insensitive). `capslint exec` sets it to `passive` unless the
//! container sets another value.

use super::{Checker, ContainerContext, CpuLimit};
use crate::diagnostic::Finding;
use crate::k8s::env::Resolved;
use crate::registry::Rule;

const VARIABLE: &str = "OMP_WAIT_POLICY";
const HELP: &str = "add to `env`: `- {name: OMP_WAIT_POLICY, value: passive}`";

/// Checks one app container.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    if !checker.enabled(Rule::OmpWaitPolicyNotPassive) || context.container.partial {
        return;
    }
    let sets_caps = context.env.exec || context.cap_variables().any(|name| context.env.explicit(name).is_some());
    let has_limit = matches!(context.limit, CpuLimit::Valid { .. } | CpuLimit::Invalid(_));
    if !(sets_caps || has_limit) {
        return;
    }
    let why = if sets_caps { "sets thread caps" } else { "has a CPU limit" };
    let namespace = context.object.namespace.as_deref();
    let Some(origin) = context.env.get(VARIABLE) else {
        if !context.env.complete() && !checker.strict() {
            return;
        }
        checker.report(
            context,
            Finding::new(
                Rule::OmpWaitPolicyNotPassive,
                context.container.anchor,
                format!(
                    "{} {why} but does not set `OMP_WAIT_POLICY=passive`: idle OpenMP threads spin at barriers and \
                     burn the CFS quota",
                    context.subject()
                ),
            )
            .label("no `OMP_WAIT_POLICY`")
            .help(HELP),
        );
        return;
    };
    let Resolved::Literal { value, map, reference } =
        context.env.resolve(origin, namespace, context.file, &context.project.config_maps)
    else {
        return;
    };
    if value.text.trim().eq_ignore_ascii_case("passive") {
        return;
    }
    let finding = Finding::new(
        Rule::OmpWaitPolicyNotPassive,
        value.range,
        format!(
            "{} {why} but sets `OMP_WAIT_POLICY={}`: OpenMP threads spin at barriers and burn the CFS quota",
            context.subject(),
            value.text
        ),
    )
    .label("not `passive`")
    .help("set `OMP_WAIT_POLICY` to `passive`");
    match map.filter(|_| reference.is_none()) {
        Some(map) => {
            let finding = context.label_container(finding, map.file, format!("used by {}", context.subject()));
            checker.report_at(context, map.file, map.object, finding);
        }
        None if reference.is_some() => {
            let at = reference.map_or(value.range, |reference| reference.name_range);
            checker.report(context, Finding { range: at, ..finding });
        }
        None => checker.report(context, finding),
    }
}
