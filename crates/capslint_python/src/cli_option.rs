//! Command-line options declared with a default: `parser.add_argument("--n-jobs", default=-1)`,
//! `@click.option("--n-jobs", default=-1)`, `flags.DEFINE_integer("n_jobs", -1, ...)` and
//! `n_jobs: int = typer.Option(-1)`. Every run that omits the flag gets the default, so a default that
//! means "all cores" is as bad as the same default on a function parameter.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

/// A command-line option's destination and its default.
#[derive(Debug)]
pub struct CliOption<'a> {
    /// The destination name as the program sees it (`--n-jobs` becomes `n_jobs`, as argparse and click
    /// derive it), or every name the option answers to when none is a plain name.
    pub names: Vec<String>,
    /// The default value.
    pub default: &'a Expr,
    /// What to underline: the `default=` keyword, or the positional default.
    pub range: TextRange,
    /// Whether a string default is converted to an integer first (argparse applies `type=int` to a string
    /// default, so `default="-1"` means -1).
    pub int_from_string: bool,
}

impl CliOption<'_> {
    /// The first name satisfying `predicate`, for messages.
    pub fn name_matching(&self, predicate: impl Fn(&str) -> bool) -> Option<&str> {
        self.names.iter().map(String::as_str).find(|name| predicate(name))
    }
}

/// Absl's integer flag definition: `DEFINE_integer(name, default, help)`.
const ABSL_DEFINE_INTEGER: &str = "absl.flags.DEFINE_integer";

/// The option that `call` declares, if it is an argparse, click or absl declaration with a default.
/// `callee` is the call's resolved qualified name, when it resolves.
pub fn declared_by<'a>(call: &'a ast::ExprCall, callee: Option<&str>) -> Option<CliOption<'a>> {
    let is_argparse =
        matches!(call.func.as_ref(), Expr::Attribute(attribute) if attribute.attr.as_str() == "add_argument");
    if is_argparse || callee.is_some_and(|callee| matches!(callee, "click.option" | "click.Option")) {
        let keyword = call.arguments.find_keyword("default")?;
        let names = match call.arguments.find_keyword("dest").and_then(|dest| string(&dest.value)) {
            Some(dest) => vec![dest.to_string()],
            None => option_names(&call.arguments.args),
        };
        let int_from_string = is_argparse
            && call
                .arguments
                .find_keyword("type")
                .is_some_and(|kind| matches!(&kind.value, Expr::Name(name) if name.id.as_str() == "int"));
        return Some(CliOption { names, default: &keyword.value, range: keyword.range(), int_from_string });
    }
    if callee == Some(ABSL_DEFINE_INTEGER) {
        let name = call.arguments.find_keyword("name").map(|keyword| &keyword.value).or(call.arguments.args.first())?;
        let (default, range) = match call.arguments.find_keyword("default") {
            Some(keyword) => (&keyword.value, keyword.range()),
            None => {
                let default = call.arguments.args.get(1).filter(|arg| !arg.is_starred_expr())?;
                (default, default.range())
            }
        };
        return Some(CliOption { names: vec![string(name)?.to_string()], default, range, int_from_string: false });
    }
    None
}

/// The default of a typer parameter: `n_jobs: int = typer.Option(-1, "--n-jobs")`, named by the
/// parameter.
pub fn typer_default<'a>(call: &'a ast::ExprCall, callee: Option<&str>) -> Option<&'a Expr> {
    if !callee.is_some_and(|callee| matches!(callee, "typer.Option" | "typer.Argument")) {
        return None;
    }
    match call.arguments.find_keyword("default") {
        Some(keyword) => Some(&keyword.value),
        None => call.arguments.args.first().filter(|arg| !arg.is_starred_expr() && string(arg).is_none()),
    }
}

/// The destination names of an option declared with `flags`: a plain name wins (click's `"n_jobs"`,
/// argparse's positional), then every long option, then every short one, each with its dashes
/// stripped and the inner ones turned into underscores.
fn option_names(flags: &[Expr]) -> Vec<String> {
    let flags: Vec<&str> = flags.iter().filter_map(string).collect();
    if let Some(plain) = flags.iter().find(|flag| !flag.starts_with('-')) {
        return vec![plain.to_string()];
    }
    let long: Vec<String> =
        flags.iter().filter_map(|flag| flag.strip_prefix("--")).map(|name| name.replace('-', "_")).collect();
    if !long.is_empty() {
        return long;
    }
    flags.iter().map(|flag| flag.trim_start_matches('-').replace('-', "_")).collect()
}

fn string(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::StringLiteral(literal) => Some(literal.value.to_str()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_parser::parse_expression;

    fn names_of(source: &str, callee: Option<&str>) -> Option<Vec<String>> {
        let parsed = parse_expression(source).unwrap();
        let Expr::Call(call) = parsed.expr() else { panic!("not a call: {source}") };
        declared_by(call, callee).map(|option| option.names)
    }

    #[test]
    fn argparse_destinations_follow_argparse() {
        assert_eq!(names_of(r#"p.add_argument("--n-jobs", "-j", default=-1)"#, None), Some(vec!["n_jobs".into()]));
        assert_eq!(names_of(r#"p.add_argument("-j", default=-1)"#, None), Some(vec!["j".into()]));
        assert_eq!(names_of(r#"p.add_argument("n_jobs", default=-1)"#, None), Some(vec!["n_jobs".into()]));
        assert_eq!(
            names_of(r#"p.add_argument("-j", "--jobs", dest="n_jobs", default=-1)"#, None),
            Some(vec!["n_jobs".into()])
        );
        assert_eq!(names_of(r#"p.add_argument("--n-jobs", type=int)"#, None), None, "no default, no option");
    }

    #[test]
    fn click_needs_the_click_callee() {
        assert_eq!(names_of(r#"option("--num-threads", default=-1)"#, None), None);
        assert_eq!(
            names_of(r#"option("--num-threads", "--threads", default=-1)"#, Some("click.option")),
            Some(vec!["num_threads".into(), "threads".into()])
        );
    }

    #[test]
    fn absl_takes_the_default_by_position() {
        let parsed = parse_expression(r#"flags.DEFINE_integer("n_jobs", -1, "workers")"#).unwrap();
        let Expr::Call(call) = parsed.expr() else { unreachable!() };
        let option = declared_by(call, Some("absl.flags.DEFINE_integer")).unwrap();
        assert_eq!(option.names, vec!["n_jobs".to_string()]);
        assert!(matches!(option.default, Expr::UnaryOp(_)));
    }
}
