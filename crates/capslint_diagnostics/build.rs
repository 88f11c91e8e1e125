//! Finds the rule pages the registry embeds: the repository's `rules/` in a checkout (on every platform,
//! without relying on the `rules` link, which a checkout without symbolic links turns into a file), or
//! the crate's own `rules/` in a published package, where the link became the files themselves.

use std::path::{Path, PathBuf};

fn main() {
    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let checkout = crate_dir.join("../../rules");
    let packaged = crate_dir.join("rules");
    let rules = if is_rules(&checkout) { checkout } else { packaged };
    let rules = rules.canonicalize().unwrap_or(rules);
    println!("cargo::rerun-if-changed={}", rules.display());
    println!("cargo::rustc-env=CAPSLINT_RULES_DIR={}", rules.display());
}

/// Whether `dir` is a directory of rule pages.
fn is_rules(dir: &Path) -> bool {
    dir.join("CAP001.md").is_file()
}
