//! The agents' own OpenTelemetry as ledger evidence (spec/60, "In"): OTLP
//! log requests decoded by the official definitions, and each record read
//! by the agent whose event it is (Claude Code's `claude_code.api_request`:
//! `agents::claude::telemetry`). Every other event, and every metric, is
//! accepted and dropped: the events carry what the ledger needs.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::logs::v1::LogRecord;

use crate::ledger::agents::{self, agent::Telemetry};
use crate::ledger::intake::otlp_budget;
use crate::ledger::stored::evidence::Evidence;

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

/// Decodes an OTLP/HTTP logs body (see [`decode_logs_counted`]).
pub fn decode_logs(body: &[u8], encoding: Encoding) -> Result<ExportLogsServiceRequest, DecodeError> {
    decode_logs_counted(body, encoding).map(|decoded| decoded.request)
}

/// A logs request decoded, and how many of its records could not be.
#[derive(Debug, Default)]
pub struct Decoded {
    pub request: ExportLogsServiceRequest,
    /// JSON records that do not decode as a `LogRecord` (a `"NaN"` where
    /// a number belongs, an int64 out of range): left out one by one, so
    /// one bad record never costs its batch.
    pub undecodable: u64,
}

/// Decodes an OTLP/HTTP logs body within the budget of
/// [`crate::ledger::intake::otlp_budget`], checked before anything is built.
pub fn decode_logs_counted(body: &[u8], encoding: Encoding) -> Result<Decoded, DecodeError> {
    match encoding {
        Encoding::Json => {
            otlp_budget::check_json(body).map_err(|over| DecodeError::Json(over.to_string()))?;
            // serde_json's own messages name a line and column, never the input.
            let value: serde_json::Value =
                serde_json::from_slice(body).map_err(|err| DecodeError::Json(err.to_string()))?;
            decode_json_records(value)
        }
        Encoding::Protobuf => {
            otlp_budget::check_protobuf(body).map_err(|over| DecodeError::Protobuf(over.to_string()))?;
            let request = <ExportLogsServiceRequest as prost::Message>::decode(body)
                .map_err(|err| DecodeError::Protobuf(err.to_string()))?;
            Ok(Decoded { request, undecodable: 0 })
        }
    }
}

/// The request around its records decoded whole, then each record on its
/// own: a record that does not decode is counted, not fatal.
fn decode_json_records(mut value: serde_json::Value) -> Result<Decoded, DecodeError> {
    let json_error = |err: serde_json::Error| DecodeError::Json(err.to_string());
    // Each scope's records, taken out of the request in order.
    let mut taken: Vec<Vec<serde_json::Value>> = Vec::new();
    if let Some(resources) = value.get_mut("resourceLogs").and_then(serde_json::Value::as_array_mut) {
        for resource in resources {
            if let Some(scopes) = resource.get_mut("scopeLogs").and_then(serde_json::Value::as_array_mut) {
                for scope in scopes {
                    let records = scope.as_object_mut().and_then(|scope| scope.remove("logRecords"));
                    taken.push(match records {
                        Some(serde_json::Value::Array(records)) => records,
                        Some(serde_json::Value::Null) | None => Vec::new(),
                        Some(_) => return Err(DecodeError::Json("logRecords is not an array".to_owned())),
                    });
                }
            }
        }
    }
    let mut request: ExportLogsServiceRequest = serde_json::from_value(value).map_err(json_error)?;
    let mut undecodable = 0u64;
    let scopes = request.resource_logs.iter_mut().flat_map(|resource| resource.scope_logs.iter_mut());
    for (scope, records) in scopes.zip(taken) {
        for record in records {
            match serde_json::from_value::<LogRecord>(record) {
                Ok(record) => scope.log_records.push(record),
                Err(_) => undecodable += 1,
            }
        }
    }
    Ok(Decoded { request, undecodable })
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

/// The ledger evidence in a logs request: each record as the agent whose
/// event it is reads it.
pub fn evidence(request: &ExportLogsServiceRequest) -> Received {
    let mut received = Received::default();
    let records = request.resource_logs.iter().flat_map(|r| &r.scope_logs).flat_map(|s| &s.log_records);
    for record in records {
        let Some(event) = agents::all().find_map(|agent| match agent.telemetry(record) {
            Telemetry::NotOurs => None,
            Telemetry::Event(event) => Some(event),
        }) else {
            continue;
        };
        match event {
            Some(evidence) if evidence.iter().all(Evidence::is_valid) && !evidence.is_empty() => {
                received.api_requests += 1;
                received.evidence.extend(evidence);
            }
            _ => received.refused += 1,
        }
    }
    received
}

#[cfg(test)]
mod tests {
    use super::*;
    use bee_proto::ledger::{CallSource, Provider};
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
            crate::ledger::stored::responses::identity(Provider::Claude, &transcript),
            crate::ledger::stored::responses::identity(Provider::Claude, &write.key)
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
