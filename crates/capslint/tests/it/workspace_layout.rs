//! The workspace's shape: every crate depends only on crates below it in [`ORDER`], and the README's
//! design section lists exactly the dependencies the manifests declare, so the documented layout cannot
//! drift from the real one.

use std::collections::BTreeSet;

use crate::support::root;

/// The crates, top to bottom: a crate may depend only on crates after it.
const ORDER: &[&str] = &[
    "capslint",
    "capslint_admission",
    "capslint_server",
    "capslint_linter",
    "capslint_python",
    "capslint_manifests",
    "capslint_model_config",
    "capslint_pod_template",
    "capslint_workspace",
    "capslint_diagnostics",
    "capslint_yaml",
    "capslint_watch",
    "capslint_pod",
    "capslint_cpu",
];

/// The capslint crates `name`'s manifest lists under `[dependencies]`.
fn dependencies(name: &str) -> BTreeSet<String> {
    let path = root().join("crates").join(name).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let manifest: toml::Table = text.parse().unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut names: BTreeSet<String> = BTreeSet::new();
    let tables = std::iter::once(manifest.get("dependencies")).chain(
        manifest
            .get("target")
            .and_then(toml::Value::as_table)
            .into_iter()
            .flat_map(|targets| targets.values())
            .map(|target| target.get("dependencies")),
    );
    for table in tables.flatten().filter_map(toml::Value::as_table) {
        names.extend(table.keys().filter(|key| key.starts_with("capslint")).cloned());
    }
    names
}

/// The crate directories under `crates/`.
fn crate_directories() -> BTreeSet<String> {
    std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// Each row of the crate table of the README's `### Crates` section: the crate and the crates it
/// depends on.
fn readme_rows(readme: &str) -> Vec<(String, BTreeSet<String>)> {
    readme
        .lines()
        .skip_while(|line| *line != "### Crates")
        .skip(1)
        .take_while(|line| !line.starts_with('#'))
        .filter(|line| line.starts_with("| `capslint"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells[1].trim_matches('`').to_string();
            let depends = cells[3]
                .split(',')
                .map(|name| name.trim().trim_matches('`').to_string())
                .filter(|name| !name.is_empty())
                .collect();
            (name, depends)
        })
        .collect()
}

/// Every dependency of a crate on a crate that is not below it in `order`, as "a -> b".
fn upward(order: &[&str], dependencies_of: impl Fn(&str) -> BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for (position, name) in order.iter().enumerate() {
        for dependency in dependencies_of(name) {
            if order.iter().position(|other| *other == dependency).is_none_or(|at| at <= position) {
                found.push(format!("{name} -> {dependency}"));
            }
        }
    }
    found
}

#[test]
fn every_crate_is_in_the_order_and_depends_only_downwards() {
    let ordered: BTreeSet<String> = ORDER.iter().map(|name| name.to_string()).collect();
    assert_eq!(crate_directories(), ordered, "crates/ and the documented order differ");
    assert_eq!(upward(ORDER, dependencies), Vec::<String>::new(), "dependencies that run up the order");
}

#[test]
fn the_readme_lists_the_dependencies_the_manifests_declare() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let rows = readme_rows(&readme);
    let names: Vec<&str> = rows.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ORDER, "the README's crate table is not the crates in their order");
    for (name, documented) in rows {
        assert_eq!(documented, dependencies(&name), "README.md's row of {name}");
    }
}

#[test]
fn upward_and_unknown_dependencies_are_caught() {
    let order = ["top", "middle", "bottom"];
    let fake = |name: &str| -> BTreeSet<String> {
        match name {
            "top" => ["middle".to_string(), "bottom".to_string()].into(),
            "middle" => ["top".to_string()].into(),
            "bottom" => ["elsewhere".to_string()].into(),
            _ => BTreeSet::new(),
        }
    };
    assert_eq!(upward(&order, fake), ["middle -> top", "bottom -> elsewhere"]);
    let rows = readme_rows(
        "| `capslint x` | a table elsewhere | |\n### Crates\n| `capslint_a` | owns | `capslint_b`, `capslint_c` |\n| other |\n## Next\n| `capslint_z` | | |\n",
    );
    assert_eq!(rows, [("capslint_a".to_string(), ["capslint_b".to_string(), "capslint_c".to_string()].into())]);
}
