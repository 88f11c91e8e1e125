//! What every CAP2xx rule reads of the container it checks: its object, pod, effective environment and
//! CPU limit ([`ContainerContext`], [`CpuLimit`]), and the project around it ([`Project`], [`Merged`]).
//! It reports nothing: the rules and the fixes they offer both read it.

use std::sync::Arc;

use ruff_text_size::TextRange;

use crate::ManifestFile;
use crate::configmaps::ConfigMapIndex;
use crate::env::Env;
use crate::model::{Container, Object, Pod, Resource};
use capslint_cpu::quantity::Quantity;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::source::SourceFile;
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

    /// The objects whose `capslint.io/ignore` annotation covers the container: its object, and the
    /// ConfigMap that holds the object as a string.
    pub fn owners(&self) -> impl Iterator<Item = (usize, usize)> + use<'p> {
        let holder = self.object.embedded.as_ref().map(|embedded| (self.file, embedded.holder));
        std::iter::once((self.file, self.object_index)).chain(holder)
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
    /// `builtin-infrastructure = false`, an image or container name of the built-in list, an API server's
    /// with nothing of compute in the command line or the image ([`crate::infrastructure::is_api_server`]),
    /// or a `command` that runs a server with nothing of compute in the command line or the image
    /// ([`crate::infrastructure::runs_a_server`]), that sets no thread variable itself. Everything else is
    /// compute.
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
        let (command, args) = (self.container.command.as_deref(), self.container.args.as_deref());
        containers.builtin_infrastructure
            && (image.is_some_and(crate::infrastructure::is_infrastructure)
                || name.is_some_and(crate::infrastructure::is_infrastructure_name)
                || crate::infrastructure::is_api_server(image, name, command, args)
                || crate::infrastructure::runs_a_server(command, args, image))
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
