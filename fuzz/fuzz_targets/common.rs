//! Lints arbitrary text as a file of the given kind with the default rules, strict mode on (more code
//! paths), and fails on an internal error: a panic caught by the per-file guard.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use capslint_workspace::discover::FileKind;
use capslint_linter::lint::{Input, check_inputs};
use capslint_workspace::settings::{Overrides, Settings};

fn settings() -> Arc<Settings> {
    static SETTINGS: OnceLock<Arc<Settings>> = OnceLock::new();
    Arc::clone(SETTINGS.get_or_init(|| {
        let overrides = Overrides { strict: true, select: Some(vec!["ALL".into()]), ..Overrides::default() };
        Arc::new(Settings::resolve(None, &overrides, &PathBuf::from(".")).expect("default settings"))
    }))
}

pub fn lint(data: &[u8], name: &str, kind: FileKind) {
    let text = String::from_utf8_lossy(data).into_owned();
    let input = Input { path: PathBuf::from(name), display_name: name.to_string(), kind, contents: Some(text.into()), settings: settings() };
    for diagnostic in check_inputs(vec![input]).diagnostics {
        assert!(
            !diagnostic.finding.message.starts_with("internal error"),
            "{}",
            diagnostic.finding.message
        );
        // Every span must lie inside the text and on character boundaries.
        let text = diagnostic.file.text();
        let range = diagnostic.finding.range;
        assert!(text.get(usize::from(range.start())..usize::from(range.end())).is_some() || text.is_empty());
    }
}
