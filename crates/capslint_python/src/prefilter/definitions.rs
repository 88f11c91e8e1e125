//! Which module-level definitions of a Python text may have findings when a call into them is followed,
//! read from the text alone: a function or class whose own text holds a word the rules need, and one whose
//! text names such a definition (a helper that hands its values on: `def train(X, y, workers): return
//! _fit(X, y, workers)`), found over the module's references in time linear in its text.

use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use super::{function_may_have_findings_in, top_level_statements};

/// The module-level functions and classes of a text that may have findings when a call of them (or of a
/// class's method) is followed.
#[derive(Debug, Default)]
pub struct WithFindings<'t> {
    /// The functions, by name (any of its definitions, when a name is defined twice).
    pub functions: FxHashSet<&'t str>,
    /// The classes, by name.
    pub classes: FxHashSet<&'t str>,
}

/// A name the text defines at module level, with all its definitions (a call may reach any of them).
#[derive(Default)]
struct Defined<'t> {
    /// The text of each definition.
    texts: SmallVec<[&'t str; 1]>,
    /// Whether one of them is a `def`, and whether one is a `class`.
    function: bool,
    class: bool,
    /// Whether a call of it may have findings.
    relevant: bool,
}

/// The definitions of `text` that may have findings when followed: each whose own text passes the
/// prefilter (the boosters' packages counted wherever they are written, as the module's imports are not
/// in that text), and each whose text names one of those, however many such names lie between. A name
/// defined more than once counts as one: a call of it may reach any of its definitions. Worth asking only
/// of a text that passes the prefilter as a whole ([`super::may_have_findings`]): one that does not has no
/// such definition, and the project index asks nothing more of it.
pub fn with_findings(text: &str) -> WithFindings<'_> {
    let mut index: FxHashMap<&str, u32> = FxHashMap::default();
    let mut defined: Vec<Defined<'_>> = Vec::new();
    let definitions = top_level_statements(text, "def ")
        .map(|definition| (definition, false))
        .chain(top_level_statements(text, "class ").map(|definition| (definition, true)));
    for ((name, text), is_class) in definitions {
        let at = *index.entry(name).or_insert_with(|| {
            defined.push(Defined::default());
            defined.len() as u32 - 1
        });
        let entry = &mut defined[at as usize];
        entry.texts.push(text);
        entry.function |= !is_class;
        entry.class |= is_class;
        entry.relevant = entry.relevant || function_may_have_findings_in(text);
    }
    if defined.iter().any(|name| name.relevant) && defined.iter().any(|name| !name.relevant) {
        spread_to_referrers(&index, &mut defined);
    }
    let mut found = WithFindings::default();
    for (name, &at) in &index {
        let entry = &defined[at as usize];
        if entry.relevant {
            if entry.function {
                found.functions.insert(name);
            }
            if entry.class {
                found.classes.insert(name);
            }
        }
    }
    found
}

/// Marks as relevant each name one of whose definitions names a relevant one, until none is left to mark:
/// the references are gathered once, then followed backwards from the relevant names.
fn spread_to_referrers(index: &FxHashMap<&str, u32>, defined: &mut [Defined<'_>]) {
    // The lengths of the names (the last bit for any length past 62): most names a text writes (`self`,
    // `X`, `return`) have none of them and are passed over without a lookup.
    let lengths = index.keys().fold(0u64, |lengths, name| lengths | 1 << name.len().min(63));
    // For each name, the names not relevant on their own whose definitions name it.
    let mut referrers: Vec<Vec<u32>> = vec![Vec::new(); defined.len()];
    // The referrer each name was last recorded for, so that a name written many times counts once.
    let mut recorded_for = vec![u32::MAX; defined.len()];
    for (referrer, entry) in defined.iter().enumerate().filter(|(_, entry)| !entry.relevant) {
        let referrer = referrer as u32;
        for text in &entry.texts {
            for name in identifiers(text).filter(|name| lengths & (1 << name.len().min(63)) != 0) {
                if let Some(&named) = index.get(name)
                    && named != referrer
                    && recorded_for[named as usize] != referrer
                {
                    recorded_for[named as usize] = referrer;
                    referrers[named as usize].push(referrer);
                }
            }
        }
    }
    let mut pending: Vec<u32> = (0..defined.len() as u32).filter(|&at| defined[at as usize].relevant).collect();
    while let Some(at) = pending.pop() {
        for &referrer in &referrers[at as usize] {
            if !defined[referrer as usize].relevant {
                defined[referrer as usize].relevant = true;
                pending.push(referrer);
            }
        }
    }
}

/// The names written in `text`: each run of a name's characters that starts with a letter or `_`, in
/// code, strings and comments alike (a name in a string or a comment only makes a definition relevant
/// where it need not be).
pub fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    identifier_ranges(text).filter_map(|range| text.get(range))
}

/// Where each of the [`identifiers`] of `text` is.
pub fn identifier_ranges(text: &str) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    name_runs(text.as_bytes())
}

/// What each byte is to a name: not part of one, its start (a letter, `_`, part of a non-ASCII
/// character), or a digit.
const NAME_BYTES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = match byte as u8 {
            b'0'..=b'9' => 2,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | 0x80..=0xff => 1,
            _ => 0,
        };
        byte += 1;
    }
    table
};

/// Where each name of `bytes` is ([`identifiers`]).
fn name_runs(bytes: &[u8]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        loop {
            let start = at + bytes[at..].iter().position(|&byte| NAME_BYTES[byte as usize] != 0)?;
            let end = start
                + bytes[start..].iter().position(|&byte| NAME_BYTES[byte as usize] == 0).unwrap_or(bytes.len() - start);
            at = end;
            // A run that starts with a digit is a number (`1e5`), not a name.
            if NAME_BYTES[bytes[start] as usize] == 1 {
                return Some(start..end);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted<'t>(names: &FxHashSet<&'t str>) -> Vec<&'t str> {
        let mut names: Vec<&str> = names.iter().copied().collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn a_definition_that_names_one_with_findings_has_findings() {
        let module = "import os\n\n\
                      def _fit(X, y, jobs):\n    return RandomForestClassifier(n_jobs=jobs).fit(X, y)\n\n\
                      def train(X, y, workers=1):\n    return _fit(X, y, workers)\n\n\
                      def train_twice(X, y, workers=1):\n    train(X, y, workers)\n    return train(X, y, workers)\n\n\
                      class Trainer:\n    def run(self, X, y, workers=1):\n        return train_twice(X, y, workers)\n\n\
                      def build():\n    return Trainer()\n\n\
                      def shout(text):\n    return text.upper()\n\n\
                      def fit_all(X):\n    return [x.fit() for x in X]\n";
        let found = with_findings(module);
        assert_eq!(sorted(&found.functions), ["_fit", "build", "train", "train_twice"]);
        assert_eq!(sorted(&found.classes), ["Trainer"]);
    }

    #[test]
    fn a_name_inside_a_longer_name_is_not_a_reference() {
        let module = "def _fit(jobs):\n    return Parallel(n_jobs=jobs)\n\n\
                      def refit(x):\n    return x._fit_more + my_fit(1)\n";
        assert_eq!(sorted(&with_findings(module).functions), ["_fit"]);
    }

    #[test]
    fn a_name_defined_many_times_counts_once() {
        // Each definition names every other: one name, not a quadratic number of references.
        let mut module = "def f(n):\n    return Parallel(n_jobs=n)\n".to_string();
        for _ in 0..50_000 {
            module.push_str("def f(n):\n    return f(n) + g(n)\n");
        }
        module.push_str("def g(n):\n    return f(n)\n");
        assert_eq!(sorted(&with_findings(&module).functions), ["f", "g"]);
    }

    #[test]
    fn a_long_chain_is_followed_in_linear_time() {
        // Each function calls the one defined after it; the last holds the word.
        let count = 20_000;
        let mut module = String::new();
        for index in 0..count {
            module.push_str(&format!("def f{index}(n):\n    return f{}(n)\n", index + 1));
        }
        module.push_str(&format!("def f{count}(n):\n    return Parallel(n_jobs=n)\n"));
        assert_eq!(with_findings(&module).functions.len(), count + 1);
    }

    #[test]
    fn identifiers_are_the_names_written() {
        let names: Vec<&str> = identifiers("x = f(1e5, _y.z2) # note é\n").collect();
        assert_eq!(names, ["x", "f", "_y", "z2", "note", "é"]);
    }
}
