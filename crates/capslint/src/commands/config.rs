//! `capslint config [PATH]`: the configuration that applies to a file or directory, resolved (defaults
//! filled in, rule selection computed) and printed as TOML, with the file it came from.
//!
//! The output is itself a valid configuration: passed to `--config`, it selects the same rules with the
//! same severities and options.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;

use capslint_diagnostics::registry::Rule;
use capslint_workspace::config::ConfigFile;

use crate::commands::settings_args::ConfigChoice;
use capslint_workspace::settings::{DEFAULT_EXCLUDES, Overrides, Settings};

/// Arguments of `capslint config`.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// The file or directory whose configuration to show.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// `--config` and `--isolated` (which shows the defaults).
    #[command(flatten)]
    pub settings: ConfigChoice,
}

/// The resolved configuration, in the order a reader expects it (values before tables, as TOML needs).
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
struct Effective {
    select: Vec<&'static str>,
    strict: bool,
    cap_helpers: Vec<String>,
    thread_caps: Vec<String>,
    exclude: Vec<String>,
    per_file_ignores: BTreeMap<String, Vec<String>>,
    gpu: Gpu,
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime: Option<Runtime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    airflow: Option<Airflow>,
    severity: BTreeMap<&'static str, &'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
struct Gpu {
    resource: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_resource: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_capacity: Option<u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
struct Runtime {
    limit_env: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
struct Airflow {
    template_roots: Vec<String>,
}

/// The resolved configuration of `config` (none: the defaults) as TOML.
fn effective(config: Option<&ConfigFile>, settings: &Settings) -> Effective {
    let options = config.map(|config| &config.options);
    let raw = |list: Option<&Vec<String>>| list.cloned().unwrap_or_default();
    let mut exclude = match options.and_then(|options| options.exclude.as_ref()) {
        Some(exclude) => exclude.clone(),
        None => DEFAULT_EXCLUDES.iter().map(|pattern| (*pattern).to_string()).collect(),
    };
    exclude.extend(raw(options.and_then(|options| options.extend_exclude.as_ref())));
    let per_file_ignores = options
        .and_then(|options| options.per_file_ignores.as_ref())
        .map(|map| {
            map.iter()
                .map(|(glob, selectors)| {
                    (glob.clone(), selectors.iter().map(|selector| selector.get_ref().clone()).collect())
                })
                .collect()
        })
        .unwrap_or_default();
    Effective {
        select: settings.rules.iter().map(Rule::code).collect(),
        strict: settings.strict,
        cap_helpers: settings.cap_helpers.clone(),
        thread_caps: settings.thread_caps.clone(),
        exclude,
        per_file_ignores,
        gpu: Gpu {
            resource: settings.gpu.resource.clone(),
            memory_resource: settings.gpu.memory_resource.clone(),
            memory_capacity: settings.gpu.memory_capacity,
        },
        runtime: settings.limit_env.clone().map(|limit_env| Runtime { limit_env }),
        airflow: options
            .and_then(|options| options.airflow.as_ref())
            .and_then(|airflow| airflow.template_roots.clone())
            .map(|template_roots| Airflow { template_roots }),
        severity: settings.rules.iter().map(|rule| (rule.code(), settings.severity(rule).as_str())).collect(),
    }
}

/// Where the configuration of `path` comes from: `Ok(None)` means the defaults.
pub(crate) fn find(args: &ConfigArgs, path: &Path) -> Result<Option<ConfigFile>, ExitCode> {
    let directory = if path.is_dir() { path } else { path.parent().unwrap_or(Path::new(".")) };
    args.settings.file_for(directory).map_err(|error| error.print())
}

/// Renders the header comment and the TOML body.
pub fn render(path: &Path, config: Option<&ConfigFile>, settings: &Settings, cwd: &Path, isolated: bool) -> String {
    let shown = |path: &Path| {
        let name = capslint_workspace::discover::display_name(path, cwd);
        if name.is_empty() { ".".to_string() } else { name }
    };
    let source = match config {
        Some(config) => shown(&config.path),
        None if isolated => "none (--isolated): the defaults".to_string(),
        None => "none found: the defaults".to_string(),
    };
    let mut out = format!("# Configuration for {}\n# Source: {source}\n", shown(path));
    if path.is_file() {
        let rules = settings.rules_for(path);
        if rules != settings.rules {
            let codes: Vec<&str> = rules.iter().map(Rule::code).collect();
            out.push_str(&format!("# After per-file-ignores, this file is checked for: {}\n", codes.join(", ")));
        }
    }
    out.push('\n');
    out.push_str(&toml::to_string_pretty(&effective(config, settings)).expect("configuration serializes"));
    out
}

/// Runs `capslint config`.
pub fn run(args: &ConfigArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let path = if args.path.is_absolute() { args.path.clone() } else { cwd.join(&args.path) };
    if !path.exists() {
        eprintln!("error: {}: no such file or directory", args.path.display());
        return ExitCode::from(2);
    }
    let config = match find(args, &path) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let settings = match Settings::resolve(config.as_ref(), &Overrides::default(), &cwd) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    print!("{}", render(&path, config.as_ref(), &settings, &cwd, args.settings.isolated));
    ExitCode::SUCCESS
}
