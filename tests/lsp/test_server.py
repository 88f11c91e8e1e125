"""`capslint server` driven by pytest-lsp (pygls's client): initialization, pushed diagnostics of a
Python file and of a notebook's cells, code actions (a quick fix, a suppression, fix all), hover.

Run by `crates/capslint/tests/it/server_clients.rs` with `CAPSLINT_BINARY` set to the binary under test.
"""

import json
import os
import pathlib
import shutil

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

CAPSLINT = os.environ.get("CAPSLINT_BINARY", "capslint")
ROOT = pathlib.Path(__file__).resolve().parents[2]
TRAIN = """from joblib import Parallel, delayed
import lightgbm as lgb

Parallel(n_jobs=-1)(delayed(abs)(x) for x in range(3))
model = lgb.LGBMClassifier()
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[CAPSLINT, "server"]))
async def client(lsp_client: LanguageClient):
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
            notebook_document=types.NotebookDocumentClientCapabilities(
                synchronization=types.NotebookDocumentSyncClientCapabilities()
            ),
        )
    )
    result = await lsp_client.initialize_session(params)
    assert result.server_info.name == "capslint"
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def repository(tmp_path):
    (tmp_path / ".git").mkdir()
    return tmp_path


async def open_and_wait(client, path, text, language="python"):
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
        )
    )
    while uri not in client.diagnostics:
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


async def test_diagnostics_name_the_rule_and_its_page(client, repository):
    path = repository / "train.py"
    path.write_text(TRAIN)
    uri = await open_and_wait(client, path, TRAIN)
    codes = sorted(diagnostic.code for diagnostic in client.diagnostics[uri])
    assert "CAP101" in codes and "CAP102" in codes
    for diagnostic in client.diagnostics[uri]:
        assert diagnostic.source == "capslint"
        assert diagnostic.code_description.href.endswith(f"/rules/{diagnostic.code}.md")
    cap101 = next(d for d in client.diagnostics[uri] if d.code == "CAP101")
    assert cap101.range.start.line == 3
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=cap101.range.start)
    )
    assert "n-jobs-all-cores" in hover.contents.value


async def test_code_actions_fix_and_suppress(client, repository):
    path = repository / "train.py"
    path.write_text(TRAIN)
    uri = await open_and_wait(client, path, TRAIN)
    cap101 = next(d for d in client.diagnostics[uri] if d.code == "CAP101")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=cap101.range,
            context=types.CodeActionContext(diagnostics=[cap101]),
        )
    )
    titles = [action.title for action in actions]
    assert any("# noqa: CAP101" in title for title in titles), titles
    fix_all = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    # The only fix of CAP101 here is unsafe: "fix all" applies safe fixes, so it may offer nothing, but
    # never a quick fix.
    assert all(action.kind.startswith("source.fixAll") for action in fix_all)


async def test_a_notebook_is_linted_in_its_cells(client, repository):
    source = ROOT / "fixtures" / "notebooks" / "train_churn.ipynb"
    path = repository / "train_churn.ipynb"
    shutil.copy(source, path)
    notebook = json.loads(source.read_text())
    cells, documents = [], []
    for index, cell in enumerate(notebook["cells"]):
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        code = cell["cell_type"] == "code"
        uri = f"vscode-notebook-cell:{path}#cell{index}"
        kind = types.NotebookCellKind.Code if code else types.NotebookCellKind.Markup
        cells.append(types.NotebookCell(kind=kind, document=uri))
        documents.append(
            types.TextDocumentItem(uri=uri, language_id="python" if code else "markdown", version=1, text=text)
        )
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=path.as_uri(), notebook_type="jupyter-notebook", version=1, cells=cells,
                metadata=notebook.get("metadata"),
            ),
            cell_text_documents=documents,
        )
    )
    while not all(cell.document in client.diagnostics for cell in cells):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    found = [(cell.document, d.code) for cell in cells for d in client.diagnostics[cell.document]]
    assert found, "the notebook has findings"
    markup = [cell.document for cell in cells if cell.kind == types.NotebookCellKind.Markup]
    assert all(not client.diagnostics[uri] for uri in markup)
