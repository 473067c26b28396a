//! `POST /v1/hook`: everything one `bee-hook on` process has to say for its
//! event (an observation, ledger records, an event) in one round trip.
//!
//! Each part is handed to its own route's handler, with that route's body
//! limit, validation and answer, and the three run at once: they go to three
//! different stores, so the round trip costs the slowest part, not the sum.
//! The answer carries each part's status and body as its own route would
//! have sent them, so the hook judges each part exactly as before.

use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use bee_proto::api::{ApiErrorCode, HOOK_PATH, HookReceipt, HookReceipts, HookReport};
use bee_proto::events::{EventError, MAX_EVENT_BYTES};
use hyper::body::Bytes;
use serde_json::value::RawValue;
use std::sync::Arc;

use super::api::{self, AppState, Failure};
use super::events;
use crate::events::intake::EventsState;

/// The largest report: the largest of each part, and room for the frame.
const MAX_HOOK_REPORT_BYTES: usize =
    bee_proto::delivery::MAX_RECORD_BYTES + api::MAX_LEDGER_APPEND_BYTES + MAX_EVENT_BYTES + 4_096;

#[derive(Clone)]
struct HookState {
    app: Arc<AppState>,
    events: Arc<EventsState>,
}

/// The route, with its own body limit (the parts' limits summed).
pub(super) fn router(app: Arc<AppState>, events: Arc<EventsState>) -> Router {
    Router::new()
        .route(
            HOOK_PATH,
            axum::routing::post(report).layer(axum::extract::DefaultBodyLimit::max(MAX_HOOK_REPORT_BYTES)),
        )
        .with_state(HookState { app, events })
}

async fn report(State(state): State<HookState>, body: Result<Bytes, BytesRejection>) -> Result<Response, Failure> {
    let body = body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => Failure::new(
            ApiErrorCode::PayloadTooLarge,
            format!("a hook report is at most {MAX_HOOK_REPORT_BYTES} bytes"),
        ),
        _ => Failure::new(ApiErrorCode::InvalidRequest, rejection.body_text()),
    })?;
    // A struct also reads from a JSON array; a report is an object only.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Err(Failure::new(ApiErrorCode::InvalidRequest, "a hook report is a JSON object"));
    }
    let report: HookReport =
        serde_json::from_slice(&body).map_err(|err| Failure::new(ApiErrorCode::InvalidRequest, err.to_string()))?;
    let part = |raw: &Option<Box<RawValue>>| raw.as_ref().map(|raw| Bytes::copy_from_slice(raw.get().as_bytes()));
    let (observation, ledger, event) = (part(&report.observation), part(&report.ledger), part(&report.event));
    let (observation, ledger, event) = tokio::join!(
        receipt(observation, |bytes| api::append(State(state.app.clone()), Ok(bytes))),
        receipt(ledger, |bytes| api::append_ledger_part(state.app.clone(), bytes)),
        receipt(event, |bytes| event_part(state.events.clone(), bytes)),
    );
    Ok(Json(HookReceipts { observation, ledger, event }).into_response())
}

/// The event route's answer, with the size limit its own route's layer keeps.
async fn event_part(events: Arc<EventsState>, bytes: Bytes) -> Response {
    if bytes.len() > MAX_EVENT_BYTES {
        return (StatusCode::PAYLOAD_TOO_LARGE, Json(EventError { error: "Payload too large".into() })).into_response();
    }
    events::post_event(State(events), Ok(bytes)).await
}

/// Runs `handle` on a part that came, and keeps its answer as a receipt.
async fn receipt<F, R>(part: Option<Bytes>, handle: impl FnOnce(Bytes) -> F) -> Option<HookReceipt>
where
    F: std::future::Future<Output = R>,
    R: IntoResponse,
{
    let response = handle(part?).await.into_response();
    let status = response.status().as_u16();
    // Every route here answers a JSON body of bounded size.
    let bytes = axum::body::to_bytes(response.into_body(), MAX_EVENT_BYTES + 64 * 1024).await.ok();
    let body = bytes
        .and_then(|bytes| String::from_utf8(bytes.to_vec()).ok())
        .and_then(|text| RawValue::from_string(text).ok())
        .or_else(|| RawValue::from_string("null".to_owned()).ok())?;
    Some(HookReceipt { status, body })
}
