//! Rendered objects as the rules see them: the tree is written out ([`super::emit`]) and read by the
//! ordinary model builder, and the model's ranges are moved into a virtual space (from
//! [`VIRTUAL_BASE`]) that only the object's [`Provenance`] resolves. The rules run unchanged on the
//! view; whatever they report is then placed, range by range, in the file and line that wrote the value
//! (a patch's CPU line, a base's container name), with a label naming the overlay.

use std::sync::Arc;

use ruff_text_size::{TextRange, TextSize};

use super::emit::Emitted;
use super::tree::{Origin, SourceId};
use crate::ManifestFile;
use crate::model::{EnvSource, Object};
use capslint_diagnostics::diagnostic::{Label, Related};
use capslint_diagnostics::suppress::Reported;

/// Where the ranges of rendered objects start: past any file capslint reads.
pub const VIRTUAL_BASE: u32 = 1 << 31;

/// Resolves the virtual ranges of one rendered object.
#[derive(Debug)]
pub struct Provenance {
    /// The emitted text's spans.
    pub spans: Emitted,
    /// The scan's file index of every source of the render.
    pub files: Arc<Vec<Option<usize>>>,
    /// Where the object is written (`kind`), for a range that resolves to nothing.
    pub fallback: (usize, TextRange),
    /// The label at the overlay: `(file, range, text)`.
    pub label: Option<(usize, TextRange, String)>,
    /// Objects whose `capslint.io/ignore` annotation also suppresses findings (the patches applied).
    pub owners: Vec<(usize, usize)>,
}

impl Provenance {
    /// The file and range that wrote a virtual range; `None` for a range of a real file.
    fn locate(&self, range: TextRange) -> Option<(usize, TextRange)> {
        let start = u32::from(range.start()).checked_sub(VIRTUAL_BASE)?;
        let found = self
            .spans
            .origin_at(start)
            .and_then(|Origin { source, range }| Some((self.files.get(source as usize).copied().flatten()?, range)));
        Some(found.unwrap_or(self.fallback))
    }

    /// Moves a finding reported on the view into the files that wrote it. Real ranges (a ConfigMap's)
    /// stay in the file they were reported in.
    pub fn place(&self, reported: &mut Reported, files: &[ManifestFile]) {
        let original = reported.file;
        let finding = &mut reported.finding;
        if let Some((file, range)) = self.locate(finding.range) {
            reported.file = file;
            finding.range = range;
        }
        let here = reported.file;
        let source = |file: usize| Arc::clone(&files[file].file);
        let mut secondary: Vec<Label> = Vec::new();
        let mut related: Vec<Related> = Vec::new();
        for label in std::mem::take(&mut finding.secondary) {
            let (file, range) = self.locate(label.range).unwrap_or((original, label.range));
            if file == here {
                secondary.push(Label { range, text: label.text });
            } else {
                related.push(Related { file: source(file), range, text: label.text });
            }
        }
        for item in std::mem::take(&mut finding.related) {
            match self.locate(item.range) {
                Some((file, range)) if file == here => secondary.push(Label { range, text: item.text }),
                Some((file, range)) => related.push(Related { file: source(file), range, text: item.text }),
                None => related.push(item),
            }
        }
        if let Some((file, range, text)) = &self.label {
            if *file == here {
                secondary.push(Label { range: *range, text: text.clone() });
            } else {
                related.push(Related { file: source(*file), range: *range, text: text.clone() });
            }
        }
        // Two labels at one place say one thing.
        secondary.dedup_by(|a, b| a.range == b.range && a.text == b.text);
        secondary.retain(|label| label.range != finding.range || label.text != finding.label);
        finding.secondary = secondary;
        finding.related = related;
        for line in &mut reported.lines {
            if let Some((file, range)) = self.locate(TextRange::empty(line.1)) {
                *line = (file, range.start());
            }
        }
        reported.owners.extend(self.owners.iter().copied());
        reported.owners.sort_unstable();
        reported.owners.dedup();
    }
}

/// Moves every range of `object`, built from emitted text, into the virtual space. A container's layout
/// (where a fix would edit it) is dropped: its offsets are in the emitted text, which no file holds, and a
/// view's fix is made again for the file that writes the container ([`crate::fix::relocate`]).
pub fn shift(object: &mut Object) {
    let by = TextSize::from(VIRTUAL_BASE);
    let shift = |range: &mut TextRange| *range += by;
    shift(&mut object.range);
    for code in &mut object.ignore {
        shift(&mut code.range);
    }
    for pod in &mut object.pods {
        for resource in pod.resources.limits.iter_mut().chain(pod.resources.requests.iter_mut()) {
            shift(&mut resource.value.range);
        }
        for container in pod.containers.iter_mut().chain(pod.init_containers.iter_mut()) {
            container.layout = None;
            shift(&mut container.anchor);
            let resources = &mut container.resources;
            for resource in resources.limits.iter_mut().chain(resources.requests.iter_mut()) {
                shift(&mut resource.value.range);
            }
            for env in &mut container.env {
                shift(&mut env.name_range);
                match &mut env.source {
                    EnvSource::Literal(value) => shift(&mut value.range),
                    EnvSource::ResourceField { resource, divisor, .. } => {
                        shift(&mut resource.range);
                        if let Some(divisor) = divisor {
                            shift(&mut divisor.range);
                        }
                    }
                    EnvSource::ConfigMapKey { .. } | EnvSource::Other => {}
                }
            }
            for from in &mut container.env_from {
                shift(&mut from.range);
            }
        }
    }
}

/// The scan's file index of each source, filled in by the caller.
pub fn source_files(count: usize, known: impl Fn(SourceId) -> Option<usize>) -> Arc<Vec<Option<usize>>> {
    Arc::new((0..count as SourceId).map(known).collect())
}

/// A finding's label at the overlay, for [`Provenance::label`].
pub fn overlay_label(overlay: &str) -> String {
    format!("in overlay `{overlay}`")
}
