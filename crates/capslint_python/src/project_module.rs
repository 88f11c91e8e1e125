//! A module of the project kept parsed for the run: its text and its owned syntax tree, shared behind an
//! `Arc` by every file that follows a call into one of its functions ([`super::crossmodule`]), and by the
//! module's own check when that comes later in the run ([`crate::check`]). The project index reads and
//! parses it once ([`super::project`]); a file that needs it builds its semantic model.

use std::sync::Arc;

use ruff_python_ast::{ModModule, Stmt, StmtClassDef, StmtFunctionDef};
use ruff_python_parser::Parsed;
use ruff_text_size::{Ranged, TextRange};

use capslint_diagnostics::source::SourceFile;

/// One module of the project, parsed without syntax errors.
#[derive(Debug)]
pub struct ProjectModule {
    /// Its text, path and display name, where findings' related locations point.
    pub file: Arc<SourceFile>,
    /// Its syntax tree.
    pub parsed: Parsed<ModModule>,
}

impl ProjectModule {
    /// The module-level function whose `def` spans `range`.
    pub fn function(&self, range: TextRange) -> Option<&StmtFunctionDef> {
        self.parsed.syntax().body.iter().find_map(|stmt| match stmt {
            Stmt::FunctionDef(function) if function.range() == range => Some(function),
            _ => None,
        })
    }

    /// The module-level class whose `class` statement spans `range`.
    pub fn class(&self, range: TextRange) -> Option<&StmtClassDef> {
        self.parsed.syntax().body.iter().find_map(|stmt| match stmt {
            Stmt::ClassDef(class) if class.range() == range => Some(class),
            _ => None,
        })
    }
}
