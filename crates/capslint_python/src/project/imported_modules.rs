//! The names a Python text imports, read from its text without parsing it, for the prefilter: a file
//! that imports a function of another module of the project may have findings where it calls it
//! ([`crate::crossmodule`]), whatever words it holds itself. Over-approximate by design: every
//! `from M import a, b` and `import M.N as O` statement, written on one logical line or inside
//! parentheses, gives the dotted names a call through it may resolve to; strings and comments that
//! merely look like imports only let a file through that the search would otherwise have dropped.

/// Whether `found` holds for one of the dotted names the imports of `text` bind or name, outside the
/// packages `installed` holds for: for `from M import a, b`, `M.a` and `M.b` (a call can reach only
/// those: a function of `M`, or a module of the package `M`); for `import M.N`, `M` and `M.N`. Relative
/// modules keep their leading dots. A name whose top-level package `installed` holds for (`numpy.linalg`,
/// not `.utils` nor `utils.gcp`) is never offered, and a one-line statement that imports only from such
/// packages (`from numpy.linalg import norm, svd`, `import numpy as np, scipy`) is passed over without
/// being read into names, as most of a file's imports are. The names are offered in the order the text
/// holds them, and the search stops at the first that `found` accepts. One buffer holds each statement
/// and one each name: nothing is allocated per import.
pub fn any_imported_name_outside(
    text: &str,
    installed: impl Fn(&str) -> bool,
    mut found: impl FnMut(&str) -> bool,
) -> bool {
    let mut name = String::new();
    let mut outside = |name: &str| !is_installed(name, &installed) && found(name);
    any_statement_unless(
        text,
        |line_start, at| installed_only_line_end(text, line_start, at, &installed),
        |statement| statement_names(statement, &mut name, &mut outside),
    )
}

/// Whether the dotted name `name` (a module, or a name of one) is absolute and its top-level package is
/// one `installed` holds for.
fn is_installed(name: &str, installed: &impl Fn(&str) -> bool) -> bool {
    !name.starts_with('.') && name.split('.').next().is_some_and(|package| !package.is_empty() && installed(package))
}

/// Where the line of the import statement whose `import` is at `at` (on the line starting at
/// `line_start`) ends, when that statement is the whole line (no continuation from the line above, no
/// `;`, `\` or bracket before its comment) and imports only modules whose top-level package `installed`
/// holds for: `import numpy as np, scipy.sparse`, `from numpy.linalg import norm as n, svd`.
fn installed_only_line_end(
    text: &str,
    line_start: usize,
    at: usize,
    installed: &impl Fn(&str) -> bool,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let above = line_start.checked_sub(1).map(|newline| &bytes[..newline]);
    let continued = above.is_some_and(|above| above.strip_suffix(b"\r").unwrap_or(above).ends_with(b"\\"));
    let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |end| at + end);
    let line = uncommented(&text[line_start..line_end]);
    let keyword_end = at - line_start + "import".len();
    let is_keyword = line.as_bytes().get(keyword_end).is_some_and(|byte| matches!(byte, b' ' | b'\t'));
    if continued || !is_keyword || line.bytes().any(|byte| matches!(byte, b';' | b'\\' | b'(' | b'[' | b'{' | b'\r')) {
        return None;
    }
    let installed_module = |module: &str| is_installed(module, installed);
    let mut before = line[..at - line_start].split_whitespace();
    let only_installed = match (before.next(), before.next(), before.next()) {
        // `import` opens the line: every module of its list (`a.b as c`).
        (None, ..) => {
            line[keyword_end..].split(',').all(|item| item.split_whitespace().next().is_some_and(installed_module))
        }
        // `from M import ...`: every name it gives is an attribute or a module of `M`.
        (Some("from"), Some(module), None) => installed_module(module),
        _ => false,
    };
    only_installed.then_some(line_end)
}

/// Whether `found` holds for one of the import statements of `text`, each read as
/// [`any_imported_name_outside`] reads it: its logical line, comments dropped, continued and
/// parenthesised lines joined, split at `;`.
pub fn any_import_statement(text: &str, found: impl FnMut(&str) -> bool) -> bool {
    any_statement_unless(text, |_, _| None, found)
}

/// [`any_import_statement`], passing over the statements `passed_over` gives an end for (asked with the
/// start of the line and the offset of the `import`), up to that end.
fn any_statement_unless(
    text: &str,
    passed_over: impl Fn(usize, usize) -> Option<usize>,
    mut found: impl FnMut(&str) -> bool,
) -> bool {
    let bytes = text.as_bytes();
    let mut line = String::new();
    let mut resume = 0;
    for at in import_finder().find_iter(bytes) {
        if at < resume {
            continue;
        }
        let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |newline| newline + 1);
        if let Some(end) = passed_over(line_start, at) {
            resume = end;
            continue;
        }
        resume = logical_line(text, logical_line_start(text, at), &mut line);
        if line.split(';').map(str::trim).filter(|part| holds_import(part)).any(&mut found) {
            return true;
        }
    }
    false
}

/// [`any_imported_name_outside`] for one statement: `from M import ...` or `import ...`, anything else holds no
/// name.
fn statement_names(statement: &str, name: &mut String, found: &mut impl FnMut(&str) -> bool) -> bool {
    match statement_parts(statement) {
        Some((Some(module), list)) => imported(list).any(|imported| {
            name.clear();
            name.push_str(module);
            if !module.ends_with('.') {
                name.push('.');
            }
            name.push_str(imported);
            found(name)
        }),
        Some((None, list)) => imported(list).any(|module| {
            // `M`, then `M.N`, ...: each package on the path is bound or imported.
            module.match_indices('.').map(|(dot, _)| &module[..dot]).chain([module]).any(&mut *found)
        }),
        None => false,
    }
}

/// The module of a `from M import ...` statement (`None` for `import ...`) and its import list: the text
/// after `import`, wherever the blanks between the words were. `None` for any other statement.
fn statement_parts(statement: &str) -> Option<(Option<&str>, &str)> {
    let mut words = statement.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("from"), Some(module), Some("import")) => Some((Some(module), after_words(statement, 3))),
        (Some("import"), ..) => Some((None, after_words(statement, 1))),
        _ => None,
    }
}

/// Calls `named` with each name the import statements of `text` write (read as
/// [`any_imported_name_outside`] reads them) and whether its module's top-level package is one
/// `installed` holds for: `from M import a as b` names `a` and binds `b`, both from `M`; `import M.N as
/// O` binds `O` and `import M.N` binds `M`, both from `M.N`. A star import names nothing.
pub fn imported_names_by_origin(text: &str, installed: impl Fn(&str) -> bool, mut named: impl FnMut(&str, bool)) {
    any_import_statement(text, |statement| {
        let Some((module, list)) = statement_parts(statement) else { return false };
        for (name, alias) in imported_with_aliases(list) {
            let from_installed = is_installed(module.unwrap_or(name), &installed);
            match (alias, module) {
                (Some(alias), Some(_)) => {
                    named(name, from_installed);
                    named(alias, from_installed);
                }
                (Some(alias), None) => named(alias, from_installed),
                (None, Some(_)) => named(name, from_installed),
                (None, None) => named(name.split('.').next().unwrap_or(name), from_installed),
            }
        }
        false
    });
}

/// `text` after its first `count` blank-separated words.
fn after_words(text: &str, count: usize) -> &str {
    let mut rest = text;
    for _ in 0..count {
        rest = rest.trim_start();
        rest = &rest[rest.find(char::is_whitespace).unwrap_or(rest.len())..];
    }
    rest
}

/// The dotted names the imports of `text` bind or name, as [`any_imported_name_outside`] offers them
/// with no package installed: every statement read.
#[cfg(test)]
pub fn imported_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    any_imported_name_outside(
        text,
        |_| false,
        |name| {
            names.push(name.to_string());
            false
        },
    );
    names
}

/// The names of an import list (`a as b, (c, d)`): the imported names, not their aliases.
fn imported(list: &str) -> impl Iterator<Item = &str> {
    imported_with_aliases(list).map(|(name, _)| name)
}

/// The names of an import list with their aliases (`a as b, (c, d)`: `a` as `b`, `c`, `d`); a star names
/// nothing.
fn imported_with_aliases(list: &str) -> impl Iterator<Item = (&str, Option<&str>)> {
    list.split(',').filter_map(|item| {
        let mut words = item.trim().trim_start_matches('(').split_whitespace();
        let name = words.next()?.trim_end_matches(')');
        let alias = match (words.next(), words.next()) {
            (Some("as"), Some(alias)) => Some(alias.trim_end_matches(')')),
            _ => None,
        };
        (!name.is_empty() && name != "*").then_some((name, alias))
    })
}

/// Where the logical line holding byte `at` starts: the start of its physical line, moved back over
/// the lines before it that end with a backslash.
fn logical_line_start(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let line_start = |end: usize| memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |newline| newline + 1);
    let mut start = line_start(at);
    while start > 0 {
        let previous_end = start - 1;
        let previous_start = line_start(previous_end);
        let previous = text[previous_start..previous_end].trim_end_matches('\r');
        if !uncommented(previous).trim_end().ends_with('\\') {
            break;
        }
        start = previous_start;
    }
    start
}

/// The logical line from `start` (comments dropped, continuations joined with a blank), written into
/// `statement`, and where it ends.
fn logical_line(text: &str, start: usize, statement: &mut String) -> usize {
    statement.clear();
    let bytes = text.as_bytes();
    let mut open = false;
    let mut end = start;
    while end < text.len() {
        let line_end = memchr::memchr(b'\n', &bytes[end..]).map_or(text.len(), |newline| end + newline + 1);
        let code = uncommented(text[end..line_end].trim_end_matches(['\n', '\r']));
        end = line_end;
        statement.push_str(code.trim_end_matches('\\'));
        statement.push(' ');
        let holds = |byte: u8| memchr::memchr(byte, code.as_bytes()).is_some();
        if holds(b'(') && !holds(b')') && holds_import(code) {
            open = true;
        } else if open && holds(b')') {
            open = false;
        }
        if !(open || code.trim_end().ends_with('\\')) {
            break;
        }
    }
    end
}

/// Whether `code` holds the word `import`.
fn holds_import(code: &str) -> bool {
    import_finder().find(code.as_bytes()).is_some()
}

/// The search for `import`, built once: building a search costs more than running it on one line.
fn import_finder() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    FINDER.get_or_init(|| memchr::memmem::Finder::new(b"import"))
}

/// A line without its comment.
fn uncommented(line: &str) -> &str {
    memchr::memchr(b'#', line.as_bytes()).map_or(line, |hash| &line[..hash])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `text`'s imports write, each with whether it is imported from `numpy` (the installed
    /// package).
    fn named(text: &str) -> Vec<(String, bool)> {
        let mut names = Vec::new();
        imported_names_by_origin(
            text,
            |package| package == "numpy",
            |name, installed| names.push((name.to_string(), installed)),
        );
        names
    }

    #[test]
    fn imports_name_their_names_aliases_and_top_level_packages() {
        assert_eq!(
            named("from numpy.linalg import norm as n, svd\nimport numpy.random, utils.gcp as gcp\n"),
            [
                ("norm".into(), true),
                ("n".into(), true),
                ("svd".into(), true),
                ("numpy".into(), true),
                ("gcp".into(), false)
            ]
        );
        assert_eq!(
            named("from .ops import (\n    MyOperator,\n    Other as O,\n)\nfrom numpy import *\n"),
            [("MyOperator".into(), false), ("Other".into(), false), ("O".into(), false)]
        );
    }

    #[test]
    fn from_imports_name_the_module_and_each_name() {
        assert_eq!(imported_names("from utils.gcp import etl, load as l\n"), ["utils.gcp.etl", "utils.gcp.load"]);
        assert_eq!(
            imported_names("from . import tasks\nfrom .gcp import (\n    etl,\n    load,\n)\n"),
            [".tasks", ".gcp.etl", ".gcp.load"]
        );
        assert_eq!(imported_names("import os; from x \\\n    import y\n"), ["os", "x.y"]);
    }

    /// The names [`any_imported_name_outside`] offers for `text` with `numpy` and `scipy` installed.
    fn names_outside_installed(text: &str) -> Vec<String> {
        let mut names = Vec::new();
        any_imported_name_outside(
            text,
            |package| matches!(package, "numpy" | "scipy"),
            |name| {
                names.push(name.to_string());
                false
            },
        );
        names
    }

    #[test]
    fn imports_of_installed_packages_alone_are_passed_over_unread() {
        let installed = |name: &String| matches!(name.split('.').next(), Some("numpy" | "scipy"));
        for text in [
            "import numpy as np, scipy.sparse\nfrom numpy.linalg import norm as n, svd  # utils\n",
            "from numpy import (\n    utils,\n)\nimport numpy; import utils\n",
            "from numpy import x \\\n    , y\nimport scipy, \\\n    utils\n",
            "from . import tasks\nfrom .gcp import etl\nfrom utils.gcp import load\nimport utils.gcp as g\n",
            "x = 1  # import utils\nimport numpyx\nfrom numpy import reimport\nfrom scipy import importer as i\n",
            "s = \"#\"; import utils\ns = 'from numpy import x'\nimportlib.import_module('utils')\n",
            "from numpy import x\r\nimport utils\r\n",
            "import\tnumpy\nfrom  numpy  import  x\nimport numpy as utils, utils as numpy\n",
        ] {
            let outside: Vec<String> = imported_names(text).into_iter().filter(|name| !installed(name)).collect();
            assert_eq!(names_outside_installed(text), outside, "in {text:?}");
        }
        // Nothing of installed packages is offered.
        assert!(names_outside_installed("import numpy as np\nfrom scipy.sparse import csr_matrix\n").is_empty());
    }

    #[test]
    fn plain_imports_name_each_package_on_the_path() {
        assert_eq!(imported_names("import utils.gcp as g, json\n"), ["utils", "utils.gcp", "json"]);
        assert!(imported_names("print('no imports here')\n").is_empty());
        assert_eq!(imported_names("x = 1  # import nothing\nimport a  # import b\n"), ["a"]);
    }
}
