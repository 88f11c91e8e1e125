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

/// The statements of the text that may be imports: each logical line (backslash continuations joined,
/// and a parenthesised import list joined up to its `)`), split at `;`.
fn statements(text: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut current = String::new();
    let mut open = false;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default();
        current.push_str(line.trim_end_matches('\\'));
        current.push(' ');
        if line.contains('(') && !line.contains(')') && line.contains("import") {
            open = true;
        } else if open && line.contains(')') {
            open = false;
        }
        if open || line.trim_end().ends_with('\\') {
            continue;
        }
        statements.extend(current.split(';').map(str::trim).filter(|part| part.contains("import")).map(String::from));
        current.clear();
    }
    statements.extend(current.split(';').map(str::trim).filter(|part| part.contains("import")).map(String::from));
    statements
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
    }
}
