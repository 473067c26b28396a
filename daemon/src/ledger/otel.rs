//! Claude Code's own OpenTelemetry as ledger evidence (spec/60, "In"):
//! OTLP log requests decoded by the official definitions, and each
//! `claude_code.api_request` event made into a response write (its tokens,
//! under its request id, so the transcript's line for the same response is
//! the same response) and a timed request (its measured duration and the
//! cost Claude Code reported). Every other event, and every metric, is
//! accepted and dropped: the events carry what the ledger needs.
//!
//! Metadata only: no attribute but the ones named in [`bee_proto::otlp`] is
//! read, and none of them holds content.

use bee_proto::ledger::{CallRecord, CallSource, Provider, bounds};
use bee_proto::otlp::{API_REQUEST_BODY, API_REQUEST_EVENT, attribute};
use bee_proto::usage::Counters;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};
use opentelemetry_proto::tonic::logs::v1::LogRecord;

use crate::ledger::logs::Evidence;
use crate::ledger::responses::ResponseWrite;

/// How an OTLP/HTTP body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Json,
    Protobuf,
}

/// Why a body is not an OTLP logs request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the body is not an OTLP/JSON logs request: {0}")]
    Json(String),
    #[error("the body is not an OTLP protobuf logs request: {0}")]
    Protobuf(String),
}

/// Decodes an OTLP/HTTP logs body.
pub fn decode_logs(body: &[u8], encoding: Encoding) -> Result<ExportLogsServiceRequest, DecodeError> {
    match encoding {
        // serde_json's own messages name a line and column, never the input.
        Encoding::Json => serde_json::from_slice(body).map_err(|err| DecodeError::Json(err.to_string())),
        Encoding::Protobuf => <ExportLogsServiceRequest as prost::Message>::decode(body)
            .map_err(|err| DecodeError::Protobuf(err.to_string())),
    }
}

/// What one logs request brought the ledger.
#[derive(Debug, Default)]
pub struct Received {
    pub evidence: Vec<Evidence>,
    /// `api_request` events taken.
    pub api_requests: u64,
    /// `api_request` events refused: no time, or a figure outside Bee's
    /// bounds. Other events are not counted here: they are dropped by design.
    pub refused: u64,
}

/// The ledger evidence in a logs request.
pub fn evidence(request: &ExportLogsServiceRequest) -> Received {
    let mut received = Received::default();
    let records = request.resource_logs.iter().flat_map(|r| &r.scope_logs).flat_map(|s| &s.log_records);
    for record in records.filter(|record| is_api_request(record)) {
        match api_request(record) {
            Some(evidence) if evidence.iter().all(Evidence::is_valid) && !evidence.is_empty() => {
                received.api_requests += 1;
                received.evidence.extend(evidence);
            }
            _ => received.refused += 1,
        }
    }
    received
}

fn is_api_request(record: &LogRecord) -> bool {
    let body = record.body.as_ref().and_then(|b| b.value.as_ref());
    matches!(body, Some(Value::StringValue(name)) if name == API_REQUEST_BODY)
        || text(&record.attributes, attribute::EVENT_NAME) == Some(API_REQUEST_EVENT)
}

fn find<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

fn text<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match find(attributes, key)? {
        Value::StringValue(text) if !text.is_empty() && text.len() <= bee_proto::ledger::bounds::MAX_TEXT_BYTES => {
            Some(text)
        }
        _ => None,
    }
}

/// A count: a non-negative integer, whichever way the sender encoded it
/// (OTLP/JSON senders write integers as numbers, strings or doubles).
fn count(attributes: &[KeyValue], key: &str) -> Option<u64> {
    match find(attributes, key)? {
        Value::IntValue(n) => u64::try_from(*n).ok(),
        Value::DoubleValue(d) if d.is_finite() && *d >= 0.0 && d.fract() == 0.0 && *d < 9.0e15 => Some(*d as u64),
        Value::StringValue(s) => s.parse().ok(),
        _ => None,
    }
}

fn amount(attributes: &[KeyValue], key: &str) -> Option<f64> {
    let value = match find(attributes, key)? {
        Value::DoubleValue(d) => *d,
        Value::IntValue(n) => *n as f64,
        Value::StringValue(s) => s.parse().ok()?,
        _ => return None,
    };
    (value.is_finite() && (0.0..=bounds::MAX_CALL_COST_USD).contains(&value)).then_some(value)
}

/// When the event was emitted (the response's end): its `event.timestamp`,
/// else the record's own time, else when the SDK observed it.
fn end_ms(record: &LogRecord) -> Option<i64> {
    if let Some(at) = text(&record.attributes, attribute::EVENT_TIMESTAMP).and_then(bee_proto::time::parse_rfc3339_ms) {
        return Some(at);
    }
    [record.time_unix_nano, record.observed_time_unix_nano]
        .into_iter()
        .find(|&nanos| nanos > 0)
        .and_then(|nanos| i64::try_from(nanos / 1_000_000).ok())
}

/// One `api_request` event as evidence: the response write when it names
/// its request id (without it, it cannot be told apart from the
/// transcript's line, which brings the tokens), and the timed request when
/// it reports a duration. `None` when it has no time.
fn api_request(record: &LogRecord) -> Option<Vec<Evidence>> {
    let attributes = &record.attributes;
    let end = end_ms(record)?;
    let session = text(attributes, attribute::SESSION_ID).filter(|s| s.len() <= 128).map(str::to_owned);
    let model = text(attributes, attribute::MODEL).map(str::to_owned);
    let request = text(attributes, attribute::REQUEST_ID).filter(|r| r.len() <= 256);
    let mut evidence = Vec::with_capacity(2);
    if let Some(request) = request {
        evidence.push(Evidence::Response(ResponseWrite {
            provider: Provider::Claude,
            key: request.to_owned(),
            session_id: session.as_deref().map(Into::into),
            at_ms: end,
            model: model.as_deref().map(Into::into),
            tokens: Counters {
                input_tokens: count(attributes, attribute::INPUT_TOKENS),
                cache_creation_input_tokens: count(attributes, attribute::CACHE_CREATION_TOKENS),
                cache_read_input_tokens: count(attributes, attribute::CACHE_READ_TOKENS),
                output_tokens: count(attributes, attribute::OUTPUT_TOKENS),
                ..Counters::default()
            },
            context_tokens: None,
            context_window: None,
            // Claude Code emits the event once the response is complete.
            is_final: true,
        }));
    }
    if let Some(duration) = count(attributes, attribute::DURATION_MS) {
        let duration = duration.min(bounds::MAX_CALL_DURATION_MS);
        let start = end.saturating_sub(i64::try_from(duration).ok()?);
        // The same event sent again is the same record: by its request id,
        // else by where it sits in its session's event sequence.
        let sequence = count(attributes, attribute::EVENT_SEQUENCE).map(|n| n.to_string());
        let end_text = end.to_string();
        let name = match (request, sequence.as_deref()) {
            (Some(request), _) => ["api_request", request, "", "", &end_text],
            (None, Some(sequence)) => [
                "api_request",
                session.as_deref().unwrap_or(""),
                text(attributes, attribute::PROMPT_ID).unwrap_or(""),
                sequence,
                &end_text,
            ],
            // Nothing would tell a resend from another request.
            (None, None) => return (!evidence.is_empty()).then_some(evidence),
        };
        let record_id = crate::ledger::logs::record_id(&name);
        let started_at_utc = bee_proto::time::format_unix_ms(start);
        evidence.push(Evidence::TimedRequest(Box::new(CallRecord {
            success: Some(true),
            model,
            cost_usd: amount(attributes, attribute::COST_USD),
            ..CallRecord::span(
                record_id,
                CallSource::ApiRequest,
                Provider::Claude,
                started_at_utc,
                Some(duration),
                session,
            )
        })));
    }
    (!evidence.is_empty()).then_some(evidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An `api_request` record as Claude Code 2.1.332 sends it (OTLP/JSON,
    /// integers as numbers), with `overrides` on top.
    fn request_json(overrides: &[(&str, serde_json::Value)]) -> Vec<u8> {
        let mut attributes = vec![
            ("session.id", json!({"stringValue": "s-1"})),
            ("event.name", json!({"stringValue": "api_request"})),
            ("event.timestamp", json!({"stringValue": "2026-12-01T09:16:08.882Z"})),
            ("event.sequence", json!({"intValue": 5})),
            ("model", json!({"stringValue": "claude-opus-5-5"})),
            ("input_tokens", json!({"intValue": 101})),
            ("output_tokens", json!({"intValue": 23})),
            ("cache_read_tokens", json!({"intValue": 5007})),
            ("cache_creation_tokens", json!({"intValue": "300"})),
            ("cost_usd", json!({"doubleValue": 0.0033654})),
            ("duration_ms", json!({"intValue": 14})),
            ("request_id", json!({"stringValue": "req_1"})),
        ];
        for (key, value) in overrides {
            attributes.retain(|(k, _)| k != key);
            if !value.is_null() {
                attributes.push((key, value.clone()));
            }
        }
        let attributes: Vec<_> =
            attributes.into_iter().map(|(key, value)| json!({"key": key, "value": value})).collect();
        json!({"resourceLogs": [{"resource": {"attributes": []}, "scopeLogs": [{
            "scope": {"name": "com.anthropic.claude_code.events"},
            "logRecords": [
                {"timeUnixNano": "1796116568882000000", "body": {"stringValue": "claude_code.api_request"}, "attributes": attributes},
                {"timeUnixNano": "1796116568882000000", "body": {"stringValue": "claude_code.user_prompt"},
                 "attributes": [{"key": "prompt", "value": {"stringValue": "never read"}}]}
            ]}]}]})
        .to_string()
        .into_bytes()
    }

    fn received(body: &[u8]) -> Received {
        evidence(&decode_logs(body, Encoding::Json).unwrap())
    }

    #[test]
    fn an_api_request_is_a_response_under_its_request_id_and_a_timed_request() {
        let got = received(&request_json(&[]));
        assert_eq!((got.api_requests, got.refused), (1, 0));
        let [Evidence::Response(write), Evidence::TimedRequest(call)] = got.evidence.as_slice() else {
            panic!("{:?}", got.evidence)
        };
        assert_eq!(write.key, "req_1");
        assert_eq!(write.tokens.input_tokens, Some(101));
        assert_eq!(write.tokens.cache_creation_input_tokens, Some(300), "an integer sent as a string");
        assert_eq!(write.tokens.cache_read_input_tokens, Some(5007));
        assert_eq!(write.tokens.output_tokens, Some(23));
        assert_eq!(bee_proto::time::format_unix_ms(write.at_ms), "2026-12-01T09:16:08.882Z");
        assert!(write.is_final);
        assert_eq!(call.source, CallSource::ApiRequest);
        assert_eq!(call.started_at_utc, "2026-12-01T09:16:08.868Z", "the duration ends at the event");
        assert_eq!((call.duration_ms, call.cost_usd), (Some(14), Some(0.0033654)));
        assert_eq!(call.session_id.as_deref(), Some("s-1"));
        // The transcript's key for the same response names the same response.
        let transcript = bee_proto::usage::claude_response_key(Some("msg_1"), Some("req_1")).unwrap();
        assert_eq!(
            crate::ledger::responses::identity(Provider::Claude, &transcript),
            crate::ledger::responses::identity(Provider::Claude, &write.key)
        );
    }

    #[test]
    fn the_same_event_sent_twice_is_the_same_records() {
        let (a, b) = (received(&request_json(&[])), received(&request_json(&[])));
        assert_eq!(a.evidence, b.evidence);
    }

    #[test]
    fn an_unreported_counter_is_unknown_not_zero() {
        let got = received(&request_json(&[("output_tokens", serde_json::Value::Null)]));
        let Evidence::Response(write) = &got.evidence[0] else { panic!() };
        assert_eq!(write.tokens.output_tokens, None);
        let got = received(&request_json(&[("cost_usd", serde_json::Value::Null)]));
        let Evidence::TimedRequest(call) = &got.evidence[1] else { panic!() };
        assert_eq!(call.cost_usd, None);
    }

    #[test]
    fn without_a_request_id_only_the_time_is_taken_and_without_a_duration_only_the_tokens() {
        let got = received(&request_json(&[("request_id", serde_json::Value::Null)]));
        assert!(matches!(got.evidence.as_slice(), [Evidence::TimedRequest(_)]), "{:?}", got.evidence);
        let got = received(&request_json(&[("duration_ms", serde_json::Value::Null)]));
        assert!(matches!(got.evidence.as_slice(), [Evidence::Response(_)]), "{:?}", got.evidence);
    }

    #[test]
    fn hostile_figures_are_refused_not_stored() {
        for (key, value) in [
            ("input_tokens", json!({"intValue": "-5"})),
            ("output_tokens", json!({"doubleValue": 1e300})),
            ("duration_ms", json!({"stringValue": "soon"})),
            ("cost_usd", json!({"doubleValue": -1.0})),
            ("event.timestamp", json!({"stringValue": "yesterday"})),
        ] {
            let got = received(&request_json(&[(key, value.clone())]));
            // A figure that is not a count is unknown; a write outside Bee's
            // bounds is refused whole.
            for evidence in &got.evidence {
                assert!(evidence.is_valid(), "{key}={value}: {evidence:?}");
            }
        }
        let huge = received(&request_json(&[("input_tokens", json!({"intValue": i64::MAX}))]));
        assert_eq!((huge.api_requests, huge.refused, huge.evidence.len()), (0, 1, 0));
        let no_time = received(&request_json(&[("event.timestamp", serde_json::Value::Null)]));
        assert_eq!(no_time.api_requests, 1, "the record's own time stands in");
    }

    #[test]
    fn malformed_and_non_utf8_bodies_are_clear_errors() {
        for body in [&b"{"[..], b"\"text\"", b"\xff\xfe{}", b"{\"resourceLogs\": 7}"] {
            assert!(matches!(decode_logs(body, Encoding::Json), Err(DecodeError::Json(_))), "{body:?}");
        }
        assert!(matches!(decode_logs(b"\xff\xff\xff\xff", Encoding::Protobuf), Err(DecodeError::Protobuf(_))));
        let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(decode_logs(nested.as_bytes(), Encoding::Json).is_err());
    }

    #[test]
    fn protobuf_and_json_bodies_give_the_same_evidence() {
        let request = decode_logs(&request_json(&[]), Encoding::Json).unwrap();
        let body = prost::Message::encode_to_vec(&request);
        assert_eq!(evidence(&decode_logs(&body, Encoding::Protobuf).unwrap()).evidence, evidence(&request).evidence);
    }
}
