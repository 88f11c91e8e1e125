//! Writes to the process environment: `os.environ[...] = v`, `os.environ.setdefault/update`, `os.putenv`.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use super::checker::Checker;
use super::resolve::Value;

/// One statement or call that sets one or more environment variables.
#[derive(Debug, Clone)]
pub struct EnvWrite<'a> {
    /// The variables set, with the value expression when it is known.
    pub variables: Vec<(String, Option<&'a Expr>)>,
    /// The assignment or call, for reporting.
    pub range: TextRange,
}

impl<'a> EnvWrite<'a> {
    /// `os.environ[NAME] = value` (NAME a literal, a constant, or a loop over literal names).
    pub fn from_assignment(checker: &Checker<'_, 'a>, target: &'a Expr, value: &'a Expr) -> Option<Self> {
        let Expr::Subscript(subscript) = target else { return None };
        let at = checker.at(subscript.range.start());
        if checker.qualified_name_at(&subscript.value, at).as_deref() != Some("os.environ") {
            return None;
        }
        let names = names_of(checker, &subscript.slice)?;
        Some(EnvWrite {
            variables: names.into_iter().map(|name| (name, Some(value))).collect(),
            range: TextRange::new(subscript.range.start(), value.end()),
        })
    }

    /// `os.environ.setdefault(NAME, v)`, `os.environ.update({...})`, `os.environ.update(NAME=v)`,
    /// `os.putenv(NAME, v)`.
    pub fn from_call(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) -> Option<Self> {
        let arguments = &call.arguments;
        let variables = match callee? {
            "os.environ.setdefault" | "os.putenv" | "os.environ.__setitem__" => {
                let [name, value, ..] = &arguments.args[..] else { return None };
                names_of(checker, name)?.into_iter().map(|name| (name, Some(value))).collect()
            }
            "os.environ.update" => {
                let mut variables = Vec::new();
                for argument in &arguments.args {
                    if let Value::Dict(dict) = checker.eval(argument).value {
                        variables.extend(
                            dict.effective_entries()
                                .map(|entry| (entry.key.to_string(), entry.expr().map(|(expr, _)| expr))),
                        );
                    }
                }
                for keyword in &arguments.keywords {
                    match &keyword.arg {
                        Some(name) => variables.push((name.as_str().to_string(), Some(&keyword.value))),
                        None => {
                            if let Value::Dict(dict) = checker.eval(&keyword.value).value {
                                variables.extend(
                                    dict.effective_entries()
                                        .map(|entry| (entry.key.to_string(), entry.expr().map(|(expr, _)| expr))),
                                );
                            }
                        }
                    }
                }
                variables
            }
            _ => return None,
        };
        (!variables.is_empty()).then(|| EnvWrite { variables, range: call.range() })
    }
}

fn names_of<'a>(checker: &Checker<'_, 'a>, expr: &'a Expr) -> Option<Vec<String>> {
    match checker.eval(expr).value {
        Value::Str(name) => Some(vec![name]),
        Value::Strings(names) => Some(names),
        _ => None,
    }
}
