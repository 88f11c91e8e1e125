//! The manifest fixes: ADR-0096's `env` block for a container that lacks it (the Downward API variable
//! of `limits.cpu`, each required cap as `$(THAT_VARIABLE)`, `OMP_WAIT_POLICY=passive`), appended to the
//! container's `env` list or added as a new `env` key, in the file's own indentation; and
//! `OMP_WAIT_POLICY` set to `passive`. Only block-style containers written in the file are edited; the
//! block is safe only under a whole-number CPU limit (otherwise the caps would be rounded up, and the fix
//! is display-only and says why).

use ruff_text_size::{TextRange, TextSize};

use super::model::{Container, ContainerLayout, EnvSource};
use super::rules::context::{ContainerContext, CpuLimit, LIMITS_CPU};
use capslint_cpu::DEFAULT_LIMIT_ENV;
use capslint_diagnostics::fix::{Edit, Fix};

/// One variable of the block.
enum Line<'a> {
    /// `valueFrom.resourceFieldRef.resource: limits.cpu`.
    Limit(&'a str),
    /// `value: "..."`.
    Value(&'a str, String),
}

/// The fix that completes `context`'s container's ADR-0096 block, or `None` when nothing is missing or
/// the container cannot be edited where it is written.
pub fn adr_block(context: &ContainerContext<'_>) -> Option<Fix> {
    adr_block_in(context, context.source().text(), context.container)
}

/// [`adr_block`] written into `target`, the container as the file `text` writes it: the container itself,
/// or, for a rendered kustomize overlay, the base's container the overlay renders it from. What is
/// missing comes from `context` (the container as it runs); what is already written, and the limit
/// variable the caps refer to, from `target`, so that the caps never precede their variable.
fn adr_block_in(context: &ContainerContext<'_>, text: &str, target: &Container) -> Option<Fix> {
    let container = target;
    if container.env_open || context.container.env_open {
        return None;
    }
    let existing_limit = container.env.iter().find_map(|var| match &var.source {
        EnvSource::ResourceField { resource, container: named, divisor }
            if resource.text == LIMITS_CPU
                && divisor.is_none()
                && named.as_deref().is_none_or(|named| Some(named) == container.name.as_deref()) =>
        {
            Some(var.name.as_str())
        }
        _ => None,
    });
    let limit_name =
        existing_limit.unwrap_or_else(|| context.settings.limit_env.as_deref().unwrap_or(DEFAULT_LIMIT_ENV));
    let written = |name: &str| container.env.iter().chain(&context.container.env).any(|var| var.name == name);
    let mut lines = Vec::new();
    if existing_limit.is_none() {
        if written(limit_name) {
            return None;
        }
        lines.push(Line::Limit(limit_name));
    }
    // `capslint exec` sets the caps and the wait policy from the limit variable.
    if !context.env.exec {
        for cap in context.settings.thread_caps.iter().map(String::as_str) {
            if context.env.get(cap).is_none() && !written(cap) {
                lines.push(Line::Value(cap, format!("$({limit_name})")));
            }
        }
        if context.env.get("OMP_WAIT_POLICY").is_none() && !written("OMP_WAIT_POLICY") {
            lines.push(Line::Value("OMP_WAIT_POLICY", "passive".to_string()));
        }
    }
    if lines.is_empty() {
        return None;
    }
    let edits: Vec<Edit> =
        container.layout.as_ref().and_then(|layout| block_edit(text, layout, &lines)).into_iter().collect();
    let names: Vec<String> = lines
        .iter()
        .map(|line| match line {
            Line::Limit(name) => format!("`{name}` (Downward API `limits.cpu`)"),
            Line::Value(name, value) => format!("`{name}={value}`"),
        })
        .collect();
    let message = format!("Add {} to `env`", names.join(", "));
    if edits.is_empty() {
        let message = format!("{message} (by hand: capslint cannot edit this container where it is written)");
        return Some(Fix::display_only(message, edits));
    }
    Some(match context.limit {
        CpuLimit::Valid { quantity, .. } if quantity.is_whole() => Fix::safe(message, edits),
        CpuLimit::Valid { .. } => Fix::display_only(
            format!(
                "{message}, after making `limits.cpu` a whole number: the Downward API rounds a fractional limit up"
            ),
            edits,
        ),
        _ => Fix::display_only(
            format!(
                "{message}, after setting a whole-number `limits.cpu`: without one the Downward API reports the node's CPUs"
            ),
            edits,
        ),
    })
}

/// The fix of `rule` for a rendered kustomize overlay's container, made again for the file its finding
/// was placed in (`text`, whose objects are `objects`, at `placed`): in the container whose `name` is at
/// `placed` (the base's), the `env` block or the limit from the request; elsewhere, the `OMP_WAIT_POLICY`
/// value written at `placed` (a base's or a patch's). `None` when the file does not write it as a block
/// mapping capslint can edit.
pub fn relocate(
    context: &ContainerContext<'_>,
    rule: capslint_diagnostics::registry::Rule,
    objects: &[super::model::Object],
    text: &str,
    placed: TextRange,
) -> Option<Fix> {
    use capslint_diagnostics::registry::Rule;
    let target = objects
        .iter()
        .flat_map(|object| &object.pods)
        .flat_map(|pod| pod.containers.iter().chain(&pod.init_containers))
        .find(|container| container.layout.as_ref().is_some_and(|layout| layout.name == Some(placed)));
    match (rule, target) {
        (Rule::MissingCpuLimit, Some(target)) => limit_from_request_in(context, text, target),
        (Rule::MissingCpuLimitRef | Rule::MissingThreadCaps | Rule::OmpWaitPolicyNotPassive, Some(target)) => {
            adr_block_in(context, text, target)
        }
        (Rule::OmpWaitPolicyNotPassive, None) => wait_policy(text, placed, None),
        _ => None,
    }
}

/// The unsafe fix for a container without a CPU limit whose CPU request is a whole number: the limit
/// set to the request (written as the request is: `"2"` stays quoted). It changes scheduling and
/// throttling, so it needs `--unsafe-fixes`. `None` when there is no such request or the container's
/// `resources` cannot be edited where they are written.
pub fn limit_from_request(context: &ContainerContext<'_>) -> Option<Fix> {
    limit_from_request_in(context, context.source().text(), context.container)
}

/// [`limit_from_request`] written into `target` in `text` (see [`adr_block_in`]).
fn limit_from_request_in(context: &ContainerContext<'_>, text: &str, target: &Container) -> Option<Fix> {
    let container = context.container;
    let request = target.resources.request("cpu")?;
    if request.value.text != container.resources.request("cpu")?.value.text {
        return None;
    }
    let quantity = capslint_cpu::quantity::Quantity::parse(&request.value.text).ok()?;
    if !quantity.is_whole() || quantity.millis() <= 0 || container.resources.limit("cpu").is_some() {
        return None;
    }
    let quoted =
        text.get(usize::from(request.value.range.start())..).is_some_and(|written| written.starts_with(['"', '\'']));
    let value = if quoted { format!("\"{}\"", request.value.text) } else { request.value.text.clone() };
    let message = format!("Set `limits.cpu` to the CPU request, {value}");
    Some(match target.layout.as_ref().and_then(|layout| limit_edit(text, layout, &value)) {
        Some(edit) => Fix::unsafe_edits(message, vec![edit]),
        None => Fix::display_only(format!("{message} (by hand: capslint cannot edit these `resources`)"), Vec::new()),
    })
}

/// The insertion of `cpu: VALUE` into the container's `limits`, or of `limits` into its `resources`.
fn limit_edit(text: &str, layout: &ContainerLayout, value: &str) -> Option<Edit> {
    let edit = match (layout.limits, layout.resources) {
        (Some(limits), _) => add_key(text, limits, &format!("cpu: {value}"))?,
        (None, Some(resources)) if text.get(usize::from(resources.start)..)?.starts_with('{') => {
            add_key(text, resources, &format!("limits: {{cpu: {value}}}"))?
        }
        (None, Some(resources)) => {
            let first = usize::from(resources.first_key?);
            let line_start = line_start(text, first);
            let indent = text.get(line_start..first)?;
            if !indent.chars().all(|character| character == ' ') {
                return None;
            }
            let newline = line_ending(text);
            Edit::insertion(
                format!("{indent}limits:{newline}{indent}  cpu: {value}{newline}"),
                TextSize::from(line_start as u32),
            )
        }
        (None, None) => return None,
    };
    Some(edit)
}

/// Adds `entry` (`key: value`) as the first entry of `mapping`: after `{` in a flow mapping, else as a
/// line before its first key, in that key's column.
fn add_key(text: &str, mapping: super::model::MappingLayout, entry: &str) -> Option<Edit> {
    let start = usize::from(mapping.start);
    if text.get(start..)?.starts_with('{') {
        let empty = text.get(start + 1..)?.trim_start().starts_with('}');
        let content = if empty { entry.to_string() } else { format!("{entry}, ") };
        return Some(Edit::insertion(content, mapping.start + TextSize::from(1)));
    }
    let first = usize::from(mapping.first_key?);
    let line_start = line_start(text, first);
    let indent = text.get(line_start..first)?;
    if !indent.chars().all(|character| character == ' ') {
        return None;
    }
    Some(Edit::insertion(format!("{indent}{entry}{}", line_ending(text)), TextSize::from(line_start as u32)))
}

/// The safe fix that sets an `OMP_WAIT_POLICY` value written at `value` to `passive`, keeping its quotes.
/// With `expected`, the value's text: the edit is made only where the file writes exactly that (a value
/// read from a string, an Argo `podSpecPatch` or an object held in a ConfigMap, may be placed at the
/// whole string), otherwise the fix is only shown.
pub fn wait_policy(text: &str, value: TextRange, expected: Option<&str>) -> Option<Fix> {
    const MESSAGE: &str = "Set `OMP_WAIT_POLICY` to `passive`";
    let edit = || {
        let written = text.get(usize::from(value.start())..usize::from(value.end()))?;
        // A quoted scalar's range runs on to the next token: it ends at its closing quote.
        let inner = match capslint_diagnostics::suppress::yaml::quoted_end(text, value) {
            Some(end) => TextRange::new(value.start() + TextSize::from(1), end - TextSize::from(1)),
            None if written.starts_with(['"', '\'']) => return None,
            None => value,
        };
        let current = text.get(inner.to_std_range())?;
        let unexpected = expected.is_some_and(|expected| expected != current);
        (!unexpected && !current.contains(['\n', '\\'])).then(|| Edit::replacement("passive", inner))
    };
    Some(match edit() {
        Some(edit) => Fix::safe(MESSAGE, vec![edit]),
        None => Fix::display_only(MESSAGE, Vec::new()),
    })
}

/// The insertion of `lines` into the container: after the last item of its block `env` list, else as a
/// new `env` key after its `name` line. `None` for a flow-style container or `env`.
fn block_edit(text: &str, layout: &ContainerLayout, lines: &[Line<'_>]) -> Option<Edit> {
    if text.get(usize::from(layout.start)..)?.starts_with('{') {
        return None;
    }
    match (layout.env_key, layout.env_items) {
        (Some(_), Some((first, end))) => {
            let first = usize::from(first);
            let line_start = line_start(text, first);
            let dash = text.get(line_start..first)?.find('-')? + line_start;
            if !text.get(line_start..dash)?.chars().all(|character| character == ' ') {
                return None;
            }
            let item_prefix = text.get(dash..first)?;
            if !item_prefix.get(1..)?.chars().all(|character| character == ' ') {
                return None;
            }
            let indent = " ".repeat(dash - line_start);
            let at = next_line_start(text, usize::from(end))?;
            Some(Edit::insertion(render(lines, &indent, item_prefix, &line_ending(text)), TextSize::from(at as u32)))
        }
        (Some(_), None) => None,
        (None, _) => {
            let name = layout.name?;
            let (start, end) = (usize::from(name.start()), usize::from(name.end()));
            if text.get(start..end)?.contains('\n') {
                return None;
            }
            let line_start = line_start(text, start);
            let key_column = text.get(line_start..start)?.find("name")?;
            let before_key = text.get(line_start..line_start + key_column)?;
            if !before_key.chars().all(|character| character == ' ' || character == '-') {
                return None;
            }
            let key_indent = " ".repeat(key_column);
            let item_indent = if flush_sequences(text) { key_indent.clone() } else { format!("{key_indent}  ") };
            let at = next_line_start(text, end)?;
            let newline = line_ending(text);
            let block = format!("{key_indent}env:{newline}{}", render(lines, &item_indent, "- ", &newline));
            Some(Edit::insertion(block, TextSize::from(at as u32)))
        }
    }
}

/// The lines of the block, each item `indent` + `item_prefix` then its keys.
fn render(lines: &[Line<'_>], indent: &str, item_prefix: &str, newline: &str) -> String {
    let inner = format!("{indent}{}", " ".repeat(item_prefix.len()));
    let mut out = String::new();
    for line in lines {
        match line {
            Line::Limit(name) => {
                out.push_str(&format!("{indent}{item_prefix}name: {name}{newline}"));
                out.push_str(&format!("{inner}valueFrom:{newline}"));
                out.push_str(&format!("{inner}  resourceFieldRef:{newline}"));
                out.push_str(&format!("{inner}    resource: limits.cpu{newline}"));
            }
            Line::Value(name, value) => {
                out.push_str(&format!("{indent}{item_prefix}name: {name}{newline}"));
                out.push_str(&format!("{inner}value: \"{value}\"{newline}"));
            }
        }
    }
    out
}

fn line_start(text: &str, offset: usize) -> usize {
    text.get(..offset).and_then(|before| before.rfind('\n')).map_or(0, |index| index + 1)
}

/// The start of the line after the one `offset` is on; `None` on the last line without a newline.
fn next_line_start(text: &str, offset: usize) -> Option<usize> {
    text.get(offset..)?.find('\n').map(|index| offset + index + 1)
}

fn line_ending(text: &str) -> String {
    if text.contains("\r\n") { "\r\n".to_string() } else { "\n".to_string() }
}

/// Whether the file writes block sequences flush with their key (`containers:` then `- name:` in the
/// same column, as kubectl does) rather than indented under it: decided by its first such pair.
fn flush_sequences(text: &str) -> bool {
    let mut previous: Option<(usize, &str)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let column = line.len() - trimmed.len();
        if let Some((key_column, key)) = previous
            && key.ends_with(':')
            && (trimmed.starts_with("- ") || trimmed == "-")
        {
            return column == key_column;
        }
        previous = Some((column, trimmed.trim_end()));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_flush_and_indented_sequences() {
        assert!(flush_sequences("spec:\n  containers:\n  - name: a\n"));
        assert!(!flush_sequences("spec:\n  containers:\n    - name: a\n"));
    }

    #[test]
    fn the_wait_policy_keeps_its_quotes() {
        let text = "value: \"active\"\n";
        let fix = wait_policy(text, TextRange::new(TextSize::from(7), TextSize::from(15)), Some("active")).unwrap();
        assert_eq!(
            fix.edits,
            vec![Edit::replacement("passive", TextRange::new(TextSize::from(8), TextSize::from(14)))]
        );
    }

    #[test]
    fn the_wait_policy_is_not_edited_where_another_text_is_written() {
        // A value read from a string placed at the whole string (a `podSpecPatch`): only shown.
        let text = "podSpecPatch: '{\"containers\": []}'\n";
        let fix = wait_policy(text, TextRange::new(TextSize::from(14), TextSize::from(34)), Some("active")).unwrap();
        assert!(fix.edits.is_empty());
    }
}
