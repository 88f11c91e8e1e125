//! OpenMP nesting: how many threads an `OMP_NUM_THREADS` value really starts.
//!
//! A list (`4,2`) gives one team size per nesting level, and libgomp then enables nested
//! parallelism up to its supported depth; levels past the list reuse its last count. So `1,64` runs
//! an outer team of one whose inner teams have 64 threads each, and a third level 64 times that.
//! A list in `OMP_PROC_BIND` (`spread,close`) enables nesting the same way, for a single count too.
//! `OMP_MAX_ACTIVE_LEVELS` (and libgomp's `OMP_MAX_ACTIVE_LEVELS_ALL`) and `OMP_NESTED` change how
//! many levels are active. The bound is the product of the counts over the active levels.

use super::Value;
use super::count::{Count, read};

/// How many nesting levels run in parallel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActiveLevels {
    /// At most this many (at least one).
    Limited(u64),
    /// As deep as the code nests, with the reason.
    Unlimited(String),
}

/// The active levels an environment allows, for an `OMP_NUM_THREADS` list of `list_len` counts.
///
/// A knob that is not read alike by every runtime counts as the worst case, unlimited.
pub fn active_levels<'a>(value: impl Fn(&str) -> Value<'a>, list_len: usize) -> ActiveLevels {
    // With both set, the larger is the worst case (libgomp's host value wins over `_ALL`).
    let mut most: Option<u64> = None;
    for name in ["OMP_MAX_ACTIVE_LEVELS", "OMP_MAX_ACTIVE_LEVELS_ALL"] {
        let levels = match value(name) {
            Value::Unset => continue,
            Value::Text("0") => 1,
            Value::Text(text) => match read(name, text) {
                Count::Levels(levels) if levels.len() == 1 => levels[0],
                _ => {
                    return ActiveLevels::Unlimited(format!(
                        "{name}={text:?} is not a plain count, so nesting may be unlimited"
                    ));
                }
            },
            Value::NotUtf8 => {
                return ActiveLevels::Unlimited(format!("{name} is not UTF-8, so nesting may be unlimited"));
            }
        };
        most = Some(most.map_or(levels, |most: u64| most.max(levels)));
    }
    if let Some(levels) = most {
        return ActiveLevels::Limited(levels);
    }
    let nested = match value("OMP_NESTED") {
        Value::Unset => None,
        Value::Text(text) if text.eq_ignore_ascii_case("true") => Some(true),
        Value::Text(text) if text.eq_ignore_ascii_case("false") => Some(false),
        Value::Text(text) => {
            return ActiveLevels::Unlimited(format!("OMP_NESTED={text:?} is not read alike, so nesting may be on"));
        }
        Value::NotUtf8 => return ActiveLevels::Unlimited("OMP_NESTED is not UTF-8, so nesting may be on".into()),
    };
    let bind_list = match value("OMP_PROC_BIND") {
        Value::Unset => false,
        Value::Text(text) => text.contains(','),
        Value::NotUtf8 => true,
    };
    match nested {
        Some(true) => ActiveLevels::Unlimited("OMP_NESTED=true enables nesting".into()),
        _ if list_len > 1 => ActiveLevels::Unlimited("a list enables nesting".into()),
        _ if bind_list => ActiveLevels::Unlimited("a list in OMP_PROC_BIND enables nesting".into()),
        _ => ActiveLevels::Limited(1),
    }
}

/// The most threads the teams of `levels` hold at once over `active` levels (levels past the
/// list reuse its last count); `None` when nothing bounds it.
pub fn team_bound(levels: &[u64], active: &ActiveLevels) -> Option<u64> {
    let (&last, listed) = levels.split_last()?;
    let listed_product = listed.iter().try_fold(1u64, |product, &count| product.checked_mul(count));
    let depth = match active {
        ActiveLevels::Limited(depth) => (*depth).max(1),
        ActiveLevels::Unlimited(_) if last == 1 => levels.len() as u64,
        ActiveLevels::Unlimited(_) => return None,
    };
    let listed_len = levels.len() as u64;
    if depth < listed_len {
        return levels[..depth as usize].iter().try_fold(1u64, |product, &count| product.checked_mul(count));
    }
    // The last count repeats on every level from the list's end to `depth`.
    let repeats = u32::try_from(depth - listed_len + 1).ok()?;
    listed_product?.checked_mul(last.checked_pow(repeats)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels_in(vars: &[(&str, &str)], list_len: usize) -> ActiveLevels {
        let owned: Vec<(String, String)> = vars.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        active_levels(
            |name| owned.iter().find(|(n, _)| n == name).map_or(Value::Unset, |(_, v)| Value::Text(v.as_str())),
            list_len,
        )
    }

    #[test]
    fn a_single_count_is_one_level_unless_nesting_is_enabled() {
        assert_eq!(levels_in(&[], 1), ActiveLevels::Limited(1));
        assert_eq!(levels_in(&[("OMP_NESTED", "false")], 1), ActiveLevels::Limited(1));
        assert!(matches!(levels_in(&[("OMP_NESTED", "TRUE")], 1), ActiveLevels::Unlimited(_)));
        assert!(matches!(levels_in(&[("OMP_NESTED", " true")], 1), ActiveLevels::Unlimited(_)));
        assert_eq!(levels_in(&[("OMP_MAX_ACTIVE_LEVELS", "3"), ("OMP_NESTED", "true")], 1), ActiveLevels::Limited(3));
        assert!(matches!(levels_in(&[("OMP_MAX_ACTIVE_LEVELS", "+3")], 1), ActiveLevels::Unlimited(_)));
    }

    #[test]
    fn a_list_enables_nesting() {
        assert!(matches!(levels_in(&[], 2), ActiveLevels::Unlimited(_)));
        assert!(matches!(levels_in(&[("OMP_PROC_BIND", "spread,close")], 1), ActiveLevels::Unlimited(_)));
        assert_eq!(levels_in(&[("OMP_PROC_BIND", "spread")], 1), ActiveLevels::Limited(1));
        assert_eq!(levels_in(&[("OMP_MAX_ACTIVE_LEVELS", "1")], 2), ActiveLevels::Limited(1));
        assert_eq!(
            levels_in(&[("OMP_MAX_ACTIVE_LEVELS", "1"), ("OMP_MAX_ACTIVE_LEVELS_ALL", "4")], 1),
            ActiveLevels::Limited(4)
        );
    }

    #[test]
    fn the_bound_multiplies_the_active_levels() {
        let unlimited = ActiveLevels::Unlimited(String::new());
        assert_eq!(team_bound(&[1, 64], &unlimited), None);
        assert_eq!(team_bound(&[4, 2, 1], &unlimited), Some(8));
        assert_eq!(team_bound(&[2, 1], &unlimited), Some(2));
        assert_eq!(team_bound(&[4], &ActiveLevels::Limited(1)), Some(4));
        assert_eq!(team_bound(&[4], &unlimited), None);
        assert_eq!(team_bound(&[1], &unlimited), Some(1));
        assert_eq!(team_bound(&[1, 64], &ActiveLevels::Limited(1)), Some(1));
        assert_eq!(team_bound(&[3, 2], &ActiveLevels::Limited(3)), Some(12));
        assert_eq!(team_bound(&[2], &ActiveLevels::Limited(3)), Some(8));
        assert_eq!(team_bound(&[2], &ActiveLevels::Limited(1000)), None);
        assert_eq!(team_bound(&[], &unlimited), None);
    }
}
