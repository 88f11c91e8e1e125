//! The documents kustomize transforms, as owned trees in which every node and key remembers where it is
//! written: a source (an index into the loader's files) and a byte range in it. Patches move nodes
//! between trees, so a value of a rendered object still points at the file and line that wrote it.

use ruff_text_size::TextRange;

use capslint_yaml::{Node, ScalarKind};

/// An index into the files a render read ([`super::load::Loader`]).
pub type SourceId = u32;

/// Where a node is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The file.
    pub source: SourceId,
    /// The byte range in it.
    pub range: TextRange,
}

/// What a node holds.
#[derive(Debug, Clone)]
pub enum Data {
    /// A mapping, in document order.
    Map(Vec<(Key, Tree)>),
    /// A sequence.
    Seq(Vec<Tree>),
    /// A scalar as Kubernetes reads it (text), with the kind YAML resolved.
    Scalar(String, ScalarKind),
    /// `null`, `~` or nothing.
    Null,
}

/// A mapping key.
#[derive(Debug, Clone)]
pub struct Key {
    /// Its text.
    pub text: String,
    /// Where it is written.
    pub origin: Origin,
}

/// A node with its origin.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The content.
    pub data: Data,
    /// Where it is written.
    pub origin: Origin,
}

/// How deep a tree may nest (the YAML guard refuses deeper text before it gets here).
const MAX_TREE_DEPTH: usize = capslint_yaml::MAX_DEPTH + 8;

impl Tree {
    /// The tree of a parsed node of file `source`; `None` when it nests deeper than any manifest. Keys
    /// that are collections (which Kubernetes never has) are left out.
    pub fn from_node(node: Node<'_>, source: SourceId) -> Option<Tree> {
        Self::convert(node, source, 0)
    }

    /// The tree of a mapping node with only the entries named in `keys` (the identity of an object
    /// whose body capslint does not need).
    pub fn from_node_keys(node: Node<'_>, source: SourceId, keys: &[&str]) -> Option<Tree> {
        let mut tree = Tree::map(Origin { source, range: node.range() });
        for (key, value) in node.entries() {
            let Some(text) = key.as_str().filter(|text| keys.contains(text)) else { continue };
            tree.set(text, Origin { source, range: key.range() }, Self::convert(value, source, 1)?);
        }
        Some(tree)
    }

    fn convert(node: Node<'_>, source: SourceId, depth: usize) -> Option<Tree> {
        if depth > MAX_TREE_DEPTH {
            return None;
        }
        let origin = Origin { source, range: node.range() };
        let data = if node.is_mapping() {
            let mut entries = Vec::new();
            for (key, value) in node.entries() {
                let Some(text) = key.text() else { continue };
                let key = Key { text: text.into_owned(), origin: Origin { source, range: key.range() } };
                entries.push((key, Self::convert(value, source, depth + 1)?));
            }
            Data::Map(entries)
        } else if node.is_sequence() {
            node.items()
                .map(|item| Self::convert(item, source, depth + 1))
                .collect::<Option<Vec<_>>>()
                .map(Data::Seq)?
        } else {
            match node.scalar() {
                Some(scalar) => Data::Scalar(scalar.text.into_owned(), scalar.kind),
                None => Data::Null,
            }
        };
        Some(Tree { data, origin })
    }

    /// A string scalar made by capslint at `origin` (a name with a prefix, a namespace).
    pub fn string(text: String, origin: Origin) -> Tree {
        Tree { data: Data::Scalar(text, ScalarKind::Str), origin }
    }

    /// An empty mapping at `origin`.
    pub fn map(origin: Origin) -> Tree {
        Tree { data: Data::Map(Vec::new()), origin }
    }

    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Tree> {
        match &self.data {
            Data::Map(entries) => {
                entries.iter().rev().find(|(candidate, _)| candidate.text == key).map(|(_, value)| value)
            }
            _ => None,
        }
    }

    /// The value of `key` in a mapping, to change.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Tree> {
        match &mut self.data {
            Data::Map(entries) => {
                entries.iter_mut().rev().find(|(candidate, _)| candidate.text == key).map(|(_, value)| value)
            }
            _ => None,
        }
    }

    /// The value at a path of keys.
    pub fn path(&self, keys: &[&str]) -> Option<&Tree> {
        keys.iter().try_fold(self, |tree, key| tree.get(key))
    }

    /// The text of a scalar of any kind.
    pub fn text(&self) -> Option<&str> {
        match &self.data {
            Data::Scalar(text, _) => Some(text),
            _ => None,
        }
    }

    /// The text of a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.data {
            Data::Scalar(text, ScalarKind::Str) => Some(text),
            _ => None,
        }
    }

    /// The items of a sequence (empty for anything else).
    pub fn items(&self) -> &[Tree] {
        match &self.data {
            Data::Seq(items) => items,
            _ => &[],
        }
    }

    /// Whether it is null.
    pub fn is_null(&self) -> bool {
        matches!(self.data, Data::Null)
    }

    /// Sets `key` of a mapping to `value` (a non-mapping becomes a mapping first), keeping the key's
    /// place when it is there; the key is written at `key_origin` when it is new.
    pub fn set(&mut self, key: &str, key_origin: Origin, value: Tree) {
        if !matches!(self.data, Data::Map(_)) {
            self.data = Data::Map(Vec::new());
        }
        if let Data::Map(entries) = &mut self.data {
            match entries.iter_mut().rev().find(|(candidate, _)| candidate.text == key) {
                Some((_, slot)) => *slot = value,
                None => entries.push((Key { text: key.to_string(), origin: key_origin }, value)),
            }
        }
    }

    /// Removes `key` from a mapping; whether it was there.
    pub fn remove(&mut self, key: &str) -> bool {
        match &mut self.data {
            Data::Map(entries) => {
                let before = entries.len();
                entries.retain(|(candidate, _)| candidate.text != key);
                entries.len() != before
            }
            _ => false,
        }
    }

    /// How many nodes it has (for the render's work budget).
    pub fn size(&self) -> usize {
        let mut count = 0;
        let mut pending = vec![self];
        while let Some(tree) = pending.pop() {
            count += 1;
            match &tree.data {
                Data::Map(entries) => pending.extend(entries.iter().map(|(_, value)| value)),
                Data::Seq(items) => pending.extend(items),
                _ => {}
            }
        }
        count
    }
}

/// The tree of the one document of `text`, read from `source` (for tests).
#[cfg(test)]
pub(super) fn parse_document(text: &str, source: SourceId) -> Tree {
    let mut found = None;
    capslint_yaml::for_each_document(text, |document| found = Tree::from_node(document, source)).unwrap();
    found.unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str) -> Tree {
        parse_document(text, 7)
    }

    #[test]
    fn nodes_keep_their_ranges_and_kinds() {
        let text = "a: {b: \"4\", c: 4}\nd: [x, ~]\n";
        let tree = tree(text);
        let b = tree.path(&["a", "b"]).unwrap();
        assert_eq!(&text[b.origin.range], "\"4\"");
        assert_eq!(b.origin.source, 7);
        assert_eq!(b.as_str(), Some("4"));
        assert_eq!(tree.path(&["a", "c"]).unwrap().as_str(), None);
        assert_eq!(tree.path(&["a", "c"]).unwrap().text(), Some("4"));
        assert!(tree.get("d").unwrap().items()[1].is_null());
        assert_eq!(tree.size(), 7);
    }

    #[test]
    fn set_and_remove_keep_order() {
        let mut tree = tree("a: 1\nb: 2\n");
        let origin = tree.origin;
        tree.set("a", origin, Tree::string("x".into(), origin));
        tree.set("c", origin, Tree::string("y".into(), origin));
        assert!(tree.remove("b"));
        let Data::Map(entries) = &tree.data else { panic!() };
        let keys: Vec<&str> = entries.iter().map(|(key, _)| key.text.as_str()).collect();
        assert_eq!(keys, ["a", "c"]);
        assert_eq!(tree.get("a").unwrap().text(), Some("x"));
    }
}
