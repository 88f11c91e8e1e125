//! Manifests in shapes that kubectl and libyaml accept (`fixtures/yaml-valid/`), some of which a strict
//! YAML 1.2 reader refuses: PyYAML (libyaml's rules) and capslint must both read every file, and the
//! containers capslint checks must be the ones PyYAML reads.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::*;

/// The names of every container PyYAML reads in `file`: the items of any `containers` list.
fn containers_read_by_pyyaml(python: &Path, file: &Path) -> BTreeSet<String> {
    let script = r#"
import json, sys, yaml
def walk(node, found):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "containers" and isinstance(value, list):
                found.update(item["name"] for item in value if isinstance(item, dict) and "name" in item)
            walk(value, found)
    elif isinstance(node, list):
        for item in node:
            walk(item, found)
found = set()
with open(sys.argv[1], newline="") as stream:
    for document in yaml.safe_load_all(stream):
        walk(document, found)
print(json.dumps(sorted(found)))
"#;
    let output = scrubbed(python).args(["-c", script]).arg(file).output().expect("python runs");
    assert!(output.status.success(), "PyYAML refuses {}: {}", file.display(), String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice::<Vec<String>>(&output.stdout).expect("a JSON list").into_iter().collect()
}

/// The containers capslint reports CAP202 for (no fixture declares the Downward API variable), and
/// whether it reported CAP001.
fn containers_read_by_capslint(file: &Path) -> (BTreeSet<String>, bool) {
    let output = check(&root())
        .args(["--select", "CAP001,CAP202", "--output-format", "json"])
        .arg(file)
        .output()
        .expect("capslint runs");
    let findings: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).expect("JSON output");
    let mut names = BTreeSet::new();
    let mut syntax_error = false;
    for finding in &findings {
        let message = finding["message"].as_str().unwrap_or_default();
        if finding["code"] == "CAP001" {
            syntax_error = true;
        } else if let Some(name) = message.split('`').nth(1) {
            names.insert(name.to_string());
        }
    }
    (names, syntax_error)
}

#[test]
fn what_pyyaml_reads_capslint_reads() {
    let python = match test_python() {
        Ok(python) => python,
        Err(why) => return skip(&why),
    };
    let corpus = root().join("fixtures/yaml-valid");
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .expect("the corpus exists")
        .map(|entry| entry.expect("readable").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for file in files {
        let expected = containers_read_by_pyyaml(&python, &file);
        assert!(!expected.is_empty(), "{}: no container", file.display());
        let (names, syntax_error) = containers_read_by_capslint(&file);
        assert!(!syntax_error, "{}: CAP001 on a file PyYAML reads", file.display());
        assert_eq!(names, expected, "{}", file.display());
    }
}

/// Many quoted scalars continued less indented than the line they start on (down to column 0, after an
/// escaped line break, with a tab first), generated here: capslint reads every one of them, with the value
/// PyYAML reads, however many the file has.
#[test]
fn quoted_scalars_continued_less_indented_read_as_pyyaml_reads_them() {
    let python = match test_python() {
        Ok(python) => python,
        Err(why) => return skip(&why),
    };
    let shapes = [
        "\"double quoted\n  continued less indented\"",
        "\"double quoted\ncontinued at column 0\"",
        "'single quoted, it''s\ncontinued at column 0'",
        "\"an escaped line break\\\n  then a line less indented\"",
        "\"a continuation line\n\tthat a tab starts\"",
        "\"several\n lines\n\n  of it\"",
    ];
    let mut text = String::from("apiVersion: v1\nkind: Pod\nmetadata:\n  name: quoted\nspec:\n  containers:\n");
    for index in 0..150 {
        let value = shapes[index % shapes.len()];
        text.push_str(&format!(
            "    - name: c{index}\n      image: python\n      env: [{{name: V, value: {value}}}]\n"
        ));
    }
    let dir = project(&[("quoted.yaml", &text)]);
    let file = dir.path().join("quoted.yaml");
    let script = r#"
import json, sys, yaml
document = yaml.safe_load(open(sys.argv[1], newline=""))
print(json.dumps([container["env"][0]["value"] for container in document["spec"]["containers"]]))
"#;
    let output = scrubbed(&python).args(["-c", script]).arg(&file).output().expect("python runs");
    assert!(output.status.success(), "PyYAML refuses the file: {}", String::from_utf8_lossy(&output.stderr));
    let expected: Vec<String> = serde_json::from_slice(&output.stdout).expect("a JSON list");
    let read = capslint_manifests::kustomize::summarize(&text);
    let [pod] = read.as_slice() else { panic!("one pod expected, read {read:?}") };
    let values: Vec<String> = pod.containers.iter().map(|container| container.env[0].1.clone()).collect();
    assert_eq!(values, expected);
    let (names, syntax_error) = containers_read_by_capslint(&file);
    assert!(!syntax_error);
    assert_eq!(names.len(), 150);
}
