//! The single AST walk over a module: it keeps the checker's scope, enclosing functions and joblib
//! contexts current, and hands each call, definition, dict and environment write to the rules that look
//! at it. The rules read and report through [`Checker`]; this is the one place that calls them.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};

use super::checker::Checker;
use super::env::EnvWrite;
use super::libraries;
use super::rules;
use super::semantic::{BindingKind, ScopeId};

impl<'a> Checker<'_, 'a> {
    /// Whether a call can matter to a rule: its keywords, or a callee a rule knows by name.
    fn may_matter(call: &ast::ExprCall) -> bool {
        let keywords = call.arguments.keywords.iter().any(|keyword| match &keyword.arg {
            None => true,
            Some(arg) => libraries::is_rule_keyword(arg.as_str()),
        });
        keywords
            || match call.func.as_ref() {
                Expr::Attribute(attribute) => libraries::is_interesting_attribute(attribute.attr.as_str()),
                _ => true,
            }
    }

    /// Whether a bare-name callee can be something a rule knows: only an import, an alias assigned from
    /// one, or a name a star import may bring. Builtins and local functions never are.
    fn may_be_known_callee(&self, call: &ast::ExprCall) -> bool {
        let Expr::Name(name) = call.func.as_ref() else { return true };
        let model = self.resolver.model();
        match model.reaching_bindings(name.id.as_str(), self.scope, call.range().start()) {
            Some((_, bindings)) => {
                // Beyond the alternatives resolution follows, resolution reports the limit.
                bindings.len() > super::limits::MAX_ALTERNATIVES
                    || bindings.iter().any(|binding| {
                        matches!(binding.kind, BindingKind::Import(_) | BindingKind::Assign(_) | BindingKind::Class(_))
                    })
            }
            None => model.has_star_imports(),
        }
    }

    fn check_call(&mut self, call: &'a ast::ExprCall) {
        if !self.late_caps.is_empty() {
            rules::late_thread_cap::call(self, call);
        }
        if !Self::may_matter(call) {
            // A call of a method of the enclosing class names no argument or callee the rules know.
            self.follow_call(call);
            return;
        }
        let callee = if self.may_be_known_callee(call) { self.callee(call) } else { None };
        let callee = callee.as_deref();
        rules::n_jobs_all_cores::call(self, call, callee);
        rules::missing_thread_count::call(self, call, callee);
        rules::unbounded_joblib_parallel::call(self, call, callee);
        rules::unsized_process_pool::call(self, call, callee);
        rules::node_cpu_count::call(self, call, callee);
        rules::kpo_missing_cpu_limit::call(self, call, callee);
        rules::ml_pool_default_sized::call(self, call, callee);
        if self.pod_templates.is_some() && callee.is_some_and(libraries::is_pod_operator) {
            let at = self.at(call.range().start());
            let (found, cut) = self.resolver.watch(|| super::pod_templates::template_call(&self.resolver, call, at));
            // Any part of the template the cut left unknown may hold what the manifest rules look for.
            self.note_cut(cut, true, call.range());
            self.pod_templates.get_or_insert_default().extend(found);
        }
        if let Some(option) = super::cli_option::declared_by(call, callee) {
            rules::n_jobs_all_cores::cli_option(self, &option);
            rules::node_cpu_count::cli_option(self, &option);
        }
        if let Some(write) = EnvWrite::from_call(self, call, callee) {
            self.check_env_write(&write);
        }
        self.follow_call(call);
    }

    /// Follows a call of a function of this module, or else of another module of the project, into its body.
    fn follow_call(&mut self, call: &'a ast::ExprCall) {
        if !super::interprocedural::call(self, call) {
            super::crossmodule::call(self, call);
        }
    }

    fn check_env_write(&mut self, write: &EnvWrite<'a>) {
        rules::node_cpu_count::env_write(self, write);
        rules::late_thread_cap::env_write(self, write);
    }

    fn enter_scope(&mut self, node_start: TextSize) -> ScopeId {
        let outer = self.scope;
        if let Some(scope) = self.resolver.model().scope_of_node(node_start) {
            self.scope = scope;
        }
        outer
    }
}

impl<'a> Visitor<'a> for Checker<'_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.is_distrusted(stmt) {
            return;
        }
        match stmt {
            Stmt::FunctionDef(function) => {
                rules::n_jobs_all_cores::parameters(self, &function.parameters);
                super::visit_function_header(self, function);
                let contexts = std::mem::take(&mut self.contexts);
                self.functions.push((function.name.as_str(), self.scope));
                let outer = self.enter_scope(function.range.start());
                self.visit_body(&function.body);
                self.scope = outer;
                self.functions.pop();
                self.contexts = contexts;
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_decorator(decorator);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
                let outer = self.enter_scope(class.range.start());
                rules::n_jobs_all_cores::class_body(self, &class.body);
                self.visit_body(&class.body);
                self.scope = outer;
            }
            Stmt::With(with_stmt) => {
                let mut pushed = 0;
                for item in &with_stmt.items {
                    self.visit_with_item(item);
                    pushed += usize::from(rules::unbounded_joblib_parallel::enter_with_item(self, item));
                }
                self.visit_body(&with_stmt.body);
                self.contexts.truncate(self.contexts.len() - pushed);
            }
            Stmt::Assign(assign) => {
                self.assigned_call = match (assign.targets.as_slice(), assign.value.as_ref()) {
                    ([Expr::Name(name)], Expr::Call(call)) => Some((call.range(), name.id.as_str())),
                    _ => None,
                };
                visitor::walk_stmt(self, stmt);
                self.assigned_call = None;
                for target in &assign.targets {
                    if let Some(write) = EnvWrite::from_assignment(self, target, &assign.value) {
                        self.check_env_write(&write);
                    }
                    rules::n_jobs_all_cores::target_assignment(self, target, &assign.value);
                    rules::node_cpu_count::target_assignment(self, target, &assign.value);
                }
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => {
                self.check_call(call);
                visitor::walk_expr(self, expr);
            }
            Expr::Dict(dict) => {
                rules::n_jobs_all_cores::dict_literal(self, dict);
                rules::node_cpu_count::dict_literal(self, dict);
                visitor::walk_expr(self, expr);
            }
            Expr::Lambda(lambda) => {
                if let Some(parameters) = &lambda.parameters {
                    rules::n_jobs_all_cores::parameters(self, parameters);
                    for parameter in parameters.iter_non_variadic_params() {
                        if let Some(default) = parameter.default() {
                            self.visit_expr(default);
                        }
                    }
                }
                let outer = self.enter_scope(lambda.range.start());
                self.visit_expr(&lambda.body);
                self.scope = outer;
            }
            Expr::ListComp(ast::ExprListComp { range, .. })
            | Expr::SetComp(ast::ExprSetComp { range, .. })
            | Expr::Generator(ast::ExprGenerator { range, .. })
            | Expr::DictComp(ast::ExprDictComp { range, .. }) => {
                let outer = self.enter_scope(range.start());
                visitor::walk_expr(self, expr);
                self.scope = outer;
            }
            _ => visitor::walk_expr(self, expr),
        }
    }
}
