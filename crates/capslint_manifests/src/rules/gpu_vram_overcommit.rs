//! CAP209 gpu-vram-overcommit (active when `gpu.memory-resource` and `gpu.memory-capacity` are
//! configured): the VRAM budgets of every always-on workload of the scan (Deployment, StatefulSet,
//! DaemonSet, ReplicaSet, ReplicationController, Argo Rollout, Pod), times their replicas, add up to more
//! than a node advertises. A DaemonSet counts once: it runs one pod per node. Files whose configuration
//! names a different resource or capacity are summed separately. Reported once, on the first contributor,
//! with a label at every other one and the arithmetic in the message.

use std::collections::BTreeMap;
use std::sync::Arc;

use ruff_text_size::TextRange;
use rustc_hash::FxHashSet;

use super::{Project, Reported};
use capslint_cpu::quantity::Quantity;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// One container's share of the total.
struct Contribution {
    file: usize,
    object: usize,
    value: TextRange,
    anchor: TextRange,
    units: u128,
    replicas: u64,
    who: String,
}

impl Contribution {
    fn total(&self) -> u128 {
        self.units.saturating_mul(u128::from(self.replicas))
    }

    fn term(&self) -> String {
        if self.replicas == 1 { self.units.to_string() } else { format!("{} x {}", self.replicas, self.units) }
    }
}

/// Sums the budgets of the scan; `excluded` are `(file, object)` pairs that never run on their own (Airflow
/// pod templates).
pub fn check(project: &Project<'_>, excluded: &FxHashSet<(usize, usize)>) -> Vec<Reported> {
    let mut groups: BTreeMap<(String, u64), Vec<Contribution>> = BTreeMap::new();
    for (file_index, file) in project.files.iter().enumerate() {
        let gpu = &file.settings.gpu;
        let (Some(resource), Some(capacity)) = (gpu.memory_resource.as_ref(), gpu.memory_capacity) else { continue };
        if !file.rules.contains(Rule::GpuVramOvercommit) {
            continue;
        }
        for (object_index, object) in file.objects.iter().enumerate() {
            if !object.always_on || excluded.contains(&(file_index, object_index)) {
                continue;
            }
            for pod in &object.pods {
                for container in &pod.containers {
                    let Some(budget) = container.resources.limit(resource) else { continue };
                    let Ok(quantity) = Quantity::parse(&budget.value.text) else { continue };
                    if !quantity.is_whole() || quantity.millis() <= 0 || pod.replicas == 0 {
                        continue;
                    }
                    groups.entry((resource.clone(), capacity)).or_default().push(Contribution {
                        file: file_index,
                        object: object_index,
                        value: budget.value.range,
                        anchor: container.anchor,
                        units: quantity.floor() as u128,
                        replicas: pod.replicas,
                        who: format!("{}, container `{}`", object.describe(), container.display_name()),
                    });
                }
            }
        }
    }
    let mut reported = Vec::new();
    for ((resource, capacity), mut contributions) in groups {
        contributions.sort_by_key(|contribution| (contribution.file, contribution.value.start()));
        let total = contributions.iter().fold(0u128, |sum, contribution| sum.saturating_add(contribution.total()));
        if total <= u128::from(capacity) {
            continue;
        }
        let terms: Vec<String> = contributions.iter().map(Contribution::term).collect();
        let first = &contributions[0];
        let message = format!(
            "always-on GPU tenants reserve more VRAM than a node advertises: {} = {total} > {capacity} {resource}",
            terms.join(" + ")
        );
        let mut finding = Finding::new(Rule::GpuVramOvercommit, first.value, String::new())
            .label(format!("{} ({})", first.term(), first.who))
            .help(format!(
                "lower the budgets or the replicas so the sum fits {capacity} {resource}, or move tenants to another GPU node"
            ));
        for contribution in &contributions[1..] {
            let text = format!("{} ({})", contribution.term(), contribution.who);
            if contribution.file == first.file {
                finding = finding.secondary(contribution.value, text);
            } else {
                let source = &project.files[contribution.file].file;
                finding = finding.related(Arc::clone(source), contribution.value, text);
            }
        }
        finding.message = message;
        reported.push(Reported {
            file: first.file,
            finding,
            owners: contributions.iter().map(|contribution| (contribution.file, contribution.object)).collect(),
            lines: contributions
                .iter()
                .flat_map(|contribution| {
                    [(contribution.file, contribution.value.start()), (contribution.file, contribution.anchor.start())]
                })
                .collect(),
        });
    }
    reported
}
