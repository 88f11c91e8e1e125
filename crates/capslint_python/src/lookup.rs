//! What resolution asks of the rest of the project: the value another module gives an imported name, the
//! pod operator an imported class stands for, and the function an imported name is. The project index
//! answers ([`super::project`]); the resolver only asks, so it does not depend on how modules are found,
//! read and summarised.

use std::sync::Arc;

use ruff_text_size::TextRange;

use super::limits::Cut;
use super::project_module::ProjectModule;
use super::value::{CapNames, Resolved};
use capslint_diagnostics::source::SourceFile;

/// The other modules of the project, as resolution sees them.
pub trait ProjectLookup {
    /// The value the project gives the imported name `qualified`, with its definition as the binding;
    /// `Ok(None)` when the project does not define it, the [`Cut`] when a limit stopped the lookup.
    fn value(&self, qualified: &str, caps: &CapNames) -> Result<Option<Resolved<'static>>, Cut>;

    /// What a call of the imported name `qualified` returns, when it is a module-level function of
    /// another module of the project whose returned value the rules read (a node-wide CPU count), with the
    /// function's name as the binding; `Ok(None)` otherwise, the [`Cut`] when a limit stopped the lookup.
    fn returned(&self, qualified: &str, caps: &CapNames) -> Result<Option<Resolved<'static>>, Cut>;

    /// The canonical pod operator the imported class `qualified` stands for, when it is a subclass of one
    /// without an `__init__` of its own that may set resources or environment; the [`Cut`] when a limit
    /// stopped the lookup.
    fn pod_operator(&self, qualified: &str, caps: &CapNames) -> Result<Option<String>, Cut>;

    /// The module-level function of another module of the project that the imported name `qualified`
    /// is; `Ok(None)` when it is none, the [`Cut`] when a limit stopped the lookup.
    fn function(&self, qualified: &str, caps: &CapNames) -> Result<Option<ProjectFunction<'_>>, Cut>;

    /// The module-level class of another module of the project that the imported name `qualified` is,
    /// its `class` statement as the [`ProjectFunction::def`]; `Ok(None)` when it is none, the [`Cut`] when a
    /// limit stopped the lookup.
    fn class(&self, qualified: &str, caps: &CapNames) -> Result<Option<ProjectFunction<'_>>, Cut>;

    /// Whether the imported name `qualified` may be a module-level class of another module of the project
    /// that may have findings when one of its methods is followed (its text holds a word the rules need,
    /// or names a definition that does): asked of the module's text, never parsed.
    fn class_may_have_findings(&self, qualified: &str) -> bool;

    /// Whether the module of the project at `path` defines a module-level function or class `name` that
    /// may have findings when followed ([`crate::prefilter::definitions::with_findings`]): answered from
    /// the module's text, read once per run.
    fn defines_with_findings(&self, path: &std::path::Path, name: &str) -> bool;

    /// The file being checked, holding `text`, as another module's related locations name it.
    fn source_file(&self, text: &str) -> Arc<SourceFile>;
}

/// A function (or a class) of another module of the project: its parsed module, its `def` (or `class`),
/// and the project as that module sees it (for the names it imports).
pub struct ProjectFunction<'p> {
    /// The module.
    pub module: Arc<ProjectModule>,
    /// The range of the `def` (or of the `class`).
    pub def: TextRange,
    /// The project, seen from that module.
    pub project: Box<dyn ProjectLookup + 'p>,
}
