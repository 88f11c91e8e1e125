//! Whether idle OpenMP threads spin: `OMP_WAIT_POLICY` and the runtime knobs that override it.
//!
//! libgomp spins `GOMP_SPINCOUNT` times at a barrier whatever the policy says (`infinite` spins
//! forever); LLVM's and Intel's runtime spin for `KMP_BLOCKTIME` milliseconds, and all the time in
//! `KMP_LIBRARY=turnaround` mode. Under a CFS quota a spinning thread burns the quota that the working
//! threads need. Only the exact values every runtime reads as "sleep" count as passive.

use super::Value;

/// The OpenMP wait policy variable; `passive` makes idle threads sleep instead of spin.
pub const WAIT_POLICY: &str = "OMP_WAIT_POLICY";

/// The value `OMP_WAIT_POLICY` must have.
pub const PASSIVE: &str = "passive";

/// The knobs that make threads spin despite a passive policy, in the order they are reported.
pub const SPIN_KNOBS: [&str; 3] = ["GOMP_SPINCOUNT", "KMP_BLOCKTIME", "KMP_LIBRARY"];

/// Why idle threads spin: the variable, its value as written, and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spinning {
    /// The variable.
    pub name: &'static str,
    /// The value as written (`None` when unset).
    pub raw: Option<String>,
    /// How the runtimes read it.
    pub why: String,
}

/// How `OMP_WAIT_POLICY`'s value is read: `Ok(())` when every runtime reads it as passive.
pub fn wait_policy(value: Value<'_>) -> Result<(), Spinning> {
    let spinning =
        |raw: Option<&str>, why: &str| Spinning { name: WAIT_POLICY, raw: raw.map(str::to_owned), why: why.into() };
    match value {
        Value::Text(text) if text.eq_ignore_ascii_case(PASSIVE) => Ok(()),
        Value::Unset => Err(spinning(
            None,
            "not set: idle OpenMP threads spin at barriers before they sleep (libgomp about 300,000 \
             times, LLVM's runtime 200 ms)",
        )),
        Value::Text("") => Err(spinning(Some(""), "empty: libgomp rejects it and idle threads spin before they sleep")),
        Value::Text(text) if text.eq_ignore_ascii_case("active") => {
            Err(spinning(Some(text), "idle OpenMP threads spin at barriers"))
        }
        Value::Text(text) => Err(spinning(
            Some(text),
            "not exactly `passive`: libgomp skips only ASCII white space, LLVM's runtime matches differently, \
             and a value a runtime rejects leaves its threads spinning",
        )),
        Value::NotUtf8 => Err(spinning(Some("<not UTF-8>"), "not UTF-8 text")),
    }
}

/// How one spin knob's value is read: `Ok(())` when it leaves a passive policy passive.
pub fn spin_knob(name: &'static str, value: Value<'_>) -> Result<(), Spinning> {
    let text = match value {
        Value::Unset => return Ok(()),
        Value::Text(text) => text,
        Value::NotUtf8 => {
            return Err(Spinning { name, raw: Some("<not UTF-8>".into()), why: "not UTF-8 text".into() });
        }
    };
    let why = match name {
        "GOMP_SPINCOUNT" | "KMP_BLOCKTIME" if text == "0" => return Ok(()),
        "KMP_LIBRARY" if text == "throughput" || text == "serial" => return Ok(()),
        "GOMP_SPINCOUNT" | "KMP_BLOCKTIME" if is_infinite(text) => "idle threads spin forever at barriers, \
                                                                    whatever OMP_WAIT_POLICY says"
            .to_owned(),
        "GOMP_SPINCOUNT" if is_digits(text) => {
            format!("libgomp spins {text} times at each barrier before sleeping, overriding OMP_WAIT_POLICY=passive")
        }
        "KMP_BLOCKTIME" if is_digits(text) => format!(
            "LLVM's and Intel's OpenMP runtime spin {text} ms at each barrier before sleeping, overriding \
             OMP_WAIT_POLICY=passive"
        ),
        "KMP_LIBRARY" if text.len() >= 2 && "turnaround".starts_with(&text.to_ascii_lowercase()) => {
            "turnaround mode: LLVM's and Intel's OpenMP runtime keep idle threads spinning".to_owned()
        }
        _ => format!(
            "{text:?} is not a value every runtime reads alike (accepted: {})",
            if name == "KMP_LIBRARY" { "`throughput` or `serial`" } else { "`0`" }
        ),
    };
    Err(Spinning { name, raw: Some(text.to_owned()), why })
}

/// Every reason idle threads of `value`'s environment spin: the policy first, then each knob.
pub fn spinning<'a>(value: impl Fn(&str) -> Value<'a>) -> Vec<Spinning> {
    let policy = wait_policy(value(WAIT_POLICY)).err();
    policy.into_iter().chain(SPIN_KNOBS.iter().filter_map(|name| spin_knob(name, value(name)).err())).collect()
}

fn is_infinite(text: &str) -> bool {
    text.eq_ignore_ascii_case("infinite") || text.eq_ignore_ascii_case("infinity")
}

fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_passive_is_passive() {
        assert!(wait_policy(Value::Text("passive")).is_ok());
        assert!(wait_policy(Value::Text("PASSIVE")).is_ok());
        for spinning in ["", "active", " passive", "passive ", "\u{a0}passive", "passiv", "pass"] {
            assert!(wait_policy(Value::Text(spinning)).is_err(), "{spinning:?}");
        }
        assert!(wait_policy(Value::Unset).is_err());
        assert!(wait_policy(Value::NotUtf8).is_err());
    }

    #[test]
    fn spin_knobs_that_override_passive_are_reported() {
        for (name, ok) in [("GOMP_SPINCOUNT", "0"), ("KMP_BLOCKTIME", "0"), ("KMP_LIBRARY", "throughput")] {
            assert!(spin_knob(name, Value::Text(ok)).is_ok(), "{name}={ok}");
            assert!(spin_knob(name, Value::Unset).is_ok(), "{name}");
        }
        let cases = [
            ("GOMP_SPINCOUNT", "infinite", "forever"),
            ("GOMP_SPINCOUNT", "INFINITY", "forever"),
            ("GOMP_SPINCOUNT", "300000", "300000 times"),
            ("GOMP_SPINCOUNT", "10k", "not a value"),
            ("GOMP_SPINCOUNT", " 0", "not a value"),
            ("KMP_BLOCKTIME", "infinite", "forever"),
            ("KMP_BLOCKTIME", "200", "200 ms"),
            ("KMP_LIBRARY", "turnaround", "turnaround"),
            ("KMP_LIBRARY", "TU", "turnaround"),
            ("KMP_LIBRARY", "Throughput ", "not a value"),
        ];
        for (name, raw, says) in cases {
            let spinning = spin_knob(name, Value::Text(raw)).unwrap_err();
            assert!(spinning.why.contains(says), "{name}={raw:?}: {}", spinning.why);
        }
    }

    #[test]
    fn lists_the_policy_then_the_knobs() {
        let env = [("OMP_WAIT_POLICY", "passive"), ("GOMP_SPINCOUNT", "infinite"), ("KMP_BLOCKTIME", "5")];
        let value = |name: &str| env.iter().find(|(n, _)| *n == name).map_or(Value::Unset, |(_, v)| Value::Text(v));
        let names: Vec<&str> = spinning(value).iter().map(|s| s.name).collect();
        assert_eq!(names, ["GOMP_SPINCOUNT", "KMP_BLOCKTIME"]);
    }
}
