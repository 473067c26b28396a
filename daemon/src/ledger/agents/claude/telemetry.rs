//! Claude Code's own OpenTelemetry (`beed --otlp`): each
//! `claude_code.api_request` event made into a response write (its tokens,
//! under its request id, so the transcript's line for the same response is
//! the same response) and a timed request (its measured duration and the
//! cost Claude Code reported).
//!
//! Metadata only: no attribute but the ones named in [`bee_proto::otlp`] is
//! read, and none of them holds content.

use bee_proto::ledger::{CallRecord, CallSource, Provider, bounds};
use bee_proto::otlp::{API_REQUEST_BODY, API_REQUEST_EVENT, attribute};
use bee_proto::usage::Counters;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};
use opentelemetry_proto::tonic::logs::v1::LogRecord;

use crate::ledger::agents::agent::Telemetry;
use crate::ledger::stored::evidence::{Evidence, record_id};
use crate::ledger::stored::responses::ResponseWrite;

/// What `record` is to the ledger: an `api_request` event, or not Claude Code's.
pub(super) fn read(record: &LogRecord) -> Telemetry {
    if is_api_request(record) { Telemetry::Event(api_request(record)) } else { Telemetry::NotOurs }
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
            own_figure: None,
            copied: false,
        }));
    }
    if let Some(duration) = count(attributes, attribute::DURATION_MS) {
        // Out of bounds is refused, never clamped into a measured time.
        if duration > bounds::MAX_CALL_DURATION_MS {
            return None;
        }
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
        let record_id = record_id(&name);
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
