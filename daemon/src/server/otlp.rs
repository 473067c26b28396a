//! `beed --otlp ADDR`: an OTLP/HTTP receiver on loopback for Claude Code's
//! own OpenTelemetry (spec/60, "In"), behind the event listener's guard
//! (spec/40: loopback `Host` and `Origin`, the POST media types, the rate
//! limit, the connection cap and header timeout of [`super::http::serve`]).
//!
//! Logs are decoded (JSON or protobuf, gzip undone) and their `api_request`
//! events appended to the ledger ([`crate::ledger::otel`]); metrics and
//! traces are accepted and dropped. A ledger that cannot take the records
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
use crate::ledger::otel::{self, Encoding};
use crate::ledger::store::Ledger;

/// The receiver's routes, guarded.
pub fn router(ledger: Arc<Mutex<Ledger>>) -> Router {
    let routes = Router::new()
        .route(LOGS_PATH, post(logs).with_state(ledger))
        .route(METRICS_PATH, post(dropped))
        .route(TRACES_PATH, post(dropped))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES));
    super::http::guarded(
        routes,
        HttpOptions { secret: None, open_reads: false, post_media: &[MEDIA_JSON, MEDIA_PROTOBUF] },
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
fn plain_body(headers: &HeaderMap, body: &[u8]) -> Result<Vec<u8>, String> {
    let coding = headers.get(header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).unwrap_or("identity").trim();
    if coding.eq_ignore_ascii_case("identity") {
        return Ok(body.to_vec());
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
    Ok(plain)
}

async fn logs(State(ledger): State<Arc<Mutex<Ledger>>>, headers: HeaderMap, body: Bytes) -> Response {
    let encoding = encoding_of(&headers);
    let request = match plain_body(&headers, &body)
        .and_then(|plain| otel::decode_logs(&plain, encoding).map_err(|err| err.to_string()))
    {
        Ok(request) => request,
        Err(message) => {
            tracing::warn!(error = %message, "OTLP logs request refused");
            return failure(StatusCode::BAD_REQUEST, encoding, INVALID_ARGUMENT, &message);
        }
    };
    let received = otel::evidence(&request);
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
    if received.refused > 0 {
        let message = "api_request events without a time or with figures outside Bee's bounds";
        tracing::warn!(refused = received.refused, "{message}");
        let partial = ExportLogsPartialSuccess {
            rejected_log_records: i64::try_from(received.refused).unwrap_or(i64::MAX),
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
