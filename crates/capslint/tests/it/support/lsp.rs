//! A small Language Server Protocol client for the tests of `capslint server`: starts the real binary,
//! frames JSON-RPC messages on its standard input, reads its standard output on a thread, and waits for
//! the response or notification a test needs (others are kept, in order, for later waits).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a test waits for one message from the server.
pub const LSP_TIMEOUT: Duration = Duration::from_secs(60);

/// A running `capslint server` and the messages it sent that no wait has taken yet.
pub struct LspClient {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    kept: Vec<Value>,
    next_id: i64,
}

/// The `file:` URI of an absolute path (the characters the tests' paths use need no escaping).
pub fn file_uri(path: &Path) -> String {
    let text = path.to_str().expect("a UTF-8 path");
    let mut uri = String::from("file://");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// Reads one framed message; `None` at the end of the output.
fn read_frame(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl LspClient {
    /// Starts `capslint server` in `dir`.
    pub fn start(dir: &Path) -> Self {
        let mut child = super::scrubbed(super::binary())
            .arg("server")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("capslint server starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_frame(&mut reader) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        LspClient { child, stdin, messages, kept: Vec::new(), next_id: 0 }
    }

    /// Starts the server and initializes it with `capabilities` and `options`.
    pub fn initialized(dir: &Path, capabilities: Value, options: Value) -> (Self, Value) {
        let mut client = LspClient::start(dir);
        let result = client.request(
            "initialize",
            json!({"processId": null, "rootUri": file_uri(dir), "capabilities": capabilities, "initializationOptions": options}),
        );
        client.notify("initialized", json!({}));
        (client, result)
    }

    /// Writes raw bytes to the server's input.
    pub fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("input open");
        stdin.write_all(bytes).and_then(|()| stdin.flush()).expect("the server reads its input");
    }

    /// Sends one message.
    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).expect("JSON");
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend(body);
        self.write_raw(&frame);
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its response: the whole response message.
    pub fn request_message(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.wait_for(|message| message.get("id") == Some(&json!(id)) && message.get("method").is_none())
            .unwrap_or_else(|| panic!("no response to {method}"))
    }

    /// Sends a request and waits for its result (panics on an error response).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.request_message(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// The first message (kept or new) that `wanted` accepts; `None` when the server's output ends or
    /// nothing comes within [`LSP_TIMEOUT`].
    pub fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Option<Value> {
        if let Some(position) = self.kept.iter().position(&wanted) {
            return Some(self.kept.remove(position));
        }
        let deadline = Instant::now() + LSP_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message) => return Some(message),
                Ok(message) => self.kept.push(message),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The next diagnostics published for `uri` that `wanted` accepts.
    pub fn diagnostics(&mut self, uri: &str, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let message = self
            .wait_for(|message| {
                message["method"] == "textDocument/publishDiagnostics"
                    && message["params"]["uri"] == uri
                    && message["params"]["diagnostics"].as_array().is_some_and(|list| wanted(list))
            })
            .unwrap_or_else(|| panic!("no diagnostics for {uri}"));
        message["params"]["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    /// Opens a text document.
    pub fn open(&mut self, path: &Path, language: &str, text: &str) -> String {
        let uri = file_uri(path);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
        uri
    }

    /// Closes the server's input and waits for it to exit: its exit code.
    pub fn close_input(&mut self) -> Option<i32> {
        drop(self.stdin.take());
        self.wait_exit()
    }

    /// `shutdown`, then `exit`: the server's exit code.
    pub fn shutdown(&mut self) -> Option<i32> {
        let response = self.request("shutdown", Value::Null);
        assert_eq!(response, Value::Null);
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Waits (at most [`LSP_TIMEOUT`]) for the server to exit.
    pub fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + LSP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A finding as the tests compare them: the code, and its range as (line, character) pairs.
pub type CodeAndRange = (String, (u64, u64), (u64, u64));

/// A diagnostic as [`CodeAndRange`].
pub fn code_and_range(diagnostic: &Value) -> CodeAndRange {
    let at = |point: &Value| (point["line"].as_u64().unwrap_or(0), point["character"].as_u64().unwrap_or(0));
    (
        diagnostic["code"].as_str().unwrap_or_default().to_string(),
        at(&diagnostic["range"]["start"]),
        at(&diagnostic["range"]["end"]),
    )
}

/// The findings `capslint check --output-format json` reports for `files` (run in `dir`), as
/// [`code_and_range`] gives them (rows and columns made 0-based; characters are Unicode scalar values,
/// the server's unit when the client asks for `utf-32`), with each finding's cell.
pub fn check_json(dir: &Path, files: &[&Path]) -> Vec<(Option<u64>, CodeAndRange)> {
    check_json_by_file(dir, files).into_iter().map(|(_, cell, finding)| (cell, finding)).collect()
}

/// [`check_json`] with the file of each finding, as the report names it.
pub fn check_json_by_file(dir: &Path, files: &[&Path]) -> Vec<(String, Option<u64>, CodeAndRange)> {
    let output = super::capslint(dir)
        .args(["check", "--output-format", "json", "--exit-zero"])
        .args(files)
        .output()
        .expect("check runs");
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    let at = |point: &Value| (point["row"].as_u64().unwrap_or(1) - 1, point["column"].as_u64().unwrap_or(1) - 1);
    report
        .as_array()
        .expect("a list")
        .iter()
        .map(|finding| {
            let code = finding["code"].as_str().unwrap_or_default().to_string();
            let file = finding["filename"].as_str().unwrap_or_default().to_string();
            (file, finding["cell"].as_u64(), (code, at(&finding["location"]), at(&finding["end_location"])))
        })
        .collect()
}
