//! The snippets of `README.md` and of every page of `docs/` are checked as a new user would paste them:
//! YAML and TOML parse, shell passes `bash -n`, configuration files are valid capslint configuration,
//! GitHub Action inputs and pre-commit hook ids exist, and every `capslint` command line runs on a sample
//! project (through `uvx` and `pipx run` too). What cannot run here, installing from PyPI, from a release
//! archive or from the capslint image, is parsed and must name this release (and a target the release
//! builds).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use capslint_linter::report::OutputFormat;
use capslint_workspace::config::ConfigFile;
use clap::ValueEnum;
use regex::Regex;
use saphyr::{LoadableYamlNode, Yaml};

use crate::support::*;

/// The page of `docs/` that documents the output formats, and the one that documents the integrations.
const FORMATS_PAGE: &str = "docs/output-formats.md";
const INTEGRATIONS_PAGE: &str = "docs/integrations.md";
/// The release every install command must name.
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The one `cargo install` line a user may paste, run by `tests/it/install_cargo.rs`.
pub const CARGO_INSTALL: &str = "cargo install --locked --git https://github.com/capslint/capslint capslint";

/// The documentation a user reads: `README.md`, then every Markdown page under `docs/`, as paths relative
/// to the repository root, sorted.
pub fn pages() -> Vec<String> {
    let mut found = Vec::new();
    let mut directories = vec![root().join("docs")];
    while let Some(directory) = directories.pop() {
        for entry in std::fs::read_dir(&directory).unwrap_or_else(|error| panic!("{}: {error}", directory.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                directories.push(path);
            } else if path.extension().is_some_and(|extension| extension == "md") {
                found.push(path.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found.sort();
    assert!(!found.is_empty(), "docs/ holds no page");
    [String::from("README.md")].into_iter().chain(found).collect()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// A fenced block: its language, its text and the line it starts on.
struct Block {
    language: String,
    text: String,
    line: usize,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        if let Some(language) = line.trim_start().strip_prefix("```") {
            let body: Vec<&str> =
                lines.by_ref().map(|(_, line)| line).take_while(|line| line.trim() != "```").collect();
            blocks.push(Block { language: language.trim().to_string(), text: body.join("\n") + "\n", line: index + 1 });
        }
    }
    blocks
}

/// A word or an operator of a shell command line.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Operator(String),
}

/// Splits one line of shell into words and operators: quotes, `\` continuations (already joined),
/// `$VAR` / `${VAR}` from `variables`, comments. Enough for documentation snippets; anything else fails.
fn tokenize(line: &str, variables: &BTreeMap<&str, String>) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let flush = |word: &mut String, in_word: &mut bool, tokens: &mut Vec<Token>| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    let expand = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> String {
        let braced = chars.next_if_eq(&'{').is_some();
        let mut name = String::new();
        while let Some(character) = chars.next_if(|c| c.is_ascii_alphanumeric() || *c == '_') {
            name.push(character);
        }
        if braced {
            assert_eq!(chars.next(), Some('}'), "unsupported parameter expansion in {line}");
        }
        variables.get(name.as_str()).unwrap_or_else(|| panic!("unknown variable ${name} in {line}")).clone()
    };
    while let Some(character) = chars.next() {
        match character {
            '\'' => {
                in_word = true;
                word.extend(chars.by_ref().take_while(|c| *c != '\''));
            }
            '"' => {
                in_word = true;
                while let Some(inner) = chars.next() {
                    match inner {
                        '"' => break,
                        '$' => word.push_str(&expand(&mut chars)),
                        '\\' => word.extend(chars.next()),
                        other => word.push(other),
                    }
                }
            }
            '$' => {
                in_word = true;
                word.push_str(&expand(&mut chars));
            }
            '#' if !in_word => break,
            '|' | '&' | ';' | '>' | '<' => {
                flush(&mut word, &mut in_word, &mut tokens);
                let mut operator = character.to_string();
                if let Some(next) = chars.next_if(|next| matches!(next, '|' | '&' | '>')) {
                    operator.push(next);
                }
                tokens.push(Token::Operator(operator));
            }
            c if c.is_whitespace() => flush(&mut word, &mut in_word, &mut tokens),
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    flush(&mut word, &mut in_word, &mut tokens);
    tokens
}

/// One `capslint` invocation found in shell text: its arguments and whether a pipe feeds it.
#[derive(Debug)]
struct Invocation {
    args: Vec<String>,
    piped: bool,
    source: String,
}

fn invocations(shell: &str, variables: &BTreeMap<&str, String>) -> Vec<Invocation> {
    let joined = shell.replace("\\\n", " ");
    let targets = release_targets();
    let mut found = Vec::new();
    let mut piped = false;
    for line in joined.lines() {
        let tokens = tokenize(line, variables);
        for command in tokens.split_inclusive(|token| matches!(token, Token::Operator(_))) {
            let operator = match command.last() {
                Some(Token::Operator(operator)) => Some(operator.as_str()),
                _ => None,
            };
            let words: Vec<String> = command
                .iter()
                .filter_map(|token| match token {
                    Token::Word(word) => Some(word.clone()),
                    Token::Operator(_) => None,
                })
                .collect();
            check_install(&words, line).unwrap_or_else(|error| panic!("{error}"));
            check_archive(&words, line, &targets).unwrap_or_else(|error| panic!("{error}"));
            if let Some(args) = capslint_args(&words, line).unwrap_or_else(|error| panic!("{error}")) {
                found.push(Invocation { args, piped, source: line.to_string() });
            }
            piped = operator == Some("|");
            // A redirection's target is the next command's first word: skip it as a command.
            if matches!(operator, Some(">" | ">>" | "<")) {
                piped = false;
            }
        }
        piped = false;
    }
    found
}

/// The arguments of a command that runs capslint: `capslint ARGS`, `uvx capslint@VERSION ARGS`,
/// `pipx run --spec capslint==VERSION capslint ARGS`; `Err` when it runs another release.
fn capslint_args(words: &[String], line: &str) -> Result<Option<Vec<String>>, String> {
    let pinned = |spec: &str, wanted: String| {
        if spec == wanted { Ok(()) } else { Err(format!("`{line}` runs `{spec}`, not this release (`{wanted}`)")) }
    };
    let Some(first) = words.first() else { return Ok(None) };
    match first.as_str() {
        "capslint" => Ok(Some(words[1..].to_vec())),
        "uvx" if words.get(1).is_some_and(|tool| tool.starts_with("capslint")) => {
            pinned(&words[1], format!("capslint@{VERSION}"))?;
            Ok(Some(words[2..].to_vec()))
        }
        "pipx" if words.get(1).is_some_and(|word| word == "run") => {
            let (spec, rest) = match words.get(2).map(String::as_str) {
                Some("--spec") if words.len() > 3 => (words[3].as_str(), &words[4..]),
                _ => (words.get(2).map_or("", String::as_str), &words[2..]),
            };
            if rest.first().is_none_or(|app| !app.starts_with("capslint")) {
                return Ok(None);
            }
            pinned(spec, format!("capslint=={VERSION}"))?;
            Ok(Some(rest[1..].to_vec()))
        }
        _ => Ok(None),
    }
}

/// Checks a command that installs capslint: `pip install`, `pipx install` and `uv tool install` pin
/// `capslint==VERSION`; `cargo install` is the line the install test runs.
fn check_install(words: &[String], line: &str) -> Result<(), String> {
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let installs = match words.as_slice() {
        ["pip" | "pip3", "install", rest @ ..]
        | ["pipx", "install", rest @ ..]
        | ["uv", "tool", "install", rest @ ..] => rest,
        ["python" | "python3", "-m", "pip", "install", rest @ ..] => rest,
        ["cargo", "install", ..] if words.join(" ") != CARGO_INSTALL => {
            return Err(format!("`{line}`: give the tested line, `{CARGO_INSTALL}`"));
        }
        _ => return Ok(()),
    };
    let wanted = format!("capslint=={VERSION}");
    match installs.iter().find(|word| word.starts_with("capslint") && **word != wanted) {
        Some(other) => Err(format!("`{line}` installs `{other}`, not this release (`{wanted}`)")),
        None => Ok(()),
    }
}

/// The targets the release builds binaries for: the `target:` entries of the release workflow's build
/// matrices.
fn release_targets() -> Vec<String> {
    let workflow = read(".github/workflows/release.yml");
    let targets: Vec<String> = Regex::new(r"(?m)^\s*(?:-\s+)?target:\s*([A-Za-z0-9_.-]+)\s*$")
        .unwrap()
        .captures_iter(&workflow)
        .map(|found| found[1].to_string())
        .collect();
    assert!(!targets.is_empty(), "the release workflow builds no target");
    targets
}

/// Checks the words that name a release archive (`capslint-VERSION-TARGET.tar.gz`, its `.sha256`, the
/// directory it unpacks to) or download from a release (`.../releases/download/vVERSION/...`): they must
/// name this release, a target of `targets`, and the one kind of archive the release makes.
fn check_archive(words: &[String], line: &str, targets: &[String]) -> Result<(), String> {
    let archive = Regex::new(r"capslint-(\d[^-/\s]*)-([^/\s]*)").unwrap();
    let download = Regex::new(r"/releases/download/([^/\s]+)/").unwrap();
    for word in words {
        if let Some(found) = download.captures(word)
            && found[1] != format!("v{VERSION}")
        {
            return Err(format!("`{line}` downloads from release `{}`, not this one (`v{VERSION}`)", &found[1]));
        }
        for found in archive.captures_iter(word) {
            if &found[1] != VERSION {
                return Err(format!(
                    "`{line}` names the archive of capslint {}, not this release ({VERSION})",
                    &found[1]
                ));
            }
            let name = &found[2];
            let target = name.strip_suffix(".tar.gz.sha256").or_else(|| name.strip_suffix(".tar.gz")).unwrap_or(name);
            if !targets.iter().any(|known| known == target) {
                return Err(format!("`{line}` names `{name}`, not a `TARGET.tar.gz` of a target the release builds"));
            }
        }
    }
    Ok(())
}

fn bash_syntax(shell: &str, what: &str) {
    let status = Command::new("bash").args(["-n", "-c", shell]).status().expect("bash runs");
    assert!(status.success(), "{what}: shell syntax error in\n{shell}");
}

const SAMPLE_MANIFEST: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: registry.example.com/ml/trainer:1.0
          command: [capslint, exec, --, python, -m, trainer]
          env:
            - name: CPU_LIMIT
              valueFrom:
                resourceFieldRef:
                  resource: limits.cpu
          resources:
            requests: {cpu: \"2\", memory: 4Gi}
            limits: {cpu: \"2\", memory: 4Gi}
";

/// A small project the snippets' commands run in; clean (the manifest follows ADR-0096), so `check` exits
/// with 0. It has the baseline
/// that the adoption section tells users to commit.
fn sample() -> tempfile::TempDir {
    project(&[
        ("capslint-baseline.json", "{\"version\": 1, \"findings\": []}\n"),
        ("src/train.py", CLEAN),
        ("train.py", CLEAN),
        ("k8s/job.yaml", SAMPLE_MANIFEST),
        ("overlays/prod/kustomization.yaml", "resources: []\n"),
    ])
}

/// Runs `invocation` in `dir` and requires capslint to accept it.
fn run_invocation(dir: &Path, invocation: &Invocation, what: &str) {
    let mut args = invocation.args.clone();
    if args.first().is_some_and(|first| first == "exec") {
        // Parse the arguments, but run `true` instead of the user's program.
        if let Some(separator) = args.iter().position(|arg| arg == "--") {
            args.truncate(separator + 1);
            args.push("true".into());
        }
        let (_, _, stderr) = run(capslint(dir).args(&args));
        assert!(!stderr.contains("Usage:"), "{what}: `{}` is rejected:\n{stderr}", invocation.source);
        return;
    }
    let mut command = capslint(dir);
    command.args(&args);
    if invocation.piped {
        command.write_stdin(SAMPLE_MANIFEST);
    }
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, 0, "{what}: `{}` exits with {code}:\n{stdout}{stderr}", invocation.source);
}

fn check_shell(shell: &str, what: &str, dir: &Path, variables: &BTreeMap<&str, String>) -> usize {
    bash_syntax(shell, what);
    let found = invocations(shell, variables);
    for invocation in &found {
        run_invocation(dir, invocation, what);
    }
    found.len()
}

fn scalar(node: &Yaml<'_>) -> Option<String> {
    match node {
        Yaml::Value(saphyr::Scalar::String(text)) => Some(text.to_string()),
        Yaml::Value(saphyr::Scalar::Boolean(value)) => Some(value.to_string()),
        Yaml::Value(saphyr::Scalar::Integer(value)) => Some(value.to_string()),
        _ => None,
    }
}

fn yaml_ids(path: &str, list_key: Option<&str>) -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let documents = Yaml::load_from_str(&text).unwrap();
    let document = &documents[0];
    match list_key {
        Some(key) => {
            let inputs = document.as_mapping_get(key).and_then(Yaml::as_mapping).expect("inputs");
            (inputs.keys().filter_map(scalar).collect(), Vec::new())
        }
        None => {
            let hooks = document.as_sequence().expect("a list of hooks");
            (hooks.iter().filter_map(|hook| hook.as_mapping_get("id").and_then(scalar)).collect(), Vec::new())
        }
    }
}

/// Walks a YAML snippet: shell in `run`, `entry` and `script`, `with` of this action, hook ids of this
/// repository. Returns how many capslint invocations ran.
fn check_yaml_node(node: &Yaml<'_>, context: &mut YamlContext<'_>) -> usize {
    let mut count = 0;
    if let Some(mapping) = node.as_mapping() {
        let get = |key: &str| node.as_mapping_get(key);
        if let Some(uses) = get("uses").and_then(scalar)
            && uses.starts_with("capslint/capslint@")
        {
            for key in get("with").and_then(Yaml::as_mapping).into_iter().flat_map(|with| with.keys()) {
                let key = scalar(key).unwrap();
                assert!(context.inputs.contains(&key), "{}: the action has no input `{key}`", context.what);
            }
            context.used_action = true;
        }
        if let Some(repo) = get("repo").and_then(scalar)
            && repo.starts_with("https://github.com/capslint/")
        {
            let hooks = match repo.as_str() {
                "https://github.com/capslint/capslint" => &context.hooks,
                "https://github.com/capslint/capslint-pre-commit" => &context.mirror_hooks,
                other => panic!("{}: no capslint repository {other}", context.what),
            };
            for hook in get("hooks").and_then(Yaml::as_sequence).into_iter().flatten() {
                let id = hook.as_mapping_get("id").and_then(scalar).expect("a hook id");
                assert!(hooks.contains(&id), "{}: no pre-commit hook `{id}` in {repo}", context.what);
            }
            context.repos.push(repo);
        }
        for key in ["run", "entry"] {
            if let Some(shell) = get(key).and_then(scalar) {
                count += check_shell(&shell, context.what, context.dir, context.variables);
            }
        }
        if let Some(script) = get("script").and_then(Yaml::as_sequence) {
            for item in script {
                count += check_shell(
                    &scalar(item).expect("script items are strings"),
                    context.what,
                    context.dir,
                    context.variables,
                );
            }
        }
        for value in mapping.values() {
            count += check_yaml_node(value, context);
        }
    } else if let Some(sequence) = node.as_sequence() {
        for item in sequence {
            count += check_yaml_node(item, context);
        }
    }
    count
}

struct YamlContext<'a> {
    what: &'a str,
    dir: &'a Path,
    variables: &'a BTreeMap<&'a str, String>,
    inputs: Vec<String>,
    hooks: Vec<String>,
    mirror_hooks: Vec<String>,
    used_action: bool,
    repos: Vec<String>,
}

const DOCKER_INSTRUCTIONS: &[&str] =
    &["FROM", "RUN", "COPY", "ADD", "WORKDIR", "ENV", "ARG", "LABEL", "USER", "EXPOSE", "ENTRYPOINT", "CMD"];

/// Checks a Dockerfile: known instructions, shell in `RUN`, JSON exec forms, and the command that
/// `ENTRYPOINT` plus `CMD` make.
fn check_dockerfile(text: &str, what: &str, dir: &Path, variables: &BTreeMap<&str, String>) -> usize {
    let joined = text.replace("\\\n", " ");
    let mut entrypoint: Vec<String> = Vec::new();
    let mut cmd: Vec<String> = Vec::new();
    let mut count = 0;
    for line in joined.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')) {
        let (instruction, rest) = line.split_once(' ').unwrap_or((line, ""));
        assert!(DOCKER_INSTRUCTIONS.contains(&instruction), "{what}: unknown instruction {instruction}");
        match instruction {
            "RUN" => count += check_shell(rest, what, dir, variables),
            "COPY" => {
                if let Some(image) = rest.split_whitespace().find_map(|word| word.strip_prefix("--from="))
                    && let Some(tag) = image.strip_prefix("ghcr.io/capslint/capslint:")
                {
                    assert_eq!(tag, VERSION, "{what}: `{line}` must copy from this release's image");
                    assert!(rest.contains(" /capslint "), "{what}: the image holds the binary at /capslint");
                }
            }
            "ENTRYPOINT" | "CMD" => {
                let words: Vec<String> = serde_json::from_str(rest)
                    .unwrap_or_else(|error| panic!("{what}: {instruction} must be a JSON exec form: {error}"));
                if instruction == "ENTRYPOINT" { entrypoint = words } else { cmd = words }
            }
            _ => {}
        }
    }
    let command: Vec<String> = entrypoint.into_iter().chain(cmd).collect();
    if command.first().is_some_and(|first| first == "capslint") {
        let invocation = Invocation { args: command[1..].to_vec(), piped: false, source: command.join(" ") };
        run_invocation(dir, &invocation, what);
        count += 1;
    }
    count
}

#[test]
fn every_snippet_parses_and_every_capslint_command_runs() {
    let blocks: Vec<(String, Block)> = pages()
        .into_iter()
        .flat_map(|page| blocks(&read(&page)).into_iter().map(move |block| (page.clone(), block)))
        .collect();
    assert!(blocks.len() >= 39, "expected the snippets of the README and the pages, found {}", blocks.len());
    let (inputs, _) = yaml_ids("action.yml", Some("inputs"));
    let (hooks, _) = yaml_ids(".pre-commit-hooks.yaml", None);
    let (mirror_hooks, _) = yaml_ids("pre-commit-mirror/.pre-commit-hooks.yaml", None);
    let mut repos: Vec<String> = Vec::new();
    let mut languages: BTreeMap<String, usize> = BTreeMap::new();
    let mut commands = 0;
    let mut used_action = false;
    for (page, block) in &blocks {
        let what = format!("{page}:{}", block.line);
        let dir = sample();
        let variables: BTreeMap<&str, String> = BTreeMap::from([("CI_PROJECT_DIR", dir.path().display().to_string())]);
        *languages.entry(block.language.clone()).or_default() += 1;
        match block.language.as_str() {
            "sh" => commands += check_shell(&block.text, &what, dir.path(), &variables),
            "yaml" => {
                let documents = Yaml::load_from_str(&block.text).unwrap_or_else(|error| panic!("{what}: {error}"));
                let mut context = YamlContext {
                    what: &what,
                    dir: dir.path(),
                    variables: &variables,
                    inputs: inputs.clone(),
                    hooks: hooks.clone(),
                    mirror_hooks: mirror_hooks.clone(),
                    used_action: false,
                    repos: Vec::new(),
                };
                for document in &documents {
                    commands += check_yaml_node(document, &mut context);
                }
                used_action |= context.used_action;
                repos.extend(context.repos);
            }
            "toml" => {
                let table: toml::Table = toml::from_str(&block.text).unwrap_or_else(|error| panic!("{what}: {error}"));
                let name = block.text.lines().next().and_then(|line| line.strip_prefix("# ")).unwrap_or_default();
                if name == "capslint.toml" || name == "pyproject.toml" {
                    let parsed = ConfigFile::parse(Path::new(name), block.text.clone())
                        .unwrap_or_else(|error| panic!("{what}: not a valid configuration: {error}"));
                    assert!(parsed.is_some(), "{what}: no capslint table");
                }
                assert!(!table.is_empty());
            }
            "dockerfile" => commands += check_dockerfile(&block.text, &what, dir.path(), &variables),
            "json" => {
                serde_json::from_str::<serde_json::Value>(&block.text)
                    .unwrap_or_else(|error| panic!("{what}: {error}"));
            }
            "text" => {}
            "lua" => {
                // The Neovim set-up, run in a headless Neovim by the `server_clients` tests.
                let tested = std::fs::read_to_string(root().join("tests/editors/capslint.lua")).unwrap();
                assert_eq!(block.text.trim_end(), tested.trim_end(), "{what}: not tests/editors/capslint.lua");
            }
            other => {
                panic!(
                    "{what}: a block in `{other}` cannot be checked; use sh, yaml, toml, json, dockerfile, text or \
                     lua (the tested Neovim set-up)"
                )
            }
        }
    }
    println!("checked {} blocks {languages:?}, ran {commands} capslint command lines", blocks.len());
    assert!(commands >= 40, "expected the pages' command lines to run, ran {commands}");
    assert!(used_action, "the pages show the GitHub Action");
    for repo in ["https://github.com/capslint/capslint-pre-commit", "https://github.com/capslint/capslint"] {
        assert!(repos.iter().any(|found| found == repo), "the pages show the pre-commit hooks of {repo}");
    }
    for language in ["sh", "yaml", "toml", "dockerfile"] {
        assert!(languages.contains_key(language), "no {language} snippet");
    }
}

#[test]
fn the_pages_document_every_format_every_action_input_and_their_sections() {
    let formats = read(FORMATS_PAGE);
    for format in OutputFormat::value_variants() {
        let name = format.to_possible_value().unwrap().get_name().to_string();
        assert!(formats.contains(&format!("| `{name}` |")), "format `{name}` is not in the table of {FORMATS_PAGE}");
    }
    let integrations = read(INTEGRATIONS_PAGE);
    let (inputs, _) = yaml_ids("action.yml", Some("inputs"));
    for input in inputs {
        assert!(
            integrations.contains(&format!("| `{input}` |")),
            "action input `{input}` is not in the table of {INTEGRATIONS_PAGE}"
        );
    }
    for (page, section) in [
        ("README.md", "## Installation"),
        ("README.md", "## Quick start"),
        (INTEGRATIONS_PAGE, "## pre-commit"),
        (INTEGRATIONS_PAGE, "## GitHub Action"),
        (INTEGRATIONS_PAGE, "## GitLab CI"),
        (INTEGRATIONS_PAGE, "SARIF and JUnit"),
        ("docs/manifests.md", "Helm and kustomize"),
        ("docs/in-pod.md", "## `capslint exec`"),
        ("docs/in-pod.md", "## In a Kubernetes Job"),
    ] {
        assert!(read(page).contains(section), "{page} has no section on {section}");
    }
}

#[test]
fn the_documentation_is_the_readme_and_every_page_of_docs() {
    let found = pages();
    assert_eq!(found[0], "README.md");
    for page in ["docs/usage.md", "docs/configuration.md", "docs/in-pod.md", "docs/integrations.md"] {
        assert!(found.iter().any(|found| found == page), "{page} is not among {found:?}");
    }
    assert!(found[1..].iter().all(|page| page.starts_with("docs/") && page.ends_with(".md")), "{found:?}");
}

#[test]
fn the_shell_reader_finds_commands_in_pipelines() {
    let variables = BTreeMap::from([("CI_PROJECT_DIR", "/builds/x".to_string())]);
    let found = invocations(
        "helm template a ./b \\\n  | capslint check --stdin-filename \"$CI_PROJECT_DIR/r.yaml\" -  # note\nx && capslint rule --all > out.txt\n",
        &variables,
    );
    let args: Vec<(Vec<String>, bool)> = found.into_iter().map(|found| (found.args, found.piped)).collect();
    assert_eq!(
        args,
        [
            (vec!["check".into(), "--stdin-filename".into(), "/builds/x/r.yaml".into(), "-".into()], true),
            (vec!["rule".into(), "--all".into()], false),
        ]
    );
}

#[test]
fn uvx_and_pipx_run_are_capslint_command_lines_of_this_release() {
    let variables = BTreeMap::new();
    let found = invocations(
        &format!("uvx capslint@{VERSION} check .\npipx run --spec capslint=={VERSION} capslint rule --all\n"),
        &variables,
    );
    let args: Vec<Vec<String>> = found.into_iter().map(|found| found.args).collect();
    assert_eq!(args, [vec!["check".to_string(), ".".into()], vec!["rule".into(), "--all".into()]]);
    let words = |line: &str| line.split(' ').map(str::to_string).collect::<Vec<_>>();
    for wrong in
        ["uvx capslint@0.0.1 check .", "uvx capslint check .", "pipx run --spec capslint==0.0.1 capslint check ."]
    {
        assert!(capslint_args(&words(wrong), wrong).is_err(), "`{wrong}` names another release and must be refused");
    }
    assert_eq!(capslint_args(&words("uvx ruff check ."), "").unwrap(), None);
}

#[test]
fn install_commands_must_pin_this_release_and_cargo_must_name_the_package() {
    let words = |line: &str| line.split(' ').map(str::to_string).collect::<Vec<_>>();
    for good in [
        format!("pip install --no-cache-dir capslint=={VERSION}"),
        format!("uv tool install capslint=={VERSION}"),
        "pip install pyyaml".to_string(),
        CARGO_INSTALL.to_string(),
    ] {
        assert_eq!(check_install(&words(&good), &good), Ok(()));
    }
    for wrong in [
        "pip install capslint",
        "pipx install capslint==0.0.1",
        "cargo install --locked --git https://github.com/capslint/capslint",
        "cargo install --git https://github.com/capslint/capslint capslint",
    ] {
        assert!(check_install(&words(wrong), wrong).is_err(), "`{wrong}` must be refused");
    }
}

#[test]
fn release_archives_must_name_this_release_and_a_target_it_builds() {
    let targets = release_targets();
    for target in ["x86_64-unknown-linux-gnu", "aarch64-apple-darwin", "x86_64-pc-windows-msvc"] {
        assert!(targets.iter().any(|found| found == target), "the release builds {target}: {targets:?}");
    }
    let words = |line: &str| line.split(' ').map(str::to_string).collect::<Vec<_>>();
    let url = "https://github.com/capslint/capslint/releases/download";
    for good in [
        format!("curl -LO {url}/v{VERSION}/capslint-{VERSION}-aarch64-apple-darwin.tar.gz"),
        format!("shasum -a 256 -c capslint-{VERSION}-x86_64-apple-darwin.tar.gz.sha256"),
        format!("sudo install capslint-{VERSION}-x86_64-unknown-linux-musl/capslint /usr/local/bin/capslint"),
        "cp capslint-baseline.json /tmp/".to_string(),
    ] {
        assert_eq!(check_archive(&words(&good), &good, &targets), Ok(()));
    }
    for wrong in [
        format!("curl -LO {url}/v0.0.1/capslint-{VERSION}-aarch64-apple-darwin.tar.gz"),
        format!("curl -LO {url}/latest/capslint-{VERSION}-aarch64-apple-darwin.tar.gz"),
        "tar -xzf capslint-0.0.1-aarch64-apple-darwin.tar.gz".to_string(),
        format!("tar -xzf capslint-{VERSION}-riscv64gc-unknown-linux-gnu.tar.gz"),
        format!("tar -xzf capslint-{VERSION}-x86_64-apple-darwin.zip"),
    ] {
        assert!(check_archive(&words(&wrong), &wrong, &targets).is_err(), "`{wrong}` must be refused");
    }
}
