//! A pi session log: a `type: "session"` header (the session's id and
//! working directory; a fork's names its parent), then entries. Each
//! provider response is an assistant `message` entry with the provider's
//! `responseId`, the model asked for and its `usage`; a failed request
//! leaves an entry with `stopReason: "error"`, zero usage and no id, which
//! is no response. A fork copies whole histories, ids included, so a
//! response is counted once.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ledger::agents::lines::{Found, LineRules, NamedSession, contains, count, markers, text, time_ms};

/// What the reader keeps of a session log where it stopped: the session
/// its header named.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub(super) struct Session(NamedSession);

markers! {
    USAGE = b"\"usage\"";
    SESSION = b"\"session\"";
}

impl LineRules for Session {
    const PROVIDER: Provider = Provider::Pi;

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &USAGE) || contains(line, &SESSION)
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        match text(line, "/type") {
            Some("session") => {
                let Some(session) = text(line, "/id").filter(|id| !id.is_empty()) else { return false };
                self.0.name(session, text(line, "/cwd"), found);
                true
            }
            Some("message") => {
                let Some(session) = self.0.get() else { return true };
                let message = &line["message"];
                if text(message, "/role") != Some("assistant") {
                    return true;
                }
                // A failed request: no provider id, no response.
                let Some(id) = text(message, "/responseId").filter(|id| !id.is_empty()) else { return true };
                let Some(usage) = message.get("usage").filter(|usage| usage.is_object()) else { return false };
                let Some(at_ms) = time_ms(message.get("timestamp")).or_else(|| time_ms(line.get("timestamp"))) else {
                    return false;
                };
                found.response(id.to_owned(), session, at_ms, text(message, "/model"), counters(usage));
                true
            }
            _ => true,
        }
    }
}

/// pi's `usage`, in Anthropic's shape: input without either cache, cache
/// writes, cache reads and output, whose sum is its `totalTokens`. pi
/// records no reasoning count.
pub(super) fn counters(usage: &Value) -> Counters {
    let field = |name: &str| count(usage.get(name));
    Counters {
        input_tokens: field("input"),
        cache_creation_input_tokens: field("cacheWrite"),
        cache_read_input_tokens: field("cacheRead"),
        output_tokens: field("output"),
        total_tokens: field("totalTokens"),
        ..Counters::default()
    }
}
