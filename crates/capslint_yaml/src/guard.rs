//! A linear, recursion-free pre-scan that refuses YAML which would make the parser or the tree
//! expensive, before the text reaches saphyr:
//!
//! - **Nesting.** saphyr builds, clones and drops its tree recursively: a 2,000-level document overflows a
//!   2 MiB thread stack (measured, debug build). The scan computes an upper bound of the nesting depth
//!   (block levels by indentation, compact `- - -` and `key:` indicators on one line, flow brackets) and
//!   refuses anything deeper than [`MAX_DEPTH`], which is ten times deeper than any real manifest.
//! - **Aliases with non-scalar keys.** saphyr bounds alias expansion by counting nodes, but counts a
//!   mapping key as one node whatever its size, so an anchor whose keys contain aliases expands
//!   exponentially past the budget (a 700-byte file exhausted 4 GB in a test). Kubernetes manifests only
//!   have string keys (the API converts YAML to JSON), so a file that uses aliases together with
//!   collection or alias keys is refused. Plain alias bombs are left to saphyr's node budget.
//!
//! - **Anchors over large subtrees.** saphyr copies an anchored node when the anchor is defined, so
//!   anchors nested around a large collection cost their nesting depth times its size (200 nested
//!   anchors around a 100,000-item list took 3 GB and 7 s). The scan adds up the bytes each anchored
//!   collection spans and refuses more than [`MAX_ANCHORED_BYTES`].
//!
//! The estimates may only err upwards: an over-estimate refuses a pathological file, an under-estimate
//! could let a deep one through. Quoted scalars, comments and block scalar bodies are skipped, because
//! brackets in them are text.

use std::borrow::Cow;

/// The deepest nesting accepted (estimated as an upper bound of the real depth).
pub const MAX_DEPTH: usize = 512;

/// The most bytes anchored collections may span, added up over every anchor.
pub const MAX_ANCHORED_BYTES: usize = 1 << 20;

/// Where an anchored collection ends.
#[derive(Debug, Clone, Copy)]
enum AnchorEnd {
    /// A block node: at the next line indented no more than its owner (a key or `-`), except a `- `
    /// entry at the owner's indentation (a sequence value of a key).
    Block(isize),
    /// A flow collection: when the flow level falls back to this.
    Flow(usize),
}

/// Why a text was refused, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The byte offset where the problem was noticed.
    pub offset: usize,
    /// What is wrong, for the CAP001 message.
    pub message: String,
}

/// Scans `text` and refuses it when it nests deeper than [`MAX_DEPTH`] or combines aliases with
/// non-scalar mapping keys.
pub fn screen(text: &str) -> Result<(), Refused> {
    Scanner::new(&line_breaks_as_newlines(text.as_bytes())).run()
}

/// `bytes` with every lone `\r` replaced by `\n`. saphyr breaks lines at `\n`, `\r\n` and a lone `\r`
/// (and at nothing else: not at U+0085 or U+2028), while the scan splits lines at `\n` and reads `\r` as
/// a blank; without this, a file whose lines end with `\r` alone would be one long line to the scan,
/// with everything after a comment or a block scalar indicator unseen. The length is kept, so offsets
/// hold.
fn line_breaks_as_newlines(bytes: &[u8]) -> Cow<'_, [u8]> {
    let lone = |at: &usize| bytes.get(at + 1) != Some(&b'\n');
    if !memchr::memchr_iter(b'\r', bytes).any(|at| lone(&at)) {
        return Cow::Borrowed(bytes);
    }
    let mut normalized = bytes.to_vec();
    for at in memchr::memchr_iter(b'\r', bytes).filter(lone) {
        normalized[at] = b'\n';
    }
    Cow::Owned(normalized)
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    line_start: usize,
    at_line_start: bool,
    /// The next token starts a node (a scalar, a collection, an alias).
    node_start: bool,
    flow: usize,
    indents: Vec<usize>,
    /// `2 x` the block levels of the current line: a mapping and a sequence can share an indentation.
    base: usize,
    /// Collections opened inline on the current line (`- - a`, `- key: value`).
    inline: usize,
    /// The column of the innermost key or entry indicator on the line: a block scalar body must be
    /// indented more than this.
    owner_column: isize,
    /// The column where the current plain scalar started.
    plain_column: isize,
    /// Inside a block scalar whose body is indented more than this.
    block_scalar: Option<isize>,
    first_alias: Option<usize>,
    first_complex_key: Option<usize>,
    /// Anchored collections still open: where they start and how they end.
    anchors: Vec<(usize, AnchorEnd)>,
    /// Bytes spanned by the anchored collections closed so far.
    anchored_bytes: usize,
}

fn is_blank(byte: Option<&u8>) -> bool {
    matches!(byte, None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

fn is_flow_indicator(byte: u8) -> bool {
    matches!(byte, b',' | b'[' | b']' | b'{' | b'}')
}

impl<'a> Scanner<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Scanner {
            bytes,
            pos: 0,
            line_start: 0,
            at_line_start: true,
            node_start: true,
            flow: 0,
            indents: Vec::new(),
            base: 0,
            inline: 0,
            owner_column: -1,
            plain_column: -1,
            block_scalar: None,
            first_alias: None,
            first_complex_key: None,
            anchors: Vec::new(),
            anchored_bytes: 0,
        }
    }

    /// Closes the anchors for which `ends` holds at `offset`, adding up what they span.
    fn close_anchors(&mut self, offset: usize, ends: impl Fn(AnchorEnd) -> bool) -> Result<(), Refused> {
        let mut index = 0;
        while index < self.anchors.len() {
            let (start, end) = self.anchors[index];
            if ends(end) {
                self.anchors.swap_remove(index);
                self.anchored_bytes += offset.saturating_sub(start);
                if self.anchored_bytes > MAX_ANCHORED_BYTES {
                    return Err(Refused {
                        offset: start,
                        message: format!(
                            "YAML anchors span more than {} MiB in total (each anchor copies its subtree); the file \
                             is not checked",
                            MAX_ANCHORED_BYTES >> 20
                        ),
                    });
                }
            } else {
                index += 1;
            }
        }
        Ok(())
    }

    /// The column of `offset` within its own line (a quoted scalar may have started lines before the
    /// current one).
    fn column(&self, offset: usize) -> isize {
        let line_start = if offset >= self.line_start {
            self.line_start
        } else {
            memchr::memrchr(b'\n', &self.bytes[..offset]).map_or(0, |newline| newline + 1)
        };
        (offset - line_start) as isize
    }

    fn peek(&self, offset: usize) -> Option<&u8> {
        self.bytes.get(offset)
    }

    fn line_end(&self, from: usize) -> usize {
        memchr::memchr(b'\n', &self.bytes[from..]).map_or(self.bytes.len(), |index| from + index)
    }

    fn deeper(&self) -> Result<(), Refused> {
        // A flow collection may hold a single-pair mapping (`[a: [b: c]]`), so each bracket counts twice.
        let depth = self.base + self.inline + 2 * self.flow;
        if depth > MAX_DEPTH {
            return Err(Refused {
                offset: self.pos,
                message: format!("YAML nesting deeper than {MAX_DEPTH} levels; the file is not checked"),
            });
        }
        Ok(())
    }

    fn run(mut self) -> Result<(), Refused> {
        while self.pos < self.bytes.len() {
            if self.at_line_start {
                self.start_line()?;
                continue;
            }
            let byte = self.bytes[self.pos];
            match byte {
                b'\n' => {
                    self.pos += 1;
                    self.line_start = self.pos;
                    self.at_line_start = true;
                    if self.flow > 0 {
                        continue;
                    }
                    self.node_start = true;
                }
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'#' if self.pos == 0 || is_blank(self.peek(self.pos - 1)) => self.pos = self.line_end(self.pos),
                _ if self.node_start => self.node(byte)?,
                _ => self.inside_scalar(byte)?,
            }
        }
        self.close_anchors(self.bytes.len(), |_| true)?;
        match (self.first_alias, self.first_complex_key) {
            (Some(_), Some(offset)) => Err(Refused {
                offset,
                message: "YAML aliases combined with a non-scalar mapping key (Kubernetes keys are strings); the \
                          file is not checked"
                    .to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// Indentation, document markers, block scalar bodies, blank and comment lines.
    fn start_line(&mut self) -> Result<(), Refused> {
        let indent = self.bytes[self.pos..].iter().take_while(|byte| **byte == b' ').count();
        let first = self.pos + indent;
        let line_end = self.line_end(first);
        let blank = self.bytes[first..line_end].iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r'));
        if let Some(parent) = self.block_scalar {
            if blank || indent as isize > parent {
                self.skip_line(line_end);
                return Ok(());
            }
            self.block_scalar = None;
        }
        let rest = &self.bytes[first..line_end];
        let marker = indent == 0
            && (rest.starts_with(b"---") || rest.starts_with(b"..."))
            && is_blank(rest.get(3).or(Some(&b'\n')));
        if marker {
            self.close_anchors(first, |_| true)?;
            self.indents.clear();
            self.flow = 0;
            self.base = 0;
            self.inline = 0;
            self.owner_column = -1;
            self.node_start = true;
            self.at_line_start = false;
            self.pos = first + 3;
            return Ok(());
        }
        if self.flow > 0 {
            self.at_line_start = false;
            self.pos = first;
            return Ok(());
        }
        if blank || rest.first() == Some(&b'#') || (indent == 0 && rest.first() == Some(&b'%')) {
            self.skip_line(line_end);
            return Ok(());
        }
        let entry = rest.starts_with(b"- ") || rest == b"-";
        self.close_anchors(first, |end| match end {
            AnchorEnd::Block(owner) => (indent as isize) < owner || (indent as isize == owner && !entry),
            AnchorEnd::Flow(_) => false,
        })?;
        while self.indents.last().is_some_and(|last| *last >= indent) {
            self.indents.pop();
        }
        self.indents.push(indent);
        self.base = 2 * self.indents.len();
        self.inline = 0;
        self.owner_column = indent as isize;
        self.node_start = true;
        self.at_line_start = false;
        self.pos = first;
        self.deeper()
    }

    fn skip_line(&mut self, line_end: usize) {
        self.pos = (line_end + 1).min(self.bytes.len());
        self.line_start = self.pos;
        self.at_line_start = true;
    }

    /// A token where a node begins.
    fn node(&mut self, byte: u8) -> Result<(), Refused> {
        let start = self.pos;
        match byte {
            b'[' | b'{' => {
                self.flow += 1;
                self.pos += 1;
                self.deeper()?;
            }
            b']' | b'}' if self.flow > 0 => self.close_flow()?,
            b',' if self.flow > 0 => self.pos += 1,
            b'"' | b'\'' => {
                self.skip_quoted(byte);
                self.after_node(start, true)?;
            }
            b'|' | b'>' if self.flow == 0 => {
                self.block_scalar = Some(self.owner_column);
                let line_end = self.line_end(self.pos);
                self.skip_line(line_end);
            }
            b'*' => {
                self.first_alias.get_or_insert(start);
                self.skip_name();
                self.after_node(start, false)?;
                if self.node_start {
                    // An alias used as a key.
                    self.first_complex_key.get_or_insert(start);
                }
            }
            b'&' => {
                self.skip_name();
                let mut next = self.pos;
                while matches!(self.peek(next), Some(b' ' | b'\t')) {
                    next += 1;
                }
                if matches!(self.peek(next), Some(b'[' | b'{')) {
                    self.anchors.push((start, AnchorEnd::Flow(self.flow)));
                } else if self.flow == 0 {
                    self.anchors.push((start, AnchorEnd::Block(self.owner_column)));
                }
            }
            b'!' => self.skip_name(),
            b'-' | b'?' | b':' if is_blank(self.peek(start + 1)) => {
                if byte == b'?' {
                    self.first_complex_key.get_or_insert(start);
                }
                if byte != b':' {
                    self.owner_column = self.column(start);
                }
                self.pos += 1;
                if self.flow == 0 {
                    self.inline += 1;
                    self.deeper()?;
                }
            }
            _ => {
                self.plain_column = self.column(start);
                self.node_start = false;
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// Inside a plain scalar, or after a quoted scalar or alias: only `:` (a key ended) and, in flow
    /// context, the flow indicators matter.
    fn inside_scalar(&mut self, byte: u8) -> Result<(), Refused> {
        match byte {
            b':' if is_blank(self.peek(self.pos + 1))
                || (self.flow > 0 && self.peek(self.pos + 1).is_some_and(|next| is_flow_indicator(*next))) =>
            {
                self.owner_column = self.plain_column;
                self.node_start = true;
                self.pos += 1;
                if self.flow == 0 {
                    self.inline += 1;
                    self.deeper()?;
                }
            }
            b',' if self.flow > 0 => {
                self.node_start = true;
                self.pos += 1;
            }
            b'[' | b'{' if self.flow > 0 => {
                self.flow += 1;
                self.node_start = true;
                self.pos += 1;
                self.deeper()?;
            }
            b']' | b'}' if self.flow > 0 => self.close_flow()?,
            _ => self.pos += 1,
        }
        Ok(())
    }

    fn close_flow(&mut self) -> Result<(), Refused> {
        let start = self.pos;
        self.flow -= 1;
        self.pos += 1;
        let level = self.flow;
        self.close_anchors(self.pos, |end| matches!(end, AnchorEnd::Flow(at) if at >= level))?;
        let mut next = self.pos;
        while matches!(self.peek(next), Some(b' ' | b'\t')) {
            next += 1;
        }
        if self.peek(next) == Some(&b':') {
            // A collection used as a key.
            self.first_complex_key.get_or_insert(start);
        }
        self.node_start = false;
        Ok(())
    }

    /// After a quoted scalar or an alias: a following `:` makes it a key.
    fn after_node(&mut self, start: usize, quoted: bool) -> Result<(), Refused> {
        let mut next = self.pos;
        while matches!(self.peek(next), Some(b' ' | b'\t')) {
            next += 1;
        }
        let is_key = self.peek(next) == Some(&b':')
            && (quoted && self.flow > 0
                || is_blank(self.peek(next + 1))
                || self.peek(next + 1).is_some_and(|byte| is_flow_indicator(*byte)));
        if is_key {
            self.owner_column = self.column(start);
            self.pos = next + 1;
            self.node_start = true;
            if self.flow == 0 {
                self.inline += 1;
                self.deeper()?;
            }
        } else {
            self.node_start = false;
        }
        Ok(())
    }

    fn skip_quoted(&mut self, quote: u8) {
        let mut index = self.pos + 1;
        while let Some(&byte) = self.peek(index) {
            match byte {
                b'\\' if quote == b'"' => index += 2,
                b'\'' if quote == b'\'' && self.peek(index + 1) == Some(&b'\'') => index += 2,
                _ if byte == quote => {
                    index += 1;
                    break;
                }
                b'\n' => {
                    index += 1;
                    self.line_start = index;
                }
                _ => index += 1,
            }
        }
        self.pos = index.min(self.bytes.len());
    }

    fn skip_name(&mut self) {
        let mut index = self.pos + 1;
        while self.peek(index).is_some_and(|byte| !is_blank(Some(byte)) && !is_flow_indicator(*byte)) {
            index += 1;
        }
        self.pos = index;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        screen(text).is_err()
    }

    #[test]
    fn accepts_ordinary_manifests() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, labels: {app: a}}\nspec:\n  \
                    template:\n    spec:\n      containers:\n      - name: a\n        args: [\"--x\", '[[[']\n        \
                    env:\n        - {name: A, value: \"{{\"}\n---\ndata:\n  x: |\n    [[[[[[\n";
        assert_eq!(screen(text), Ok(()));
    }

    #[test]
    fn refuses_deep_flow_and_block_nesting() {
        assert!(refused(&format!("a: {}{}\n", "[".repeat(600), "]".repeat(600))));
        assert!(refused(&format!("{}x\n", "- ".repeat(600))));
        let block: String = (0..600).map(|level| format!("{}k:\n", " ".repeat(level))).collect();
        assert!(refused(&block));
        assert!(!refused(&format!("a: {}{}\n", "[".repeat(200), "]".repeat(200))));
        let wide: Vec<String> = (0..5000).map(|index| format!("\"k{index}\": {index}")).collect();
        assert!(!refused(&format!("{{{}}}\n", wide.join(", "))));
    }

    #[test]
    fn brackets_in_text_do_not_count() {
        let deep = "[".repeat(2000);
        assert!(!refused(&format!("a: \"{deep}\"\nb: '{deep}'\n# {deep}\nc: |\n  {deep}\nd: x{deep}\n")));
    }

    #[test]
    fn anchors_over_large_subtrees_are_refused() {
        let leaf = format!("[{}]", vec!["x"; 100_000].join(", "));
        let flow = format!("a: {}{leaf}{}\n", (0..20).map(|i| format!("&a{i} [")).collect::<String>(), "]".repeat(20));
        assert!(refused(&flow));
        let block: String = (0..20).map(|i| format!("{}k{i}: &a{i}\n", " ".repeat(i))).collect();
        let items: String = (0..100_000).map(|_| format!("{}- x\n", " ".repeat(20))).collect();
        assert!(refused(&format!("{block}{items}")));
        // One anchor over the same list: one copy.
        assert!(!refused(&format!("a: &a {leaf}\nb: c\n")));
        let many_small: String =
            (0..10_000).map(|i| format!("e{i}: &e{i}\n- {{name: A, value: \"1\"}}\nu{i}: *e{i}\n")).collect();
        assert!(!refused(&many_small));
    }

    #[test]
    fn lone_carriage_returns_break_lines_as_for_the_parser() {
        assert_eq!(&*line_breaks_as_newlines(b"a\rb\r\nc\r"), b"a\nb\r\nc\n");
        // After a comment or a block scalar indicator, the next line is seen again.
        let bomb = format!("# note\r{}", "[".repeat(600));
        assert!(refused(&bomb));
        let block: String = (0..600).map(|level| format!("{}k:\r", " ".repeat(level))).collect();
        assert!(refused(&format!("a: |\r  text\r{block}")));
        assert!(!refused("a: |\r  [[[[[\rb: 1\r"));
    }

    #[test]
    fn aliases_with_collection_keys_are_refused() {
        assert!(refused("a: &a [x]\nb: {? [*a, 1] : 1}\n"));
        assert!(refused("a: &a [x]\nb:\n  [*a]: 1\n"));
        assert!(refused("a: &a x\nb:\n  *a : 1\n"));
        assert!(!refused("base: &env {name: A, value: \"1\"}\nenv:\n- *env\n- <<: *env\n  value: \"2\"\n"));
        assert!(!refused("a: {? [x, 1] : 1}\n"));
    }
}
