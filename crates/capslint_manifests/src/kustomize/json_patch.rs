//! JSON 6902 patches (`patchesJson6902`, and `patches` whose body is a list of operations): `add`,
//! `remove`, `replace`, `move`, `copy` and `test` at JSON pointers (`/spec/template/spec/containers/0/env/-`).
//! Added and replaced values keep the patch's origin; an operation kustomize would reject (a missing
//! path, a failed test) stops the render, as it stops `kubectl kustomize`.

use super::tree::{Data, Origin, Tree};

/// One operation.
#[derive(Debug, Clone)]
pub struct Op {
    kind: OpKind,
    path: Vec<String>,
    from: Vec<String>,
    value: Option<Tree>,
    /// Where the `path` is written (new keys point there).
    origin: Origin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpKind {
    Add,
    Remove,
    Replace,
    Move,
    Copy,
    Test,
}

/// Whether a patch body is a list of operations rather than a strategic merge patch.
pub fn is_operations(body: &Tree) -> bool {
    matches!(body.data, Data::Seq(_))
}

/// The operations of a patch body.
pub fn parse(body: &Tree) -> Result<Vec<Op>, String> {
    body.items()
        .iter()
        .map(|item| {
            let field = |key: &str| item.get(key).and_then(Tree::text);
            let kind = match field("op") {
                Some("add") => OpKind::Add,
                Some("remove") => OpKind::Remove,
                Some("replace") => OpKind::Replace,
                Some("move") => OpKind::Move,
                Some("copy") => OpKind::Copy,
                Some("test") => OpKind::Test,
                other => return Err(format!("unknown JSON patch operation `{}`", other.unwrap_or_default())),
            };
            let path = pointer(field("path").ok_or("a JSON patch operation without `path`")?)?;
            let from = match kind {
                OpKind::Move | OpKind::Copy => {
                    pointer(field("from").ok_or("a JSON patch `move` or `copy` without `from`")?)?
                }
                _ => Vec::new(),
            };
            let value = item.get("value").cloned();
            if value.is_none() && matches!(kind, OpKind::Add | OpKind::Replace | OpKind::Test) {
                return Err("a JSON patch operation without `value`".to_string());
            }
            let origin = item.get("path").map_or(item.origin, |path| path.origin);
            Ok(Op { kind, path, from, value, origin })
        })
        .collect()
}

/// The tokens of a JSON pointer.
fn pointer(text: &str) -> Result<Vec<String>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let rest = text.strip_prefix('/').ok_or_else(|| format!("JSON pointer `{text}` does not start with `/`"))?;
    Ok(rest.split('/').map(|token| token.replace("~1", "/").replace("~0", "~")).collect())
}

/// Applies `ops` to `target`, in order.
pub fn apply(target: &mut Tree, ops: &[Op]) -> Result<(), String> {
    for op in ops {
        let shown = || format!("/{}", op.path.join("/"));
        match op.kind {
            OpKind::Add => add(target, &op.path, op.value.clone().unwrap_or(Tree::map(op.origin)), op.origin)
                .ok_or_else(|| format!("JSON patch `add` at `{}`: no such parent", shown()))?,
            OpKind::Remove => {
                remove(target, &op.path)
                    .ok_or_else(|| format!("JSON patch `remove` at `{}`: no such path", shown()))?;
            }
            OpKind::Replace => {
                let value = op.value.clone().unwrap_or(Tree::map(op.origin));
                match get_mut(target, &op.path) {
                    Some(slot) => *slot = value,
                    // kustomize replaces a missing key of an existing mapping as if it were added.
                    None => add_to_map(target, &op.path, value, op.origin)
                        .ok_or_else(|| format!("JSON patch `replace` at `{}`: no such path", shown()))?,
                }
            }
            OpKind::Move | OpKind::Copy => {
                let value = get_mut(target, &op.from)
                    .map(|value| value.clone())
                    .ok_or_else(|| format!("JSON patch at `/{}`: no such path", op.from.join("/")))?;
                if op.kind == OpKind::Move {
                    remove(target, &op.from);
                }
                add(target, &op.path, value, op.origin)
                    .ok_or_else(|| format!("JSON patch at `{}`: no such parent", shown()))?;
            }
            OpKind::Test => {
                let found = get_mut(target, &op.path).map(|value| &*value);
                let expected = op.value.as_ref();
                if !found.zip(expected).is_some_and(|(found, expected)| same(found, expected)) {
                    return Err(format!("JSON patch `test` at `{}` fails", shown()));
                }
            }
        }
    }
    Ok(())
}

fn get_mut<'t>(tree: &'t mut Tree, path: &[String]) -> Option<&'t mut Tree> {
    let mut node = tree;
    for token in path {
        node = if matches!(node.data, Data::Map(_)) {
            node.get_mut(token)?
        } else if let Data::Seq(items) = &mut node.data {
            items.get_mut(token.parse::<usize>().ok()?)?
        } else {
            return None;
        };
    }
    Some(node)
}

fn add(tree: &mut Tree, path: &[String], value: Tree, origin: Origin) -> Option<()> {
    let Some((last, parent)) = path.split_last() else {
        *tree = value;
        return Some(());
    };
    let parent = get_mut(tree, parent)?;
    match &mut parent.data {
        Data::Map(_) => parent.set(last, origin, value),
        Data::Seq(items) if last == "-" => items.push(value),
        Data::Seq(items) => {
            let index = last.parse::<usize>().ok().filter(|index| *index <= items.len())?;
            items.insert(index, value);
        }
        _ => return None,
    }
    Some(())
}

/// Adds a key to an existing mapping (not to a list).
fn add_to_map(tree: &mut Tree, path: &[String], value: Tree, origin: Origin) -> Option<()> {
    let (last, parent) = path.split_last()?;
    let parent = get_mut(tree, parent)?;
    matches!(parent.data, Data::Map(_)).then(|| parent.set(last, origin, value))
}

fn remove(tree: &mut Tree, path: &[String]) -> Option<()> {
    let (last, parent) = path.split_last()?;
    let parent = get_mut(tree, parent)?;
    match &mut parent.data {
        Data::Map(_) => parent.remove(last).then_some(()),
        Data::Seq(items) => {
            let index = last.parse::<usize>().ok().filter(|index| *index < items.len())?;
            items.remove(index);
            Some(())
        }
        _ => None,
    }
}

/// Structural equality, origins aside.
fn same(a: &Tree, b: &Tree) -> bool {
    match (&a.data, &b.data) {
        (Data::Scalar(x, _), Data::Scalar(y, _)) => x == y,
        (Data::Null, Data::Null) => true,
        (Data::Seq(x), Data::Seq(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Data::Map(x), Data::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(key, value)| b.get(&key.text).is_some_and(|other| same(value, other)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kustomize::tree::parse_document as tree;

    #[test]
    fn operations_on_containers_env_and_resources() {
        let mut target = tree(
            "spec:\n  template:\n    spec:\n      containers:\n      - name: main\n        env: [{name: A, value: '1'}]\n        resources: {limits: {cpu: '2'}}\n",
            0,
        );
        let ops = parse(&tree(
            "- {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: B, value: '2'}}\n\
             - {op: add, path: /spec/template/spec/containers/0/env/0, value: {name: Z, value: '0'}}\n\
             - {op: replace, path: /spec/template/spec/containers/0/resources/limits/cpu, value: 1500m}\n\
             - {op: copy, from: /spec/template/spec/containers/0/env/1, path: /spec/template/spec/containers/0/env/-}\n\
             - {op: test, path: /spec/template/spec/containers/0/env/1/name, value: A}\n",
            1,
        ))
        .unwrap();
        apply(&mut target, &ops).unwrap();
        let container = &target.path(&["spec", "template", "spec", "containers"]).unwrap().items()[0];
        let env: Vec<&str> =
            container.get("env").unwrap().items().iter().filter_map(|item| item.get("name")?.text()).collect();
        assert_eq!(env, ["Z", "A", "B", "A"]);
        let cpu = container.path(&["resources", "limits", "cpu"]).unwrap();
        assert_eq!((cpu.text(), cpu.origin.source), (Some("1500m"), 1));
        let remove =
            parse(&tree("- {op: remove, path: /spec/template/spec/containers/0/resources/limits}\n", 1)).unwrap();
        apply(&mut target, &remove).unwrap();
        let container = &target.path(&["spec", "template", "spec", "containers"]).unwrap().items()[0];
        assert!(container.path(&["resources", "limits"]).is_none());
    }

    #[test]
    fn what_kustomize_rejects_is_an_error() {
        let mut target = tree("spec: {a: 1}\n", 0);
        for body in [
            "- {op: remove, path: /spec/b}\n",
            "- {op: replace, path: /spec/x/y, value: 1}\n",
            "- {op: remove, path: /spec/x}\n",
            "- {op: test, path: /spec/a, value: 2}\n",
            "- {op: frobnicate, path: /spec}\n",
            "- {op: add, path: spec, value: 1}\n",
        ] {
            let result = parse(&tree(body, 1)).and_then(|ops| apply(&mut target, &ops));
            assert!(result.is_err(), "{body}");
        }
    }
}
