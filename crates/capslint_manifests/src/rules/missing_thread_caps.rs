//! CAP203 missing-thread-caps: a container that does not set every required thread cap (`thread-caps`,
//! by default ADR-0096's five), neither in `env`, nor through an `envFrom` ConfigMap of the scan, nor by
//! starting through `capslint exec`. When a source cannot be read (a ConfigMap outside the scan, a
//! Secret), the rule stays silent unless `--strict`.

use super::{Checker, ContainerContext, join_names};
use crate::env::Origin;
use crate::model::EnvSource;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// The KubeRay kinds, whose worker processes Ray itself gives an `OMP_NUM_THREADS`.
const RAY_KINDS: &[&str] = &["RayCluster", "RayJob", "RayService"];

/// Whether the variable is set to something (an empty literal leaves the library default in place;
/// a value the libraries read differently, white space included, is CAP204's, as for `capslint runtime`,
/// whose reading, [`capslint_cpu::thread_variables::count::read`], takes only the empty string as unset).
fn is_set(context: &ContainerContext<'_>, name: &str) -> bool {
    let Some(origin) = context.env.get(name) else { return false };
    match origin {
        Origin::Env { var, .. } => !matches!(&var.source, EnvSource::Literal(value) if value.text.is_empty()),
        Origin::ConfigMap { value, .. } => !value.text.is_empty(),
        Origin::Exec => true,
    }
}

/// Checks one app container.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    if !checker.enabled(Rule::MissingThreadCaps)
        || context.container.partial
        || context.env.exec
        || context.runs_no_thread_pools()
    {
        return;
    }
    let caps = &context.settings.thread_caps;
    let missing: Vec<String> = caps.iter().filter(|cap| !is_set(context, cap)).map(|cap| format!("`{cap}`")).collect();
    if missing.is_empty() || (!context.env.complete() && !checker.strict()) {
        return;
    }
    let mut message = if missing.len() == caps.len() {
        format!(
            "{} sets none of the thread caps ({}): OpenMP, BLAS and loky size their pools from the node's cores",
            context.subject(),
            join_names(&missing)
        )
    } else {
        let noun = if missing.len() == 1 { "thread cap" } else { "thread caps" };
        let mut message = format!("{} does not set the {noun} {}", context.subject(), join_names(&missing));
        // With `OMP_NUM_THREADS` set, the BLAS and NumExpr caps fall back to it: say what is really
        // unbounded, so the finding does not overstate the risk.
        if is_set(context, "OMP_NUM_THREADS") {
            let (covered, unbounded): (Vec<&String>, Vec<&String>) = caps
                .iter()
                .filter(|cap| !is_set(context, cap))
                .partition(|cap| capslint_cpu::thread_variables::omp_fallback_reader(cap).is_some());
            if !covered.is_empty() {
                let readers: Vec<String> = covered
                    .iter()
                    .filter_map(|cap| capslint_cpu::thread_variables::omp_fallback_reader(cap))
                    .map(str::to_string)
                    .collect();
                let verb = if readers.len() == 1 { "falls" } else { "fall" };
                message.push_str(&format!(": {} {verb} back to `OMP_NUM_THREADS`", join_names(&readers)));
                let unbounded: Vec<String> = unbounded.iter().map(|cap| format!("`{cap}`")).collect();
                if unbounded.is_empty() {
                    message.push_str(", so ADR-0096's explicit caps are missing, not the bound");
                } else {
                    let verb = if unbounded.len() == 1 { "leaves its pool" } else { "leave their pools" };
                    message.push_str(&format!(", so only {} {verb} unbounded", join_names(&unbounded)));
                }
            }
        }
        message
    };
    // Ray caps OpenMP in its own worker processes when the pod leaves `OMP_NUM_THREADS` unset
    // (`ray._private.utils.set_omp_num_threads_if_unset`): say so, and what that leaves uncapped.
    if RAY_KINDS.contains(&context.object.kind.as_str()) && !is_set(context, "OMP_NUM_THREADS") {
        message.push_str(
            "; Ray sets `OMP_NUM_THREADS` in its task and actor workers to their assigned CPUs (1 when none are \
             assigned), not in the driver or the processes `ray start` runs, and sets none of the other caps",
        );
    }
    if !context.env.complete() {
        message.push_str(&format!(" (unless {} provides them)", join_names(&context.env.unresolved)));
    }
    let resolved_example = context.container.env.iter().find_map(|var| match &var.source {
        EnvSource::ResourceField { resource, container: None, divisor: None } if resource.text == "limits.cpu" => {
            Some(var.name.clone())
        }
        _ => None,
    });
    let source = match resolved_example {
        Some(name) => format!("value: $({name})"),
        None => "valueFrom: {resourceFieldRef: {resource: limits.cpu}}".to_string(),
    };
    let first = caps.iter().find(|cap| missing.contains(&format!("`{cap}`"))).cloned().unwrap_or_default();
    let mut finding = Finding::new(Rule::MissingThreadCaps, context.container.anchor, message)
        .label(format!("missing {} of {} thread caps", missing.len(), caps.len()))
        .help(format!(
            "add each to `env`, e.g. `- {{name: {first}, {source}}}`, or start the container with `capslint exec --`"
        ));
    finding = finding.fix_if(crate::fix::adr_block(context));
    checker.report(context, finding);
}
