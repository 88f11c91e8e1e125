//! Data files, told from configurations before any tree is built. A YAML or TOML text is read into a tree
//! of nodes (each a few hundred bytes), so a large data set (records, a lock file, a feature table) would
//! take tens of times its size in memory. One pass over the bytes counts the separators that every node
//! needs one of (`:`, `,`, `-` and line breaks in YAML; `=`, `,`, `[` and `{` in TOML): when even that
//! estimate stays within the budget of a document ([`capslint_yaml::node_budget`], and [`toml_budget`] for
//! TOML, whose values take less memory), the text is parsed as usual;
//! otherwise it is a data file. Model configurations are small (a few hundred nodes), so nothing that
//! CAP109 reads is lost: a data file that may hold a thread-count key gets CAP003 (not analysed) instead,
//! and one that cannot is skipped silently.

use ruff_text_size::{TextRange, TextSize};

use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;
use capslint_yaml::node_budget;

/// A text shorter than this is never a data file: it cannot hold more nodes than the smallest budget.
const SMALLEST_BUDGET_BYTES: usize = 200_000;

/// How many values a TOML file may have: 250,000, plus one per 100 bytes. `toml`'s tree takes up to
/// about 240 bytes a value (measured), less than YAML's, so its tree stays within 60 MB plus 2.4 times
/// the text.
fn toml_budget(len: usize) -> usize {
    250_000 + len / 100
}

/// The bytes that separate YAML nodes.
const YAML_SEPARATORS: &[u8] = b":,-\n";

/// The bytes that separate TOML values.
const TOML_SEPARATORS: &[u8] = b"=,[{";

/// How many nodes a text may hold, estimated from its separators (one or more per node).
fn estimated_nodes(text: &str, separators: &[u8]) -> usize {
    let mut table = [false; 256];
    for byte in separators {
        table[usize::from(*byte)] = true;
    }
    text.bytes().filter(|byte| table[usize::from(*byte)]).count()
}

/// Whether a YAML text is a data file by its size: more nodes than one document may have.
pub fn yaml_is_data(text: &str) -> bool {
    text.len() > SMALLEST_BUDGET_BYTES && estimated_nodes(text, YAML_SEPARATORS) > node_budget(text.len())
}

/// Whether a TOML text is a data file by its size (a TOML file is one document).
pub fn toml_is_data(text: &str) -> bool {
    text.len() > SMALLEST_BUDGET_BYTES && estimated_nodes(text, TOML_SEPARATORS) > toml_budget(text.len())
}

/// CAP003 for a data file that was not analysed as a configuration although it may hold a thread-count key;
/// `toml` tells which format's estimate and budget apply.
pub fn not_analysed(text: &str, toml: bool) -> Finding {
    let (estimated, budget) = if toml {
        (estimated_nodes(text, TOML_SEPARATORS), toml_budget(text.len()))
    } else {
        (estimated_nodes(text, YAML_SEPARATORS), node_budget(text.len()))
    };
    Finding::new(
        Rule::AnalysisBudgetExceeded,
        TextRange::empty(TextSize::from(0)),
        format!(
            "data file not analysed as a model configuration: about {estimated} values in {} KiB, above the {budget} a \
             configuration may have (CAP109 is not checked here)",
            text.len() >> 10,
        ),
    )
    .label("not analysed")
    .help("exclude data files from the scan (`extend-exclude`), or turn CAP003 off for them (`per-file-ignores`)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_data_and_configurations_are_not() {
        let records: String = (0..100_000).map(|index| format!("- {{id: {index}, thread: t{index}}}\n")).collect();
        assert!(yaml_is_data(&records));
        let config = "model:\n  n_jobs: -1\n  layers: [1, 2, 3]\n".repeat(10);
        assert!(!yaml_is_data(&config));
        // Long strings with few separators are not many nodes, however large the file.
        let blobs: String = (0..100).map(|index| format!("key{index}: {}\n", "x".repeat(10_000))).collect();
        assert!(!yaml_is_data(&blobs));
        let table = format!("values = [{}]\n", vec!["0"; 400_000].join(","));
        assert!(toml_is_data(&table));
        assert!(!toml_is_data("[model]\nn_jobs = -1\n"));
    }
}
