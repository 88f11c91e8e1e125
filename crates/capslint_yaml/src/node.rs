//! A read-only view of saphyr's tree with byte spans: tags unwrapped, scalars as Kubernetes reads them
//! (as strings), mappings looked up by string key. Nothing outside this module touches saphyr's types.

use std::borrow::Cow;

use ruff_text_size::{TextRange, TextSize};
use rustc_hash::FxHashSet;
use saphyr::{MarkedYaml, Scalar as SaphyrScalar, YamlData};

/// Maps saphyr's character indices to byte offsets (saphyr markers count characters): the byte offset of
/// every [`ByteMap::STRIDE`]th character, from which a lookup walks at most that many characters. It takes
/// an eighth of a byte per character, where a table of every character took four times the text.
#[derive(Debug)]
pub(super) struct ByteMap(Option<Vec<u32>>);

impl ByteMap {
    /// How many characters apart the checkpoints are.
    const STRIDE: usize = 32;

    /// The checkpoints of `text`; none are needed for ASCII text.
    pub(super) fn new(text: &str) -> Self {
        if text.is_ascii() {
            return ByteMap(None);
        }
        ByteMap(Some(text.char_indices().step_by(Self::STRIDE).map(|(offset, _)| offset as u32).collect()))
    }

    /// The byte offset in `text` (the text the map was made for) of the character at `index`, clamped to
    /// the end of the text.
    pub(super) fn byte(&self, text: &str, index: usize) -> usize {
        let Some(checkpoints) = &self.0 else { return index.min(text.len()) };
        let Some(&start) = checkpoints.get(index / Self::STRIDE) else { return text.len() };
        let start = start as usize;
        text[start..].char_indices().nth(index % Self::STRIDE).map_or(text.len(), |(offset, _)| start + offset)
    }
}

/// The text of a stream as parsed, its character-to-byte table, and the repairs that map its offsets back
/// to the text as written.
#[derive(Debug)]
pub(super) struct Context<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: ByteMap,
    pub(super) repairs: &'a super::repair::Repairs,
}

impl Context<'_> {
    /// A range of the parsed text in the text as written.
    fn original(&self, range: TextRange) -> TextRange {
        if self.repairs.is_empty() {
            return range;
        }
        let start = self.repairs.original(range.start().to_usize());
        let end = self.repairs.original(range.end().to_usize()).max(start);
        TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32))
    }
}

/// What kind of scalar a value is, as YAML's core schema resolved it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    /// A string (quoted, or plain text that is not a number, boolean or null).
    Str,
    /// An integer.
    Int,
    /// A floating point number.
    Float,
    /// `true` / `false`.
    Bool,
    /// `null`, `~` or nothing.
    Null,
}

/// A scalar with its text as Kubernetes reads it (`4` and `"4"` both read `4`) and its byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scalar<'a> {
    /// The value as text.
    pub text: Cow<'a, str>,
    /// Its kind.
    pub kind: ScalarKind,
    /// Where it is written.
    pub range: TextRange,
}

/// The YAML 1.1 merge key.
const MERGE_KEY: &str = "<<";

/// How many `<<` merges deep entries are followed.
const MAX_MERGE_DEPTH: usize = 8;

/// A node of a YAML document.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    raw: &'a MarkedYaml<'a>,
    context: &'a Context<'a>,
    /// For a node reached through an alias: the alias (`*name`), where it is used.
    site: Option<TextRange>,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Node({:?})", self.range())
    }
}

impl<'a> Node<'a> {
    pub(super) fn new(raw: &'a MarkedYaml<'a>, context: &'a Context<'a>) -> Self {
        Node { raw, context, site: None }
    }

    /// A child node. saphyr copies an anchor's subtree for each alias and gives the copy the alias's
    /// range, but its children keep the anchor's ranges: a child outside its parent's range came through
    /// an alias, and reports the alias's range, so findings point where the alias is used.
    fn wrap(self, raw: &'a MarkedYaml<'a>) -> Node<'a> {
        let child = Node { raw, context: self.context, site: self.site };
        if child.site.is_none() && !self.own_range().contains_range(child.own_range()) {
            return Node { site: Some(self.own_range()), ..child };
        }
        child
    }

    /// The node under any tags (`!!map`, `!custom`).
    fn data(self) -> &'a YamlData<'a, MarkedYaml<'a>> {
        let mut raw = self.raw;
        while let YamlData::Tagged(_, inner) = &raw.data {
            raw = inner;
        }
        &raw.data
    }

    /// The byte range of the node. Block collections end where the next token starts; a node reached
    /// through an alias has the alias's range.
    pub fn range(self) -> TextRange {
        self.context.original(self.site.unwrap_or_else(|| self.own_range()))
    }

    /// The range where the node itself is written, in the text as parsed.
    fn own_range(self) -> TextRange {
        let text = self.context.text;
        let start = self.context.bytes.byte(text, self.raw.span.start.index());
        let end = self.context.bytes.byte(text, self.raw.span.end.index()).max(start);
        TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32))
    }

    /// Whether the node is a copy made by an alias (`*name`) or a merge key (`<<: *name`) of a node written
    /// elsewhere: its range is the alias's, the node itself is written under the anchor.
    pub fn via_alias(self) -> bool {
        self.site.is_some()
    }

    /// The byte offset where the node starts.
    pub fn start(self) -> TextSize {
        self.range().start()
    }

    /// Whether the node is a mapping.
    pub fn is_mapping(self) -> bool {
        matches!(self.data(), YamlData::Mapping(_))
    }

    /// Whether the node is a sequence.
    pub fn is_sequence(self) -> bool {
        matches!(self.data(), YamlData::Sequence(_))
    }

    /// Whether the node is null or absent (`key:` with no value).
    pub fn is_null(self) -> bool {
        matches!(self.data(), YamlData::Value(SaphyrScalar::Null) | YamlData::BadValue)
    }

    /// The key/value pairs written in a mapping, in document order (empty for anything else).
    fn own_entries(self) -> impl Iterator<Item = (Node<'a>, Node<'a>)> + 'a {
        let mapping = match self.data() {
            YamlData::Mapping(mapping) => Some(mapping),
            _ => None,
        };
        mapping
            .into_iter()
            .flat_map(move |mapping| mapping.iter().map(move |(key, value)| (self.wrap(key), self.wrap(value))))
    }

    /// The key/value pairs of a mapping, in document order, followed by those merged in with `<<` (the
    /// YAML 1.1 merge key, which Kubernetes' YAML reader applies) that the mapping does not override.
    pub fn entries(self) -> impl Iterator<Item = (Node<'a>, Node<'a>)> + 'a {
        let merged = if self.own_entries().any(|(key, _)| key.as_str() == Some(MERGE_KEY)) {
            self.merged_entries(0)
        } else {
            Vec::new()
        };
        self.own_entries().filter(|(key, _)| key.as_str() != Some(MERGE_KEY)).chain(merged)
    }

    /// The entries merged in by `<<` (a mapping, or a sequence of mappings where earlier ones win), minus
    /// the keys written in the mapping itself.
    fn merged_entries(self, depth: usize) -> Vec<(Node<'a>, Node<'a>)> {
        let mut merged: Vec<(Node<'a>, Node<'a>)> = Vec::new();
        if depth >= MAX_MERGE_DEPTH {
            return merged;
        }
        let mut taken: FxHashSet<Cow<'a, str>> =
            self.own_entries().filter_map(|(key, _)| key.text()).filter(|key| key.as_ref() != MERGE_KEY).collect();
        let sources = self.own_entries().filter(|(key, _)| key.as_str() == Some(MERGE_KEY)).map(|(_, value)| value);
        for source in sources {
            let maps: Vec<Node<'a>> = if source.is_sequence() { source.items().collect() } else { vec![source] };
            for map in maps.into_iter().filter(|map| map.is_mapping()) {
                let inherited: Vec<(Node<'a>, Node<'a>)> =
                    map.own_entries().filter(|(key, _)| key.as_str() != Some(MERGE_KEY)).collect();
                for (key, value) in inherited.into_iter().chain(map.merged_entries(depth + 1)) {
                    if key.text().is_some_and(|text| taken.insert(text)) {
                        merged.push((key, value));
                    }
                }
            }
        }
        merged
    }

    /// The items of a sequence (empty for anything else).
    pub fn items(self) -> impl Iterator<Item = Node<'a>> + 'a {
        let items: &'a [MarkedYaml<'a>] = match self.data() {
            YamlData::Sequence(items) => items,
            _ => &[],
        };
        items.iter().map(move |item| self.wrap(item))
    }

    /// The key node and value of the entry whose key is the string `key`.
    pub fn entry(self, key: &str) -> Option<(Node<'a>, Node<'a>)> {
        self.entries().find(|(candidate, _)| candidate.as_str() == Some(key))
    }

    /// The value of the entry whose key is the string `key`.
    pub fn get(self, key: &str) -> Option<Node<'a>> {
        self.entry(key).map(|(_, value)| value)
    }

    /// The value at a path of string keys.
    pub fn path(self, keys: &[&str]) -> Option<Node<'a>> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    /// The string of a string scalar (quoted or plain text); `None` for numbers, booleans, null and
    /// collections.
    pub fn as_str(self) -> Option<&'a str> {
        match self.data() {
            YamlData::Value(SaphyrScalar::String(text)) => Some(text.as_ref()),
            YamlData::Representation(text, _, _) => Some(text.as_ref()),
            _ => None,
        }
    }

    /// The source text of a plain scalar without its tag or anchor (`!!float 1e3` gives `1e3`).
    fn raw_text(self) -> &'a str {
        let text = &self.context.text[self.own_range()];
        let mut rest = text.trim();
        while rest.starts_with('!') || rest.starts_with('&') {
            rest = rest.find(char::is_whitespace).map_or("", |space| rest[space..].trim_start());
        }
        rest
    }

    /// The scalar as Kubernetes reads it (a string); `None` for collections and null.
    pub fn scalar(self) -> Option<Scalar<'a>> {
        let (text, kind): (Cow<'a, str>, ScalarKind) = match self.data() {
            YamlData::Value(SaphyrScalar::String(text)) => (Cow::Borrowed(text.as_ref()), ScalarKind::Str),
            YamlData::Representation(text, _, _) => (Cow::Borrowed(text.as_ref()), ScalarKind::Str),
            YamlData::Value(SaphyrScalar::Integer(value)) => (Cow::Owned(value.to_string()), ScalarKind::Int),
            YamlData::Value(SaphyrScalar::FloatingPoint(value)) => {
                let raw = self.raw_text();
                let text = if raw.parse::<f64>().is_ok_and(|parsed| parsed == value.into_inner()) {
                    Cow::Borrowed(raw)
                } else {
                    Cow::Owned(value.into_inner().to_string())
                };
                (text, ScalarKind::Float)
            }
            YamlData::Value(SaphyrScalar::Boolean(value)) => {
                (Cow::Borrowed(if *value { "true" } else { "false" }), ScalarKind::Bool)
            }
            _ => return None,
        };
        Some(Scalar { text, kind, range: self.range() })
    }

    /// The scalar's text, for any scalar kind.
    pub fn text(self) -> Option<Cow<'a, str>> {
        self.scalar().map(|scalar| scalar.text)
    }

    /// The integer value of an integer scalar (or a string holding one, as Helm output sometimes has).
    pub fn as_u64(self) -> Option<u64> {
        match self.scalar()? {
            Scalar { kind: ScalarKind::Int | ScalarKind::Str, text, .. } => text.trim().parse().ok(),
            _ => None,
        }
    }
}
