//! The optional loopback TCP listener (`beed --http 127.0.0.1:PORT`): the
//! event API and the dashboard, for browsers and the reference senders.
//!
//! Every local user and every web page the user opens can reach it, so:
//! - the Host must name loopback (no DNS rebinding), and a request whose
//!   `Origin` is not a loopback origin is refused — browsers apply no CORS to
//!   WebSocket upgrades nor to "simple" POSTs, so the server must;
//! - a POST must be `Content-Type: application/json`, which a browser cannot
//!   send cross-site without a preflight that this listener does not grant;
//! - reads (recent events, filter options, the stream, the verdicts) need
//!   the per-user secret kept 0600 beside the socket — as the cookie the
//!   dashboard URL sets, a bearer token or `?token=` — unless beed runs with
//!   `--http-open-reads`;
//! - an answer to an agent's question needs the secret too, except from the
//!   user's own processes (the reference client has no way to send it): on
//!   Linux, a peer whose socket the kernel lists as beed's uid (see
//!   [`super::peer`]), from no page or from a page of an origin the user
//!   allowed (`--http-allow-origin`); another uid gets 401, another origin
//!   403;
//! - a header-read timeout (idle keep-alive included), a cap on open
//!   connections (streams included) and a per-IP request rate keep a flood
//!   on TCP from taking the descriptors and threads the unix socket needs.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use bee_proto::events::{
    AUDIT_SESSIONS_PATH, DASHBOARD_COOKIE, DASHBOARD_URL_FILE, EVENTS_RECENT_PATH, EventError, FILTER_OPTIONS_PATH,
    HTTP_TOKEN_FILE, STREAM_PATH, USAGE_CHANGES_PATH, USAGE_DATA_PATH, USAGE_LIVE_PATH, USAGE_PAGE_PATH,
};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::storage::files;

/// Longest a client may take to send a request's headers, and longest an
/// idle keep-alive connection is kept.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Open TCP connections at most, stream clients included; more are closed
/// as soon as they are accepted.
pub const MAX_TCP_CONNECTIONS: usize = 512;
/// Requests per second one address may make, sustained…
pub const RATE_PER_SECOND: f64 = 500.0;
/// …and in a burst.
pub const RATE_BURST: f64 = 1_000.0;
/// How long a stop waits for requests in flight on TCP.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How a listener guards its routes.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The per-user secret reads and answers present; `None` on a listener
    /// that serves neither (the OTLP receiver).
    pub secret: Option<String>,
    /// Reads are served without the secret (`--http-open-reads`). Answers
    /// to an agent's question never are: another local user must not grant
    /// a permission.
    pub open_reads: bool,
    /// The media types a POST may carry: a browser page can send only
    /// `text/plain`, form types and `multipart/form-data` without asking
    /// first, so any other type keeps pages from posting across origins.
    pub post_media: &'static [&'static str],
    /// Origins whose pages may answer an agent's question without the
    /// secret, from beed's own user (`--http-allow-origin`, each from
    /// [`parse_answer_origin`]).
    pub answer_origins: Vec<String>,
}

impl HttpOptions {
    /// The event listener's: JSON only.
    pub fn events(secret: String, open_reads: bool, answer_origins: Vec<String>) -> HttpOptions {
        HttpOptions { secret: Some(secret), open_reads, post_media: &["application/json"], answer_origins }
    }
}

/// The two ends of a TCP connection: the peer's address for the rate
/// limit, both to find who owns the peer's socket.
#[derive(Debug, Clone, Copy)]
struct Peer {
    remote: SocketAddr,
    /// `None` when the kernel would not say (the connection is then nobody's).
    local: Option<SocketAddr>,
}

/// An origin `--http-allow-origin` takes: a loopback one (a page elsewhere
/// is refused whatever this says), as a browser sends it — scheme and host
/// in lower case, no path, no trailing `/`.
pub fn parse_answer_origin(text: &str) -> Result<String, String> {
    let origin = text.trim().strip_suffix('/').unwrap_or(text.trim()).to_ascii_lowercase();
    if !is_loopback_origin(&origin) {
        return Err(format!(
            "{text:?} is not a loopback origin such as http://localhost:5173 (scheme, host and port, nothing more)"
        ));
    }
    Ok(origin)
}

/// A token bucket per peer address.
#[derive(Default)]
struct RateLimit {
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl RateLimit {
    fn allow(&self, ip: IpAddr) -> bool {
        let Ok(mut buckets) = self.buckets.lock() else { return false };
        let now = Instant::now();
        if buckets.len() > 4_096 {
            // Loopback has few addresses in use; forget the idle ones.
            buckets.retain(|_, (_, at)| now.duration_since(*at) < Duration::from_secs(10));
        }
        let (tokens, at) = buckets.entry(ip).or_insert((RATE_BURST, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * RATE_PER_SECOND).min(RATE_BURST);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

struct Guard {
    options: HttpOptions,
    rate: RateLimit,
    /// Lookups of a peer's owner running at once: each reads the kernel's
    /// connection tables, so a flood of answers without the secret queues
    /// here instead of taking the blocking threads.
    lookups: Semaphore,
}

/// Peer-owner lookups at once (see `Guard::lookups`).
const PEER_LOOKUPS: usize = 2;

pub use bee_proto::events::is_loopback_host;

/// Whether an `Origin` header value is a loopback origin (any port).
pub fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    let host = rest.strip_suffix('/').unwrap_or(rest);
    !host.contains('/') && is_loopback_host(host)
}

/// Paths whose answers carry stored events: they need the secret unless
/// reads are open.
fn is_read(path: &str) -> bool {
    [
        EVENTS_RECENT_PATH,
        FILTER_OPTIONS_PATH,
        STREAM_PATH,
        AUDIT_SESSIONS_PATH,
        USAGE_DATA_PATH,
        USAGE_CHANGES_PATH,
        USAGE_LIVE_PATH,
    ]
    .contains(&path)
}

/// The operator's answer to an agent's question: it needs the secret, or
/// to come from the user's own process (another local user must not answer
/// a permission request).
fn is_answer(path: &str) -> bool {
    path.starts_with("/events/") && path.ends_with("/respond")
}

fn forbidden(status: StatusCode, error: &str) -> Response {
    (status, Json(EventError { error: error.to_owned() })).into_response()
}

/// How a request presented the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presented {
    /// A bearer token or `?token=`: the client knew the secret.
    Known,
    /// The dashboard cookie: the browser attached it on its own.
    Cookie,
}

/// The secret a request presents: bearer token, the dashboard cookie, or `?token=`.
fn presented_secret(request: &Request) -> Option<(String, Presented)> {
    let headers = request.headers();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let cookie = || {
        headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|cookies| {
            cookies.split(';').find_map(|pair| {
                let (name, value) = pair.trim().split_once('=')?;
                (name == DASHBOARD_COOKIE).then(|| value.to_owned())
            })
        })
    };
    bearer
        .map(|secret| (secret, Presented::Known))
        .or_else(|| cookie().map(|secret| (secret, Presented::Cookie)))
        .or_else(|| token_in_query(request.uri().query()).map(|secret| (secret, Presented::Known)))
}

fn token_in_query(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|pair| pair.strip_prefix("token=")).map(str::to_owned)
}

/// Compares without an early exit, so the time taken tells nothing.
fn same_secret(presented: &str, secret: &str) -> bool {
    presented.len() == secret.len()
        && presented.bytes().zip(secret.bytes()).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
}

async fn check_request(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Some(peer) = request.extensions().get::<Peer>()
        && !guard.rate.allow(peer.remote.ip())
    {
        return forbidden(StatusCode::TOO_MANY_REQUESTS, "Too many requests");
    }
    let host_ok = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).is_some_and(is_loopback_host);
    if !host_ok {
        return forbidden(StatusCode::FORBIDDEN, "Forbidden host");
    }
    let origin = request.headers().get(header::ORIGIN).cloned();
    let origin_ok = match &origin {
        None => true,
        Some(origin) => origin.to_str().is_ok_and(is_loopback_origin),
    };
    if !origin_ok {
        return forbidden(StatusCode::FORBIDDEN, "Forbidden origin");
    }
    if request.method() == Method::POST {
        let accepted = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|media| guard.options.post_media.iter().any(|m| media.trim().eq_ignore_ascii_case(m)));
        if !accepted {
            let wanted = guard.options.post_media.join(" or ");
            return forbidden(StatusCode::UNSUPPORTED_MEDIA_TYPE, &format!("Content-Type must be {wanted}"));
        }
    }
    let answer = is_answer(request.uri().path());
    let needs_secret = answer || (is_read(request.uri().path()) && !guard.options.open_reads);
    if needs_secret && request.method() != Method::OPTIONS {
        // A listener without a secret serves no read and no answer.
        let Some(secret) = &guard.options.secret else {
            return forbidden(StatusCode::FORBIDDEN, "Not served on this listener");
        };
        let refused = match presented_secret(&request) {
            Some((presented, how)) if same_secret(&presented, secret) => {
                // A browser sends the cookie from any page on this host, any
                // port — another local user's page included. With the cookie,
                // only the dashboard's own origin may read.
                let own_origin = origin.as_ref().is_none_or(|origin| {
                    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
                    origin
                        .to_str()
                        .is_ok_and(|o| o.strip_prefix("http://").or_else(|| o.strip_prefix("https://")) == Some(host))
                });
                (how == Presented::Cookie && !own_origin)
                    .then(|| forbidden(StatusCode::FORBIDDEN, "The dashboard cookie is for the dashboard's own page"))
            }
            _ if answer => Some(forbidden(
                StatusCode::UNAUTHORIZED,
                "Answers need the dashboard URL that `beectl dashboard` prints, whatever reads allow",
            )),
            _ => {
                Some(forbidden(StatusCode::UNAUTHORIZED, "Reads need the dashboard URL that `beectl dashboard` prints"))
            }
        };
        if let Some(refused) = refused {
            // The reference client cannot send the secret: its user's own
            // processes answer without it.
            if !answer {
                return refused;
            }
            let peer = request.extensions().get::<Peer>().copied();
            match own_users_answer(&guard, peer, origin.as_ref()).await {
                OwnAnswer::Yes => {}
                OwnAnswer::OtherOrigin => {
                    return forbidden(
                        StatusCode::FORBIDDEN,
                        "Answers without the secret come only from pages of an origin beed allows (--http-allow-origin)",
                    );
                }
                OwnAnswer::NotOurs => return refused,
            }
        }
    }
    let mut response = if request.method() == Method::OPTIONS {
        StatusCode::NO_CONTENT.into_response()
    } else {
        next.run(request).await
    };
    if let Some(origin) = origin {
        // Only loopback origins get here.
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(header::VARY, HeaderValue::from_static("Origin"));
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, OPTIONS"));
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("Content-Type, Authorization"));
    }
    response
}

/// Whether an answer sent without the secret is the user's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OwnAnswer {
    /// From a process of beed's uid, with no origin or an allowed one.
    Yes,
    /// From a page of an origin the user did not allow.
    OtherOrigin,
    /// Not shown to be from beed's uid (another user, or no way to tell).
    NotOurs,
}

/// An answer without the secret is taken from beed's own user only: from no
/// page or a page of an allowed origin (any page the user opens runs in the
/// user's browser, so the uid alone cannot tell them apart), over a
/// connection whose peer socket the kernel lists as beed's uid.
async fn own_users_answer(guard: &Guard, peer: Option<Peer>, origin: Option<&HeaderValue>) -> OwnAnswer {
    if let Some(origin) = origin {
        let allowed = origin
            .to_str()
            .is_ok_and(|origin| guard.options.answer_origins.iter().any(|a| a.eq_ignore_ascii_case(origin)));
        if !allowed {
            return OwnAnswer::OtherOrigin;
        }
    }
    let Some(Peer { remote, local: Some(local) }) = peer else {
        return OwnAnswer::NotOurs;
    };
    let uid = rustix::process::geteuid().as_raw();
    let Ok(_turn) = guard.lookups.acquire().await else { return OwnAnswer::NotOurs };
    // Reading the kernel's tables is file I/O: off the runtime.
    match tokio::task::spawn_blocking(move || super::peer::peer_owner(remote, local)).await {
        Ok(Ok(super::peer::Owner::Uid(owner))) if owner == uid => OwnAnswer::Yes,
        Ok(Ok(super::peer::Owner::Uid(owner))) => {
            tracing::info!(%remote, owner, "an answer without the secret from another user; refused");
            OwnAnswer::NotOurs
        }
        Ok(Ok(super::peer::Owner::NotFound)) => {
            tracing::debug!(%remote, "no established socket found for the peer of an answer without the secret");
            OwnAnswer::NotOurs
        }
        Ok(Ok(super::peer::Owner::TooLarge)) => {
            tracing::warn!(
                %remote,
                cap = super::peer::MAX_TABLE_BYTES,
                "the connection table is past its read cap; an answer without the secret is refused"
            );
            OwnAnswer::NotOurs
        }
        Ok(Err(err)) => {
            tracing::warn!(%remote, error = %err, "cannot read the connection table; an answer without the secret is refused");
            OwnAnswer::NotOurs
        }
        Err(err) => {
            tracing::warn!(error = %err, "the connection table lookup failed");
            OwnAnswer::NotOurs
        }
    }
}

/// A dashboard page: the hook events' (`/`) or the usage page
/// (`/usage`). Opened with `?token=SECRET`, it sets the read cookie and
/// sends the browser on to the page itself, so the secret leaves the
/// address bar.
async fn dashboard(State(guard): State<Arc<Guard>>, request: Request) -> Response {
    let usage = request.uri().path() == USAGE_PAGE_PATH;
    if let (Some(secret), Some(presented)) = (&guard.options.secret, token_in_query(request.uri().query())) {
        if !same_secret(&presented, secret) {
            return forbidden(StatusCode::UNAUTHORIZED, "This dashboard URL is out of date: run `beectl dashboard`");
        }
        let cookie = format!("{DASHBOARD_COOKIE}={secret}; Path=/; HttpOnly; SameSite=Strict");
        let mut response = Redirect::to(if usage { USAGE_PAGE_PATH } else { "/" }).into_response();
        if let Ok(cookie) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
        return response;
    }
    if usage {
        return super::usage_page::page().into_response();
    }
    super::events::dashboard().await.into_response()
}

/// The TCP router: the event routes plus the dashboard, behind the guard.
pub fn router(events: Router, options: HttpOptions) -> Router {
    let guard = Arc::new(Guard { options, rate: RateLimit::default(), lookups: Semaphore::new(PEER_LOOKUPS) });
    events
        .route("/", get(dashboard).with_state(guard.clone()))
        .route(USAGE_PAGE_PATH, get(dashboard).with_state(guard.clone()))
        .layer(middleware::from_fn_with_state(guard, check_request))
}

/// `routes` behind the same guard as the event listener (loopback `Host`
/// and `Origin`, the POST media types, the rate limit).
pub fn guarded(routes: Router, options: HttpOptions) -> Router {
    let guard = Arc::new(Guard { options, rate: RateLimit::default(), lookups: Semaphore::new(PEER_LOOKUPS) });
    routes.layer(middleware::from_fn_with_state(guard, check_request))
}

/// A connection's stream, holding its place under the connection cap until
/// it closes (an upgraded stream client keeps it too).
struct Counted {
    inner: tokio::net::TcpStream,
    _permit: OwnedSemaphorePermit,
}

impl AsyncRead for Counted {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Serves `app` on `listener` until `stop` turns true, then lets requests in
/// flight finish for a few seconds.
pub async fn serve(listener: TcpListener, app: Router<()>, mut stop: watch::Receiver<bool>) {
    let places = Arc::new(Semaphore::new(MAX_TCP_CONNECTIONS));
    let mut connections = tokio::task::JoinSet::new();
    let mut refused = 0u64;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = async { drop(stop.wait_for(|stopping| *stopping).await) } => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of descriptors and the like: back off instead of spinning.
                tracing::warn!(error = %err, "loopback accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = places.clone().try_acquire_owned() else {
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!(refused, cap = MAX_TCP_CONNECTIONS, "loopback connection cap reached; closing new ones");
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let ends = Peer { remote: peer, local: stream.local_addr().ok() };
        let service = TowerToHyperService::new(app.clone().layer(Extension(ends)));
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
        let connection =
            builder.serve_connection(TokioIo::new(Counted { inner: stream, _permit: permit }), service).with_upgrades();
        let mut stopping = stop.clone();
        connections.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                () = async { drop(stopping.wait_for(|stopping| *stopping).await) } => {
                    // Finish what is in flight, take nothing new.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = ended {
                tracing::debug!(error = %err, "loopback connection ended");
            }
        });
        // Reap finished connections so the set does not grow with history.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(STOP_GRACE, drained).await.is_err() {
        tracing::warn!("loopback requests still running at stop; closed");
        connections.abort_all();
    }
}

/// The per-user read secret beside the socket: read when it is a private
/// regular file of ours, else made anew (0600).
pub fn read_secret(run_dir: &Path) -> io::Result<String> {
    let path = run_dir.join(HTTP_TOKEN_FILE);
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        let ours = meta.is_file() && meta.uid() == rustix::process::geteuid().as_raw() && meta.mode() & 0o077 == 0;
        if ours
            && let Ok(secret) = files::read_small_text(&path)
            && secret.len() == 64
            && secret.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Ok(secret);
        }
        std::fs::remove_file(&path)?;
    }
    let secret = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    write_private(&path, &secret)?;
    Ok(secret)
}

/// Writes the URL `beectl dashboard` prints (0600: it carries the secret).
pub fn write_dashboard_url(run_dir: &Path, addr: SocketAddr, secret: &str) -> io::Result<PathBuf> {
    let url = format!("http://{addr}/?token={secret}");
    let path = run_dir.join(DASHBOARD_URL_FILE);
    let _ = std::fs::remove_file(&path);
    write_private(&path, &url)?;
    Ok(path)
}

fn write_private(path: &Path, text: &str) -> io::Result<()> {
    let mut file = files::open_private_file(path)?;
    file.set_len(0)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_are_loopback() {
        for host in ["localhost", "localhost:4000", "127.0.0.1:4000", "[::1]:4000", "127.9.9.9", "LOCALHOST"] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in ["evil.example:4000", "10.0.0.1:4000", "localhost.evil.example", "", "0.0.0.0:4000"] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn only_loopback_origins_are_loopback() {
        for origin in ["http://localhost:5173", "http://127.0.0.1", "https://[::1]:8443", "http://localhost/"] {
            assert!(is_loopback_origin(origin), "{origin}");
        }
        for origin in [
            "https://evil.example",
            "http://localhost.evil.example",
            "null",
            "file://",
            "http://127.0.0.1.evil.example",
            "http://localhost:80/x",
            "",
        ] {
            assert!(!is_loopback_origin(origin), "{origin}");
        }
    }

    #[test]
    fn the_rate_limit_allows_a_burst_then_refuses() {
        let limit = RateLimit::default();
        let ip: IpAddr = [127, 0, 0, 1].into();
        let allowed = (0..(RATE_BURST as usize + 100)).filter(|_| limit.allow(ip)).count();
        assert!(allowed >= RATE_BURST as usize && allowed < RATE_BURST as usize + 100, "{allowed}");
        assert!(limit.allow([127, 0, 0, 2].into()), "another address has its own bucket");
    }

    #[test]
    fn only_loopback_origins_can_be_allowed_to_answer() {
        for (given, kept) in [
            ("http://localhost:5173", "http://localhost:5173"),
            ("http://localhost:5173/", "http://localhost:5173"),
            (" HTTP://LocalHost:5173 ", "http://localhost:5173"),
            ("https://[::1]:8443", "https://[::1]:8443"),
        ] {
            assert_eq!(parse_answer_origin(given).as_deref(), Ok(kept), "{given}");
        }
        for bad in ["https://evil.example", "http://localhost:5173/app", "localhost:5173", "null", "", "*"] {
            assert!(parse_answer_origin(bad).is_err(), "{bad}");
        }
    }

    /// The decision on a live connection of this process (beed's uid):
    /// no origin or an allowed one is ours; another origin is refused as
    /// such; a connection nobody holds, or whose ends are unknown, is not ours.
    #[tokio::test]
    async fn an_answer_without_the_secret_needs_an_allowed_origin_and_beeds_uid() {
        let guard = Guard {
            options: HttpOptions::events("0".repeat(64), false, vec!["http://localhost:5173".to_owned()]),
            rate: RateLimit::default(),
            lookups: Semaphore::new(PEER_LOOKUPS),
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let local = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(local).unwrap();
        let (_accepted, remote) = listener.accept().unwrap();
        let peer = Some(Peer { remote, local: Some(local) });
        let origin = |o: &'static str| HeaderValue::from_static(o);
        let ours = if cfg!(target_os = "linux") { OwnAnswer::Yes } else { OwnAnswer::NotOurs };
        assert_eq!(own_users_answer(&guard, peer, None).await, ours);
        assert_eq!(own_users_answer(&guard, peer, Some(&origin("http://localhost:5173"))).await, ours);
        assert_eq!(own_users_answer(&guard, peer, Some(&origin("HTTP://LOCALHOST:5173"))).await, ours);
        for other in ["http://localhost:5174", "http://127.0.0.1:5173", "https://localhost:5173", "null"] {
            assert_eq!(own_users_answer(&guard, peer, Some(&origin(other))).await, OwnAnswer::OtherOrigin, "{other}");
        }
        assert_eq!(own_users_answer(&guard, None, None).await, OwnAnswer::NotOurs);
        assert_eq!(own_users_answer(&guard, Some(Peer { remote, local: None }), None).await, OwnAnswer::NotOurs);
        let elsewhere = SocketAddr::new(remote.ip(), remote.port().wrapping_add(1));
        assert_eq!(
            own_users_answer(&guard, Some(Peer { remote: elsewhere, local: Some(local) }), None).await,
            OwnAnswer::NotOurs
        );
        drop(client);
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
    }
}
