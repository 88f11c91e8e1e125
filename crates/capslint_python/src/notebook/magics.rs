//! Which code cells IPython runs as Python in the kernel. Line magics (`%matplotlib inline`), shell
//! escapes (`!pip install x`) and help (`x?`) are IPython syntax that the parser reads in IPython mode,
//! so they never stop a cell from being checked. Two kinds of cell are not Python at all and are left out:
//!
//! - a cell magic (`%%bash`, `%%sql`, `%%writefile x.py`, ...), which hands the whole cell to something
//!   else; except the ones that run their body as Python in the kernel and only time, profile, capture
//!   or debug it (`%%time`, `%%timeit`, `%%prun`, `%%capture`, `%%debug`), whose body is checked. A `%%`
//!   line after the first makes the cell an error to IPython: skipped too;
//! - an automagic: a line magic written without its `%` (`pip install x`, `cd data`), which IPython
//!   runs as the magic. IPython does this for one-line cells only, so a cell whose first line is one is
//!   that command or does not run.

/// IPython's built-in line magics, the ones its kernel adds, its POSIX shell aliases (which automagic
/// runs like magics) and those of the `autoreload` and `storemagic` extensions shipped with it: the
/// names that start an automagic cell. From IPython's documentation of built-in magic commands.
const LINE_MAGICS: &[&str] = &[
    "aimport",
    "alias",
    "alias_magic",
    "autoawait",
    "autocall",
    "automagic",
    "autoreload",
    "autosave",
    "bookmark",
    "cat",
    "cd",
    "clear",
    "code_wrap",
    "colors",
    "conda",
    "config",
    "connect_info",
    "cp",
    "debug",
    "dhist",
    "dirs",
    "doctest_mode",
    "ed",
    "edit",
    "env",
    "gui",
    "hist",
    "history",
    "killbgscripts",
    "ldir",
    "less",
    "lf",
    "lk",
    "ll",
    "load",
    "load_ext",
    "loadpy",
    "logoff",
    "logon",
    "logstart",
    "logstate",
    "logstop",
    "ls",
    "lsmagic",
    "lx",
    "macro",
    "magic",
    "mamba",
    "man",
    "matplotlib",
    "micromamba",
    "mkdir",
    "more",
    "mv",
    "notebook",
    "page",
    "pastebin",
    "pdb",
    "pdef",
    "pdoc",
    "pfile",
    "pinfo",
    "pinfo2",
    "pip",
    "popd",
    "pprint",
    "precision",
    "prun",
    "psearch",
    "psource",
    "pushd",
    "pwd",
    "pycat",
    "pylab",
    "qtconsole",
    "quickref",
    "recall",
    "rehashx",
    "reload_ext",
    "rep",
    "rerun",
    "reset",
    "reset_selective",
    "rm",
    "rmdir",
    "run",
    "save",
    "sc",
    "set_env",
    "store",
    "sx",
    "system",
    "tb",
    "time",
    "timeit",
    "unalias",
    "unload_ext",
    "uv",
    "who",
    "who_ls",
    "whos",
    "xdel",
    "xmode",
];

/// Cell magics that run the cell's body as Python in the kernel's namespace. (`%%python`, `%%python3` and
/// `%%pypy` run it in another process, whose imports and thread caps are not the kernel's: skipped.)
const TRANSPARENT_CELL_MAGICS: &[&str] = &["capture", "debug", "prun", "time", "timeit"];

/// Whether IPython runs the code cell `source` as Python in the kernel (see the module docs). A cell
/// with a transparent cell magic counts: its first line is then an escape command to the parser.
pub fn runs_as_python(source: &str) -> bool {
    let mut lines = source
        .split(['\n', '\r'])
        .map(|line| line.trim_start_matches([' ', '\t', '\x0c']))
        .filter(|line| !line.is_empty() && !line.starts_with('#'));
    let Some(first) = lines.next() else { return true };
    if let Some(magic) = first.strip_prefix("%%") {
        let name = magic.split([' ', '\t']).next().unwrap_or_default();
        if !TRANSPARENT_CELL_MAGICS.contains(&name) {
            return false;
        }
    } else if is_automagic(first) {
        return false;
    }
    // A cell magic anywhere else is an error to IPython: the cell does not run.
    !lines.any(|line| line.starts_with("%%"))
}

/// Whether a cell's first line is a line magic without its `%`: a magic's name followed by blanks and
/// arguments, or alone. A name followed by anything else (`run(x)`, `time.sleep(1)`) is Python, and so
/// is one followed by an assignment or an operator between blanks (`time = 3`, `who, what = f()`,
/// `time - start`), as it is to IPython when the name is a variable.
fn is_automagic(line: &str) -> bool {
    let end = line.find(|character: char| !(character.is_ascii_alphanumeric() || character == '_'));
    let (name, rest) = line.split_at(end.unwrap_or(line.len()));
    if !LINE_MAGICS.contains(&name) {
        return false;
    }
    let arguments = rest.trim_start_matches([' ', '\t']);
    if arguments.len() == rest.len() && !rest.is_empty() {
        return false;
    }
    !reads_as_python(arguments)
}

/// Whether what follows a name and blanks continues a Python statement: `=` or `,` (IPython's own test
/// for an assignment), an operator followed by a blank or `=` (`- start`, `+= 1`, `== 3`), or a keyword
/// operator (`in`, `is`, `if`, ...).
fn reads_as_python(arguments: &str) -> bool {
    if arguments.starts_with(['=', ',']) {
        return true;
    }
    let operator = arguments.len()
        - arguments.trim_start_matches(['+', '-', '*', '/', '%', '&', '|', '^', '@', '<', '>', '!']).len();
    if operator > 0 {
        return arguments[operator..].starts_with([' ', '\t', '=']);
    }
    let word = arguments.split([' ', '\t']).next().unwrap_or_default();
    matches!(word, "and" | "if" | "in" | "is" | "not" | "or")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_magics_are_skipped_unless_they_run_python() {
        assert!(!runs_as_python("%%bash\npython -c 'RandomForestClassifier(n_jobs=-1)'\n"));
        assert!(!runs_as_python("\n# write the script\n%%writefile train.py\nimport lightgbm\n"));
        assert!(!runs_as_python("%%sql\nselect 1"));
        assert!(runs_as_python("%%time\nmodel.fit(X, y)\n"));
        assert!(runs_as_python("%%timeit -n 3\nf()"));
        assert!(runs_as_python("%%capture out\nf()"));
        assert!(runs_as_python("%%prun -s cumulative\nf()"));
        assert!(!runs_as_python("%%timer\nf()"));
        assert!(!runs_as_python("%%python3\nimport numpy"));
        assert!(!runs_as_python("x = 1\n%%bash\nls -l\n"));
        assert!(!runs_as_python("%%time\n%%bash\nls -l\n"));
    }

    #[test]
    fn automagics_are_skipped() {
        for cell in
            ["pip install lightgbm", "cd ../data", "matplotlib inline", "ls", "\n  pwd\n", "load_ext autoreload"]
        {
            assert!(!runs_as_python(cell), "{cell:?} is an automagic");
        }
    }

    #[test]
    fn python_that_starts_with_a_magic_name_is_python() {
        for cell in [
            "time = 3",
            "time.sleep(1)",
            "run(model)",
            "history = model.fit(X)",
            "precision, recall = score()",
            "config += 1",
            "time - start",
            "who in users",
            "env: dict = {}",
            "import os\ncd data",
            "# cd data\nx = 1",
            "%matplotlib inline\nimport numpy",
            "!pip install x",
            "",
        ] {
            assert!(runs_as_python(cell), "{cell:?} is Python");
        }
    }
}
