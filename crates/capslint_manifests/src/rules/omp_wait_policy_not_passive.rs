//! CAP205 omp-wait-policy-not-passive: a container with thread caps or a CPU limit whose `OMP_WAIT_POLICY`
//! is absent or not exactly `passive` (in any case, without white space, as every OpenMP runtime reads
//! it), or that sets a knob that keeps idle threads spinning despite it (`GOMP_SPINCOUNT`,
//! `KMP_BLOCKTIME`, `KMP_LIBRARY=turnaround`). `capslint exec` sets the policy to `passive` unless the
//! container sets another value, and refuses such knobs.

use super::{Checker, ContainerContext, CpuLimit};
use crate::env::Resolved;
use capslint_cpu::thread_variables::{Value as ThreadValue, spin};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

const VARIABLE: &str = "OMP_WAIT_POLICY";
const HELP: &str = "add to `env`: `- {name: OMP_WAIT_POLICY, value: passive}`";

/// Checks one app container.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    if !checker.enabled(Rule::OmpWaitPolicyNotPassive) || context.container.partial || context.runs_no_thread_pools() {
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
        spin_knobs(checker, context);
        if !context.env.complete() && !checker.strict() {
            return;
        }
        let consequence = if single_threaded(context) {
            "with `OMP_NUM_THREADS=1` no OpenMP team spins today, but any team of more threads (a raised cap, a \
             library that sizes its own) spins at barriers and burns the CFS quota"
        } else {
            "idle OpenMP threads spin at barriers and burn the CFS quota"
        };
        let mut finding = Finding::new(
            Rule::OmpWaitPolicyNotPassive,
            context.container.anchor,
            format!("{} {why} but does not set `OMP_WAIT_POLICY=passive`: {consequence}", context.subject()),
        )
        .label("no `OMP_WAIT_POLICY`")
        .help(HELP);
        finding = finding.fix_if(crate::fix::adr_block(context));
        checker.report(context, finding);
        return;
    };
    let Resolved::Literal { value, map, reference } =
        context.env.resolve(origin, namespace, context.file, &context.project.config_maps)
    else {
        return spin_knobs(checker, context);
    };
    if spin::wait_policy(ThreadValue::Text(&value.text)).is_ok() || crate::placeholder::is_placeholder(&value.text) {
        return spin_knobs(checker, context);
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
        None => {
            let fix = crate::fix::wait_policy(context.source().text(), value.range, Some(&value.text));
            checker.report(context, finding.fix_if(fix));
        }
    }
}

/// Whether the container's `OMP_NUM_THREADS` is the literal `1` (in its `env` or a ConfigMap of the
/// scan): its OpenMP teams have no other thread to wait for.
fn single_threaded(context: &ContainerContext<'_>) -> bool {
    let Some(origin) = context.env.get("OMP_NUM_THREADS") else { return false };
    let namespace = context.object.namespace.as_deref();
    matches!(
        context.env.resolve(origin, namespace, context.file, &context.project.config_maps),
        Resolved::Literal { value, .. } if value.text == "1"
    )
}

/// Reports each spin knob of the container's own `env` that keeps idle threads spinning.
fn spin_knobs<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    let namespace = context.object.namespace.as_deref();
    for name in spin::SPIN_KNOBS {
        let Some(origin) = context.env.explicit(name) else { continue };
        let Resolved::Literal { value, map: None, reference: None } =
            context.env.resolve(origin, namespace, context.file, &context.project.config_maps)
        else {
            continue;
        };
        let Err(spinning) = spin::spin_knob(name, ThreadValue::Text(&value.text)) else { continue };
        checker.report(
            context,
            Finding::new(
                Rule::OmpWaitPolicyNotPassive,
                value.range,
                format!("{} sets `{name}={}`: {}", context.subject(), value.text, spinning.why),
            )
            .label("idle threads spin")
            .help(if name == "KMP_LIBRARY" {
                format!("remove `{name}`, or set it to `throughput`")
            } else {
                format!("remove `{name}`, or set it to `0`")
            }),
        );
    }
}
