//! Containers that run no OpenMP or BLAS thread pools: web servers, proxies, caches, databases, message
//! brokers, log shippers, shell-utility images and Kubernetes controllers, known by their image or name,
//! or by what their `command` runs ([`runs_a_server`]: a known server, or a binary by path such as
//! `/bin/ui` or `./manager`, when nothing in the command line is Python or a compute launcher and the
//! image is no ML image). The thread-cap rules (CAP202, CAP203, CAP205) and CAP206 (a fractional limit,
//! which matters for caps derived from it and for exclusive cores) leave such a container alone unless it
//! sets a thread variable itself: its team cannot change the image's entrypoint, and nothing in it reads
//! the caps. CAP201 (a CPU limit) still applies to every container.

/// Image repositories (the last path component, without tag or digest) of infrastructure software.
const INFRASTRUCTURE_IMAGES: &[&str] = &[
    // Web servers and proxies.
    "nginx",
    "nginx-unprivileged",
    "openresty",
    "httpd",
    "caddy",
    "haproxy",
    "envoy",
    "traefik",
    "proxyv2",
    "oauth2-proxy",
    "cloud-sql-proxy",
    "kube-rbac-proxy",
    // Service mesh and cluster services.
    "pilot",
    "ztunnel",
    "install-cni",
    "coredns",
    "metrics-server",
    "kube-state-metrics",
    "dex",
    "kiali",
    // Caches, databases and brokers.
    "redis",
    "valkey",
    "memcached",
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "mongo",
    "mongodb",
    "rabbitmq",
    "nats",
    "etcd",
    "minio",
    "mc",
    "elasticsearch",
    "opensearch",
    "influxdb",
    "cassandra",
    "zookeeper",
    "kafka",
    "consul",
    "vault",
    // Storage emulators.
    "azurite",
    // Logs and metrics.
    "fluentd",
    "fluent-bit",
    "vector",
    "filebeat",
    "promtail",
    "prometheus",
    "node-exporter",
    "pushgateway",
    "statsd-exporter",
    "grafana",
    "alertmanager",
    "jaeger",
    "opentelemetry-collector",
    "otel-collector",
    // Shell utilities, as used by init containers and workflow steps.
    "busybox",
    "alpine",
    "curl",
    "kubectl",
    "git",
    "alpine-git",
    "pause",
    "debian",
    "ubuntu",
    "docker",
    "cloud-sdk",
    "google-cloud-cli",
    "aws-cli",
    "azure-cli",
    // Workflow engines' own images and the demo images of their examples.
    "argoexec",
    "argocli",
    "workflow-controller",
    "argosay",
    "whalesay",
];

/// Image name suffixes of Kubernetes controllers and sidecars written in Go.
const INFRASTRUCTURE_SUFFIXES: &[&str] = &[
    "-controller",
    "-operator",
    "-webhook",
    "-exporter",
    "-proxy",
    "-controller-manager",
    "-webhook-manager",
    "-scheduler",
];

/// Programs that are servers whatever their path (`command: [envoy, -c, ...]`, `command: [nginx]`), beside
/// the names of [`INFRASTRUCTURE_IMAGES`].
const SERVER_PROGRAMS: &[&str] = &[
    "redis-server",
    "mongod",
    "mysqld",
    "mariadbd",
    "grafana-server",
    "pilot-agent",
    "pilot-discovery",
    "manager",
    "controller",
    "webhook",
    "metadata_store_server",
];

/// Programs (by file name) that run compute, or may: interpreters and launchers of Python and of the
/// other languages that run OpenMP or BLAS, and model servers. Anywhere in the command line, they mean
/// the container is not infrastructure.
const COMPUTE_PROGRAMS: &[&str] = &[
    "ipython",
    "torchrun",
    "deepspeed",
    "accelerate",
    "jupyter",
    "jupyter-lab",
    "jupyter-notebook",
    "jupyterhub-singleuser",
    "mpirun",
    "mpiexec",
    "horovodrun",
    "ray",
    "papermill",
    "gunicorn",
    "uvicorn",
    "celery",
    "streamlit",
    "dask",
    "dask-worker",
    "dask-scheduler",
    "spark-submit",
    "pyspark",
    "rscript",
    "r",
    "julia",
    "conda",
    "mamba",
    "micromamba",
    "pip",
    "uv",
    "tritonserver",
    "tensorflow_model_server",
    "torchserve",
    "mlserver",
    "vllm",
    "text-generation-launcher",
    "text-generation-server",
    "ollama",
    "llama-server",
    "ovms",
];

/// Programs that start another program or run a script: with one of them the command line says nothing
/// about what runs. `sshd` is the entrypoint of MPI workers, whose launcher starts the training processes
/// through it. Wrappers that only exec their arguments (`tini`, `dumb-init`) are looked through.
const OPAQUE_PROGRAMS: &[&str] = &[
    "sh", "bash", "ash", "dash", "zsh", "ksh", "env", "exec", "java", "perl", "ruby", "php", "dotnet", "make", "sshd",
    "ssh",
];

/// Init wrappers that run their arguments as the program.
const WRAPPERS: &[&str] = &["tini", "dumb-init", "tini-static", "catatonit", "--"];

/// File extensions of scripts and notebooks: a program with one runs an interpreter.
const SCRIPT_EXTENSIONS: &[&str] = &[".py", ".ipynb", ".sh", ".bash", ".r", ".jl", ".pl", ".rb", ".js", ".ts"];

/// Words of a program's name that say it runs someone's code rather than a server.
const LAUNCH_WORDS: &[&str] = &["entrypoint", "start", "run", "launch", "train", "job", "worker", "exec", "init"];

/// Words (split at `/`, `-`, `_`, `.`, `:`) of an image that is an ML base image or ML server.
const ML_IMAGE_WORDS: &[&str] = &[
    "ray",
    "tf",
    "jax",
    "mlx",
    "llm",
    "dask",
    "spark",
    "numpy",
    "scipy",
    "pandas",
    "rapids",
    "cudnn",
    "tgi",
    "sglang",
    "ollama",
    "mlserver",
    "kserve-container",
];

/// Parts of an ML image's name, anywhere in it (`pytorch-mnist-cpu`, `tensorflow/serving`,
/// `nvcr.io/nvidia/...`, `kserve/sklearnserver`).
const ML_IMAGE_PARTS: &[&str] = &[
    "pytorch",
    "torch",
    "tensorflow",
    "jupyter",
    "notebook",
    "python",
    "cuda",
    "nvidia",
    "triton",
    "vllm",
    "huggingface",
    "transformers",
    "sklearn",
    "scikit",
    "xgb",
    "xgboost",
    "lgb",
    "lightgbm",
    "mxnet",
    "paddle",
    "onnx",
    "openvino",
    "deepspeed",
    "conda",
    "mamba",
    "tensorrt",
    "llama",
    "pmml",
];

/// Whether a container's command line shows that it runs a server or another program without OpenMP or
/// BLAS pools: its program (the first word of `command`, through `tini` and the like) is a known server
/// or a binary given by path (`/bin/ui`, `./manager`, `/metadata_store_server`) that is no shell,
/// interpreter, script or launcher; no word of `command` and `args` (shell scripts included) runs Python or a
/// compute launcher (`python`, `torchrun`, `deepspeed`, `accelerate`, `jupyter`, `mpirun`, a `.py` file,
/// a model server); and its image is no ML image ([`is_ml_image`]). Without `command` the image's
/// entrypoint runs, which the manifest does not show: no evidence.
pub fn runs_a_server(command: Option<&[String]>, args: Option<&[String]>, image: Option<&str>) -> bool {
    let Some(command) = command else { return false };
    if image.is_some_and(is_ml_image) {
        return false;
    }
    if command_runs_compute(Some(command), args) {
        return false;
    }
    let Some(program) = command.iter().map(String::as_str).find(|word| !WRAPPERS.contains(&file_name(word).as_str()))
    else {
        return false;
    };
    let name = file_name(program);
    if is_known(&name) || SERVER_PROGRAMS.contains(&name.as_str()) {
        return true;
    }
    program.contains('/')
        && !name.is_empty()
        && !OPAQUE_PROGRAMS.contains(&name.as_str())
        && !matches!(name.as_str(), "node" | "nodejs" | "npm" | "npx" | "yarn" | "deno" | "bun")
        && !SCRIPT_EXTENSIONS.iter().any(|extension| name.ends_with(extension))
        && !LAUNCH_WORDS.iter().any(|word| name.contains(word))
}

/// Whether a word of `command` or `args` (shell scripts included) runs Python or a compute launcher: then
/// the container runs compute, whatever its image or name says (`model-api-server` running `uvicorn`).
pub fn command_runs_compute(command: Option<&[String]>, args: Option<&[String]>) -> bool {
    command.into_iter().chain(args).flatten().flat_map(|item| shell_words(item)).any(runs_compute)
}

/// The words of a command-line item: itself, or the words of the shell script it holds.
fn shell_words(item: &str) -> impl Iterator<Item = &str> {
    item.split(|character: char| character.is_whitespace() || ";&|()'\"`$=<>".contains(character))
        .filter(|word| !word.is_empty())
}

/// The lower-case file name of a program (`/usr/bin/python3` is `python3`).
fn file_name(program: &str) -> String {
    program.rsplit('/').next().unwrap_or(program).to_ascii_lowercase()
}

/// Whether a word of a command line runs Python or a compute program.
fn runs_compute(word: &str) -> bool {
    let name = file_name(word);
    let name = name.as_str();
    name.starts_with("python")
        || COMPUTE_PROGRAMS.contains(&name)
        || [".py", ".ipynb", ".r", ".jl"].iter().any(|extension| name.ends_with(extension))
}

/// Whether an image is an ML base image or ML server (`pytorch/pytorch`, `jupyter/scipy-notebook`,
/// `python:3.12`, `nvcr.io/nvidia/tritonserver`, `rayproject/ray`, `kserve/sklearnserver`): what runs in
/// it may be compute whatever its command.
pub fn is_ml_image(image: &str) -> bool {
    let path = image.split('@').next().unwrap_or(image).to_ascii_lowercase();
    // The tag is not part of the name (`:3.12-slim`), but a registry port is (`host:5000/...`).
    let path = match path.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => name.to_string(),
        _ => path,
    };
    ML_IMAGE_PARTS.iter().any(|part| path.contains(part))
        || path.split(['/', '-', '_', '.', ':']).any(|word| ML_IMAGE_WORDS.contains(&word))
}

/// The repository of an image reference, lower case, without registry, path, tag or digest
/// (`registry.example.com:5000/team/nginx:1.27@sha256:...` is `nginx`).
fn repository(image: &str) -> String {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    let name = last.split(':').next().unwrap_or(last);
    name.to_ascii_lowercase()
}

/// Names of API servers: the Kubernetes convention (`kube-apiserver`, `kuberay/apiserver`) and the ML
/// platforms' Go servers (`kfp-api-server`). A Python service may be named so too (a model behind
/// FastAPI), so the name counts only with nothing of compute in the command line.
const API_SERVER_NAMES: &[&str] = &["apiserver", "api-server"];

/// Whether `name` (an image's repository or a container's name, lower case) is that of an API server:
/// one of [`API_SERVER_NAMES`], or ending with `-` and one.
fn is_api_server_name(name: &str) -> bool {
    API_SERVER_NAMES
        .iter()
        .any(|server| name.strip_suffix(server).is_some_and(|before| before.is_empty() || before.ends_with('-')))
}

/// Whether a container's image or name is that of an API server ([`API_SERVER_NAMES`]) and nothing in
/// its command line runs Python or a compute launcher ([`command_runs_compute`]): `kuberay/apiserver`
/// and `kfp-api-server` run Go, a `model-api-server` running `uvicorn` runs Python.
pub fn is_api_server(
    image: Option<&str>,
    name: Option<&str>,
    command: Option<&[String]>,
    args: Option<&[String]>,
) -> bool {
    (image.is_some_and(|image| is_api_server_name(&repository(image)))
        || name.is_some_and(|name| is_api_server_name(&name.to_ascii_lowercase())))
        && !image.is_some_and(is_ml_image)
        && !command_runs_compute(command, args)
}

/// Whether `image` is infrastructure software that runs no OpenMP or BLAS pools.
pub fn is_infrastructure(image: &str) -> bool {
    is_known(&repository(image))
}

/// Whether a container's name is that of infrastructure software (`name: envoy`, `name: istio-proxy`,
/// `name: fluent-bit` over a mirrored image of another name).
pub fn is_infrastructure_name(name: &str) -> bool {
    is_known(&name.to_ascii_lowercase())
}

/// Whether a lower-case repository or container name is on the list or has an infrastructure suffix.
fn is_known(name: &str) -> bool {
    INFRASTRUCTURE_IMAGES.contains(&name) || INFRASTRUCTURE_SUFFIXES.iter().any(|suffix| name.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infrastructure_is_known_by_the_repository() {
        for image in [
            "nginx",
            "nginx:1.27-alpine",
            "docker.io/library/redis:7",
            "registry.example.com:5000/mirror/busybox:1.36@sha256:abcd",
            "quay.io/argoproj/argoexec:v3.5.0",
            "ghcr.io/kubeflow/training-operator:v1.8.0",
            "istio/proxyv2:1.22.0",
            "curlimages/curl:8.8.0",
            "NGINX:latest",
            "argoproj/argosay:v2",
            "docker.io/istio/pilot:1.26.0",
            "volcanosh/vc-scheduler:latest",
            "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.0.0",
            "gcr.io/google.com/cloudsdktool/google-cloud-cli:stable",
            "mcr.microsoft.com/azure-storage/azurite:3.33.0",
        ] {
            assert!(is_infrastructure(image), "{image}");
        }
    }

    #[test]
    fn infrastructure_is_known_by_the_container_name() {
        for name in ["nginx", "istio-proxy", "fluent-bit", "Redis", "metrics-exporter"] {
            assert!(is_infrastructure_name(name), "{name}");
        }
        for name in ["main", "trainer", "worker", "pytorch", "ray-worker", "nginx-log-parser"] {
            assert!(!is_infrastructure_name(name), "{name}");
        }
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_string()).collect()
    }

    #[test]
    fn servers_are_known_by_what_they_run() {
        for (command, args, image) in [
            (&["/bin/ui"][..], &[][..], "registry.example.com/team/web:1"),
            (&["./katib-db-manager"], &[], "ghcr.io/kubeflow/katib/katib-db-manager"),
            (
                &["/bin/metadata_store_server"],
                &["--grpc_port=8080"],
                "gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0",
            ),
            (&["envoy"], &["-c", "/etc/envoy.yaml"], "registry.example.com/edge:2"),
            (&["nginx", "-g", "daemon off;"], &[], "registry.example.com/static:3"),
            (&["/manager"], &["--leader-elect"], "registry.example.com/team/thing:1"),
            (
                &["/usr/bin/tini", "--", "/model-registry", "proxy"],
                &[],
                "ghcr.io/kubeflow/model-registry/server:latest",
            ),
        ] {
            assert!(runs_a_server(Some(&argv(command)), Some(&argv(args)), Some(image)), "{command:?} {image}");
        }
    }

    #[test]
    fn compute_evidence_wins_over_a_server_command() {
        for (command, args, image) in [
            // Python or a launcher anywhere in the command line, shell scripts included.
            (&["/bin/app"][..], &["--then", "python"][..], "registry.example.com/team/app:1"),
            (&["/bin/sh", "-c"], &["cd /app && python3 -m train"], "registry.example.com/team/app:1"),
            (&["/usr/local/bin/torchrun", "--nproc-per-node=4", "train.py"], &[], "registry.example.com/team/app:1"),
            (&["/opt/bin/deepspeed"], &[], "registry.example.com/team/app:1"),
            (&["/opt/conda/bin/accelerate", "launch"], &[], "registry.example.com/team/app:1"),
            (&["/usr/bin/mpirun", "-np", "4", "/opt/app"], &[], "registry.example.com/team/app:1"),
            (&["/app/serve"], &["--notebook=/work/run.ipynb"], "registry.example.com/team/app:1"),
            // A model server is compute.
            (&["/opt/tritonserver/bin/tritonserver"], &[], "registry.example.com/team/serve:1"),
            (&["/usr/bin/tensorflow_model_server"], &[], "registry.example.com/team/serve:1"),
            // An ML image runs compute whatever its command.
            (&["/bin/ui"], &[], "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime"),
            (&["/app/server"], &[], "python:3.12-slim"),
            (&["/app/server"], &[], "nvcr.io/nvidia/pytorch:24.05-py3"),
            (&["/app/server"], &[], "rayproject/ray:2.30.0"),
            (&["/app/server"], &[], "kserve/sklearnserver:v0.14.0"),
            (&["/app/server"], &[], "jupyter/scipy-notebook"),
        ] {
            assert!(!runs_a_server(Some(&argv(command)), Some(&argv(args)), Some(image)), "{command:?} {image}");
        }
    }

    #[test]
    fn api_servers_are_known_by_name_unless_their_command_line_runs_compute() {
        let none: Option<&[String]> = None;
        for (image, name) in [
            ("kuberay/apiserver:v1.4.0", "server"),
            ("registry.k8s.io/kube-apiserver:v1.31.0", "server"),
            ("ghcr.io/kubeflow/kfp-api-server:2.5.0", "server"),
            ("registry.example.com/team/app:1", "ml-pipeline-api-server"),
            ("registry.example.com/team/app:1", "API-Server"),
        ] {
            assert!(is_api_server(Some(image), Some(name), none, none), "{image} {name}");
        }
        let uvicorn = argv(&["uvicorn", "serve:app"]);
        let python = argv(&["python -m serve"]);
        for (image, name, command, args) in [
            ("registry.example.com/team/model-api-server:1", "model", Some(&uvicorn[..]), None),
            ("registry.example.com/team/app:1", "api-server", None, Some(&python[..])),
            ("python:3.12-slim", "api-server", None, None),
            // A name that only ends with the word is another name.
            ("registry.example.com/team/myapiserver:1", "mcpapi-server", None, None),
            ("registry.example.com/team/api-servers:1", "api-server-v2", None, None),
        ] {
            assert!(!is_api_server(Some(image), Some(name), command, args), "{image} {name}");
        }
    }

    #[test]
    fn shells_interpreters_scripts_and_launchers_are_no_evidence() {
        for command in [
            &["/bin/sh", "-c", "exec /bin/ui"][..],
            &["/bin/bash"],
            &["/usr/bin/env", "app"],
            &["/usr/bin/java", "-jar", "app.jar"],
            // An MPI worker: the launcher starts the training processes through its `sshd`.
            &["/usr/sbin/sshd", "-De"],
            &["/entrypoint.sh"],
            &["/usr/local/bin/docker-entrypoint"],
            &["/app/start"],
            &["/app/run-training"],
            &["myapp"],
            &["tini", "--"],
        ] {
            assert!(!runs_a_server(Some(&argv(command)), None, Some("registry.example.com/team/app:1")), "{command:?}");
        }
        // Without `command` the image's entrypoint runs: the manifest does not say what it is.
        assert!(!runs_a_server(None, Some(&argv(&["--port=8080"])), Some("registry.example.com/team/ui:1")));
    }

    #[test]
    fn ml_images_are_known_by_their_name_not_their_tag() {
        for image in [
            "registry.example.com:5000/ml/pytorch-train:1",
            "ghcr.io/kubeflow/katib/pytorch-mnist-cpu:latest",
            "tensorflow/serving:2.16",
            "vllm/vllm-openai:v0.6.0",
            "kserve/huggingfaceserver:v0.14.0",
            "quay.io/jupyter/minimal-notebook",
            "ghcr.io/kubeflow/trainer/mlx-runtime",
        ] {
            assert!(is_ml_image(image), "{image}");
        }
        for image in [
            "registry.example.com/team/ui:py3",
            "gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0",
            "ghcr.io/kubeflow/katib/katib-ui",
            "registry.example.com:5000/array-web:1",
            "ghcr.io/kubeflow/model-registry/server:latest",
        ] {
            assert!(!is_ml_image(image), "{image}");
        }
    }

    #[test]
    fn compute_images_are_not() {
        for image in [
            "python:3.12",
            "registry.example.com/ml/train:2026.06",
            "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime",
            "rayproject/ray:2.30.0",
            "registry.example.com:5000/nginx-logs-analyzer:1",
            "tensorflow/serving:2.16",
            "jupyter/scipy-notebook",
        ] {
            assert!(!is_infrastructure(image), "{image}");
        }
    }
}
