//! `capslint exec`: set every cap from the effective limit, then become the command.
//!
//! A cap the user already set is kept when it is within the limit and refused when above it;
//! an invalid one is refused too. `OMP_WAIT_POLICY` becomes `passive` unless it already is,
//! and any other policy is refused. The command then replaces this process (`execvp`): same PID,
//! so signals and the exit status pass straight through.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::caps::{self, CapValue};
use super::env::{Env, Value};
use super::verdict::{Reason, Verdict};
use crate::thread_variables::{OnExec, THREAD_VARIABLES};

/// What `exec` will change in the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The effective limit.
    pub limit: u64,
    /// Variables set, with their new values.
    pub set: Vec<(&'static str, String)>,
    /// Variables the user had already set to a safe value, kept as they are.
    pub kept: Vec<(&'static str, String)>,
}

impl Plan {
    /// `env` with the plan applied.
    pub fn apply(&self, env: &Env) -> Env {
        let mut env = env.clone();
        for (name, value) in &self.set {
            env.set(*name, value);
        }
        env
    }
}

/// A user's value that forbids starting: the variable and how to show the value.
struct Refused {
    name: &'static str,
    shown: String,
}

/// One verdict listing every refused variable (after the limit, when given), or none.
fn refusal(reason: Reason, refused: &[Refused], what: &str, limit: Option<u64>) -> Option<Verdict> {
    if refused.is_empty() {
        return None;
    }
    let names: Vec<&str> = refused.iter().map(|r| r.name).collect();
    let shown: Vec<&str> = refused.iter().map(|r| r.shown.as_str()).collect();
    let mut verdict = Verdict::new(reason, format!("{} {what}", shown.join(", ")));
    if let Some(limit) = limit {
        verdict = verdict.field("limit", limit);
    }
    Some(verdict.field("vars", names.join(",")))
}

/// Decides every cap for `limit`, or the verdicts that forbid starting.
pub fn plan(env: &Env, limit: u64) -> Result<Plan, Vec<Verdict>> {
    let mut plan = Plan { limit, set: Vec::new(), kept: Vec::new() };
    let mut above = Vec::new();
    let mut invalid = Vec::new();
    for variable in THREAD_VARIABLES.iter().filter(|variable| variable.on_exec != OnExec::NotACap) {
        let (name, exported) = (variable.name, variable.on_exec == OnExec::Export);
        let value = match env.value(name) {
            Value::Unset => CapValue::Unset,
            Value::NotUtf8 => CapValue::Invalid { raw: "<not UTF-8>".into() },
            Value::Text(raw) => caps::parse_cap(name, raw),
        };
        match value {
            CapValue::Unset | CapValue::Empty if exported => {
                plan.set.push((name, limit.to_string()));
            }
            CapValue::Unset | CapValue::Empty => {}
            CapValue::Threads { threads, .. } if threads > limit => {
                above.push(Refused { name, shown: format!("{name}={threads}") })
            }
            CapValue::Threads { raw, .. } => plan.kept.push((name, raw)),
            CapValue::Invalid { raw } => invalid.push(Refused { name, shown: format!("{name}={raw:?}") }),
        }
    }
    let mut verdicts: Vec<Verdict> = [
        refusal(Reason::CapsUnset, &invalid, "not a positive integer", None),
        refusal(Reason::CapsExceedLimit, &above, &format!("above the limit of {limit}"), Some(limit)),
    ]
    .into_iter()
    .flatten()
    .collect();
    match env.value(caps::WAIT_POLICY) {
        Value::Unset => plan.set.push((caps::WAIT_POLICY, caps::PASSIVE.into())),
        Value::Text(policy) if policy.trim().is_empty() => {
            plan.set.push((caps::WAIT_POLICY, caps::PASSIVE.into()));
        }
        Value::Text(policy) if policy.trim().eq_ignore_ascii_case(caps::PASSIVE) => {
            plan.kept.push((caps::WAIT_POLICY, policy.to_owned()));
        }
        other => {
            let shown = match other {
                Value::Text(policy) => policy.to_owned(),
                _ => "<not UTF-8>".to_owned(),
            };
            verdicts.push(
                Verdict::new(Reason::WaitPolicyActive, format!("OMP_WAIT_POLICY={shown:?}: only passive is accepted"))
                    .field("omp_wait_policy", shown),
            );
        }
    }
    if verdicts.is_empty() { Ok(plan) } else { Err(verdicts) }
}

/// Replaces this process with `command` under the plan's environment; returns only on failure.
pub fn exec(command: &[OsString], plan: &Plan) -> io::Error {
    let Some((program, args)) = command.split_first() else {
        return io::Error::new(io::ErrorKind::InvalidInput, "no command given");
    };
    let mut command = Command::new(program);
    command.args(args);
    for (name, value) in &plan.set {
        command.env(name, value);
    }
    command.exec()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let verdicts = plan(&env(&[("OMP_NUM_THREADS", "8,2"), ("LOKY_MAX_CPU_COUNT", "3")]), 2).unwrap_err();
        assert_eq!(verdicts.len(), 1);
        assert!(verdicts[0].detail.contains("OMP_NUM_THREADS=8, LOKY_MAX_CPU_COUNT=3"), "{}", verdicts[0].detail);
    }
}
