//! Verdicts: why a pod's parallelism is unsafe, as a logfmt event line or a JSON object.

use std::fmt::Write as _;

use serde::Serialize;

/// The event every verdict carries (ADR-0096, invariant 2).
pub const EVENT: &str = "pod_thread_caps_unsafe";

/// The severity every verdict carries.
pub const SEVERITY: &str = "error";

/// Why the pod is unsafe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// No Downward API limit could be read.
    CpuLimitUndeclared,
    /// A variable the libraries read appears more than once in the environment.
    EnvDuplicate,
    /// A required cap is unset, empty or invalid (or an optional one is invalid).
    CapsUnset,
    /// A cap is above the effective limit.
    CapsExceedLimit,
    /// The caps are set within the limit, yet a loaded pool has more threads than the limit.
    CapIneffective,
    /// `OMP_WAIT_POLICY` is not `passive`.
    WaitPolicyActive,
    /// loky/joblib may start more worker processes than the limit.
    ProcessParallelismUnbounded,
    /// The Downward API value disagrees with the CFS quota.
    LimitMismatch,
    /// The BLAS workload was throttled in too many CFS periods.
    Throttled,
}

impl Reason {
    /// The reason as it appears in `reason=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CpuLimitUndeclared => "cpu_limit_undeclared",
            Self::EnvDuplicate => "env_duplicate",
            Self::CapsUnset => "caps_unset",
            Self::CapsExceedLimit => "caps_exceed_limit",
            Self::CapIneffective => "cap_ineffective",
            Self::WaitPolicyActive => "wait_policy_active",
            Self::ProcessParallelismUnbounded => "process_parallelism_unbounded",
            Self::LimitMismatch => "limit_mismatch",
            Self::Throttled => "throttled",
        }
    }
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Why.
    pub reason: Reason,
    /// Machine-readable facts, emitted as `key=value` in the event line.
    pub fields: Vec<(&'static str, String)>,
    /// One human sentence.
    pub detail: String,
}

impl Verdict {
    /// A verdict with no extra fields.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Self {
        Self { reason, fields: Vec::new(), detail: detail.into() }
    }

    /// Adds a `key=value` field.
    pub fn field(mut self, key: &'static str, value: impl ToString) -> Self {
        self.fields.push((key, value.to_string()));
        self
    }

    /// The logfmt event line: `event=... severity=error reason=... key=value ... detail="..."`.
    pub fn to_logfmt(&self) -> String {
        let mut line = format!("event={EVENT} severity={SEVERITY} reason={}", self.reason.as_str());
        for (key, value) in &self.fields {
            let _ = write!(line, " {key}={}", logfmt_value(value));
        }
        let _ = write!(line, " detail={}", logfmt_value(&self.detail));
        line
    }

    /// The JSON form: `{event, severity, reason, detail}`.
    pub fn to_json(&self) -> JsonVerdict<'_> {
        JsonVerdict { event: EVENT, severity: SEVERITY, reason: self.reason.as_str(), detail: &self.detail }
    }
}

/// A verdict as serialised in JSON output.
#[derive(Debug, Serialize)]
pub struct JsonVerdict<'a> {
    /// Always `pod_thread_caps_unsafe`.
    pub event: &'static str,
    /// Always `error`.
    pub severity: &'static str,
    /// The reason.
    pub reason: &'static str,
    /// The human sentence.
    pub detail: &'a str,
}

/// Quotes a logfmt value when it is empty or holds spaces, quotes, `=` or control characters.
pub fn logfmt_value(value: &str) -> String {
    let plain = !value.is_empty()
        && value.chars().all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '=' && c != '\\');
    if plain {
        return value.to_owned();
    }
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('"');
    for c in value.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            '\r' => quoted.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(quoted, "\\u{{{:04x}}}", u32::from(c));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_an_event_line() {
        let verdict = Verdict::new(Reason::CapsUnset, "OMP_NUM_THREADS is not set")
            .field("limit", 1)
            .field("vars", "OMP_NUM_THREADS,MKL_NUM_THREADS");
        assert_eq!(
            verdict.to_logfmt(),
            "event=pod_thread_caps_unsafe severity=error reason=caps_unset limit=1 \
             vars=OMP_NUM_THREADS,MKL_NUM_THREADS detail=\"OMP_NUM_THREADS is not set\""
        );
    }

    #[test]
    fn quotes_values_that_need_it() {
        assert_eq!(logfmt_value("plain"), "plain");
        assert_eq!(logfmt_value(""), "\"\"");
        assert_eq!(logfmt_value("a b"), "\"a b\"");
        assert_eq!(logfmt_value("k=v"), "\"k=v\"");
        assert_eq!(logfmt_value("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
        assert_eq!(logfmt_value("a\\b"), "\"a\\\\b\"");
        assert_eq!(logfmt_value("\u{1}"), "\"\\u{0001}\"");
    }

    #[test]
    fn serialises_the_four_json_keys() {
        let verdict = Verdict::new(Reason::Throttled, "90% of periods").field("share", 0.9);
        let json = serde_json::to_value(verdict.to_json()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "event": "pod_thread_caps_unsafe",
                "severity": "error",
                "reason": "throttled",
                "detail": "90% of periods"
            })
        );
    }
}
