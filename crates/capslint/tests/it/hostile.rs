//! Hostile input through the binary: each case must end with a diagnostic or an error line for that file,
//! the other files still checked, no panic, no hang. (Hostile YAML: `k8s_hostile.rs`.) No speed is
//! asserted: the shapes that would take time out of proportion to their size (quadratic or exponential
//! work) are bounded at 20 s, far above what a linear run takes in a debug build, so that such work fails
//! the test instead of hanging it.

use std::fs;
use std::os::unix::fs::symlink;

use assert_cmd::Command;
use predicates::prelude::*;
use tempfile::TempDir;

use crate::support::*;

const BAD: &str = "from joblib import Parallel, delayed\n\nParallel(n_jobs=-1)(delayed(abs)(x) for x in range(9))\n";

fn dir_with_bad_file() -> TempDir {
    let dir = TempDir::new().unwrap();
    fs::write(dir.path().join("zz_bad.py"), BAD).unwrap();
    dir
}

/// `capslint check --isolated --output-format concise` in `dir`.
fn concise(dir: &TempDir) -> Command {
    let mut command = check(dir.path());
    command.args(["--output-format", "concise"]);
    command
}

/// The finding in `zz_bad.py` proves the rest of the run went on.
fn other_file_checked() -> predicates::str::ContainsPredicate {
    predicate::str::contains("zz_bad.py:3:10: CAP101")
}

#[test]
fn deeply_nested_parentheses() {
    let dir = dir_with_bad_file();
    let nested = format!("import joblib\nx = {}1{}\n", "(".repeat(100_000), ")".repeat(100_000));
    fs::write(dir.path().join("deep.py"), nested).unwrap();
    let nested_calls = format!("import joblib\nx = {}{}\n", "f(".repeat(50_000), ")".repeat(50_000));
    fs::write(dir.path().join("deep_calls.py"), nested_calls).unwrap();
    concise(&dir)
        .assert()
        .code(1)
        .stdout(other_file_checked())
        .stdout(predicate::str::contains("internal error").not());
}

#[test]
fn a_large_python_file() {
    let dir = dir_with_bad_file();
    // 8 MiB of real code with findings (the benchmark script runs the 50 MB case in release mode).
    let block = "import os\nfrom joblib import Parallel\nN_JOBS = -1\n\ndef run(items):\n    return Parallel(n_jobs=N_JOBS)(items)\n\n";
    let text = block.repeat(8 * 1024 * 1024 / block.len());
    fs::write(dir.path().join("large.py"), &text).unwrap();
    let output = concise(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout.contains("zz_bad.py:3:10: CAP101"));
    assert!(stdout.lines().filter(|line| line.starts_with("large.py:")).count() > 10_000);
}

#[test]
fn a_file_above_the_size_limit_is_reported_not_parsed() {
    let dir = dir_with_bad_file();
    let file = fs::File::create(dir.path().join("generated.py")).unwrap();
    file.set_len(capslint_workspace::confine::MAX_FILE_BYTES + 1).unwrap();
    concise(&dir)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("generated.py:1:1: CAP001 file is 64 MiB, above the 64 MiB"))
        .stdout(other_file_checked());
}

#[test]
fn binary_non_utf8_and_nul_bytes() {
    let dir = dir_with_bad_file();
    let binary: Vec<u8> = (0..=255u8).cycle().take(64 * 1024).collect();
    fs::write(dir.path().join("binary.py"), &binary).unwrap();
    fs::write(dir.path().join("binary.yaml"), &binary).unwrap();
    fs::write(dir.path().join("latin1.py"), b"import joblib\nname = '\xe9t\xe9'\n").unwrap();
    fs::write(dir.path().join("nul.py"), b"import joblib\nx = 1\x00\nParallel(n_jobs=-1)\n").unwrap();
    fs::write(dir.path().join("nul.yaml"), b"apiVersion: v1\nkind: Pod\x00\nmetadata: {}\n").unwrap();
    concise(&dir)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "binary.py:3:115: CAP001 file is not valid UTF-8 (invalid byte at offset 128)",
        ))
        .stdout(predicate::str::contains("binary.yaml").not())
        .stdout(predicate::str::contains("latin1.py:2:9: CAP001 file is not valid UTF-8"))
        .stdout(predicate::str::contains("nul.py:2:6: CAP001"))
        .stdout(predicate::str::contains("nul.yaml:2:10: CAP001 YAML syntax error"))
        .stdout(other_file_checked())
        .stdout(predicate::str::contains("internal error").not());
}

#[test]
fn very_long_lines() {
    let dir = dir_with_bad_file();
    let line =
        format!("import joblib\nx = [{}]\nParallel = joblib.Parallel\nParallel(n_jobs=-1)\n", "1, ".repeat(1_000_000));
    fs::write(dir.path().join("long.py"), line).unwrap();
    concise(&dir)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("long.py:4:10: CAP101"))
        .stdout(other_file_checked());
}

#[test]
fn dangling_and_looping_symlinks_are_skipped() {
    let dir = dir_with_bad_file();
    symlink(dir.path().join("missing.py"), dir.path().join("dangling.py")).unwrap();
    symlink(dir.path().join("loop_a.py"), dir.path().join("loop_b.py")).unwrap();
    symlink(dir.path().join("loop_b.py"), dir.path().join("loop_a.py")).unwrap();
    fs::create_dir(dir.path().join("sub")).unwrap();
    symlink(dir.path(), dir.path().join("sub/up")).unwrap();
    concise(&dir).assert().code(1).stdout(other_file_checked()).stdout(predicate::str::contains("1 finding"));
}

#[test]
fn a_fifo_does_not_block_the_run() {
    let dir = dir_with_bad_file();
    let fifo = dir.path().join("pipe.py");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `path` is a valid NUL-terminated string; mkfifo only creates a file system entry.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    // Found by the walk: skipped, it is not a regular file.
    concise(&dir).assert().code(1).stdout(other_file_checked());
    // Named on the command line: an error for that path, the rest still checked, no blocking read.
    concise(&dir)
        .args(["pipe.py", "zz_bad.py"])
        .assert()
        .code(2)
        .stdout(other_file_checked())
        .stderr(predicate::str::contains("pipe.py: not a regular file"));
}

#[test]
fn a_file_that_vanishes_before_it_is_read_is_an_error_for_that_file_only() {
    let dir = dir_with_bad_file();
    // Found by the walk, removed before the read: the read fails, the run goes on.
    let input = capslint_linter::lint::Input {
        path: dir.path().join("vanished.py"),
        display_name: "vanished.py".into(),
        kind: capslint_workspace::discover::FileKind::Python,
        contents: None,
        settings: std::sync::Arc::new(
            capslint_workspace::settings::Settings::resolve(None, &Default::default(), dir.path()).unwrap(),
        ),
    };
    let run = capslint_linter::lint::check_inputs(vec![input]);
    assert!(run.diagnostics.is_empty());
    assert_eq!(run.errors.len(), 1, "{:?}", run.errors);
    assert!(run.errors[0].contains("vanished.py"), "{:?}", run.errors);
}

#[test]
fn output_is_the_same_whatever_the_thread_count() {
    let run = |threads: &str| {
        let output = check(&root())
            .env("RAYON_NUM_THREADS", threads)
            .args(["--output-format", "json", "fixtures/"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        output.stdout
    };
    let one = run("1");
    assert!(one.len() > 10_000, "the fixtures produce many findings");
    for threads in ["2", "7"] {
        assert!(one == run(threads), "output differs between 1 and {threads} threads");
    }
}

/// Runs `capslint check` in `dir` as a user that file permissions apply to: the current one, or
/// `nobody` through `setpriv` when the tests run as root (root reads a directory of mode 000). `None`
/// when the machine cannot run it so.
fn check_unprivileged(dir: &TempDir, args: &[&str]) -> Option<std::process::Output> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let mut command = if unsafe { libc::geteuid() } == 0 {
        let mut command = scrubbed("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(binary());
        command
    } else {
        scrubbed(binary())
    };
    command.current_dir(dir.path()).args(["check", "--isolated", "--output-format", "concise"]);
    command.args(args).output().ok().filter(|output| !String::from_utf8_lossy(&output.stderr).contains("setpriv:"))
}

#[test]
fn an_unreadable_directory_is_an_error_not_a_pass() {
    use std::os::unix::fs::PermissionsExt;
    let dir = dir_with_bad_file();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(dir.path().join("zz_bad.py"), fs::Permissions::from_mode(0o644)).unwrap();
    let locked = dir.path().join("locked");
    fs::create_dir(&locked).unwrap();
    fs::write(locked.join("bad.py"), BAD).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let Some(probe) = check_unprivileged(&dir, &["zz_bad.py"]).filter(|output| output.status.code() == Some(1)) else {
        eprintln!("skipped: cannot run capslint as an unprivileged user here");
        return;
    };
    drop(probe);
    for args in [&[][..], &["."], &["locked", "zz_bad.py"]] {
        let output = check_unprivileged(&dir, args).unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("error: ") && stderr.contains("locked") && stderr.contains("Permission denied"),
            "{stderr}"
        );
        assert!(stdout.contains("zz_bad.py:3:10: CAP101") && !stdout.contains("All checks passed"), "{stdout}");
    }
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_path_too_long_to_open_is_an_error_not_a_pass() {
    let dir = dir_with_bad_file();
    // A chain of directories longer than PATH_MAX, built from the inside out with short paths only.
    let component = "d".repeat(250);
    fs::create_dir(dir.path().join("deep")).unwrap();
    fs::write(dir.path().join("deep/bad.py"), BAD).unwrap();
    for _ in 0..20 {
        fs::create_dir(dir.path().join("next")).unwrap();
        fs::rename(dir.path().join("deep"), dir.path().join("next").join(&component)).unwrap();
        fs::rename(dir.path().join("next"), dir.path().join("deep")).unwrap();
    }
    let relative: std::path::PathBuf =
        std::iter::once("deep").chain(std::iter::repeat_n(component.as_str(), 20)).collect();
    // Reached by the walk: the directory that cannot be opened fails the run, the rest is checked.
    concise(&dir)
        .assert()
        .code(2)
        .stdout(other_file_checked())
        .stdout(predicate::str::contains("All checks passed").not())
        .stderr(predicate::str::contains("File name too long"));
    // Named on the command line: an error with the system's reason.
    concise(&dir).arg(relative.join("bad.py")).assert().code(2).stderr(predicate::str::contains("File name too long"));
}

/// Lints `text` as `name` through the library, on rayon's default pool (threads with small stacks: the
/// analysis must bring its own), and returns the codes found.
fn lint_codes(name: &str, text: String) -> Vec<String> {
    let input = capslint_linter::lint::Input {
        path: name.into(),
        display_name: name.into(),
        kind: capslint_workspace::discover::FileKind::Python,
        contents: Some(text.into_bytes()),
        settings: std::sync::Arc::new(
            capslint_workspace::settings::Settings::resolve(None, &Default::default(), std::path::Path::new("."))
                .unwrap(),
        ),
    };
    let run = capslint_linter::lint::check_inputs(vec![input]);
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    run.diagnostics
        .iter()
        .map(|diagnostic| {
            assert!(!diagnostic.finding.message.starts_with("internal error"), "{}", diagnostic.finding.message);
            diagnostic.rule().code().to_string()
        })
        .collect()
}

const HEADER: &str = "import os\nfrom multiprocessing import Pool\n";

#[test]
fn definitions_used_many_times_resolve_once() {
    // Each level uses the previous one four times: 4^40 paths without memoisation.
    for (form, expected) in [
        ("max({p}, {p}, {p}, {p})", "CAP104"),
        ("min({p}, {p}, {p}, {p})", "CAP104"),
        ("{p} + {p}", "CAP104"),
        ("{p} if {p} else {p}", "CAP104"),
        ("{p} or {p} or {p}", "CAP104"),
        ("int({p}) or int({p})", "CAP104"),
    ] {
        let mut text = format!("{HEADER}a0 = os.cpu_count()\n");
        for level in 1..=40 {
            let previous = format!("a{}", level - 1);
            text.push_str(&format!("a{level} = {}\n", form.replace("{p}", &previous)));
        }
        text.push_str("Pool(a40)\nPool(a5)\n");
        let codes = lint_codes("chain.py", text);
        // a40 is beyond the resolution depth, which CAP003 says; a5 is not, and is node-sized.
        assert_eq!(codes, ["CAP003", expected], "{form}");
    }
}

#[test]
fn splat_and_mutation_chains_stay_small() {
    let mut text = String::from("import lightgbm as lgb\np0 = {");
    text.push_str(&(0..10).map(|key| format!("\"k{key}\": {key}, ")).collect::<String>());
    text.push_str("}\n");
    // Ten splats of the level before, six levels: 10^7 entries if each copy were kept.
    for level in 1..=6 {
        let splats = vec![format!("**p{}", level - 1); 10].join(", ");
        text.push_str(&format!("p{level} = {{{splats}}}\n"));
    }
    text.push_str("lgb.train(p6, data)\n");
    assert_eq!(lint_codes("splat.py", text), ["CAP102"]);

    let mut text = String::from("import lightgbm as lgb\nq0 = {'num_threads': 2}\n");
    for level in 1..=12 {
        let p = format!("q{}", level - 1);
        text.push_str(&format!("q{level} = ({p} | {p}) | dict({p}, **{p}) | {p}.copy()\n"));
    }
    text.push_str("lgb.train(q12, data)\n");
    // Three levels of nesting per merge, but each level's `dict(q, **q)` splats the level before, and the
    // rules read every call's splats: each level is resolved (and memoised) complete by its own use, so
    // q12 is resolved in full, with its thread count.
    assert_eq!(lint_codes("merge.py", text), Vec::<String>::new());

    // A dict that reads itself at every mutation: each use is resolved once.
    let mut text = String::from("import lightgbm as lgb\np = {'num_threads': 2}\n");
    for _ in 0..300 {
        text.push_str("p = p\np['k'] = 1\np.update(p)\n");
    }
    text.push_str("lgb.train(p, data)\n");
    // `p = p` 300 times is a chain of 300 definitions: beyond the resolution depth, which CAP003 says.
    assert_eq!(lint_codes("mutations.py", text), ["CAP003"]);
}

#[test]
fn values_that_differ_by_path_stay_bounded() {
    // Each level at least doubles the distinct values on its paths (2^40 without the bound): a conditional
    // expression, a name bound differently on two branches, a `.get` default of an unknown mapping.
    for (name, level) in [
        ("conditional.py", "a{l} = a{p} + 1 if os.environ.get('F{l}') else a{p} * 3\n"),
        ("bindings.py", "if os.environ.get('F{l}'):\n    a{l} = a{p} + 1\nelse:\n    a{l} = a{p} * 3\n"),
        ("defaults.py", "a{l} = int(settings.get('k{l}', a{p} + 1)) if os.environ.get('F{l}') else a{p} * 3\n"),
    ] {
        let mut text = format!("{HEADER}from config import settings\na0 = 1\n");
        for l in 1..=40 {
            text.push_str(&level.replace("{l}", &l.to_string()).replace("{p}", &(l - 1).to_string()));
        }
        // a6 has more distinct values than are followed, a40 is beyond the resolution depth too: each is
        // a value CAP104 needs, so each is CAP003; a2 has a few, none of them bad.
        text.push_str("Pool(a40)\nPool(a6)\nPool(a2)\n");
        let started = std::time::Instant::now();
        assert_eq!(lint_codes(name, text), ["CAP003", "CAP003"], "{name}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{name} took {:?}", started.elapsed());
    }
}

#[test]
fn dicts_unpacking_mappings_that_differ_by_path_and_long_or_chains_stay_bounded() {
    // Each level unpacks the one before, itself emptied on one branch: one dict per path, within the
    // alternatives followed (2^40 paths without the bound); the splat into `Pool` stays unknown. And an
    // `or` of a thousand operands, each read once: all false, so the last one, `None`, is the value.
    let mut dicts = format!("{HEADER}d0 = {{'processes': -1}}\n");
    for l in 1..=40 {
        let p = l - 1;
        dicts.push_str(&format!("d{l} = {{'k{l}': {l}, **d{p}}}\nif os.environ.get('F{l}'):\n    d{l} = {{}}\n"));
    }
    dicts.push_str("Pool(**d40)\nPool(**d2)\n");
    let chain = format!("{HEADER}Pool({} or None)\n", vec!["0"; 1_000].join(" or "));
    for (name, text, expected) in [("dicts.py", dicts, &[][..]), ("chain.py", chain, &["CAP104"][..])] {
        let started = std::time::Instant::now();
        assert_eq!(lint_codes(name, text), expected, "{name}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{name} took {:?}", started.elapsed());
    }
}

#[test]
fn package_names_in_prose_are_passed_over_in_linear_time() {
    // The prefilter looks back from each library name for the token before it: a line of names, one
    // name holding the word a million times, and names under many blank or commented lines, are each
    // looked at once.
    for (name, text) in [
        ("one_line.py", "xgboost ".repeat(500_000)),
        ("under_comments.py", "\n  # note\n".repeat(300_000) + "lightgbm\n"),
        ("alternating.py", "\n\n\ncatboost".repeat(300_000)),
        ("one_name.py", format!("x = {}\n", "Pool".repeat(1_000_000))),
    ] {
        let started = std::time::Instant::now();
        assert_eq!(lint_codes(name, text), Vec::<String>::new(), "{name}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{name} took {:?}", started.elapsed());
    }
}

#[test]
fn names_holding_a_pair_word_or_a_pool_are_judged_in_linear_time() {
    // `Operator` pairs with `task_id` only outside names imported from installed packages, and `Pool`
    // counts only in a pool's name: a name holding the word a million times is judged once, and the
    // names searched for in the whole text are bounded in number.
    let operators: Vec<String> = (0..50_000).map(|index| format!("A{index}Operator")).collect();
    let calls: Vec<String> = operators.iter().map(|operator| format!("{operator}(task_id='t')")).collect();
    for (name, text) in [
        (
            "one_operator_name.py",
            format!(
                "from airflow.operators.empty import EmptyOperator\nx = {}\nEmptyOperator(task_id='t')\n",
                "Operator".repeat(1_000_000)
            ),
        ),
        ("many_operators.py", format!("from airflow.models import {}\n{}\n", operators.join(", "), calls.join("\n"))),
        ("one_pool_name.py", format!("from x import {}\nlightgbm = 1\n", "Pool".repeat(1_000_000))),
    ] {
        let started = std::time::Instant::now();
        assert_eq!(lint_codes(name, text), Vec::<String>::new(), "{name}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{name} took {:?}", started.elapsed());
    }
}

#[test]
fn words_in_prose_are_passed_over_in_linear_time() {
    // Every word of these files is in a comment or a docstring: each match is judged from the bytes
    // since the one before it, and the prose is blanked in one scan.
    for (name, text) in [
        ("one_comment.py", format!("#{}\n", " n_jobs".repeat(140_000))),
        ("docstrings.py", "'''n_jobs'''\n".repeat(70_000)),
        ("commented_lines.py", "x = 1  # n_jobs\n".repeat(60_000)),
    ] {
        let started = std::time::Instant::now();
        assert_eq!(lint_codes(name, text), Vec::<String>::new(), "{name}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{name} took {:?}", started.elapsed());
    }
}

#[test]
fn definitions_handing_values_on_and_classes_imported_in_bulk_stay_linear() {
    // A module (within the size limit of a module read for an import) that defines one name 12,000 times,
    // each definition naming it and another, and 6,000 classes with a word; a file that imports every
    // class and calls none, and one that calls the other name. And a long method that hands nothing on,
    // called 5,000 times.
    let dir = dir_with_bad_file();
    let mut helpers = String::from("from joblib import Parallel\n\n\ndef f(n):\n    return Parallel(n_jobs=n)\n");
    for _ in 0..12_000 {
        helpers.push_str("def f(n):\n    return f(n) + g(n)\n");
    }
    helpers.push_str("def g(n):\n    return f(n)\n");
    for index in 0..6_000 {
        helpers.push_str(&format!("class C{index}:\n    def fit(self, n):\n        return Parallel(n_jobs=n)\n"));
    }
    fs::write(dir.path().join("helpers.py"), helpers).unwrap();
    let names: Vec<String> = (0..6_000).map(|index| format!("C{index}")).collect();
    fs::write(dir.path().join("imports_all.py"), format!("from helpers import ({})\n", names.join(", "))).unwrap();
    fs::write(dir.path().join("calls.py"), "from helpers import g\n\ng(-1)\n").unwrap();
    let body = "        n = n + 1\n".repeat(20_000);
    let big = format!(
        "from joblib import Parallel\n\n\nclass Big:\n    def run(self, n):\n{body}        return n\n\n    \
         def _fit(self, n):\n        return Parallel(n_jobs=n)\n"
    );
    fs::write(dir.path().join("big.py"), big).unwrap();
    fs::write(dir.path().join("runs.py"), format!("from big import Big\n\n{}", "Big().run(-1)\n".repeat(5_000)))
        .unwrap();
    let started = std::time::Instant::now();
    concise(&dir).assert().code(1).stdout(other_file_checked());
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn definitions_of_an_imported_module_are_found_in_linear_time() {
    // Importing a function or a class of a module makes its top-level definitions searched: a line that
    // holds `def ` and `class ` a hundred thousand times is looked at once, not once per occurrence.
    let dir = dir_with_bad_file();
    let line = "def class async def ".repeat(45_000);
    fs::write(dir.path().join("helpers.py"), format!("x = \"{line}\"\n")).unwrap();
    fs::write(dir.path().join("uses_function.py"), "from helpers import f\n\nf(3)\n").unwrap();
    fs::write(dir.path().join("uses_class.py"), "from helpers import C\n\nC(3)\n").unwrap();
    let started = std::time::Instant::now();
    concise(&dir).assert().code(1).stdout(other_file_checked());
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn many_sessions_over_many_option_writes_stay_within_the_budget() {
    // Every ONNX Runtime session reads every write on its options made before it: quadratic, unless each
    // read is paid for from the file's budget.
    let mut text = String::from("import onnxruntime as ort\no = ort.SessionOptions()\n");
    text.push_str(&"o.log_severity_level = 3\n".repeat(20_000));
    text.push_str(&"ort.InferenceSession('m.onnx', o)\n".repeat(20_000));
    let started = std::time::Instant::now();
    assert_eq!(lint_codes("sessions.py", text), ["CAP003"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
    // A few of each are analysed in full: every session is reported.
    let mut text = String::from("import onnxruntime as ort\no = ort.SessionOptions()\n");
    text.push_str(&"o.log_severity_level = 3\n".repeat(50));
    text.push_str(&"ort.InferenceSession('m.onnx', o)\n".repeat(50));
    assert_eq!(lint_codes("sessions.py", text), vec!["CAP110"; 50]);
}

#[test]
fn work_beyond_the_budget_is_cap003_for_that_file_only() {
    // Every use of `p` applies every mutation before it: quadratic, and far beyond the budget here.
    let mut text = String::from("import lightgbm as lgb\np = {'n_jobs': -1}\n");
    text.push_str(&"p.update(p)\n".repeat(20_000));
    text.push_str("lgb.train(p, data)\n");
    let dir = dir_with_bad_file();
    fs::write(dir.path().join("mutations.py"), text).unwrap();
    concise(&dir)
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("mutations.py:")
                .and(predicate::str::contains("CAP003 resolving values took more than this file's budget")),
        )
        .stdout(predicate::str::contains("mutations.py:2:").not())
        .stdout(other_file_checked());
}

/// Shapes nested just below the limit are analysed (on rayon's small-stack threads: the analysis grows
/// its own stack), and just above it are refused: from the parser's tokens in a small file and in a large
/// one with few tokens that open a level of the parser's recursion, before parsing in one padded past the
/// size parsed first with many. Dropping the trees must not overflow either.
#[test]
fn deep_nesting_is_analysed_below_the_limit_and_refused_above() {
    // Each link, its tokens: `1 + ` is two (the literal and the operator), `{1: ` three.
    let shapes: [(&str, &str, &str, usize); 10] = [
        ("-", "1", "", 1),
        ("not ", "1", "", 1),
        ("1 + ", "1", "", 2),
        ("a.", "a", "", 2),
        ("(", "1", ")", 1),
        ("[", "1", "]", 1),
        ("f(", "1", ")", 2),
        ("a[", "1", "]", 2),
        ("{1: ", "1", "}", 3),
        ("f'{", "1", "}'", 2),
    ];
    // Past the size parsed first whatever the shape (64 KiB): with more than 16 Ki tokens that open a level
    // of the parser's recursion (scanned before parsing), and with few (parsed first).
    let scanned = "y = -1\n".repeat(12_000);
    let parsed_first = "y\n".repeat(40_000);
    for (open, middle, close, tokens) in shapes {
        for (depth, refused) in [(9_000 / tokens, false), (10_500, true)] {
            for pad in ["", scanned.as_str(), parsed_first.as_str()] {
                let text = format!("{HEADER}x = {}{middle}{}\n{pad}Pool()\n", open.repeat(depth), close.repeat(depth));
                let codes = lint_codes("deep.py", text);
                let expected: &[&str] = if refused { &["CAP003"] } else { &["CAP104"] };
                assert_eq!(codes, expected, "{open:?} x {depth}, padded: {}", !pad.is_empty());
            }
        }
    }
    // `lambda: ` counts twice (the keyword and the colon).
    let lambdas = |depth: usize| format!("{HEADER}x = {}1\nPool()\n", "lambda: ".repeat(depth));
    assert_eq!(lint_codes("lambdas.py", lambdas(4_500)), ["CAP104"]);
    assert_eq!(lint_codes("lambdas.py", lambdas(100_000)), ["CAP003"]);
    // Nested blocks: one level per indentation character.
    let blocks = |depth: usize| {
        let mut text = String::from(HEADER);
        for level in 0..depth {
            text.push_str(&"\t".repeat(level));
            text.push_str("if x:\n");
        }
        text.push_str(&"\t".repeat(depth));
        text.push_str("Pool()\n");
        text
    };
    assert_eq!(lint_codes("blocks.py", blocks(2_000)), ["CAP104"]);
    assert_eq!(lint_codes("blocks.py", blocks(10_100)), ["CAP003"]);
}

/// The shapes that cost the parser most (unclosed brackets: the deepest stack; nested f-strings: time
/// quadratic in their depth), in files small enough to be parsed before they are judged (the f-strings
/// are scanned first: there are too many of them).
#[test]
fn the_costliest_shapes_parsed_first_are_refused() {
    let unclosed = format!("{HEADER}x = {}1\nPool()\n", "(".repeat(32_000));
    assert_eq!(lint_codes("unclosed.py", unclosed), ["CAP003"]);
    let depth = 32_000 / 12;
    let fstrings = format!("{HEADER}x = {}1{}\nPool()\n", "f\"{f'{".repeat(depth), "}'}\"".repeat(depth));
    assert!(fstrings.len() < 64 << 10);
    assert_eq!(lint_codes("fstrings.py", fstrings), ["CAP003"]);
    // Past 64 KiB, parsed first with as many tokens that open a level of the parser's recursion as it
    // takes (16 Ki, brackets or keywords), the rest names.
    let names = "alpha\n".repeat(40_000);
    for opener in ["(", "not ", "lambda ", "await ", "x if "] {
        let large = format!("{HEADER}x = {}1\n{names}Pool()\n", opener.repeat(16_000));
        assert!(large.len() > 64 << 10);
        assert_eq!(lint_codes("large.py", large), ["CAP003"], "{opener:?}");
    }
}

#[test]
fn refusals_through_the_binary() {
    let dir = dir_with_bad_file();
    fs::write(dir.path().join("minus.py"), format!("{HEADER}x = {}1\n", "-".repeat(200_000))).unwrap();
    fs::write(dir.path().join("ok.py"), format!("{HEADER}x = {}1\n", "-".repeat(5_000))).unwrap();
    concise(&dir)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "minus.py:3:10003: CAP003 code nested deeper than the 10000 levels capslint analyses: the file was not analysed",
        ))
        .stdout(predicate::str::contains("ok.py").not())
        .stdout(other_file_checked());
}

#[test]
fn the_cap003_page_example_in_full() {
    let text = format!("from joblib import Parallel\nx = {}1\n", "- ".repeat(20_000));
    assert_eq!(lint_codes("example.py", text), ["CAP003"]);
}

#[test]
fn many_statements_and_many_findings() {
    let text = format!("{HEADER}x = 0\n{}Pool(x)\n", "x = x + 1\n".repeat(100_000));
    // `x` is 100,000 definitions deep: far beyond the resolution depth, which CAP003 says.
    assert_eq!(lint_codes("statements.py", text), ["CAP003"]);
    let text = format!("from joblib import Parallel\n{}", "Parallel(n_jobs=-1)\n".repeat(50_000));
    let codes = lint_codes("findings.py", text);
    assert_eq!(codes.len(), 50_000);
    assert!(codes.iter().all(|code| code == "CAP101"));
}

const FOREST: &str = "from sklearn.ensemble import RandomForestClassifier\n";

#[test]
fn calls_followed_into_the_module_s_functions_stay_bounded() {
    use capslint_python::limits::MAX_CALL_SITES;

    // Mutual recursion: a call of a function already followed is not followed again.
    let text = format!(
        "{FOREST}def ping(n):\n    RandomForestClassifier(n_jobs=n)\n    return pong(n)\n\n\
         def pong(n):\n    return ping(n)\n\nping(-1)\npong(-1)\n"
    );
    assert_eq!(lint_codes("recursion.py", text), ["CAP101", "CAP101"]);

    // A method that constructs its own class again and calls itself on the new instance.
    let text = format!(
        "{FOREST}class Node:\n    def __init__(self, n):\n        self.n = n\n\n    def grow(self):\n        \
         RandomForestClassifier(n_jobs=self.n)\n        return Node(self.n).grow()\n\nNode(-1).grow()\n"
    );
    assert_eq!(lint_codes("instances.py", text), ["CAP101"]);

    // A parameter passed down 50 functions: followed to the call depth limit, which CAP003 says for each
    // call whose value the rule would have needed.
    let mut text = String::from(FOREST);
    for level in 0..50 {
        text.push_str(&format!("def f{level}(n):\n    return f{}(n)\n", level + 1));
    }
    text.push_str("def f50(n):\n    return RandomForestClassifier(n_jobs=n)\n\nf0(-1)\nf0(2)\n");
    assert_eq!(lint_codes("chain.py", text), ["CAP003", "CAP003"]);

    // The same chain through methods that call the next on `self`: the same limit, the same CAP003.
    let mut text = format!("{FOREST}class Chain:\n");
    for level in 0..50 {
        text.push_str(&format!("    def m{level}(self, n):\n        return self.m{}(n)\n\n", level + 1));
    }
    text.push_str(
        "    def m50(self, n):\n        return RandomForestClassifier(n_jobs=n)\n\nChain().m0(-1)\nChain().m0(2)\n",
    );
    assert_eq!(lint_codes("method_chain.py", text), ["CAP003", "CAP003"]);

    // Each level calls the next ten times: no more calls are followed than the depth and the per-function
    // limit allow.
    let mut text = String::from(FOREST);
    for level in 0..20 {
        text.push_str(&format!("def g{level}(n):\n{}", format!("    g{}(n)\n", level + 1).repeat(10)));
    }
    text.push_str("def g20(n):\n    return RandomForestClassifier(n_jobs=n)\n\n");
    text.push_str(&"g0(-1)\n".repeat(10));
    let codes = lint_codes("fan_out.py", text);
    assert!(codes.iter().all(|code| code == "CAP003") && (1..=10).contains(&codes.len()), "{codes:?}");

    // One function called from 1,000 places: the calls beyond the per-function limit are not followed, and
    // the first of them is CAP003.
    let mut text = format!("{FOREST}def train(n):\n    return RandomForestClassifier(n_jobs=n)\n\n");
    text.push_str(&"train(-1)\n".repeat(1_000));
    let codes = lint_codes("many_calls.py", text);
    let count = |wanted: &str| codes.iter().filter(|code| *code == wanted).count();
    assert_eq!(count("CAP101"), MAX_CALL_SITES as usize);
    assert_eq!(count("CAP003"), 1);
}

/// An estimator with `n_jobs=-1` built at the top of a file and run inside a `dask` block after `body`.
fn cluster_fit(body: &str) -> String {
    format!(
        "from joblib import parallel_backend\nfrom sklearn.ensemble import RandomForestClassifier\n\
         a0 = RandomForestClassifier(n_jobs=-1)\n{body}"
    )
}

#[test]
fn estimators_are_followed_to_cluster_blocks_within_their_limits() {
    use capslint_python::limits::{MAX_FIT_CALL_DEPTH, MAX_FIT_FOLLOW_DEPTH, MAX_FIT_USES};
    let quiet: [&str; 0] = [];
    // A chain of aliases: followed through MAX_FIT_FOLLOW_DEPTH names, beyond which the finding stays.
    for names in 1..=MAX_FIT_FOLLOW_DEPTH + 2 {
        let aliases: String = (1..names).map(|name| format!("a{name} = a{}\n", name - 1)).collect();
        let text = cluster_fit(&format!("{aliases}with parallel_backend(\"dask\"):\n    a{}.fit(X, y)\n", names - 1));
        let expected: &[&str] = if names <= MAX_FIT_FOLLOW_DEPTH { &quiet } else { &["CAP101"] };
        assert_eq!(lint_codes("aliases.py", text), expected, "{names} names");
    }
    // Uses of one name: MAX_FIT_USES examined with the construction, beyond which the finding stays.
    for uses in [MAX_FIT_USES - 1, MAX_FIT_USES] {
        let text = cluster_fit(&format!("with parallel_backend(\"dask\"):\n{}", "    a0.fit(X, y)\n".repeat(uses)));
        let expected: &[&str] = if uses < MAX_FIT_USES { &quiet } else { &["CAP101"] };
        assert_eq!(lint_codes("uses.py", text), expected, "{uses} uses");
    }
    // Functions between the block and the fit: MAX_FIT_CALL_DEPTH followed, beyond which the finding stays.
    for depth in 1..=MAX_FIT_CALL_DEPTH + 2 {
        let mut text = cluster_fit("def f1():\n    a0.fit(X, y)\n");
        for level in 2..=depth {
            text.push_str(&format!("def f{level}():\n    f{}()\n", level - 1));
        }
        text.push_str(&format!("with parallel_backend(\"dask\"):\n    f{depth}()\n"));
        let expected: &[&str] = if depth <= MAX_FIT_CALL_DEPTH { &quiet } else { &["CAP101"] };
        assert_eq!(lint_codes("calls.py", text), expected, "{depth} functions");
    }
    // Thousands of estimators bound to one name, each fitted in its own block: every question reads the
    // name's loads once, within the file's budget or reported as beyond it, never a hang.
    let text = cluster_fit(
        &"a0 = RandomForestClassifier(n_jobs=-1)\nwith parallel_backend(\"dask\"):\n    a0.fit(X, y)\n".repeat(3_000),
    );
    let codes = lint_codes("rebound.py", text);
    assert!(codes.is_empty() || codes == ["CAP003"], "{codes:?}");
}

#[test]
fn deep_nesting_below_the_limit_is_indexed_for_cluster_fits() {
    // A file that enters a joblib context is indexed for CAP101's cluster backends: the index's walk
    // takes code nested as deeply as the analysis does.
    let header = format!("{HEADER}from joblib import parallel_backend\n");
    let shapes: [(&str, &str, &str, usize); 7] = [
        ("a.", "a", "", 2),
        ("f(", "1", ")", 2),
        ("[", "1", "]", 1),
        ("(", "1", ")", 1),
        ("{1: ", "1", "}", 3),
        ("f(x, [", "1", "])", 5),
        ("", "a", ".fit()", 4),
    ];
    for (open, middle, close, tokens) in shapes {
        let depth = 9_000 / tokens;
        let text = format!("{header}x = {}{middle}{}\nPool()\n", open.repeat(depth), close.repeat(depth));
        assert_eq!(lint_codes("deep.py", text), ["CAP104"], "{open:?} {close:?} x {depth}");
    }
    let lambdas = format!("{header}x = {}1\nPool()\n", "lambda: ".repeat(4_500));
    assert_eq!(lint_codes("lambdas.py", lambdas), ["CAP104"]);
}
