//! `capslint audit`: the manifest rules over a cluster's objects as `kubectl get ... -o json` lists them,
//! from a file and from standard input, reported per namespace and workload in every output format, with
//! the same findings `check` reports on each object written as a file.

use serde_json::Value;

use crate::support::*;

fn listing() -> std::path::PathBuf {
    root().join("fixtures/admission/list.json")
}

/// The (object, code) pairs of a JSON report.
fn pairs(report: &str) -> Vec<(String, String)> {
    let report: Value = serde_json::from_str(report).unwrap_or_else(|_| panic!("not JSON: {report}"));
    let mut pairs: Vec<(String, String)> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| {
            (finding["filename"].as_str().unwrap().to_string(), finding["code"].as_str().unwrap().to_string())
        })
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn a_listing_from_a_file_or_stdin_is_reported_per_object() {
    let dir = tempfile::tempdir().unwrap();
    let (code, from_file, stderr) =
        run(capslint(dir.path()).args(["audit", "--isolated", "--output-format", "json"]).arg(listing()));
    assert_eq!(code, 1, "{stderr}");
    let (code, from_stdin, _) = run(capslint(dir.path())
        .args(["audit", "--isolated", "--output-format", "json", "-"])
        .pipe_stdin(listing())
        .unwrap());
    assert_eq!(code, 1);
    assert_eq!(pairs(&from_file), pairs(&from_stdin));
    let objects: std::collections::BTreeSet<String> = pairs(&from_file).into_iter().map(|(object, _)| object).collect();
    // The clean Deployment has none; the pod its ReplicaSet owns is checked through its owner.
    assert_eq!(
        objects.into_iter().collect::<Vec<_>>(),
        ["ml/Deployment/wrapped", "ml/Pod/train", "research/Job/features"]
    );
    // The same codes `check` finds on each object written as a file.
    let list: Value = serde_json::from_str(&std::fs::read_to_string(listing()).unwrap()).unwrap();
    let mut expected = Vec::new();
    for item in list["items"].as_array().unwrap() {
        let metadata = &item["metadata"];
        if metadata.get("ownerReferences").is_some() {
            continue;
        }
        let name = format!(
            "{}/{}/{}",
            metadata["namespace"].as_str().unwrap(),
            item["kind"].as_str().unwrap(),
            metadata["name"].as_str().unwrap()
        );
        std::fs::write(dir.path().join("object.yaml"), serde_json::to_vec_pretty(item).unwrap()).unwrap();
        let (_, report, _) = run(check(dir.path()).args(["--output-format", "json", "object.yaml"]));
        expected.extend(pairs(&report).into_iter().map(|(_, code)| (name.clone(), code)));
    }
    expected.sort();
    assert_eq!(pairs(&from_file), expected);
}

#[test]
fn every_output_format_names_the_objects() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"] {
        let (code, stdout, stderr) =
            run(capslint(dir.path()).args(["audit", "--isolated", "--output-format", format]).arg(listing()));
        assert_eq!(code, 1, "{format}: {stderr}");
        assert!(stdout.contains("research/Job/features"), "{format}: {stdout}");
    }
    let (code, stdout, _) =
        run(capslint(dir.path()).args(["audit", "--isolated", "--output-format", "concise"]).arg(listing()));
    assert_eq!(code, 1);
    assert!(
        stdout.ends_with("Found 8 findings in 3 of 4 objects checked; 1 pod owned by a controller not checked.\n"),
        "{stdout}"
    );
}

#[test]
fn rule_selection_owned_pods_and_bad_listings() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, _) = run(capslint(dir.path())
        .args(["audit", "--isolated", "--output-format", "concise", "--select", "CAP206"])
        .arg(listing()));
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().filter(|line| line.contains(": CAP")).count(), 1, "{stdout}");
    let (_, stdout, _) = run(capslint(dir.path())
        .args(["audit", "--isolated", "--output-format", "json", "--check-owned-pods"])
        .arg(listing()));
    assert!(pairs(&stdout).iter().any(|(object, _)| object == "ml/Pod/scoring-7d9f-abcde"), "{stdout}");
    write(dir.path(), "broken.json", "{\"items\": [");
    let (code, _, stderr) = run(capslint(dir.path()).args(["audit", "--isolated", "broken.json"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("not JSON"), "{stderr}");
}
