//! `--fix`, `--diff` and `--add-noqa`: applying the fixes of a run until they settle ([`run`]) and writing
//! suppression comments ([`noqa`]). The fixes themselves, their edits and how safe they are, are findings'
//! data, in `capslint_diagnostics::fix`.

pub mod noqa;
pub mod run;
