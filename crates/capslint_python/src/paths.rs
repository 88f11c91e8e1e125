//! Values that differ by path ([`Value::OneOf`]): building them flat and bounded ([`one_of`]), mapping a
//! conversion over their alternatives ([`map`]), combining operands path by path ([`combine`]), and the
//! one view the rules read a value through ([`paths`]): each path's value, or nothing the rules may judge
//! when one path is bounded by the pod's cap (the code chooses between the cap and something else on
//! purpose).

use std::rc::Rc;

use super::limits::MAX_ALTERNATIVES;
use super::site::Site;
use super::value::{Alternative, Resolved, Unknown, Value};

/// More than [`MAX_ALTERNATIVES`] distinct alternatives: the value is not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooMany;

/// Whether two resolved values are the same for the purposes of the rules.
pub(crate) fn same_value(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::Str(a), Value::Str(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::None, Value::None) | (Value::Capped, Value::Capped) => true,
        (Value::NodeCpus { .. }, Value::NodeCpus { .. }) => true,
        (Value::Strings(a), Value::Strings(b)) => a == b,
        _ => false,
    }
}

/// The alternative of one path: `resolved` (flattened later if it differs by path itself), written at
/// `site`, taken `condition`.
pub fn alternative<'a>(resolved: Resolved<'a>, site: Option<Site>, condition: Option<&str>) -> Alternative<'a> {
    Alternative { resolved, site, condition: condition.map(Rc::from) }
}

/// The value of `alternatives`, one per path: flattened (an alternative that differs by path itself
/// gives its own), the same value kept once (the first), and the unknown ones kept as one. A single
/// value is itself; only unknown ones are unknown; more than [`MAX_ALTERNATIVES`] distinct ones are
/// [`TooMany`].
pub fn one_of<'a>(alternatives: impl IntoIterator<Item = Alternative<'a>>) -> Result<Resolved<'a>, TooMany> {
    let mut flat: Vec<Alternative<'a>> = Vec::new();
    let mut push = |alternative: Alternative<'a>| -> Result<(), TooMany> {
        let is_new = match &alternative.resolved.value {
            Value::Unknown(_) => !flat.iter().any(|kept| matches!(kept.resolved.value, Value::Unknown(_))),
            value => !flat.iter().any(|kept| same_value(&kept.resolved.value, value)),
        };
        if is_new {
            if flat.len() == MAX_ALTERNATIVES {
                return Err(TooMany);
            }
            flat.push(alternative);
        }
        Ok(())
    };
    for outer in alternatives {
        match &outer.resolved.value {
            Value::OneOf(inner) => {
                for path in inner.iter() {
                    let mut resolved = path.resolved.clone();
                    if resolved.binding.is_none() {
                        resolved.binding.clone_from(&outer.resolved.binding);
                    }
                    push(Alternative {
                        resolved,
                        site: path.site.clone().or_else(|| outer.site.clone()),
                        condition: path.condition.clone().or_else(|| outer.condition.clone()),
                    })?;
                }
            }
            _ => push(outer)?,
        }
    }
    Ok(match flat.len() {
        0 => Resolved::of(Value::Unknown(Unknown::Other)),
        1 => flat.pop().map(|alternative| alternative.resolved).unwrap_or_else(|| Resolved::of(Value::None)),
        _ if flat.iter().all(|path| matches!(path.resolved.value, Value::Unknown(_))) => {
            Resolved::of(flat[0].resolved.value.clone())
        }
        _ => Resolved::of(Value::OneOf(flat.into())),
    })
}

/// `convert` applied on every path of `resolved` (a conversion, a unary operator): the alternatives keep
/// their sites; a single value is converted as it is.
pub fn map<'a>(resolved: Resolved<'a>, convert: impl Fn(Resolved<'a>) -> Resolved<'a>) -> Resolved<'a> {
    let Value::OneOf(alternatives) = &resolved.value else { return convert(resolved) };
    let converted = alternatives.iter().map(|path| Alternative {
        resolved: convert(path.resolved.clone()),
        site: path.site.clone(),
        condition: path.condition.clone(),
    });
    // Converting never adds paths.
    one_of(converted.collect::<Vec<_>>()).unwrap_or_else(|_| Resolved::of(Value::Unknown(Unknown::Other)))
}

/// `operation` applied on every combination of the operands' paths (`min(a, b)`, `a * b`): a product
/// that `spend` pays for, one unit per combination. Operands that all have one value are combined once.
/// More than [`MAX_ALTERNATIVES`] combinations (or distinct results) are [`TooMany`]; a budget that ran
/// out leaves the result unknown.
pub fn combine<'a>(
    operands: &[Resolved<'a>],
    mut spend: impl FnMut(u64) -> bool,
    operation: impl Fn(&[Resolved<'a>]) -> Resolved<'a>,
) -> Result<Resolved<'a>, TooMany> {
    if !operands.iter().any(|operand| matches!(operand.value, Value::OneOf(_))) {
        return Ok(operation(operands));
    }
    let choices: Vec<Vec<Alternative<'a>>> = operands.iter().map(|operand| paths_of(operand)).collect();
    let mut count: usize = 1;
    for choice in &choices {
        count = count.saturating_mul(choice.len());
        if count > MAX_ALTERNATIVES {
            return Err(TooMany);
        }
    }
    if !spend(count as u64) {
        return Ok(Resolved::of(Value::Unknown(Unknown::Other)));
    }
    let mut results = Vec::with_capacity(count);
    let mut indices = vec![0; choices.len()];
    loop {
        let picked: Vec<&Alternative<'a>> =
            choices.iter().zip(&indices).map(|(choice, &index)| &choice[index]).collect();
        let values: Vec<Resolved<'a>> = picked.iter().map(|path| path.resolved.clone()).collect();
        let from_path = picked.iter().find(|path| path.site.is_some() || path.condition.is_some());
        let mut resolved = operation(&values);
        // Arithmetic on the pod's cap (`cap - 1`) stays the cap's on its path: the choice stays deliberate.
        if matches!(resolved.value, Value::Unknown(_))
            && values.iter().any(|value| matches!(value.value, Value::Capped))
        {
            resolved.value = Value::Capped;
        }
        results.push(Alternative {
            resolved,
            site: from_path.and_then(|path| path.site.clone()),
            condition: from_path.and_then(|path| path.condition.clone()),
        });
        // The next combination, as an odometer over the operands' paths.
        let mut position = 0;
        loop {
            if position == indices.len() {
                return one_of(results);
            }
            indices[position] += 1;
            if indices[position] < choices[position].len() {
                break;
            }
            indices[position] = 0;
            position += 1;
        }
    }
}

/// Every path of `resolved` as an alternative (one, for a single value).
fn paths_of<'a>(resolved: &Resolved<'a>) -> Vec<Alternative<'a>> {
    match &resolved.value {
        Value::OneOf(alternatives) => alternatives
            .iter()
            .map(|path| {
                let mut path = path.clone();
                if path.resolved.binding.is_none() {
                    path.resolved.binding.clone_from(&resolved.binding);
                }
                path
            })
            .collect(),
        _ => vec![Alternative { resolved: resolved.clone(), site: None, condition: None }],
    }
}

/// The values a rule judges, one per path of `resolved`, the known ones first (so that a finding on a
/// known path is the one reported where an unknown path would be reported too): the value itself when
/// it has one, each alternative of a [`Value::OneOf`]; one unknown value when a path is [`Value::Capped`]
/// (the code chooses between the pod's cap and something else on purpose). A rule reports when any
/// path is bad for it, labelling that path ([`Alternative::site`], [`Alternative::condition`]).
pub fn paths<'a>(resolved: &Resolved<'a>) -> Vec<Alternative<'a>> {
    let Value::OneOf(alternatives) = &resolved.value else { return paths_of(resolved) };
    if alternatives.iter().any(|path| matches!(path.resolved.value, Value::Capped)) {
        return vec![Alternative {
            resolved: Resolved::of(Value::Unknown(Unknown::Other)),
            site: None,
            condition: None,
        }];
    }
    let mut all = paths_of(resolved);
    all.sort_by_key(|path| matches!(path.resolved.value, Value::Unknown(_)));
    all
}

/// Whether any path of `value` is unknown (a single unknown value included).
pub fn any_unknown(value: &Value<'_>) -> bool {
    match value {
        Value::Unknown(_) => true,
        Value::OneOf(alternatives) => alternatives.iter().any(|path| matches!(path.resolved.value, Value::Unknown(_))),
        _ => false,
    }
}
