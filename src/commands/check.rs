//! `capslint check`: discover, check in parallel, report, and map the outcome to an exit code.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::ConfigFile;
use crate::discover::{self, FileKind};
use crate::lint::{self, Input};
use crate::registry::Severity;
use crate::report::{self, OutputFormat, Style};
use crate::settings::{ConfigSource, Overrides, SettingsResolver};

/// Arguments of `capslint check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Files or directories to check; `-` reads standard input.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How to print findings.
    #[arg(long, value_enum, default_value_t = OutputFormat::Full)]
    pub output_format: OutputFormat,
    /// Rules to run instead of the configured ones (codes, prefixes such as `CAP1`, names, `ALL`).
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Option<Vec<String>>,
    /// Rules to run in addition to the selection.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub extend_select: Vec<String>,
    /// Rules not to run.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Vec<String>,
    /// Report values of unknown provenance (function parameters, `**kwargs`) as findings.
    #[arg(long)]
    pub strict: bool,
    /// Exit with 0 even when there are findings.
    #[arg(long)]
    pub exit_zero: bool,
    /// The file name to show (and to pick the file kind from) when reading standard input.
    #[arg(long, value_name = "NAME")]
    pub stdin_filename: Option<PathBuf>,
    /// Use this configuration file instead of searching for one.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Ignore every configuration file.
    #[arg(long, conflicts_with = "config")]
    pub isolated: bool,
    /// Apply `exclude` patterns to files named on the command line too (for pre-commit).
    #[arg(long)]
    pub force_exclude: bool,
    /// Parse every file, even those that contain none of the words a rule needs.
    #[arg(long, hide = true)]
    pub no_prefilter: bool,
}

fn config_source(args: &CheckArgs) -> Result<ConfigSource, ExitCode> {
    if args.isolated {
        return Ok(ConfigSource::Isolated);
    }
    let Some(path) = &args.config else { return Ok(ConfigSource::Hierarchical) };
    match ConfigFile::load(path) {
        Ok(Some(config)) => Ok(ConfigSource::Explicit(Box::new(config))),
        Ok(None) => {
            eprintln!("error: {}: no [tool.capslint] table", path.display());
            Err(ExitCode::from(2))
        }
        Err(error) => {
            eprint!("{}", render_error(&error));
            Err(ExitCode::from(2))
        }
    }
}

/// Renders an error that carries source spans (a configuration file) as a graphical report on stderr.
pub fn render_error(error: &dyn miette::Diagnostic) -> String {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let theme = if color { miette::GraphicalTheme::unicode() } else { miette::GraphicalTheme::unicode_nocolor() };
    let mut out = String::new();
    let handler = miette::GraphicalReportHandler::new_themed(theme).with_links(false).with_width(120);
    if handler.render_report(&mut out, error).is_err() {
        out = format!("error: {error}\n");
    }
    out
}

/// Runs `capslint check`.
pub fn run(args: &CheckArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let source = match config_source(args) {
        Ok(source) => source,
        Err(code) => return code,
    };
    let overrides = Overrides {
        select: args.select.clone(),
        extend_select: args.extend_select.clone(),
        ignore: args.ignore.clone(),
        strict: args.strict,
        no_prefilter: args.no_prefilter,
    };
    let resolver = match SettingsResolver::new(source, overrides, cwd.clone()) {
        Ok(resolver) => resolver,
        Err(error) => {
            eprint!("{}", render_error(&error));
            return ExitCode::from(2);
        }
    };

    let mut inputs = Vec::new();
    let (stdin_paths, file_paths): (Vec<PathBuf>, Vec<PathBuf>) =
        args.paths.iter().cloned().partition(|path| path.as_os_str() == "-");
    if !stdin_paths.is_empty() {
        let mut text = String::new();
        if let Err(error) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("error: cannot read standard input: {error}");
            return ExitCode::from(2);
        }
        let name = args.stdin_filename.clone().unwrap_or_else(|| PathBuf::from("-"));
        let kind = FileKind::of(&name).unwrap_or(FileKind::Python);
        let settings = match &args.stdin_filename {
            Some(name) => match resolver.for_path(name) {
                Ok(settings) => settings,
                Err(error) => {
                    eprint!("{}", render_error(&error));
                    return ExitCode::from(2);
                }
            },
            None => resolver.root(),
        };
        inputs.push(Input {
            display_name: discover::display_name(&name, &cwd),
            path: name,
            kind,
            text: Some(text),
            settings,
        });
    }
    if !file_paths.is_empty() {
        let discovered = match discover::discover(&file_paths, &resolver, args.force_exclude) {
            Ok(discovered) => discovered,
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::from(2);
            }
        };
        for warning in &discovered.warnings {
            eprintln!("warning: {warning}");
        }
        if let Some(error) = discovered.config_errors.first() {
            eprint!("{}", render_error(error));
            return ExitCode::from(2);
        }
        for (path, kind) in discovered.files {
            let settings = match resolver.for_path(&path) {
                Ok(settings) => settings,
                Err(error) => {
                    eprint!("{}", render_error(&error));
                    return ExitCode::from(2);
                }
            };
            inputs.push(Input { display_name: discover::display_name(&path, &cwd), path, kind, text: None, settings });
        }
    }

    let run = lint::check_inputs(inputs);
    for notice in &run.notices {
        eprintln!("note: {notice}");
    }
    for error in &run.errors {
        eprintln!("error: {error}");
    }
    let stdout = std::io::stdout();
    let style = Style {
        color: stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty()),
        ..Style::PLAIN
    };
    let mut out = report::render(args.output_format, &run.diagnostics, style);
    if matches!(args.output_format, OutputFormat::Full | OutputFormat::Concise) {
        out.push_str(&summary(&run));
    }
    let mut lock = stdout.lock();
    if lock.write_all(out.as_bytes()).and_then(|()| lock.flush()).is_err() {
        return ExitCode::from(2);
    }
    if !run.errors.is_empty() {
        ExitCode::from(2)
    } else if !run.diagnostics.is_empty() && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn summary(run: &lint::RunResult) -> String {
    let errors = run.diagnostics.iter().filter(|diagnostic| diagnostic.severity == Severity::Error).count();
    let warnings = run.diagnostics.len() - errors;
    let files = format!("{} file{}", run.files_checked, if run.files_checked == 1 { "" } else { "s" });
    if run.diagnostics.is_empty() {
        format!("All checks passed ({files} checked).\n")
    } else {
        let plural = |count: usize, word: &str| format!("{count} {word}{}", if count == 1 { "" } else { "s" });
        format!(
            "Found {} ({}, {}) in {files}.\n",
            plural(run.diagnostics.len(), "finding"),
            plural(errors, "error"),
            plural(warnings, "warning")
        )
    }
}
