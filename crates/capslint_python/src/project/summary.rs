//! The summary of one module of the project: what its module-level names and its classes' attributes
//! evaluate to, owned, so it outlives the module's syntax tree and is shared by every file that imports
//! from it. Evaluated by the same resolver, budget and bounds as a checked file; names the module imports
//! stay names ([`Export::Alias`]).

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use ruff_python_ast::{self as ast, ModModule, PySourceType};
use ruff_python_parser::{Parsed, parse_unchecked_source};
use ruff_text_size::TextRange;
use rustc_hash::FxHashMap;

use super::MAX_MODULE_BYTES;
use crate::budget::Budget;
use crate::limits::{Cut, Limit, MAX_DICT_NESTING};
use crate::prescan;
use crate::project_module::ProjectModule;
use crate::recovery::Distrusted;
use crate::resolve::{Resolver, init_sets_pod_arguments};
use crate::returns;
use crate::semantic::{Binding, BindingKind, ScopeId, SemanticModel};
use crate::site::Site;
use crate::value::{At, CapNames, DictEntry, DictValue, EntryValue, Resolved, Unknown, Value};
use capslint_diagnostics::source::SourceFile;
use capslint_workspace::confine::ConfinedReader;

/// How much of a value's source text is kept for messages.
const MAX_TEXT_CHARS: usize = 60;

/// One module, summarised.
#[derive(Debug)]
pub struct ModuleSummary {
    /// Its path.
    pub path: PathBuf,
    /// Its text and display name, where findings' secondary labels point.
    pub file: Arc<SourceFile>,
    /// Its module-level names.
    pub names: FxHashMap<String, Export>,
}

/// What a module-level name (or a class attribute) is.
#[derive(Debug)]
pub enum Export {
    /// A value this module computes.
    Value(Exported),
    /// An imported name (`from .defaults import N_JOBS`), as written: looked up from this module.
    Alias(String),
    /// A class.
    Class(ExportedClass),
    /// A module-level function.
    Function(ExportedFunction),
}

/// A module-level function: where its `def` is (its body is read from the module's tree when a call is
/// followed into it), and what a call of it returns when the rules read that value.
#[derive(Debug)]
pub struct ExportedFunction {
    /// The range of the `def`.
    pub def: TextRange,
    /// A node-wide CPU count every call returns ([`crate::resolve::Resolver::returned_by`]), defined at
    /// the function's name; only computed in a module whose text names such a count.
    pub returns: Option<Exported>,
}

/// A class: its bases (for pod-operator subclasses) and its attributes (`Defaults.N_JOBS`).
#[derive(Debug)]
pub struct ExportedClass {
    /// The qualified names of its bases, as this module's resolver names them.
    pub bases: Vec<String>,
    /// Whether its `__init__` may set resources or environment.
    pub sets_pod_arguments: bool,
    /// Its class-level attributes with a known value.
    pub attributes: FxHashMap<String, Export>,
}

/// A value and where it is defined in the module.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The value.
    pub value: Owned,
    /// Where it is defined (the name's binding, or the dict entry).
    pub definition: TextRange,
}

/// A resolved value without borrows of the module's syntax tree.
#[derive(Debug, Clone)]
pub enum Owned {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A boolean.
    Bool(bool),
    /// `None`.
    None,
    /// A node-wide CPU count, from `call` at `origin`.
    NodeCpus {
        /// The counting function.
        call: &'static str,
        /// Where it is called.
        origin: TextRange,
    },
    /// The size of the data.
    DataSize {
        /// Where it is measured.
        origin: TextRange,
    },
    /// Bounded by the pod's CPU cap.
    Capped,
    /// A list of strings.
    Strings(Vec<String>),
    /// A value the module's resolution stopped following at a limit.
    Cut(Limit),
    /// A dict.
    Dict {
        /// Its effective entries.
        entries: Vec<OwnedEntry>,
        /// Whether part of it is unknown.
        open: bool,
        /// Where it was written.
        origin: Option<TextRange>,
    },
}

/// One entry of an owned dict.
#[derive(Debug, Clone)]
pub struct OwnedEntry {
    /// The key.
    pub key: String,
    /// The value (unknown values are kept as `None` here, so the entry's presence stays known).
    pub value: Option<Owned>,
    /// The entry's range in the module.
    pub range: TextRange,
    /// The value's source text.
    pub text: String,
}

impl Exported {
    /// The value as the importing file's resolver sees it, defined in `file`.
    pub fn resolved(&self, file: &Arc<SourceFile>) -> Resolved<'static> {
        Resolved {
            value: self.value.value(file),
            binding: Some(Site::Elsewhere { file: Arc::clone(file), range: self.definition }),
        }
    }
}

impl Owned {
    fn value(&self, file: &Arc<SourceFile>) -> Value<'static> {
        let elsewhere = |range: TextRange| Site::Elsewhere { file: Arc::clone(file), range };
        match self {
            Owned::Int(value) => Value::Int(*value),
            Owned::Float(value) => Value::Float(*value),
            Owned::Str(value) => Value::Str(value.clone()),
            Owned::Bool(value) => Value::Bool(*value),
            Owned::None => Value::None,
            Owned::NodeCpus { call, origin } => Value::NodeCpus { call, origin: elsewhere(*origin) },
            Owned::DataSize { origin } => Value::DataSize { origin: elsewhere(*origin) },
            Owned::Capped => Value::Capped,
            Owned::Strings(strings) => Value::Strings(strings.clone()),
            Owned::Cut(limit) => Value::Unknown(Unknown::Cut(*limit)),
            Owned::Dict { entries, open, origin } => Value::Dict(Rc::new(DictValue {
                entries: entries
                    .iter()
                    .map(|entry| DictEntry {
                        key: entry.key.clone().into(),
                        range: entry.range,
                        value: EntryValue::Imported {
                            resolved: Rc::new(Resolved {
                                value: entry
                                    .value
                                    .as_ref()
                                    .map_or(Value::Unknown(Unknown::Other), |value| value.value(file)),
                                binding: Some(elsewhere(entry.range)),
                            }),
                            text: Rc::from(entry.text.as_str()),
                        },
                    })
                    .collect(),
                open: *open,
                origin: origin.map(elsewhere),
            })),
        }
    }
}

/// Why a module was not summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// It cannot be read (or is outside the run's roots), is not UTF-8, or does not parse: its names are
    /// not the project's to resolve.
    Unreadable,
    /// A limit stopped it: too large to read, or its analysis was refused or spent its budget.
    Limit(Limit),
}

/// Reads, parses and summarises the module at `path`, never outside the run's roots, with its tree: a
/// module whose function a call is followed into, or whose own check parses it, is then parsed once.
pub fn read_with_tree(
    path: &Path,
    display_name: String,
    caps: &CapNames,
    reader: &ConfinedReader,
) -> Result<(ModuleSummary, ProjectModule), Unread> {
    let (summary, parsed) = read_parsed(path, display_name, caps, reader)?;
    let module = ProjectModule { file: Arc::clone(&summary.file), parsed };
    Ok((summary, module))
}

fn read_parsed(
    path: &Path,
    display_name: String,
    caps: &CapNames,
    reader: &ConfinedReader,
) -> Result<(ModuleSummary, Parsed<ModModule>), Unread> {
    let text = reader.read_to_string(path, &display_name, MAX_MODULE_BYTES).map_err(|refusal| match refusal {
        capslint_workspace::confine::Refusal::TooLarge(..) => Unread::Limit(Limit::ModuleSize),
        _ => Unread::Unreadable,
    })?;
    let file = Arc::new(SourceFile::new(path.to_path_buf(), display_name, text));
    let parsed = parse_checked(file.text())?;
    let names = stacker::maybe_grow(super::super::ANALYSIS_STACK_BYTES, super::super::ANALYSIS_STACK_BYTES, || {
        summarise(file.text(), &parsed, caps)
    })?;
    Ok((ModuleSummary { path: path.to_path_buf(), file, names }, parsed))
}

/// Parses the text of a module already summarised (so within [`MAX_MODULE_BYTES`] and the prescan's
/// bounds), keeping its tree.
pub fn parse(file: &Arc<SourceFile>) -> Result<ProjectModule, Unread> {
    let parsed = parse_checked(file.text())?;
    Ok(ProjectModule { file: Arc::clone(file), parsed })
}

/// The tree of a module's text, within the prescan's bounds and without syntax errors.
fn parse_checked(text: &str) -> Result<Parsed<ModModule>, Unread> {
    let pending = prescan::before_parsing(text).map_err(|_| Unread::Limit(Limit::ModuleBudget))?;
    let parsed = stacker::maybe_grow(super::super::ANALYSIS_STACK_BYTES, super::super::ANALYSIS_STACK_BYTES, || {
        parse_unchecked_source(text, PySourceType::Python)
    });
    prescan::after_parsing(text, parsed.tokens(), pending).map_err(|_| Unread::Limit(Limit::ModuleBudget))?;
    if !parsed.errors().is_empty() {
        return Err(Unread::Unreadable);
    }
    Ok(parsed)
}

fn summarise(text: &str, parsed: &Parsed<ModModule>, caps: &CapNames) -> Result<FxHashMap<String, Export>, Unread> {
    let body = &parsed.syntax().body;
    let model = SemanticModel::build(body, &Distrusted::none());
    let budget = Budget::for_source(text.len());
    let resolver = Resolver::new(&model, caps, &budget);
    let names = scope_exports(&resolver, text, ScopeId::MODULE, true);
    if budget.is_exhausted() { Err(Unread::Limit(Limit::ModuleBudget)) } else { Ok(names) }
}

/// The exports of the names `scope` binds: values, aliases of imports, and (at module level) classes.
fn scope_exports<'a>(
    resolver: &Resolver<'_, 'a>,
    text: &str,
    scope: ScopeId,
    module: bool,
) -> FxHashMap<String, Export> {
    let model = resolver.model();
    let mut exports = FxHashMap::default();
    for name in model.names_in(scope) {
        let Some(bindings) = model.final_bindings(name, scope) else { continue };
        let export = match bindings {
            [Binding { kind: BindingKind::Import(index), .. }] => Some(Export::Alias(model.import_name(*index).into())),
            [Binding { kind: BindingKind::Class(class), .. }] if module => class_export(resolver, text, class),
            [Binding { kind: BindingKind::Function(function), .. }] if module => {
                Some(Export::Function(function_export(resolver, text, function)))
            }
            _ if bindings
                .iter()
                .any(|binding| matches!(binding.kind, BindingKind::Import(_) | BindingKind::Class(_))) =>
            {
                None
            }
            _ => {
                let (resolved, cut) = resolver.watch(|| resolver.eval_final(name, scope));
                resolved.and_then(|resolved| {
                    let definition = resolved.binding.as_ref().and_then(Site::here)?;
                    let value = owned_or_cut(resolver, text, &resolved.value, cut.as_ref(), 0)?;
                    Some(Export::Value(Exported { value, definition }))
                })
            }
        };
        if let Some(export) = export {
            exports.insert(name.to_string(), export);
        }
    }
    exports
}

/// A module-level function, with what a call of it returns where the module's text names a node-wide CPU
/// count (no other function can return one: the summary follows no other module).
fn function_export<'a>(
    resolver: &Resolver<'_, 'a>,
    text: &str,
    function: &'a ast::StmtFunctionDef,
) -> ExportedFunction {
    let returns = (returns::returns_as_written(function) && names_a_node_count(text))
        .then(|| {
            let (resolved, cut) = resolver.watch(|| resolver.returned_by(function));
            let value = owned_or_cut(resolver, text, &resolved.value, cut.as_ref(), 0)?;
            matches!(value, Owned::NodeCpus { .. }).then(|| Exported { value, definition: function.name.range })
        })
        .flatten();
    ExportedFunction { def: function.range, returns }
}

/// Whether `text` may call a node-wide CPU count ([`crate::libraries::NODE_CPU_COUNT_CALLS`]): each is
/// spelled with one of these words, however it is imported.
pub fn names_a_node_count(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"cpu_count").is_some()
        || memchr::memmem::find(text.as_bytes(), b"sched_getaffinity").is_some()
}

fn class_export<'a>(resolver: &Resolver<'_, 'a>, text: &str, class: &'a ast::StmtClassDef) -> Option<Export> {
    let model = resolver.model();
    let scope = model.scope_of_node(class.range.start())?;
    let at = At { scope: ScopeId::MODULE, offset: class.range.start() };
    let bases = class
        .arguments
        .iter()
        .flat_map(|arguments| arguments.args.iter())
        .filter_map(|base| resolver.qualified_name(base, at))
        .collect();
    Some(Export::Class(ExportedClass {
        bases,
        sets_pod_arguments: init_sets_pod_arguments(class),
        attributes: scope_exports(resolver, text, scope, false),
    }))
}

/// The owned form of a value, or [`Owned::Cut`] when it is unknown (or a dict with unknown parts) because
/// `cut` stopped its resolution.
fn owned_or_cut<'a>(
    resolver: &Resolver<'_, 'a>,
    text: &str,
    value: &Value<'a>,
    cut: Option<&Cut>,
    nesting: u32,
) -> Option<Owned> {
    let incomplete = match value {
        Value::Unknown(_) => true,
        Value::Dict(dict) => dict.open,
        _ => false,
    };
    match cut {
        Some(cut) if incomplete && cut.limit != Limit::Budget => Some(Owned::Cut(cut.limit)),
        _ => owned(resolver, text, value, nesting),
    }
}

/// The owned form of a value; `None` for values that are not known.
fn owned<'a>(resolver: &Resolver<'_, 'a>, text: &str, value: &Value<'a>, nesting: u32) -> Option<Owned> {
    let here = |site: &Site| site.here().unwrap_or_default();
    Some(match value {
        Value::Int(value) => Owned::Int(*value),
        Value::Float(value) => Owned::Float(*value),
        Value::Str(value) => Owned::Str(value.clone()),
        Value::Bool(value) => Owned::Bool(*value),
        Value::None => Owned::None,
        Value::NodeCpus { call, origin } => Owned::NodeCpus { call, origin: here(origin) },
        Value::DataSize { origin } => Owned::DataSize { origin: here(origin) },
        Value::Capped => Owned::Capped,
        Value::Strings(strings) => Owned::Strings(strings.clone()),
        Value::Dict(dict) if nesting < MAX_DICT_NESTING => Owned::Dict {
            entries: dict
                .effective_entries()
                .map(|entry| {
                    let (resolved, cut) = resolver.watch(|| resolver.eval_entry(entry));
                    OwnedEntry {
                        key: entry.key.to_string(),
                        value: owned_or_cut(resolver, text, &resolved.value, cut.as_ref(), nesting + 1),
                        range: entry.range,
                        text: shortened(entry.value_text(text)),
                    }
                })
                .collect(),
            open: dict.open,
            origin: dict.origin.as_ref().and_then(Site::here),
        },
        Value::Dict(_) => Owned::Cut(Limit::DictNesting),
        Value::Unknown(Unknown::Cut(limit)) => Owned::Cut(*limit),
        // Values that differ by path are not kept across modules.
        Value::OneOf(_) | Value::Unknown(_) => return None,
    })
}

fn shortened(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}
