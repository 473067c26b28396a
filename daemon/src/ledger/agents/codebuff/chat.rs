//! A Codebuff chat: a JSON array of messages. Each provider response is
//! an assistant message (`variant` `ai` or `agent`, or `role`
//! `assistant`) whose `metadata.usage` (or `metadata.codebuff.usage`) has
//! the model and counters: input (`inputTokens`, or `promptTokens`),
//! output, and, where the model's provider reports them, cache reads and
//! writes. The chat's directory names it, and so its session; a
//! response's key is the chat and the message's `id`, or (for a message
//! without one) its time and counters.

use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::lines::{Found, count, spelled, text, time_ms};
use crate::ledger::agents::sparse::Keep;

/// What [`read`] reads of a chat: of each message of its array (a
/// path applies to every element), its kind, id, times, and model and
/// counters under either usage.
pub(crate) static CHAT: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&[
        "variant",
        "role",
        "id",
        "timestamp",
        "createdAt",
        "metadata/timestamp",
        "metadata/model",
        "metadata/usage/inputTokens",
        "metadata/usage/promptTokens",
        "metadata/usage/cacheCreationInputTokens",
        "metadata/usage/cacheReadInputTokens",
        "metadata/usage/outputTokens",
        "metadata/usage/completionTokens",
        "metadata/usage/model",
        "metadata/codebuff/usage/inputTokens",
        "metadata/codebuff/usage/promptTokens",
        "metadata/codebuff/usage/cacheCreationInputTokens",
        "metadata/codebuff/usage/cacheReadInputTokens",
        "metadata/codebuff/usage/outputTokens",
        "metadata/codebuff/usage/completionTokens",
        "metadata/codebuff/usage/model",
    ])
});

/// Reads one chat document at `path`; the count is of usages without a time.
pub(crate) fn read(path: &Path, chat: &Value, found: &mut Found<'_>) -> u64 {
    let Some(session) = path.parent().and_then(Path::file_name).and_then(|name| name.to_str()) else { return 0 };
    let Some(messages) = chat.as_array() else { return 0 };
    found.session(session, None);
    let mut refused = 0;
    for message in messages {
        let kind = text(message, "/variant").or_else(|| text(message, "/role"));
        if !matches!(kind, Some("ai" | "agent" | "assistant")) {
            continue;
        }
        let Some(usage) = ["/metadata/usage", "/metadata/codebuff/usage"]
            .iter()
            .find_map(|at| message.pointer(at).filter(|usage| usage.is_object()))
        else {
            continue;
        };
        let first = |names: &[&str]| names.iter().find_map(|name| usage.get(*name)).and_then(|v| count(Some(v)));
        let counters = Counters {
            input_tokens: first(&["inputTokens", "promptTokens"]),
            cache_creation_input_tokens: first(&["cacheCreationInputTokens"]),
            cache_read_input_tokens: first(&["cacheReadInputTokens"]),
            output_tokens: first(&["outputTokens", "completionTokens"]),
            ..Counters::default()
        };
        if counters.counts_nothing() {
            continue;
        }
        let Some(at_ms) =
            ["/timestamp", "/createdAt", "/metadata/timestamp"].iter().find_map(|at| time_ms(message.pointer(at)))
        else {
            refused += 1;
            continue;
        };
        let key = match text(message, "/id").filter(|id| !id.is_empty()) {
            Some(id) => format!("{session}\u{1f}{id}"),
            None => format!("{at_ms}\u{1f}{}", spelled(&counters.values())),
        };
        let model = text(usage, "/model").or_else(|| text(message, "/metadata/model"));
        found.response(key, session, at_ms, model, counters);
    }
    refused
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{document_responses, rows};
    use bee_proto::ledger::Provider;

    /// A chat read twice as it grew, with a message in Codebuff's nested
    /// usage and one without an id: each response once; cache counters the
    /// provider did not report are unknown; user messages and a message
    /// whose usage is broken are nothing.
    #[test]
    fn each_response_once_as_the_chat_grows() {
        let chats: Vec<Value> = serde_json::from_slice(include_bytes!("../testdata/codebuff-chats.json")).unwrap();
        let writes = document_responses(&super::super::CHATS, &chats);
        let s = Some;
        let found: Vec<_> = rows(Provider::Codebuff, &writes).into_iter().map(|r| (r.1, r.2, r.3, r.4, r.6)).collect();
        assert_eq!(
            found,
            [
                (s(88), None, None, s(12), s(100)),
                (s(3100), s(0), s(2900), s(150), s(6150)),
                (s(640), None, None, s(210), s(850))
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("chat")));
    }
}
