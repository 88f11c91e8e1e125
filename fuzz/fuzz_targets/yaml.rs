//! Arbitrary bytes as a YAML file: the hostile-input guard, parsing, the manifest model, every rule.
#![no_main]

#[path = "common.rs"]
mod common;

use capslint_workspace::discover::FileKind;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::lint(data, "fuzz.yaml", FileKind::Yaml));
