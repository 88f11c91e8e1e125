//! `capslint exec`: set every cap from the effective limit, then become the command.
//!
//! A cap the user left unset or empty is set to the limit, and `OMP_WAIT_POLICY` to `passive`.
//! Then the environment the command will receive is read exactly as `capslint runtime` reads it
//! ([`Caps::read`], the libraries' own grammars, nested OpenMP teams multiplied, spin knobs) and
//! the start is refused on any problem: a user's value above the limit or read differently by the
//! libraries, a policy other than `passive`, a knob that keeps threads spinning. The command gets
//! exactly that environment, one entry per name (the first of repeated entries, which C's `getenv`
//! reads), and replaces this process (`execvp`): same PID, so signals and the exit status pass
//! straight through. As PID 1 (the container's init), unless told otherwise, it runs the command as
//! its child instead and stays its init ([`super::init`]): forwarding signals, reaping zombies, and
//! exiting with the command's status.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::assess;
use super::caps::{self, CapValue, Caps};
use super::env::{Env, Value};
use super::init::{self, Ended};
use super::verdict::Verdict;
use capslint_cpu::thread_variables::{OnExec, THREAD_VARIABLES};

/// What `exec` will change in the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The effective limit.
    pub limit: u64,
    /// Variables set, with their new values.
    pub set: Vec<(&'static str, String)>,
    /// Variables the user had already set to a safe value, kept as they are.
    pub kept: Vec<(&'static str, String)>,
    /// The command's whole environment: the process's, one entry per name, with `set` applied.
    pub env: Env,
}

impl Plan {
    /// `env` with one entry per name and the plan's settings applied.
    pub fn apply(&self, env: &Env) -> Env {
        let mut env: Env = env.iter().map(|(name, value)| (name.to_owned(), value.to_owned())).collect();
        for (name, value) in &self.set {
            env.set(*name, value);
        }
        env
    }
}

/// Decides every cap for `limit`, or the verdicts that forbid starting.
pub fn plan(env: &Env, limit: u64) -> Result<Plan, Vec<Verdict>> {
    let mut set = Vec::new();
    let mut kept = Vec::new();
    let before = Caps::read(env);
    for variable in THREAD_VARIABLES.iter().filter(|variable| variable.on_exec != OnExec::NotACap) {
        let Some(cap) = before.get(variable.name) else { continue };
        match &cap.value {
            CapValue::Unset | CapValue::Empty if variable.on_exec == OnExec::Export => {
                set.push((variable.name, limit.to_string()));
            }
            CapValue::Threads { raw, .. } => kept.push((variable.name, raw.clone())),
            _ => {}
        }
    }
    match env.value(caps::WAIT_POLICY) {
        Value::Unset | Value::Text("") => set.push((caps::WAIT_POLICY, caps::PASSIVE.into())),
        Value::Text(policy) => kept.push((caps::WAIT_POLICY, policy.to_owned())),
        Value::NotUtf8 => {}
    }
    let mut plan = Plan { limit, set, kept, env: Env::default() };
    plan.env = plan.apply(env);
    let after = Caps::read(&plan.env);
    let verdicts: Vec<Verdict> =
        [assess::caps_unset(&after), assess::caps_exceed_limit(&after, limit), assess::wait_policy_active(&after)]
            .into_iter()
            .flatten()
            .collect();
    if verdicts.is_empty() { Ok(plan) } else { Err(verdicts) }
}

/// How the command starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// It replaces this process (`execvp`).
    Replace,
    /// It runs as the child of this process, which stays its init.
    Init,
}

impl Start {
    /// As init when this process is PID 1, unless `no_init`; else by replacing this process.
    pub fn for_this_process(no_init: bool) -> Self {
        if init::is_pid_1() && !no_init { Self::Init } else { Self::Replace }
    }
}

/// Runs `command` under exactly the plan's environment as the child of this process, which stays
/// its init (as [`Start::Init`], PID 1 or not) and calls `periodic` while it runs; this process
/// becomes the reaper of the command's orphans, so its whole tree stays below it.
pub fn start_supervised(command: &[OsString], plan: &Plan, periodic: init::Periodic<'_>) -> io::Result<Ended> {
    let Some((program, args)) = command.split_first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command given"));
    };
    // Not inherited by the child: only this process adopts the tree's orphans.
    let _ = super::tree::adopt_orphans(true);
    let mut command = Command::new(program);
    command.args(args).env_clear().envs(plan.env.iter());
    init::run(command, Some(periodic))
}

/// Starts `command` under exactly the plan's environment. [`Start::Replace`] returns only on failure;
/// [`Start::Init`] returns how the command ended. An error means it could not run.
pub fn start(command: &[OsString], plan: &Plan, how: Start) -> io::Result<Ended> {
    let Some((program, args)) = command.split_first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command given"));
    };
    // `--check` made this process the reaper of the probe's orphans; the command must not inherit that.
    let _ = super::tree::adopt_orphans(false);
    let mut command = Command::new(program);
    command.args(args).env_clear().envs(plan.env.iter());
    match how {
        Start::Replace => Err(command.exec()),
        Start::Init => init::run(command, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Reason;

    fn env(vars: &[(&str, &str)]) -> Env {
        vars.iter().copied().collect()
    }

    fn reasons(result: Result<Plan, Vec<Verdict>>) -> Vec<Reason> {
        result.unwrap_err().into_iter().map(|v| v.reason).collect()
    }

    #[test]
    fn sets_every_cap_and_the_wait_policy() {
        let plan = plan(&env(&[]), 2).unwrap();
        let exported = THREAD_VARIABLES.iter().filter(|variable| variable.on_exec == OnExec::Export);
        assert_eq!(plan.set.len(), exported.count() + 1);
        assert!(plan.set.iter().filter(|(n, _)| *n != "OMP_WAIT_POLICY").all(|(_, v)| v == "2"));
        assert!(plan.set.contains(&("OMP_WAIT_POLICY", "passive".into())));
        assert!(plan.kept.is_empty());
        let applied = plan.apply(&env(&[("OTHER", "x")]));
        assert_eq!(applied.value("PYTHON_CPU_COUNT"), Value::Text("2"));
        assert_eq!(applied.value("OTHER"), Value::Text("x"));
    }

    #[test]
    fn keeps_lower_user_values_and_replaces_empty_ones() {
        let plan = plan(
            &env(&[
                ("OMP_NUM_THREADS", "1"),
                ("MKL_NUM_THREADS", ""),
                ("GOTO_NUM_THREADS", "2"),
                ("OMP_WAIT_POLICY", "PASSIVE"),
            ]),
            2,
        )
        .unwrap();
        assert!(plan.kept.contains(&("OMP_NUM_THREADS", "1".into())));
        assert!(plan.kept.contains(&("GOTO_NUM_THREADS", "2".into())));
        assert!(plan.kept.contains(&("OMP_WAIT_POLICY", "PASSIVE".into())));
        assert!(plan.set.contains(&("MKL_NUM_THREADS", "2".into())));
        assert!(!plan.set.iter().any(|(n, _)| *n == "OMP_NUM_THREADS"));
    }

    #[test]
    fn refuses_higher_or_invalid_values_and_other_wait_policies() {
        assert_eq!(reasons(plan(&env(&[("OPENBLAS_NUM_THREADS", "4")]), 2)), [Reason::CapsExceedLimit]);
        assert_eq!(reasons(plan(&env(&[("GOTO_NUM_THREADS", "3")]), 2)), [Reason::CapsExceedLimit]);
        assert_eq!(reasons(plan(&env(&[("NUMBA_NUM_THREADS", "all")]), 2)), [Reason::CapsUnset]);
        assert_eq!(reasons(plan(&env(&[("OMP_WAIT_POLICY", "active")]), 2)), [Reason::WaitPolicyActive]);
        let verdicts = plan(&env(&[("OMP_NUM_THREADS", "8"), ("LOKY_MAX_CPU_COUNT", "3")]), 2).unwrap_err();
        assert_eq!(verdicts.len(), 1);
        assert!(verdicts[0].detail.contains("OMP_NUM_THREADS=8, LOKY_MAX_CPU_COUNT=3"), "{}", verdicts[0].detail);
    }

    #[test]
    fn refuses_what_the_libraries_read_differently() {
        for value in ["1,64", "\u{a0}1", " 1", "+1", "01", "0", "1e0", ",1", "1,1,"] {
            let verdicts = plan(&env(&[("OMP_NUM_THREADS", value)]), 1).unwrap_err();
            assert_eq!(verdicts.len(), 1, "{value:?}: {verdicts:?}");
            assert!(verdicts[0].detail.contains("OMP_NUM_THREADS"), "{value:?}: {}", verdicts[0].detail);
        }
        // A list whose inner levels are single threads is bounded by its first level.
        assert!(plan(&env(&[("OMP_NUM_THREADS", "2,1")]), 2).is_ok());
        // Nesting switched on multiplies the count exec sets on every level.
        assert_eq!(reasons(plan(&env(&[("OMP_NESTED", "true")]), 2)), [Reason::CapsExceedLimit]);
        assert!(plan(&env(&[("OMP_NESTED", "true")]), 1).is_ok());
        assert_eq!(reasons(plan(&env(&[("OMP_MAX_ACTIVE_LEVELS", "2")]), 3)), [Reason::CapsExceedLimit]);
    }

    #[test]
    fn sets_the_ml_stack_variables_and_refuses_what_their_libraries_read_differently() {
        let ml_stack = [
            "NUMBA_NUM_THREADS",
            "POLARS_MAX_THREADS",
            "RAYON_NUM_THREADS",
            "OPENCV_FOR_THREADS_NUM",
            "ORT_INTRA_OP_NUM_THREADS",
            "ORT_INTER_OP_NUM_THREADS",
            "TF_NUM_INTRAOP_THREADS",
            "TF_NUM_INTEROP_THREADS",
        ];
        let plan_for_none = plan(&env(&[]), 3).unwrap();
        for name in ml_stack {
            assert!(plan_for_none.set.contains(&(name, "3".into())), "{name} is not set");
            // A user's value at or under the limit is kept, above it refused.
            let kept = plan(&env(&[(name, "2")]), 3).unwrap();
            assert!(kept.kept.contains(&(name, "2".into())), "{name}");
            assert_eq!(reasons(plan(&env(&[(name, "4")]), 3)), [Reason::CapsExceedLimit], "{name}");
            // Each of these is read differently by at least one of the libraries (white space trimmed
            // or not, 0 and -1 as "every CPU" or an error, a list, a word, a sign, a suffix).
            for value in ["2 ", " 2", "0", "-1", "2,3", "abc", "+2", "02", "2K"] {
                let verdicts = plan(&env(&[(name, value)]), 3).unwrap_err();
                assert_eq!(verdicts.iter().map(|v| v.reason).collect::<Vec<_>>(), [Reason::CapsUnset], "{name}");
                assert!(verdicts[0].detail.contains(name), "{name}={value:?}: {}", verdicts[0].detail);
            }
            // The empty string is a default for most of them and an error for OpenCV: exec sets it.
            assert!(plan(&env(&[(name, "")]), 3).unwrap().set.contains(&(name, "3".into())), "{name}");
        }
        // rayon's deprecated name is read only when RAYON_NUM_THREADS is not a count: checked, never set.
        assert!(!plan_for_none.set.iter().any(|(name, _)| *name == "RAYON_RS_NUM_CPUS"));
        assert_eq!(reasons(plan(&env(&[("RAYON_RS_NUM_CPUS", "8")]), 3)), [Reason::CapsExceedLimit]);
    }

    #[test]
    fn refuses_knobs_that_keep_threads_spinning() {
        for (name, value) in [("GOMP_SPINCOUNT", "infinite"), ("KMP_BLOCKTIME", "200"), ("KMP_LIBRARY", "turnaround")] {
            let verdicts = plan(&env(&[(name, value)]), 2).unwrap_err();
            assert_eq!(verdicts.iter().map(|v| v.reason).collect::<Vec<_>>(), [Reason::WaitPolicyActive]);
            assert!(verdicts[0].detail.contains(name), "{}", verdicts[0].detail);
        }
        assert!(plan(&env(&[("GOMP_SPINCOUNT", "0"), ("KMP_BLOCKTIME", "0")]), 2).is_ok());
        assert_eq!(reasons(plan(&env(&[("OMP_WAIT_POLICY", " passive")]), 2)), [Reason::WaitPolicyActive]);
    }

    #[test]
    fn the_command_gets_one_entry_per_name_the_first_as_getenv_reads() {
        let env: Env = [("OMP_NUM_THREADS", "64"), ("OMP_NUM_THREADS", "1")].into_iter().collect();
        assert_eq!(reasons(plan(&env, 2)), [Reason::CapsExceedLimit]);
        let env: Env = [("OMP_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "64"), ("X", "y")].into_iter().collect();
        let plan = plan(&env, 2).unwrap();
        let names: Vec<_> = plan.env.iter().map(|(name, _)| name.to_owned()).collect();
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(names, unique);
        assert_eq!(plan.env.value("OMP_NUM_THREADS"), Value::Text("1"));
    }

    /// What a C reader (`strtoul` after skipping ASCII space, as libgomp; `atoi`, as OpenBLAS) makes
    /// of one list element, written independently of the reader under test.
    fn c_readings(element: &str) -> [Option<u64>; 2] {
        let skipped = element.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
        let unsigned = skipped.strip_prefix('+').unwrap_or(skipped);
        let digits: String = unsigned.chars().take_while(char::is_ascii_digit).collect();
        let strtoul =
            (!digits.is_empty() && digits.len() == unsigned.trim_end().len()).then(|| digits.parse().ok()).flatten();
        let atoi = digits.parse().ok();
        [strtoul, atoi]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Whatever the environment, what exec lets start holds only values that every reader reads as
        /// the same count within the limit, and a passive policy with no spin knob set otherwise.
        #[test]
        fn what_exec_starts_every_reader_keeps_within_the_limit(
            entries in proptest::collection::vec(
                (
                    proptest::sample::select(vec![
                        "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "MKL_NUM_THREADS",
                        "LOKY_MAX_CPU_COUNT", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME",
                        "OMP_NESTED", "OMP_MAX_ACTIVE_LEVELS", "OMP_PROC_BIND", "RAYON_NUM_THREADS",
                        "RAYON_RS_NUM_CPUS", "OPENCV_FOR_THREADS_NUM", "TF_NUM_INTRAOP_THREADS",
                        "ORT_INTRA_OP_NUM_THREADS",
                    ]),
                    "[0-9,+\\- \t\u{a0}\u{ff11}xe.aptrusivnfl]{0,6}",
                ),
                0..6,
            ),
            limit in 1u64..4,
        ) {
            let env: Env = entries.iter().map(|(name, value)| (*name, value.as_str())).collect();
            if let Ok(plan) = plan(&env, limit) {
                for variable in THREAD_VARIABLES.iter().filter(|variable| variable.on_exec != OnExec::NotACap) {
                    let Value::Text(text) = plan.env.value(variable.name) else { continue };
                    // An empty `GOTO_NUM_THREADS` or `RAYON_RS_NUM_CPUS` is ignored: the library reads the
                    // one exec sets first.
                    if text.is_empty() && variable.on_exec == OnExec::Check {
                        continue;
                    }
                    let elements: Vec<&str> = text.split(',').collect();
                    let mut product = 1u64;
                    for element in &elements {
                        let [strtoul, atoi] = c_readings(element);
                        proptest::prop_assert_eq!(strtoul, atoi, "{}={:?}", variable.name, text);
                        let count = strtoul.unwrap_or(0);
                        proptest::prop_assert!((1..=limit).contains(&count), "{}={:?}", variable.name, text);
                        product = product.saturating_mul(count);
                    }
                    // OMP_MAX_ACTIVE_LEVELS, when set, decides alone.
                    let nesting_on = match plan.env.value("OMP_MAX_ACTIVE_LEVELS") {
                        Value::Text(t) => t != "1" && t != "0",
                        _ => {
                            elements.len() > 1
                                || matches!(plan.env.value("OMP_NESTED"), Value::Text(t) if !t.eq_ignore_ascii_case("false"))
                                || matches!(plan.env.value("OMP_PROC_BIND"), Value::Text(t) if t.contains(','))
                        }
                    };
                    if nesting_on && variable.name == "OMP_NUM_THREADS" {
                        // Deeper levels reuse the last count: only a last count of 1 is bounded.
                        proptest::prop_assert!(product <= limit && text.ends_with('1') || product == 1, "{:?}", text);
                    }
                }
                let policy = plan.env.value(caps::WAIT_POLICY);
                proptest::prop_assert!(matches!(policy, Value::Text(p) if p.eq_ignore_ascii_case("passive")));
                for knob in ["GOMP_SPINCOUNT", "KMP_BLOCKTIME"] {
                    proptest::prop_assert!(matches!(plan.env.value(knob), Value::Unset | Value::Text("0")), "{knob}");
                }
            }
        }
    }
}
