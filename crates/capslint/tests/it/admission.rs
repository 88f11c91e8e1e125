//! `capslint admission`: the real binary on a loopback port with a certificate made here, asked over
//! real HTTPS by curl and by Python's `ssl` + `http.client`. The verdicts equal `capslint check`'s on
//! the same object written as a file; the patches, applied by an independent RFC 6902 implementation
//! (the `jsonpatch` package), leave objects that `check` finds clean of what they address, with every
//! field kept; hostile bodies and slow clients are refused without stopping the server; a rewritten
//! certificate is served on the next handshake; SIGTERM lets a request in flight finish.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::*;

/// A self-signed certificate for 127.0.0.1 and localhost, written as `tls.crt` and `tls.key` in `dir`.
fn write_certificate(dir: &Path) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .expect("a certificate");
    // Written aside and renamed, as a Secret volume's update is, so a handshake never sees half a pair.
    std::fs::write(dir.join("tls.crt.new"), certified.cert.pem()).unwrap();
    std::fs::write(dir.join("tls.key.new"), certified.key_pair.serialize_pem()).unwrap();
    std::fs::rename(dir.join("tls.key.new"), dir.join("tls.key")).unwrap();
    std::fs::rename(dir.join("tls.crt.new"), dir.join("tls.crt")).unwrap();
}

/// A running `capslint admission`, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
    dir: TempDir,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        write_certificate(dir.path());
        let mut command = scrubbed(binary());
        command
            .current_dir(dir.path())
            .args(["admission", "--addr", "127.0.0.1:0", "--tls-cert", "tls.crt", "--tls-key", "tls.key"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if !args.contains(&"--config") {
            command.arg("--isolated");
        }
        let mut child = command.spawn().expect("capslint admission starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let port = loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap() == 0 {
                panic!("capslint admission exited before listening: {:?}", child.wait());
            }
            if let Some(address) = line.trim().strip_prefix("capslint admission: listening on https://") {
                break address.rsplit_once(':').unwrap().1.parse().unwrap();
            }
        };
        // Keep reading stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in stderr.lines() {});
        Server { child, port, dir }
    }

    fn ca(&self) -> PathBuf {
        self.dir.path().join("tls.crt")
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// `curl` posting `body` to `path`: (HTTP status, body).
    fn curl(&self, path: &str, body: &Path) -> (u16, String) {
        self.request(path, Some(body))
    }

    /// `curl` getting `path`.
    fn get(&self, path: &str) -> (u16, String) {
        self.request(path, None)
    }

    /// `curl` posting `body` (JSON) to `path`, or getting it without one: (HTTP status, body).
    fn request(&self, path: &str, body: Option<&Path>) -> (u16, String) {
        let mut command = Command::new("curl");
        command.args(["-sS", "--max-time", if body.is_some() { "60" } else { "30" }, "-w", "\n%{http_code}"]);
        command.arg("--cacert").arg(self.ca());
        if let Some(body) = body {
            command.args(["-H", "Content-Type: application/json", "--data-binary"]).arg(format!("@{}", body.display()));
        }
        let output = command.arg(self.url(path)).output().expect("curl runs");
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let (body, status) = text.rsplit_once('\n').unwrap_or(("", "0"));
        (status.trim().parse().unwrap_or(0), body.to_string())
    }

    /// The Python client's `command` with this server's CA, host and port first.
    fn python(&self, python: &Path, command: &str, rest: &[&str]) -> Value {
        let output = Command::new(python)
            .arg(client())
            .arg(command)
            .arg(self.ca())
            .args(["127.0.0.1", &self.port.to_string()])
            .args(rest)
            .output()
            .expect("python runs");
        assert!(output.status.success(), "{command}: {}", describe(&output));
        serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&output.stdout).trim().to_string()))
    }

    #[cfg(unix)]
    fn terminate(&mut self) {
        // SAFETY: signalling our own child by its id.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client() -> PathBuf {
    tests_dir().join("it/support/admission_client.py")
}

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/admission").join(name)
}

const FIXTURES: &[&str] =
    &["pod.json", "deployment_clean.json", "job_fractional.json", "cronjob.json", "deployment_exec.json"];

fn review_of(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A review (from the fixture `name`) changed by `edit`, written into `dir`.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut review = review_of(&fixture(name));
    edit(&mut review);
    let path = dir.join(format!("edited-{name}"));
    std::fs::write(&path, serde_json::to_vec(&review).unwrap()).unwrap();
    path
}

/// The codes `capslint check` reports on `object` written as a file (JSON is YAML).
fn check_codes(object: &Value) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("object.yaml"), serde_json::to_vec_pretty(object).unwrap()).unwrap();
    let output = check(dir.path()).args(["--output-format", "json", "object.yaml"]).output().unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("{}", describe(&output)));
    let mut codes: Vec<String> =
        report.as_array().unwrap().iter().map(|finding| finding["code"].as_str().unwrap().to_string()).collect();
    codes.sort();
    codes
}

/// The codes of a response's warnings (`capslint CAP202 (container ...): ...`).
fn warned_codes(response: &Value) -> Vec<String> {
    let mut codes: Vec<String> = response["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|warning| warning.as_str()?.strip_prefix("capslint ")?.get(..6).map(str::to_string))
        .filter(|code| code.starts_with("CAP"))
        .collect();
    codes.sort();
    codes
}

fn response_of(body: &str) -> Value {
    let review: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body}"));
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    review["response"].clone()
}

#[test]
fn warn_mode_warns_with_the_findings_check_reports() {
    let server = Server::start(&["--mode", "warn"]);
    for name in FIXTURES {
        let review = review_of(&fixture(name));
        let (status, body) = server.curl("/validate", &fixture(name));
        assert_eq!(status, 200, "{name}: {body}");
        let response = response_of(&body);
        assert_eq!(response["uid"], review["request"]["uid"], "{name}");
        assert_eq!(response["allowed"], true, "{name}");
        assert_eq!(warned_codes(&response), check_codes(&review["request"]["object"]), "{name}: {response}");
    }
    // What the fixtures are for: findings where caps are missing, none where the block is there, only the
    // limit variable where `capslint exec` sets the caps.
    let codes = |name: &str| check_codes(&review_of(&fixture(name))["request"]["object"]);
    assert!(codes("pod.json").contains(&"CAP203".to_string()), "{:?}", codes("pod.json"));
    assert!(codes("job_fractional.json").contains(&"CAP203".to_string()));
    assert_eq!(codes("deployment_clean.json"), Vec::<String>::new());
    assert_eq!(codes("deployment_exec.json"), ["CAP202"]);
    // The warnings name the container; the infrastructure sidecar has none.
    let (_, body) = server.curl("/validate", &fixture("pod.json"));
    let warnings = response_of(&body)["warnings"].to_string();
    assert!(warnings.contains("(container `train`)"), "{warnings}");
    assert!(!warnings.contains("`proxy`"), "{warnings}");
}

#[test]
fn deny_mode_refuses_with_the_findings_and_the_annotation_overrides_it() {
    let server = Server::start(&["--mode", "deny"]);
    let (status, body) = server.curl("/validate", &fixture("pod.json"));
    assert_eq!(status, 200);
    let response = response_of(&body);
    assert_eq!(response["allowed"], false, "{response}");
    assert_eq!(response["status"]["code"], 403);
    let message = response["status"]["message"].as_str().unwrap();
    assert!(message.contains("CAP203 (container `train`)"), "{message}");
    assert!(message.contains("admission/ml/Pod-train.yaml"), "{message}");

    let (_, body) = server.curl("/validate", &fixture("deployment_clean.json"));
    assert_eq!(response_of(&body)["allowed"], true);

    let dir = tempfile::tempdir().unwrap();
    let annotated = |mode: &str| {
        edited(dir.path(), "pod.json", |review| {
            review["request"]["object"]["metadata"]["annotations"]["capslint.io/mode"] = json!(mode);
        })
    };
    let (_, body) = server.curl("/validate", &annotated("warn"));
    let response = response_of(&body);
    assert_eq!(response["allowed"], true);
    assert!(warned_codes(&response).contains(&"CAP203".to_string()), "{response}");
    let (_, body) = server.curl("/validate", &annotated("off"));
    let response = response_of(&body);
    assert_eq!(response["allowed"], true);
    assert!(response.get("warnings").is_none(), "{response}");

    // `capslint.io/ignore` is honoured as `check` honours it.
    let ignored = edited(dir.path(), "pod.json", |review| {
        review["request"]["object"]["metadata"]["annotations"]["capslint.io/ignore"] = json!("CAP202,CAP203,CAP205");
    });
    let (_, body) = server.curl("/validate", &ignored);
    let review = review_of(&ignored);
    let response = response_of(&body);
    let remaining = check_codes(&review["request"]["object"]);
    assert!(!remaining.contains(&"CAP203".to_string()), "{remaining:?}");
    assert_eq!(response["allowed"], remaining.iter().all(|code| code != "CAP201" && code != "CAP204"));

    // A pod a ReplicaSet owns was checked through its owner; a pod an operator builds is checked itself.
    let owned = edited(dir.path(), "pod.json", |review| {
        review["request"]["object"]["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "u", "controller": true}]);
    });
    let (_, body) = server.curl("/validate", &owned);
    assert_eq!(response_of(&body)["allowed"], true);
    let built = edited(dir.path(), "pod.json", |review| {
        review["request"]["object"]["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "x", "uid": "u", "controller": true}]);
    });
    let (_, body) = server.curl("/validate", &built);
    assert_eq!(response_of(&body)["allowed"], false, "{body}");
}

#[test]
fn rule_selection_applies_to_the_verdict() {
    let server = Server::start(&["--mode", "deny", "--ignore", "CAP203,CAP202,CAP205"]);
    let (_, body) = server.curl("/validate", &fixture("pod.json"));
    let response = response_of(&body);
    let message = response.to_string();
    assert!(!message.contains("CAP203"), "{message}");
}

/// The Python interpreter with `jsonpatch`, or why there is none.
fn python_with_jsonpatch() -> Result<PathBuf, String> {
    let python = test_python()?;
    let probe = Command::new(&python).args(["-c", "import jsonpatch"]).output().map_err(|error| error.to_string())?;
    if probe.status.success() {
        Ok(python)
    } else {
        Err(format!("{} has no jsonpatch: run scripts/test-setup", python.display()))
    }
}

/// Whether every value of `original` is in `patched` at the same place (lists may have grown).
fn keeps_every_field(original: &Value, patched: &Value) -> bool {
    match (original, patched) {
        (Value::Object(before), Value::Object(after)) => {
            before.iter().all(|(key, value)| after.get(key).is_some_and(|kept| keeps_every_field(value, kept)))
        }
        (Value::Array(before), Value::Array(after)) => {
            before.len() <= after.len() && before.iter().zip(after).all(|(value, kept)| keeps_every_field(value, kept))
        }
        (before, after) => before == after,
    }
}

#[test]
fn the_patch_applied_elsewhere_leaves_an_object_check_finds_capped() {
    let python = match python_with_jsonpatch() {
        Ok(python) => python,
        Err(why) => return skip_integration("the_patch_applied_elsewhere_leaves_an_object_check_finds_capped", &why),
    };
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut patched_any = false;
    for name in FIXTURES {
        let review = review_of(&fixture(name));
        let object = &review["request"]["object"];
        let (status, body) = server.curl("/mutate", &fixture(name));
        assert_eq!(status, 200, "{name}: {body}");
        let response = response_of(&body);
        assert_eq!(response["allowed"], true);
        let Some(patch) = response["patch"].as_str() else {
            assert!(response.get("patchType").is_none());
            continue;
        };
        patched_any = true;
        assert_eq!(response["patchType"], "JSONPatch");
        let object_file = dir.path().join(format!("object-{name}"));
        std::fs::write(&object_file, serde_json::to_vec(object).unwrap()).unwrap();
        let output = Command::new(&python).arg(client()).args(["patch"]).arg(&object_file).arg(patch).output().unwrap();
        assert!(output.status.success(), "{}", describe(&output));
        let patched: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert!(keeps_every_field(object, &patched), "{name}: a field was lost:\n{patched:#}");
        let before = check_codes(object);
        let after = check_codes(&patched);
        for addressed in ["CAP202", "CAP203", "CAP205"] {
            let whole_limit_left = after.iter().filter(|code| *code == addressed).count();
            assert!(
                whole_limit_left < before.iter().filter(|code| *code == addressed).count() || whole_limit_left == 0,
                "{name}: {addressed} before {before:?}, after {after:?}"
            );
        }
        // Mutating the mutated object changes nothing more: no variable is ever added twice.
        let again = edited(dir.path(), name, |review| review["request"]["object"] = patched.clone());
        let (_, body) = server.curl("/mutate", &again);
        assert!(response_of(&body).get("patch").is_none(), "{name}: patched twice");
    }
    assert!(patched_any, "no fixture was patched");
    // The pod: the compute container gets the block, the sidecar nothing, and `check` finds it capped.
    let (_, body) = server.curl("/mutate", &fixture("pod.json"));
    let response = response_of(&body);
    let object_file = dir.path().join("pod-object.json");
    std::fs::write(&object_file, serde_json::to_vec(&review_of(&fixture("pod.json"))["request"]["object"]).unwrap())
        .unwrap();
    let output = Command::new(&python)
        .arg(client())
        .arg("patch")
        .arg(&object_file)
        .arg(response["patch"].as_str().expect("the pod is patched"))
        .output()
        .unwrap();
    let patched: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = patched["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|var| var["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "EPOCHS");
    assert!(names.contains(&"CPU_LIMIT") && names.contains(&"OMP_WAIT_POLICY"), "{names:?}");
    assert!(patched["spec"]["containers"][1].get("env").is_none(), "the sidecar was changed");
    let left = check_codes(&patched);
    assert!(!left.iter().any(|code| ["CAP202", "CAP203", "CAP205"].contains(&code.as_str())), "{left:?}");
    // The fractional limit is not patched: the Downward API would round it up.
    let (_, body) = server.curl("/mutate", &fixture("job_fractional.json"));
    assert!(response_of(&body).get("patch").is_none());
}

#[test]
fn dry_runs_are_answered_and_not_counted() {
    let server = Server::start(&["--mode", "warn"]);
    let dir = tempfile::tempdir().unwrap();
    let dry = edited(dir.path(), "pod.json", |review| review["request"]["dryRun"] = json!(true));
    let (_, body) = server.curl("/validate", &dry);
    assert!(warned_codes(&response_of(&body)).contains(&"CAP203".to_string()));
    let (_, body) = server.curl("/mutate", &dry);
    assert!(response_of(&body)["patch"].is_string());
    let (status, metrics) = server.get("/metrics");
    assert_eq!(status, 200);
    assert!(!metrics.contains("capslint_admission_findings_total{"), "{metrics}");
    assert!(
        metrics.contains("capslint_admission_requests_total{endpoint=\"validate\",outcome=\"warned\"} 1"),
        "{metrics}"
    );
    let (_, _) = server.curl("/validate", &fixture("pod.json"));
    let (_, metrics) = server.get("/metrics");
    assert!(metrics.contains("capslint_admission_findings_total{rule=\"CAP203\"}"), "{metrics}");
    assert!(metrics.contains("capslint_admission_request_duration_seconds_count{endpoint=\"mutate\"} 1"), "{metrics}");
    assert_eq!(server.get("/healthz"), (200, "ok\n".to_string()));
    assert_eq!(server.get("/readyz"), (200, "ok\n".to_string()));
    assert_eq!(server.get("/nowhere").0, 404);
}

#[test]
fn python_clients_on_one_connection_get_the_same_answers() {
    let python = match test_python() {
        Ok(python) => python,
        Err(_) => PathBuf::from("python3"),
    };
    let server = Server::start(&["--mode", "deny"]);
    let paths: Vec<String> = FIXTURES.iter().map(|name| fixture(name).display().to_string()).collect();
    let mut args = vec!["POST", "/validate"];
    args.extend(paths.iter().map(String::as_str));
    let answers = server.python(&python, "request", &args);
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), FIXTURES.len());
    for (name, answer) in FIXTURES.iter().zip(answers) {
        assert_eq!(answer["status"], 200);
        let (_, body) = server.curl("/validate", &fixture(name));
        assert_eq!(answer["body"], serde_json::from_str::<Value>(&body).unwrap(), "{name}");
    }
}

#[test]
fn hostile_bodies_are_refused_and_the_server_keeps_serving() {
    let server = Server::start(&["--mode", "deny"]);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let huge = write("huge.json", &vec![b' '; 10 << 20]);
    assert_eq!(server.curl("/validate", &huge).0, 413);
    // Without a Content-Length, the body is read up to the limit and no further: the answer is 413, unless
    // the connection, closed with the rest of the body unread, is reset before curl reads it. (`Expect:`
    // off: otherwise curl may report the server's interim `100 Continue` as the status of a reset.)
    let output = Command::new("curl")
        .args(["-sS", "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
        .arg(server.ca())
        .args(["-H", "Transfer-Encoding: chunked", "-H", "Expect:", "--data-binary"])
        .arg(format!("@{}", huge.display()))
        .arg(server.url("/validate"))
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(status == "413" || status == "000", "{status}: {}", describe(&output));
    let deep = format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","object":{}{}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let (status, body) = server.curl("/validate", &write("deep.json", deep.as_bytes()));
    assert_eq!((status, body.contains("recursion limit")), (400, true), "{body}");
    let wrong_kind = edited(dir.path(), "pod.json", |review| review["kind"] = json!("ConfigMap"));
    let (status, body) = server.curl("/validate", &wrong_kind);
    assert_eq!(status, 400, "{body}");
    let wrong_version =
        edited(dir.path(), "pod.json", |review| review["apiVersion"] = json!("admission.k8s.io/v1beta1"));
    let (status, body) = server.curl("/mutate", &wrong_version);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("v1beta1"), "{body}");
    assert_eq!(server.curl("/validate", &write("garbage.json", b"\x00\x01garbage{{{")).0, 400);
    assert_eq!(server.curl("/validate", &write("latin1.json", b"{\"kind\": \"caf\xe9\"}")).0, 400);
    // An object nested as deep as serde_json allows is answered.
    let nested = edited(dir.path(), "pod.json", |review| {
        let mut value = json!("leaf");
        for _ in 0..100 {
            value = json!({ "x": value });
        }
        review["request"]["object"]["metadata"]["annotations"]["deep"] = json!(value.to_string());
        review["request"]["object"]["spec"]["deep"] = value;
    });
    assert_eq!(server.curl("/validate", &nested).0, 200);
    // Still serving.
    let (status, body) = server.curl("/validate", &fixture("deployment_clean.json"));
    assert_eq!((status, response_of(&body)["allowed"].clone()), (200, json!(true)));
}

#[test]
fn a_slow_client_is_dropped_while_others_are_served() {
    let python = test_python().unwrap_or_else(|_| PathBuf::from("python3"));
    let server = Server::start(&["--read-timeout", "2"]);
    let slow = {
        let python = python.clone();
        let (ca, port) = (server.ca(), server.port.to_string());
        std::thread::spawn(move || {
            let output = Command::new(python)
                .arg(client())
                .arg("slowloris")
                .arg(ca)
                .args(["127.0.0.1", &port])
                .output()
                .unwrap();
            serde_json::from_slice::<Value>(&output.stdout).unwrap_or_else(|_| panic!("{}", describe(&output)))
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let (status, _) = server.curl("/validate", &fixture("pod.json"));
    assert_eq!(status, 200);
    let outcome = slow.join().unwrap();
    assert_eq!(outcome["closed"], true, "{outcome}");
    assert!(outcome["sent"].as_u64() < outcome["total"].as_u64(), "{outcome}");
}

#[test]
fn a_rewritten_certificate_is_served_on_the_next_handshake() {
    let python = test_python().unwrap_or_else(|_| PathBuf::from("python3"));
    let server = Server::start(&[]);
    let old_ca = server.dir.path().join("old-ca.crt");
    std::fs::copy(server.ca(), &old_ca).unwrap();
    let first = server.python(&python, "peer-cert", &[]);
    write_certificate(server.dir.path());
    let second = server.python(&python, "peer-cert", &[]);
    assert_ne!(first, second, "the old certificate is still served");
    // The old certificate no longer verifies the server.
    let output = Command::new("curl")
        .args(["-sS", "--max-time", "30", "--cacert"])
        .arg(&old_ca)
        .arg(server.url("/healthz"))
        .output()
        .unwrap();
    assert!(!output.status.success(), "{}", describe(&output));
}

#[cfg(unix)]
#[test]
fn sigterm_finishes_the_request_in_flight() {
    let python = test_python().unwrap_or_else(|_| PathBuf::from("python3"));
    let mut server = Server::start(&[]);
    let ready = server.dir.path().join("ready");
    let go = server.dir.path().join("go");
    let inflight = {
        let (python, ca, port) = (python.clone(), server.ca(), server.port.to_string());
        let (ready, go) = (ready.clone(), go.clone());
        std::thread::spawn(move || {
            let output = Command::new(python)
                .arg(client())
                .arg("inflight")
                .arg(ca)
                .args(["127.0.0.1", &port])
                .arg(fixture("pod.json"))
                .arg(ready)
                .arg(go)
                .output()
                .unwrap();
            serde_json::from_slice::<Value>(&output.stdout).unwrap_or_else(|_| panic!("{}", describe(&output)))
        })
    };
    while !ready.exists() {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    server.terminate();
    std::thread::sleep(Duration::from_millis(300));
    // New connections are no longer accepted.
    assert_ne!(server.get("/healthz").0, 200);
    std::fs::write(&go, "").unwrap();
    let answer = inflight.join().unwrap();
    assert_eq!(answer["status"], 200, "{answer}");
    assert_eq!(answer["body"]["response"]["uid"], "5d1c6e0c-0001-4a57-9a4f-000000000001");
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn the_deployment_renders_applies_and_is_clean() {
    let deploy = root().join("deploy");
    let rendered = match Command::new("kubectl").arg("kustomize").arg(&deploy).output() {
        Ok(output) => {
            assert!(output.status.success(), "kubectl kustomize: {}", describe(&output));
            output.stdout
        }
        Err(error) => {
            // kubectl is not on PyPI: where it is absent the test says so and passes.
            note(&format!("SKIP the_deployment_renders_applies_and_is_clean: no kubectl ({error})"));
            return;
        }
    };
    let text = String::from_utf8(rendered).unwrap();
    for kind in [
        "kind: Deployment",
        "kind: Service",
        "kind: PodDisruptionBudget",
        "kind: ValidatingWebhookConfiguration",
        "kind: MutatingWebhookConfiguration",
        "kind: Issuer",
        "kind: Certificate",
        "cert-manager.io/inject-ca-from: capslint-system/capslint-admission",
        "sideEffects: None",
        "- v1",
        "path: /validate",
        "path: /mutate",
    ] {
        assert!(text.contains(kind), "{kind} is not rendered:\n{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rendered.yaml"), &text).unwrap();
    let mut apply = Command::new("kubectl");
    apply.args(["apply", "--dry-run=client", "-f"]).arg(dir.path().join("rendered.yaml"));
    let output = apply.output().unwrap();
    if output.status.success() {
        assert!(String::from_utf8_lossy(&output.stdout).contains("(dry run)"), "{}", describe(&output));
    } else {
        // A client-side dry run still asks an API server for the kinds it applies; without one it says
        // so, and the rendering above is what is checked.
        let why = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(!why.contains("error parsing") && !why.contains("error converting"), "{why}");
        note(&format!("SKIP kubectl apply --dry-run=client on deploy/: {}", why.lines().next().unwrap_or("")));
    }
    // The webhook's own manifests pass its rules, as files and rendered.
    let (code, stdout, stderr) = run(check(&root()).arg("deploy"));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = run(check(dir.path()).arg("rendered.yaml"));
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn a_namespace_mode_overrides_the_default_and_a_config_table_sets_it() {
    let server = Server::start(&["--mode", "warn", "--namespace-mode", "ml=deny"]);
    let (_, body) = server.curl("/validate", &fixture("pod.json"));
    assert_eq!(response_of(&body)["allowed"], false, "{body}");
    drop(server);
    // The same from an `[admission]` table.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "capslint.toml", "[admission]\nmode = \"warn\"\nnamespace-modes = { ml = \"off\" }\n");
    let config = dir.path().join("capslint.toml").display().to_string();
    let server = Server::start(&["--config", &config]);
    let (_, body) = server.curl("/validate", &fixture("pod.json"));
    let response = response_of(&body);
    assert_eq!(response["allowed"], true);
    assert!(response.get("warnings").is_none(), "{response}");
}

#[test]
fn every_manifest_fixture_gets_the_verdict_check_gives() {
    let python = test_python().unwrap_or_else(|_| PathBuf::from("python3"));
    let server = Server::start(&["--mode", "warn"]);
    let dir = tempfile::tempdir().unwrap();
    let mut objects = Vec::new();
    for path in files_under("fixtures/k8s", &["yaml", "yml"]) {
        let text = std::fs::read_to_string(root().join(&path)).unwrap();
        let Some(documents) = capslint_admission::render::documents_from_yaml(&text) else { continue };
        for object in documents {
            let kind = object["kind"].as_str().unwrap_or("");
            if object.is_object() && !kind.is_empty() && !["Kustomization", "ConfigMap"].contains(&kind) {
                objects.push((path.clone(), object));
            }
        }
    }
    assert!(objects.len() > 50, "{} objects", objects.len());
    let bodies: Vec<String> = objects
        .iter()
        .enumerate()
        .map(|(index, (_, object))| {
            let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                "uid": format!("u-{index}"), "operation": "CREATE", "namespace": "ns", "object": object
            }});
            let body = dir.path().join(format!("review-{index}.json"));
            std::fs::write(&body, serde_json::to_vec(&review).unwrap()).unwrap();
            body.display().to_string()
        })
        .collect();
    let mut args = vec!["POST", "/validate"];
    args.extend(bodies.iter().map(String::as_str));
    let answers = server.python(&python, "request", &args);
    for ((path, object), answer) in objects.iter().zip(answers.as_array().unwrap()) {
        assert_eq!(answer["status"], 200, "{}: {answer}", path.display());
        let response = &answer["body"]["response"];
        assert_eq!(warned_codes(response), check_codes(object), "{}: {}", path.display(), object["metadata"]);
    }
}

#[test]
fn the_patch_of_every_manifest_fixture_is_what_check_fix_writes_in_the_file() {
    let python = match python_with_jsonpatch() {
        Ok(python) => python,
        Err(why) => {
            return skip_integration("the_patch_of_every_manifest_fixture_is_what_check_fix_writes_in_the_file", &why);
        }
    };
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for path in files_under("fixtures/k8s", &["yaml", "yml"]) {
        let text = std::fs::read_to_string(root().join(&path)).unwrap();
        let Some(originals) = capslint_admission::render::documents_from_yaml(&text) else { continue };
        // Objects that other objects of the file or the directory complete (ConfigMaps, overlays) are
        // checked together by `check`, alone by the webhook; YAML comments (`# capslint: ignore[...]`) never
        // reach the API server.
        if originals.iter().any(|object| object["kind"] == "ConfigMap" || object["kind"] == "Kustomization")
            || path.components().count() > 3
            || text.contains("# capslint:")
        {
            continue;
        }
        let copy = dir.path().join("fixed.yaml");
        std::fs::write(&copy, &text).unwrap();
        let _ = run(check(dir.path()).args(["--fix", "fixed.yaml"]));
        let Some(fixed) = capslint_admission::render::documents_from_yaml(&std::fs::read_to_string(&copy).unwrap())
        else {
            continue;
        };
        assert_eq!(fixed.len(), originals.len(), "{}", path.display());
        for (index, (original, by_check)) in originals.iter().zip(&fixed).enumerate() {
            if !original.is_object() || original["kind"].as_str().is_none() {
                continue;
            }
            let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                "uid": "u", "operation": "CREATE", "namespace": "ns", "object": original
            }});
            let body = dir.path().join(format!("review-{index}.json"));
            std::fs::write(&body, serde_json::to_vec(&review).unwrap()).unwrap();
            let (_, answer) = server.curl("/mutate", &body);
            let response = response_of(&answer);
            let patched = match response["patch"].as_str() {
                None => original.clone(),
                Some(patch) => {
                    let object_file = dir.path().join("object.json");
                    std::fs::write(&object_file, serde_json::to_vec(original).unwrap()).unwrap();
                    let output =
                        Command::new(&python).arg(client()).arg("patch").arg(&object_file).arg(patch).output().unwrap();
                    assert!(output.status.success(), "{}", describe(&output));
                    serde_json::from_slice(&output.stdout).unwrap()
                }
            };
            assert_eq!(&patched, by_check, "{} object {index}: the patch and --fix differ", path.display());
            compared += 1;
        }
    }
    assert!(compared > 30, "{compared} objects compared");
}
