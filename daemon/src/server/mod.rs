//! beed: its lifecycle here, its command line in [`command`], its socket in
//! [`socket`], the `/v1/` API in
//! [`api`], the event routes and dashboard in [`events`], the one round
//! trip of a `bee-hook on` process in [`hook`], the loopback TCP
//! listener's guard and accept loop in [`http`], the usage page's data on
//! it in [`usage_page`], the ledger's long poll both listeners serve in
//! [`changes`], the OTLP receiver for
//! Claude Code's own telemetry in [`otlp`], and the background ingestion in
//! [`background`]. Behind the `server` feature, so
//! `beectl` links the domains without axum.
//!
//! May use: every domain, `storage`, `rendered`. Never `client`.
//!
//! Start-up order: single-instance lock beside the socket, store (refuse to
//! start on a store we cannot trust), socket (inherited from systemd or bound
//! 0600 in a 0700 directory, a stale one replaced), spool ingestion, then
//! `READY=1`. Shutdown stops accepting, lets in-flight requests finish (their
//! appends commit), drains the writer and removes the socket it bound.

mod api;
mod background;
mod changes;
pub mod command;
mod error;
pub mod events;
mod hook;
pub mod http;
mod otlp;
mod peer;
mod socket;
mod usage_page;

use bee_proto::tokens::Encoding;
use std::collections::HashSet;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::delivery::store::WritableStore;
use crate::events::intake::EventsState;
use crate::events::store::EventStore;
use crate::ledger::intake::ingest::Roots;
use crate::ledger::stored::store::Ledger;
use crate::storage::files;
use crate::storage::sqlite::DbError;
use crate::storage::writer;
use crate::tokens::encoders::Encoders;
use api::{AppState, router, tcp_router};
use background::{Spools, ingest_logs};
pub use error::StartError;
use socket::{SameUserListener, listen, take_instance_lock};

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
    /// Reads on the loopback listener without the per-user secret.
    pub http_open_reads: bool,
    /// Origins whose pages may answer an agent's question without the
    /// secret, from beed's own user (`--http-allow-origin`).
    pub http_allow_origins: Vec<String>,
    /// The optional loopback OTLP/HTTP receiver (Claude Code's telemetry).
    pub otlp: Option<std::net::SocketAddr>,
    /// Source apps whose full event payload is stored (opt-in).
    pub capture_payload: HashSet<String>,
    /// Pinned manifests the dashboard's verdicts use, per source app.
    pub manifests: Vec<PathBuf>,
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
            http_open_reads: false,
            http_allow_origins: Vec::new(),
            otlp: None,
            capture_payload: HashSet::new(),
            manifests: crate::events::audit::default_manifests(),
        })
    }
}

/// Longest beed waits for an offline `beectl ingest` to let go of the ledger.
const LEDGER_WAIT: Duration = Duration::from_secs(600);

/// Opens the ledger, waiting while an offline `beectl ingest` holds it — a
/// first import under socket activation is the common case — instead of
/// failing the start (and being restarted in a loop).
async fn open_ledger(dir: &Path) -> Result<Ledger, StartError> {
    let deadline = std::time::Instant::now() + LEDGER_WAIT;
    let mut said = false;
    loop {
        match Ledger::open(dir) {
            Err(DbError::Locked(_)) if std::time::Instant::now() < deadline => {
                if !said {
                    tracing::info!(ledger = %dir.display(), "an offline ingestion holds the ledger; waiting for it to finish");
                    said = true;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            opened => return Ok(opened?),
        }
    }
}

/// Runs beed until `shutdown` resolves.
pub async fn serve(
    config: DaemonConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let open_files = socket::raise_open_file_limit();
    tracing::debug!(?open_files, "open-file limit");
    // The bundled price snapshot is read once per process: read now, beside
    // the start, so the first status line's glance (within bee-hook's
    // deadline) finds it read.
    tokio::task::spawn_blocking(|| drop(crate::ledger::views::prices::PriceTable::user_or_bundled()));
    let socket_dir = config.socket.parent().map(Path::to_owned).unwrap_or_else(|| PathBuf::from("."));
    files::ensure_private_dir(&socket_dir)?;
    let _instance_lock = take_instance_lock(&config.socket)?;

    let store = WritableStore::open(&config.delivery_store)?;
    tracing::info!(store = %config.delivery_store.display(), records = store.records(), "delivery store open");
    let (writer, writer_thread) = writer::spawn(store, "bee-writer")?;
    let mut ledger = open_ledger(&config.ledger_store).await?;
    let changes = Arc::new(tokio::sync::watch::Sender::new(0u64));
    let bump = changes.clone();
    ledger.on_change(Box::new(move || bump.send_modify(|generation| *generation += 1)));
    let ledger = Arc::new(Mutex::new(ledger));
    tracing::info!(ledger = %config.ledger_store.display(), "ledger open");
    for (flag, addr) in [("--http", config.http), ("--otlp", config.otlp)] {
        if let Some(addr) = addr
            && !addr.ip().is_loopback()
        {
            return Err(StartError::NotLoopback(flag, addr));
        }
    }
    let (events_writer, events_thread) = writer::spawn(EventStore::open(&config.events_store)?, "bee-events")?;
    let (stopping, stop_seen) = tokio::sync::watch::channel(false);
    let events = Arc::new(EventsState {
        writer: events_writer,
        store: config.events_store.clone(),
        live: tokio::sync::broadcast::channel(events::LIVE_BACKLOG).0,
        capture: config.capture_payload.clone(),
        manifests: config.manifests.clone(),
        spool_dir: config.spool_dir.clone(),
        stopping: stop_seen.clone(),
        ingestion: std::sync::OnceLock::new(),
    });
    tracing::info!(events = %config.events_store.display(), "events store open");
    // A stored hook event is a change too: live views wait on one signal.
    let mut live = events.live.subscribe();
    let bump = changes.clone();
    tokio::spawn(async move {
        // Lagged is a change too; only a closed channel ends the watch.
        while !matches!(live.recv().await, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
            bump.send_modify(|generation| *generation += 1);
        }
    });

    let (listener, socket_activated) = listen(&config.socket)?;
    let uid = rustix::process::geteuid().as_raw();
    let tcp = bind(config.http).await?;
    let otlp_tcp = bind(config.otlp).await?;

    let spools = Spools {
        dir: config.spool_dir.clone(),
        writer: writer.clone(),
        ledger: ledger.clone(),
        events: events.clone(),
    };
    spools.ingest().await;
    // Lost ledger writes from before this start are logged before "ready".
    let lost = crate::ledger::intake::record_failures::Watch::start();
    let poller = tokio::spawn(spools.poll(config.spool_poll, lost));
    let ingestion = Arc::new(crate::ledger::intake::ingest::SinglePass::new(
        ledger.clone(),
        config.log_roots.clone(),
        background::QUIET,
    ));
    let failure = ingestion.clone();
    let _ = events.ingestion.set(Box::new(move || failure.last_failure()));
    let ingester = config.ingest_every.map(|every| tokio::spawn(ingest_logs(ingestion.clone(), every)));
    let exporter = start_export(&config);

    let otlp_server = match otlp_tcp {
        Some(tcp) => {
            tracing::info!(otlp = %tcp.local_addr()?, "OTLP/HTTP receiver on loopback (Claude Code's telemetry)");
            Some(tokio::spawn(http::serve(tcp, otlp::router(ledger.clone()), stop_seen.clone())))
        }
        None => None,
    };

    let encoders = Arc::new(Encoders::default());
    let state = Arc::new(AppState {
        writer,
        ledger,
        ingestion,
        encoders: encoders.clone(),
        delivery_store: config.delivery_store.clone(),
        socket: config.socket.clone(),
        started_at_utc: bee_proto::time::now_rfc3339(),
        socket_activated,
        ledger_store: config.ledger_store.clone(),
        events_store: config.events_store.clone(),
        glance: Mutex::new(None),
        changes: changes.clone(),
    });
    let hook_routes = hook::router(state.clone(), events.clone());
    let app = router(state, events.clone(), hook_routes);
    let run_dir = config.socket.parent().map(Path::to_owned).unwrap_or_else(|| PathBuf::from("."));
    let http_server = match tcp {
        Some(tcp) => {
            let local = tcp.local_addr()?;
            // Made even when reads are open: answers always need it.
            let secret = http::read_secret(&run_dir)?;
            let url_file = http::write_dashboard_url(&run_dir, local, &secret)?;
            if config.http_open_reads {
                tracing::warn!(http = %local, "reads on the loopback listener are open to every local user and page");
            }
            tracing::info!(http = %local, url_file = %url_file.display(), "dashboard and event API on loopback");
            let app = tcp_router(
                events.clone(),
                usage_page::UsagePage { ledger_store: config.ledger_store.clone(), changes: changes.clone() },
                http::HttpOptions::events(secret, config.http_open_reads, config.http_allow_origins.clone()),
            );
            Some((tokio::spawn(http::serve(tcp, app, stop_seen.clone())), url_file))
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
    if let Some((http_server, url_file)) = http_server {
        let _ = http_server.await;
        let _ = std::fs::remove_file(url_file);
    }
    if let Some(otlp_server) = otlp_server {
        let _ = otlp_server.await;
    }
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    tracing::info!("shutting down: draining the writer");
    poller.abort();
    let _ = poller.await;
    for task in [ingester, exporter].into_iter().flatten() {
        task.abort();
        let _ = task.await;
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

/// A loopback TCP listener, when one was asked for.
async fn bind(addr: Option<std::net::SocketAddr>) -> io::Result<Option<tokio::net::TcpListener>> {
    match addr {
        Some(addr) => tokio::net::TcpListener::bind(addr).await.map(Some),
        None => Ok(None),
    }
}

/// Starts the exporter when config.toml's `[export]` names a destination;
/// a setting that is wrong is logged and nothing is sent.
fn start_export(config: &DaemonConfig) -> Option<tokio::task::JoinHandle<()>> {
    let settings = crate::export::settings();
    for error in &settings.errors {
        tracing::error!("config.toml [export]: {error}; nothing is exported");
    }
    let stores = crate::export::Stores {
        ledger: config.ledger_store.clone(),
        delivery: config.delivery_store.clone(),
        events: config.events_store.clone(),
        manifests: config.manifests.clone(),
        spool: config.spool_dir.clone(),
        socket: config.socket.clone(),
    };
    settings.config.map(|export| tokio::spawn(crate::export::exporter::run(export, stores)))
}
