//! Peak memory, measured on the capslint process alone, on inputs generated here that a tree of would take
//! tens of times their size: data files (YAML, TOML, JSON) and a manifest document past the node budget,
//! and kustomize trees whose overlays share bases. Each run must stay within four times the largest file
//! it reads plus 100 MB, and still report what it should. No time is asserted.

use std::path::Path;

use crate::support::*;

/// The bound for a run whose largest file has `largest` bytes, in KiB.
fn bound_kib(largest: usize) -> u64 {
    (4 * largest as u64 + (100 << 20)) >> 10
}

/// What one measured run reported: its findings as `(file, code)`, its exit code, its peak RSS in KiB.
type Measured = (Vec<(String, String)>, i32, u64);

/// Runs `capslint check --isolated --output-format json` on `target` in `dir`; `None` (the test is
/// skipped) when nothing can measure it.
fn check_measured(dir: &Path, target: &str) -> Option<Measured> {
    let args = ["check", "--isolated", "--output-format", "json", target];
    let (output, rss) = match run_measured(binary(), &args, dir) {
        Ok(measured) => measured,
        Err(why) => {
            skip_inapplicable(&why);
            return None;
        }
    };
    let (code, stdout, stderr) = outcome(&output);
    assert!(!stderr.contains("internal error"), "{stderr}");
    let findings: Vec<serde_json::Value> = serde_json::from_str(&stdout).expect("JSON output");
    let found = findings
        .iter()
        .map(|finding| {
            (finding["filename"].as_str().unwrap().to_string(), finding["code"].as_str().unwrap().to_string())
        })
        .collect();
    Some((found, code, rss))
}

/// About `size` bytes of records, in YAML.
fn yaml_records(size: usize) -> String {
    let mut text = String::from("# a data set\n");
    let mut index = 0;
    while text.len() < size {
        text.push_str(&format!("- {{id: {index}, kind: sample, thread: t{index}, features: [0.1, 0.2, 0.3, 0.4]}}\n"));
        index += 1;
    }
    text
}

#[test]
fn large_data_files_stay_within_the_bound() {
    const SIZE: usize = 8 << 20;
    let mut toml = String::from("thread = [");
    while toml.len() < SIZE {
        toml.push_str("0,1,2,3,4,5,6,7,8,9,");
    }
    toml.push_str("0]\n");
    let mut json = String::from("[");
    while json.len() < SIZE {
        json.push_str("{\"n_jobs\": -1},");
    }
    json.push_str("{}]\n");
    let dir = project(&[("records.yaml", &yaml_records(SIZE)), ("values.toml", &toml), ("keys.json", &json)]);
    for (file, expected) in [
        // Data that may hold a thread-count key is reported as not analysed.
        ("records.yaml", vec![("records.yaml", "CAP003")]),
        ("values.toml", vec![("values.toml", "CAP003")]),
        // A thousand findings, then one that says the rest is not analysed.
        ("keys.json", [vec![("keys.json", "CAP109"); 1000], vec![("keys.json", "CAP003")]].concat()),
    ] {
        let Some((found, code, rss)) = check_measured(dir.path(), file) else { return };
        let expected: Vec<(String, String)> =
            expected.into_iter().map(|(file, code)| (file.to_string(), code.to_string())).collect();
        assert_eq!(found, expected, "{file}");
        assert_eq!(code, 1, "{file}");
        let size = std::fs::metadata(dir.path().join(file)).unwrap().len() as usize;
        assert!(rss <= bound_kib(size), "{file}: peak RSS {rss} KiB, above {} KiB", bound_kib(size));
    }
}

#[test]
fn a_manifest_document_past_the_node_budget_stays_within_the_bound() {
    // 600,000 nodes in 1.2 MB: a tree of them takes about 200 MB.
    let text = format!("apiVersion: v1\nkind: List\nitems: [{}0]\n", "0,".repeat(600_000));
    let dir = project(&[
        ("list.yaml", &text),
        (
            "pod.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: python}\n",
        ),
    ]);
    let Some((found, code, rss)) = check_measured(dir.path(), ".") else { return };
    assert_eq!(code, 1);
    // The list is too large to analyse; the other file is checked as usual.
    assert!(found.contains(&("list.yaml".to_string(), "CAP003".to_string())), "{found:?}");
    assert!(found.iter().any(|(file, code)| file == "pod.yaml" && code == "CAP201"), "{found:?}");
    assert!(rss <= bound_kib(text.len()), "peak RSS {rss} KiB, above {} KiB", bound_kib(text.len()));
}

/// A diamond of bases over bases: `levels` levels of two kustomizations, each including both of the level
/// below, so that the top reaches the bottom along 2^levels paths; an app over the top with one Pod.
fn diamond(levels: usize) -> Vec<(String, String)> {
    let mut files = vec![
        ("l0/a/kustomization.yaml".to_string(), "resources: []\n".to_string()),
        ("l0/b/kustomization.yaml".to_string(), "resources: []\n".to_string()),
    ];
    for level in 1..=levels {
        for name in ["a", "b"] {
            let below = level - 1;
            files.push((
                format!("l{level}/{name}/kustomization.yaml"),
                format!("resources:\n- ../../l{below}/a\n- ../../l{below}/b\n"),
            ));
        }
    }
    files.push(("app/kustomization.yaml".to_string(), format!("resources:\n- ../l{levels}/a\n- pod.yaml\n")));
    files.push((
        "app/pod.yaml".to_string(),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: python\n"
            .to_string(),
    ));
    files
}

/// Overlays over shared bases: a core of Deployments, two teams that include it with their own prefix, one
/// shared base over both teams, and `overlays` overlays over it, each with its namespace.
fn fan_in(overlays: usize) -> Vec<(String, String)> {
    let deployment = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      \
             containers:\n      - name: main\n        image: python\n        env: [{{name: A, value: '1'}}, {{name: B, value: \
             '2'}}]\n        resources: {{limits: {{cpu: '2'}}}}\n"
        )
    };
    let core: Vec<String> = (0..5).map(|index| deployment(&format!("w{index}"))).collect();
    let mut files = vec![
        ("core/workloads.yaml".to_string(), core.join("---\n")),
        ("core/kustomization.yaml".to_string(), "resources: [workloads.yaml]\n".to_string()),
        ("team-a/kustomization.yaml".to_string(), "resources: [../core]\nnamePrefix: a-\n".to_string()),
        ("team-b/kustomization.yaml".to_string(), "resources: [../core]\nnamePrefix: b-\n".to_string()),
        ("shared/kustomization.yaml".to_string(), "resources: [../team-a, ../team-b]\n".to_string()),
    ];
    for index in 0..overlays {
        files.push((
            format!("overlays/env-{index}/kustomization.yaml"),
            format!("resources: [../../shared]\nnamespace: env-{index}\n"),
        ));
    }
    files
}

fn write_all(files: &[(String, String)]) -> tempfile::TempDir {
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(path, text)| (path.as_str(), text.as_str())).collect();
    project(&borrowed)
}

#[test]
fn kustomize_trees_whose_overlays_share_bases_stay_within_the_bound() {
    // 2^20 paths from the app to the bottom of the diamond: each base is rendered once, and the lists of
    // what a render includes grow with the directories, not the paths.
    let files = diamond(20);
    let dir = write_all(&files);
    let Some((found, code, rss)) = check_measured(dir.path(), ".") else { return };
    assert_eq!(code, 1);
    assert!(found.iter().any(|(file, code)| file == "app/pod.yaml" && code == "CAP201"), "{found:?}");
    let largest = files.iter().map(|(_, text)| text.len()).max().unwrap();
    assert!(rss <= bound_kib(largest), "diamond: peak RSS {rss} KiB, above {} KiB", bound_kib(largest));

    // Overlays over shared bases: one overlay's views at a time, whatever the number of overlays.
    let files = fan_in(24);
    let dir = write_all(&files);
    let Some((found, code, rss)) = check_measured(dir.path(), ".") else { return };
    assert_eq!(code, 1);
    // Every rendered Deployment (five a team, placed in the core file) is reported once for all overlays.
    let in_core = found.iter().filter(|(file, code)| file == "core/workloads.yaml" && code == "CAP202").count();
    assert_eq!(in_core, 5, "{found:?}");
    let largest = files.iter().map(|(_, text)| text.len()).max().unwrap();
    assert!(rss <= bound_kib(largest), "fan-in: peak RSS {rss} KiB, above {} KiB", bound_kib(largest));
}
