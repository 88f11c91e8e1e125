//! Applying fixes to one text: in order of position, each fix whole or not at all, none overlapping one
//! already applied (ruff's rule; the ones left out are tried again on the next pass).

use ruff_text_size::TextRange;

use super::{Edit, Fix};

/// The text after applying what could be applied, and which of the fixes were applied (by index).
#[derive(Debug)]
pub struct Applied {
    /// The new text.
    pub text: String,
    /// Indexes into the fixes given, of those applied (a fix equal to one applied counts as applied).
    pub applied: Vec<usize>,
}

/// Applies `fixes` to `text`. Fixes are taken by the position of their first edit; a fix whose edits
/// overlap (or touch, for two insertions at one point) an applied edit is skipped; a fix equal to one
/// already applied (several findings of one container propose the same block) counts as applied.
/// Edits outside the text or not on character boundaries make their fix skipped, never a panic.
pub fn apply(text: &str, fixes: &[&Fix]) -> Applied {
    let mut order: Vec<usize> = (0..fixes.len()).collect();
    order.sort_by_key(|&index| (fixes[index].range().start(), fixes[index].range().end(), index));
    let mut taken: Vec<&Edit> = Vec::new();
    let mut chosen: Vec<usize> = Vec::new();
    let mut applied = Vec::new();
    for index in order {
        let fix = fixes[index];
        if chosen.iter().any(|&other| fixes[other].edits == fix.edits) {
            applied.push(index);
            continue;
        }
        let fits = fix.edits.iter().all(|edit| valid(text, edit.range))
            && !fix.edits.iter().any(|edit| taken.iter().any(|other| overlaps(edit.range, other.range)))
            && !overlaps_itself(&fix.edits);
        if fits {
            taken.extend(&fix.edits);
            chosen.push(index);
            applied.push(index);
        }
    }
    taken.sort_by_key(|edit| (edit.range.start(), edit.range.end()));
    let mut out = String::with_capacity(text.len() + taken.iter().map(|edit| edit.content.len()).sum::<usize>());
    let mut at = 0;
    for edit in taken {
        out.push_str(&text[at..usize::from(edit.range.start())]);
        out.push_str(&edit.content);
        at = usize::from(edit.range.end());
    }
    out.push_str(&text[at..]);
    applied.sort_unstable();
    Applied { text: out, applied }
}

fn valid(text: &str, range: TextRange) -> bool {
    let (start, end) = (usize::from(range.start()), usize::from(range.end()));
    end <= text.len() && text.is_char_boundary(start) && text.is_char_boundary(end)
}

/// Whether two edits conflict: their ranges share a byte, or an insertion falls inside or at the edge of
/// the other edit (two insertions at one point would be ordered arbitrarily).
fn overlaps(a: TextRange, b: TextRange) -> bool {
    if a.is_empty() || b.is_empty() {
        let (point, other) = if a.is_empty() { (a.start(), b) } else { (b.start(), a) };
        return other.start() <= point && point <= other.end();
    }
    a.start() < b.end() && b.start() < a.end()
}

fn overlaps_itself(edits: &[Edit]) -> bool {
    edits.windows(2).any(|pair| pair[1].range.start() < pair[0].range.end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_text_size::TextSize;

    fn at(start: u32, end: u32) -> TextRange {
        TextRange::new(TextSize::from(start), TextSize::from(end))
    }

    #[test]
    fn applies_in_order_and_skips_overlaps() {
        let text = "n_jobs=-1, m=-1";
        let first = Fix::safe("a", vec![Edit::replacement("1", at(7, 9))]);
        let overlapping = Fix::safe("b", vec![Edit::replacement("2", at(8, 9))]);
        let second = Fix::safe("c", vec![Edit::replacement("1", at(13, 15))]);
        let result = apply(text, &[&second, &overlapping, &first]);
        assert_eq!(result.text, "n_jobs=1, m=1");
        assert_eq!(result.applied, vec![0, 2]);
    }

    #[test]
    fn equal_fixes_are_applied_once() {
        let block = Fix::safe("env", vec![Edit::insertion("env: []\n", TextSize::from(0))]);
        let result = apply("a: 1\n", &[&block, &block.clone()]);
        assert_eq!(result.text, "env: []\na: 1\n");
        assert_eq!(result.applied, vec![0, 1]);
    }

    #[test]
    fn insertions_at_one_point_conflict() {
        let a = Fix::safe("a", vec![Edit::insertion("x", TextSize::from(1))]);
        let b = Fix::safe("b", vec![Edit::insertion("y", TextSize::from(1))]);
        assert_eq!(apply("ab", &[&a, &b]).text, "axb");
    }

    #[test]
    fn edits_outside_the_text_or_inside_a_character_are_skipped() {
        let outside = Fix::safe("a", vec![Edit::replacement("x", at(3, 9))]);
        let split = Fix::safe("b", vec![Edit::replacement("x", at(1, 2))]);
        let result = apply("é!", &[&outside, &split]);
        assert_eq!(result.text, "é!");
        assert!(result.applied.is_empty());
    }
}
