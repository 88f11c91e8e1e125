//! Rule selection: `--select`, `--extend-select`, `--ignore` with codes, prefixes (`CAP1`), names or `ALL`.

use std::fmt;

use crate::registry::Rule;

/// A set of rules, as a bitset over the catalogue.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct RuleSet(u64);

const _: () = assert!(Rule::ALL.len() <= 64, "RuleSet is a u64 bitset");

impl RuleSet {
    /// No rule.
    pub const EMPTY: RuleSet = RuleSet(0);

    /// The rules that run when nothing is selected explicitly.
    pub fn defaults() -> RuleSet {
        Rule::ALL.iter().filter(|rule| rule.enabled_by_default()).copied().collect()
    }

    /// Whether `rule` is in the set.
    pub const fn contains(self, rule: Rule) -> bool {
        self.0 & (1 << rule as u32) != 0
    }

    /// Adds `rule`.
    pub fn insert(&mut self, rule: Rule) {
        self.0 |= 1 << rule as u32;
    }

    /// Removes `rule`.
    pub fn remove(&mut self, rule: Rule) {
        self.0 &= !(1 << rule as u32);
    }

    /// Adds every rule of `other`.
    pub fn union(self, other: RuleSet) -> RuleSet {
        RuleSet(self.0 | other.0)
    }

    /// Removes every rule of `other`.
    pub fn subtract(self, other: RuleSet) -> RuleSet {
        RuleSet(self.0 & !other.0)
    }

    /// Whether any rule of `other` is in the set.
    pub const fn intersects(self, other: RuleSet) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The rules in code order.
    pub fn iter(self) -> impl Iterator<Item = Rule> {
        Rule::ALL.iter().copied().filter(move |rule| self.contains(*rule))
    }
}

impl FromIterator<Rule> for RuleSet {
    fn from_iter<I: IntoIterator<Item = Rule>>(iter: I) -> Self {
        let mut set = RuleSet::EMPTY;
        for rule in iter {
            set.insert(rule);
        }
        set
    }
}

impl fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(Rule::code)).finish()
    }
}

/// A selector that matches no rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule selector `{0}`: expected a code (`CAP101`), a prefix (`CAP1`), a rule name or `ALL`")]
pub struct UnknownSelector(pub String);

/// Resolves one selector.
///
/// An exact code, a rule name or `ALL` selects every rule it names, including rules that are off by
/// default; a shorter prefix (`CAP`, `CAP2`) selects only the rules that are on by default.
pub fn resolve_selector(selector: &str) -> Result<RuleSet, UnknownSelector> {
    let selector = selector.trim();
    if selector.eq_ignore_ascii_case("ALL") {
        return Ok(Rule::ALL.iter().copied().collect());
    }
    if let Some(rule) = Rule::from_code_or_name(selector) {
        return Ok(std::iter::once(rule).collect());
    }
    let upper = selector.to_ascii_uppercase();
    let set: RuleSet = Rule::ALL
        .iter()
        .copied()
        .filter(|rule| rule.enabled_by_default() && !upper.is_empty() && rule.code().starts_with(&upper))
        .collect();
    if set.is_empty() { Err(UnknownSelector(selector.to_string())) } else { Ok(set) }
}

/// Resolves a list of selectors into one set.
pub fn resolve_selectors<'a>(selectors: impl IntoIterator<Item = &'a str>) -> Result<RuleSet, UnknownSelector> {
    selectors.into_iter().try_fold(RuleSet::EMPTY, |set, selector| Ok(set.union(resolve_selector(selector)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_codes_names_and_all() {
        let python = resolve_selector("CAP1").unwrap();
        assert!(python.contains(Rule::NJobsAllCores));
        assert!(python.contains(Rule::KpoMissingCpuLimitRef));
        assert!(!python.contains(Rule::SyntaxError));
        assert_eq!(resolve_selector("cap101").unwrap().iter().collect::<Vec<_>>(), [Rule::NJobsAllCores]);
        assert_eq!(resolve_selector("late-thread-cap").unwrap().iter().collect::<Vec<_>>(), [Rule::LateThreadCap]);
        assert_eq!(resolve_selector("ALL").unwrap().iter().count(), Rule::ALL.len());
        assert!(resolve_selector("CAP9").is_err());
        assert!(resolve_selector("").is_err());
        assert!(resolve_selector("E501").is_err());
    }

    #[test]
    fn set_operations() {
        let all = resolve_selector("ALL").unwrap();
        let python = resolve_selector("CAP1").unwrap();
        let rest = all.subtract(python);
        assert!(!rest.intersects(python));
        assert_eq!(rest.union(python), all);
    }
}
