//! Warp's state database (`warp.sqlite`): table `agent_conversations`, one
//! row an Agent Mode conversation (`conversation_id`, `last_modified_at`,
//! `conversation_data` JSON). The JSON's `conversation_usage_metadata`
//! keeps the conversation's running totals as Warp's server reports them:
//! `token_usage[]`, one entry a model (`model_id`, `warp_tokens` —
//! `total_tokens` in older rows — `byok_tokens`, `custom_endpoint_tokens`,
//! each a total of input and output together, and their split by agent
//! role), and `credits_spent`. No count of input, cache or output is kept.
//!
//! A conversation and model that used tokens is one entry, keyed by both,
//! dated when Bee first read it (the row's last change then), **every
//! token column unknown**: Bee's columns add up to each total, and a total
//! with no part known can be counted in none (the README says so). Its
//! total is the entry's own figure, shown apart as unsplit tokens; a total
//! that is no count is unknown (never 0), its model still an entry. A fork
//! starts from a copy of its source's totals (Warp copies
//! `conversation_usage_metadata` when it forks), so a forked conversation
//! (`forked_from_server_conversation_token`) is not read: its source's
//! calls would count again.

use bee_proto::ledger::{Provider, SkipReason};
use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{LastName, count, text};
use crate::ledger::agents::sparse::Keep;
use crate::ledger::agents::whole::{column_json, column_text, column_time_ms, column_within, open_read_only};
use crate::ledger::stored::evidence::{AgentState, Evidence};
use crate::ledger::stored::responses::{ResponseWrite, own_figure};

/// Every conversation's row: its id, its last change, its data by its
/// length first ([`column_within`]).
const QUERY: &str = "SELECT conversation_id, last_modified_at, octet_length(conversation_data),
        CASE WHEN octet_length(conversation_data) <= ?1 THEN conversation_data END
   FROM agent_conversations";

/// What is read of a conversation's data.
static DATA: LazyLock<Keep> = LazyLock::new(|| {
    Keep::paths(&[
        "forked_from_server_conversation_token",
        "conversation_usage_metadata/token_usage/model_id",
        "conversation_usage_metadata/token_usage/warp_tokens",
        "conversation_usage_metadata/token_usage/total_tokens",
        "conversation_usage_metadata/token_usage/byok_tokens",
        "conversation_usage_metadata/token_usage/custom_endpoint_tokens",
    ])
});

/// The token counts of a model's entry Warp keeps (its own, its user's
/// keys', a custom endpoint's).
const TOTALS: [&str; 4] = ["warp_tokens", "total_tokens", "byok_tokens", "custom_endpoint_tokens"];

/// Warp's reader: every conversation's models, whenever the database
/// changes.
pub(crate) struct Conversations;

impl WholeFileReader for Conversations {
    fn read(&self, path: &Path, _state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let mut read = || -> rusqlite::Result<u64> {
            let connection = open_read_only(path)?;
            let mut statement = connection.prepare(QUERY)?;
            let mut rows = statement.query([crate::ledger::agents::whole::MAX_DOCUMENT_BYTES as i64])?;
            let (mut sessions, mut models) = (LastName::default(), LastName::default());
            let mut refused = 0;
            while let Some(row) = rows.next()? {
                refused += u64::from(!read_row(path, row, &mut sessions, &mut models, out));
            }
            Ok(refused)
        };
        Ok((AgentState::default(), read().map_err(std::io::Error::other)?))
    }
}

/// Reads one conversation's row; `false` when it is refused (no id, data
/// that is no JSON, usage that is no list, no time).
fn read_row(
    path: &Path,
    row: &rusqlite::Row<'_>,
    sessions: &mut LastName,
    models: &mut LastName,
    out: &mut Vec<Evidence>,
) -> bool {
    let Some(conversation) = column_text(row, 0) else { return false };
    let value = column_within(row, 2);
    if let Err(bytes) = value {
        // Named, so not also refused.
        crate::ledger::agents::whole::pass_over_value(
            SkipReason::OversizedDocument,
            bytes,
            path,
            &format_args!("agent_conversations {conversation}"),
        );
        return true;
    }
    let Some(data) = column_json(value, &DATA, path, &format_args!("agent_conversations {conversation}")) else {
        return false;
    };
    if text(&data, "/forked_from_server_conversation_token").is_some_and(|token| !token.is_empty()) {
        return true;
    }
    let usage = match data.pointer("/conversation_usage_metadata/token_usage") {
        None | Some(Value::Null) => return true,
        Some(Value::Array(usage)) => usage,
        Some(_) => return false,
    };
    // The models that used tokens, each with Warp's total (unknown where
    // one of its counts is no count, or their sum passes any count).
    let mut totals: Vec<(&str, Option<u64>)> = Vec::new();
    for entry in usage {
        let Some(model) = text(entry, "/model_id") else { continue };
        let written: Vec<Option<u64>> =
            TOTALS.iter().filter_map(|name| entry.get(*name)).map(|total| count(Some(total))).collect();
        match written.iter().try_fold(0u64, |sum, total| sum.checked_add((*total)?)) {
            Some(0) => {}
            total => totals.push((model, total)),
        }
    }
    if totals.is_empty() {
        return true;
    }
    let Some(at_ms) = column_time_ms(row, 1) else { return false };
    out.push(Evidence::SessionLogged(Provider::Warp, conversation.to_owned()));
    let session = sessions.shared(conversation);
    for (model, total) in totals {
        let model = (model.len() <= bee_proto::ledger::bounds::MAX_TEXT_BYTES && !model.is_empty())
            .then(|| models.shared(model));
        out.push(Evidence::Response(ResponseWrite {
            provider: Provider::Warp,
            key: format!("{conversation}\u{1f}{}", model.as_deref().unwrap_or("")),
            session_id: Some(Arc::clone(&session)),
            at_ms,
            model,
            tokens: Counters::default(),
            context_tokens: None,
            context_window: None,
            is_final: true,
            own_figure: total.and_then(|total| own_figure(Provider::Warp, total as f64)),
            copied: false,
        }));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, noted, responses_of};
    use crate::ledger::agents::whole::MAX_DOCUMENT_BYTES;

    /// The table as Warp's migrations leave it.
    const SCHEMA: &str = "CREATE TABLE agent_conversations (id INTEGER PRIMARY KEY NOT NULL,
        conversation_id TEXT NOT NULL, active_task_id TEXT, conversation_data TEXT NOT NULL,
        last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, summary TEXT);
        CREATE UNIQUE INDEX ux_agent_conversations_conversation_id ON agent_conversations (conversation_id);";

    const UPSERT: &str = "INSERT INTO agent_conversations (conversation_id, conversation_data, last_modified_at)
        VALUES (?1, ?2, ?3) ON CONFLICT (conversation_id) DO UPDATE SET conversation_data = ?2, last_modified_at = ?3";

    fn read(path: &Path) -> (Vec<ResponseWrite>, u64) {
        let mut evidence = Vec::new();
        let (_, refused) = Conversations.read(path, &AgentState::default(), &mut evidence).unwrap();
        (responses_of(evidence), refused)
    }

    fn data(token_usage: Value) -> String {
        serde_json::json!({"server_conversation_token": "srv-1", "conversation_usage_metadata": {
            "was_summarized": false, "context_window_usage": 0.05, "credits_spent": 3.5,
            "token_usage": token_usage, "tool_usage_metadata": {}}})
        .to_string()
    }

    /// A conversation read as it grows, a second model joining it, its
    /// user's own key beside Warp's: one entry a conversation and model,
    /// every token column unknown (Warp keeps no part of its totals), its
    /// total the entry's own figure (Warp's, the user's key's and a custom
    /// endpoint's together), the credits nowhere.
    #[test]
    fn a_conversation_and_model_is_one_running_total() {
        let (_dir, path, db) = database("warp.sqlite", SCHEMA);
        let usage = |warp: u64, byok: u64| {
            serde_json::json!({"model_id": "claude-4-sonnet", "warp_tokens": warp, "byok_tokens": byok,
                "custom_endpoint_tokens": 0, "warp_token_usage_by_category": {"primary_agent": warp}})
        };
        db.execute(UPSERT, ("c-1", data(serde_json::json!([usage(12000, 0)])), "2026-10-08 03:00:00")).unwrap();
        let (first, _) = read(&path);
        db.execute(
            UPSERT,
            (
                "c-1",
                data(serde_json::json!([usage(20000, 500), {"model_id": "gpt-5.1", "total_tokens": 800}])),
                "2026-10-08 03:05:00",
            ),
        )
        .unwrap();
        let (later, refused) = read(&path);
        assert_eq!(refused, 0);
        let entries = |writes: &[ResponseWrite]| -> Vec<(String, bool, i64, Option<f64>)> {
            writes.iter().map(|w| (w.key.clone(), w.tokens == Counters::default(), w.at_ms, w.own_figure)).collect()
        };
        assert_eq!(entries(&first), [("c-1\u{1f}claude-4-sonnet".into(), true, 1_791_428_400_000, Some(12_000.0))]);
        assert_eq!(
            entries(&later),
            [
                ("c-1\u{1f}claude-4-sonnet".into(), true, 1_791_428_700_000, Some(20_500.0)),
                ("c-1\u{1f}gpt-5.1".into(), true, 1_791_428_700_000, Some(800.0)),
            ]
        );
        assert!(later.iter().all(|w| w.session_id.as_deref() == Some("c-1") && w.is_valid()));
        let (again, _) = read(&path);
        assert_eq!(entries(&again), entries(&later), "read again: the same entries");
    }

    /// A fork (its totals start as its source's) is not read; a
    /// conversation without usage is none; an empty table holds nothing.
    #[test]
    fn a_fork_and_a_conversation_without_usage_are_not_read() {
        let (_dir, path, db) = database("warp.sqlite", SCHEMA);
        assert_eq!(read(&path), (Vec::new(), 0), "an empty table");
        let fork = serde_json::json!({"forked_from_server_conversation_token": "srv-1",
            "conversation_usage_metadata": {"token_usage": [{"model_id": "m", "warp_tokens": 900}]}});
        db.execute(UPSERT, ("c-fork", fork.to_string(), "2026-10-08 03:00:00")).unwrap();
        db.execute(UPSERT, ("c-new", r#"{"server_conversation_token":null}"#, "2026-10-08 03:00:00")).unwrap();
        assert_eq!(read(&path), (Vec::new(), 0));
    }

    /// Broken and hostile rows: data that is no JSON or usage that is no
    /// list is refused; counts that are no counts leave the model's total
    /// unknown (an entry whose total is unknown, never 0), a sum past any
    /// count too, and one past Bee's bound for a total; data over the bound
    /// is named, never read; a database of another schema is an error.
    #[test]
    fn broken_and_hostile_rows() {
        let (_dir, path, db) = database("warp.sqlite", SCHEMA);
        db.execute(UPSERT, ("c-1", "{not json", "2026-10-08 03:00:00")).unwrap();
        db.execute(
            UPSERT,
            ("c-2", r#"{"conversation_usage_metadata":{"token_usage":{"m":1}}}"#, "2026-10-08 03:00:00"),
        )
        .unwrap();
        let hostile = serde_json::json!({"conversation_usage_metadata": {"token_usage": [
            {"model_id": "m", "warp_tokens": "many"}, {"model_id": "n", "warp_tokens": -4},
            {"model_id": "o", "warp_tokens": 18446744073709551615_u64, "byok_tokens": 1},
            {"model_id": "p", "warp_tokens": 18446744073709551615_u64}, {"warp_tokens": 5}, 7]}});
        db.execute(UPSERT, ("c-3", hostile.to_string(), "2026-10-08 03:00:00")).unwrap();
        db.execute(UPSERT, ("c-4", data(serde_json::json!([{"model_id": "m", "warp_tokens": 5}])), "never")).unwrap();
        db.execute(
            "INSERT INTO agent_conversations (conversation_id, conversation_data) VALUES ('c-5', zeroblob(?1))",
            [MAX_DOCUMENT_BYTES as i64 + 1],
        )
        .unwrap();
        let _ = noted();
        let (writes, refused) = read(&path);
        assert_eq!(refused, 3, "not JSON; usage no list; no time");
        let totals: Vec<(&str, Option<f64>)> = writes.iter().map(|w| (w.key.as_str(), w.own_figure)).collect();
        assert_eq!(
            totals,
            [("c-3\u{1f}m", None), ("c-3\u{1f}n", None), ("c-3\u{1f}o", None), ("c-3\u{1f}p", None)],
            "no count, a negative one, a sum past any count, a total past Bee's bound"
        );
        assert!(writes.iter().all(|w| w.is_valid() && w.tokens == Counters::default()));
        assert_eq!(noted(), [(0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument)]);

        let (_other, other, _db) = database("warp.sqlite", "CREATE TABLE unrelated (x INTEGER)");
        assert!(Conversations.read(&other, &AgentState::default(), &mut Vec::new()).is_err());
    }
}
