//! `capslint server` driven over its standard input and output as an editor drives it: the findings of
//! an open document are those `capslint check` reports on the same file (codes and ranges), an edit
//! that fixes a finding clears it, code actions apply what `check --fix` and `--add-noqa` would write,
//! notebooks are linted in their cells, a change to one open module re-lints the modules that import it,
//! and nothing a client sends (malformed messages, unknown methods, a file that does not parse, a
//! disappearing client) stops it otherwise than the protocol says.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// Capabilities of a client that takes pushed diagnostics and counts characters as Unicode scalar values
/// (the unit of `check`'s columns).
fn push_client() -> Value {
    json!({"general": {"positionEncodings": ["utf-32"]}})
}

/// A project directory that is a repository's top (the server's project root).
fn repository(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = project(files);
    std::fs::create_dir(dir.path().join(".git")).expect("a .git directory");
    dir
}

/// `text` with `edits` (LSP text edits in Unicode scalar values) applied.
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |point: &Value| {
        let line = point["line"].as_u64().unwrap() as usize;
        let character = point["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let rest = &text[start..];
        start + rest.char_indices().nth(character).map_or(rest.len(), |(index, _)| index)
    };
    let mut edits: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|edit| (offset(&edit["range"]["start"]), offset(&edit["range"]["end"]), edit["newText"].as_str().unwrap()))
        .collect();
    edits.sort_by_key(|(start, end, _)| std::cmp::Reverse((*start, *end)));
    let mut out = text.to_string();
    for (start, end, new) in edits {
        out.replace_range(start..end, new);
    }
    out
}

fn sorted<T: Ord>(mut list: Vec<T>) -> Vec<T> {
    list.sort();
    list
}

#[test]
fn findings_of_open_documents_are_those_check_reports() {
    let root = root();
    let files = [
        "fixtures/python/CAP101.py",
        "fixtures/python/CAP102.py",
        "fixtures/python/CAP002.py",
        "fixtures/python/CAP001.py",
        "fixtures/fix/python_thread_counts.py",
        "fixtures/k8s/CAP203.yaml",
        "fixtures/k8s/CAP001.yaml",
    ];
    let (mut client, _) = LspClient::initialized(&root, push_client(), json!({}));
    for file in files {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let language = if file.ends_with(".py") { "python" } else { "yaml" };
        let uri = client.open(&path, language, &text);
        let diagnostics = client.diagnostics(&uri, |_| true);
        let served = sorted(diagnostics.iter().map(code_and_range).collect());
        let checked = sorted(check_json(&root, &[Path::new(file)]).into_iter().map(|(_, finding)| finding).collect());
        assert!(!checked.is_empty(), "{file} has findings");
        assert_eq!(served, checked, "{file}");
        for diagnostic in &diagnostics {
            let code = diagnostic["code"].as_str().unwrap();
            assert_eq!(diagnostic["source"], "capslint");
            assert!(diagnostic["codeDescription"]["href"].as_str().unwrap().ends_with(&format!("/{code}.md")));
            assert_eq!(diagnostic["tags"] == json!([1]), code == "CAP002", "{file}: {diagnostic}");
        }
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
        assert_eq!(client.diagnostics(&uri, |_| true), Vec::<Value>::new(), "closing clears {file}");
    }
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_kustomization_shows_the_findings_it_renders_in_files_that_are_not_open() {
    let root = root();
    let file = "fixtures/k8s/kustomize/overlays/prod/kustomization.yaml";
    let (mut client, _) = LspClient::initialized(&root, push_client(), json!({}));
    let path = root.join(file);
    client.open(&path, "yaml", &std::fs::read_to_string(&path).unwrap());
    let checked = check_json_by_file(&root, &[Path::new(file)]);
    let files: std::collections::BTreeSet<&str> = checked.iter().map(|(name, _, _)| name.as_str()).collect();
    assert!(files.len() > 1, "the overlay's findings are in its bases: {files:?}");
    for name in files {
        let uri = file_uri(&root.join(name));
        let served = sorted(client.diagnostics(&uri, |_| true).iter().map(code_and_range).collect());
        let expected: Vec<CodeAndRange> = sorted(
            checked.iter().filter(|(other, _, _)| other == name).map(|(_, _, finding)| finding.clone()).collect(),
        );
        assert_eq!(served, expected, "{name}");
    }
    // Closing the overlay clears what it reported in its bases.
    client.notify("textDocument/didClose", json!({"textDocument": {"uri": file_uri(&path)}}));
    let names: std::collections::BTreeSet<&str> = checked.iter().map(|(name, _, _)| name.as_str()).collect();
    for name in names {
        let uri = file_uri(&root.join(name));
        assert_eq!(client.diagnostics(&uri, |list| list.is_empty()), Vec::<Value>::new(), "{name}");
    }
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn positions_count_utf16_units_by_default_and_bytes_when_the_client_asks() {
    let text = "from joblib import Parallel\nlabel = \"é😀\"; Parallel(n_jobs=-1)\n";
    let dir = repository(&[("emoji.py", text)]);
    let line = text.lines().nth(1).unwrap();
    let before = &line[..line.find("n_jobs").unwrap()];
    let checked = check_json(dir.path(), &[Path::new("emoji.py")]);
    let (_, (code, start, _)) = checked.iter().find(|(_, (code, _, _))| code == "CAP101").expect("CAP101").clone();
    assert_eq!(start, (1, before.chars().count() as u64), "check counts characters");
    for (encodings, expected) in [
        (json!(["utf-16"]), before.encode_utf16().count()),
        (json!(["utf-8", "utf-16"]), before.len()),
        (json!(["utf-32"]), before.chars().count()),
    ] {
        let (mut client, _) =
            LspClient::initialized(dir.path(), json!({"general": {"positionEncodings": encodings}}), json!({}));
        let uri = client.open(&dir.path().join("emoji.py"), "python", text);
        let diagnostics = client.diagnostics(&uri, |list| !list.is_empty());
        let served = diagnostics.iter().find(|diagnostic| diagnostic["code"] == code.as_str()).expect("served");
        assert_eq!(served["range"]["start"], json!({"line": 1, "character": expected}), "{encodings}");
        assert_eq!(client.shutdown(), Some(0));
    }
}

#[test]
fn an_edit_that_fixes_the_finding_clears_it_and_hover_explains_it() {
    let text = "from joblib import Parallel, delayed\n\nParallel(n_jobs=-1)(delayed(abs)(x) for x in range(3))\n";
    let dir = repository(&[("train.py", text)]);
    let path = dir.path().join("train.py");
    // UTF-16, the protocol's default: the text is ASCII, so the columns are the same.
    let (mut client, result) = LspClient::initialized(dir.path(), json!({}), json!({}));
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-16");
    let uri = client.open(&path, "python", text);
    // Asked before the document is linted: answered once it is.
    let column = text.lines().nth(2).unwrap().find("n_jobs").unwrap();
    let early = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": column}}),
    );
    assert!(early["contents"]["value"].as_str().is_some_and(|value| value.contains("CAP101")), "{early}");
    let diagnostics = client.diagnostics(&uri, |list| !list.is_empty());
    let codes: Vec<&str> = diagnostics.iter().filter_map(|diagnostic| diagnostic["code"].as_str()).collect();
    assert!(codes.contains(&"CAP101"), "{diagnostics:?}");
    let finding = diagnostics.iter().find(|diagnostic| diagnostic["code"] == "CAP101").unwrap().clone();

    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": finding["range"]["start"]}));
    let markdown = hover["contents"]["value"].as_str().unwrap();
    assert!(markdown.contains("**CAP101** `n-jobs-all-cores`"), "{markdown}");
    assert!(markdown.contains("rules/CAP101.md"), "{markdown}");
    let nothing = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}));
    assert_eq!(nothing, Value::Null);

    // `-1` becomes `1`, incrementally.
    let minus = text.lines().nth(2).unwrap().find("-1").unwrap() as u64;
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{
            "range": {"start": {"line": 2, "character": minus}, "end": {"line": 2, "character": minus + 1}},
            "text": "",
        }]}),
    );
    let after = client.diagnostics(&uri, |list| list.iter().all(|diagnostic| diagnostic["code"] != "CAP101"));
    assert!(after.iter().all(|diagnostic| diagnostic["code"] != "CAP101"), "{after:?}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn fix_all_writes_what_check_fix_writes_and_a_suppression_silences_its_finding() {
    let text = std::fs::read_to_string(root().join("fixtures/fix/python_thread_counts.py")).unwrap();
    let dir = repository(&[("model.py", &text)]);
    let path = dir.path().join("model.py");
    let (mut client, _) = LspClient::initialized(dir.path(), push_client(), json!({}));
    let uri = client.open(&path, "python", &text);
    // Asked for at once, as an editor asks on save: the text is fixed as it is, linted or not.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
    );
    let fix_all = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|action| action["kind"] == "source.fixAll.capslint")
        .unwrap_or_else(|| panic!("no fix-all action: {actions}"));
    let edits = fix_all["edit"]["changes"][&uri].as_array().unwrap();
    let fixed = apply_edits(&text, edits);

    let expected_dir = repository(&[("model.py", &text)]);
    let mut fix = capslint(expected_dir.path());
    fix.args(["check", "--fix", "--exit-zero", "model.py"]);
    let (code, _, stderr) = run(&mut fix);
    assert_eq!(code, 0, "{stderr}");
    let expected = std::fs::read_to_string(expected_dir.path().join("model.py")).unwrap();
    assert_ne!(expected, text, "check --fix changes the fixture");
    assert_eq!(fixed, expected);
    let diagnostics = client.diagnostics(&uri, |_| true);

    // A suppression comment on the first finding's line.
    let first = diagnostics.iter().find(|diagnostic| diagnostic["code"] == "CAP102").expect("a CAP102 finding");
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": first["range"], "context": {"diagnostics": [first]}}),
    );
    let suppress = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|action| action["title"].as_str().unwrap().contains("# noqa: CAP102"))
        .unwrap_or_else(|| panic!("no suppression: {actions}"));
    assert_eq!(suppress["kind"], "quickfix");
    let suppressed = apply_edits(&text, suppress["edit"]["changes"][&uri].as_array().unwrap());
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": suppressed}]}),
    );
    let line = first["range"]["start"]["line"].clone();
    let after = client.diagnostics(&uri, |list| list.len() < diagnostics.len());
    assert!(
        !after.iter().any(|diagnostic| diagnostic["code"] == "CAP102" && diagnostic["range"]["start"]["line"] == line),
        "{after:?}"
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// A notebook's cells as `notebookDocument/didOpen` sends them: cell URIs, kinds, text documents.
fn notebook_open_params(path: &Path) -> (Value, Vec<String>) {
    let notebook: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let uri = file_uri(path);
    let mut cells = Vec::new();
    let mut documents = Vec::new();
    let mut uris = Vec::new();
    for (index, cell) in notebook["cells"].as_array().unwrap().iter().enumerate() {
        let source = match &cell["source"] {
            Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect::<String>(),
            Value::String(text) => text.clone(),
            _ => String::new(),
        };
        let code = cell["cell_type"] == "code";
        let cell_uri = format!("vscode-notebook-cell{}#cell{index}", &uri["file".len()..]);
        cells.push(json!({"kind": if code { 2 } else { 1 }, "document": cell_uri}));
        documents.push(json!({"uri": cell_uri, "languageId": if code { "python" } else { "markdown" }, "version": 1, "text": source}));
        uris.push(cell_uri);
    }
    let params = json!({
        "notebookDocument": {"uri": uri, "notebookType": "jupyter-notebook", "version": 1,
                             "metadata": notebook["metadata"], "cells": cells},
        "cellTextDocuments": documents,
    });
    (params, uris)
}

#[test]
fn a_notebook_is_linted_as_check_lints_it_with_findings_in_their_cells() {
    let root = root();
    let file = "fixtures/notebooks/train_churn.ipynb";
    let (mut client, result) = LspClient::initialized(&root, push_client(), json!({}));
    let selector = &result["capabilities"]["notebookDocumentSync"]["notebookSelector"];
    assert_eq!(selector[0]["notebook"], "jupyter-notebook");
    assert_eq!(selector[1]["notebook"]["pattern"], "**/*.ipynb");
    let (params, cells) = notebook_open_params(&root.join(file));
    client.notify("notebookDocument/didOpen", params);
    let mut served = Vec::new();
    for (index, cell) in cells.iter().enumerate() {
        for diagnostic in client.diagnostics(cell, |_| true) {
            served.push((Some(index as u64 + 1), code_and_range(&diagnostic)));
        }
    }
    let checked = check_json(&root, &[Path::new(file)]);
    assert!(!checked.is_empty(), "{file} has findings");
    assert_eq!(sorted(served), sorted(checked));
    // A suppression for a finding in a cell edits that cell.
    let (cell, (_, start, end)) = sorted(check_json(&root, &[Path::new(file)])).remove(0);
    let cell_uri = &cells[cell.unwrap() as usize - 1];
    let range = json!({"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}});
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": cell_uri}, "range": range, "context": {"diagnostics": []}}),
    );
    let noqa = actions.as_array().unwrap().iter().find(|action| action["title"].as_str().unwrap().contains("# noqa"));
    let noqa = noqa.unwrap_or_else(|| panic!("no suppression in the cell: {actions}"));
    assert!(noqa["edit"]["changes"].get(cell_uri).is_some(), "{noqa}");

    // The cell's text replaced, and a new cell with a finding inserted after it.
    let new_cell = format!("vscode-notebook-cell{}#added", &file_uri(&root.join(file))["file".len()..]);
    let inserted = "from joblib import Parallel\nParallel(n_jobs=-1)\n";
    client.notify(
        "notebookDocument/didChange",
        json!({
            "notebookDocument": {"uri": file_uri(&root.join(file)), "version": 2},
            "change": {"cells": {
                "structure": {
                    "array": {"start": cell.unwrap(), "deleteCount": 0, "cells": [{"kind": 2, "document": new_cell}]},
                    "didOpen": [{"uri": new_cell, "languageId": "python", "version": 1, "text": inserted}],
                },
                "textContent": [{"document": {"uri": cell_uri, "version": 2}, "changes": [{"text": "x = 1\n"}]}],
            }},
        }),
    );
    assert_eq!(client.diagnostics(cell_uri, |list| list.is_empty()), Vec::<Value>::new());
    let added = client.diagnostics(&new_cell, |list| !list.is_empty());
    assert!(added.iter().any(|diagnostic| diagnostic["code"] == "CAP101"), "{added:?}");
    assert_eq!(added[0]["range"]["start"]["line"], 1, "placed in the new cell: {added:?}");
    assert_eq!(client.shutdown(), Some(0));
}

/// A settings module whose constant means every core, for the cross-file tests.
const SETTINGS_PY: &str = "N_JOBS = -1\n";

/// A module that passes [`SETTINGS_PY`]'s constant to joblib: CAP101 while it is -1.
const TRAIN_PY: &str = "from joblib import Parallel, delayed\n\nfrom settings import N_JOBS\n\n\
                        Parallel(n_jobs=N_JOBS)(delayed(abs)(x) for x in range(3))\n";

#[test]
fn editing_an_open_module_relints_the_open_modules_that_import_it() {
    let (settings, train) = (SETTINGS_PY, TRAIN_PY);
    let dir = repository(&[("settings.py", settings), ("train.py", train)]);
    let (mut client, _) = LspClient::initialized(dir.path(), push_client(), json!({}));
    let settings_uri = client.open(&dir.path().join("settings.py"), "python", settings);
    let train_uri = client.open(&dir.path().join("train.py"), "python", train);
    let before = client.diagnostics(&train_uri, |list| list.iter().any(|diagnostic| diagnostic["code"] == "CAP101"));
    assert!(!before.is_empty());
    // Unsaved: the file on disk still says -1.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": settings_uri, "version": 2}, "contentChanges": [{"text": "N_JOBS = 1\n"}]}),
    );
    let after = client.diagnostics(&train_uri, |list| list.iter().all(|diagnostic| diagnostic["code"] != "CAP101"));
    assert!(after.iter().all(|diagnostic| diagnostic["code"] != "CAP101"), "{after:?}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_pulling_client_is_asked_to_refresh_when_a_change_alters_another_documents_findings() {
    let (settings, train) = (SETTINGS_PY, TRAIN_PY);
    let dir = repository(&[("settings.py", settings), ("train.py", train)]);
    let capabilities =
        json!({"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": true}}});
    let (mut client, _) = LspClient::initialized(dir.path(), capabilities, json!({}));
    let settings_uri = client.open(&dir.path().join("settings.py"), "python", settings);
    let train_uri = client.open(&dir.path().join("train.py"), "python", train);
    let pull = |client: &mut LspClient, uri: &str| {
        let report = client.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}}));
        report["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|item| item["code"].as_str().map(str::to_string))
            .collect::<Vec<_>>()
    };
    assert!(pull(&mut client, &train_uri).contains(&"CAP101".to_string()));
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": settings_uri, "version": 2}, "contentChanges": [{"text": "N_JOBS = 1\n"}]}),
    );
    // The editor pulls the document it changed; the server asks it to pull the others again.
    pull(&mut client, &settings_uri);
    let refresh = client.wait_for(|message| message["method"] == "workspace/diagnostic/refresh").expect("a refresh");
    client.send(&json!({"jsonrpc": "2.0", "id": refresh["id"], "result": null}));
    assert!(!pull(&mut client, &train_uri).contains(&"CAP101".to_string()));
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn pulled_diagnostics_wait_for_the_lint_of_the_current_version() {
    let text = "import os\nfrom joblib import Parallel\nParallel(n_jobs=os.cpu_count())\n";
    let dir = repository(&[("job.py", text)]);
    let capabilities =
        json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}, "textDocument": {"diagnostic": {}}});
    let (mut client, result) = LspClient::initialized(dir.path(), capabilities, json!({}));
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(result["capabilities"]["diagnosticProvider"]["interFileDependencies"], true);
    let uri = client.open(&dir.path().join("job.py"), "python", text);
    let report = client.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}}));
    assert_eq!(report["kind"], "full");
    let served = sorted(report["items"].as_array().unwrap().iter().map(code_and_range).collect());
    let checked =
        sorted(check_json(dir.path(), &[Path::new("job.py")]).into_iter().map(|(_, finding)| finding).collect());
    assert!(!checked.is_empty());
    assert_eq!(served, checked);
    let workspace = client.request("workspace/diagnostic", json!({"previousResultIds": []}));
    assert_eq!(workspace["items"][0]["uri"], uri.as_str());
    assert_eq!(workspace["items"][0]["items"], report["items"]);
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_changed_configuration_is_read_again_and_a_waiting_request_can_be_canceled() {
    let text = "import lightgbm as lgb\n\nmodel = lgb.LGBMClassifier()\n";
    let dir = repository(&[("model.py", text)]);
    let (mut client, _) = LspClient::initialized(dir.path(), push_client(), json!({}));
    let uri = client.open(&dir.path().join("model.py"), "python", text);
    let has_cap102 = |list: &[Value]| list.iter().any(|diagnostic| diagnostic["code"] == "CAP102");
    client.diagnostics(&uri, has_cap102);
    // Written and saved: read again because the file changed on disk.
    write(dir.path(), "capslint.toml", "ignore = [\"CAP102\"]\n");
    client.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}}));
    client.diagnostics(&uri, |list| !has_cap102(list));
    // Reported by the editor's file watcher.
    write(dir.path(), "capslint.toml", "# every rule\n");
    let config = file_uri(&dir.path().join("capslint.toml"));
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": config, "type": 2}]}));
    client.diagnostics(&uri, has_cap102);
    assert_eq!(client.shutdown(), Some(0));

    // A pulled request that waits for a lint is answered with `RequestCanceled` when canceled.
    let big: String = (0..3000).map(|n| format!("x_{n} = {n}\n")).collect::<String>() + text;
    let capabilities = json!({"textDocument": {"diagnostic": {}}});
    let (mut client, _) = LspClient::initialized(dir.path(), capabilities, json!({}));
    let uri = client.open(&dir.path().join("model.py"), "python", &big);
    let id = client.send_request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}}));
    client.notify("$/cancelRequest", json!({"id": id}));
    let response = client.wait_for(|message| message["id"] == id).expect("a response");
    assert_eq!(response["error"]["code"], -32800, "{response}");
    // The next request is answered once the lint is done.
    let report = client.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}}));
    assert_eq!(report["kind"], "full");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn malformed_messages_unknown_methods_and_broken_files_do_not_stop_the_server() {
    let broken = "from joblib import Parallel\ndef f(:\n    Parallel(n_jobs=-1)\n";
    let dir = repository(&[("broken.py", broken)]);
    let (mut client, _) = LspClient::initialized(dir.path(), push_client(), json!({}));
    // A body that is not JSON, and one that is not a message.
    client.write_raw(b"Content-Length: 9\r\n\r\n{not json");
    client.write_raw(b"Content-Length: 6\r\n\r\n[1, 2]");
    let unknown = client.request_message("capslint/unknown", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let invalid = client.request_message("textDocument/hover", json!({"bogus": true}));
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    let command = client.request_message("workspace/executeCommand", json!({"command": "capslint.nothing"}));
    assert_eq!(command["error"]["code"], -32602, "{command}");
    // A notification for a document that is not open, and one with parameters of the wrong shape.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///nowhere.py", "version": 3}, "contentChanges": []}),
    );
    client.notify("textDocument/didOpen", json!({"textDocument": 7}));
    let path = dir.path().join("broken.py");
    let uri = client.open(&path, "python", broken);
    let diagnostics = client.diagnostics(&uri, |list| !list.is_empty());
    assert!(diagnostics.iter().any(|diagnostic| diagnostic["code"] == "CAP001"), "{diagnostics:?}");
    let settings =
        client.request("workspace/executeCommand", json!({"command": "capslint.showSettings", "arguments": [uri]}));
    assert!(settings["rules"].as_array().unwrap().contains(&json!("CAP101")), "{settings}");
    assert!(settings["settings"].as_str().unwrap().contains("select"), "{settings}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn the_server_exits_when_its_client_disappears_or_exits_without_shutdown() {
    let dir = repository(&[("a.py", "import os\n")]);
    let (mut client, _) = LspClient::initialized(dir.path(), push_client(), json!({}));
    client.open(&dir.path().join("a.py"), "python", "from joblib import Parallel\nParallel(n_jobs=-1)\n");
    assert_eq!(client.close_input(), Some(0), "end of input: a clean exit");

    let (mut client, _) = LspClient::initialized(dir.path(), push_client(), json!({}));
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_exit(), Some(1), "exit without shutdown");

    // A client that sends its documents without `initialized` is served all the same.
    let mut client = LspClient::start(dir.path());
    client.request("initialize", json!({"capabilities": {}}));
    let uri = client.open(&dir.path().join("a.py"), "python", "from joblib import Parallel\nParallel(n_jobs=-1)\n");
    assert!(!client.diagnostics(&uri, |_| true).is_empty());
    assert_eq!(client.shutdown(), Some(0));

    // Input that ends before initialization.
    let mut client = LspClient::start(dir.path());
    assert_eq!(client.close_input(), Some(0));

    // After shutdown, requests are refused until exit.
    let (mut client, _) = LspClient::initialized(dir.path(), push_client(), json!({}));
    assert_eq!(client.request("shutdown", Value::Null), Value::Null);
    let refused = client.request_message("textDocument/hover", json!({}));
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_exit(), Some(0));
}
