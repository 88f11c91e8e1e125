//! The supervisor `exec --watch` runs: every interval, a sample ([`crate::sampler`]), the verdicts
//! over the window ([`crate::judge`]), one event line per change on stderr ([`crate::event`]), and,
//! with `--terminate-after`, the stop of a workload suspected of livelock ([`crate::terminate`]).

use std::io::{self, Write as _};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use capslint_pod::Supervisor;
use capslint_pod::init::{Ended, Workload};

use crate::args::WatchArgs;
use crate::event;
use crate::judge::Judge;
use crate::metrics::{self, Page};
use crate::sampler::Sampler;
use crate::terminate::{Action, Terminator};

/// The supervisor of one workload.
#[derive(Debug)]
pub struct Watch {
    args: WatchArgs,
    start: Instant,
    sampler: Option<Sampler>,
    judge: Judge,
    terminator: Option<Terminator>,
    page: Option<Page>,
}

impl Watch {
    /// A supervisor with the options of `exec --watch`; with `--metrics-addr`, its endpoint is
    /// bound and served from now on (an error when it cannot be).
    pub fn new(args: &WatchArgs) -> io::Result<Self> {
        let page = match args.metrics_addr {
            Some(addr) => {
                let page: Page = Arc::new(Mutex::new(metrics::render(None)));
                let bound = metrics::serve(addr, Arc::clone(&page))
                    .map_err(|error| io::Error::new(error.kind(), format!("{addr}: {error}")))?;
                eprintln!("event=pod_watch_metrics severity=info addr={bound} path=/metrics");
                Some(page)
            }
            None => None,
        };
        Ok(Self {
            args: args.clone(),
            start: Instant::now(),
            sampler: None,
            judge: Judge::new(args.window, args.throttle_threshold),
            terminator: args.terminate_after.map(|after| Terminator::new(after, args.grace)),
            page,
        })
    }
}

impl Supervisor for Watch {
    fn begin(&mut self, effective_limit: u64) {
        self.sampler = Some(Sampler::new(effective_limit, self.args.heartbeat.clone()));
        self.start = Instant::now();
    }

    fn every(&self) -> Duration {
        self.args.interval
    }

    fn sample(&mut self, workload: Workload) {
        let Some(sampler) = &self.sampler else { return };
        let at = self.start.elapsed();
        let (changes, assessment) = self.judge.observe(at, sampler.sample());
        if let Some(page) = &self.page {
            *page.lock().unwrap_or_else(PoisonError::into_inner) = metrics::render(Some(&assessment));
        }
        let mut lines: Vec<String> =
            changes.iter().map(|change| event::change_line(*change, &assessment, self.args.window)).collect();
        let action = self.terminator.as_mut().and_then(|terminator| terminator.step(at, assessment.livelock));
        match action {
            Some(Action::Terminate { suspected_for }) => {
                lines.push(event::terminated_line(&assessment, self.args.window, suspected_for, self.args.grace));
            }
            Some(Action::Kill) => lines.push(event::killed_line(&assessment, self.args.window)),
            None => {}
        }
        let mut stderr = std::io::stderr().lock();
        for line in lines {
            // Nothing better to do when stderr is gone: the supervision goes on.
            let _ = writeln!(stderr, "{line}");
        }
        drop(stderr);
        match action {
            Some(Action::Terminate { .. }) => workload.signal(libc::SIGTERM),
            Some(Action::Kill) => workload.signal(libc::SIGKILL),
            None => {}
        }
    }

    fn exit_code(&mut self, ended: Ended) -> u8 {
        if self.terminator.as_ref().is_some_and(Terminator::terminated) {
            crate::EXIT_LIVELOCK_TERMINATED
        } else {
            ended.code()
        }
    }
}
