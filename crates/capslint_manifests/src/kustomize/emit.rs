//! A rendered tree written back out as YAML (JSON-style flow collections, every string quoted), so the
//! ordinary model builder reads it as it reads any manifest; each node's place in that text is recorded
//! with its [`Origin`], which maps the model's ranges back to the files that wrote them.

use std::fmt::Write as _;

use super::tree::{Data, Origin, Tree};
use capslint_yaml::ScalarKind;

/// A tree as text, with where each node and key of it starts.
#[derive(Debug, Default)]
pub struct Emitted {
    /// The YAML text.
    pub text: String,
    /// `(offset in text, origin)` of every node and key, by offset.
    pub spans: Vec<(u32, Origin)>,
}

impl Emitted {
    /// The origin of the node that starts at `offset` of the text, else of the last one before it.
    pub fn origin_at(&self, offset: u32) -> Option<Origin> {
        let index = self.spans.partition_point(|(start, _)| *start <= offset);
        index.checked_sub(1).map(|index| self.spans[index].1)
    }
}

/// Writes `tree` out.
pub fn emit(tree: &Tree) -> Emitted {
    let mut emitted = Emitted::default();
    write_tree(tree, &mut emitted);
    emitted.text.push('\n');
    emitted
}

fn mark(emitted: &mut Emitted, origin: Origin) {
    emitted.spans.push((emitted.text.len() as u32, origin));
}

fn write_tree(tree: &Tree, emitted: &mut Emitted) {
    mark(emitted, tree.origin);
    match &tree.data {
        Data::Map(entries) => {
            emitted.text.push('{');
            for (index, (key, value)) in entries.iter().enumerate() {
                if index > 0 {
                    emitted.text.push_str(", ");
                }
                mark(emitted, key.origin);
                quote(&key.text, &mut emitted.text);
                emitted.text.push_str(": ");
                write_tree(value, emitted);
            }
            emitted.text.push('}');
        }
        Data::Seq(items) => {
            emitted.text.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    emitted.text.push_str(", ");
                }
                write_tree(item, emitted);
            }
            emitted.text.push(']');
        }
        Data::Scalar(text, ScalarKind::Int | ScalarKind::Float | ScalarKind::Bool) if plain(text) => {
            emitted.text.push_str(text);
        }
        Data::Scalar(text, _) => quote(text, &mut emitted.text),
        Data::Null => emitted.text.push_str("null"),
    }
}

/// Whether a number or boolean's text can be written unquoted in a flow collection.
fn plain(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"+-._".contains(&byte))
}

/// A YAML double-quoted scalar (JSON's escapes are YAML's).
fn quote(text: &str, out: &mut String) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            control
                if control.is_control() || control == '\u{feff}' || ('\u{2028}'..='\u{2029}').contains(&control) =>
            {
                let _ = write!(out, "\\u{:04x}", u32::from(control));
            }
            other => out.push(other),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Tree {
        crate::kustomize::tree::parse_document(text, 0)
    }

    #[test]
    fn emitted_text_reads_back_with_the_same_values_and_node_starts() {
        let source = "a: {b: \"4\", c: 4, d: 1e3, e: true}\nf: [x, ~, \"q\\\"uote\", \"é\\n\\u0001\"]\ng: .5\n";
        let tree = parse(source);
        let emitted = emit(&tree);
        let again = parse(&emitted.text);
        for path in [&["a", "b"][..], &["a", "c"], &["a", "d"], &["a", "e"], &["g"]] {
            let (one, two) = (tree.path(path).unwrap(), again.path(path).unwrap());
            assert_eq!(one.text(), two.text(), "{path:?}");
            assert_eq!(one.as_str().is_some(), two.as_str().is_some(), "{path:?}");
            // Every node of the emitted text starts where a span says, with the original's origin.
            let origin = emitted.origin_at(u32::from(two.origin.range.start())).unwrap();
            assert_eq!(origin, one.origin, "{path:?}");
        }
        let items: Vec<Option<&str>> = again.get("f").unwrap().items().iter().map(Tree::text).collect();
        assert_eq!(items, [Some("x"), None, Some("q\"uote"), Some("é\n\u{1}")]);
    }
}
