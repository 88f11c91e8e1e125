//! Where a value, or the cut of a chain of values, is written: in the file being checked or in another
//! module of the project. Resolution, its values and its limits all name places this way.

use std::sync::Arc;

use ruff_text_size::TextRange;

use capslint_diagnostics::source::SourceFile;

/// Where a value was defined: in the file being checked, or in another module of the project.
#[derive(Debug, Clone)]
pub enum Site {
    /// A range of the file being checked.
    Here(TextRange),
    /// A range of another file, read because the file being checked imports from it.
    Elsewhere {
        /// The other file.
        file: Arc<SourceFile>,
        /// The range in it.
        range: TextRange,
    },
}

impl Site {
    /// The range, when it is in the file being checked.
    pub fn here(&self) -> Option<TextRange> {
        match self {
            Site::Here(range) => Some(*range),
            Site::Elsewhere { .. } => None,
        }
    }
}

impl From<TextRange> for Site {
    fn from(range: TextRange) -> Self {
        Site::Here(range)
    }
}
