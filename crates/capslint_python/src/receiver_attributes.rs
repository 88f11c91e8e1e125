//! What the methods of a class store in an attribute of their receiver (`self.nlp = spacy.load(name)` in
//! one method, `self.nlp = None` in `__init__`), for the resolver to name the object a method reads back
//! through it (`self.nlp.pipe(...)`). Only plain assignments to the receiver's attribute count; any other
//! store of an attribute of that name in the class (unpacking, an augmented assignment, another object's
//! attribute) makes it unknown.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};
use rustc_hash::FxHashMap;

use super::calls::has_decorator;

/// What the methods of one class assign to their receiver's attributes, by attribute name: each value
/// with the method it is in and the offset it is evaluated at, or `None` for an attribute that some other
/// store may change.
pub type ClassAttributes<'a> = FxHashMap<&'a str, Option<Vec<Assigned<'a>>>>;

/// One value assigned to a receiver's attribute: the method, the value, and where it is evaluated.
pub type Assigned<'a> = (&'a ast::StmtFunctionDef, &'a Expr, TextSize);

/// What the methods of `class` assign to the attributes of their receiver (the first parameter of each
/// method that is not a `staticmethod`), read in one pass over the class.
pub fn of_class(class: &ast::StmtClassDef) -> ClassAttributes<'_> {
    let mut attributes: ClassAttributes<'_> = FxHashMap::default();
    for stmt in &class.body {
        let Stmt::FunctionDef(method) = stmt else { continue };
        let receiver = (!has_decorator(method, "staticmethod"))
            .then(|| method.parameters.posonlyargs.iter().chain(&method.parameters.args).next())
            .flatten()
            .map(|receiver| receiver.parameter.name.as_str());
        let mut collector = Collector { receiver, method, attributes: &mut attributes };
        collector.visit_body(&method.body);
    }
    attributes
}

/// Collects one method's plain assignments to its receiver's attributes; any other store of an
/// attribute makes that attribute unknown. Stores are targets of statements, so only statements are
/// walked (a comprehension's `for obj.attr in ...` is not looked for).
struct Collector<'a, 'c> {
    receiver: Option<&'a str>,
    method: &'a ast::StmtFunctionDef,
    attributes: &'c mut ClassAttributes<'a>,
}

impl<'a> Collector<'a, '_> {
    /// The attribute `target` sets on the receiver, when it is `<receiver>.<attribute>`.
    fn receiver_attribute(&self, target: &'a Expr) -> Option<&'a str> {
        let Expr::Attribute(target) = target else { return None };
        let Expr::Name(base) = target.value.as_ref() else { return None };
        (Some(base.id.as_str()) == self.receiver).then_some(target.attr.as_str())
    }

    fn assigned(&mut self, attribute: &'a str, value: &'a Expr, offset: TextSize) {
        if let Some(values) = self.attributes.entry(attribute).or_insert_with(|| Some(Vec::new())) {
            values.push((self.method, value, offset));
        }
    }

    /// Marks every attribute a target stores into (`a.x, b.y = ...`, `for obj.x in ...`) as unknown.
    fn store(&mut self, target: &'a Expr) {
        match target {
            Expr::Attribute(attribute) => {
                self.attributes.insert(attribute.attr.as_str(), None);
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                elts.iter().for_each(|element| self.store(element));
            }
            Expr::Starred(starred) => self.store(&starred.value),
            _ => {}
        }
    }

    fn visit_body(&mut self, body: &'a [Stmt]) {
        body.iter().for_each(|stmt| self.visit_stmt(stmt));
    }

    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Assign(ast::StmtAssign { targets, value, .. }) => match targets.as_slice() {
                [target] if let Some(attribute) = self.receiver_attribute(target) => {
                    self.assigned(attribute, value, stmt.start());
                }
                _ => targets.iter().for_each(|target| self.store(target)),
            },
            Stmt::AnnAssign(ast::StmtAnnAssign { target, value, .. }) => {
                match (self.receiver_attribute(target), value) {
                    (Some(attribute), Some(value)) => self.assigned(attribute, value, stmt.start()),
                    (Some(_), None) => {}
                    _ => self.store(target),
                }
            }
            Stmt::AugAssign(ast::StmtAugAssign { target, .. }) => self.store(target),
            Stmt::Delete(ast::StmtDelete { targets, .. }) => targets.iter().for_each(|target| self.store(target)),
            Stmt::For(ast::StmtFor { target, body, orelse, .. }) => {
                self.store(target);
                self.visit_body(body);
                self.visit_body(orelse);
            }
            Stmt::While(ast::StmtWhile { body, orelse, .. }) => {
                self.visit_body(body);
                self.visit_body(orelse);
            }
            Stmt::If(ast::StmtIf { body, elif_else_clauses, .. }) => {
                self.visit_body(body);
                elif_else_clauses.iter().for_each(|clause| self.visit_body(&clause.body));
            }
            Stmt::With(ast::StmtWith { items, body, .. }) => {
                items.iter().filter_map(|item| item.optional_vars.as_deref()).for_each(|target| self.store(target));
                self.visit_body(body);
            }
            Stmt::Try(ast::StmtTry { body, handlers, orelse, finalbody, .. }) => {
                self.visit_body(body);
                for handler in handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    self.visit_body(&handler.body);
                }
                self.visit_body(orelse);
                self.visit_body(finalbody);
            }
            Stmt::Match(ast::StmtMatch { cases, .. }) => cases.iter().for_each(|case| self.visit_body(&case.body)),
            // A closure inside a method stores through the same receiver.
            Stmt::FunctionDef(function) => self.visit_body(&function.body),
            Stmt::ClassDef(class) => self.visit_body(&class.body),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use ruff_python_parser::parse_module;

    use super::*;

    fn assigned(source: &str, attribute: &str) -> Option<Vec<String>> {
        let parsed = parse_module(source).unwrap();
        let Stmt::ClassDef(class) = &parsed.syntax().body[0] else { panic!("not a class") };
        of_class(class)
            .get(attribute)
            .cloned()
            .flatten()
            .map(|values| values.iter().map(|(_, value, _)| source[value.range().to_std_range()].to_string()).collect())
    }

    #[test]
    fn plain_assignments_in_every_method_count() {
        let source = "\
class Scorer:
    def __init__(self):
        self.nlp: Language | None = None
        self.other = 1

    def load(this, name):
        if name:
            this.nlp = spacy.load(name)
";
        assert_eq!(assigned(source, "nlp"), Some(vec!["None".into(), "spacy.load(name)".into()]));
    }

    #[test]
    fn a_static_method_has_no_receiver() {
        let source = "class Scorer:\n    @staticmethod\n    def load(model):\n        model.nlp = spacy.load('x')\n";
        assert_eq!(assigned(source, "nlp"), None);
    }

    #[test]
    fn any_other_store_of_the_attribute_makes_it_unknown() {
        for store in [
            "self.nlp, x = a, b",
            "self.nlp += 1",
            "other.nlp = spacy.blank('en')",
            "del self.nlp",
            "for self.nlp in models: pass",
        ] {
            let source =
                format!("class Scorer:\n    def load(self):\n        self.nlp = spacy.load('x')\n        {store}\n");
            assert_eq!(assigned(&source, "nlp"), None, "{store}");
        }
    }
}
