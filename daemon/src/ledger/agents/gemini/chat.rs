//! A Gemini CLI chat log: a header line naming the session, then each
//! message as a line of its own, with `{"$set": …}` lines that update the
//! header or replace the whole message list (on resume, with earlier
//! responses stripped of their tokens and stamped with the resume time).
//!
//! A response is a `type: "gemini"` message with `tokens`; its key is the
//! message's own `id` (a UUID the CLI gives it once and writes again, whole,
//! when its tool calls are added), since the log keeps no provider id.
//! Lines are read, never replayed: a `$set` list is read only for messages
//! that still carry tokens, under the same ids.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::agents::lines::{
    Found, LineRules, NamedSession, contains, count, markers, text, time_ms, with_part,
};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a chat log where it stopped: the session its
/// header named.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub(super) struct Chat(NamedSession);

markers! {
    SESSION_ID = b"\"sessionId\"";
    TOKENS = b"\"tokens\"";
}

keep! {
    /// What [`Chat::read`] reads of a line: a message's fields, at the
    /// root or in each message of a `$set` list.
    LINE = [
        "sessionId", "type", "id", "timestamp", "model",
        "tokens/input", "tokens/cached", "tokens/output", "tokens/thoughts", "tokens/tool", "tokens/total",
        "$set/sessionId", "$set/messages/type", "$set/messages/id", "$set/messages/timestamp", "$set/messages/model",
        "$set/messages/tokens/input", "$set/messages/tokens/cached", "$set/messages/tokens/output",
        "$set/messages/tokens/thoughts", "$set/messages/tokens/tool", "$set/messages/tokens/total",
    ];
}

impl LineRules for Chat {
    const PROVIDER: Provider = Provider::Gemini;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &TOKENS) || contains(line, &SESSION_ID)
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        let update = line.get("$set");
        // The header, or an update naming the session.
        if let Some(session) = update.unwrap_or(line).get("sessionId").and_then(Value::as_str) {
            self.0.name(session, None, found);
        }
        let Some(session) = self.0.get() else { return true };
        match update {
            Some(update) => update
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .all(|message| response(message, session, found)),
            None => response(line, session, found),
        }
    }
}

/// A message that is a response with its tokens, read; `false` when it
/// claims to be one but cannot be read.
fn response(message: &Value, session: &str, found: &mut Found<'_>) -> bool {
    let Some(tokens) = message.get("tokens").filter(|_| message.get("type").and_then(Value::as_str) == Some("gemini"))
    else {
        return true;
    };
    let (Some(id), Some(at_ms)) = (text(message, "/id"), time_ms(message.get("timestamp"))) else { return false };
    if id.is_empty() || !tokens.is_object() {
        return false;
    }
    found.response(id.to_owned(), session, at_ms, text(message, "/model"), counters(tokens));
    true
}

/// Gemini's `tokens` in its API's own split (OpenAI's shape): `input` is
/// the prompt with its cached part, to which the tool-use prompt adds;
/// `output` leaves out `thoughts`, which Bee counts as part of output;
/// `total` is the sum of them all.
pub(super) fn counters(tokens: &Value) -> Counters {
    let [input, cached, output, thoughts, tool, total] =
        ["input", "cached", "output", "thoughts", "tool", "total"].map(|name| count(tokens.get(name)));
    Counters {
        input_tokens: with_part(input, tool),
        cached_input_tokens: cached,
        output_tokens: with_part(output, thoughts),
        reasoning_output_tokens: thoughts,
        total_tokens: total,
        ..Counters::default()
    }
}
