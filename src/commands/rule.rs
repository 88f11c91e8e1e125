//! `capslint rule CODE` prints a rule's documentation; `capslint rule --all` lists the catalogue.

use std::process::ExitCode;

use crate::registry::Rule;

/// Arguments of `capslint rule`.
#[derive(Debug, Clone, clap::Args)]
pub struct RuleArgs {
    /// The rule's code or name.
    #[arg(required_unless_present = "all")]
    pub rule: Option<String>,
    /// List every rule: code, name, severity, summary.
    #[arg(long, conflicts_with = "rule")]
    pub all: bool,
}

/// Runs `capslint rule`.
pub fn run(args: &RuleArgs) -> ExitCode {
    if args.all {
        for rule in Rule::ALL {
            let default = if rule.enabled_by_default() { "" } else { " (off by default)" };
            println!("{}  {:<34} {:<8} {}{default}", rule.code(), rule.name(), rule.default_severity(), rule.summary());
        }
        return ExitCode::SUCCESS;
    }
    let name = args.rule.as_deref().unwrap_or_default();
    match Rule::from_code_or_name(name) {
        Some(rule) => {
            print!("{}", rule.documentation());
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("error: unknown rule `{name}`; run `capslint rule --all` for the list");
            ExitCode::from(2)
        }
    }
}
