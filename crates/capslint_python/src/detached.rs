//! A value resolved in one module, detached from that module's syntax tree so that a function of another
//! module can read it as a parameter ([`super::crossmodule`]): every place it names becomes a place in the
//! caller's file ([`Site::Elsewhere`]), and a dict's entries are evaluated where they are written and kept
//! as values ([`EntryValue::Imported`]), so the labels still point at the caller's code.

use std::rc::Rc;
use std::sync::Arc;

use super::limits::{Limit, MAX_DICT_NESTING};
use super::resolve::Resolver;
use super::site::Site;
use super::value::{Alternative, DictEntry, DictValue, EntryValue, Resolved, Unknown, Value};
use capslint_diagnostics::source::SourceFile;

/// Detaches values resolved in the caller's file (`file`, which `resolver` resolves).
pub struct Detacher<'r, 'm, 'a> {
    /// The caller's resolver, which evaluates its dicts' entries.
    pub resolver: &'r Resolver<'m, 'a>,
    /// The caller's file.
    pub file: &'r Arc<SourceFile>,
}

impl<'a> Detacher<'_, '_, 'a> {
    /// `resolved`, with its places in the caller's file.
    pub fn resolved(&self, resolved: &Resolved<'a>) -> Resolved<'static> {
        Resolved {
            value: self.value(&resolved.value, 0),
            binding: resolved.binding.as_ref().map(|site| self.site(site)),
        }
    }

    fn site(&self, site: &Site) -> Site {
        match site {
            Site::Here(range) => Site::Elsewhere { file: Arc::clone(self.file), range: *range },
            elsewhere => elsewhere.clone(),
        }
    }

    fn value(&self, value: &Value<'a>, nesting: u32) -> Value<'static> {
        match value {
            Value::Int(value) => Value::Int(*value),
            Value::Float(value) => Value::Float(*value),
            Value::Str(value) => Value::Str(value.clone()),
            Value::Bool(value) => Value::Bool(*value),
            Value::None => Value::None,
            Value::Strings(strings) => Value::Strings(strings.clone()),
            Value::NodeCpus { call, origin } => Value::NodeCpus { call, origin: self.site(origin) },
            Value::DataSize { origin } => Value::DataSize { origin: self.site(origin) },
            Value::Capped => Value::Capped,
            Value::Unknown(unknown) => Value::Unknown(*unknown),
            Value::OneOf(alternatives) => Value::OneOf(
                alternatives
                    .iter()
                    .map(|alternative| Alternative {
                        resolved: Resolved {
                            value: self.value(&alternative.resolved.value, nesting),
                            binding: alternative.resolved.binding.as_ref().map(|site| self.site(site)),
                        },
                        site: alternative.site.as_ref().map(|site| self.site(site)),
                        condition: alternative.condition.clone(),
                    })
                    .collect(),
            ),
            Value::Dict(dict) if nesting < MAX_DICT_NESTING => Value::Dict(Rc::new(self.dict(dict, nesting))),
            Value::Dict(_) => Value::Unknown(Unknown::Cut(Limit::DictNesting)),
        }
    }

    fn dict(&self, dict: &DictValue<'a>, nesting: u32) -> DictValue<'static> {
        let source = self.file.text();
        let entries = dict
            .effective_entries()
            .map(|entry| {
                let (resolved, _) = self.resolver.watch(|| self.resolver.eval_entry(entry));
                let value = self.value(&resolved.value, nesting + 1);
                let binding = match &entry.value {
                    EntryValue::Written { .. } => Site::Elsewhere { file: Arc::clone(self.file), range: entry.range },
                    EntryValue::Imported { resolved, .. } => resolved
                        .binding
                        .as_ref()
                        .map_or_else(|| self.site(&Site::Here(entry.range)), |site| self.site(site)),
                };
                DictEntry {
                    key: std::borrow::Cow::Owned(entry.key.to_string()),
                    range: entry.range,
                    value: EntryValue::Imported {
                        resolved: Rc::new(Resolved { value, binding: Some(binding) }),
                        text: Rc::from(entry.value_text(source)),
                    },
                }
            })
            .collect();
        DictValue { entries, open: dict.open, origin: dict.origin.as_ref().map(|site| self.site(site)) }
    }
}
