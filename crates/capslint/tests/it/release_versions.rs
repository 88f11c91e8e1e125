//! One version everywhere: what Cargo.toml says is what the wheel (pyproject.toml takes it from
//! Cargo.toml), the GitHub Action's default, every install snippet of README.md and of the pages of
//! `docs/`, the pre-commit mirror and the newest CHANGELOG.md entry say. A release bumps Cargo.toml and this test names every other place.

use regex::Regex;
use saphyr::{LoadableYamlNode, Yaml};

use crate::integrations_docs::pages;
use crate::support::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn toml_file(path: &str) -> toml::Table {
    toml::from_str(&read(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// Every capture of `pattern`'s first group in `text`, with the match for messages.
fn captures(text: &str, pattern: &str) -> Vec<(String, String)> {
    Regex::new(pattern)
        .unwrap()
        .captures_iter(text)
        .map(|found| (found[0].trim().to_string(), found[1].to_string()))
        .collect()
}

#[test]
fn every_version_the_repository_states_is_cargos() {
    let mut stated: Vec<(String, String)> = Vec::new();

    let pyproject = toml_file("pyproject.toml");
    let project = pyproject["project"].as_table().unwrap();
    match project.get("version") {
        Some(version) => stated.push(("pyproject.toml version".into(), version.as_str().unwrap().into())),
        None => assert!(
            project["dynamic"].as_array().unwrap().iter().any(|field| field.as_str() == Some("version")),
            "pyproject.toml has neither a version nor a dynamic one"
        ),
    }

    let action = Yaml::load_from_str(&read("action.yml")).expect("action.yml is YAML").remove(0);
    let default = action["inputs"]["version"]["default"].as_str().expect("the `version` input has a default");
    stated.push(("action.yml version default".into(), default.to_string()));

    let kinds = [
        ("pre-commit rev", r"rev: v(\S+)"),
        ("action ref", r"capslint/capslint@v(\S+)"),
        ("pip/pipx/uv pin", r"capslint==([0-9][^\s`]*)"),
        ("uvx pin", r"uvx capslint@([0-9][^\s`]*)"),
        ("image tag", r"ghcr\.io/capslint/capslint:([^\s`]+)"),
        ("release download", r"/releases/download/v([^/\s]+)/"),
        ("release page", r"/releases/tag/v([^)\s]+)"),
        ("release archive", r"capslint-([0-9]+\.[0-9]+\.[0-9]+[^-\s`]*)-"),
    ];
    let documents: Vec<(String, String)> = pages().into_iter().map(|page| (read(&page), page)).collect();
    for (kind, pattern) in kinds {
        let mut shown = false;
        for (text, page) in &documents {
            let found = captures(text, pattern);
            shown |= !found.is_empty();
            stated.extend(found.into_iter().map(|(text, version)| (format!("{page} {kind} `{text}`"), version)));
        }
        assert!(shown, "neither README.md nor docs/ shows a {kind}");
    }
    for (text, page) in &documents {
        let unpinned = captures(text, r"(capslint/capslint(?:-pre-commit)?@([^v\s]\S*))");
        assert!(unpinned.is_empty(), "{page} uses the action or the hooks at a branch: {unpinned:?}");
    }

    let mirror = toml_file("pre-commit-mirror/pyproject.toml");
    let mirror_project = mirror["project"].as_table().unwrap();
    stated.push(("pre-commit-mirror version".into(), mirror_project["version"].as_str().unwrap().into()));
    let dependencies: Vec<&str> =
        mirror_project["dependencies"].as_array().unwrap().iter().map(|value| value.as_str().unwrap()).collect();
    assert_eq!(dependencies.len(), 1, "the mirror depends on capslint alone: {dependencies:?}");
    let pinned = dependencies[0].strip_prefix("capslint==").expect("the mirror pins capslint with ==");
    stated.push(("pre-commit-mirror dependency".into(), pinned.into()));
    for (text, version) in captures(&read("pre-commit-mirror/README.md"), r"rev: v(\S+)") {
        stated.push((format!("pre-commit-mirror/README.md `{text}`"), version));
    }

    for (text, version) in captures(&read("Dockerfile"), r"ghcr\.io/capslint/capslint:(\S+)") {
        stated.push((format!("Dockerfile `{text}`"), version));
    }

    let changelog = read("CHANGELOG.md");
    let entries = captures(&changelog, r"(?m)^## \[([^\]]+)\] - (?:\d{4}-\d{2}-\d{2})$");
    let newest = entries.first().expect("CHANGELOG.md has a `## [X.Y.Z] - YYYY-MM-DD` entry");
    stated.push(("CHANGELOG.md newest entry".into(), newest.1.clone()));
    assert!(
        changelog.contains(&format!("[{VERSION}]: https://github.com/capslint/capslint/releases/tag/v{VERSION}")),
        "CHANGELOG.md links the release"
    );

    let wrong: Vec<String> = stated
        .iter()
        .filter(|(_, version)| version != VERSION)
        .map(|(place, version)| format!("{place}: {version}"))
        .collect();
    assert!(wrong.is_empty(), "Cargo.toml says {VERSION}, but:\n{}", wrong.join("\n"));
    println!("{} places state version {VERSION}", stated.len());
}

#[test]
fn the_wheel_is_built_from_cargo_with_locked_sources_under_the_mit_license() {
    let pyproject = toml_file("pyproject.toml");
    assert_eq!(pyproject["build-system"]["build-backend"].as_str(), Some("maturin"));
    let maturin = pyproject["tool"]["maturin"].as_table().unwrap();
    assert_eq!(maturin["bindings"].as_str(), Some("bin"), "the binary is the wheel's script");
    assert_eq!(maturin["locked"].as_bool(), Some(true), "source builds use cargo --locked");
    assert_eq!(pyproject["project"]["name"].as_str(), Some("capslint"));
    assert_eq!(pyproject["project"]["license"].as_str(), Some(env!("CARGO_PKG_LICENSE")));
    let license = read("LICENSE");
    assert!(license.starts_with("MIT License\n\nCopyright (c) 2026 The capslint authors\n"), "{license}");
}
