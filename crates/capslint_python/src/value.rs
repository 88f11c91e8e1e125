//! What resolution answers: a value ([`Value`], [`Resolved`]), the dicts it follows entry by entry
//! ([`DictValue`], [`DictEntry`]), the place it is evaluated at ([`At`]) and why a value is unknown
//! ([`Unknown`]). The resolver that computes them is [`super::resolve`]; the project's summaries of other
//! modules hold them too.

use std::rc::Rc;

use ruff_python_ast::Expr;
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::FxHashSet;

use super::limits::Limit;
use super::semantic::ScopeId;
use super::site::Site;
use capslint_cpu::thread_variables;

/// A position in the program: the scope an expression is evaluated in and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    /// The scope of the use.
    pub scope: ScopeId,
    /// The offset of the use.
    pub offset: TextSize,
}

/// Why a value could not be resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// A function parameter: the caller decides.
    Parameter,
    /// Something else (an attribute, a call result, another module's value, conflicting definitions).
    Other,
    /// Another module's value that its resolution stopped following at a limit.
    Cut(Limit),
}

/// The value of a dict entry: an expression of this file, evaluated lazily where it was written, or a
/// value another module of the project defines, evaluated when that module was read.
#[derive(Debug, Clone)]
pub enum EntryValue<'a> {
    /// Written in this file.
    Written {
        /// The value expression.
        expr: &'a Expr,
        /// Where it is evaluated.
        at: At,
    },
    /// Defined in another module.
    Imported {
        /// The value, with its definition as the binding.
        resolved: Rc<Resolved<'static>>,
        /// The value's source text, for messages.
        text: Rc<str>,
    },
}

/// One entry of a resolved dict.
#[derive(Debug, Clone)]
pub struct DictEntry<'a> {
    /// The key: borrowed from the tree when a keyword argument writes it, owned when a value made it.
    pub key: std::borrow::Cow<'a, str>,
    /// The whole entry (`"n_jobs": -1`, or `n_jobs=-1` in `dict(...)`), for reporting; for an entry
    /// defined in another module, its range there.
    pub range: TextRange,
    /// The value.
    pub value: EntryValue<'a>,
}

impl<'a> DictEntry<'a> {
    pub(crate) fn written(key: impl Into<std::borrow::Cow<'a, str>>, range: TextRange, expr: &'a Expr, at: At) -> Self {
        DictEntry { key: key.into(), range, value: EntryValue::Written { expr, at } }
    }

    /// The value expression and where to evaluate it, when the entry is written in this file.
    pub fn expr(&self) -> Option<(&'a Expr, At)> {
        match &self.value {
            EntryValue::Written { expr, at } => Some((expr, *at)),
            EntryValue::Imported { .. } => None,
        }
    }

    /// Whether another module defines the entry (its range is not in this file).
    pub fn is_imported(&self) -> bool {
        matches!(self.value, EntryValue::Imported { .. })
    }

    /// The value's source text, for messages.
    pub fn value_text<'s>(&'s self, source: &'s str) -> &'s str {
        match &self.value {
            EntryValue::Written { expr, .. } => &source[expr.range()],
            EntryValue::Imported { text, .. } => text,
        }
    }
}

/// A dict literal, `dict(...)` call or merge, with later mutations applied.
#[derive(Debug, Clone, Default)]
pub struct DictValue<'a> {
    /// The entries, later ones overriding earlier ones with the same key.
    pub entries: Vec<DictEntry<'a>>,
    /// Whether part of it could not be resolved (`**unknown`, `.update(unknown)`).
    pub open: bool,
    /// Where the dict literal was written, if it came through a name.
    pub origin: Option<Site>,
}

impl<'a> DictValue<'a> {
    /// The effective entry for `key`: the last one written.
    pub fn get(&self, key: &str) -> Option<&DictEntry<'a>> {
        self.entries.iter().rev().find(|entry| entry.key == key)
    }

    /// The effective entries, one per key, in first-written order of their final value.
    pub fn effective_entries(&self) -> impl Iterator<Item = &DictEntry<'a>> {
        let last = self.last_writes();
        self.entries.iter().zip(last).filter_map(|(entry, last)| last.then_some(entry))
    }

    /// For each entry, whether no later entry writes its key.
    pub(crate) fn last_writes(&self) -> Vec<bool> {
        let mut seen = FxHashSet::default();
        let mut last = vec![false; self.entries.len()];
        for (index, entry) in self.entries.iter().enumerate().rev() {
            last[index] = seen.insert(entry.key.as_ref());
        }
        last
    }

    /// Drops the entries a later one overrides, so merging copies each key once.
    pub(crate) fn dedup(&mut self) {
        let last = self.last_writes();
        let mut index = 0;
        self.entries.retain(|_| {
            index += 1;
            last[index - 1]
        });
    }
}

/// What an expression resolves to.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// A dict (shared: resolved values are memoised and copied often).
    Dict(Rc<DictValue<'a>>),
    /// A tuple or list of string literals (e.g. the variables a loop sets).
    Strings(Vec<String>),
    /// Derived from a node-wide CPU count; `call` names the function, `origin` is the call.
    NodeCpus {
        /// The counting function, as written canonically (`os.cpu_count`).
        call: &'static str,
        /// The call expression.
        origin: Site,
    },
    /// Derived from the size of the data (`len(...)`).
    DataSize {
        /// The `len(...)` call.
        origin: Site,
    },
    /// Bounded by the pod's CPU cap: a cap variable read, a configured helper, a quota-aware count.
    Capped,
    /// Differs by path (`a if c else b`, a name bound differently on two branches, `m.get(k, default)`):
    /// two to [`super::limits::MAX_ALTERNATIVES`] alternatives, none of them itself a `OneOf`, that differ
    /// ([`super::paths`] builds and reads them).
    OneOf(Rc<[Alternative<'a>]>),
    /// Not known statically.
    Unknown(Unknown),
}

impl Value<'_> {
    /// Whether the value is a known number (int, or float truncated as joblib does).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(value) => Some(*value),
            Value::Float(value) if value.is_finite() => Some(value.floor() as i64),
            Value::Bool(value) => Some(i64::from(*value)),
            _ => None,
        }
    }

    /// Whether Python reads the value as true (`bool(value)`), when that is known: a number other than
    /// zero, a non-empty string or list, a closed dict with an entry, a node-wide CPU count (at least
    /// one). An open dict (an unknown part, or a `pop`, `del` or `clear` that may have emptied it), a
    /// value that differs by path and an unknown one are not known.
    pub fn truthiness(&self) -> Option<bool> {
        match self {
            Value::Int(value) => Some(*value != 0),
            Value::Float(value) => Some(*value != 0.0),
            Value::Str(value) => Some(!value.is_empty()),
            Value::Bool(value) => Some(*value),
            Value::None => Some(false),
            Value::Dict(dict) => (!dict.open).then_some(!dict.entries.is_empty()),
            Value::Strings(strings) => Some(!strings.is_empty()),
            Value::NodeCpus { .. } => Some(true),
            Value::DataSize { .. } | Value::Capped | Value::OneOf(_) | Value::Unknown(_) => None,
        }
    }
}

/// The value on one path of a [`Value::OneOf`], and where and when that path takes it.
#[derive(Debug, Clone)]
pub struct Alternative<'a> {
    /// The value on this path (never a `OneOf`) and the binding it came through.
    pub resolved: Resolved<'a>,
    /// Where this path's value is written (the branch, the binding, the default), for a label.
    pub site: Option<Site>,
    /// When this path is taken, for the label ("when `settings` has no `n_jobs`"); `None` for a branch
    /// or binding, which the site shows.
    pub condition: Option<Rc<str>>,
}

/// A resolved value and, when it came through a name, where that name was bound.
#[derive(Debug, Clone)]
pub struct Resolved<'a> {
    /// The value.
    pub value: Value<'a>,
    /// The first binding followed, for a secondary label ("`N_JOBS` is defined here").
    pub binding: Option<Site>,
}

impl<'a> Resolved<'a> {
    pub(crate) fn of(value: Value<'a>) -> Self {
        Resolved { value, binding: None }
    }

    pub(crate) fn through(mut self, binding: impl Into<Site>) -> Self {
        self.binding.get_or_insert_with(|| binding.into());
        self
    }
}

/// The names that make a value "bounded": cap variables and helper functions.
#[derive(Debug, Clone, Default)]
pub struct CapNames {
    /// Configured thread-cap variables (plus the Downward API variable).
    pub variables: Vec<String>,
    /// Configured helper functions (fully qualified).
    pub helpers: Vec<String>,
}

impl CapNames {
    /// The names the settings make bounded: the configured thread caps, the Downward API variable and
    /// the cap helpers.
    pub fn for_settings(settings: &capslint_workspace::settings::Settings) -> Self {
        let mut variables = settings.thread_caps.clone();
        variables.extend(settings.limit_env.iter().cloned());
        CapNames { variables, helpers: settings.cap_helpers.clone() }
    }

    /// Whether reading `variable` yields a value bounded by the pod's CPU cap.
    pub fn is_cap_variable(&self, variable: &str) -> bool {
        thread_variables::is_cap(variable)
            || self.variables.iter().any(|name| name == variable)
            || variable.ends_with("CPU_LIMIT")
    }
}
