//! The examples of every rule page are linted: the bad one must produce exactly that rule's code, the
//! good one nothing at all (for a configuration rule, the pair of each format the page shows). Every
//! rule has a page with the required sections.

use capslint_diagnostics::registry::{Family, Rule};
use capslint_workspace::config::ConfigFile;
use capslint_workspace::settings::{Overrides, Settings};

use crate::support::*;

/// Every rule selected, and a GPU node configured so the VRAM rules (CAP208, CAP209) run too.
fn doc_settings() -> Settings {
    let text = "select = [\"ALL\"]\n[gpu]\nmemory-resource = \"example.com/gpumem\"\nmemory-capacity = 80\n";
    let config = ConfigFile::parse(&root().join("capslint.toml"), text.to_string()).unwrap().unwrap();
    Settings::resolve(Some(&config), &Overrides::default(), &root()).expect("valid settings")
}

/// The first fenced block of `language` after the line that starts with `marker`.
fn block_after(page: &str, marker: &str, language: &str) -> Option<String> {
    let start = page.lines().position(|line| line.trim_start().starts_with(marker))?;
    let mut lines = page.lines().skip(start + 1).skip_while(|line| line.trim() != format!("```{language}"));
    lines.next()?;
    let block: Vec<&str> = lines.take_while(|line| line.trim() != "```").collect();
    Some(block.join("\n") + "\n")
}

/// The languages of a rule's examples, each with the file name it is linted as.
fn examples(rule: Rule) -> &'static [(&'static str, &'static str)] {
    match rule.family() {
        Family::Manifest => &[("yaml", "example.yaml")],
        Family::Python | Family::Meta => &[("python", "example.py")],
        Family::Config => &[("yaml", "conf/example.yaml"), ("json", "example.json"), ("toml", "example.toml")],
    }
}

#[test]
fn every_rule_has_a_complete_page() {
    for rule in Rule::ALL {
        let page = rule.documentation();
        assert!(page.starts_with(&format!("# {}: {}", rule.code(), rule.name())), "{} page title", rule.code());
        for section in ["## What it does", "## Why is this bad?", "## Example", "Use instead:", "## Options"] {
            assert!(page.contains(section), "{} page lacks `{section}`", rule.code());
        }
        assert!(
            page.contains(&format!("Default severity: {}", rule.default_severity())),
            "{} page states another severity",
            rule.code()
        );
    }
}

#[test]
fn examples_fire_exactly_their_rule() {
    let settings = doc_settings();
    for rule in Rule::ALL {
        let page = rule.documentation();
        let pairs: Vec<(&str, String, String)> = examples(*rule)
            .iter()
            .filter_map(|(language, name)| {
                let bad = block_after(page, "## Example", language)?;
                let good = block_after(page, "Use instead:", language)
                    .unwrap_or_else(|| panic!("{} has no good {language} example", rule.code()));
                Some((*name, bad, good))
            })
            .collect();
        assert!(!pairs.is_empty(), "{} has no bad example", rule.code());
        for (name, bad, good) in pairs {
            check_example(&settings, *rule, name, bad, &good);
        }
    }
}

/// Lints one pair of examples, as the file `name`: `bad` must produce only `rule`, `good` nothing.
fn check_example(settings: &Settings, rule: Rule, name: &str, bad: String, good: &str) {
    // CAP003's example is too long to print: the page abbreviates its chain of 20,000 minus signs.
    let bad = if rule == Rule::AnalysisBudgetExceeded {
        bad.replace("- - - - - - - - - - ", &"- ".repeat(20_000))
    } else {
        bad
    };
    let bad_codes: Vec<String> = lint_text(name, &bad, settings).iter().map(|d| d.rule().code().to_string()).collect();
    assert!(!bad_codes.is_empty(), "{}: the bad example ({name}) produces nothing", rule.code());
    assert!(
        bad_codes.iter().all(|code| code == rule.code()),
        "{}: the bad example ({name}) produces {bad_codes:?}",
        rule.code()
    );
    let good_diagnostics = lint_text(name, good, settings);
    assert!(
        good_diagnostics.is_empty(),
        "{}: the good example ({name}) is not clean:\n{}",
        rule.code(),
        render_full(&good_diagnostics)
    );
}
