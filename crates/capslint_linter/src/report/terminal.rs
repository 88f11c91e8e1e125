//! Text bound for a terminal, made inert: file names and messages come from the files being checked,
//! and a control character in them (ESC, a newline, a carriage return, DEL, a C1 code) would otherwise
//! reach the terminal raw, where it can forge report lines or drive the terminal.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character written as a visible escape (`\n`, `\r`, `\t`, `\x1b`,
/// `\u{9b}`), for file names, which must stay on one line and shown exactly.
pub fn escape_name(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// `text` with every control character but newline written as a visible escape, for messages and
/// help, whose lines are the report's own.
pub fn escape_text(text: &str) -> Cow<'_, str> {
    escape(text, |character| character == '\n')
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|character| character.is_control() && !keep(character)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if !character.is_control() || keep(character) {
            out.push(character);
            continue;
        }
        match character {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0'..='\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(character));
            }
            _ => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(character));
            }
        }
    }
    Cow::Owned(out)
}

/// The one-character picture of a control character in a source snippet (`␛` for ESC, `␡` for DEL,
/// `�` for a C1 code), or `None` for a character shown as it is (tab included: the report expands it).
pub fn picture(character: char) -> Option<char> {
    match character {
        '\t' => None,
        '\0'..='\u{1f}' => char::from_u32(0x2400 + u32::from(character)),
        '\u{7f}' => Some('\u{2421}'),
        '\u{80}'..='\u{9f}' => Some('\u{fffd}'),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_every_control_character() {
        assert_eq!(escape_name("plain/é.py"), "plain/é.py");
        assert!(matches!(escape_name("plain.py"), Cow::Borrowed(_)));
        assert_eq!(escape_name("a\x1b[31mb\n.py"), "a\\x1b[31mb\\n.py");
        assert_eq!(escape_name("c\rd\te\x7f\u{9b}.py"), "c\\rd\\te\\x7f\\u{9b}.py");
    }

    #[test]
    fn text_keeps_its_newlines() {
        assert_eq!(escape_text("one\ntwo\x1b]0;x\x07"), "one\ntwo\\x1b]0;x\\x07");
    }

    #[test]
    fn pictures_are_one_character() {
        assert_eq!(picture('\x1b'), Some('␛'));
        assert_eq!(picture('\0'), Some('␀'));
        assert_eq!(picture('\x7f'), Some('␡'));
        assert_eq!(picture('\t'), None);
        assert_eq!(picture('a'), None);
    }
}
