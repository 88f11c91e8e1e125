//! What the rules see of the module being walked and where they report: the resolver (names and values),
//! the current scope, enclosing functions and joblib contexts, the fixes' writer, and the findings with
//! their labels and cut notes. It also keeps the Airflow operator calls that the manifest rules check
//! ([`super::pod_templates`]). The walk that moves it through the module and calls the rules is
//! [`super::walk`]; this module calls no rule.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_source_file::LineIndex;
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::{OnceCell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use super::calls::FollowedCalls;

use super::arguments::{Argument, CallArguments};
use super::cluster_fits::LazyFitIndex;
use super::joblib_contexts::ParallelContext;
use super::libraries;
use super::limits::{self, Cut, Limit};
use super::recovery::Distrusted;
use super::resolve::{At, DictEntry, Resolved, Resolver, Site, Value};
use super::semantic::{ScopeId, ScopeKind};
use super::value::Alternative;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;
use capslint_diagnostics::selection::RuleSet;
use capslint_diagnostics::source::SourceFile;
use capslint_diagnostics::source::cells::CellMap;
use capslint_pod_template::PodTemplateCall;

/// How many lines apart a secondary label may be before it is named instead of drawn.
const MAX_LABEL_DISTANCE: usize = 6;

/// A finding held back until the walk is done, with where the statement it reports runs: its function
/// (none at module level) and its offset. A later statement of the walk may drop it
/// ([`super::rules::late_thread_cap`]).
#[derive(Debug)]
pub(crate) struct HeldBack {
    /// The finding.
    pub finding: Finding,
    /// The function the statement runs in, none at module level.
    pub function: Option<ScopeId>,
    /// Where the statement is.
    pub offset: TextSize,
}

/// The state of the walk and the place where rules report.
pub struct Checker<'m, 'a> {
    /// Names and values.
    pub resolver: Resolver<'m, 'a>,
    /// The rules to run.
    pub rules: RuleSet,
    /// Whether unknown provenance is reported.
    pub strict: bool,
    /// The file's text.
    pub source: &'a str,
    /// The current scope.
    pub scope: ScopeId,
    /// Enclosing joblib contexts, innermost last (CAP103 pushes and reads them).
    pub contexts: Vec<ParallelContext>,
    /// Enclosing functions: name and the scope the `def` is in.
    pub functions: Vec<(&'a str, ScopeId)>,
    /// The call being assigned to a plain name by the statement being visited (`model = LGBMClassifier()`).
    pub assigned_call: Option<(TextRange, &'a str)>,
    /// What the fixes write as a thread count.
    pub fixes: super::fix_writer::FixWriter,
    /// Where the module's estimators run, for a module that enters a joblib context (CAP101 asks whether
    /// one runs only on a cluster backend); shared with the checkers of the bodies calls are followed into.
    pub cluster_fits: Option<Rc<LazyFitIndex<'m, 'a>>>,
    findings: Vec<Finding>,
    reported: FxHashSet<(Rule, TextRange)>,
    lines: OnceCell<LineIndex>,
    /// For a notebook's module, its cells: a place in another cell is named by cell.
    cells: Option<&'a CellMap>,
    /// The operator calls that name a `pod_template_file`, when the manifest rules want them.
    pub(crate) pod_templates: Option<Vec<PodTemplateCall>>,
    /// Which keys [`Checker::mentions_quoted_key`] found quoted in the source, searched once per key.
    quoted_keys: RefCell<FxHashMap<&'static str, bool>>,
    /// The statements of a module with syntax errors that are not checked.
    distrusted: Option<&'a Distrusted>,
    /// CAP003 findings of values the rules needed that resolution stopped following at a limit, reported
    /// once the walk is done (resolution runs where the checker is shared).
    cut_findings: RefCell<Vec<Finding>>,
    /// CAP106 findings held back until the walk is done: a later statement of the same function (or of
    /// the module) that starts fresh interpreters, which read the variable, drops them
    /// ([`super::rules::late_thread_cap`]).
    pub(crate) late_caps: Vec<HeldBack>,
    /// The calls of the module's functions followed so far, shared with the checkers of their bodies.
    pub(crate) followed: Rc<FollowedCalls>,
    /// Whether this checks a function's body for a call, whose findings are moved to the call: their
    /// labels stay spans, drawn or named once they are placed there.
    for_call: bool,
    /// The arguments of the call the rules are checking, read once and shared by all of them.
    call_arguments: RefCell<Option<(TextRange, Rc<CallArguments<'a>>)>>,
    /// The module's file as other modules' related locations name it, made when a call into another
    /// module is first followed; shared with the checkers of the module's bodies.
    file: Rc<OnceCell<Arc<SourceFile>>>,
}

impl<'m, 'a> Checker<'m, 'a> {
    /// A checker for one module.
    pub fn new(
        resolver: Resolver<'m, 'a>,
        rules: RuleSet,
        strict: bool,
        source: &'a str,
        fixes: super::fix_writer::FixWriter,
    ) -> Self {
        Checker {
            resolver,
            rules,
            strict,
            source,
            scope: ScopeId::MODULE,
            contexts: Vec::new(),
            functions: Vec::new(),
            assigned_call: None,
            fixes,
            cluster_fits: None,
            findings: Vec::new(),
            reported: FxHashSet::default(),
            lines: OnceCell::new(),
            cells: None,
            quoted_keys: RefCell::default(),
            pod_templates: None,
            distrusted: None,
            cut_findings: RefCell::default(),
            late_caps: Vec::new(),
            followed: Rc::default(),
            for_call: false,
            call_arguments: RefCell::default(),
            file: Rc::default(),
        }
    }

    /// A checker of the body of `function` of another module of the project (`file`, whose model
    /// `resolver` reads) for one call of it from this module, whose arguments `resolver`'s frames bind:
    /// the same rules, never strict, sharing the calls followed so far. Its fixes are never offered.
    pub fn for_module_call<'n, 'b>(
        &self,
        resolver: Resolver<'n, 'b>,
        file: &'b Arc<SourceFile>,
        function: &'b ast::StmtFunctionDef,
        (scope, def_scope): (ScopeId, ScopeId),
    ) -> Checker<'n, 'b> {
        let fixes = super::fix_writer::FixWriter::default();
        let mut checker = Checker::new(resolver, self.rules, false, file.text(), fixes);
        checker.scope = scope;
        checker.functions.push((function.name.as_str(), def_scope));
        checker.followed = Rc::clone(&self.followed);
        checker.for_call = true;
        checker.file = Rc::new(OnceCell::from(Arc::clone(file)));
        checker
    }

    /// The module's file, as another module's related locations name it.
    pub fn own_file(&self) -> Arc<SourceFile> {
        Arc::clone(self.file.get_or_init(|| match self.resolver.project() {
            Some(project) => project.source_file(self.source),
            None => Arc::new(SourceFile::new(std::path::PathBuf::new(), String::new(), self.source.to_string())),
        }))
    }

    /// A checker of the body of `function` (its own scope `scope`, its `def` in `def_scope`) for one call
    /// of it, whose arguments `resolver` reads for its parameters: the same module, rules, fixes' writer,
    /// notebook cells and distrusted statements. It is never strict: it reports only what the values
    /// the call passes show.
    pub fn for_call(
        &self,
        resolver: Resolver<'m, 'a>,
        function: &'a ast::StmtFunctionDef,
        scope: ScopeId,
        def_scope: ScopeId,
    ) -> Self {
        let mut checker = Checker::new(resolver, self.rules, false, self.source, self.fixes.clone());
        checker.scope = scope;
        checker.functions.push((function.name.as_str(), def_scope));
        checker.cells = self.cells;
        checker.distrusted = self.distrusted;
        checker.followed = Rc::clone(&self.followed);
        checker.cluster_fits = self.cluster_fits.clone();
        checker.for_call = true;
        checker.file = Rc::clone(&self.file);
        checker
    }

    /// Makes the walk skip the statements the parser did not recover cleanly from syntax errors.
    pub fn distrusting(&mut self, distrusted: &'a Distrusted) {
        self.distrusted = (!distrusted.is_empty()).then_some(distrusted);
    }

    /// Whether `stmt` is one the parser did not recover cleanly, which no rule checks.
    pub fn is_distrusted(&self, stmt: &Stmt) -> bool {
        self.distrusted.is_some_and(|distrusted| distrusted.contains(stmt))
    }

    /// Marks the module as a notebook's code cells: labels name places in other cells by cell and row.
    pub fn in_notebook(&mut self, cells: &'a CellMap) {
        self.cells = Some(cells);
    }

    /// Makes the walk also collect the operator calls that name a `pod_template_file`
    /// ([`Checker::into_parts`] returns them).
    pub fn collect_pod_templates(&mut self) {
        self.pod_templates = Some(Vec::new());
    }

    /// Whether `key` appears anywhere in the module as a quoted string (`"key"` or `'key'`), as a
    /// `default_args` dict or a splatted mapping would spell it. One search of the text per key and file.
    pub fn mentions_quoted_key(&self, key: &'static str) -> bool {
        *self.quoted_keys.borrow_mut().entry(key).or_insert_with(|| {
            let finder =
                |quote: char| memchr::memmem::find(self.source.as_bytes(), format!("{quote}{key}{quote}").as_bytes());
            finder('"').is_some() || finder('\'').is_some()
        })
    }

    /// The findings, in the order they were reported, and the operator calls collected for the manifest
    /// rules (in the order of the walk; none unless [`Checker::collect_pod_templates`] was called).
    pub fn into_parts(mut self) -> (Vec<Finding>, Vec<PodTemplateCall>) {
        for held in std::mem::take(&mut self.late_caps) {
            self.report(held.finding);
        }
        for finding in self.cut_findings.take() {
            self.report(finding);
        }
        (self.findings, self.pod_templates.unwrap_or_default())
    }

    /// Whether `rule` runs.
    pub fn enabled(&self, rule: Rule) -> bool {
        self.rules.contains(rule)
    }

    /// The position of an expression in the current scope.
    pub fn at(&self, offset: TextSize) -> At {
        At { scope: self.scope, offset }
    }

    /// The source text of a range.
    pub fn text(&self, range: TextRange) -> &'a str {
        &self.source[range]
    }

    /// The canonical qualified name of a callee, if it is an import.
    pub fn callee(&self, call: &'a ast::ExprCall) -> Option<String> {
        self.qualified_name_at(&call.func, self.at(call.range().start()))
    }

    /// The canonical qualified name of `expr` at `at`, if it is an import (a limit reached on the way is
    /// reported).
    pub fn qualified_name_at(&self, expr: &'a Expr, at: At) -> Option<String> {
        let (name, cut) = self.resolver.watch(|| self.resolver.qualified_name(expr, at));
        self.note_cut(cut, name.is_none(), expr.range());
        name
    }

    /// The expression a name was assigned from ([`Resolver::definition`]), a limit reached on the way
    /// reported.
    pub fn definition(&self, expr: &'a Expr, at: At) -> (&'a Expr, At) {
        let (definition, cut) = self.resolver.watch(|| self.resolver.definition(expr, at));
        self.note_cut(cut, true, expr.range());
        definition
    }

    /// Reports (as CAP003, when the walk is done) that resolution stopped following a value a rule
    /// needed at `range`, when `cut` stopped it and the value is `incomplete` because of it.
    pub fn note_cut(&self, cut: Option<Cut>, incomplete: bool, range: TextRange) {
        let Some(cut) = cut else { return };
        if !incomplete || cut.limit == Limit::Budget || !self.enabled(Rule::AnalysisBudgetExceeded) {
            return;
        }
        let lines = self.lines.get_or_init(|| LineIndex::from_source_text(self.source));
        let place = cut.site.as_ref().map(|site| match site {
            Site::Here(at) => {
                let place = match self.cells.and_then(|cells| cells.locate(at.start(), self.source, lines)) {
                    Some(place) => format!("cell {}, line {}", place.cell, place.location.row),
                    None => format!("line {}", lines.line_index(at.start()).get()),
                };
                format!("`{}` ({place})", limits::shortened(self.text(*at)))
            }
            Site::Elsewhere { file, range } => {
                let text = file.text().get(usize::from(range.start())..usize::from(range.end())).unwrap_or_default();
                format!("`{}` ({}:{})", limits::shortened(text), file.display_name(), file.location(range.start()).row)
            }
        });
        let mut finding = cut.finding(range, self.text(range), place);
        if let Some(site) = cut.site {
            finding = self.point_to(finding, site, "resolution stopped here");
        }
        self.cut_findings.borrow_mut().push(finding);
    }

    /// The callee as written, shortened for messages.
    pub fn callee_display(&self, call: &ast::ExprCall) -> String {
        let text = self.text(call.func.range());
        if text.len() > 60 { format!("{}...", &text[..text.floor_char_boundary(57)]) } else { text.to_string() }
    }

    /// Points a finding at a related place: drawn as a secondary label when it is within a few lines of
    /// the primary span (miette draws every line in between), otherwise named by its line in the label.
    /// A place in another module is a related location, named in the message when reported.
    #[must_use]
    pub fn point_to(&self, mut finding: Finding, related: impl Into<Site>, text: &str) -> Finding {
        let related = match related.into() {
            Site::Here(range) => range,
            Site::Elsewhere { file, range } => return finding.related(file, range, text),
        };
        if finding.range.contains_range(related) {
            return finding;
        }
        if self.for_call {
            return finding.secondary(related, text);
        }
        let (first, last) = if related.start() < finding.range.start() {
            (related.start(), finding.range.start())
        } else {
            (finding.range.end(), related.start())
        };
        let lines = self.lines.get_or_init(|| LineIndex::from_source_text(self.source));
        let lines_apart = lines.line_index(last).get() - lines.line_index(first).get();
        let same_cell = self.cells.is_none_or(|cells| cells.cell_number(first) == cells.cell_number(last));
        if lines_apart <= MAX_LABEL_DISTANCE && same_cell {
            finding.secondary(related, text)
        } else {
            let place = match self.cells.and_then(|cells| cells.locate(related.start(), self.source, lines)) {
                Some(place) => format!("cell {}, line {}", place.cell, place.location.row),
                None => format!("line {}", lines.line_index(related.start()).get()),
            };
            let name = self.text(related);
            let name = if name.len() > 30 || name.contains('\n') { String::new() } else { format!("`{name}` ") };
            finding.label = format!("{} ({name}{place}: {text})", finding.label);
            finding
        }
    }

    /// Reports a finding once per rule and span.
    pub fn report(&mut self, finding: Finding) {
        if self.enabled(finding.rule) && self.reported.insert((finding.rule, finding.range)) {
            self.findings.push(finding.naming_related_places());
        }
    }

    /// Evaluates an expression in the current scope.
    pub fn eval(&self, expr: &'a Expr) -> Resolved<'a> {
        self.eval_at(expr, self.at(expr.range().start()))
    }

    /// Evaluates an expression at `at`; a limit that left the value unknown (or a dict open) is reported.
    pub fn eval_at(&self, expr: &'a Expr, at: At) -> Resolved<'a> {
        let (resolved, cut) = self.resolver.watch(|| self.resolver.eval(expr, at));
        self.note_cut(cut, is_incomplete(&resolved.value), expr.range());
        resolved
    }

    /// Evaluates a dict entry that a rule reads where the dict is used (`used_at`); a limit that left the
    /// value unknown is reported at the entry when it is written in this file, else at the use.
    pub fn eval_entry(&self, entry: &DictEntry<'a>, used_at: TextRange) -> Resolved<'a> {
        let (resolved, cut) = self.resolver.watch(|| self.resolver.eval_entry(entry));
        let range = if entry.is_imported() { used_at } else { entry.range };
        self.note_cut(cut, is_incomplete(&resolved.value), range);
        resolved
    }
}

impl<'a> Checker<'_, 'a> {
    /// The effective keyword arguments of `call`: written keywords and the entries of known splats
    /// (a limit reached while resolving a splat is reported at it). Read once per call: each rule that
    /// asks again shares them.
    pub fn arguments(&self, call: &'a ast::ExprCall) -> Rc<CallArguments<'a>> {
        if let Some((range, arguments)) = &*self.call_arguments.borrow()
            && *range == call.range()
        {
            return Rc::clone(arguments);
        }
        let read = CallArguments::read(call, self.at(call.range().start()), |splat| self.eval(splat).value);
        let mut held = self.call_arguments.borrow_mut();
        // The previous call's arguments, once no rule holds them, make room for these.
        match held.as_mut().and_then(|(range, arguments)| Some((range, Rc::get_mut(arguments)?))) {
            Some((range, arguments)) => {
                *range = call.range();
                *arguments = read;
            }
            None => *held = Some((call.range(), Rc::new(read))),
        }
        Rc::clone(&held.as_ref().expect("just stored").1)
    }

    /// Evaluates an argument where it is written (a keyword, a positional argument, a splatted entry).
    /// A limit reached is reported at the value written in the call, or at the splatted entry.
    pub fn eval_argument(&self, argument: &Argument<'a>) -> Resolved<'a> {
        match (argument.splat, argument.expr()) {
            (None, Some((expr, at))) => self.eval_at(expr, at),
            _ => self.eval_entry(&argument.entry, argument.used_at()),
        }
    }

    /// Labels the splat an argument came from, when it came from one and is reported at its entry.
    #[must_use]
    pub fn point_to_splat(&self, finding: Finding, argument: &Argument<'_>) -> Finding {
        match argument.splat {
            // A dict written in the splat shows where it goes.
            Some(splat) if !splat.contains_range(finding.range) => {
                self.point_to(finding, splat, &format!("`{}` is passed through this splat", argument.name()))
            }
            _ => finding,
        }
    }

    /// Labels the path a finding is about, when the value differs by path and the path has a place of
    /// its own (a branch, a default).
    #[must_use]
    pub fn point_to_path(&self, mut finding: Finding, path: &Alternative<'_>) -> Finding {
        let Some(site) = path.site.clone() else { return finding };
        let text = path.condition.as_deref().unwrap_or("on this branch");
        match site {
            // Within the finding's span: the label says when that path is taken.
            Site::Here(range) if finding.range.contains_range(range) => {
                if let Some(condition) = &path.condition {
                    finding.label = format!("{} ({condition})", finding.label);
                }
                finding
            }
            // Already labelled (the node count a branch calls).
            Site::Here(range) if finding.secondary.iter().any(|label| label.range == range) => finding,
            site => self.point_to(finding, site, text),
        }
    }
}

/// Whether a value is unknown, or a dict with unknown parts: what a limit reached while resolving it
/// may have hidden a finding in.
fn is_incomplete(value: &Value<'_>) -> bool {
    match value {
        Value::Unknown(_) | Value::OneOf(_) => super::paths::any_unknown(value),
        Value::Dict(dict) => dict.open,
        _ => false,
    }
}

/// The argument bound to `name`, by keyword or at the positional `index`.
pub fn call_argument<'a>(call: &'a ast::ExprCall, name: &str, index: Option<usize>) -> Option<&'a Expr> {
    call.arguments
        .find_keyword(name)
        .map(|keyword| &keyword.value)
        .or_else(|| index.and_then(|index| call.arguments.args.get(index)).filter(|arg| !arg.is_starred_expr()))
}

/// The `**mapping` splats of a call.
pub fn kwargs_splats(call: &ast::ExprCall) -> impl Iterator<Item = &Expr> {
    call.arguments.keywords.iter().filter(|keyword| keyword.arg.is_none()).map(|keyword| &keyword.value)
}

impl Checker<'_, '_> {
    /// The module-level function whose call decides when the current code runs, if the code is in one.
    /// `None` means module-level code (including class bodies); `Some(None)` a method or nested
    /// function whose call time is unknown; `Some(Some(name))` a module-level function.
    pub fn enclosing_module_function(&self) -> Option<Option<&str>> {
        let (name, parent) = self.functions.first()?;
        let model = self.resolver.model();
        Some((*parent == ScopeId::MODULE && model.scope_kind(*parent) == ScopeKind::Module).then_some(*name))
    }

    /// Whether `callee` is a thread-count keyword target of a booster, for messages.
    pub fn booster_of(callee: Option<&str>) -> Option<libraries::Booster> {
        callee.and_then(libraries::Booster::from_module)
    }
}
