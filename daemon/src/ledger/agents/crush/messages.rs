//! Crush's database: table `messages`, one row a message, with its
//! session, role, the model and provider asked, and when it was created
//! (unix seconds). Each assistant message is one provider response. Crush
//! keeps no tokens of a response: its `sessions` row keeps only the
//! latest call's prompt and completion sizes (overwritten by each call,
//! not added up) and its own cost estimate. So Bee counts Crush's
//! responses, by their message ids, with every token counter unknown —
//! never a context size shown as usage.

use bee_proto::usage::Counters;
use std::path::Path;

use crate::ledger::agents::lines::Found;
use crate::ledger::agents::whole::{column_text, column_time_ms};

/// The columns read, in order.
pub(crate) const QUERY: &str = "SELECT id, session_id, model, created_at FROM messages WHERE role = 'assistant'";

/// Reads one assistant message row.
pub(crate) fn read(_path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> bool {
    let (Some(id), Some(session), Some(at_ms)) = (column_text(row, 0), column_text(row, 1), column_time_ms(row, 3))
    else {
        return false;
    };
    found.session(session, None);
    found.response(id.to_owned(), session, at_ms, column_text(row, 2), Counters::default());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, read_whole};
    use bee_proto::ledger::Provider;

    /// Crush's tables as its migrations create them (the columns read).
    const SCHEMA: &str = "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
            updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
        CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
            parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
            finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL)";

    /// Responses counted by their ids, read again when the database
    /// changes; their tokens unknown (the session's context size is not
    /// usage); user messages are none; a row with no time is refused.
    #[test]
    fn responses_are_counted_and_their_tokens_unknown() {
        let (_dir, path, db) = database("crush.db", SCHEMA);
        db.execute_batch(
            "INSERT INTO sessions VALUES ('c1', NULL, 't', 4, 5200, 300, 0.02, 1796115610, 1796115600);
             INSERT INTO messages (id, session_id, role, model, provider, created_at, updated_at) VALUES
                ('u1', 'c1', 'user', NULL, NULL, 1796115600, 1796115600),
                ('a1', 'c1', 'assistant', 'gpt-5.1', 'openai', 1796115601, 1796115605),
                ('a2', 'c1', 'assistant', 'gpt-5.1', 'openai', 1796115606, 1796115610);",
        )
        .unwrap();
        let (first, _) = read_whole(Provider::Crush, &path, &Default::default());
        db.execute_batch(
            "INSERT INTO messages (id, session_id, role, model, created_at, updated_at) VALUES
                ('a3', 'c1', 'assistant', 'gpt-5.1', 1796115700, 1796115705),
                ('a4', 'c1', 'assistant', 'gpt-5.1', 'soon', 0);",
        )
        .unwrap();
        let (again, _) = read_whole(Provider::Crush, &path, &Default::default());
        assert_eq!(first.len(), 2);
        let mut keys: Vec<_> = first.iter().chain(&again).map(|w| w.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys, ["a1", "a2", "a3"]);
        assert!(again.iter().all(|w| w.tokens == Counters::default()), "no token is known, none is 0");
        assert_eq!(again[0].at_ms, 1_796_115_601_000);
    }
}
