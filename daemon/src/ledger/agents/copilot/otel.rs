//! Copilot CLI's OpenTelemetry file export: one JSON object a line, each a
//! span (or a log record) with `attributes` in OpenTelemetry's GenAI
//! conventions. One provider response is one `chat` span (operation
//! `chat`, or a name starting `chat `): its `gen_ai.response.id`, the
//! model, `gen_ai.usage.*` counters and its end time. Other spans and log
//! records repeat a chat span's figures (an agent's summary span adds up
//! its turns) and are not read, so nothing counts twice.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::agents::lines::{Found, LineRules, contains, markers, spelled, text};
use crate::ledger::agents::sparse::{Keep, keep};

/// Copilot's spans keep nothing between lines.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Spans {}

markers! {
    USAGE = b"gen_ai.usage.";
}

keep! {
    /// What [`Spans::read`] reads of a line: the span's names and times,
    /// and each attribute read (plain, or as OTLP's JSON wraps it).
    LINE = [
        "spanId", "spanContext/spanId", "spanContext/traceId", "traceId", "name", "endTime", "startTime",
        "attributes/gen_ai.operation.name", "attributes/gen_ai.conversation.id", "attributes/session.id",
        "attributes/copilot_chat.session_id", "attributes/gen_ai.usage.input_tokens",
        "attributes/gen_ai.usage.cache_read.input_tokens", "attributes/gen_ai.usage.output_tokens",
        "attributes/gen_ai.usage.reasoning.output_tokens", "attributes/gen_ai.response.id",
        "attributes/gen_ai.response.model", "attributes/gen_ai.request.model",
    ];
}

/// Where a span names its conversation, most specific first.
const SESSION_ATTRIBUTES: [&str; 3] = ["gen_ai.conversation.id", "session.id", "copilot_chat.session_id"];

impl LineRules for Spans {
    const PROVIDER: Provider = Provider::Copilot;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &USAGE)
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        let Some(attributes) = line.get("attributes").filter(|a| a.is_object()) else { return false };
        let is_span = line.get("spanId").is_some() || line.pointer("/spanContext/spanId").is_some();
        let is_chat = attribute_text(attributes, "gen_ai.operation.name") == Some("chat")
            || text(line, "/name").is_some_and(|name| name.starts_with("chat "));
        if !is_span || !is_chat {
            return true;
        }
        let trace = text(line, "/traceId").or_else(|| text(line, "/spanContext/traceId"));
        let Some(session) = SESSION_ATTRIBUTES.iter().find_map(|name| attribute_text(attributes, name)).or(trace)
        else {
            return false;
        };
        let Some(at_ms) = span_time_ms(line.get("endTime")).or_else(|| span_time_ms(line.get("startTime"))) else {
            return false;
        };
        let counters = Counters {
            input_tokens: attribute_count(attributes, "gen_ai.usage.input_tokens"),
            cached_input_tokens: attribute_count(attributes, "gen_ai.usage.cache_read.input_tokens"),
            output_tokens: attribute_count(attributes, "gen_ai.usage.output_tokens"),
            reasoning_output_tokens: attribute_count(attributes, "gen_ai.usage.reasoning.output_tokens"),
            ..Counters::default()
        };
        let key = match attribute_text(attributes, "gen_ai.response.id") {
            Some(id) => id.to_owned(),
            None => format!("{}\u{1f}{at_ms}\u{1f}{}", trace.unwrap_or(session), spelled(&counters.values())),
        };
        let model = attribute_text(attributes, "gen_ai.response.model")
            .or_else(|| attribute_text(attributes, "gen_ai.request.model"));
        found.response(key, session, at_ms, model, counters);
        true
    }
}

/// An attribute's value: plain, or as OTLP's JSON wraps it
/// (`{"stringValue": …}`, `{"intValue": …}`).
fn attribute<'v>(attributes: &'v Value, name: &str) -> Option<&'v Value> {
    let value = attributes.get(name)?;
    match value {
        Value::Object(wrapped) => wrapped.get("stringValue").or_else(|| wrapped.get("intValue")),
        _ => Some(value),
    }
}

fn attribute_text<'v>(attributes: &'v Value, name: &str) -> Option<&'v str> {
    attribute(attributes, name)?.as_str().filter(|text| !text.is_empty())
}

/// A counter attribute: a non-negative integer (OTLP spells 64-bit
/// integers as text), else unknown.
fn attribute_count(attributes: &Value, name: &str) -> Option<u64> {
    match attribute(attributes, name)? {
        Value::Number(n) => n.as_u64(),
        Value::String(text) => text.parse().ok(),
        _ => None,
    }
}

/// A span's time as OpenTelemetry's JavaScript SDK writes it: `[seconds,
/// nanoseconds]`.
fn span_time_ms(value: Option<&Value>) -> Option<i64> {
    let parts = value?.as_array()?;
    let (seconds, nanos) = (parts.first()?.as_i64()?, parts.get(1)?.as_i64()?);
    let ms = seconds.checked_mul(1000)?.checked_add(nanos / 1_000_000)?;
    bee_proto::time::spells_as_rfc3339(ms).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{responses, rows};

    /// Two chat spans (one written twice by a resumed exporter), the agent
    /// span that sums them and a log record repeating one: two responses,
    /// cached input shown once under cache reads; broken lines are counted.
    #[test]
    fn chat_spans_are_the_responses() {
        let (writes, unparseable) = responses(Provider::Copilot, include_bytes!("../testdata/copilot-otel.jsonl"));
        assert_eq!(unparseable, 2, "a chat span with no attributes; a truncated line");
        let s = Some;
        assert_eq!(
            rows(Provider::Copilot, &writes),
            [
                ("chatcmpl-cp-1".into(), s(1200), None, s(3800), s(90), s(40), s(5090)),
                ("chatcmpl-cp-2".into(), s(300), None, s(4900), s(60), None, s(5260)),
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("3f0c-conversation")));
        assert_eq!(writes[0].model.as_deref(), Some("gpt-5.1"));
    }
}
