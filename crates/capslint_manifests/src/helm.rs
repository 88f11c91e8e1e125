//! Files of a Helm chart with `{{ }}` in them (`templates/*.yaml`, and Go-templated YAML anywhere else
//! under the directory that holds `Chart.yaml`, such as `files/`) are Go templates, not YAML: they are
//! skipped with a notice that says how to check the rendered chart instead.

use std::path::{Path, PathBuf};

/// Whether `text` at `path` is a Go template of a Helm chart: it has `{{` and a directory above it holds
/// `Chart.yaml`. Returns the chart directory as shown to users (from `display_name`, the path as the
/// user sees it).
pub fn chart_of(path: &Path, display_name: &str, text: &str) -> Option<PathBuf> {
    if !text.contains("{{") {
        return None;
    }
    let mut shown = Path::new(display_name).ancestors().skip(1);
    for directory in path.ancestors().skip(1) {
        let shown_directory = shown.next();
        if directory.join("Chart.yaml").is_file() {
            let shown_chart = shown_directory.filter(|shown| !shown.as_os_str().is_empty());
            return Some(shown_chart.map_or_else(|| directory.to_path_buf(), Path::to_path_buf));
        }
    }
    None
}

/// The one informational line printed for a chart.
pub fn notice(chart: &Path) -> String {
    let chart = chart.display();
    format!(
        "{chart}: Helm chart templates are not checked; check the rendered chart instead: `helm template {chart} | \
         capslint check --stdin-filename {chart}.yaml -`"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_templates_anywhere_in_a_chart_belong_to_it() {
        let dir = tempfile::TempDir::new().unwrap();
        let chart = dir.path().join("charts/train");
        std::fs::create_dir_all(chart.join("files/nested")).unwrap();
        std::fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: train\nversion: 0.1.0\n").unwrap();
        let templated = "workers: {{ .Values.workers }}\n";
        for (file, shown) in [
            ("templates/job.yaml", "charts/train/templates/job.yaml"),
            ("files/nested/w.yaml", "charts/train/files/nested/w.yaml"),
        ] {
            let path = chart.join(file);
            assert_eq!(chart_of(&path, shown, templated), Some(PathBuf::from("charts/train")), "{file}");
            assert_eq!(chart_of(&path, shown, "workers: 2\n"), None, "{file}");
        }
        let outside = dir.path().join("deploy/job.yaml");
        assert_eq!(chart_of(&outside, "deploy/job.yaml", templated), None);
    }
}
