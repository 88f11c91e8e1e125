//! The typed manifest model: Kubernetes objects, their pod specs and containers (env, envFrom, resources,
//! command, args), pod-level resources, replicas, namespaces and ConfigMaps. Every value keeps the byte
//! range it was written at. Built once per file from the YAML tree; the rules read only this.

pub use capslint_diagnostics::suppress::yaml::IgnoreCode;
use ruff_text_size::{TextRange, TextSize};
use rustc_hash::FxHashMap;

/// A scalar as Kubernetes reads it (a string), and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    /// The text (`4` and `"4"` both read `4`).
    pub text: String,
    /// Its byte range.
    pub range: TextRange,
}

/// A Kubernetes object: a document (or `List` item) with string `apiVersion` and `kind`.
#[derive(Debug, Clone)]
pub struct Object {
    /// `kind`.
    pub kind: String,
    /// `apiVersion`.
    pub api_version: String,
    /// `metadata.name`, else `metadata.generateName`.
    pub name: Option<String>,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// The `kind` value, where object-level findings point.
    pub range: TextRange,
    /// The codes of its `capslint.io/ignore` annotation.
    pub ignore: Vec<IgnoreCode>,
    /// Its `capslint.io/compute` annotation: whether the thread-cap rules check its containers.
    pub compute: Option<bool>,
    /// Whether it runs all the time (Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController,
    /// Argo Rollout, Pod): its VRAM budgets count toward the node's capacity (CAP209).
    pub always_on: bool,
    /// Its pod specs.
    pub pods: Vec<Pod>,
    /// Its data, when it is a ConfigMap.
    pub config_map: Option<ConfigMapData>,
    /// Where it is held, when it is written as a string in a ConfigMap's `data`.
    pub embedded: Option<Embedded>,
}

impl Object {
    /// `Deployment `train``, for messages; `Job (in `data.template.yaml` of ConfigMap `trials`)` for an
    /// object held in a ConfigMap.
    pub fn describe(&self) -> String {
        let own = match &self.name {
            Some(name) => format!("{} `{name}`", self.kind),
            None => self.kind.clone(),
        };
        match &self.embedded {
            Some(embedded) => format!("{own} (in `data.{}` of {})", embedded.key, embedded.config_map),
            None => own,
        }
    }
}

/// Where an object held as a string in a ConfigMap's `data` is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embedded {
    /// The index, among its file's objects, of the ConfigMap that holds it: its `capslint.io/ignore`
    /// annotation applies to the object.
    pub holder: usize,
    /// The ConfigMap, for messages (`ConfigMap `trials``).
    pub config_map: String,
    /// The `data` key.
    pub key: String,
    /// Whether its ranges are where each value is written (a literal block scalar), rather than all at the
    /// `data` key.
    pub exact: bool,
}

/// A pod spec (or, for Argo Workflows, a container template).
#[derive(Debug, Clone, Default)]
pub struct Pod {
    /// Which pod of the object, when it has several (`worker group `gpu``, `template `train``).
    pub role: Option<String>,
    /// How many copies run (`replicas`; 1 for a DaemonSet, per node).
    pub replicas: u64,
    /// The app containers.
    pub containers: Vec<Container>,
    /// The init containers.
    pub init_containers: Vec<Container>,
    /// Pod-level `spec.resources`.
    pub resources: Resources,
}

/// A container.
#[derive(Debug, Clone, Default)]
pub struct Container {
    /// `name` (for Argo's `container` and `script`, `main` when absent).
    pub name: Option<String>,
    /// Where findings about something missing point: the `name` value, else the container's first key.
    pub anchor: TextRange,
    /// Whether it is an init container.
    pub init: bool,
    /// Whether it only overrides fields of a container defined elsewhere (Kubeflow `TrainJob.spec.trainer`
    /// over its runtime): only values that are wrong are reported, not values that are missing.
    pub partial: bool,
    /// `resources`.
    pub resources: Resources,
    /// `resources` come from somewhere capslint cannot read (an Airflow operator's arguments).
    pub resources_open: bool,
    /// `env`, in order.
    pub env: Vec<EnvVar>,
    /// `env` is present but not a list capslint can read.
    pub env_open: bool,
    /// `envFrom`, in order.
    pub env_from: Vec<EnvFrom>,
    /// `image`, as written.
    pub image: Option<String>,
    /// `command`, when given (otherwise the image's entrypoint runs).
    pub command: Option<Vec<String>>,
    /// `args`, when given.
    pub args: Option<Vec<String>>,
    /// How the container is written in its file, for fixes that edit it; `None` when it is not written
    /// there as a mapping of its own (an alias, a patch string, an operator's arguments).
    pub layout: Option<ContainerLayout>,
}

/// Where a container's mapping and its `env` are written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerLayout {
    /// Where the mapping starts (its first key, or `{`).
    pub start: TextSize,
    /// The `name` value.
    pub name: Option<TextRange>,
    /// The `env` key, when present.
    pub env_key: Option<TextRange>,
    /// The `env` list's first item and where its last scalar ends, when it is a non-empty sequence.
    pub env_items: Option<(TextSize, TextSize)>,
    /// The `resources` mapping, when written.
    pub resources: Option<MappingLayout>,
    /// The `resources.limits` mapping, when written.
    pub limits: Option<MappingLayout>,
}

/// Where a mapping is written: its start (`{` for a flow mapping) and its first key's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappingLayout {
    /// Where the mapping starts.
    pub start: TextSize,
    /// Where its first key starts, when it has one.
    pub first_key: Option<TextSize>,
}

impl Container {
    /// The name for messages.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or("(unnamed)")
    }

    /// `command` followed by `args`.
    pub fn argv(&self) -> Vec<String> {
        self.command.iter().flatten().chain(self.args.iter().flatten()).cloned().collect()
    }
}

/// `resources.limits` and `resources.requests`.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    /// `limits`, in order.
    pub limits: Vec<Resource>,
    /// `requests`, in order.
    pub requests: Vec<Resource>,
}

impl Resources {
    /// The limit of `name`.
    pub fn limit(&self, name: &str) -> Option<&Resource> {
        self.limits.iter().rev().find(|resource| resource.name == name)
    }

    /// The request of `name`.
    pub fn request(&self, name: &str) -> Option<&Resource> {
        self.requests.iter().rev().find(|resource| resource.name == name)
    }
}

/// One resource quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The resource name (`cpu`, `nvidia.com/gpu`).
    pub name: String,
    /// The quantity as written (possibly not a valid quantity).
    pub value: Value,
}

/// One `env` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    /// `name`.
    pub name: String,
    /// Where the name is written.
    pub name_range: TextRange,
    /// Where the value comes from.
    pub source: EnvSource,
}

/// The value of an `env` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvSource {
    /// `value:` (an absent value reads as the empty string, at the name).
    Literal(Value),
    /// `valueFrom.resourceFieldRef`.
    ResourceField {
        /// `resource` (`limits.cpu`).
        resource: Value,
        /// `containerName`, when given.
        container: Option<String>,
        /// `divisor`, when given.
        divisor: Option<Value>,
    },
    /// `valueFrom.configMapKeyRef`.
    ConfigMapKey {
        /// The ConfigMap.
        name: String,
        /// The key.
        key: String,
    },
    /// Another `valueFrom` (`fieldRef`, `secretKeyRef`): set, value unknown.
    Other,
}

/// One `envFrom` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvFrom {
    /// What it reads.
    pub source: EnvFromSource,
    /// `prefix`, prepended to every key.
    pub prefix: String,
    /// Where the entry is written.
    pub range: TextRange,
}

/// The source of an `envFrom` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvFromSource {
    /// `configMapRef.name`.
    ConfigMap(String),
    /// `secretRef` (contents never in the scan) or something capslint cannot read.
    Opaque,
}

/// A ConfigMap's `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigMapData {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// `data`, by key.
    entries: FxHashMap<String, Value>,
}

impl ConfigMapData {
    /// A ConfigMap with `entries` (a later duplicate wins).
    pub fn new(name: String, namespace: Option<String>, entries: impl IntoIterator<Item = (String, Value)>) -> Self {
        ConfigMapData { name, namespace, entries: entries.into_iter().collect() }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }
}
