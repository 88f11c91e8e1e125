//! YAML with byte spans: the hostile-input guard, saphyr's parser and loader fed one document at a time
//! (anchors and aliases within a file-wide expansion budget, duplicate keys as errors, tags tolerated),
//! and a read-only view of the tree whose ranges are byte offsets. It knows YAML alone: no Kubernetes, no
//! finding, no other capslint crate.

mod guard;
mod node;
mod repair;

use std::borrow::Cow;

use ruff_text_size::TextSize;
use saphyr::{MarkedYaml, ScanError, YamlLoader};
use saphyr_parser::{Event, Parser, Span, SpannedEventReceiver};

pub use guard::{MAX_DEPTH, Refused};
pub use node::{Node, Scalar, ScalarKind};

use node::{ByteMap, Context};
use repair::{MAX_REPAIRS, MAX_REPARSED_BYTES, Repairs};

/// How many nodes alias expansion may produce in one file, over all its documents.
pub const ALIAS_BUDGET: usize = 100_000;

/// How many nodes one document of a text of `len` bytes may have: 200,000, plus one per 200 bytes of the
/// text. saphyr's tree takes up to about 350 bytes a node (measured: a node with its spans, a scalar's
/// string, a mapping's hash slot, and the growth of the collections), so a document's tree stays within
/// 70 MB plus 1.75 times the text, whatever its shape; a larger document is not analysed (the loader stops
/// building it at the budget). Real manifests and model configurations have a few thousand nodes a
/// document; a large CRD some tens of thousands; a workload with 20,000 variables 140,000.
pub fn node_budget(len: usize) -> usize {
    200_000 + len / 200
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
    /// Whether a document has more nodes than [`node_budget`] allows: valid YAML, too large to analyse.
    pub too_large: bool,
}

/// Screens `text`, then parses it one document at a time: each document's tree is built, handed to
/// `on_document` and dropped before the next is built, so memory follows the largest document, not the
/// file. Fails on a syntax error (including a duplicate key, which kubectl and the API server reject
/// too), on alias expansion past [`ALIAS_BUDGET`] nodes, on a document past [`node_budget`] nodes (whose
/// tree stops growing there), and on input the guard refuses; documents
/// before the error have been handed over by then, so a caller that fails the file discards them.
pub fn for_each_document(text: &str, mut on_document: impl FnMut(Node<'_>)) -> Result<(), LoadError> {
    if let Err(refused) = guard::screen(text) {
        return Err(LoadError {
            offset: TextSize::from(refused.offset as u32),
            message: refused.message,
            refused: true,
            too_large: false,
        });
    }
    // Documents handed over by an attempt that a repair then restarts are not handed over again.
    let mut delivered = 0;
    let mut repairs = Repairs::default();
    // When the repairs do not make the text parse, the error reported is the one of the text as written.
    let mut first_error = None;
    for attempt in 0..=MAX_REPAIRS {
        let repaired = if repairs.is_empty() { Cow::Borrowed(text) } else { Cow::Owned(repairs.apply(text)) };
        let context = Context { text: &repaired, bytes: ByteMap::new(&repaired), repairs: &repairs };
        let failure = match load(&context, &mut delivered, &mut on_document) {
            Ok(()) => return Ok(()),
            Err(failure) => failure,
        };
        let error = load_error(&context, &failure);
        let first = first_error.get_or_insert(error).clone();
        if let Failure::Syntax(error) = &failure {
            let offset = context.bytes.byte(&repaired, error.marker().index());
            let mut next = repairs.clone();
            let affordable = (attempt + 2).saturating_mul(repaired.len()) <= MAX_REPARSED_BYTES;
            if attempt < MAX_REPAIRS && affordable && next.add(&repaired, offset, error.info()) {
                repairs = next;
                continue;
            }
        }
        return Err(first);
    }
    unreachable!("the last attempt returns")
}

/// Parses the text of `context`, handing over every document after the first `delivered`.
fn load(context: &Context<'_>, delivered: &mut usize, on_document: &mut impl FnMut(Node<'_>)) -> Result<(), Failure> {
    let mut feed = DocumentFeed {
        context,
        loader: YamlLoader::default(),
        aliases: AliasCount::default(),
        nodes: 0,
        budget: node_budget(context.text.len()),
        document_start: 0,
        error: None,
        seen: 0,
        delivered,
        on_document,
    };
    let scanned = Parser::new_from_str(context.text).load(&mut feed, true);
    match (scanned, feed.error) {
        (_, Some(error)) => Err(error),
        (Err(error), None) => Err(Failure::Syntax(error)),
        (Ok(()), None) => match feed.loader.error() {
            Some(error) => Err(Failure::Syntax(error.clone())),
            None => Ok(()),
        },
    }
}

/// The error of a failed load, at its offset in the text as written.
fn load_error(context: &Context<'_>, failure: &Failure) -> LoadError {
    let original =
        |index: usize| TextSize::from(context.repairs.original(context.bytes.byte(context.text, index)) as u32);
    match failure {
        Failure::Syntax(error) => {
            let info = error.info();
            let message = if info.contains("duplicated key") {
                // Checked with kubectl 1.32: `kubectl kustomize` fails ("mapping key ... already defined"),
                // while the decoder of `kubectl apply` accepts the file and keeps a single value.
                "YAML syntax error: duplicate key in a mapping: kustomize rejects the file, and `kubectl apply` keeps \
                 only one of the values, so what the cluster receives is not what the file shows"
                    .to_string()
            } else if info.contains("alias expansion") {
                alias_bomb_message()
            } else {
                format!("YAML syntax error: {info}")
            };
            LoadError { offset: original(error.marker().index()), message, refused: false, too_large: false }
        }
        Failure::Aliases(offset) => {
            LoadError { offset: original(*offset), message: alias_bomb_message(), refused: false, too_large: false }
        }
        Failure::TooLarge { document, budget } => LoadError {
            offset: original(*document),
            message: format!(
                "a YAML document of more than {budget} nodes ({} bytes of text): too large to analyse within bounded \
                 memory",
                context.text.len()
            ),
            refused: false,
            too_large: true,
        },
    }
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
    /// The document starting at this character index has more than `budget` nodes.
    TooLarge {
        /// Where the document starts.
        document: usize,
        /// The budget it went past.
        budget: usize,
    },
}

/// Passes parser events to saphyr's loader, one document at a time, and each finished document on.
struct DocumentFeed<'c, 't, F> {
    context: &'c Context<'t>,
    loader: YamlLoader<'t, MarkedYaml<'t>>,
    aliases: AliasCount,
    /// Nodes of the current document so far, and how many it may have.
    nodes: usize,
    budget: usize,
    /// Where the current document starts (a character index).
    document_start: usize,
    error: Option<Failure>,
    /// Documents finished in this attempt.
    seen: usize,
    /// Documents handed over in every attempt so far.
    delivered: &'c mut usize,
    on_document: &'c mut F,
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
        match event {
            Event::DocumentStart(_) => self.document_start = span.start.index(),
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..) | Event::Alias(_) => {
                self.nodes += 1;
                if self.nodes > self.budget {
                    // Nothing more is built: the tree stops growing here, and the file is not analysed.
                    self.error = Some(Failure::TooLarge { document: self.document_start, budget: self.budget });
                    return;
                }
            }
            _ => {}
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
                self.seen += 1;
                if self.seen > *self.delivered {
                    *self.delivered = self.seen;
                    (self.on_document)(Node::new(&document, self.context));
                }
            }
            self.aliases.end_document();
            self.nodes = 0;
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
    fn continuation_lines_at_the_keys_indentation_are_read_as_libyaml_reads_them() {
        // Flow sequence closed at the key's indentation, then a quoted scalar continued there, in the
        // second document: offsets point into the text as written.
        let text = "kind: A\n---\nspec:\n  args: [\n    \"--foo\",\n  \"--bar\"\n  ]\n  note: \"a long\n  text\"\n  after: x\n";
        let mut documents = 0;
        each(text, |document| {
            documents += 1;
            if documents == 2 {
                let args: Vec<String> = document
                    .path(&["spec", "args"])
                    .unwrap()
                    .items()
                    .map(|item| item.as_str().unwrap().to_string())
                    .collect();
                assert_eq!(args, ["--foo", "--bar"]);
                assert_eq!(document.path(&["spec", "note"]).unwrap().as_str(), Some("a long text"));
                let after = document.path(&["spec", "after"]).unwrap();
                assert_eq!(&text[after.range()], "x");
                let bar = document.path(&["spec", "args"]).unwrap().items().nth(1).unwrap();
                assert_eq!(&text[bar.range()], "\"--bar\"");
            }
        });
        assert_eq!(documents, 2);
    }

    #[test]
    fn what_cannot_be_repaired_stays_an_error_at_its_place() {
        let text = "spec:\n  args: [\n  \"--foo\"\nnext: [\n";
        let error = load_error(text).unwrap();
        assert!(!error.refused);
        assert!(error.offset.to_usize() <= text.len());
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
