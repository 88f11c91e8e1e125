//! The Linux wheel, built once and shared by every test that installs it: `scripts/build-wheel` (maturin
//! and zig, as a release builds it) into `target/tmp/wheel/<hash of the sources>/`, so a run whose
//! sources did not change reuses the last build. `CAPSLINT_TEST_WHEEL` names a wheel built beforehand
//! instead.
//!
//! A wheelhouse is a directory of wheels that pip and uv install from instead of the package index
//! (`--find-links`, `--no-index`): here, the wheel alone, or with the build backend of the pre-commit
//! mirror.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::root;
use super::tools::{checked, host_python, note, tmp};

/// What the wheel is built from: a change to any of these builds it again.
const SOURCES: &[&str] = &["Cargo.toml", "Cargo.lock", "pyproject.toml", "README.md", "LICENSE", "rules", "src"];

/// The wheel's path, built once per test process; `Err` says why there is none.
pub fn wheel() -> Result<&'static Path, String> {
    static WHEEL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    WHEEL.get_or_init(build).as_deref().map_err(Clone::clone)
}

fn build() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CAPSLINT_TEST_WHEEL") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("CAPSLINT_TEST_WHEEL={} does not exist", path.display()))
        };
    }
    let cache = tmp().join("wheel");
    std::fs::create_dir_all(&cache).map_err(|error| error.to_string())?;
    let lock = File::create(tmp().join("wheel.lock")).map_err(|error| error.to_string())?;
    lock.lock().map_err(|error| error.to_string())?;
    let key = format!("{:016x}", sources_hash());
    let dir = cache.join(&key);
    if let Some(found) = wheel_in(&dir) {
        return Ok(found);
    }
    // One build is kept: the others are of older sources.
    for entry in std::fs::read_dir(&cache).map_err(|error| error.to_string())?.flatten() {
        let _ = std::fs::remove_dir_all(entry.path());
    }
    let partial = cache.join(format!("{key}.partial"));
    let started = std::time::Instant::now();
    let mut command = Command::new(root().join("scripts/build-wheel"));
    command
        .arg(&partial)
        .env("CARGO_TARGET_DIR", tmp().join("wheel-cargo"))
        .env("CAPSLINT_WHEEL_VENV", tmp().join("wheel-venv"))
        .env("PYTHON", host_python());
    checked(&mut command, "scripts/build-wheel")?;
    note(&format!("wheel built in {:.1} s", started.elapsed().as_secs_f64()));
    std::fs::rename(&partial, &dir).map_err(|error| error.to_string())?;
    wheel_in(&dir).ok_or_else(|| format!("scripts/build-wheel left no wheel in {}", dir.display()))
}

/// The one `capslint-*.whl` in `dir`.
fn wheel_in(dir: &Path) -> Option<PathBuf> {
    let mut wheels: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.file_name().is_some_and(|name| name.to_string_lossy().ends_with(".whl")))
        .collect();
    (wheels.len() == 1).then(|| wheels.remove(0))
}

/// FNV-1a over the paths and contents of [`SOURCES`], in a stable order.
fn sources_hash() -> u64 {
    let mut files = Vec::new();
    for source in SOURCES {
        collect(&root().join(source), &mut files);
    }
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for file in files {
        feed(file.strip_prefix(root()).unwrap_or(&file).to_string_lossy().as_bytes());
        feed(&std::fs::read(&file).unwrap_or_default());
    }
    hash
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            collect(&entry.path(), files);
        }
    } else if path.is_file() {
        files.push(path.to_path_buf());
    }
}

/// A new directory under `target/tmp` holding the wheel (hard-linked, or copied), plus the wheels of
/// `extra` (`name==version`) downloaded from PyPI once into `target/tmp/wheelhouse-cache`.
pub fn wheelhouse(name: &str, extra: &[&str]) -> Result<PathBuf, String> {
    let wheel = wheel()?;
    let house = tmp().join(name);
    let _ = std::fs::remove_dir_all(&house);
    std::fs::create_dir_all(&house).map_err(|error| error.to_string())?;
    let target = house.join(wheel.file_name().expect("a file name"));
    if std::fs::hard_link(wheel, &target).is_err() {
        std::fs::copy(wheel, &target).map_err(|error| error.to_string())?;
    }
    if !extra.is_empty() {
        let cache = tmp().join("wheelhouse-cache");
        let mut download = Command::new(host_python());
        download
            .args(["-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--only-binary=:all:"])
            .args(["--no-deps", "--dest"])
            .arg(&cache)
            .args(extra);
        checked(&mut download, &format!("`pip download {}` (no network?)", extra.join(" ")))?;
        for entry in std::fs::read_dir(&cache).map_err(|error| error.to_string())?.flatten() {
            let name = entry.file_name().to_string_lossy().to_lowercase();
            if extra.iter().any(|requirement| name.starts_with(&requirement.replace("==", "-").to_lowercase())) {
                std::fs::copy(entry.path(), house.join(entry.file_name())).map_err(|error| error.to_string())?;
            }
        }
    }
    Ok(house)
}
