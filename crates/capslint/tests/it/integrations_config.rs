//! Configuration end to end, one key at a time; configuration errors (exit 2, a report into the file);
//! hierarchical discovery; `capslint config`; `capslint rule`.

use std::path::Path;

use capslint_diagnostics::registry::Rule;
use capslint_workspace::config::ConfigFile;
use serde_json::Value;

use crate::support::*;

/// `capslint check --output-format concise` with configuration discovery: the codes found, by file.
fn findings(dir: &Path, args: &[&str]) -> Vec<String> {
    let (code, stdout, stderr) = run(capslint(dir).args(["check", "--output-format", "concise"]).args(args));
    assert_ne!(code, 2, "{stderr}");
    let mut found: Vec<String> = stdout
        .lines()
        .filter(|line| line.contains(": CAP"))
        .map(|line| {
            let (location, rest) = line.split_once(": ").unwrap();
            let file = location.split(':').next().unwrap();
            format!("{file} {}", rest.split(' ').next().unwrap())
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

fn with_config(config: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = project(files);
    write(dir.path(), "capslint.toml", config);
    dir
}

const JOB: &str = "import os
from concurrent.futures import ProcessPoolExecutor

import myorg.resources

threads = ProcessPoolExecutor(max_workers=int(os.environ[\"MY_THREADS\"]))
helper = ProcessPoolExecutor(max_workers=myorg.resources.pod_cpu_limit())
limit = ProcessPoolExecutor(max_workers=int(os.environ[\"POD_CPUS\"]))
";

#[test]
fn selection_keys() {
    let files = [("train.py", TRAIN)];
    let all = ["train.py CAP101", "train.py CAP102", "train.py CAP103"];
    assert_eq!(findings(with_config("", &files).path(), &[]), all);
    assert_eq!(findings(with_config("select = [\"CAP102\"]\n", &files).path(), &[]), ["train.py CAP102"]);
    assert_eq!(findings(with_config("ignore = [\"CAP1\"]\n", &files).path(), &[]), Vec::<String>::new());
    assert_eq!(
        findings(with_config("select = [\"CAP102\"]\nextend-select = [\"n-jobs-all-cores\"]\n", &files).path(), &[]),
        ["train.py CAP101", "train.py CAP102"]
    );
    // The command line adds to the file's selection, and --select replaces it.
    let dir = with_config("ignore = [\"CAP101\"]\n", &files);
    assert_eq!(findings(dir.path(), &["--select", "CAP101"]), ["train.py CAP101"]);
    assert_eq!(findings(dir.path(), &["--extend-select", "CAP101"]).len(), 3);
}

#[test]
fn per_file_ignores_are_relative_to_the_configuration() {
    let dir = with_config(
        "[per-file-ignores]\n\"legacy/**\" = [\"CAP101\", \"CAP102\"]\n\"*_test.py\" = [\"ALL\"]\n",
        &[("train.py", TRAIN), ("legacy/old.py", TRAIN), ("deep/x_test.py", TRAIN)],
    );
    let found = findings(dir.path(), &[]);
    assert_eq!(found, ["legacy/old.py CAP103", "train.py CAP101", "train.py CAP102", "train.py CAP103"]);
    // From inside `legacy/`, the patterns still apply (they are anchored at the configuration).
    assert_eq!(findings(&dir.path().join("legacy"), &["old.py"]), ["old.py CAP103"]);
}

#[test]
fn exclude_replaces_the_defaults_and_extend_exclude_adds() {
    let files = [("train.py", TRAIN), ("venv/lib/x.py", TRAIN), ("generated/y.py", TRAIN)];
    let files_of = |found: Vec<String>| {
        let mut files: Vec<String> = found.iter().map(|line| line.split(' ').next().unwrap().to_string()).collect();
        files.dedup();
        files
    };
    assert_eq!(files_of(findings(with_config("", &files).path(), &[])), ["generated/y.py", "train.py"]);
    assert_eq!(files_of(findings(with_config("extend-exclude = [\"generated\"]\n", &files).path(), &[])), ["train.py"]);
    assert_eq!(
        files_of(findings(with_config("exclude = [\"generated\"]\n", &files).path(), &[])),
        ["train.py", "venv/lib/x.py"]
    );
    // Files named explicitly are checked, unless --force-exclude (as pre-commit passes them).
    let dir = with_config("extend-exclude = [\"generated\"]\n", &files);
    assert_eq!(files_of(findings(dir.path(), &["generated/y.py"])), ["generated/y.py"]);
    assert_eq!(findings(dir.path(), &["--force-exclude", "generated/y.py"]), Vec::<String>::new());
}

#[test]
fn strict_cap_helpers_thread_caps_and_limit_env() {
    let files = [("job.py", JOB)];
    assert_eq!(findings(with_config("", &files).path(), &[]), Vec::<String>::new());
    let strict = findings(with_config("strict = true\n", &files).path(), &[]);
    assert_eq!(strict, ["job.py CAP104"]);
    let (_, stdout, _) =
        run(capslint(with_config("strict = true\n", &files).path()).args(["check", "--output-format=concise"]));
    assert_eq!(stdout.lines().filter(|line| line.contains("CAP104")).count(), 3);

    let rows = |config: &str| -> Vec<String> {
        let dir = with_config(config, &files);
        let (_, stdout, _) = run(capslint(dir.path()).args(["check", "--output-format=concise"]));
        stdout
            .lines()
            .filter(|line| line.contains("CAP104"))
            .map(|line| line.split(':').nth(1).unwrap().to_string())
            .collect()
    };
    assert_eq!(rows("strict = true\nthread-caps = [\"MY_THREADS\"]\n"), ["7", "8"]);
    assert_eq!(rows("strict = true\ncap-helpers = [\"myorg.resources.pod_cpu_limit\"]\n"), ["6", "8"]);
    assert_eq!(rows("strict = true\n[runtime]\nlimit-env = \"POD_CPUS\"\n"), ["6", "7"]);
}

/// `--strict` reports every thread count of unknown provenance (CAP101; joblib's own is CAP103), and says
/// where the value comes from; without it, none.
#[test]
fn strict_reports_thread_counts_of_unknown_provenance() {
    let fit = "import os\nfrom joblib import Parallel\nfrom sklearn.ensemble import RandomForestClassifier\n\
               from .settings import N_JOBS\n\nTHREADS = int(os.environ[\"OMP_NUM_THREADS\"])\n\n\
               def fit(X, y, jobs):\n    RandomForestClassifier(n_jobs=jobs).fit(X, y)\n    \
               RandomForestClassifier(n_jobs=N_JOBS).fit(X, y)\n    RandomForestClassifier(n_jobs=THREADS).fit(X, y)\n    \
               params = {\"n_jobs\": jobs}\n    Parallel(n_jobs=jobs)\n    return params\n";
    let files = [("fit.py", fit)];
    assert_eq!(findings(with_config("", &files).path(), &[]), Vec::<String>::new());
    let dir = with_config("strict = true\n", &files);
    let (_, stdout, _) = run(capslint(dir.path()).args(["check", "--output-format=concise"]));
    let lines: Vec<&str> = stdout.lines().filter(|line| line.starts_with("fit.py:")).collect();
    assert_eq!(
        lines,
        [
            "fit.py:9:28: CAP101 `RandomForestClassifier(n_jobs=jobs)`: the thread count's provenance is unknown \
             (strict mode), it may be every CPU of the node",
            "fit.py:10:28: CAP101 `RandomForestClassifier(n_jobs=N_JOBS)`: the thread count's provenance is \
             unknown (strict mode), it may be every CPU of the node",
            "fit.py:12:15: CAP101 `\"n_jobs\": jobs`: the thread count's provenance is unknown (strict mode), it \
             may be every CPU of the node",
            "fit.py:13:14: CAP103 `Parallel` takes `n_jobs` from a value capslint cannot see (strict mode)",
        ]
    );
    let (_, full, _) = run(capslint(dir.path()).args(["check", "--output-format=full", "--select=CAP101"]));
    assert!(full.contains("provenance unknown: a function parameter: each caller decides"), "{full}");
    assert!(full.contains("provenance unknown: another module's value"), "{full}");
}

#[test]
fn severity_overrides_reach_the_reports() {
    let dir =
        with_config("[severity]\nCAP101 = \"warning\"\nmissing-thread-count = \"error\"\n", &[("train.py", TRAIN)]);
    let (code, stdout, _) = run(capslint(dir.path()).args(["check", "--output-format", "github"]));
    assert_eq!(code, 1, "warnings still fail the run");
    let level = |code: &str| {
        stdout
            .lines()
            .find(|line| line.contains(&format!("title={code}")))
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(level("CAP101"), "::warning");
    assert_eq!(level("CAP102"), "::error");
    assert_eq!(level("CAP103"), "::error");
    let (_, stdout, _) = run(capslint(dir.path()).args(["check"]));
    assert!(stdout.contains("Found 3 findings (2 errors, 1 warning)"), "{stdout}");
}

#[test]
fn gpu_table_is_validated_and_resolved() {
    let dir = with_config(
        "[gpu]\nresource = \"amd.com/gpu\"\nmemory-resource = \"example.com/gpumem\"\nmemory-capacity = 80\n",
        &[("train.py", CLEAN)],
    );
    assert_eq!(run(capslint(dir.path()).arg("check")).0, 0);
    let (_, stdout, _) = run(capslint(dir.path()).arg("config"));
    assert!(
        stdout.contains(
            "[gpu]\nresource = \"amd.com/gpu\"\nmemory-resource = \"example.com/gpumem\"\nmemory-capacity = 80\n"
        ),
        "{stdout}"
    );
}

#[test]
fn configuration_errors_exit_2_with_a_report_into_the_file() {
    let cases: &[(&str, &str, &str)] = &[
        ("unknown-key = 1\n", "unknown field `unknown-key`", "capslint.toml:1:1"),
        ("strict = \"yes\"\n", "invalid type: string \"yes\", expected a boolean", "capslint.toml:1:10"),
        ("select = [\"CAP9\"]\n", "unknown rule selector `CAP9`", "capslint.toml:1:11"),
        ("[severity]\nCAP101 = \"fatal\"\n", "unknown variant `fatal`", "capslint.toml:2:10"),
        ("[severity]\nCAP999 = \"error\"\n", "unknown rule `CAP999`", "capslint.toml:2:1"),
        ("[gpu]\nmemory-capacity = \"80\"\n", "expected u64", "capslint.toml:2:19"),
        ("[runtime]\nlimit_env = \"X\"\n", "unknown field `limit_env`", "capslint.toml:2:1"),
        ("exclude = [\"ok\", \"[bad\"]\n", "invalid glob `[bad`", "capslint.toml:1:18"),
        ("[per-file-ignores]\n\"src/{a\" = [\"CAP101\"]\n", "invalid glob `src/{a`", "capslint.toml:2:1"),
        ("select = \"CAP101\"\n", "invalid type: string \"CAP101\", expected a sequence", "capslint.toml:1:10"),
        ("select = [\n", "", "capslint.toml:"),
    ];
    for (config, message, location) in cases {
        let dir = with_config(config, &[("train.py", TRAIN)]);
        for command in [vec!["check"], vec!["config"]] {
            let (code, stdout, stderr) = run(capslint(dir.path()).args(&command));
            assert_eq!(code, 2, "{config:?} with {command:?}: {stdout}{stderr}");
            assert!(stderr.contains(message), "{config:?}: expected {message:?} in\n{stderr}");
            assert!(stderr.contains(location), "{config:?}: expected {location:?} in\n{stderr}");
        }
    }
    // The same error in pyproject.toml points into pyproject.toml.
    let dir =
        project(&[("pyproject.toml", "[project]\nname = \"x\"\n\n[tool.capslint]\nstrict = 1\n"), ("a.py", TRAIN)]);
    let (code, _, stderr) = run(capslint(dir.path()).arg("check"));
    assert_eq!(code, 2);
    assert!(stderr.contains("pyproject.toml:5:10"), "{stderr}");
}

#[test]
fn the_nearest_configuration_wins_per_file() {
    let dir = project(&[
        ("capslint.toml", "ignore = [\"CAP102\"]\n"),
        ("a.py", TRAIN),
        ("hidden/.capslint.toml", "select = [\"CAP102\"]\n"),
        ("hidden/b.py", TRAIN),
        ("plain/pyproject.toml", "[project]\nname = \"plain\"\n"),
        ("plain/c.py", TRAIN),
        ("tool/pyproject.toml", "[tool.capslint]\nignore = [\"CAP101\"]\n"),
        ("tool/d.py", TRAIN),
        ("both/capslint.toml", "select = [\"CAP101\"]\n"),
        ("both/.capslint.toml", "select = [\"CAP103\"]\n"),
        ("both/e.py", TRAIN),
    ]);
    assert_eq!(
        findings(dir.path(), &[]),
        [
            "a.py CAP101",
            "a.py CAP103",
            "both/e.py CAP101",
            "hidden/b.py CAP102",
            "plain/c.py CAP101",
            "plain/c.py CAP103",
            "tool/d.py CAP102",
            "tool/d.py CAP103",
        ]
    );
    // --config applies one file everywhere; --isolated none.
    assert_eq!(findings(dir.path(), &["--config", "tool/pyproject.toml"]).len(), 10);
    assert_eq!(findings(dir.path(), &["--isolated"]).len(), 15);
    let (code, _, stderr) = run(capslint(dir.path()).args(["check", "--config", "plain/pyproject.toml"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("no [tool.capslint] table"), "{stderr}");
}

#[test]
fn config_prints_the_resolved_settings_and_their_source() {
    let dir = project(&[
        (
            "capslint.toml",
            "ignore = [\"CAP102\"]\nstrict = true\n[per-file-ignores]\n\"legacy/*\" = [\"CAP101\"]\n[severity]\nCAP103 = \"warning\"\n",
        ),
        ("legacy/old.py", TRAIN),
        ("sub/pyproject.toml", "[tool.capslint]\nselect = [\"CAP1\"]\n"),
        ("sub/new.py", TRAIN),
    ]);
    let (code, stdout, _) = run(capslint(dir.path()).args(["config", "legacy/old.py"]));
    assert_eq!(code, 0);
    assert!(stdout.starts_with("# Configuration for legacy/old.py\n# Source: capslint.toml\n"), "{stdout}");
    assert!(
        stdout.contains("# After per-file-ignores, this file is checked for: CAP001, CAP002, CAP003, CAP103,"),
        "{stdout}"
    );
    let (_, stdout, _) = run(capslint(dir.path()).args(["config", "sub/new.py"]));
    assert!(stdout.contains("# Source: sub/pyproject.toml\n"), "{stdout}");
    let (_, stdout, _) = run(capslint(dir.path()).args(["config", "--isolated"]));
    assert!(stdout.contains("# Source: none (--isolated): the defaults\n"), "{stdout}");

    // The output is a configuration that reproduces the same settings: in place of the original, it
    // gives the same findings, and printing it again gives the same text.
    let (_, printed, _) = run(capslint(dir.path()).arg("config"));
    let parsed = ConfigFile::parse(Path::new("capslint.toml"), printed.clone()).expect("valid").expect("options");
    let select: Vec<&str> = parsed.options.select.iter().flatten().map(|item| item.get_ref().as_str()).collect();
    assert_eq!(
        select,
        [
            "CAP001", "CAP002", "CAP003", "CAP101", "CAP103", "CAP104", "CAP105", "CAP106", "CAP107", "CAP108",
            "CAP109", "CAP110", "CAP201", "CAP202", "CAP203", "CAP204", "CAP205", "CAP206", "CAP208", "CAP209",
            "CAP210"
        ]
    );
    let annotations = |dir: &Path| run(capslint(dir).args(["check", "--output-format", "github"])).1;
    let before = annotations(dir.path());
    assert!(before.contains("::warning") && before.contains("CAP103"), "{before}");
    write(dir.path(), "capslint.toml", &printed);
    assert_eq!(annotations(dir.path()), before);
    assert_eq!(run(capslint(dir.path()).arg("config")).1, printed);

    let (code, _, stderr) = run(capslint(dir.path()).args(["config", "missing/"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("missing/: no such file or directory"), "{stderr}");
}

#[test]
fn rule_pages_are_the_files_in_rules() {
    for rule in Rule::ALL {
        let (code, stdout, _) = run(capslint(&root()).args(["rule", rule.code()]));
        assert_eq!(code, 0);
        let page = std::fs::read_to_string(root().join(format!("rules/{}.md", rule.code()))).unwrap();
        assert_eq!(stdout, page, "{}: the binary's page differs from rules/", rule.code());
    }
    let (code, stdout, _) = run(capslint(&root()).args(["rule", "late-thread-cap"]));
    assert_eq!(code, 0);
    assert!(stdout.starts_with("# CAP106: late-thread-cap\n"));
    let (code, _, stderr) = run(capslint(&root()).args(["rule", "CAP999"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown rule `CAP999`"));
}

#[test]
fn rule_all_lists_the_catalogue_as_text_and_json() {
    let (_, stdout, _) = run(capslint(&root()).args(["rule", "--all"]));
    assert_eq!(stdout.lines().count(), Rule::ALL.len());
    for (line, rule) in stdout.lines().zip(Rule::ALL) {
        assert!(line.starts_with(&format!("{}  {}", rule.code(), rule.name())), "{line}");
        assert!(line.contains(rule.default_severity().as_str()) && line.contains(rule.summary()));
    }
    let (_, stdout, _) = run(capslint(&root()).args(["rule", "--all", "--output-format", "json"]));
    let rules: Value = serde_json::from_str(&stdout).unwrap();
    let rules = rules.as_array().unwrap();
    assert_eq!(rules.len(), Rule::ALL.len());
    for (item, rule) in rules.iter().zip(Rule::ALL) {
        assert_eq!(
            item,
            &serde_json::json!({
                "code": rule.code(),
                "name": rule.name(),
                "severity": rule.default_severity().as_str(),
                "summary": rule.summary(),
                "url": rule.url(),
                "enabled_by_default": rule.enabled_by_default(),
            })
        );
    }
    let (_, stdout, _) = run(capslint(&root()).args(["rule", "CAP101", "--output-format", "json"]));
    let item: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(item["explanation"], Rule::NJobsAllCores.documentation());
}

#[test]
fn rule_renders_the_page_on_a_terminal() {
    // `script` gives the command a pseudo-terminal; without it, this part cannot run.
    let Ok(output) = scrubbed("script")
        .args(["-qec", &format!("{} rule CAP002", binary().display()), "/dev/null"])
        .env_remove("NO_COLOR")
        .output()
    else {
        eprintln!("SKIP: `script` is not available to provide a terminal");
        return;
    };
    let stdout = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    assert!(stdout.starts_with("\x1b[1;4mCAP002: unused-suppression\x1b[0m\n"), "{stdout:?}");
    assert!(stdout.contains("\x1b[1mWhat it does\x1b[0m"));
    assert!(stdout.contains("\n    from sklearn.ensemble import RandomForestClassifier\n"), "code blocks are indented");
    assert!(!stdout.contains("```"));
}
