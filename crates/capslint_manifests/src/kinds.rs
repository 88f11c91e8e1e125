//! Where pod specs live in each kind: the core workloads, and the CRDs where ML work runs (Argo Workflows,
//! Kubeflow training jobs and Trainer runtimes, Volcano jobs, JobSet, LeaderWorkerSet, Ray, Knative,
//! KServe, Kubeflow Notebooks). Any other kind gets a generic walk: a list named `containers` whose items have `name` and
//! `image` is a pod's containers, and the mapping holding it is that pod spec.

use ruff_text_size::TextRange;

use capslint_yaml::Node;

/// A container node and how to read it.
#[derive(Debug, Clone, Copy)]
pub struct ContainerNode<'a> {
    /// The container mapping.
    pub node: Node<'a>,
    /// The name to use when it has none (Argo names its `container` and `script` `main`).
    pub default_name: Option<&'static str>,
    /// The key that introduces it (`container:`), where findings point when it has no name.
    pub key: Option<TextRange>,
    /// It only overrides a container defined elsewhere.
    pub partial: bool,
}

impl<'a> ContainerNode<'a> {
    fn item(node: Node<'a>) -> Self {
        ContainerNode { node, default_name: None, key: None, partial: false }
    }
}

/// A pod spec found in an object.
#[derive(Debug, Clone, Default)]
pub struct PodNode<'a> {
    /// Which pod of the object (`worker group `gpu``).
    pub role: Option<String>,
    /// How many copies run.
    pub replicas: u64,
    /// The app containers.
    pub containers: Vec<ContainerNode<'a>>,
    /// The init containers.
    pub init_containers: Vec<ContainerNode<'a>>,
    /// Pod-level `resources`.
    pub resources: Option<Node<'a>>,
    /// A patch applied to the pod spec when it is created (Argo `podSpecPatch`), merged by
    /// [`super::pod_spec_patch`].
    pub patch: Option<Node<'a>>,
}

/// What the kind says about an object.
#[derive(Debug, Default)]
pub struct Located<'a> {
    /// Its pod specs.
    pub pods: Vec<PodNode<'a>>,
    /// Whether it runs all the time (for CAP209).
    pub always_on: bool,
}

fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// A standard `PodSpec` mapping.
fn pod_spec<'a>(spec: Option<Node<'a>>, role: Option<String>, replicas: u64) -> Option<PodNode<'a>> {
    let spec = spec.filter(|spec| spec.is_mapping())?;
    let items = |key: &str| {
        spec.get(key)
            .into_iter()
            .flat_map(Node::items)
            .filter(|item| item.is_mapping())
            .map(ContainerNode::item)
            .collect()
    };
    Some(PodNode {
        role,
        replicas,
        containers: items("containers"),
        init_containers: items("initContainers"),
        resources: spec.get("resources"),
        patch: None,
    })
}

fn replicas(node: Option<Node<'_>>) -> u64 {
    node.and_then(|replicas| replicas.as_u64()).unwrap_or(1)
}

/// Finds the pod specs of an object of `kind` / `api_version` whose root mapping is `root`.
pub fn locate<'a>(kind: &str, api_version: &str, root: Node<'a>) -> Located<'a> {
    let spec = root.get("spec");
    let at = |keys: &[&str]| spec.and_then(|spec| spec.path(keys));
    let group = api_group(api_version);
    let single = |pod: Option<PodNode<'a>>, always_on: bool| Located { pods: pod.into_iter().collect(), always_on };
    match (kind, group) {
        ("Pod", "") => single(pod_spec(spec, None, 1), true),
        ("PodTemplate", "") => single(pod_spec(root.path(&["template", "spec"]), None, 1), false),
        ("Deployment" | "ReplicaSet" | "StatefulSet", _) | ("ReplicationController", "") => {
            single(pod_spec(at(&["template", "spec"]), None, replicas(at(&["replicas"]))), true)
        }
        ("DaemonSet", _) => single(pod_spec(at(&["template", "spec"]), None, 1), true),
        ("Job", "batch") => single(pod_spec(at(&["template", "spec"]), None, 1), false),
        ("Job", "batch.volcano.sh") => Located { pods: volcano_tasks(spec), always_on: false },
        ("CronJob", "batch.volcano.sh") => {
            Located { pods: volcano_tasks(at(&["jobTemplate", "spec"])), always_on: false }
        }
        ("CronJob", _) => single(pod_spec(at(&["jobTemplate", "spec", "template", "spec"]), None, 1), false),
        ("Rollout", "argoproj.io") => {
            single(pod_spec(at(&["template", "spec"]), None, replicas(at(&["replicas"]))), true)
        }
        ("Workflow" | "WorkflowTemplate" | "ClusterWorkflowTemplate", "argoproj.io") => argo(spec),
        ("CronWorkflow", "argoproj.io") => argo(at(&["workflowSpec"])),
        // MPIJob v1alpha1 has one pod template for every worker, `spec.template`.
        ("MPIJob", _) if group.ends_with("kubeflow.org") && at(&["template"]).is_some() => {
            single(pod_spec(at(&["template", "spec"]), None, replicas(at(&["replicas"]))), false)
        }
        ("PyTorchJob" | "TFJob" | "XGBoostJob" | "MPIJob" | "PaddleJob" | "MXJob" | "JAXJob", _)
            if group.ends_with("kubeflow.org") =>
        {
            kubeflow_replicas(spec)
        }
        ("TrainJob", "trainer.kubeflow.org") => train_job(spec),
        ("TrainingRuntime" | "ClusterTrainingRuntime", "trainer.kubeflow.org") => {
            Located { pods: job_set(at(&["template", "spec"])), always_on: false }
        }
        ("JobSet", "jobset.x-k8s.io") => Located { pods: job_set(spec), always_on: false },
        ("LeaderWorkerSet", "leaderworkerset.x-k8s.io") => {
            let template =
                |key: &str, role: &str| pod_spec(at(&["leaderWorkerTemplate", key, "spec"]), Some(role.to_string()), 1);
            let pods = [template("leaderTemplate", "leader template"), template("workerTemplate", "worker template")];
            Located { pods: pods.into_iter().flatten().collect(), always_on: false }
        }
        ("RayCluster", "ray.io") => ray(spec),
        ("RayJob", "ray.io") => {
            let mut located = ray(at(&["rayClusterSpec"]));
            located.pods.extend(pod_spec(at(&["submitterPodTemplate", "spec"]), Some("submitter".to_string()), 1));
            located
        }
        ("RayService", "ray.io") => ray(at(&["rayClusterConfig"])),
        ("Service", "serving.knative.dev") | ("Notebook", "kubeflow.org") => {
            single(pod_spec(at(&["template", "spec"]), None, 1), false)
        }
        ("ServingRuntime" | "ClusterServingRuntime", "serving.kserve.io") => single(pod_spec(spec, None, 1), false),
        _ => Located { pods: generic(root), always_on: false },
    }
}

/// Argo `spec.templates[]`: `container`, `script`, `containerSet.containers[]`, `sidecars[]` and
/// `initContainers[]` of each template, and of the templates given `inline:` in its steps
/// (`steps[][]`) and DAG tasks (`dag.tasks[]`), which may nest in turn (walked without recursion).
fn argo<'a>(spec: Option<Node<'a>>) -> Located<'a> {
    let mut pods = Vec::new();
    let mut templates: Vec<(Node<'a>, Option<String>)> = spec
        .into_iter()
        .flat_map(|spec| spec.get("templates"))
        .flat_map(Node::items)
        .map(|template| {
            (template, template.get("name").and_then(Node::as_str).map(|name| format!("template `{name}`")))
        })
        .collect();
    templates.reverse();
    while let Some((template, role)) = templates.pop() {
        let inline = |step: Node<'a>| step.get("inline").filter(|inline| inline.is_mapping());
        let step_name = |step: Node<'a>| step.get("name").and_then(Node::as_str).unwrap_or("").to_string();
        let parent = role.clone().unwrap_or_else(|| "template".to_string());
        for step in template.get("steps").into_iter().flat_map(Node::items).flat_map(|group| {
            // `steps` is a list of parallel groups; a group may also be written as a single step.
            if group.is_sequence() { group.items().collect::<Vec<_>>() } else { vec![group] }
        }) {
            if let Some(inline) = inline(step) {
                templates.push((inline, Some(format!("step `{}` of {parent}", step_name(step)))));
            }
        }
        for task in template.path(&["dag", "tasks"]).into_iter().flat_map(Node::items) {
            if let Some(inline) = inline(task) {
                templates.push((inline, Some(format!("task `{}` of {parent}", step_name(task)))));
            }
        }
        // The template's own `podSpecPatch` wins over the workflow's.
        let patch = template.get("podSpecPatch").or(spec.and_then(|spec| spec.get("podSpecPatch")));
        let mut pod = PodNode { role, replicas: 1, patch, ..PodNode::default() };
        for key in ["container", "script"] {
            if let Some((key_node, container)) = template.entry(key).filter(|(_, value)| value.is_mapping()) {
                pod.containers.push(ContainerNode {
                    node: container,
                    default_name: Some("main"),
                    key: Some(key_node.range()),
                    partial: false,
                });
            }
        }
        let listed = |keys: &[&str]| {
            template
                .path(keys)
                .into_iter()
                .flat_map(Node::items)
                .filter(|item| item.is_mapping())
                .map(ContainerNode::item)
        };
        pod.containers.extend(listed(&["containerSet", "containers"]));
        pod.containers.extend(listed(&["sidecars"]));
        pod.init_containers.extend(listed(&["initContainers"]));
        if !pod.containers.is_empty() || !pod.init_containers.is_empty() {
            pods.push(pod);
        }
    }
    Located { pods, always_on: false }
}

/// Volcano `Job` (and the `jobTemplate.spec` of its `CronJob`): `tasks[].template.spec`, each task with
/// its `replicas`.
fn volcano_tasks(spec: Option<Node<'_>>) -> Vec<PodNode<'_>> {
    let mut pods = Vec::new();
    for task in spec.into_iter().flat_map(|spec| spec.get("tasks")).flat_map(Node::items) {
        let role = task.get("name").and_then(Node::as_str).map(|name| format!("task `{name}`"));
        pods.extend(pod_spec(task.path(&["template", "spec"]), role, replicas(task.get("replicas"))));
    }
    pods
}

/// Kubeflow v1 training jobs: `spec.<framework>ReplicaSpecs.<Role>.template.spec`.
fn kubeflow_replicas(spec: Option<Node<'_>>) -> Located<'_> {
    let mut pods = Vec::new();
    for (key, replica_specs) in spec.into_iter().flat_map(Node::entries) {
        if !key.as_str().is_some_and(|key| key.ends_with("ReplicaSpecs")) {
            continue;
        }
        for (role, replica_spec) in replica_specs.entries() {
            let role = role.as_str().map(|role| format!("`{role}` replicas"));
            let count = replicas(replica_spec.get("replicas"));
            pods.extend(pod_spec(replica_spec.path(&["template", "spec"]), role, count));
        }
    }
    Located { pods, always_on: false }
}

/// JobSet `spec.replicatedJobs[].template.spec.template.spec` (also the Kubeflow Trainer runtimes).
fn job_set(spec: Option<Node<'_>>) -> Vec<PodNode<'_>> {
    let mut pods = Vec::new();
    for job in spec.into_iter().flat_map(|spec| spec.get("replicatedJobs")).flat_map(Node::items) {
        let role = job.get("name").and_then(Node::as_str).map(|name| format!("replicated job `{name}`"));
        let count = replicas(job.get("replicas"));
        pods.extend(pod_spec(job.path(&["template", "spec", "template", "spec"]), role, count));
    }
    pods
}

/// Kubeflow Trainer `TrainJob.spec.trainer`: overrides (image, command, env, `resourcesPerNode`) merged
/// into the runtime's trainer container, so only what it sets is checked.
fn train_job(spec: Option<Node<'_>>) -> Located<'_> {
    let trainer = spec.and_then(|spec| spec.entry("trainer")).filter(|(_, trainer)| trainer.is_mapping());
    let pods = trainer
        .map(|(key, node)| PodNode {
            role: None,
            replicas: 1,
            containers: vec![ContainerNode {
                node,
                default_name: Some("trainer"),
                key: Some(key.range()),
                partial: true,
            }],
            ..PodNode::default()
        })
        .into_iter()
        .collect();
    Located { pods, always_on: false }
}

/// Ray `headGroupSpec.template` and `workerGroupSpecs[].template`.
fn ray(spec: Option<Node<'_>>) -> Located<'_> {
    let mut pods = Vec::new();
    let Some(spec) = spec else { return Located::default() };
    pods.extend(pod_spec(spec.path(&["headGroupSpec", "template", "spec"]), Some("head group".to_string()), 1));
    for group in spec.get("workerGroupSpecs").into_iter().flat_map(Node::items) {
        let role = match group.get("groupName").and_then(Node::as_str) {
            Some(name) => format!("worker group `{name}`"),
            None => "worker group".to_string(),
        };
        let count = replicas(group.get("replicas").or_else(|| group.get("minReplicas")));
        pods.extend(pod_spec(group.path(&["template", "spec"]), Some(role), count));
    }
    Located { pods, always_on: false }
}

fn looks_like_containers(list: Node<'_>) -> bool {
    let mut items = list.items().peekable();
    items.peek().is_some()
        && items.all(|item| item.get("name").is_some_and(|name| name.as_str().is_some()) && item.get("image").is_some())
}

/// The fallback for unknown kinds: every `containers` list of named containers with an image, with the
/// mapping that holds it as the pod spec. Iterative: nesting depth cannot overflow the stack.
fn generic(root: Node<'_>) -> Vec<PodNode<'_>> {
    let mut pods = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_sequence() {
            stack.extend(node.items().collect::<Vec<_>>().into_iter().rev());
            continue;
        }
        let holds_containers = node.get("containers").is_some_and(looks_like_containers);
        if holds_containers && let Some(pod) = pod_spec(Some(node), None, 1) {
            let init_ok = node
                .get("initContainers")
                .is_none_or(|list| list.items().next().is_none() || looks_like_containers(list));
            pods.push(if init_ok { pod } else { PodNode { init_containers: Vec::new(), ..pod } });
        }
        let children: Vec<Node<'_>> = node
            .entries()
            .filter(|(key, _)| !(holds_containers && matches!(key.as_str(), Some("containers" | "initContainers"))))
            .map(|(_, value)| value)
            .filter(|value| value.is_mapping() || value.is_sequence())
            .collect();
        stack.extend(children.into_iter().rev());
    }
    pods
}
