//! kustomize overlays rendered natively: the effective objects agree with `kubectl kustomize` (per
//! container: image, limits, requests, env), what capslint cannot render is one note per kustomization,
//! patch files of rendered overlays are not checked as objects, and hostile kustomizations end quickly.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use capslint_manifests::kustomize::{self, RenderedObject};

use crate::support::*;

/// The overlays of the fixtures, and the bases they share.
const FIXTURE_OVERLAYS: &[&str] = &[
    "fixtures/k8s/kustomize/base",
    "fixtures/k8s/kustomize/overlays/prod",
    "fixtures/k8s/kustomize/shapes/base",
    "fixtures/k8s/kustomize/shapes/overlays/complete",
    "fixtures/k8s/kustomize/shapes/overlays/fractional",
    "fixtures/k8s/kustomize/shapes/overlays/nolimits",
    "fixtures/k8s/kustomize/shapes/overlays/prefixed",
    "fixtures/k8s/kustomize/shapes/overlays/with-component",
];

/// Semantics that are easy to get wrong, each an overlay over one base: merge order of `env`,
/// `$patch: delete`, `null`, lists of custom kinds replaced, JSON patches into lists, `images`,
/// `namePrefix` through two levels, a target selected by label and by regular expression.
fn semantics_project() -> tempfile::TempDir {
    project(&[
        (
            "base/kustomization.yaml",
            "namePrefix: b-\nnamespace: ml\ncommonLabels: {team: ml}\nresources: [app.yaml, crd.yaml]\n",
        ),
        ("base/app.yaml", SEMANTICS_APP),
        ("base/crd.yaml", SEMANTICS_CRD),
        ("overlay/kustomization.yaml", SEMANTICS_OVERLAY),
        ("overlay/env.yaml", SEMANTICS_ENV),
    ])
}

const SEMANTICS_APP: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: train, labels: {app: train}}
spec:
  template:
    spec:
      initContainers: [{name: init, image: busybox}]
      containers:
      - name: main
        image: registry.example.com/ml/train:1
        env: [{name: A, value: '1'}, {name: B, value: '2'}]
        resources: {limits: {cpu: '2', memory: 1Gi}, requests: {cpu: '1'}}
      - {name: side, image: envoy}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: job, image: registry.example.com/ml/job:1}]
"#;

const SEMANTICS_CRD: &str = r#"apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example.com/ml/ddp:1
            env: [{name: X, value: '1'}]
"#;

const SEMANTICS_OVERLAY: &str = r#"namePrefix: o-
resources: [../base]
images:
- {name: registry.example.com/ml/train, newTag: '2'}
- {name: envoy, newName: envoyproxy/envoy, digest: 'sha256:abc'}
patches:
- path: env.yaml
- target: {kind: PyTorchJob}
  patch: |-
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata: {name: any}
    spec:
      pytorchReplicaSpecs:
        Worker:
          template:
            spec:
              containers: [{name: pytorch, env: [{name: Y, value: '2'}]}]
- target: {labelSelector: app=train}
  patch: |-
    - {op: add, path: /spec/template/spec/containers/0/env/0, value: {name: FIRST, value: '0'}}
    - {op: replace, path: /spec/template/spec/containers/0/resources/requests/cpu, value: 1500m}
- target: {kind: CronJob, name: b-night.*}
  patch: |-
    - op: add
      path: /spec/jobTemplate/spec/template/spec/containers/0/resources
      value: {limits: {cpu: '3'}}
"#;

const SEMANTICS_ENV: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: train}
spec:
  template:
    spec:
      containers:
      - name: main
        env: [{name: C, value: '3'}, {name: A, value: '9'}, {name: B, $patch: delete}]
        resources: {limits: {memory: null, cpu: 4}}
"#;

fn kubectl_render(dir: &Path) -> Result<Vec<RenderedObject>, String> {
    let output = std::process::Command::new("kubectl")
        .args(["kustomize", &dir.to_string_lossy()])
        .output()
        .map_err(|error| format!("kubectl does not run: {error}"))?;
    if !output.status.success() {
        return Err(format!("kubectl kustomize {} failed: {}", dir.display(), String::from_utf8_lossy(&output.stderr)));
    }
    Ok(kustomize::summarize(&String::from_utf8(output.stdout).expect("UTF-8")))
}

fn kubectl_available() -> bool {
    let found = std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        eprintln!("skipped: kubectl is not on PATH, so renders are not compared with `kubectl kustomize`");
    }
    found
}

/// Renders `dir` (reading below `root`) with capslint and with kubectl, and compares.
fn assert_same_render(dir: &Path, root: &Path) {
    let expected = kubectl_render(dir).unwrap();
    let rendered = kustomize::render(dir, root).unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
    assert!(!expected.is_empty(), "{}: kubectl renders no container", dir.display());
    assert_eq!(rendered, expected, "{}: capslint's render differs from kubectl's", dir.display());
}

#[test]
fn fixture_overlays_render_as_kubectl_renders_them() {
    if !kubectl_available() {
        return;
    }
    for overlay in FIXTURE_OVERLAYS {
        assert_same_render(&root().join(overlay), &root());
    }
}

#[test]
fn merge_semantics_agree_with_kubectl() {
    if !kubectl_available() {
        return;
    }
    let dir = semantics_project();
    assert_same_render(&dir.path().join("base"), dir.path());
    assert_same_render(&dir.path().join("overlay"), dir.path());
    // The render is not vacuous: what the patches did is there.
    let rendered = kustomize::render(&dir.path().join("overlay"), dir.path()).unwrap();
    let train = rendered.iter().find(|object| object.name == "o-b-train").expect("the prefixed Deployment");
    let env: Vec<&str> = train.containers[1].env.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(env, ["FIRST", "C", "A"]);
    assert_eq!(train.containers[1].image.as_deref(), Some("registry.example.com/ml/train:2"));
}

#[test]
fn unrendered_kustomizations_are_one_note_each_and_their_files_are_checked_as_written() {
    let dir = project(&[
        ("remote/kustomization.yaml", "resources:\n- github.com/example/ml//base?ref=v1\n- job.yaml\n"),
        (
            "remote/job.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: [{name: \
             j, image: registry.example.com/j:1}]\n",
        ),
        ("helm/kustomization.yaml", "helmCharts:\n- {name: ray, repo: https://ray-project.github.io/kuberay-helm}\n"),
        ("self/kustomization.yaml", "resources: [.]\n"),
        (
            "vars/kustomization.yaml",
            "resources: [job.yaml]\nvars:\n- {name: X, objref: {kind: Job, name: j, apiVersion: batch/v1}}\n",
        ),
        (
            "vars/job.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: [{name: \
             j, image: registry.example.com/j:1, resources: {limits: {cpu: '1'}}}]\n",
        ),
    ]);
    let (code, stdout, stderr) = run(check(dir.path()).args(["--output-format", "concise", "--select", "CAP201"]));
    assert_eq!(code, 1, "{stdout}{stderr}");
    let notes: Vec<&str> = stderr.lines().filter(|line| line.starts_with("note:")).collect();
    assert_eq!(
        notes,
        [
            "note: helm: kustomization not rendered: `helm/kustomization.yaml` uses Helm charts (`helmCharts`), which \
             capslint does not evaluate; its files are checked as written",
            "note: remote: kustomization not rendered: the remote resource `github.com/example/ml//base?ref=v1`; its \
             files are checked as written",
            "note: self: kustomization not rendered: kustomizations include each other in a cycle: self -> self; its files \
             are checked as written",
            "note: vars/kustomization.yaml: kustomize `vars` are not substituted (`$(VAR)` values are checked as written)",
        ],
        "{stderr}"
    );
    // The remote overlay's own file is still checked as written.
    assert!(stdout.contains("remote/job.yaml:7:"), "{stdout}");
    assert!(!stdout.contains("vars/job.yaml"), "{stdout}");
}

#[test]
fn patch_files_of_rendered_overlays_are_not_objects_and_suppressions_in_them_work() {
    let dir = project(&[
        ("base/kustomization.yaml", "resources: [train.yaml]\n"),
        (
            "base/train.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n      \
             containers:\n      - name: train\n        image: registry.example.com/train:1\n        env: [{name: \
             OMP_NUM_THREADS, value: '2'}, {name: OPENBLAS_NUM_THREADS, value: '2'}, {name: MKL_NUM_THREADS, value: \
             '2'}, {name: NUMEXPR_NUM_THREADS, value: '2'}, {name: LOKY_MAX_CPU_COUNT, value: '2'}, {name: \
             OMP_WAIT_POLICY, value: passive}, {name: CPU, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}]\n",
        ),
        ("prod/kustomization.yaml", "resources: [../base]\npatches:\n- path: cpu.yaml\n"),
        (
            "prod/cpu.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n      \
             containers:\n      - name: train\n        resources:\n          limits: {cpu: 2500m}  # capslint: \
             ignore[CAP206]\n",
        ),
    ]);
    let (code, stdout, stderr) = run(check(dir.path()).args(["--output-format", "concise"]));
    // The patch alone would be a container without env; the overlay has it all, and the one fractional
    // limit is suppressed where it is written.
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("All checks passed"), "{stdout}");
}

#[test]
fn hostile_kustomizations_end_quickly() {
    let mut files: Vec<(String, String)> = Vec::new();
    // A chain deeper than the nesting limit.
    for level in 0..60 {
        files.push((format!("chain/{level}/kustomization.yaml"), format!("resources: [../{}]\n", level + 1)));
    }
    files.push(("chain/60/kustomization.yaml".into(), "resources: []\n".into()));
    // Thousands of patches on one object.
    let mut patches = String::from("resources: [job.yaml]\npatches:\n");
    for index in 0..3000 {
        patches.push_str(&format!(
            "- target: {{kind: Job}}\n  patch: '[{{\"op\": \"add\", \"path\": \"/metadata/labels/l{index}\", \"value\": \"x\"}}]'\n"
        ));
    }
    files.push(("many/kustomization.yaml".into(), patches));
    files.push((
        "many/job.yaml".into(),
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, labels: {a: b}}\nspec:\n  template:\n    spec:\n      \
         containers: [{name: j, image: registry.example.com/j:1}]\n"
            .into(),
    ));
    // A strategic merge of two lists of 20,000 variables, and of mappings of 20,000 keys.
    let env: String = (0..20_000).map(|index| format!("        - {{name: V{index}, value: '1'}}\n")).collect();
    let labels: String = (0..20_000).map(|index| format!("    l{index}: x\n")).collect();
    let workload = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n{labels}spec:\n  template:\n    \
             spec:\n      containers:\n      - name: main\n        image: registry.example.com/m:1\n        env:\n{env}"
        )
    };
    files.push(("huge/kustomization.yaml".into(), "resources: [app.yaml]\npatches:\n- path: patch.yaml\n".into()));
    files.push(("huge/app.yaml".into(), workload("app")));
    files.push(("huge/patch.yaml".into(), workload("app")));
    // Two kustomizations that include each other.
    files.push(("ping/kustomization.yaml".into(), "resources: [../pong]\n".into()));
    files.push(("pong/kustomization.yaml".into(), "resources: [../ping]\n".into()));
    let refs: Vec<(&str, &str)> = files.iter().map(|(name, text)| (name.as_str(), text.as_str())).collect();
    let dir = project(&refs);
    let started = Instant::now();
    let (code, stdout, stderr) = run(check(dir.path()).args(["--output-format", "concise", "--select", "CAP201"]));
    // A guard against a hang or an exponential render, not a speed test: the run ends in seconds, and
    // only a blow-up takes minutes, whatever the load of the machine.
    assert!(started.elapsed() < Duration::from_secs(300), "took {:?}", started.elapsed());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("nest deeper than 32 levels"), "{stderr}");
    assert!(stderr.contains("ping -> pong -> ping") || stderr.contains("pong -> ping -> pong"), "{stderr}");
    // The object with 3,000 patches is rendered and checked.
    assert!(stdout.contains("many/job.yaml:7:"), "{stdout}");
    // The huge merge is rendered and checked too, at the base's container.
    assert!(stdout.contains("huge/app.yaml:"), "{stdout}");
}

/// Where a render's objects are written, for the fixtures listed above.
#[test]
fn every_fixture_overlay_renders() {
    for overlay in FIXTURE_OVERLAYS {
        let path: PathBuf = root().join(overlay);
        let rendered = kustomize::render(&path, &root()).unwrap_or_else(|error| panic!("{overlay}: {error}"));
        assert!(!rendered.is_empty(), "{overlay}");
    }
}

#[test]
fn an_overlay_over_a_base_without_env_gets_its_findings_and_no_internal_error() {
    // The overlay renders the base's container; the fix that adds `env` is written where the base writes
    // the container, whose text is not the rendered one.
    let dir = project(&[
        ("base/kustomization.yaml", "resources:\n- pod.yaml\n"),
        (
            "base/pod.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  containers:\n  - name: train\n    image: python\n",
        ),
        ("overlay/kustomization.yaml", "resources:\n- ../base\n"),
    ]);
    let output = check(dir.path()).args(["--output-format", "concise"]).output().unwrap();
    let (code, stdout, stderr) = outcome(&output);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
    for code in ["CAP201", "CAP202", "CAP203"] {
        assert!(stdout.contains(&format!("base/pod.yaml:6:11: {code}")), "{stdout}");
    }
}
