//! CAP210 extended-resource-mismatch: an extended resource (a name with a `/`, outside `kubernetes.io/`)
//! whose request differs from its limit, that is requested without a limit, or that is not a whole
//! number. Extended resources cannot be overcommitted: the API server rejects all three.

use super::{Checker, ContainerContext};
use crate::model::Resource;
use capslint_cpu::quantity::Quantity;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// Whether `name` is an extended resource (apimachinery `IsExtendedResourceName`).
pub fn is_extended(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

fn not_whole(resource: &Resource) -> bool {
    Quantity::parse(&resource.value.text).map_or(true, |quantity| !quantity.is_whole() || quantity.is_negative())
}

/// Checks one app container.
pub fn check<'p>(checker: &mut Checker<'p>, context: &ContainerContext<'p>) {
    let resources = &context.container.resources;
    if !checker.enabled(Rule::ExtendedResourceMismatch) || context.container.resources_open {
        return;
    }
    let mut names: Vec<&str> = Vec::new();
    for resource in resources.limits.iter().chain(&resources.requests) {
        if is_extended(&resource.name) && !names.contains(&resource.name.as_str()) {
            names.push(&resource.name);
        }
    }
    let subject = context.subject();
    for name in names {
        let (limit, request) = (resources.limit(name), resources.request(name));
        // A value filled in later is not judged, nor compared with its counterpart.
        if [limit, request]
            .into_iter()
            .flatten()
            .any(|resource| crate::placeholder::is_placeholder(&resource.value.text))
        {
            continue;
        }
        let finding = if let Some(bad) = [limit, request].into_iter().flatten().find(|resource| not_whole(resource)) {
            Finding::new(
                Rule::ExtendedResourceMismatch,
                bad.value.range,
                format!(
                    "extended resource `{name}` of {subject} is `{}`, not a whole number: the API server rejects it",
                    bad.value.text
                ),
            )
            .label("not a whole number")
            .help("extended resources are counted in whole units: use an integer")
        } else if let (Some(request), None) = (request, limit) {
            Finding::new(
                Rule::ExtendedResourceMismatch,
                request.value.range,
                format!(
                    "{subject} requests extended resource `{name}` without a limit: the API server rejects it \
                     (extended resources cannot be overcommitted)"
                ),
            )
            .label("request without a limit")
            .help(format!("add `{name}: {}` to `resources.limits`", request.value.text))
        } else if let (Some(request), Some(limit)) = (request, limit)
            && Quantity::parse(&request.value.text) != Quantity::parse(&limit.value.text)
        {
            Finding::new(
                Rule::ExtendedResourceMismatch,
                request.value.range,
                format!(
                    "extended resource `{name}` of {subject} requests `{}` but is limited to `{}`: the API server \
                     rejects it (request must equal limit)",
                    request.value.text, limit.value.text
                ),
            )
            .label("request differs from the limit")
            .secondary(limit.value.range, "limit")
            .help("set the request equal to the limit, or drop the request (it defaults to the limit)")
        } else {
            continue;
        };
        checker.report(context, finding);
    }
}
