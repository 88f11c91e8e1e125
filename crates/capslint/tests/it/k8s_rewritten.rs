//! Kustomize fields that rename or patch, holding values of several lines (block scalars, multi-line quoted
//! scalars, line breaks escaped in names and images), generated here: every overlay renders, the run ends
//! with exit code 1 and valid JSON, no internal error, every finding placed in the text as written, and the
//! findings of the other files still reported.

use crate::support::*;

/// A base whose file opens with a comment of multi-byte characters (so that an offset of rewritten text
/// used in it lands inside a character), with a container that has a CPU request and no CPU limit and an
/// `OMP_WAIT_POLICY` to fix: the fixes capslint makes for an overlay are all computed on it.
fn base_job() -> String {
    let comment: String = "é\u{2028}\u{85}".repeat(120);
    format!(
        "# {comment}\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      \
         containers:\n      - name: main\n        image: python:3.12\n        env:\n        - name: OMP_WAIT_POLICY\n          \
         value: active\n        resources:\n          requests: {{cpu: \"2\"}}\n          limits:\n            memory: 1Gi\n"
    )
}

/// Another file of the scan, with a finding of its own (CAP204 at row 11).
const OTHER: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: other\nspec:\n  containers:\n  - name: main\n    \
                     image: python:3.12\n    env:\n    - name: OMP_NUM_THREADS\n      value: \"64\"\n    resources:\n      \
                     limits:\n        cpu: \"2\"\n";

/// A strategic-merge patch of the base's container that sets `OMP_NUM_THREADS` to `value`, indented by
/// `indent` spaces (for an inline patch).
fn env_patch(value: &str, indent: usize) -> String {
    let text = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n      \
         - name: main\n        env:\n        - name: OMP_NUM_THREADS\n          value: {value}\n"
    );
    let pad = " ".repeat(indent);
    text.lines().map(|line| format!("{pad}{line}\n")).collect()
}

/// Values of several lines for a patch at the indentation of `value:` (10 spaces), plus `extra`.
fn multi_line_values(extra: usize) -> Vec<String> {
    let body = " ".repeat(12 + extra);
    vec![
        format!("|\n{body}64\n{body}more\n"),
        format!(">\n{body}64\n{body}more\n"),
        format!("|+\n{body}64\n\n"),
        format!("\"6\n{body}4\u{2028}x\""),
        format!("'64\n{body}more'"),
        "\"64\\nmore\\r\\n\\u2028\\u0085\"".to_string(),
    ]
}

/// Every overlay case: `(name, files of the overlay)`.
fn cases() -> Vec<(String, Vec<(String, String)>)> {
    let mut cases = Vec::new();
    let overlay = |extra: &str| format!("resources: [../base]\n{extra}");
    for field in ["namePrefix", "nameSuffix", "namespace"] {
        for (name, escape) in [("lf", "\\n"), ("cr", "\\r"), ("ls", "\\u2028"), ("nel", "\\u0085"), ("crlf", "\\r\\n")]
        {
            let kustomization = overlay(&format!("{field}: \"a{escape}b-\"\n"));
            cases.push((format!("{field} {name}"), vec![("ov/kustomization.yaml".to_string(), kustomization)]));
        }
        let block = overlay(&format!("{field}: |\n  a\n  b-\n"));
        cases.push((format!("{field} block"), vec![("ov/kustomization.yaml".to_string(), block)]));
    }
    for (name, escape) in [("lf", "\\n"), ("cr", "\\r"), ("ls", "\\u2028"), ("nel", "\\u0085")] {
        let images =
            overlay(&format!("images:\n- name: python\n  newName: \"py{escape}thon\"\n  newTag: \"3{escape}x\"\n"));
        cases.push((format!("images {name}"), vec![("ov/kustomization.yaml".to_string(), images)]));
    }
    for (index, value) in multi_line_values(0).into_iter().enumerate() {
        let patch = env_patch(&value, 0);
        cases.push((
            format!("strategic merge {index}"),
            vec![
                ("ov/kustomization.yaml".to_string(), overlay("patches:\n- path: patch.yaml\n")),
                ("ov/patch.yaml".to_string(), patch.clone()),
            ],
        ));
        cases.push((
            format!("patchesStrategicMerge {index}"),
            vec![
                ("ov/kustomization.yaml".to_string(), overlay("patchesStrategicMerge:\n- patch.yaml\n")),
                ("ov/patch.yaml".to_string(), patch),
            ],
        ));
    }
    for (index, value) in multi_line_values(4).into_iter().enumerate() {
        let inline = overlay(&format!("patches:\n- patch: |-\n{}", env_patch(&value, 4)));
        cases.push((format!("inline {index}"), vec![("ov/kustomization.yaml".to_string(), inline)]));
    }
    for (index, value) in multi_line_values(0).into_iter().enumerate() {
        // The value's lines are indented for `value:` at 10 spaces; JSON 6902 puts it at 4.
        let value = value.replace(&format!("\n{}", " ".repeat(12)), "\n      ");
        let operations = format!(
            "- op: add\n  path: /spec/template/spec/containers/0/env/-\n  value:\n    name: OMP_NUM_THREADS\n    value: \
             {value}\n"
        );
        cases.push((
            format!("json 6902 {index}"),
            vec![
                (
                    "ov/kustomization.yaml".to_string(),
                    overlay("patchesJson6902:\n- target: {group: batch, version: v1, kind: Job, name: train}\n  path: ops.yaml\n"),
                ),
                ("ov/ops.yaml".to_string(), operations),
            ],
        ));
    }
    cases
}

#[test]
fn multi_line_values_in_renaming_and_patching_fields_stop_nothing() {
    let base = base_job();
    for (name, overlay) in cases() {
        let mut files: Vec<(&str, &str)> = vec![
            ("base/kustomization.yaml", "resources: [job.yaml]\n"),
            ("base/job.yaml", &base),
            ("other/pod.yaml", OTHER),
        ];
        files.extend(overlay.iter().map(|(path, text)| (path.as_str(), text.as_str())));
        let dir = project(&files);
        let output = check(dir.path()).args(["--output-format", "json", "."]).output().unwrap();
        let (code, stdout, stderr) = outcome(&output);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(!stderr.contains("internal error"), "{name}: {stderr}");
        let findings: Vec<serde_json::Value> =
            serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{name}: not JSON ({error}): {stdout}"));
        assert!(!findings.iter().any(|finding| finding["message"].as_str().unwrap_or_default().contains("internal")));
        // The other file's finding is still there, where it is written.
        assert!(
            findings.iter().any(|finding| finding["filename"] == "other/pod.yaml"
                && finding["code"] == "CAP204"
                && finding["location"]["row"] == 11),
            "{name}: {stdout}"
        );
        // The overlay renders: the base's container gets its findings, placed in the text as written.
        assert!(
            findings.iter().any(|finding| finding["filename"] == "base/job.yaml" && finding["code"] == "CAP201"),
            "{name}: {stdout}"
        );
        for finding in &findings {
            let file = finding["filename"].as_str().unwrap();
            let rows = std::fs::read_to_string(dir.path().join(file)).unwrap().split('\n').count() as u64;
            for location in ["location", "end_location"] {
                let row = finding[location]["row"].as_u64().unwrap();
                assert!((1..=rows).contains(&row), "{name}: {file} has {rows} rows: {finding}");
            }
        }
    }
}

#[test]
fn a_multi_line_patch_value_is_reported_where_the_patch_writes_it() {
    let base = base_job();
    let patch = env_patch("|\n            64\n            more\n", 0);
    let dir = project(&[
        ("base/kustomization.yaml", "resources: [job.yaml]\n"),
        ("base/job.yaml", &base),
        ("ov/kustomization.yaml", "resources: [../base]\npatches:\n- path: patch.yaml\n"),
        ("ov/patch.yaml", &patch),
    ]);
    let output = check(dir.path()).args(["--output-format", "concise", "--select", "CAP204", "."]).output().unwrap();
    let (code, stdout, stderr) = outcome(&output);
    assert_eq!(code, 1, "{stderr}");
    // The value's text starts on row 13 of the patch, under its `|` header.
    assert!(stdout.starts_with("ov/patch.yaml:13:13: CAP204 `OMP_NUM_THREADS: \"64\\nmore\\n\"`"), "{stdout}");
}
