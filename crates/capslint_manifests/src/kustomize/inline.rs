//! Patches written inline in a kustomization (`patch: |-` blocks, strings of `patchesStrategicMerge`):
//! their text is parsed on its own, then every range is mapped back into the kustomization file, line by
//! line for a literal block scalar (`|`), to the whole scalar for any other style.

use ruff_text_size::{TextRange, TextSize};

use super::tree::{Data, SourceId, Tree};

/// Maps offsets of a block scalar's content to offsets of the file that holds it.
pub struct LineMap {
    /// `(content offset, file offset)` of every content line's start; empty when the scalar is not a
    /// literal block whose lines could be matched.
    lines: Vec<(u32, u32)>,
    /// The scalar's range, for anything not mapped line by line.
    whole: TextRange,
}

impl LineMap {
    /// The map of the scalar `content`, written at `range` of `file_text`.
    pub fn new(file_text: &str, range: TextRange, content: &str) -> LineMap {
        let whole = range;
        let start = usize::from(range.start()).min(file_text.len());
        let raw = file_text.get(start..usize::from(range.end())).unwrap_or_default();
        // The block's lines start after its header (`|-`), which the range may or may not include.
        let body_start = if raw.starts_with('|') {
            raw.find('\n').map(|newline| start + newline + 1)
        } else {
            let before = file_text.get(..start).unwrap_or_default();
            let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
            let header = before.get(..line_start.saturating_sub(1)).unwrap_or_default().rsplit('\n').next();
            let header = header.unwrap_or_default().split(" #").next().unwrap_or_default().trim_end();
            (before.get(line_start..).is_some_and(|indent| indent.trim().is_empty())
                && header.rsplit(' ').next().is_some_and(|last| last.starts_with('|')))
            .then_some(line_start)
        };
        let mut lines = Vec::new();
        if let Some(body_start) = body_start {
            let body = file_text.get(body_start..usize::from(range.end()).max(body_start)).unwrap_or_default();
            let indent = body
                .lines()
                .find(|line| !line.trim().is_empty())
                .map_or(0, |line| line.len() - line.trim_start_matches(' ').len());
            let mut file_offset = body_start;
            let mut content_offset = 0usize;
            let mut body_lines = body.split('\n');
            for content_line in content.split('\n') {
                let Some(body_line) = body_lines.next() else { break };
                let shown = body_line.get(indent.min(body_line.len())..).unwrap_or_default();
                if shown.trim_end_matches('\r') != content_line && !content_line.is_empty() {
                    lines.clear();
                    break;
                }
                lines.push((content_offset as u32, (file_offset + indent.min(body_line.len())) as u32));
                file_offset += body_line.len() + 1;
                content_offset += content_line.len() + 1;
            }
        }
        LineMap { lines, whole }
    }

    fn offset(&self, offset: TextSize) -> Option<TextSize> {
        let offset = u32::from(offset);
        let index = self.lines.partition_point(|(start, _)| *start <= offset).checked_sub(1)?;
        let (content, file) = self.lines[index];
        Some(TextSize::from(file + (offset - content)))
    }

    /// The file range of a content range.
    pub fn range(&self, range: TextRange) -> TextRange {
        match (self.offset(range.start()), self.offset(range.end())) {
            (Some(start), Some(end)) if start <= end => TextRange::new(start, end),
            _ => self.whole,
        }
    }
}

/// Moves every origin of `tree` (parsed from an inline patch) into the kustomization file `source`.
pub fn remap(tree: &mut Tree, map: &LineMap, source: SourceId) {
    let mut pending = vec![tree];
    while let Some(tree) = pending.pop() {
        tree.origin.source = source;
        tree.origin.range = map.range(tree.origin.range);
        match &mut tree.data {
            Data::Map(entries) => {
                for (key, value) in entries.iter_mut() {
                    key.origin.source = source;
                    key.origin.range = map.range(key.origin.range);
                    pending.push(value);
                }
            }
            Data::Seq(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_block_lines_map_back_to_the_file() {
        let file = "patches:\n- patch: |-\n    kind: Deployment\n    spec:\n      cpu: 500m\n";
        // The scalar's range starts at its header or at its first line: both map.
        let first = file.find("kind").unwrap();
        let range = TextRange::new(TextSize::from(first as u32), TextSize::from(file.len() as u32));
        let content = "kind: Deployment\nspec:\n  cpu: 500m";
        let at = content.find("500m").unwrap() as u32;
        let mapped =
            LineMap::new(file, range, content).range(TextRange::new(TextSize::from(at), TextSize::from(at + 4)));
        assert_eq!(&file[mapped], "500m");
        let start = file.find('|').unwrap();
        let range = TextRange::new(TextSize::from(start as u32), TextSize::from(file.len() as u32));
        let content = "kind: Deployment\nspec:\n  cpu: 500m";
        let map = LineMap::new(file, range, content);
        let at = content.find("500m").unwrap() as u32;
        let mapped = map.range(TextRange::new(TextSize::from(at), TextSize::from(at + 4)));
        assert_eq!(&file[mapped], "500m");
        // Folded or quoted scalars map to the whole scalar.
        let map = LineMap::new(file, range, "something else");
        assert_eq!(map.range(TextRange::new(TextSize::from(0), TextSize::from(4))), range);
    }
}
