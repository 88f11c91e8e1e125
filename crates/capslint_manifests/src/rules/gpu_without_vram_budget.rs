//! CAP208 gpu-without-vram-budget (active when `gpu.memory-resource` is configured): a container that
//! requests the GPU resource (`gpu.resource`, default `nvidia.com/gpu`) without declaring its VRAM budget
//! on the configured extended resource. On a time-sliced GPU, the scheduler is blind to memory without it.

use super::{Checker, ContainerContext};
use capslint_cpu::quantity::Quantity;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// Checks one app container.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    let container = context.container;
    if !checker.enabled(Rule::GpuWithoutVramBudget) || container.partial || container.resources_open {
        return;
    }
    let Some(memory) = context.settings.gpu.memory_resource.as_deref() else { return };
    let gpu = context.settings.gpu.resource.as_str();
    let resources = &container.resources;
    let Some(request) = resources.limit(gpu).or_else(|| resources.request(gpu)) else { return };
    if !Quantity::parse(&request.value.text).is_ok_and(|quantity| quantity.millis() > 0) {
        return;
    }
    if resources.limit(memory).is_some() || resources.request(memory).is_some() {
        return;
    }
    checker.report(
        context,
        Finding::new(
            Rule::GpuWithoutVramBudget,
            container.anchor,
            format!(
                "{} requests `{gpu}` but declares no VRAM budget (`{memory}`): the scheduler cannot keep the GPU's \
                 tenants within its memory",
                context.subject()
            ),
        )
        .label("no VRAM budget")
        .secondary(request.value.range, "GPU requested here")
        .help(format!(
            "add `{memory}: <budget>` to `resources.limits` (and the same in requests), a whole number of units"
        )),
    );
}
