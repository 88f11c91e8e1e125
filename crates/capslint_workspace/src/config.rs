//! Configuration: `capslint.toml`, `.capslint.toml` or `[tool.capslint]` in `pyproject.toml`.
//!
//! Every key lives here. Files are validated strictly: an unknown key, a wrong type or an unknown rule
//! code is an error with a span into the file (exit code 2).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use miette::{NamedSource, SourceSpan};
use serde::Deserialize;
use toml::Spanned;

use capslint_diagnostics::registry::{Rule, Severity};
use capslint_diagnostics::selection::resolve_selector;

/// The file names searched, in order of preference within one directory.
pub const CONFIG_FILE_NAMES: [&str; 3] = ["capslint.toml", ".capslint.toml", "pyproject.toml"];

/// The GPU resource name checked by default.
pub const DEFAULT_GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Every option a configuration file can set. Absent keys inherit the defaults.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Rules to run instead of the defaults (codes, prefixes, names or `ALL`).
    pub select: Option<Vec<Spanned<String>>>,
    /// Rules to run in addition to the selection.
    pub extend_select: Option<Vec<Spanned<String>>>,
    /// Rules never to run.
    pub ignore: Option<Vec<Spanned<String>>>,
    /// Glob pattern -> rules to ignore in matching files.
    pub per_file_ignores: Option<BTreeMap<String, Vec<Spanned<String>>>>,
    /// Glob patterns of paths never checked (replaces the defaults).
    pub exclude: Option<Vec<String>>,
    /// Glob patterns of paths never checked, in addition to `exclude`.
    pub extend_exclude: Option<Vec<String>>,
    /// Report values of unknown provenance (parameters, `**kwargs`) as findings.
    pub strict: Option<bool>,
    /// Fully qualified functions that return a bound derived from the pod's CPU limit.
    pub cap_helpers: Option<Vec<String>>,
    /// Apply safe fixes without `--fix` (`--no-fix` turns it off again).
    pub fix: Option<bool>,
    /// Let `--fix` apply unsafe fixes too.
    pub unsafe_fixes: Option<bool>,
    /// The Python expression the CAP101 and CAP102 fixes write as a thread count (default `1`).
    pub fix_thread_count: Option<Spanned<String>>,
    /// The variables a container must set (CAP203) and that count as cap reads in Python.
    pub thread_caps: Option<Vec<String>>,
    /// GPU tenancy settings (CAP208, CAP209).
    pub gpu: Option<GpuOptions>,
    /// Which containers the thread-cap rules check.
    pub containers: Option<ContainerOptions>,
    /// Settings of `capslint runtime` and `capslint exec`.
    pub runtime: Option<RuntimeOptions>,
    /// Where the repository keeps the files Airflow DAGs name.
    pub airflow: Option<AirflowOptions>,
    /// Settings of `capslint admission`.
    pub admission: Option<AdmissionOptions>,
    /// Rule code -> severity overrides.
    pub severity: Option<BTreeMap<Spanned<String>, Severity>>,
}

/// The `[gpu]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GpuOptions {
    /// The GPU extended resource (default `nvidia.com/gpu`).
    pub resource: Option<String>,
    /// The VRAM extended resource, e.g. `example.com/gpumem`; CAP208 runs only when it is set.
    pub memory_resource: Option<String>,
    /// The VRAM capacity advertised per node, in units of `memory-resource`; CAP209 runs only when set.
    pub memory_capacity: Option<u64>,
}

/// The `[containers]` table: which containers the thread-cap rules (CAP202, CAP203, CAP205, CAP206)
/// check. CAP201 checks every container.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ContainerOptions {
    /// Image globs of containers always checked (`"registry.example.com/ml/*"`), before anything else.
    pub compute_images: Option<Vec<String>>,
    /// Image globs of containers never checked (`"*/metrics-sidecar:*"`).
    pub skip_images: Option<Vec<String>>,
    /// Container-name globs of containers always checked (`"trainer*"`), with `compute-images`.
    pub compute_containers: Option<Vec<String>>,
    /// Container-name globs of containers never checked (`"*-sidecar"`), with `skip-images`.
    pub skip_containers: Option<Vec<String>>,
    /// Whether the built-in list of infrastructure images is used (default `true`); `false` checks every
    /// container that no glob names.
    pub builtin_infrastructure: Option<bool>,
}

/// The `[runtime]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RuntimeOptions {
    /// The Downward API variable that carries `limits.cpu`.
    pub limit_env: Option<String>,
}

/// The `[admission]` table: defaults of `capslint admission`'s options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AdmissionOptions {
    /// `deny` or `warn`.
    pub mode: Option<String>,
    /// The address to listen on (`HOST:PORT`).
    pub addr: Option<String>,
    /// The PEM certificate chain.
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key.
    pub tls_key: Option<PathBuf>,
    /// Namespaces whose objects are admitted unchecked and unchanged.
    pub exclude_namespaces: Option<Vec<String>>,
    /// Namespace -> `deny`, `warn` or `off`, over `mode`.
    pub namespace_modes: Option<BTreeMap<String, String>>,
}

/// The `[airflow]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AirflowOptions {
    /// Directories of the repository (relative to the configuration file) that hold the pod templates a
    /// DAG names by an absolute path of the Airflow worker (`pod_template_file="/opt/airflow/pod.yaml"`).
    pub template_roots: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyprojectTool>,
}

#[derive(Deserialize)]
struct PyprojectTool {
    capslint: Option<Options>,
}

/// A configuration file that was found and parsed.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// What it sets.
    pub options: Options,
}

/// A configuration problem, rendered by miette with the offending span.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read configuration file {path}: {source}")]
    #[diagnostic(code("capslint::config"))]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid, or a key or value is wrong.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Invalid(Box<InvalidConfig>),
}

/// A configuration file with a wrong key or value, and where.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("invalid configuration in {path}: {message}")]
#[diagnostic(code("capslint::config"), help("{help}"))]
pub struct InvalidConfig {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: String,
    /// The file's text.
    #[source_code]
    pub source_code: NamedSource<String>,
    /// The offending span.
    #[label("{label}")]
    pub span: Option<SourceSpan>,
    /// The label under the span.
    pub label: String,
}

const VALID_KEYS_HELP: &str = "valid keys: select, extend-select, ignore, per-file-ignores, exclude, extend-exclude, \
strict, cap-helpers, thread-caps, [gpu] resource / memory-resource / memory-capacity, [containers] compute-images / \
skip-images / compute-containers / skip-containers / builtin-infrastructure, [runtime] limit-env, [airflow] \
template-roots, [admission] mode / addr / tls-cert / tls-key / exclude-namespaces / namespace-modes, [severity]";

impl ConfigFile {
    /// Reads and validates a configuration file. A `pyproject.toml` without `[tool.capslint]` yields `None`.
    pub fn load(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: path.display().to_string(), source })?;
        Self::parse(path, text)
    }

    /// Parses the text of a configuration file named `path`.
    pub fn parse(path: &Path, text: String) -> Result<Option<ConfigFile>, ConfigError> {
        let is_pyproject = path.file_name().is_some_and(|name| name == "pyproject.toml");
        let invalid = |message: String, span: Option<std::ops::Range<usize>>, label: &str, help: &str| {
            ConfigError::Invalid(Box::new(InvalidConfig {
                path: path.display().to_string(),
                message,
                help: help.to_string(),
                source_code: NamedSource::new(path.display().to_string(), text.clone()),
                span: span.map(SourceSpan::from),
                label: label.to_string(),
            }))
        };
        let parsed = if is_pyproject {
            toml::from_str::<Pyproject>(&text).map(|pyproject| pyproject.tool.and_then(|tool| tool.capslint))
        } else {
            toml::from_str::<Options>(&text).map(Some)
        };
        let options = match parsed {
            Ok(Some(options)) => options,
            Ok(None) => return Ok(None),
            Err(error) => {
                let message = error.message().to_string();
                let (label, help) = if message.starts_with("unknown field") {
                    ("unknown key", VALID_KEYS_HELP)
                } else {
                    ("wrong type or value", VALUE_HELP)
                };
                return Err(invalid(message, error.span(), label, help));
            }
        };
        if let Some(expression) = &options.fix_thread_count
            && let Err(message) = check_thread_count(expression.get_ref())
        {
            return Err(invalid(
                message,
                Some(expression.span()),
                "not a thread count the fixes may write",
                "write a positive integer, or an expression that reads the pod's CPU limit",
            ));
        }
        validate(&options).map_err(|(message, span)| {
            invalid(message, Some(span), "not a rule", "run `capslint rule --all` for the list of rules")
        })?;
        validate_globs(&text, is_pyproject)
            .map_err(|(message, span)| invalid(message, Some(span), "not a glob", GLOB_HELP))?;
        Ok(Some(ConfigFile { path: path.to_path_buf(), options }))
    }
}

const VALUE_HELP: &str = "`capslint config --isolated` prints every key with a value of the expected type";

const GLOB_HELP: &str = "globs use `*`, `**`, `?`, `[abc]` and `{a,b}`; escape a literal `[` as `[[]`";

/// The glob-valued keys, read a second time with their spans (unknown keys are rejected elsewhere).
#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct GlobKeys {
    exclude: Option<Vec<Spanned<String>>>,
    extend_exclude: Option<Vec<Spanned<String>>>,
    per_file_ignores: Option<BTreeMap<Spanned<String>, toml::Value>>,
}

#[derive(Deserialize)]
struct PyprojectGlobKeys {
    tool: Option<PyprojectGlobTool>,
}

#[derive(Deserialize)]
struct PyprojectGlobTool {
    capslint: Option<GlobKeys>,
}

/// Checks that every `exclude`, `extend-exclude` and `per-file-ignores` pattern is a valid glob, so a
/// bad pattern is reported with its span rather than when the first file is matched.
fn validate_globs(text: &str, is_pyproject: bool) -> Result<(), (String, std::ops::Range<usize>)> {
    let keys = if is_pyproject {
        toml::from_str::<PyprojectGlobKeys>(text).ok().and_then(|file| file.tool).and_then(|tool| tool.capslint)
    } else {
        toml::from_str::<GlobKeys>(text).ok()
    };
    let Some(keys) = keys else { return Ok(()) };
    let lists = keys.exclude.iter().chain(&keys.extend_exclude).flatten();
    let per_file = keys.per_file_ignores.iter().flat_map(|map| map.keys());
    for pattern in lists.chain(per_file) {
        if let Err(error) = globset::Glob::new(pattern.get_ref()) {
            return Err((format!("invalid glob `{}`: {}", pattern.get_ref(), error.kind()), pattern.span()));
        }
    }
    Ok(())
}

/// Checks the values serde cannot: every rule selector must name at least one rule.
fn validate(options: &Options) -> Result<(), (String, std::ops::Range<usize>)> {
    let lists = [&options.select, &options.extend_select, &options.ignore];
    let per_file = options.per_file_ignores.iter().flat_map(|map| map.values());
    for selector in lists.into_iter().flatten().chain(per_file).flatten() {
        if let Err(error) = resolve_selector(selector.get_ref()) {
            return Err((error.to_string(), selector.span()));
        }
    }
    for code in options.severity.iter().flat_map(|map| map.keys()) {
        if Rule::from_code_or_name(code.get_ref()).is_none() {
            return Err((format!("unknown rule `{}` in [severity]", code.get_ref()), code.span()));
        }
    }
    Ok(())
}

/// Whether `expression` (`fix-thread-count`) is a thread count the fixes may write as every library reads
/// one: a positive integer, or an expression evaluated at run time (a name, a call, an attribute, a
/// subscript, arithmetic). A literal that is not a positive integer is refused: `0` and negative numbers
/// mean "every core" to joblib, LightGBM or XGBoost (or make joblib raise), and a string, float, `None` or
/// boolean is not a count.
pub fn check_thread_count(expression: &str) -> Result<(), String> {
    use ruff_python_ast::{Expr, Number, UnaryOp};
    let parsed = ruff_python_parser::parse_expression(expression.trim())
        .map_err(|error| format!("`fix-thread-count` is not a Python expression: {error}"))?;
    // A count of the node's cores is what capslint exists to keep out of thread pools.
    for node_count in ["os.cpu_count", "multiprocessing.cpu_count", "psutil.cpu_count", "os.process_cpu_count"] {
        if expression.contains(node_count) {
            return Err(format!(
                "`fix-thread-count` calls `{node_count}()`, which counts the node's cores, not the pod's CPU limit: \
                 read the limit instead (e.g. `int(os.environ[\"CPU_LIMIT\"])`)"
            ));
        }
    }
    let literal = |what: &str| {
        Err(format!(
            "`fix-thread-count = {:?}` is {what}: a thread count is a positive integer (or an expression that computes one at run time)",
            expression.trim()
        ))
    };
    match parsed.expr() {
        Expr::NumberLiteral(number) => match &number.value {
            Number::Int(value) if value.as_u64().is_some_and(|value| value >= 1) => Ok(()),
            Number::Int(_) => literal("not a positive integer (0 means every core to LightGBM and XGBoost)"),
            Number::Float(_) | Number::Complex { .. } => literal("not an integer"),
        },
        Expr::UnaryOp(unary) if matches!(unary.op, UnaryOp::USub | UnaryOp::UAdd | UnaryOp::Invert | UnaryOp::Not) => {
            match unary.operand.as_ref() {
                Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => {
                    literal("a negative or constant number (negative means every core to joblib)")
                }
                _ => Ok(()),
            }
        }
        Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::FString(_) => literal("a string"),
        Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) | Expr::EllipsisLiteral(_) => literal("not a number"),
        Expr::List(_) | Expr::Tuple(_) | Expr::Dict(_) | Expr::Set(_) | Expr::Lambda(_) => literal("not a number"),
        _ => Ok(()),
    }
}

/// Finds the configuration that applies in `directory`: the nearest `capslint.toml`, `.capslint.toml` or
/// `pyproject.toml` with a `[tool.capslint]` table, searching upward, no further than the top level of the
/// git work tree that holds `directory`.
pub fn discover(directory: &Path) -> Result<Option<ConfigFile>, ConfigError> {
    for ancestor in directory.ancestors() {
        for name in CONFIG_FILE_NAMES {
            let candidate = ancestor.join(name);
            if candidate.is_file()
                && let Some(config) = ConfigFile::load(&candidate)?
            {
                return Ok(Some(config));
            }
        }
        if is_work_tree_top(ancestor) {
            break;
        }
    }
    Ok(None)
}

/// Whether `directory` is the top level of a git work tree (it holds `.git`, a directory or the file of a
/// linked work tree or submodule): configuration is not looked for above it.
pub fn is_work_tree_top(directory: &Path) -> bool {
    std::fs::symlink_metadata(directory.join(".git")).is_ok()
}

/// TOML files that configure tools, not models: capslint's own configuration and `pyproject.toml`
/// (packaging and the `[tool.*]` tables of linters and test runners, where `0` often means "automatic").
const TOOL_CONFIGURATIONS: &[&str] = &["capslint.toml", ".capslint.toml", "pyproject.toml"];

/// Whether `path` names a tool's TOML configuration rather than a model's (see [`TOOL_CONFIGURATIONS`]).
pub fn is_tool_configuration(path: &Path) -> bool {
    path.file_name().and_then(|name| name.to_str()).is_some_and(|name| TOOL_CONFIGURATIONS.contains(&name))
}
