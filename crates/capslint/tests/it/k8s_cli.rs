//! Manifests through the binary: piped `helm template` / `kustomize build` output, Helm chart sources,
//! output that does not depend on the number of threads, and `--fix` on values read from strings.

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

#[test]
fn fix_edits_a_value_read_from_a_string_only_where_the_file_writes_it() {
    // The same `OMP_WAIT_POLICY=active` in a Job kept in a ConfigMap's literal block (edited there), in one
    // kept in a quoted string and in an Argo `podSpecPatch` (both left as written: the file does not write
    // the value apart from its string).
    let block = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: trials}\ndata:\n  job.yaml: |\n    apiVersion: \
                 batch/v1\n    kind: Job\n    spec:\n      template:\n        spec:\n          containers:\n          - name: \
                 t\n            image: x/y:1\n            resources: {limits: {cpu: \"1\"}}\n            env: [{name: \
                 OMP_WAIT_POLICY, value: active}]\n";
    let quoted = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: q}\ndata:\n  pod.yaml: \"apiVersion: v1\\nkind: \
                  Pod\\nspec:\\n  containers:\\n  - name: t\\n    image: x/y:1\\n    resources: {limits: {cpu: 1}}\\n    \
                  env: [{name: OMP_WAIT_POLICY, value: active}]\\n\"\n";
    let patch = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  templates:\n  - name: \
                 t\n    podSpecPatch: '{\"containers\": [{\"name\": \"main\", \"env\": [{\"name\": \"OMP_WAIT_POLICY\", \
                 \"value\": \"active\"}]}]}'\n    container:\n      image: x/y:1\n      resources: {limits: {cpu: \"1\"}}\n";
    let dir = project(&[("block.yaml", block), ("quoted.yaml", quoted), ("patch.yaml", patch)]);
    let output =
        check(dir.path()).args(["--fix", "--select", "CAP205", "--output-format", "concise"]).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("quoted.yaml:5:3: CAP205") && stdout.contains("patch.yaml:7:19: CAP205"), "{stdout}");
    assert_eq!(fs::read_to_string(dir.path().join("block.yaml")).unwrap(), block.replace("active", "passive"));
    assert_eq!(fs::read_to_string(dir.path().join("quoted.yaml")).unwrap(), quoted);
    assert_eq!(fs::read_to_string(dir.path().join("patch.yaml")).unwrap(), patch);
}
