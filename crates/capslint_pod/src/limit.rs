//! The CPU limit the pod declares through the Downward API (`resourceFieldRef: limits.cpu`).
//!
//! Which variable: `--limit-env NAME` (or the config key `runtime.limit-env`) when given;
//! otherwise `CPU_LIMIT` when set; otherwise the single variable whose name ends in
//! `_CPU_LIMIT`. No variable, or more than one candidate, means the limit is undeclared.
//!
//! Its value: a plain number is CPUs (`2`, `2.5`), a trailing `m` is millicores (`1500m`).
//! With the default divisor (`1`) Kubernetes writes the limit rounded up to whole CPUs
//! (1500m becomes `2`), which the quota comparison reports as `limit_mismatch`. With
//! `divisor: 1m` it writes bare millicores (`1500`), which this module reads as CPUs: use the
//! default divisor, or write the `m` yourself.

use std::fmt;

use super::env::{Env, Value};

pub use capslint_cpu::DEFAULT_LIMIT_ENV;

/// The suffix that marks a candidate variable when `CPU_LIMIT` is not set either.
pub const LIMIT_ENV_SUFFIX: &str = "_CPU_LIMIT";

/// A declared CPU limit, as read from one environment variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredLimit {
    /// The variable it was read from.
    pub name: String,
    /// The value as written in the environment.
    pub raw: String,
    /// The value in millicores (1000 per CPU).
    pub millicores: u64,
}

impl DeclaredLimit {
    /// The limit in CPUs, possibly fractional.
    pub fn cpus(&self) -> f64 {
        self.millicores as f64 / 1000.0
    }

    /// The limit in whole CPUs, rounded down.
    pub fn whole_cpus(&self) -> u64 {
        self.millicores / 1000
    }
}

/// Why no declared limit could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undeclared {
    /// The variable named by `--limit-env` is not set.
    NotSet {
        /// The variable that was looked up.
        name: String,
    },
    /// No `--limit-env`, no `CPU_LIMIT` and no variable ending in `_CPU_LIMIT`.
    NoCandidate,
    /// Several variables end in `_CPU_LIMIT` and none was chosen with `--limit-env`.
    Ambiguous {
        /// The candidate names, in order.
        names: Vec<String>,
    },
    /// The variable is set but its value is not a CPU quantity.
    Invalid {
        /// The variable that was read.
        name: String,
        /// Its value, lossily decoded for display.
        raw: String,
        /// What is wrong with it.
        error: QuantityError,
    },
}

impl Undeclared {
    /// The variable involved, when there is exactly one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::NotSet { name } | Self::Invalid { name, .. } => Some(name),
            Self::NoCandidate | Self::Ambiguous { .. } => None,
        }
    }
}

impl fmt::Display for Undeclared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSet { name } => {
                write!(f, "{name} is not set: declare it with valueFrom.resourceFieldRef.resource: limits.cpu")
            }
            Self::NoCandidate => write!(
                f,
                "no CPU limit variable: set {DEFAULT_LIMIT_ENV} (or pass --limit-env) from \
                 valueFrom.resourceFieldRef.resource: limits.cpu"
            ),
            Self::Ambiguous { names } => write!(
                f,
                "several variables end in {LIMIT_ENV_SUFFIX} ({}): choose one with --limit-env",
                names.join(", ")
            ),
            Self::Invalid { name, raw, error } => {
                write!(f, "{name}={raw:?} is not a CPU quantity: {error}")
            }
        }
    }
}

/// Why a text is not a CPU quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// Nothing but whitespace.
    #[error("it is empty")]
    Empty,
    /// Not UTF-8.
    #[error("it is not UTF-8")]
    NotUtf8,
    /// Not of the form `2`, `2.5` or `1500m`.
    #[error("expected whole or decimal CPUs (2, 2.5) or millicores (1500m)")]
    Syntax,
    /// Finer than one millicore, which Kubernetes does not allow.
    #[error("finer than 1m")]
    TooPrecise,
    /// Zero CPUs.
    #[error("it is zero")]
    Zero,
    /// Too large to represent.
    #[error("it is too large")]
    TooLarge,
}

/// Parses a CPU quantity into millicores: `2` and `2.5` are CPUs, `1500m` is millicores.
///
/// A narrower grammar than the one manifests are judged by ([`capslint_cpu::quantity::Quantity::parse`],
/// apimachinery's), on purpose. The text is the value of an environment variable: the Downward API
/// writes `limits.cpu` there as a whole number (the limit divided by the divisor and rounded up, `2` for
/// `1500m`), or a person writes CPUs (`2.5`) or millicores (`1500m`) by hand. Anything else is more likely
/// a mistake than a limit, so it is rejected with the reason, and the limit counts as undeclared.
/// Compared with the manifests' grammar:
///
/// - whitespace around the value is trimmed (a value read from a file ends in a newline); manifests allow
///   none;
/// - a sign, an exponent (`1e3`) and every suffix but `m` (`1k`, `1Ki`) are rejected; manifests accept
///   them;
/// - zero is rejected (there is no CPU to size pools by); in a manifest it is a value (no limit);
/// - precision finer than a millicore (`0.0001`, `1.5m`) is rejected; a manifest rounds it up;
/// - more millicores than a `u64` holds is rejected; a manifest's value saturates.
///
/// A text both accept has the same value in both.
pub fn parse_quantity(text: &str) -> Result<u64, QuantityError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(QuantityError::Empty);
    }
    let millicores = if let Some(digits) = text.strip_suffix('m') {
        parse_digits(digits)?
    } else {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        if whole.is_empty() && fraction.is_empty() {
            return Err(QuantityError::Syntax);
        }
        let whole = if whole.is_empty() { 0 } else { parse_digits(whole)? };
        let fraction = fraction.trim_end_matches('0');
        if fraction.len() > 3 {
            return Err(if fraction.bytes().all(|b| b.is_ascii_digit()) {
                QuantityError::TooPrecise
            } else {
                QuantityError::Syntax
            });
        }
        let fraction_millis =
            if fraction.is_empty() { 0 } else { parse_digits(fraction)? * 10u64.pow(3 - fraction.len() as u32) };
        whole.checked_mul(1000).and_then(|m| m.checked_add(fraction_millis)).ok_or(QuantityError::TooLarge)?
    };
    if millicores == 0 {
        return Err(QuantityError::Zero);
    }
    Ok(millicores)
}

fn parse_digits(digits: &str) -> Result<u64, QuantityError> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(QuantityError::Syntax);
    }
    digits.parse().map_err(|_| QuantityError::TooLarge)
}

/// Finds and reads the declared limit in `env`; `explicit` is `--limit-env` (or the config key).
pub fn resolve(env: &Env, explicit: Option<&str>) -> Result<DeclaredLimit, Undeclared> {
    let name = match explicit {
        Some(name) => name.to_owned(),
        None if env.value(DEFAULT_LIMIT_ENV) != Value::Unset => DEFAULT_LIMIT_ENV.to_owned(),
        None => {
            let mut names = env.names_ending_with(LIMIT_ENV_SUFFIX);
            match names.len() {
                0 => return Err(Undeclared::NoCandidate),
                1 => names.remove(0),
                _ => return Err(Undeclared::Ambiguous { names }),
            }
        }
    };
    let invalid = |raw: &str, error| Undeclared::Invalid { name: name.clone(), raw: raw.to_owned(), error };
    match env.value(&name) {
        Value::Unset => Err(Undeclared::NotSet { name }),
        Value::NotUtf8 => Err(invalid("<not UTF-8>", QuantityError::NotUtf8)),
        Value::Text(raw) => match parse_quantity(raw) {
            Ok(millicores) => Ok(DeclaredLimit { name: name.clone(), raw: raw.to_owned(), millicores }),
            Err(error) => Err(invalid(raw, error)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_cpu::quantity::Quantity;

    #[test]
    fn parses_cpus_and_millicores() {
        assert_eq!(parse_quantity("2"), Ok(2000));
        assert_eq!(parse_quantity("2.5"), Ok(2500));
        assert_eq!(parse_quantity("0.25"), Ok(250));
        assert_eq!(parse_quantity(".5"), Ok(500));
        assert_eq!(parse_quantity("3."), Ok(3000));
        assert_eq!(parse_quantity("1.5000"), Ok(1500));
        assert_eq!(parse_quantity("1500m"), Ok(1500));
        assert_eq!(parse_quantity(" 4\n"), Ok(4000));
        // A bare number is CPUs, whatever its size (divisor 1m output is not guessed at).
        assert_eq!(parse_quantity("1500"), Ok(1_500_000));
    }

    #[test]
    fn rejects_what_is_not_a_cpu_quantity() {
        assert_eq!(parse_quantity(""), Err(QuantityError::Empty));
        assert_eq!(parse_quantity("  "), Err(QuantityError::Empty));
        assert_eq!(parse_quantity("0"), Err(QuantityError::Zero));
        assert_eq!(parse_quantity("0m"), Err(QuantityError::Zero));
        assert_eq!(parse_quantity("0.0001"), Err(QuantityError::TooPrecise));
        assert_eq!(parse_quantity("1.5m"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("-1"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("+1"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("1e3"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("2 CPUs"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("."), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("m"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("1.2.3"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("1.abcd"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("٣"), Err(QuantityError::Syntax));
        assert_eq!(parse_quantity("99999999999999999999"), Err(QuantityError::TooLarge));
        assert_eq!(parse_quantity("18446744073709552"), Err(QuantityError::TooLarge));
    }

    /// What the manifests' grammar reads `text` as, in millicores.
    fn manifest_millis(text: &str) -> Option<i128> {
        Quantity::parse(text).ok().map(Quantity::millis)
    }

    #[test]
    fn the_manifest_grammar_accepts_what_this_one_rejects() {
        for (text, error, millis) in [
            ("+1", QuantityError::Syntax, 1000),
            ("-1", QuantityError::Syntax, -1000),
            ("1e3", QuantityError::Syntax, 1_000_000),
            ("1k", QuantityError::Syntax, 1_000_000),
            ("1Ki", QuantityError::Syntax, 1_024_000),
            ("1.5m", QuantityError::Syntax, 2),
            ("0.0001", QuantityError::TooPrecise, 1),
            ("0", QuantityError::Zero, 0),
            ("0m", QuantityError::Zero, 0),
            ("18446744073709552", QuantityError::TooLarge, 18_446_744_073_709_552_000),
        ] {
            assert_eq!(parse_quantity(text), Err(error), "{text:?}");
            assert_eq!(manifest_millis(text), Some(millis), "{text:?}");
        }
        // Whitespace the other way round: trimmed here, refused in a manifest.
        assert_eq!(parse_quantity(" 4\n"), Ok(4000));
        assert_eq!(manifest_millis(" 4\n"), None);
    }

    #[test]
    fn the_downward_api_value_of_a_manifest_limit_reads_as_its_ceiling() {
        // With the default divisor the kubelet writes the limit rounded up to whole CPUs.
        for limit in ["1500m", "2", "250m", "0.5", "3.001", "1e1", "64"] {
            let quantity = Quantity::parse(limit).unwrap();
            let written = quantity.ceil().to_string();
            assert_eq!(parse_quantity(&written).map(i128::from), Ok(quantity.ceil() * 1000), "{limit:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn what_this_grammar_accepts_the_manifest_grammar_reads_the_same(
            text in r"\s?[+-]?[0-9]{0,21}(\.[0-9]{0,5})?(m|k|Ki|e3|E|n)?\s?",
        ) {
            if let Ok(millicores) = parse_quantity(&text) {
                proptest::prop_assert_eq!(manifest_millis(text.trim()), Some(i128::from(millicores)));
            }
        }
    }

    fn env(vars: &[(&str, &str)]) -> Env {
        vars.iter().copied().collect()
    }

    #[test]
    fn explicit_name_wins() {
        let found = resolve(&env(&[("CPU_LIMIT", "4"), ("MY", "2")]), Some("MY")).unwrap();
        assert_eq!((found.name.as_str(), found.millicores), ("MY", 2000));
        assert_eq!(resolve(&env(&[("CPU_LIMIT", "4")]), Some("MY")), Err(Undeclared::NotSet { name: "MY".into() }));
    }

    #[test]
    fn falls_back_to_cpu_limit_then_to_a_single_suffixed_name() {
        let found = resolve(&env(&[("CPU_LIMIT", "1"), ("A_CPU_LIMIT", "2")]), None).unwrap();
        assert_eq!(found.name, "CPU_LIMIT");
        let found = resolve(&env(&[("CVN_POD_CPU_LIMIT", "1500m")]), None).unwrap();
        assert_eq!((found.name.as_str(), found.millicores), ("CVN_POD_CPU_LIMIT", 1500));
        assert_eq!(found.whole_cpus(), 1);
        assert_eq!(resolve(&env(&[]), None), Err(Undeclared::NoCandidate));
        assert_eq!(
            resolve(&env(&[("A_CPU_LIMIT", "1"), ("B_CPU_LIMIT", "2")]), None),
            Err(Undeclared::Ambiguous { names: vec!["A_CPU_LIMIT".into(), "B_CPU_LIMIT".into()] })
        );
    }

    #[test]
    fn an_invalid_value_is_undeclared_with_the_reason() {
        let err = resolve(&env(&[("CPU_LIMIT", "")]), None).unwrap_err();
        assert_eq!(err.name(), Some("CPU_LIMIT"));
        assert_eq!(err.to_string(), "CPU_LIMIT=\"\" is not a CPU quantity: it is empty");
        let err = resolve(&env(&[("CPU_LIMIT", "lots")]), None).unwrap_err();
        assert!(matches!(err, Undeclared::Invalid { error: QuantityError::Syntax, .. }));
    }
}
