//! A Mux workspace's usage ledger (`sessions/<workspace>/session-usage.json`),
//! a JSON document Mux rewrites whole after each call: `byModel` keeps the
//! workspace's running total per model, each `{input, cached, cacheCreate,
//! output, reasoning}` of `{tokens, cost_usd}` — input without the cached
//! part, output without the reasoning; `lastRequest` the latest call
//! (`model`, `usage`, `timestamp` in unix ms); `rolledUpFrom` the sub-agent
//! workspaces whose totals were added into `byModel` when they were
//! deleted, each with those totals (`inputTokens`, `cachedTokens`,
//! `cacheCreateTokens`, `outputTokens`, `reasoningTokens`, its `model`,
//! `rolledUpAtMs`), or `true` in older files.
//!
//! Mux keeps no call one by one: a workspace is one entry, keyed by its
//! id, its counters its own total (`byModel` less what was rolled into it).
//! A sub-agent rolled in is an entry under its own id — the key its own
//! ledger was read under while it lived — so a sub-agent counts once,
//! whether Bee read it before it was deleted or not.

use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::lines::{Found, count, time_ms};
use crate::ledger::agents::sparse::Keep;
use crate::ledger::agents::whole::modified_ms;

/// What [`read`] reads of a ledger (`byModel` and `rolledUpFrom` whole:
/// a few entries each, within the parse's bound).
pub(crate) static LEDGER: LazyLock<Keep> =
    LazyLock::new(|| Keep::paths(&["version", "byModel", "lastRequest/timestamp", "rolledUpFrom"]));

/// The five counts of a usage, in the order input, cached, cache
/// writes, output, reasoning: each unknown where it is no count.
type Buckets = [Option<u64>; 5];

/// A `byModel` usage's counts (`{tokens}` of each bucket).
fn buckets(usage: &Value) -> Buckets {
    ["input", "cached", "cacheCreate", "output", "reasoning"]
        .map(|name| count(usage.pointer(&format!("/{name}/tokens"))))
}

/// A rolled-up sub-agent's counts.
fn rolled_buckets(entry: &Value) -> Buckets {
    ["inputTokens", "cachedTokens", "cacheCreateTokens", "outputTokens", "reasoningTokens"]
        .map(|name| count(entry.get(name)))
}

/// Mux's buckets in Bee's counters: output with its reasoning inside.
fn counters([input, cached, cache_create, output, reasoning]: Buckets) -> Counters {
    Counters {
        input_tokens: input,
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: cache_create,
        // Reasoning is apart from output in Mux's buckets: the whole output
        // is unknown when either is.
        output_tokens: output.zip(reasoning).and_then(|(output, reasoning)| output.checked_add(reasoning)),
        reasoning_output_tokens: reasoning,
        ..Counters::default()
    }
}

/// Reads one workspace's ledger; the count is of entries refused (a
/// usage that is no object, a total less than what was rolled into it, a
/// roll-up of an older Mux whose amounts are not kept, no time).
pub(crate) fn read(path: &Path, ledger: &Value, found: &mut Found<'_>) -> u64 {
    let Some(by_model) = ledger.get("byModel").and_then(Value::as_object) else { return 0 };
    let Some(workspace) = path.parent().and_then(Path::file_name).and_then(|name| name.to_str()) else { return 0 };
    if workspace.is_empty() {
        return 0;
    }
    let mut refused = 0;
    let mut own: Option<Buckets> = Some([Some(0); 5]);
    for usage in by_model.values() {
        if !usage.is_object() {
            own = None;
            break;
        }
        if let Some(own) = own.as_mut() {
            for (total, part) in own.iter_mut().zip(buckets(usage)) {
                *total = total.zip(part).and_then(|(total, part)| total.checked_add(part));
            }
        }
    }
    let rolled = ledger.get("rolledUpFrom").and_then(Value::as_object);
    for (child, entry) in rolled.into_iter().flatten() {
        let Some(entry) = entry.as_object().map(|_| entry) else {
            // An older Mux's `true`: what it added is not kept.
            own = None;
            continue;
        };
        let parts = rolled_buckets(entry);
        if let Some(own) = own.as_mut() {
            for (total, part) in own.iter_mut().zip(parts) {
                *total = total.zip(part).and_then(|(total, part)| total.checked_sub(part));
            }
        }
        let child_counters = counters(parts);
        if child.is_empty() || child_counters.counts_nothing() {
            continue;
        }
        let Some(at_ms) = time_ms(entry.get("rolledUpAtMs")) else {
            refused += 1;
            continue;
        };
        let model = entry.get("model").and_then(Value::as_str);
        found.session(child, None);
        found.response(child.to_owned(), child, at_ms, model, child_counters);
    }
    let Some(own) = own else { return refused + 1 };
    let own = counters(own);
    if own.counts_nothing() {
        return refused;
    }
    let Some(at_ms) = time_ms(ledger.pointer("/lastRequest/timestamp")).or_else(|| modified_ms(path)) else {
        return refused + 1;
    };
    // Its model where it used one; a workspace of several is unpriced.
    let model = (by_model.len() == 1).then(|| by_model.keys().next()).flatten().map(String::as_str);
    found.session(workspace, None);
    found.response(workspace.to_owned(), workspace, at_ms, model, own);
    refused
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{responses_of, rows};
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::Provider;

    fn usage(input: u64, cached: u64, cache_create: u64, output: u64, reasoning: u64) -> Value {
        let part = |tokens: u64| serde_json::json!({"tokens": tokens, "cost_usd": 0.001});
        serde_json::json!({"input": part(input), "cached": part(cached), "cacheCreate": part(cache_create),
            "output": part(output), "reasoning": part(reasoning), "model": "anthropic:claude-sonnet-4-5"})
    }

    fn read_at(workspace: &str, ledger: &Value) -> (Vec<ResponseWrite>, u64) {
        let mut evidence = Vec::new();
        let path = format!("/h/.mux/sessions/{workspace}/session-usage.json");
        let refused = super::super::LEDGERS.evidence(Path::new(&path), ledger, &mut evidence);
        (responses_of(evidence), refused)
    }

    /// A workspace's ledger as it grows, a sub-agent's own ledger read
    /// while it lived, and the parent's after the sub-agent was rolled in:
    /// the workspace one entry, the sub-agent one entry, nothing twice;
    /// reasoning inside output, never added again.
    #[test]
    fn a_workspace_and_its_rolled_in_sub_agent_once_each() {
        let model = "anthropic:claude-sonnet-4-5";
        let early = serde_json::json!({"version": 1, "byModel": {model: usage(300, 4000, 1200, 90, 10)},
            "lastRequest": {"model": model, "usage": usage(300, 4000, 1200, 90, 10), "timestamp": 1_796_400_000_000_i64}});
        let (mut all, refused) = read_at("ws-parent", &early);
        assert_eq!(refused, 0);
        let child = serde_json::json!({"version": 1, "byModel": {"openai:gpt-5.1": usage(50, 0, 0, 20, 5)},
            "lastRequest": {"timestamp": 1_796_400_030_000_i64}});
        all.extend(read_at("ws-child", &child).0);
        let later = serde_json::json!({"version": 1,
            "byModel": {model: usage(700, 9000, 1500, 150, 30), "openai:gpt-5.1": usage(50, 0, 0, 20, 5)},
            "lastRequest": {"timestamp": 1_796_400_090_000_i64},
            "rolledUpFrom": {"ws-child": {"totalTokens": 75, "inputTokens": 50, "outputTokens": 20,
                "reasoningTokens": 5, "cachedTokens": 0, "cacheCreateTokens": 0, "contextTokens": 50,
                "agentType": "explore", "model": "openai:gpt-5.1", "rolledUpAtMs": 1_796_400_060_000_i64}},
            "tokenStatsCache": {"consumers": [], "totalTokens": 1}});
        all.extend(read_at("ws-parent", &later).0);
        let s = Some;
        assert_eq!(
            rows(Provider::Mux, &all),
            [
                ("ws-child".into(), s(50), s(0), s(0), s(25), s(5), s(75)),
                ("ws-parent".into(), s(300), s(1200), s(4000), s(100), s(10), s(5600)),
                ("ws-parent".into(), s(700), s(1500), s(9000), s(180), s(30), s(11380)),
            ]
        );
        let parent = all.iter().find(|w| w.key == "ws-parent").unwrap();
        assert_eq!((parent.at_ms, parent.model.as_deref()), (1_796_400_000_000, Some(model)));
        assert!(all.iter().rfind(|w| w.key == "ws-parent").unwrap().model.is_none(), "two models: unpriced");
    }

    /// Broken and hostile ledgers: no `byModel` is none of Mux's; a usage
    /// that is no object, a roll-up of an older Mux, a total less than its
    /// roll-up are refused; counts that are no counts are unknown, never
    /// 0; huge counts are kept for the ledger's bound to refuse.
    #[test]
    fn broken_and_hostile_ledgers() {
        assert_eq!(read_at("w", &serde_json::json!({"version": 1})), (Vec::new(), 0));
        assert_eq!(read_at("w", &serde_json::json!({"byModel": {"m": 7}})), (Vec::new(), 1));
        let legacy = serde_json::json!({"byModel": {"m": usage(1, 0, 0, 1, 0)}, "rolledUpFrom": {"old-child": true},
            "lastRequest": {"timestamp": 1_796_400_000_000_i64}});
        assert_eq!(read_at("w", &legacy), (Vec::new(), 1));
        let under = serde_json::json!({"byModel": {"m": usage(1, 0, 0, 1, 0)},
            "rolledUpFrom": {"c": {"inputTokens": 5, "outputTokens": 0, "reasoningTokens": 0, "cachedTokens": 0,
                "cacheCreateTokens": 0, "rolledUpAtMs": 1_796_400_000_000_i64}},
            "lastRequest": {"timestamp": 1_796_400_000_000_i64}});
        let (writes, _) = read_at("w", &under);
        let own = writes.iter().find(|w| w.key == "w").unwrap();
        assert_eq!((own.tokens.input_tokens, own.tokens.output_tokens), (None, Some(1)), "input less than rolled in");
        let hostile = serde_json::json!({"byModel": {"m": {"input": {"tokens": "many"}, "cached": {"tokens": -1},
            "cacheCreate": {"tokens": 1.5}, "output": {"tokens": 18446744073709551615_u64}, "reasoning": {"tokens": 0}}},
            "lastRequest": {"timestamp": 1_796_400_000_000_i64}});
        let (writes, refused) = read_at("w", &hostile);
        assert_eq!((writes.len(), refused), (1, 0));
        let t = &writes[0].tokens;
        assert_eq!((t.input_tokens, t.cache_read_input_tokens, t.cache_creation_input_tokens), (None, None, None));
        assert_eq!((t.output_tokens, t.reasoning_output_tokens), (Some(u64::MAX), Some(0)));
        assert!(!writes[0].is_valid(), "past Bee's bound: never stored");
        let no_reasoning = serde_json::json!({"byModel": {"m": {"input": {"tokens": 4}, "output": {"tokens": 2},
            "reasoning": 3}}, "lastRequest": {"timestamp": 1_796_400_000_000_i64}});
        let (writes, _) = read_at("w", &no_reasoning);
        assert_eq!(
            (writes[0].tokens.input_tokens, writes[0].tokens.output_tokens),
            (Some(4), None),
            "output without its reasoning count is not the whole output"
        );
        let empty = serde_json::json!({"version": 1, "byModel": {}});
        assert_eq!(read_at("w", &empty), (Vec::new(), 0), "a workspace with no call yet");
    }
}
