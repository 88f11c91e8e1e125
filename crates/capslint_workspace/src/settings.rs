//! The resolved settings of a run: configuration file and command line merged, rules selected.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::config::{ConfigFile, DEFAULT_GPU_RESOURCE, Options};
use crate::confine::Confinement;
use capslint_diagnostics::registry::{Rule, Severity};
use capslint_diagnostics::selection::{RuleSet, UnknownSelector, resolve_selectors};

/// The thread count the Python fixes write unless `fix-thread-count` says otherwise: ADR-0096's safe
/// default, one thread per process.
pub const DEFAULT_FIX_THREAD_COUNT: &str = "1";

/// Paths skipped by default, as ruff does: virtual environments, caches, build output, VCS folders.
pub const DEFAULT_EXCLUDES: &[&str] = &[
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
];

/// What the command line says, on top of the configuration file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--select`.
    pub select: Option<Vec<String>>,
    /// `--extend-select`.
    pub extend_select: Vec<String>,
    /// `--ignore`.
    pub ignore: Vec<String>,
    /// `--strict`.
    pub strict: bool,
    /// `--no-prefilter` (for testing that the prefilter is exact).
    pub no_prefilter: bool,
    /// `--fix` (`Some(true)`) or `--no-fix` (`Some(false)`).
    pub fix: Option<bool>,
    /// `--unsafe-fixes` or `--no-unsafe-fixes`.
    pub unsafe_fixes: Option<bool>,
    /// Where the run may read: the roots of the paths named ([`Confinement::of_paths`]); `None` for the
    /// root of the working directory.
    pub confinement: Option<Arc<Confinement>>,
}

/// Which containers the thread-cap rules check (the `[containers]` table).
#[derive(Debug, Clone)]
pub struct ContainerSettings {
    /// Images always checked.
    pub compute_images: Option<GlobSet>,
    /// Images never checked.
    pub skip_images: Option<GlobSet>,
    /// Container names always checked.
    pub compute_containers: Option<GlobSet>,
    /// Container names never checked.
    pub skip_containers: Option<GlobSet>,
    /// Whether the built-in list of infrastructure images applies.
    pub builtin_infrastructure: bool,
}

/// GPU tenancy settings.
#[derive(Debug, Clone)]
pub struct GpuSettings {
    /// The GPU extended resource.
    pub resource: String,
    /// The VRAM extended resource; CAP208 runs only when set.
    pub memory_resource: Option<String>,
    /// The advertised VRAM capacity; CAP209 runs only when set.
    pub memory_capacity: Option<u64>,
}

/// Everything a check needs to know.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The rules that run.
    pub rules: RuleSet,
    /// Report unknown provenance.
    pub strict: bool,
    /// Functions that return a bound derived from the pod's CPU limit.
    pub cap_helpers: Vec<String>,
    /// Whether `check` applies fixes (config `fix`, `--fix` / `--no-fix`).
    pub fix: bool,
    /// Whether unsafe fixes are applied too (config `unsafe-fixes`, `--unsafe-fixes` / `--no-unsafe-fixes`).
    pub unsafe_fixes: bool,
    /// The expression the Python fixes write as a thread count (config `fix-thread-count`, default `1`).
    pub fix_thread_count: String,
    /// The thread-cap variables required in manifests and recognised as caps in Python.
    pub thread_caps: Vec<String>,
    /// The Downward API variable of `capslint runtime` / `exec`.
    pub limit_env: Option<String>,
    /// Where absolute `pod_template_file` paths of DAGs are looked up (`[airflow] template-roots`,
    /// absolute).
    pub template_roots: Vec<PathBuf>,
    /// GPU settings.
    pub gpu: GpuSettings,
    /// Which containers the thread-cap rules check.
    pub containers: ContainerSettings,
    /// Whether the text prefilter may skip files.
    pub prefilter: bool,
    /// The directory relative globs are anchored at (absolute).
    pub root: PathBuf,
    /// Where files named by the checked files (kustomize bases, pod templates, imported modules) may be
    /// read: the run's roots, the same for every file of a run.
    pub confinement: Arc<Confinement>,
    /// The directory relative paths of checked files are relative to.
    cwd: PathBuf,
    severities: Vec<(Rule, Severity)>,
    per_file_ignores: Vec<(GlobSet, RuleSet)>,
    exclude: GlobSet,
    /// The exclude patterns when every one is a plain name (`.git`, `node_modules`, the defaults): then a
    /// path is excluded exactly when its last component is one of them, found without glob matching.
    exclude_names: Option<rustc_hash::FxHashSet<std::ffi::OsString>>,
}

/// A selector or glob that does not make sense.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// An unknown rule selector on the command line.
    #[error(transparent)]
    Selector(#[from] UnknownSelector),
    /// `fix-thread-count` is not a Python expression.
    #[error("`fix-thread-count = {expression:?}` is not a Python expression: {reason}")]
    FixThreadCount {
        /// The text configured.
        expression: String,
        /// The parser's message.
        reason: String,
    },
    /// An invalid glob.
    #[error("invalid glob `{glob}`: {source}")]
    Glob {
        /// The pattern.
        glob: String,
        /// Why.
        source: globset::Error,
    },
}

fn glob_set<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<GlobSet, SettingsError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|source| SettingsError::Glob { glob: pattern.to_string(), source })?;
        builder.add(glob);
        if !pattern.contains('/') {
            let nested = format!("**/{pattern}");
            builder
                .add(Glob::new(&nested).map_err(|source| SettingsError::Glob { glob: pattern.to_string(), source })?);
        }
    }
    builder.build().map_err(|source| SettingsError::Glob { glob: String::new(), source })
}

fn strings(list: &Option<Vec<toml::Spanned<String>>>) -> Option<Vec<&str>> {
    list.as_ref().map(|list| list.iter().map(|item| item.get_ref().as_str()).collect())
}

impl Settings {
    /// Merges the configuration file (if any) and the command line.
    pub fn resolve(config: Option<&ConfigFile>, overrides: &Overrides, cwd: &Path) -> Result<Settings, SettingsError> {
        let default_options = Options::default();
        let options = config.map_or(&default_options, |config| &config.options);
        let root =
            config.and_then(|config| config.path.parent().map(Path::to_path_buf)).unwrap_or_else(|| cwd.to_path_buf());
        let root = crate::paths::absolute(&root, cwd);

        // As ruff does: the file's selection first, then the command line's; a `--select` starts afresh.
        let mut rules = match strings(&options.select) {
            Some(select) => resolve_selectors(select)?,
            None => RuleSet::defaults(),
        };
        rules = rules.union(resolve_selectors(strings(&options.extend_select).unwrap_or_default())?);
        rules = rules.subtract(resolve_selectors(strings(&options.ignore).unwrap_or_default())?);
        if let Some(select) = &overrides.select {
            rules = resolve_selectors(select.iter().map(String::as_str))?;
        }
        rules = rules.union(resolve_selectors(overrides.extend_select.iter().map(String::as_str))?);
        rules = rules.subtract(resolve_selectors(overrides.ignore.iter().map(String::as_str))?);

        let mut per_file_ignores = Vec::new();
        for (pattern, selectors) in options.per_file_ignores.iter().flatten() {
            let set = resolve_selectors(selectors.iter().map(|selector| selector.get_ref().as_str()))?;
            per_file_ignores.push((glob_set([pattern.as_str()])?, set));
        }
        let excludes: Vec<&str> = match &options.exclude {
            Some(exclude) => exclude.iter().map(String::as_str).collect(),
            None => DEFAULT_EXCLUDES.to_vec(),
        };
        let extend: Vec<&str> = options.extend_exclude.iter().flatten().map(String::as_str).collect();
        let patterns: Vec<&str> = excludes.into_iter().chain(extend).collect();
        let exclude = glob_set(patterns.iter().copied())?;
        let exclude_names = patterns
            .iter()
            .all(|pattern| !pattern.is_empty() && !pattern.contains(['/', '\\', '*', '?', '[', ']', '{', '}', '!']))
            .then(|| patterns.iter().map(std::ffi::OsString::from).collect());

        let severities = options
            .severity
            .iter()
            .flatten()
            .filter_map(|(code, severity)| Rule::from_code_or_name(code.get_ref()).map(|rule| (rule, *severity)))
            .collect();
        let gpu = options.gpu.clone().unwrap_or_default();
        let containers = options.containers.clone().unwrap_or_default();
        let image_globs = |list: &Option<Vec<String>>| -> Result<Option<GlobSet>, SettingsError> {
            match list.as_deref() {
                None | Some([]) => Ok(None),
                Some(patterns) => {
                    let mut builder = GlobSetBuilder::new();
                    for pattern in patterns {
                        builder.add(
                            Glob::new(pattern)
                                .map_err(|source| SettingsError::Glob { glob: pattern.clone(), source })?,
                        );
                    }
                    builder.build().map(Some).map_err(|source| SettingsError::Glob { glob: String::new(), source })
                }
            }
        };
        let containers = ContainerSettings {
            compute_images: image_globs(&containers.compute_images)?,
            skip_images: image_globs(&containers.skip_images)?,
            compute_containers: image_globs(&containers.compute_containers)?,
            skip_containers: image_globs(&containers.skip_containers)?,
            builtin_infrastructure: containers.builtin_infrastructure.unwrap_or(true),
        };
        let fix_thread_count = options
            .fix_thread_count
            .as_ref()
            .map_or_else(|| DEFAULT_FIX_THREAD_COUNT.to_string(), |expression| expression.get_ref().trim().to_string());
        if let Err(error) = ruff_python_parser::parse_expression(&fix_thread_count) {
            return Err(SettingsError::FixThreadCount { expression: fix_thread_count, reason: error.to_string() });
        }
        Ok(Settings {
            rules,
            strict: overrides.strict || options.strict.unwrap_or(false),
            cap_helpers: options.cap_helpers.clone().unwrap_or_default(),
            fix: overrides.fix.or(options.fix).unwrap_or(false),
            unsafe_fixes: overrides.unsafe_fixes.or(options.unsafe_fixes).unwrap_or(false),
            fix_thread_count,
            thread_caps: options
                .thread_caps
                .clone()
                .unwrap_or_else(|| capslint_cpu::thread_variables::required_caps().map(String::from).collect()),
            limit_env: options.runtime.as_ref().and_then(|runtime| runtime.limit_env.clone()),
            template_roots: options
                .airflow
                .iter()
                .flat_map(|airflow| airflow.template_roots.iter().flatten())
                .map(|relative| crate::paths::normalize(&root.join(relative)))
                .collect(),
            containers,
            gpu: GpuSettings {
                resource: gpu.resource.unwrap_or_else(|| DEFAULT_GPU_RESOURCE.to_string()),
                memory_resource: gpu.memory_resource,
                memory_capacity: gpu.memory_capacity,
            },
            prefilter: !overrides.no_prefilter,
            root,
            confinement: overrides.confinement.clone().unwrap_or_else(|| Arc::new(Confinement::of_paths(&[], cwd))),
            cwd: cwd.to_path_buf(),
            severities,
            per_file_ignores,
            exclude,
            exclude_names,
        })
    }

    /// The severity of `rule`, as configured.
    pub fn severity(&self, rule: Rule) -> Severity {
        self.severities
            .iter()
            .find(|(configured, _)| *configured == rule)
            .map_or(rule.default_severity(), |(_, severity)| *severity)
    }

    /// The rules that run on `path` (the selection minus its per-file ignores).
    pub fn rules_for(&self, path: &Path) -> RuleSet {
        if self.per_file_ignores.is_empty() {
            return self.rules;
        }
        let absolute = crate::paths::absolute(path, &self.cwd);
        let relative = absolute.strip_prefix(&self.root).unwrap_or(path);
        self.per_file_ignores
            .iter()
            .filter(|(globs, _)| globs.is_match(relative) || globs.is_match(path))
            .fold(self.rules, |rules, (_, ignored)| rules.subtract(*ignored))
    }

    /// Whether `path` or a directory above it (below the configuration's directory) is excluded: what
    /// `--force-exclude` asks of a file named on the command line.
    pub fn is_excluded_with_ancestors(&self, path: &Path) -> bool {
        let absolute = crate::paths::absolute(path, &self.cwd);
        absolute
            .ancestors()
            .take_while(|ancestor| ancestor.starts_with(&self.root) && *ancestor != self.root)
            .any(|ancestor| self.is_excluded(ancestor))
    }

    /// The directory relative paths of checked files are relative to.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Whether `path` is excluded from discovery.
    pub fn is_excluded(&self, path: &Path) -> bool {
        if let Some(names) = &self.exclude_names {
            // `name` and `**/name` match exactly the paths whose last component is `name`.
            return path.file_name().is_some_and(|name| names.contains(name));
        }
        let absolute = crate::paths::absolute(path, &self.cwd);
        let relative = absolute.strip_prefix(&self.root).unwrap_or(path);
        self.exclude.is_match(relative) || path.file_name().is_some_and(|name| self.exclude.is_match(Path::new(name)))
    }
}

/// Where a run's settings come from.
#[derive(Debug, Clone)]
pub enum ConfigSource {
    /// The nearest configuration file to each checked file (ruff's hierarchical discovery).
    Hierarchical,
    /// One file for everything (`--config PATH`).
    Explicit(Box<ConfigFile>),
    /// No file at all (`--isolated`).
    Isolated,
}

/// A problem while resolving settings: a bad configuration file or a bad selector.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ResolveError {
    /// A configuration file is invalid.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A selector or glob is invalid.
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

/// Resolves the settings that apply to each file, caching per directory.
#[derive(Debug)]
pub struct SettingsResolver {
    source: ConfigSource,
    overrides: Overrides,
    cwd: PathBuf,
    cache: std::sync::Mutex<std::collections::HashMap<PathBuf, Option<Arc<Settings>>>>,
    default: Arc<Settings>,
}

impl SettingsResolver {
    /// A resolver; fails when the configuration that applies to `cwd` is invalid.
    pub fn new(source: ConfigSource, mut overrides: Overrides, cwd: PathBuf) -> Result<Self, ResolveError> {
        // One confinement for every file of the run.
        overrides.confinement.get_or_insert_with(|| Arc::new(Confinement::of_paths(&[], &cwd)));
        let default = match &source {
            ConfigSource::Explicit(config) => Settings::resolve(Some(config), &overrides, &cwd)?,
            ConfigSource::Isolated => Settings::resolve(None, &overrides, &cwd)?,
            ConfigSource::Hierarchical => {
                let config = crate::config::discover(&cwd)?;
                Settings::resolve(config.as_ref(), &overrides, &cwd)?
            }
        };
        Ok(SettingsResolver {
            source,
            overrides,
            cwd,
            cache: std::sync::Mutex::new(std::collections::HashMap::new()),
            default: Arc::new(default),
        })
    }

    /// Where the run may read.
    pub fn confinement(&self) -> Arc<Confinement> {
        Arc::clone(self.overrides.confinement.as_ref().expect("set by `new`"))
    }

    /// The settings of the working directory: used for stdin and for checks across files.
    pub fn root(&self) -> Arc<Settings> {
        Arc::clone(&self.default)
    }

    /// The settings that apply to `path`: those of the nearest configuration file among its ancestors.
    pub fn for_path(&self, path: &Path) -> Result<Arc<Settings>, ResolveError> {
        if path.is_dir() { self.for_dir(path) } else { self.for_file(path) }
    }

    /// The settings that apply to the file `path` (no file system access beyond the configuration search).
    pub fn for_file(&self, path: &Path) -> Result<Arc<Settings>, ResolveError> {
        let absolute = self.absolute(path);
        match absolute.parent() {
            Some(parent) => self.for_dir(parent),
            None => self.for_dir(&absolute),
        }
    }

    /// The settings that apply in the directory `path`.
    pub fn for_dir(&self, path: &Path) -> Result<Arc<Settings>, ResolveError> {
        if !matches!(self.source, ConfigSource::Hierarchical) {
            return Ok(self.root());
        }
        let directory = self.absolute(path);
        self.for_directory(&directory).map(|settings| settings.unwrap_or_else(|| self.root()))
    }

    fn absolute(&self, path: &Path) -> PathBuf {
        if path.is_absolute() { path.to_path_buf() } else { self.cwd.join(path) }
    }

    /// `Some` when `directory` or an ancestor has a configuration file.
    fn for_directory(&self, directory: &Path) -> Result<Option<Arc<Settings>>, ResolveError> {
        if let Some(cached) = self.cache.lock().expect("settings cache").get(directory) {
            return Ok(cached.clone());
        }
        let mut found = None;
        for name in crate::config::CONFIG_FILE_NAMES {
            let candidate = directory.join(name);
            if candidate.is_file()
                && let Some(config) = ConfigFile::load(&candidate)?
            {
                found = Some(Arc::new(Settings::resolve(Some(&config), &self.overrides, &self.cwd)?));
                break;
            }
        }
        let resolved = match found {
            Some(settings) => Some(settings),
            // A configuration above a repository's top level is not the repository's, as git's ignore
            // files above it are not.
            None if crate::config::is_work_tree_top(directory) => None,
            None => match directory.parent() {
                Some(parent) => self.for_directory(parent)?,
                None => None,
            },
        };
        self.cache.lock().expect("settings cache").insert(directory.to_path_buf(), resolved.clone());
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the globs alone say, without the fast path of plain names.
    fn by_globs(settings: &Settings, path: &Path) -> bool {
        let absolute = crate::paths::absolute(path, &settings.cwd);
        let relative = absolute.strip_prefix(&settings.root).unwrap_or(path);
        settings.exclude.is_match(relative)
            || path.file_name().is_some_and(|name| settings.exclude.is_match(Path::new(name)))
    }

    #[test]
    fn plain_names_are_excluded_as_their_globs_would_be() {
        let cwd = Path::new("/repo");
        let settings = Settings::resolve(None, &Overrides::default(), cwd).unwrap();
        assert!(settings.exclude_names.is_some(), "the default excludes are plain names");
        for path in [
            ".git",
            "/repo/.git",
            "/repo/pkg/node_modules",
            "pkg/.venv",
            "pkg/venv",
            "pkg/venv.py",
            "pkg/gitx",
            "/elsewhere/build",
            "/repo/src/train.py",
            "site-packages",
            "/repo/a/site-packages/b",
        ] {
            let path = Path::new(path);
            assert_eq!(settings.is_excluded(path), by_globs(&settings, path), "{}", path.display());
        }
        assert!(settings.is_excluded(Path::new("/repo/pkg/node_modules")));
        assert!(!settings.is_excluded(Path::new("/repo/pkg/venv.py")));
    }
}
