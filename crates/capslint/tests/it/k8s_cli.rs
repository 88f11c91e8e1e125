//! Manifests through the binary: piped `helm template` / `kustomize build` output, Helm chart sources,
//! and output that does not depend on the number of threads.

use std::fs;

use predicates::prelude::*;
use tempfile::TempDir;

use crate::support::*;

const RENDERED: &str = "---\n# Source: train/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  \
name: caps\ndata:\n  OMP_NUM_THREADS: \"8\"\n  OPENBLAS_NUM_THREADS: \"2\"\n  MKL_NUM_THREADS: \"2\"\n  \
NUMEXPR_NUM_THREADS: \"2\"\n  LOKY_MAX_CPU_COUNT: \"2\"\n  OMP_WAIT_POLICY: passive\n---\n# Source: \
train/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    \
spec:\n      containers:\n      - name: train\n        image: x\n        resources:\n          limits: {cpu: \"2\"}\n        \
envFrom:\n        - configMapRef: {name: caps}\n        env:\n        - name: CPU_LIMIT\n          valueFrom:\n            \
resourceFieldRef: {resource: limits.cpu}\n";

#[test]
fn rendered_charts_are_read_from_stdin() {
    check(&root())
        .args(["--output-format", "concise", "--stdin-filename", "chart.yaml", "-"])
        .write_stdin(RENDERED)
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with(
            "chart.yaml:8:20: CAP204 `OMP_NUM_THREADS=8` from ConfigMap `caps` exceeds the CPU limit of container \
             `train` of Deployment `train`: 8 > floor(2) = 2\n",
        ))
        .stdout(predicate::str::contains("Found 1 finding"));
}

#[test]
fn helm_chart_sources_are_skipped_with_one_notice() {
    let dir = TempDir::new().unwrap();
    let chart = dir.path().join("charts/train");
    fs::create_dir_all(chart.join("templates")).unwrap();
    fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: train\nversion: 0.1.0\n").unwrap();
    fs::write(chart.join("values.yaml"), "replicas: 2\nresources: {}\n").unwrap();
    let template = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n";
    fs::write(chart.join("templates/deployment.yaml"), template).unwrap();
    fs::write(chart.join("templates/job.yaml"), template.replace("Deployment", "Job")).unwrap();
    // Go-templated YAML elsewhere in the chart (here one that does not parse as YAML) belongs to it too.
    fs::create_dir_all(chart.join("files/jobs")).unwrap();
    let unparsable = "apiVersion: batch/v1\nkind: Job\nspec:\n  template: {{ toYaml .Values.job | nindent 4 }\n";
    fs::write(chart.join("files/jobs/train.yaml"), unparsable).unwrap();
    let output = check(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "note: charts/train: Helm chart templates are not checked; check the rendered chart instead: `helm template \
         charts/train | capslint check --stdin-filename charts/train.yaml -`\n"
    );
}

#[test]
fn output_does_not_depend_on_the_thread_count() {
    let run = |threads: &str| {
        let output = capslint(&root())
            .env("RAYON_NUM_THREADS", threads)
            .args(["check", "--output-format", "json", "fixtures/k8s", "fixtures/airflow"])
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let single = run("1");
    assert!(single.contains("CAP209"));
    for _ in 0..3 {
        assert_eq!(run("2"), single);
    }
}

#[test]
fn non_kubernetes_yaml_is_ignored_silently() {
    let dir = TempDir::new().unwrap();
    fs::write(
        dir.path().join("compose.yaml"),
        "services:\n  app:\n    image: x\n    environment: {OMP_NUM_THREADS: 64}\n",
    )
    .unwrap();
    fs::write(dir.path().join("broken.yml"), "a: [1\n").unwrap();
    fs::write(dir.path().join("kind-cluster.yaml"), "kind: Cluster\nnodes:\n- role: control-plane\n").unwrap();
    check(dir.path()).assert().code(0).stdout("All checks passed (3 files checked).\n").stderr("");
}
