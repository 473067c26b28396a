//! A Gemini CLI chat log: a header line naming the session, then each
//! message as a line of its own, with `{"$set": …}` lines that update the
//! header or replace the whole message list (on resume, with earlier
//! responses stripped of their tokens and stamped with the resume time).
//!
//! A response is a `type: "gemini"` message with `tokens`; its key is the
//! message's own `id` (a UUID the CLI gives it once and writes again, whole,
//! when its tool calls are added), since the log keeps no provider id.
//! Lines are read, never replayed: a `$set` list is read only for messages
//! that still carry tokens, under the same ids. A response written before
//! its session's first header began it (`startTime`) is a copy its session
//! holds of another's (no version observed makes one: `--resume` goes on
//! in the same session).

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::agents::lines::{
    Beside, Found, LineRules, NamedSession, before_start, contains, count, markers, text, time_ms, with_part,
};
use crate::ledger::agents::sparse::{Keep, keep};

/// What the reader keeps of a chat log where it stopped: the session its
/// header named, and when its first header says it began.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Chat {
    #[serde(flatten)]
    session: NamedSession,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started_ms: Option<i64>,
}

markers! {
    SESSION_ID = b"\"sessionId\"";
    TOKENS = b"\"tokens\"";
}

keep! {
    /// What [`Chat::read`] reads of a line: a message's fields, at the
    /// root or in each message of a `$set` list.
    LINE = [
        "sessionId", "startTime", "type", "id", "timestamp", "model",
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
        // The header, or an update naming the session. A resume writes the
        // header again: the session began at its first.
        if let Some(session) = update.unwrap_or(line).get("sessionId").and_then(Value::as_str) {
            if self.session.get() != Some(session) {
                self.started_ms = None;
            }
            self.session.name(session, None, found);
            if update.is_none() && self.started_ms.is_none() {
                self.started_ms = time_ms(line.get("startTime"));
            }
        }
        let Some(session) = self.session.get() else { return true };
        let started_ms = self.started_ms;
        match update {
            Some(update) => update
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .all(|message| response(message, session, started_ms, found)),
            None => response(line, session, started_ms, found),
        }
    }
}

/// A message of `session` (begun at `started_ms`) that is a response with
/// its tokens, read; `false` when it claims to be one but cannot be read.
fn response(message: &Value, session: &str, started_ms: Option<i64>, found: &mut Found<'_>) -> bool {
    let Some(tokens) = message.get("tokens").filter(|_| message.get("type").and_then(Value::as_str) == Some("gemini"))
    else {
        return true;
    };
    let (Some(id), Some(at_ms)) = (text(message, "/id"), time_ms(message.get("timestamp"))) else { return false };
    if id.is_empty() || !tokens.is_object() {
        return false;
    }
    let beside = Beside { own_figure: None, copied: before_start(at_ms, started_ms) };
    found.response_with(id.to_owned(), session, at_ms, text(message, "/model"), counters(tokens), beside);
    true
}

/// Gemini's `tokens` in its API's own split (OpenAI's shape): `input` is
/// the prompt with its cached part, to which the tool-use prompt adds;
/// `output` leaves out `thoughts`, which Bee counts as part of output;
/// `total` is the sum of them all.
pub(super) fn counters(tokens: &Value) -> Counters {
    counters_of(["input", "cached", "output", "thoughts", "tool", "total"].map(|name| count(tokens.get(name))))
}

/// [`counters`] of Gemini's six counts, in that order: input, cached,
/// output, thoughts, tool-use prompt, total.
pub(super) fn counters_of([input, cached, output, thoughts, tool, total]: [Option<u64>; 6]) -> Counters {
    Counters {
        input_tokens: with_part(input, tool),
        cached_input_tokens: cached,
        output_tokens: with_part(output, thoughts),
        reasoning_output_tokens: thoughts,
        total_tokens: total,
        ..Counters::default()
    }
}

#[cfg(test)]
mod tests {
    use crate::ledger::agents::tests::gemini_chat_responses;

    /// A response stamped before its session's header began it is a copy;
    /// a resume writes the header again, later, and the session still began
    /// at its first (Gemini CLI 0.61.0's own log of a tool turn and a
    /// resume: nothing in it is a copy).
    #[test]
    fn a_response_written_before_its_session_began_is_a_copy() {
        let (writes, _) = gemini_chat_responses(include_bytes!("../testdata/gemini-0.61.0-tool-and-resume.jsonl"));
        assert_eq!(writes.len(), 4, "three responses, one written again with its tool calls");
        assert!(writes.iter().all(|w| !w.copied && w.own_figure.is_none()), "{writes:?}");
        let log = concat!(
            "{\"sessionId\":\"s1\",\"startTime\":\"2026-12-05T03:21:30.000Z\"}\n",
            "{\"id\":\"m0\",\"timestamp\":\"2026-12-05T03:21:29.000Z\",\"type\":\"gemini\",\"tokens\":{\"input\":1,\"output\":1}}\n",
            "{\"id\":\"m1\",\"timestamp\":\"2026-12-05T03:21:31.000Z\",\"type\":\"gemini\",\"tokens\":{\"input\":1,\"output\":1}}\n",
            "{\"sessionId\":\"s1\",\"startTime\":\"2026-12-05T03:25:00.000Z\"}\n",
            "{\"id\":\"m2\",\"timestamp\":\"2026-12-05T03:22:00.000Z\",\"type\":\"gemini\",\"tokens\":{\"input\":1,\"output\":1}}\n",
        );
        let (writes, _) = gemini_chat_responses(log.as_bytes());
        let read: Vec<(&str, bool)> = writes.iter().map(|w| (w.key.as_str(), w.copied)).collect();
        assert_eq!(read, [("m0", true), ("m1", false), ("m2", false)]);
    }
}
