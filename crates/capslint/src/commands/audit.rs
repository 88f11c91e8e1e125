//! `capslint audit [FILE|-]`: the manifest rules over a running cluster's objects, read from
//! `kubectl get ... -A -o json` output, reported per namespace and workload in any format `check` prints.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use capslint_admission::audit::{self, MAX_LISTING_BYTES};
use capslint_linter::lint;
use capslint_linter::report::terminal::escape_name;
use capslint_linter::report::{self, OutputFormat, ReportContext, Style};
use capslint_workspace::settings::SettingsResolver;

use crate::commands::settings_args::{ConfigChoice, RuleSelection};
use crate::error_report::render_error;

/// Arguments of `capslint audit`.
#[derive(Debug, Clone, clap::Args)]
pub struct AuditArgs {
    /// The listing: `kubectl get pods,deployments,statefulsets,daemonsets,jobs,cronjobs -A -o json`
    /// output in a file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub listing: PathBuf,
    /// How to print findings [default: `full`].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    #[command(flatten)]
    pub rules: RuleSelection,
    #[command(flatten)]
    pub settings: ConfigChoice,
    /// Check pods that a controller owns too (by default their owner's template is checked).
    #[arg(long)]
    pub check_owned_pods: bool,
    /// Exit with 0 even when there are findings.
    #[arg(long)]
    pub exit_zero: bool,
}

/// Runs `capslint audit`.
pub fn run(args: &AuditArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let source = match args.settings.source() {
        Ok(source) => source,
        Err(error) => return error.print(),
    };
    let resolver = match SettingsResolver::new(source, args.rules.overrides(), cwd.clone()) {
        Ok(resolver) => resolver,
        Err(error) => {
            eprint!("{}", render_error(&error));
            return ExitCode::from(2);
        }
    };
    let bytes = match read(args) {
        Ok(bytes) => bytes,
        Err(error) => {
            eprintln!("error: {}", escape_name(&error));
            return ExitCode::from(2);
        }
    };
    let settings: Arc<_> = resolver.root();
    let listing = match audit::listing(&bytes, &settings, args.check_owned_pods) {
        Ok(listing) => listing,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let objects = listing.inputs.len();
    let run = lint::check_inputs(listing.inputs);
    for error in &run.errors {
        eprintln!("error: {}", escape_name(error));
    }
    let format = args.output_format.unwrap_or(OutputFormat::Full);
    let style = Style { color: crate::color::enabled(crate::color::Stream::Stdout), ..Style::PLAIN };
    let mut out = report::render_with(format, &run.diagnostics, &ReportContext::from_env(style, cwd));
    if matches!(format, OutputFormat::Full | OutputFormat::Concise) {
        out.push_str(&summary(&run.diagnostics, objects, listing.owned_pods));
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush())
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("error: {error}");
        return ExitCode::from(2);
    }
    if !run.errors.is_empty() {
        ExitCode::from(2)
    } else if !run.diagnostics.is_empty() && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The listing's bytes, from the file or standard input, at most [`MAX_LISTING_BYTES`].
fn read(args: &AuditArgs) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let limit = MAX_LISTING_BYTES + 1;
    if args.listing.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|error| format!("cannot read standard input: {error}"))?;
    } else {
        std::fs::File::open(&args.listing)
            .and_then(|file| file.take(limit).read_to_end(&mut bytes))
            .map_err(|error| format!("{}: {error}", args.listing.display()))?;
    }
    if bytes.len() as u64 > MAX_LISTING_BYTES {
        return Err(format!("the listing is larger than {} MiB", MAX_LISTING_BYTES >> 20));
    }
    Ok(bytes)
}

/// The summary line under the human formats.
fn summary(diagnostics: &[capslint_diagnostics::diagnostic::Diagnostic], objects: usize, owned: usize) -> String {
    let plural = |count: usize, word: &str| format!("{count} {word}{}", if count == 1 { "" } else { "s" });
    let with_findings: std::collections::BTreeSet<&str> =
        diagnostics.iter().map(|diagnostic| diagnostic.file.display_name()).collect();
    let skipped =
        if owned > 0 { format!("; {} owned by a controller not checked", plural(owned, "pod")) } else { String::new() };
    if diagnostics.is_empty() {
        format!("All checks passed ({} checked{skipped}).\n", plural(objects, "object"))
    } else {
        format!(
            "Found {} in {} of {} checked{skipped}.\n",
            plural(diagnostics.len(), "finding"),
            with_findings.len(),
            plural(objects, "object")
        )
    }
}
