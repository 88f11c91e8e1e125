//! Links `compat/memfd_create.c` into Linux glibc builds, so that the binary needs no glibc newer than
//! 2.17 (the Linux wheels' manylinux2014 floor): see that file.

fn main() {
    println!("cargo::rerun-if-changed=compat/memfd_create.c");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        // No cargo warnings: under maturin's zig wrapper, cc's compiler probe prints a spurious one.
        cc::Build::new().file("compat/memfd_create.c").cargo_warnings(false).compile("capslint_compat");
    }
}
