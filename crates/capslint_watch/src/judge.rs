//! The verdicts over a sliding window of samples, with hysteresis: each changes only when a
//! condition has held over a whole window, so one odd sample changes nothing.
//!
//! - **oversubscribed**: every sample of the window has more runnable threads in the tree than the
//!   CPU limit. It clears once at most half of the window's samples do.
//! - **livelock suspected**: the cgroup was throttled in at least the threshold share of the CFS
//!   periods of the window, while the workload made no progress.
//!
//! Progress. CPU time cannot measure it: a livelocked pod burns its whole quota (ADR-0096's pods
//! burnt 3.2 cores each for 16 hours and produced nothing), spinning at barriers whose threads are
//! throttled. Only the workload knows what it produced, so it may say so: with `--heartbeat FILE`
//! (touched by the workload as it completes units of work) progress is the file's modification
//! time lying within the window, and a throttled window without one is a suspected livelock however
//! many threads run. Without a heartbeat, progress is unknown and the suspicion needs both signs
//! of the failure mode: throttled most periods *and* oversubscribed over the window. A pod that is
//! throttled with no more runnable threads than its limit is merely using its quota; one that is
//! oversubscribed but rarely throttled is slow, not stalled.
//!
//! It clears once the throttled share falls below half the threshold, the heartbeat is fresh again,
//! or (without a heartbeat) the tree is no longer oversubscribed.

use std::collections::VecDeque;
use std::time::Duration;

use capslint_pod::cfs::{self, Throttling};

use crate::sampler::{Heartbeat, Sample};

/// Share of the window's samples above the limit at or below which oversubscription clears.
pub const OVERSUBSCRIBED_CLEARS_AT: f64 = 0.5;

/// The most samples kept, whatever the window and interval.
pub const MAX_SAMPLES: usize = 4096;

/// A change of verdict, one event line each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The tree became oversubscribed.
    Oversubscribed,
    /// A livelock became suspected.
    LivelockSuspected,
    /// Neither verdict holds any more.
    Recovered,
}

/// Whether the workload made progress over the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// No heartbeat is watched.
    Unknown,
    /// The heartbeat was touched within the window.
    Made,
    /// The heartbeat is older than the window, or missing.
    None,
}

/// What the window says, for the event lines and the metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    /// The newest sample.
    pub sample: Sample,
    /// Whether the window spans its whole length yet.
    pub covered: bool,
    /// Share of the window's samples with more runnable threads than the limit.
    pub over_share: f64,
    /// Throttling over the window, where `cpu.stat` has counters.
    pub throttling: Option<Throttling>,
    /// Progress over the window.
    pub progress: Progress,
    /// The verdict: oversubscribed.
    pub oversubscribed: bool,
    /// The verdict: livelock suspected.
    pub livelock: bool,
}

/// The verdicts and the samples of the window they are drawn from.
#[derive(Debug)]
pub struct Judge {
    window: Duration,
    throttle_threshold: f64,
    history: VecDeque<(Duration, Sample)>,
    oversubscribed: bool,
    livelock: bool,
}

impl Judge {
    /// A judge over `window` that suspects livelock from `throttle_threshold` (a share of periods).
    pub fn new(window: Duration, throttle_threshold: f64) -> Self {
        Self { window, throttle_threshold, history: VecDeque::new(), oversubscribed: false, livelock: false }
    }

    /// Takes the sample read at `at` (time since the start, increasing) and returns the changes of
    /// verdict, in order, with what the window says.
    pub fn observe(&mut self, at: Duration, sample: Sample) -> (Vec<Change>, Assessment) {
        self.history.push_back((at, sample));
        // Keep the samples of the window, and the last one before it: the start of the counters'
        // differences and the proof that the window is covered.
        let start = at.checked_sub(self.window);
        while self.history.len() > MAX_SAMPLES
            || self.history.get(1).is_some_and(|(time, _)| start.is_some_and(|start| *time <= start))
        {
            self.history.pop_front();
        }
        let covered = self.history.len() > 1
            && self.history.front().is_some_and(|(time, _)| start.is_some_and(|start| *time <= start));
        let (first, newest) = match (self.history.front(), self.history.back()) {
            (Some((_, first)), Some((_, newest))) => (first, newest.clone()),
            _ => unreachable!("a sample was just pushed"),
        };
        let above = self.history.iter().filter(|(_, s)| s.runnable as f64 > s.limit).count();
        let over_share = above as f64 / self.history.len() as f64;
        let throttling = match (first.cpu_stat, newest.cpu_stat) {
            (Some(before), Some(after)) if self.history.len() > 1 => Some(cfs::throttling_between(before, after)),
            _ => None,
        };
        let progress = match newest.heartbeat {
            Heartbeat::NotWatched => Progress::Unknown,
            Heartbeat::Missing => Progress::None,
            Heartbeat::Age(age) if age > self.window => Progress::None,
            Heartbeat::Age(_) => Progress::Made,
        };
        let share = throttling.and_then(|t| t.share);

        let was = (self.oversubscribed, self.livelock);
        if !self.oversubscribed && covered && above == self.history.len() {
            self.oversubscribed = true;
        } else if self.oversubscribed && over_share <= OVERSUBSCRIBED_CLEARS_AT {
            self.oversubscribed = false;
        }
        let stalled = match progress {
            Progress::None => true,
            Progress::Made => false,
            Progress::Unknown => self.oversubscribed,
        };
        if !self.livelock && covered && stalled && share.is_some_and(|s| s >= self.throttle_threshold) {
            self.livelock = true;
        } else if self.livelock && (!stalled || share.is_none_or(|s| s < self.throttle_threshold / 2.0)) {
            self.livelock = false;
        }

        let mut changes = Vec::new();
        if self.oversubscribed && !was.0 {
            changes.push(Change::Oversubscribed);
        }
        if self.livelock && !was.1 {
            changes.push(Change::LivelockSuspected);
        }
        if !self.oversubscribed && !self.livelock && (was.0 || was.1) {
            changes.push(Change::Recovered);
        }
        let assessment = Assessment {
            sample: newest,
            covered,
            over_share,
            throttling,
            progress,
            oversubscribed: self.oversubscribed,
            livelock: self.livelock,
        };
        (changes, assessment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_pod::cfs::CpuStat;

    /// A sample with `runnable` threads on a 2-CPU limit and cumulative throttling counters.
    fn sample(runnable: u64, periods: u64, throttled: u64, heartbeat: Heartbeat) -> Sample {
        Sample {
            limit: 2.0,
            processes: 1,
            threads: runnable + 1,
            runnable,
            cpu_seconds: 0.0,
            cpu_stat: Some(CpuStat {
                nr_periods: periods,
                nr_throttled: throttled,
                throttled_usec: throttled * 50_000,
            }),
            pressure: None,
            heartbeat,
            top: Vec::new(),
        }
    }

    /// Feeds one sample a second, each built from its second; returns the changes, by second.
    fn run(judge: &mut Judge, seconds: std::ops::Range<u64>, make: impl Fn(u64) -> Sample) -> Vec<(u64, Change)> {
        let mut changes = Vec::new();
        for second in seconds {
            let (now, _) = judge.observe(Duration::from_secs(second), make(second));
            changes.extend(now.into_iter().map(|change| (second, change)));
        }
        changes
    }

    const W: Heartbeat = Heartbeat::NotWatched;

    #[test]
    fn oversubscription_is_reported_once_the_whole_window_holds_it() {
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        // Within the limit, then 8 runnable threads on 2 CPUs from second 20, rarely throttled.
        let changes = run(&mut judge, 0..40, |s| sample(if s < 20 { 2 } else { 8 }, s * 10, s, W));
        assert_eq!(changes, [(30, Change::Oversubscribed)]);
    }

    #[test]
    fn one_odd_sample_changes_nothing_either_way() {
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        // A single sample within the limit in every window keeps the verdict from being reached.
        let changes = run(&mut judge, 0..60, |s| sample(if s % 7 == 0 { 1 } else { 8 }, s * 10, 0, W));
        assert_eq!(changes, []);
        // Once reached, a single sample within the limit does not clear it.
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        let changes = run(&mut judge, 0..60, |s| sample(if s > 30 && s % 7 == 0 { 1 } else { 8 }, s * 10, 0, W));
        assert_eq!(changes, [(10, Change::Oversubscribed)]);
    }

    #[test]
    fn recovers_once_most_of_the_window_is_within_the_limit() {
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        let changes = run(&mut judge, 0..40, |s| sample(if s < 15 { 8 } else { 2 }, s * 10, 0, W));
        // Oversubscribed at 10; from 15 within the limit; at 20 the 11 samples of 10..=20 hold 5 above.
        assert_eq!(changes, [(10, Change::Oversubscribed), (20, Change::Recovered)]);
    }

    #[test]
    fn throttled_and_oversubscribed_without_a_heartbeat_is_a_suspected_livelock() {
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        // 10 periods a second, 9 of them throttled.
        let changes = run(&mut judge, 0..30, |s| sample(8, s * 10, s * 9, W));
        assert_eq!(changes, [(10, Change::Oversubscribed), (10, Change::LivelockSuspected)]);
        // The workload capped itself: at 35 the window 25..=35 holds 5 samples of 11 above the limit,
        // and without oversubscription (or a heartbeat) the livelock clears with it.
        let changes = run(&mut judge, 30..60, |s| sample(2, s * 10, 270, W));
        assert_eq!(changes, [(35, Change::Recovered)]);
    }

    #[test]
    fn throttling_within_the_limit_is_a_pod_using_its_quota() {
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        let changes = run(&mut judge, 0..60, |s| sample(2, s * 10, s * 9, W));
        assert_eq!(changes, []);
        let (_, assessment) = judge.observe(Duration::from_secs(60), sample(2, 600, 540, W));
        assert!(assessment.covered);
        assert_eq!(assessment.throttling.and_then(|t| t.share), Some(0.9));
        assert_eq!(assessment.progress, Progress::Unknown);
    }

    #[test]
    fn a_stale_heartbeat_under_throttling_is_a_livelock_whatever_the_threads() {
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        // Touched every second until 20, then never again.
        let beat = |s: u64| Heartbeat::Age(Duration::from_secs(s.saturating_sub(20)));
        let changes = run(&mut judge, 0..40, |s| sample(2, s * 10, s * 9, beat(s)));
        assert_eq!(changes, [(31, Change::LivelockSuspected)]);
        // It beats again: progress clears the suspicion at once.
        let changes = run(&mut judge, 40..45, |s| sample(2, s * 10, s * 9, Heartbeat::Age(Duration::ZERO)));
        assert_eq!(changes, [(40, Change::Recovered)]);
        // A fresh heartbeat keeps an oversubscribed, throttled tree from being suspected.
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        let changes = run(&mut judge, 0..30, |s| sample(8, s * 10, s * 9, Heartbeat::Age(Duration::ZERO)));
        assert_eq!(changes, [(10, Change::Oversubscribed)]);
        // A heartbeat file never made counts as no progress.
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        let changes = run(&mut judge, 0..30, |s| sample(1, s * 10, s * 9, Heartbeat::Missing));
        assert_eq!(changes, [(10, Change::LivelockSuspected)]);
    }

    #[test]
    fn without_throttling_counters_no_livelock_is_suspected() {
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        let changes = run(&mut judge, 0..30, |_| Sample { cpu_stat: None, ..sample(8, 0, 0, Heartbeat::Missing) });
        // Oversubscription needs no counters.
        assert_eq!(changes, [(10, Change::Oversubscribed)]);
    }

    #[test]
    fn a_counter_reset_does_not_underflow_or_suspect() {
        let mut judge = Judge::new(Duration::from_secs(10), 0.5);
        let changes = run(&mut judge, 0..30, |s| sample(8, if s < 15 { 1000 } else { s }, 0, Heartbeat::Missing));
        assert_eq!(changes, [(10, Change::Oversubscribed)]);
    }

    #[test]
    fn the_history_is_bounded() {
        let mut judge = Judge::new(Duration::from_secs(86_400), 0.5);
        for millis in 0..(MAX_SAMPLES as u64 + 100) {
            judge.observe(Duration::from_millis(millis), sample(8, millis, 0, W));
        }
        assert_eq!(judge.history.len(), MAX_SAMPLES);
    }
}
