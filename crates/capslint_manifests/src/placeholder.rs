//! Values a tool fills in before the cluster sees the manifest: `${THREADS}` and `$THREADS` (envsubst),
//! `{{ .Values.threads }}` (Go templates), `{threads}` (Python formatting). The value that runs is not
//! written in the file, so no rule judges it: a placeholder limit is unknown, not invalid.

/// Whether `text` is (or contains) a placeholder.
pub fn is_placeholder(text: &str) -> bool {
    text.contains("${")
        || text.contains('{')
        || text.strip_prefix('$').is_some_and(|rest| rest.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_of_every_tool() {
        for text in ["${CPU_LIMIT}", "$CPU", "{{ .Values.cpu }}", "{cpu}", "${CPU:-2}", "2${SUFFIX}"] {
            assert!(is_placeholder(text), "{text}");
        }
        for text in ["2", "500m", "$(CPU_LIMIT)", "$", "1.5", "passive", ""] {
            assert!(!is_placeholder(text), "{text}");
        }
    }
}
