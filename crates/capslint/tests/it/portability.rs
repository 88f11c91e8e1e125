//! Portability: `capslint check` builds and runs on every system, so the sources say where each
//! system's API is used. No crate but the in-pod ones (`capslint_pod`, the in-pod verbs, and
//! `capslint_watch`, the supervisor of `exec --watch`: Linux inside) names a Linux-only
//! API; a unix-only API is named only by the unix implementation of the workspace crate's platform module
//! (`crates/capslint_workspace/src/platform/unix.rs`) and by unit tests gated by `#[cfg(unix)]`; every
//! unix item of that module has a portable twin of the same signature; and `libc` is a dependency of
//! the in-pod crates on Linux alone, and of any other crate on unix alone.
//!
//! Only the Linux toolchain is at hand, so these checks read the sources: a small lexer tells code from
//! comments and string literals, and each `#[cfg(...)]` is followed to the end of the item it gates.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use crate::support::*;

/// The in-pod crates, whose insides are Linux's: the verbs `runtime` and `exec`, and the supervisor.
const POD_CRATES: &[&str] = &["crates/capslint_pod/", "crates/capslint_watch/"];

/// Whether `package` is one of [`POD_CRATES`].
fn is_pod_crate(package: &str) -> bool {
    POD_CRATES.iter().any(|dir| dir.trim_end_matches('/').rsplit('/').next() == Some(package))
}

/// The one file where unix-only names are at home.
const PLATFORM_UNIX: &str = "crates/capslint_workspace/src/platform/unix.rs";

/// The portable twin of [`PLATFORM_UNIX`].
const PLATFORM_PORTABLE: &str = "crates/capslint_workspace/src/platform/portable.rs";

/// The platform module's directory.
const PLATFORM_DIR: &str = "crates/capslint_workspace/src/platform/";

/// Lines that name a Linux path without using it, each with its file: the system trees that confinement
/// refuses to open on unix.
const NAMED_NOT_USED: &[(&str, &str)] =
    &[(PLATFORM_UNIX, r#"pub const SYSTEM_TREES: &[&str] = &["/proc", "/sys", "/dev"];"#)];

/// A pattern of a platform's API, and the name an offence is reported by.
struct Pattern {
    /// What the offence is called in a report.
    name: &'static str,
    /// The pattern.
    regex: Regex,
    /// Whether it is looked for in string literals too (paths, cfg predicates), or in bare code only
    /// (identifiers and paths of items: a Python name in a rule's message is no call).
    in_strings: bool,
}

fn pattern(name: &'static str, regex: &str, in_strings: bool) -> Pattern {
    Pattern { name, regex: Regex::new(regex).unwrap(), in_strings }
}

/// What only Linux has.
static LINUX_ONLY: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern("/proc", r"/proc\b", true),
        pattern("/sys/fs/cgroup", r"/sys/fs/cgroup", true),
        pattern("std::os::linux", r"\bstd\s*::\s*os\s*::\s*(linux\b|\{[^}]*\blinux\b)", true),
        pattern("target_os = \"linux\"", r#"\btarget_os\s*=\s*"linux""#, true),
        pattern("linux_raw", r"\blinux_raw", false),
        pattern("cgroup", r"\bcgroups?\w*\s*::|::\s*cgroups?\w*\b", false),
        pattern("prctl", r"\bprctl\b", false),
        pattern("memfd_create", r"\bmemfd_create\b", false),
        pattern("sched_getaffinity", r"\bsched_getaffinity\b", false),
        pattern("sched_setaffinity", r"\bsched_setaffinity\b", false),
    ]
});

/// What only unix systems have.
static UNIX_ONLY: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern("std::os::unix", r"\bstd\s*::\s*os\s*::\s*(unix\b|\{[^}]*\bunix\b)", false),
        pattern("libc", r"\blibc\b", false),
        pattern("nix", r"\bnix\s*::", false),
    ]
});

/// A source file seen twice: `code` without its comments, `bare` without its comments and literals
/// (both blanked with spaces, line breaks kept, so offsets and lines are the source's).
struct Source {
    code: Vec<char>,
    bare: Vec<char>,
    /// The offset of the start of each line.
    line_starts: Vec<usize>,
}

/// What the lexer is in.
#[derive(Clone, Copy, PartialEq)]
enum Class {
    Code,
    Literal,
    Comment,
}

fn is_ident(character: char) -> bool {
    character.is_alphanumeric() || character == '_'
}

impl Source {
    fn new(text: &str) -> Source {
        let chars: Vec<char> = text.chars().collect();
        let classes = classify(&chars);
        let blank = |keep: &dyn Fn(Class) -> bool| -> Vec<char> {
            chars
                .iter()
                .zip(&classes)
                .map(|(&character, &class)| if keep(class) || character == '\n' { character } else { ' ' })
                .collect()
        };
        let code = blank(&|class| class != Class::Comment);
        let bare = blank(&|class| class == Class::Code);
        let line_starts =
            std::iter::once(0).chain(chars.iter().enumerate().filter(|(_, c)| **c == '\n').map(|(at, _)| at + 1));
        Source { code, bare, line_starts: line_starts.collect() }
    }

    /// The line (from 1) of an offset.
    fn line(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|start| *start <= offset)
    }

    fn text(&self, view: &[char], start: usize, end: usize) -> String {
        view[start..end].iter().collect()
    }

    /// The source line `line` (from 1) of a view.
    fn line_text(&self, view: &[char], line: usize) -> String {
        let start = self.line_starts[line - 1];
        let end = self.line_starts.get(line).map_or(view.len(), |next| next - 1);
        self.text(view, start, end)
    }
}

/// The class of every character: code, a string or character literal (delimiters included), or a
/// comment.
fn classify(chars: &[char]) -> Vec<Class> {
    let mut classes = vec![Class::Code; chars.len()];
    let at = |index: usize| chars.get(index).copied().unwrap_or('\0');
    let mut index = 0;
    while index < chars.len() {
        let start = index;
        let class = match chars[index] {
            '/' if at(index + 1) == '/' => {
                while index < chars.len() && chars[index] != '\n' {
                    index += 1;
                }
                Class::Comment
            }
            '/' if at(index + 1) == '*' => {
                let mut depth = 0;
                while index < chars.len() {
                    if chars[index] == '/' && at(index + 1) == '*' {
                        depth += 1;
                        index += 2;
                    } else if chars[index] == '*' && at(index + 1) == '/' {
                        depth -= 1;
                        index += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        index += 1;
                    }
                }
                Class::Comment
            }
            '"' => {
                index += 1;
                while index < chars.len() && chars[index] != '"' {
                    index += if chars[index] == '\\' { 2 } else { 1 };
                }
                index += 1;
                Class::Literal
            }
            // A raw string: `r"..."`, `r#"..."#`, with a `b` or `c` before the `r`.
            'r' | 'b' | 'c'
                if (start == 0 || !is_ident(chars[start - 1])) && raw_string_start(chars, index).is_some() =>
            {
                let (quote, hashes) = raw_string_start(chars, index).unwrap();
                index = quote + 1;
                loop {
                    if index >= chars.len() {
                        break;
                    }
                    if chars[index] == '"' && (1..=hashes).all(|offset| at(index + offset) == '#') {
                        index += 1 + hashes;
                        break;
                    }
                    index += 1;
                }
                Class::Literal
            }
            // A character literal (`'x'`, `'\n'`, `'\u{7f}'`); otherwise a lifetime or a label.
            '\'' if at(index + 1) == '\\' => {
                // Past the quote, the backslash and the character it escapes (which may be a quote).
                index += 3;
                while index < chars.len() && chars[index] != '\'' {
                    index += 1;
                }
                index += 1;
                Class::Literal
            }
            '\'' if at(index + 2) == '\'' => {
                index += 3;
                Class::Literal
            }
            _ => {
                index += 1;
                Class::Code
            }
        };
        let end = index.min(chars.len());
        classes[start..end].fill(class);
        index = end.max(start + 1);
    }
    classes
}

/// Where the opening quote of a raw string that starts at `index` is, and how many `#` it has.
fn raw_string_start(chars: &[char], index: usize) -> Option<(usize, usize)> {
    let mut at = index;
    if matches!(chars[at], 'b' | 'c') {
        at += 1;
    }
    if chars.get(at) != Some(&'r') {
        return None;
    }
    at += 1;
    let hashes = chars[at..].iter().take_while(|c| **c == '#').count();
    (chars.get(at + hashes) == Some(&'"')).then_some((at + hashes, hashes))
}

/// An attribute and the extent of the item it is on.
struct Gate {
    /// The attribute's text, without spaces (`#[cfg(all(test,unix))]`).
    attribute: String,
    /// Where the attribute starts.
    start: usize,
    /// Where the item after the attribute (and after any other attributes) starts.
    item: usize,
    /// Where the item ends (after its `;` or its closing `}`).
    end: usize,
}

impl Gate {
    /// The predicate of a `#[cfg(...)]`, without spaces.
    fn cfg(&self) -> Option<&str> {
        self.attribute.strip_prefix("#[cfg(")?.strip_suffix(")]")
    }

    /// Whether the item is compiled on unix systems alone.
    fn is_unix(&self) -> bool {
        self.cfg().is_some_and(|predicate| {
            let unix = |term: &str| term == "unix" || term == "target_family=\"unix\"";
            unix(predicate)
                || predicate
                    .strip_prefix("all(")
                    .and_then(|terms| terms.strip_suffix(')'))
                    .is_some_and(|terms| terms.split(',').any(unix))
        })
    }

    /// Whether the item is compiled where unix is not.
    fn is_not_unix(&self) -> bool {
        self.cfg().is_some_and(|predicate| predicate.contains("not(unix)"))
    }

    /// Whether the item is a test or test support (`#[test]`, `#[cfg(test)]`, `#[cfg(all(test, ...))]`).
    fn is_test(&self) -> bool {
        self.attribute == "#[test]"
            || self.cfg().is_some_and(|predicate| {
                predicate == "test"
                    || predicate
                        .strip_prefix("all(")
                        .and_then(|terms| terms.strip_suffix(')'))
                        .is_some_and(|terms| terms.split(',').any(|term| term == "test"))
            })
    }

    fn covers(&self, offset: usize) -> bool {
        (self.start..self.end).contains(&offset)
    }
}

/// The end of the bracketed group that opens at `open` (`[`, `(` or `{`), in bare code.
fn group_end(bare: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    for (index, character) in bare.iter().enumerate().skip(open) {
        match character {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return index + 1;
                }
            }
            _ => {}
        }
    }
    bare.len()
}

/// Every outer attribute (`#[...]`, not `#![...]`) and the item it is on.
fn gates(source: &Source) -> Vec<Gate> {
    let bare = &source.bare;
    let mut found = Vec::new();
    for start in 0..bare.len() {
        if bare[start] != '#' || bare.get(start + 1) != Some(&'[') {
            continue;
        }
        let attribute_end = group_end(bare, start + 1);
        let attribute: String =
            source.text(&source.code, start, attribute_end).chars().filter(|c| !c.is_whitespace()).collect();
        // Past the other attributes of the same item.
        let mut item = attribute_end;
        loop {
            while item < bare.len() && bare[item].is_whitespace() {
                item += 1;
            }
            if bare.get(item) == Some(&'#') && bare.get(item + 1) == Some(&'[') {
                item = group_end(bare, item + 1);
            } else {
                break;
            }
        }
        // The item ends at a `;` outside any group, or with the first group in braces.
        let mut end = item;
        while end < bare.len() {
            match bare[end] {
                ';' => {
                    end += 1;
                    break;
                }
                '{' => {
                    end = group_end(bare, end);
                    // With the `;` of a `use` that ends with a group.
                    let after = (end..bare.len()).find(|index| !bare[*index].is_whitespace());
                    if let Some(semicolon) = after.filter(|index| bare[*index] == ';') {
                        end = semicolon + 1;
                    }
                    break;
                }
                '(' | '[' => end = group_end(bare, end),
                _ => end += 1,
            }
        }
        found.push(Gate { attribute, start, item, end });
    }
    found
}

/// The offences of one source file: `line: name` for each use of a Linux-only name, and of a unix-only
/// name where `unix_allowed` is false and no `#[cfg(unix)]` test item holds it.
fn scan(text: &str, unix_allowed: bool, named_not_used: &[&str]) -> Vec<(usize, &'static str)> {
    let source = Source::new(text);
    let gates = gates(&source);
    let code: String = source.code.iter().collect();
    let bare: String = source.bare.iter().collect();
    // The regex crate reports byte offsets; the views are indexed by character.
    let offset_of = |view: &str, byte: usize| view[..byte].chars().count();
    let mut offences = Vec::new();
    for pattern in LINUX_ONLY.iter() {
        let view = if pattern.in_strings { &code } else { &bare };
        for found in pattern.regex.find_iter(view) {
            let line = source.line(offset_of(view, found.start()));
            let text = source.line_text(&source.code, line);
            if !named_not_used.contains(&text.trim()) {
                offences.push((line, pattern.name));
            }
        }
    }
    if !unix_allowed {
        for pattern in UNIX_ONLY.iter() {
            for found in pattern.regex.find_iter(&bare) {
                let offset = offset_of(&bare, found.start());
                let gated = gates.iter().any(|gate| gate.is_unix() && gate.covers(offset));
                let in_test = gates.iter().any(|gate| gate.is_test() && gate.covers(offset));
                if !(gated && in_test) {
                    offences.push((source.line(offset), pattern.name));
                }
            }
        }
    }
    offences.sort();
    offences.dedup();
    offences
}

/// The `.rs` files below `directory`, sorted.
fn rust_files(directory: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `path` relative to `root`, with forward slashes.
fn relative(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative.components().map(|part| part.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// The sources of the crates of the workspace at `root` (`crates/*/src/**/*.rs`) but the in-pod ones', each
/// with its path relative to `root`.
fn sources_outside_the_pod(root: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let source = entry.unwrap().path().join("src");
        if !source.is_dir() {
            continue;
        }
        for file in rust_files(&source) {
            let name = relative(&file, root);
            if !POD_CRATES.iter().any(|pod| name.starts_with(pod)) {
                found.push((name, std::fs::read_to_string(&file).unwrap()));
            }
        }
    }
    found.sort();
    found
}

/// `file:line: name` for each offence in the workspace at `root`.
fn offences(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (name, text) in sources_outside_the_pod(root) {
        let exempt: Vec<&str> =
            NAMED_NOT_USED.iter().filter(|(file, _)| *file == name).map(|(_, line)| *line).collect();
        for (line, offence) in scan(&text, name == PLATFORM_UNIX, &exempt) {
            found.push(format!("{name}:{line}: {offence}"));
        }
    }
    found
}

/// Text without runs of white space, and with the names of the two implementations made one.
fn twin_key(text: &str) -> String {
    static NAMES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b(unix|portable)\b").unwrap());
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    NAMES.replace_all(&words, "_").into_owned()
}

/// `line: item` for each item gated by `#[cfg(unix)]` (outside tests) with no item gated by a `not(unix)`
/// cfg that is the same once the implementations' names are made one.
fn missing_twins(text: &str) -> Vec<(usize, String)> {
    let source = Source::new(text);
    let gates = gates(&source);
    let outside_tests = |gate: &&Gate| {
        !gates.iter().any(|other| other.is_test() && other.start <= gate.start && gate.start < other.end)
    };
    let key = |gate: &Gate| twin_key(&source.text(&source.code, gate.item, gate.end));
    let portable: Vec<String> = gates.iter().filter(outside_tests).filter(|gate| gate.is_not_unix()).map(key).collect();
    gates
        .iter()
        .filter(outside_tests)
        .filter(|gate| gate.is_unix() && !portable.contains(&key(gate)))
        .map(|gate| (source.line(gate.start), key(gate)))
        .collect()
}

/// `line: signature` of each public item at the top level of a file (outside tests): a function's up to
/// its body, a constant's up to its value, a type's name with its derives.
fn public_signatures(text: &str) -> Vec<(usize, String)> {
    static UNDERSCORED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"([(,]\s*)_(\w+\s*:)").unwrap());
    let source = Source::new(text);
    let bare = &source.bare;
    let mut found = Vec::new();
    let mut derives: Vec<String> = Vec::new();
    let mut at = 0;
    while at < bare.len() {
        if bare[at].is_whitespace() {
            at += 1;
            continue;
        }
        if bare[at] == '#' && bare.get(at + 1) == Some(&'[') {
            let end = group_end(bare, at + 1);
            let attribute = source.text(&source.code, at, end);
            if attribute.contains("cfg(test)") {
                // A test module: skipped whole, with what follows the attribute.
                at = gates(&Source::new(&source.text(&source.code, at, bare.len())))
                    .first()
                    .map_or(bare.len(), |gate| at + gate.end);
                derives.clear();
                continue;
            }
            if attribute.starts_with("#[derive") {
                derives.push(attribute.split_whitespace().collect());
            }
            at = end;
            continue;
        }
        // An item: its header runs to the first `{`, `=` or `;` outside parentheses and brackets.
        let start = at;
        let mut header_end = at;
        while header_end < bare.len() && !matches!(bare[header_end], '{' | ';' | '=') {
            header_end =
                if matches!(bare[header_end], '(' | '[') { group_end(bare, header_end) } else { header_end + 1 };
        }
        let header = source.text(&source.code, start, header_end).split_whitespace().collect::<Vec<_>>().join(" ");
        let end = match bare.get(header_end) {
            Some('{') => group_end(bare, header_end),
            _ => (header_end..bare.len()).find(|index| bare[*index] == ';').map_or(bare.len(), |index| index + 1),
        };
        if header.starts_with("pub ") {
            let words: Vec<&str> = header.split([' ', '(', '<']).collect();
            let signature = if matches!(words.get(1), Some(&"struct" | &"enum" | &"type")) {
                words[..3].join(" ")
            } else {
                UNDERSCORED.replace_all(&header, "$1$2").into_owned()
            };
            found.push((source.line(start), format!("{}{signature}", derives.join(" "))));
        }
        derives.clear();
        at = end;
    }
    found
}

/// `file:line: ...` for each unix item of the platform module without its portable twin: a `#[cfg(unix)]`
/// item with no `not(unix)` twin, a public item of one implementation that the other lacks or declares
/// otherwise.
fn twin_offences(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for file in rust_files(&root.join(PLATFORM_DIR)) {
        let name = relative(&file, root);
        for (line, item) in missing_twins(&std::fs::read_to_string(&file).unwrap()) {
            found.push(format!("{name}:{line}: `#[cfg(unix)] {item}` has no `not(unix)` twin"));
        }
    }
    let read = |name: &str| public_signatures(&std::fs::read_to_string(root.join(name)).unwrap());
    let (unix, portable) = (read(PLATFORM_UNIX), read(PLATFORM_PORTABLE));
    for (name, items, others) in [(PLATFORM_UNIX, &unix, &portable), (PLATFORM_PORTABLE, &portable, &unix)] {
        for (line, signature) in items {
            if !others.iter().any(|(_, other)| other == signature) {
                found.push(format!("{name}:{line}: `{signature}` has no twin of the same signature"));
            }
        }
    }
    found
}

/// What is wrong with where the manifest of `package` lets it depend on `libc`: an in-pod crate on Linux
/// alone, any other crate on unix alone.
fn libc_offences(package: &str, manifest: &str) -> Vec<String> {
    let manifest: toml::Table = toml::from_str(manifest).unwrap_or_else(|error| panic!("{package}: {error}"));
    let wanted = if is_pod_crate(package) { "cfg(target_os = \"linux\")" } else { "cfg(unix)" };
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<(String, Option<&str>, &toml::Value)> = Vec::new();
    for kind in kinds {
        if let Some(table) = manifest.get(kind) {
            tables.push((format!("[{kind}]"), None, table));
        }
    }
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for (target, table) in targets {
            for kind in kinds {
                if let Some(dependencies) = table.get(kind) {
                    tables.push((format!("[target.'{target}'.{kind}]"), Some(target.as_str()), dependencies));
                }
            }
        }
    }
    let mut found = Vec::new();
    let mut linux_dependency = false;
    for (name, target, table) in tables {
        if table.get("libc").is_none() {
            continue;
        }
        let kept =
            target.is_some_and(|target| target.split_whitespace().collect::<String>() == wanted.replace(' ', ""));
        if !kept {
            found.push(format!("{package}: libc in {name}, where only `{wanted}` may have it"));
        } else if name.ends_with(".dependencies]") {
            linux_dependency = true;
        }
    }
    if is_pod_crate(package) && !linux_dependency {
        found.push(format!("{package}: libc is not in [target.'{wanted}'.dependencies]"));
    }
    found
}

#[test]
fn no_crate_but_the_pod_names_a_linux_only_api_and_unix_names_stay_in_the_platform_module() {
    let root = root();
    let scanned = sources_outside_the_pod(&root);
    assert!(scanned.iter().any(|(name, _)| name == PLATFORM_UNIX), "{PLATFORM_UNIX} is scanned");
    assert!(scanned.iter().any(|(name, _)| name == "crates/capslint/src/main.rs"), "the binary is scanned");
    assert!(scanned.len() > 100, "{} files", scanned.len());
    let offences = offences(&root);
    assert!(offences.is_empty(), "platform-specific names outside their place:\n{}", offences.join("\n"));
}

#[test]
fn every_unix_item_of_the_platform_module_has_a_portable_twin() {
    let root = root();
    let unix = public_signatures(&std::fs::read_to_string(root.join(PLATFORM_UNIX)).unwrap());
    let names: Vec<&str> = unix.iter().map(|(_, signature)| signature.as_str()).collect();
    for expected in [
        "pub fn open_read(path: &Path) -> io::Result<File>",
        "pub fn file_id(path: &Path, metadata: &Metadata) -> Option<FileId>",
        "#[derive(Debug,Clone,PartialEq,Eq,Hash)]pub struct FileId",
        "pub const SYSTEM_TREES: &[&str]",
    ] {
        assert!(names.contains(&expected), "`{expected}` not among {names:#?}");
    }
    let offences = twin_offences(&root);
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn libc_is_linux_only_in_the_pod_and_unix_only_elsewhere() {
    let root = root();
    let mut checked = Vec::new();
    let mut offences = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let directory = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(directory.join("Cargo.toml")) else { continue };
        let package = directory.file_name().unwrap().to_string_lossy().into_owned();
        offences.extend(libc_offences(&package, &manifest));
        checked.push(package);
    }
    checked.sort();
    assert!(checked.contains(&"capslint_pod".to_string()) && checked.contains(&"capslint_workspace".to_string()));
    assert!(checked.len() >= 11, "{checked:?}");
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn the_scanner_reports_each_linux_name_with_its_line_and_ignores_comments_and_python_names() {
    let text = [
        "//! Reads /proc/self/status and calls prctl, in a comment only.",
        "use std::os::linux::fs::MetadataExt;",
        "fn cpus() -> usize { let path = \"/proc/self/status\"; path.len() }",
        "#[cfg(target_os = \"linux\")]",
        "fn caps() { unsafe { libc::prctl(1, 0, 0, 0, 0) }; }",
        "const RULE: &str = \"os.sched_getaffinity(0) counts the mask\";",
        "fn mask() { nix::sched::sched_getaffinity(pid); }",
        "fn quota() { capslint_pod::cgroup::read(\"/sys/fs/cgroup/cpu.max\"); }",
        "/* memfd_create */ fn seal() { memfd_create(); }",
        "const PROCESSES: &str = \"/processes\"; const Q: char = '\"'; const S: &str = r#\"prctl \"# ;",
        "fn raw() { rustix::backend::linux_raw::call(); }",
    ]
    .join("\n");
    let found = scan(&text, true, &[]);
    assert_eq!(
        found,
        [
            (2, "std::os::linux"),
            (3, "/proc"),
            (4, "target_os = \"linux\""),
            (5, "prctl"),
            (7, "sched_getaffinity"),
            (8, "/sys/fs/cgroup"),
            (8, "cgroup"),
            (9, "memfd_create"),
            (11, "linux_raw"),
        ]
    );
    // A line named as exempt is exempt for its own text alone.
    let exempt = "fn cpus() -> usize { let path = \"/proc/self/status\"; path.len() }";
    assert!(!scan(&text, true, &[exempt]).contains(&(3, "/proc")));
    assert!(scan(&text, true, &["fn cpus() {}"]).contains(&(3, "/proc")));
}

#[test]
fn the_scanner_lets_unix_names_into_unix_tests_only() {
    let text = [
        "use std::os::unix::fs::MetadataExt;",
        "fn inode(m: &std::fs::Metadata) -> u64 { m.ino() }",
        "#[cfg(unix)]",
        "fn uid() -> u32 { unsafe { libc::geteuid() } }",
        "#[cfg(test)]",
        "mod tests {",
        "    #[cfg(unix)]",
        "    use std::os::unix::fs::symlink;",
        "    #[test]",
        "    fn plain() { let _ = libc::getpid; }",
        "    #[cfg(unix)]",
        "    #[test]",
        "    fn linked() { symlink(\"a\", \"b\").unwrap(); let _ = unsafe { libc::mkfifo(p, 0o600) }; }",
        "}",
        "#[cfg(all(test, unix))]",
        "mod unix_tests { use std::os::{fd::AsRawFd, unix::fs::PermissionsExt}; }",
        "#[cfg(not(unix))]",
        "fn portable() { let _ = \"libc:: in a string\"; }",
        "fn after() { nix::unistd::getuid(); }",
    ]
    .join("\n");
    assert_eq!(
        scan(&text, false, &[]),
        [(1, "std::os::unix"), (4, "libc"), (10, "libc"), (19, "nix")],
        "a unix name outside a `#[cfg(unix)]` test is an offence, in one as well as after it"
    );
    assert_eq!(scan(&text, true, &[]), [], "the platform's unix module may name them all");
}

#[test]
fn a_workspace_with_an_offence_is_reported_file_by_file_and_the_pod_is_not_scanned() {
    let workspace = tempfile::TempDir::new().unwrap();
    let write = |name: &str, text: &str| {
        let path = workspace.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("crates/capslint_pod/src/cgroup.rs", "fn read() { libc::prctl(0); let _ = \"/proc/self/cgroup\"; }\n");
    write("crates/capslint_linter/src/lib.rs", "//! The pipeline.\n\npub mod report;\n");
    write("crates/capslint_linter/src/report/mod.rs", "fn width() {\n    let _ = libc::isatty(1);\n}\n");
    write("crates/capslint_workspace/src/platform/unix.rs", "pub fn euid() -> u32 { unsafe { libc::geteuid() } }\n");
    write(
        "crates/capslint_workspace/src/discover/mod.rs",
        "fn id() {}\n#[cfg(target_os = \"linux\")]\nfn fast() { std::fs::read(\"/proc/self/mountinfo\"); }\n",
    );
    assert_eq!(
        offences(workspace.path()),
        [
            "crates/capslint_linter/src/report/mod.rs:2: libc",
            "crates/capslint_workspace/src/discover/mod.rs:2: target_os = \"linux\"",
            "crates/capslint_workspace/src/discover/mod.rs:3: /proc",
        ]
    );
}

#[test]
fn a_unix_item_without_its_twin_is_reported_with_its_line() {
    let module = [
        "//! The platform.",
        "#[cfg(unix)]",
        "mod unix;",
        "#[cfg(any(not(unix), test))]",
        "mod portable;",
        "#[cfg(unix)]",
        "pub use unix::{open_read, same_path};",
        "#[cfg(not(unix))]",
        "pub use portable::{open_read};",
        "#[cfg(unix)]",
        "pub const SEPARATOR: u8 = b'/';",
        "#[cfg(test)]",
        "mod tests {",
        "    #[cfg(unix)]",
        "    #[test]",
        "    fn fifo() {}",
        "}",
    ]
    .join("\n");
    assert_eq!(
        missing_twins(&module),
        [(6, "pub use _::{open_read, same_path};".to_string()), (10, "pub const SEPARATOR: u8 = b'/';".to_string())]
    );
    let unix = "use std::io;\n\n/// Doc.\n#[derive(Debug, Hash)]\npub struct FileId(u64, u64);\n\npub fn file_id(_path: &Path, metadata: &Metadata) -> Option<FileId> {\n    Some(FileId(metadata.dev(), metadata.ino()))\n}\n\nfn private() {}\n\npub const TREES: &[&str] = &[\"/dev\"];\n\n#[cfg(test)]\nmod tests {\n    pub fn helper() {}\n}\n";
    assert_eq!(
        public_signatures(unix),
        [
            (5, "#[derive(Debug,Hash)]pub struct FileId".to_string()),
            (7, "pub fn file_id(path: &Path, metadata: &Metadata) -> Option<FileId>".to_string()),
            (13, "pub const TREES: &[&str]".to_string()),
        ]
    );
}

#[test]
fn libc_outside_its_table_is_reported() {
    let pod_everywhere = "[package]\nname = \"capslint_pod\"\n[dependencies]\nlibc = \"0.2\"\n";
    assert_eq!(
        libc_offences("capslint_pod", pod_everywhere),
        [
            "capslint_pod: libc in [dependencies], where only `cfg(target_os = \"linux\")` may have it",
            "capslint_pod: libc is not in [target.'cfg(target_os = \"linux\")'.dependencies]",
        ]
    );
    let pod_on_linux = "[target.'cfg(target_os = \"linux\")'.dependencies]\nlibc.workspace = true\n";
    assert_eq!(libc_offences("capslint_pod", pod_on_linux), Vec::<String>::new());
    let pod_on_unix = "[target.'cfg(unix)'.dependencies]\nlibc.workspace = true\n";
    assert_eq!(libc_offences("capslint_pod", pod_on_unix).len(), 2, "unix is wider than Linux");
    let test_dependency = "[dev-dependencies]\nlibc = \"0.2\"\n";
    assert_eq!(
        libc_offences("capslint", test_dependency),
        ["capslint: libc in [dev-dependencies], where only `cfg(unix)` may have it"]
    );
    let on_unix =
        "[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n[target.'cfg(unix)'.dev-dependencies]\nlibc = \"0.2\"\n";
    assert_eq!(libc_offences("capslint_workspace", on_unix), Vec::<String>::new());
    let on_linux = "[target.'cfg(target_os = \"linux\")'.dependencies]\nlibc = \"0.2\"\n";
    assert_eq!(libc_offences("capslint_workspace", on_linux).len(), 1, "Linux alone is narrower than unix");
}
