//! The arguments that choose settings, shared by the commands that lint: where the configuration comes
//! from (`--config`, `--isolated`) and the rule selection over it (`--select`, `--extend-select`,
//! `--ignore`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use capslint_workspace::config::{self, ConfigFile};
use capslint_workspace::settings::{ConfigSource, Overrides};

use crate::error_report::render_error;

/// `--config PATH` or `--isolated`: where the configuration comes from.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConfigChoice {
    /// Use this configuration file instead of searching for one.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Ignore every configuration file.
    #[arg(long, conflicts_with = "config")]
    pub isolated: bool,
}

/// A configuration file that cannot be used.
#[derive(Debug)]
pub enum ConfigError {
    /// `--config` names a file without a `[tool.capslint]` table.
    NoTable(PathBuf),
    /// The file cannot be read or is invalid: the report, rendered.
    Invalid(String),
}

impl ConfigError {
    /// Prints the error as the commands print a configuration error, and gives their exit code (2).
    pub fn print(&self) -> ExitCode {
        match self {
            ConfigError::NoTable(_) => eprintln!("error: {self}"),
            ConfigError::Invalid(report) => eprint!("{report}"),
        }
        ExitCode::from(2)
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::NoTable(path) => write!(formatter, "{}: no [tool.capslint] table", path.display()),
            ConfigError::Invalid(report) => formatter.write_str(report),
        }
    }
}

impl ConfigChoice {
    /// The file `--config` names, loaded; `None` without `--config` or with `--isolated`.
    pub fn explicit(&self) -> Result<Option<ConfigFile>, ConfigError> {
        let Some(path) = self.config.as_ref().filter(|_| !self.isolated) else { return Ok(None) };
        match ConfigFile::load(path) {
            Ok(Some(config)) => Ok(Some(config)),
            Ok(None) => Err(ConfigError::NoTable(path.clone())),
            Err(error) => Err(ConfigError::Invalid(render_error(&error))),
        }
    }

    /// Where the settings of a run over files come from: none with `--isolated`, the `--config` file,
    /// else each file's nearest configuration.
    pub fn source(&self) -> Result<ConfigSource, ConfigError> {
        if self.isolated {
            return Ok(ConfigSource::Isolated);
        }
        Ok(self.explicit()?.map_or(ConfigSource::Hierarchical, |config| ConfigSource::Explicit(Box::new(config))))
    }

    /// The one configuration file that applies to `directory`: none with `--isolated`, the `--config`
    /// file, else the nearest one above it.
    pub fn file_for(&self, directory: &Path) -> Result<Option<ConfigFile>, ConfigError> {
        if self.isolated || self.config.is_some() {
            return self.explicit();
        }
        config::discover(directory).map_err(|error| ConfigError::Invalid(render_error(&error)))
    }
}

/// `--select`, `--extend-select`, `--ignore`: the rules to run, over the configured selection.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RuleSelection {
    /// Rules to run instead of the configured ones (codes, prefixes such as `CAP1`, names, `ALL`).
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Option<Vec<String>>,
    /// Rules to run in addition to the selection.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub extend_select: Vec<String>,
    /// Rules not to run.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Vec<String>,
}

impl RuleSelection {
    /// The selection as settings overrides, nothing else overridden.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            select: self.select.clone(),
            extend_select: self.extend_select.clone(),
            ignore: self.ignore.clone(),
            ..Overrides::default()
        }
    }
}
