//! The path of keys and indices that leads to a value, as messages show it: `model.params.n_jobs`,
//! `trials[0].n_jobs` (Hydra's override syntax for nested keys), with keys that are not plain words
//! quoted.

use std::borrow::Cow;
use std::fmt::Write;

/// How many characters of a path a message shows; a longer path keeps its end.
const MAX_CHARS: usize = 120;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'a> {
    /// A mapping key.
    Key(Cow<'a, str>),
    /// A sequence index.
    Index(usize),
}

/// Renders `segments` as a path.
pub fn render<'s, 'a: 's>(segments: impl IntoIterator<Item = &'s Segment<'a>>) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Segment::Index(index) => {
                let _ = write!(out, "[{index}]");
            }
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                if is_plain(key) {
                    out.push_str(key);
                } else {
                    out.push_str(&serde_json::to_string(key.as_ref()).unwrap_or_else(|_| "\"?\"".to_string()));
                }
            }
        }
    }
    let chars = out.chars().count();
    if chars <= MAX_CHARS {
        return out;
    }
    let tail: String = out.chars().skip(chars - (MAX_CHARS - 1)).collect();
    format!("…{tail}")
}

/// Whether a key can be shown without quotes: ASCII letters, digits, `_` and `-`.
fn is_plain(key: &str) -> bool {
    !key.is_empty() && key.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

/// The paths of the collections of a tree walked without recursion: each collection records its parent
/// and the segment that leads to it, so a path is rendered only for the keys that are reported.
#[derive(Debug, Default)]
pub struct Tree<'a> {
    /// `(parent, segment)` of every collection; ids are indices plus one, [`Tree::ROOT`] is the root.
    nodes: Vec<(usize, Segment<'a>)>,
}

impl<'a> Tree<'a> {
    /// The id of the document's root.
    pub const ROOT: usize = 0;

    /// Records the collection reached from `parent` by `segment`; returns its id.
    pub fn child(&mut self, parent: usize, segment: Segment<'a>) -> usize {
        self.nodes.push((parent, segment));
        self.nodes.len()
    }

    /// The path of `key` in the collection `at`.
    pub fn render(&self, at: usize, key: &str) -> String {
        let mut segments = Vec::new();
        let mut id = at;
        while let Some((parent, segment)) = id.checked_sub(1).and_then(|index| self.nodes.get(index)) {
            segments.push(segment);
            id = *parent;
        }
        segments.reverse();
        let last = Segment::Key(Cow::Borrowed(key));
        render(segments.into_iter().chain(std::iter::once(&last)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_hydra_overrides() {
        let mut tree = Tree::default();
        let model = tree.child(Tree::ROOT, Segment::Key("model".into()));
        let trials = tree.child(model, Segment::Key("trials".into()));
        let first = tree.child(trials, Segment::Index(0));
        assert_eq!(tree.render(first, "n_jobs"), "model.trials[0].n_jobs");
        assert_eq!(tree.render(Tree::ROOT, "n_jobs"), "n_jobs");
        let odd = tree.child(Tree::ROOT, Segment::Key("a.b c".into()));
        assert_eq!(tree.render(odd, "nthread"), "\"a.b c\".nthread");
    }

    #[test]
    fn long_paths_keep_their_end() {
        let segments: Vec<Segment<'_>> = (0..100).map(|index| Segment::Key(format!("k{index}").into())).collect();
        let path = render(&segments);
        assert_eq!(path.chars().count(), MAX_CHARS);
        assert!(path.starts_with('…') && path.ends_with("k98.k99"), "{path}");
    }
}
