//! Resolution on top of the semantic model: what a callee is, fully qualified, and what a value
//! resolves to (constants, dicts and merges, node CPU counts, cap reads), following names a reader would.

use std::cell::RefCell;
use std::rc::Rc;

use ruff_python_ast::{self as ast, Expr, Number, Operator, UnaryOp};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::FxHashMap;

use super::budget::Budget;
use super::calls::{Argument, CallFrames, decorated_only_by};
use super::limits::{Cut, Limit, MAX_ALTERNATIVES, MAX_DEPTH};
use super::lookup::ProjectLookup;
use super::own_instance;
use super::paths::{self, TooMany};
use super::receiver_attributes;
use super::returns;
pub use super::site::Site;
pub use super::value::{At, CapNames, DictEntry, DictValue, EntryValue, Resolved, Unknown, Value};

use super::libraries::{self, NODE_CPU_COUNT_CALLS, QUOTA_AWARE_CPU_COUNT_CALLS};
use super::semantic::{Binding, BindingKind, DictMutation, Mutation, ScopeId, SemanticModel};

/// What one memoised result costs of the budget (it is kept until the file is done).
const MEMO_STEPS: u64 = 4;

/// The memo tag of a result that no depth limit cut short: valid at any depth.
const COMPLETE: u32 = u32::MAX;

/// What a memoised result is keyed by: the expression (by address: the tree outlives the resolver),
/// where it is evaluated, and [`COMPLETE`] or the depth it was cut short at.
type MemoKey = (usize, ScopeId, TextSize, u32);

/// Memoised results, with the first limit that cut each short (`None` for a complete one).
type Memo<T> = RefCell<FxHashMap<MemoKey, (T, Option<Cut>)>>;

/// What an `__init__` assigns an attribute: the value, where to evaluate it, and the assignment's target.
type InitAssignment<'a> = (&'a Expr, TextSize, TextRange);

/// The calls whose result is a namespace a callee can be found in: a multiprocessing context, a
/// threadpoolctl controller, or an imported module.
const NAMESPACE_CALLS: &[&str] = &[
    "multiprocessing.get_context",
    "threadpoolctl.ThreadpoolController",
    "pytest.importorskip",
    "importlib.import_module",
    "builtins.__import__",
];

/// Answers "what is this callee?" and "what does this value resolve to?" for one module.
///
/// The value and the qualified name of each assignment are computed once and memoised, so a name used
/// many times (`a1 = max(a0, a0)`, `p1 = {**p0, **p0}`) costs its definition once, not once per path to
/// it. A result that [`MAX_DEPTH`] cut short is memoised for that depth only, so the answers are the same
/// as without memoisation. Every step spends the file's [`Budget`]; once it is gone, everything resolves
/// to unknown and the caller reports the file instead of its findings. A result that another limit cut
/// short ([`Limit`]) is unknown too, and the first such [`Cut`] is kept for the caller ([`Resolver::watch`]).
pub struct Resolver<'m, 'a> {
    model: &'m SemanticModel<'a>,
    /// The project's other modules, read when an imported value is needed.
    project: Option<&'m dyn ProjectLookup>,
    caps: &'m CapNames,
    budget: &'m Budget,
    values: Memo<Resolved<'a>>,
    names: Memo<Option<String>>,
    /// The first limit that cut a result short since [`Resolver::watch`] started watching: a result
    /// computed while none did is complete.
    cut: RefCell<Option<Cut>>,
    /// The parameters of the calls being followed into functions of this module, when there are any.
    frames: Option<Rc<CallFrames<'a>>>,
    /// What each class's own `__init__` assigns each attribute a method reads ([`super::own_instance`]),
    /// by the class's address and the attribute.
    own_instances: RefCell<FxHashMap<(usize, &'a str), Option<InitAssignment<'a>>>>,
    /// The functions of this module whose returned value is being computed (by address): a recursive
    /// call returns nothing known.
    returning: RefCell<Vec<usize>>,
    /// What each class's methods assign to their receiver's attributes, by the class's address.
    receiver_attributes: RefCell<FxHashMap<usize, Rc<receiver_attributes::ClassAttributes<'a>>>>,
    /// The receiver attributes whose qualified name is being computed, by class address and attribute.
    naming_attributes: RefCell<Vec<(usize, &'a str)>>,
}

impl<'m, 'a> Resolver<'m, 'a> {
    /// A resolver over `model` that recognises the given cap names and spends `budget`.
    pub fn new(model: &'m SemanticModel<'a>, caps: &'m CapNames, budget: &'m Budget) -> Self {
        Resolver {
            model,
            project: None,
            caps,
            budget,
            values: RefCell::default(),
            names: RefCell::default(),
            cut: RefCell::default(),
            frames: None,
            own_instances: RefCell::default(),
            returning: RefCell::default(),
            receiver_attributes: RefCell::default(),
            naming_attributes: RefCell::default(),
        }
    }

    /// A resolver of the same module, project and budget that reads the parameters `frames` binds from
    /// the calls that bind them. Its memo starts empty: values computed under other bindings differ.
    #[must_use]
    pub fn with_frames(&self, frames: Rc<CallFrames<'a>>) -> Self {
        Resolver { frames: Some(frames), ..self.at_module() }
    }

    /// A resolver of the same module outside every call followed: what the module's own walk sees.
    #[must_use]
    pub fn at_module(&self) -> Self {
        Resolver {
            model: self.model,
            project: self.project,
            caps: self.caps,
            budget: self.budget,
            values: RefCell::default(),
            names: RefCell::default(),
            cut: RefCell::default(),
            frames: None,
            own_instances: RefCell::default(),
            returning: RefCell::default(),
            receiver_attributes: RefCell::default(),
            naming_attributes: RefCell::default(),
        }
    }

    /// The calls being followed, whose parameters this resolver reads; empty for the module's own walk.
    pub fn frames(&self) -> Option<&Rc<CallFrames<'a>>> {
        self.frames.as_ref()
    }

    /// Spends `units` of the file's budget on work at `offset` outside resolution (walking a function's
    /// body again for a call); false once the budget is gone.
    pub fn spend_walk(&self, units: u64, offset: TextSize) -> bool {
        self.spend(units, offset)
    }

    /// What a followed call binds the parameter `name` of the function of `scope` to.
    fn bound_argument(&self, scope: ScopeId, name: &str) -> Option<&Argument<'a>> {
        self.frames.as_ref()?.get(scope, name)
    }

    /// The project's other modules, when imported names are resolved through them.
    pub fn project(&self) -> Option<&'m dyn ProjectLookup> {
        self.project
    }

    /// The cap names this resolver recognises.
    pub fn caps(&self) -> &'m CapNames {
        self.caps
    }

    /// The file's budget.
    pub fn budget(&self) -> &'m Budget {
        self.budget
    }

    /// Resolves imported names through the project's other modules.
    #[must_use]
    pub fn with_project(mut self, project: &'m dyn ProjectLookup) -> Self {
        self.project = Some(project);
        self
    }

    /// The value another module of the project gives the imported name `qualified`.
    fn imported(&self, qualified: &str, offset: TextSize) -> Resolved<'a> {
        let unknown = Resolved::of(Value::Unknown(Unknown::Other));
        let Some(project) = self.project else { return unknown };
        if !self.spend(MEMO_STEPS, offset) {
            return unknown;
        }
        match project.value(qualified, self.caps) {
            Ok(Some(resolved)) => {
                self.cut_in_other_module(&resolved, qualified);
                resolved
            }
            Ok(None) => unknown,
            Err(cut) => {
                self.record(cut);
                unknown
            }
        }
    }

    /// Records the cut of a value another module's resolution stopped following, at its definition there.
    fn cut_in_other_module(&self, resolved: &Resolved<'_>, subject: &str) {
        if let Value::Unknown(Unknown::Cut(limit)) = resolved.value {
            let cut = match &resolved.binding {
                Some(site) => Cut { limit, site: Some(site.clone()), subject: None },
                None => Cut::at_subject(limit, format!("`{subject}`")),
            };
            self.record(cut);
        }
    }

    /// Spends one step at `offset`; false (and the result counts as cut short) once the budget is gone.
    fn spend(&self, units: u64, offset: TextSize) -> bool {
        let ok = self.budget.spend(units, offset);
        if !ok {
            self.record(Cut::here(Limit::Budget, TextRange::empty(offset)));
        }
        ok
    }

    /// Notes that a limit outside the resolver (a rule's own nesting bound) cut the value being computed
    /// short, as [`Resolver::watch`] reports it.
    pub fn note_limit(&self, cut: Cut) {
        self.record(cut);
    }

    /// Notes that a limit cut the result being computed short; the first cut is kept.
    fn record(&self, cut: Cut) {
        let mut pending = self.cut.borrow_mut();
        if pending.is_none() {
            *pending = Some(cut);
        }
    }

    /// Runs `compute` and returns its result with the first limit that cut it short, if any: `None`
    /// means the result is complete.
    pub fn watch<T>(&self, compute: impl FnOnce() -> T) -> (T, Option<Cut>) {
        let outer = self.cut.take();
        let result = compute();
        let inner = self.cut.take();
        *self.cut.borrow_mut() = outer.or_else(|| inner.clone());
        (result, inner)
    }

    /// Runs `compute` once per key and depth class (see [`Resolver`]).
    fn memoised<T: Clone>(
        &self,
        memo: &Memo<T>,
        key: (usize, ScopeId, TextSize),
        depth: u32,
        compute: impl FnOnce() -> T,
    ) -> T {
        let (address, scope, offset) = key;
        if let Some((hit, _)) = memo.borrow().get(&(address, scope, offset, COMPLETE)) {
            return hit.clone();
        }
        if let Some((hit, cut)) = memo.borrow().get(&(address, scope, offset, depth)) {
            if let Some(cut) = cut {
                self.record(cut.clone());
            }
            return hit.clone();
        }
        let (result, cut) = self.watch(compute);
        // What the memo holds is paid for too, so the budget bounds memory as well as time.
        if !self.spend(MEMO_STEPS, key.2) {
            return result;
        }
        let tag = if cut.is_none() { COMPLETE } else { depth };
        memo.borrow_mut().insert((address, scope, offset, tag), (result.clone(), cut));
        result
    }

    /// Whether `name` is a configured helper that returns a bound derived from the pod's CPU limit.
    pub fn is_cap_helper(&self, name: &str) -> bool {
        self.caps.helpers.iter().any(|helper| helper == name)
    }

    /// Whether reading the environment variable `name` yields a bounded value.
    pub fn is_cap_variable(&self, name: &str) -> bool {
        self.caps.is_cap_variable(name)
    }

    /// Follows a name to the single expression it was assigned from, with the position to evaluate it at.
    /// A chain of more than [`MAX_DEPTH`] names is cut there (the name is returned).
    pub fn definition(&self, expr: &'a Expr, at: At) -> (&'a Expr, At) {
        let mut current = (expr, at);
        for hops in 0..=MAX_DEPTH {
            let Expr::Name(name) = current.0 else { break };
            let Some((scope, bindings)) =
                self.model.reaching_bindings(name.id.as_str(), current.1.scope, current.1.offset)
            else {
                break;
            };
            let [binding] = bindings else { break };
            let next = match binding.kind {
                BindingKind::Assign(value) => (value, At { scope, offset: binding.range.start() }),
                BindingKind::Parameter => match self.bound_argument(scope, name.id.as_str()) {
                    Some(Argument::Expr { expr, at, .. }) => (*expr, *at),
                    _ => break,
                },
                _ => break,
            };
            if hops == MAX_DEPTH {
                self.record(Cut::here(Limit::Depth, name.range));
                break;
            }
            current = next;
        }
        current
    }

    /// The semantic model.
    pub fn model(&self) -> &'m SemanticModel<'a> {
        self.model
    }

    /// The canonical qualified name of `expr` (`jb.Parallel` -> `joblib.Parallel`), if it is an import.
    pub fn qualified_name(&self, expr: &'a Expr, at: At) -> Option<String> {
        self.raw_qualified_name(expr, at, 0).map(|name| match libraries::canonical(&name) {
            std::borrow::Cow::Borrowed(_) => name,
            std::borrow::Cow::Owned(canonical) => canonical,
        })
    }

    fn raw_qualified_name(&self, expr: &'a Expr, at: At, depth: u32) -> Option<String> {
        if depth > MAX_DEPTH {
            self.record(Cut::here(Limit::Depth, expr.range()));
            return None;
        }
        if !self.spend(1, expr.start()) {
            return None;
        }
        match expr {
            Expr::Name(name) => {
                let id = name.id.as_str();
                match self.model.reaching_bindings(id, at.scope, at.offset) {
                    Some((scope, bindings)) => {
                        // `try: import xgboost / except ImportError: xgboost = None`: where the name is
                        // called, it is the module.
                        let bindings = || {
                            bindings
                                .iter()
                                .filter(|binding| !matches!(binding.kind, BindingKind::Assign(Expr::NoneLiteral(_))))
                        };
                        let mut names = bindings()
                            .take(MAX_ALTERNATIVES)
                            .map(|binding| self.binding_qualified(binding, scope, depth));
                        let first = names.next()??;
                        let agree = names.all(|other| other.as_deref() == Some(first.as_str()));
                        self.within_alternatives(agree, bindings().nth(MAX_ALTERNATIVES).map(|binding| binding.range))
                            .then_some(first)
                    }
                    None => {
                        self.star_imported(id, at.scope).or_else(|| is_builtin(id).then(|| format!("builtins.{id}")))
                    }
                }
            }
            Expr::Attribute(attribute) => {
                let Some(mut name) = self.raw_qualified_name(&attribute.value, at, depth + 1) else {
                    return self.receiver_attribute_name(attribute, at, depth);
                };
                name.push('.');
                name.push_str(attribute.attr.as_str());
                Some(name)
            }
            Expr::Call(call) => {
                // A method whose name none of them has (`df.dropna()`) is not followed down its chain.
                if let Expr::Attribute(method) = call.func.as_ref()
                    && !NAMESPACE_CALLS
                        .iter()
                        .chain(libraries::OBJECT_MAKERS)
                        .any(|known| known.rsplit('.').next() == Some(method.attr.as_str()))
                {
                    return None;
                }
                let Some(base) = self.raw_qualified_name(&call.func, at, depth + 1) else {
                    return self.getter_result(call, at, depth);
                };
                let canonical = libraries::canonical(&base);
                // Only calls whose result is itself a namespace we know are followed ([`NAMESPACE_CALLS`]).
                match canonical.as_ref() {
                    "multiprocessing.get_context" | "threadpoolctl.ThreadpoolController" => {
                        Some(format!("{canonical}()"))
                    }
                    // An object of a library whose attributes or methods are knobs (`ort.SessionOptions()`).
                    maker if libraries::OBJECT_MAKERS.contains(&maker) => Some(format!("{canonical}()")),
                    // Calls that import a module and return it.
                    "pytest.importorskip" | "importlib.import_module" | "builtins.__import__" => {
                        let argument = call.arguments.args.first().or_else(|| {
                            call.arguments
                                .find_keyword("modname")
                                .or(call.arguments.find_keyword("name"))
                                .map(|k| &k.value)
                        })?;
                        let Value::Str(module) = self.eval_depth(argument, at, depth + 1).value else { return None };
                        // `__import__("a.b")` returns the top-level package `a`.
                        let module = if canonical == "builtins.__import__" {
                            module.split('.').next().unwrap_or_default().to_string()
                        } else {
                            module
                        };
                        (!module.is_empty() && !module.starts_with('.')).then_some(module)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The qualified name of `self.attribute` read in a method of a class of this module: the one name
    /// every value the class's methods assign to it has, `None` values aside (`self.nlp = None` in
    /// `__init__`, `self.nlp = spacy.load(name)` in `load`: `spacy.load()`); none when the values differ or
    /// another store may change it ([`receiver_attributes`]).
    fn receiver_attribute_name(&self, attribute: &'a ast::ExprAttribute, at: At, depth: u32) -> Option<String> {
        let Expr::Name(receiver) = attribute.value.as_ref() else { return None };
        let class = self.model.class_of(self.model.receiver_class(receiver.id.as_str(), at.scope, at.offset)?)?;
        let address = std::ptr::from_ref(class) as usize;
        let attributes = Rc::clone(
            self.receiver_attributes
                .borrow_mut()
                .entry(address)
                .or_insert_with(|| Rc::new(receiver_attributes::of_class(class))),
        );
        let assigned = attributes.get(attribute.attr.as_str())?.as_ref()?;
        // An attribute assigned from itself (`pipeline = self.model; ...; self.model = pipeline`) names
        // nothing more on the way round.
        let key = (address, attribute.attr.as_str());
        if self.naming_attributes.borrow().contains(&key) {
            return None;
        }
        self.naming_attributes.borrow_mut().push(key);
        let values: Vec<_> = assigned.iter().filter(|(_, value, _)| !matches!(value, Expr::NoneLiteral(_))).collect();
        let mut names = values.iter().take(MAX_ALTERNATIVES).map(|(method, value, offset)| {
            let scope = self.model.scope_of_node(method.range.start())?;
            self.raw_qualified_name(value, At { scope, offset: *offset }, depth + 1)
        });
        let first = names.next().flatten();
        let agree = first.is_some() && names.all(|other| other == first);
        self.naming_attributes.borrow_mut().pop();
        self.within_alternatives(agree, values.get(MAX_ALTERNATIVES).map(|(_, value, _)| value.range()))
            .then_some(first)
            .flatten()
    }

    /// A class of this module that subclasses a pod operator stands for that operator
    /// (`class TrainOperator(KubernetesPodOperator): ...`), unless its own `__init__` may set what the
    /// rules look for (resources or environment), which a call would then not show.
    fn pod_operator_base(&self, class: &'a ast::StmtClassDef, scope: ScopeId, depth: u32) -> Option<String> {
        let arguments = class.arguments.as_ref()?;
        let at = At { scope, offset: class.range.start() };
        let base = arguments.args.iter().find_map(|base| {
            let name = self.raw_qualified_name(base, at, depth + 1)?;
            let canonical = libraries::canonical(&name).into_owned();
            libraries::is_pod_operator(&canonical).then_some(canonical)
        })?;
        (!init_sets_pod_arguments(class)).then_some(base)
    }

    /// The module or class a call of a function of this module returns, when every `return` of the
    /// function returns the same one: a lazy getter (`def lgb(): import lightgbm; return lightgbm`).
    fn getter_result(&self, call: &'a ast::ExprCall, at: At, depth: u32) -> Option<String> {
        let Expr::Name(name) = call.func.as_ref() else { return None };
        let (_, bindings) = self.model.reaching_bindings(name.id.as_str(), at.scope, at.offset)?;
        let [Binding { kind: BindingKind::Function(function), .. }] = bindings else { return None };
        let scope = self.model.scope_of_node(function.range.start())?;
        let returns = returns::returns_of(function)?;
        let key = (std::ptr::from_ref(*function) as usize, scope, function.range.start());
        self.memoised(&self.names, key, depth, || {
            let mut names = returns
                .iter()
                .take(MAX_ALTERNATIVES)
                .map(|(value, offset)| self.raw_qualified_name(value, At { scope, offset: *offset }, depth + 1));
            let first = names.next()??;
            let agree = names.all(|other| other.as_deref() == Some(first.as_str()));
            self.within_alternatives(agree, returns.get(MAX_ALTERNATIVES).map(|(value, _)| value.range()))
                .then_some(first)
        })
    }

    /// Whether the alternatives followed (the first [`MAX_ALTERNATIVES`]) decide the answer: they `agree`,
    /// and there are no more of them (`beyond` is the first one not followed, which is then a cut).
    fn within_alternatives(&self, agree: bool, beyond: Option<TextRange>) -> bool {
        match beyond {
            Some(range) if agree => {
                self.record(Cut::here(Limit::Alternatives, range));
                false
            }
            _ => agree,
        }
    }

    fn binding_qualified(&self, binding: &Binding<'a>, scope: ScopeId, depth: u32) -> Option<String> {
        match binding.kind {
            BindingKind::Import(index) => {
                let name = self.model.import_name(index);
                Some(self.project_operator(name).unwrap_or_else(|| name.to_string()))
            }
            BindingKind::Class(class) => {
                // Once per class: its bases and its `__init__` are read for every call of it otherwise.
                let key = (std::ptr::from_ref(class) as usize, scope, class.range.start());
                self.memoised(&self.names, key, depth, || self.pod_operator_base(class, scope, depth))
            }
            BindingKind::Assign(value) => {
                let at = At { scope, offset: binding.range.start() };
                let key = (std::ptr::from_ref(value) as usize, scope, at.offset);
                self.memoised(&self.names, key, depth, || self.raw_qualified_name(value, at, depth + 1))
            }
            _ => None,
        }
    }

    /// The pod operator an imported class of the project stands for (`from .operators import
    /// TrainOperator`, a subclass of `KubernetesPodOperator` there). Only names of the Airflow operator
    /// convention (`...Operator`) are looked up, so resolving callees reads no other module otherwise.
    fn project_operator(&self, name: &str) -> Option<String> {
        let project = self.project?;
        let last = name.rsplit('.').next()?;
        if !last.ends_with("Operator") || libraries::is_pod_operator(&libraries::canonical(name)) {
            return None;
        }
        project.pod_operator(name, self.caps).unwrap_or_else(|cut| {
            self.record(cut);
            None
        })
    }

    /// The name a star import brings into `scope`: the one star-imported module's, or, with several, the
    /// one candidate that is a callee capslint knows (`from catboost import *` and
    /// `from catboost.datasets import *` both in a notebook: `CatBoostRegressor` is catboost's).
    fn star_imported(&self, name: &str, scope: ScopeId) -> Option<String> {
        let mut current = Some(scope);
        while let Some(id) = current {
            match self.model.star_imports(id) {
                [] => {}
                [module] => return Some(format!("{module}.{name}")),
                modules => {
                    let mut known = modules
                        .iter()
                        .map(|module| format!("{module}.{name}"))
                        .filter(|candidate| libraries::is_known_callee(&libraries::canonical(candidate)));
                    let first = known.next()?;
                    return known.next().is_none().then_some(first);
                }
            }
            current = self.model.parent(id);
        }
        None
    }

    /// Evaluates `expr` as far as the module lets a reader.
    pub fn eval(&self, expr: &'a Expr, at: At) -> Resolved<'a> {
        self.eval_depth(expr, at, 0)
    }

    /// Evaluates the value of a dict entry.
    pub fn eval_entry(&self, entry: &DictEntry<'a>) -> Resolved<'a> {
        self.eval_entry_depth(entry, 0)
    }

    fn eval_entry_depth(&self, entry: &DictEntry<'a>, depth: u32) -> Resolved<'a> {
        match &entry.value {
            EntryValue::Written { expr, at } => self.eval_depth(expr, *at, depth),
            EntryValue::Imported { resolved, text } => {
                self.cut_in_other_module(resolved, text);
                Resolved::clone(resolved)
            }
        }
    }

    fn eval_depth(&self, expr: &'a Expr, at: At, depth: u32) -> Resolved<'a> {
        if depth > MAX_DEPTH {
            self.record(Cut::here(Limit::Depth, expr.range()));
            return Resolved::of(Value::Unknown(Unknown::Other));
        }
        if !self.spend(1, expr.start()) {
            return Resolved::of(Value::Unknown(Unknown::Other));
        }
        let value = match expr {
            Expr::NumberLiteral(number) => match &number.value {
                Number::Int(int) => int.as_i64().map_or(Value::Unknown(Unknown::Other), Value::Int),
                Number::Float(float) => Value::Float(*float),
                Number::Complex { .. } => Value::Unknown(Unknown::Other),
            },
            Expr::StringLiteral(string) => Value::Str(string.value.to_str().to_string()),
            Expr::BooleanLiteral(boolean) => Value::Bool(boolean.value),
            Expr::NoneLiteral(_) => Value::None,
            Expr::UnaryOp(unary) => {
                let operand = self.eval_depth(&unary.operand, at, depth + 1);
                return paths::map(operand, |operand| {
                    let value = match (unary.op, &operand.value) {
                        (UnaryOp::USub, Value::Int(value)) => {
                            value.checked_neg().map_or(Value::Unknown(Unknown::Other), Value::Int)
                        }
                        (UnaryOp::USub, Value::Float(value)) => Value::Float(-value),
                        (UnaryOp::UAdd, value @ (Value::Int(_) | Value::Float(_))) => value.clone(),
                        // `~n` is `-n - 1` (`~0` is -1); a bool is the integer 0 or 1 to both.
                        (UnaryOp::Invert, Value::Int(value)) => Value::Int(!value),
                        (UnaryOp::Invert, Value::Bool(value)) => Value::Int(!i64::from(*value)),
                        (UnaryOp::USub, Value::Bool(value)) => Value::Int(-i64::from(*value)),
                        _ => Value::Unknown(Unknown::Other),
                    };
                    Resolved { value, binding: operand.binding }
                });
            }
            Expr::BinOp(binary) => return self.eval_binary(binary, at, depth),
            Expr::BoolOp(boolean) => {
                let values: Vec<Resolved<'a>> =
                    boolean.values.iter().map(|value| self.eval_depth(value, at, depth + 1)).collect();
                // A node-wide CPU count among the operands is kept as the count (`os.cpu_count() or 1`).
                if let Some(node) = values.iter().find(|value| matches!(value.value, Value::NodeCpus { .. })) {
                    let binding = values.iter().find_map(|value| value.binding.clone());
                    return Resolved { value: node.value.clone(), binding };
                }
                let possible = possible_bool_op_operands(boolean.op, &values);
                // Decided by the operands' truthiness: `config.get("workers") or -1` of a config without it.
                if let [index] = possible[..] {
                    return values[index].clone();
                }
                // Each operand it may evaluate to is the value of one path (`n_jobs or -1`: `n_jobs` when it
                // is true, `-1` when it is not), as each branch of a conditional expression is.
                let branches = possible.into_iter().map(|index| {
                    let site = Site::Here(boolean.values[index].range());
                    let condition = (index > 0).then(|| bool_op_condition(boolean, index));
                    paths::alternative(values[index].clone(), Some(site), condition.as_deref())
                });
                return self.paths_within_limit(paths::one_of(branches), expr.range());
            }
            Expr::If(conditional) => {
                let body = self.eval_depth(&conditional.body, at, depth + 1);
                let orelse = self.eval_depth(&conditional.orelse, at, depth + 1);
                let branches = [
                    paths::alternative(body, Some(Site::Here(conditional.body.range())), None),
                    paths::alternative(orelse, Some(Site::Here(conditional.orelse.range())), None),
                ];
                return self.paths_within_limit(paths::one_of(branches), expr.range());
            }
            Expr::Name(name) => {
                // Memoised per use: a dict mutation that reads the dict (`p.update(p)`) is such a use.
                let key = (std::ptr::from_ref(expr) as usize, at.scope, at.offset);
                return self.memoised(&self.values, key, depth, || self.eval_name(name, at, depth));
            }
            Expr::Dict(dict) => return self.eval_dict_literal(dict, at, depth),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if !elts.is_empty() && elts.iter().all(is_key_value_pair) =>
            {
                Value::Dict(Rc::new(self.eval_pairs(elts, at, depth)))
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let strings: Option<Vec<String>> = elts
                    .iter()
                    .map(|element| match self.eval_depth(element, at, depth + 1).value {
                        Value::Str(string) => Some(string),
                        _ => None,
                    })
                    .collect();
                strings.map_or(Value::Unknown(Unknown::Other), Value::Strings)
            }
            Expr::Subscript(subscript) => return self.eval_subscript(subscript, at, depth),
            Expr::Attribute(attribute) => return self.eval_attribute(attribute, at, depth),
            Expr::Call(call) => return self.eval_call(call, at, depth),
            Expr::Named(named) => return self.eval_depth(&named.value, at, depth + 1),
            _ => Value::Unknown(Unknown::Other),
        };
        Resolved::of(value)
    }

    /// A list of `(key, value)` pairs, as a dict: what `xgboost.train` and `dict(...)` read it as.
    fn eval_pairs(&self, pairs: &'a [Expr], at: At, depth: u32) -> DictValue<'a> {
        let mut dict = DictValue::default();
        for pair in pairs {
            let (Expr::Tuple(ast::ExprTuple { elts, range, .. }) | Expr::List(ast::ExprList { elts, range, .. })) =
                pair
            else {
                continue;
            };
            match self.eval_depth(&elts[0], at, depth + 1).value {
                Value::Str(key) => dict.entries.push(DictEntry::written(key, *range, &elts[1], at)),
                _ => dict.open = true,
            }
        }
        dict
    }

    fn eval_name(&self, name: &'a ast::ExprName, at: At, depth: u32) -> Resolved<'a> {
        let Some((scope, bindings)) = self.model.reaching_bindings(name.id.as_str(), at.scope, at.offset) else {
            // `from .settings import *`: the one module a star import names may define it.
            return match self.star_imported(name.id.as_str(), at.scope) {
                Some(qualified) => self.imported(&qualified, name.range.start()),
                None => Resolved::of(Value::Unknown(Unknown::Other)),
            };
        };
        self.eval_bindings(name.id.as_str(), bindings, scope, at, depth)
    }

    /// The value of `name` at the end of `scope` (a module constant another module imports, a class
    /// attribute), if `scope` binds it.
    pub fn eval_final(&self, name: &str, scope: ScopeId) -> Option<Resolved<'a>> {
        let bindings = self.model.final_bindings(name, scope)?;
        let at = At { scope, offset: TextSize::from(u32::MAX) };
        Some(self.eval_bindings(name, bindings, scope, at, 0))
    }

    /// `Defaults.N_JOBS` (a class of this module), `settings.N_JOBS` (an imported module of the project).
    fn eval_attribute(&self, attribute: &'a ast::ExprAttribute, at: At, depth: u32) -> Resolved<'a> {
        let unknown = Resolved::of(Value::Unknown(Unknown::Other));
        if let Expr::Name(base) = attribute.value.as_ref()
            && let Some((scope, [binding])) = self.model.reaching_bindings(base.id.as_str(), at.scope, at.offset)
        {
            match binding.kind {
                BindingKind::Parameter => {
                    if let Some(returned) = self.property_returned(base, attribute, at, depth) {
                        return returned;
                    }
                    return self.instance_attribute(base, scope, attribute, depth);
                }
                BindingKind::Class(class) => {
                    let Some(class_scope) = self.model.scope_of_node(class.range.start()) else { return unknown };
                    let Some(bindings) = self.model.final_bindings(attribute.attr.as_str(), class_scope) else {
                        return unknown;
                    };
                    let end = At { scope: class_scope, offset: TextSize::from(u32::MAX) };
                    return self.eval_bindings(attribute.attr.as_str(), bindings, class_scope, end, depth + 1);
                }
                BindingKind::Import(_) => {}
                _ => return unknown,
            }
        }
        match self.raw_qualified_name(&attribute.value, at, depth + 1) {
            Some(base) if self.project.is_some() => {
                self.imported(&format!("{base}.{}", attribute.attr.as_str()), attribute.range.start())
            }
            _ => unknown,
        }
    }

    /// `self.workers` read in a method, where the class defines `workers` once as a property
    /// (`@property`, `@functools.cached_property`): what its getter returns ([`Resolver::returned_by`]).
    fn property_returned(
        &self,
        base: &ast::ExprName,
        attribute: &'a ast::ExprAttribute,
        at: At,
        depth: u32,
    ) -> Option<Resolved<'a>> {
        let (getter, _) = self.model.own_method(base.id.as_str(), attribute.attr.as_str(), at.scope, at.offset)?;
        let is_property =
            !getter.decorator_list.is_empty() && decorated_only_by(getter, &["property", "cached_property"]);
        is_property.then(|| self.returned_depth(getter, depth))
    }

    /// `self.params` in a method of an instance the walk saw constructed (`Model(params).fit()`): the value
    /// its `__init__` gives the attribute, with the constructor call's arguments.
    fn instance_attribute(
        &self,
        base: &ast::ExprName,
        scope: ScopeId,
        attribute: &'a ast::ExprAttribute,
        depth: u32,
    ) -> Resolved<'a> {
        let unknown = Resolved::of(Value::Unknown(Unknown::Other));
        let Some(instance) = self.frames.as_ref().and_then(|frames| frames.instance(scope)) else {
            return self.own_instance_attribute(base, scope, attribute, depth);
        };
        if instance.receiver != base.id.as_str() {
            return unknown;
        }
        let Some(init) = own_instance::class_init(self.model, self.model.parent(instance.init_scope).unwrap_or(scope))
        else {
            return unknown;
        };
        match super::calls::instance_assignment(instance, attribute.attr.as_str(), init) {
            Some((value, offset, _)) => self.eval_depth(value, At { scope: instance.init_scope, offset }, depth + 1),
            None => unknown,
        }
    }

    /// `self.learner_params` in a method of an instance whose construction no followed call shows: the
    /// value the class's own `__init__` gives the attribute, its parameters unknown
    /// ([`super::own_instance`]).
    fn own_instance_attribute(
        &self,
        base: &ast::ExprName,
        scope: ScopeId,
        attribute: &'a ast::ExprAttribute,
        depth: u32,
    ) -> Resolved<'a> {
        let Some((instance, init)) = own_instance::enclosing_instance(self.model, scope, base.id.as_str()) else {
            return Resolved::of(Value::Unknown(Unknown::Other));
        };
        let key = (std::ptr::from_ref(instance.class) as usize, attribute.attr.as_str());
        let known = self.own_instances.borrow().get(&key).copied();
        let assignment = known.unwrap_or_else(|| {
            // Unknown while it is being worked out: a key stored into the attribute that leads back to it
            // (`for k in self.d: self.d[k] = v`) finds it unknown.
            self.own_instances.borrow_mut().insert(key, None);
            let assignment = self
                .keeps_thread_counts(instance.class, key.1, depth)
                .then(|| super::calls::instance_assignment(&instance, key.1, init))
                .flatten();
            self.own_instances.borrow_mut().insert(key, assignment);
            assignment
        });
        match assignment {
            Some((value, offset, target)) => {
                let resolved = self.eval_depth(value, At { scope: instance.init_scope, offset }, depth + 1);
                if own_instance::may_size_a_pool(&resolved.value) {
                    resolved.through(target)
                } else {
                    Resolved::of(Value::Unknown(Unknown::Other))
                }
            }
            None => Resolved::of(Value::Unknown(Unknown::Other)),
        }
    }

    /// Whether nothing in `class` may change a thread count in the dict its instances hold in
    /// `attribute`: every key stored into it is known, and none is a thread-count key.
    fn keeps_thread_counts(&self, class: &'a ast::StmtClassDef, attribute: &str, depth: u32) -> bool {
        let is_thread_key =
            |key: &str| libraries::is_thread_count_keyword(key) || libraries::is_thread_count_field(key);
        let Some(keys) = own_instance::stored_keys(self.model, class, attribute) else { return false };
        // A key a limit cut short is not known, and the attribute stays unknown: no limit is reported for
        // a value no rule asked for.
        let outer = self.cut.take();
        let keeps = keys.into_iter().all(|(key, scope, offset)| {
            match self.eval_depth(key, At { scope, offset }, depth + 1).value {
                Value::Str(key) => !is_thread_key(&key),
                Value::Strings(keys) => keys.iter().all(|key| !is_thread_key(key)),
                _ => false,
            }
        });
        *self.cut.borrow_mut() = outer;
        keeps
    }

    fn eval_bindings(&self, name: &str, bindings: &[Binding<'a>], scope: ScopeId, at: At, depth: u32) -> Resolved<'a> {
        // One path per binding that reaches the use; bindings that agree are one value, as before.
        let mut alternatives = Vec::new();
        for binding in bindings.iter().take(MAX_ALTERNATIVES) {
            let value = self.eval_binding(name, binding, scope, at, depth).through(binding.range);
            alternatives.push(paths::alternative(value, None, None));
        }
        if !self.within_alternatives(true, bindings.get(MAX_ALTERNATIVES).map(|binding| binding.range)) {
            return Resolved::of(Value::Unknown(Unknown::Other));
        }
        let range = bindings.first().map_or(TextRange::empty(at.offset), |binding| binding.range);
        self.paths_within_limit(paths::one_of(alternatives), range)
    }

    fn eval_binding(&self, name: &str, binding: &Binding<'a>, scope: ScopeId, use_at: At, depth: u32) -> Resolved<'a> {
        let at = At { scope, offset: binding.range.start() };
        match binding.kind {
            BindingKind::Assign(value) => {
                let key = (std::ptr::from_ref(value) as usize, scope, at.offset);
                let mut resolved = self.memoised(&self.values, key, depth, || {
                    let mut resolved = self.eval_depth(value, at, depth + 1);
                    if let Value::Dict(dict) = &mut resolved.value
                        && dict.origin.is_none()
                    {
                        Rc::make_mut(dict).origin = Some(Site::Here(value.range()));
                    }
                    resolved
                });
                if let Value::Dict(dict) = &mut resolved.value {
                    // Mutations between the binding and the use, in the binding's scope: copying the dict to
                    // make them pays for its entries first.
                    let until = if scope == use_at.scope { use_at.offset } else { TextSize::from(u32::MAX) };
                    let mut mutations =
                        self.model.mutations_between(name, scope, binding.range.start(), until).peekable();
                    if let Some(first) = mutations.peek()
                        && (!self.spend(dict.entries.len() as u64, first.offset)
                            || !self.apply_mutations(Rc::make_mut(dict), mutations, scope, depth))
                    {
                        return Resolved::of(Value::Unknown(Unknown::Other));
                    }
                }
                resolved
            }
            BindingKind::ForTarget(iterable) => {
                let key = (std::ptr::from_ref(iterable) as usize, scope, at.offset);
                self.memoised(&self.values, key, depth, || match self.eval_depth(iterable, at, depth + 1).value {
                    strings @ Value::Strings(_) => Resolved::of(strings),
                    _ => Resolved::of(Value::Unknown(Unknown::Other)),
                })
            }
            BindingKind::Parameter => match self.bound_argument(scope, name) {
                Some(argument) => self.eval_argument(argument, depth),
                None => self.mutated_parameter(name, binding, scope, use_at, depth),
            },
            BindingKind::Import(index) => self.imported(self.model.import_name(index), binding.range.start()),
            _ => Resolved::of(Value::Unknown(Unknown::Other)),
        }
    }

    /// A parameter no followed call binds: unknown, unless the function changes it as a dict before the
    /// use (`kwargs.setdefault("n_jobs", -1)`, `params["n_jobs"] = -1`): a dict of unknown entries then,
    /// with those changes made.
    fn mutated_parameter(
        &self,
        name: &str,
        binding: &Binding<'a>,
        scope: ScopeId,
        use_at: At,
        depth: u32,
    ) -> Resolved<'a> {
        let until = if scope == use_at.scope { use_at.offset } else { TextSize::from(u32::MAX) };
        // A change whose own value holds the use (`params["n_jobs"] = params.get("n_jobs", -1)`) is made
        // after the use is evaluated: it and any later one are not made yet.
        let mut mutations = self
            .model
            .mutations_between(name, scope, binding.range.start(), until)
            .take_while(|mutation| {
                let evaluated = match mutation.kind {
                    DictMutation::Set { value, .. } => value.range(),
                    DictMutation::Call(call) => call.range(),
                };
                !(scope == use_at.scope && evaluated.contains(use_at.offset))
            })
            .peekable();
        if mutations.peek().is_none() {
            return Resolved::of(Value::Unknown(Unknown::Parameter));
        }
        let mut dict = DictValue { open: true, ..DictValue::default() };
        if !self.apply_mutations(&mut dict, mutations, scope, depth) {
            return Resolved::of(Value::Unknown(Unknown::Other));
        }
        Resolved::of(Value::Dict(Rc::new(dict)))
    }

    /// Makes `mutations` (of a dict bound in `scope`) to `dict`, each paying one unit of the budget: false
    /// when the budget runs out first.
    fn apply_mutations<'b>(
        &self,
        dict: &mut DictValue<'a>,
        mutations: impl Iterator<Item = &'b Mutation<'a>>,
        scope: ScopeId,
        depth: u32,
    ) -> bool
    where
        'a: 'b,
    {
        for mutation in mutations {
            if !self.spend(1, mutation.offset) {
                return false;
            }
            self.apply_mutation(dict, mutation.kind, At { scope, offset: mutation.offset }, depth);
        }
        dict.dedup();
        true
    }

    /// The value a followed call gives a parameter: its argument (pointing at it when it is written
    /// there), or the dict of its extra keywords for `**kwargs`.
    fn eval_argument(&self, argument: &Argument<'a>, depth: u32) -> Resolved<'a> {
        match argument {
            Argument::Expr { expr, at, .. } => self.eval_depth(expr, *at, depth + 1).through(expr.range()),
            Argument::Keywords { keywords, at } => {
                let mut dict = DictValue::default();
                for keyword in keywords {
                    self.add_keywords(&mut dict, std::slice::from_ref(*keyword), *at, depth);
                }
                dict.dedup();
                Resolved::of(Value::Dict(Rc::new(dict)))
            }
            Argument::Value(resolved) => resolved.clone(),
        }
    }

    fn apply_mutation(&self, dict: &mut DictValue<'a>, mutation: DictMutation<'a>, at: At, depth: u32) {
        match mutation {
            DictMutation::Set { key, value } => match self.eval_depth(key, at, depth + 1).value {
                Value::Str(key) => dict.entries.push(DictEntry::written(key, value.range(), value, at)),
                _ => dict.open = true,
            },
            DictMutation::Call(call) => {
                let method = match call.func.as_ref() {
                    Expr::Attribute(attribute) => attribute.attr.as_str(),
                    _ => "",
                };
                match method {
                    "update" => {
                        for argument in &call.arguments.args {
                            match self.eval_depth(argument, at, depth + 1).value {
                                Value::Dict(other) => self.merge(dict, &other, at),
                                _ => dict.open = true,
                            }
                        }
                        self.add_keywords(dict, &call.arguments.keywords, at, depth);
                    }
                    "setdefault" => {
                        if let [key, value, ..] = &call.arguments.args[..]
                            && let Value::Str(key) = self.eval_depth(key, at, depth + 1).value
                        {
                            if dict.get(&key).is_none() {
                                dict.entries.push(DictEntry::written(key, value.range(), value, at));
                            }
                        } else {
                            dict.open = true;
                        }
                    }
                    _ => dict.open = true,
                }
            }
        }
    }

    fn add_keywords(&self, dict: &mut DictValue<'a>, keywords: &'a [ast::Keyword], at: At, depth: u32) {
        for keyword in keywords {
            match &keyword.arg {
                Some(arg) => dict.entries.push(DictEntry::written(arg.as_str(), keyword.range(), &keyword.value, at)),
                None => match self.eval_depth(&keyword.value, at, depth + 1).value {
                    Value::Dict(other) => self.merge(dict, &other, at),
                    _ => dict.open = true,
                },
            }
        }
    }

    /// A dict literal: one dict, or one per path when a mapping it unpacks (`**overrides`) is a known dict
    /// that differs by path (`overrides` bound to `{}` when it was `None`), at most
    /// [`MAX_ALTERNATIVES`] of them; a path on which it is `None` raises there and is left out. A mapping
    /// that is not known leaves every path's dict open.
    fn eval_dict_literal(&self, dict: &'a ast::ExprDict, at: At, depth: u32) -> Resolved<'a> {
        // Each path's dict, with where and when that path is taken.
        let mut paths: Vec<(DictValue<'a>, Option<Site>, Option<Rc<str>>)> = vec![(DictValue::default(), None, None)];
        for item in &dict.items {
            match &item.key {
                Some(key) => {
                    let key_text = match self.eval_depth(key, at, depth + 1).value {
                        Value::Str(key_text) => Some(key_text),
                        _ => None,
                    };
                    for (value, ..) in &mut paths {
                        match &key_text {
                            Some(key_text) => value.entries.push(DictEntry::written(
                                key_text.clone(),
                                TextRange::new(key.start(), item.value.end()),
                                &item.value,
                                at,
                            )),
                            None => value.open = true,
                        }
                    }
                }
                None => match self.eval_depth(&item.value, at, depth + 1).value {
                    Value::Dict(other) => {
                        for (value, ..) in &mut paths {
                            self.merge(value, &other, at);
                        }
                    }
                    // A path where the mapping is `None` raises there (`**None`): the others go on.
                    Value::OneOf(unpacked)
                        if paths.len() * unpacked.len() <= MAX_ALTERNATIVES
                            && unpacked.iter().any(|path| matches!(path.resolved.value, Value::Dict(_)))
                            && unpacked
                                .iter()
                                .all(|path| matches!(path.resolved.value, Value::Dict(_) | Value::None)) =>
                    {
                        paths = paths
                            .iter()
                            .flat_map(|(value, site, condition)| {
                                unpacked.iter().filter(|path| matches!(path.resolved.value, Value::Dict(_))).map(
                                    move |path| {
                                        let mut forked = value.clone();
                                        if let Value::Dict(other) = &path.resolved.value {
                                            self.merge(&mut forked, other, at);
                                        }
                                        let site = path.site.clone().or_else(|| site.clone());
                                        (forked, site, path.condition.clone().or_else(|| condition.clone()))
                                    },
                                )
                            })
                            .collect();
                    }
                    _ => {
                        for (value, ..) in &mut paths {
                            value.open = true;
                        }
                    }
                },
            }
        }
        if let [(value, ..)] = paths.as_mut_slice() {
            value.dedup();
            return Resolved::of(Value::Dict(Rc::new(std::mem::take(value))));
        }
        let dicts = paths.into_iter().map(|(mut value, site, condition)| {
            value.dedup();
            paths::alternative(Resolved::of(Value::Dict(Rc::new(value))), site, condition.as_deref())
        });
        self.paths_within_limit(paths::one_of(dicts), dict.range())
    }

    fn eval_subscript(&self, subscript: &'a ast::ExprSubscript, at: At, depth: u32) -> Resolved<'a> {
        if let Some(variable) = self.environ_subscript(subscript, at) {
            return Resolved::of(self.env_read(&variable));
        }
        let container = self.eval_depth(&subscript.value, at, depth + 1);
        if let Value::Dict(dict) = &container.value
            && let Value::Str(key) = self.eval_depth(&subscript.slice, at, depth + 1).value
            && let Some(entry) = dict.get(&key)
            && !dict.open
        {
            let resolved = self.eval_entry_depth(entry, depth + 1);
            return match container.binding {
                Some(binding) => resolved.through(binding),
                None => resolved,
            };
        }
        Resolved::of(Value::Unknown(Unknown::Other))
    }

    /// `os.environ["NAME"]` -> `NAME`.
    pub fn environ_subscript(&self, subscript: &'a ast::ExprSubscript, at: At) -> Option<String> {
        if self.qualified_name(&subscript.value, at).as_deref() != Some("os.environ") {
            return None;
        }
        match self.eval(&subscript.slice, at).value {
            Value::Str(name) => Some(name),
            _ => None,
        }
    }

    fn env_read(&self, variable: &str) -> Value<'a> {
        if self.caps.is_cap_variable(variable) { Value::Capped } else { Value::Unknown(Unknown::Other) }
    }

    fn eval_call(&self, call: &'a ast::ExprCall, at: At, depth: u32) -> Resolved<'a> {
        let Some(callee) = self.qualified_name(&call.func, at) else {
            return match self.own_function_returned(call, at, depth) {
                Some(returned) => returned,
                None => self.eval_method_call(call, at, depth),
            };
        };
        let arguments = &call.arguments;
        let first = arguments.args.first();
        let value = match callee.as_str() {
            name if NODE_CPU_COUNT_CALLS.contains(&name) => {
                let call_name =
                    NODE_CPU_COUNT_CALLS.iter().find(|known| **known == name).copied().unwrap_or("os.cpu_count");
                Value::NodeCpus { call: call_name, origin: Site::Here(call.range()) }
            }
            name if QUOTA_AWARE_CPU_COUNT_CALLS.contains(&name) => Value::Capped,
            name if self.caps.helpers.iter().any(|helper| helper == name) => Value::Capped,
            "builtins.len" => match first.map(|argument| self.qualified_name_of_call(argument, at)) {
                Some(Some(inner)) if inner == "os.sched_getaffinity" => {
                    Value::NodeCpus { call: "os.sched_getaffinity", origin: Site::Here(call.range()) }
                }
                _ => Value::DataSize { origin: Site::Here(call.range()) },
            },
            "builtins.int" | "builtins.round" | "math.floor" | "math.ceil" | "math.trunc" | "builtins.abs" => {
                return match first {
                    Some(argument) => paths::map(self.eval_depth(argument, at, depth + 1), |inner| {
                        let value = match inner.value {
                            Value::Str(text) => {
                                text.trim().parse::<i64>().map_or(Value::Unknown(Unknown::Other), Value::Int)
                            }
                            Value::Float(float) if callee == "math.ceil" => Value::Int(float.ceil() as i64),
                            Value::Float(float) => Value::Int(float.trunc() as i64),
                            other => other,
                        };
                        Resolved { value, binding: inner.binding }
                    }),
                    None => Resolved::of(Value::Int(0)),
                };
            }
            "builtins.float" => {
                return first
                    .map_or(Resolved::of(Value::Float(0.0)), |argument| self.eval_depth(argument, at, depth + 1));
            }
            "builtins.str" => {
                return match first {
                    Some(argument) => paths::map(self.eval_depth(argument, at, depth + 1), |inner| {
                        let value = match inner.value {
                            Value::Int(int) => Value::Str(int.to_string()),
                            other => other,
                        };
                        Resolved { value, binding: inner.binding }
                    }),
                    None => Resolved::of(Value::Str(String::new())),
                };
            }
            "builtins.min" | "builtins.max" => return self.eval_min_max(call, callee == "builtins.min", at, depth),
            "builtins.getattr" => return self.eval_getattr(call, at, depth),
            "builtins.dict" => {
                let mut dict = DictValue::default();
                for argument in &arguments.args {
                    match self.eval_depth(argument, at, depth + 1).value {
                        Value::Dict(other) => self.merge(&mut dict, &other, at),
                        _ => dict.open = true,
                    }
                }
                self.add_keywords(&mut dict, &arguments.keywords, at, depth);
                dict.dedup();
                Value::Dict(Rc::new(dict))
            }
            // Copies keep the dict.
            "copy.copy" | "copy.deepcopy" => {
                return first.map_or(Resolved::of(Value::Unknown(Unknown::Other)), |argument| {
                    self.eval_depth(argument, at, depth + 1)
                });
            }
            // `list(params.items())` and `list([("nthread", 4), ...])`: the pairs of a params dict.
            "builtins.list" | "builtins.tuple" => match first {
                Some(argument @ (Expr::List(_) | Expr::Tuple(_))) => return self.eval_depth(argument, at, depth + 1),
                Some(argument @ Expr::Call(inner)) if matches!(inner.func.as_ref(), Expr::Attribute(attribute) if attribute.attr.as_str() == "items") =>
                {
                    return self.eval_depth(argument, at, depth + 1);
                }
                _ => Value::Unknown(Unknown::Other),
            },
            "os.getenv" | "os.environ.get" => {
                let Some(Value::Str(variable)) = first.map(|argument| self.eval_depth(argument, at, depth + 1).value)
                else {
                    return Resolved::of(Value::Unknown(Unknown::Other));
                };
                let read = self.env_read(&variable);
                // A variable that is not a cap: whatever it holds, or the default when it is not set.
                let default = arguments.args.get(1).or_else(|| arguments.find_keyword("default").map(|k| &k.value));
                return match (read, default) {
                    (unknown @ Value::Unknown(_), Some(default)) => {
                        let condition = format!("the default when `{variable}` is not set");
                        self.with_default(Resolved::of(unknown), default, &condition, at, depth)
                    }
                    (read, _) => Resolved::of(read),
                };
            }
            // A function of another module of the project that returns a node count.
            name if !libraries::is_known_callee(name)
                && let Some(returned) = self.project_function_returned(name, call.start()) =>
            {
                return returned;
            }
            // A method of an imported object (`config.settings.get("n_jobs", -1)`).
            _ => return self.eval_method_call(call, at, depth),
        };
        Resolved::of(value)
    }

    /// What a call of a plain function of this module returns, when the rules read it
    /// ([`Resolver::returned_by`]); `None` when the callee is no such function.
    fn own_function_returned(&self, call: &'a ast::ExprCall, at: At, depth: u32) -> Option<Resolved<'a>> {
        let function = match call.func.as_ref() {
            Expr::Name(name) => match self.model.reaching_bindings(name.id.as_str(), at.scope, at.offset)? {
                (_, [Binding { kind: BindingKind::Function(function), .. }]) => *function,
                _ => return None,
            },
            Expr::Attribute(attribute) => {
                let Expr::Name(receiver) = attribute.value.as_ref() else { return None };
                let method = attribute.attr.as_str();
                self.model.own_method(receiver.id.as_str(), method, at.scope, at.offset)?.0
            }
            _ => return None,
        };
        returns::returns_as_written(function).then(|| self.returned_depth(function, depth))
    }

    /// What a call of `function`, a function of this module, returns as the rules read it
    /// ([`returns::node_count_returned`]): computed once per function, with its parameters unbound,
    /// since what the rules read of it (a node count) holds whatever a call passes. A recursive call
    /// returns nothing known.
    pub fn returned_by(&self, function: &'a ast::StmtFunctionDef) -> Resolved<'a> {
        self.returned_depth(function, 0)
    }

    fn returned_depth(&self, function: &'a ast::StmtFunctionDef, depth: u32) -> Resolved<'a> {
        let unknown = || Resolved::of(Value::Unknown(Unknown::Other));
        let Some(scope) = self.model.scope_of_node(function.range.start()) else { return unknown() };
        let address = std::ptr::from_ref(function) as usize;
        if self.returning.borrow().contains(&address) {
            return unknown();
        }
        let key = (address, scope, function.range.start());
        self.memoised(&self.values, key, depth, || {
            let Some(values) = returns::returns_of(function) else { return unknown() };
            if let Some((beyond, _)) = values.get(MAX_ALTERNATIVES) {
                self.record(Cut::here(Limit::Alternatives, beyond.range()));
                return unknown();
            }
            self.returning.borrow_mut().push(address);
            let returned: Vec<Resolved<'a>> = values
                .iter()
                .map(|(value, offset)| self.eval_depth(value, At { scope, offset: *offset }, depth + 1))
                .collect();
            self.returning.borrow_mut().pop();
            returns::node_count_returned(returned)
        })
    }

    /// What a call of the module-level function `qualified` of another module of the project returns,
    /// when the project's summary of that module knows it ([`returns::node_count_returned`]).
    fn project_function_returned(&self, qualified: &str, offset: TextSize) -> Option<Resolved<'a>> {
        let project = self.project?;
        if !self.spend(MEMO_STEPS, offset) {
            return None;
        }
        match project.returned(qualified, self.caps) {
            Ok(returned) => returned,
            Err(cut) => {
                self.record(cut);
                None
            }
        }
    }

    /// `params.copy()` keeps the dict, `params.items()` its pairs, `params.get(key, default)` and
    /// `params.pop(key, default)` give the entry or the default; other method calls are unknown.
    fn eval_method_call(&self, call: &'a ast::ExprCall, at: At, depth: u32) -> Resolved<'a> {
        // `params.copy()` and `params.items()` (pairs, as `xgboost.train` also takes its params).
        if let Expr::Attribute(attribute) = call.func.as_ref()
            && matches!(attribute.attr.as_str(), "copy" | "items")
            && call.arguments.is_empty()
        {
            let inner = self.eval_depth(&attribute.value, at, depth + 1);
            if matches!(inner.value, Value::Dict(_)) {
                return inner;
            }
        }
        // `mapping.get(key, default)`, and `mapping.pop(key, default)`, which gives what `get` would.
        if let Expr::Attribute(attribute) = call.func.as_ref()
            && call.arguments.keywords.is_empty()
            && let [key, rest @ ..] = &call.arguments.args[..]
            && match attribute.attr.as_str() {
                "get" => rest.len() <= 1,
                "pop" => rest.len() == 1,
                _ => false,
            }
        {
            return self.eval_get(&attribute.value, key, rest.first(), call.range(), (at, depth));
        }
        Resolved::of(Value::Unknown(Unknown::Other))
    }

    /// `mapping.get(key, default)` (the `call`): the entry of a known closed dict holding the key; the
    /// default (`None` without one) when it lacks it; and the entry or the default (`None` without one)
    /// when the dict is unknown or open (the entry is unknown then).
    fn eval_get(
        &self,
        mapping: &'a Expr,
        key: &'a Expr,
        default: Option<&'a Expr>,
        call: TextRange,
        (at, depth): (At, u32),
    ) -> Resolved<'a> {
        let unknown = Resolved::of(Value::Unknown(Unknown::Other));
        let Value::Str(key) = self.eval_depth(key, at, depth + 1).value else { return unknown };
        let container = self.eval_depth(mapping, at, depth + 1);
        let condition = format!("the default when {}", lacking(mapping, "the mapping", &key));
        match &container.value {
            Value::Dict(dict) => match dict.get(&key) {
                Some(entry) if !dict.open => {
                    let resolved = self.eval_entry_depth(entry, depth + 1);
                    match container.binding {
                        Some(binding) => resolved.through(binding),
                        None => resolved,
                    }
                }
                Some(_) => unknown,
                None => match default {
                    Some(default) if !dict.open => self.eval_depth(default, at, depth + 1),
                    Some(default) => self.with_default(unknown, default, &condition, at, depth),
                    // `.get(key)` of a closed dict without the key is `None`.
                    None if !dict.open => Resolved::of(Value::None),
                    None => self.with_implicit_none(unknown, call, mapping, &key),
                },
            },
            Value::Unknown(_) => match default {
                Some(default) => self.with_default(unknown, default, &condition, at, depth),
                None => self.with_implicit_none(unknown, call, mapping, &key),
            },
            _ => unknown,
        }
    }

    /// `getattr(object, "name", default)`: the attribute or the default when the object is unknown (a
    /// parsed command line, a settings object passed in), as `mapping.get(key, default)` of an unknown
    /// mapping is; unknown otherwise.
    fn eval_getattr(&self, call: &'a ast::ExprCall, at: At, depth: u32) -> Resolved<'a> {
        let unknown = Resolved::of(Value::Unknown(Unknown::Other));
        let ([object, name, default], []) = (&call.arguments.args[..], &call.arguments.keywords[..]) else {
            return unknown;
        };
        let Value::Str(name) = self.eval_depth(name, at, depth + 1).value else { return unknown };
        if !matches!(self.eval_depth(object, at, depth + 1).value, Value::Unknown(_)) {
            return unknown;
        }
        let condition = format!("the default when {}", lacking(object, "the object", &name));
        self.with_default(unknown, default, &condition, at, depth)
    }

    /// `value`, or `default` (evaluated at `at`) on the path where `condition` holds.
    fn with_default(
        &self,
        value: Resolved<'a>,
        default: &'a Expr,
        condition: &str,
        at: At,
        depth: u32,
    ) -> Resolved<'a> {
        let default_value = self.eval_depth(default, at, depth + 1);
        self.or_on_path(value, default_value, default.range(), condition)
    }

    /// `value`, or the `None` that `mapping.get(key)` (the `call`, with no default) gives when the mapping
    /// has no `key`.
    fn with_implicit_none(&self, value: Resolved<'a>, call: TextRange, mapping: &Expr, key: &str) -> Resolved<'a> {
        let condition = format!("`None` when {}", lacking(mapping, "the mapping", key));
        self.or_on_path(value, Resolved::of(Value::None), call, &condition)
    }

    /// `value`, or `other` (placed at `range`) on the path where `condition` holds.
    fn or_on_path(&self, value: Resolved<'a>, other: Resolved<'a>, range: TextRange, condition: &str) -> Resolved<'a> {
        let alternatives = [
            paths::alternative(value, None, None),
            paths::alternative(other, Some(Site::Here(range)), Some(condition)),
        ];
        self.paths_within_limit(paths::one_of(alternatives), range)
    }

    /// The value of alternatives built at `range`; more than the limit is unknown, and a cut there.
    fn paths_within_limit(&self, built: Result<Resolved<'a>, TooMany>, range: TextRange) -> Resolved<'a> {
        built.unwrap_or_else(|TooMany| {
            self.record(Cut::here(Limit::Paths, range));
            Resolved::of(Value::Unknown(Unknown::Other))
        })
    }

    fn qualified_name_of_call(&self, expr: &'a Expr, at: At) -> Option<String> {
        match expr {
            Expr::Call(call) => self.qualified_name(&call.func, at),
            _ => None,
        }
    }

    fn eval_min_max(&self, call: &'a ast::ExprCall, is_min: bool, at: At, depth: u32) -> Resolved<'a> {
        if !call.arguments.keywords.is_empty() || call.arguments.args.len() < 2 {
            return Resolved::of(Value::Unknown(Unknown::Other));
        }
        let values: Vec<Resolved<'a>> =
            call.arguments.args.iter().map(|argument| self.eval_depth(argument, at, depth + 1)).collect();
        let combined =
            paths::combine(&values, |units| self.spend(units, call.start()), |values| Self::min_max_of(values, is_min));
        self.paths_within_limit(combined, call.range())
    }

    /// `min(...)` / `max(...)` of values that each have one value.
    fn min_max_of(values: &[Resolved<'a>], is_min: bool) -> Resolved<'a> {
        let binding = values.iter().find_map(|value| value.binding.clone());
        let node =
            values.iter().find(|value| matches!(value.value, Value::NodeCpus { .. })).map(|value| value.value.clone());
        let data =
            values.iter().find(|value| matches!(value.value, Value::DataSize { .. })).map(|value| value.value.clone());
        let any = |predicate: fn(&Value<'a>) -> bool| values.iter().any(|value| predicate(&value.value));
        let ints: Option<Vec<i64>> = values.iter().map(|value| value.value.as_int()).collect();
        let value = if let Some(ints) = ints {
            let result = if is_min { ints.iter().min() } else { ints.iter().max() };
            result.map_or(Value::Unknown(Unknown::Other), |value| Value::Int(*value))
        } else if is_min {
            // The minimum is bounded as soon as one argument is a cap; it is node-sized only if every other
            // argument is a literal or another unbounded count.
            if any(|value| matches!(value, Value::Capped)) {
                Value::Capped
            } else if any(|value| {
                matches!(value, Value::Unknown(_) | Value::None | Value::Str(_) | Value::Dict(_) | Value::Strings(_))
            }) {
                Value::Unknown(Unknown::Other)
            } else {
                node.or(data).unwrap_or(Value::Unknown(Unknown::Other))
            }
        } else {
            // The maximum is at least as large as any unbounded argument.
            node.or(data).unwrap_or(
                if any(|value| matches!(value, Value::Capped)) && !any(|value| matches!(value, Value::Unknown(_))) {
                    Value::Capped
                } else {
                    Value::Unknown(Unknown::Other)
                },
            )
        };
        Resolved { value, binding }
    }

    fn eval_binary(&self, binary: &'a ast::ExprBinOp, at: At, depth: u32) -> Resolved<'a> {
        let left = self.eval_depth(&binary.left, at, depth + 1);
        let right = self.eval_depth(&binary.right, at, depth + 1);
        let combined = paths::combine(
            &[left, right],
            |units| self.spend(units, binary.start()),
            |operands| self.binary_of(binary, &operands[0], &operands[1], at),
        );
        self.paths_within_limit(combined, binary.range())
    }

    /// `left <op> right` of operands that each have one value.
    fn binary_of(&self, binary: &ast::ExprBinOp, left: &Resolved<'a>, right: &Resolved<'a>, at: At) -> Resolved<'a> {
        let binding = left.binding.clone().or_else(|| right.binding.clone());
        let value = match (&left.value, &right.value) {
            (Value::Int(a), Value::Int(b)) => {
                int_arithmetic(*a, binary.op, *b).map_or(Value::Unknown(Unknown::Other), Value::Int)
            }
            // `base | extra` of dicts, and `pairs + [("nthread", 4)]` of key-value pair lists.
            (Value::Dict(a), Value::Dict(b)) if matches!(binary.op, Operator::BitOr | Operator::Add) => {
                let mut merged = DictValue { entries: Vec::new(), open: a.open, origin: a.origin.clone() };
                self.merge(&mut merged, a, at);
                self.merge(&mut merged, b, at);
                merged.dedup();
                Value::Dict(Rc::new(merged))
            }
            // Arithmetic on a node count stays node-sized (`os.cpu_count() - 1`, `os.cpu_count() // 2`).
            (node @ Value::NodeCpus { .. }, _) | (_, node @ Value::NodeCpus { .. }) => node.clone(),
            (data @ Value::DataSize { .. }, Value::Int(_)) | (Value::Int(_), data @ Value::DataSize { .. }) => {
                data.clone()
            }
            _ => Value::Unknown(Unknown::Other),
        };
        Resolved { value, binding }
    }
}

impl<'a> Resolver<'_, 'a> {
    /// Adds the entries of `other` to `into` (later entries win), paying one step per entry copied.
    fn merge(&self, into: &mut DictValue<'a>, other: &DictValue<'a>, at: At) {
        into.open |= other.open;
        if self.spend(other.entries.len() as u64, at.offset) {
            into.entries.extend(other.entries.iter().cloned());
        } else {
            into.open = true;
        }
    }
}

fn int_arithmetic(a: i64, op: Operator, b: i64) -> Option<i64> {
    match op {
        Operator::Add => a.checked_add(b),
        Operator::Sub => a.checked_sub(b),
        Operator::Mult => a.checked_mul(b),
        Operator::FloorDiv if b != 0 => Some(a.div_euclid(b) - i64::from(a.rem_euclid(b) != 0 && b < 0)),
        Operator::Mod if b != 0 => Some(a.rem_euclid(b)),
        _ => None,
    }
}

/// That `container` has no `key`, as a label says it: "`settings` has no `n_jobs`" for a container
/// written as a dotted name (`settings`, `self.config`), else "`noun` has no `n_jobs`" ("the mapping").
fn lacking(container: &Expr, noun: &str, key: &str) -> String {
    fn dotted(expr: &Expr, depth: u32) -> Option<String> {
        match expr {
            Expr::Name(name) => Some(name.id.to_string()),
            Expr::Attribute(attribute) if depth < 4 => {
                Some(format!("{}.{}", dotted(&attribute.value, depth + 1)?, attribute.attr.as_str()))
            }
            _ => None,
        }
    }
    match dotted(container, 0) {
        Some(name) => format!("`{name}` has no `{key}`"),
        None => format!("{noun} has no `{key}`"),
    }
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "len"
            | "int"
            | "float"
            | "str"
            | "min"
            | "max"
            | "round"
            | "abs"
            | "dict"
            | "list"
            | "tuple"
            | "__import__"
            | "getattr"
    )
}

/// The values of the `return` statements of a function body, with their offsets; nested functions and
/// classes have returns of their own.
/// Whether the `__init__` of a class may set what the pod-operator rules look for (resources or
/// environment), which a call of the class would then not show.
pub fn init_sets_pod_arguments(class: &ast::StmtClassDef) -> bool {
    class.body.iter().any(|stmt| match stmt {
        ast::Stmt::FunctionDef(function) if function.name.as_str() == "__init__" => {
            let mut finder = WordFinder { words: &["resources", "env"], found: false };
            ruff_python_ast::visitor::Visitor::visit_body(&mut finder, &function.body);
            finder.found
        }
        _ => false,
    })
}

/// Whether a body names any of `words` in a name, an attribute, a keyword argument or a string.
struct WordFinder<'w> {
    words: &'w [&'w str],
    found: bool,
}

impl WordFinder<'_> {
    fn check(&mut self, text: &str) {
        self.found |= self.words.iter().any(|word| text.contains(word));
    }
}

impl<'a> ruff_python_ast::visitor::Visitor<'a> for WordFinder<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) => self.check(name.id.as_str()),
            Expr::Attribute(attribute) => self.check(attribute.attr.as_str()),
            Expr::StringLiteral(string) => self.check(string.value.to_str()),
            _ => {}
        }
        ruff_python_ast::visitor::walk_expr(self, expr);
    }

    fn visit_keyword(&mut self, keyword: &'a ast::Keyword) {
        if let Some(arg) = &keyword.arg {
            self.check(arg.as_str());
        }
        ruff_python_ast::visitor::walk_keyword(self, keyword);
    }
}

/// Whether an element of a list reads as a `(key, value)` pair whose key is a string literal.
fn is_key_value_pair(element: &Expr) -> bool {
    match element {
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
            matches!(elts.as_slice(), [Expr::StringLiteral(_), _])
        }
        _ => false,
    }
}

/// When `a or b or ...` (`a and b and ...`) evaluates to its operand at `index` (not the first): when the
/// ones before it are false (true).
fn bool_op_condition(boolean: &ast::ExprBoolOp, index: usize) -> String {
    let truth = if matches!(boolean.op, ast::BoolOp::Or) { "false" } else { "true" };
    match &boolean.values[..index] {
        [Expr::Name(name)] => format!("when `{}` is {truth}", name.id),
        [_] => format!("when the operand before it is {truth}"),
        _ => format!("when the operands before it are {truth}"),
    }
}

/// The positions of the operands that `a or b or ...` (`a and b and ...`) may evaluate to: each one whose
/// truthiness is not known, up to the first known true one (false one), else up to the last. One position
/// when the truthiness of the operands before it decides.
fn possible_bool_op_operands(op: ast::BoolOp, values: &[Resolved<'_>]) -> Vec<usize> {
    let deciding = matches!(op, ast::BoolOp::Or);
    let mut possible = Vec::new();
    for (index, value) in values.iter().enumerate() {
        let truthiness = value.value.truthiness();
        if truthiness != Some(!deciding) || index + 1 == values.len() {
            possible.push(index);
        }
        if truthiness == Some(deciding) {
            break;
        }
    }
    possible
}
