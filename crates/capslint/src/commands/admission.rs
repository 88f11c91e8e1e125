//! `capslint admission`: resolve the options (command line over the `[admission]` table of the
//! configuration file over the defaults) and the check settings (as `check` resolves them), then serve
//! the admission webhook until SIGTERM.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use capslint_admission::metrics::Metrics;
use capslint_admission::policy::{Mode, Policy};
use capslint_admission::server::{self, ServerOptions};
use capslint_admission::verdict::Checker;
use capslint_admission::webhook::Webhook;
use capslint_workspace::config::AdmissionOptions;
use capslint_workspace::settings::{ConfigSource, SettingsResolver};

use crate::commands::settings_args::{ConfigChoice, RuleSelection};
use crate::error_report::render_error;

/// Arguments of `capslint admission`.
#[derive(Debug, Clone, clap::Args)]
pub struct AdmissionArgs {
    /// The address to listen on [default: `0.0.0.0:8443`; or `[admission] addr`].
    #[arg(long, value_name = "HOST:PORT")]
    pub addr: Option<SocketAddr>,
    /// The PEM certificate chain to serve (read again when the file changes).
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of the certificate (read again when the file changes).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// What `/validate` does with findings: refuse the object (`deny`) or admit it with warnings (`warn`)
    /// [default: `warn`; or `[admission] mode`]. An object's `capslint.io/mode` annotation overrides it.
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<ModeArg>,
    /// Admit objects of this namespace unchecked and unchanged (repeatable; adds to `[admission]
    /// exclude-namespaces`).
    #[arg(long, value_name = "NAMESPACE")]
    pub exclude_namespace: Vec<String>,
    /// The mode of one namespace, `NAMESPACE=deny|warn|off` (repeatable; over `[admission]
    /// namespace-modes`). An object's `capslint.io/mode` annotation still overrides it.
    #[arg(long, value_name = "NAMESPACE=MODE")]
    pub namespace_mode: Vec<String>,
    /// Check pods that a controller owns too (by default they are checked through their owner).
    #[arg(long)]
    pub check_owned_pods: bool,
    #[command(flatten)]
    pub settings: ConfigChoice,
    #[command(flatten)]
    pub rules: RuleSelection,
    /// The largest request body read, in bytes; a larger one is answered 413.
    #[arg(long, value_name = "BYTES", default_value_t = server::MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Seconds a client may take for the TLS handshake and a request's headers, and again for its body.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub read_timeout: f64,
    /// How many connections are served at once; further clients wait.
    #[arg(long, value_name = "COUNT", default_value_t = server::MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Seconds the requests in flight may take to finish after SIGTERM.
    #[arg(long, value_name = "SECONDS", default_value_t = 25.0)]
    pub shutdown_grace: f64,
}

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Refuse objects with findings.
    Deny,
    /// Admit them, with the findings as warnings.
    Warn,
}

/// Runs `capslint admission`.
pub fn run(args: &AdmissionArgs) -> ExitCode {
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

fn serve(args: &AdmissionArgs) -> Result<(), String> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let config = args.settings.file_for(&cwd).map_err(|error| error.to_string())?;
    let table = config.as_ref().and_then(|config| config.options.admission.clone()).unwrap_or_default();
    let base = config.as_ref().and_then(|config| config.path.parent().map(Path::to_path_buf)).unwrap_or(cwd.clone());
    let source = match (args.settings.isolated, config) {
        (true, _) => ConfigSource::Isolated,
        (false, Some(config)) => ConfigSource::Explicit(Box::new(config)),
        (false, None) => ConfigSource::Isolated,
    };
    let resolver = SettingsResolver::new(source, args.rules.overrides(), cwd).map_err(|error| render_error(&error))?;
    let policy = policy(args, &table)?;
    let addr = match (args.addr, &table.addr) {
        (Some(addr), _) => addr,
        (None, Some(addr)) => addr.parse().map_err(|error| format!("[admission] addr `{addr}`: {error}"))?,
        (None, None) => SocketAddr::from(([0, 0, 0, 0], 8443)),
    };
    let in_config = |path: &Option<PathBuf>| path.as_ref().map(|path| base.join(path));
    let tls_cert = args.tls_cert.clone().or_else(|| in_config(&table.tls_cert)).ok_or("--tls-cert is required")?;
    let tls_key = args.tls_key.clone().or_else(|| in_config(&table.tls_key)).ok_or("--tls-key is required")?;
    let seconds = |value: f64, name: &str| {
        Duration::try_from_secs_f64(value)
            .ok()
            .filter(|duration| !duration.is_zero())
            .ok_or(format!("--{name} must be a positive number of seconds"))
    };
    let mut options = ServerOptions::new(addr, tls_cert, tls_key);
    options.max_body_bytes = args.max_body_bytes;
    options.header_timeout = seconds(args.read_timeout, "read-timeout")?;
    options.body_timeout = options.header_timeout;
    options.shutdown_grace = seconds(args.shutdown_grace, "shutdown-grace")?;
    options.max_connections = args.max_connections;
    let webhook = Webhook::new(Checker::new(resolver.root()), policy, Arc::new(Metrics::default()));
    // A panic while checking one object becomes that request's error; do not also print it raw.
    std::panic::set_hook(Box::new(|_| {}));
    server::run(options, webhook)
}

fn policy(args: &AdmissionArgs, table: &AdmissionOptions) -> Result<Policy, String> {
    let mode = match (args.mode, &table.mode) {
        (Some(ModeArg::Deny), _) => Mode::Deny,
        (Some(ModeArg::Warn), _) => Mode::Warn,
        (None, Some(text)) => match Mode::parse(text) {
            Some(Mode::Off) | None => return Err(format!("[admission] mode `{text}` is not `deny` or `warn`")),
            Some(mode) => mode,
        },
        (None, None) => Mode::Warn,
    };
    let mut exclude_namespaces = table.exclude_namespaces.clone().unwrap_or_default();
    exclude_namespaces.extend(args.exclude_namespace.iter().cloned());
    let mut namespace_modes = Vec::new();
    for (namespace, text) in table.namespace_modes.iter().flatten() {
        let mode = Mode::parse(text).ok_or_else(|| {
            format!("[admission] namespace-modes `{namespace} = \"{text}\"`: not `deny`, `warn` or `off`")
        })?;
        namespace_modes.push((namespace.clone(), mode));
    }
    for given in &args.namespace_mode {
        let (namespace, mode) = given
            .split_once('=')
            .and_then(|(namespace, text)| Some((namespace.trim().to_string(), Mode::parse(text)?)))
            .ok_or_else(|| format!("--namespace-mode `{given}`: expected NAMESPACE=deny|warn|off"))?;
        // The command line's entry comes first, so it wins over the table's.
        namespace_modes.insert(0, (namespace, mode));
    }
    Ok(Policy { mode, exclude_namespaces, namespace_modes, check_owned_pods: args.check_owned_pods })
}
