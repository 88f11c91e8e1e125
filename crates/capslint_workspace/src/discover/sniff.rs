//! The kind of a file named on the command line that its extension does not tell, from its first bytes,
//! as pre-commit's `identify` types files: a Python shebang (`#!/usr/bin/python3`, `#!/usr/bin/env
//! python3.11`, `#!/usr/bin/env -S python3 -u`, `pypy3`), or a Kubernetes object in YAML or JSON (an
//! `apiVersion` and a `kind` key at the top level).

use std::path::Path;

use super::FileKind;

/// How much of a file is read to tell its kind.
const SNIFF_BYTES: u64 = 64 * 1024;

/// The kind of the regular file at `resolved` (a path with no symbolic link), when its content tells one.
pub fn kind(resolved: &Path) -> Option<FileKind> {
    let bytes = read_head(resolved)?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if is_python_shebang(text.lines().next()?) {
        return Some(FileKind::Python);
    }
    is_kubernetes_object(text).then_some(FileKind::Yaml)
}

/// The first [`SNIFF_BYTES`] of a regular file, opened without following a link or blocking.
fn read_head(resolved: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = crate::platform::open_read(resolved).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(SNIFF_BYTES).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Whether a first line is a shebang that runs Python: the interpreter itself, or `env` with options
/// (`-S`, `-u`, `-i`) and assignments (`NAME=value`) before it.
pub fn is_python_shebang(line: &str) -> bool {
    let Some(command) = line.strip_prefix("#!") else { return false };
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else { return false };
    let interpreter = if basename(program) == "env" {
        // `env -S "python3 -u"` splits its argument: the words are read the same way.
        match words
            .map(|word| word.trim_matches(['"', '\'']).trim())
            .find(|word| !word.is_empty() && !word.starts_with('-') && !word.contains('='))
        {
            Some(word) => word.split_whitespace().next().unwrap_or(word),
            None => return false,
        }
    } else {
        program
    };
    is_python(basename(interpreter))
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// `python`, `python3`, `python3.11`, `pypy`, `pypy3`, `pypy3.10`.
fn is_python(name: &str) -> bool {
    let version = name.strip_prefix("python").or_else(|| name.strip_prefix("pypy"));
    version.is_some_and(|version| {
        version.is_empty()
            || (version.bytes().all(|byte| byte.is_ascii_digit() || byte == b'.')
                && version.starts_with(|character: char| character.is_ascii_digit())
                && !version.ends_with('.')
                && !version.contains(".."))
    })
}

/// Whether a text holds a Kubernetes object: top-level `apiVersion:` and `kind:` keys (YAML), or
/// `"apiVersion"` and `"kind"` keys (JSON, which the YAML reader reads too).
fn is_kubernetes_object(text: &str) -> bool {
    if text.trim_start().starts_with('{') {
        let has = |name: &str| {
            let quoted = format!("\"{name}\"");
            text.match_indices(&quoted).any(|(at, _)| text[at + quoted.len()..].trim_start().starts_with(':'))
        };
        return has("apiVersion") && has("kind");
    }
    let has = |name: &str| text.lines().any(|line| line.strip_prefix(name).is_some_and(|rest| rest.starts_with(':')));
    has("apiVersion") && has("kind")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_shebangs_of_every_shape() {
        for line in [
            "#!/usr/bin/python",
            "#!/usr/bin/python3",
            "#! /usr/local/bin/python3.11 -u",
            "#!/usr/bin/env python3",
            "#!/usr/bin/env -S python3 -u",
            "#!/usr/bin/env -S \"python3 -u\"",
            "#!/usr/bin/env PYTHONUNBUFFERED=1 python",
            "#!/usr/bin/env pypy3",
            "#!/opt/conda/bin/python3.10",
        ] {
            assert!(is_python_shebang(line), "{line}");
        }
        for line in [
            "#!/bin/sh",
            "#!/usr/bin/env bash",
            "#!/usr/bin/env",
            "#!/usr/bin/pythonista",
            "#!/usr/bin/python3.",
            "# python3",
            "import os",
            "#!/usr/bin/env node python",
        ] {
            assert!(!is_python_shebang(line), "{line}");
        }
    }

    #[test]
    fn kubernetes_objects_in_yaml_and_json() {
        assert!(is_kubernetes_object("# a pod\napiVersion: v1\nkind: Pod\n"));
        assert!(is_kubernetes_object("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\"\n}\n"));
        assert!(is_kubernetes_object("{\"apiVersion\" : \"v1\", \"kind\": \"Pod\"}"));
        assert!(!is_kubernetes_object("{\"apiVersion\": \"v1\", \"kinds\": []}"));
        assert!(!is_kubernetes_object("apiVersion: v1\n"));
        assert!(!is_kubernetes_object("kinds: 1\napiVersionX: 2\n"));
        assert!(!is_kubernetes_object("nested:\n  apiVersion: v1\n  kind: Pod\n"), "not at the top level");
    }
}
