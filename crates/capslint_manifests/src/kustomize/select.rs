//! Which objects a patch applies to: a `target` selector (`group`, `version`, `kind`, `name`,
//! `namespace`, `labelSelector`, `annotationSelector`; names and kinds are anchored regular expressions
//! in kustomize), or the patch's own kind, name and namespace. A name matches any name the object has
//! had (as written, and after each level's `namePrefix`/`nameSuffix`), as kustomize matches by any id.

use super::tree::Tree;

/// An object's identity as the selectors see it.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Every name it has had, the current one last.
    pub names: Vec<String>,
    /// Every namespace it has had (empty: none written), the current one last.
    pub namespaces: Vec<String>,
}

impl Identity {
    /// The identity of an object as written.
    pub fn of(object: &Tree) -> Identity {
        let text = |path: &[&str]| object.path(path).and_then(Tree::text).unwrap_or_default().to_string();
        Identity {
            api_version: text(&["apiVersion"]),
            kind: text(&["kind"]),
            names: vec![text(&["metadata", "name"])],
            namespaces: vec![text(&["metadata", "namespace"])],
        }
    }

    /// ``Kind `name` `` with the name its base writes, for messages.
    pub fn describe(&self) -> String {
        format!("{} `{}`", self.kind, self.names.first().map_or("", String::as_str).escape_debug())
    }

    fn group_version(&self) -> (&str, &str) {
        self.api_version.rsplit_once('/').unwrap_or(("", &self.api_version))
    }
}

/// A `target` selector.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    group: Option<String>,
    version: Option<String>,
    kind: Option<Pattern>,
    name: Option<Pattern>,
    namespace: Option<Pattern>,
    labels: Option<Vec<Requirement>>,
    annotations: Option<Vec<Requirement>>,
}

impl Selector {
    /// The selector of a `target` mapping; an error names what capslint cannot evaluate.
    pub fn parse(target: &Tree) -> Result<Selector, String> {
        let text = |key: &str| target.get(key).and_then(Tree::text).filter(|text| !text.is_empty());
        let pattern = |key: &str| text(key).map(Pattern::parse).transpose();
        let requirements = |key: &str| text(key).map(parse_requirements).transpose();
        Ok(Selector {
            group: text("group").map(str::to_string),
            version: text("version").map(str::to_string),
            kind: pattern("kind")?,
            name: pattern("name")?,
            namespace: pattern("namespace")?,
            labels: requirements("labelSelector")?,
            annotations: requirements("annotationSelector")?,
        })
    }

    /// The selector a strategic merge patch without `target` has: its own kind, name and namespace.
    pub fn of_patch(patch: &Tree) -> Selector {
        let identity = Identity::of(patch);
        let (group, _) = identity.group_version();
        let literal = |text: &str| (!text.is_empty()).then(|| Pattern::literal(text));
        Selector {
            group: patch.get("apiVersion").map(|_| group.to_string()),
            kind: literal(&identity.kind),
            name: literal(&identity.names[0]),
            namespace: literal(&identity.namespaces[0]),
            ..Selector::default()
        }
    }

    /// Whether `object` (with `identity`) is selected.
    pub fn matches(&self, identity: &Identity, object: &Tree) -> bool {
        let (group, version) = identity.group_version();
        self.group.as_ref().is_none_or(|wanted| wanted == group)
            && self.version.as_ref().is_none_or(|wanted| wanted == version)
            && self.kind.as_ref().is_none_or(|pattern| pattern.matches(&identity.kind))
            && self.name.as_ref().is_none_or(|pattern| identity.names.iter().any(|name| pattern.matches(name)))
            && self.namespace.as_ref().is_none_or(|pattern| {
                identity
                    .namespaces
                    .iter()
                    .any(|namespace| pattern.matches(namespace) || (namespace.is_empty() && pattern.matches("default")))
            })
            && self.labels.as_ref().is_none_or(|wanted| selects(wanted, object.path(&["metadata", "labels"])))
            && self.annotations.as_ref().is_none_or(|wanted| selects(wanted, object.path(&["metadata", "annotations"])))
    }
}

/// One requirement of a label selector.
#[derive(Debug, Clone)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
}

fn parse_requirements(text: &str) -> Result<Vec<Requirement>, String> {
    if text.contains('(') {
        return Err(format!("the set-based selector `{text}`"));
    }
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            Ok(if let Some((key, value)) = part.split_once("!=") {
                Requirement::NotEquals(key.trim().to_string(), value.trim().to_string())
            } else if let Some((key, value)) = part.split_once("==").or_else(|| part.split_once('=')) {
                Requirement::Equals(key.trim().to_string(), value.trim().to_string())
            } else if let Some(key) = part.strip_prefix('!') {
                Requirement::NotExists(key.trim().to_string())
            } else if part.contains(char::is_whitespace) {
                return Err(format!("the selector `{text}`"));
            } else {
                Requirement::Exists(part.to_string())
            })
        })
        .collect()
}

fn selects(requirements: &[Requirement], labels: Option<&Tree>) -> bool {
    let get = |key: &str| labels.and_then(|labels| labels.get(key)).and_then(Tree::text);
    requirements.iter().all(|requirement| match requirement {
        Requirement::Equals(key, value) => get(key) == Some(value.as_str()),
        Requirement::NotEquals(key, value) => get(key) != Some(value.as_str()),
        Requirement::Exists(key) => get(key).is_some(),
        Requirement::NotExists(key) => get(key).is_none(),
    })
}

/// An anchored regular expression of the subset kustomize selectors use in practice: literal characters,
/// `.`, `*`, `+`, `?` and top-level `|`. Anything else (classes, groups, escapes) is refused.
#[derive(Debug, Clone)]
struct Pattern {
    alternatives: Vec<Vec<(Atom, Repeat)>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Atom {
    Any,
    Char(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeat {
    One,
    Optional,
    Many,
    OneOrMore,
}

/// The longest pattern evaluated.
const MAX_PATTERN: usize = 256;

impl Pattern {
    fn literal(text: &str) -> Pattern {
        Pattern { alternatives: vec![text.chars().map(|character| (Atom::Char(character), Repeat::One)).collect()] }
    }

    fn parse(text: &str) -> Result<Pattern, String> {
        let refused = || format!("the regular expression `{text}`");
        if text.len() > MAX_PATTERN || text.contains(['[', ']', '(', ')', '\\', '{', '}']) {
            return Err(refused());
        }
        let mut alternatives = Vec::new();
        for alternative in text.split('|') {
            let alternative = alternative.strip_prefix('^').unwrap_or(alternative);
            let alternative = alternative.strip_suffix('$').unwrap_or(alternative);
            let mut atoms: Vec<(Atom, Repeat)> = Vec::new();
            for character in alternative.chars() {
                let repeat = match character {
                    '*' => Repeat::Many,
                    '+' => Repeat::OneOrMore,
                    '?' => Repeat::Optional,
                    '^' | '$' => return Err(refused()),
                    '.' => {
                        atoms.push((Atom::Any, Repeat::One));
                        continue;
                    }
                    other => {
                        atoms.push((Atom::Char(other), Repeat::One));
                        continue;
                    }
                };
                match atoms.last_mut() {
                    Some((_, slot @ Repeat::One)) => *slot = repeat,
                    _ => return Err(refused()),
                }
            }
            alternatives.push(atoms);
        }
        Ok(Pattern { alternatives })
    }

    fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        self.alternatives.iter().any(|atoms| matches_atoms(atoms, &text))
    }
}

/// Whole-text match by dynamic programming over (atom, position): linear in both, no backtracking.
fn matches_atoms(atoms: &[(Atom, Repeat)], text: &[char]) -> bool {
    // reachable[i]: the first `atoms` consumed so far can end at text position i.
    let mut reachable = vec![false; text.len() + 1];
    reachable[0] = true;
    for (atom, repeat) in atoms {
        let fits =
            |at: usize| text.get(at).is_some_and(|character| *atom == Atom::Any || *atom == Atom::Char(*character));
        let mut next = vec![false; text.len() + 1];
        for at in 0..=text.len() {
            let repeats = matches!(repeat, Repeat::Many | Repeat::OneOrMore) && next[at];
            if matches!(repeat, Repeat::Optional | Repeat::Many) && reachable[at] {
                next[at] = true;
            }
            if (reachable[at] || repeats || (*repeat == Repeat::Many && next[at])) && fits(at) {
                next[at + 1] = true;
            }
        }
        reachable = next;
    }
    reachable[text.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_anchored_and_linear() {
        let pattern = |text: &str| Pattern::parse(text).unwrap();
        assert!(pattern("train").matches("train"));
        assert!(!pattern("train").matches("prod-train"));
        assert!(pattern(".*-train").matches("prod-train"));
        assert!(pattern("a|b").matches("b"));
        assert!(pattern("^ab+c?$").matches("abbb"));
        assert!(!pattern("ab+c").matches("ac"));
        assert!(pattern("a*a*a*a*a*a*b").matches(&format!("{}b", "a".repeat(200))));
        assert!(!pattern("a*a*a*a*a*a*b").matches(&"a".repeat(200)));
        assert!(Pattern::parse("[a-z]+").is_err());
    }

    #[test]
    fn selectors_by_kind_name_namespace_and_labels() {
        let mut object = None;
        capslint_yaml::for_each_document(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: train, labels: {app: ml, tier: batch}}\n",
            |document| object = Tree::from_node(document, 0),
        )
        .unwrap();
        let object = object.unwrap();
        let mut identity = Identity::of(&object);
        identity.names.push("prod-train".to_string());
        let target = |text: &str| {
            let mut tree = None;
            capslint_yaml::for_each_document(text, |document| tree = Tree::from_node(document, 1)).unwrap();
            Selector::parse(&tree.unwrap()).unwrap()
        };
        assert!(target("{kind: Deployment, name: prod-train, group: apps, version: v1}").matches(&identity, &object));
        assert!(target("{name: train, namespace: default}").matches(&identity, &object));
        assert!(target("{labelSelector: 'app=ml,tier!=web,!gpu'}").matches(&identity, &object));
        assert!(!target("{labelSelector: app=web}").matches(&identity, &object));
        assert!(!target("{kind: StatefulSet}").matches(&identity, &object));
        assert!(!target("{group: batch}").matches(&identity, &object));
    }
}
