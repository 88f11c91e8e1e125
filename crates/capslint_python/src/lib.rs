//! Python sources: parse with ruff's parser, build the semantic model, run the CAP1xx rules.
//!
//! All code that touches ruff's AST lives in this crate, so a parser upgrade is one crate's diff. It
//! knows no manifest: the pod-template facts of a DAG leave it as `capslint_pod_template` data.

mod arguments;
mod blank;
mod budget;
mod calls;
mod checker;
mod cli_option;
mod cluster_fits;
mod crossmodule;
mod detached;
mod env;
mod fix_writer;
mod interprocedural;
mod ipython;
mod joblib_contexts;
pub mod libraries;
pub mod limits;
mod lookup;
pub mod notebook;
mod own_instance;
mod paths;
mod pod_templates;
pub mod prefilter;
mod prescan;
mod project;
mod project_module;
mod python2;
mod receiver_attributes;
mod receivers;
mod recovery;
mod resolve;
mod returns;
mod rules;
mod semantic;
mod site;
mod syntax_report;
mod value;
mod walk;

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{ModModule, PySourceType};
use ruff_python_parser::{Parsed, parse_unchecked_source};
use ruff_text_size::{TextRange, TextSize};

use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;
use capslint_diagnostics::selection::RuleSet;
use capslint_diagnostics::source::cells::CellMap;
use capslint_workspace::settings::Settings;

pub use project::{ProjectContext, ProjectIndex};
use recovery::Distrusted;
pub use resolve::CapNames;
use syntax_report::Fixes;

/// What checking one Python file produced: findings, the comments (for `# noqa`), and the Airflow
/// operators that name a `pod_template_file` (for the manifest rules).
#[derive(Debug, Default)]
pub struct PythonOutcome {
    /// The findings, unsuppressed.
    pub findings: Vec<Finding>,
    /// Every comment's range.
    pub comments: Vec<TextRange>,
    /// Operator calls whose `pod_template_file` the manifest rules check.
    pub pod_templates: Vec<capslint_pod_template::PodTemplateCall>,
}

/// Words without which no CAP1xx rule can fire; with the load-time variables
/// ([`capslint_cpu::thread_variables::read_at_load`]) they make up
/// [`prefilter_words`].
const PREFILTER_BASE_WORDS: &[&str] = &[
    // The same as command-line options (`--n-jobs`), whose destination argparse and click derive.
    "n-jobs",
    "thread-count",
    "num-thread",
    // The ML libraries' own knobs (CAP101, CAP105, CAP110): TensorFlow's `set_*_parallelism_threads`,
    // ONNX Runtime's `*_op_num_threads`, spaCy's `n_process`, Ray's `num_cpus`, Dask's `n_workers` and
    // `threads_per_worker`.
    "parallelism_threads",
    "op_num_threads",
    "num_cpus",
    "n_workers",
    "threads_per_worker",
    // `@task.kubernetes` (CAP107, CAP108).
    "kubernetes(",
    // `# noqa: CAPxxx` (CAP002).
    "CAP0",
    "CAP1",
    "CAP2",
];

/// Thread-count keywords and dict keys (CAP101, CAP102, CAP105): words that count unless the match is a
/// whole thread-count keyword given a positive integer or `None` (`n_jobs=2,`), which no rule reports
/// without another word (the prefilter's count-keyword role).
pub const PREFILTER_COUNT_KEYWORDS: &[&str] = &["n_jobs", "thread_count", "num_thread", "nthread"];

/// Words the rules read only as a whole name (spaCy's `n_process` keyword, or a dict key): a file holds
/// one only where it does not end a longer name (`gaussian_process` is not one).
pub const PREFILTER_WHOLE_NAMES: &[&str] = &["n_process"];

/// Libraries' packages and entry points, which a file reaches only through an import, an attribute
/// (`optuna.integration.lightgbm`, `cf.ProcessPoolExecutor`) or a string (`import_module("xgboost")`): a
/// file that mentions one only in prose (a docstring, a comment) calls none of them. A function's own
/// text is searched for them as for any word.
pub const PREFILTER_IMPORTED: &[&str] = &[
    // Boosters (CAP102).
    "lightgbm",
    "xgboost",
    "catboost",
    // joblib's entry points, under any import path or alias (CAP101, CAP103): every callee those rules
    // check is `Parallel`, `parallel_backend` or `parallel_config`.
    "Parallel",
    "parallel_backend",
    "parallel_config",
    // Process pools (CAP104) and CPU counts (CAP105).
    "Pool",
    "get_reusable_executor",
    "cpu_count",
    "sched_getaffinity",
    // OpenCV's thread count (CAP105) and ONNX Runtime's sessions (CAP110).
    "setNumThreads",
    "InferenceSession",
    // Airflow pod operators (CAP107, CAP108); subclasses defined in other modules of the project are
    // [`PREFILTER_WORD_PAIRS`].
    "PodOperator",
];

/// Words of [`PREFILTER_IMPORTED`] that a file reaches only through one of a few whole names: `Pool` is
/// the end of every process and thread pool a rule checks ([`libraries::POOL_CLASSES`]), never of
/// another library's class (`urllib3.HTTPConnectionPool`), whose calls no rule resolves.
pub const PREFILTER_IMPORTED_HOLDERS: &[(&str, &[&str])] = &[("Pool", libraries::POOL_CLASSES)];

/// Pairs of words that let a file through when both appear: a pod-operator subclass that another module
/// of the project defines goes by any `...Operator` name, and Airflow takes an operator's arguments as
/// keywords only (positional ones raise), so its call writes `task_id`.
pub const PREFILTER_WORD_PAIRS: &[(&str, &str)] = &[("Operator", "task_id")];

/// Words of [`PREFILTER_WORD_PAIRS`] that do not count in a name the file imports only from installed
/// packages: `EmptyOperator` from `airflow` is Airflow's own, and every pod operator of an installed
/// package goes by a `PodOperator` name, which counts on its own.
pub const PREFILTER_PAIR_WORDS_NOT_INSTALLED: &[&str] = &["Operator"];

/// The words without which no CAP1xx rule can fire: a file containing none of them (a word of
/// [`PREFILTER_WHOLE_NAMES`] counts only where it does not continue a name, one of [`PREFILTER_IMPORTED`]
/// only where the file can reach it), and neither pair of [`PREFILTER_WORD_PAIRS`], is never parsed.
/// Environment writes matter only for a load-time variable (CAP106), whose name must be a string literal in
/// the file, or for a CPU count (CAP105: `cpu_count`), so the variable names stand in for `environ`.
pub fn prefilter_words() -> Vec<&'static str> {
    PREFILTER_COUNT_KEYWORDS
        .iter()
        .chain(PREFILTER_BASE_WORDS)
        .chain(PREFILTER_WHOLE_NAMES)
        .chain(PREFILTER_IMPORTED)
        .copied()
        .chain(capslint_cpu::thread_variables::read_at_load())
        .collect()
}

/// Whether `text` holds `word`: a vectorised substring search, much cheaper on a whole file than
/// `str::contains`.
pub(crate) fn holds(text: &str, word: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), word.as_bytes()).is_some()
}

/// Visits what a `def` evaluates in the enclosing scope, when the definition runs: its decorators and
/// its parameter defaults. Every walk calls this before it enters the function's own scope.
fn visit_function_header<'a>(visitor: &mut impl Visitor<'a>, function: &'a ruff_python_ast::StmtFunctionDef) {
    for decorator in &function.decorator_list {
        visitor.visit_decorator(decorator);
    }
    for parameter in function.parameters.iter_non_variadic_params() {
        if let Some(default) = parameter.default() {
            visitor.visit_expr(default);
        }
    }
}

/// The stack the analysis of one file needs at most: parsing, the walks of the tree and dropping it all
/// recurse once per level of nesting, which [`prescan`] bounds by [`prescan::MAX_NESTING`] (the parser itself
/// grows its stack on the heap). The analysis
/// runs on a stack of at least this size wherever it is called from: a thread with less room left (rayon's
/// default threads have 2 MiB) gets a new stack segment; the command line's pool threads have 256 MiB
/// (`cli.rs`) and never need one. `tests/it/hostile.rs` analyses every deep shape 9,000 levels deep on it, in
/// a debug build.
const ANALYSIS_STACK_BYTES: usize = 64 << 20;

/// Parses `text` and runs the enabled Python rules. A file too deep or too large to analyse within the
/// bounds ([`prescan`]), or whose resolution spends its whole [`budget::Budget`], gets one CAP003 finding
/// and nothing else.
/// Imported names are resolved through `project`, when given.
pub fn check(text: &str, rules: RuleSet, settings: &Settings, project: Option<ProjectContext<'_>>) -> PythonOutcome {
    // A module that a call from another file was followed into is parsed already, without syntax errors
    // and within the bounds the pre-scan sets: that tree serves the module's own check as well.
    let kept = project.and_then(|context| context.index.kept_tree(context.file));
    if let Some(module) = kept.filter(|module| module.file.text() == text) {
        return stacker::maybe_grow(ANALYSIS_STACK_BYTES, ANALYSIS_STACK_BYTES, || {
            check_clean(text, &module.parsed, None, rules, settings, project)
        });
    }
    check_module(text, None, PySourceType::Python, rules, settings, project)
}

/// What the code cells of a notebook checked by [`check_cells`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellCode {
    /// The cells the kernel runs, concatenated: parsed in IPython mode (line magics, shell escapes and
    /// help are escape commands).
    Notebook,
    /// The cells that write one Python module to a file (`%%writefile train.py`), everything else blanked:
    /// parsed as the Python file the module is.
    WrittenModule,
}

/// [`check`] for a notebook's code cells in `text`, mapped to the notebook by `cells`: places in other
/// cells are named by cell in labels.
pub fn check_cells(
    text: &str,
    cells: &CellMap,
    code: CellCode,
    rules: RuleSet,
    settings: &Settings,
    project: Option<ProjectContext<'_>>,
) -> PythonOutcome {
    let source_type = match code {
        CellCode::Notebook => PySourceType::Ipynb,
        CellCode::WrittenModule => PySourceType::Python,
    };
    check_module(text, Some(cells), source_type, rules, settings, project)
}

/// `source_type`: how `text` is parsed, as a Python file or as a notebook's code in IPython mode.
fn check_module(
    text: &str,
    cells: Option<&CellMap>,
    source_type: PySourceType,
    rules: RuleSet,
    settings: &Settings,
    project: Option<ProjectContext<'_>>,
) -> PythonOutcome {
    let pending = match prescan::before_parsing(text) {
        Ok(pending) => pending,
        Err(refusal) => return refused(refusal, rules),
    };
    stacker::maybe_grow(ANALYSIS_STACK_BYTES, ANALYSIS_STACK_BYTES, || {
        analyse(text, cells, source_type, rules, settings, pending, project)
    })
}

/// Runs the rules on `text`, whose tree `parsed` has no syntax error and is within the pre-scan's bounds.
fn check_clean(
    text: &str,
    parsed: &Parsed<ModModule>,
    cells: Option<&CellMap>,
    rules: RuleSet,
    settings: &Settings,
    project: Option<ProjectContext<'_>>,
) -> PythonOutcome {
    let module = Module { text, body: &parsed.syntax().body, distrusted: &Distrusted::none(), cells };
    run_rules(module, rules, settings, project, comments(parsed))
}

/// The outcome of a file [`prescan`] refused: its CAP003 finding, if enabled.
fn refused(refusal: prescan::Refusal, rules: RuleSet) -> PythonOutcome {
    let findings = rules.contains(Rule::AnalysisBudgetExceeded).then(|| refusal.finding()).into_iter().collect();
    PythonOutcome { findings, ..PythonOutcome::default() }
}

fn analyse(
    text: &str,
    cells: Option<&CellMap>,
    source_type: PySourceType,
    rules: RuleSet,
    settings: &Settings,
    pending: prescan::Pending,
    project: Option<ProjectContext<'_>>,
) -> PythonOutcome {
    let notebook_code = source_type == PySourceType::Ipynb;
    let parsed = parse(text, source_type);
    if let Err(refusal) = prescan::after_parsing(text, parsed.tokens(), pending) {
        return refused(refusal, rules);
    }
    if parsed.errors().is_empty() {
        return check_clean(text, &parsed, cells, rules, settings, project);
    }
    // A notebook's cell that does not parse (Python 2, a shell session pasted in) leaves the other
    // cells readable, as they are when the notebook runs: those cells are blanked and the rest checked.
    if let Some(cells) = cells.filter(|_| notebook_code)
        && let Some(blanked) = blank_cells(text, cells, parsed.errors().iter().map(|error| error.location.start()))
    {
        let reparsed = parse(&blanked, source_type);
        if reparsed.errors().is_empty() {
            let module = Module {
                text: &blanked,
                body: &reparsed.syntax().body,
                distrusted: &Distrusted::none(),
                cells: Some(cells),
            };
            let outcome = run_rules(module, rules, settings, project, comments(&parsed));
            // The cells checked parse: their fixes are shown as in any notebook (never applied there).
            return syntax_report::with_syntax_errors(
                outcome,
                syntax_report::finding(text, &parsed),
                rules,
                Fixes::Kept,
            );
        }
    }
    // A `.py` file exported from a notebook with its magics is read as the notebook's code.
    let mut syntax_findings = Vec::new();
    let parsed = if !notebook_code && ipython::may_hold_escapes(text, &parsed) {
        // One tree at a time: the parse as Python is dropped before the parse in IPython mode, and made
        // again in the rare case that IPython mode reads no better.
        let python_errors = parsed.errors().len();
        drop(parsed);
        match ipython::reparse(text, python_errors) {
            Some(module) => {
                syntax_findings.push(ipython::finding(text, module.first_escape));
                module.parsed
            }
            None => parse_unchecked_source(text, PySourceType::Python),
        }
    } else {
        parsed
    };
    syntax_findings.extend(syntax_report::finding(text, &parsed));
    // The statements the parser recovered cleanly are checked; the others bind unknown values.
    let body = &parsed.syntax().body;
    let distrusted = Distrusted::find(text, body, parsed.errors().iter().map(|error| error.location));
    let module = Module { text, body, distrusted: &distrusted, cells };
    let outcome = run_rules(module, rules, settings, project, comments(&parsed));
    syntax_report::with_syntax_errors(outcome, syntax_findings, rules, Fixes::Dropped)
}

/// `text` parsed as `source_type`; a notebook's code on which the parser's IPython mode gives up
/// ([`ipython::parse`]) is parsed as Python, whose syntax errors then report it.
fn parse(text: &str, source_type: PySourceType) -> Parsed<ModModule> {
    match source_type {
        PySourceType::Ipynb => {
            ipython::parse(text).unwrap_or_else(|| parse_unchecked_source(text, PySourceType::Python))
        }
        _ => parse_unchecked_source(text, source_type),
    }
}

/// Every comment's range.
fn comments(parsed: &Parsed<ModModule>) -> Vec<TextRange> {
    parsed
        .tokens()
        .iter()
        .filter(|token| token.kind() == TokenKind::Comment)
        .map(ruff_text_size::Ranged::range)
        .collect()
}

/// The text with every character of the cells that hold the `errors` replaced by a space (line breaks
/// kept), so every offset stays where it was; `None` when an error is outside every cell.
fn blank_cells(text: &str, cells: &CellMap, errors: impl Iterator<Item = TextSize>) -> Option<String> {
    let ranges: Option<Vec<_>> = errors
        .map(|error| cells.cell_range(error).map(|range| usize::from(range.start())..usize::from(range.end())))
        .collect();
    Some(blank::blanked(text, ranges?))
}

/// A module to check: its text and statements, the statements not to trust, and a notebook's cells.
struct Module<'t> {
    text: &'t str,
    body: &'t [ruff_python_ast::Stmt],
    distrusted: &'t Distrusted,
    cells: Option<&'t CellMap>,
}

/// The words of a module's text that turn on a part of the analysis, found in one search.
struct Mentions {
    /// `parallel_backend` or `parallel_config`: a joblib backend block may exempt a fit (CAP101).
    cluster_backend: bool,
    /// `pod_template_file`: an Airflow operator may name a pod template (the manifest rules).
    pod_template_file: bool,
}

impl Mentions {
    const WORDS: [&str; 3] = ["parallel_backend", "parallel_config", "pod_template_file"];

    fn of(text: &str) -> Self {
        static SEARCHER: std::sync::OnceLock<aho_corasick::packed::Searcher> = std::sync::OnceLock::new();
        let searcher = SEARCHER.get_or_init(|| {
            aho_corasick::packed::Searcher::new(Self::WORDS).expect("a packed searcher takes three words")
        });
        let mut mentions = Mentions { cluster_backend: false, pod_template_file: false };
        for found in searcher.find_iter(text) {
            match Self::WORDS[found.pattern().as_usize()] {
                "pod_template_file" => mentions.pod_template_file = true,
                _ => mentions.cluster_backend = true,
            }
            if mentions.cluster_backend && mentions.pod_template_file {
                break;
            }
        }
        mentions
    }
}

/// Runs the enabled rules over a module, except on its distrusted statements.
fn run_rules(
    module: Module<'_>,
    rules: RuleSet,
    settings: &Settings,
    project: Option<ProjectContext<'_>>,
    comments: Vec<TextRange>,
) -> PythonOutcome {
    let Module { text, body, distrusted, cells } = module;
    let model = semantic::SemanticModel::build(body, distrusted);
    let caps = CapNames::for_settings(settings);
    let budget = budget::Budget::for_source(text.len());
    let mut resolver = resolve::Resolver::new(&model, &caps, &budget);
    if let Some(project) = &project {
        resolver = resolver.with_project(project);
    }
    let imports = fix_writer::imported_names_cached(&settings.fix_thread_count);
    let fixes = fix_writer::FixWriter::new(&settings.fix_thread_count, &imports, body, text);
    let mut checker = checker::Checker::new(resolver, rules, settings.strict, text, fixes);
    if let Some(cells) = cells {
        checker.in_notebook(cells);
    }
    checker.distrusting(distrusted);
    let mentions = Mentions::of(text);
    if rules.contains(Rule::NJobsAllCores) && mentions.cluster_backend {
        let index = cluster_fits::LazyFitIndex::new(body, !distrusted.is_empty(), &budget);
        checker.cluster_fits = Some(std::rc::Rc::new(index));
    }
    if rules.iter().any(|rule| rule.family() == capslint_diagnostics::registry::Family::Manifest)
        && mentions.pod_template_file
    {
        checker.collect_pod_templates();
    }
    checker.visit_body(body);
    let (findings, pod_templates) = checker.into_parts();
    if budget.is_exhausted() {
        // A partial analysis would report some findings and miss others: report the file instead.
        let findings = rules.contains(Rule::AnalysisBudgetExceeded).then(|| budget.finding()).into_iter().collect();
        return PythonOutcome { findings, comments, pod_templates: Vec::new() };
    }
    PythonOutcome { findings, comments, pod_templates }
}
