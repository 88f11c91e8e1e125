//! A linear, recursion-free pre-scan that refuses Python source whose syntax tree would be too deep or
//! too large to build and walk within bounded stack and memory, before the text reaches the parser.
//!
//! - **Nesting.** The parser grows its stack on the heap (about 1 KB per level), and every walk of the tree
//!   (the semantic model, the rules, dropping the tree) recurses once per level. The scan computes an
//!   upper bound of the tree's depth and refuses anything deeper than [`MAX_NESTING`]. CPython itself
//!   refuses far less: it fails to compile about 3,000 nested operators, and more than 200 nested brackets
//!   or 100 indentation levels do not even tokenize.
//! - **Size.** The parser keeps every token and the tree takes tens of bytes per token: 64 MiB of `1, `
//!   needs several GiB. The scan counts tokens and refuses more than [`MAX_TOKENS`].
//!
//! The depth bound: within one bracket (or the statement at top level), every token between two commas
//! adds a level (`- - - 1`, `a.b.c`, `1 + 1 + 1`, `f(x)(y)`: each operator, name, literal and opening
//! bracket counts), a comma or semicolon starts a sibling, and indentation counts one level per
//! character. `lambda` parameters are a bracket of their own (their commas do not end the lambda's
//! nesting). Strings are skipped, except the replacement fields of f- and t-strings, which are code. The
//! estimate may only err upwards: an over-estimate refuses a pathological file, an under-estimate could
//! let a deep one through.
//!
//! **When.** A text of at most [`PARSE_FIRST_MAX_BYTES`] with at most 512 f- or t-string openings is
//! parsed first ([`before_parsing`] lets it through): the parser grows its stack on the heap, one level per
//! byte at worst, and only nested f-strings took it time quadratic in their depth (hence the bound on
//! them). At this size the worst shapes tried (64 Ki unclosed brackets) took 0.11 s and 160 MB, released
//! when the file is done. A longer text, up to [`PARSE_FIRST_COUNTED_MAX_BYTES`], is parsed first as well
//! when it has at most [`MAX_LEVEL_OPENERS`] of the tokens that can open a level of the parser's recursion
//! ([`level_openers`]): its recursion then stays within that same worst case. [`after_parsing`] then makes
//! the same estimate from the parser's tokens, before any walk of the tree, instead of lexing the text a
//! second time. Any other text is scanned byte by byte before the parser sees it, so the parser never sees
//! a tree deeper than [`MAX_NESTING`] there.
//!
//! **The parser's recursion.** ruff's parser recurses for an operand (after a unary operator, `not`,
//! `await`, a binary operator that binds tighter than the one before it, `**`), for a bracket's contents,
//! for a conditional expression's `else` branch (one level per `if`, `else` or not), a lambda's body, a `yield`'s value, a format
//! spec (after `:`), a pattern (brackets, `|`), a block (after `:`) and the recovery of `async async ...`;
//! names, numbers, strings, `.`, `,` and `;` continue a level instead. Every level therefore consumes one
//! of the punctuation bytes or keywords [`level_openers`] counts, or climbs the precedence of `and`, `or`
//! and the comparisons (`in`, `is`, `not in`), which can add at most three levels before one of them.
//! Counting bytes and substrings over the whole text (strings and comments included) only over-counts, so
//! four levels per counted opener bound the depth.

use ruff_python_ast::token::{Token, TokenKind};
use ruff_text_size::{Ranged, TextRange, TextSize};

use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// The deepest nesting accepted, as estimated: real code stays below a few hundred, and CPython refuses
/// a real depth of about 3,000.
pub const MAX_NESTING: u32 = 10_000;

/// The most tokens accepted: 16 Mi tokens is 50-60 MiB of ordinary code, and bounds the parser's memory
/// to about 1.5 GiB whatever the shape.
pub const MAX_TOKENS: u64 = 16 << 20;

/// Why a text was refused, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The estimated nesting passed [`MAX_NESTING`] at this byte offset.
    TooDeep {
        /// Where the limit was passed.
        offset: usize,
    },
    /// More than [`MAX_TOKENS`] tokens.
    TooManyTokens,
}

impl Refusal {
    /// The CAP003 finding of a refused file.
    pub fn finding(self) -> Finding {
        match self {
            Refusal::TooDeep { offset } => Finding::new(
                Rule::AnalysisBudgetExceeded,
                TextRange::empty(TextSize::try_from(offset).unwrap_or_default()),
                format!(
                    "code nested deeper than the {MAX_NESTING} levels capslint analyses: the file was not analysed"
                ),
            )
            .label("the nesting budget is exceeded here")
            .help(
                "such code is generated or hostile (CPython cannot compile it either); exclude it (`extend-exclude`)",
            ),
            Refusal::TooManyTokens => Finding::new(
                Rule::AnalysisBudgetExceeded,
                TextRange::empty(TextSize::from(0)),
                format!("more than {MAX_TOKENS} tokens, above the size capslint analyses: the file was not analysed"),
            )
            .label("not analysed")
            .help("generated or data files this large should be excluded (`extend-exclude`)"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `(`, `[` or `{`, closed by the byte given.
    Bracket(u8),
    /// The parameters of a `lambda`, up to its `:`.
    LambdaParameters,
    /// An f-string's literal part.
    FString { quote: u8, triple: bool },
    /// A replacement field `{...}` of an f-string: code.
    Field { quote: u8, triple: bool },
    /// The format spec of a field after its `:`: literal text with nested fields.
    FormatSpec { quote: u8, triple: bool },
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    kind: Kind,
    /// The depth inside the frame before any token: a comma resets to it.
    base: u32,
}

/// The largest text parsed before its nesting is judged whatever its shape (see the module docs).
pub const PARSE_FIRST_MAX_BYTES: usize = 64 << 10;

/// The largest text parsed before its nesting is judged when it has at most [`MAX_LEVEL_OPENERS`] tokens
/// that can open a level of the parser's recursion: within the token bound by far, and a few times the
/// largest source files of real projects.
pub const PARSE_FIRST_COUNTED_MAX_BYTES: usize = 1 << 20;

/// The most tokens that can open a level of the parser's recursion in a text longer than
/// [`PARSE_FIRST_MAX_BYTES`] that is parsed first: at four levels each, the deepest recursion of a text
/// of [`PARSE_FIRST_MAX_BYTES`] (see the module docs). Real files have far fewer (a few thousand in 200 KB
/// of Python).
pub const MAX_LEVEL_OPENERS: usize = PARSE_FIRST_MAX_BYTES / 4;

// A text parsed first is within the token bound by its size alone.
const _: () = assert!(PARSE_FIRST_COUNTED_MAX_BYTES as u64 <= MAX_TOKENS);

/// The most f- and t-string openings a text parsed first may have: the parser takes time quadratic in
/// how deeply they nest, and they cannot nest deeper than there are.
const MAX_INTERPOLATED_OPENINGS: usize = 512;

/// What remains to judge once [`before_parsing`] let a text through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Pending {
    /// Nothing: the text was scanned.
    Nothing,
    /// The estimate from the parser's tokens ([`after_parsing`]).
    TokenEstimate,
}

/// Refuses a text that is parsed only after a scan, when its tree would be too deep or too large (see the
/// module docs). A text with few f- and t-strings, of at most [`PARSE_FIRST_MAX_BYTES`] or of at most
/// [`PARSE_FIRST_COUNTED_MAX_BYTES`] with at most [`MAX_LEVEL_OPENERS`] tokens that can open a level of
/// the parser's recursion, is parsed first: [`after_parsing`] judges it.
pub fn before_parsing(text: &str) -> Result<Pending, Refusal> {
    let within_parser_bounds = text.len() <= PARSE_FIRST_MAX_BYTES
        || (text.len() <= PARSE_FIRST_COUNTED_MAX_BYTES && level_openers(text, MAX_LEVEL_OPENERS) <= MAX_LEVEL_OPENERS);
    if within_parser_bounds && !more_interpolated_openings_than(text, MAX_INTERPOLATED_OPENINGS) {
        return Ok(Pending::TokenEstimate);
    }
    Scanner::new(text).run().map(|()| Pending::Nothing)
}

/// The punctuation bytes that can open a level of the parser's recursion (see the module docs): brackets,
/// operators (unary, binary, `**`, `*` and `**` unpacking, `:=`, `->`), `:` and `@`. A table: one load per
/// byte, faster here than comparisons the compiler vectorises for the baseline CPU.
static OPENS_A_LEVEL: [bool; 256] = {
    let mut table = [false; 256];
    let openers = b"([{-+~*/%@&|^<>=!:";
    let mut index = 0;
    while index < openers.len() {
        table[openers[index] as usize] = true;
        index += 1;
    }
    table
};

/// The keywords of three letters or more that open a level of the parser's recursion (`if` is the
/// other): searched together, as substrings.
const LONG_LEVEL_KEYWORDS: [&str; 5] = ["not", "await", "lambda", "yield", "async"];

/// One search for all of [`LONG_LEVEL_KEYWORDS`]; `if` is searched apart, as one two-letter word in
/// the same search slows the whole of it threefold.
fn long_level_keywords() -> &'static aho_corasick::packed::Searcher {
    static SEARCHER: std::sync::OnceLock<aho_corasick::packed::Searcher> = std::sync::OnceLock::new();
    SEARCHER.get_or_init(|| {
        aho_corasick::packed::Searcher::new(LONG_LEVEL_KEYWORDS).expect("a packed searcher takes five short words")
    })
}

/// The search for `if`, built once.
fn if_keyword() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    FINDER.get_or_init(|| memchr::memmem::Finder::new(b"if"))
}

/// An over-count of the tokens of `text` that can open a level of the parser's recursion: the bytes of
/// [`OPENS_A_LEVEL`] and the occurrences of `if` and of [`LONG_LEVEL_KEYWORDS`] anywhere, strings and
/// comments included, inside longer names too (`elif`, `notify`). Keyword tokens never overlap, so
/// counting non-overlapping matches counts each of them. A conditional expression recurses once per
/// `if` (its `else` is only expected), so `else` need not be counted. The count stops once it passes
/// `enough`.
fn level_openers(text: &str, enough: usize) -> usize {
    let mut count = 0;
    for chunk in text.as_bytes().chunks(4096) {
        count += chunk.iter().map(|&byte| usize::from(OPENS_A_LEVEL[usize::from(byte)])).sum::<usize>();
        if count > enough {
            return count;
        }
    }
    let keywords =
        long_level_keywords().find_iter(text).map(|_| ()).chain(if_keyword().find_iter(text.as_bytes()).map(|_| ()));
    for () in keywords {
        count += 1;
        if count > enough {
            break;
        }
    }
    count
}

/// Refuses a text that [`before_parsing`] left to this estimate from the parser's `tokens`, when its tree
/// is too deep.
pub fn after_parsing(text: &str, tokens: &[Token], pending: Pending) -> Result<(), Refusal> {
    // Every level takes at least one byte: a text this short is within the bound.
    if pending == Pending::Nothing || text.len() <= MAX_NESTING as usize || logical_lines_within_bound(text, tokens) {
        return Ok(());
    }
    TokenEstimate::new(text).run(tokens)
}

/// Whether every logical line of the text, with the blank and comment lines before it, spans at most
/// [`MAX_NESTING`] bytes: the estimate starts each logical line at its indentation (one level per byte)
/// and adds at most one level per token, each at least one byte long, so it cannot pass the bound
/// there. A cheap look at the `Newline` tokens alone, which nearly every file passes.
fn logical_lines_within_bound(text: &str, tokens: &[Token]) -> bool {
    let mut line_start = 0;
    for token in tokens {
        if token.kind() == TokenKind::Newline {
            if token.start().to_usize() - line_start > MAX_NESTING as usize {
                return false;
            }
            line_start = token.end().to_usize();
        }
    }
    text.len() - line_start <= MAX_NESTING as usize
}

/// Whether `text` has more than `bound` quotes that may open an f- or t-string (a quote right after a
/// prefix with `f` or `t`): an over-count, which only sends more texts to the scan.
fn more_interpolated_openings_than(text: &str, bound: usize) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'"', b'\'', bytes)
        .filter(|&at| {
            let prefix = bytes[..at].iter().rev().take(2).take_while(|byte| b"rRbBuUfFtT".contains(byte));
            prefix.clone().any(|byte| b"fFtT".contains(byte))
        })
        .nth(bound)
        .is_some()
}

/// What a token opened, in [`TokenEstimate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opened {
    /// A bracket, or the replacement field of an f- or t-string.
    Bracket,
    /// The parameters of a `lambda`, up to its `:`.
    LambdaParameters,
    /// An f- or t-string: its fields nest under it.
    InterpolatedString,
}

/// The scan's depth estimate over the parser's tokens: a string is one token, a replacement field's
/// braces are bracket tokens, and a logical line ends at a `Newline` token.
struct TokenEstimate<'t> {
    text: &'t str,
    depth: u32,
    /// The indentation of the current logical line: where a top-level `;` goes back to.
    line_base: u32,
    frames: Vec<(Opened, u32)>,
    /// Whether the next significant token starts a logical line.
    at_line_start: bool,
}

impl<'t> TokenEstimate<'t> {
    fn new(text: &'t str) -> Self {
        TokenEstimate { text, depth: 0, line_base: 0, frames: Vec::new(), at_line_start: true }
    }

    fn run(mut self, tokens: &[Token]) -> Result<(), Refusal> {
        for token in tokens {
            self.token(token.kind(), token.start())?;
        }
        Ok(())
    }

    fn deeper(&mut self, at: TextSize) -> Result<(), Refusal> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Refusal::TooDeep { offset: at.to_usize() });
        }
        Ok(())
    }

    fn reset(&mut self) {
        self.depth = self.frames.last().map_or(self.line_base, |&(_, base)| base);
    }

    fn token(&mut self, kind: TokenKind, at: TextSize) -> Result<(), Refusal> {
        match kind {
            TokenKind::NonLogicalNewline
            | TokenKind::Comment
            | TokenKind::Indent
            | TokenKind::Dedent
            | TokenKind::EndOfFile => return Ok(()),
            _ => {}
        }
        if self.at_line_start {
            self.at_line_start = false;
            self.frames.clear();
            self.line_base = self.indentation(at)?;
            self.depth = self.line_base;
        }
        match kind {
            TokenKind::Newline => self.at_line_start = true,
            TokenKind::Comma => self.reset(),
            TokenKind::Semi => {
                if self.frames.iter().all(|&(opened, _)| opened == Opened::LambdaParameters) {
                    self.frames.clear();
                }
                self.reset();
            }
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace => {
                self.deeper(at)?;
                self.frames.push((Opened::Bracket, self.depth));
            }
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                while let Some((Opened::LambdaParameters, _)) = self.frames.last() {
                    self.frames.pop();
                }
                // The bracket itself stays counted at the enclosing level (`f(x)(y)` nests).
                if let Some(&(Opened::Bracket, base)) = self.frames.last() {
                    self.depth = base;
                    self.frames.pop();
                }
            }
            TokenKind::Lambda => {
                self.deeper(at)?;
                self.frames.push((Opened::LambdaParameters, self.depth));
            }
            TokenKind::Colon => {
                self.deeper(at)?;
                if let Some(&(Opened::LambdaParameters, base)) = self.frames.last() {
                    // The body nests under the lambda; the parameters were its siblings.
                    self.depth = base;
                    self.frames.pop();
                }
            }
            TokenKind::FStringStart | TokenKind::TStringStart => {
                self.deeper(at)?;
                self.frames.push((Opened::InterpolatedString, self.depth));
            }
            TokenKind::FStringEnd | TokenKind::TStringEnd => {
                while let Some((opened, base)) = self.frames.pop() {
                    if opened == Opened::InterpolatedString {
                        self.depth = base;
                        break;
                    }
                }
            }
            _ => self.deeper(at)?,
        }
        Ok(())
    }

    /// The indentation of the line the logical line starting at `at` begins on, one level per
    /// character, as the byte scan counts it.
    fn indentation(&self, at: TextSize) -> Result<u32, Refusal> {
        let before = &self.text.as_bytes()[..at.to_usize()];
        let line_start = memchr::memrchr2(b'\n', b'\r', before).map_or(0, |index| index + 1);
        let width = at.to_usize() - line_start;
        if width > MAX_NESTING as usize {
            return Err(Refusal::TooDeep { offset: line_start + MAX_NESTING as usize + 1 });
        }
        Ok(width as u32)
    }
}

struct Scanner<'t> {
    bytes: &'t [u8],
    at: usize,
    depth: u32,
    /// The indentation of the current line: where a top-level `;` goes back to.
    line_base: u32,
    tokens: u64,
    frames: Vec<Frame>,
    /// How many frames are not lambda parameters (brackets and strings): none means top level.
    enclosing: usize,
}

/// The bytes of an identifier (any non-ASCII byte may be part of one), as a table: one load per byte.
static IDENTIFIER: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        byte += 1;
    }
    table
};

fn is_identifier(byte: u8) -> bool {
    IDENTIFIER[usize::from(byte)]
}

impl<'t> Scanner<'t> {
    fn new(text: &'t str) -> Self {
        Scanner { bytes: text.as_bytes(), at: 0, depth: 0, line_base: 0, tokens: 0, frames: Vec::new(), enclosing: 0 }
    }

    fn step(&mut self) -> Result<(), Refusal> {
        let in_literal =
            matches!(self.frames.last(), Some(Frame { kind: Kind::FString { .. } | Kind::FormatSpec { .. }, .. }));
        if in_literal { self.literal() } else { self.code() }
    }

    fn run(mut self) -> Result<(), Refusal> {
        self.indentation()?;
        while self.at < self.bytes.len() {
            if self.frames.is_empty() {
                // Plain code at top level, the common case: no frame to look at.
                self.code()?;
            } else {
                self.step()?;
            }
        }
        Ok(())
    }

    /// One more token at the current level.
    fn token(&mut self) -> Result<(), Refusal> {
        self.tokens += 1;
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Refusal::TooDeep { offset: self.at });
        }
        if self.tokens > MAX_TOKENS {
            return Err(Refusal::TooManyTokens);
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind) {
        self.enclosing += usize::from(kind != Kind::LambdaParameters);
        self.frames.push(Frame { kind, base: self.depth });
    }

    fn pop(&mut self) -> Option<Frame> {
        let frame = self.frames.pop()?;
        self.enclosing -= usize::from(frame.kind != Kind::LambdaParameters);
        Some(frame)
    }

    /// Back to the frame's base (the line's indentation at top level): a sibling starts.
    fn reset(&mut self) {
        self.depth = self.frames.last().map_or(self.line_base, |frame| frame.base);
    }

    fn top_level(&self) -> bool {
        self.enclosing == 0
    }

    /// At the start of a line at top level: each indentation character is a level.
    fn indentation(&mut self) -> Result<(), Refusal> {
        self.frames.clear();
        self.enclosing = 0;
        self.depth = 0;
        let width = self.bytes[self.at..].iter().take_while(|byte| matches!(byte, b' ' | b'\t' | b'\x0c')).count();
        if width > MAX_NESTING as usize {
            return Err(Refusal::TooDeep { offset: self.at + MAX_NESTING as usize + 1 });
        }
        self.at += width;
        self.depth = width as u32;
        self.line_base = self.depth;
        Ok(())
    }

    fn code(&mut self) -> Result<(), Refusal> {
        let byte = self.bytes[self.at];
        match byte {
            b' ' | b'\t' | b'\x0c' | b'\r' => {
                self.at += 1;
                while let Some(b' ' | b'\t' | b'\x0c' | b'\r') = self.bytes.get(self.at) {
                    self.at += 1;
                }
            }
            b'\n' => {
                self.at += 1;
                if self.top_level() {
                    self.token()?;
                    self.indentation()?;
                }
            }
            b'#' => {
                self.at = memchr::memchr(b'\n', &self.bytes[self.at..]).map_or(self.bytes.len(), |end| self.at + end);
            }
            b'\\' => {
                // A line continuation: the next line goes on with the same statement.
                self.at += 1;
                if self.bytes.get(self.at) == Some(&b'\r') {
                    self.at += 1;
                }
                if self.bytes.get(self.at) == Some(&b'\n') {
                    self.at += 1;
                }
            }
            b'\'' | b'"' => self.string()?,
            b',' => {
                self.at += 1;
                self.tokens += 1;
                self.reset();
            }
            b';' => {
                self.at += 1;
                self.tokens += 1;
                if self.top_level() {
                    self.frames.clear();
                    self.enclosing = 0;
                }
                self.reset();
            }
            b'(' | b'[' | b'{' => {
                self.token()?;
                self.at += 1;
                let closer = match byte {
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                };
                self.push(Kind::Bracket(closer));
            }
            b')' | b']' | b'}' => {
                self.at += 1;
                self.tokens += 1;
                // Lambda parameters end with their bracket.
                while matches!(self.frames.last(), Some(Frame { kind: Kind::LambdaParameters, .. })) {
                    self.pop();
                }
                match self.frames.last().copied() {
                    // The bracket itself stays counted at the enclosing level (`f(x)(y)` nests).
                    Some(Frame { kind: Kind::Bracket(closer), base }) if closer == byte => {
                        self.depth = base;
                        self.pop();
                    }
                    Some(Frame { kind: Kind::Field { .. }, base }) if byte == b'}' => {
                        self.depth = base;
                        self.pop();
                    }
                    // A closing bracket that closes nothing: the parser reports it; keep counting.
                    _ => {}
                }
            }
            b':' => {
                self.token()?;
                self.at += 1;
                match self.frames.last().copied() {
                    Some(Frame { kind: Kind::LambdaParameters, base }) => {
                        // The body nests under the lambda; the parameters were its siblings.
                        self.depth = base;
                        self.pop();
                    }
                    Some(Frame { kind: Kind::Field { quote, triple }, .. }) => {
                        self.push(Kind::FormatSpec { quote, triple });
                    }
                    _ => {}
                }
            }
            _ if is_identifier(byte) => {
                let start = self.at;
                self.at += self.bytes[start..]
                    .iter()
                    .position(|&byte| !is_identifier(byte))
                    .unwrap_or(self.bytes.len() - start);
                self.token()?;
                if &self.bytes[start..self.at] == b"lambda" {
                    self.push(Kind::LambdaParameters);
                } else if matches!(self.bytes.get(self.at), Some(b'\'' | b'"')) && self.at - start <= 2 {
                    // A prefixed string: `r"..."`, `f"..."`, `rb'...'`.
                    let prefix = &self.bytes[start..self.at];
                    if prefix.iter().all(|byte| b"rRbBuUfFtT".contains(byte)) {
                        let formatted = prefix.iter().any(|byte| b"fFtT".contains(byte));
                        self.quoted(formatted)?;
                    }
                }
            }
            // Operators, `.`, `@`, `=`, `!`, and anything else: one level each.
            _ => {
                self.token()?;
                self.at += 1;
            }
        }
        Ok(())
    }

    /// A string without prefix at the cursor.
    fn string(&mut self) -> Result<(), Refusal> {
        self.token()?;
        self.quoted(false)
    }

    /// The string whose opening quote is at the cursor.
    fn quoted(&mut self, formatted: bool) -> Result<(), Refusal> {
        let quote = self.bytes[self.at];
        let triple = self.bytes[self.at..].starts_with(&[quote, quote, quote]);
        self.at += if triple { 3 } else { 1 };
        if formatted {
            self.push(Kind::FString { quote, triple });
            return Ok(());
        }
        loop {
            let Some(offset) = memchr::memchr3(quote, b'\\', b'\n', &self.bytes[self.at..]) else {
                self.at = self.bytes.len();
                return Ok(());
            };
            self.at += offset;
            match self.bytes[self.at] {
                b'\\' => self.at = (self.at + 2).min(self.bytes.len()),
                b'\n' if !triple => return Ok(()),
                b'\n' => self.at += 1,
                _ if !triple => {
                    self.at += 1;
                    return Ok(());
                }
                _ if self.bytes[self.at..].starts_with(&[quote, quote, quote]) => {
                    self.at += 3;
                    return Ok(());
                }
                _ => self.at += 1,
            }
        }
    }

    /// The literal part of an f-string or a format spec, up to a field, the end of the field or string.
    fn literal(&mut self) -> Result<(), Refusal> {
        let (quote, triple, in_spec) = match self.frames.last().map(|frame| frame.kind) {
            Some(Kind::FString { quote, triple }) => (quote, triple, false),
            Some(Kind::FormatSpec { quote, triple }) => (quote, triple, true),
            _ => unreachable!("literal() runs in an f-string or a format spec"),
        };
        // Ordinary text of the literal is skipped in one go.
        let ordinary = self.bytes[self.at..]
            .iter()
            .position(|&byte| matches!(byte, b'\\' | b'{' | b'}' | b'\n') || byte == quote)
            .unwrap_or(self.bytes.len() - self.at);
        self.at += ordinary;
        let Some(&byte) = self.bytes.get(self.at) else { return Ok(()) };
        match byte {
            b'\\' => self.at = (self.at + 2).min(self.bytes.len()),
            b'{' | b'}' if !in_spec && self.bytes.get(self.at + 1) == Some(&byte) => self.at += 2,
            b'{' => {
                self.token()?;
                self.at += 1;
                self.push(Kind::Field { quote, triple });
            }
            b'}' if in_spec => {
                // Ends the spec and its field.
                self.at += 1;
                self.pop();
                if let Some(Frame { kind: Kind::Field { .. }, base }) = self.frames.last().copied() {
                    self.depth = base;
                    self.pop();
                }
            }
            b'\n' => {
                self.at += 1;
                if !triple {
                    self.end_fstring();
                }
            }
            _ if byte == quote && (!triple || self.bytes[self.at..].starts_with(&[quote, quote, quote])) => {
                self.at += if triple { 3 } else { 1 };
                self.end_fstring();
            }
            _ => self.at += 1,
        }
        Ok(())
    }

    /// Closes the innermost f-string and whatever it still had open.
    fn end_fstring(&mut self) {
        while let Some(frame) = self.pop() {
            if let Kind::FString { .. } = frame.kind {
                self.depth = frame.base;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The deepest estimate of the byte scan.
    fn scanned_depth(text: &str) -> u32 {
        let mut scanner = Scanner::new(text);
        let mut deepest = 0;
        scanner.indentation().unwrap();
        while scanner.at < scanner.bytes.len() {
            scanner.step().unwrap();
            deepest = deepest.max(scanner.depth);
        }
        deepest
    }

    /// The deepest estimate from the parser's tokens.
    fn token_depth(text: &str) -> u32 {
        let parsed = ruff_python_parser::parse_unchecked_source(text, ruff_python_ast::PySourceType::Python);
        let mut estimate = TokenEstimate::new(text);
        let mut deepest = 0;
        for token in parsed.tokens() {
            estimate.token(token.kind(), token.start()).unwrap();
            deepest = deepest.max(estimate.depth);
        }
        deepest
    }

    #[test]
    fn the_token_estimate_is_asked_only_where_a_logical_line_could_pass_the_bound() {
        let judged = |text: &str| {
            let parsed = ruff_python_parser::parse_unchecked_source(text, ruff_python_ast::PySourceType::Python);
            (
                logical_lines_within_bound(text, parsed.tokens()),
                after_parsing(text, parsed.tokens(), Pending::TokenEstimate),
            )
        };
        // Many short lines: within the bound without the estimate.
        let ordinary = "def f(x):\n    return g(x, n_jobs=2)  # a comment\n\n".repeat(2_000);
        assert_eq!(judged(&ordinary), (true, Ok(())));
        // One long logical line, shallow: the estimate is asked, and lets it through.
        let wide = format!("x = [\n{}]\n", "    1,\n".repeat(3_000));
        assert_eq!(judged(&wide), (false, Ok(())));
        // One long logical line, deep: the estimate is asked, and refuses it.
        let deep = format!("x = {}1\n", "-".repeat(MAX_NESTING as usize + 10));
        assert!(matches!(judged(&deep), (false, Err(Refusal::TooDeep { .. }))));
        // Deep on the last line, without a line break at the end.
        let last = format!("{ordinary}x = {}1", "-".repeat(MAX_NESTING as usize + 10));
        assert!(matches!(judged(&last), (false, Err(Refusal::TooDeep { .. }))));
    }

    /// The lower of the two estimates: a deep shape must be seen as deep by both.
    fn shallowest(text: &str) -> u32 {
        scanned_depth(text).min(token_depth(text))
    }

    /// The higher of the two estimates: a shallow text must be seen as shallow by both.
    fn deepest(text: &str) -> u32 {
        scanned_depth(text).max(token_depth(text))
    }

    #[test]
    fn ordinary_code_is_shallow() {
        let code = "import os\n\ndef f(a, b=1):\n    return [x.y for x in a if x] + g(b, c=2)\n";
        assert!(deepest(code) < 20, "{}", deepest(code));
        let table = format!("X = [{}]\n", "(1, 'a', 2.5), ".repeat(10_000));
        assert!(deepest(&table) < 10);
    }

    #[test]
    fn chains_count_each_link() {
        for unit in ["-", "not ", "1+", "a.", "await ", "lambda: ", "lambda a, b: ", "x if y else "] {
            let text = format!("x = {}1\n", unit.repeat(1000));
            assert!(shallowest(&text) >= 1000, "{unit:?}: {}", shallowest(&text));
        }
        for (open, close) in [("(", ")"), ("[", "]"), ("{", "}"), ("f(", ")"), ("a[", "]"), ("f(x)(", ")")] {
            let text = format!("x = {}1{}\n", open.repeat(1000), close.repeat(1000));
            assert!(shallowest(&text) >= 1000, "{open:?}: {}", shallowest(&text));
        }
        let calls = format!("x = f{}\n", "(1)".repeat(1000));
        assert!(shallowest(&calls) >= 1000);
    }

    #[test]
    fn strings_are_text_but_fields_are_code() {
        assert!(deepest(&format!("x = '{}'\n", "(".repeat(1000))) < 10);
        assert!(deepest(&format!("x = \"\"\"{}\n\"\"\"\n", "(-".repeat(1000))) < 10);
        assert!(deepest(&format!("x = f'{{{{{}'\n", "(".repeat(1000))) < 10);
        let field = format!("x = f'{{{}1}}'\n", "-".repeat(1000));
        assert!(shallowest(&field) >= 1000);
        let nested = format!("x = {}1{}\n", "f\"{".repeat(500), "}\"".repeat(500));
        assert!(shallowest(&nested) >= 1000, "{}", shallowest(&nested));
        let spec = format!("x = f'{{a:>{{{}1}}}}'\n", "-".repeat(1000));
        assert!(shallowest(&spec) >= 1000);
        // A quote in a format spec does not start a string.
        assert!(shallowest(&format!("x = f\"{{a:'>10}}\" + {}1\n", "-".repeat(1000))) >= 1000);
    }

    #[test]
    fn indentation_counts() {
        let mut text = String::new();
        for level in 0..300 {
            text.push_str(&" ".repeat(level));
            text.push_str("if x:\n");
        }
        assert!(shallowest(&text) >= 300);
    }

    #[test]
    fn a_semicolon_goes_back_to_the_indentation() {
        let text = format!("if x:\n{}y = 1; z = {}1\n", " ".repeat(600), "-".repeat(600));
        assert!(shallowest(&text) >= 1200, "{}", shallowest(&text));
    }

    fn tokens(text: &str) -> Vec<Token> {
        ruff_python_parser::parse_unchecked_source(text, ruff_python_ast::PySourceType::Python).tokens().to_vec()
    }

    #[test]
    fn large_texts_are_parsed_first_when_few_tokens_open_a_level_of_the_parser() {
        // Two openers a line (`=` and `(`): 12 Ki of them in 216 KB.
        let code = "value = compute(alpha, beta, gamma)\n";
        assert_eq!(level_openers(code, usize::MAX), 2);
        let ordinary = code.repeat(6_000);
        assert!(ordinary.len() > PARSE_FIRST_MAX_BYTES);
        assert_eq!(before_parsing(&ordinary), Ok(Pending::TokenEstimate));
        // 18 Ki of them: scanned.
        assert_eq!(before_parsing(&code.repeat(9_000)), Ok(Pending::Nothing));
        // Keywords count wherever they are written, inside names too: `notify` holds `not` and `if`
        // (`else` is not counted: a conditional expression recurses once per `if`).
        assert_eq!(level_openers("notify(x) if y else z\n", usize::MAX), 4);
        assert!(matches!(before_parsing(&"not ".repeat(20_000)), Err(Refusal::TooDeep { .. })));
        // Past 1 MiB, scanned whatever the shape.
        let names = "alpha\n".repeat(PARSE_FIRST_COUNTED_MAX_BYTES / 6 + 1);
        assert_eq!(level_openers(&names, usize::MAX), 0);
        assert_eq!(before_parsing(&names), Ok(Pending::Nothing));
    }

    #[test]
    fn small_texts_are_judged_after_parsing_large_ones_before() {
        let shallow = "x = 1\n";
        assert_eq!(before_parsing(shallow), Ok(Pending::TokenEstimate));
        assert_eq!(after_parsing(shallow, &tokens(shallow), Pending::TokenEstimate), Ok(()));

        let deep = format!("x = {}1\n", "-".repeat(MAX_NESTING as usize + 10));
        assert_eq!(before_parsing(&deep), Ok(Pending::TokenEstimate));
        // `x`, `=` and the minus signs: the 10,001st token is the minus at this offset.
        assert_eq!(
            after_parsing(&deep, &tokens(&deep), Pending::TokenEstimate),
            Err(Refusal::TooDeep { offset: MAX_NESTING as usize + 2 })
        );

        let large = format!("{deep}{}", "x = 1\n".repeat(PARSE_FIRST_MAX_BYTES / 6));
        assert!(large.len() > PARSE_FIRST_MAX_BYTES);
        assert!(matches!(before_parsing(&large), Err(Refusal::TooDeep { offset }) if offset > MAX_NESTING as usize));

        // Many f-strings: scanned first, whatever the size.
        let fstrings = format!("{}x = {}1\n", "y = f'{a}'\n".repeat(600), "-".repeat(MAX_NESTING as usize + 10));
        assert!(fstrings.len() <= PARSE_FIRST_MAX_BYTES);
        assert!(matches!(before_parsing(&fstrings), Err(Refusal::TooDeep { .. })));
        let fine = "y = f'{a}'\n".repeat(600);
        assert_eq!(before_parsing(&fine), Ok(Pending::Nothing));
        assert_eq!(after_parsing(&fine, &tokens(&fine), Pending::Nothing), Ok(()));
    }
}
