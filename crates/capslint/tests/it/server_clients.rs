//! `capslint server` driven by real clients: pytest-lsp (pygls's client, pinned from PyPI, the tests
//! of `tests/lsp/`) and a headless Neovim set up as the README says (`tests/editors/capslint.lua`),
//! whose diagnostics must be those `capslint check` reports. Neovim is not on PyPI: where it is not
//! installed its test prints a SKIP line.

use std::path::Path;
use std::process::Command;

use crate::support::*;

/// pytest-lsp and what it runs on, pinned.
const PYTEST_LSP: &[&str] =
    &["pytest-lsp==1.0.1", "pygls==2.1.1", "lsprotocol==2025.0.0", "pytest==9.2.0", "pytest-asyncio==1.5.0"];

#[test]
fn pytest_lsp_drives_the_server() {
    let bin = match tool_venv("pytest-lsp", PYTEST_LSP) {
        Ok(bin) => bin,
        Err(reason) => return skip_integration("server_clients::pytest_lsp", &reason),
    };
    let output = Command::new(bin.join("python"))
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/lsp"])
        .current_dir(root())
        .env("CAPSLINT_BINARY", binary())
        .env("NO_COLOR", "1")
        .output()
        .expect("pytest runs");
    assert!(output.status.success(), "pytest-lsp failed:\n{}", combined(&output));
    let text = combined(&output);
    assert!(text.contains("3 passed"), "{text}");
}

/// Whether Debian's `nvim` is on PATH.
fn has_neovim() -> bool {
    Command::new("nvim").arg("--version").output().is_ok_and(|output| output.status.success())
}

#[test]
fn neovim_shows_the_findings_check_reports() {
    if !has_neovim() {
        note("SKIP server_clients::neovim: nvim is not installed");
        return;
    }
    let root = root();
    let out_dir = tempfile::TempDir::new().unwrap();
    for file in ["fixtures/python/CAP102.py", "fixtures/k8s/CAP203.yaml"] {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        // Neovim counts columns in bytes, the server in UTF-16 units for it, `check` in characters.
        assert!(text.is_ascii(), "{file} is ASCII, so the three agree");
        let out = out_dir.path().join("diagnostics.txt");
        let status = scrubbed("nvim")
            .args(["--headless", "--clean", "-u", "NONE", "-c", "luafile tests/editors/neovim_check.lua"])
            .current_dir(&root)
            .env("CAPSLINT_BINARY", binary())
            .env("CAPSLINT_FILE", &path)
            .env("CAPSLINT_OUT", &out)
            .status()
            .expect("nvim runs");
        assert!(status.success(), "nvim: {status}");
        let shown: Vec<String> = std::fs::read_to_string(&out).unwrap().lines().map(str::to_string).collect();
        let mut expected: Vec<String> = check_json(&root, &[Path::new(file)])
            .into_iter()
            .map(|(_, (code, start, end))| format!("{code} {}:{} {}:{}", start.0, start.1, end.0, end.1))
            .collect();
        expected.sort();
        assert!(!expected.is_empty(), "{file} has findings");
        assert_eq!(shown, expected, "{file}");
    }
}

#[test]
fn the_readme_holds_the_neovim_set_up_the_test_runs() {
    let set_up = std::fs::read_to_string(root().join("tests/editors/capslint.lua")).unwrap();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains(&format!("```lua\n{set_up}```")), "README.md lacks tests/editors/capslint.lua verbatim");
}
