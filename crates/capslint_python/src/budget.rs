//! The per-file work budget of the resolver: every evaluation step, qualified-name step, dict entry
//! copied and dict mutation applied costs one unit. A file that spends it all is hostile or
//! pathological; its analysis stops, and it is reported as such (CAP003) instead of hanging the run.

use std::cell::Cell;

use ruff_text_size::{TextRange, TextSize};

use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// The units every file gets, however small.
const BASE_STEPS: u64 = 1_000_000;

/// The units added per byte of source. Real code spends about 0.05 per byte (the fixtures, and 45 MB of
/// generated functions with a finding each), so this leaves a margin of forty.
const STEPS_PER_BYTE: u64 = 2;

/// The most units any file gets: about five seconds of the costliest steps (memoised dict copies).
const MAX_STEPS: u64 = 32_000_000;

/// A countdown of work units, shared by everything that resolves values in one file.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    left: Cell<u64>,
    exhausted_at: Cell<Option<TextSize>>,
}

impl Budget {
    /// The budget of a file of `len` bytes.
    pub fn for_source(len: usize) -> Self {
        Self::with_limit(BASE_STEPS.saturating_add(STEPS_PER_BYTE.saturating_mul(len as u64)).min(MAX_STEPS))
    }

    /// A budget of exactly `limit` units.
    pub fn with_limit(limit: u64) -> Self {
        Budget { limit, left: Cell::new(limit), exhausted_at: Cell::new(None) }
    }

    /// Spends `units` on work at `offset`; false once the budget is gone (and forever after).
    #[inline]
    pub fn spend(&self, units: u64, offset: TextSize) -> bool {
        let left = self.left.get();
        if left >= units {
            self.left.set(left - units);
            true
        } else {
            self.left.set(0);
            if self.exhausted_at.get().is_none() {
                self.exhausted_at.set(Some(offset));
            }
            false
        }
    }

    /// Whether the budget ran out.
    pub fn is_exhausted(&self) -> bool {
        self.exhausted_at.get().is_some()
    }

    /// Where the budget ran out, if it did.
    pub fn exhausted_at(&self) -> Option<TextSize> {
        self.exhausted_at.get()
    }
}

impl Budget {
    /// The CAP003 finding of a file that spent its whole budget, at the expression being resolved then.
    pub fn finding(&self) -> Finding {
        let at = self.exhausted_at().unwrap_or_default();
        Finding::new(
            Rule::AnalysisBudgetExceeded,
            TextRange::empty(at),
            format!(
                "resolving values took more than this file's budget of {} steps: the file was not fully analysed, \
                 and none of its findings are reported",
                self.limit
            ),
        )
        .label("the budget ran out here")
        .help("such code is generated or hostile; exclude it (`extend-exclude`) or simplify the definitions it chains")
    }
}
