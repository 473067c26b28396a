//! Goose's `sessions` table: one row a session, with the model it was
//! configured with (`model_config_json.model_name`), when it was created,
//! the last call's tokens (`input_tokens`, `output_tokens`,
//! `total_tokens`) and the session's running totals (`accumulated_*`).
//! A session the `usage_ledger` table does not cover (a database from
//! before it, or a session with no call since) has no record of its calls
//! one by one, so it is one entry in the ledger, keyed by the session, its
//! counters the running totals (the last call's, for a session from
//! before Goose kept them), dated when the session was created. These
//! totals split off no cache: their input is the provider's prompt count,
//! whatever part of it was cached. A session whose provider is another
//! agent's CLI (`claude-code`, `codex`, `gemini-cli`) is that agent's
//! usage, counted from its own records.
//!
//! Of `model_config_json` only `model_name` is read, and only within the
//! bound of a database value: a longer one is passed over and named by its
//! length alone, and the session is read without its model.

use bee_proto::usage::Counters;
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::lines::{Found, text, wrapped_agent};
use crate::ledger::agents::sparse::keep;
use crate::ledger::agents::whole::{column_count, column_json, column_text, column_time_ms, column_within};

/// The columns read of every session (a database without
/// `usage_ledger`), in order; `model_config_json` by its length first
/// ([`column_within`]).
pub(crate) const QUERY: &str = "SELECT id, created_at, input_tokens, output_tokens, total_tokens,
        accumulated_input_tokens, accumulated_output_tokens, accumulated_total_tokens, provider_name,
        octet_length(model_config_json), CASE WHEN octet_length(model_config_json) <= ?1 THEN model_config_json END
   FROM sessions";

/// [`QUERY`] of the sessions `usage_ledger` holds no row of: the others'
/// spend is read from their rows ([`super::ledger`]), their running totals
/// being those rows' sum.
pub(crate) const UNCOVERED_QUERY: &str = "SELECT id, created_at, input_tokens, output_tokens, total_tokens,
        accumulated_input_tokens, accumulated_output_tokens, accumulated_total_tokens, provider_name,
        octet_length(model_config_json), CASE WHEN octet_length(model_config_json) <= ?1 THEN model_config_json END
   FROM sessions s
  WHERE NOT EXISTS (SELECT 1 FROM usage_ledger l WHERE l.session_id = s.id)";

keep! {
    /// What is read of a session's `model_config_json`.
    CONFIG = ["model_name"];
}

/// Reads one session row.
pub(crate) fn read(path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> bool {
    let Some(session) = column_text(row, 0) else { return false };
    if column_text(row, 8).and_then(wrapped_agent).is_some() {
        return true;
    }
    let either = |accumulated: usize, last: usize| column_count(row, accumulated).or_else(|| column_count(row, last));
    let counters = Counters {
        input_tokens: either(5, 2),
        output_tokens: either(6, 3),
        total_tokens: either(7, 4),
        ..Counters::default()
    };
    if counters.counts_nothing() {
        return true;
    }
    let Some(at_ms) = column_time_ms(row, 1) else { return false };
    let model = configured_model(row, 9, path, session);
    found.session(session, None);
    found.response(format!("session\u{1f}{session}"), session, at_ms, model.as_deref(), counters);
    true
}

/// The model a session's `model_config_json` names, that value selected
/// from column `at` by its length first ([`column_within`]). A config
/// passed over (named by its length) leaves the model unknown: the
/// session's counters are columns of their own, and still read.
pub(crate) fn configured_model(row: &rusqlite::Row<'_>, at: usize, path: &Path, session: &str) -> Option<String> {
    let config: Option<Value> = column_json(column_within(row, at), &CONFIG, path, &format_args!("session {session}"));
    config.as_ref().and_then(|config| text(config, "/model_name")).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use crate::ledger::agents::tests::{database, noted, read_whole, rows, tiny_items};
    use crate::ledger::agents::whole::MAX_DOCUMENT_BYTES;
    use bee_proto::ledger::{Provider, SkipReason};

    /// Goose's table as its source creates it (the columns read).
    const SCHEMA: &str = "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, working_dir TEXT,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, provider_name TEXT, model_config_json TEXT,
        total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
        accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER)";

    /// Sessions read as they grow and when resumed: one entry a session,
    /// its running totals, dated at its creation; a session from before the
    /// running totals is its last call's; one with no time is refused; one
    /// run through Claude Code's CLI is Claude Code's, not read here.
    #[test]
    fn a_session_is_one_running_total() {
        let (_dir, path, db) = database("sessions.db", SCHEMA);
        let model = r#"{"model_name":"gpt-5.1","context_limit":400000}"#;
        let insert = "INSERT OR REPLACE INTO sessions (id, created_at, model_config_json, total_tokens, input_tokens,
            output_tokens, accumulated_total_tokens, accumulated_input_tokens, accumulated_output_tokens)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
        db.execute(insert, ("20261201_1", "2026-12-01 09:00:00", model, 3100, 3000, 100, 6100, 5900, 200)).unwrap();
        let (first, _) = read_whole(Provider::Goose, &path, &Default::default());
        db.execute(insert, ("20261201_1", "2026-12-01 09:00:00", model, 3300, 3200, 100, 9400, 9100, 300)).unwrap();
        db.execute(
            insert,
            ("20261130_7", 1_796_032_800_i64, model, 800, 700, 100, None::<i64>, None::<i64>, None::<i64>),
        )
        .unwrap();
        db.execute(insert, ("20261201_2", None::<String>, model, 10, 5, 5, 10, 5, 5)).unwrap();
        // A session run through the Claude Code CLI: Claude Code's own usage.
        db.execute(insert, ("20261201_3", "2026-12-01 10:00:00", model, 10, 5, 5, 10, 5, 5)).unwrap();
        db.execute("UPDATE sessions SET provider_name = 'claude-code' WHERE id = '20261201_3'", []).unwrap();
        let (mut all, _) = read_whole(Provider::Goose, &path, &Default::default());
        all.extend(first);
        let s = Some;
        assert_eq!(
            rows(Provider::Goose, &all),
            [
                ("session\u{1f}20261130_7".into(), s(700), None, None, s(100), None, s(800)),
                ("session\u{1f}20261201_1".into(), s(5900), None, None, s(200), None, s(6100)),
                ("session\u{1f}20261201_1".into(), s(9100), None, None, s(300), None, s(9400)),
            ]
        );
        let created = all.iter().find(|w| w.key.ends_with("20261201_1")).map(|w| w.at_ms);
        assert_eq!(created, bee_proto::time::parse_rfc3339_ms("2026-12-01T09:00:00Z"));
        assert_eq!(all[0].model.as_deref(), Some("gpt-5.1"));
    }

    /// A `model_config_json` over the bound is named by its length (SQLite
    /// never reads it), one whose `model_name` is millions of tiny items is
    /// named too, and either session is still read, its model unknown;
    /// tiny items where nothing is read are passed over.
    #[test]
    fn a_config_passed_over_leaves_the_model_unknown() {
        let (_dir, path, db) = database("sessions.db", SCHEMA);
        let junk = tiny_items(1_500_000);
        let configs = [
            format!(r#"{{"model_name":"gpt-5.1","extra":{junk}}}"#),
            format!(r#"{{"model_name":{junk}}}"#),
            format!(r#"{{"model_name":"gpt-5.1","x":"{}"}}"#, "x".repeat(MAX_DOCUMENT_BYTES as usize)),
        ];
        for (at, config) in configs.iter().enumerate() {
            db.execute(
                "INSERT INTO sessions (id, created_at, model_config_json, accumulated_total_tokens,
                    accumulated_input_tokens, accumulated_output_tokens)
                 VALUES (?1, '2026-12-01 09:00:00', ?2, 15, 10, 5)",
                (format!("s{at}"), config),
            )
            .unwrap();
        }
        let _ = noted();
        let (writes, _) = read_whole(Provider::Goose, &path, &Default::default());
        let models: Vec<_> = writes.iter().map(|w| (w.key.as_str(), w.model.as_deref())).collect();
        assert_eq!(
            models,
            [("session\u{1f}s0", Some("gpt-5.1")), ("session\u{1f}s1", None), ("session\u{1f}s2", None)]
        );
        assert_eq!(
            noted(),
            [
                (0, configs[1].len() as u64, SkipReason::TooComplex),
                (0, configs[2].len() as u64, SkipReason::OversizedDocument)
            ]
        );
    }
}
