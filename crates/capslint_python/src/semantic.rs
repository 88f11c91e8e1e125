//! The per-file semantic model: scopes, bindings (imports, assignments, loop targets, parameters), dict
//! mutations and the imports in execution order. Built in one pass over the AST; rules query it.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use super::recovery::Distrusted;

/// Index of a scope in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScopeId(u32);

impl ScopeId {
    /// The module scope.
    pub const MODULE: ScopeId = ScopeId(0);
}

/// What kind of block introduced a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    /// The module.
    Module,
    /// A `def` or `lambda`.
    Function,
    /// A `class` body (not visible from nested functions).
    Class,
    /// A comprehension or generator expression.
    Comprehension,
}

/// What a name is bound to.
#[derive(Debug, Clone, Copy)]
pub enum BindingKind<'a> {
    /// `import a.b as c` / `from a import b as c`: the fully qualified name the local name stands for
    /// (an index into the model's import names).
    Import(u32),
    /// `name = value`, `name: T = value`, `(name := value)`.
    Assign(&'a Expr),
    /// `for name in iterable`.
    ForTarget(&'a Expr),
    /// A function parameter.
    Parameter,
    /// `def`: the function, whose returns a lazy getter (`def lgb(): import lightgbm; return lightgbm`)
    /// resolves through.
    Function(&'a ast::StmtFunctionDef),
    /// `class`: the class, whose bases a subclass of a known class resolves through.
    Class(&'a ast::StmtClassDef),
    /// Anything else (augmented assignment, unpacking we cannot follow, `with ... as`, `except ... as`).
    Unknown,
}

/// One binding of a name.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// Where the name is bound (the target).
    pub range: TextRange,
    /// What it is bound to.
    pub kind: BindingKind<'a>,
    /// Whether the binding runs only on some paths (inside `if`, `try`, loops, `match`).
    pub conditional: bool,
}

/// A mutation of a dict bound to a name: `params["k"] = v`, `params.update(...)`.
#[derive(Debug, Clone, Copy)]
pub enum DictMutation<'a> {
    /// `name["key"] = value` (key is the string literal's value).
    Set { key: &'a Expr, value: &'a Expr },
    /// `name.update(...)` / `name.setdefault(...)` / `del name[...]` / `name.pop(...)`: the argument list.
    Call(&'a ast::ExprCall),
}

/// A dict mutation with its position.
#[derive(Debug, Clone, Copy)]
pub struct Mutation<'a> {
    /// Where it happens.
    pub offset: TextSize,
    /// What it does.
    pub kind: DictMutation<'a>,
}

/// What happens to the object a name holds, after it is made.
#[derive(Debug, Clone, Copy)]
pub enum ObjectUseKind<'a> {
    /// `name.attribute = value`.
    SetAttribute {
        /// The attribute.
        attribute: &'a str,
        /// The value assigned.
        value: &'a Expr,
    },
    /// `f(name)` or `f(key=name)`: the callee may change the object.
    Passed(&'a ast::ExprCall),
}

/// One use of a name's object, with where it happens.
#[derive(Debug, Clone, Copy)]
pub struct ObjectUse<'a> {
    /// Where it happens (for a call, the call's start).
    pub offset: TextSize,
    /// The scope it happens in.
    pub scope: ScopeId,
    /// What it does.
    pub kind: ObjectUseKind<'a>,
}

/// An `import` statement's effect, kept in source order for execution-order questions.
#[derive(Debug, Clone)]
pub struct ImportEvent {
    /// The imported module, fully qualified (`sklearn.ensemble` for `from sklearn.ensemble import X`).
    pub module: String,
    /// The alias node (`numpy as np`).
    pub range: TextRange,
    /// The scope the statement runs in.
    pub scope: ScopeId,
    /// Whether it sits under `if TYPE_CHECKING:` and so never runs.
    pub type_checking: bool,
}

/// The bindings of one name in one scope, sorted by position: most names are bound once in a scope, and
/// their lists are held inline.
#[derive(Debug, Default)]
struct NameBindings<'a> {
    bindings: SmallVec<[Binding<'a>; 1]>,
    /// For each binding, the index of the last unconditional binding at or before it (0 if none), so
    /// the reaching set is found without scanning back over conditional bindings.
    last_unconditional: SmallVec<[u32; 2]>,
}

#[derive(Debug)]
struct Scope<'a> {
    kind: ScopeKind,
    parent: Option<ScopeId>,
    bindings: FxHashMap<&'a str, NameBindings<'a>>,
    mutations: FxHashMap<&'a str, Vec<Mutation<'a>>>,
    star_imports: Vec<String>,
    globals: Vec<&'a str>,
}

impl<'a> Scope<'a> {
    fn new(kind: ScopeKind, parent: Option<ScopeId>) -> Self {
        Scope {
            kind,
            parent,
            // Room for a function's few names from the start: growing from nothing rehashes twice by then.
            // A comprehension binds its one or two targets.
            bindings: FxHashMap::with_capacity_and_hasher(
                if kind == ScopeKind::Comprehension { 2 } else { 8 },
                rustc_hash::FxBuildHasher,
            ),
            mutations: FxHashMap::default(),
            star_imports: Vec::new(),
            globals: Vec::new(),
        }
    }
}

/// Whether `name` is what a method's own receiver is called by convention (`self`, `cls`): the names the
/// model and the walks read as the instance or the class a method runs on.
pub fn is_receiver_name(name: &str) -> bool {
    matches!(name, "self" | "cls")
}

/// The semantic model of one Python module.
#[derive(Debug)]
pub struct SemanticModel<'a> {
    scopes: Vec<Scope<'a>>,
    scope_by_node: FxHashMap<TextSize, ScopeId>,
    import_names: Vec<String>,
    imports: Vec<ImportEvent>,
    /// Module-level calls of module-level functions: name -> call offsets (for execution order).
    module_calls: FxHashMap<&'a str, Vec<TextSize>>,
    /// Names given a thread count after construction (`m.set_params(n_jobs=2)`, `m.n_jobs = 2`), per scope.
    thread_configured: FxHashSet<(ScopeId, &'a str)>,
    /// Attributes set on names and names handed to calls, by name, in every scope.
    object_uses: FxHashMap<&'a str, SmallVec<[ObjectUse<'a>; 1]>>,
    /// The class each class scope is the body of.
    classes: FxHashMap<ScopeId, &'a ast::StmtClassDef>,
}

impl<'a> SemanticModel<'a> {
    /// Builds the model of a parsed module. The names a `distrusted` statement binds are unknown there,
    /// and its imports and dict mutations are not recorded.
    pub fn build(body: &'a [Stmt], distrusted: &Distrusted) -> Self {
        let mut builder = Builder {
            model: SemanticModel {
                scopes: vec![Scope::new(ScopeKind::Module, None)],
                scope_by_node: FxHashMap::default(),
                import_names: Vec::new(),
                imports: Vec::new(),
                module_calls: FxHashMap::default(),
                thread_configured: FxHashSet::default(),
                object_uses: FxHashMap::default(),
                classes: FxHashMap::default(),
            },
            scope: ScopeId::MODULE,
            conditional: 0,
            type_checking: 0,
            distrusted,
            in_distrusted: 0,
        };
        builder.visit_body(body);
        let mut model = builder.model;
        // Lookups binary-search bindings and mutations by position.
        for scope in &mut model.scopes {
            for name in scope.bindings.values_mut() {
                name.bindings.sort_by_key(|binding| binding.range.start());
                let mut last = 0;
                name.last_unconditional = name
                    .bindings
                    .iter()
                    .enumerate()
                    .map(|(index, binding)| {
                        if !binding.conditional {
                            last = index as u32;
                        }
                        last
                    })
                    .collect();
            }
            for mutations in scope.mutations.values_mut() {
                mutations.sort_by_key(|mutation| mutation.offset);
            }
        }
        model
    }

    /// The scope opened by the `def`, `class`, lambda or comprehension node starting at `start`.
    pub fn scope_of_node(&self, start: TextSize) -> Option<ScopeId> {
        self.scope_by_node.get(&start).copied()
    }

    /// The class whose body `scope` is.
    pub fn class_of(&self, scope: ScopeId) -> Option<&'a ast::StmtClassDef> {
        self.classes.get(&scope).copied()
    }

    /// The kind of a scope.
    pub fn scope_kind(&self, scope: ScopeId) -> ScopeKind {
        self.scopes[scope.0 as usize].kind
    }

    /// The enclosing scope.
    pub fn parent(&self, scope: ScopeId) -> Option<ScopeId> {
        self.scopes[scope.0 as usize].parent
    }

    /// The qualified name an import binding stands for.
    pub fn import_name(&self, index: u32) -> &str {
        &self.import_names[index as usize]
    }

    /// Every import statement's effect, in source order.
    pub fn imports(&self) -> &[ImportEvent] {
        &self.imports
    }

    /// Offsets of module-level calls of the module-level function `name`.
    pub fn module_calls(&self, name: &str) -> &[TextSize] {
        self.module_calls.get(name).map_or(&[], Vec::as_slice)
    }

    /// Whether the object bound to `name` in `scope` is given a thread count later, through
    /// `name.set_params(n_jobs=...)` or `name.n_jobs = ...`.
    pub fn is_thread_configured(&self, scope: ScopeId, name: &str) -> bool {
        self.thread_configured.contains(&(scope, name))
    }

    /// What happens to the objects held by names called `name`, in any scope, in source order:
    /// attributes set on them and calls they are handed to.
    pub fn object_uses(&self, name: &str) -> &[ObjectUse<'a>] {
        self.object_uses.get(name).map_or(&[], SmallVec::as_slice)
    }

    /// Whether any scope has a star import (`from module import *`).
    pub fn has_star_imports(&self) -> bool {
        self.scopes.iter().any(|scope| !scope.star_imports.is_empty())
    }

    /// The modules a star import brought into `scope`.
    pub fn star_imports(&self, scope: ScopeId) -> &[String] {
        &self.scopes[scope.0 as usize].star_imports
    }

    /// The bindings of `name` that may reach a use at `at` in `scope`, and the scope they live in.
    ///
    /// In the use's own scope, only bindings before the use count; in an enclosing scope (a function
    /// reading a module constant), every binding counts, since the function runs later. Of those, the
    /// reaching set is the last unconditional binding and every conditional one after it.
    pub fn reaching_bindings(&self, name: &str, scope: ScopeId, at: TextSize) -> Option<(ScopeId, &[Binding<'a>])> {
        let mut current = Some(scope);
        let mut is_use_scope = true;
        while let Some(id) = current {
            let data = &self.scopes[id.0 as usize];
            let skip_class = !is_use_scope && data.kind == ScopeKind::Class;
            if !skip_class && let Some(NameBindings { bindings, last_unconditional }) = data.bindings.get(name) {
                let visible = if is_use_scope {
                    &bindings[..bindings.partition_point(|binding| binding.range.start() < at)]
                } else {
                    bindings.as_slice()
                };
                if visible.is_empty() {
                    // Bound later in this function: Python treats the name as local, so it is unbound here.
                    if is_use_scope && data.kind == ScopeKind::Function {
                        return None;
                    }
                } else {
                    let start = last_unconditional[visible.len() - 1] as usize;
                    return Some((id, &visible[start..]));
                }
            }
            current = data.parent;
            is_use_scope = false;
        }
        None
    }

    /// The names bound in `scope`, in no particular order.
    pub fn names_in(&self, scope: ScopeId) -> impl Iterator<Item = &'a str> + '_ {
        self.scopes[scope.0 as usize].bindings.keys().copied()
    }

    /// The bindings of `name` in `scope` itself that reach its end (what another module, or an attribute
    /// of a class, reads): the last unconditional one and every conditional one after it.
    pub fn final_bindings(&self, name: &str, scope: ScopeId) -> Option<&[Binding<'a>]> {
        let NameBindings { bindings, last_unconditional } = self.scopes[scope.0 as usize].bindings.get(name)?;
        let start = *last_unconditional.last()? as usize;
        Some(&bindings[start..])
    }

    /// The scope of the class whose method has `receiver` (`self` or `cls`) as a parameter, read in
    /// `scope` at `offset`.
    pub fn receiver_class(&self, receiver: &str, scope: ScopeId, offset: TextSize) -> Option<ScopeId> {
        if !is_receiver_name(receiver) {
            return None;
        }
        let (method_scope, [Binding { kind: BindingKind::Parameter, .. }]) =
            self.reaching_bindings(receiver, scope, offset)?
        else {
            return None;
        };
        let class_scope = self.parent(method_scope)?;
        (self.scope_kind(method_scope) == ScopeKind::Function && self.scope_kind(class_scope) == ScopeKind::Class)
            .then_some(class_scope)
    }

    /// The method of the enclosing class that `receiver.method` names, read in `scope` at `offset`, when
    /// `receiver` is the `self` or `cls` parameter of one of the class's methods
    /// ([`SemanticModel::receiver_class`]) and the class defines the method once; with the class's scope.
    pub fn own_method(
        &self,
        receiver: &str,
        method: &str,
        scope: ScopeId,
        offset: TextSize,
    ) -> Option<(&'a ast::StmtFunctionDef, ScopeId)> {
        let class_scope = self.receiver_class(receiver, scope, offset)?;
        match self.final_bindings(method, class_scope)? {
            [Binding { kind: BindingKind::Function(function), .. }] => Some((*function, class_scope)),
            _ => None,
        }
    }

    /// Mutations of the dict bound to `name` in `scope` that happen after `after` and before `before`, in
    /// source order.
    pub fn mutations_between(
        &self,
        name: &str,
        scope: ScopeId,
        after: TextSize,
        before: TextSize,
    ) -> impl Iterator<Item = &Mutation<'a>> {
        let mutations = self.scopes[scope.0 as usize].mutations.get(name).map_or(&[][..], Vec::as_slice);
        let start = mutations.partition_point(|mutation| mutation.offset <= after);
        let end = mutations.partition_point(|mutation| mutation.offset < before).max(start);
        mutations[start..end].iter()
    }

    /// The innermost scope whose node contains `offset`, starting from the module.
    pub fn enclosing_function(&self, mut scope: ScopeId) -> Option<ScopeId> {
        loop {
            if self.scope_kind(scope) == ScopeKind::Function {
                return Some(scope);
            }
            scope = self.parent(scope)?;
        }
    }
}

struct Builder<'a, 'd> {
    model: SemanticModel<'a>,
    scope: ScopeId,
    conditional: u32,
    type_checking: u32,
    distrusted: &'d Distrusted,
    /// How many distrusted statements enclose the one visited.
    in_distrusted: u32,
}

impl<'a> Builder<'a, '_> {
    fn push_scope(&mut self, kind: ScopeKind, node: TextRange) -> ScopeId {
        let id = ScopeId(self.model.scopes.len() as u32);
        self.model.scopes.push(Scope::new(kind, Some(self.scope)));
        self.model.scope_by_node.insert(node.start(), id);
        id
    }

    fn bind(&mut self, name: &'a str, range: TextRange, kind: BindingKind<'a>) {
        let kind = if self.in_distrusted > 0 { BindingKind::Unknown } else { kind };
        let mut scope = self.scope;
        let mut conditional = self.conditional > 0;
        if self.model.scopes[scope.0 as usize].globals.contains(&name) {
            scope = ScopeId::MODULE;
            conditional = true;
        }
        self.model.scopes[scope.0 as usize].bindings.entry(name).or_default().bindings.push(Binding {
            range,
            kind,
            conditional,
        });
    }

    fn bind_import(&mut self, name: &'a str, range: TextRange, qualified: String) {
        let index = self.model.import_names.len() as u32;
        self.model.import_names.push(qualified);
        self.bind(name, range, BindingKind::Import(index));
    }

    fn record_import(&mut self, module: String, range: TextRange) {
        if self.in_distrusted > 0 {
            return;
        }
        self.model.imports.push(ImportEvent {
            module,
            range,
            scope: self.scope,
            type_checking: self.type_checking > 0,
        });
    }

    /// Binds the targets of an assignment to `value`, following tuple unpacking of tuple literals.
    fn bind_target(&mut self, target: &'a Expr, value: Option<&'a Expr>) {
        match target {
            Expr::Name(name) => {
                let kind = value.map_or(BindingKind::Unknown, BindingKind::Assign);
                self.bind(name.id.as_str(), name.range, kind);
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let values = match value {
                    Some(Expr::Tuple(ast::ExprTuple { elts: values, .. }))
                    | Some(Expr::List(ast::ExprList { elts: values, .. }))
                        if values.len() == elts.len() && !values.iter().any(Expr::is_starred_expr) =>
                    {
                        Some(values)
                    }
                    _ => None,
                };
                for (index, element) in elts.iter().enumerate() {
                    self.bind_target(element, values.map(|values| &values[index]));
                }
            }
            Expr::Starred(starred) => self.bind_target(&starred.value, None),
            Expr::Subscript(subscript) => {
                if let Expr::Name(name) = subscript.value.as_ref()
                    && let Some(value) = value
                {
                    let mutation = Mutation {
                        offset: subscript.range.start(),
                        kind: DictMutation::Set { key: &subscript.slice, value },
                    };
                    self.mutate(name, mutation);
                }
            }
            _ => {}
        }
    }

    /// Records a mutation of the dict bound to `name`; in a distrusted statement, the name becomes unknown.
    fn mutate(&mut self, name: &'a ast::ExprName, mutation: Mutation<'a>) {
        if self.in_distrusted > 0 {
            self.bind(name.id.as_str(), name.range, BindingKind::Unknown);
        } else {
            self.model.scopes[self.scope.0 as usize].mutations.entry(name.id.as_str()).or_default().push(mutation);
        }
    }

    fn bind_unknown_targets(&mut self, target: &'a Expr) {
        self.bind_target(target, None);
    }

    fn visit_parameters_in_scope(&mut self, parameters: &'a ast::Parameters) {
        for parameter in parameters.iter() {
            let parameter = parameter.as_parameter();
            self.bind(parameter.name.as_str(), parameter.name.range, BindingKind::Parameter);
        }
    }

    fn conditionally<F: FnOnce(&mut Self)>(&mut self, f: F) {
        self.conditional += 1;
        f(self);
        self.conditional -= 1;
    }
}

fn is_type_checking(test: &Expr) -> bool {
    match test {
        Expr::Name(name) => name.id.as_str() == "TYPE_CHECKING",
        Expr::Attribute(attribute) => attribute.attr.as_str() == "TYPE_CHECKING",
        _ => false,
    }
}

impl<'a> Builder<'a, '_> {
    /// What a statement binds, imports and mutates, and the statements nested in it.
    fn visit_trusted_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(function) => {
                super::visit_function_header(self, function);
                self.bind(function.name.as_str(), function.name.range, BindingKind::Function(function));
                let outer = self.scope;
                let outer_conditional = std::mem::take(&mut self.conditional);
                self.scope = self.push_scope(ScopeKind::Function, function.range);
                self.visit_parameters_in_scope(&function.parameters);
                self.visit_body(&function.body);
                self.scope = outer;
                self.conditional = outer_conditional;
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_decorator(decorator);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
                self.bind(class.name.as_str(), class.name.range, BindingKind::Class(class));
                let outer = self.scope;
                self.scope = self.push_scope(ScopeKind::Class, class.range);
                self.model.classes.insert(self.scope, class);
                self.visit_body(&class.body);
                self.scope = outer;
            }
            Stmt::Import(import) => {
                for alias in &import.names {
                    let module = alias.name.as_str();
                    self.record_import(module.to_string(), alias.range);
                    match &alias.asname {
                        Some(asname) => self.bind_import(asname.as_str(), asname.range, module.to_string()),
                        None => {
                            let top = module.split('.').next().unwrap_or(module);
                            let top: &'a str = &alias.name.as_str()[..top.len()];
                            self.bind_import(top, alias.name.range, top.to_string());
                        }
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map_or("", |module| module.as_str());
                let prefix = ".".repeat(import.level as usize);
                let module = format!("{prefix}{module}");
                for alias in &import.names {
                    if alias.name.as_str() == "*" {
                        self.record_import(module.clone(), alias.range);
                        if self.in_distrusted == 0 {
                            self.model.scopes[self.scope.0 as usize].star_imports.push(module.clone());
                        }
                        continue;
                    }
                    // `from . import settings` names `.settings`, `from .conf import N` names `.conf.N`.
                    let separator = if module.ends_with('.') { "" } else { "." };
                    let qualified = format!("{module}{separator}{}", alias.name.as_str());
                    // `from a import b` may import the submodule `a.b`, so record both candidates' root.
                    self.record_import(qualified.clone(), alias.range);
                    let local = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.bind_import(local.as_str(), local.range, qualified);
                }
            }
            Stmt::Assign(assign) => {
                self.visit_expr(&assign.value);
                for target in &assign.targets {
                    if let Expr::Attribute(attribute) = target
                        && let Expr::Name(name) = attribute.value.as_ref()
                        && super::libraries::is_thread_count_keyword(attribute.attr.as_str())
                    {
                        self.model.thread_configured.insert((self.scope, name.id.as_str()));
                    }
                    if let Expr::Attribute(attribute) = target
                        && let Expr::Name(name) = attribute.value.as_ref()
                    {
                        let kind =
                            ObjectUseKind::SetAttribute { attribute: attribute.attr.as_str(), value: &assign.value };
                        self.record_object_use(name.id.as_str(), target.start(), kind);
                    }
                    self.visit_expr(target);
                    self.bind_target(target, Some(&assign.value));
                }
            }
            Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    self.visit_expr(value);
                }
                self.visit_expr(&assign.target);
                if assign.value.is_some() {
                    self.bind_target(&assign.target, assign.value.as_deref());
                }
            }
            Stmt::AugAssign(assign) => {
                self.visit_expr(&assign.value);
                self.visit_expr(&assign.target);
                self.bind_unknown_targets(&assign.target);
            }
            Stmt::For(for_stmt) => {
                self.visit_expr(&for_stmt.iter);
                self.conditionally(|this| {
                    if let Expr::Name(name) = for_stmt.target.as_ref() {
                        this.bind(name.id.as_str(), name.range, BindingKind::ForTarget(&for_stmt.iter));
                    } else {
                        this.bind_unknown_targets(&for_stmt.target);
                    }
                    this.visit_body(&for_stmt.body);
                    this.visit_body(&for_stmt.orelse);
                });
            }
            Stmt::While(while_stmt) => {
                self.visit_expr(&while_stmt.test);
                self.conditionally(|this| {
                    this.visit_body(&while_stmt.body);
                    this.visit_body(&while_stmt.orelse);
                });
            }
            Stmt::If(if_stmt) => {
                self.visit_expr(&if_stmt.test);
                let type_checking = is_type_checking(&if_stmt.test);
                self.conditionally(|this| {
                    this.type_checking += u32::from(type_checking);
                    this.visit_body(&if_stmt.body);
                    this.type_checking -= u32::from(type_checking);
                    for clause in &if_stmt.elif_else_clauses {
                        if let Some(test) = &clause.test {
                            this.visit_expr(test);
                        }
                        this.visit_body(&clause.body);
                    }
                });
            }
            Stmt::Try(try_stmt) => {
                self.conditionally(|this| {
                    this.visit_body(&try_stmt.body);
                    for handler in &try_stmt.handlers {
                        let ast::ExceptHandler::ExceptHandler(handler) = handler;
                        if let Some(type_) = &handler.type_ {
                            this.visit_expr(type_);
                        }
                        if let Some(name) = &handler.name {
                            this.bind(name.as_str(), name.range, BindingKind::Unknown);
                        }
                        this.visit_body(&handler.body);
                    }
                    this.visit_body(&try_stmt.orelse);
                });
                self.visit_body(&try_stmt.finalbody);
            }
            Stmt::Match(match_stmt) => {
                self.visit_expr(&match_stmt.subject);
                self.conditionally(|this| {
                    for case in &match_stmt.cases {
                        this.visit_match_case(case);
                    }
                });
            }
            Stmt::With(with_stmt) => {
                for item in &with_stmt.items {
                    self.visit_expr(&item.context_expr);
                    if let Some(vars) = &item.optional_vars {
                        self.bind_unknown_targets(vars);
                    }
                }
                self.visit_body(&with_stmt.body);
            }
            Stmt::Global(global) => {
                for name in &global.names {
                    self.model.scopes[self.scope.0 as usize].globals.push(name.as_str());
                }
            }
            Stmt::Expr(expr_stmt) => {
                if let Expr::Call(call) = expr_stmt.value.as_ref()
                    && let Expr::Attribute(attribute) = call.func.as_ref()
                    && let Expr::Name(name) = attribute.value.as_ref()
                    && matches!(attribute.attr.as_str(), "update" | "setdefault" | "pop" | "clear" | "popitem")
                {
                    self.mutate(name, Mutation { offset: call.range().start(), kind: DictMutation::Call(call) });
                }
                visitor::walk_stmt(self, stmt);
            }
            Stmt::Delete(delete) => {
                for target in &delete.targets {
                    if let Expr::Subscript(subscript) = target
                        && let Expr::Name(name) = subscript.value.as_ref()
                    {
                        // A deleted key makes the dict's contents uncertain.
                        self.bind(name.id.as_str(), name.range, BindingKind::Unknown);
                    }
                }
                visitor::walk_stmt(self, stmt);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }
}

impl<'a> Visitor<'a> for Builder<'a, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.distrusted.contains(stmt) {
            self.in_distrusted += 1;
            self.visit_trusted_stmt(stmt);
            self.in_distrusted -= 1;
        } else {
            self.visit_trusted_stmt(stmt);
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(lambda) => {
                if let Some(parameters) = &lambda.parameters {
                    for parameter in parameters.iter_non_variadic_params() {
                        if let Some(default) = parameter.default() {
                            self.visit_expr(default);
                        }
                    }
                }
                let outer = self.scope;
                self.scope = self.push_scope(ScopeKind::Function, lambda.range);
                if let Some(parameters) = &lambda.parameters {
                    self.visit_parameters_in_scope(parameters);
                }
                self.visit_expr(&lambda.body);
                self.scope = outer;
            }
            Expr::ListComp(ast::ExprListComp { elt, generators, range, .. })
            | Expr::SetComp(ast::ExprSetComp { elt, generators, range, .. })
            | Expr::Generator(ast::ExprGenerator { elt, generators, range, .. }) => {
                self.visit_comprehension_scope(*range, generators, &[elt]);
            }
            Expr::DictComp(ast::ExprDictComp { key, value, generators, range, .. }) => {
                let elements: Vec<&'a Expr> =
                    key.as_deref().into_iter().chain(std::iter::once(value.as_ref())).collect();
                self.visit_comprehension_scope(*range, generators, &elements);
            }
            Expr::Named(named) => {
                self.visit_expr(&named.value);
                // A walrus in a comprehension binds in the enclosing function scope.
                let outer = self.scope;
                while self.model.scope_kind(self.scope) == ScopeKind::Comprehension {
                    self.scope = self.model.parent(self.scope).unwrap_or(ScopeId::MODULE);
                }
                self.bind_target(&named.target, Some(&named.value));
                self.scope = outer;
            }
            Expr::Call(call) => {
                if let Expr::Attribute(attribute) = call.func.as_ref()
                    && attribute.attr.as_str() == "set_params"
                    && let Expr::Name(name) = attribute.value.as_ref()
                    && call.arguments.keywords.iter().any(|keyword| {
                        keyword.arg.as_ref().is_some_and(|arg| super::libraries::is_thread_count_keyword(arg.as_str()))
                    })
                {
                    self.model.thread_configured.insert((self.scope, name.id.as_str()));
                }
                let passed =
                    call.arguments.args.iter().chain(call.arguments.keywords.iter().map(|keyword| &keyword.value));
                for argument in passed {
                    let argument =
                        if let Expr::Starred(starred) = argument { starred.value.as_ref() } else { argument };
                    if let Expr::Name(name) = argument {
                        self.record_object_use(name.id.as_str(), call.range().start(), ObjectUseKind::Passed(call));
                    }
                }
                // Module-level calls of module-level functions decide when their bodies run (CAP106).
                if self.scope == ScopeId::MODULE
                    && let Expr::Name(name) = call.func.as_ref()
                {
                    self.model.module_calls.entry(name.id.as_str()).or_default().push(call.range().start());
                }
                visitor::walk_expr(self, expr);
            }
            _ => visitor::walk_expr(self, expr),
        }
    }
}

impl<'a> Builder<'a, '_> {
    fn record_object_use(&mut self, name: &'a str, offset: TextSize, kind: ObjectUseKind<'a>) {
        let used = ObjectUse { offset, scope: self.scope, kind };
        self.model.object_uses.entry(name).or_default().push(used);
    }

    fn visit_comprehension_scope(
        &mut self,
        range: TextRange,
        generators: &'a [ast::Comprehension],
        elements: &[&'a Expr],
    ) {
        if let Some(first) = generators.first() {
            self.visit_expr(&first.iter);
        }
        let outer = self.scope;
        self.scope = self.push_scope(ScopeKind::Comprehension, range);
        for (index, generator) in generators.iter().enumerate() {
            if index > 0 {
                self.visit_expr(&generator.iter);
            }
            if let Expr::Name(name) = &generator.target {
                self.bind(name.id.as_str(), name.range, BindingKind::ForTarget(&generator.iter));
            } else {
                self.bind_unknown_targets(&generator.target);
            }
            for condition in &generator.ifs {
                self.visit_expr(condition);
            }
        }
        for element in elements {
            self.visit_expr(element);
        }
        self.scope = outer;
    }
}
