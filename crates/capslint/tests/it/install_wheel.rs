//! The Python wheel, built as a release builds it (`scripts/build-wheel`: maturin with zig, manylinux2014)
//! and installed with pip from a local wheelhouse: the binary is the wheel's only script, it needs no
//! glibc newer than 2.17 (read from the ELF file itself), and once installed `capslint check` and
//! `capslint exec` work, which is how capslint gets into a Python image.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The oldest glibc the Linux wheels support (manylinux2014).
const GLIBC_FLOOR: (u32, u32) = (2, 17);

fn skip(reason: &str) {
    skip_integration("install_wheel", reason);
}

/// The names in a wheel (a zip file), read with Python's zipfile.
fn wheel_names(wheel: &Path) -> Vec<String> {
    let list = "import sys, zipfile\nprint('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))";
    let out = checked(Command::new(host_python()).args(["-c", list]).arg(wheel), "reading the wheel").unwrap();
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

/// One member of a wheel, as text.
fn wheel_text(wheel: &Path, name: &str) -> String {
    let read = "import sys, zipfile\nsys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())";
    let out = checked(Command::new(host_python()).args(["-c", read]).arg(wheel).arg(name), "reading the wheel");
    String::from_utf8_lossy(&out.unwrap().stdout).into_owned()
}

/// A new virtual environment with the wheel installed by pip from `house` alone; its `bin` directory.
fn install(house: &Path, venv: &Path) -> Result<PathBuf, String> {
    checked(Command::new(host_python()).args(["-m", "venv"]).arg(venv), "python -m venv")?;
    let bin = venv.join("bin");
    let mut pip = Command::new(bin.join("python"));
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--find-links"])
        .arg(house)
        .arg(format!("capslint=={VERSION}"));
    checked(&mut pip, "pip install capslint from the wheelhouse")?;
    Ok(bin)
}

/// `readelf -V`'s version needs, as (library, version) pairs, when readelf is installed.
fn readelf_needs(binary: &Path) -> Option<Vec<(String, String)>> {
    let out = Command::new("readelf").arg("-V").arg("-W").arg(binary).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let section = text.split("Version needs section").nth(1)?;
    let mut needs = Vec::new();
    let mut file = String::new();
    for line in section.lines() {
        if let Some(rest) = line.split("File: ").nth(1) {
            file = rest.split_whitespace().next().unwrap_or_default().to_string();
        } else if let Some(rest) = line.split("Name: ").nth(1) {
            needs.push((file.clone(), rest.split_whitespace().next().unwrap_or_default().to_string()));
        }
    }
    Some(needs)
}

#[test]
fn the_wheel_holds_only_the_binary_with_the_crate_metadata() {
    let wheel = match wheel() {
        Ok(wheel) => wheel,
        Err(reason) => return skip(&reason),
    };
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(&format!("capslint-{VERSION}-py3-none-")), "{name}");
    assert!(name.contains("manylinux_2_17_x86_64") && name.contains("manylinux2014_x86_64"), "{name}");

    let names = wheel_names(wheel);
    let script = format!("capslint-{VERSION}.data/scripts/capslint");
    assert!(names.contains(&script), "the binary is the wheel's script: {names:?}");
    let dist_info = format!("capslint-{VERSION}.dist-info/");
    for name in &names {
        assert!(name == &script || name.starts_with(&dist_info), "nothing but the binary and metadata: {name}");
    }
    let metadata = wheel_text(wheel, &format!("{dist_info}METADATA"));
    for line in ["Name: capslint", &format!("Version: {VERSION}"), "License-Expression: MIT", "Requires-Python: >=3.8"]
    {
        assert!(metadata.lines().any(|found| found == line), "METADATA lacks `{line}`:\n{metadata}");
    }
    assert!(metadata.contains("capslint stops CPU oversubscription"), "the README is the description");
    assert!(names.iter().any(|name| name.ends_with("/LICENSE")), "the license ships: {names:?}");
}

#[test]
fn the_installed_binary_needs_glibc_2_17_at_most_and_runs_check_and_exec() {
    let house = match wheelhouse("wheelhouse-pip", &[]) {
        Ok(house) => house,
        Err(reason) => return skip(&reason),
    };
    let venv = tempfile::TempDir::new().unwrap();
    let bin = install(&house, venv.path()).unwrap();
    let capslint = bin.join("capslint");

    let needs = version_needs(&std::fs::read(&capslint).unwrap()).unwrap();
    let listed: Vec<String> = needs.iter().map(|(file, versions)| format!("{file}: {}", versions.join(" "))).collect();
    println!("version needs of the wheel's binary:\n  {}", listed.join("\n  "));
    if let Some(readelf) = readelf_needs(&capslint) {
        let ours: Vec<(String, String)> = needs
            .iter()
            .flat_map(|(file, versions)| versions.iter().map(move |version| (file.clone(), version.clone())))
            .collect();
        assert_eq!(ours, readelf, "the ELF reader and readelf -V disagree");
    }
    let highest = highest_glibc(&needs).expect("the binary needs versioned glibc symbols: none were found");
    note(&format!("glibc floor of the wheel's binary: GLIBC_{}.{}", highest.0, highest.1));
    assert!(
        highest <= GLIBC_FLOOR,
        "the wheel's binary needs GLIBC_{}.{}, newer than the manylinux2014 floor {}.{}: a symbol from a newer \
         glibc was linked ({listed:?})",
        highest.0,
        highest.1,
        GLIBC_FLOOR.0,
        GLIBC_FLOOR.1
    );

    let version = scrubbed(&capslint).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("capslint {VERSION}"));

    let dir = project(&[("train.py", TRAIN)]);
    let out = scrubbed(&capslint)
        .current_dir(dir.path())
        .args(["check", "--output-format", "concise", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", combined(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("train.py:7:20: CAP101"), "{}", combined(&out));

    // The entrypoint of a compute image: the caps are set from the declared limit, then the command runs.
    let out = scrubbed(&capslint)
        .args(["exec", "--quiet", "--", "sh", "-c", "echo $OMP_NUM_THREADS $OMP_WAIT_POLICY"])
        .env("CPU_LIMIT", "2")
        .env_remove("OMP_NUM_THREADS")
        .env_remove("OMP_WAIT_POLICY")
        .output()
        .unwrap();
    let caps = String::from_utf8_lossy(&out.stdout);
    assert!(caps.trim() == "2 passive" || caps.trim() == "1 passive", "{}", combined(&out));
}

#[test]
fn the_elf_reader_finds_the_versions_of_the_test_binary() {
    // The binary under test is linked against this machine's glibc: its needs are read, whatever they are.
    let needs = version_needs(&std::fs::read(binary()).unwrap()).unwrap();
    let (file, versions) = needs.iter().find(|(file, _)| file.starts_with("libc.so")).expect("libc is needed");
    assert!(versions.iter().any(|version| version.starts_with("GLIBC_2.")), "{file}: {versions:?}");
    assert!(highest_glibc(&needs).is_some_and(|highest| highest >= (2, 2)));
    assert_eq!(highest_glibc(&[("libc.so.6".into(), vec!["GLIBC_2.2.5".into(), "GLIBC_2.34".into()])]), Some((2, 34)));
    assert!(version_needs(b"#!/bin/sh\n").is_err());
}
