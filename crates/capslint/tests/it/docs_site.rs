//! The documentation site, built as `scripts/docs` builds it: with the generator pinned in
//! `docs/requirements.txt` (Sphinx and MyST, installed from PyPI into an environment of their own, see
//! [`crate::support::tool_venv`]), into a temporary directory. The build must give a page per rule of
//! `rules/`, the rule index and a page per page of `docs/`; and it must be strict: a copy of the sources
//! with a link to a missing page, a link to a missing section, or a page the README does not link fails
//! to build, naming the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::*;

const REQUIREMENTS: &str = "docs/requirements.txt";
/// What `scripts/docs` reads: copied to build the site from a changed copy of the sources.
const SITE_SOURCES: &[&str] = &["README.md", "CHANGELOG.md", "LICENSE", "docs", "rules", "scripts/docs"];

fn skip(reason: &str) {
    skip_integration("docs_site", reason);
}

/// The pinned `name==version` lines of `docs/requirements.txt`.
fn requirements() -> Vec<String> {
    let text = std::fs::read_to_string(root().join(REQUIREMENTS)).unwrap();
    let pins: Vec<String> = text
        .lines()
        .map(|line| line.split('#').next().unwrap().trim())
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect();
    for pin in &pins {
        assert!(pin.contains("=="), "{REQUIREMENTS}: `{pin}` is not pinned to one version");
    }
    for generator in ["Sphinx==", "myst-parser=="] {
        assert!(pins.iter().any(|pin| pin.starts_with(generator)), "{REQUIREMENTS} pins no {generator}");
    }
    pins
}

/// The interpreter of the environment that holds the pinned generator.
fn generator() -> Result<PathBuf, String> {
    let pins = requirements();
    let pins: Vec<&str> = pins.iter().map(String::as_str).collect();
    tool_venv("docs", &pins).map(|bin| bin.join("python"))
}

/// `scripts/docs OUTPUT` of the tree at `tree`, run by `python`.
fn build(python: &Path, tree: &Path, output: &Path) -> Output {
    let started = std::time::Instant::now();
    // Sphinx colours its warnings when `CI` is set, as CI sets it: the assertions read plain text.
    let out = Command::new(python)
        .arg(tree.join("scripts/docs"))
        .arg(output)
        .env("NO_COLOR", "1")
        .output()
        .expect("python runs");
    note(&format!("scripts/docs: {:.1} s", started.elapsed().as_secs_f64()));
    out
}

/// A copy of the site's sources in a temporary directory, laid out as the repository is.
fn copy_of_sources() -> tempfile::TempDir {
    let copy = tempfile::TempDir::new().unwrap();
    for name in SITE_SOURCES {
        copy_path(&root().join(name), &copy.path().join(name));
    }
    copy
}

fn copy_path(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    if from.is_dir() {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_path(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// Appends `text` to the file `page` of `tree`, made when it is missing.
fn append(tree: &Path, page: &str, text: &str) {
    let path = tree.join(page);
    let mut content = if path.exists() { read(&path) } else { String::new() };
    content.push_str(text);
    std::fs::write(&path, content).unwrap();
}

/// The rule pages of `rules/`: their codes.
fn rule_codes() -> Vec<String> {
    let mut codes: Vec<String> = std::fs::read_dir(root().join("rules"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_suffix(".md").map(str::to_string))
        .filter(|stem| stem.starts_with("CAP"))
        .collect();
    codes.sort();
    codes
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn the_site_builds_with_a_page_per_rule_the_rule_index_and_every_page() {
    let python = match generator() {
        Ok(python) => python,
        Err(reason) => return skip(&reason),
    };
    let output = tempfile::TempDir::new().unwrap();
    let site = output.path().join("site");
    let out = build(&python, &root(), &site);
    assert!(out.status.success(), "scripts/docs failed:\n{}", combined(&out));

    let codes = rule_codes();
    assert!(codes.len() >= 22, "the rule pages: {codes:?}");
    let index = read(&site.join("rules/index.html"));
    for code in &codes {
        let source = read(&root().join(format!("rules/{code}.md")));
        let title = source.lines().next().unwrap().trim_start_matches("# ");
        let page = read(&site.join(format!("rules/{code}.html")));
        assert!(page.contains(title), "rules/{code}.html lacks its title `{title}`");
        assert!(page.contains("What it does"), "rules/{code}.html lacks its sections");
        assert!(index.contains(&format!("href=\"{code}.html\"")), "the rule index does not link {code}");
    }
    for page in crate::integrations_docs::pages() {
        let html = site.join(page.replace(".md", ".html"));
        assert!(html.is_file(), "no {} for {page}", html.display());
    }
    let home = read(&site.join("README.html"));
    for target in ["docs/usage.html", "rules/index.html", "CHANGELOG.html"] {
        assert!(home.contains(&format!("href=\"{target}\"")), "the home page's navigation lacks {target}");
    }
    assert!(read(&site.join("index.html")).contains("README.html"), "the site's index leads to the home page");
}

#[test]
fn a_broken_link_a_missing_section_or_an_unlinked_page_fails_the_build() {
    let python = match generator() {
        Ok(python) => python,
        Err(reason) => return skip(&reason),
    };
    let cases = [
        ("docs/usage.md", "\nSee [the missing page](no-such-page.md).\n", "no-such-page.md", 1),
        ("docs/fixing.md", "\nSee [a missing section](usage.md#no-such-section).\n", "no-such-section", 1),
        ("docs/unlinked.md", "# A page the README does not link\n", "docs/unlinked.md", 2),
    ];
    for (page, text, named, code) in cases {
        let copy = copy_of_sources();
        append(copy.path(), page, text);
        let output = tempfile::TempDir::new().unwrap();
        let out = build(&python, copy.path(), &output.path().join("site"));
        let log = combined(&out);
        assert_eq!(out.status.code(), Some(code), "{page} with `{}` must fail the build:\n{log}", text.trim());
        assert!(log.contains(named), "the failure names `{named}`:\n{log}");
        let warnings: Vec<&str> = log.lines().filter(|line| line.contains("WARNING")).collect();
        if code == 1 {
            assert_eq!(warnings.len(), 1, "one warning, the broken link, fails the build:\n{log}");
            assert!(warnings[0].starts_with(page), "the warning names the file as in the repository:\n{log}");
        }
    }
}
