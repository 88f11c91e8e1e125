//! The Prometheus metrics of `exec --watch --metrics-addr ADDR`: the text exposition format (0.0.4)
//! at `/metrics`, rendered from the newest assessment after each sample.
//!
//! Served by hyper (HTTP/1) on a current-thread tokio runtime on a thread of its own, which blocks
//! every signal so that the supervisor's thread takes them all. The address is bound before the
//! workload starts, so a bad one is an error then, not a silent absence of metrics.

use std::fmt::Write as _;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex, PoisonError};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};

use crate::judge::Assessment;

/// The content type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The page `/metrics` serves, replaced after each sample.
pub type Page = Arc<Mutex<String>>;

/// One metric family.
struct Family<'a> {
    name: &'a str,
    kind: &'a str,
    help: &'a str,
    value: Option<f64>,
}

/// Renders the metrics of an assessment (`None` before the first sample: the verdicts only).
pub fn render(assessment: Option<&Assessment>) -> String {
    let sample = assessment.map(|a| &a.sample);
    let throttling = sample.and_then(|s| s.cpu_stat);
    let pressure = sample.and_then(|s| s.pressure);
    let flag = |on: bool| if on { 1.0 } else { 0.0 };
    let families = [
        Family {
            name: "capslint_watch_processes",
            kind: "gauge",
            help: "Processes of the workload's tree.",
            value: sample.map(|s| s.processes as f64),
        },
        Family {
            name: "capslint_watch_threads",
            kind: "gauge",
            help: "Threads of the workload's process tree.",
            value: sample.map(|s| s.threads as f64),
        },
        Family {
            name: "capslint_watch_runnable_threads",
            kind: "gauge",
            help: "Threads of the workload's process tree that are runnable (running or waiting for a CPU).",
            value: sample.map(|s| s.runnable as f64),
        },
        Family {
            name: "capslint_watch_cpu_limit_cores",
            kind: "gauge",
            help: "The CPU limit: the cgroup's tightest CFS quota, else the limit the caps were set from.",
            value: sample.map(|s| s.limit),
        },
        Family {
            name: "capslint_watch_workload_cpu_seconds_total",
            kind: "counter",
            help: "CPU time used by the workload's process tree, user and system.",
            value: sample.map(|s| s.cpu_seconds),
        },
        Family {
            name: "capslint_watch_cfs_periods_total",
            kind: "counter",
            help: "CFS enforcement periods elapsed in the cgroup that sets the quota (cpu.stat nr_periods).",
            value: throttling.map(|t| t.nr_periods as f64),
        },
        Family {
            name: "capslint_watch_cfs_throttled_periods_total",
            kind: "counter",
            help: "CFS periods in which the cgroup was throttled (cpu.stat nr_throttled).",
            value: throttling.map(|t| t.nr_throttled as f64),
        },
        Family {
            name: "capslint_watch_cfs_throttled_seconds_total",
            kind: "counter",
            help: "Time the cgroup's tasks were throttled (cpu.stat throttled_time or throttled_usec).",
            value: throttling.map(|t| t.throttled_usec as f64 / 1e6),
        },
        Family {
            name: "capslint_watch_cpu_pressure_some_seconds_total",
            kind: "counter",
            help: "Time some runnable task of the cgroup waited for a CPU (cgroup v2 cpu.pressure).",
            value: pressure.map(|p| p.some.total_usec as f64 / 1e6),
        },
        Family {
            name: "capslint_watch_oversubscribed",
            kind: "gauge",
            help: "1 while the tree has more runnable threads than the CPU limit over the window, else 0.",
            value: Some(flag(assessment.is_some_and(|a| a.oversubscribed))),
        },
        Family {
            name: "capslint_watch_livelock_suspected",
            kind: "gauge",
            help: "1 while the cgroup is throttled with no progress over the window, else 0.",
            value: Some(flag(assessment.is_some_and(|a| a.livelock))),
        },
    ];
    let mut page = String::new();
    for family in families {
        let Some(value) = family.value else { continue };
        let _ = writeln!(page, "# HELP {} {}", family.name, family.help);
        let _ = writeln!(page, "# TYPE {} {}", family.name, family.kind);
        let _ = writeln!(page, "{} {}", family.name, number(value));
    }
    page
}

/// A sample value as Go's `strconv.FormatFloat(v, 'g', -1, 64)` would accept it back.
fn number(value: f64) -> String {
    if value.is_finite() { format!("{value}") } else { "NaN".to_owned() }
}

/// Binds `addr` and serves `page` at `/metrics` on a new thread; the address bound.
pub fn serve(addr: SocketAddr, page: Page) -> io::Result<SocketAddr> {
    let listener = TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    std::thread::Builder::new().name("capslint-metrics".into()).spawn(move || {
        capslint_pod::stop::block_all_in_this_thread();
        runtime.block_on(accept(listener, page));
    })?;
    Ok(bound)
}

async fn accept(listener: TcpListener, page: Page) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let page = Arc::clone(&page);
        tokio::task::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let response = respond(&request, &page);
                async move { Ok::<_, std::convert::Infallible>(response) }
            });
            // A client that goes away mid-request ends only its own connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The response to one request: the page at `GET /metrics`, 404 elsewhere, 405 for other methods.
fn respond<B>(request: &Request<B>, page: &Page) -> Response<Full<Bytes>> {
    let (status, body) = match (request.method(), request.uri().path()) {
        (&Method::GET | &Method::HEAD, "/metrics") => {
            (StatusCode::OK, page.lock().unwrap_or_else(PoisonError::into_inner).clone())
        }
        (_, "/metrics") => (StatusCode::METHOD_NOT_ALLOWED, "only GET\n".to_owned()),
        _ => (StatusCode::NOT_FOUND, "the metrics are at /metrics\n".to_owned()),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = hyper::header::HeaderValue::from_str(CONTENT_TYPE) {
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Progress;
    use crate::sampler::{Heartbeat, Sample};
    use capslint_pod::cfs::CpuStat;
    use std::io::{Read as _, Write as _};

    fn assessment() -> Assessment {
        Assessment {
            sample: Sample {
                limit: 1.5,
                processes: 2,
                threads: 66,
                runnable: 64,
                cpu_seconds: 120.25,
                cpu_stat: Some(CpuStat { nr_periods: 600, nr_throttled: 570, throttled_usec: 41_500_000 }),
                pressure: None,
                heartbeat: Heartbeat::NotWatched,
                top: Vec::new(),
            },
            covered: true,
            over_share: 1.0,
            throttling: None,
            progress: Progress::Unknown,
            oversubscribed: true,
            livelock: false,
        }
    }

    #[test]
    fn renders_the_text_exposition_format() {
        let page = render(Some(&assessment()));
        assert!(page.starts_with(
            "# HELP capslint_watch_processes Processes of the workload's tree.\n\
             # TYPE capslint_watch_processes gauge\n\
             capslint_watch_processes 2\n"
        ));
        for line in [
            "capslint_watch_threads 66",
            "capslint_watch_runnable_threads 64",
            "capslint_watch_cpu_limit_cores 1.5",
            "# TYPE capslint_watch_workload_cpu_seconds_total counter",
            "capslint_watch_workload_cpu_seconds_total 120.25",
            "capslint_watch_cfs_periods_total 600",
            "capslint_watch_cfs_throttled_periods_total 570",
            "capslint_watch_cfs_throttled_seconds_total 41.5",
            "capslint_watch_oversubscribed 1",
            "capslint_watch_livelock_suspected 0",
        ] {
            assert!(page.lines().any(|l| l == line), "{line:?} missing from\n{page}");
        }
        // No pressure on v1: the family is left out, not reported as 0.
        assert!(!page.contains("pressure"));
        // Every family: HELP, TYPE, then one sample of that name; counters end in _total.
        let lines: Vec<&str> = page.lines().collect();
        for chunk in lines.chunks(3) {
            let name = chunk[0].split(' ').nth(2).unwrap();
            assert_eq!(chunk[1].split(' ').nth(2), Some(name), "{chunk:?}");
            assert_eq!(chunk[2].split(' ').next(), Some(name), "{chunk:?}");
            assert_eq!(chunk[1].ends_with(" counter"), name.ends_with("_total"), "{chunk:?}");
        }
    }

    #[test]
    fn before_the_first_sample_only_the_verdicts_are_known() {
        assert_eq!(
            render(None),
            "# HELP capslint_watch_oversubscribed 1 while the tree has more runnable threads than the CPU limit \
             over the window, else 0.\n# TYPE capslint_watch_oversubscribed gauge\ncapslint_watch_oversubscribed 0\n\
             # HELP capslint_watch_livelock_suspected 1 while the cgroup is throttled with no progress over the \
             window, else 0.\n# TYPE capslint_watch_livelock_suspected gauge\ncapslint_watch_livelock_suspected 0\n"
        );
    }

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }

    #[test]
    fn serves_the_page_at_metrics_over_http() {
        let page: Page = Arc::new(Mutex::new(render(Some(&assessment()))));
        let addr = serve("127.0.0.1:0".parse().unwrap(), Arc::clone(&page)).unwrap();
        let response = get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
        assert!(response.contains("content-type: text/plain; version=0.0.4; charset=utf-8\r\n"), "{response}");
        assert!(response.ends_with("capslint_watch_livelock_suspected 0\n"), "{response}");
        *page.lock().unwrap() = render(None);
        let response = get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert!(!response.contains("capslint_watch_threads"), "{response}");
        let response = get(addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert!(response.starts_with("HTTP/1.1 404 Not Found\r\n"), "{response}");
        let response = get(addr, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assert!(response.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"), "{response}");
        // Garbage ends that connection only.
        let _ = get(addr, "\u{0}\u{1}garbage\r\n\r\n");
        assert!(get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn an_address_in_use_is_an_error() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(serve(taken.local_addr().unwrap(), Arc::new(Mutex::new(String::new()))).is_err());
    }
}
