//! Hermes's `sessions` table: one row a session (of the CLI or of a
//! messaging gateway), with its model, when it started (unix seconds) and
//! its running totals: `input_tokens` (without either cache),
//! `cache_write_tokens`, `cache_read_tokens`, `output_tokens` (the
//! provider's completion tokens, reasoning included) and
//! `reasoning_tokens` (the part of them that was reasoning). Hermes
//! keeps no record of its calls one by one, so a session is one entry in
//! the ledger, keyed by the session, dated when it started.

use bee_proto::usage::Counters;
use std::path::Path;

use crate::ledger::agents::lines::Found;
use crate::ledger::agents::whole::{column_count, column_text, column_time_ms};

/// The columns read, in order.
pub(crate) const QUERY: &str = "SELECT id, model, started_at, input_tokens, output_tokens, cache_read_tokens,
        cache_write_tokens, reasoning_tokens
   FROM sessions";

/// Reads one session row.
pub(crate) fn read(_path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> bool {
    let Some(session) = column_text(row, 0) else { return false };
    // Hermes adds the provider's completion tokens up as served: the
    // reasoning is already inside `output_tokens` (seen with the real CLI
    // against a mock), so it is not added again.
    let counters = Counters {
        input_tokens: column_count(row, 3),
        cache_creation_input_tokens: column_count(row, 6),
        cache_read_input_tokens: column_count(row, 5),
        output_tokens: column_count(row, 4),
        reasoning_output_tokens: column_count(row, 7),
        ..Counters::default()
    };
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
}
