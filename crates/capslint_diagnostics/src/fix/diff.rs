//! `--diff`: the change a fix run would make to one file, as a unified diff (`--- a/NAME`, `+++ b/NAME`,
//! three lines of context), as `git diff` and ruff print it.

use similar::TextDiff;

/// The unified diff from `old` to `new` of the file shown as `name`; empty when they are equal.
pub fn unified(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let diff = TextDiff::from_lines(old, new);
    let mut out = diff.unified_diff().context_radius(3).header(&format!("a/{name}"), &format!("b/{name}")).to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_with_its_context() {
        let diff = unified("train.py", "a\nb\nn_jobs=-1\nc\n", "a\nb\nn_jobs=1\nc\n");
        assert_eq!(diff, "--- a/train.py\n+++ b/train.py\n@@ -1,4 +1,4 @@\n a\n b\n-n_jobs=-1\n+n_jobs=1\n c\n");
        assert_eq!(unified("same.py", "x\n", "x\n"), "");
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        let diff = unified("k.yaml", "a: 1", "a: 2");
        assert!(diff.contains("-a: 1\n\\ No newline at end of file\n+a: 2\n"), "{diff}");
    }
}
