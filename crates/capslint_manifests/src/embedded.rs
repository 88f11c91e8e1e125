//! Kubernetes objects held as strings in a ConfigMap's `data`: Katib trial templates (a Job, PyTorchJob or
//! TFJob under a key), Argo workflow templates and pod templates that a controller reads from a ConfigMap.
//! Each value that looks like a manifest is parsed with the same guard and node budget as a file, its
//! objects are built and placed in the file, and the rules check them like any other object.
//!
//! Placement: inside a literal block scalar (`|`, `|-`, `|+`) every line of the value is a line of the
//! file shifted by the indentation, so every range keeps its exact place, and the `# capslint:
//! ignore[...]` comments of the value are comments of the file. Any other string (quoted, folded, plain)
//! has no exact place inside: every range is the `data` key, the messages name the object with its key
//! ([`super::model::Object::describe`]), and the value's comments act as an annotation of its first
//! object. Either way the ConfigMap's own `capslint.io/ignore` annotation applies.
//!
//! What is unknown stays silent: a value that does not parse, or is too large, produces nothing; Go
//! template actions (`{{.Trial}}`) become placeholders of the same length, which no rule judges (as
//! Katib's `${trialParameters.x}` already are), and an action that spans lines makes the value unknown.
//! An object held in a ConfigMap is a template, not a running workload: it counts for no VRAM budget.

use capslint_diagnostics::suppress::yaml::{Directive, DirectiveScan};
use capslint_yaml::{self as yaml, Node};
use ruff_text_size::{TextRange, TextSize};

use super::model::{Embedded, IgnoreCode, Object};
use super::relocate;

/// How many `data` values of one file are parsed as manifests: each parse is bounded by the guard and
/// the node and alias budgets of a file, and this bounds their number. Values past it are not checked.
pub const MAX_VALUES_PER_FILE: usize = 64;

/// What the embedded objects of one file add besides objects: their comments, and the parse budget left.
#[derive(Debug)]
pub struct Scan {
    /// The `# capslint: ignore[...]` comments written inside literal block values, placed in the file.
    pub directives: Vec<Directive>,
    /// How many more values may be parsed.
    remaining: usize,
}

impl Default for Scan {
    fn default() -> Self {
        Scan { directives: Vec::new(), remaining: MAX_VALUES_PER_FILE }
    }
}

/// The ConfigMap whose `data` is read.
#[derive(Debug, Clone, Copy)]
pub struct Holder<'a> {
    /// Its index among the file's objects.
    pub index: usize,
    /// Its description (`ConfigMap `trials``).
    pub describe: &'a str,
    /// Its `capslint.io/compute` annotation, which its objects inherit when they have none.
    pub compute: Option<bool>,
}

/// Adds to `objects` the objects held in the `data` of the ConfigMap `node`, placed in `text`.
/// `build` turns one YAML document of a value into objects (the stream's own builder, handed in so this
/// module does not depend on it).
pub fn objects(
    node: Node<'_>,
    text: &str,
    holder: Holder<'_>,
    objects: &mut Vec<Object>,
    scan: &mut Scan,
    build: &dyn Fn(Node<'_>, &str, &mut Vec<Object>),
) {
    for (key, value) in node.get("data").into_iter().flat_map(Node::entries) {
        if scan.remaining == 0 {
            return;
        }
        // A value reached through an alias is written elsewhere (and would be parsed once per alias).
        if value.via_alias() || key.via_alias() {
            continue;
        }
        let (Some(name), Some(string)) = (key.as_str(), value.as_str()) else { continue };
        if !may_be_manifest(string) {
            continue;
        }
        scan.remaining -= 1;
        let place = literal_lines(text, value.range(), string).map_or(Place::At(key.range()), Place::Lines);
        let embedded = Embedded {
            holder: holder.index,
            config_map: holder.describe.to_string(),
            key: name.to_string(),
            exact: matches!(place, Place::Lines(_)),
        };
        let Some((mut built, directives)) = parse(string, build) else { continue };
        for object in &mut built {
            relocate::object(object, &|range| place.range(range));
            object.embedded = Some(embedded.clone());
            object.always_on = false;
            object.compute = object.compute.or(holder.compute);
        }
        match &place {
            Place::Lines(_) => scan.directives.extend(directives.into_iter().map(|directive| Directive {
                start: place.range(TextRange::empty(directive.start)).start(),
                codes: directive.codes.into_iter().map(|(code, range)| (code, place.range(range))).collect(),
            })),
            Place::At(at) => {
                if let Some(first) = built.first_mut() {
                    let codes = directives.into_iter().flat_map(|directive| directive.codes);
                    first.ignore.extend(codes.map(|(code, _)| IgnoreCode { code, range: *at }));
                }
            }
        }
        objects.append(&mut built);
    }
}

/// Whether a string may hold a Kubernetes object: `apiVersion` and `kind` keys, in YAML or JSON.
fn may_be_manifest(string: &str) -> bool {
    super::looks_like_manifest(string)
        || (string.trim_start().starts_with('{') && string.contains("\"apiVersion\"") && string.contains("\"kind\""))
}

/// The objects of `string` and its comments, its ranges those of the string; `None` when it does not
/// parse, is too large, or holds a template action that spans lines.
fn parse(string: &str, build: &dyn Fn(Node<'_>, &str, &mut Vec<Object>)) -> Option<(Vec<Object>, Vec<Directive>)> {
    let (text, actions) = without_template_actions(string)?;
    let mut objects = Vec::new();
    let mut directives = DirectiveScan::new(&text);
    yaml::for_each_document(&text, |document| {
        build(document, &text, &mut objects);
        directives.document(document);
    })
    .ok()?;
    if !actions.is_empty() {
        // Messages name objects and containers as the template writes them.
        for object in &mut objects {
            restore(&mut object.name, &actions);
            let containers =
                object.pods.iter_mut().flat_map(|pod| pod.containers.iter_mut().chain(&mut pod.init_containers));
            for container in containers {
                restore(&mut container.name, &actions);
            }
        }
    }
    Some((objects, directives.finish(&text)))
}

/// A Go template action and the placeholder that stands for it.
type Action = (String, String);

/// `string` with every Go template action (`{{.Trial}}`, `{{ .NameSpace }}`) replaced by a placeholder of
/// the same byte length (`${______}`), so that offsets are kept and no rule judges the value, and the
/// actions replaced; `None` when an action is not closed on its line.
fn without_template_actions(string: &str) -> Option<(String, Vec<Action>)> {
    let mut actions = Vec::new();
    if !string.contains("{{") {
        return Some((string.to_string(), actions));
    }
    let mut out = String::with_capacity(string.len());
    let mut rest = string;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let action = &rest[open..];
        let close = action.find("}}")? + 2;
        if action[..close].contains(['\n', '\r']) {
            return None;
        }
        let placeholder = format!("${{{}}}", "_".repeat(close - 3));
        out.push_str(&placeholder);
        actions.push((placeholder, action[..close].to_string()));
        rest = &action[close..];
    }
    out.push_str(rest);
    Some((out, actions))
}

/// Writes the actions back into a name that holds their placeholders.
fn restore(name: &mut Option<String>, actions: &[Action]) {
    let Some(name) = name.as_mut().filter(|name| name.contains("${_")) else { return };
    for (placeholder, action) in actions {
        if let Some(at) = name.find(placeholder.as_str()) {
            name.replace_range(at..at + placeholder.len(), action);
        }
    }
}

/// Where the ranges of a value go in the file.
#[derive(Debug)]
enum Place {
    /// Line by line: `(offset of a line in the value, offset of that line's first character in the file)`.
    Lines(Vec<(u32, u32)>),
    /// Everything at one range (the `data` key).
    At(TextRange),
}

impl Place {
    fn range(&self, range: TextRange) -> TextRange {
        match self {
            Place::At(at) => *at,
            Place::Lines(lines) => {
                let offset = |at: TextSize| {
                    let at = u32::from(at);
                    let line = lines.partition_point(|(start, _)| *start <= at).saturating_sub(1);
                    let (start, file) = lines.get(line).copied().unwrap_or_default();
                    TextSize::from(file + (at - start.min(at)))
                };
                let start = offset(range.start());
                TextRange::new(start, offset(range.end()).max(start))
            }
        }
    }
}

/// The line table of a literal block scalar written at `range` of `text` whose value is `value`: each line
/// of the value found, character for character, on its line of the file after the block's indentation.
/// `None` for any other style, or when a line does not match (then nothing inside has an exact place).
fn literal_lines(text: &str, range: TextRange, value: &str) -> Option<Vec<(u32, u32)>> {
    // The value's range starts at its first character; the header (`|`, `|-`, `|+`, `|2`, maybe a tag
    // before and a comment after) ends the last line before it that is not blank.
    let start = usize::from(range.start());
    let mut file_at = text.get(..start)?.rfind('\n')? + 1;
    if !text.get(file_at..start)?.bytes().all(|byte| byte == b' ') {
        return None;
    }
    let before = text.get(..file_at)?.trim_end();
    let header = before.rsplit('\n').next()?;
    let header = header.find(" #").map_or(header, |comment| &header[..comment]).trim_end();
    let indicator = header.rsplit([' ', '\t']).next()?;
    if !indicator.strip_prefix('|')?.bytes().all(|byte| matches!(byte, b'-' | b'+' | b'0'..=b'9')) {
        return None;
    }
    let mut value_at = 0usize;
    let mut indent: Option<usize> = None;
    let mut lines = Vec::new();
    let pieces: Vec<&str> = value.split('\n').collect();
    for (index, piece) in pieces.iter().enumerate() {
        if index + 1 == pieces.len() && piece.is_empty() {
            // After the value's last line break: nothing is written there.
            lines.push((value_at as u32, file_at.min(text.len()) as u32));
            break;
        }
        let rest = text.get(file_at..)?;
        let line_end = rest.find('\n').map_or(text.len(), |newline| file_at + newline);
        let line = text.get(file_at..line_end)?;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let content = if piece.is_empty() {
            if !line.bytes().all(|byte| byte == b' ') {
                return None;
            }
            file_at + line.len().min(indent.unwrap_or(0))
        } else {
            let width = *indent.get_or_insert(line.len().checked_sub(piece.len())?);
            let (blank, content) = (line.get(..width)?, line.get(width..)?);
            if !blank.bytes().all(|byte| byte == b' ') || content != *piece {
                return None;
            }
            file_at + width
        };
        lines.push((value_at as u32, content as u32));
        value_at += piece.len() + 1;
        file_at = line_end + 1;
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of `data.t` in `text`, and its table.
    fn table(text: &str) -> Option<(String, Vec<(u32, u32)>)> {
        let mut found = None;
        yaml::for_each_document(text, |document| {
            let value = document.path(&["data", "t"]).unwrap();
            let string = value.as_str().unwrap().to_string();
            found = literal_lines(text, value.range(), &string).map(|lines| (string, lines));
        })
        .unwrap();
        found
    }

    #[test]
    fn every_line_of_a_literal_block_maps_to_its_place_in_the_file() {
        for header in ["|", "|-", "|+", "|2", "|  # a template"] {
            let text = format!(
                "data:\n  t: {header}\n    kind: Job\n\n    spec:\n      x: \"é y\"\n    # a comment\nafter: 1\n"
            );
            let (value, lines) = table(&text).unwrap_or_else(|| panic!("{header}: no table"));
            let place = Place::Lines(lines);
            for needle in ["kind", "Job", "spec", "x", "\"é y\"", "# a comment"] {
                let at = value.find(needle).unwrap();
                let range = TextRange::at(TextSize::from(at as u32), TextSize::of(needle));
                assert_eq!(&text[place.range(range)], needle, "{header}: {needle}");
            }
        }
    }

    #[test]
    fn other_styles_have_no_exact_place() {
        for text in [
            "data:\n  t: >\n    kind: Job\n    spec: {}\n",
            "data:\n  t: \"kind: Job\\nspec: {}\\n\"\n",
            "data:\n  t: 'kind: Job'\n",
            "data:\n  t: !!str |\n    kind: Job\n",
        ] {
            assert!(table(text).is_none(), "{text}");
        }
    }

    #[test]
    fn template_actions_become_placeholders_of_the_same_length() {
        let string = "name: {{.Trial}}\ncpu: \"{{ .Cpu }}\"\nx: {{}}\n";
        let (replaced, actions) = without_template_actions(string).unwrap();
        assert_eq!(replaced.len(), string.len());
        assert_eq!(replaced, "name: ${_______}\ncpu: \"${_______}\"\nx: ${_}\n");
        assert!(crate::placeholder::is_placeholder("${_______}"));
        let mut name = Some("job-${_______}".to_string());
        restore(&mut name, &actions);
        assert_eq!(name.as_deref(), Some("job-{{.Trial}}"));
        assert_eq!(without_template_actions("a: {{ if\n}}"), None);
        assert_eq!(without_template_actions("a: {{ .open"), None);
    }
}
