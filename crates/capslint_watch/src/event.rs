//! The event lines of `exec --watch`, one per change of verdict or action, logfmt-style on stderr:
//! `event=pod_oversubscribed`, `event=pod_livelock_suspected`, `event=pod_recovered`,
//! `event=pod_livelock_terminated` and `event=pod_livelock_killed`, with the numbers they were
//! decided on.

use std::fmt::Write as _;
use std::time::Duration;

use capslint_pod::verdict::logfmt_value;

use crate::judge::{Assessment, Change, Progress};
use crate::sampler::{Heartbeat, ProcessThreads};

/// The line of a change of verdict.
pub fn change_line(change: Change, assessment: &Assessment, window: Duration) -> String {
    let (event, severity) = match change {
        Change::Oversubscribed => ("pod_oversubscribed", "warning"),
        Change::LivelockSuspected => ("pod_livelock_suspected", "error"),
        Change::Recovered => ("pod_recovered", "info"),
    };
    let mut line = format!("event={event} severity={severity} {}", numbers(assessment, window));
    if change == Change::LivelockSuspected {
        let progress = match assessment.progress {
            Progress::Unknown => "unknown",
            Progress::Made => "made",
            Progress::None => "none",
        };
        let _ = write!(line, " progress={progress}");
        match assessment.sample.heartbeat {
            Heartbeat::Age(age) => {
                let _ = write!(line, " heartbeat_age_seconds={}", decimal(age.as_secs_f64()));
            }
            Heartbeat::Missing => line.push_str(" heartbeat=missing"),
            Heartbeat::NotWatched => {}
        }
    }
    line
}

/// The line of the SIGTERM sent to a workload suspected of livelock for `suspected_for`.
pub fn terminated_line(assessment: &Assessment, window: Duration, suspected_for: Duration, grace: Duration) -> String {
    format!(
        "event=pod_livelock_terminated severity=error signal=SIGTERM suspected_seconds={} grace_seconds={} \
         exit_code={} {}",
        decimal(suspected_for.as_secs_f64()),
        decimal(grace.as_secs_f64()),
        crate::EXIT_LIVELOCK_TERMINATED,
        numbers(assessment, window)
    )
}

/// The line of the SIGKILL sent when the grace period has passed.
pub fn killed_line(assessment: &Assessment, window: Duration) -> String {
    format!("event=pod_livelock_killed severity=error signal=SIGKILL {}", numbers(assessment, window))
}

/// The numbers of a line: the limit, the tree, throttling, and the processes holding the most threads.
fn numbers(assessment: &Assessment, window: Duration) -> String {
    let sample = &assessment.sample;
    let mut line = format!(
        "limit={} runnable={} threads={} processes={} cpu_seconds={}",
        decimal(sample.limit),
        sample.runnable,
        sample.threads,
        sample.processes,
        decimal(sample.cpu_seconds),
    );
    if let Some(throttling) = assessment.throttling {
        let share = throttling.share.map_or_else(|| "none".to_owned(), decimal);
        let _ = write!(
            line,
            " throttled_share={share} throttled_periods={} periods={} throttled_seconds={}",
            throttling.throttled,
            throttling.periods,
            decimal(throttling.throttled_usec as f64 / 1e6)
        );
    }
    if let Some(pressure) = sample.pressure {
        let _ = write!(line, " cpu_pressure_some_avg10={}", decimal(pressure.some.avg10));
    }
    let _ = write!(line, " window_seconds={} top={}", decimal(window.as_secs_f64()), logfmt_value(&top(&sample.top)));
    line
}

/// `pid:comm:threads` of each process, space-separated.
fn top(processes: &[ProcessThreads]) -> String {
    let parts: Vec<String> = processes.iter().map(|p| format!("{}:{}:{}", p.pid, p.comm, p.threads)).collect();
    parts.join(" ")
}

/// A number with at most two decimals, without trailing zeros.
fn decimal(value: f64) -> String {
    let text = format!("{value:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" { "0".to_owned() } else { text.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::Sample;
    use capslint_pod::cfs::Throttling;

    fn assessment() -> Assessment {
        Assessment {
            sample: Sample {
                limit: 1.5,
                processes: 2,
                threads: 66,
                runnable: 64,
                cpu_seconds: 120.25,
                cpu_stat: None,
                pressure: None,
                heartbeat: Heartbeat::Age(Duration::from_secs(90)),
                top: vec![
                    ProcessThreads { pid: 4242, comm: "python3".into(), threads: 65 },
                    ProcessThreads { pid: 4250, comm: "my tool".into(), threads: 1 },
                ],
            },
            covered: true,
            over_share: 1.0,
            throttling: Some(Throttling {
                periods: 600,
                throttled: 570,
                throttled_usec: 41_500_000,
                share: Some(0.95),
            }),
            progress: Progress::None,
            oversubscribed: true,
            livelock: true,
        }
    }

    #[test]
    fn lines_carry_the_numbers_and_the_top_processes() {
        let window = Duration::from_secs(60);
        assert_eq!(
            change_line(Change::Oversubscribed, &assessment(), window),
            "event=pod_oversubscribed severity=warning limit=1.5 runnable=64 threads=66 processes=2 \
             cpu_seconds=120.25 throttled_share=0.95 throttled_periods=570 periods=600 throttled_seconds=41.5 \
             window_seconds=60 top=\"4242:python3:65 4250:my tool:1\""
        );
        let line = change_line(Change::LivelockSuspected, &assessment(), window);
        assert!(line.starts_with("event=pod_livelock_suspected severity=error limit=1.5 "), "{line}");
        assert!(line.ends_with(" progress=none heartbeat_age_seconds=90"), "{line}");
        assert!(
            change_line(Change::Recovered, &assessment(), window).starts_with("event=pod_recovered severity=info ")
        );
        let line = terminated_line(&assessment(), window, Duration::from_secs(300), Duration::from_secs(30));
        assert!(
            line.starts_with(
                "event=pod_livelock_terminated severity=error signal=SIGTERM suspected_seconds=300 \
                 grace_seconds=30 exit_code=75 limit=1.5 "
            ),
            "{line}"
        );
        assert!(
            killed_line(&assessment(), window).starts_with("event=pod_livelock_killed severity=error signal=SIGKILL")
        );
    }

    #[test]
    fn decimals_are_short() {
        assert_eq!(decimal(2.0), "2");
        assert_eq!(decimal(0.0), "0");
        assert_eq!(decimal(0.001), "0");
        assert_eq!(decimal(0.5), "0.5");
        assert_eq!(decimal(1.234), "1.23");
    }
}
