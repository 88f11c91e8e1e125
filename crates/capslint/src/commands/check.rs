//! `capslint check`: discover, check in parallel, report, and map the outcome to an exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::commands::settings_args::{ConfigChoice, RuleSelection};
use crate::error_report::render_error;
use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_diagnostics::fix::{self, Applicability};
use capslint_diagnostics::registry::{Rule, Severity};
use capslint_linter::baseline::{self, Baseline, Checked};
use capslint_linter::fix::run as fixing;
use capslint_linter::lint::{self, Input};
use capslint_linter::report::terminal::escape_name;
use capslint_linter::report::{self, OutputFormat, ReportContext, Style, statistics};
use capslint_linter::while_walking;
use capslint_workspace::confine::Confinement;
use capslint_workspace::discover::{self, FileKind};
use capslint_workspace::settings::{Overrides, SettingsResolver};

/// Arguments of `capslint check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Files or directories to check; `-` reads standard input.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How to print findings [default: `full`; `github` when `GITHUB_ACTIONS=true` and the report goes to
    /// standard output].
    #[arg(long, value_enum, env = "CAPSLINT_OUTPUT_FORMAT", value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// Write the report to this file instead of standard output (its directory is created).
    #[arg(short, long, env = "CAPSLINT_OUTPUT_FILE", value_name = "PATH")]
    pub output_file: Option<PathBuf>,
    /// Print how many findings each rule produced instead of the findings.
    #[arg(long)]
    pub statistics: bool,
    /// Report only findings that this baseline file does not record, and its entries that match nothing.
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    pub baseline: Option<PathBuf>,
    /// Record every finding in this baseline file, print nothing else, and exit with 0.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    #[command(flatten)]
    pub rules: RuleSelection,
    /// Report values of unknown provenance (function parameters, `**kwargs`) as findings.
    #[arg(long)]
    pub strict: bool,
    /// Exit with 0 even when there are findings.
    #[arg(long)]
    pub exit_zero: bool,
    /// The file name to show (and to pick the file kind from) when reading standard input.
    #[arg(long, value_name = "NAME")]
    pub stdin_filename: Option<PathBuf>,
    #[command(flatten)]
    pub settings: ConfigChoice,
    /// Apply `exclude` patterns to files named on the command line too (for pre-commit).
    #[arg(long)]
    pub force_exclude: bool,
    /// Apply the fixes that are safe (and, with `--unsafe-fixes`, the unsafe ones), then report what
    /// remains.
    #[arg(long, overrides_with = "no_fix")]
    pub fix: bool,
    /// Do not apply fixes, even when the configuration says `fix = true`.
    #[arg(long, overrides_with = "fix", hide = true)]
    pub no_fix: bool,
    /// Let fixes marked unsafe apply too (they change behaviour: review them).
    #[arg(long, overrides_with = "no_unsafe_fixes")]
    pub unsafe_fixes: bool,
    /// Do not apply unsafe fixes, even when the configuration says `unsafe-fixes = true`.
    #[arg(long, overrides_with = "unsafe_fixes", hide = true)]
    pub no_unsafe_fixes: bool,
    /// Apply fixes and report nothing else; exit with 0 unless something failed.
    #[arg(long, conflicts_with_all = ["diff", "statistics"])]
    pub fix_only: bool,
    /// Print the fixes as a unified diff instead of writing them; exit with 1 when there is a fix.
    #[arg(long, conflicts_with_all = ["statistics", "add_noqa"])]
    pub diff: bool,
    /// Add a suppression comment to every line that has a finding (`# noqa: CODE` in Python,
    /// `# capslint: ignore[CODE]` in YAML).
    #[arg(long, conflicts_with_all = ["fix", "fix_only", "write_baseline", "statistics"])]
    pub add_noqa: bool,
    /// Print the findings only: no summary line, no notes.
    #[arg(short, long, conflicts_with = "silent")]
    pub quiet: bool,
    /// Print nothing; the exit code alone tells the outcome (errors still go to standard error).
    #[arg(short, long)]
    pub silent: bool,
    /// List the files that would be checked, one per line, and check nothing.
    #[arg(long, conflicts_with_all = ["show_settings", "write_baseline", "statistics"])]
    pub show_files: bool,
    /// Print the resolved settings of the first file that would be checked, and check nothing.
    #[arg(long, conflicts_with_all = ["write_baseline", "statistics"])]
    pub show_settings: bool,
    /// Parse every file, even those that contain none of the words a rule needs.
    #[arg(long, hide = true)]
    pub no_prefilter: bool,
}

/// The format to print in: the one asked for; else `github` inside GitHub Actions when the report goes
/// to standard output (annotations on the diff, as oxlint does); else `full`.
pub fn output_format(args: &CheckArgs) -> OutputFormat {
    args.output_format.unwrap_or_else(|| {
        let in_actions = std::env::var_os("GITHUB_ACTIONS").is_some_and(|value| value == "true");
        if in_actions && args.output_file.is_none() { OutputFormat::Github } else { OutputFormat::Full }
    })
}

/// What discovery found: the files (and standard input) to check, each with the settings that apply to
/// it; the paths that could not be read (directories that cannot be listed); and the files skipped because
/// they lead outside the run's roots.
struct Found {
    inputs: Vec<Input>,
    unread: Vec<String>,
    skipped: Vec<String>,
}

fn inputs(args: &CheckArgs, resolver: &SettingsResolver, cwd: &Path) -> Result<Found, ExitCode> {
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    let mut skipped = Vec::new();
    let (stdin_paths, file_paths): (Vec<PathBuf>, Vec<PathBuf>) =
        args.paths.iter().cloned().partition(|path| path.as_os_str() == "-");
    if !stdin_paths.is_empty() {
        let contents = match lint::read_stdin() {
            Ok(contents) => contents,
            Err(error) => {
                eprintln!("error: cannot read standard input: {error}");
                return Err(ExitCode::from(2));
            }
        };
        let name = args.stdin_filename.clone().unwrap_or_else(|| PathBuf::from("-"));
        let kind = FileKind::of(&name).unwrap_or(FileKind::Python);
        let settings = match &args.stdin_filename {
            Some(name) => resolver.for_path(name).map_err(|error| {
                eprint!("{}", render_error(&error));
                ExitCode::from(2)
            })?,
            None => resolver.root(),
        };
        inputs.push(Input {
            display_name: discover::display_name(&name, cwd),
            path: name,
            kind,
            contents: Some(contents),
            settings,
        });
    }
    if !file_paths.is_empty() {
        let discovered = discover::discover(&file_paths, resolver, args.force_exclude).map_err(|error| {
            eprintln!("error: {}", escape_name(&error.to_string()));
            ExitCode::from(2)
        })?;
        for warning in &discovered.warnings {
            eprintln!("warning: {}", escape_name(warning));
        }
        errors = discovered.errors;
        skipped = discovered.notes;
        if let Some(error) = discovered.config_errors.first() {
            eprint!("{}", render_error(error));
            return Err(ExitCode::from(2));
        }
        for (path, kind) in discovered.files {
            let settings = resolver.for_file(&path).map_err(|error| {
                eprint!("{}", render_error(&error));
                ExitCode::from(2)
            })?;
            inputs.push(Input {
                display_name: discover::display_name(&path, cwd),
                path,
                kind,
                contents: None,
                settings,
            });
        }
    }
    Ok(Found { inputs, unread: errors, skipped })
}

/// Writes the report to `--output-file` (creating its directory; the file is replaced whole or not at
/// all) or to standard output.
fn emit(out: &str, output_file: Option<&Path>) -> Result<(), String> {
    match output_file {
        Some(path) => capslint_workspace::atomic::write(path, out.as_bytes())
            .map_err(|error| format!("cannot write {}: {error}", path.display())),
        None => {
            let mut lock = std::io::stdout().lock();
            match lock.write_all(out.as_bytes()).and_then(|()| lock.flush()) {
                // A reader that stops early (`| head`) is not an error of ours.
                Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error.to_string()),
                _ => Ok(()),
            }
        }
    }
}

/// `--write-baseline`: records every finding unless some file could not be checked.
fn write_baseline(run: &lint::RunResult, path: &Path, cwd: &Path) -> ExitCode {
    if !run.errors.is_empty() {
        eprintln!("error: baseline not written: some files could not be checked");
        return ExitCode::from(2);
    }
    match baseline::write(&run.diagnostics, path, cwd) {
        Ok(count) => {
            eprintln!("Recorded {count} finding{} in {}.", if count == 1 { "" } else { "s" }, path.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprint!("{}", render_error(&error));
            ExitCode::from(2)
        }
    }
}

/// What the summary line counts besides the findings.
struct Tally {
    files_checked: usize,
    /// Findings fixed by this run.
    fixed: usize,
    /// The applicability `--fix` applies (or would apply).
    allowed: Applicability,
    /// Whether this run applied fixes.
    fixing: bool,
}

/// The report in the chosen format (or the statistics), with the summary line of the human formats.
fn report_text(
    args: &CheckArgs,
    diagnostics: &[Diagnostic],
    tally: &Tally,
    cwd: PathBuf,
    stream: crate::color::Stream,
) -> String {
    let format = output_format(args);
    if args.statistics {
        return match format {
            OutputFormat::Json | OutputFormat::JsonLines => statistics::render_json(diagnostics, tally.allowed),
            _ => statistics::render_text(diagnostics, tally.allowed),
        };
    }
    // A report file is colored only on request: `FORCE_COLOR` is meant for logs, not for files.
    let color = match args.output_file {
        Some(_) => crate::color::chosen() == crate::color::ColorChoice::Always,
        None => crate::color::enabled(stream),
    };
    let style = Style { color, width: Style::PLAIN.width, fixable: tally.allowed };
    let mut out = report::render_with(format, diagnostics, &ReportContext::from_env(style, cwd));
    if matches!(format, OutputFormat::Full | OutputFormat::Concise) && !args.quiet {
        out.push_str(&summary(diagnostics, tally));
    }
    out
}

/// Runs `capslint check`.
pub fn run(args: &CheckArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let source = match args.settings.source() {
        Ok(source) => source,
        Err(error) => return error.print(),
    };
    let overrides = Overrides {
        strict: args.strict,
        no_prefilter: args.no_prefilter,
        fix: flag(args.fix, args.no_fix),
        unsafe_fixes: flag(args.unsafe_fixes, args.no_unsafe_fixes),
        confinement: Some(std::sync::Arc::new(Confinement::of_paths(&confined_paths(args), &cwd))),
        ..args.rules.overrides()
    };
    let resolver = match SettingsResolver::new(source, overrides, cwd.clone()) {
        Ok(resolver) => resolver,
        Err(error) => {
            eprint!("{}", render_error(&error));
            return ExitCode::from(2);
        }
    };
    let baseline = match args.baseline.as_deref().map(|path| Baseline::load(path, &cwd)).transpose() {
        Ok(baseline) => baseline,
        Err(error) => {
            eprint!("{}", render_error(&error));
            return ExitCode::from(2);
        }
    };
    let root = resolver.root();
    let allowed = if root.unsafe_fixes { Applicability::Unsafe } else { Applicability::Safe };
    let fixing = (root.fix || args.fix_only || args.diff) && args.write_baseline.is_none();
    // A plain check of files and directories checks each file as the walk finds it.
    let plain = !fixing && !args.show_files && !args.show_settings && !args.add_noqa;
    if plain && args.paths.iter().all(|path| path.as_os_str() != "-") {
        let (run, Found { inputs, unread, skipped }) = match check_while_walking(args, &resolver, &cwd) {
            Ok(walked) => walked,
            Err(code) => return code,
        };
        let checked = checked_of(&inputs, baseline.as_ref());
        return finish(args, &cwd, baseline.as_ref(), (run, None), &checked, (unread, skipped), allowed);
    }
    let Found { inputs, unread, skipped } = match inputs(args, &resolver, &cwd) {
        Ok(found) => found,
        Err(code) => return code,
    };
    if args.show_files {
        return show_files(&inputs, &unread);
    }
    if args.show_settings {
        return show_settings(args, &inputs, &resolver, &cwd);
    }
    let checked = checked_of(&inputs, baseline.as_ref());
    if args.add_noqa {
        return capslint_linter::fix::noqa::run(inputs, unread);
    }
    let (run, fixed) = if fixing {
        // Standard input's text, printed as it is when no fix changes it.
        let stdin = inputs.iter().find(|input| input.contents.is_some()).and_then(|input| input.contents.clone());
        let mut outcome = fixing::fix_inputs(inputs, allowed);
        if !args.diff
            && let Some(bytes) = stdin
            && !outcome.files.iter().any(|file| file.stdin)
        {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&bytes).and_then(|()| out.flush());
        }
        (std::mem::take(&mut outcome.run), Some(outcome))
    } else {
        (lint::check_inputs(inputs), None)
    };
    finish(args, &cwd, baseline.as_ref(), (run, fixed), &checked, (unread, skipped), allowed)
}

/// What each input was checked with, for the baseline: nothing without one (the rules of each file are
/// matched against its path, which a plain run need not pay for).
fn checked_of(inputs: &[Input], baseline: Option<&Baseline>) -> Vec<Checked> {
    if baseline.is_none() {
        return Vec::new();
    }
    inputs
        .iter()
        .map(|input| Checked {
            path: input.path.clone(),
            rules: input.settings.rules_for(&input.path),
            unused_suppression: input.settings.severity(Rule::UnusedSuppression),
        })
        .collect()
}

/// [`while_walking::check`] for the command line: the run, the files checked, the paths that could
/// not be read and the files skipped; discovery's warnings and a configuration or settings error are
/// printed (the latter ends the run with exit code 2).
fn check_while_walking(
    args: &CheckArgs,
    resolver: &SettingsResolver,
    cwd: &Path,
) -> Result<(lint::RunResult, Found), ExitCode> {
    let walked = while_walking::check(&args.paths, resolver, args.force_exclude, cwd).map_err(|error| {
        eprintln!("error: {}", escape_name(&error.to_string()));
        ExitCode::from(2)
    })?;
    let discovered = walked.discovered;
    for warning in &discovered.warnings {
        eprintln!("warning: {}", escape_name(warning));
    }
    if let Some(error) = discovered.config_errors.first() {
        eprint!("{}", render_error(error));
        return Err(ExitCode::from(2));
    }
    let (run, inputs) = walked.run.map_err(|error| {
        eprint!("{}", render_error(&error));
        ExitCode::from(2)
    })?;
    Ok((run, Found { inputs, unread: discovered.errors, skipped: discovered.notes }))
}

/// Reports a run (and the outcome of its fixes) and maps it to an exit code: the process's own, once the
/// report is written (it exits there).
fn finish(
    args: &CheckArgs,
    cwd: &Path,
    baseline: Option<&Baseline>,
    (mut run, mut fixed): (lint::RunResult, Option<fixing::Outcome>),
    checked: &[Checked],
    (unread, skipped): (Vec<String>, Vec<String>),
    allowed: Applicability,
) -> ExitCode {
    let fixing = fixed.is_some();
    let cwd = cwd.to_path_buf();
    run.errors.extend(unread);
    run.errors.sort();
    run.notices.extend(skipped);
    run.notices.sort();
    if !args.quiet && !args.silent {
        for notice in &run.notices {
            eprintln!("note: {}", escape_name(notice));
        }
    }
    for error in &run.errors {
        eprintln!("error: {}", escape_name(error));
    }
    if let Some(path) = &args.write_baseline {
        return write_baseline(&run, path, &cwd);
    }
    let mut stream = crate::color::Stream::Stdout;
    let mut fixed_count = 0;
    if let Some(outcome) = &mut fixed {
        if !args.silent {
            for note in &outcome.notes {
                eprintln!("warning: {}", escape_name(note));
            }
        }
        if args.diff {
            return print_diff(outcome, &run, args.silent);
        }
        let written = write_fixed(outcome);
        fixed_count = outcome.fixed_count();
        if let Err(code) = written {
            return code;
        }
        if args.paths.iter().any(|path| path.as_os_str() == "-") {
            // As ruff does: the fixed source goes to standard output, the report to standard error.
            stream = crate::color::Stream::Stderr;
        }
        if args.fix_only {
            if !args.silent && !args.quiet {
                let plural = if fixed_count == 1 { "" } else { "s" };
                eprintln!("Fixed {fixed_count} finding{plural}.");
            }
            return if run.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) };
        }
    }
    let diagnostics = match &baseline {
        Some(baseline) => baseline.apply(run.diagnostics, checked, &cwd),
        None => run.diagnostics,
    };
    let tally = Tally { files_checked: run.files_checked, fixed: fixed_count, allowed, fixing };
    let out = report_text(args, &diagnostics, &tally, cwd, stream);
    if stream == crate::color::Stream::Stderr && args.output_file.is_none() {
        if !args.silent {
            eprint!("{out}");
        }
    } else if (!args.silent || args.output_file.is_some())
        && let Err(error) = emit(&out, args.output_file.as_deref())
    {
        eprintln!("error: {}", escape_name(&error));
        return ExitCode::from(2);
    }
    let code = if !run.errors.is_empty() {
        2
    } else if !diagnostics.is_empty() && !args.exit_zero {
        1
    } else {
        0
    };
    // The report is out and every file written: the process ends here, and its memory goes back to the
    // system with it, where freeing each input, diagnostic and file text one at a time (on one thread,
    // after the pool) took about half a millisecond on a thousand files.
    std::process::exit(code)
}

/// `--show-files`: the files that would be checked, sorted, one per line; exit 2 when some path could not
/// be read, as a check would.
fn show_files(inputs: &[Input], unread: &[String]) -> ExitCode {
    let mut names: Vec<String> = inputs.iter().map(|input| escape_name(&input.display_name).into_owned()).collect();
    names.sort();
    let mut out = names.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    for error in unread {
        eprintln!("error: {}", escape_name(error));
    }
    if let Err(error) = emit(&out, None) {
        eprintln!("error: {}", escape_name(&error));
        return ExitCode::from(2);
    }
    if unread.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) }
}

/// `--show-settings`: the resolved settings of the first file that would be checked (in path order),
/// as `capslint config` prints them, command-line rule selection included.
fn show_settings(args: &CheckArgs, inputs: &[Input], resolver: &SettingsResolver, cwd: &Path) -> ExitCode {
    let Some(first) = inputs.iter().min_by(|a, b| a.path.cmp(&b.path)) else {
        eprintln!("error: no file would be checked");
        return ExitCode::from(2);
    };
    // The configuration file is found as `capslint config` finds it.
    let absolute = capslint_workspace::paths::absolute(&first.path, cwd);
    let lookup = crate::commands::config::ConfigArgs { path: absolute.clone(), settings: args.settings.clone() };
    let config = match crate::commands::config::find(&lookup, &absolute) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let settings = match resolver.for_file(&first.path) {
        Ok(settings) => settings,
        Err(error) => {
            eprint!("{}", render_error(&error));
            return ExitCode::from(2);
        }
    };
    let out = crate::commands::config::render(&first.path, config.as_ref(), &settings, cwd, args.settings.isolated);
    match emit(&out, None) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", escape_name(&error));
            ExitCode::from(2)
        }
    }
}

/// `--diff`: the unified diff of every file the fixes change, nothing written; exit 1 when there is a
/// change (2 when a file could not be checked).
fn print_diff(outcome: &fixing::Outcome, run: &lint::RunResult, silent: bool) -> ExitCode {
    let diff: String =
        outcome.files.iter().map(|file| fix::diff::unified(&file.display_name, &file.original, &file.fixed)).collect();
    if !silent {
        if let Err(error) = emit(&diff, None) {
            eprintln!("error: {}", escape_name(&error));
            return ExitCode::from(2);
        }
        let count = outcome.fixed_count();
        if count > 0 {
            eprintln!("Would fix {count} finding{}.", if count == 1 { "" } else { "s" });
        } else {
            eprintln!("No fixes to apply.");
        }
    }
    if !run.errors.is_empty() {
        ExitCode::from(2)
    } else if outcome.files.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Writes each fixed file (keeping its identity: [`capslint_workspace::atomic::rewrite`]); standard input's fixed text
/// goes to standard output. A file that cannot be written fails the run, and its fixes are not counted.
fn write_fixed(outcome: &mut fixing::Outcome) -> Result<(), ExitCode> {
    use rayon::prelude::*;
    // Files are written in parallel: each is flushed to disk before it replaces the original.
    let failed: Vec<(usize, String)> = outcome
        .files
        .par_iter()
        .enumerate()
        .filter(|(_, file)| !file.stdin)
        .filter_map(|(index, file)| {
            capslint_workspace::atomic::rewrite(&file.path, file.fixed.as_bytes())
                .err()
                .map(|error| (index, format!("cannot write {}: {error}", file.path.display())))
        })
        .collect();
    let unwritten: Vec<usize> = failed.iter().map(|(index, _)| *index).collect();
    outcome.forget(&unwritten);
    let mut errors: Vec<String> = failed.into_iter().map(|(_, error)| error).collect();
    for file in outcome.files.iter().filter(|file| file.stdin) {
        if let Err(error) = emit(&file.fixed, None) {
            errors.push(error);
        }
    }
    errors.sort();
    for error in &errors {
        eprintln!("error: {}", escape_name(error));
    }
    if errors.is_empty() { Ok(()) } else { Err(ExitCode::from(2)) }
}

/// The paths whose roots confine the run: those named (standard input counts as its `--stdin-filename`,
/// else as the working directory).
fn confined_paths(args: &CheckArgs) -> Vec<PathBuf> {
    args.paths
        .iter()
        .map(|path| match path.as_os_str() == "-" {
            true => args.stdin_filename.clone().unwrap_or_else(|| PathBuf::from(".")),
            false => path.clone(),
        })
        .collect()
}

/// `Some(true)` for `--X`, `Some(false)` for `--no-X`, `None` for neither.
fn flag(yes: bool, no: bool) -> Option<bool> {
    match (yes, no) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

fn summary(diagnostics: &[Diagnostic], tally: &Tally) -> String {
    let plural = |count: usize, word: &str| format!("{count} {word}{}", if count == 1 { "" } else { "s" });
    let errors = diagnostics.iter().filter(|diagnostic| diagnostic.severity == Severity::Error).count();
    let warnings = diagnostics.len() - errors;
    let files = plural(tally.files_checked, "file");
    // The files the remaining findings are in, of those checked.
    let with_findings: std::collections::HashSet<&Path> =
        diagnostics.iter().map(|diagnostic| diagnostic.file.path()).collect();
    let within = format!("{} of {files} checked", with_findings.len());
    let breakdown = format!("{}, {}", plural(errors, "error"), plural(warnings, "warning"));
    let mut out = match (diagnostics.is_empty(), tally.fixed) {
        (true, 0) => format!("All checks passed ({files} checked).\n"),
        (_, 0) => format!("Found {} ({breakdown}) in {within}.\n", plural(diagnostics.len(), "finding")),
        (true, fixed) => {
            format!("Found {} ({fixed} fixed, 0 remaining) in {files} checked.\n", plural(fixed, "finding"))
        }
        (false, fixed) => format!(
            "Found {} ({fixed} fixed, {} remaining: {breakdown}) in {within}.\n",
            plural(fixed + diagnostics.len(), "finding"),
            diagnostics.len()
        ),
    };
    let fixable = diagnostics.iter().filter(|diagnostic| diagnostic.fixable(tally.allowed)).count();
    let hidden = diagnostics
        .iter()
        .filter(|diagnostic| !diagnostic.fixable(tally.allowed) && diagnostic.fixable(Applicability::Unsafe))
        .count();
    let hidden_text = format!(
        "{} can be enabled with the `--unsafe-fixes` option",
        if hidden == 1 { "1 hidden fix".to_string() } else { format!("{hidden} hidden fixes") }
    );
    match (fixable, hidden, tally.fixing) {
        (0, 0, _) => {}
        (0, _, _) => out.push_str(&format!("No fixes applied or available ({hidden_text}).\n")),
        (_, 0, false) => out.push_str(&format!("[*] {fixable} fixable with the `--fix` option.\n")),
        (_, _, false) => out.push_str(&format!("[*] {fixable} fixable with the `--fix` option ({hidden_text}).\n")),
        (_, _, true) => {}
    }
    out
}
