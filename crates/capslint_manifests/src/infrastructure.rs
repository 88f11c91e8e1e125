//! Containers that run no OpenMP or BLAS thread pools: web servers, proxies, caches, databases, message
//! brokers, log shippers, shell-utility images and Kubernetes controllers, known by their image. The
//! thread-cap rules (CAP202, CAP203, CAP205) and CAP206 (a fractional limit, which matters for caps
//! derived from it and for exclusive cores) leave such a container alone unless it sets a thread
//! variable itself: its team cannot change the image's entrypoint, and nothing in it reads the caps.
//! CAP201 (a CPU limit) still applies to every container.

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

/// The repository of an image reference, lower case, without registry, path, tag or digest
/// (`registry.example.com:5000/team/nginx:1.27@sha256:...` is `nginx`).
fn repository(image: &str) -> String {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    let name = last.split(':').next().unwrap_or(last);
    name.to_ascii_lowercase()
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
