//! Reading a notebook's JSON into its code cells: nbformat 4 (`cells`), and nbformat 3 and 2, whose
//! cells live in `worksheets` and keep their code in `input`. A source is a string or a list of strings.
//!
//! serde_json parses; every value this module does not read (outputs, attachments, most metadata) is
//! skipped by serde_json without recursion, so nesting anywhere in them costs no stack. Each source
//! string is borrowed as raw JSON text, so its position in the file is known for the reports that point
//! into the file itself.

use capslint_diagnostics::source::cells::SourceString;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// A code cell as the file holds it.
#[derive(Debug)]
pub struct CodeCell<'a> {
    /// Its 1-based position among all the notebook's cells, as Jupyter shows them.
    pub number: usize,
    /// Where its source value (the string or the list) starts in the file's text.
    pub offset: usize,
    /// Its source strings, in order.
    pub pieces: Vec<SourceString<'a>>,
}

/// What a notebook holds for the linter.
#[derive(Debug)]
pub struct Document<'a> {
    /// The code cells, in order.
    pub code_cells: Vec<CodeCell<'a>>,
    /// Whether the notebook's kernel runs Python (true when the metadata does not say).
    pub is_python: bool,
}

/// Why a file is not a notebook that can be read, and where in its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// What is wrong, in one line.
    pub message: String,
    /// The byte offset in the file's text.
    pub offset: usize,
}

#[derive(Deserialize)]
struct TopLevel<'a> {
    #[serde(borrow, default)]
    cells: Option<&'a RawValue>,
    #[serde(borrow, default)]
    worksheets: Option<&'a RawValue>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
    #[serde(borrow, default)]
    nbformat: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Worksheet<'a> {
    #[serde(borrow, default)]
    cells: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Cell<'a> {
    #[serde(borrow, default)]
    cell_type: Option<&'a RawValue>,
    /// nbformat 4, and the non-code cells of 3.
    #[serde(borrow, default)]
    source: Option<&'a RawValue>,
    /// The code of a code cell in nbformat 3 and 2.
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    /// nbformat 3: the cell's language.
    #[serde(borrow, default)]
    language: Option<&'a RawValue>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

/// The parts of the notebook's metadata that name its language. Read leniently: a value of another
/// shape says nothing.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Metadata<'a> {
    #[serde(borrow)]
    language_info: Option<&'a RawValue>,
    #[serde(borrow)]
    kernelspec: Option<&'a RawValue>,
    #[serde(borrow)]
    vscode: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct LanguageInfo {
    name: Option<String>,
}

#[derive(Deserialize)]
struct KernelSpec {
    language: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VsCode {
    language_id: Option<String>,
}

/// Reads `text`, a notebook's JSON (a UTF-8 byte order mark before it is allowed).
pub fn parse(text: &str) -> Result<Document<'_>, ReadError> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let base = text.len() - body.len();
    let first = body.trim_start_matches([' ', '\t', '\n', '\r']).bytes().next();
    if first != Some(b'{') {
        return Err(match serde_json::from_str::<IgnoredAny>(body) {
            Err(error) => json_error(body, base, &error),
            Ok(_) => {
                ReadError { message: "not a Jupyter notebook: the file is JSON but not an object".into(), offset: base }
            }
        });
    }
    let top: TopLevel<'_> = serde_json::from_str(body).map_err(|error| json_error(body, base, &error))?;
    let is_python = top.metadata.is_none_or(|metadata| notebook_is_python(metadata.get()));
    let mut cells: Vec<&RawValue> = Vec::new();
    if let Some(list) = top.cells {
        cells = list_of(list).ok_or_else(|| ReadError {
            message: "not a Jupyter notebook: `cells` is not a list".into(),
            offset: offset_of(text, list.get()),
        })?;
    } else if let Some(worksheets) = top.worksheets {
        let not_a_list = |value: &RawValue| ReadError {
            message: "not a Jupyter notebook: `worksheets` is not a list of objects with a `cells` list".into(),
            offset: offset_of(text, value.get()),
        };
        for worksheet in list_of(worksheets).ok_or_else(|| not_a_list(worksheets))? {
            let sheet: Worksheet<'_> = serde_json::from_str(worksheet.get()).map_err(|_| not_a_list(worksheet))?;
            if let Some(list) = sheet.cells {
                cells.extend(list_of(list).ok_or_else(|| not_a_list(list))?);
            }
        }
    } else {
        let version = top.nbformat.and_then(|value| serde_json::from_str::<u64>(value.get()).ok());
        let message = match version {
            Some(version) if version < 2 => {
                format!("nbformat {version} notebooks are not supported: open and save it in Jupyter to convert it")
            }
            _ => "not a Jupyter notebook: no `cells` list".to_string(),
        };
        return Err(ReadError { message, offset: base });
    }
    let mut code_cells = Vec::new();
    for (index, cell) in cells.into_iter().enumerate() {
        if let Some(code) = code_cell(text, index + 1, cell)? {
            code_cells.push(code);
        }
    }
    Ok(Document { code_cells, is_python })
}

/// The elements of a JSON list, or `None` when the value is not a list.
fn list_of(value: &RawValue) -> Option<Vec<&RawValue>> {
    if !value.get().starts_with('[') {
        return None;
    }
    serde_json::from_str(value.get()).ok()
}

/// The code cell `number`, or `None` for another kind of cell or a code cell in another language.
fn code_cell<'a>(text: &'a str, number: usize, value: &'a RawValue) -> Result<Option<CodeCell<'a>>, ReadError> {
    let at = offset_of(text, value.get());
    let invalid = |what: &str| ReadError { message: format!("notebook cell {number} {what}"), offset: at };
    if !value.get().starts_with('{') {
        return Err(invalid("is not a JSON object"));
    }
    let cell: Cell<'_> =
        serde_json::from_str(value.get()).map_err(|error| invalid(&format!("is not valid: {}", reason(&error))))?;
    let cell_type = cell.cell_type.and_then(|kind| serde_json::from_str::<String>(kind.get()).ok());
    let Some(cell_type) = cell_type else {
        return Err(invalid("has no `cell_type` string"));
    };
    if cell_type != "code" {
        return Ok(None);
    }
    let language = cell.language.and_then(|language| serde_json::from_str::<String>(language.get()).ok());
    let language = language.or_else(|| cell.metadata.and_then(|metadata| vscode_language(metadata.get())));
    if language.is_some_and(|language| !is_python(&language)) {
        return Ok(None);
    }
    // nbformat 4 names the code `source`; 3 and 2 name it `input`.
    let Some(source) = cell.source.or(cell.input) else {
        return Ok(Some(CodeCell { number, offset: at, pieces: Vec::new() }));
    };
    let source_at = offset_of(text, source.get());
    let not_text = || ReadError {
        message: format!("notebook cell {number}: `source` is not a string or a list of strings"),
        offset: source_at,
    };
    let strings = if source.get().starts_with('"') { vec![source] } else { list_of(source).ok_or_else(not_text)? };
    let mut pieces = Vec::with_capacity(strings.len());
    for string in strings {
        let raw = string.get();
        let offset = offset_of(text, raw);
        let decoded = serde_json::from_str::<String>(raw).map_err(|_| ReadError {
            message: format!("notebook cell {number}: `source` is not a string or a list of strings"),
            offset,
        })?;
        // A JSON string starts and ends with a quote, one byte each.
        let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
        pieces.push(SourceString { text: decoded, raw: inner, offset: offset + 1 });
    }
    Ok(Some(CodeCell { number, offset: source_at, pieces }))
}

/// Whether a language name is Python's (`python`, `python3`, `ipython`).
fn is_python(language: &str) -> bool {
    let language = language.trim().to_ascii_lowercase();
    language.starts_with("python") || language.starts_with("ipython")
}

/// Whether the notebook's metadata leaves its kernel's language Python: `language_info.name` says it,
/// else `kernelspec.language`; a notebook that names neither is taken to be Python.
fn notebook_is_python(metadata: &str) -> bool {
    let Ok(metadata) = serde_json::from_str::<Metadata<'_>>(metadata) else { return true };
    let info = metadata.language_info.and_then(|info| serde_json::from_str::<LanguageInfo>(info.get()).ok());
    let spec = metadata.kernelspec.and_then(|spec| serde_json::from_str::<KernelSpec>(spec.get()).ok());
    match info.and_then(|info| info.name).or_else(|| spec.and_then(|spec| spec.language)) {
        Some(language) => is_python(&language),
        None => true,
    }
}

/// The language VS Code records for a cell (`metadata.vscode.languageId`), if any.
fn vscode_language(metadata: &str) -> Option<String> {
    if !metadata.contains("languageId") {
        return None;
    }
    let metadata = serde_json::from_str::<Metadata<'_>>(metadata).ok()?;
    serde_json::from_str::<VsCode>(metadata.vscode?.get()).ok()?.language_id
}

/// Where `part`, a slice of `text` that serde_json borrowed, starts in `text`.
fn offset_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    if offset <= text.len() { offset } else { 0 }
}

/// serde_json's message without its ` at line L column C` suffix.
fn reason(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    message.strip_suffix(&suffix).map_or(message.clone(), str::to_string)
}

/// The error serde_json reports for `body` (the text after any byte order mark, which is `base` bytes
/// long), at its position.
fn json_error(body: &str, base: usize, error: &serde_json::Error) -> ReadError {
    let message = if error.is_data() {
        format!("not a Jupyter notebook: {}", reason(error))
    } else {
        format!("notebook is not valid JSON: {}", reason(error))
    };
    ReadError { message, offset: base + offset_at(body, error.line(), error.column()) }
}

/// The byte offset of serde_json's 1-based `line` and `column` (which count `\n` line breaks and bytes),
/// kept within the text and on a character boundary.
fn offset_at(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match memchr::memchr(b'\n', &text.as_bytes()[start..]) {
            Some(index) => start += index + 1,
            None => break,
        }
    }
    let end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |index| start + index);
    let mut offset = (start + column.saturating_sub(1)).min(end);
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(document: &Document<'_>) -> Vec<(usize, String)> {
        document
            .code_cells
            .iter()
            .map(|cell| (cell.number, cell.pieces.iter().map(|piece| piece.text.as_str()).collect()))
            .collect()
    }

    #[test]
    fn reads_code_cells_of_both_layouts() {
        let text = r#"{"cells": [
            {"cell_type": "markdown", "source": ["n_jobs=-1"]},
            {"cell_type": "code", "source": ["import os\n", "x = \"\u00e9\""], "outputs": [[[[]]]]},
            {"cell_type": "code", "source": "y = 1"},
            {"cell_type": "raw", "source": 5}
        ], "nbformat": 4}"#;
        let document = parse(text).unwrap();
        assert_eq!(texts(&document), vec![(2, "import os\nx = \"é\"".to_string()), (3, "y = 1".to_string())]);
        let piece = &document.code_cells[0].pieces[1];
        assert_eq!(piece.raw, r#"x = \"\u00e9\""#);
        assert_eq!(&text[piece.offset..piece.offset + piece.raw.len()], piece.raw);
    }

    #[test]
    fn reads_worksheets_of_nbformat_3() {
        let text = r#"{"worksheets": [{"cells": [
            {"cell_type": "heading", "source": ["Title"], "level": 1},
            {"cell_type": "code", "input": ["a = 1\n"], "language": "python"},
            {"cell_type": "code", "input": ["%%R\n"], "language": "r"}
        ]}], "nbformat": 3}"#;
        assert_eq!(texts(&parse(text).unwrap()), vec![(2, "a = 1\n".to_string())]);
    }

    #[test]
    fn other_languages_are_not_python() {
        let r =
            r#"{"cells": [{"cell_type": "code", "source": "x <- 1"}], "metadata": {"language_info": {"name": "R"}}}"#;
        assert!(!parse(r).unwrap().is_python);
        let python = r#"{"cells": [], "metadata": {"kernelspec": {"language": "python", "name": "python3"}}}"#;
        assert!(parse(python).unwrap().is_python);
        let odd = r#"{"cells": [], "metadata": {"language_info": 5}}"#;
        assert!(parse(odd).unwrap().is_python);
        let sql = r#"{"cells": [{"cell_type": "code", "source": "select 1", "metadata": {"vscode": {"languageId": "sql"}}}]}"#;
        assert!(parse(sql).unwrap().code_cells.is_empty());
    }

    #[test]
    fn errors_say_what_and_where() {
        let error = parse("{\"cells\": [\n  {\"cell_type\": \"code\" \"source\": []}\n]}").unwrap_err();
        assert_eq!(error.message, "notebook is not valid JSON: expected `,` or `}`");
        assert_eq!(error.offset, "{\"cells\": [\n  {\"cell_type\": \"code\" ".len());
        assert_eq!(parse("[1, 2]").unwrap_err().message, "not a Jupyter notebook: the file is JSON but not an object");
        assert_eq!(parse("{\"nbformat\": 4}").unwrap_err().message, "not a Jupyter notebook: no `cells` list");
        assert_eq!(parse("{\"cells\": {}}").unwrap_err().message, "not a Jupyter notebook: `cells` is not a list");
        let text = "{\"cells\": [{\"cell_type\": \"code\", \"source\": [\"a\", 7]}]}";
        let error = parse(text).unwrap_err();
        assert_eq!(error.message, "notebook cell 1: `source` is not a string or a list of strings");
        assert_eq!(&text[error.offset..error.offset + 1], "7");
        assert_eq!(parse("{\"cells\": [3]}").unwrap_err().message, "notebook cell 1 is not a JSON object");
        assert_eq!(parse("{\"cells\": [{}]}").unwrap_err().message, "notebook cell 1 has no `cell_type` string");
        assert!(parse("{\"nbformat\": 1}").unwrap_err().message.starts_with("nbformat 1 notebooks are not supported"));
        assert!(parse("").unwrap_err().message.starts_with("notebook is not valid JSON: EOF"));
    }

    #[test]
    fn deep_nesting_costs_no_stack() {
        let deep = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
        let text = format!("{{\"cells\": [], \"metadata\": {{\"x\": {deep}}}}}");
        assert!(parse(&text).unwrap().code_cells.is_empty());
        let text = format!("{{\"cells\": [{{\"cell_type\": \"code\", \"source\": {deep}}}]}}");
        assert!(parse(&text).is_err());
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn a_byte_order_mark_is_allowed() {
        let text = "\u{feff}{\"cells\": [{\"cell_type\": \"code\", \"source\": \"x\"}]}";
        let document = parse(text).unwrap();
        let piece = &document.code_cells[0].pieces[0];
        assert_eq!(&text[piece.offset..piece.offset + 1], "x");
    }
}
