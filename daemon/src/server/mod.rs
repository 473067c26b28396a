//! beed's lifecycle and socket API.
//!
//! Start-up order: single-instance lock beside the socket, store (refuse to
//! start on a store we cannot trust), socket (inherited from systemd or bound
//! 0600 in a 0700 directory, a stale one replaced), spool ingestion, then
//! `READY=1`. Shutdown stops accepting, lets in-flight requests finish (their
//! appends commit), drains the writer and removes the socket it bound.

pub mod events;

use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bee_proto::api::{
    ApiError, ApiErrorCode, DELIVERY_OBSERVATIONS_PATH, DELIVERY_READ_PATH, DELIVERY_REPORT_PATH, DaemonStatus,
    DeliveryReadRequest, DeliveryReportRequest, EXIT_CODE_HEADER, MAX_REQUEST_BODY_BYTES, PROTOCOL_HEADER,
    PROTOCOL_VERSION, STATUS_PATH,
};
use bee_proto::delivery::{MAX_GROUP_LIMIT, MAX_RECORD_BYTES, Observation, SessionSelector};
use bee_proto::ledger::{
    LEDGER_INGEST_PATH, LEDGER_RECORDS_PATH, LedgerAppend, LedgerAppended, MAX_LEDGER_RECORD_BYTES,
};
use bee_proto::tokens::{
    COMMAND_MILLIS, CountAnswer, CountRequest, Encoding, MAX_COUNT_REQUEST_BYTES, MAX_INPUT_BYTES, MAX_INPUTS,
    MAX_TOTAL_BYTES, TOKEN_COUNT_PATH,
};
use hyper::body::Bytes;
use serde::de::DeserializeOwned;
use std::collections::HashSet;
use std::future::Future;
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::delivery::report::{self, ReportQuery};
use crate::delivery::store::{AppendRefusal, StoreError, WritableStore};
use crate::events::intake::EventsState;
use crate::events::store::EventStore;
use crate::ledger::ingest::{self, Roots};
use crate::ledger::store::Ledger;
use crate::rendered::Rendered;
use crate::storage::files;
use crate::storage::writer::{self, WriterHandle};
use crate::tokens::encoders::Encoders;

/// How beed is set up.
#[derive(Debug, Clone)]
pub struct DaemonConfig {
    pub socket: PathBuf,
    pub delivery_store: PathBuf,
    pub ledger_store: PathBuf,
    pub spool_dir: PathBuf,
    /// How often the spool is looked at while running.
    pub spool_poll: Duration,
    /// Provider logs ingested into the ledger.
    pub log_roots: Roots,
    /// How often the provider logs are looked at; `None` turns ingestion off.
    pub ingest_every: Option<Duration>,
    pub events_store: PathBuf,
    /// The optional loopback TCP listener (dashboard, reference senders).
    pub http: Option<std::net::SocketAddr>,
    /// Source apps whose full event payload is stored (opt-in).
    pub capture_payload: HashSet<String>,
}

impl DaemonConfig {
    /// The default configuration under `${BEE_HOME:-$HOME}`, with overrides.
    pub fn from_env(socket: Option<PathBuf>, delivery_store: Option<PathBuf>) -> Result<DaemonConfig, StartError> {
        let socket = socket.or_else(bee_proto::paths::socket_path).ok_or(StartError::NoHome)?;
        let delivery_store =
            delivery_store.or_else(bee_proto::paths::default_delivery_store).ok_or(StartError::NoHome)?;
        let spool_dir = bee_proto::paths::spool_dir().ok_or(StartError::NoHome)?;
        let ledger_store = bee_proto::paths::default_ledger_store().ok_or(StartError::NoHome)?;
        Ok(DaemonConfig {
            socket: std::path::absolute(socket)?,
            delivery_store: std::path::absolute(delivery_store)?,
            ledger_store: std::path::absolute(ledger_store)?,
            spool_dir,
            spool_poll: Duration::from_secs(2),
            log_roots: Roots::from_env(),
            ingest_every: Some(Duration::from_secs(10)),
            events_store: std::path::absolute(bee_proto::paths::default_events_store().ok_or(StartError::NoHome)?)?,
            http: None,
            capture_payload: HashSet::new(),
        })
    }
}

/// Why beed did not start (or stopped with an error).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("neither BEE_HOME nor HOME is set; cannot place Bee's files")]
    NoHome,
    #[error("another beed is already running on {socket}{}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    AlreadyRunning { socket: PathBuf, pid: Option<u32> },
    #[error("{0} exists and is not a socket; refusing to replace it")]
    NotASocket(PathBuf),
    #[error("--http must name a loopback address, not {0}")]
    NotLoopback(std::net::SocketAddr),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
}

struct AppState {
    writer: WriterHandle<WritableStore>,
    ledger: Arc<Mutex<Ledger>>,
    log_roots: Roots,
    /// BPE encoders, built once and kept for the daemon's lifetime.
    encoders: Arc<Encoders>,
    delivery_store: PathBuf,
    socket: PathBuf,
    started_at_utc: String,
    socket_activated: bool,
}

/// Runs beed until `shutdown` resolves.
pub async fn serve(
    config: DaemonConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let socket_dir = config.socket.parent().map(Path::to_owned).unwrap_or_else(|| PathBuf::from("."));
    files::ensure_private_dir(&socket_dir)?;
    let _instance_lock = take_instance_lock(&config.socket)?;

    let store = WritableStore::open(&config.delivery_store)?;
    tracing::info!(store = %config.delivery_store.display(), records = store.records(), "delivery store open");
    let (writer, writer_thread) = writer::spawn(store, "bee-writer")?;
    let ledger = Arc::new(Mutex::new(Ledger::open(&config.ledger_store)?));
    tracing::info!(ledger = %config.ledger_store.display(), "ledger open");
    if let Some(addr) = config.http
        && !addr.ip().is_loopback()
    {
        return Err(StartError::NotLoopback(addr));
    }
    let (events_writer, events_thread) = writer::spawn(EventStore::open(&config.events_store)?, "bee-events")?;
    let (stopping, stop_seen) = tokio::sync::watch::channel(false);
    let events = Arc::new(EventsState {
        writer: events_writer,
        store: config.events_store.clone(),
        live: tokio::sync::broadcast::channel(events::LIVE_BACKLOG).0,
        capture: config.capture_payload.clone(),
        spool_dir: config.spool_dir.clone(),
        stopping: stop_seen.clone(),
    });
    tracing::info!(events = %config.events_store.display(), "events store open");

    let (listener, socket_activated) = listen(&config.socket)?;
    let uid = rustix::process::geteuid().as_raw();
    let tcp = match config.http {
        Some(addr) => Some(tokio::net::TcpListener::bind(addr).await?),
        None => None,
    };

    let spools = Spools {
        dir: config.spool_dir.clone(),
        writer: writer.clone(),
        ledger: ledger.clone(),
        events: events.clone(),
    };
    spools.ingest().await;
    // Lost ledger writes from before this start are logged before "ready".
    let lost = crate::ledger::record_failures::Watch::start();
    let poller = tokio::spawn(spools.poll(config.spool_poll, lost));
    let ingester =
        config.ingest_every.map(|every| tokio::spawn(ingest_logs(ledger.clone(), config.log_roots.clone(), every)));

    let encoders = Arc::new(Encoders::default());
    let state = Arc::new(AppState {
        writer,
        ledger,
        log_roots: config.log_roots.clone(),
        encoders: encoders.clone(),
        delivery_store: config.delivery_store.clone(),
        socket: config.socket.clone(),
        started_at_utc: bee_proto::time::now_rfc3339(),
        socket_activated,
    });
    let app = router(state, events.clone());
    let http_server = match tcp {
        Some(tcp) => {
            let local = tcp.local_addr()?;
            tracing::info!(http = %local, "dashboard and event API on loopback");
            let mut stop = stop_seen.clone();
            let app = tcp_router(events.clone());
            Some(tokio::spawn(async move {
                axum::serve(tcp, app)
                    .with_graceful_shutdown(async move {
                        let _ = stop.wait_for(|stopping| *stopping).await;
                    })
                    .await
            }))
        }
        None => None,
    };
    drop(events);
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
    tracing::info!(socket = %config.socket.display(), socket_activated, "beed ready");
    // Build the encoders now, off the request path, so the first estimate
    // already finds them warm.
    tokio::task::spawn_blocking(move || {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            if encoders.get(encoding).is_none() {
                tracing::error!(?encoding, "encoding data unavailable");
            }
        }
        tracing::debug!("encoders built");
    });

    // Stream clients are told to go when the stop begins: an open stream
    // would otherwise hold the graceful shutdown forever.
    let shutdown = async move {
        shutdown.await;
        let _ = stopping.send(true);
    };
    let served = axum::serve(SameUserListener { inner: listener, uid }, app).with_graceful_shutdown(shutdown).await;
    if let Some(http_server) = http_server
        && let Ok(Err(err)) = http_server.await
    {
        tracing::warn!(error = %err, "loopback listener ended with an error");
    }
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    tracing::info!("shutting down: draining the writer");
    poller.abort();
    let _ = poller.await;
    if let Some(ingester) = ingester {
        ingester.abort();
        let _ = ingester.await;
    }
    // The last writer handles went with the routers; the threads drain and end.
    for thread in [writer_thread, events_thread] {
        let joined = tokio::task::spawn_blocking(move || thread.join()).await;
        if joined.is_err() || joined.is_ok_and(|inner| inner.is_err()) {
            tracing::error!("writer thread ended abnormally");
        }
    }
    if !socket_activated {
        let _ = std::fs::remove_file(&config.socket);
    }
    served?;
    tracing::info!("beed stopped");
    Ok(())
}

/// Holds `<socket>.lock` exclusively for the daemon's lifetime.
fn take_instance_lock(socket: &Path) -> Result<std::fs::File, StartError> {
    let mut lock_path = socket.as_os_str().to_owned();
    lock_path.push(".lock");
    let mut lock = files::open_private_file(Path::new(&lock_path))?;
    match lock.try_lock() {
        Ok(()) => {
            lock.set_len(0)?;
            write!(lock, "{}", std::process::id())?;
            Ok(lock)
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = lock.rewind().and_then(|_| lock.read_to_string(&mut pid));
            Err(StartError::AlreadyRunning { socket: socket.to_owned(), pid: pid.trim().parse().ok() })
        }
        Err(std::fs::TryLockError::Error(err)) => Err(err.into()),
    }
}

/// The listening socket: inherited from systemd, or bound here.
fn listen(socket: &Path) -> Result<(tokio::net::UnixListener, bool), StartError> {
    let mut inherited = listenfd::ListenFd::from_env();
    if let Some(std_listener) = inherited.take_unix_listener(0)? {
        std_listener.set_nonblocking(true)?;
        return Ok((tokio::net::UnixListener::from_std(std_listener)?, true));
    }
    match std::fs::symlink_metadata(socket) {
        Ok(meta) if meta.file_type().is_socket() => {
            if std::os::unix::net::UnixStream::connect(socket).is_ok() {
                return Err(StartError::AlreadyRunning { socket: socket.to_owned(), pid: None });
            }
            tracing::info!(socket = %socket.display(), "replacing a stale socket");
            std::fs::remove_file(socket)?;
        }
        Ok(_) => return Err(StartError::NotASocket(socket.to_owned())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err.into()),
    }
    let listener = tokio::net::UnixListener::bind(socket)?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    Ok((listener, false))
}

/// How long a transcript must be untouched before its last response is final.
const QUIET: Duration = Duration::from_secs(30);

/// Ingests the provider logs now and then every `every`.
async fn ingest_logs(ledger: Arc<Mutex<Ledger>>, roots: Roots, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let (ledger, roots) = (ledger.clone(), roots.clone());
        match tokio::task::spawn_blocking(move || ingest::pass(&ledger, &roots, QUIET, 2, &|_, _| {})).await {
            Ok(Ok(summary)) if summary.files_read > 0 => tracing::info!(?summary, "ingested provider logs"),
            Ok(Ok(_)) => {}
            Ok(Err(err)) => tracing::warn!(error = %err, "log ingestion failed"),
            Err(err) => tracing::error!(error = %err, "log ingestion panicked"),
        }
    }
}

/// Everything the spool ingestion needs.
#[derive(Clone)]
struct Spools {
    dir: PathBuf,
    writer: WriterHandle<WritableStore>,
    ledger: Arc<Mutex<Ledger>>,
    events: Arc<EventsState>,
}

impl Spools {
    async fn ingest(&self) {
        let spools = self.clone();
        let shown = self.dir.display().to_string();
        let done = tokio::task::spawn_blocking(move || {
            crate::delivery::spool::ingest(&spools.dir, &spools.writer)
                .and_then(|_| crate::ledger::spool::ingest(&spools.dir, &spools.ledger))
                .and_then(|_| crate::events::spool::ingest(&spools.dir, &spools.events))
        })
        .await;
        match done {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => tracing::warn!(spool = %shown, error = %err, "spool ingestion failed"),
            Err(err) => tracing::error!(error = %err, "spool ingestion panicked"),
        }
    }

    async fn poll(self, every: Duration, mut lost: crate::ledger::record_failures::Watch) {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            self.ingest().await;
            lost.poll();
        }
    }
}

/// Accepts only peers running as the daemon's own user.
struct SameUserListener {
    inner: tokio::net::UnixListener,
    uid: u32,
}

impl axum::serve::Listener for SameUserListener {
    type Io = tokio::net::UnixStream;
    type Addr = tokio::net::unix::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => match stream.peer_cred() {
                    Ok(cred) if cred.uid() == self.uid => return (stream, addr),
                    Ok(cred) => tracing::warn!(peer_uid = cred.uid(), "refused a peer of another user"),
                    Err(err) => tracing::warn!(error = %err, "refused a peer without credentials"),
                },
                Err(err) => {
                    // Out of descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

fn router(state: Arc<AppState>, events: Arc<EventsState>) -> Router {
    let api = Router::new()
        .route(STATUS_PATH, get(status))
        .route(DELIVERY_OBSERVATIONS_PATH, post(append))
        .route(DELIVERY_REPORT_PATH, post(report))
        .route(DELIVERY_READ_PATH, post(read))
        .route(LEDGER_RECORDS_PATH, post(append_ledger).layer(DefaultBodyLimit::max(MAX_LEDGER_APPEND_BYTES)))
        .route(LEDGER_INGEST_PATH, post(ingest_now))
        .route(TOKEN_COUNT_PATH, post(count).layer(DefaultBodyLimit::max(MAX_COUNT_REQUEST_BYTES)))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BODY_BYTES))
        .with_state(state);
    api.merge(events::router(events))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
        .layer(middleware::from_fn(protocol_layer))
}

/// The loopback TCP listener: the event API and the dashboard, nothing of
/// the stores' own API (that stays behind the socket's peer-uid check).
fn tcp_router(events: Arc<EventsState>) -> Router {
    events::router(events)
        .route("/", get(events::dashboard))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
        .layer(middleware::from_fn(events::loopback_only))
}

/// Refuses requests of another protocol; stamps every answer with ours.
async fn protocol_layer(request: Request, next: Next) -> Response {
    let ours = HeaderValue::from(PROTOCOL_VERSION);
    let mismatch = request.headers().get(PROTOCOL_HEADER).is_some_and(|theirs| theirs != ours);
    let mut response = if mismatch {
        Failure::new(ApiErrorCode::ProtocolMismatch, format!("this beed speaks protocol {PROTOCOL_VERSION}"))
            .into_response()
    } else {
        next.run(request).await
    };
    response.headers_mut().insert(PROTOCOL_HEADER, ours);
    response
}

/// An error answer: its code decides the HTTP status.
struct Failure {
    code: ApiErrorCode,
    message: String,
}

impl Failure {
    fn new(code: ApiErrorCode, message: impl Into<String>) -> Failure {
        Failure { code, message: message.into() }
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let status = match self.code {
            ApiErrorCode::InvalidRequest => StatusCode::BAD_REQUEST,
            ApiErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiErrorCode::ProtocolMismatch => StatusCode::CONFLICT,
            ApiErrorCode::Capacity => StatusCode::INSUFFICIENT_STORAGE,
            ApiErrorCode::Io => StatusCode::SERVICE_UNAVAILABLE,
            ApiErrorCode::StoreNotServed | ApiErrorCode::NotFound => StatusCode::NOT_FOUND,
        };
        (status, Json(ApiError { error_code: self.code, message: self.message })).into_response()
    }
}

async fn not_found() -> Failure {
    Failure::new(ApiErrorCode::NotFound, "no such API path or method")
}

/// Parses a JSON body, answering what was wrong with it.
fn parse_body<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, Failure> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Failure::new(ApiErrorCode::PayloadTooLarge, format!("body is over {MAX_REQUEST_BODY_BYTES} bytes"))
        } else {
            Failure::new(ApiErrorCode::InvalidRequest, rejection.body_text())
        }
    })?;
    serde_json::from_slice(&body).map_err(|err| Failure::new(ApiErrorCode::InvalidRequest, err.to_string()))
}

async fn append(State(state): State<Arc<AppState>>, body: Result<Bytes, BytesRejection>) -> Result<Response, Failure> {
    // An observation is metadata only; its frame is bounded like a spool line.
    if body.as_ref().is_ok_and(|bytes| bytes.len() > MAX_RECORD_BYTES) {
        return Err(Failure::new(
            ApiErrorCode::PayloadTooLarge,
            format!("an observation is at most {MAX_RECORD_BYTES} bytes"),
        ));
    }
    let observation: Observation = parse_body(body)?;
    observation.validate().map_err(|err| Failure::new(ApiErrorCode::InvalidRequest, err.to_string()))?;
    match state.writer.append(observation).await {
        Ok(answer) => Ok(Json(answer).into_response()),
        Err(AppendRefusal::Capacity(capacity)) => {
            Err(Failure::new(ApiErrorCode::Capacity, format!("store is at capacity ({capacity} observations)")))
        }
        Err(AppendRefusal::Io(reason)) => Err(Failure::new(ApiErrorCode::Io, reason)),
    }
}

fn served_store(state: &AppState, requested: &str) -> Result<PathBuf, Failure> {
    if Path::new(requested) == state.delivery_store {
        Ok(state.delivery_store.clone())
    } else {
        Err(Failure::new(ApiErrorCode::StoreNotServed, "this beed does not serve that store"))
    }
}

async fn answer_blocking(work: impl FnOnce() -> Rendered + Send + 'static) -> Result<Response, Failure> {
    let rendered =
        tokio::task::spawn_blocking(work).await.map_err(|err| Failure::new(ApiErrorCode::Io, err.to_string()))?;
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (HeaderName::from_static(EXIT_CODE_HEADER), HeaderValue::from(u16::from(rendered.exit.code()))),
        ],
        rendered.bytes,
    )
        .into_response())
}

async fn report(State(state): State<Arc<AppState>>, body: Result<Bytes, BytesRejection>) -> Result<Response, Failure> {
    let request: DeliveryReportRequest = parse_body(body)?;
    let store = served_store(&state, &request.store)?;
    if request.limit > MAX_GROUP_LIMIT {
        return Err(Failure::new(ApiErrorCode::InvalidRequest, "limit is over 100"));
    }
    let session = request
        .session
        .map(|s| SessionSelector::new(s.kind, s.id))
        .transpose()
        .map_err(|err| Failure::new(ApiErrorCode::InvalidRequest, err.to_string()))?;
    let query = ReportQuery { session, limit: request.limit };
    tracing::debug!(limit = query.limit, session = query.session.is_some(), "served delivery report");
    answer_blocking(move || report::report(&store, &query)).await
}

async fn read(State(state): State<Arc<AppState>>, body: Result<Bytes, BytesRejection>) -> Result<Response, Failure> {
    let request: DeliveryReadRequest = parse_body(body)?;
    let store = served_store(&state, &request.store)?;
    tracing::debug!("served delivery read");
    answer_blocking(move || report::read(&store, request.event)).await
}

/// Largest ledger append: a run's call plus its limits, with room to spare.
const MAX_LEDGER_APPEND_BYTES: usize = 64 * MAX_LEDGER_RECORD_BYTES;

async fn append_ledger(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<LedgerAppended>, Failure> {
    let request: LedgerAppend = parse_body(body)?;
    for record in &request.records {
        crate::ledger::store::validate(record)
            .map_err(|err| Failure::new(ApiErrorCode::InvalidRequest, err.to_string()))?;
    }
    let ledger = state.ledger.clone();
    let appended = tokio::task::spawn_blocking(move || match ledger.lock() {
        Ok(mut ledger) => ledger.append(&request.records).map_err(|err| err.to_string()),
        Err(_) => Err("ledger lock poisoned".to_owned()),
    })
    .await
    .map_err(|err| Failure::new(ApiErrorCode::Io, err.to_string()))?
    .map_err(|reason| {
        tracing::warn!(code = bee_proto::ledger::RECORD_FAILED, error = %reason, "ledger append failed");
        Failure::new(ApiErrorCode::Io, reason)
    })?;
    tracing::debug!(appended = appended.appended, duplicates = appended.duplicates, "ledger records appended");
    Ok(Json(appended))
}

/// Runs one ingestion pass now (for `beectl ingest` while beed runs).
async fn ingest_now(State(state): State<Arc<AppState>>) -> Result<Json<ingest::PassSummary>, Failure> {
    let (ledger, roots) = (state.ledger.clone(), state.log_roots.clone());
    let summary = tokio::task::spawn_blocking(move || ingest::pass(&ledger, &roots, QUIET, 2, &|_, _| {}))
        .await
        .map_err(|err| Failure::new(ApiErrorCode::Io, err.to_string()))?
        .map_err(|err| Failure::new(ApiErrorCode::Io, err.to_string()))?;
    Ok(Json(summary))
}

async fn count(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<CountAnswer>, Failure> {
    let request: CountRequest = parse_body(body)?;
    let sizes: Vec<u64> = request.inputs.iter().map(|text| text.len() as u64).collect();
    if sizes.len() > MAX_INPUTS
        || sizes.iter().any(|&size| size > MAX_INPUT_BYTES)
        || sizes.iter().sum::<u64>() > MAX_TOTAL_BYTES
    {
        return Err(Failure::new(ApiErrorCode::InvalidRequest, "inputs exceed the token estimate limits"));
    }
    let budget = Duration::from_millis(request.budget_millis.min(COMMAND_MILLIS));
    tracing::debug!(encoding = ?request.encoding, inputs = request.inputs.len(), "counted tokens");
    let encoders = state.encoders.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + budget;
        match encoders.count(request.encoding, &request.inputs, deadline) {
            Ok(counts) => CountAnswer { counts: Some(counts), error_code: None, error_input_ordinal: None },
            Err(failure) => CountAnswer {
                counts: None,
                error_code: Some(failure.code),
                error_input_ordinal: failure.input.map(|index| index as u64 + 1),
            },
        }
    })
    .await
    .map_err(|err| Failure::new(ApiErrorCode::Io, err.to_string()))?;
    Ok(Json(answer))
}

async fn status(State(state): State<Arc<AppState>>) -> Result<Json<DaemonStatus>, Failure> {
    let store = state.delivery_store.clone();
    let stores = tokio::task::spawn_blocking(move || vec![report::store_status(&store)])
        .await
        .map_err(|err| Failure::new(ApiErrorCode::Io, err.to_string()))?;
    Ok(Json(DaemonStatus {
        protocol_version: PROTOCOL_VERSION,
        daemon_version: env!("CARGO_PKG_VERSION").to_owned(),
        pid: std::process::id(),
        socket: state.socket.display().to_string(),
        started_at_utc: state.started_at_utc.clone(),
        socket_activated: state.socket_activated,
        stores,
    }))
}
