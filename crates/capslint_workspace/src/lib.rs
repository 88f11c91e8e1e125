//! capslint's workspace: what a run checks and under which settings. The configuration files and the
//! settings they resolve to ([`config`], [`settings`]), the files to check ([`discover`]), the roots a run
//! may read below ([`confine`]), paths made comparable ([`paths`]), the edited text `--fix` keeps in
//! memory ([`edited`]) and the atomic replacement of a file ([`atomic`]).
//!
//! It analyses nothing: no rule, no parser of Python or manifests is called from here.

pub mod atomic;
pub mod config;
pub mod confine;
pub mod discover;
pub mod edited;
pub mod paths;
mod platform;
pub mod settings;
