//! The prefilter: a text search that tells, before parsing, that a Python file cannot have a finding, so
//! that most files of a repository are never parsed. It looks for the words the rules need
//! ([`crate::prefilter_words`]), written out or spelled indirectly ([`spelling`]); it may let a
//! file through that has no finding, never the other way round.

pub mod definitions;
mod prose;
pub mod spelling;

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

/// A multi-pattern substring search, in one pass: SIMD (Teddy) where the CPU has it, an automaton
/// otherwise. It matches a text that contains any of its words, one of its whole names (a word not
/// preceded by a name's character), or both words of one of its pairs.
pub struct WordSearch {
    packed: Option<aho_corasick::packed::Searcher>,
    /// The automaton, built only where there is no packed searcher: building it takes longer than
    /// searching a small repository.
    automaton: OnceLock<AhoCorasick>,
    patterns: Vec<String>,
    /// What a match of each pattern means, by pattern index.
    roles: Vec<Role>,
    /// Which names a match of each pattern counts in, by pattern index.
    holders: Vec<Holders>,
}

/// Which names holding a match of a module or of a pair's word let it count, beyond what its role says.
#[derive(Debug, Clone, Copy)]
enum Holders {
    /// Any name.
    Any,
    /// Only these whole names (`Pool` in `ProcessPoolExecutor`, not in `HTTPConnectionPool`).
    OneOf(&'static [&'static str]),
    /// Any name but one imported only from installed packages and not bound again in the text
    /// ([`ImportOrigins::counts`]): `EmptyOperator` after `from airflow.operators.empty import
    /// EmptyOperator`.
    NotInstalled,
}

/// What a match of one pattern of a [`WordSearch`] means.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// The text matches.
    Word,
    /// The text matches where the match does not continue a name (`n_process`, not `gaussian_process`).
    WholeName,
    /// One word of a pair, by its bit: the text matches once both bits of a pair are seen.
    PairWord(u32),
    /// A word that ends with a call's `(` (`kubernetes(`), searched without it: the text matches where
    /// the `(` follows the name, after blanks, line breaks, continuations or comments if any (Python
    /// reads `@task.kubernetes (image=...)` as the call too).
    Called,
    /// A thread-count keyword (`n_jobs`, also inside `num_threads`): the text matches unless the whole
    /// name holding the match is a thread-count keyword given a positive integer or `None` as an
    /// argument, a parameter's default or a store (`n_jobs=2,`, `num_threads = None)`): see
    /// [`is_settled_count_at`].
    CountKeyword,
    /// A library's package or one of its entry points, which a file reaches only through an import, an
    /// attribute or a string: the text matches where the name it is part of follows a `.` or a quote,
    /// or where an import statement holds it (or any star import is made).
    Module,
}

/// The words of a [`WordSearch`], by what a match of each means.
#[derive(Debug, Clone, Copy, Default)]
pub struct Vocabulary<'w> {
    /// Words that match wherever they are (a word ending with `(` where it is called).
    pub words: &'w [&'w str],
    /// Words that match where they do not continue a name ([`Role::WholeName`]).
    pub whole_names: &'w [&'w str],
    /// Thread-count keywords ([`Role::CountKeyword`]).
    pub count_keywords: &'w [&'w str],
    /// Packages and entry points, where the text can reach them ([`Role::Module`]).
    pub modules: &'w [&'w str],
    /// Modules of [`Vocabulary::modules`] whose match counts only inside one of the given whole names
    /// (`Pool` in `ProcessPoolExecutor`, not in `HTTPConnectionPool`).
    pub module_holders: &'w [(&'w str, &'static [&'static str])],
    /// Words of [`Vocabulary::pairs`] that do not count in a name the text imports only from installed
    /// packages ([`Holders::NotInstalled`]).
    pub pair_words_not_installed: &'w [&'w str],
    /// Pairs of words that match together.
    pub pairs: &'w [(&'w str, &'w str)],
}

impl WordSearch {
    /// A search for the words of `vocabulary`, each matching as its role says.
    pub fn of(vocabulary: Vocabulary<'_>) -> Self {
        let Vocabulary { words, whole_names, count_keywords, modules, module_holders, pair_words_not_installed, pairs } =
            vocabulary;
        assert!(pairs.len() * 2 <= 64, "pair words fit the bit set of a search");
        let mut patterns: Vec<&str> = Vec::new();
        let mut roles = Vec::new();
        for word in words {
            match word.strip_suffix('(') {
                Some(name) => {
                    patterns.push(name);
                    roles.push(Role::Called);
                }
                None => {
                    patterns.push(word);
                    roles.push(Role::Word);
                }
            }
        }
        patterns.extend(whole_names);
        roles.extend(whole_names.iter().map(|_| Role::WholeName));
        patterns.extend(count_keywords);
        roles.extend(count_keywords.iter().map(|_| Role::CountKeyword));
        patterns.extend(modules);
        roles.extend(modules.iter().map(|_| Role::Module));
        for (index, (first, second)) in pairs.iter().enumerate() {
            patterns.extend([*first, *second]);
            roles.extend([Role::PairWord(2 * index as u32), Role::PairWord(2 * index as u32 + 1)]);
        }
        let holders = patterns
            .iter()
            .zip(&roles)
            .map(|(pattern, role)| match role {
                Role::Module => module_holders
                    .iter()
                    .find(|(module, _)| module == pattern)
                    .map_or(Holders::Any, |(_, names)| Holders::OneOf(names)),
                Role::PairWord(_) if pair_words_not_installed.contains(pattern) => Holders::NotInstalled,
                _ => Holders::Any,
            })
            .collect();
        WordSearch {
            packed: aho_corasick::packed::Searcher::new(patterns.iter().copied()),
            automaton: OnceLock::new(),
            patterns: patterns.iter().map(|pattern| pattern.to_string()).collect(),
            roles,
            holders,
        }
    }

    /// The leftmost match in `text` at or after `from`.
    fn find_from(&self, text: &str, from: usize) -> Option<aho_corasick::Match> {
        let span = aho_corasick::Span { start: from, end: text.len() };
        match &self.packed {
            Some(packed) => packed.find_in(text, span),
            None => self
                .automaton
                .get_or_init(|| AhoCorasick::new(&self.patterns).expect("prefilter words are valid patterns"))
                .find(aho_corasick::Input::new(text).span(span)),
        }
    }

    /// Whether the match `found` in `bytes` counts on its own where it is, for the roles judged by the
    /// bytes around the match alone: a word always, a call's name before its `(`, a whole name where it
    /// does not continue another name. `None` for a word of a pair or a module's name, which are judged
    /// with other matches. The search goes on past the match, or inside a whole name that continues
    /// another one (another word may start there): where, is the second value.
    fn judged_in_place(&self, bytes: &[u8], found: &aho_corasick::Match) -> Option<(bool, usize)> {
        match self.roles[found.pattern().as_usize()] {
            Role::Word => Some((true, found.end())),
            Role::Called => Some((spelling::is_called_at(bytes, found.end()), found.end())),
            Role::WholeName if continues_a_name(bytes, found.start()) => Some((false, found.start() + 1)),
            Role::WholeName => Some((true, found.end())),
            Role::CountKeyword => Some((!is_settled_count_at(bytes, found.start(), found.end()), found.end())),
            Role::PairWord(_) | Role::Module => None,
        }
    }

    /// Where each match in `text` from `from` on that may count on its own starts, in order: those
    /// [`WordSearch::judged_in_place`] counts, and every module's name (not a word of a pair).
    fn counted_match_starts<'s>(&'s self, text: &'s str, from: usize) -> impl Iterator<Item = usize> + 's {
        let mut from = from;
        std::iter::from_fn(move || {
            loop {
                let found = self.find_from(text, from)?;
                let (counts, resume) = self
                    .judged_in_place(text.as_bytes(), &found)
                    .unwrap_or_else(|| (matches!(self.roles[found.pattern().as_usize()], Role::Module), found.end()));
                from = resume;
                if counts {
                    return Some(found.start());
                }
            }
        })
    }

    /// Whether `text` contains any of the words, a whole name, both words of a pair, or a module where
    /// it can name that package.
    pub fn is_match(&self, text: &str) -> bool {
        self.deciding_match(text).is_some()
    }

    /// What lets `text` through [`WordSearch::is_match`]: `Some(Some(start))` for the match at `start` (a
    /// word, a whole name, a call's name, a module where it can be named), `Some(None)` for a pair or an
    /// import statement, `None` when nothing does.
    fn deciding_match(&self, text: &str) -> Option<Option<usize>> {
        let mut seen = 0u64;
        let mut from = 0;
        let mut module_elsewhere = false;
        // The names of pair words that count only outside installed packages' names, judged once the
        // other word of their pair is seen.
        let mut pending_names = Vec::new();
        let mut origins = None;
        // Where the name of the last such word ends: a match inside it is the same name.
        let mut pair_name_end = 0;
        // Where the last module match ended: a match in the same name was judged with it.
        let mut judged_to = 0;
        while let Some(found) = self.find_from(text, from) {
            from = found.end();
            if let Some((counts, resume)) = self.judged_in_place(text.as_bytes(), &found) {
                if counts {
                    return Some(Some(found.start()));
                }
                from = resume;
                continue;
            }
            match self.roles[found.pattern().as_usize()] {
                Role::Word | Role::Called | Role::WholeName | Role::CountKeyword => {}
                Role::PairWord(bit) => {
                    let partner = 1 << (bit ^ 1);
                    if matches!(self.holders[found.pattern().as_usize()], Holders::NotInstalled) {
                        if found.start() < pair_name_end {
                            continue;
                        }
                        let name = name_around(text.as_bytes(), &found);
                        pair_name_end = name.end;
                        // Judged only once the other word of the pair is seen: most files hold one alone.
                        if seen & partner == 0 {
                            pending_names.push((bit, name));
                            continue;
                        }
                        if !origins.get_or_insert_with(|| ImportOrigins::of(text)).counts(text, &text[name]) {
                            continue;
                        }
                    }
                    seen |= 1 << bit;
                    // The names of the other word that waited for this one are judged now.
                    if seen & partner == 0 && pending_names.iter().any(|(waiting, _)| 1 << waiting == partner) {
                        let origins = origins.get_or_insert_with(|| ImportOrigins::of(text));
                        if pending_names
                            .iter()
                            .filter(|(waiting, _)| 1 << waiting == partner)
                            .any(|(_, name)| origins.counts(text, &text[name.clone()]))
                        {
                            seen |= partner;
                        }
                        pending_names.retain(|(waiting, _)| 1 << waiting != partner);
                    }
                    let pair = 0b11 << (bit & !1);
                    if seen & pair == pair {
                        return Some(None);
                    }
                }
                Role::Module => {
                    let bytes = text.as_bytes();
                    let name_start = name_start(bytes, found.start(), judged_to)
                        .filter(|&start| self.held_by_a_counted_name(bytes, start, &found));
                    judged_to = found.end();
                    match name_start {
                        Some(start) if follows_a_dot_or_quote(bytes, start) => return Some(Some(found.start())),
                        Some(_) => module_elsewhere = true,
                        None => {}
                    }
                }
            }
        }
        // Asked once, at the end: whether an import statement names one of the modules.
        (module_elsewhere && self.an_import_names_a_module(text)).then_some(None)
    }

    /// Whether the module's match `found`, in the name of `bytes` that starts at `start`, counts there:
    /// anywhere, unless the module counts only inside some whole names and that name is not one of them.
    fn held_by_a_counted_name(&self, bytes: &[u8], start: usize, found: &aho_corasick::Match) -> bool {
        let Holders::OneOf(holders) = self.holders[found.pattern().as_usize()] else { return true };
        holders.iter().any(|holder| holder.as_bytes() == &bytes[start..name_end(bytes, found.end())])
    }

    /// Whether an import statement of `text` (as [`crate::project::imported_modules`] reads them, comments
    /// dropped and continued lines joined) holds one of the search's modules.
    fn an_import_names_a_module(&self, text: &str) -> bool {
        crate::project::imported_modules::any_import_statement(text, |statement| {
            // A star import may bind any entry point of its module.
            if statement.trim_end().ends_with('*') {
                return true;
            }
            let mut from = 0;
            // Where the name of the last module's match ends: a match inside it was judged with it.
            let mut name_end = 0;
            while let Some(found) = self.find_from(statement, from) {
                if matches!(self.roles[found.pattern().as_usize()], Role::Module) && found.start() >= name_end {
                    let bytes = statement.as_bytes();
                    let name = name_around(bytes, &found);
                    name_end = name.end;
                    if self.held_by_a_counted_name(bytes, name.start, &found) {
                        return true;
                    }
                }
                from = found.start() + 1;
            }
            false
        })
    }
}

/// Where the names the import statements of a text write come from ([`crate::libraries::is_known_package`]
/// tells an installed package), read once per text.
struct ImportOrigins {
    /// Names written by an import from an installed package (the name and its alias in `from
    /// airflow.operators.bash import BashOperator as Bash`).
    installed: rustc_hash::FxHashSet<String>,
    /// Names written by an import from any other module.
    elsewhere: rustc_hash::FxHashSet<String>,
    /// What [`ImportOrigins::counts`] answered, by name.
    verdicts: rustc_hash::FxHashMap<String, bool>,
}

impl ImportOrigins {
    fn of(text: &str) -> Self {
        let mut origins = ImportOrigins {
            installed: Default::default(),
            elsewhere: Default::default(),
            verdicts: Default::default(),
        };
        crate::project::imported_modules::imported_names_by_origin(
            text,
            crate::libraries::is_known_package,
            |name, from_installed| {
                let names = if from_installed { &mut origins.installed } else { &mut origins.elsewhere };
                names.insert(name.to_string());
            },
        );
        origins
    }

    /// Whether a word found in the name `name` counts: unless every import of `name` is from an installed
    /// package and the text does not bind it again as a plain target ([`rebinds`]). Each name is
    /// searched for in the whole text once, for at most [`MAX_JUDGED_NAMES`] names: any other counts.
    fn counts(&mut self, text: &str, name: &str) -> bool {
        if !self.installed.contains(name) || self.elsewhere.contains(name) {
            return true;
        }
        if let Some(&known) = self.verdicts.get(name) {
            return known;
        }
        if self.verdicts.len() >= MAX_JUDGED_NAMES {
            return true;
        }
        let counts = rebinds(text, name);
        self.verdicts.insert(name.to_string(), counts);
        counts
    }
}

/// How many names one text's [`ImportOrigins::counts`] searches for: each search reads the whole text.
const MAX_JUDGED_NAMES: usize = 64;

/// Whether `text` may bind `name` other than by an import of it: `name` as a whole name after `class`,
/// `def`, `for`, `as` (an alias, which only an import from elsewhere would make count anyway), `global`,
/// `nonlocal` or `del`, or before `=` (not `==`) or `:` (an annotated assignment, `:=`). One pass over
/// the text: each occurrence looks at the blanks and the word before it and the blanks after it.
fn rebinds(text: &str, name: &str) -> bool {
    let bytes = text.as_bytes();
    let is_blank = |byte: &&u8| matches!(byte, b' ' | b'\t');
    memchr::memmem::find_iter(bytes, name.as_bytes()).any(|at| {
        let end = at + name.len();
        if continues_a_name(bytes, at) || bytes.get(end).is_some_and(|byte| is_name_byte(*byte)) {
            return false;
        }
        let mut after = bytes[end..].iter().skip_while(is_blank);
        let assigned = match after.next() {
            Some(b'=') => after.next() != Some(&b'='),
            Some(b':') => true,
            _ => false,
        };
        let word_end = at - bytes[..at].iter().rev().take_while(is_blank).count();
        let word_start = word_end - bytes[..word_end].iter().rev().take_while(|byte| is_name_byte(**byte)).count();
        assigned
            || matches!(&text[word_start..word_end], "class" | "def" | "for" | "as" | "global" | "nonlocal" | "del")
    })
}

/// Whether the match of a thread-count word at `start..end` of `bytes` is a whole thread-count keyword
/// ([`capslint_cpu::keywords::is_thread_count_keyword`]: `n_jobs`, not `effective_n_jobs` nor `cv_n_jobs`)
/// given a literal that ends there: the name, `=` (not `==`, `+=`, `:=`), a positive integer (digits
/// not starting with `0`, which XGBoost and native LightGBM read as "all cores") or `None`, then `,`,
/// `)` or `;`, with blanks of one line between. Whatever holds such text (a call's keyword, a
/// parameter's default, a store such as `a, n_jobs = 2, -1`), the keyword receives that value, or the
/// name is stored and only a read of it (another match, which counts) passes a value on. No rule
/// reports such a value on its own: CAP103 (any count but 1 on joblib's entry points), CAP102 (`None`
/// on a booster) and CAP101 (`None` inside a joblib backend block) need a callee or a block named by
/// words of their own. A line break or a comment ends nothing here: inside brackets the expression
/// goes on (`n_jobs=2  # two` then `- 3)`), so the match counts.
fn is_settled_count_at(bytes: &[u8], start: usize, end: usize) -> bool {
    let is_blank = |byte: &u8| matches!(byte, b' ' | b'\t');
    let name_end = name_end(bytes, end);
    let Ok(name) = std::str::from_utf8(&bytes[start..name_end]) else { return false };
    if continues_a_name(bytes, start) || !capslint_cpu::keywords::is_thread_count_keyword(name) {
        return false;
    }
    let skip_blanks = |from: usize| from + bytes[from..].iter().take_while(|byte| is_blank(byte)).count();
    let equals = skip_blanks(name_end);
    if bytes.get(equals) != Some(&b'=') {
        return false;
    }
    let literal = skip_blanks(equals + 1);
    let literal_end = match bytes.get(literal) {
        Some(b'1'..=b'9') => literal + bytes[literal..].iter().take_while(|byte| byte.is_ascii_digit()).count(),
        Some(b'N') if bytes[literal..].starts_with(b"None") => literal + "None".len(),
        _ => return false,
    };
    matches!(bytes.get(skip_blanks(literal_end)), Some(b',' | b')' | b';'))
}

/// Where the name holding the match `found` of `bytes` starts and ends: the match with the name's bytes
/// before and after it.
fn name_around(bytes: &[u8], found: &aho_corasick::Match) -> std::ops::Range<usize> {
    let before = bytes[..found.start()].iter().rev().take_while(|byte| is_name_byte(**byte)).count();
    found.start() - before..name_end(bytes, found.end())
}

/// Where the name that goes on at byte `at` of `bytes` ends.
fn name_end(bytes: &[u8], at: usize) -> usize {
    at + bytes[at..].iter().take_while(|byte| is_name_byte(**byte)).count()
}

/// Where the name holding byte `at` starts (`ProcessPoolExecutor` for `Pool`), looked for back to
/// `floor` at most: `None` when every byte back to `floor` is part of the name, which then is the one
/// the match that ended at `floor` was in. Each byte is looked at once over a search.
fn name_start(bytes: &[u8], at: usize, floor: usize) -> Option<usize> {
    let mut start = at;
    while start > floor && is_name_byte(bytes[start - 1]) {
        start -= 1;
    }
    (start > floor || floor == 0 || !is_name_byte(bytes[floor - 1])).then_some(start)
}

/// Whether the token before byte `at` is a `.` or a string's opening quote, so that a package name
/// starting there can be an attribute (`optuna.integration.lightgbm`) or a module named in a string
/// (`importlib.import_module("xgboost")`). Blanks, line continuations, line breaks and comments may
/// come between: the lines above are looked at until one holds code (as the text before one of its `#`,
/// or the whole line). Only the first match on a line goes further than its own blanks, so the whole
/// search stays linear in the text.
fn follows_a_dot_or_quote(bytes: &[u8], at: usize) -> bool {
    let is_blank = |byte: &u8| matches!(byte, b' ' | b'\t' | b'\x0c' | b'\r' | b'\\');
    let ends_a_name_path = |code: &[u8]| {
        matches!(code.iter().rposition(|byte| !is_blank(byte)).map(|last| code[last]), Some(b'.' | b'"' | b'\''))
    };
    // On the name's own line, only blanks may come between.
    let before = bytes[..at].iter().rposition(|byte| !is_blank(byte));
    match before.map(|index| (index, bytes[index])) {
        Some((_, b'.' | b'"' | b'\'')) => true,
        Some((mut newline, b'\n')) => loop {
            let start = memchr::memrchr(b'\n', &bytes[..newline]).map_or(0, |previous| previous + 1);
            let line = &bytes[start..newline];
            // A `#` may start a comment after the code, or be in a string: both readings are tried.
            if ends_a_name_path(line) || memchr::memchr_iter(b'#', line).any(|hash| ends_a_name_path(&line[..hash])) {
                return true;
            }
            let code = memchr::memchr(b'#', line).map_or(line, |hash| &line[..hash]);
            if code.iter().any(|byte| !is_blank(byte)) || start == 0 {
                return false;
            }
            newline = start - 1;
        },
        _ => false,
    }
}

/// Whether the byte before `at` is one a Python name holds (a letter, a digit, `_`, or part of a
/// non-ASCII character), so that a word found at `at` continues that name.
fn continues_a_name(bytes: &[u8], at: usize) -> bool {
    at > 0 && is_name_byte(bytes[at - 1])
}

/// Whether `byte` can be part of a Python name: a letter, a digit, `_`, or part of a non-ASCII character.
pub(crate) fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

/// The search of a whole file: each name of [`crate::PREFILTER_IMPORTED`] counts only where the text can
/// reach it.
fn python_prefilter() -> &'static WordSearch {
    static SEARCH: OnceLock<WordSearch> = OnceLock::new();
    SEARCH.get_or_init(|| {
        let words: Vec<&str> = crate::prefilter_words()
            .into_iter()
            .filter(|word| {
                ![crate::PREFILTER_WHOLE_NAMES, crate::PREFILTER_COUNT_KEYWORDS, crate::PREFILTER_IMPORTED]
                    .iter()
                    .any(|role| role.contains(word))
            })
            .collect();
        WordSearch::of(Vocabulary {
            words: &words,
            whole_names: crate::PREFILTER_WHOLE_NAMES,
            count_keywords: crate::PREFILTER_COUNT_KEYWORDS,
            modules: crate::PREFILTER_IMPORTED,
            module_holders: crate::PREFILTER_IMPORTED_HOLDERS,
            pair_words_not_installed: crate::PREFILTER_PAIR_WORDS_NOT_INSTALLED,
            pairs: crate::PREFILTER_WORD_PAIRS,
        })
    })
}

/// The search of one function's text, which holds no import of its own: the imported names count as words.
fn function_prefilter() -> &'static WordSearch {
    static SEARCH: OnceLock<WordSearch> = OnceLock::new();
    SEARCH.get_or_init(|| {
        let words: Vec<&str> = crate::prefilter_words()
            .into_iter()
            .filter(|word| {
                ![crate::PREFILTER_WHOLE_NAMES, crate::PREFILTER_COUNT_KEYWORDS].iter().any(|role| role.contains(word))
            })
            .collect();
        WordSearch::of(Vocabulary {
            words: &words,
            whole_names: crate::PREFILTER_WHOLE_NAMES,
            count_keywords: crate::PREFILTER_COUNT_KEYWORDS,
            pairs: crate::PREFILTER_WORD_PAIRS,
            ..Vocabulary::default()
        })
    })
}

/// Whether a Python text contains one of the words the rules need, written out or spelled indirectly
/// (implicit concatenation, escapes, NFKC-folded identifiers, blanks before a call's `(`: see
/// [`spelling`]), outside its comments and docstrings ([`prose`]). A text for which this is false has no
/// findings, so it is never parsed.
pub fn may_have_findings(text: &str) -> bool {
    in_code(python_prefilter(), text, Spellings::Indirect)
}

/// Which spellings of a word a search counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spellings {
    /// Words as written.
    Written,
    /// Words as written and as Python reads them ([`spelling`]).
    Indirect,
}

/// Whether `search` matches `text` outside its comments and docstrings. The match that lets the text
/// through is tested first: when it and every match after it up to one in plain code may be in prose
/// ([`prose::may_all_be_prose`]), the search is made again in the text with its prose blanked.
fn in_code(search: &WordSearch, text: &str, spellings: Spellings) -> bool {
    let searched = |text: &str| match spellings {
        Spellings::Written => search.is_match(text),
        Spellings::Indirect => searched_with(search, text),
    };
    match search.deciding_match(text) {
        Some(Some(start)) if prose::may_all_be_prose(text, search.counted_match_starts(text, start)) => {
            prose::without_prose(text).is_none_or(|code| searched(&code))
        }
        Some(_) => true,
        // Spelled indirectly alone: rare enough not to be looked at for prose.
        None => {
            spellings == Spellings::Indirect
                && spelling::unfolded(text).iter().any(|unfolded| search.is_match(unfolded))
        }
    }
}

/// [`may_have_findings`] of the text of one function: the names of [`crate::PREFILTER_IMPORTED`] count
/// wherever they are written, since the function's text does not hold the module's imports.
fn function_may_have_findings_in(definition: &str) -> bool {
    in_code(function_prefilter(), definition, Spellings::Indirect)
}

/// Whether `search` matches `text`, written out or spelled indirectly.
fn searched_with(search: &WordSearch, text: &str) -> bool {
    search.is_match(text) || spelling::unfolded(text).iter().any(|unfolded| search.is_match(unfolded))
}

/// Whether `text` holds one of the words the rules need as written (or both words of a pair) outside its
/// comments and docstrings, without the indirect spellings [`may_have_findings`] also looks for: the cheap
/// test of a function's own text.
pub fn names_a_word(text: &str) -> bool {
    in_code(function_prefilter(), text, Spellings::Written)
}

/// Each top-level statement of `text` that starts with `keyword` (`def `, also after `async `, or
/// `class `) and a name: that name and the statement's text.
fn top_level_statements<'t>(text: &'t str, keyword: &'static str) -> impl Iterator<Item = (&'t str, &'t str)> {
    // Where the line holding byte `at` starts, when `at` is the start of a line.
    let line_start_at = |at: usize| (at == 0 || text.as_bytes()[at - 1] == b'\n').then_some(at);
    let starts = memchr::memmem::find_iter(text.as_bytes(), keyword.as_bytes()).filter_map(move |at| {
        // Only at the start of a line, or after `async ` there: each occurrence is judged in constant
        // time, however long its line.
        let line_start = line_start_at(at).or_else(|| {
            let after_async = keyword == "def " && text[..at].ends_with("async ");
            after_async.then(|| line_start_at(at - "async ".len())).flatten()
        })?;
        let rest = text[at + keyword.len()..].trim_start();
        let length = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let (name, after) = rest.split_at(length);
        let after = after.trim_start();
        let opens = after.starts_with('(') || (keyword == "class " && after.starts_with(':'));
        (!name.is_empty() && opens).then_some((name, line_start))
    });
    starts.map(move |(name, start)| {
        // The text ends before the first line after the `def` line that does not continue it: one that
        // starts other than with a blank, a comment or a closing bracket.
        let bytes = text.as_bytes();
        let end = memchr::memchr_iter(b'\n', &bytes[start..])
            .map(|newline| start + newline + 1)
            .find(|&line| {
                bytes.get(line).is_some_and(|first| !matches!(first, b' ' | b'\t' | b'\n' | b'\r' | b'#' | b')' | b']'))
            })
            .unwrap_or(text.len());
        (name, &text[start..end])
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_function_is_searched_in_its_own_text() {
        let module = "import os\n\ndef shout(text):\n    return text.upper()\n\n\ndef etl(task_id, **kwargs):\n    \
                      return KubernetesPodOperator(task_id=task_id, **kwargs)\n\nasync def fit(\n    x,\n) -> None:\n    \
                      Parallel(n_jobs=-1)\nVALUE = 1\n";
        let mut found: Vec<&str> = super::definitions::with_findings(module).functions.into_iter().collect();
        found.sort_unstable();
        assert_eq!(found, ["etl", "fit"]);
    }

    #[test]
    fn each_class_is_searched_in_its_own_text_all_in_one_pass() {
        let module = "import lightgbm\n\nclass Plain:\n    def fit(self):\n        return 1\n\n\
                      class Booster(Base):\n    def fit(self, X):\n        return lightgbm.train({}, X)\n\n\
                      class Pools:\n    def run(self):\n        Parallel(n_jobs=-1)\n\n\
                      class Plain:\n    # Defined again, with a word: a call may reach either.\n    \
                      def cap(self):\n        os.environ['OMP_NUM_THREADS'] = '1'\n";
        let mut found: Vec<&str> = super::definitions::with_findings(module).classes.into_iter().collect();
        found.sort_unstable();
        assert_eq!(found, ["Booster", "Plain", "Pools"]);
        assert!(super::definitions::with_findings("class Plain:\n    pass\n").classes.is_empty());
    }

    use super::*;

    /// Asserts that the prefilter lets each of `texts` through.
    fn assert_let_through(texts: &[&str]) {
        for text in texts {
            assert!(may_have_findings(text), "{text}");
        }
    }

    /// Asserts that the prefilter lets none of `texts` through.
    fn assert_held_back(texts: &[&str]) {
        for text in texts {
            assert!(!may_have_findings(text), "{text}");
        }
    }

    #[test]
    fn words_written_out_or_spelled_indirectly_let_a_file_through() {
        assert!(may_have_findings("Parallel(n_jobs=-1)(delayed(f)(x) for x in xs)\n"));
        assert!(may_have_findings("f(**{\"n_\" \"jobs\": -1})\n"));
        assert!(may_have_findings("@task.kubernetes (image=\"python\")\ndef f(): ...\n"));
        assert!(!may_have_findings("import json\nprint(json.dumps({}))\n"));
        // A project's operator, imported from another module: its name and the keyword every call writes.
        assert!(may_have_findings("from plugins import TrainOperator\nTrainOperator(task_id=\"t\")\n"));
        assert!(!may_have_findings("from scipy.sparse.linalg import LinearOperator\nLinearOperator((2, 2), f)\n"));
    }

    #[test]
    fn words_in_comments_and_docstrings_alone_do_not_let_a_file_through() {
        let documented = "def fit(X, jobs=None):\n    \"\"\"Fits.\n\n    n_jobs : int, see `joblib.Parallel`.\n    \"\"\"\n                              return X  # like Pool(processes=None)\n";
        assert!(!may_have_findings(documented));
        // A word in the code, a suppression, or a word spelled indirectly in the code still does.
        assert!(may_have_findings(&format!("{documented}fit(None, jobs=dict(n_jobs=-1))\n")));
        assert!(may_have_findings(&format!("{documented}fit(None)  # noqa: CAP101\n")));
        assert!(may_have_findings(&format!("{documented}f(**{{\"n_\" \"jobs\": -1}})\n")));
        // A text the prose scan cannot read with certainty is searched whole.
        assert!(may_have_findings(&format!("{documented}x = f'''{{y  # c\n}}'''\n")));
    }

    #[test]
    fn a_thread_count_given_a_literal_no_rule_reports_lets_no_file_through() {
        for text in [
            "cross_validate(model, X, y, n_jobs=2)\n",
            "Ridge(n_jobs=None, alpha=1)\n",
            "def fit(X, n_jobs=1, verbose=0):\n    pass\n",
            "params = dict(num_threads = 4, seed=0)\n",
            "m = f(nthread=8); g(thread_count=16)\n",
            "model = Ridge(\n    n_jobs=2,\n)\n",
            // Prose around it changes nothing.
            "def fit(X):\n    \"\"\"n_jobs : int, default=None\"\"\"\n    return f(X, n_jobs=2)  # two\n",
        ] {
            assert!(!may_have_findings(text), "{text}");
            let function = format!("def f():\n    {}", text.trim_start());
            assert!(definitions::with_findings(&function).functions.is_empty(), "{text}");
        }
        assert_let_through(&[
            "f(n_jobs=-1)\n",
            "f(n_jobs=0)\n",
            "f(nthread=0)\n",
            "f(n_jobs=2 if fast else -1)\n",
            "f(n_jobs=1 - 2)\n",
            "f(n_jobs=2.0)\n",
            "f(n_jobs=0x2)\n",
            "f(n_jobs=1_0)\n",
            "f(n_jobs=(2))\n",
            "f(n_jobs=Nonesuch)\n",
            "f(n_jobs=n_jobs)\n",
            // A line break or a comment ends nothing inside brackets: the expression may go on.
            "f(n_jobs=2  # two\n  - 3)\n",
            "f(n_jobs=2\n  - 3)\n",
            "f(n_jobs=\n    2)\n",
            "n_jobs = 2\n",
            // Reads, comparisons, augmented stores, annotations, prefixed fields, dict keys.
            "x = self.n_jobs\n",
            "if n_jobs == 2:\n    pass\n",
            "n_jobs += 2;\n",
            "def f(n_jobs: int = 2): pass\n",
            "f(cv_n_jobs=2)\n",
            "effective_n_jobs(2)\n",
            "f(**{\"n_jobs\": 2})\n",
            // A positive literal on joblib's entry points, or another word beside it.
            "from joblib import Parallel\nParallel(n_jobs=2)(tasks)\n",
            "import xgboost\nxgboost.XGBRegressor(n_jobs=None)\n",
            "f(num_threads=2, n_jobs=n)\n",
            // Spelled indirectly.
            "f(**{\"n_\" \"jobs\": -1})\n",
        ]);
    }

    #[test]
    fn a_pair_matches_only_with_both_words_in_any_order() {
        let search =
            WordSearch::of(Vocabulary { words: &["alpha"], pairs: &[("beta", "gamma")], ..Vocabulary::default() });
        assert!(search.is_match("gamma then beta"));
        assert!(search.is_match("beta, gamma"));
        assert!(!search.is_match("beta beta beta"));
        assert!(!search.is_match("gamma"));
        assert!(search.is_match("alpha"));
    }

    #[test]
    fn a_pool_counts_only_in_the_name_of_a_pool_a_rule_checks() {
        assert_held_back(&[
            "from urllib3 import HTTPConnectionPool\nHTTPConnectionPool(\"localhost\")\n",
            "import urllib3\nurllib3.HTTPConnectionPool(\"localhost\")\n",
            "from psycopg2.pool import SimpleConnectionPool as Pooled\n",
            "pool = getattr(module, \"ConnectionPool\")\n",
        ]);
        assert_let_through(&[
            "from multiprocessing import Pool\n",
            "from multiprocessing.pool import ThreadPool as TP\n",
            "from concurrent.futures import (\n    ThreadPoolExecutor,\n    ProcessPoolExecutor,\n)\n",
            "from multiprocessing import Pool as HTTPConnectionPool\n",
            "import concurrent.futures as cf\ncf.ProcessPoolExecutor()\n",
            "ctx = mp.get_context(\"spawn\")\nctx.Pool()\n",
            "executor = getattr(futures, \"ProcessPoolExecutor\")\n",
            "from urllib3 import HTTPConnectionPool\nfrom torch.multiprocessing import Pool\n",
        ]);
    }

    #[test]
    fn an_operator_imported_only_from_an_installed_package_pairs_with_no_task_id() {
        assert_held_back(&[
            "from airflow.operators.empty import EmptyOperator\nEmptyOperator(task_id=\"start\")\n",
            "from airflow.operators.bash import BashOperator as Bash, EmptyOperator\nrun(EmptyOperator, task_id=\"t\")\n",
            "run(task_id=\"t\")\nfrom airflow.operators.empty import EmptyOperator\nEmptyOperator(task_id=\"u\")\n",
            "def test():\n    from airflow.providers.standard.operators.python import PythonOperator\n    PythonOperator(task_id=\"t\", python_callable=f)\n",
        ]);
        assert_let_through(&[
            // Another module of the project may define a pod operator by any name.
            "from dags.common import GpuTrainingOperator\nGpuTrainingOperator(task_id=\"train\")\n",
            "from .operators import TrainOperator\nTrainOperator(task_id=\"train\")\n",
            "from airflow.operators.empty import EmptyOperator\nfrom .ops import EmptyOperator\nEmptyOperator(task_id=\"t\")\n",
            "import dags.ops as ops\nops.TrainOperator(task_id=\"train\")\n",
            // The name after `task_id`, or among others that do not count.
            "run(task_id=\"t\")\nfrom dags.common import TrainOperator\n",
            "from airflow.operators.empty import EmptyOperator\nfrom .ops import TrainOperator\nrun(task_id=\"t\")\n",
            "run(task_id=\"t\")\nfrom airflow.operators.empty import EmptyOperator\nfrom .ops import TrainOperator\n",
            // Bound again, or defined here.
            "from airflow.operators.empty import EmptyOperator\nEmptyOperator = make_operator()\nEmptyOperator(task_id=\"t\")\n",
            "from airflow.operators.empty import EmptyOperator\nclass EmptyOperator(Base):\n    pass\nEmptyOperator(task_id=\"t\")\n",
            "from airflow.models import BaseOperator\nclass TrainOperator(BaseOperator):\n    pass\nTrainOperator(task_id=\"t\")\n",
            "try:\n    from airflow.operators.empty import EmptyOperator\nexcept ImportError:\n    EmptyOperator: type = Fallback\nEmptyOperator(task_id=\"t\")\n",
        ]);
    }

    #[test]
    fn a_whole_name_matches_only_where_it_does_not_continue_a_name() {
        let search =
            WordSearch::of(Vocabulary { words: &["alpha"], whole_names: &["n_process"], ..Vocabulary::default() });
        assert!(!search.is_match("from sklearn import gaussian_process\n"));
        assert!(!search.is_match("x.gaussian_process_n_process_é_n_process"));
        assert!(search.is_match("nlp.pipe(texts, n_process=-1)"));
        assert!(search.is_match("{\"n_process\": -1}"));
        assert!(search.is_match("n_process = 2"));
        // A match rejected at one place does not hide one that starts inside it or after it.
        assert!(search.is_match("gaussian_process(n_process=2)"));
        assert!(may_have_findings("nlp.pipe(texts, n_process=-1)\n"));
        assert!(!may_have_findings("from sklearn.gaussian_process import GaussianProcessRegressor\n"));
        // Spelled indirectly, it is still found.
        assert!(may_have_findings("nlp.pipe(texts, **{\"n_\" \"process\": -1})\n"));
    }

    #[test]
    fn a_booster_package_counts_where_the_text_can_name_it() {
        // Imports, whatever their shape.
        assert_let_through(&[
            "import xgboost as xgb\n",
            "from lightgbm.sklearn import LGBMClassifier\n",
            "import numpy, \\\n    catboost\n",
            "from xgboost import *\n",
            "from optuna.integration import (\n    # the tuner\n    lightgbm as lgb,\n)\n",
            "try:\n    import lightgbm\nexcept ImportError:\n    lightgbm = None\n",
        ]);
        // Attributes, across blanks, line breaks and comments.
        assert_let_through(&[
            "import optuna\noptuna.integration.lightgbm.train(params, data)\n",
            "m = (optuna.integration.  # the tuner\n\n     lightgbm.train(params, data))\n",
            "m = optuna.integration. \\\n    lightgbm\n",
        ]);
        // Strings naming the module.
        assert!(may_have_findings("xgb = importlib.import_module(\"xgboost\")\n"));
        assert!(may_have_findings("xgb = pytest.importorskip('xgboost.sklearn')\n"));
        assert!(may_have_findings("xgb = importlib.import_module(\"xg\" \"boost\")\n"));
        // Prose, and names that merely contain the package's.
        assert_held_back(&[
            "def f():\n    \"\"\"Fits like xgboost does.\"\"\"\n",
            "# See lightgbm's documentation.\nx = 1\n",
            "use_xgboost = True\nif use_xgboost:\n    pass\n",
            "class Wrapper:\n    name = catboost_name\n",
        ]);
        // Entry points, reached the same ways, or through a star import.
        assert_let_through(&[
            "import concurrent.futures as cf\ncf.ProcessPoolExecutor(max_workers=4)\n",
            "from joblib import Parallel, delayed\n",
            "from multiprocessing import *\nwith Pool() as pool:\n    pass\n",
            "import os\nworkers = os.cpu_count()\n",
            "executor_class = getattr(futures, \"ProcessPoolExecutor\")\n",
        ]);
        assert_held_back(&[
            "\"\"\"Draws Parallel coordinates of a Pool of PodOperator runs.\"\"\"\n",
            "class ThreadPoolish:\n    pass\n",
        ]);
        // A function's own text holds no import: there the package counts wherever it is written.
        let module = "import xgboost\n\ndef fit(params, data):\n    return xgboost.train(params, data)\n";
        assert!(definitions::with_findings(module).functions.contains("fit"));
        assert!(names_a_word("def fit(params, data):\n    return xgboost.train(params, data)\n"));
    }

    #[test]
    fn a_word_search_finds_any_of_its_words() {
        let search = WordSearch::of(Vocabulary { words: &["alpha", "beta"], ..Vocabulary::default() });
        assert!(search.is_match("an alphabet"));
        assert!(search.is_match("betamax"));
        assert!(!search.is_match("gamma"));
    }
}
