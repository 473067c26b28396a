//! An Amp thread: `{"id": "T-…", "messages": [...], "usageLedger": …}`.
//! Each provider response is an assistant message whose `usage` has the
//! model, its time and Anthropic-shaped counters (`inputTokens` without
//! either cache, `cacheCreationInputTokens`, `cacheReadInputTokens`,
//! `outputTokens`). Older threads keep usage only as `usageLedger.events`
//! (`tokens` {input, output}, the message it went to): such an event
//! whose message has no usage of its own is a response whose cache
//! counters are unknown. A response's key is what a copy of it keeps (its
//! time, model and counters), so a thread copied into another (a fork, a
//! handoff) adds nothing.

use bee_proto::usage::Counters;
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::lines::{Found, count, spelled, text, time_ms};
use crate::ledger::agents::sparse::Keep;

/// What [`read`] reads of a thread (`usage` kept as an object of
/// the counters read, so that its kind is still told).
pub(crate) static THREAD: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&[
        "id",
        "messages/role",
        "messages/messageId",
        "messages/timestamp",
        "messages/model",
        "messages/usage/timestamp",
        "messages/usage/inputTokens",
        "messages/usage/cacheCreationInputTokens",
        "messages/usage/cacheReadInputTokens",
        "messages/usage/outputTokens",
        "messages/usage/totalTokens",
        "messages/usage/model",
        "usageLedger/events/toMessageId",
        "usageLedger/events/timestamp",
        "usageLedger/events/model",
        "usageLedger/events/tokens/input",
        "usageLedger/events/tokens/output",
    ])
});

/// Reads one thread document; the count is of usages without a time.
pub(crate) fn read(_path: &Path, thread: &Value, found: &mut Found<'_>) -> u64 {
    let Some(thread_id) = text(thread, "/id").filter(|id| !id.is_empty()) else { return 0 };
    let mut refused = 0;
    found.session(thread_id, None);
    let messages = thread.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut with_usage = HashSet::new();
    for message in messages {
        if text(message, "/role") != Some("assistant") {
            continue;
        }
        let Some(usage) = message.get("usage").filter(|usage| usage.is_object()) else { continue };
        if let Some(id) = message.get("messageId").and_then(Value::as_i64) {
            with_usage.insert(id);
        }
        let Some(at_ms) = time_ms(usage.get("timestamp")).or_else(|| time_ms(message.get("timestamp"))) else {
            refused += 1;
            continue;
        };
        let field = |name: &str| count(usage.get(name));
        let counters = Counters {
            input_tokens: field("inputTokens"),
            cache_creation_input_tokens: field("cacheCreationInputTokens"),
            cache_read_input_tokens: field("cacheReadInputTokens"),
            output_tokens: field("outputTokens"),
            total_tokens: field("totalTokens"),
            ..Counters::default()
        };
        respond(found, thread_id, at_ms, text(usage, "/model").or_else(|| text(message, "/model")), counters);
    }
    let events = thread.pointer("/usageLedger/events").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for event in events {
        if event.get("toMessageId").and_then(Value::as_i64).is_some_and(|id| with_usage.contains(&id)) {
            continue;
        }
        let (Some(at_ms), Some(tokens)) = (time_ms(event.get("timestamp")), event.get("tokens")) else { continue };
        let counters = Counters {
            input_tokens: count(tokens.get("input")),
            output_tokens: count(tokens.get("output")),
            ..Counters::default()
        };
        respond(found, thread_id, at_ms, text(event, "/model"), counters);
    }
    refused
}

fn respond(found: &mut Found<'_>, thread: &str, at_ms: i64, model: Option<&str>, counters: Counters) {
    if counters.counts_nothing() {
        return;
    }
    let key = format!("{at_ms}\u{1f}{}\u{1f}{}", model.unwrap_or(""), spelled(&counters.values()));
    found.response(key, thread, at_ms, model, counters);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{document_responses, rows};
    use bee_proto::ledger::Provider;

    /// A thread with a tool turn, the same thread rewritten as it went on,
    /// its handoff copy, and an older thread of ledger events only: each
    /// response once; an event's unknown cache counters are unknown; a
    /// document that is no thread is nothing.
    #[test]
    fn each_response_once_through_rewrites_and_copies() {
        let threads: Vec<Value> = serde_json::from_slice(include_bytes!("../testdata/amp-threads.json")).unwrap();
        let writes = document_responses(&super::super::THREADS, &threads);
        let s = Some;
        let found = rows(Provider::Amp, &writes);
        let columns: Vec<_> = found.iter().map(|r| (r.1, r.2, r.3, r.4, r.6)).collect();
        assert_eq!(
            columns,
            [
                (s(900), None, None, s(75), None),
                (s(12), s(4200), s(0), s(85), s(4297)),
                (s(9), s(130), s(4200), s(60), s(4399)),
                (s(7), s(0), s(4330), s(44), s(4381)),
            ]
        );
        assert!(writes.iter().any(|w| w.model.as_deref() == Some("claude-sonnet-4-5")));
    }
}
