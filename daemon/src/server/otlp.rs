//! `beed --otlp ADDR`: an OTLP/HTTP receiver on loopback for Claude Code's
//! own OpenTelemetry (spec/60, "In"), behind the event listener's guard
//! (spec/40: loopback `Host` and `Origin`, the POST media types, the rate
//! limit, the connection cap and header timeout of [`super::http::serve`]).
//!
//! Logs are decoded (JSON or protobuf, gzip undone) one request at a time,
//! off the runtime, within the budget `ledger::intake::otlp_budget` checks before
//! anything is built, and their `api_request` events appended to the
//! ledger ([`crate::ledger::intake::otel`]); a record that does not decode or is
//! out of Bee's bounds is rejected alone (OTLP's partial success), never
//! its batch. Metrics and traces are accepted and dropped. A ledger that cannot take the records
//! answers 503, which OTLP senders retry: nothing is lost to a busy store.

use std::io::Read;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bee_proto::otlp::{LOGS_PATH, MAX_BODY_BYTES, MEDIA_JSON, MEDIA_PROTOBUF, METRICS_PATH, TRACES_PATH};
use opentelemetry_proto::tonic::collector::logs::v1::{ExportLogsPartialSuccess, ExportLogsServiceResponse};

use super::http::HttpOptions;
use crate::ledger::intake::otel::{self, Encoding};
use crate::ledger::stored::store::Ledger;

/// The receiver's routes, guarded.
pub fn router(ledger: Arc<Mutex<Ledger>>) -> Router {
    let routes = Router::new()
        .route(LOGS_PATH, post(logs).with_state(ledger))
        .route(METRICS_PATH, post(dropped))
        .route(TRACES_PATH, post(dropped))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES));
    super::http::guarded(
        routes,
        HttpOptions {
            secret: None,
            open_reads: false,
            post_media: &[MEDIA_JSON, MEDIA_PROTOBUF],
            answer_origins: Vec::new(),
        },
    )
}

/// `google.rpc.Status`, the body of an OTLP error answer.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

/// gRPC's INVALID_ARGUMENT and UNAVAILABLE, as OTLP/HTTP's Status uses them.
const INVALID_ARGUMENT: i32 = 3;
const UNAVAILABLE: i32 = 14;

fn encoding_of(headers: &HeaderMap) -> Encoding {
    let media = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if media.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case(MEDIA_PROTOBUF)) {
        Encoding::Protobuf
    } else {
        Encoding::Json
    }
}

/// An answer in the request's own encoding.
fn answer(status: StatusCode, encoding: Encoding, json: serde_json::Value, protobuf: Vec<u8>) -> Response {
    let (media, body) = match encoding {
        Encoding::Json => (MEDIA_JSON, json.to_string().into_bytes()),
        Encoding::Protobuf => (MEDIA_PROTOBUF, protobuf),
    };
    (status, [(header::CONTENT_TYPE, HeaderValue::from_static(media))], body).into_response()
}

fn failure(status: StatusCode, encoding: Encoding, code: i32, message: &str) -> Response {
    let protobuf = prost::Message::encode_to_vec(&RpcStatus { code, message: message.to_owned() });
    answer(status, encoding, serde_json::json!({"code": code, "message": message}), protobuf)
}

/// The body with any `Content-Encoding: gzip` undone, at most
/// [`MAX_BODY_BYTES`] either way.
fn plain_body<'b>(headers: &HeaderMap, body: &'b [u8]) -> Result<std::borrow::Cow<'b, [u8]>, String> {
    let coding = headers.get(header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).unwrap_or("identity").trim();
    if coding.eq_ignore_ascii_case("identity") {
        return Ok(std::borrow::Cow::Borrowed(body));
    }
    if !coding.eq_ignore_ascii_case("gzip") {
        return Err(format!("Content-Encoding {coding:?} is not supported (gzip or none)"));
    }
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(body)
        .take(MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut plain)
        .map_err(|err| format!("the gzip body does not decompress: {err}"))?;
    if plain.len() > MAX_BODY_BYTES {
        return Err(format!("the body decompresses to more than {MAX_BODY_BYTES} bytes"));
    }
    Ok(std::borrow::Cow::Owned(plain))
}

/// Requests decoded at once: one, off the runtime, so a flood of large
/// bodies waits its turn in memory already read (the body limit times the
/// connection cap) and never takes the threads the hooks' socket is served on.
static DECODING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// A request's records as the ledger takes them.
struct Taken {
    received: otel::Received,
    /// Records that did not decode.
    undecodable: u64,
}

async fn logs(State(ledger): State<Arc<Mutex<Ledger>>>, headers: HeaderMap, body: Bytes) -> Response {
    let encoding = encoding_of(&headers);
    let Ok(turn) = DECODING.acquire().await else {
        return failure(StatusCode::SERVICE_UNAVAILABLE, encoding, UNAVAILABLE, "the receiver is stopping; retry");
    };
    let decoded = tokio::task::spawn_blocking(move || {
        let plain = plain_body(&headers, &body)?;
        let decoded = otel::decode_logs_counted(&plain, encoding).map_err(|err| err.to_string())?;
        Ok::<_, String>(Taken { received: otel::evidence(&decoded.request), undecodable: decoded.undecodable })
    })
    .await;
    let Taken { received, undecodable } = match decoded {
        Ok(Ok(read)) => read,
        Ok(Err(message)) => {
            tracing::warn!(error = %message, "OTLP logs request refused");
            return failure(StatusCode::BAD_REQUEST, encoding, INVALID_ARGUMENT, &message);
        }
        Err(_) => return failure(StatusCode::SERVICE_UNAVAILABLE, encoding, UNAVAILABLE, "decoding stopped; retry"),
    };
    drop(turn);
    if !received.evidence.is_empty() {
        let evidence = received.evidence;
        match super::api::append_to_ledger(ledger, move |ledger| ledger.append_evidence(&evidence)).await {
            Ok(appended) => tracing::debug!(
                api_requests = received.api_requests,
                appended = appended.appended,
                duplicates = appended.duplicates,
                "Claude Code requests received over OTLP"
            ),
            // Logged as a lost write; the sender retries on 503.
            Err(_) => {
                return failure(StatusCode::SERVICE_UNAVAILABLE, encoding, UNAVAILABLE, "the ledger is busy; retry");
            }
        }
    }
    let rejected = received.refused + undecodable;
    if rejected > 0 {
        let message = "log records that do not decode, and api_request events without a time or with figures \
                       outside Bee's bounds, were rejected; the rest were taken";
        tracing::warn!(refused = received.refused, undecodable, "{message}");
        let partial = ExportLogsPartialSuccess {
            rejected_log_records: i64::try_from(rejected).unwrap_or(i64::MAX),
            error_message: message.to_owned(),
        };
        let json = serde_json::json!({"partialSuccess": {
            "rejectedLogRecords": partial.rejected_log_records.to_string(),
            "errorMessage": message,
        }});
        let protobuf = prost::Message::encode_to_vec(&ExportLogsServiceResponse { partial_success: Some(partial) });
        return answer(StatusCode::OK, encoding, json, protobuf);
    }
    answer(StatusCode::OK, encoding, serde_json::json!({}), Vec::new())
}

/// Metrics and traces: accepted (a sender that gets errors retries and
/// logs them) and dropped — the events carry what the ledger needs.
async fn dropped(headers: HeaderMap) -> Response {
    answer(StatusCode::OK, encoding_of(&headers), serde_json::json!({}), Vec::new())
}
