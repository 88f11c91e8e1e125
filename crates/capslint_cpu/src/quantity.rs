//! Kubernetes `resource.Quantity`, parsed with apimachinery's grammar (`parseQuantityString` and the
//! suffix tables of `k8s.io/apimachinery/pkg/api/resource`):
//!
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= "e" <signedInteger> | "E" <signedInteger>
//! <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! ```
//!
//! A number carries one suffix: `2e3m` is invalid, `1e3`, `1500m`, `.5`, `1.` and `+4` are valid. No
//! whitespace is allowed. Values are kept in thousandths ("millis"), rounded up as `MilliValue()` does.
//!
//! The CPU limit a running pod reads through the Downward API is parsed by another, narrower grammar:
//! [`capslint_pod::limit::parse_quantity`]. They differ on purpose. This one judges manifests, so it
//! must accept every form the API server accepts (a sign, an exponent, any suffix, sub-millicore
//! precision rounded up, zero): rejecting one would report a valid limit as invalid. The runtime's reads
//! an environment variable that the Downward API fills with a whole number (the limit divided by the
//! divisor, rounded up: [`Quantity::ceil`] for the default divisor) or that a person writes as CPUs or
//! millicores, and it rejects everything else with a reason. Where both accept a text they agree on its
//! value; the tests of `runtime::limit` pin that and every difference.

use std::fmt;

/// A valid quantity, in thousandths of its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity {
    millis: i128,
}

/// Text that is not a Kubernetes quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidQuantity;

impl fmt::Display for InvalidQuantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a valid Kubernetes quantity")
    }
}

/// The most significant digits kept; quantities beyond this precision are rounded up.
const MAX_DIGITS: usize = 36;

fn decimal_suffix(suffix: &str) -> Option<i64> {
    Some(match suffix {
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "" => 0,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        _ => return None,
    })
}

fn binary_suffix(suffix: &str) -> Option<u32> {
    Some(match suffix {
        "Ki" => 10,
        "Mi" => 20,
        "Gi" => 30,
        "Ti" => 40,
        "Pi" => 50,
        "Ei" => 60,
        _ => return None,
    })
}

/// `strconv.ParseInt(text, 10, 64)`: an optional sign and at least one digit.
fn parse_exponent(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Splits `text` into sign, integer digits, fraction digits and suffix, as `parseQuantityString` does.
fn split(text: &str) -> Result<(bool, &str, &str, &str), InvalidQuantity> {
    let bytes = text.as_bytes();
    let mut position = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            position = 1;
        }
        Some(b'+') => position = 1,
        _ => {}
    }
    let digits_end = |from: usize| from + bytes[from..].iter().take_while(|byte| byte.is_ascii_digit()).count();
    let integer_end = digits_end(position);
    let integer = &text[position..integer_end];
    position = integer_end;
    let mut fraction = "";
    if bytes.get(position) == Some(&b'.') {
        let fraction_end = digits_end(position + 1);
        fraction = &text[position + 1..fraction_end];
        position = fraction_end;
    }
    let suffix_start = position;
    while bytes.get(position).is_some_and(|byte| b"eEinumkKMGTP".contains(byte)) {
        position += 1;
    }
    if matches!(bytes.get(position), Some(b'+' | b'-')) {
        position += 1;
    }
    position = digits_end(position);
    if position != bytes.len() {
        return Err(InvalidQuantity);
    }
    Ok((positive, integer, fraction, &text[suffix_start..]))
}

impl Quantity {
    /// Parses a quantity written as Kubernetes accepts it.
    pub fn parse(text: &str) -> Result<Quantity, InvalidQuantity> {
        if text.is_empty() {
            return Err(InvalidQuantity);
        }
        let (positive, integer, fraction, suffix) = split(text)?;
        let (exponent10, exponent2) = if let Some(exponent) = decimal_suffix(suffix) {
            (exponent, 0)
        } else if let Some(exponent) = binary_suffix(suffix) {
            (0, exponent)
        } else if suffix.len() > 1 && suffix.starts_with(['e', 'E']) {
            (parse_exponent(&suffix[1..]).ok_or(InvalidQuantity)?, 0)
        } else {
            return Err(InvalidQuantity);
        };
        let millis = to_millis(integer, fraction, exponent10, exponent2);
        Ok(Quantity { millis: if positive { millis } else { -millis } })
    }

    /// The value in thousandths, rounded up (`MilliValue()`).
    pub fn millis(self) -> i128 {
        self.millis
    }

    /// Whether the value is a whole number of units (`3`, `3000m`, `3Ki`).
    pub fn is_whole(self) -> bool {
        self.millis % 1000 == 0
    }

    /// The value rounded down to whole units.
    pub fn floor(self) -> i128 {
        self.millis.div_euclid(1000)
    }

    /// The value rounded up to whole units, as the Downward API rounds CPU.
    pub fn ceil(self) -> i128 {
        -(-self.millis).div_euclid(1000)
    }

    /// Whether the value is zero.
    pub fn is_zero(self) -> bool {
        self.millis == 0
    }

    /// Whether the value is below zero.
    pub fn is_negative(self) -> bool {
        self.millis < 0
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_whole() { write!(f, "{}", self.millis / 1000) } else { write!(f, "{}m", self.millis) }
    }
}

/// `integer.fraction x 10^exponent10 x 2^exponent2 x 1000`, rounded up, saturating.
fn to_millis(integer: &str, fraction: &str, exponent10: i64, exponent2: u32) -> i128 {
    let digits: String = integer.chars().chain(fraction.chars()).skip_while(|digit| *digit == '0').collect();
    let mut scale = exponent10 + 3 - fraction.len() as i64;
    let significant = digits.trim_end_matches('0');
    scale += (digits.len() - significant.len()) as i64;
    if significant.is_empty() {
        return 0;
    }
    let (kept, dropped) = significant.split_at(significant.len().min(MAX_DIGITS));
    scale += dropped.len() as i64;
    let mut mantissa: i128 = kept.parse().unwrap_or(i128::MAX);
    let mut inexact = !dropped.is_empty();
    mantissa = mantissa.checked_shl(exponent2).filter(|shifted| shifted >> exponent2 == mantissa).unwrap_or(i128::MAX);
    if scale >= 0 {
        let factor = 10_i128.checked_pow(scale.min(u32::MAX as i64) as u32);
        return factor.and_then(|factor| mantissa.checked_mul(factor)).unwrap_or(i128::MAX);
    }
    let Some(divisor) = 10_i128.checked_pow((-scale).min(u32::MAX as i64) as u32) else {
        return 1;
    };
    inexact |= mantissa % divisor != 0;
    mantissa / divisor + i128::from(inexact)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis(text: &str) -> Option<i128> {
        Quantity::parse(text).ok().map(Quantity::millis)
    }

    #[test]
    fn plain_numbers_and_millicores() {
        assert_eq!(millis("4"), Some(4000));
        assert_eq!(millis("4000m"), Some(4000));
        assert_eq!(millis("1500m"), Some(1500));
        assert_eq!(millis("0.5"), Some(500));
        assert_eq!(millis("1.5"), Some(1500));
        assert_eq!(millis(".5"), Some(500));
        assert_eq!(millis("1."), Some(1000));
        assert_eq!(millis("+4"), Some(4000));
        assert_eq!(millis("-1"), Some(-1000));
        assert_eq!(millis("007"), Some(7000));
        assert_eq!(millis("0"), Some(0));
        assert_eq!(millis("100n"), Some(1));
        assert_eq!(millis("250u"), Some(1));
        assert_eq!(millis("0.0001"), Some(1));
    }

    #[test]
    fn suffixes_and_exponents() {
        assert_eq!(millis("1k"), Some(1_000_000));
        assert_eq!(millis("1Ki"), Some(1_024_000));
        assert_eq!(millis("0.5Ki"), Some(512_000));
        assert_eq!(millis("16Gi"), Some(16 * (1 << 30) * 1000));
        assert_eq!(millis("1e3"), Some(1_000_000));
        assert_eq!(millis("1E3"), Some(1_000_000));
        assert_eq!(millis("1e+3"), Some(1_000_000));
        assert_eq!(millis("5e-1"), Some(500));
        assert_eq!(millis("1E"), Some(1_000_000_000_000_000_000_000));
        assert!(millis("1e400").is_some());
    }

    #[test]
    fn invalid_forms() {
        for text in ["", "2e3m", "1K", "1Kb", "1.5.5", " 4", "4 ", "1e", "1mi", "abc", "1Mi2", "four", "1,5", "0x10"] {
            assert_eq!(Quantity::parse(text), Err(InvalidQuantity), "{text:?} must be invalid");
        }
    }

    #[test]
    fn whole_floor_ceil() {
        let half = Quantity::parse("3500m").unwrap();
        assert!(!half.is_whole());
        assert_eq!(half.floor(), 3);
        assert_eq!(half.ceil(), 4);
        let four = Quantity::parse("4").unwrap();
        assert!(four.is_whole());
        assert_eq!((four.floor(), four.ceil()), (4, 4));
        assert_eq!(Quantity::parse("250m").unwrap().ceil(), 1);
        assert_eq!(Quantity::parse("3000m").unwrap(), Quantity::parse("3").unwrap());
        assert_eq!(Quantity::parse("1Gi").unwrap(), Quantity::parse("1073741824").unwrap());
        assert_eq!(Quantity::parse("1500m").unwrap().to_string(), "1500m");
    }
}
