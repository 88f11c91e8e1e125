//! YAML: one document as the manifest parser hands it over (one parse serves both), walked without
//! recursion. A node that an alias or a merge key copies is reported where it is written, not again
//! where it is used; a thread-count key whose own value is an alias is reported at the key.

use std::borrow::Cow;

use ruff_text_size::TextRange;

use super::all_cores_in_config::{is_all_cores, is_thread_count_key};
use super::candidate::{Candidate, Found, Syntax};
use super::path::{Segment, Tree};
use capslint_yaml::{Node, ScalarKind};

/// Whether a document is a Kubernetes object (`apiVersion` and `kind` at its root): the manifest rules'
/// business, not a configuration.
pub fn is_kubernetes_object(document: Node<'_>) -> bool {
    document.get("apiVersion").is_some() && document.get("kind").is_some()
}

/// Adds the all-cores thread-count keys of `document` to `found`.
pub fn candidates(document: Node<'_>, found: &mut Found) {
    let mut tree = Tree::default();
    let mut stack = vec![(document, Tree::ROOT)];
    while let Some((node, at)) = stack.pop() {
        for (index, item) in node.items().enumerate() {
            if !item.via_alias() && (item.is_mapping() || item.is_sequence()) {
                stack.push((item, tree.child(at, Segment::Index(index))));
            }
        }
        for (key, value) in node.entries() {
            if key.via_alias() {
                continue;
            }
            let name = key.as_str();
            if let Some(name) = name
                && is_thread_count_key(name)
                && let Some(number) = integer(value)
            {
                if is_all_cores(name, number) {
                    found.push(Candidate {
                        key: name.to_string(),
                        path: tree.render(at, name),
                        value: number,
                        range: TextRange::new(key.start(), value.range().end()),
                        syntax: Syntax::Yaml,
                    });
                }
            } else if value.is_mapping() || value.is_sequence() {
                let segment = match name {
                    Some(name) => Cow::Borrowed(name),
                    None => key.text().unwrap_or(Cow::Borrowed("?")),
                };
                stack.push((value, tree.child(at, Segment::Key(segment))));
            }
        }
    }
}

/// The value of an integer scalar (`-1`, not `"-1"`).
fn integer(node: Node<'_>) -> Option<i64> {
    let scalar = node.scalar().filter(|scalar| scalar.kind == ScalarKind::Int)?;
    scalar.text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_yaml::for_each_document;

    fn found(text: &str) -> Vec<(String, String)> {
        let mut found = Found::default();
        for_each_document(text, |document| {
            if !is_kubernetes_object(document) {
                candidates(document, &mut found);
            }
        })
        .unwrap();
        let mut found: Vec<(String, String)> =
            found.candidates.into_iter().map(|candidate| (candidate.path, text[candidate.range].to_string())).collect();
        found.sort();
        found
    }

    fn pair(path: &str, text: &str) -> (String, String) {
        (path.to_string(), text.to_string())
    }

    #[test]
    fn keys_at_any_depth_with_exact_spans() {
        let text = "model:\n  params: {n_jobs: -1, \"nthread\": 0}\nsearch:\n  - cv_n_jobs:   -2\n\
                    num_threads: !!int 0\n";
        assert_eq!(
            found(text),
            [
                pair("model.params.n_jobs", "n_jobs: -1"),
                pair("model.params.nthread", "\"nthread\": 0"),
                pair("num_threads", "num_threads: !!int 0"),
                pair("search[0].cv_n_jobs", "cv_n_jobs:   -2"),
            ]
        );
    }

    #[test]
    fn only_integers_of_configuration_documents() {
        for text in [
            "n_jobs: 4\n",
            "n_jobs: \"-1\"\n",
            "n_jobs: '-1'\n",
            "n_jobs: -1.0\n",
            "n_jobs: [-1, 2]\n",
            "description: \"n_jobs: -1 means all\"\n",
            "notes: |\n  n_jobs: -1\n",
            "- -1\n- 0\n",
            "N_JOBS: -1\n",
            "thread_count: 0\n",
            "n_jobs: ${oc.env:N_JOBS}\n",
            "apiVersion: v1\nkind: ConfigMap\ndata:\n  n_jobs: -1\n",
        ] {
            assert!(found(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn aliases_are_reported_where_the_value_is_written() {
        let text = "base: &base {n_jobs: -1}\nrf: *base\nxgb:\n  <<: *base\n  nthread: 2\nall: &all -1\ngbm:\n  n_jobs: *all\n";
        assert_eq!(found(text), [pair("base.n_jobs", "n_jobs: -1"), pair("gbm.n_jobs", "n_jobs: *all")]);
    }

    #[test]
    fn manifests_and_configurations_share_a_stream() {
        let text = "apiVersion: v1\nkind: Pod\nspec: {n_jobs: -1}\n---\nn_jobs: -1\n";
        assert_eq!(found(text), [pair("n_jobs", "n_jobs: -1")]);
    }
}
