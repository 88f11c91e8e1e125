//! The effective keyword arguments of a call, as Python binds them ([`CallArguments`]): the keywords
//! written in the call and the entries of the dicts it splats (`**kw`) whose entries resolution knows, in
//! the order they are written. A splat of an unknown or open dict leaves the view open for the keys it
//! might hold. Every rule and the pod template bridge read a call's arguments through it.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use super::value::{At, DictEntry, Value};

/// One argument of a call: a keyword written in the call, a positional argument, or an entry of a
/// splatted dict.
#[derive(Debug, Clone)]
pub struct Argument<'a> {
    /// The keyword and the value. Its range is the whole keyword (`n_jobs=-1`), the positional argument,
    /// or the dict entry (`"n_jobs": -1`, possibly in another module).
    pub entry: DictEntry<'a>,
    /// The `**mapping` the entry came from, when it came from a splat.
    pub splat: Option<TextRange>,
}

impl<'a> Argument<'a> {
    /// The keyword it is bound to.
    pub fn name(&self) -> &str {
        &self.entry.key
    }

    /// Where a finding about it is reported: the keyword or positional argument, the dict entry written in
    /// this file, or the splat when another module defines the entry.
    pub fn range(&self) -> TextRange {
        match self.splat {
            Some(splat) if self.entry.is_imported() => splat,
            _ => self.entry.range,
        }
    }

    /// The value expression written in this file and where it is evaluated (what a fix edits); `None` for
    /// an entry another module defines.
    pub fn expr(&self) -> Option<(&'a Expr, At)> {
        self.entry.expr()
    }

    /// The value's source text, for messages.
    pub fn value_text<'s>(&'s self, source: &'s str) -> &'s str {
        self.entry.value_text(source)
    }

    /// The range of the expression or splat a rule evaluates it through (a limit reached is reported there
    /// when the entry is another module's).
    pub fn used_at(&self) -> TextRange {
        self.splat.unwrap_or(self.entry.range)
    }
}

/// The effective keyword arguments of one call.
#[derive(Debug, Clone)]
pub struct CallArguments<'a> {
    call: &'a ast::ExprCall,
    at: At,
    keywords: Vec<Argument<'a>>,
    open: bool,
}

impl<'a> CallArguments<'a> {
    /// The arguments of `call` in the scope of `at`; `eval` resolves a splatted mapping.
    pub fn read(call: &'a ast::ExprCall, at: At, mut eval: impl FnMut(&'a Expr) -> Value<'a>) -> Self {
        let mut arguments = CallArguments { call, at, keywords: Vec::new(), open: false };
        for keyword in &call.arguments.keywords {
            match &keyword.arg {
                Some(name) => {
                    let value_at = At { scope: at.scope, offset: keyword.value.start() };
                    arguments.keywords.push(Argument {
                        entry: DictEntry::written(name.as_str(), keyword.range(), &keyword.value, value_at),
                        splat: None,
                    });
                }
                None => match eval(&keyword.value) {
                    Value::Dict(dict) => {
                        arguments.open |= dict.open;
                        arguments.keywords.extend(
                            dict.effective_entries()
                                .map(|entry| Argument { entry: entry.clone(), splat: Some(keyword.value.range()) }),
                        );
                    }
                    _ => arguments.open = true,
                },
            }
        }
        arguments
    }

    /// The keyword arguments, written or splatted, in the order Python binds them.
    pub fn keywords(&self) -> impl Iterator<Item = &Argument<'a>> {
        self.keywords.iter()
    }

    /// The keyword argument `name`, written or from a known splat.
    pub fn keyword(&self, name: &str) -> Option<&Argument<'a>> {
        self.keywords.iter().find(|argument| argument.entry.key == name)
    }

    /// The argument bound to `name`, by keyword (written or splatted) or at the positional `index`.
    pub fn argument(&self, name: &str, index: Option<usize>) -> Option<Argument<'a>> {
        if let Some(keyword) = self.keyword(name) {
            return Some(keyword.clone());
        }
        let positional =
            index.and_then(|index| self.call.arguments.args.get(index)).filter(|arg| !arg.is_starred_expr())?;
        let at = At { scope: self.at.scope, offset: positional.start() };
        Some(Argument { entry: DictEntry::written(name.to_string(), positional.range(), positional, at), splat: None })
    }

    /// Whether a splat of an unknown or open mapping may hold keywords this view does not show.
    pub fn is_open(&self) -> bool {
        self.open
    }
}
