//! Hostile YAML, generated here rather than committed: alias bombs and 10,000-level nesting must be
//! answered quickly (CAP001 when the file looks like a manifest, nothing otherwise), never hang, never
//! overflow the stack, and never take the other files down with them.

use capslint_workspace::settings::Overrides;

use crate::support::*;

const HEADER: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile\n";

/// Lints one hostile text. No time is asserted (timings belong to `scripts/bench`); a hang or a blow-up
/// shows as a test that never finishes, which CI's time limit catches.
fn check(name: &str, text: &str) -> Vec<(usize, String)> {
    let diagnostics = lint_text(name, text, &settings(&Overrides::default()));
    diagnostics.iter().map(|diagnostic| (diagnostic.start().row, diagnostic.rule().code().to_string())).collect()
}

fn billion_laughs() -> String {
    let mut text = String::from(
        "data:\n  a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
    );
    for level in 0..12 {
        let previous = if level == 0 { "a".to_string() } else { format!("b{}", level - 1) };
        text.push_str(&format!("  b{level}: &b{level} [{}]\n", vec![format!("*{previous}"); 9].join(", ")));
    }
    text
}

/// Aliases inside mapping keys: saphyr counts a key as one node whatever it holds.
fn key_bomb() -> String {
    let mut text = String::from("data:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    let mut previous = "a".to_string();
    for level in 1..10 {
        let keys: Vec<String> = (0..10).map(|index| format!("? [*{previous}, {index}] : 1")).collect();
        text.push_str(&format!("  b{level}: &b{level} {{{}}}\n", keys.join(", ")));
        previous = format!("b{level}");
    }
    text
}

#[test]
fn alias_bombs_are_refused_quickly() {
    let found = check("bomb.yaml", &format!("{HEADER}{}", billion_laughs()));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, "CAP001");
    let found = check("keys.yaml", &format!("{HEADER}{}", key_bomb()));
    assert_eq!(found, vec![(7, "CAP001".to_string())]);
}

#[test]
fn nested_anchors_over_a_large_list_are_refused() {
    // Each anchor copies its subtree when it is defined: 200 of them around 100,000 items.
    let items = vec!["x"; 100_000].join(", ");
    let anchors: String = (0..200).map(|index| format!("&a{index} [")).collect();
    let text = format!("{HEADER}data: {anchors}[{items}]{}\n", "]".repeat(200));
    assert_eq!(check("anchors.yaml", &text), vec![(5, "CAP001".to_string())]);
}

#[test]
fn deep_nesting_is_refused_without_recursion() {
    let depth = 10_000;
    let flow = format!("{HEADER}data: {}{}\n", "[".repeat(depth), "]".repeat(depth));
    assert_eq!(check("flow.yaml", &flow), vec![(5, "CAP001".to_string())]);
    let flow_maps = format!("{HEADER}data: {}{}\n", "{a: ".repeat(depth), "}".repeat(depth));
    assert_eq!(check("maps.yaml", &flow_maps), vec![(5, "CAP001".to_string())]);
    let dashes = format!("{HEADER}data:\n{}x\n", "- ".repeat(depth));
    assert_eq!(check("dashes.yaml", &dashes), vec![(6, "CAP001".to_string())]);
    let indented: String = (0..3_000).map(|level| format!("{}k{level}:\n", " ".repeat(level))).collect();
    let found = check("indented.yaml", &format!("{HEADER}{indented}"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, "CAP001");
}

#[test]
fn hostile_yaml_that_is_not_a_manifest_is_skipped_silently() {
    assert!(check("bomb.yaml", &billion_laughs()).is_empty());
    assert!(check("keys.yaml", &format!("kind_of: config\n{}", key_bomb())).is_empty());
    assert!(
        check("deep.yaml", &format!("kind_of: config\nx: {}{}\n", "[".repeat(10_000), "]".repeat(10_000))).is_empty()
    );
}

#[test]
fn nesting_below_the_limit_is_checked() {
    let depth = 100;
    let text = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: deep\nspec:\n  containers:\n  - name: app\n    image: x\n    \
         args: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let found = check("deep.yaml", &text);
    assert!(found.iter().any(|(row, code)| *row == 7 && code == "CAP201"), "{found:?}");
}

#[test]
fn a_hostile_file_does_not_stop_the_others() {
    let dir = tempfile::TempDir::new().unwrap();
    std::fs::write(dir.path().join("bomb.yaml"), format!("{HEADER}{}", billion_laughs())).unwrap();
    std::fs::write(
        dir.path().join("pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n    image: x\n",
    )
    .unwrap();
    let output = crate::support::check(dir.path()).args(["--output-format", "concise"]).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("bomb.yaml:") && stdout.contains("CAP001"), "{stdout}");
    assert!(stdout.contains("pod.yaml:7:11: CAP201"), "{stdout}");
}

#[test]
fn a_multi_line_quoted_key_does_not_break_the_guard() {
    // Found by fuzzing: a quoted scalar spanning lines, used as a key, made the guard's column
    // arithmetic underflow. A panic is contained as an "internal error" finding; none may appear.
    let crash = std::fs::read(tests_dir().join("regressions/guard_column_underflow.yaml")).unwrap();
    let texts = [
        "apiVersion: v1\nkind: Pod\nmetadata:\n  \"multi\n  line\": x\nspec:\n  containers: []\n".to_string(),
        String::from_utf8_lossy(&crash).into_owned(),
    ];
    for text in &texts {
        for diagnostic in lint_text("regression.yaml", text, &settings(&Overrides::default())) {
            assert!(!diagnostic.finding.message.starts_with("internal error"), "{}", diagnostic.finding.message);
        }
    }
}

/// `text` with its line breaks written as a lone carriage return, which YAML reads as a line break too.
fn cr_only(text: &str) -> String {
    text.replace('\n', "\r")
}

#[test]
fn lone_carriage_returns_do_not_hide_hostile_input_from_the_guard() {
    // A comment line would otherwise hide the rest of the file from the guard: the whole file is one
    // line to a scan that splits on `\n` alone.
    let items = vec!["x"; 100_000].join(", ");
    let anchors: String = (0..200).map(|index| format!("&a{index} [")).collect();
    let text = format!("{HEADER}# nested anchors\ndata: {anchors}[{items}]{}\n", "]".repeat(200));
    assert_eq!(check("anchors.yaml", &cr_only(&text)), vec![(6, "CAP001".to_string())]);
    let found = check("keys.yaml", &cr_only(&format!("{HEADER}# keys\n{}", key_bomb())));
    assert_eq!(found, vec![(8, "CAP001".to_string())]);
    let deep = format!(
        "{HEADER}data: |\n  text\n{}",
        (0..3_000).map(|level| format!("{}k:\n", " ".repeat(level))).collect::<String>()
    );
    let found = check("deep.yaml", &cr_only(&deep));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1, "CAP001");
}

#[test]
fn a_manifest_with_lone_carriage_returns_is_checked_like_any_other() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n    image: x\n";
    let duplicate = pod.replace("  name: p\n", "  name: p\n  name: q\n");
    let found = check("duplicate.yaml", &cr_only(&duplicate));
    assert_eq!(found, vec![(5, "CAP001".to_string())]);
    let diagnostics = lint_text("pod.yaml", &cr_only(pod), &settings(&Overrides::default()));
    let cap201 = diagnostics.iter().find(|diagnostic| diagnostic.rule().code() == "CAP201").expect("CAP201");
    let start = cap201.start();
    assert_eq!((start.row, start.column), (7, 11));
    let report = render_full(std::slice::from_ref(cap201));
    assert!(report.contains("[pod.yaml:7:11]") && report.contains(" 7 │   - name: app\n"), "{report}");
}

/// A ConfigMap holding each of `values` as a literal block under keys `v0`, `v1`, ...
fn config_map_of(values: &[String]) -> String {
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: templates\ndata:\n");
    for (index, value) in values.iter().enumerate() {
        text.push_str(&format!("  v{index}: |\n"));
        for line in value.lines() {
            text.push_str(&format!("    {line}\n"));
        }
    }
    text
}

/// A pod with one container and no CPU limit: CAP201, CAP202 and CAP203 at its `name` (row 5 of the value).
const POD_WITHOUT_LIMIT: &str = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: app\n    image: x/y:1\n";

#[test]
fn hostile_values_in_a_config_map_are_silent_and_the_other_values_are_checked() {
    let bomb = format!("apiVersion: v1\nkind: Pod\n{}", billion_laughs());
    let deep = format!("apiVersion: v1\nkind: Pod\nspec: {}{}", "[".repeat(10_000), "]".repeat(10_000));
    let unclosed = "apiVersion: v1\nkind: Pod\nmetadata: {name: {{.Trial}\nspec: {}".to_string();
    let text = config_map_of(&[bomb, deep, unclosed, POD_WITHOUT_LIMIT.to_string()]);
    let found = check("templates.yaml", &text);
    // The pod is the fourth value: its `name` is on the row of its fifth line.
    let row = text.lines().position(|line| line == "      - name: app").unwrap() + 1;
    assert_eq!(found, pod_findings(row));
}

#[test]
fn values_past_the_budget_of_a_file_are_not_parsed() {
    // Each value holds aliases that expand to 819 nodes, within the alias budget of a file: only the first
    // 64 values are parsed, however many the file has.
    let aliases = "metadata:\n  a: &a [l, l, l, l, l, l, l, l, l]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n  \
                   c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n";
    let values = vec![format!("{POD_WITHOUT_LIMIT}{aliases}"); 100];
    let found = check("many.yaml", &config_map_of(&values));
    assert_eq!(found.len(), 64 * 3, "{found:?}");
    let first = pod_findings(11);
    assert_eq!(found[..3], first[..]);
}

#[test]
fn objects_held_in_an_object_held_in_a_config_map_are_not_parsed() {
    let inner = config_map_of(&[POD_WITHOUT_LIMIT.to_string()]);
    assert!(check("nested.yaml", &config_map_of(&[inner])).is_empty());
}

#[test]
fn a_config_map_with_lone_carriage_returns_places_what_it_holds_at_the_key() {
    let text = cr_only(&config_map_of(&[POD_WITHOUT_LIMIT.to_string()]));
    assert_eq!(check("cr.yaml", &text), pod_findings(6));
}

/// What [`POD_WITHOUT_LIMIT`] produces, on `row`.
fn pod_findings(row: usize) -> Vec<(usize, String)> {
    ["CAP201", "CAP202", "CAP203"].into_iter().map(|code| (row, code.to_string())).collect()
}
