//! Copilot CLI's OpenTelemetry file export: one JSON object a line, each a
//! span, a metric or a log record, with `attributes` in OpenTelemetry's
//! GenAI conventions. One provider response is one `chat` span (operation
//! `chat`, or a name starting `chat `): its `gen_ai.response.id`, the
//! model, `gen_ai.usage.*` counters and its end time. Other spans, metrics
//! and log records repeat a chat span's figures (an agent's summary span
//! adds up its turns) and are not read, so nothing counts twice.
//!
//! Ingestion reads an export as Copilot's other records are read, whole
//! whenever it changes ([`read_export`]), from the end of the last line it
//! read. The session store ([`super::store`]) holds every call too, with no
//! id an export's span shares: a chat span of a conversation the store
//! holds calls of is not read (see `README.md`).

use bee_proto::ledger::{Provider, SkipReason};
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::FileReader;
use crate::ledger::agents::lines::{
    Found, JsonLines, LineRules, MAX_LINE_BYTES, contains, decode_state, encode_state, markers, spelled, text,
};
use crate::ledger::agents::skipped;
use crate::ledger::agents::sparse::{Keep, keep};
use crate::ledger::stored::evidence::{AgentState, Evidence};
use crate::storage::lines::{Line, Lines};

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
        "attributes/gen_ai.usage.cache_read.input_tokens", "attributes/gen_ai.usage.cache_write.input_tokens",
        "attributes/gen_ai.usage.output_tokens",
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
        let input = attribute_count(attributes, "gen_ai.usage.input_tokens");
        let cache_read = attribute_count(attributes, "gen_ai.usage.cache_read.input_tokens");
        // Cache writes (Anthropic's API) are a part of input, as cache reads
        // are: kept where both parts fit in it.
        let cache_write = attribute_count(attributes, "gen_ai.usage.cache_write.input_tokens").filter(|&writes| {
            input.is_some_and(|input| cache_read.unwrap_or(0).checked_add(writes).is_some_and(|parts| parts <= input))
        });
        let counters = Counters {
            input_tokens: input,
            cached_input_tokens: cache_read,
            cache_creation_input_tokens: cache_write,
            output_tokens: attribute_count(attributes, "gen_ai.usage.output_tokens"),
            reasoning_output_tokens: attribute_count(attributes, "gen_ai.usage.reasoning.output_tokens"),
            ..Counters::default()
        };
        let key = match attribute_text(attributes, "gen_ai.response.id") {
            Some(id) => id.to_owned(),
            // Spelled without the cache writes, as keys were before they
            // were read: a span read again keeps its key.
            None => {
                let spelled = spelled(&Counters { cache_creation_input_tokens: None, ..counters.clone() }.values());
                format!("{}\u{1f}{at_ms}\u{1f}{spelled}", trace.unwrap_or(session))
            }
        };
        let model = attribute_text(attributes, "gen_ai.response.model")
            .or_else(|| attribute_text(attributes, "gen_ai.request.model"));
        found.response(key, session, at_ms, model, counters);
        true
    }
}

/// Where the reader of an export stopped: the end of the last whole line
/// it read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ReadTo {
    #[serde(default)]
    offset: u64,
}

/// Reads the export at `path` from where `state` says the last pass
/// stopped to its last whole line (a line still being written is read
/// next time; one over the line bound is passed over and named), as a
/// line log is read. A chat span of a conversation one of the session
/// stores at `stores` holds calls of, from the store's first call of it
/// on, is left out: the store counts those calls
/// ([`leave_out_held`]). The count is of lines that did not parse.
pub(super) fn read_export(
    path: &Path,
    state: &AgentState,
    stores: &[PathBuf],
    out: &mut Vec<Evidence>,
) -> std::io::Result<(AgentState, u64)> {
    let mut file = crate::storage::files::open_regular(path)?;
    let length = file.metadata()?.len();
    let ReadTo { mut offset } = decode_state(state);
    if offset > length {
        // Cut short since: written anew.
        offset = 0;
    }
    file.seek(SeekFrom::Start(offset))?;
    // A long line grows into the one large buffer, with its token, as a
    // line log's does in ingestion.
    let mut reader = Lines::new(file, MAX_LINE_BYTES);
    let mut spans = JsonLines::<Spans>::new(path, &AgentState::default());
    let (mut found, mut unparseable) = (Vec::new(), 0u64);
    loop {
        let (kind, line, read) = reader.next_line()?;
        match kind {
            Line::Complete => unparseable += u64::from(!spans.line(line, offset, &mut found)),
            Line::Oversized { complete: true } => skipped::note(SkipReason::OversizedLine, offset, read),
            // The end, or a last line still being written: read from here next.
            Line::End | Line::Partial | Line::Oversized { complete: false } => break,
        }
        offset += read;
    }
    leave_out_held(&mut found, stores)?;
    out.append(&mut found);
    Ok((encode_state(&ReadTo { offset }), unparseable))
}

/// How long before a store's first call of a conversation a span of it
/// may end and still be that call's: the store dates a call when its
/// usage arrives, a little before its span ends (2 to 12 ms observed).
const STORE_LEAD_MS: i64 = 1_000;

/// `found` without the responses the session stores at `stores` hold (a
/// store not there holds none): those of a conversation a store holds
/// calls of, from its first call there on (a conversation begun before
/// the store was made, or by a CLI that kept none, keeps its earlier
/// calls).
fn leave_out_held(found: &mut Vec<Evidence>, stores: &[PathBuf]) -> std::io::Result<()> {
    let session = |evidence: &Evidence| match evidence {
        Evidence::Response(write) => write.session_id.clone().map(|session| (session, write.at_ms)),
        _ => None,
    };
    let sessions: Vec<_> = found.iter().filter_map(session).collect();
    let sessions: BTreeSet<&str> = sessions.iter().map(|(session, _)| &**session).collect();
    if sessions.is_empty() {
        return Ok(());
    }
    let mut held = std::collections::HashMap::new();
    for store in stores.iter().filter(|store| store.is_file()) {
        for (session, first) in super::store::holding(store, &sessions).map_err(std::io::Error::other)? {
            let earliest = held.entry(session).or_insert(first);
            *earliest = first.min(*earliest);
        }
    }
    if !held.is_empty() {
        found.retain(|evidence| {
            session(evidence).is_none_or(|(session, at_ms)| {
                held.get(&*session).is_none_or(|&first| at_ms < first.saturating_sub(STORE_LEAD_MS))
            })
        });
    }
    Ok(())
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
