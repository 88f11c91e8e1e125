//! YAML with byte spans: the hostile-input guard, saphyr's parser and loader fed one document at a time
//! (anchors and aliases within a file-wide expansion budget, duplicate keys as errors, tags tolerated),
//! and a read-only view of the tree whose ranges are byte offsets.

mod guard;
mod node;

use ruff_text_size::TextSize;
use saphyr::{MarkedYaml, ScanError, YamlLoader};
use saphyr_parser::{Event, Parser, Span, SpannedEventReceiver};

pub use guard::{MAX_DEPTH, Refused};
pub use node::{Node, Scalar, ScalarKind};

use node::{ByteMap, Context};

/// How many nodes alias expansion may produce in one file, over all its documents.
pub const ALIAS_BUDGET: usize = 100_000;

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

/// Screens `text`, then parses it one document at a time: each document's tree is built, handed to
/// `on_document` and dropped before the next is built, so memory follows the largest document, not the
/// file. Fails on a syntax error (including a duplicate key, which kubectl and the API server reject
/// too), on alias expansion past [`ALIAS_BUDGET`] nodes, and on input the guard refuses; documents
/// before the error have been handed over by then, so a caller that fails the file discards them.
pub fn for_each_document(text: &str, on_document: impl FnMut(Node<'_>)) -> Result<(), LoadError> {
    if let Err(refused) = guard::screen(text) {
        return Err(LoadError {
            offset: TextSize::from(refused.offset as u32),
            message: refused.message,
            refused: true,
        });
    }
    let context = Context { text, bytes: ByteMap::new(text) };
    let mut feed = DocumentFeed {
        context: &context,
        loader: YamlLoader::default(),
        aliases: AliasCount::default(),
        error: None,
        on_document,
    };
    let scanned = Parser::new_from_str(text).load(&mut feed, true);
    let error = match (scanned, feed.error) {
        (_, Some(error)) => error,
        (Err(error), None) => Failure::Syntax(error),
        (Ok(()), None) => match feed.loader.error() {
            Some(error) => Failure::Syntax(error.clone()),
            None => return Ok(()),
        },
    };
    Err(match error {
        Failure::Syntax(error) => {
            let offset = context.bytes.byte(error.marker().index(), text.len());
            let info = error.info();
            let message = if info.contains("duplicated key") {
                "YAML syntax error: duplicate key in a mapping (kubectl and the API server reject it)".to_string()
            } else if info.contains("alias expansion") {
                alias_bomb_message()
            } else {
                format!("YAML syntax error: {info}")
            };
            LoadError { offset: TextSize::from(offset as u32), message, refused: false }
        }
        Failure::Aliases(offset) => LoadError {
            offset: TextSize::from(context.bytes.byte(offset, text.len()) as u32),
            message: alias_bomb_message(),
            refused: false,
        },
    })
}

fn alias_bomb_message() -> String {
    "YAML aliases expand past 100,000 nodes (a billion-laughs pattern); the file is not checked".to_string()
}

/// What stopped the feed.
enum Failure {
    /// The parser or saphyr's loader failed.
    Syntax(ScanError),
    /// Alias expansion went past the file's budget, at this character index.
    Aliases(usize),
}

/// Passes parser events to saphyr's loader, one document at a time, and each finished document on.
struct DocumentFeed<'c, 't, F> {
    context: &'c Context<'t>,
    loader: YamlLoader<'t, MarkedYaml<'t>>,
    aliases: AliasCount,
    error: Option<Failure>,
    on_document: F,
}

impl<'t, F: FnMut(Node<'_>)> SpannedEventReceiver<'t> for DocumentFeed<'_, 't, F> {
    fn on_event(&mut self, event: Event<'t>, span: Span) {
        if self.error.is_some() {
            return;
        }
        if !self.aliases.admit(&event) {
            self.error = Some(Failure::Aliases(span.start.index()));
            return;
        }
        let document_ends = matches!(event, Event::DocumentEnd);
        self.loader.on_event(event, span);
        if let Some(error) = self.loader.error() {
            self.error = Some(Failure::Syntax(error.clone()));
            return;
        }
        if document_ends {
            // Anchors do not reach across documents, so a fresh loader per document loses nothing.
            for document in std::mem::take(&mut self.loader).into_documents() {
                (self.on_document)(Node::new(&document, self.context));
            }
            self.aliases.end_document();
        }
    }
}

/// Counts the nodes alias expansion produces, as saphyr's loader will build them (an alias copies its
/// anchor's whole subtree, and a copy inside another anchored node is copied again with it), so the
/// budget holds for the file while each document gets a fresh loader.
#[derive(Default)]
struct AliasCount {
    /// Nodes of each open collection so far, with its anchor id.
    open: Vec<(usize, usize)>,
    /// The size of every anchored node of the current document.
    anchored: rustc_hash::FxHashMap<usize, usize>,
    /// Nodes produced by aliases in the file so far.
    produced: usize,
}

impl AliasCount {
    /// Accounts for `event`; false once the file's budget is exceeded.
    fn admit(&mut self, event: &Event<'_>) -> bool {
        match event {
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => self.open.push((*anchor, 1)),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, size)) = self.open.pop() {
                    self.close(anchor, size);
                }
            }
            Event::Scalar(_, _, anchor, _) => self.close(*anchor, 1),
            Event::Alias(anchor) => {
                let size = self.anchored.get(anchor).copied().unwrap_or(1);
                self.produced = self.produced.saturating_add(size);
                self.close(0, size);
            }
            _ => {}
        }
        self.produced <= ALIAS_BUDGET
    }

    /// A node of `size` nodes is complete: remember it under its anchor and count it in its parent.
    fn close(&mut self, anchor: usize, size: usize) {
        if anchor > 0 {
            self.anchored.insert(anchor, size);
        }
        if let Some((_, parent)) = self.open.last_mut() {
            *parent = parent.saturating_add(size);
        }
    }

    fn end_document(&mut self) {
        self.open.clear();
        self.anchored.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `check` on every document of `text`.
    fn each(text: &str, check: impl FnMut(Node<'_>)) {
        for_each_document(text, check).unwrap();
    }

    fn load_error(text: &str) -> Option<LoadError> {
        for_each_document(text, |_| {}).err()
    }

    #[test]
    fn ranges_are_bytes_across_documents_and_non_ascii_text() {
        let text = "# héllo ✓\nkind: ConfigMap\nmetadata: {name: café}\n---\nkind: Deployment\nspec:\n  replicas: 3\n";
        let mut seen = 0;
        each(text, |document| {
            seen += 1;
            if seen == 1 {
                let name = document.path(&["metadata", "name"]).unwrap();
                assert_eq!(&text[name.range()], "café");
            } else {
                let (key, value) = document.get("spec").unwrap().entry("replicas").unwrap();
                assert_eq!(&text[key.range()], "replicas");
                assert_eq!(&text[value.range()], "3");
                assert_eq!(value.as_u64(), Some(3));
            }
        });
        assert_eq!(seen, 2);
    }

    #[test]
    fn scalars_read_as_kubernetes_reads_them() {
        let text =
            "a: 4\nb: \"4\"\nc: 0.5\nd: .5\ne: !!str 7\nf: 1e3\ng: true\nh:\ni: !custom {x: 1}\nj: &j 2\nk: *j\n";
        each(text, |root| {
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
        });
    }

    #[test]
    fn merge_keys_are_applied() {
        let text = "base: &base {name: A, value: \"1\", extra: x}\nmerged:\n  <<: *base\n  value: \"2\"\n";
        each(text, |root| {
            let merged = root.get("merged").unwrap();
            let keys: Vec<String> = merged.entries().filter_map(|(key, _)| key.as_str().map(str::to_string)).collect();
            assert_eq!(keys, vec!["value", "name", "extra"]);
            assert_eq!(merged.get("value").and_then(|value| value.text()).as_deref(), Some("2"));
            assert_eq!(merged.get("name").and_then(|value| value.text()).as_deref(), Some("A"));
        });
    }

    #[test]
    fn errors_carry_byte_offsets() {
        let text = "é: 1\né: 2\n";
        let error = load_error(text).unwrap();
        assert!(error.message.contains("duplicate key"));
        assert_eq!(u32::from(error.offset), "é: 1\n".len() as u32);
        assert!(load_error("a: [1, 2\n").is_some());
    }

    #[test]
    fn alias_bombs_hit_the_budget() {
        let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 0..9 {
            let previous = if level == 0 { "a".to_string() } else { format!("b{}", level - 1) };
            text.push_str(&format!("b{level}: &b{level} [{}]\n", vec![format!("*{previous}"); 9].join(", ")));
        }
        let error = load_error(&text).unwrap();
        assert!(error.message.contains("billion-laughs"), "{error:?}");
    }

    #[test]
    fn the_alias_budget_holds_for_the_file_not_each_document() {
        // Aliases produce 74,718 nodes per document: within the budget once, past it twice.
        let mut document = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 0..4 {
            let previous = if level == 0 { "a".to_string() } else { format!("b{}", level - 1) };
            document.push_str(&format!("b{level}: &b{level} [{}]\n", vec![format!("*{previous}"); 9].join(", ")));
        }
        assert_eq!(load_error(&document), None);
        let error = load_error(&format!("{document}---\n{document}")).unwrap();
        assert!(error.message.contains("billion-laughs"), "{error:?}");
        assert_eq!(&format!("{document}---\n{document}")[usize::from(error.offset)..][..3], "*b2");
    }

    #[test]
    fn documents_are_handed_over_as_they_finish() {
        // The first document is delivered before the parser reaches the second one's error: the
        // stream is never held whole.
        let mut delivered = Vec::new();
        let result = for_each_document("a: 1\n---\nb: [1, 2\n", |document| {
            delivered.push(document.get("a").and_then(|value| value.text()).map(|text| text.into_owned()));
        });
        assert_eq!(delivered, [Some("1".to_string())]);
        assert!(result.is_err());
    }

    #[test]
    fn anchors_are_scoped_to_their_document() {
        let mut texts = Vec::new();
        each("a: &x 1\nb: *x\n---\nc: &x 2\nd: *x\n", |document| {
            let value = document.get("b").or_else(|| document.get("d")).unwrap();
            texts.push(value.text().unwrap().into_owned());
        });
        assert_eq!(texts, ["1", "2"]);
    }
}
