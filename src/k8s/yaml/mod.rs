//! YAML with byte spans: the hostile-input guard, saphyr's loader (multi-document streams, anchors and
//! aliases with saphyr's expansion budget, duplicate keys as errors, tags tolerated), and a read-only view
//! of the tree whose ranges are byte offsets.

mod guard;
mod node;

use ruff_text_size::TextSize;
use saphyr::{LoadableYamlNode, MarkedYaml};

pub use guard::{MAX_DEPTH, Refused};
pub use node::{Node, Scalar, ScalarKind};

use node::{ByteMap, Context};

/// A parsed stream of YAML documents.
pub struct Stream<'t> {
    context: Context<'t>,
    documents: Vec<MarkedYaml<'t>>,
}

/// Why a text could not be loaded, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The byte offset of the problem.
    pub offset: TextSize,
    /// What is wrong.
    pub message: String,
    /// Whether the guard refused the text (as opposed to a syntax error).
    pub refused: bool,
}

/// Screens and parses `text`. Fails on a syntax error (including a duplicate key, which kubectl and the API
/// server reject too), on alias expansion past saphyr's node budget, and on input the guard refuses.
pub fn load(text: &str) -> Result<Stream<'_>, LoadError> {
    if let Err(refused) = guard::screen(text) {
        return Err(LoadError {
            offset: TextSize::from(refused.offset as u32),
            message: refused.message,
            refused: true,
        });
    }
    let bytes = ByteMap::new(text);
    match MarkedYaml::load_from_str(text) {
        Ok(documents) => Ok(Stream { context: Context { text, bytes }, documents }),
        Err(error) => {
            let offset = bytes.byte(error.marker().index(), text.len());
            let info = error.info();
            let message = if info.contains("duplicated key") {
                "YAML syntax error: duplicate key in a mapping (kubectl and the API server reject it)".to_string()
            } else if info.contains("alias expansion") {
                "YAML aliases expand past 100,000 nodes (a billion-laughs pattern); the file is not checked".to_string()
            } else {
                format!("YAML syntax error: {info}")
            };
            Err(LoadError { offset: TextSize::from(offset as u32), message, refused: false })
        }
    }
}

impl<'t> Stream<'t> {
    /// The documents, in order.
    pub fn documents(&self) -> impl Iterator<Item = Node<'_>> {
        self.documents.iter().map(|document| Node::new(document, &self.context))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_bytes_across_documents_and_non_ascii_text() {
        let text = "# héllo ✓\nkind: ConfigMap\nmetadata: {name: café}\n---\nkind: Deployment\nspec:\n  replicas: 3\n";
        let stream = load(text).unwrap();
        let documents: Vec<Node<'_>> = stream.documents().collect();
        assert_eq!(documents.len(), 2);
        let (key, value) = documents[1].get("spec").unwrap().entry("replicas").unwrap();
        assert_eq!(&text[key.range()], "replicas");
        assert_eq!(&text[value.range()], "3");
        assert_eq!(value.as_u64(), Some(3));
        let name = documents[0].path(&["metadata", "name"]).unwrap();
        assert_eq!(&text[name.range()], "café");
    }

    #[test]
    fn scalars_read_as_kubernetes_reads_them() {
        let text =
            "a: 4\nb: \"4\"\nc: 0.5\nd: .5\ne: !!str 7\nf: 1e3\ng: true\nh:\ni: !custom {x: 1}\nj: &j 2\nk: *j\n";
        let stream = load(text).unwrap();
        let root = stream.documents().next().unwrap();
        let text_of = |key: &str| root.get(key).and_then(|node| node.text()).map(|text| text.into_owned());
        assert_eq!(text_of("a").as_deref(), Some("4"));
        assert_eq!(text_of("b").as_deref(), Some("4"));
        assert_eq!(text_of("c").as_deref(), Some("0.5"));
        assert_eq!(text_of("d").as_deref(), Some(".5"));
        assert_eq!(text_of("e").as_deref(), Some("7"));
        assert_eq!(text_of("f").as_deref(), Some("1e3"));
        assert_eq!(text_of("g").as_deref(), Some("true"));
        assert!(root.get("h").unwrap().is_null());
        assert!(root.get("i").unwrap().is_mapping());
        assert_eq!(text_of("k").as_deref(), Some("2"));
    }

    #[test]
    fn merge_keys_are_applied() {
        let text = "base: &base {name: A, value: \"1\", extra: x}\nmerged:\n  <<: *base\n  value: \"2\"\n";
        let stream = load(text).unwrap();
        let merged = stream.documents().next().unwrap().get("merged").unwrap();
        let keys: Vec<String> = merged.entries().filter_map(|(key, _)| key.as_str().map(str::to_string)).collect();
        assert_eq!(keys, vec!["value", "name", "extra"]);
        assert_eq!(merged.get("value").and_then(|value| value.text()).as_deref(), Some("2"));
        assert_eq!(merged.get("name").and_then(|value| value.text()).as_deref(), Some("A"));
    }

    #[test]
    fn errors_carry_byte_offsets() {
        let text = "é: 1\né: 2\n";
        let error = load(text).err().unwrap();
        assert!(error.message.contains("duplicate key"));
        assert_eq!(u32::from(error.offset), "é: 1\n".len() as u32);
        assert!(load("a: [1, 2\n").is_err());
    }

    #[test]
    fn alias_bombs_hit_the_budget() {
        let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 0..9 {
            let previous = if level == 0 { "a".to_string() } else { format!("b{}", level - 1) };
            text.push_str(&format!("b{level}: &b{level} [{}]\n", vec![format!("*{previous}"); 9].join(", ")));
        }
        assert!(load(&text).is_err());
    }
}
