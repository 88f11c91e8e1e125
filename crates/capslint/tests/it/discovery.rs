//! No silent pass in discovery: every file named on the command line is checked or answered (by extension
//! whatever its case, by a Python shebang, by a Kubernetes object's keys), and ignore files apply as git
//! applies them (from the repository's top level down, never from a directory above it).

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::support::*;

const BAD: &str = "from joblib import Parallel\n\nParallel(n_jobs=-1)\n";
const POD: &str =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: a\n    image: python\n";

fn concise(dir: &std::path::Path, paths: &[&str]) -> (i32, String, String) {
    outcome(&check(dir).args(["--output-format", "concise"]).args(paths).output().unwrap())
}

#[test]
fn named_files_are_typed_by_extension_case_shebang_and_content() {
    let scripts: Vec<(String, String)> = [
        "#!/usr/bin/env python3",
        "#!/usr/bin/python3.11 -u",
        "#!/usr/bin/env -S python3 -X dev",
        "#!/usr/bin/env PYTHONHASHSEED=0 python",
        "#!/opt/conda/bin/pypy3",
    ]
    .iter()
    .enumerate()
    .map(|(index, shebang)| (format!("bin/train{index}"), format!("{shebang}\n{BAD}")))
    .collect();
    let mut files: Vec<(&str, &str)> = scripts.iter().map(|(name, text)| (name.as_str(), text.as_str())).collect();
    files.extend([
        ("TRAIN.PY", BAD),
        ("Job.Py", BAD),
        ("POD.YAML", POD),
        ("pod.Yml", POD),
        ("manifests/pod", POD),
        ("manifests/pod.json.txt", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}, \"spec\": {\"containers\": [{\"name\": \"a\", \"image\": \"python\"}]}}\n"),
        ("run.sh", "#!/bin/sh\necho n_jobs=-1\n"),
        ("notes", "n_jobs=-1\n"),
    ]);
    let dir = project(&files);
    for (name, _) in &scripts {
        fs::set_permissions(dir.path().join(name), fs::Permissions::from_mode(0o755)).unwrap();
    }
    let names: Vec<&str> = files.iter().map(|(name, _)| *name).collect();
    let (code, stdout, stderr) = concise(dir.path(), &names);
    assert_eq!(code, 1, "{stderr}");
    for (name, _) in &scripts {
        assert!(stdout.contains(&format!("{name}:4:10: CAP101")), "{name} by its shebang:\n{stdout}");
    }
    for name in ["TRAIN.PY:3:10: CAP101", "Job.Py:3:10: CAP101", "POD.YAML:7:11: CAP201", "pod.Yml:7:11: CAP201"] {
        assert!(stdout.contains(name), "{name}:\n{stdout}");
    }
    assert!(stdout.contains("manifests/pod:7:11: CAP201"), "a manifest by its keys:\n{stdout}");
    assert!(stdout.contains("manifests/pod.json.txt:1:"), "a JSON manifest by its keys:\n{stdout}");
    // What no kind fits is answered, never dropped.
    for name in ["run.sh", "notes"] {
        assert!(stderr.contains(&format!("warning: {name}: not checked")), "{name}:\n{stderr}");
        assert!(!stdout.contains(&format!("{name}:")), "{stdout}");
    }
    // The walk takes upper-case extensions too.
    let (_, stdout, _) = concise(dir.path(), &[]);
    assert!(stdout.contains("TRAIN.PY:3:10: CAP101") && stdout.contains("POD.YAML:7:11: CAP201"), "{stdout}");
}

#[test]
fn force_exclude_still_applies_to_named_files_of_any_kind() {
    let dir = project(&[
        ("vendor/tool", &format!("#!/usr/bin/env python3\n{BAD}")),
        ("capslint.toml", "extend-exclude = [\"vendor\"]\n"),
    ]);
    let output = capslint(dir.path())
        .args(["check", "--force-exclude", "--output-format", "concise", "vendor/tool"])
        .output()
        .unwrap();
    let (code, stdout, stderr) = outcome(&output);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("All checks passed (0 files checked)"), "{stdout}");
    assert!(!stderr.contains("not checked"), "{stderr}");
}

#[test]
fn a_gitignore_above_the_repository_hides_none_of_its_files() {
    let base = project(&[(".gitignore", "*\n"), ("repo/train.py", BAD), ("repo/sub/deep.py", BAD)]);
    let repo = base.path().join("repo");
    fs::create_dir_all(repo.join(".git/info")).unwrap();
    fs::write(repo.join(".gitignore"), "/sub/ignored.py\n").unwrap();
    fs::write(repo.join(".git/info/exclude"), "excluded.py\n").unwrap();
    fs::write(repo.join("sub/ignored.py"), BAD).unwrap();
    fs::write(repo.join("sub/excluded.py"), BAD).unwrap();
    let (code, stdout, _) = concise(&repo, &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("train.py:3:10: CAP101") && stdout.contains("sub/deep.py:3:10: CAP101"), "{stdout}");
    assert!(
        !stdout.contains("ignored.py") && !stdout.contains("excluded.py"),
        "the repository's own ignores apply:\n{stdout}"
    );
    // From a subdirectory, the repository's top-level ignore files still apply, the outer one still not.
    let (_, stdout, _) = concise(&repo.join("sub"), &["."]);
    assert!(stdout.contains("deep.py:3:10: CAP101"), "{stdout}");
    assert!(!stdout.contains("ignored.py") && !stdout.contains("excluded.py"), "{stdout}");
    // Outside any repository, only the walked directories' ignore files apply.
    fs::remove_dir_all(repo.join(".git")).unwrap();
    let (_, stdout, _) = concise(&repo, &[]);
    assert!(stdout.contains("train.py:3:10: CAP101") && !stdout.contains("ignored.py"), "{stdout}");
}

/// The findings, errors, notices and file count of a run, as text to compare.
fn run_report(run: &capslint_linter::lint::RunResult) -> Vec<String> {
    let mut report: Vec<String> = run
        .diagnostics
        .iter()
        .map(|diagnostic| format!("{:?} {}", diagnostic.sort_key(), diagnostic.finding.message))
        .collect();
    report.extend(run.errors.iter().map(|error| format!("error: {error}")));
    report.extend(run.notices.iter().map(|notice| format!("note: {notice}")));
    report.push(format!("{} files checked", run.files_checked));
    report
}

#[test]
fn checking_files_as_the_walk_finds_them_checks_what_discovery_chooses() {
    use std::path::PathBuf;
    use std::sync::Arc;

    use capslint_linter::lint::{self, Input};
    use capslint_workspace::confine::Confinement;
    use capslint_workspace::discover;
    use capslint_workspace::settings::{ConfigSource, Overrides, SettingsResolver};

    let dir = project(&[
        ("a.py", BAD),
        ("sub/b.py", BAD),
        ("sub/quiet.py", "from joblib import Parallel\n\nParallel(n_jobs=2)\n"),
        ("broken.py", "def f(:\n    Parallel(n_jobs=-1)\n"),
        ("deploy/pod.yaml", POD),
        ("deploy/kustomization.yaml", "resources:\n- pod.yaml\n"),
    ]);
    std::os::unix::fs::symlink("a.py", dir.path().join("link.py")).unwrap();
    fs::hard_link(dir.path().join("sub/b.py"), dir.path().join("sub/hard.py")).unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let cases: [&[&str]; 5] =
        [&["."], &[".", "sub"], &["link.py", "a.py"], &["sub/hard.py", "sub", "deploy"], &["deploy", "broken.py"]];
    for case in cases {
        let paths: Vec<PathBuf> = case.iter().map(|path| root.join(path)).collect();
        let overrides =
            Overrides { confinement: Some(Arc::new(Confinement::of_paths(&paths, &root))), ..Overrides::default() };
        let resolver = SettingsResolver::new(ConfigSource::Isolated, overrides, root.clone()).unwrap();
        let discovered = discover::discover(&paths, &resolver, false).unwrap();
        let inputs: Vec<Input> = discovered
            .files
            .iter()
            .map(|(path, kind)| Input {
                path: path.clone(),
                display_name: discover::display_name(path, &root),
                kind: *kind,
                contents: None,
                settings: resolver.for_file(path).unwrap(),
            })
            .collect();
        let after_the_walk = lint::check_inputs(inputs);
        let walked = capslint_linter::while_walking::check(&paths, &resolver, false, &root).unwrap();
        let (while_walking, checked) = walked.run.unwrap();
        assert_eq!(walked.discovered.files, discovered.files, "{case:?}");
        assert_eq!(walked.discovered.notes, discovered.notes, "{case:?}");
        assert_eq!(walked.discovered.errors, discovered.errors, "{case:?}");
        let checked: Vec<&PathBuf> = checked.iter().map(|input| &input.path).collect();
        assert_eq!(checked, discovered.files.iter().map(|(path, _)| path).collect::<Vec<_>>(), "{case:?}");
        let report = run_report(&while_walking);
        assert_eq!(report, run_report(&after_the_walk), "{case:?}");
        assert!(report.iter().any(|line| line.contains("\"CAP")), "findings to compare, {case:?}: {report:#?}");
    }
}
