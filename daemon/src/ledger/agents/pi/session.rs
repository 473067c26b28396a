//! A pi session log (also OpenClaw's, which runs pi's agent): a
//! `type: "session"` header (the session's id and working directory; a
//! fork's names its parent), then entries. Each provider response is an
//! assistant `message` entry with the provider's `responseId`, the model
//! asked for and its `usage`; a failed request leaves an entry with
//! `stopReason: "error"`, zero usage and no id, which is no response. A
//! fork copies whole histories, ids included, so a response is counted
//! once. An entry with usage and no id (a version or provider that keeps
//! none) is keyed by what a copy keeps: its time and counters. An entry
//! whose provider is another agent's CLI (OpenClaw's `claude-cli`
//! backend) is that agent's response, counted from its own records.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::marker::PhantomData;

use crate::ledger::agents::lines::{
    Found, LineRules, NamedSession, contains, count, markers, spelled, text, time_ms, wrapped_agent,
};
use crate::ledger::agents::sparse::{Keep, keep};

/// An agent whose session logs are pi's.
pub(crate) trait PiLog: Send + 'static {
    const PROVIDER: Provider;
}

/// pi itself.
pub(crate) struct Pi;

impl PiLog for Pi {
    const PROVIDER: Provider = Provider::Pi;
}

/// What the reader keeps of a session log where it stopped: the session
/// its header named.
#[derive(Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Session<A: PiLog> {
    session: NamedSession,
    #[serde(skip)]
    agent: PhantomData<fn() -> A>,
}

impl<A: PiLog> Default for Session<A> {
    fn default() -> Self {
        Session { session: NamedSession::default(), agent: PhantomData }
    }
}

markers! {
    USAGE = b"\"usage\"";
    SESSION = b"\"session\"";
}

keep! {
    /// What [`Session::read`] reads of a line.
    LINE = [
        "type", "id", "cwd", "timestamp",
        "message/role", "message/provider", "message/responseId", "message/timestamp", "message/model",
        "message/modelId", "message/usage/input", "message/usage/cacheWrite", "message/usage/cacheRead",
        "message/usage/output", "message/usage/totalTokens",
    ];
}

impl<A: PiLog> LineRules for Session<A> {
    const PROVIDER: Provider = A::PROVIDER;

    fn keep() -> &'static Keep {
        &LINE
    }

    fn is_marked(line: &[u8]) -> bool {
        contains(line, &USAGE) || contains(line, &SESSION)
    }

    fn read(&mut self, line: &Value, found: &mut Found<'_>) -> bool {
        match text(line, "/type") {
            Some("session") => {
                let Some(session) = text(line, "/id").filter(|id| !id.is_empty()) else { return false };
                self.session.name(session, text(line, "/cwd"), found);
                true
            }
            Some("message") => {
                let Some(session) = self.session.get() else { return true };
                let message = &line["message"];
                if text(message, "/role") != Some("assistant") {
                    return true;
                }
                if text(message, "/provider").and_then(wrapped_agent).is_some() {
                    return true;
                }
                let Some(usage) = message.get("usage").filter(|usage| usage.is_object()) else {
                    // A failed request: no provider id, no usage, no response.
                    return text(message, "/responseId").is_none_or(str::is_empty);
                };
                let Some(at_ms) = time_ms(message.get("timestamp")).or_else(|| time_ms(line.get("timestamp"))) else {
                    return false;
                };
                let counters = counters(usage);
                let key = match text(message, "/responseId").filter(|id| !id.is_empty()) {
                    Some(id) => id.to_owned(),
                    // A failed request: no provider id, zero usage.
                    None if counters.counts_nothing() => return true,
                    None => format!("{at_ms}\u{1f}{}", spelled(&counters.values())),
                };
                let model = text(message, "/model").or_else(|| text(message, "/modelId"));
                found.response(key, session, at_ms, model, counters);
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
