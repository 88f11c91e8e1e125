//! Whether output is colored: `--color auto|always|never`, then the `NO_COLOR`, `FORCE_COLOR` and
//! `CLICOLOR_FORCE` conventions, then whether the stream is a terminal.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::OnceLock;

/// The `--color` choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Color when the stream is a terminal, unless the environment says otherwise.
    #[default]
    Auto,
    /// Always color, even into a pipe or a file.
    Always,
    /// Never color.
    Never,
}

/// The stream a piece of output goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

static CHOICE: OnceLock<ColorChoice> = OnceLock::new();

/// Records the command line's `--color` for the rest of the run (the first call wins).
pub fn set_choice(choice: ColorChoice) {
    let _ = CHOICE.set(choice);
}

/// The recorded `--color` choice (`auto` when none was recorded).
pub fn chosen() -> ColorChoice {
    CHOICE.get().copied().unwrap_or_default()
}

/// Whether output to `stream` is colored, from the recorded choice, the environment and the stream.
pub fn enabled(stream: Stream) -> bool {
    let is_terminal = match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    };
    decide(chosen(), |name| std::env::var_os(name), is_terminal)
}

/// The decision, from the choice, an environment lookup and whether the stream is a terminal.
///
/// `always` and `never` are final. Under `auto`, a non-empty `NO_COLOR` turns color off
/// (no-color.org); else a non-empty `FORCE_COLOR` (force-color.org) or a `CLICOLOR_FORCE` other than
/// `0` turns it on; else a terminal gets color.
pub fn decide(choice: ColorChoice, env: impl Fn(&str) -> Option<OsString>, is_terminal: bool) -> bool {
    let set = |name: &str| env(name).is_some_and(|value| !value.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set("NO_COLOR") => false,
        ColorChoice::Auto if set("FORCE_COLOR") => true,
        ColorChoice::Auto if env("CLICOLOR_FORCE").is_some_and(|value| !value.is_empty() && value != "0") => true,
        ColorChoice::Auto => is_terminal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| vars.iter().find(|(key, _)| *key == name).map(|(_, value)| OsString::from(value))
    }

    #[test]
    fn the_flag_is_final() {
        assert!(decide(ColorChoice::Always, with(&[("NO_COLOR", "1")]), false));
        assert!(!decide(ColorChoice::Never, with(&[("FORCE_COLOR", "1")]), true));
    }

    #[test]
    fn auto_follows_the_environment_then_the_terminal() {
        assert!(decide(ColorChoice::Auto, with(&[]), true));
        assert!(!decide(ColorChoice::Auto, with(&[]), false));
        assert!(!decide(ColorChoice::Auto, with(&[("NO_COLOR", "1")]), true));
        assert!(decide(ColorChoice::Auto, with(&[("NO_COLOR", "")]), true), "an empty NO_COLOR is unset");
        assert!(!decide(ColorChoice::Auto, with(&[("NO_COLOR", "1"), ("FORCE_COLOR", "1")]), true));
        assert!(decide(ColorChoice::Auto, with(&[("FORCE_COLOR", "1")]), false));
        assert!(!decide(ColorChoice::Auto, with(&[("FORCE_COLOR", "")]), false));
        assert!(decide(ColorChoice::Auto, with(&[("CLICOLOR_FORCE", "1")]), false));
        assert!(!decide(ColorChoice::Auto, with(&[("CLICOLOR_FORCE", "0")]), false));
    }
}
