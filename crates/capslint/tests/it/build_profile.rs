//! The optimisation profile of release builds (`.cargo/config.toml`, `scripts/rustc-pgo`, `pgo/`): the
//! wrapper adds the profile to optimised builds for x86_64 Linux by a compiler of the profile's LLVM, and
//! to nothing else. The wrapper runs against a stand-in compiler that prints its arguments.

use std::path::Path;
use std::process::Command;

use crate::support::*;

/// Runs the wrapper with a stand-in compiler whose `-vV` reports `llvm` as its LLVM version, and returns
/// the arguments the stand-in was called with.
fn compiled_with(llvm: &str, arguments: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let compiler = dir.path().join("rustc");
    std::fs::write(
        &compiler,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -vV ]; then printf 'rustc 1.95.0\\nLLVM version: {llvm}\\n'; exit 0; fi\necho \"$@\"\n"
        ),
    )
    .unwrap();
    make_executable(&compiler);
    let output = Command::new(root().join("scripts/rustc-pgo")).arg(&compiler).args(arguments).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn profile_llvm() -> String {
    std::fs::read_to_string(root().join("pgo/llvm-version")).unwrap().trim().to_string()
}

#[test]
fn cargo_builds_through_the_wrapper_and_the_profile_is_there() {
    let config: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join(".cargo/config.toml")).unwrap()).unwrap();
    assert_eq!(config["build"]["rustc-wrapper"].as_str(), Some("scripts/rustc-pgo"));
    let profile = std::fs::metadata(root().join("pgo/capslint.profdata")).unwrap();
    assert!(profile.len() > 100_000, "a profile of the fixtures' run, {} bytes", profile.len());
    assert!(profile_llvm().parse::<u32>().is_ok(), "pgo/llvm-version holds a major version");
}

#[test]
fn optimised_builds_read_the_profile() {
    let llvm = format!("{}.1.2", profile_llvm());
    let compiled = compiled_with(&llvm, &["--crate-name", "capslint", "-C", "opt-level=3", "src/main.rs"]);
    let profile = root().join("pgo/capslint.profdata");
    assert_eq!(
        compiled,
        format!(
            "--crate-name capslint -C opt-level=3 src/main.rs -Cprofile-use={} -Cllvm-args=-no-pgo-warn-mismatch",
            profile.display()
        )
    );
    let for_linux = compiled_with(&llvm, &["-C", "opt-level=3", "--target", "x86_64-unknown-linux-gnu", "lib.rs"]);
    assert!(for_linux.contains("-Cprofile-use="), "{for_linux}");
}

#[test]
fn everything_else_goes_through_unchanged() {
    let llvm = format!("{}.1.2", profile_llvm());
    for arguments in [
        // A debug build, and the compiler's own questions.
        &["--crate-name", "capslint", "-C", "opt-level=0", "src/main.rs"][..],
        &["-", "--crate-name", "___", "--print=file-names"][..],
        // Another target.
        &["-C", "opt-level=3", "--target", "aarch64-unknown-linux-gnu", "lib.rs"][..],
        // The instrumented build of `scripts/pgo`.
        &["-C", "opt-level=3", "-Cprofile-generate=/tmp/raw", "lib.rs"][..],
    ] {
        assert_eq!(compiled_with(&llvm, arguments), arguments.join(" "), "{arguments:?}");
    }
    // A compiler of another LLVM cannot read the profile.
    let arguments = ["-C", "opt-level=3", "lib.rs"];
    assert_eq!(compiled_with("1.0.0", &arguments), arguments.join(" "));
}
