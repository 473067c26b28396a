//! beed's socket API: the `/v1/` routes of the delivery, ledger and token
//! domains and the status, the protocol-version layer every answer passes
//! through, and JSON errors with stable codes. The event routes are in
//! [`super::events`]; both routers are merged here.

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
    LEDGER_CHANGES_PATH, LEDGER_GLANCE_PATH, LEDGER_INGEST_PATH, LEDGER_RECORDS_PATH, LedgerAppend, LedgerAppended,
    LedgerChanges, MAX_LEDGER_RECORD_BYTES,
};
use bee_proto::tokens::{
    COMMAND_MILLIS, CountAnswer, CountRequest, MAX_COUNT_REQUEST_BYTES, MAX_INPUT_BYTES, MAX_INPUTS, MAX_TOTAL_BYTES,
    TOKEN_COUNT_PATH,
};
use hyper::body::Bytes;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::events;
use crate::delivery::report::{self, ReportQuery};
use crate::delivery::store::{AppendRefusal, WritableStore};
use crate::events::intake::EventsState;
use crate::ledger::intake::ingest;
use crate::ledger::stored::store::Ledger;
use crate::rendered::Rendered;
use crate::storage::writer::WriterHandle;
use crate::tokens::encoders::Encoders;

pub(super) struct AppState {
    pub(super) writer: WriterHandle<WritableStore>,
    pub(super) ledger: Arc<Mutex<Ledger>>,
    /// The provider logs' ingestion, one pass at a time.
    pub(super) ingestion: Arc<ingest::SinglePass>,
    /// BPE encoders, built once and kept for the daemon's lifetime.
    pub(super) encoders: Arc<Encoders>,
    pub(super) delivery_store: PathBuf,
    pub(super) socket: PathBuf,
    pub(super) started_at_utc: String,
    pub(super) socket_activated: bool,
    pub(super) ledger_store: PathBuf,
    pub(super) events_store: PathBuf,
    /// The last glance answered and when: a status line asks every few
    /// hundred milliseconds, the ledger is read at most every second.
    pub(super) glance: Mutex<Option<(Instant, Vec<u8>)>>,
    /// Bumped after every ledger commit that added a record.
    pub(super) changes: Arc<tokio::sync::watch::Sender<u64>>,
}

/// The socket's routes; `hook` (the one round trip of `bee-hook on`,
/// built on these handlers) goes behind the same protocol layer.
pub(super) fn router(state: Arc<AppState>, events: Arc<EventsState>, hook: Router) -> Router {
    let api = Router::new()
        .route(STATUS_PATH, get(status))
        .route(DELIVERY_OBSERVATIONS_PATH, post(append))
        .route(DELIVERY_REPORT_PATH, post(report))
        .route(DELIVERY_READ_PATH, post(read))
        .route(LEDGER_RECORDS_PATH, post(append_ledger).layer(DefaultBodyLimit::max(MAX_LEDGER_APPEND_BYTES)))
        .route(LEDGER_INGEST_PATH, post(ingest_now))
        .route(LEDGER_GLANCE_PATH, get(glance))
        .route(LEDGER_CHANGES_PATH, get(changes))
        .route(TOKEN_COUNT_PATH, post(count).layer(DefaultBodyLimit::max(MAX_COUNT_REQUEST_BYTES)))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BODY_BYTES))
        .with_state(state);
    api.merge(hook)
        .merge(events::router(events))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
        .layer(middleware::from_fn(protocol_layer))
}

/// The loopback TCP listener: the event API and the dashboard, nothing of
/// the stores' own API (that stays behind the socket's peer-uid check).
pub(super) fn tcp_router(
    events: Arc<EventsState>,
    usage: super::usage_page::UsagePage,
    options: super::http::HttpOptions,
) -> Router {
    // The fallbacks go in before the guard's layer, so they are guarded too.
    let routes = events::router(events)
        .merge(super::usage_page::router(usage))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found);
    super::http::router(routes, options)
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
pub(super) struct Failure {
    code: ApiErrorCode,
    message: String,
}

impl Failure {
    pub(super) fn new(code: ApiErrorCode, message: impl Into<String>) -> Failure {
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

pub(super) async fn append(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Failure> {
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

/// How long a glance is answered again without reading the ledger.
const GLANCE_FRESH: Duration = Duration::from_secs(1);

/// Today's usage and the current quota windows (a status line's or a live
/// view's), at most a second old.
async fn glance(State(state): State<Arc<AppState>>) -> Result<Response, Failure> {
    let cached =
        state.glance.lock().ok().and_then(|cached| {
            cached.as_ref().filter(|(at, _)| at.elapsed() < GLANCE_FRESH).map(|(_, body)| body.clone())
        });
    let body = match cached {
        Some(body) => body,
        None => {
            let dir = state.ledger_store.clone();
            let answer = tokio::task::spawn_blocking(move || {
                let prices = crate::ledger::views::prices::PriceTable::user_or_bundled();
                let zone = crate::ledger::views::calendar::Zone::local();
                crate::ledger::views::glance::glance(&dir, bee_proto::time::now_unix_ms(), &zone, &prices)
            })
            .await
            .map_err(|err| Failure::new(ApiErrorCode::Io, err.to_string()))?
            .map_err(|issue| Failure::new(ApiErrorCode::Io, format!("the ledger: {}", issue.as_str())))?;
            let body = serde_json::to_vec(&answer).map_err(|err| Failure::new(ApiErrorCode::Io, err.to_string()))?;
            if let Ok(mut cached) = state.glance.lock() {
                *cached = Some((Instant::now(), body.clone()));
            }
            body
        }
    };
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response())
}

#[derive(Debug, serde::Deserialize)]
struct ChangesQuery {
    after: Option<u64>,
}

/// Answers the ledger's generation once it is not `after` (at once when
/// `after` is not given), or after [`CHANGES_WAIT_SECONDS`] anyway: a live
/// view waits here instead of asking again and again.
async fn changes(
    State(state): State<Arc<AppState>>,
    query: Result<axum::extract::Query<ChangesQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<LedgerChanges>, Failure> {
    let axum::extract::Query(query) =
        query.map_err(|err| Failure::new(ApiErrorCode::InvalidRequest, err.body_text()))?;
    Ok(Json(super::changes::next_change(&state.changes, query.after).await))
}

/// Largest ledger append: a run's call plus its limits, with room to spare.
pub(super) const MAX_LEDGER_APPEND_BYTES: usize = 64 * MAX_LEDGER_RECORD_BYTES;

async fn append_ledger(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<LedgerAppended>, Failure> {
    let request: LedgerAppend = parse_body(body)?;
    for record in &request.records {
        crate::ledger::stored::validate::validate(record)
            .map_err(|err| Failure::new(ApiErrorCode::InvalidRequest, err.to_string()))?;
    }
    let appended = append_to_ledger(state.ledger.clone(), move |ledger| ledger.append(&request.records))
        .await
        .map_err(|reason| Failure::new(ApiErrorCode::Io, reason))?;
    tracing::debug!(appended = appended.appended, duplicates = appended.duplicates, "ledger records appended");
    Ok(Json(appended))
}

/// A ledger append that came inside a hook report, held to the limit the
/// route's own layer keeps.
pub(super) async fn append_ledger_part(state: Arc<AppState>, bytes: Bytes) -> Result<Json<LedgerAppended>, Failure> {
    if bytes.len() > MAX_LEDGER_APPEND_BYTES {
        return Err(Failure::new(
            ApiErrorCode::PayloadTooLarge,
            format!("a ledger append is at most {MAX_LEDGER_APPEND_BYTES} bytes"),
        ));
    }
    append_ledger(State(state), Ok(bytes)).await
}

/// Runs `append` on the ledger off the runtime; a failure is logged under
/// [`bee_proto::ledger::RECORD_FAILED`] and returned.
pub(super) async fn append_to_ledger(
    ledger: Arc<Mutex<Ledger>>,
    append: impl FnOnce(&mut Ledger) -> Result<LedgerAppended, crate::storage::sqlite::DbError> + Send + 'static,
) -> Result<LedgerAppended, String> {
    let appended = tokio::task::spawn_blocking(move || match ledger.lock() {
        Ok(mut ledger) => append(&mut ledger).map_err(|err| err.to_string()),
        Err(_) => Err("ledger lock poisoned".to_owned()),
    })
    .await
    .unwrap_or_else(|err| Err(err.to_string()));
    if let Err(reason) = &appended {
        tracing::warn!(code = bee_proto::ledger::RECORD_FAILED, error = %reason, "ledger append failed");
    }
    appended
}

/// Runs one ingestion pass now (for `beectl ingest` while beed runs).
async fn ingest_now(State(state): State<Arc<AppState>>) -> Result<Json<ingest::PassSummary>, Failure> {
    let ingestion = state.ingestion.clone();
    let summary = tokio::task::spawn_blocking(move || ingestion.run())
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
    let (delivery, ledger, events) =
        (state.delivery_store.clone(), state.ledger_store.clone(), state.events_store.clone());
    let stores = tokio::task::spawn_blocking(move || {
        vec![
            report::store_status(&delivery),
            crate::ledger::stored::store::store_status(&ledger),
            crate::events::store::store_status(&events),
        ]
    })
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
