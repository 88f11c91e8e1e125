//! The names a Python text imports, read from its text without parsing it, for the prefilter: a file
//! that imports a function of another module of the project may have findings where it calls it
//! ([`crate::crossmodule`]), whatever words it holds itself. Over-approximate by design: every
//! `from M import a, b` and `import M.N as O` statement, written on one logical line or inside
//! parentheses, gives the dotted names a call through it may resolve to; strings and comments that
//! merely look like imports only let a file through that the search would otherwise have dropped.

/// The dotted names the imports of `text` bind or name: for `from M import a, b`, `M.a` and `M.b` (a call
/// can reach only those: a function of `M`, or a module of the package `M`); for `import M.N`, `M` and
/// `M.N`. Relative modules keep their leading dots.
pub fn imported_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for statement in statements(text) {
        let words: Vec<&str> = statement.split_whitespace().collect();
        match words.as_slice() {
            ["from", module, "import", rest @ ..] => {
                for name in imported(&rest.join(" ")) {
                    names.push(if module.ends_with('.') {
                        format!("{module}{name}")
                    } else {
                        format!("{module}.{name}")
                    });
                }
            }
            ["import", rest @ ..] => {
                for module in imported(&rest.join(" ")) {
                    let parts: Vec<&str> = module.split('.').collect();
                    names.extend((1..=parts.len()).map(|end| parts[..end].join(".")));
                }
            }
            _ => {}
        }
    }
    names
}

/// The names of an import list (`a as b, (c, d)`): the imported names, not their aliases.
fn imported(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').filter_map(|item| {
        let name = item.trim().trim_start_matches('(').split_whitespace().next()?;
        let name = name.trim_end_matches(')');
        (!name.is_empty() && name != "*").then_some(name)
    })
}

/// The statements of the text that may be imports: each logical line holding the word `import`
/// (backslash continuations joined, and a parenthesised import list joined up to its `)`), split at `;`.
/// Only the lines around each `import` are looked at: the rest of the text is skipped by one search.
fn statements(text: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut resume = 0;
    for at in memchr::memmem::find_iter(text.as_bytes(), b"import") {
        if at < resume {
            continue;
        }
        let start = logical_line_start(text, at);
        let (statement, end) = logical_line(text, start);
        resume = end;
        statements.extend(statement.split(';').map(str::trim).filter(|part| part.contains("import")).map(String::from));
    }
    statements
}

/// Where the logical line holding byte `at` starts: the start of its physical line, moved back over
/// the lines before it that end with a backslash.
fn logical_line_start(text: &str, at: usize) -> usize {
    let mut start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    while start > 0 {
        let previous_end = start - 1;
        let previous_start = text[..previous_end].rfind('\n').map_or(0, |newline| newline + 1);
        let previous = text[previous_start..previous_end].trim_end_matches('\r');
        if !uncommented(previous).trim_end().ends_with('\\') {
            break;
        }
        start = previous_start;
    }
    start
}

/// The logical line from `start` (comments dropped, continuations joined with a blank) and where it ends.
fn logical_line(text: &str, start: usize) -> (String, usize) {
    let mut statement = String::new();
    let mut open = false;
    let mut end = start;
    for line in text[start..].split_inclusive('\n') {
        end += line.len();
        let code = uncommented(line.trim_end_matches(['\n', '\r']));
        statement.push_str(code.trim_end_matches('\\'));
        statement.push(' ');
        if code.contains('(') && !code.contains(')') && code.contains("import") {
            open = true;
        } else if open && code.contains(')') {
            open = false;
        }
        if !(open || code.trim_end().ends_with('\\')) {
            break;
        }
    }
    (statement, end)
}

/// A line without its comment.
fn uncommented(line: &str) -> &str {
    line.split('#').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_imports_name_the_module_and_each_name() {
        assert_eq!(imported_names("from utils.gcp import etl, load as l\n"), ["utils.gcp.etl", "utils.gcp.load"]);
        assert_eq!(
            imported_names("from . import tasks\nfrom .gcp import (\n    etl,\n    load,\n)\n"),
            [".tasks", ".gcp.etl", ".gcp.load"]
        );
        assert_eq!(imported_names("import os; from x \\\n    import y\n"), ["os", "x.y"]);
    }

    #[test]
    fn plain_imports_name_each_package_on_the_path() {
        assert_eq!(imported_names("import utils.gcp as g, json\n"), ["utils", "utils.gcp", "json"]);
        assert!(imported_names("print('no imports here')\n").is_empty());
        assert_eq!(imported_names("x = 1  # import nothing\nimport a  # import b\n"), ["a"]);
    }
}
