//! The command-line conventions shared with ruff: `--color` and the color variables, `--quiet`,
//! `--silent`, `--show-files`, `--show-settings` and `completion`.

use crate::support::*;

const BAD: &str =
    "from joblib import Parallel, delayed\n\nresults = Parallel(n_jobs=-1)(delayed(abs)(x) for x in range(9))\n";

const ESCAPE: &str = "\x1b[";

/// `check` in `dir` with extra environment variables (the helper clears the color ones).
fn colored(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = check(dir);
    command.args(args).env_remove("FORCE_COLOR").env_remove("CLICOLOR_FORCE").env_remove("NO_COLOR");
    for (key, value) in env {
        command.env(key, value);
    }
    let (code, stdout, _) = run(&mut command);
    assert_eq!(code, 1, "{stdout}");
    stdout
}

#[test]
fn color_follows_the_flag_then_the_environment() {
    let dir = project(&[("bad.py", BAD)]);
    assert!(!colored(dir.path(), &[], &[]).contains(ESCAPE), "a pipe gets no color by default");
    assert!(colored(dir.path(), &["--color", "always"], &[]).contains(ESCAPE));
    assert!(colored(dir.path(), &["--color=always"], &[("NO_COLOR", "1")]).contains(ESCAPE));
    assert!(!colored(dir.path(), &["--color", "never"], &[("FORCE_COLOR", "1")]).contains(ESCAPE));
    assert!(colored(dir.path(), &[], &[("FORCE_COLOR", "1")]).contains(ESCAPE));
    assert!(colored(dir.path(), &[], &[("CLICOLOR_FORCE", "1")]).contains(ESCAPE));
    assert!(!colored(dir.path(), &[], &[("CLICOLOR_FORCE", "0")]).contains(ESCAPE));
    assert!(!colored(dir.path(), &[], &[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]).contains(ESCAPE));
    // Machine formats are never colored.
    let json = colored(dir.path(), &["--color", "always", "--output-format", "json"], &[]);
    assert!(!json.contains(ESCAPE));
    serde_json::from_str::<serde_json::Value>(&json).expect("valid JSON");
}

#[test]
fn a_report_file_is_colored_only_on_request() {
    let dir = project(&[("bad.py", BAD)]);
    colored(dir.path(), &["--output-file", "plain.txt"], &[("FORCE_COLOR", "1")]);
    let plain = std::fs::read_to_string(dir.path().join("plain.txt")).unwrap();
    assert!(plain.contains("CAP101") && !plain.contains(ESCAPE), "{plain}");
    colored(dir.path(), &["--output-file", "colored.txt", "--color", "always"], &[]);
    assert!(std::fs::read_to_string(dir.path().join("colored.txt")).unwrap().contains(ESCAPE));
}

#[test]
fn quiet_prints_findings_without_the_summary_and_silent_prints_nothing() {
    let dir = project(&[("bad.py", BAD)]);
    let (code, stdout, _) = run(check(dir.path()).args(["--quiet", "--output-format", "concise"]));
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("bad.py:3:20: CAP101"), "{stdout}");
    let (code, stdout, stderr) = run(check(dir.path()).arg("-s"));
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (1, "", ""));
    // The exit code still tells a clean run from a failing one.
    let clean = project(&[("ok.py", "x = 1\n")]);
    assert_eq!(run(check(clean.path()).arg("--silent")), (0, String::new(), String::new()));
    // --silent with a report file still writes the file.
    let (code, _, _) = run(check(dir.path()).args(["--silent", "--output-format", "json", "-o", "out.json"]));
    assert_eq!(code, 1);
    assert!(std::fs::read_to_string(dir.path().join("out.json")).unwrap().contains("CAP101"));
}

#[test]
fn show_files_lists_what_would_be_checked() {
    let dir = project(&[
        ("src/train.py", BAD),
        ("k8s/job.yaml", "apiVersion: batch/v1\nkind: Job\n"),
        ("vendor/lib.py", BAD),
        ("notes.txt", "not checked\n"),
        ("capslint.toml", "extend-exclude = [\"vendor\"]\n"),
    ]);
    let (code, stdout, _) = run(capslint(dir.path()).args(["check", "--show-files"]));
    assert_eq!(code, 0);
    assert_eq!(stdout, "k8s/job.yaml\nsrc/train.py\n");
    let (code, _, stderr) = run(check(dir.path()).args(["--show-files", "missing"]));
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn show_settings_prints_the_first_files_resolved_configuration() {
    let dir = project(&[("pkg/a.py", BAD), ("pkg/b.py", BAD), ("pkg/capslint.toml", "strict = true\n")]);
    let (code, stdout, _) = run(capslint(dir.path()).args(["check", "--show-settings", "--ignore", "CAP101", "pkg"]));
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.starts_with("# Configuration for pkg/a.py\n# Source: pkg/capslint.toml\n"), "{stdout}");
    assert!(stdout.contains("strict = true"), "{stdout}");
    assert!(!stdout.contains("\"CAP101\""), "the command line's selection applies:\n{stdout}");
    assert!(stdout.contains("\"CAP102\""), "{stdout}");
}

#[test]
fn completion_scripts_name_the_subcommands() {
    let dir = project(&[]);
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, stdout, stderr) = run(capslint(dir.path()).args(["completion", shell]));
        assert_eq!(code, 0, "{shell}: {stderr}");
        for word in ["capslint", "check", "runtime", "exec", "output-format"] {
            assert!(stdout.contains(word), "{shell} completion lacks {word}");
        }
    }
    let (code, _, stderr) = run(capslint(dir.path()).args(["completion", "tcsh"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid value 'tcsh'"), "{stderr}");
}
