//! `capslint server`: the language server on standard input and output (`capslint_server`), with
//! `capslint config`'s rendering for its `capslint.showSettings` command.

use std::path::Path;
use std::process::ExitCode;

use capslint_workspace::config::ConfigFile;
use capslint_workspace::settings::Settings;

/// Arguments of `capslint server`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// Speak the protocol on standard input and output (the only transport; accepted for editors that
    /// pass it).
    #[arg(long)]
    pub stdio: bool,
}

/// A file's resolved settings as `capslint config` prints them.
fn render_settings(path: &Path, config: Option<&ConfigFile>, settings: &Settings, cwd: &Path) -> String {
    crate::commands::config::render(path, config, settings, cwd, false)
}

/// Runs the server until the client exits or disconnects.
pub fn run(_args: &ServerArgs) -> ExitCode {
    match capslint_server::run_stdio(render_settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(1)
        }
    }
}
