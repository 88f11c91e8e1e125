//! The CAP2xx rules, one module each, and what they share: the container being checked with its pod,
//! object, effective environment and CPU limit, and the checker that collects what they report.

mod extended_resource_mismatch;
mod fractional_cpu_limit;
pub mod gpu_vram_overcommit;
mod gpu_without_vram_budget;
mod missing_cpu_limit;
mod missing_cpu_limit_ref;
mod missing_thread_caps;
mod not_guaranteed_for_exclusive_cpus;
mod omp_wait_policy_not_passive;
mod thread_cap_exceeds_limit;

use std::sync::Arc;

use ruff_text_size::TextRange;

use super::ManifestFile;
use super::configmaps::ConfigMapIndex;
use super::env::Env;
use super::kustomize::Provenance;
use super::model::{Container, Object, Pod, Resource};
use capslint_cpu::quantity::Quantity;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;
use capslint_diagnostics::selection::RuleSet;
use capslint_diagnostics::source::SourceFile;
pub use capslint_diagnostics::suppress::Reported;
use capslint_workspace::settings::Settings;

/// The Downward API resource that carries the CPU limit.
pub const LIMITS_CPU: &str = "limits.cpu";

/// Every scanned manifest and the ConfigMaps among them.
pub struct Project<'p> {
    /// The files, sorted by display name.
    pub files: &'p [ManifestFile],
    /// Their ConfigMaps.
    pub config_maps: ConfigMapIndex<'p>,
}

/// Where a view of a pod template comes from: the Airflow operator that merges its arguments into it.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The DAG.
    pub dag: Arc<SourceFile>,
    /// The operator call.
    pub call: TextRange,
    /// What to say there.
    pub text: String,
}

/// The CPU limit that applies to a container.
#[derive(Debug, Clone, Copy)]
pub enum CpuLimit<'p> {
    /// None, at container or pod level.
    Missing,
    /// Set by arguments capslint cannot read (an Airflow operator's `container_resources` from a call).
    Unknown,
    /// Written, but not a valid quantity, or negative.
    Invalid(&'p Resource),
    /// `0`, which Kubernetes treats as no limit.
    Zero(&'p Resource),
    /// A limit.
    Valid {
        /// Where it is written.
        resource: &'p Resource,
        /// Its value.
        quantity: Quantity,
        /// Whether it is the pod-level `spec.resources` limit.
        pod_level: bool,
    },
}

impl<'p> CpuLimit<'p> {
    fn classify(resource: &'p Resource, pod_level: bool) -> CpuLimit<'p> {
        if crate::placeholder::is_placeholder(&resource.value.text) {
            return CpuLimit::Unknown;
        }
        match Quantity::parse(&resource.value.text) {
            Ok(quantity) if quantity.is_negative() => CpuLimit::Invalid(resource),
            Ok(quantity) if quantity.is_zero() => CpuLimit::Zero(resource),
            Ok(quantity) => CpuLimit::Valid { resource, quantity, pod_level },
            Err(_) => CpuLimit::Invalid(resource),
        }
    }

    /// The container's own limit, else the pod-level one.
    pub fn of(container: &'p Container, pod: &'p Pod) -> CpuLimit<'p> {
        if container.resources_open {
            return CpuLimit::Unknown;
        }
        if let Some(resource) = container.resources.limit("cpu") {
            return Self::classify(resource, false);
        }
        match pod.resources.limit("cpu") {
            Some(resource) => Self::classify(resource, true),
            None => CpuLimit::Missing,
        }
    }

    /// The limit, when it is a usable one.
    pub fn quantity(self) -> Option<Quantity> {
        match self {
            CpuLimit::Valid { quantity, .. } => Some(quantity),
            _ => None,
        }
    }
}

/// One container under check, with everything the rules read about it.
pub struct ContainerContext<'p> {
    /// The project.
    pub project: &'p Project<'p>,
    /// The index of its file.
    pub file: usize,
    /// The index of its object in the file.
    pub object_index: usize,
    /// Its object.
    pub object: &'p Object,
    /// Its pod.
    pub pod: &'p Pod,
    /// The container.
    pub container: &'p Container,
    /// Its effective environment.
    pub env: Env<'p>,
    /// Its CPU limit.
    pub limit: CpuLimit<'p>,
    /// The settings of its file.
    pub settings: &'p Settings,
}

impl<'p> ContainerContext<'p> {
    /// `container `train` of Deployment `churn``, `init container `setup` (worker group `gpu`) of
    /// RayCluster `ray``.
    pub fn subject(&self) -> String {
        let kind = if self.container.init { "init container" } else { "container" };
        let role = self.pod.role.as_ref().map(|role| format!(" ({role})")).unwrap_or_default();
        format!("{kind} `{}`{role} of {}", self.container.display_name(), self.object.describe())
    }

    /// The source file of the container.
    pub fn source(&self) -> &'p Arc<SourceFile> {
        &self.project.files[self.file].file
    }

    /// Labels the container on a finding reported in file `at` (a ConfigMap's): a secondary label in the
    /// same file, otherwise a related location.
    pub fn label_container(&self, finding: Finding, at: usize, text: String) -> Finding {
        if at == self.file {
            finding.secondary(self.container.anchor, text)
        } else {
            finding.related(Arc::clone(self.source()), self.container.anchor, text)
        }
    }

    /// Whether the thread-cap rules leave the container alone. Explicit choices first: the object's
    /// `capslint.io/compute` annotation, then the `[containers]` globs, compute before skip
    /// (`compute-images` / `compute-containers`, then `skip-images` / `skip-containers`); then, unless
    /// `builtin-infrastructure = false`, an image or container name of the built-in list
    /// ([`crate::infrastructure`]) that sets no thread variable itself. Everything else is compute.
    pub fn runs_no_thread_pools(&self) -> bool {
        if let Some(compute) = self.object.compute {
            return !compute;
        }
        let image = self.container.image.as_deref();
        let name = self.container.name.as_deref();
        let containers = &self.settings.containers;
        let matches = |globs: &Option<globset::GlobSet>, value: Option<&str>| {
            value.is_some_and(|value| globs.as_ref().is_some_and(|globs| globs.is_match(value)))
        };
        if matches(&containers.compute_images, image) || matches(&containers.compute_containers, name) {
            return false;
        }
        if matches(&containers.skip_images, image) || matches(&containers.skip_containers, name) {
            return true;
        }
        containers.builtin_infrastructure
            && (image.is_some_and(super::infrastructure::is_infrastructure)
                || name.is_some_and(super::infrastructure::is_infrastructure_name))
            && !self.env.exec
            && !self.cap_variables().any(|name| self.env.get(name).is_some())
            && self.env.get("OMP_WAIT_POLICY").is_none()
    }

    /// The variables that count as thread caps: the configured ones, then the other known thread
    /// variables.
    pub fn cap_variables(&self) -> impl Iterator<Item = &'p str> + use<'p> {
        let configured = self.settings.thread_caps.iter().map(String::as_str);
        let known = capslint_cpu::thread_variables::caps()
            .filter(|name| !self.settings.thread_caps.iter().any(|cap| cap == name))
            .map(|name| -> &'p str { name });
        configured.chain(known)
    }
}

/// Collects findings for one file (or one view of it).
pub struct Checker<'p> {
    rules: RuleSet,
    strict: bool,
    merged: Option<&'p Merged>,
    provenance: Option<&'p Provenance>,
    out: Vec<Reported>,
}

impl<'p> Checker<'p> {
    /// A checker for a file with `rules`; `merged` marks a view through an Airflow operator.
    pub fn new(rules: RuleSet, strict: bool, merged: Option<&'p Merged>) -> Self {
        Checker { rules, strict, merged, provenance: None, out: Vec::new() }
    }

    /// Marks a view of a kustomize overlay: what is reported is placed where `provenance` says each
    /// value is written.
    #[must_use]
    pub fn placed_by(mut self, provenance: &'p Provenance) -> Self {
        self.provenance = Some(provenance);
        self
    }

    /// Whether `rule` runs.
    pub fn enabled(&self, rule: Rule) -> bool {
        self.rules.contains(rule)
    }

    /// Whether unknown provenance is reported.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Reports a finding about `context`'s container, at a range of its own file.
    pub fn report(&mut self, context: &ContainerContext<'p>, finding: Finding) {
        let lines = vec![(context.file, finding.range.start()), (context.file, context.container.anchor.start())];
        let owners = vec![(context.file, context.object_index)];
        self.push(context, Reported { file: context.file, finding, owners, lines });
    }

    /// Reports a finding placed elsewhere (in a ConfigMap), suppressible there and at the container.
    pub fn report_at(&mut self, context: &ContainerContext<'p>, file: usize, object: usize, finding: Finding) {
        let lines = vec![(file, finding.range.start()), (context.file, context.container.anchor.start())];
        let owners = vec![(file, object), (context.file, context.object_index)];
        self.push(context, Reported { file, finding, owners, lines });
    }

    fn push(&mut self, context: &ContainerContext<'p>, mut reported: Reported) {
        if !self.enabled(reported.finding.rule) {
            return;
        }
        // The edits of a fix are in the text the rules read. A rendered overlay's view is not a file: its
        // fix is made again for the file the finding is placed in (the base's container, the patch's
        // value). An operator's view has no file of its own: there the fix is only shown.
        let fix = reported.finding.fix.take();
        if let Some(provenance) = self.provenance {
            provenance.place(&mut reported, context.project.files);
        }
        reported.finding.fix = match (fix, self.provenance.is_some() || self.merged.is_some()) {
            (Some(fix), true) => {
                // The file's objects are its text as written, parsed once for the whole run.
                let placed = &context.project.files[reported.file];
                let relocated = self.provenance.and_then(|_| {
                    let (objects, text) = (&placed.objects, placed.file.text());
                    crate::fix::relocate(context, reported.finding.rule, objects, text, reported.finding.range)
                });
                relocated.or_else(|| {
                    let message = format!("{} (in the file that writes this container)", fix.message);
                    Some(capslint_diagnostics::fix::Fix::display_only(message, Vec::new()))
                })
            }
            (fix, _) => fix,
        };
        if let Some(merged) = self.merged {
            reported.finding = reported.finding.related(Arc::clone(&merged.dag), merged.call, merged.text.clone());
        }
        self.out.push(reported);
    }

    /// What was reported.
    pub fn into_reported(self) -> Vec<Reported> {
        self.out
    }
}

/// Runs every per-container and per-pod rule on one pod.
pub fn check_pod<'p>(checker: &mut Checker<'p>, contexts: &[ContainerContext<'p>]) {
    for context in contexts {
        missing_cpu_limit::check(checker, context);
        if context.container.init {
            continue;
        }
        missing_cpu_limit_ref::check(checker, context);
        missing_thread_caps::check(checker, context);
        thread_cap_exceeds_limit::check(checker, context);
        omp_wait_policy_not_passive::check(checker, context);
        fractional_cpu_limit::check(checker, context);
        gpu_without_vram_budget::check(checker, context);
        extended_resource_mismatch::check(checker, context);
    }
    fractional_cpu_limit::check_pod_level(checker, contexts);
    not_guaranteed_for_exclusive_cpus::check(checker, contexts);
}

/// `a`, `a and b`, `a, b and c`.
pub fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
