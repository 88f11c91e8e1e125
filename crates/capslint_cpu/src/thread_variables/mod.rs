//! The environment variables that size thread and process pools, in one table ([`table`]) read by
//! the Python rules, the manifest rules, `capslint runtime` and `capslint exec`, and how the
//! libraries read their values: [`grammar`] (each library's parser), [`count`] (one count or an
//! OpenMP list), [`nesting`] (how many threads a list really starts), [`spin`] (whether idle threads
//! spin). `runtime`, `exec` and the manifest rules all read
//! values through [`read_cap`] and [`spin::spinning`], so what one accepts the others accept.

pub mod count;
pub mod grammar;
pub mod nesting;
pub mod spin;
pub mod table;

pub use grammar::Grammar;
pub use spin::{PASSIVE, WAIT_POLICY};
pub use table::{
    Holds, LOKY_MAX_CPU_COUNT, OnExec, THREAD_VARIABLES, ThreadVariable, caps, find, is_cap, is_read_at_load,
    omp_fallback_reader, read_at_load, required_caps,
};

/// A variable's setting in an environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// The variable is not set.
    Unset,
    /// The variable is set to valid UTF-8 text (possibly empty).
    Text(&'a str),
    /// The variable is set to bytes that are not UTF-8.
    NotUtf8,
}

/// A count variable's value in an environment, read as every library that reads it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Not set.
    Unset,
    /// Set to the empty string: the libraries ignore it.
    Empty,
    /// Every reader gets at most `threads` threads (`None`: nested teams without bound).
    Threads {
        /// The bound, the product of the active nesting levels for an OpenMP list.
        threads: Option<u64>,
        /// How a list or nesting was counted.
        note: Option<String>,
    },
    /// The readers reject the value or read it differently: why.
    Refused(String),
}

/// Reads the count variable `name` in the environment that `value` looks up.
pub fn read_cap<'a>(name: &str, value: impl Fn(&str) -> Value<'a>) -> Reading {
    let counted = match value(name) {
        Value::Unset => return Reading::Unset,
        Value::NotUtf8 => count::not_utf8(),
        Value::Text(raw) => count::read(name, raw),
    };
    let levels = match counted {
        count::Count::Empty => return Reading::Empty,
        count::Count::Refused(why) => return Reading::Refused(why),
        count::Count::Levels(levels) => levels,
    };
    if !count::takes_list(name) {
        return Reading::Threads { threads: levels.first().copied(), note: None };
    }
    let active = nesting::active_levels(&value, levels.len());
    let threads = nesting::team_bound(&levels, &active);
    let note = match (&active, threads) {
        (nesting::ActiveLevels::Limited(1), _) if levels.len() == 1 => None,
        (nesting::ActiveLevels::Unlimited(why), None) => Some(format!(
            "{why}, and each nested level starts {} threads per thread: nested teams have no bound",
            levels.last().copied().unwrap_or_default()
        )),
        (nesting::ActiveLevels::Unlimited(why), Some(threads)) => {
            Some(format!("{why}: the nested teams hold at most {threads} threads"))
        }
        (nesting::ActiveLevels::Limited(depth), Some(threads)) => {
            Some(format!("{depth} active nesting levels: the nested teams hold at most {threads} threads"))
        }
        (nesting::ActiveLevels::Limited(depth), None) => {
            Some(format!("{depth} active nesting levels: the nested teams hold more threads than can be counted"))
        }
    };
    Reading::Threads { threads, note }
}
