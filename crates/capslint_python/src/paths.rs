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

#[cfg(test)]
mod tests {
    use super::*;

    fn int(value: i64) -> Alternative<'static> {
        alternative(Resolved::of(Value::Int(value)), None, None)
    }

    fn values(resolved: &Resolved<'_>) -> Vec<Option<i64>> {
        paths(resolved).iter().map(|path| path.resolved.value.as_int()).collect()
    }

    #[test]
    fn alternatives_that_agree_are_one_value() {
        let resolved = one_of([int(-1), int(-1)]).unwrap();
        assert!(matches!(resolved.value, Value::Int(-1)));
    }

    #[test]
    fn nested_alternatives_are_flattened_and_unknown_ones_kept_once() {
        let unknown = || alternative(Resolved::of(Value::Unknown(Unknown::Other)), None, None);
        let inner = one_of([int(1), int(2), unknown()]).unwrap();
        let outer = one_of([alternative(inner, None, Some("inner")), int(3), unknown()]).unwrap();
        // Known paths first.
        assert_eq!(values(&outer), [Some(1), Some(2), Some(3), None]);
        let Value::OneOf(paths) = &outer.value else { panic!("{outer:?}") };
        assert_eq!(paths[0].condition.as_deref(), Some("inner"));
        assert!(matches!(one_of([unknown(), unknown()]).unwrap().value, Value::Unknown(_)));
    }

    #[test]
    fn more_distinct_alternatives_than_the_limit_are_too_many() {
        let limit = MAX_ALTERNATIVES as i64;
        assert!(one_of((0..limit).map(int)).is_ok());
        assert_eq!(one_of((0..=limit).map(int)).unwrap_err(), TooMany);
    }

    #[test]
    fn a_path_bounded_by_the_cap_makes_the_choice_deliberate() {
        let capped = one_of([alternative(Resolved::of(Value::Capped), None, None), int(-1)]).unwrap();
        assert!(matches!(paths(&capped).as_slice(), [path] if matches!(path.resolved.value, Value::Unknown(_))));
        // Arithmetic keeps the cap's path.
        let minus_one =
            combine(&[capped, Resolved::of(Value::Int(1))], |_| true, |_| Resolved::of(Value::Unknown(Unknown::Other)))
                .unwrap();
        assert!(matches!(paths(&minus_one).as_slice(), [path] if matches!(path.resolved.value, Value::Unknown(_))));
    }

    #[test]
    fn combinations_are_bounded_and_paid_for() {
        let four = one_of((1..=4).map(int)).unwrap();
        let sum = |operands: &[Resolved<'static>]| {
            let total = operands.iter().filter_map(|operand| operand.value.as_int()).sum();
            Resolved::of(Value::Int(total))
        };
        let mut spent = 0;
        let both = combine(
            &[four.clone(), four.clone()],
            |units| {
                spent += units;
                true
            },
            sum,
        )
        .unwrap();
        assert_eq!(spent, 16);
        assert_eq!(values(&both).len(), 7, "1+1 ..= 4+4");
        assert_eq!(combine(&[four.clone(), four.clone(), four], |_| true, sum).unwrap_err(), TooMany);
    }

    #[test]
    fn a_conversion_maps_every_path() {
        let text = |text: &str| alternative(Resolved::of(Value::Str(text.to_string())), None, None);
        let read = one_of([text("-1"), text("2")]).unwrap();
        let converted = map(read, |inner| match inner.value {
            Value::Str(text) => Resolved::of(text.parse().map_or(Value::Unknown(Unknown::Other), Value::Int)),
            other => Resolved::of(other),
        });
        assert_eq!(values(&converted), [Some(-1), Some(2)]);
    }
}
