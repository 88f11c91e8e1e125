//! Leaving parts of a text out without moving the rest: every byte of them but line breaks becomes a
//! space, so every offset, line and column outside them stays where it was, and a tree parsed from the
//! result locates its nodes in the original text.

use std::ops::Range;

/// `text` with the bytes of `ranges` (in any order, overlapping or not) replaced by spaces, line breaks
/// kept. A range that cuts a character is widened to the whole character, so the result is UTF-8.
pub fn blanked(text: &str, ranges: impl IntoIterator<Item = Range<usize>>) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for range in ranges {
        let start = (0..=range.start.min(text.len())).rev().find(|at| text.is_char_boundary(*at)).unwrap_or(0);
        let end = (range.end.min(text.len())..=text.len()).find(|at| text.is_char_boundary(*at)).unwrap_or(text.len());
        for byte in &mut bytes[start..end.max(start)] {
            if !matches!(byte, b'\n' | b'\r') {
                *byte = b' ';
            }
        }
    }
    // Whole characters were replaced by ASCII spaces (line breaks are never part of another character):
    // the bytes are UTF-8, and the original text is only a fallback that cannot be taken.
    String::from_utf8(bytes).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::blanked;

    #[test]
    fn ranges_become_spaces_and_line_breaks_stay() {
        assert_eq!(blanked("ab\ncd\r\nef", std::iter::once(1..8)), "a \n  \r\n f");
        assert_eq!(blanked("abcdef", [4..5, 0..2, 1..3]), "   d f");
        // Past the end, or empty: what lies in the text is blanked.
        let (start, end) = (3, 1);
        assert_eq!(blanked("abc", [2..9, start..end]), "ab ");
    }

    #[test]
    fn a_character_cut_by_a_range_is_blanked_whole() {
        let text = "x=\"é\"\ny";
        // `é` is two bytes: a range ending inside it takes all of it.
        let cut = blanked(text, std::iter::once(0..4));
        assert_eq!(cut.len(), text.len());
        assert_eq!(cut, "     \"\ny");
        assert_eq!(blanked("aé", std::iter::once(2..3)), "a  ");
    }
}
