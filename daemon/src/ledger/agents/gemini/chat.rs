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

use crate::ledger::agents::lines::{Found, LineRules, contains, count, markers, text, time_ms};

/// What the reader keeps of a chat log where it stopped.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Chat {
    /// The session the log belongs to (its header's).
    session_id: Option<String>,
}

markers! {
    SESSION_ID = b"\"sessionId\"";
    TOKENS = b"\"tokens\"";
}

impl LineRules for Chat {
    const PROVIDER: Provider = Provider::Gemini;

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &TOKENS) || contains(line, &SESSION_ID)
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        let update = line.get("$set");
        // The header, or an update naming the session.
        if let Some(session) = update.unwrap_or(line).get("sessionId").and_then(Value::as_str)
            && self.session_id.as_deref() != Some(session)
        {
            self.session_id = Some(session.to_owned());
            found.session(session, None);
        }
        let Some(session) = self.session_id.as_deref() else { return true };
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
    let input = input.zip(tool.or(Some(0))).and_then(|(input, tool)| input.checked_add(tool));
    let output = output.zip(thoughts.or(Some(0))).and_then(|(output, thoughts)| output.checked_add(thoughts));
    Counters {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        reasoning_output_tokens: thoughts,
        total_tokens: total,
        ..Counters::default()
    }
}
