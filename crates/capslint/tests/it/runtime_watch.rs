//! `capslint exec --watch` in a real 1-CPU cgroup (v1 `cpu` hierarchy) with real workloads: shell
//! busy loops that oversubscribe it, one that stays within it, and one that sleeps. The events on
//! stderr, the exit code passed through, SIGTERM forwarded, and `--terminate-after`.
//!
//! Each test creates its own cgroup and removes it afterwards; without a writable hierarchy it prints
//! `SKIP: <why>` and passes, unless `CAPSLINT_REQUIRE_REAL_CGROUP=1`.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::support::*;

/// One CPU: 100 ms of CPU time per 100 ms period.
const ONE_CPU: (u64, u64) = (100_000, 100_000);

/// Short enough for a test, long enough for several samples per window.
const WATCH: [&str; 5] = ["--watch", "--interval", "200ms", "--window", "1s"];

/// `n` busy loops (subshells that fork nothing) for `seconds`, then `exit code`.
fn busy(n: usize, seconds: u32, code: u8) -> String {
    format!(
        "pids=; for i in $(seq {n}); do (while :; do :; done) & pids=\"$pids $!\"; done; sleep {seconds}; \
         kill $pids; wait; exit {code}"
    )
}

/// `capslint exec --quiet [extra] -- sh -c script` in `cgroup`, with a declared 1-CPU limit.
fn watched(cgroup: &TestCgroup, marker: &Marker, extra: &[&str], script: &str) -> Command {
    let mut args = vec!["exec", "--quiet"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", script]);
    cgroup.command(binary(), &args, &[("CPU_LIMIT", "1".to_owned()), marker.var()])
}

/// The real cgroup, or `None` (skipped).
fn one_cpu_cgroup() -> Option<TestCgroup> {
    match TestCgroup::create(ONE_CPU.0, ONE_CPU.1) {
        Ok(cgroup) => Some(cgroup),
        Err(why) => {
            skip(&why);
            None
        }
    }
}

/// Runs the command to its end within a minute.
fn finish(mut command: Command) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let status = wait_within(&mut child, Duration::from_secs(60));
    if status.is_none() {
        let _ = child.kill();
    }
    let output = child.wait_with_output().unwrap();
    assert!(status.is_some(), "capslint exec --watch did not end: {}", describe(&output));
    output
}

/// The `event=` lines of stderr.
fn events(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.starts_with("event="))
        .map(str::to_owned)
        .collect()
}

/// The value of `key=` in a logfmt line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split(' ').find_map(|part| part.strip_prefix(key)?.strip_prefix('='))
}

#[test]
fn busy_loops_beyond_the_limit_are_reported_and_the_exit_code_passes_through() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(cgroup) = one_cpu_cgroup() else { return };
    let marker = Marker::new();
    let output = finish(watched(&cgroup, &marker, &WATCH, &busy(4, 4, 7)));
    assert_eq!(output.status.code(), Some(7), "{}", describe(&output));
    let events = events(&output);
    let over = events
        .iter()
        .find(|line| line.starts_with("event=pod_oversubscribed severity=warning "))
        .unwrap_or_else(|| panic!("no oversubscription reported: {}", describe(&output)));
    assert_eq!(field(over, "limit"), Some("1"), "{over}");
    let runnable: u64 = field(over, "runnable").unwrap().parse().unwrap();
    assert!(runnable > 1, "{over}");
    // The shell and its four subshells.
    assert!(field(over, "processes").unwrap().parse::<u64>().unwrap() >= 5, "{over}");
    assert!(over.contains(" top=\"") && over.contains(":sh:1"), "{over}");
    // Four loops on one CPU are throttled nearly every period, with nothing to say they progress.
    let livelock = events
        .iter()
        .find(|line| line.starts_with("event=pod_livelock_suspected severity=error "))
        .unwrap_or_else(|| panic!("no livelock suspected: {}", describe(&output)));
    let share: f64 = field(livelock, "throttled_share").unwrap().parse().unwrap();
    assert!(share >= 0.5, "{livelock}");
    assert_eq!(field(livelock, "progress"), Some("unknown"), "{livelock}");
    // The loops end together: the pod recovers before the workload exits, or exits first.
    assert!(events.iter().all(|line| !line.starts_with("event=pod_livelock_terminated")), "{events:?}");
    assert_eq!(marker.wait_until_gone(Duration::from_secs(10)), Vec::<u32>::new());
}

#[test]
fn a_workload_within_the_limit_raises_no_event() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(cgroup) = one_cpu_cgroup() else { return };
    let marker = Marker::new();
    // One busy loop on one CPU: the quota is used, not exceeded by runnable threads.
    let output = finish(watched(&cgroup, &marker, &WATCH, &busy(1, 3, 0)));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(events(&output), Vec::<String>::new(), "{}", describe(&output));
}

#[test]
fn a_suspected_livelock_is_terminated_after_the_given_time_with_exit_75() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(cgroup) = one_cpu_cgroup() else { return };
    let marker = Marker::new();
    let extra = [&WATCH[..], &["--terminate-after", "1s", "--grace", "1s"]].concat();
    let output = finish(watched(&cgroup, &marker, &extra, &busy(4, 50, 0)));
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let events = events(&output);
    let terminated = events
        .iter()
        .find(|line| line.starts_with("event=pod_livelock_terminated severity=error signal=SIGTERM "))
        .unwrap_or_else(|| panic!("no termination: {}", describe(&output)));
    assert_eq!(field(terminated, "exit_code"), Some("75"), "{terminated}");
    // The subshells die of the SIGTERM sent to the group: no SIGKILL was needed.
    assert!(events.iter().all(|line| !line.starts_with("event=pod_livelock_killed")), "{events:?}");
    assert_eq!(marker.wait_until_gone(Duration::from_secs(10)), Vec::<u32>::new());
}

#[test]
fn sigterm_reaches_the_watched_workload_and_exits_143() {
    let marker = Marker::new();
    // Not PID 1 and no cgroup needed: the limit is declared.
    let mut command = clean_command(binary(), &[("CPU_LIMIT", "1".to_owned()), marker.var()]);
    command.arg("exec").arg("--quiet").args(WATCH).args(["--", "sleep", "30"]);
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = std::time::Instant::now();
    while children_of(child.id()).is_empty() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let workload = children_of(child.id());
    assert_eq!(workload.len(), 1, "capslint stays the parent of the workload");
    send_signal(child.id(), "TERM");
    let status = wait_within(&mut child, Duration::from_secs(30));
    let output = child.wait_with_output().unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{}", describe(&output));
    assert_eq!(marker.wait_until_gone(Duration::from_secs(10)), Vec::<u32>::new());
}

#[test]
fn watch_options_need_watch_and_refuse_no_init() {
    for args in [
        &["--interval", "1s"][..],
        &["--watch", "--no-init"],
        &["--watch", "--interval", "0s"],
        &["--watch", "--grace", "5s"],
    ] {
        let output = clean_command(binary(), &[("CPU_LIMIT", "1".to_owned())])
            .arg("exec")
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", describe(&output));
    }
}

/// `GET /metrics` with a plain HTTP/1.1 client: the status line and the body.
fn scrape(addr: &str) -> (String, String) {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.to_owned(), body.to_owned())
}

/// The value of the sample `name` in a text exposition page.
fn series(page: &str, name: &str) -> Option<f64> {
    page.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn the_metrics_endpoint_serves_the_tree_the_limit_throttling_and_the_verdicts() {
    use std::io::BufRead as _;
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(cgroup) = one_cpu_cgroup() else { return };
    let marker = Marker::new();
    let extra = [&WATCH[..], &["--metrics-addr", "127.0.0.1:0"]].concat();
    let mut child =
        watched(&cgroup, &marker, &extra, &busy(4, 6, 0)).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let first = lines.recv_timeout(Duration::from_secs(30)).unwrap();
    let addr = field(&first, "addr").unwrap_or_else(|| panic!("no address logged: {first}")).to_owned();
    assert!(first.starts_with("event=pod_watch_metrics severity=info "), "{first}");
    // Scrape until the window has seen the oversubscription.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let page = loop {
        let (head, page) = scrape(&addr);
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        assert!(head.to_ascii_lowercase().contains("content-type: text/plain; version=0.0.4"), "{head}");
        if series(&page, "capslint_watch_oversubscribed") == Some(1.0) || std::time::Instant::now() > deadline {
            break page;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(series(&page, "capslint_watch_oversubscribed"), Some(1.0), "{page}");
    assert_eq!(series(&page, "capslint_watch_cpu_limit_cores"), Some(1.0), "{page}");
    assert!(series(&page, "capslint_watch_processes").unwrap() >= 5.0, "{page}");
    assert!(series(&page, "capslint_watch_threads").unwrap() >= 5.0, "{page}");
    assert!(series(&page, "capslint_watch_runnable_threads").unwrap() >= 1.0, "{page}");
    assert!(series(&page, "capslint_watch_cfs_throttled_periods_total").unwrap() > 0.0, "{page}");
    assert!(series(&page, "capslint_watch_cfs_throttled_seconds_total").unwrap() > 0.0, "{page}");
    assert!(series(&page, "capslint_watch_workload_cpu_seconds_total").unwrap() > 0.0, "{page}");
    assert!(page.contains("# TYPE capslint_watch_cfs_periods_total counter\n"), "{page}");
    assert!(page.contains("# TYPE capslint_watch_livelock_suspected gauge\n"), "{page}");
    let status = wait_within(&mut child, Duration::from_secs(60));
    let _ = child.kill();
    assert_eq!(status.and_then(|s| s.code()), Some(0));
}

#[test]
fn as_pid_1_of_a_namespace_the_watch_sees_the_tree_and_passes_the_exit_code() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(why) = pid_namespaces() {
        return skip(&why);
    }
    let Some(cgroup) = one_cpu_cgroup() else { return };
    let marker = Marker::new();
    let script = busy(4, 4, 9);
    let mut args: Vec<&str> = UNSHARE_PID.to_vec();
    let binary = binary().display().to_string();
    args.extend_from_slice(&[binary.as_str(), "exec", "--quiet"]);
    args.extend_from_slice(&WATCH);
    args.extend_from_slice(&["--", "sh", "-c", &script]);
    let command = cgroup.command("unshare", &args, &[("CPU_LIMIT", "1".to_owned()), marker.var()]);
    let output = finish(command);
    assert_eq!(output.status.code(), Some(9), "{}", describe(&output));
    let events = events(&output);
    let over = events
        .iter()
        .find(|line| line.starts_with("event=pod_oversubscribed "))
        .unwrap_or_else(|| panic!("no oversubscription reported: {}", describe(&output)));
    // PID 1 is capslint: the workload's shell is PID 2 of the namespace, and leads the list.
    assert!(over.contains(" top=\"2:sh:1 "), "{over}");
    assert_eq!(marker.wait_until_gone(Duration::from_secs(10)), Vec::<u32>::new());
}

#[test]
fn a_heartbeat_decides_whether_a_throttled_workload_progresses() {
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(cgroup) = one_cpu_cgroup() else { return };
    let marker = Marker::new();
    let dir = tempfile::tempdir().unwrap();
    let beat = dir.path().join("beat").display().to_string();
    let extra = [&WATCH[..], &["--heartbeat", &beat]].concat();

    // Throttled and never beating: suspected, and the line says the heartbeat is missing.
    let output = finish(watched(&cgroup, &marker, &extra, &busy(4, 4, 0)));
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stalled = events(&output);
    let livelock = stalled
        .iter()
        .find(|line| line.starts_with("event=pod_livelock_suspected "))
        .unwrap_or_else(|| panic!("no livelock suspected: {}", describe(&output)));
    assert_eq!(field(livelock, "progress"), Some("none"), "{livelock}");
    assert_eq!(field(livelock, "heartbeat"), Some("missing"), "{livelock}");

    // The same loops, with the workload touching the heartbeat every 100 ms (for about 5 s, which the
    // shell waits for): oversubscribed, but progressing, so never suspected.
    let beating =
        format!("(i=0; while [ $i -lt 50 ]; do touch {beat}; sleep 0.1; i=$((i+1)); done) & {}", busy(4, 4, 0));
    let output = finish(watched(&cgroup, &marker, &extra, &beating));
    let progressing = events(&output);
    assert!(progressing.iter().any(|line| line.starts_with("event=pod_oversubscribed ")), "{}", describe(&output));
    assert!(progressing.iter().all(|line| !line.starts_with("event=pod_livelock_suspected")), "{progressing:?}");
    drop(marker);
}

/// `GET path` on `addr` with a plain HTTP/1.1 client: the body, or `None` when nothing answers yet.
fn get(addr: &str, path: &str) -> Option<String> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_owned())
}

/// The value of the one series an instant query of Prometheus' HTTP API returns, once it has one.
fn prometheus_value(prometheus: &str, query: &str) -> Option<f64> {
    let body = get(prometheus, &format!("/api/v1/query?query={query}"))?;
    let answer: serde_json::Value = serde_json::from_str(&body).ok()?;
    let value = answer.pointer("/data/result/0/value/1")?.as_str()?;
    value.parse().ok()
}

/// The program `name` found on `PATH`.
fn on_path(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(name)).find(|path| path.is_file())
}

/// A free loopback port (taken and released: Prometheus cannot report a port 0 it was given).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A real Prometheus server (Debian's `prometheus`, when installed: neither PyPI nor crates.io ships one,
/// so CI, which installs from those alone, skips this test and says so) scrapes `/metrics` on loopback, and
/// the series are read back through its HTTP API.
#[test]
fn a_real_prometheus_scrapes_the_metrics_and_answers_queries() {
    use std::io::BufRead as _;
    let Some(prometheus) = on_path("prometheus") else {
        skip_inapplicable("prometheus is not installed (Debian's `prometheus` package)");
        return;
    };
    let _serial = REAL_CGROUP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(cgroup) = one_cpu_cgroup() else { return };
    let marker = Marker::new();
    let extra = [&WATCH[..], &["--metrics-addr", "127.0.0.1:0"]].concat();
    let mut child = watched(&cgroup, &marker, &extra, &busy(4, 40, 0))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let first = stderr.lines().next().unwrap().unwrap();
    let target = field(&first, "addr").unwrap_or_else(|| panic!("no address logged: {first}")).to_owned();

    let dir = tempfile::TempDir::new().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: capslint\n    \
             static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let web = format!("127.0.0.1:{}", free_port());
    let mut server = Command::new(prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
        .arg(format!("--web.listen-address={web}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    let deadline = std::time::Instant::now() + Duration::from_secs(45);
    let mut read = (None, None, None);
    while std::time::Instant::now() < deadline {
        read = (
            prometheus_value(&web, "capslint_watch_cpu_limit_cores"),
            prometheus_value(&web, "capslint_watch_threads"),
            prometheus_value(&web, "capslint_watch_oversubscribed"),
        );
        if read.0.is_some() && read.1.is_some() && read.2 == Some(1.0) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let up = prometheus_value(&web, "up%7Bjob%3D%22capslint%22%7D");
    let _ = server.kill();
    let _ = server.wait();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(up, Some(1.0), "Prometheus scraped the target: {read:?}");
    assert_eq!(read.0, Some(1.0), "the limit, read back through Prometheus");
    assert!(read.1.is_some_and(|threads| threads >= 5.0), "the tree's threads: {read:?}");
    assert_eq!(read.2, Some(1.0), "the verdict, read back through Prometheus: {read:?}");
}
