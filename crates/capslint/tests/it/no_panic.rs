//! Mutated fixtures never make capslint panic: every fixture is cut, spliced and sprinkled with syntax
//! characters, then linted with every rule in strict mode. A panic inside a file's check would surface as
//! an "internal error" diagnostic; none may appear, and every span must lie on character boundaries.
//! It runs 256 cases; `PROPTEST_CASES` asks for more.

use std::path::PathBuf;
use std::sync::Arc;

use capslint_linter::lint::{Input, check_inputs};
use capslint_workspace::discover::FileKind;
use capslint_workspace::settings::Overrides;
use proptest::prelude::*;

use crate::support::*;

/// One edit of a byte string.
#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Duplicate { at: usize, len: usize },
}

const SYNTAX: &[u8] = b"()[]{}:,=-*'\"#\n \t\\@!&|%.0123456789abcdefghijklmnopqrstuvwxyzN_\x00\xff\xc3\xa9";

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), proptest::collection::vec(proptest::sample::select(SYNTAX), 1..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (any::<usize>(), 1usize..256).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for mutation in mutations {
        let size = bytes.len().max(1);
        match mutation {
            Mutation::Delete { at, len } => {
                let start = at % size;
                let end = (start + len).min(bytes.len());
                if start < end {
                    bytes.drain(start..end);
                }
            }
            Mutation::Insert { at, bytes: inserted } => {
                let at = (at % size).min(bytes.len());
                bytes.splice(at..at, inserted.iter().copied());
            }
            Mutation::Duplicate { at, len } => {
                let start = (at % size).min(bytes.len());
                let end = (start + len).min(bytes.len());
                let copy = bytes[start..end].to_vec();
                bytes.splice(end..end, copy);
            }
        }
    }
    bytes
}

fn fixtures() -> Vec<(PathBuf, Vec<u8>)> {
    files_under("fixtures", &["py", "yaml", "yml"])
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(root().join(&path)).unwrap();
            (path, bytes)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_fixtures_never_panic(index in any::<usize>(), mutations in proptest::collection::vec(mutation(), 1..8)) {
        let fixtures = fixtures();
        let (path, bytes) = &fixtures[index % fixtures.len()];
        let mutated = apply(bytes.clone(), &mutations);
        let kind = FileKind::of(path).unwrap();
        let settings = Arc::new(settings(&Overrides { strict: true, select: Some(vec!["ALL".into()]), ..Overrides::default() }));
        let text = String::from_utf8_lossy(&mutated).into_owned();
        let input = Input { path: path.clone(), display_name: path.display().to_string(), kind, contents: Some(text.into_bytes()), settings };
        for diagnostic in check_inputs(vec![input]).diagnostics {
            prop_assert!(!diagnostic.finding.message.starts_with("internal error"), "{}: {}", path.display(), diagnostic.finding.message);
            let text = diagnostic.file.text();
            let range = diagnostic.finding.range;
            prop_assert!(text.is_empty() || text.get(usize::from(range.start())..usize::from(range.end())).is_some());
        }
    }
}
