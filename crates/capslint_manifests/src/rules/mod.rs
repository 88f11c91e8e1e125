//! The CAP2xx rules, one module each, and what they share: the container being checked with its pod,
//! object, effective environment and CPU limit, and the checker that collects what they report.

pub(crate) mod context;
mod extended_resource_mismatch;
mod fractional_cpu_limit;
pub mod gpu_vram_overcommit;
mod gpu_without_vram_budget;
mod missing_cpu_limit;
mod missing_cpu_limit_ref;
mod missing_thread_caps;
mod not_guaranteed_for_exclusive_cpus;
mod omp_wait_policy_not_passive;
mod thread_cap_exceeds_limit;

use std::sync::Arc;

use super::kustomize::Provenance;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;
use capslint_diagnostics::selection::RuleSet;
pub use capslint_diagnostics::suppress::Reported;
pub use context::{ContainerContext, CpuLimit, LIMITS_CPU, Merged, Project};

/// Collects findings for one file (or one view of it).
pub struct Checker<'p> {
    rules: RuleSet,
    strict: bool,
    merged: Option<&'p Merged>,
    provenance: Option<&'p Provenance>,
    out: Vec<Reported>,
}

impl<'p> Checker<'p> {
    /// A checker for a file with `rules`; `merged` marks a view through an Airflow operator.
    pub fn new(rules: RuleSet, strict: bool, merged: Option<&'p Merged>) -> Self {
        Checker { rules, strict, merged, provenance: None, out: Vec::new() }
    }

    /// Marks a view of a kustomize overlay: what is reported is placed where `provenance` says each
    /// value is written.
    #[must_use]
    pub fn placed_by(mut self, provenance: &'p Provenance) -> Self {
        self.provenance = Some(provenance);
        self
    }

    /// Whether `rule` runs.
    pub fn enabled(&self, rule: Rule) -> bool {
        self.rules.contains(rule)
    }

    /// Whether unknown provenance is reported.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Reports a finding about `context`'s container, at a range of its own file.
    pub fn report(&mut self, context: &ContainerContext<'p>, finding: Finding) {
        let lines = vec![(context.file, finding.range.start()), (context.file, context.container.anchor.start())];
        let owners = context.owners().collect();
        self.push(context, Reported { file: context.file, finding, owners, lines });
    }

    /// Reports a finding placed elsewhere (in a ConfigMap), suppressible there and at the container.
    pub fn report_at(&mut self, context: &ContainerContext<'p>, file: usize, object: usize, finding: Finding) {
        let lines = vec![(file, finding.range.start()), (context.file, context.container.anchor.start())];
        let owners = std::iter::once((file, object)).chain(context.owners()).collect();
        self.push(context, Reported { file, finding, owners, lines });
    }

    fn push(&mut self, context: &ContainerContext<'p>, mut reported: Reported) {
        if !self.enabled(reported.finding.rule) {
            return;
        }
        // The edits of a fix are in the text the rules read. A rendered overlay's view is not a file: its
        // fix is made again for the file the finding is placed in (the base's container, the patch's
        // value). An operator's view has no file of its own: there the fix is only shown.
        let fix = reported.finding.fix.take();
        if let Some(provenance) = self.provenance {
            provenance.place(&mut reported, context.project.files);
        }
        reported.finding.fix = match (fix, self.provenance.is_some() || self.merged.is_some()) {
            (Some(fix), true) => {
                // The file's objects are its text as written, parsed once for the whole run.
                let placed = &context.project.files[reported.file];
                let relocated = self.provenance.and_then(|_| {
                    let (objects, text) = (&placed.objects, placed.file.text());
                    crate::fix::relocate(context, reported.finding.rule, objects, text, reported.finding.range)
                });
                relocated.or_else(|| {
                    let message = format!("{} (in the file that writes this container)", fix.message);
                    Some(capslint_diagnostics::fix::Fix::display_only(message, Vec::new()))
                })
            }
            (fix, _) => fix,
        };
        if let Some(merged) = self.merged {
            reported.finding = reported.finding.related(Arc::clone(&merged.dag), merged.call, merged.text.clone());
        }
        self.out.push(reported);
    }

    /// What was reported.
    pub fn into_reported(self) -> Vec<Reported> {
        self.out
    }
}

/// Runs every per-container and per-pod rule on one pod.
pub fn check_pod<'p>(checker: &mut Checker<'p>, contexts: &[ContainerContext<'p>]) {
    for context in contexts {
        missing_cpu_limit::check(checker, context);
        if context.container.init {
            continue;
        }
        missing_cpu_limit_ref::check(checker, context);
        missing_thread_caps::check(checker, context);
        thread_cap_exceeds_limit::check(checker, context);
        omp_wait_policy_not_passive::check(checker, context);
        fractional_cpu_limit::check(checker, context);
        gpu_without_vram_budget::check(checker, context);
        extended_resource_mismatch::check(checker, context);
    }
    fractional_cpu_limit::check_pod_level(checker, contexts);
    not_guaranteed_for_exclusive_cpus::check(checker, contexts);
}

/// `a`, `a and b`, `a, b and c`.
pub fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
