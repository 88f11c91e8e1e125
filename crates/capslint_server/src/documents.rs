//! The documents the client has open: text documents (Python, YAML, JSON, TOML) and notebooks, each with
//! the version the client gave it, kept in step with the client's edits (whole or incremental). A
//! notebook holds its cells in order; each cell's text is a text document of its own, owned by the
//! notebook. Only the documents that stand alone and the notebooks are linted: a cell is linted as part
//! of its notebook.

use std::collections::HashMap;

use lsp_types::{NotebookCellKind, TextDocumentContentChangeEvent, Uri};

use crate::position::{Encoding, LineIndex};

/// A text document's text and version.
#[derive(Debug, Clone)]
pub struct TextDocument {
    /// Its text as the editor holds it, saved or not.
    pub text: String,
    /// The version of its last change.
    pub version: i32,
    /// The language the client names (`python`, `yaml`).
    pub language_id: String,
    /// The lines of `text`.
    pub lines: LineIndex,
}

impl TextDocument {
    fn new(text: String, version: i32, language_id: String) -> Self {
        let lines = LineIndex::new(&text);
        TextDocument { text, version, language_id, lines }
    }

    /// Applies the client's changes, in order: a change with a range replaces that range, one without
    /// replaces the whole text.
    fn apply(&mut self, changes: Vec<TextDocumentContentChangeEvent>, encoding: Encoding) {
        for change in changes {
            match change.range {
                Some(range) => {
                    let range = self.lines.text_range(&self.text, range, encoding);
                    self.text.replace_range(usize::from(range.start())..usize::from(range.end()), &change.text);
                }
                None => self.text = change.text,
            }
            self.lines = LineIndex::new(&self.text);
        }
    }
}

/// One cell of a notebook.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The URI of its text document.
    pub uri: Uri,
    /// Code or markup.
    pub kind: NotebookCellKind,
}

/// A notebook: its cells in order, its metadata and version.
#[derive(Debug, Clone)]
pub struct Notebook {
    /// The version of its last change.
    pub version: i32,
    /// Its cells, in order.
    pub cells: Vec<Cell>,
    /// The notebook's metadata (where its kernel's language is).
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Every open document.
#[derive(Debug, Default)]
pub struct DocumentStore {
    texts: HashMap<Uri, TextDocument>,
    notebooks: HashMap<Uri, Notebook>,
    /// The notebook each open cell belongs to.
    cell_owner: HashMap<Uri, Uri>,
}

/// What a change to a notebook says about its cells.
#[derive(Debug, Default)]
pub struct CellChanges {
    /// Cells replaced: from `start`, `delete_count` removed and these inserted.
    pub structure: Option<(usize, usize, Vec<Cell>)>,
    /// Cells opened by the change, with their text and language.
    pub opened: Vec<(Uri, String, i32, String)>,
    /// Cells closed by the change.
    pub closed: Vec<Uri>,
    /// Text changes of cells.
    pub texts: Vec<(Uri, i32, Vec<TextDocumentContentChangeEvent>)>,
}

impl DocumentStore {
    /// Opens a text document.
    pub fn open_text(&mut self, uri: Uri, text: String, version: i32, language_id: String) {
        self.texts.insert(uri, TextDocument::new(text, version, language_id));
    }

    /// Applies changes to an open text document; `false` when it is not open.
    pub fn change_text(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        encoding: Encoding,
    ) -> bool {
        let Some(document) = self.texts.get_mut(uri) else { return false };
        document.apply(changes, encoding);
        document.version = version;
        true
    }

    /// Closes a text document.
    pub fn close_text(&mut self, uri: &Uri) {
        self.texts.remove(uri);
    }

    /// Opens a notebook and its cells' text documents.
    pub fn open_notebook(
        &mut self,
        uri: Uri,
        version: i32,
        cells: Vec<Cell>,
        metadata: Option<serde_json::Map<String, serde_json::Value>>,
        cell_texts: Vec<(Uri, String, i32, String)>,
    ) {
        for (cell, text, version, language) in cell_texts {
            self.cell_owner.insert(cell.clone(), uri.clone());
            self.texts.insert(cell, TextDocument::new(text, version, language));
        }
        for cell in &cells {
            self.cell_owner.insert(cell.uri.clone(), uri.clone());
        }
        self.notebooks.insert(uri, Notebook { version, cells, metadata });
    }

    /// Applies a change to an open notebook; `false` when it is not open.
    pub fn change_notebook(
        &mut self,
        uri: &Uri,
        version: i32,
        metadata: Option<serde_json::Map<String, serde_json::Value>>,
        changes: CellChanges,
        encoding: Encoding,
    ) -> bool {
        let Some(notebook) = self.notebooks.get_mut(uri) else { return false };
        notebook.version = version;
        if metadata.is_some() {
            notebook.metadata = metadata;
        }
        if let Some((start, delete_count, cells)) = changes.structure {
            let start = start.min(notebook.cells.len());
            let end = (start + delete_count).min(notebook.cells.len());
            for cell in &cells {
                self.cell_owner.insert(cell.uri.clone(), uri.clone());
            }
            notebook.cells.splice(start..end, cells);
        }
        for closed in changes.closed {
            self.texts.remove(&closed);
            self.cell_owner.remove(&closed);
        }
        for (cell, text, version, language) in changes.opened {
            self.cell_owner.insert(cell.clone(), uri.clone());
            self.texts.insert(cell, TextDocument::new(text, version, language));
        }
        for (cell, version, edits) in changes.texts {
            self.change_text(&cell, version, edits, encoding);
        }
        true
    }

    /// Closes a notebook and its cells.
    pub fn close_notebook(&mut self, uri: &Uri) {
        if let Some(notebook) = self.notebooks.remove(uri) {
            for cell in notebook.cells {
                self.texts.remove(&cell.uri);
                self.cell_owner.remove(&cell.uri);
            }
        }
    }

    /// An open text document (a cell's too).
    pub fn text(&self, uri: &Uri) -> Option<&TextDocument> {
        self.texts.get(uri)
    }

    /// An open notebook.
    pub fn notebook(&self, uri: &Uri) -> Option<&Notebook> {
        self.notebooks.get(uri)
    }

    /// The document linted for `uri`: the notebook that owns a cell, or the document itself.
    pub fn owner(&self, uri: &Uri) -> Option<Uri> {
        if let Some(notebook) = self.cell_owner.get(uri) {
            return Some(notebook.clone());
        }
        (self.texts.contains_key(uri) || self.notebooks.contains_key(uri)).then(|| uri.clone())
    }

    /// The version of a linted document (a notebook's or a text document's).
    pub fn version(&self, uri: &Uri) -> Option<i32> {
        match self.notebooks.get(uri) {
            Some(notebook) => Some(notebook.version),
            None if !self.cell_owner.contains_key(uri) => self.texts.get(uri).map(|document| document.version),
            None => None,
        }
    }

    /// Every linted document: the notebooks and the text documents that are not cells.
    pub fn linted(&self) -> Vec<Uri> {
        let mut uris: Vec<Uri> = self.notebooks.keys().cloned().collect();
        uris.extend(self.texts.keys().filter(|uri| !self.cell_owner.contains_key(*uri)).cloned());
        uris.sort();
        uris
    }

    /// The notebook's JSON as a `.ipynb` file would hold it: its cells in order (a code cell in a language
    /// other than Python is written as a raw cell, so cells keep their numbers), each cell's source one
    /// string.
    pub fn notebook_json(&self, uri: &Uri) -> Option<String> {
        let notebook = self.notebooks.get(uri)?;
        let cells: Vec<serde_json::Value> = notebook
            .cells
            .iter()
            .map(|cell| {
                let document = self.texts.get(&cell.uri);
                let source = document.map_or("", |document| document.text.as_str());
                let python = document.is_none_or(|document| is_python_language(&document.language_id));
                let cell_type = match cell.kind {
                    NotebookCellKind::Code if python => "code",
                    NotebookCellKind::Code => "raw",
                    _ => "markdown",
                };
                serde_json::json!({"cell_type": cell_type, "metadata": {}, "source": source})
            })
            .collect();
        let metadata = notebook.metadata.clone().unwrap_or_default();
        let json = serde_json::json!({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5});
        serde_json::to_string(&json).ok()
    }
}

/// Whether a cell's language is Python to the linter (IPython included; an empty id says nothing).
fn is_python_language(language_id: &str) -> bool {
    matches!(language_id.to_ascii_lowercase().as_str(), "" | "python" | "python3" | "ipython" | "py")
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};
    use std::str::FromStr;

    fn uri(text: &str) -> Uri {
        Uri::from_str(text).unwrap()
    }

    #[test]
    fn incremental_changes_apply_in_order() {
        let mut store = DocumentStore::default();
        let file = uri("file:///a.py");
        store.open_text(file.clone(), "x = 1\ny = 2\n".into(), 1, "python".into());
        let range = |line, from, to| {
            Some(Range { start: Position { line, character: from }, end: Position { line, character: to } })
        };
        let changes = vec![
            TextDocumentContentChangeEvent { range: range(1, 4, 5), range_length: None, text: "20".into() },
            TextDocumentContentChangeEvent { range: range(0, 0, 0), range_length: None, text: "# é\n".into() },
        ];
        assert!(store.change_text(&file, 2, changes, Encoding::Utf16));
        let document = store.text(&file).unwrap();
        assert_eq!((document.text.as_str(), document.version), ("# é\nx = 1\ny = 20\n", 2));
        assert!(!store.change_text(&uri("file:///b.py"), 1, Vec::new(), Encoding::Utf16));
    }

    #[test]
    fn a_notebook_is_its_cells_in_order() {
        let mut store = DocumentStore::default();
        let notebook = uri("file:///n.ipynb");
        let cell = |name: &str, kind| Cell { uri: uri(&format!("vscode-notebook-cell:/n.ipynb#{name}")), kind };
        let cells = vec![cell("a", NotebookCellKind::Markup), cell("b", NotebookCellKind::Code)];
        let texts = vec![
            (cells[0].uri.clone(), "# Title".to_string(), 1, "markdown".to_string()),
            (cells[1].uri.clone(), "import os\n".to_string(), 1, "python".to_string()),
        ];
        store.open_notebook(notebook.clone(), 3, cells.clone(), None, texts);
        assert_eq!(store.owner(&cells[1].uri), Some(notebook.clone()));
        assert_eq!(store.linted(), vec![notebook.clone()]);
        assert_eq!(store.version(&notebook), Some(3));
        let json: serde_json::Value = serde_json::from_str(&store.notebook_json(&notebook).unwrap()).unwrap();
        assert_eq!(json["cells"][1]["source"], "import os\n");
        assert_eq!(json["cells"][0]["cell_type"], "markdown");
        store.close_notebook(&notebook);
        assert!(store.linted().is_empty() && store.text(&cells[1].uri).is_none());
    }
}
