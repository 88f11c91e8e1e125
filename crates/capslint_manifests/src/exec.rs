//! Whether a container starts through `capslint exec`, which sets every thread cap from the pod's CPU
//! limit and `OMP_WAIT_POLICY=passive` before it replaces itself with the workload.
//!
//! Recognised: `["capslint", "exec", ...]` (any path to the binary), behind an init wrapper (`tini --`,
//! `dumb-init`), and a shell whose script starts with it: `sh -c "capslint exec -- python train.py"`,
//! `bash -lc "exec capslint exec ..."`, after `set -e` or `cd` if any.

/// Init processes that forward signals and run their arguments.
const INIT_WRAPPERS: &[&str] = &["tini", "tini-static", "dumb-init", "catatonit"];

/// Shells whose `-c` script is read.
const SHELLS: &[&str] = &["sh", "bash", "dash", "ash", "zsh", "ksh"];

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether `argv` (the container's `command` followed by its `args`) starts through `capslint exec`.
pub fn starts_through_capslint(argv: &[String]) -> bool {
    let mut words: &[String] = argv;
    while let Some(first) = words.first() {
        if INIT_WRAPPERS.contains(&basename(first)) {
            words = &words[1..];
            while words.first().is_some_and(|word| word.starts_with('-')) {
                let end = words[0] == "--";
                words = &words[1..];
                if end {
                    break;
                }
            }
            continue;
        }
        break;
    }
    let Some(first) = words.first() else { return false };
    if basename(first) == "capslint" {
        return words.get(1).is_some_and(|word| word == "exec");
    }
    if SHELLS.contains(&basename(first)) {
        let mut rest = words[1..].iter();
        while let Some(word) = rest.next() {
            if word.starts_with('-') && !word.starts_with("--") && word.contains('c') {
                return rest.next().is_some_and(|script| script_starts_through_capslint(script));
            }
            if !word.starts_with('-') {
                return false;
            }
        }
    }
    false
}

/// Whether a shell script's first command that does real work is `capslint exec`.
fn script_starts_through_capslint(script: &str) -> bool {
    for command in script.split(['\n', ';']).flat_map(|line| line.split("&&")) {
        let mut words = command.split_whitespace().peekable();
        let Some(&first) = words.peek() else { continue };
        if first.starts_with('#') {
            continue;
        }
        if matches!(first, "set" | "cd" | "umask" | "export") {
            continue;
        }
        if first == "exec" {
            words.next();
        }
        let program = words.next().unwrap_or_default().trim_matches(['"', '\'']);
        return basename(program) == "capslint"
            && words.next().map(|word| word.trim_matches(['"', '\''])) == Some("exec");
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_string()).collect()
    }

    #[test]
    fn direct_and_wrapped_entrypoints() {
        assert!(starts_through_capslint(&argv(&["capslint", "exec", "--", "python", "train.py"])));
        assert!(starts_through_capslint(&argv(&["/usr/local/bin/capslint", "exec", "python"])));
        assert!(starts_through_capslint(&argv(&["tini", "--", "capslint", "exec", "--", "python"])));
        assert!(starts_through_capslint(&argv(&["/usr/bin/dumb-init", "capslint", "exec", "python"])));
        assert!(!starts_through_capslint(&argv(&["capslint", "check", "."])));
        assert!(!starts_through_capslint(&argv(&["python", "-m", "capslint", "exec"])));
        assert!(!starts_through_capslint(&argv(&[])));
    }

    #[test]
    fn shell_scripts() {
        assert!(starts_through_capslint(&argv(&["sh", "-c", "capslint exec -- python train.py"])));
        assert!(starts_through_capslint(&argv(&["/bin/bash", "-lc", "exec capslint exec -- python train.py"])));
        assert!(starts_through_capslint(&argv(&[
            "bash",
            "-e",
            "-c",
            "set -e\ncd /app && exec /opt/bin/capslint exec -- python x"
        ])));
        assert!(!starts_through_capslint(&argv(&["sh", "-c", "python prep.py && capslint exec -- python train.py"])));
        assert!(!starts_through_capslint(&argv(&["sh", "-c", "echo capslint exec"])));
        assert!(!starts_through_capslint(&argv(&["sh", "train.sh"])));
    }
}
