//! An Auggie session (`sessions/<session id>.json`): one JSON document a
//! session, rewritten whole after each exchange: `sessionId`, `created`,
//! `modified`, `agentState {modelId, …}`, `chatHistory[]`, and the session's
//! sub-agent totals in credits or dollars (`subAgentCreditsUsed`,
//! `subAgentCostUsd`), with, where a feature flag records them,
//! `subAgents[]` (each sub-agent's own `chatHistory`) and
//! `summarizations[]` (each history summarization's request and usage).
//!
//! An exchange of `chatHistory` is one request to Augment's chat stream:
//! its `request_id` (a UUID the CLI makes for the request), `model_id`
//! where one was chosen, its `request_nodes` (an `ide_state_node` names the
//! directory it ran in) and `response_nodes`, where a node of `type` 10
//! holds the `token_usage` Augment's service reported for it
//! (`input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`,
//! `output_tokens`: Anthropic's shape) with `timestamp_ms`, the time the
//! CLI received it, and a node of `type` 9 the `billing_metadata`
//! (credits, `effective_model_name`).

use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::lines::{Found, count, text, time_ms};
use crate::ledger::agents::sparse::Keep;

/// What [`read`] reads of a session: its name, its model, and of each
/// exchange (the session's, and its sub-agents') its request id, model,
/// directory, usage and times; each summarization's request and usage.
pub(crate) static SESSION: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&[
        "sessionId",
        "agentState/modelId",
        "chatHistory/finishedAt",
        "chatHistory/source",
        "chatHistory/exchange/request_id",
        "chatHistory/exchange/model_id",
        "chatHistory/exchange/request_nodes/ide_state_node/current_terminal/current_working_directory",
        "chatHistory/exchange/response_nodes/type",
        "chatHistory/exchange/response_nodes/timestamp_ms",
        "chatHistory/exchange/response_nodes/token_usage",
        "chatHistory/exchange/response_nodes/billing_metadata/effective_model_name",
        "subAgents/model",
        "subAgents/chatHistory/finishedAt",
        "subAgents/chatHistory/source",
        "subAgents/chatHistory/exchange/request_id",
        "subAgents/chatHistory/exchange/model_id",
        "subAgents/chatHistory/exchange/response_nodes/type",
        "subAgents/chatHistory/exchange/response_nodes/timestamp_ms",
        "subAgents/chatHistory/exchange/response_nodes/token_usage",
        "subAgents/chatHistory/exchange/response_nodes/billing_metadata/effective_model_name",
        "summarizations/request_id",
        "summarizations/model",
        "summarizations/finishedAt",
        "summarizations/input_tokens",
        "summarizations/cache_creation_input_tokens",
        "summarizations/cache_read_input_tokens",
        "summarizations/output_tokens",
    ])
});

/// A response node's `type` holding the service's token usage.
const TOKEN_USAGE: u64 = 10;
/// A response node's `type` holding the service's billing.
const BILLING: u64 = 9;

/// Reads one session; the count is of exchanges and summarizations with
/// usage refused (no request id, no time, a usage or a history that is
/// not what Auggie writes).
pub(crate) fn read(path: &Path, session: &Value, found: &mut Found<'_>) -> u64 {
    let Some(history) = session.get("chatHistory") else { return 0 };
    let from_path = path.file_stem().and_then(|stem| stem.to_str());
    let Some(id) = text(session, "/sessionId").or(from_path).filter(|id| !id.is_empty()) else { return 0 };
    let Some(history) = history.as_array() else { return 1 };
    found.session(id, directory(history));
    let default_model = text(session, "/agentState/modelId");
    let mut refused = exchanges(history, id, default_model, found);
    for sub_agent in session.get("subAgents").and_then(Value::as_array).into_iter().flatten() {
        // A sub-agent runs inside the CLI's process and keeps no session
        // of its own: its exchanges are this session's.
        let model = text(sub_agent, "/model").or(default_model);
        match sub_agent.get("chatHistory").map(Value::as_array) {
            Some(Some(history)) => refused += exchanges(history, id, model, found),
            Some(None) => refused += 1,
            None => {}
        }
    }
    for summarization in session.get("summarizations").and_then(Value::as_array).into_iter().flatten() {
        refused += u64::from(!summarized(summarization, id, found));
    }
    refused
}

/// The directory the session ran in, as its first exchange that says names it.
fn directory(history: &[Value]) -> Option<&str> {
    history.iter().find_map(|turn| {
        let nodes = turn.pointer("/exchange/request_nodes")?.as_array()?;
        nodes.iter().find_map(|node| text(node, "/ide_state_node/current_terminal/current_working_directory"))
    })
}

/// Reads the exchanges of one history; the count is of those refused.
fn exchanges(history: &[Value], session: &str, default_model: Option<&str>, found: &mut Found<'_>) -> u64 {
    let mut refused = 0;
    for turn in history {
        let Some(exchange) = turn.get("exchange") else { continue };
        let nodes = match exchange.get("response_nodes") {
            None | Some(Value::Null) => continue,
            Some(Value::Array(nodes)) => nodes,
            Some(_) => {
                refused += 1;
                continue;
            }
        };
        let Some((tokens, received)) = usage(nodes) else {
            refused += 1;
            continue;
        };
        if tokens.counts_nothing() {
            continue;
        }
        let Some(request) = text(exchange, "/request_id").filter(|id| !id.is_empty()) else {
            refused += 1;
            continue;
        };
        // An exchange copied down from Augment's service (a cloud agent's)
        // is dated at its copy: only the time its usage came is its own.
        let finished = (text(turn, "/source") != Some("remote")).then(|| time_ms(turn.get("finishedAt"))).flatten();
        let Some(at_ms) = received.or(finished) else {
            refused += 1;
            continue;
        };
        let model = nodes
            .iter()
            .filter(|node| count(node.get("type")) == Some(BILLING))
            .find_map(|node| text(node, "/billing_metadata/effective_model_name"))
            .or_else(|| text(exchange, "/model_id"))
            .or(default_model);
        found.response(request.to_owned(), session, at_ms, model, tokens);
    }
    refused
}

/// The usage an exchange's response nodes hold, and when the CLI received
/// it; `None` when a usage is no object. Nodes of usage are added, as the
/// CLI's own session statistics add them (it wrote one an exchange in every
/// session seen); a counter one of them lacks is unknown in the sum.
fn usage(nodes: &[Value]) -> Option<(Counters, Option<i64>)> {
    let mut sum: Option<[Option<u64>; 4]> = None;
    let mut received = None;
    for node in nodes.iter().filter(|node| count(node.get("type")) == Some(TOKEN_USAGE)) {
        let usage = match node.get("token_usage") {
            None | Some(Value::Null) => continue,
            Some(usage @ Value::Object(_)) => usage,
            Some(_) => return None,
        };
        let parts = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"]
            .map(|name| count(usage.get(name)));
        sum = Some(match sum {
            None => parts,
            Some(sum) => {
                let mut added = sum;
                for (total, part) in added.iter_mut().zip(parts) {
                    *total = total.zip(part).and_then(|(total, part)| total.checked_add(part));
                }
                added
            }
        });
        received = time_ms(node.get("timestamp_ms")).or(received);
    }
    let [input, cache_writes, cache_reads, output] = sum.unwrap_or_default();
    let tokens = Counters {
        input_tokens: input,
        cache_creation_input_tokens: cache_writes,
        cache_read_input_tokens: cache_reads,
        output_tokens: output,
        ..Counters::default()
    };
    Some((tokens, received))
}

/// Reads one history summarization (a request of its own, recorded beside
/// the history where a feature flag says so); `false` when it has usage
/// but no request id or time.
fn summarized(summarization: &Value, session: &str, found: &mut Found<'_>) -> bool {
    let tokens = Counters {
        input_tokens: count(summarization.get("input_tokens")),
        cache_creation_input_tokens: count(summarization.get("cache_creation_input_tokens")),
        cache_read_input_tokens: count(summarization.get("cache_read_input_tokens")),
        output_tokens: count(summarization.get("output_tokens")),
        ..Counters::default()
    };
    if tokens.counts_nothing() {
        return true;
    }
    let request = text(summarization, "/request_id").filter(|id| !id.is_empty());
    let (Some(request), Some(at_ms)) = (request, time_ms(summarization.get("finishedAt"))) else { return false };
    found.response(request.to_owned(), session, at_ms, text(summarization, "/model"), tokens);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{responses_of, rows};
    use crate::ledger::stored::evidence::Evidence;
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::Provider;

    fn read_at(path: &str, session: &Value) -> (Vec<Evidence>, u64) {
        let mut evidence = Vec::new();
        let refused = super::super::SESSIONS.evidence(Path::new(path), session, &mut evidence);
        (evidence, refused)
    }

    fn responses(session: &Value) -> (Vec<ResponseWrite>, u64) {
        let (evidence, refused) = read_at("s/x.json", session);
        (responses_of(evidence), refused)
    }

    fn fixture(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    const CONTINUED: &str = include_str!("../testdata/augment-0.36.0-continued.json");

    /// Auggie 0.36.0's own session, as written after its first exchange and
    /// again after a second prompt continued it: each exchange once, by its
    /// request id, in Anthropic's shape; the session's project its
    /// directory.
    #[test]
    fn each_exchange_once_through_a_rewrite() {
        let whole = fixture(CONTINUED);
        let mut first = whole.clone();
        first["chatHistory"].as_array_mut().unwrap().truncate(1);
        let writes = crate::ledger::agents::tests::document_responses(&super::super::SESSIONS, &[first, whole.clone()]);
        let s = Some;
        assert_eq!(
            rows(Provider::Augment, &writes),
            [
                ("9c9783d0-1e3e-4280-b059-195ab868ac47".into(), s(1200), s(500), s(300), s(220), None, s(2220)),
                ("d4229210-7177-4ad4-9905-31381c96d039".into(), s(1200), s(500), s(300), s(220), None, s(2220)),
            ]
        );
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("7524ff7e-7217-4996-9fcb-c8e23cc5623a")));
        assert_eq!(writes[0].at_ms, 1_796_560_746_569, "the usage node's own time");
        assert!(writes.iter().all(|w| w.model.is_none()), "no model was chosen: unknown, not guessed");
        let (evidence, refused) = read_at("s/7524ff7e.json", &whole);
        assert_eq!(refused, 0);
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionProject(p) if p.project == "-home-dev-app")));
    }

    /// An exchange without usage (the CLI's "empty response") is a session
    /// with no response, nothing refused.
    #[test]
    fn an_exchange_without_usage_is_no_response() {
        let session = fixture(include_str!("../testdata/augment-0.36.0-empty-response.json"));
        let (evidence, refused) = read_at("s/23f35fd8.json", &session);
        assert_eq!(refused, 0);
        assert!(responses_of(evidence.clone()).is_empty());
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionLogged(_, s) if s.starts_with("23f35fd8"))));
    }

    /// The service's model is the response's, else the exchange's, else
    /// the session's; recorded sub-agents and summarizations are responses
    /// of the session, each once by its request id; an exchange copied down
    /// from the service is dated only by its usage.
    #[test]
    fn models_sub_agents_and_summarizations() {
        let usage = |input: u64| {
            serde_json::json!({"id": 2, "type": 10, "timestamp_ms": 1_796_560_800_000_i64,
            "token_usage": {"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 10, "output_tokens": 5}})
        };
        let billing = serde_json::json!({"id": 3, "type": 9, "billing_metadata": {"transaction_id": "t1",
            "credits_consumed": 40, "usage_unit": 1, "effective_model_name": "claude-sonnet-4-5"}});
        let turn = |id: &str, nodes: Value| {
            serde_json::json!({"exchange": {"request_id": id, "model_id": "sonnet4.5",
            "request_nodes": [], "response_nodes": nodes}, "completed": true, "finishedAt": "2026-12-06T12:40:00.000Z"})
        };
        let session = serde_json::json!({
            "sessionId": "s1", "created": "2026-12-06T12:39:00.000Z", "modified": "2026-12-06T12:41:00.000Z",
            "agentState": {"modelId": "gpt-5.1"},
            "chatHistory": [
                turn("r1", serde_json::json!([usage(100), billing])),
                turn("r2", serde_json::json!([usage(200)])),
                {"exchange": {"request_id": "r3", "response_nodes": [usage(300)]}, "finishedAt": "2026-12-06T12:40:00.000Z"},
                {"exchange": {"request_id": "r4", "response_nodes": [{"type": 10,
                    "token_usage": {"input_tokens": 1, "output_tokens": 1}}]},
                    "finishedAt": "2026-12-06T12:40:00.000Z", "source": "remote"},
            ],
            "subAgents": [{"name": "explore", "model": "haiku4.5", "chatHistory": [
                {"exchange": {"request_id": "sub-1", "response_nodes": [usage(50)]}},
            ]}],
            "summarizations": [{"request_id": "sum-1", "model": "claude-haiku-4-5", "finishedAt": "2026-12-06T12:40:30.000Z",
                "input_tokens": 900, "output_tokens": 80, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}],
            "subAgentCreditsUsed": 12.5, "subAgentCostUsd": 0
        });
        let (writes, refused) = responses(&session);
        assert_eq!(refused, 1, "the copied-down exchange with no time of its own");
        let model =
            |key: &str| writes.iter().find(|w| w.key == key).and_then(|w| w.model.as_deref().map(str::to_owned));
        assert_eq!(model("r1").as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(model("r2").as_deref(), Some("sonnet4.5"));
        assert_eq!(model("r3").as_deref(), Some("gpt-5.1"));
        assert_eq!(model("sub-1").as_deref(), Some("haiku4.5"));
        assert_eq!(model("sum-1").as_deref(), Some("claude-haiku-4-5"));
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("s1")));
        assert_eq!(writes.len(), 5);
        let (again, _) = responses(&session);
        let mut all = writes.clone();
        all.extend(again);
        assert_eq!(rows(Provider::Augment, &all).len(), 5, "read again, nothing twice");
    }

    /// Broken and hostile sessions: no history is none of Auggie's; a
    /// history or usage that is no list or object, an exchange with usage
    /// but no request id or time, is refused; counters that are no counts
    /// are unknown, never 0, and so is a sum over one; huge counts are kept
    /// for the ledger's bound to refuse.
    #[test]
    fn broken_and_hostile_sessions() {
        assert_eq!(responses(&serde_json::json!({"sessionId": "s"})), (Vec::new(), 0));
        assert_eq!(responses(&serde_json::json!([1, 2])), (Vec::new(), 0));
        assert_eq!(responses(&serde_json::json!({"sessionId": "s", "chatHistory": {"a": 1}})), (Vec::new(), 1));
        let node =
            |usage: Value| serde_json::json!({"type": 10, "timestamp_ms": 1_796_560_800_000_i64, "token_usage": usage});
        let session = serde_json::json!({"sessionId": "s", "chatHistory": [
            {"exchange": {"request_id": "a", "response_nodes": [node(serde_json::json!(7))]}},
            {"exchange": {"request_id": "b", "response_nodes": "many"}},
            {"exchange": {"response_nodes": [node(serde_json::json!({"input_tokens": 5}))]}},
            {"exchange": {"request_id": "d", "response_nodes": [{"type": 10, "timestamp_ms": "soon",
                "token_usage": {"input_tokens": 5}}]}, "finishedAt": "yesterday"},
            {"exchange": {"request_id": "e", "response_nodes": [node(serde_json::json!({"input_tokens": "ten",
                "output_tokens": -1, "cache_read_input_tokens": 1.5, "cache_creation_input_tokens": 18446744073709551615_u64}))]}},
            {"exchange": {"request_id": "f", "response_nodes": [
                node(serde_json::json!({"input_tokens": 4, "output_tokens": 2, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0})),
                node(serde_json::json!({"input_tokens": 6, "output_tokens": 3, "cache_read_input_tokens": 0})),
            ]}},
            {"exchange": {"request_id": "g", "response_nodes": [node(serde_json::json!({"input_tokens": 0, "output_tokens": 0}))]}},
            "not an entry",
            {"exchange": {"request_id": "h", "response_nodes": null}},
        ], "subAgents": [{"chatHistory": 5}], "summarizations": [{"input_tokens": 9}, {"request_id": "z"}]});
        let (writes, refused) = responses(&session);
        assert_eq!(
            refused, 6,
            "a usage no object; nodes no list; no id; no time; a sub-agent history no list; a summary with no id"
        );
        assert_eq!(writes.len(), 2);
        let e = &writes[0].tokens;
        assert_eq!((e.input_tokens, e.output_tokens, e.cache_read_input_tokens), (None, None, None));
        assert_eq!(e.cache_creation_input_tokens, Some(u64::MAX));
        assert!(!writes[0].is_valid(), "past Bee's bound: never stored");
        let f = &writes[1].tokens;
        assert_eq!((f.input_tokens, f.output_tokens), (Some(10), Some(5)), "two usage nodes added");
        assert_eq!(f.cache_creation_input_tokens, None, "a part one node lacks is unknown in the sum");
        let (evidence, _) = read_at("s/from-its-name.json", &serde_json::json!({"chatHistory": []}));
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionLogged(_, s) if s == "from-its-name")));
    }
}
