//! TOML: `toml`'s span-preserving document parser (every key and value with its byte span, nesting
//! refused past 80 levels), walked without recursion. A dotted key (`cv.n_jobs = -1`) is reported from
//! its first segment: the parser spans each segment, and the walk joins those separated by a `.` only.

use std::borrow::Cow;
use std::ops::Range;

use ruff_text_size::{TextRange, TextSize};
use toml::de::{DeTable, DeValue};

use super::all_cores_in_config::{is_all_cores, is_thread_count_key};
use super::candidate::{Candidate, Found, Syntax};
use super::path::{Segment, Tree};

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walked {
    /// The all-cores thread-count keys.
    pub found: Found,
    /// Where strings and keys are written, when asked for: a `#` there starts no comment.
    pub strings: Vec<TextRange>,
}

/// Walks a TOML text that starts at byte `base` of its file; `None` when it is not TOML. With
/// `with_strings`, the ranges of every string and key are collected too.
pub fn walk(text: &str, base: TextSize, with_strings: bool) -> Option<Walked> {
    let root = DeTable::parse(text).ok()?;
    let range = |span: Range<usize>| {
        TextRange::new(TextSize::from(span.start as u32), TextSize::from(span.end.max(span.start) as u32)) + base
    };
    let mut walked = Walked::default();
    let mut tree = Tree::default();
    let mut tables: Vec<(&DeTable<'_>, usize, Option<Via>)> = vec![(root.get_ref(), Tree::ROOT, None)];
    let mut arrays: Vec<(&[toml::Spanned<DeValue<'_>>], usize)> = Vec::new();
    loop {
        if let Some((table, at, via)) = tables.pop() {
            for (key, value) in table {
                let name: &str = key.get_ref();
                if with_strings {
                    walked.strings.push(range(key.span()));
                }
                let chain_start = match &via {
                    Some(via) if continues(text, &via.key, &key.span()) => via.chain_start,
                    _ => key.span().start,
                };
                match value.get_ref() {
                    DeValue::Integer(integer) if is_thread_count_key(name) => {
                        let Ok(number) = i64::from_str_radix(integer.as_str(), integer.radix()) else { continue };
                        if is_all_cores(name, number) {
                            walked.found.push(Candidate {
                                key: name.to_string(),
                                path: tree.render(at, name),
                                value: number,
                                range: range(chain_start..value.span().end),
                                syntax: Syntax::Toml,
                            });
                        }
                    }
                    DeValue::String(_) if with_strings => walked.strings.push(range(value.span())),
                    DeValue::Table(inner) => {
                        let id = tree.child(at, Segment::Key(Cow::Borrowed(name)));
                        tables.push((inner, id, Some(Via { key: key.span(), chain_start })));
                    }
                    DeValue::Array(items) => {
                        arrays.push((items, tree.child(at, Segment::Key(Cow::Borrowed(name)))));
                    }
                    _ => {}
                }
            }
        } else if let Some((items, at)) = arrays.pop() {
            for (index, item) in items.iter().enumerate() {
                match item.get_ref() {
                    DeValue::String(_) if with_strings => walked.strings.push(range(item.span())),
                    DeValue::Table(inner) => tables.push((inner, tree.child(at, Segment::Index(index)), None)),
                    DeValue::Array(inner) => arrays.push((inner, tree.child(at, Segment::Index(index)))),
                    _ => {}
                }
            }
        } else {
            return Some(walked);
        }
    }
}

/// The key that leads to a table, and where its dotted chain starts (`cv` of `cv.n_jobs = -1`).
struct Via {
    key: Range<usize>,
    chain_start: usize,
}

/// Whether `key` is the next segment of the dotted key whose previous segment is `previous`: only a `.`
/// and blanks between them.
fn continues(text: &str, previous: &Range<usize>, key: &Range<usize>) -> bool {
    text.get(previous.end..key.start).is_some_and(|between| between.trim_matches([' ', '\t']) == ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, String)> {
        walk(text, TextSize::from(0), false)
            .unwrap()
            .found
            .candidates
            .into_iter()
            .map(|candidate| (candidate.path, text[candidate.range].to_string()))
            .collect()
    }

    #[test]
    fn tables_dotted_keys_inline_tables_and_arrays_of_tables() {
        let text = "n_jobs = -1\n[model.params]\nnthread = 0\n[search]\ncv.n_jobs = -2\ninline = { thread_count = -1 }\n\
                    [[trials]]\nnum_threads = 0\n[a]\nb . \"c\".nthreads = -1\n";
        let mut found = found(text);
        found.sort();
        assert_eq!(
            found,
            [
                ("a.b.c.nthreads".to_string(), "b . \"c\".nthreads = -1".to_string()),
                ("model.params.nthread".to_string(), "nthread = 0".to_string()),
                ("n_jobs".to_string(), "n_jobs = -1".to_string()),
                ("search.cv.n_jobs".to_string(), "cv.n_jobs = -2".to_string()),
                ("search.inline.thread_count".to_string(), "thread_count = -1".to_string()),
                ("trials[0].num_threads".to_string(), "num_threads = 0".to_string()),
            ]
        );
    }

    #[test]
    fn only_integers() {
        for text in
            ["n_jobs = 4\n", "n_jobs = \"-1\"\n", "n_jobs = -1.0\n", "n_jobs = [-1]\n", "note = \"n_jobs = -1\"\n"]
        {
            assert!(found(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn strings_and_keys_are_collected_on_demand() {
        let text = "a = \"\"\"\n# capslint: ignore[CAP109]\n\"\"\"\n\"# k\" = 1\n";
        let walked = walk(text, TextSize::from(0), true).unwrap();
        let inside = |needle: &str| {
            let at = TextSize::from(text.find(needle).unwrap() as u32);
            walked.strings.iter().any(|range| range.contains(at))
        };
        assert!(inside("# capslint"));
        assert!(inside("# k"));
    }

    #[test]
    fn invalid_and_too_deep_toml_is_refused() {
        assert!(walk("n_jobs = -1\nn_jobs = 2\n", TextSize::from(0), false).is_none());
        assert!(walk("[a\n", TextSize::from(0), false).is_none());
        let deep = format!("a = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(walk(&deep, TextSize::from(0), false).is_none());
        let deep_keys = format!("{} = 1\n", vec!["a"; 100_000].join("."));
        assert!(walk(&deep_keys, TextSize::from(0), false).is_none());
        let deep_tables = format!("a = {}1{}\n", "{b = ".repeat(100_000), "}".repeat(100_000));
        assert!(walk(&deep_tables, TextSize::from(0), false).is_none());
    }
}
