//! Project-wide resolution: the values and classes other modules of the project define, for names a file
//! imports (`from .settings import N_JOBS`, `settings.PARAMS`, `from ops import TrainOperator`).
//!
//! Modules are read on demand, when a rule needs the value of an imported name, never up front: a run on
//! one file reads only the modules that file's findings depend on. A module is found from the importing
//! file's location, as Python finds it when the project runs: a relative import from the importing file's
//! package, an absolute one from the importing file's directory or one of the [`MAX_ANCESTORS`] above it
//! (a project root, a `src/` layout). Each module read is summarised once per run ([`summary`]): its
//! module-level constants, dicts and classes, evaluated with the same precision rules as inside one file
//! (a name bound differently on two paths is unknown). A summary depends on that module's text alone;
//! names it imports stay names ([`summary::Export::Alias`]) and are followed when they are looked up, at
//! most [`MAX_HOPS`] modules deep, so import cycles end and the answers do not depend on the order the
//! files were checked in. A lookup that reaches a limit (more hops, a module too large to read or whose
//! analysis was stopped) returns the [`Cut`], for the importing file to report.

mod directories;
pub(crate) mod imported_modules;
pub mod summary;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use ruff_python_ast::Stmt;
use rustc_hash::FxHashMap;

use super::libraries;
use super::limits::{Cut, Limit};
use super::limits::{MAX_HOPS, MAX_MODULE_BYTES};
use super::lookup::{ProjectFunction, ProjectLookup};
use super::project_module::ProjectModule;
use super::value::{CapNames, Resolved};
use capslint_diagnostics::source::SourceFile;
use capslint_workspace::confine::{ConfinedReader, Confinement};
use summary::{Export, ModuleSummary, Unread};

/// How many directories above the importing file an absolute import's top-level package may be found in.
pub const MAX_ANCESTORS: usize = 4;

type SummaryCell = Arc<OnceLock<Result<Arc<ModuleSummary>, Unread>>>;

type TreeCell = Arc<OnceLock<Result<Arc<ProjectModule>, Unread>>>;

/// How many packages up a relative dotted name starts (its leading dots); 0 for an absolute one.
fn relative_level(name: &str) -> usize {
    name.bytes().take_while(|byte| *byte == b'.').count()
}

/// The module that defines an imported dotted name, and the attribute path inside it.
type Located = (PathBuf, Vec<String>);

/// A path as a map's key: its bytes, hashed as bytes (a `Path` hashes component by component, which
/// costs more than the lookups it keys).
type PathKey = OsString;

/// `name`, imported by a file of `directory`, as it is asked from the package it names: a name two or
/// more levels up (`..utils.x`) becomes `.utils.x` in the package's directory, so that the files of every
/// directory below that package share one answer. `None` when the name climbs above the file system's root.
fn from_its_package<'d, 'n>(directory: &'d Path, name: &'n str) -> Option<(&'d Path, std::borrow::Cow<'n, str>)> {
    match relative_level(name) {
        level @ 2.. => {
            Some((directory.ancestors().nth(level - 1)?, std::borrow::Cow::Owned(format!(".{}", &name[level..]))))
        }
        _ => Some((directory, std::borrow::Cow::Borrowed(name))),
    }
}

/// Answers for the dotted names imported from one directory, found by the name as borrowed text.
type ByName<T> = FxHashMap<Box<str>, T>;

/// What the prefilter answers of one module's text ([`crate::prefilter`]).
#[derive(Debug)]
struct ModuleWords {
    /// Whether the whole text passes.
    module: bool,
    /// The module-level functions that may have findings when a call of one is followed
    /// ([`crate::prefilter::definitions::with_findings`]).
    functions: rustc_hash::FxHashSet<String>,
    /// The module-level classes that may have findings when a call of one of their methods is followed.
    classes: rustc_hash::FxHashSet<String>,
    /// Whether the text names a node-wide CPU count ([`summary::names_a_node_count`]): only then can a
    /// function of the module return one.
    counts_cpus: bool,
}

impl ModuleWords {
    /// The prefilter's answers for `text`. A text that does not pass as a whole has no definition with
    /// findings, so its definitions are not searched: a definition's own text counts a library's name
    /// wherever it is written (it holds none of the module's imports), but a name the module cannot
    /// reach (not imported, not an attribute, not in a string) is never the library's, whatever values
    /// a call passes in.
    fn of(text: &str) -> Self {
        if !crate::prefilter::may_have_findings(text) {
            return Self::not_passing(text);
        }
        let definitions = crate::prefilter::definitions::with_findings(text);
        ModuleWords {
            module: true,
            functions: definitions.functions.into_iter().map(str::to_owned).collect(),
            classes: definitions.classes.into_iter().map(str::to_owned).collect(),
            counts_cpus: summary::names_a_node_count(text),
        }
    }

    /// The answers for `text`, which does not pass the prefilter.
    fn not_passing(text: &str) -> Self {
        ModuleWords {
            module: false,
            functions: Default::default(),
            classes: Default::default(),
            counts_cpus: summary::names_a_node_count(text),
        }
    }
}

/// The modules of one run read so far, shared by every file's check.
#[derive(Debug)]
pub struct ProjectIndex {
    cwd: PathBuf,
    reader: ConfinedReader,
    summaries: Mutex<FxHashMap<(PathBuf, u64), SummaryCell>>,
    files: RwLock<FxHashMap<PathKey, bool>>,
    /// Where each dotted name imported from a directory was found ([`ProjectIndex::locate`]), by directory
    /// (hashed as bytes: a path hashes component by component, which costs more than the search it saves)
    /// and then by name, so that a known answer is found without building a key.
    located: RwLock<FxHashMap<PathKey, ByName<Option<Arc<Located>>>>>,
    /// What the prefilter answers of each module read for it (`None`: unreadable or beyond the size limit),
    /// or of a file whose own check found that its text does not pass ([`ProjectIndex::may_have_findings`]),
    /// by path (hashed as bytes).
    prefiltered: RwLock<FxHashMap<PathKey, Option<Arc<ModuleWords>>>>,
    /// Whether each dotted name imported from a directory may have findings at its calls
    /// ([`ProjectIndex::import_answer`]), by directory and then by name, so that a known answer is
    /// found without building a key.
    import_answers: RwLock<FxHashMap<PathKey, ByName<ImportAnswer>>>,
    /// The names in each directory an import was searched in.
    listings: directories::Listings,
    /// The modules kept parsed because a call was followed into one of their functions, or because their
    /// own check parses them too ([`ProjectIndex::keep_if_checked`]).
    trees: Mutex<FxHashMap<PathBuf, TreeCell>>,
}

/// What an imported name may lead a call to, as the prefilter asks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ImportAnswer {
    /// Nothing that may have findings.
    Nothing,
    /// A module or a function that may have findings at its calls.
    Callable,
    /// A class whose methods may have findings when a call of one on an instance is followed.
    Class,
}

/// Whether `text` calls one of `names` (the name written whole, then `(` after any blanks, line breaks or
/// comments: [`crate::prefilter::spelling::is_called_at`]), or imports one under another name (`name as`):
/// a method of an imported class is followed only on an instance the file constructs by calling the
/// class. One pass over the text, whatever the names.
fn calls_or_renames(text: &str, names: &rustc_hash::FxHashSet<String>) -> bool {
    let renamed_at = |end: usize| {
        let rest = text[end..].trim_start_matches([' ', '\t', '\r', '\n', '\\']);
        rest.strip_prefix("as").is_some_and(|after| after.starts_with([' ', '\t']))
    };
    crate::prefilter::definitions::identifier_ranges(text).any(|range| {
        (crate::prefilter::spelling::is_called_at(text.as_bytes(), range.end) || renamed_at(range.end))
            && names.contains(&text[range])
    })
}

impl Drop for ProjectIndex {
    /// Drops the kept trees on a stack deep enough for them, as their analysis ran on
    /// ([`crate::ANALYSIS_STACK_BYTES`]): dropping a tree recurses once per level of nesting.
    fn drop(&mut self) {
        let trees = self.trees.get_mut().map(std::mem::take).unwrap_or_default();
        stacker::maybe_grow(super::ANALYSIS_STACK_BYTES, super::ANALYSIS_STACK_BYTES, || drop(trees));
    }
}

impl ProjectIndex {
    /// An empty index that reads modules only where `confinement` admits; display names of modules read
    /// are relative to `cwd`.
    pub fn new(cwd: PathBuf, confinement: Arc<Confinement>) -> Self {
        ProjectIndex {
            cwd,
            reader: ConfinedReader::new(confinement),
            summaries: Mutex::default(),
            files: RwLock::default(),
            located: RwLock::default(),
            trees: Mutex::default(),
            prefiltered: RwLock::default(),
            listings: directories::Listings::default(),
            import_answers: RwLock::default(),
        }
    }

    /// How many modules were read (summarised), for measurements.
    pub fn modules_read(&self) -> usize {
        self.summaries.lock().map_or(0, |summaries| summaries.values().filter(|cell| cell.get().is_some()).count())
    }

    /// Whether `path` is a regular file the confinement admits, asked once per path. Most candidates of an
    /// import do not exist: their directory's listing answers those before the path is resolved.
    fn is_file(&self, path: &Path) -> bool {
        if let (Some(directory), Some(name)) = (path.parent(), path.file_name())
            && self.listings.contains(directory, name) == Some(false)
        {
            return false;
        }
        if let Some(known) = self.files.read().ok().and_then(|files| files.get(path.as_os_str()).copied()) {
            return known;
        }
        // The confinement admits only a regular file (a link's target, for a link).
        let exists = self.reader.file(path, "").is_ok();
        if let Ok(mut files) = self.files.write() {
            files.insert(path.as_os_str().to_owned(), exists);
        }
        exists
    }

    /// The summary of the module at `path`, read and summarised on first use.
    fn summary(&self, path: &Path, caps: &CapNames) -> Result<Arc<ModuleSummary>, Unread> {
        let key = (path.to_path_buf(), caps_key(caps));
        let cell = {
            let mut summaries = self.summaries.lock().map_err(|_| Unread::Unreadable)?;
            Arc::clone(summaries.entry(key).or_default())
        };
        // Summarising reads no other module, so no thread waits here on a cell that waits on it.
        cell.get_or_init(|| {
            let display = capslint_workspace::discover::display_name(path, &self.cwd);
            // The tree is dropped on the stack it was analysed on: dropping it recurses once per level.
            stacker::maybe_grow(super::ANALYSIS_STACK_BYTES, super::ANALYSIS_STACK_BYTES, || {
                let (summary, tree) = summary::read_with_tree(path, display, caps, &self.reader)?;
                self.keep_if_checked(path, tree);
                Ok(Arc::new(summary))
            })
        })
        .clone()
    }

    /// Keeps the tree of a module read for its summary when the module's own text passes the prefilter:
    /// the run parses that module for its own check too ([`crate::check`] takes the kept tree), and a call
    /// followed into it walks the same tree. Any other tree is dropped here.
    fn keep_if_checked(&self, path: &Path, tree: ProjectModule) {
        // Answered by the module's words when an import check read them already.
        let known = self.prefiltered.read().ok().and_then(|known| known.get(path.as_os_str()).cloned().flatten());
        if !known.map_or_else(|| crate::prefilter::may_have_findings(tree.file.text()), |words| words.module) {
            return;
        }
        let Ok(mut trees) = self.trees.lock() else { return };
        let cell = Arc::clone(trees.entry(path.to_path_buf()).or_default());
        drop(trees);
        let _ = cell.set(Ok(Arc::new(tree)));
    }

    /// [`crate::prefilter::may_have_findings`] of `text`, the file at `path` as read from disk: the answer
    /// the index already has when an import made it read that module, else computed here. A text that
    /// does not pass is recorded, so that an import of the module later in the run is answered without
    /// reading it again (such a text has no definition with findings); a passing one is not, as what its
    /// definitions hold is asked only of a module some file imports.
    pub fn may_have_findings(&self, path: &Path, text: &str) -> bool {
        let known = self.prefiltered.read().ok().and_then(|known| known.get(path.as_os_str()).cloned());
        if let Some(Some(words)) = &known {
            return words.module;
        }
        let passes = crate::prefilter::may_have_findings(text);
        // The index reads no module beyond the size limit: its answer for a larger one stays its own.
        if !passes
            && known.is_none()
            && text.len() as u64 <= MAX_MODULE_BYTES
            && let Ok(mut prefiltered) = self.prefiltered.write()
        {
            prefiltered
                .entry(path.as_os_str().to_owned())
                .or_insert_with(|| Some(Arc::new(ModuleWords::not_passing(text))));
        }
        passes
    }

    /// Whether `text`, the file at `from`, imports from a module of the project (found as
    /// [`ProjectIndex::locate`] finds it, confined) a function that may have findings when followed
    /// ([`crate::prefilter::definitions::with_findings`], the question following a call into another module
    /// asks too: [`ProjectIndex::function`]), a whole module whose text passes the prefilter (`import
    /// utils.gcp`, `from utils import gcp`), or a class that may have findings when one of its methods is
    /// followed, which the file calls ([`calls_or_renames`]: a method is followed only on an instance the
    /// file constructs): a call of it may then have findings at the call. Each module's text is read once
    /// per run, never parsed.
    pub fn imports_module_with_findings(&self, from: &Path, text: &str) -> bool {
        let Some(directory) = from.parent() else { return false };
        // The classes are looked for in the text once, after the imports: a file may import many.
        let mut classes: rustc_hash::FxHashSet<String> = rustc_hash::FxHashSet::default();
        // An installed library is not the project's: its names are never searched for.
        let callable =
            imported_modules::any_imported_name_outside(text, libraries::is_known_package, |name| {
                match self.import_answer(directory, from, name) {
                    ImportAnswer::Nothing => false,
                    ImportAnswer::Callable => true,
                    ImportAnswer::Class => {
                        classes.insert(name.rsplit('.').next().unwrap_or(name).to_string());
                        false
                    }
                }
            });
        callable || (!classes.is_empty() && calls_or_renames(text, &classes))
    }

    /// What the dotted name `name`, imported by the file `from` in `directory`, may lead a call to:
    /// answered once per directory and name, as every file of a directory finds the same module for the
    /// same import, unless the search finds the importing file itself (which is then passed over, for that
    /// file alone).
    fn import_answer(&self, directory: &Path, from: &Path, name: &str) -> ImportAnswer {
        // A name two or more levels up is asked from the package it names, as [`ProjectIndex::locate`]
        // searches it, so that the files of sibling packages share one answer.
        let imported = name;
        let Some((directory, name)) = from_its_package(directory, name) else { return ImportAnswer::Nothing };
        let known =
            self.import_answers.read().ok().and_then(|answers| {
                answers.get(directory.as_os_str()).and_then(|names| names.get(name.as_ref()).copied())
            });
        if let Some(known) = known {
            return known;
        }
        let as_module = self.search(directory, &format!("{name}._"));
        let as_name = self.search(directory, &name);
        if [&as_module, &as_name].into_iter().flatten().any(|(path, _)| path.as_os_str() == from.as_os_str()) {
            return self.answer_for_import(from, imported);
        }
        let answer = self.answer_from(as_module.as_ref(), as_name.as_ref());
        if let Ok(mut answers) = self.import_answers.write() {
            answers.entry(directory.as_os_str().to_owned()).or_default().insert(name.into(), answer);
        }
        answer
    }

    /// [`ProjectIndex::import_answer`] for the file `from`, its own module passed over.
    fn answer_for_import(&self, from: &Path, name: &str) -> ImportAnswer {
        let as_module = self.locate(from, &format!("{name}._"));
        let as_name = self.locate(from, name);
        self.answer_from(as_module.as_deref(), as_name.as_deref())
    }

    /// What an imported name that is the module `as_module` (found for `name._`), or else the attribute
    /// `as_name` of a module, may lead a call to; the module's text is read once and answered for all its
    /// definitions at once.
    fn answer_from(&self, as_module: Option<&Located>, as_name: Option<&Located>) -> ImportAnswer {
        if let Some((path, [_])) = as_module.map(|(path, attributes)| (path, attributes.as_slice())) {
            // A module itself: any of its functions may be called through it.
            return match self.words(path) {
                Some(words) if words.module => ImportAnswer::Callable,
                _ => ImportAnswer::Nothing,
            };
        }
        let Some((path, [name])) = as_name.map(|(path, attributes)| (path, attributes.as_slice())) else {
            return ImportAnswer::Nothing;
        };
        match self.words(path) {
            Some(words) if words.functions.contains(name.as_str()) => ImportAnswer::Callable,
            Some(words) if words.classes.contains(name.as_str()) => ImportAnswer::Class,
            _ => ImportAnswer::Nothing,
        }
    }

    /// What the prefilter finds in the text of the module at `path`, read once; `None` when it cannot be
    /// read.
    fn words(&self, path: &Path) -> Option<Arc<ModuleWords>> {
        let known = self.prefiltered.read().ok().and_then(|known| known.get(path.as_os_str()).cloned());
        match known {
            Some(words) => words,
            None => {
                let display = capslint_workspace::discover::display_name(path, &self.cwd);
                let words = self
                    .reader
                    .read_to_string(path, &display, MAX_MODULE_BYTES)
                    .ok()
                    .map(|text| Arc::new(ModuleWords::of(&text)));
                if let Ok(mut known) = self.prefiltered.write() {
                    known.insert(path.as_os_str().to_owned(), words.clone());
                }
                words
            }
        }
    }

    /// Whether `qualified`, imported from `from`, names a top-level class of a module of the project whose
    /// text passes the prefilter ([`ProjectIndex::class_passes_prefilter`]).
    fn class_may_have_findings(&self, from: &Path, qualified: &str) -> bool {
        match self.locate(from, qualified).as_deref().map(|(path, attributes)| (path, attributes.as_slice())) {
            Some((path, [class])) => self.class_passes_prefilter(path, class),
            _ => false,
        }
    }

    /// Whether the module at `path` defines a module-level function or class `name` that may have findings
    /// when followed.
    fn defines_with_findings(&self, path: &Path, name: &str) -> bool {
        self.words(path).is_some_and(|words| words.functions.contains(name) || words.classes.contains(name))
    }

    /// Whether the module at `path` has a top-level class `class` that may have findings
    /// ([`crate::prefilter::definitions::with_findings`]): the module's text is read once and answered for
    /// all its definitions at once.
    fn class_passes_prefilter(&self, path: &Path, class: &str) -> bool {
        self.words(path).is_some_and(|words| words.classes.contains(class))
    }

    /// Whether `directory` holds a module or package named `name` (`name.py`, `name/`): asked before any
    /// candidate below it is looked at, so an import of a module that is not the project's (the standard
    /// library, an installed package) costs a look in each directory's listing, whatever the file.
    fn has_entry(&self, directory: &Path, name: &str) -> bool {
        // A directory that cannot be listed: its candidates are asked one by one.
        self.listings.has_module_or_package(directory, name).unwrap_or(true)
    }

    /// Reads the module at `path` for a call followed into one of its functions: summarised and parsed
    /// at once, when neither was done yet, so that its text is parsed once.
    fn read_for_call(&self, path: &Path, caps: &CapNames) {
        let (Ok(mut summaries), Ok(mut trees)) = (self.summaries.lock(), self.trees.lock()) else { return };
        let summary_cell = Arc::clone(summaries.entry((path.to_path_buf(), caps_key(caps))).or_default());
        let tree_cell = Arc::clone(trees.entry(path.to_path_buf()).or_default());
        drop((summaries, trees));
        if summary_cell.get().is_some() || tree_cell.get().is_some() {
            return;
        }
        let display = capslint_workspace::discover::display_name(path, &self.cwd);
        stacker::maybe_grow(super::ANALYSIS_STACK_BYTES, super::ANALYSIS_STACK_BYTES, || {
            match summary::read_with_tree(path, display, caps, &self.reader) {
                Ok((summary, tree)) => {
                    // Another thread may have read it meanwhile: its answer is the same one.
                    let _ = summary_cell.set(Ok(Arc::new(summary)));
                    let _ = tree_cell.set(Ok(Arc::new(tree)));
                }
                Err(unread) => {
                    let _ = summary_cell.set(Err(unread));
                }
            }
        });
    }

    /// The tree of the module at `path`, when a call followed into it has already parsed it (without
    /// syntax errors and within the nesting bounds): never parses.
    pub fn kept_tree(&self, path: &Path) -> Option<Arc<ProjectModule>> {
        let cell = self.trees.lock().ok()?.get(path).cloned()?;
        cell.get()?.as_ref().ok().cloned()
    }

    /// The parsed tree of the module `summary` summarises, parsed on first use and kept for the run.
    fn tree(&self, summary: &ModuleSummary) -> Result<Arc<ProjectModule>, Unread> {
        let cell = {
            let mut trees = self.trees.lock().map_err(|_| Unread::Unreadable)?;
            Arc::clone(trees.entry(summary.path.clone()).or_default())
        };
        cell.get_or_init(|| {
            stacker::maybe_grow(super::ANALYSIS_STACK_BYTES, super::ANALYSIS_STACK_BYTES, || {
                summary::parse(&summary.file).map(Arc::new)
            })
        })
        .clone()
    }

    /// What a call of the module-level function that `qualified`, imported from `from`, is returns, when
    /// its module's summary knows it ([`summary::ExportedFunction::returns`]). Asked of the module's text
    /// first, as the prefilter asks it: a module whose text names no node-wide CPU count is not
    /// summarised for it.
    fn returned(&self, from: &Path, qualified: &str, caps: &CapNames) -> Result<Option<Resolved<'static>>, Cut> {
        match self.locate(from, qualified).as_deref().map(|(path, attributes)| (path, attributes.as_slice())) {
            Some((path, [_])) if self.words(path).is_some_and(|words| words.counts_cpus) => {}
            _ => return Ok(None),
        }
        let mut trail = Vec::new();
        let Some(found) = self.export(from, qualified, caps, &mut trail)? else { return Ok(None) };
        Ok(match found.export().filter(|_| trail.len() == 1) {
            Some(Export::Function(function)) => {
                function.returns.as_ref().map(|returned| returned.resolved(&found.summary.file))
            }
            _ => None,
        })
    }

    /// The module-level function that `qualified`, imported from `from`, is, with the project as its
    /// module sees it.
    fn function<'p>(
        &'p self,
        from: &Path,
        qualified: &str,
        caps: &CapNames,
    ) -> Result<Option<ProjectFunction<'p>>, Cut> {
        // Nothing to follow into a function whose own text holds no word the rules need: asked of the text
        // before the module is summarised or parsed, as the prefilter asks it.
        match self.locate(from, qualified).as_deref().map(|(path, attributes)| (path, attributes.as_slice())) {
            Some((path, [function])) => {
                if !self.words(path).is_some_and(|words| words.functions.contains(function.as_str())) {
                    return Ok(None);
                }
                self.read_for_call(path, caps);
            }
            _ => return Ok(None),
        }
        let mut trail = Vec::new();
        let Some(found) = self.export(from, qualified, caps, &mut trail)? else { return Ok(None) };
        // Only a function of the module the name is imported from: the prefilter reads that module's text
        // alone ([`ProjectIndex::imports_module_with_findings`]).
        let Some(Export::Function(function)) = found.export().filter(|_| trail.len() == 1) else { return Ok(None) };
        let def = &function.def;
        let module = match self.tree(&found.summary) {
            Ok(module) => module,
            Err(Unread::Limit(limit)) => return Err(self.module_cut(&found.summary.path, limit)),
            Err(Unread::Unreadable) => return Ok(None),
        };
        let project = Box::new(ModuleContext { index: self, file: found.summary.path.clone() });
        Ok(Some(ProjectFunction { module, def: *def, project }))
    }

    /// The module-level class that `qualified`, imported from `from`, is (defined once in the module it is
    /// imported from), with the project as its module sees it: `def` is the range of the `class`.
    fn class<'p>(&'p self, from: &Path, qualified: &str, caps: &CapNames) -> Result<Option<ProjectFunction<'p>>, Cut> {
        // Nothing to follow into a class whose own text holds no word the rules need: asked of the text
        // before the module is summarised or parsed.
        if !self.class_may_have_findings(from, qualified) {
            return Ok(None);
        }
        if let Some((path, _)) = self.locate(from, qualified).as_deref() {
            self.read_for_call(path, caps);
        }
        let mut trail = Vec::new();
        let Some(found) = self.export(from, qualified, caps, &mut trail)? else { return Ok(None) };
        let ([name], Some(Export::Class(_))) = (found.path.as_slice(), found.export().filter(|_| trail.len() == 1))
        else {
            return Ok(None);
        };
        let module = match self.tree(&found.summary) {
            Ok(module) => module,
            Err(Unread::Limit(limit)) => return Err(self.module_cut(&found.summary.path, limit)),
            Err(Unread::Unreadable) => return Ok(None),
        };
        let mut classes = module.parsed.syntax().body.iter().filter_map(|stmt| match stmt {
            Stmt::ClassDef(class) if class.name.as_str() == name => Some(class.range),
            _ => None,
        });
        let (Some(class), None) = (classes.next(), classes.next()) else { return Ok(None) };
        let project = Box::new(ModuleContext { index: self, file: found.summary.path.clone() });
        Ok(Some(ProjectFunction { module, def: class, project }))
    }

    /// The file at `path` holding `text`, named as the run names it.
    fn source_file(&self, path: &Path, text: &str) -> Arc<SourceFile> {
        let display = capslint_workspace::discover::display_name(path, &self.cwd);
        Arc::new(SourceFile::new(path.to_path_buf(), display, text.to_string()))
    }

    /// The cut of a lookup that needed the module at `path`, which was not summarised because of `limit`.
    fn module_cut(&self, path: &Path, limit: Limit) -> Cut {
        Cut::at_subject(limit, format!("`{}`", capslint_workspace::discover::display_name(path, &self.cwd)))
    }

    /// Finds the module that defines `qualified` as imported from `from`, and the attribute path inside it
    /// (`["N_JOBS"]`, `["Defaults", "N_JOBS"]`): searched once per directory and name, as every file of a
    /// directory finds the same module for the same import (the importing file itself aside).
    fn locate(&self, from: &Path, qualified: &str) -> Option<Arc<Located>> {
        // A relative name is searched from the package it names, so that the files of every directory
        // below it that import the same module share one search (`..utils.x` from two subpackages).
        let (directory, qualified) = from_its_package(from.parent()?, qualified)?;
        let known = self.located.read().ok().and_then(|located| {
            located.get(directory.as_os_str()).and_then(|names| names.get(qualified.as_ref()).cloned())
        });
        let found = match known {
            Some(found) => found,
            None => {
                let found = self.search(directory, &qualified).map(Arc::new);
                if let Ok(mut located) = self.located.write() {
                    located
                        .entry(directory.as_os_str().to_owned())
                        .or_default()
                        .insert(qualified.as_ref().into(), found.clone());
                }
                found
            }
        };
        // A module does not import itself: the search for `from` goes on past it.
        match found {
            Some(found) if found.0.as_os_str() == from.as_os_str() => {
                self.search_skipping(directory, &qualified, from).map(Arc::new)
            }
            found => found,
        }
    }

    /// [`ProjectIndex::search_skipping`] with no candidate passed over.
    fn search(&self, directory: &Path, qualified: &str) -> Option<Located> {
        self.search_skipping(directory, qualified, Path::new(""))
    }

    /// The module of the project that defines `qualified` as imported from a file of `directory`, the
    /// candidate `skipped` (the importing file) passed over.
    fn search_skipping(&self, directory: &Path, qualified: &str, skipped: &Path) -> Option<Located> {
        let level = relative_level(qualified);
        let parts: Vec<&str> = qualified[level..].split('.').filter(|part| !part.is_empty()).collect();
        if level > 0 {
            let base = directory.ancestors().nth(level - 1)?;
            let has_package = parts.first().is_some_and(|first| self.has_entry(base, first));
            return self.search_in(base, &parts, true, has_package, skipped);
        }
        if parts.len() < 2 || libraries::is_known_package(parts[0]) {
            return None;
        }
        // Each directory, and the `src/` of each (the src layout, whose package a DAG folder or a script
        // beside it imports once the project is installed). Below a directory with no module or package of
        // the import's first name, nothing is.
        for ancestor in directory.ancestors().take(MAX_ANCESTORS + 1) {
            if self.has_entry(ancestor, parts[0])
                && let Some(found) = self.search_in(ancestor, &parts, false, true, skipped)
            {
                return Some(found);
            }
            if self.listings.contains(ancestor, OsStr::new("src")) != Some(false) {
                let src = ancestor.join("src");
                if self.has_entry(&src, parts[0])
                    && let Some(found) = self.search_in(&src, &parts, false, true, skipped)
                {
                    return Some(found);
                }
            }
        }
        None
    }

    /// The module below `base` that defines the dotted `parts`, the longest module path first (`a.b.C` is
    /// the class `C` of `a/b.py` before the attribute `b.C` of `a/__init__.py`); `base`'s own
    /// `__init__.py` too when `relative`, and the modules below it only when `has_package`.
    fn search_in(
        &self,
        base: &Path,
        parts: &[&str],
        relative: bool,
        has_package: bool,
        skipped: &Path,
    ) -> Option<Located> {
        for split in (usize::from(!relative)..parts.len()).rev() {
            if split > 0 && !has_package {
                continue;
            }
            let candidates = if split == 0 {
                [Some(base.join("__init__.py")), None]
            } else {
                let module: PathBuf = parts[..split].iter().collect();
                let module = base.join(module);
                [Some(module.with_extension("py")), Some(module.join("__init__.py"))]
            };
            for candidate in candidates.into_iter().flatten() {
                if candidate.as_os_str() != skipped.as_os_str() && self.is_file(&candidate) {
                    let attributes = parts[split..].iter().map(|part| (*part).to_string()).collect();
                    return Some((candidate, attributes));
                }
            }
        }
        None
    }

    /// Follows `qualified`, imported from `from`, to the export that defines it: `Ok(None)` when no module
    /// of the project defines it (or the imports form a cycle), the [`Cut`] when a limit stopped the
    /// lookup. `trail` holds the modules and names passed through so far.
    fn export(
        &self,
        from: &Path,
        qualified: &str,
        caps: &CapNames,
        trail: &mut Vec<(PathBuf, String)>,
    ) -> Result<Option<Found>, Cut> {
        let Some(found) = self.locate(from, qualified) else { return Ok(None) };
        let (path, attributes) = found.as_ref();
        let step = (path.clone(), attributes.join("."));
        if trail.contains(&step) {
            // An import cycle: Python cannot import the name either.
            return Ok(None);
        }
        if trail.len() > MAX_HOPS as usize {
            return Err(Cut::at_subject(Limit::ModuleHops, format!("`{qualified}`")));
        }
        trail.push(step);
        let summary = match self.summary(path, caps) {
            Ok(summary) => summary,
            Err(Unread::Limit(limit)) => return Err(self.module_cut(path, limit)),
            Err(Unread::Unreadable) => return Ok(None),
        };
        let Some((first, rest)) = attributes.split_first() else { return Ok(None) };
        let Some(export) = summary.names.get(first) else { return Ok(None) };
        Ok(match (export, rest) {
            (Export::Alias(target), _) => {
                let target = if rest.is_empty() { target.clone() } else { format!("{target}.{}", rest.join(".")) };
                return self.export(path, &target, caps, trail);
            }
            (Export::Class(_), []) | (Export::Value(_), []) | (Export::Function(_), []) => {
                Some(Found { summary, path: vec![first.clone()] })
            }
            (Export::Class(class), [attribute]) if class.attributes.contains_key(attribute) => {
                Some(Found { summary, path: vec![first.clone(), attribute.clone()] })
            }
            _ => None,
        })
    }
}

/// Where a lookup ended: a module's summary and the export's path in it.
struct Found {
    summary: Arc<ModuleSummary>,
    path: Vec<String>,
}

impl Found {
    fn export(&self) -> Option<&Export> {
        let export = self.summary.names.get(&self.path[0])?;
        match (export, self.path.get(1)) {
            (export, None) => Some(export),
            (Export::Class(class), Some(attribute)) => class.attributes.get(attribute),
            _ => None,
        }
    }
}

/// A hash of the cap names a summary was made with: modules are summarised once per configuration.
fn caps_key(caps: &CapNames) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    caps.variables.hash(&mut hasher);
    caps.helpers.hash(&mut hasher);
    hasher.finish()
}

/// The project as one file's resolver sees it: the shared index and the file's own path.
#[derive(Debug, Clone, Copy)]
pub struct ProjectContext<'m> {
    /// The run's index.
    pub index: &'m ProjectIndex,
    /// The file being checked.
    pub file: &'m Path,
}

impl ProjectLookup for ProjectContext<'_> {
    /// The value the project gives the imported name `qualified`, with its definition as the binding;
    /// `Ok(None)` when the project does not define it, the [`Cut`] when a limit stopped the lookup.
    fn value(&self, qualified: &str, caps: &CapNames) -> Result<Option<Resolved<'static>>, Cut> {
        let Some(found) = self.index.export(self.file, qualified, caps, &mut Vec::new())? else { return Ok(None) };
        Ok(match found.export() {
            Some(Export::Value(value)) => Some(value.resolved(&found.summary.file)),
            _ => None,
        })
    }

    /// What a call of the imported function `qualified` returns, when the project's summary of its
    /// module knows it (a node-wide CPU count), with the function's name as the binding.
    fn returned(&self, qualified: &str, caps: &CapNames) -> Result<Option<Resolved<'static>>, Cut> {
        self.index.returned(self.file, qualified, caps)
    }

    /// The pod operator the imported class `qualified` subclasses, when the project defines it as a
    /// subclass of one (directly or through other classes of the project) without an `__init__` of its own
    /// that may set resources or environment. The [`Cut`] when the chain of classes passes through more
    /// than [`MAX_HOPS`] modules.
    fn pod_operator(&self, qualified: &str, caps: &CapNames) -> Result<Option<String>, Cut> {
        let mut from = self.file.to_path_buf();
        let mut current = qualified.to_string();
        let mut trail = Vec::new();
        while trail.len() <= MAX_HOPS as usize {
            let Some(found) = self.index.export(&from, &current, caps, &mut trail)? else { return Ok(None) };
            let Some(Export::Class(class)) = found.export() else { return Ok(None) };
            if class.sets_pod_arguments {
                return Ok(None);
            }
            let base = class.bases.iter().find_map(|base| {
                let canonical = libraries::canonical(base).into_owned();
                libraries::is_pod_operator(&canonical).then_some(canonical)
            });
            if base.is_some() {
                return Ok(base);
            }
            // A base that is itself a class of the project.
            let [base] = class.bases.as_slice() else { return Ok(None) };
            from = found.summary.path.clone();
            current = base.clone();
        }
        Err(Cut::at_subject(Limit::ModuleHops, format!("`{current}`")))
    }

    fn function(&self, qualified: &str, caps: &CapNames) -> Result<Option<ProjectFunction<'_>>, Cut> {
        self.index.function(self.file, qualified, caps)
    }

    fn class(&self, qualified: &str, caps: &CapNames) -> Result<Option<ProjectFunction<'_>>, Cut> {
        self.index.class(self.file, qualified, caps)
    }

    fn class_may_have_findings(&self, qualified: &str) -> bool {
        self.index.class_may_have_findings(self.file, qualified)
    }

    fn defines_with_findings(&self, path: &Path, name: &str) -> bool {
        self.index.defines_with_findings(path, name)
    }

    fn source_file(&self, text: &str) -> Arc<SourceFile> {
        self.index.source_file(self.file, text)
    }
}

/// The project as another module of it sees it: the names that module imports are found from its path.
struct ModuleContext<'m> {
    index: &'m ProjectIndex,
    file: PathBuf,
}

impl ProjectLookup for ModuleContext<'_> {
    fn value(&self, qualified: &str, caps: &CapNames) -> Result<Option<Resolved<'static>>, Cut> {
        ProjectContext { index: self.index, file: &self.file }.value(qualified, caps)
    }

    fn returned(&self, qualified: &str, caps: &CapNames) -> Result<Option<Resolved<'static>>, Cut> {
        ProjectContext { index: self.index, file: &self.file }.returned(qualified, caps)
    }

    fn pod_operator(&self, qualified: &str, caps: &CapNames) -> Result<Option<String>, Cut> {
        ProjectContext { index: self.index, file: &self.file }.pod_operator(qualified, caps)
    }

    fn function(&self, qualified: &str, caps: &CapNames) -> Result<Option<ProjectFunction<'_>>, Cut> {
        self.index.function(&self.file, qualified, caps)
    }

    fn class(&self, qualified: &str, caps: &CapNames) -> Result<Option<ProjectFunction<'_>>, Cut> {
        self.index.class(&self.file, qualified, caps)
    }

    fn class_may_have_findings(&self, qualified: &str) -> bool {
        self.index.class_may_have_findings(&self.file, qualified)
    }

    fn defines_with_findings(&self, path: &Path, name: &str) -> bool {
        self.index.defines_with_findings(path, name)
    }

    fn source_file(&self, text: &str) -> Arc<SourceFile> {
        self.index.source_file(&self.file, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn a_class_counts_where_the_text_calls_or_renames_it() {
        let names: rustc_hash::FxHashSet<String> = ["Trainer".to_string()].into_iter().collect();
        for text in [
            "Trainer().run(x, -1)\n",
            "model = Trainer (\n    path,\n)\n",
            "x = [Trainer\n    (1)]\n",
            "model = Trainer  # the shared one\n(path)\n",
            "from pkg import Trainer as T\n",
        ] {
            assert!(calls_or_renames(text, &names), "{text}");
        }
        for text in [
            "def run(t: Trainer):\n    return t.run(-1)\n",
            "isinstance(x, Trainer)\n",
            "MyTrainer()\n",
            "Trainer_(1)\n",
            "Trainer.run(t, -1)\n",
            "from pkg import Trainer, astronaut\n",
        ] {
            assert!(!calls_or_renames(text, &names), "{text}");
        }
    }

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn value(index: &ProjectIndex, from: &Path, qualified: &str) -> Option<i64> {
        let context = ProjectContext { index, file: from };
        match context.value(qualified, &CapNames::default()).ok()??.value {
            Value::Int(value) => Some(value),
            _ => None,
        }
    }

    #[test]
    fn a_lookup_reads_only_the_modules_it_passes_through() {
        let dir = project(&[
            ("pkg/__init__.py", "from .defaults import N_JOBS\n"),
            ("pkg/defaults.py", "N_JOBS = -1\n"),
            ("pkg/unrelated.py", "WORKERS = 3\n"),
            ("pkg/other.py", "X = 1\n"),
            ("train.py", ""),
        ]);
        let index = ProjectIndex::new(dir.path().to_path_buf(), Arc::new(Confinement::new([dir.path().to_path_buf()])));
        let from = dir.path().join("train.py");
        assert_eq!(value(&index, &from, "pkg.N_JOBS"), Some(-1));
        assert_eq!(index.modules_read(), 2, "the package's __init__ and the module it re-exports from");
        assert_eq!(value(&index, &from, "pkg.N_JOBS"), Some(-1));
        assert_eq!(index.modules_read(), 2, "a module is read once");
    }

    #[test]
    fn cycles_and_missing_modules_are_unknown() {
        let dir = project(&[
            ("a.py", "from b import X\n"),
            ("b.py", "from a import X\n"),
            ("c.py", "from .... import X\nfrom c import C\nC = C\n"),
        ]);
        let index = ProjectIndex::new(dir.path().to_path_buf(), Arc::new(Confinement::new([dir.path().to_path_buf()])));
        let from = dir.path().join("main.py");
        assert_eq!(value(&index, &from, "a.X"), None);
        assert_eq!(value(&index, &from, "missing.X"), None);
        assert_eq!(value(&index, &from, "c.C"), None);
        assert_eq!(value(&index, &from, "......deep.X"), None);
        assert_eq!(value(&index, &from, "numpy.X"), None, "libraries are never looked up");
    }

    #[test]
    fn values_bound_differently_on_two_paths_are_unknown() {
        let dir =
            project(&[("conf.py", "import os\nif os.environ.get('CI'):\n    N = 1\nelse:\n    N = -1\nM = -1\n")]);
        let index = ProjectIndex::new(dir.path().to_path_buf(), Arc::new(Confinement::new([dir.path().to_path_buf()])));
        let from = dir.path().join("main.py");
        assert_eq!(value(&index, &from, "conf.N"), None);
        assert_eq!(value(&index, &from, "conf.M"), Some(-1));
    }

    #[test]
    fn a_file_passes_the_prefilter_through_a_module_it_imports_whose_text_passes_it() {
        let dir = project(&[
            (
                "utils/gcp.py",
                "from ops import GKEPodOperator\ndef etl(task_id, **kwargs):\n    return GKEPodOperator(task_id=task_id, **kwargs)\n",
            ),
            ("utils/text.py", "def shout(text):\n    return text.upper()\n"),
            ("dags/a.py", ""),
        ]);
        let index = ProjectIndex::new(dir.path().to_path_buf(), Arc::new(Confinement::new([dir.path().to_path_buf()])));
        let from = dir.path().join("dags/a.py");
        assert!(index.imports_module_with_findings(&from, "from utils.gcp import etl\netl(task_id='x')\n"));
        assert!(index.imports_module_with_findings(&from, "import utils.gcp as gcp\n"));
        assert!(!index.imports_module_with_findings(&from, "from utils.text import shout\nshout('x')\n"));
        assert!(!index.imports_module_with_findings(&from, "from utils.missing import etl\n"));
        assert_eq!(index.modules_read(), 0, "the prefilter parses no module");
    }

    #[test]
    fn the_verdict_on_a_file_read_for_its_own_check_is_shared_with_imports_of_it() {
        let quiet = "def make(n):\n    return n\n";
        let pooled = "from multiprocessing import Pool\ndef make(n):\n    return Pool(n)\n";
        let dir = project(&[("utils.py", quiet), ("pools.py", pooled), ("main.py", "")]);
        let index = ProjectIndex::new(dir.path().to_path_buf(), Arc::new(Confinement::new([dir.path().to_path_buf()])));
        let from = dir.path().join("main.py");
        // The file's own check records that its text does not pass: an import of it is answered from that,
        // not from the file as it is on disk later.
        assert!(!index.may_have_findings(&dir.path().join("utils.py"), quiet));
        std::fs::write(dir.path().join("utils.py"), pooled).unwrap();
        assert!(!index.imports_module_with_findings(&from, "from utils import make\nmake(-1)\n"));
        // An import read the module first: its own check takes that answer.
        assert!(index.imports_module_with_findings(&from, "from pools import make\nmake(-1)\n"));
        assert!(index.may_have_findings(&dir.path().join("pools.py"), quiet));
        // A passing text is not recorded: what its definitions hold is read when an import asks.
        assert!(index.may_have_findings(&dir.path().join("other.py"), pooled));
        assert!(!index.prefiltered.read().unwrap().contains_key(dir.path().join("other.py").as_os_str()));
    }

    #[test]
    fn a_module_whose_text_does_not_pass_has_no_definition_with_findings() {
        // `Parallel` and `Pool` are not the libraries' here: never imported, never an attribute.
        let unreachable = "from pool import make\n\ndef train(x, n):\n    Parallel = make()\n    return Parallel(n)(x)\n\n\
                           class Runner:\n    def run(self, n):\n        return Pool(n)\n";
        let words = ModuleWords::of(unreachable);
        assert!(!words.module && words.functions.is_empty() && words.classes.is_empty());
        let reachable = format!("from joblib import Parallel\nfrom multiprocessing import Pool\n{unreachable}");
        let words = ModuleWords::of(&reachable);
        assert!(words.module && words.functions.contains("train") && words.classes.contains("Runner"));
    }
}
