//! Hermes's state database keeps running token totals, never one call's:
//! `session_model_usage` (since 0.19) one row per session, model, billing
//! route and task — the main loop (`task` empty) and its side calls (a
//! title, a compression) apart — and `sessions` one row per session, the
//! main loop's alone. Each row's counters: `input_tokens` (without either
//! cache), `cache_write_tokens`, `cache_read_tokens`, `output_tokens` (the
//! provider's completion tokens, reasoning included) and
//! `reasoning_tokens` (the part of them that was reasoning). A row is one
//! entry in the ledger, keyed by what the row is keyed by, dated when it
//! was first seen (a session: when it started). Where the first table is,
//! the second is not read: it holds the same main-loop calls again.

use bee_proto::usage::Counters;
use std::path::Path;

use crate::ledger::agents::lines::Found;
use crate::ledger::agents::whole::{column_count, column_text, column_time_ms};

/// The table of totals per session, model, route and task.
pub(crate) const BY_MODEL_TABLE: &str = "session_model_usage";

/// The columns read of [`BY_MODEL_TABLE`], in order, with the model its
/// session names.
pub(crate) const BY_MODEL_QUERY: &str = "SELECT u.session_id, u.model, u.billing_provider, u.billing_base_url,
        u.billing_mode, u.task, u.first_seen, u.input_tokens, u.output_tokens, u.cache_read_tokens,
        u.cache_write_tokens, u.reasoning_tokens, s.model
   FROM session_model_usage u LEFT JOIN sessions s ON s.id = u.session_id";

/// The columns read of `sessions` (a database without [`BY_MODEL_TABLE`]), in order.
pub(crate) const SESSIONS_QUERY: &str = "SELECT id, model, started_at, input_tokens, output_tokens, cache_read_tokens,
        cache_write_tokens, reasoning_tokens
   FROM sessions";

/// A row's counters, from the column of `input_tokens` on in the order
/// input, output, cache reads, cache writes, reasoning. Hermes adds the
/// provider's completion tokens up as served: the reasoning is already
/// inside `output_tokens` (seen with the real CLI against a mock), so it
/// is not added again.
fn counters(row: &rusqlite::Row<'_>, from: usize) -> Counters {
    Counters {
        input_tokens: column_count(row, from),
        output_tokens: column_count(row, from + 1),
        cache_read_input_tokens: column_count(row, from + 2),
        cache_creation_input_tokens: column_count(row, from + 3),
        reasoning_output_tokens: column_count(row, from + 4),
        ..Counters::default()
    }
}

/// Reads one row of [`BY_MODEL_TABLE`]. The main loop's row of the
/// session's own model keeps the key a session row had: Hermes seeds this
/// table from `sessions` when it upgrades a database, and the seeded row
/// is that session's total read before, counted once. Every other row (a
/// model switched to, a side call's task) is keyed by what the table keys
/// it by.
pub(crate) fn read_by_model(_path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> bool {
    let Some(session) = column_text(row, 0) else { return false };
    let counters = counters(row, 7);
    if counters.counts_nothing() {
        return true;
    }
    let Some(at_ms) = column_time_ms(row, 6) else { return false };
    let text = |at| column_text(row, at).unwrap_or("");
    let sessions_own = text(5).is_empty() && column_text(row, 12).unwrap_or("unknown") == text(1);
    let key = if sessions_own {
        format!("session\u{1f}{session}")
    } else {
        ["model", session, text(1), text(2), text(3), text(4), text(5)].join("\u{1f}")
    };
    found.session(session, None);
    found.response(key, session, at_ms, column_text(row, 1), counters);
    true
}

/// Reads one session row (a database without [`BY_MODEL_TABLE`]).
pub(crate) fn read_session(_path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> bool {
    let Some(session) = column_text(row, 0) else { return false };
    let counters = counters(row, 3);
    if counters.counts_nothing() {
        return true;
    }
    let Some(at_ms) = column_time_ms(row, 2) else { return false };
    found.session(session, None);
    found.response(format!("session\u{1f}{session}"), session, at_ms, column_text(row, 1), counters);
    true
}

#[cfg(test)]
mod tests {
    use crate::ledger::agents::tests::{database, read_whole, rows};
    use bee_proto::ledger::Provider;

    /// Hermes's table as its source creates it (the columns read).
    const SCHEMA: &str = "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
        started_at REAL NOT NULL, message_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
        output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
        reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT, estimated_cost_usd REAL, actual_cost_usd REAL)";

    /// A session read as it grows, a gateway session, one not started
    /// yet (no usage) and one whose counter is no count: one entry a
    /// session, reasoning the part of output it already is (never added
    /// again), the broken counter unknown.
    #[test]
    fn a_session_is_one_running_total() {
        let (_dir, path, db) = database("state.db", SCHEMA);
        let insert = "INSERT OR REPLACE INTO sessions (id, source, model, started_at, input_tokens, output_tokens,
            cache_read_tokens, cache_write_tokens, reasoning_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
        let started = 1_796_115_600.25_f64;
        db.execute(insert, ("h1", "cli", "anthropic/claude-sonnet-4.5", started, 400, 90, 3000, 1200, 30)).unwrap();
        let (first, _) = read_whole(Provider::Hermes, &path, &Default::default());
        db.execute(insert, ("h1", "cli", "anthropic/claude-sonnet-4.5", started, 700, 150, 9000, 1500, 50)).unwrap();
        db.execute(insert, ("h2", "telegram", "gpt-5.1", started + 60.0, 50, 10, 0, 0, 0)).unwrap();
        db.execute(insert, ("h3", "cli", "gpt-5.1", started, 0, 0, 0, 0, 0)).unwrap();
        db.execute(insert, ("h4", "cli", "gpt-5.1", started, "many", 5, 0, 0, 0)).unwrap();
        let (mut all, _) = read_whole(Provider::Hermes, &path, &Default::default());
        all.extend(first);
        let s = Some;
        assert_eq!(
            rows(Provider::Hermes, &all),
            [
                ("session\u{1f}h1".into(), s(400), s(1200), s(3000), s(90), s(30), s(4690)),
                ("session\u{1f}h1".into(), s(700), s(1500), s(9000), s(150), s(50), s(11350)),
                ("session\u{1f}h2".into(), s(50), s(0), s(0), s(10), s(0), s(60)),
                ("session\u{1f}h4".into(), None, s(0), s(0), s(5), s(0), None),
            ]
        );
        assert_eq!(all.iter().find(|w| w.key.ends_with("h1")).map(|w| w.at_ms), Some(1_796_115_600_250));
    }

    /// The totals per session, model and task (Hermes 0.19), as the real
    /// 0.19.0 wrote them against a mock, with the database's upgrade
    /// seeding: the session's own model's main loop keeps the session's
    /// key (a seeded row is the total read before from `sessions`, once);
    /// a side call's task and a model switched to are entries of their
    /// own; `sessions` is not read beside the table.
    #[test]
    fn totals_per_model_and_task_count_side_calls_and_a_seeded_session_once() {
        let (_dir, path, db) = database("state.db", SCHEMA);
        db.execute_batch(
            "CREATE TABLE session_model_usage (session_id TEXT NOT NULL, model TEXT NOT NULL,
                billing_provider TEXT NOT NULL DEFAULT '', billing_base_url TEXT NOT NULL DEFAULT '',
                billing_mode TEXT NOT NULL DEFAULT '', task TEXT NOT NULL DEFAULT '',
                api_call_count INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0,
                output_tokens INTEGER NOT NULL DEFAULT 0, cache_read_tokens INTEGER NOT NULL DEFAULT 0,
                cache_write_tokens INTEGER NOT NULL DEFAULT 0, reasoning_tokens INTEGER NOT NULL DEFAULT 0,
                estimated_cost_usd REAL NOT NULL DEFAULT 0, actual_cost_usd REAL NOT NULL DEFAULT 0,
                cost_status TEXT, cost_source TEXT, first_seen REAL, last_seen REAL,
                PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task));
             INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens, cache_read_tokens,
                cache_write_tokens, reasoning_tokens) VALUES
                ('af43a4', 'cli', 'mock-model', 1796560639.36, 6400, 3840, 5120, 1280, 1280),
                ('b2', 'cli', 'gpt-5.1', 1796560700.0, 100, 20, 0, 0, 5);
             INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, task,
                api_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
                first_seen, last_seen) VALUES
                ('af43a4', 'mock-model', 'custom', 'http://127.0.0.1:38799/v1', '', 1, 6400, 3840, 5120, 1280, 1280,
                    1796560639.3632128, 1796560639.3632128),
                ('af43a4', 'mock-model', 'auto', 'http://127.0.0.1:38799/v1/', 'title_generation', 1,
                    12800, 7680, 10240, 2560, 2560, 1796560639.7383296, 1796560639.7383296),
                ('b2', 'claude-sonnet-4-5', 'anthropic', '', '', 2, 300, 40, 1000, 0, 0, 1796560710.0, 1796560720.0),
                ('b2', 'gpt-5.1', 'openai', '', '', 1, 100, 20, 0, 0, 5, 1796560700.0, 1796560700.0);",
        )
        .unwrap();
        let (all, _) = read_whole(Provider::Hermes, &path, &Default::default());
        let s = Some;
        let title =
            "model\u{1f}af43a4\u{1f}mock-model\u{1f}auto\u{1f}http://127.0.0.1:38799/v1/\u{1f}\u{1f}title_generation";
        let switched = "model\u{1f}b2\u{1f}claude-sonnet-4-5\u{1f}anthropic\u{1f}\u{1f}\u{1f}";
        assert_eq!(
            rows(Provider::Hermes, &all),
            [
                (title.into(), s(12800), s(2560), s(10240), s(7680), s(2560), s(33280)),
                (switched.into(), s(300), s(0), s(1000), s(40), s(0), s(1340)),
                ("session\u{1f}af43a4".into(), s(6400), s(1280), s(5120), s(3840), s(1280), s(16640)),
                ("session\u{1f}b2".into(), s(100), s(0), s(0), s(20), s(5), s(120)),
            ]
        );
        let dated = |key: &str| all.iter().find(|w| w.key == key).map(|w| w.at_ms);
        assert_eq!(dated(title), Some(1_796_560_639_738));
    }
}
