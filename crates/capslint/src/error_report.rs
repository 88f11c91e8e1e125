//! How the binary prints an error that carries source spans (a configuration file that does not parse, a
//! baseline that cannot be read): miette's graphical report, colored as `--color` says.

/// Renders an error that carries source spans (a configuration file) as a graphical report on stderr.
pub fn render_error(error: &dyn miette::Diagnostic) -> String {
    let color = crate::color::enabled(crate::color::Stream::Stderr);
    let theme = if color { miette::GraphicalTheme::unicode() } else { miette::GraphicalTheme::unicode_nocolor() };
    let mut out = String::new();
    let handler = miette::GraphicalReportHandler::new_themed(theme).with_links(false).with_width(120);
    if handler.render_report(&mut out, error).is_err() {
        out = format!("error: {error}\n");
    }
    out
}
