//! A snapshot of the process environment that the runtime checks read and `exec` extends.
//!
//! Reading through a snapshot instead of `std::env` keeps every check a pure function of its
//! inputs: the tests build an [`Env`] by hand, and `exec --check` probes the environment that the
//! command will receive before it is applied.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// What a variable holds, as the checks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// The variable is not set.
    Unset,
    /// The variable is set to valid UTF-8 text (possibly empty).
    Text(&'a str),
    /// The variable is set to bytes that are not UTF-8.
    NotUtf8,
}

/// An environment: variable names to values, ordered by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<OsString, OsString>,
}

impl Env {
    /// Captures the environment of the current process.
    pub fn from_process() -> Self {
        std::env::vars_os().collect()
    }

    /// Looks up a variable.
    pub fn value(&self, name: &str) -> Value<'_> {
        match self.vars.get(OsStr::new(name)) {
            None => Value::Unset,
            Some(value) => value.to_str().map_or(Value::NotUtf8, Value::Text),
        }
    }

    /// Sets a variable, replacing any previous value.
    pub fn set(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) {
        self.vars.insert(name.into(), value.into());
    }

    /// Names of the set variables whose UTF-8 name ends with `suffix`, in name order.
    pub fn names_ending_with(&self, suffix: &str) -> Vec<String> {
        self.vars
            .keys()
            .filter_map(|name| name.to_str())
            .filter(|name| name.ends_with(suffix))
            .map(str::to_owned)
            .collect()
    }

    /// Iterates over every variable, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }
}

impl<K: Into<OsString>, V: Into<OsString>> FromIterator<(K, V)> for Env {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self { vars: iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn distinguishes_unset_text_and_non_utf8() {
        let env: Env = [
            (OsString::from("A"), OsString::from("1")),
            (OsString::from("B"), OsString::from_vec(vec![0xff, 0xfe])),
            (OsString::from("C"), OsString::new()),
        ]
        .into_iter()
        .collect();
        assert_eq!(env.value("A"), Value::Text("1"));
        assert_eq!(env.value("B"), Value::NotUtf8);
        assert_eq!(env.value("C"), Value::Text(""));
        assert_eq!(env.value("D"), Value::Unset);
    }

    #[test]
    fn finds_names_by_suffix_in_order() {
        let env: Env = [("Z_CPU_LIMIT", "1"), ("A_CPU_LIMIT", "2"), ("CPU_LIMITS", "3")].into_iter().collect();
        assert_eq!(env.names_ending_with("_CPU_LIMIT"), ["A_CPU_LIMIT", "Z_CPU_LIMIT"]);
    }
}
