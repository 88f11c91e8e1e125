//! When to stop a workload suspected of livelock (`--terminate-after`, `--grace`): SIGTERM to its
//! process group once the suspicion has lasted that long, then SIGKILL at the first sample after the
//! grace period if it is still running. Once terminating, it does not back out: a workload that
//! recovers in its grace period is still ended, as the event said it would be.

use std::time::Duration;

/// What to do to the workload's process group now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Send SIGTERM: the suspicion has lasted `--terminate-after`.
    Terminate {
        /// How long livelock had been suspected.
        suspected_for: Duration,
    },
    /// Send SIGKILL: the grace period after SIGTERM has passed.
    Kill,
}

/// The decision, sample after sample.
#[derive(Debug, Clone)]
pub struct Terminator {
    after: Duration,
    grace: Duration,
    suspected_since: Option<Duration>,
    terminated_at: Option<Duration>,
    killed: bool,
}

impl Terminator {
    /// Terminates after `after` of suspected livelock, kills `grace` later.
    pub fn new(after: Duration, grace: Duration) -> Self {
        Self { after, grace, suspected_since: None, terminated_at: None, killed: false }
    }

    /// The action due at `at` (time since the start, increasing), given whether livelock is
    /// suspected now.
    pub fn step(&mut self, at: Duration, livelock: bool) -> Option<Action> {
        if let Some(terminated_at) = self.terminated_at {
            if !self.killed && at.saturating_sub(terminated_at) >= self.grace {
                self.killed = true;
                return Some(Action::Kill);
            }
            return None;
        }
        if !livelock {
            self.suspected_since = None;
            return None;
        }
        let since = *self.suspected_since.get_or_insert(at);
        let suspected_for = at.saturating_sub(since);
        if suspected_for >= self.after {
            self.terminated_at = Some(at);
            return Some(Action::Terminate { suspected_for });
        }
        None
    }

    /// Whether the workload was sent SIGTERM.
    pub fn terminated(&self) -> bool {
        self.terminated_at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn terminates_after_the_suspicion_lasted_then_kills_after_the_grace() {
        let mut terminator = Terminator::new(secs(30), secs(10));
        let actions: Vec<(u64, Action)> =
            (0..60).filter_map(|s| terminator.step(secs(s), s >= 5).map(|action| (s, action))).collect();
        assert_eq!(actions, [(35, Action::Terminate { suspected_for: secs(30) }), (45, Action::Kill)]);
        assert!(terminator.terminated());
    }

    #[test]
    fn a_suspicion_that_clears_starts_the_count_again() {
        let mut terminator = Terminator::new(secs(30), secs(10));
        // Suspected 0..20, clear at 20, suspected again from 21: terminated at 51.
        let actions: Vec<u64> = (0..80).filter(|&s| terminator.step(secs(s), s != 20).is_some()).collect();
        assert_eq!(actions, [51, 61]);
        let mut never = Terminator::new(secs(30), secs(10));
        assert!((0..100).all(|s| never.step(secs(s), s % 29 != 0).is_none()));
        assert!(!never.terminated());
    }

    #[test]
    fn once_terminating_it_does_not_back_out() {
        let mut terminator = Terminator::new(secs(1), secs(5));
        assert_eq!(terminator.step(secs(0), true), None);
        assert_eq!(terminator.step(secs(1), true), Some(Action::Terminate { suspected_for: secs(1) }));
        assert_eq!(terminator.step(secs(3), false), None);
        assert_eq!(terminator.step(secs(6), false), Some(Action::Kill));
        assert_eq!(terminator.step(secs(20), true), None);
    }
}
