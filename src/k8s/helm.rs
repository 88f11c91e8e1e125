//! Helm chart templates (`templates/*.yaml` with `{{ }}` next to a `Chart.yaml`) are Go templates, not
//! YAML: they are skipped with a notice that says how to check the rendered chart instead.

use std::path::{Path, PathBuf};

/// Whether `text` at `path` is a template of a Helm chart; returns the chart directory as shown to users
/// (from `display_name`, the path as the user sees it).
pub fn chart_of(path: &Path, display_name: &str, text: &str) -> Option<PathBuf> {
    if !text.contains("{{") {
        return None;
    }
    let mut shown = Path::new(display_name).ancestors().skip(1);
    for directory in path.ancestors().skip(1) {
        let shown_directory = shown.next();
        if directory.file_name().is_some_and(|name| name == "templates")
            && let Some(chart) = directory.parent()
            && chart.join("Chart.yaml").is_file()
        {
            let shown_chart = shown_directory.and_then(Path::parent).filter(|shown| !shown.as_os_str().is_empty());
            return Some(shown_chart.map_or_else(|| chart.to_path_buf(), Path::to_path_buf));
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
