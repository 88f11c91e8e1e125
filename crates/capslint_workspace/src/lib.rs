//! capslint's workspace: what a run checks and under which settings. The configuration files and the
//! settings they resolve to ([`config`], [`settings`]), the files to check ([`discover`]), the roots a run
//! may read below ([`confine`]), paths made comparable ([`paths`]), the edited text `--fix` keeps in
//! memory ([`edited`]) and the atomic replacement of a file ([`atomic`]). What differs between operating
//! systems in opening, identifying and rewriting a file is behind one private module, `platform`.
//!
//! It analyses nothing: no rule runs here, and of the parsers only ruff's expression parser is called, to
//! validate the `fix-thread-count` setting. It may depend on `capslint_cpu` and `capslint_diagnostics`
//! alone.

pub mod atomic;
pub mod config;
pub mod confine;
pub mod discover;
pub mod edited;
pub mod paths;
mod platform;

/// The identity of a file whatever the path that reaches it.
pub use platform::FileId;
pub mod settings;
