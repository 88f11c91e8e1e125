//! The HTTPS server: TLS with the reloading certificate, HTTP/1.1 with a header read timeout (a client
//! that sends its headers a byte at a time is dropped), a bounded body read within a timeout, the
//! routes (`/validate`, `/mutate`, `/healthz`, `/readyz`, `/metrics`), and a graceful shutdown on
//! SIGTERM or Ctrl-C that stops accepting, answers the requests in flight and then exits.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use crate::tls::{self, ReloadingCert};
use crate::webhook::{Answer, Outcome, Webhook};

/// The largest request body read: the API server's own limit on a request (3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// How many connections are served at once by default.
pub const MAX_CONNECTIONS: usize = 1024;

/// Where and how the server listens.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// The PEM certificate chain.
    pub tls_cert: PathBuf,
    /// The PEM private key.
    pub tls_key: PathBuf,
    /// The largest body read; a larger one is answered 413.
    pub max_body_bytes: usize,
    /// How long a client may take to send a request's headers (and the TLS handshake); past it the
    /// connection is dropped.
    pub header_timeout: Duration,
    /// How long a client may take to send a body.
    pub body_timeout: Duration,
    /// How long the requests in flight may take to finish after SIGTERM.
    pub shutdown_grace: Duration,
    /// How many connections are served at once; further clients wait in the listen backlog.
    pub max_connections: usize,
}

impl ServerOptions {
    /// Options with the default limits.
    pub fn new(addr: SocketAddr, tls_cert: PathBuf, tls_key: PathBuf) -> Self {
        ServerOptions {
            addr,
            tls_cert,
            tls_key,
            max_body_bytes: MAX_BODY_BYTES,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(25),
            max_connections: MAX_CONNECTIONS,
        }
    }
}

/// What every connection shares.
struct Shared {
    webhook: Webhook,
    options: ServerOptions,
    /// Set when the server is shutting down: `/readyz` fails from then on.
    stopping: AtomicBool,
    /// The pool the checks run on: threads with deep stacks, as `check` uses.
    pool: rayon::ThreadPool,
}

/// Runs the server until SIGTERM or Ctrl-C; returns once the requests in flight are answered.
pub fn run(options: ServerOptions, webhook: Webhook) -> Result<(), String> {
    let resolver = Arc::new(ReloadingCert::new(&options.tls_cert, &options.tls_key)?);
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls::server_config(resolver)?));
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(64 * 1024 * 1024)
        .thread_name(|index| format!("capslint-check-{index}"))
        .build()
        .map_err(|error| error.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_io()
        .enable_time()
        .thread_name("capslint-admission")
        .build()
        .map_err(|error| error.to_string())?;
    let shared = Arc::new(Shared { webhook, options, stopping: AtomicBool::new(false), pool });
    runtime.block_on(serve(shared, acceptor))
}

async fn serve(shared: Arc<Shared>, acceptor: tokio_rustls::TlsAcceptor) -> Result<(), String> {
    let listener = TcpListener::bind(shared.options.addr)
        .await
        .map_err(|error| format!("cannot listen on {}: {error}", shared.options.addr))?;
    let local = listener.local_addr().map_err(|error| error.to_string())?;
    eprintln!("capslint admission: listening on https://{local}");
    let (stop_sender, stop) = watch::channel(false);
    let mut connections = JoinSet::new();
    let signal = shutdown_signal();
    tokio::pin!(signal);
    let permits = Arc::new(Semaphore::new(shared.options.max_connections.max(1)));
    'serving: loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => permit.map_err(|error| error.to_string())?,
            () = &mut signal => break 'serving,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue 'serving,
        };
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else {
                        // Out of descriptors, or a connection reset before it was accepted: back off a
                        // little rather than spin.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let (shared, acceptor, stop) = (Arc::clone(&shared), acceptor.clone(), stop.clone());
                    connections.spawn(async move {
                        connection(shared, acceptor, stream, stop).await;
                        drop(permit);
                    });
                    break;
                }
                () = &mut signal => break 'serving,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
    }
    eprintln!("capslint admission: shutting down; finishing {} connection(s)", connections.len());
    shared.stopping.store(true, Ordering::SeqCst);
    drop(listener);
    let _ = stop_sender.send(true);
    let drained =
        tokio::time::timeout(shared.options.shutdown_grace, async { while connections.join_next().await.is_some() {} })
            .await;
    if drained.is_err() {
        eprintln!("capslint admission: requests still in flight after the grace period were dropped");
    }
    Ok(())
}

/// SIGTERM (on unix) or Ctrl-C.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// One connection: the handshake within the header timeout, then HTTP/1.1 until the client closes, a
/// timeout drops it, or shutdown lets its request in flight finish.
async fn connection(
    shared: Arc<Shared>,
    acceptor: tokio_rustls::TlsAcceptor,
    stream: tokio::net::TcpStream,
    mut stop: watch::Receiver<bool>,
) {
    let Ok(Ok(tls)) = tokio::time::timeout(shared.options.header_timeout, acceptor.accept(stream)).await else {
        return;
    };
    let service_shared = Arc::clone(&shared);
    let service = hyper::service::service_fn(move |request| {
        let shared = Arc::clone(&service_shared);
        async move { Ok::<_, Infallible>(route(shared, request).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(shared.options.header_timeout).keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(tls), service);
    tokio::pin!(connection);
    if *stop.borrow() {
        connection.as_mut().graceful_shutdown();
    }
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = stop.changed() => connection.as_mut().graceful_shutdown(),
    }
    let _ = connection.await;
}

type Body = Full<Bytes>;

fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

async fn route(shared: Arc<Shared>, request: Request<Incoming>) -> Response<Body> {
    let started = Instant::now();
    let path = request.uri().path().to_string();
    match (request.method(), path.as_str()) {
        (&Method::GET, "/healthz") => reply(StatusCode::OK, "text/plain", "ok\n"),
        (&Method::GET, "/readyz") if shared.stopping.load(Ordering::SeqCst) => {
            reply(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "shutting down\n")
        }
        (&Method::GET, "/readyz") => reply(StatusCode::OK, "text/plain", "ok\n"),
        (&Method::GET, "/metrics") => {
            reply(StatusCode::OK, "text/plain; version=0.0.4", shared.webhook.metrics().render())
        }
        (&Method::POST, "/validate" | "/mutate") => {
            let endpoint = if path == "/validate" { "validate" } else { "mutate" };
            let (response, outcome) = admit(&shared, request, endpoint).await;
            shared.webhook.metrics().request(endpoint, outcome.label(), started.elapsed());
            response
        }
        (_, "/validate" | "/mutate" | "/healthz" | "/readyz" | "/metrics") => {
            reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n")
        }
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

/// Reads the body (bounded, within the body timeout) and answers it on the check pool.
async fn admit(shared: &Arc<Shared>, request: Request<Incoming>, endpoint: &'static str) -> (Response<Body>, Outcome) {
    let limit = shared.options.max_body_bytes;
    let too_large = || {
        let message = format!("the body is larger than {limit} bytes\n");
        (reply(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", message), Outcome::Malformed)
    };
    let declared = request.headers().get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return too_large();
    }
    let body =
        match tokio::time::timeout(shared.options.body_timeout, Limited::new(request.into_body(), limit).collect())
            .await
        {
            Err(_) => {
                return (
                    reply(StatusCode::REQUEST_TIMEOUT, "text/plain", "the body took too long\n"),
                    Outcome::Malformed,
                );
            }
            Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => return too_large(),
            Ok(Err(error)) => {
                let message = format!("cannot read the body: {error}\n");
                return (reply(StatusCode::BAD_REQUEST, "text/plain", message), Outcome::Malformed);
            }
            Ok(Ok(collected)) => collected.to_bytes(),
        };
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let worker = Arc::clone(shared);
    shared.pool.spawn(move || {
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match endpoint {
            "validate" => worker.webhook.validate(&body),
            _ => worker.webhook.mutate(&body),
        }));
        let _ = sender.send(answer);
    });
    match receiver.await {
        Ok(Ok(Answer::Review(review, outcome))) => {
            (reply(StatusCode::OK, "application/json", review.to_json()), outcome)
        }
        Ok(Ok(Answer::BadRequest(malformed))) => {
            (reply(StatusCode::BAD_REQUEST, "text/plain", format!("{malformed}\n")), Outcome::Malformed)
        }
        _ => (
            reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "internal error while checking the object\n"),
            Outcome::Malformed,
        ),
    }
}
