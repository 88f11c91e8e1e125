//! capslint's lint pipeline, from the files a run discovered to its report: checking each input and the
//! manifests together ([`lint`]), or each file as the walk finds it ([`while_walking`]), fixing and writing suppression comments ([`fix`]), the baseline
//! ([`baseline`]) and every output format ([`report`]).
//!
//! It holds no rule: the analyses are `capslint_python`, `capslint_manifests` and
//! `capslint_model_config`; it parses no command line: that is the `capslint` binary's.

pub mod baseline;
pub mod fix;
pub mod lint;
pub mod report;
pub mod while_walking;
