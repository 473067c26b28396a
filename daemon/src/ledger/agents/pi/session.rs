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
//!
//! A fork's header is written when the fork is made, later than every
//! entry it copies (which keep their times): a response written before its
//! session's header is a copy, and stays the response of the session that
//! made it. `usage.cost.total` is pi's own figure of the response's cost
//! (from its model prices; 0 for a model it has no price for): carried as
//! the agent's cost.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::marker::PhantomData;

use crate::ledger::agents::lines::{
    Beside, Found, LineRules, NamedSession, before_start, contains, count, markers, spelled, text, time_ms,
    wrapped_agent,
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
/// its header named, and when the header says it began (unknown in a
/// state kept before it was read: then no response of it is taken as a
/// copy).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Session<A: PiLog> {
    #[serde(flatten)]
    session: NamedSession,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started_ms: Option<i64>,
    #[serde(skip)]
    agent: PhantomData<fn() -> A>,
}

impl<A: PiLog> Default for Session<A> {
    fn default() -> Self {
        Session { session: NamedSession::default(), started_ms: None, agent: PhantomData }
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
        "message/usage/output", "message/usage/totalTokens", "message/usage/cost/total",
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
                self.started_ms = time_ms(line.get("timestamp"));
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
                let beside = Beside {
                    own_figure: usage.pointer("/cost/total").and_then(Value::as_f64),
                    copied: before_start(at_ms, self.started_ms),
                };
                found.response_with(key, session, at_ms, model, counters, beside);
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

#[cfg(test)]
mod tests {
    use crate::ledger::agents::tests::responses;
    use bee_proto::ledger::Provider;

    /// pi 0.73.1's own fork (`pi --fork <file>`, priced by the test's
    /// `models.json`): its header names the parent and is written at the
    /// fork, after the three entries it copied with their times, ids and
    /// costs; its own response follows. The copies are marked, pi's own
    /// costs read as it wrote them.
    #[test]
    fn a_forks_copies_are_marked_and_pis_own_costs_read() {
        let (writes, unparseable) = responses(Provider::Pi, include_bytes!("../testdata/pi-0.73.1-fork.jsonl"));
        assert_eq!(unparseable, 0);
        let read: Vec<(&str, bool, Option<f64>)> =
            writes.iter().map(|w| (w.key.as_str(), w.copied, w.own_figure)).collect();
        assert_eq!(
            read,
            [
                ("msg_mock_002", true, Some(0.004_450_200_000_000_000_5)),
                ("msg_mock_003", true, Some(0.005_625_3)),
                ("msg_mock_004", true, Some(0.006_800_400_000_000_001)),
                ("msg_mock_005", false, Some(0.007_975_5)),
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("01a24ab8-2670-7040-8c5f-5438dd7b462d")));
        // pi's log of a tool turn with a model it has no price for: its
        // cost written as 0, taken as it wrote it; nothing copied.
        let (writes, _) = responses(Provider::Pi, include_bytes!("../testdata/pi-0.73.1-tool-and-continue.jsonl"));
        assert!(writes.iter().all(|w| !w.copied && w.own_figure == Some(0.0)), "{writes:?}");
        // A cost that is no cost is unknown; one past Bee's bound too.
        let log = concat!(
            "{\"type\":\"session\",\"id\":\"s1\",\"timestamp\":\"2026-12-05T03:22:45.669Z\",\"cwd\":\"/w\"}\n",
            "{\"type\":\"message\",\"timestamp\":\"2026-12-05T03:22:45.755Z\",\"message\":{\"role\":\"assistant\",\"responseId\":\"r1\",\"timestamp\":1796440965755,\"usage\":{\"input\":1,\"output\":2,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":3,\"cost\":{\"total\":\"free\"}}}}\n",
            "{\"type\":\"message\",\"timestamp\":\"2026-12-05T03:22:45.755Z\",\"message\":{\"role\":\"assistant\",\"responseId\":\"r2\",\"timestamp\":1796440965756,\"usage\":{\"input\":1,\"output\":2,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":3,\"cost\":{\"total\":1e300}}}}\n",
        );
        let (writes, _) = responses(Provider::Pi, log.as_bytes());
        assert_eq!(writes.iter().map(|w| w.own_figure).collect::<Vec<_>>(), [None, None]);
    }

    /// A pass that stopped after the fork's header keeps when the session
    /// began: the next pass still knows the copies for what they are.
    #[test]
    fn when_a_session_began_is_kept_between_passes() {
        use crate::ledger::agents::LogParser;
        use crate::ledger::stored::evidence::{Evidence, FileOffset};
        let log: &[u8] = include_bytes!("../testdata/pi-0.73.1-fork.jsonl");
        let header = log.iter().position(|&b| b == b'\n').unwrap() + 1;
        let path = std::path::Path::new("");
        let mut first = LogParser::new(Provider::Pi, path, FileOffset::default());
        assert!(first.line(&log[..header], 0, &mut Vec::new()));
        let mut next = LogParser::new(Provider::Pi, path, first.resume_point(header as u64));
        let mut out = Vec::new();
        let mut at = header;
        for line in log[header..].split_inclusive(|&b| b == b'\n') {
            assert!(next.line(line, at as u64, &mut out));
            at += line.len();
        }
        let copied: Vec<bool> = out
            .iter()
            .filter_map(|e| match e {
                Evidence::Response(w) => Some(w.copied),
                _ => None,
            })
            .collect();
        assert_eq!(copied, [true, true, true, false]);
    }
}
