//! The hook event API, served on the unix socket and on the optional
//! loopback TCP listener: `POST /events` (the stored record with its id is
//! the transport receipt), `/events/recent`, `/events/filter-options`, the
//! WebSocket `/stream` (replay, then live), `/health` (a proven write and
//! read), the dashboard page and the per-session audit verdicts. Bodies,
//! statuses and stream messages are the public reference pipeline's.

use axum::extract::rejection::BytesRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bee_proto::audit::AuditSummary;
use bee_proto::events::{
    AUDIT_SESSIONS_PATH, DEFAULT_RECENT, EVENTS_PATH, EVENTS_RECENT_PATH, EventError, EventRejection,
    FILTER_OPTIONS_PATH, HEALTH_PATH, Health, HealthCheck, MAX_EVENT_BYTES, MAX_EVENTS_ANSWER_BYTES, MAX_RECENT,
    MAX_RESPONSE_BYTES, REPLAY_EVENTS, RESPOND_PATH, STREAM_PATH, accept,
};
use hyper::body::Bytes;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::broadcast;

use crate::events::intake::EventsState;
use crate::events::store::{self, Arrival, EventWrite};

/// The dashboard: one page, its script and style inline, built into beed.
const DASHBOARD: &str = include_str!("dashboard.html");
/// Messages a slow stream client may fall behind before it is dropped (it
/// reconnects and gets the replay).
pub const LIVE_BACKLOG: usize = 4_096;

type Shared = Arc<EventsState>;

/// The event routes (no fallback: the caller adds one).
pub fn router(state: Shared) -> Router {
    Router::new()
        .route(EVENTS_PATH, post(post_event).layer(DefaultBodyLimit::max(MAX_EVENT_BYTES)))
        .route(EVENTS_RECENT_PATH, get(recent))
        .route(FILTER_OPTIONS_PATH, get(filter_options))
        .route(STREAM_PATH, get(stream))
        .route(HEALTH_PATH, get(health))
        .route(AUDIT_SESSIONS_PATH, get(audit_sessions))
        .route(bee_proto::events::THEMES_PATH, get(themes))
        .route(RESPOND_PATH, post(respond).layer(DefaultBodyLimit::max(MAX_RESPONSE_BYTES)))
        .with_state(state)
}

/// No themes: the reference client's theme list, empty.
async fn themes() -> axum::Json<Vec<serde_json::Value>> {
    axum::Json(Vec::new())
}

/// The dashboard page (served on the loopback listener).
pub async fn dashboard() -> Html<&'static str> {
    Html(DASHBOARD)
}

fn refuse(status: StatusCode, rejection: EventRejection) -> Response {
    (status, Json(rejection.answer())).into_response()
}

pub(super) async fn post_event(State(state): State<Shared>, body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return (StatusCode::PAYLOAD_TOO_LARGE, Json(EventError { error: "Payload too large".into() }))
                .into_response();
        }
        Err(_) => return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid),
    };
    let event = match accept(&body, |app| state.captures(app), bee_proto::time::now_unix_ms()) {
        Ok(event) => event,
        Err(rejection) => return refuse(StatusCode::BAD_REQUEST, rejection),
    };
    match state.store(event, Arrival::Direct).await {
        Some(stored) => Json(stored).into_response(),
        None => {
            (StatusCode::SERVICE_UNAVAILABLE, Json(EventError { error: "Event not stored".into() })).into_response()
        }
    }
}

/// How long delivering an operator's answer to the waiting agent may take.
const AGENT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// `POST /events/{id}/respond`: the operator's answer to a human-in-the-loop
/// request, as the reference takes it (with the secret, always: see
/// `http::is_answer`). An event that asked nothing, or a question answered
/// already, is a conflict (409). The answer is kept beside the event
/// (the event's own row, its receipt, never changes), delivered to the
/// agent's `responseWebSocketUrl` when that is on this machine, and the
/// answered event goes to every stream client and back to the caller.
async fn respond(
    State(state): State<Shared>,
    axum::extract::Path(id): axum::extract::Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let not_found = || (StatusCode::NOT_FOUND, Json(EventError { error: "Event not found".into() })).into_response();
    // The reference's route takes digits only; anything else is no route.
    let Some(id) = id.parse::<i64>().ok().filter(|_| id.bytes().all(|b| b.is_ascii_digit())) else {
        return (StatusCode::NOT_FOUND, Json(EventError { error: "Not found".into() })).into_response();
    };
    let Ok(Ok(Value::Object(mut response))) = body.map(|body| serde_json::from_slice::<Value>(&body)) else {
        return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid);
    };
    let now_ms = bee_proto::time::now_unix_ms();
    response.insert("respondedAt".to_owned(), Value::from(now_ms));
    let Ok(Some(event)) = read(&state, move |conn| store::event_by_id(conn, id)).await else { return not_found() };
    let conflict = |error: &str| (StatusCode::CONFLICT, Json(EventError { error: error.into() })).into_response();
    // Only a question can be answered, and only once: the first answer
    // stands, and the agent is told once.
    if !event.get("humanInTheLoop").is_some_and(Value::is_object) {
        return conflict("This event asks no question");
    }
    let already = || conflict("This question was answered already; the first answer stands");
    if event.pointer("/humanInTheLoopStatus/status").and_then(Value::as_str) == Some("responded") {
        return already();
    }
    let captured = event.get("source_app").and_then(Value::as_str).is_some_and(|app| state.captures(app));
    let status =
        bee_proto::events::HitlStatus::responded(now_ms, bee_proto::events::kept_response(&response, captured)).value();
    let write = EventWrite::Response { event_id: id, status: status.to_string(), at_ms: now_ms };
    match state.writer.submit(write).await {
        Some(Ok(stored)) if stored.fresh => {}
        // Another answer was stored between the read and this write.
        Some(Ok(_)) => return already(),
        _ => {
            return (StatusCode::SERVICE_UNAVAILABLE, Json(EventError { error: "Response not stored".into() }))
                .into_response();
        }
    }
    let Ok(Some(updated)) = read(&state, move |conn| store::event_by_id(conn, id)).await else { return not_found() };
    let url = updated.pointer("/humanInTheLoop/responseWebSocketUrl").and_then(Value::as_str);
    match url {
        Some(url) if bee_proto::events::is_loopback_ws_url(url) => {
            // The agent gets the answer whole, as the reference sends it.
            let message = Value::Object(response).to_string();
            match tokio::time::timeout(AGENT_DEADLINE, tell_agent(url, message)).await {
                Ok(Ok(())) => tracing::info!(id, "answer delivered to the waiting agent"),
                Ok(Err(err)) => tracing::warn!(id, "answer not delivered to the agent: {err}"),
                Err(_) => tracing::warn!(id, "answer not delivered to the agent within {AGENT_DEADLINE:?}"),
            }
        }
        Some(_) => tracing::warn!(id, "the agent's responseWebSocketUrl is not on this machine; answer not sent there"),
        None => {}
    }
    let message = bee_proto::events::stream_message("event", &updated);
    let session = updated.get("session_id").and_then(Value::as_str).unwrap_or_default().into();
    let _ = state.live.send(crate::events::intake::Live { id, session, message: message.into(), update: true });
    Json(updated).into_response()
}

/// Sends `message` over a WebSocket to the agent waiting at `url` (checked
/// to be on this machine), then closes it.
async fn tell_agent(url: &str, message: String) -> Result<(), String> {
    use futures_util::SinkExt;
    let authority = url.trim_start_matches("ws://").split(['/', '?', '#']).next().unwrap_or("");
    let has_port = !authority.ends_with(']')
        && authority
            .rsplit_once(':')
            .is_some_and(|(_, port)| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
    let address = if has_port { authority.to_owned() } else { format!("{authority}:80") };
    let tcp = tokio::net::TcpStream::connect(address.as_str()).await.map_err(|err| err.to_string())?;
    let (mut socket, _) = tokio_tungstenite::client_async(url, tcp).await.map_err(|err| err.to_string())?;
    socket.send(tokio_tungstenite::tungstenite::Message::text(message)).await.map_err(|err| err.to_string())?;
    socket.close(None).await.map_err(|err| err.to_string())
}

/// Runs a read of the events store off the runtime.
async fn read<T: Send + 'static>(
    state: &EventsState,
    work: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
) -> Result<T, Response> {
    let dir = state.store.clone();
    let unavailable = |error: String| (StatusCode::SERVICE_UNAVAILABLE, Json(EventError { error })).into_response();
    tokio::task::spawn_blocking(move || {
        let conn = store::open_reader(&dir).map_err(|issue| format!("events store {}", issue.as_str()))?;
        work(&conn).map_err(|err| err.to_string())
    })
    .await
    .map_err(|err| unavailable(err.to_string()))?
    .map_err(unavailable)
}

async fn recent(
    State(state): State<Shared>,
    query: Result<Query<Vec<(String, String)>>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else { return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid) };
    let limit = match query.iter().find(|(key, _)| key == "limit").map(|(_, value)| value.parse::<usize>()) {
        None => DEFAULT_RECENT,
        Some(Ok(limit)) => limit.min(MAX_RECENT),
        Some(Err(_)) => return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid),
    };
    match read(&state, move |conn| store::recent(conn, limit, MAX_EVENTS_ANSWER_BYTES)).await {
        Ok(recent) => {
            let mut response = ([(header::CONTENT_TYPE, "application/json")], recent.json).into_response();
            // The reference's answer is the array alone: damage is named beside it.
            if recent.damaged > 0 {
                response
                    .headers_mut()
                    .insert(bee_proto::events::DAMAGED_EVENTS_HEADER, axum::http::HeaderValue::from(recent.damaged));
            }
            response
        }
        Err(response) => response,
    }
}

async fn filter_options(State(state): State<Shared>) -> Response {
    match read(&state, store::filter_options).await {
        Ok(options) => Json(options).into_response(),
        Err(response) => response,
    }
}

async fn stream(
    State(state): State<Shared>,
    query: Result<Query<Vec<(String, String)>>, axum::extract::rejection::QueryRejection>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let Ok(Query(query)) = query else { return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid) };
    let session = query.into_iter().find(|(key, _)| key == bee_proto::events::STREAM_SESSION_PARAM).map(|(_, v)| v);
    if session.as_ref().is_some_and(|s| s.is_empty() || s.len() > bee_proto::events::MAX_SESSION_ID_BYTES) {
        return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid);
    }
    upgrade.on_upgrade(move |socket| serve_stream(socket, state, session))
}

/// Replays the latest events (of `session` only, when one is asked: the
/// per-session replay the audit's presentation receipt reads), then
/// forwards each new one (of that session). Subscribed before the replay is
/// read, so nothing falls between; ids already replayed are not sent twice.
async fn serve_stream(mut socket: WebSocket, state: Shared, session: Option<String>) {
    let mut live = state.live.subscribe();
    let mut stopping = state.stopping.clone();
    let only = session.clone();
    let replay =
        read(&state, move |conn| store::recent_of(conn, only.as_deref(), REPLAY_EVENTS, MAX_EVENTS_ANSWER_BYTES)).await;
    let (replay, replayed_up_to) = match replay {
        Ok(recent) => (recent.json, recent.newest_id),
        Err(_) => ("[]".to_owned(), 0),
    };
    // The reference's `{"type":"initial","data":[…]}`, around text already JSON.
    let initial = format!("{{\"type\":\"initial\",\"data\":{replay}}}");
    if socket.send(Message::Text(initial.into())).await.is_err() {
        return;
    }
    loop {
        if *stopping.borrow_and_update() {
            let _ = socket.send(Message::Close(None)).await;
            return;
        }
        tokio::select! {
            next = live.recv() => match next {
                Ok(event) if event.id <= replayed_up_to && !event.update => {}
                Ok(event) if session.as_deref().is_some_and(|only| *event.session != *only) => {}
                Ok(event) => {
                    if socket.send(Message::Text(event.message.as_ref().into())).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    // Better a reconnect with a fresh replay than a silent hole.
                    tracing::warn!(missed, "stream client fell behind; closing it so it replays");
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            changed = stopping.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// A write through the writer and a read back of the same nonce.
async fn health(State(state): State<Shared>) -> Response {
    let nonce = (bee_proto::time::now_unix_ms() << 16) ^ i64::from(std::process::id() as u16);
    let started = Instant::now();
    let written = state.writer.submit(EventWrite::Probe(nonce)).await;
    let write_ms = started.elapsed().as_secs_f64() * 1e3;
    let write = match written {
        Some(Ok(_)) => check("store_write", true, "probe row committed by the events writer".into(), Some(write_ms)),
        Some(Err(err)) => check("store_write", false, err, Some(write_ms)),
        None => check("store_write", false, "events writer stopped or full".into(), None),
    };
    let started = Instant::now();
    let read_back = read(&state, store::probe).await;
    let read_ms = started.elapsed().as_secs_f64() * 1e3;
    let read = match read_back {
        Ok(Some(found)) if found == nonce => {
            check("store_read", true, "probe row read back from the store file".into(), Some(read_ms))
        }
        Ok(_) => check("store_read", false, "probe row not found as written".into(), Some(read_ms)),
        Err(_) => check("store_read", false, "events store not readable".into(), Some(read_ms)),
    };
    let stream = check("stream", true, format!("{} stream clients connected", state.live.receiver_count()), None);
    let mut checks = vec![write, read, stream];
    let ok = checks.iter().all(|c| c.ok);
    // The agents' logs: a pass that failed leaves beed up but behind.
    let ingestion = state.ingestion.get().map(|last_failure| match last_failure() {
        Some(failure) => check("ingestion", false, failure, None),
        None => check("ingestion", true, "the last pass read every log it could".into(), None),
    });
    let degraded = ingestion.as_ref().is_some_and(|ingestion| !ingestion.ok);
    checks.extend(ingestion);
    let (status, said) = match (ok, degraded) {
        (true, false) => (StatusCode::OK, "ok"),
        (true, true) => (StatusCode::OK, "degraded"),
        (false, _) => (StatusCode::SERVICE_UNAVAILABLE, "failing"),
    };
    (status, Json(Health { status: said.into(), checks })).into_response()
}

fn check(name: &str, ok: bool, detail: String, millis: Option<f64>) -> HealthCheck {
    HealthCheck { name: name.to_owned(), ok, detail, millis }
}

/// Each session seen in the last day, audited with the evidence beed holds:
/// the store, the spool, the manifest pinned for its source app (and the
/// settings beside it), and — when the dashboard page says what it received
/// over the stream (`?from=ID&presented=RANGES`, e.g. `3-40,42`) — that page
/// as the presentation witness. No outcome checks run on this path: they are
/// the project's commands, run by `beectl audit` in the project.
async fn audit_sessions(
    State(state): State<Shared>,
    query: Result<Query<Vec<(String, String)>>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else { return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid) };
    let given = |key: &str| query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    let presented = match (given("from"), given("presented")) {
        (None, None) => None,
        (from, ranges) => {
            let from = match from.map(str::parse::<i64>) {
                None => i64::MIN,
                Some(Ok(from)) => from,
                Some(Err(_)) => return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid),
            };
            match id_ranges(ranges.unwrap_or("")) {
                Some(ids) => Some(crate::events::audit::Presented { oldest_replayed: from, ids, failure: None }),
                None => return refuse(StatusCode::BAD_REQUEST, EventRejection::Invalid),
            }
        }
    };
    let spool = state.spool_dir.clone();
    let manifests = state.manifests.clone();
    let summary = read(&state, move |conn| {
        let now_ms = bee_proto::time::now_unix_ms();
        let pinned = crate::events::audit::Pinned::load(&manifests);
        // The page's report witnesses every session alike.
        let page = |_: &str| presented.clone().unwrap_or_default();
        let witness = presented.is_some().then_some(&page as crate::events::audit::Witness<'_>);
        let verdicts = crate::events::audit::recent_verdicts(conn, &pinned, &spool, witness, now_ms)?;
        let sessions = verdicts.into_iter().map(|verdict| verdict.report).collect();
        Ok(AuditSummary { schema_version: 1, sessions, issues: Vec::new() })
    })
    .await;
    match summary {
        Ok(summary) => Json(summary).into_response(),
        Err(response) => response,
    }
}

/// The most ids a page may say it presented in one request.
const MAX_PRESENTED_IDS: usize = 200_000;

/// `3-40,42`: the ids, or `None` for anything malformed or too large.
fn id_ranges(text: &str) -> Option<std::collections::HashSet<i64>> {
    let mut ids = std::collections::HashSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (low, high) = match part.split_once('-') {
            Some((low, high)) => (low.parse::<i64>().ok()?, high.parse::<i64>().ok()?),
            None => {
                let id = part.parse::<i64>().ok()?;
                (id, id)
            }
        };
        let span = usize::try_from(high.checked_sub(low)?).ok()?;
        if ids.len().saturating_add(span) >= MAX_PRESENTED_IDS {
            return None;
        }
        ids.extend(low..=high);
    }
    Some(ids)
}
