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
//!
//! A cell that writes a Python module (`%%writefile x.py`) does not run in the kernel either, but its
//! body is a program that runs elsewhere: [`written_python_module`] finds it, and it is checked alone.

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

/// A cell that writes a Python module to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenModule<'s> {
    /// The file's name, as the magic names it.
    pub file: &'s str,
    /// Whether the cell appends to the file (`-a`, `--append`) instead of writing it anew.
    pub appends: bool,
    /// Where the cell's body starts in its source, past the magic's line.
    pub body: usize,
}

/// The module a code cell `source` writes to a file (`%%writefile train.py`, `%%writefile -a train.py`,
/// its alias `%%file`); `None` for any other cell. The body is what the file holds and runs as, in a process of its own (a training job, a scoring
/// service): Python that never runs in the notebook's kernel. The magic must be the cell's first line
/// (blank lines aside), as IPython reads cell magics, and the file's name must end with `.py`.
pub fn written_python_module(source: &str) -> Option<WrittenModule<'_>> {
    let start = source.len() - source.trim_start_matches(['\n', '\r', ' ', '\t']).len();
    let start = source[..start].rfind(['\n', '\r']).map_or(0, |newline| newline + 1);
    let line_end = source[start..].find(['\n', '\r']).map_or(source.len(), |end| start + end);
    let line = source[start..line_end].trim();
    let arguments = line.strip_prefix("%%writefile").or_else(|| line.strip_prefix("%%file"))?;
    if !arguments.starts_with([' ', '\t']) {
        return None;
    }
    let mut rest = arguments.trim_start();
    let mut appends = false;
    while let Some(after) = ["-a", "--append"]
        .iter()
        .find_map(|flag| rest.strip_prefix(flag).filter(|after| after.is_empty() || after.starts_with([' ', '\t'])))
    {
        rest = after.trim_start();
        appends = true;
    }
    // The file's name: quoted (blanks allowed inside), or up to the next blank.
    let (name, after) = match rest.chars().next() {
        Some(quote @ ('"' | '\'')) => rest[1..].split_once(quote)?,
        _ => rest.split_once([' ', '\t']).unwrap_or((rest, "")),
    };
    let body = source[line_end..].strip_prefix("\r\n").or_else(|| source[line_end..].strip_prefix(['\n', '\r']));
    let body = source.len() - body.unwrap_or_default().len();
    (name.ends_with(".py") && after.trim().is_empty()).then_some(WrittenModule { file: name, appends, body })
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
    fn a_cell_that_writes_a_python_module_is_found_with_its_body() {
        fn body_of(source: &str) -> Option<&str> {
            written_python_module(source).map(|module| &source[module.body..])
        }
        assert_eq!(body_of("%%writefile train.py\nimport os\n"), Some("import os\n"));
        assert_eq!(body_of("\n%%writefile -a src/train.py\r\nx = 1"), Some("x = 1"));
        assert_eq!(body_of("%%file 'score.py'\nx = 1"), Some("x = 1"));
        assert_eq!(body_of("  %%writefile --append \"my job.py\"\nx"), Some("x"));
        assert_eq!(body_of("%%writefile train.py"), Some(""));
        let appended = written_python_module("%%writefile -a jobs/train.py\nx").unwrap();
        assert_eq!((appended.file, appended.appends), ("jobs/train.py", true));
        let written = written_python_module("%%file \"my job.py\"\nx").unwrap();
        assert_eq!((written.file, written.appends), ("my job.py", false));
        for other in [
            "%%writefile requirements.txt\nn_jobs=-1",
            "%%writefile job.yaml\nkind: Job",
            "%%writefiles train.py\nx",
            "%%bash\npython train.py",
            "# a comment first\n%%writefile train.py\nx",
            "import os\n%%writefile train.py\nx",
            "%%writefile\nx",
            "%%writefile a.py b.py\nx",
            "%%writefile -a\nx",
            "%%writefile 'open.py\nx",
        ] {
            assert_eq!(written_python_module(other), None, "{other:?}");
        }
    }

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
