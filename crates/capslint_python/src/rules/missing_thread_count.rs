//! CAP102 missing-thread-count: LightGBM, XGBoost and CatBoost without an explicit thread count.

use ruff_python_ast as ast;
use ruff_text_size::{Ranged, TextRange};

use crate::checker::{Checker, call_argument};
use crate::fix_writer::append_item;
use crate::libraries::{Booster, BoosterEntry, booster_entry, is_thread_count_keyword};
use crate::paths::paths;
use crate::resolve::{DictValue, Resolved, Site, Value};
use crate::value::Alternative;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::fix::{Edit, Fix};
use capslint_diagnostics::registry::Rule;

/// What a call says about its thread count.
enum ThreadCount<'a> {
    /// Given, and not `None`.
    Explicit,
    /// Given as `None`: explicitly the library default (where, when it is written in this file), on the
    /// path of the value that is `None`.
    DefaultNone(Option<TextRange>, Alternative<'a>),
    /// Not given.
    Missing,
    /// Cannot tell (`**kwargs`, a params dict of unknown provenance).
    Unknown,
}

/// What a params dict used at `used_at` says about the thread count.
fn from_dict<'a>(dict: &DictValue<'a>, checker: &Checker<'_, 'a>, used_at: TextRange) -> ThreadCount<'a> {
    match dict.effective_entries().find(|entry| is_thread_count_keyword(&entry.key)) {
        Some(entry) => match none_path(&checker.eval_entry(entry, used_at)) {
            // An entry of a dict another module defines is reported at the use, with a label there.
            Some(path) if entry.is_imported() => ThreadCount::DefaultNone(None, path),
            Some(path) => ThreadCount::DefaultNone(Some(entry.range), path),
            None => ThreadCount::Explicit,
        },
        None if dict.open => ThreadCount::Unknown,
        None => ThreadCount::Missing,
    }
}

/// The first path of `value` that is `None` (when none is the pod's cap).
fn none_path<'a>(resolved: &Resolved<'a>) -> Option<Alternative<'a>> {
    paths(resolved).into_iter().find(|path| matches!(path.resolved.value, Value::None))
}

fn from_keywords<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall, booster: Booster) -> ThreadCount<'a> {
    // Keywords written in the call and the entries of the dicts it splats.
    let arguments = checker.arguments(call);
    if let Some(argument) = arguments.keywords().find(|argument| is_thread_count_keyword(argument.name())) {
        let range = (!argument.entry.is_imported()).then(|| argument.range());
        return match none_path(&checker.eval_argument(argument)) {
            Some(path) => ThreadCount::DefaultNone(range, path),
            None => ThreadCount::Explicit,
        };
    }
    let mut unknown = arguments.is_open();
    let params = (booster == Booster::CatBoost).then(|| call_argument(call, "params", None)).flatten();
    if let Some(mapping) = params {
        match checker.eval(mapping).value {
            Value::Dict(dict) => match from_dict(&dict, checker, mapping.range()) {
                ThreadCount::Missing => {}
                ThreadCount::Unknown => unknown = true,
                found => return found,
            },
            _ => unknown = true,
        }
    }
    if unknown { ThreadCount::Unknown } else { ThreadCount::Missing }
}

/// The edits adding `"key": EXPRESSION` to a params dict literal written in this file (found through a
/// name), after its last entry written there; `None` when it is not a literal of this file.
fn add_to_literal(checker: &Checker<'_, '_>, dict: &DictValue<'_>, key: &str) -> Option<Vec<Edit>> {
    let literal = dict.origin.as_ref()?.here()?;
    let text = checker.text(literal);
    let last = dict
        .entries
        .iter()
        .filter(|entry| entry.expr().is_some() && literal.contains_range(entry.range))
        .map(|entry| entry.range)
        .max_by_key(|range| range.end());
    let expression = checker.fixes.expression();
    let close = literal.end() - ruff_text_size::TextSize::from(1);
    let item = match (text.starts_with('{') && text.ends_with('}'), text.starts_with("dict(") && text.ends_with(')')) {
        (true, _) if last.is_some() || text[1..].trim_start().starts_with('}') => format!("\"{key}\": {expression}"),
        (false, true) if last.is_some() => format!("{key}={expression}"),
        _ => return None,
    };
    Some(checker.fixes.with_imports(append_item(checker.source, last, close, &item)))
}

/// Checks booster constructors and training calls.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::MissingThreadCount) {
        return;
    }
    let Some((booster, entry)) = callee.and_then(booster_entry) else { return };
    let display = checker.callee_display(call);
    let keyword = booster.thread_keyword(entry);
    // Where a missing thread count can be written: the call's keywords, or the params dict literal.
    let mut add: Option<Vec<Edit>> = None;
    let (count, range, secondary): (ThreadCount<'_>, TextRange, Option<Site>) = match entry {
        BoosterEntry::Estimator => {
            add = Some(checker.fixes.add_keyword(checker.source, call, keyword));
            (from_keywords(checker, call, booster), call.func.range(), None)
        }
        BoosterEntry::Train => match call_argument(call, "params", Some(0)) {
            None => (ThreadCount::Missing, call.func.range(), None),
            Some(params) => {
                let resolved = checker.eval(params);
                match &resolved.value {
                    Value::Dict(dict) => {
                        add = checker
                            .fixes
                            .add_entry(checker.source, params, keyword)
                            .or_else(|| add_to_literal(checker, dict, keyword));
                        let origin = dict
                            .origin
                            .clone()
                            .filter(|origin| origin.here().is_none_or(|origin| !params.range().contains_range(origin)));
                        (from_dict(dict, checker, params.range()), params.range(), origin)
                    }
                    _ => (ThreadCount::Unknown, params.range(), None),
                }
            }
        },
    };
    // `model = LGBMClassifier()` followed by `model.set_params(n_jobs=...)` sets it after all.
    let configured_later = checker.assigned_call.is_some_and(|(range, name)| {
        range == call.range() && checker.resolver.model().is_thread_configured(checker.scope, name)
    });
    let default = booster.default_behaviour(entry);
    let expression = checker.fixes.expression().to_string();
    let mut fix = None;
    let finding = match count {
        ThreadCount::Explicit => return,
        ThreadCount::Missing | ThreadCount::Unknown if configured_later => return,
        ThreadCount::Unknown if !checker.strict => return,
        ThreadCount::Unknown => Finding::new(
            Rule::MissingThreadCount,
            range,
            format!("`{display}` gets its thread count from a value capslint cannot see (strict mode)"),
        )
        .label("thread count of unknown provenance"),
        ThreadCount::DefaultNone(none_range, path) => {
            // `n_jobs=None` or `"nthread": None` written here: the `None` is replaced.
            let none = none_range.filter(|at| checker.text(*at).ends_with("None")).map(|at| {
                let end = at.end();
                TextRange::new(end - ruff_text_size::TextSize::from(4), end)
            });
            fix = none.map(|none| {
                Fix::unsafe_edits(format!("Replace `None` with `{expression}`"), checker.fixes.replace(none))
            });
            let finding = Finding::new(
                Rule::MissingThreadCount,
                none_range.unwrap_or(range),
                format!("`{display}` is given `{keyword}=None`, the library default: {default}"),
            )
            .label(if path.condition.is_some() { "the library default" } else { "explicitly the default" });
            checker.point_to_path(finding, &path)
        }
        ThreadCount::Missing => {
            fix = add.map(|edits| Fix::unsafe_edits(format!("Pass `{keyword}={expression}`"), edits));
            Finding::new(Rule::MissingThreadCount, range, format!("`{display}` has no thread count: {default}")).label(
                match entry {
                    BoosterEntry::Train => format!("no `{keyword}` in these params"),
                    BoosterEntry::Estimator => format!("no `{keyword}`"),
                },
            )
        }
    };
    let mut finding = finding.help(format!(
        "pass `{keyword}` derived from the pod's CPU limit, e.g. `{keyword}=int(os.environ[\"OMP_NUM_THREADS\"])`"
    ));
    if let Some(fix) = fix {
        finding = finding.fix(fix);
    }
    if let Some(origin) = secondary {
        finding = checker.point_to(finding, origin, "params defined here");
    }
    checker.report(finding);
}
