//! A snapshot of the process environment that the runtime checks read and `exec` extends.
//!
//! Reading through a snapshot instead of `std::env` keeps every check a pure function of its
//! inputs: the tests build an [`Env`] by hand, and `exec --check` probes the environment that the
//! command will receive before it is applied.
//!
//! An environment block can hold one name twice (a parent can pass any array to `execve`). C's
//! `getenv`, which libgomp, OpenBLAS and CPython read through, returns the first entry, so the
//! snapshot keeps the first and records the name: `runtime` refuses such an environment and `exec`
//! passes the command exactly one entry per name.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

pub use capslint_cpu::thread_variables::Value;

/// An environment: variable names to values, ordered by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<OsString, OsString>,
    /// Names that appeared more than once, in name order.
    duplicates: Vec<OsString>,
}

impl Env {
    /// Captures the environment of the current process, every entry as `getenv` sees it.
    pub fn from_process() -> Self {
        Self::from_entries(std::env::vars_os())
    }

    /// An environment from entries in block order: the first entry of a name wins, as for
    /// `getenv`, and a repeated name is recorded.
    pub fn from_entries(entries: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let mut env = Self::default();
        for (name, value) in entries {
            match env.vars.entry(name) {
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                std::collections::btree_map::Entry::Occupied(slot) => {
                    if !env.duplicates.contains(slot.key()) {
                        env.duplicates.push(slot.key().clone());
                    }
                }
            }
        }
        env.duplicates.sort();
        env
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
        let name = name.into();
        self.duplicates.retain(|duplicate| *duplicate != name);
        self.vars.insert(name, value.into());
    }

    /// The names that appeared more than once, in name order.
    pub fn duplicates(&self) -> &[OsString] {
        &self.duplicates
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

    /// Iterates over every variable (one entry per name), in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }
}

impl<K: Into<OsString>, V: Into<OsString>> FromIterator<(K, V)> for Env {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self::from_entries(iter.into_iter().map(|(k, v)| (k.into(), v.into())))
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
    fn the_first_of_repeated_entries_wins_as_for_getenv() {
        let mut env: Env = [("OMP_NUM_THREADS", "64"), ("A", "x"), ("OMP_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "2")]
            .into_iter()
            .collect();
        assert_eq!(env.value("OMP_NUM_THREADS"), Value::Text("64"));
        assert_eq!(env.duplicates(), [OsString::from("OMP_NUM_THREADS")]);
        assert_eq!(env.iter().count(), 2);
        env.set("OMP_NUM_THREADS", "1");
        assert!(env.duplicates().is_empty());
    }

    #[test]
    fn finds_names_by_suffix_in_order() {
        let env: Env = [("Z_CPU_LIMIT", "1"), ("A_CPU_LIMIT", "2"), ("CPU_LIMITS", "3")].into_iter().collect();
        assert_eq!(env.names_ending_with("_CPU_LIMIT"), ["A_CPU_LIMIT", "Z_CPU_LIMIT"]);
    }
}
