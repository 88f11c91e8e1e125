//! The settings a document is linted with: the configuration `check` would apply to its file (the
//! nearest `capslint.toml`, `.capslint.toml` or `pyproject.toml` with a `[tool.capslint]` table), with
//! the editor's own choices on top ([`ClientOptions`], from the initialization options). Settings are
//! resolved per project root (the repository or project a file is in, as `check` confines a run) and
//! kept until a configuration file changes: the client reports it (`workspace/didChangeWatchedFiles`:
//! [`SessionSettings::invalidate`]), or its modification time or size differs from when it was read.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde::Deserialize;

use capslint_workspace::config::{CONFIG_FILE_NAMES, is_work_tree_top};
use capslint_workspace::confine::Confinement;
use capslint_workspace::settings::{ConfigSource, Overrides, Settings, SettingsResolver};

/// How many directories above a file are searched for a configuration (the resolver stops earlier, at
/// the top of a work tree).
const MAX_CONFIG_DEPTH: usize = 64;

/// The editor-only choices, from the client's `initializationOptions` (camelCase; also accepted under a
/// `settings` key, as some clients nest them).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default, rename_all = "camelCase")]
pub struct ClientOptions {
    /// Offer unsafe fixes as quick fixes and apply them in "fix all", as `--unsafe-fixes` does.
    pub unsafe_fixes: Option<bool>,
    /// Rules to run instead of the configured ones (`--select`).
    pub select: Option<Vec<String>>,
    /// Rules to run in addition (`--extend-select`).
    pub extend_select: Vec<String>,
    /// Rules not to run (`--ignore`).
    pub ignore: Vec<String>,
    /// Report values of unknown provenance (`--strict`).
    pub strict: bool,
}

impl ClientOptions {
    /// The options of `initializationOptions` (nothing, or something else: the defaults).
    pub fn from_initialization(value: Option<&serde_json::Value>) -> Self {
        let Some(value) = value else { return ClientOptions::default() };
        let value = value.get("settings").unwrap_or(value);
        serde_json::from_value(value.clone()).unwrap_or_default()
    }
}

/// When each configuration file that could apply was last changed (`None`: there is none).
type Fingerprint = Vec<(PathBuf, Option<(SystemTime, u64)>)>;

/// The settings of one project root.
struct RootSettings {
    resolver: Result<SettingsResolver, String>,
    /// The directories whose configuration was looked for, and what was found.
    directories: BTreeSet<PathBuf>,
    fingerprint: Fingerprint,
}

/// The resolved settings of every project root seen so far.
pub struct SessionSettings {
    client: ClientOptions,
    roots: HashMap<PathBuf, RootSettings>,
}

impl SessionSettings {
    /// No settings resolved yet.
    pub fn new(client: ClientOptions) -> Self {
        SessionSettings { client, roots: HashMap::new() }
    }

    /// The editor's options.
    pub fn client(&self) -> &ClientOptions {
        &self.client
    }

    /// Forgets every resolved setting: a configuration file changed.
    pub fn invalidate(&mut self) {
        self.roots.clear();
    }

    /// The project root of the file at `path`: its repository's top, the nearest directory with a
    /// project marker, or its own directory.
    pub fn root_of(path: &Path) -> PathBuf {
        let directory = path.parent().unwrap_or(path);
        Confinement::root_of(path, directory)
    }

    /// Forgets the settings of `root` when a configuration file that applies to a file seen there
    /// changed since they were resolved.
    pub fn refresh(&mut self, root: &Path) {
        let stale =
            self.roots.get(root).is_some_and(|settings| fingerprint(&settings.directories) != settings.fingerprint);
        if stale {
            self.roots.remove(root);
        }
    }

    /// The settings of the file at `path` in `root`: as `check` resolves them with the editor's options
    /// on top; the error of an invalid configuration.
    pub fn for_file(&mut self, root: &Path, path: &Path) -> Result<Arc<Settings>, String> {
        let client = &self.client;
        let settings = self.roots.entry(root.to_path_buf()).or_insert_with(|| RootSettings {
            resolver: resolver(client, root),
            directories: BTreeSet::new(),
            fingerprint: Vec::new(),
        });
        if let Some(directory) = path.parent()
            && settings.directories.insert(directory.to_path_buf())
        {
            settings.fingerprint = fingerprint(&settings.directories);
        }
        let resolver = settings.resolver.as_ref().map_err(Clone::clone)?;
        resolver.for_file(path).map_err(|error| error.to_string())
    }

    /// The configuration file that applies to `path`, if any: the nearest, as `check` finds it.
    pub fn config_file(path: &Path) -> Result<Option<capslint_workspace::config::ConfigFile>, String> {
        let directory = path.parent().unwrap_or(path);
        capslint_workspace::config::discover(directory).map_err(|error| error.to_string())
    }
}

/// The resolver of a root, the editor's options as overrides, confined to the root.
fn resolver(client: &ClientOptions, root: &Path) -> Result<SettingsResolver, String> {
    let overrides = Overrides {
        select: client.select.clone(),
        extend_select: client.extend_select.clone(),
        ignore: client.ignore.clone(),
        strict: client.strict,
        unsafe_fixes: client.unsafe_fixes,
        confinement: Some(Arc::new(Confinement::of_paths(&[root.to_path_buf()], root))),
        ..Overrides::default()
    };
    SettingsResolver::new(ConfigSource::Hierarchical, overrides, root.to_path_buf()).map_err(|error| error.to_string())
}

/// The modification time and size of every configuration file that could apply in `directories`.
fn fingerprint(directories: &BTreeSet<PathBuf>) -> Fingerprint {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for directory in directories {
        for ancestor in directory.ancestors().take(MAX_CONFIG_DEPTH) {
            if !seen.insert(ancestor.to_path_buf()) {
                break;
            }
            for name in CONFIG_FILE_NAMES {
                let candidate = ancestor.join(name);
                let stamp = std::fs::metadata(&candidate)
                    .ok()
                    .map(|metadata| (metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH), metadata.len()));
                out.push((candidate, stamp));
            }
            if is_work_tree_top(ancestor) {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_diagnostics::registry::Rule;

    #[test]
    fn initialization_options_are_read_flat_or_nested() {
        let flat = serde_json::json!({"unsafeFixes": true, "ignore": ["CAP102"]});
        let options = ClientOptions::from_initialization(Some(&flat));
        assert_eq!(options.unsafe_fixes, Some(true));
        assert_eq!(options.ignore, vec!["CAP102".to_string()]);
        let nested = serde_json::json!({"settings": {"select": ["CAP101"]}});
        assert_eq!(ClientOptions::from_initialization(Some(&nested)).select, Some(vec!["CAP101".to_string()]));
        assert_eq!(ClientOptions::from_initialization(Some(&serde_json::json!(3))), ClientOptions::default());
    }

    #[test]
    fn a_changed_configuration_is_read_again() {
        let dir = tempfile::TempDir::new().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        let file = root.join("train.py");
        let mut session = SessionSettings::new(ClientOptions::default());
        let rules = |session: &mut SessionSettings| session.for_file(&root, &file).unwrap().rules_for(&file);
        assert!(rules(&mut session).contains(Rule::MissingThreadCount));
        std::fs::write(root.join("capslint.toml"), "ignore = [\"CAP102\"]\n").unwrap();
        session.refresh(&root);
        assert!(!rules(&mut session).contains(Rule::MissingThreadCount));
    }
}
