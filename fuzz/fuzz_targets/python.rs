//! Arbitrary bytes as a Python file: parse, model, every rule, suppressions, never a panic.
#![no_main]

#[path = "common.rs"]
mod common;

use capslint_workspace::discover::FileKind;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::lint(data, "fuzz.py", FileKind::Python));
