//! capslint's findings, as every analysis and every report sees them: the rule registry ([`registry`]) and
//! the selections of it a configuration makes ([`selection`]), a finding and its diagnostic
//! ([`diagnostic`]), the fix it carries ([`fix`]), the source text and spans it points into ([`source`]),
//! suppression comments ([`suppress`]), the fingerprint a baseline records ([`fingerprint`]), and the
//! internal error a contained panic becomes ([`contain`]).
//!
//! It reads no file and knows no configuration file: settings and discovery are `capslint_workspace`'s,
//! the analyses that make findings are above it.

pub mod contain;
pub mod diagnostic;
pub mod fingerprint;
pub mod fix;
pub mod registry;
pub mod selection;
pub mod source;
pub mod suppress;
