//! An admitted object as the manifest linter reads it, and back: the JSON object written as block YAML
//! (the style `check --fix` edits; every string double-quoted, so nothing changes type), with the JSON
//! pointer of every node's span so that a finding can name its field and container; and YAML read back
//! into JSON, so that the fixed text can be compared with the submitted object.

use ruff_text_size::{TextRange, TextSize};
use serde_json::{Map, Number, Value};

use capslint_yaml::{Node, ScalarKind};

/// An object written as block YAML.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The YAML text.
    pub text: String,
    /// Each node's span and JSON pointer, in text order (a parent before its children).
    spans: Vec<(TextRange, String)>,
}

impl Rendered {
    /// The JSON pointer of the innermost node whose span holds `offset` (`""` for the whole object).
    pub fn pointer_at(&self, offset: TextSize) -> &str {
        self.spans
            .iter()
            .filter(|(range, _)| range.contains_inclusive(offset))
            .min_by_key(|(range, _)| range.len())
            .map_or("", |(_, pointer)| pointer.as_str())
    }
}

/// Writes `value` as block YAML, one document.
pub fn to_yaml(value: &Value) -> Rendered {
    let mut writer = Writer { text: String::new(), spans: Vec::new(), pointer: String::new() };
    match value {
        Value::Object(map) if !map.is_empty() => writer.mapping(map, 0, false),
        Value::Array(items) if !items.is_empty() => writer.sequence(items, 0),
        scalar => {
            writer.scalar(scalar);
            writer.text.push('\n');
        }
    }
    Rendered { text: writer.text, spans: writer.spans }
}

struct Writer {
    text: String,
    spans: Vec<(TextRange, String)>,
    pointer: String,
}

impl Writer {
    fn offset(&self) -> TextSize {
        TextSize::from(self.text.len() as u32)
    }

    fn indent(&mut self, indent: usize) {
        self.text.extend(std::iter::repeat_n(' ', indent));
    }

    /// A mapping whose keys start at column `indent`; the first key goes where the text is when `inline`
    /// (after a sequence's `- `).
    fn mapping(&mut self, map: &Map<String, Value>, indent: usize, inline: bool) {
        let start = self.offset();
        for (index, (key, value)) in map.iter().enumerate() {
            if index > 0 || !inline {
                self.indent(indent);
            }
            let base = self.pointer.len();
            self.pointer.push('/');
            self.pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            self.key(key);
            self.text.push(':');
            self.value(value, indent + 2);
            self.pointer.truncate(base);
        }
        let end = self.offset();
        self.spans.push((TextRange::new(start, end), self.pointer.clone()));
    }

    fn sequence(&mut self, items: &[Value], indent: usize) {
        let start = self.offset();
        for (index, item) in items.iter().enumerate() {
            self.indent(indent);
            self.text.push('-');
            let base = self.pointer.len();
            self.pointer.push('/');
            self.pointer.push_str(&index.to_string());
            match item {
                Value::Object(map) if !map.is_empty() => {
                    self.text.push(' ');
                    self.mapping(map, indent + 2, true);
                }
                Value::Array(inner) if !inner.is_empty() => {
                    self.text.push('\n');
                    self.sequence(inner, indent + 2);
                }
                scalar => self.inline_scalar(scalar),
            }
            self.pointer.truncate(base);
        }
        let end = self.offset();
        self.spans.push((TextRange::new(start, end), self.pointer.clone()));
    }

    /// The value of a mapping entry whose key was just written; nested collections start at `indent`.
    fn value(&mut self, value: &Value, indent: usize) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                self.text.push('\n');
                self.mapping(map, indent, false);
            }
            Value::Array(items) if !items.is_empty() => {
                self.text.push('\n');
                self.sequence(items, indent);
            }
            scalar => self.inline_scalar(scalar),
        }
    }

    /// A scalar written after its key or dash, with its span, ending the line.
    fn inline_scalar(&mut self, scalar: &Value) {
        self.text.push(' ');
        let at = self.offset();
        self.scalar(scalar);
        let end = self.offset();
        self.spans.push((TextRange::new(at, end), self.pointer.clone()));
        self.text.push('\n');
    }

    fn key(&mut self, key: &str) {
        if is_plain_key(key) {
            self.text.push_str(key);
        } else {
            self.quoted(key);
        }
    }

    fn scalar(&mut self, value: &Value) {
        match value {
            Value::Null => self.text.push_str("null"),
            Value::Bool(value) => self.text.push_str(if *value { "true" } else { "false" }),
            Value::Number(number) => self.text.push_str(&number.to_string()),
            Value::String(text) => self.quoted(text),
            Value::Object(_) => self.text.push_str("{}"),
            Value::Array(_) => self.text.push_str("[]"),
        }
    }

    /// A double-quoted scalar: JSON's escapes are YAML's, and serde_json escapes every control character.
    fn quoted(&mut self, text: &str) {
        self.text.push_str(&serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string()));
    }
}

/// Whether `key` reads back as the same string when written plain: a name of letters, digits and
/// `_ . / -` that YAML resolves to no other type.
fn is_plain_key(key: &str) -> bool {
    const RESERVED: &[&str] = &["true", "false", "yes", "no", "on", "off", "y", "n", "null"];
    let mut chars = key.chars();
    chars.next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && key.chars().all(|character| character.is_ascii_alphanumeric() || "_./-".contains(character))
        && !RESERVED.iter().any(|reserved| key.eq_ignore_ascii_case(reserved))
}

/// Reads the first document of `text` back as JSON: strings, numbers, booleans and null as YAML's core
/// schema resolves them. `None` when the text does not parse or holds a key that is not a scalar.
pub fn from_yaml(text: &str) -> Option<Value> {
    documents_from_yaml(text)?.into_iter().next()
}

/// Reads every document of `text` as JSON, as [`from_yaml`] reads the first.
pub fn documents_from_yaml(text: &str) -> Option<Vec<Value>> {
    let mut documents = Vec::new();
    let mut convertible = true;
    let loaded = capslint_yaml::for_each_document(text, |document| match to_json(document) {
        Some(value) => documents.push(value),
        None => convertible = false,
    });
    loaded.ok()?;
    convertible.then_some(documents)
}

fn to_json(node: Node<'_>) -> Option<Value> {
    if node.is_mapping() {
        let mut map = Map::new();
        for (key, value) in node.entries() {
            map.insert(key.text()?.into_owned(), to_json(value)?);
        }
        return Some(Value::Object(map));
    }
    if node.is_sequence() {
        return node.items().map(to_json).collect::<Option<Vec<_>>>().map(Value::Array);
    }
    if node.is_null() {
        return Some(Value::Null);
    }
    let scalar = node.scalar()?;
    Some(match scalar.kind {
        ScalarKind::Str => Value::String(scalar.text.into_owned()),
        ScalarKind::Bool => Value::Bool(scalar.text == "true"),
        ScalarKind::Null => Value::Null,
        ScalarKind::Int | ScalarKind::Float => number(&scalar.text)?,
    })
}

/// A YAML number as serde_json reads the same digits.
fn number(text: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str::<Number>(text) {
        return Some(Value::Number(value));
    }
    text.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_round_trips_through_block_yaml() {
        let object = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "train", "annotations": {"capslint.io/compute": "true", "yes": "no", "a b": "1"}},
            "spec": {
                "containers": [{
                    "name": "main",
                    "image": "python:3.12",
                    "args": ["-c", "print('x')\n", "", "null", "0x10", "1e3", "#", "- dash", "key: value"],
                    "resources": {"limits": {"cpu": "2"}, "requests": {"cpu": 1.5, "memory": 1_000_000_000_000u64}},
                    "env": [],
                    "securityContext": {},
                    "tty": true,
                    "workingDir": null,
                    "nested": [[1, 2], [], [{"x": -3}]],
                    "unicode": "é ☃ \u{1}\t"
                }]
            }
        });
        let rendered = to_yaml(&object);
        assert_eq!(from_yaml(&rendered.text), Some(object), "{}", rendered.text);
    }

    #[test]
    fn containers_are_written_in_block_style() {
        let rendered = to_yaml(&json!({"spec": {"containers": [{"name": "main", "image": "x"}]}}));
        assert_eq!(rendered.text, "spec:\n  containers:\n    - image: \"x\"\n      name: \"main\"\n");
    }

    #[test]
    fn a_span_names_its_pointer() {
        let rendered =
            to_yaml(&json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "env": [{"name": "X"}]}]}}));
        let at = rendered.text.find("\"X\"").unwrap();
        assert_eq!(rendered.pointer_at(TextSize::from(at as u32)), "/spec/containers/1/env/0/name");
        let key = rendered.text.find("name: \"b\"").unwrap();
        assert_eq!(rendered.pointer_at(TextSize::from(key as u32)), "/spec/containers/1");
    }
}
