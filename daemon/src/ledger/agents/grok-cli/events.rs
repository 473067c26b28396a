//! Grok CLI's database (`~/.grok/grok.db`): table `usage_events`, one row
//! a user turn (`source` `message`) or a side call (`title`, `recap`,
//! `task` — a sub-agent's run —, `delegation`, `other`), appended when the
//! turn or call ends and never changed: `id` (autoincrement),
//! `session_id`, `message_seq` (unset), `source`, `model`,
//! `input_tokens`, `output_tokens`, `total_tokens` (the turn's LLM calls
//! summed), `cost_micros` (Grok CLI's own estimate, µUSD) and
//! `created_at` (ISO 8601, UTC); and table `sessions` (`id`,
//! `cwd_at_start`: where the session began).
//!
//! One row is one entry, counted as one response: Grok CLI keeps no call
//! one by one. It is keyed by its session and row id, dated when it was
//! written, counted in its session, whose starting directory names its
//! project. Its input is the whole input, any cached part inside it and
//! never told apart; its output includes reasoning, except in a row of
//! the xAI batch API, whose `completion_tokens` leave reasoning out while
//! its `total_tokens` count it: there the output is what the total leaves
//! after the input.
//!
//! Rows are read by rowid: each pass reads the rows after the last one it
//! read, and a database whose last row read is gone or dated otherwise
//! (its session deleted, or the database made anew) is read from its
//! start again (a row read again adds nothing twice).
//!
//! Text values are selected within the bound of a name (`?2`): a longer
//! one is never read into memory, and is unknown.

use bee_proto::ledger::Provider;
use bee_proto::ledger::bounds::MAX_TEXT_BYTES;
use bee_proto::usage::Counters;
use rusqlite::params;
use std::collections::HashSet;
use std::path::Path;

use crate::ledger::agents::lines::{Beside, Found, LastName, decode_state, encode_state};
use crate::ledger::agents::whole::{
    LastRow, RowidResume, bounded_columns, column_count, column_text, column_time_ms, columns_of, open_read_only,
};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The database's file name, in `~/.grok/`.
pub(super) const DATABASE: &str = "grok.db";

/// The table of usage events.
const EVENTS: &str = "usage_events";

/// The columns of `usage_events` [`read_event`] reads after the rowid, in
/// order, and whether each is text (selected within the bound of a name);
/// then the length of `session_id` (to tell one past the bound from none)
/// and the session's starting directory.
const COLUMNS: [(&str, bool); 7] = [
    ("session_id", true),
    ("model", true),
    ("input_tokens", false),
    ("output_tokens", false),
    ("total_tokens", false),
    ("cost_micros", false),
    ("created_at", true),
];

/// Whether `path` is Grok CLI's database (by name).
pub(super) fn is_database(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == DATABASE)
}

/// Reads the usage events of the database at `path` after where `state`
/// says the last pass stopped: their evidence, where it stops now, and how
/// many rows were refused.
pub(super) fn read(path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
    let mut resume: RowidResume = decode_state(state);
    let refused = read_events(path, &mut resume, out).map_err(std::io::Error::other)?;
    Ok((encode_state(&resume), refused))
}

fn read_events(path: &Path, resume: &mut RowidResume, out: &mut Vec<Evidence>) -> rusqlite::Result<u64> {
    let connection = open_read_only(path)?;
    // One snapshot of the database, however Grok CLI writes meanwhile.
    let snapshot = connection.unchecked_transaction()?;
    let present = columns_of(&snapshot, EVENTS)?;
    if present.is_empty() {
        // A database before its first migration: nothing yet.
        *resume = RowidResume::default();
        return Ok(0);
    }
    // The last row read gone (its session deleted) or another (the database
    // made anew): read from the start, adding nothing twice.
    resume.check(&snapshot, "usage_events", present.contains("created_at").then_some("created_at"))?;
    let sessions = columns_of(&snapshot, "sessions")?;
    let joined = sessions.contains("id") && sessions.contains("cwd_at_start");
    let query = format!(
        "SELECT u.rowid, {} FROM usage_events u {} WHERE u.rowid > ?1 ORDER BY u.rowid",
        select_list(&present, joined),
        if joined { "LEFT JOIN sessions s ON s.id = u.session_id" } else { "" },
    );
    let mut statement = snapshot.prepare(&query)?;
    // 4 KiB: an SQLite integer whatever the platform.
    let mut rows = statement.query(params![resume.after(), MAX_TEXT_BYTES as i64])?;
    let (mut session_names, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(Provider::GrokCli, &mut session_names, &mut models, out);
    let mut named = HashSet::new();
    let mut refused = 0;
    while let Some(row) = rows.next()? {
        // The rowid is always an integer.
        let Ok(rowid) = row.get_ref(0)?.as_i64() else { continue };
        resume.last = Some(LastRow { row: rowid, at_ms: column_time_ms(row, 7) });
        refused += u64::from(!read_event(row, rowid, &mut named, &mut found));
    }
    Ok(refused)
}

/// [`COLUMNS`] as a select list: a column the table lacks as `NULL`, a
/// text column within the bound `?2`; then the session id's length, and
/// the session's starting directory where the database keeps it.
fn select_list(present: &HashSet<String>, joined: bool) -> String {
    let selected: Vec<String> = bounded_columns(&COLUMNS, present, "u.")
        .into_iter()
        .chain([
            if present.contains("session_id") { "octet_length(u.session_id)" } else { "NULL" }.to_owned(),
            if joined { "CASE WHEN octet_length(s.cwd_at_start) <= ?2 THEN s.cwd_at_start END" } else { "NULL" }
                .to_owned(),
        ])
        .collect();
    selected.join(", ")
}

/// Reads the row `rowid` (its columns from 1 in [`COLUMNS`]' order, then
/// the session id's length and the session's directory); `false` when it
/// is refused: no session, a session id past any name's length, or no time.
fn read_event(row: &rusqlite::Row<'_>, rowid: i64, named: &mut HashSet<String>, found: &mut Found<'_>) -> bool {
    let Some(session) = column_text(row, 1) else { return false };
    let counters = counters(column_count(row, 3), column_count(row, 4), column_count(row, 5));
    if counters.counts_nothing() {
        // Grok CLI writes no row without tokens; one that says none is no
        // response.
        return true;
    }
    let Some(at_ms) = column_time_ms(row, 7) else { return false };
    if column_count(row, 8).is_some_and(|length| length > MAX_TEXT_BYTES as u64) {
        return false;
    }
    if named.insert(session.to_owned()) {
        found.session(session, column_text(row, 9));
    }
    // Its estimate in µUSD; 0 is what it writes for a model missing from
    // its price table: unknown, never $0.
    let own_figure = column_count(row, 6).filter(|&micros| micros > 0).map(|micros| micros as f64 / 1e6);
    let beside = Beside { own_figure, copied: false };
    found.response_with(format!("{session}\u{1f}{rowid}"), session, at_ms, column_text(row, 2), counters, beside);
    true
}

/// An entry's counters in Bee's columns (Anthropic's shape, no cache
/// counter kept): input is the whole input Grok CLI counted, any cached
/// part inside it (no call has an empty prompt, so a 0 is one its
/// provider did not report: unknown); output is `output_tokens`, or what
/// the total leaves after the input where that is more (a row of the xAI
/// batch API, whose `completion_tokens` leave out the reasoning its
/// `total_tokens` count); the total as written (left out where the parts
/// do not add up to it).
fn counters(input: Option<u64>, output: Option<u64>, total: Option<u64>) -> Counters {
    let input = input.filter(|&input| input > 0);
    let rest = total.zip(input).and_then(|(total, input)| total.checked_sub(input));
    let output = match (output, rest) {
        (Some(output), Some(rest)) => Some(output.max(rest)),
        (output, _) => output,
    };
    Counters { input_tokens: input, output_tokens: output, total_tokens: total, ..Counters::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, responses_of, rows};
    use crate::ledger::stored::evidence::SessionProject;
    use crate::ledger::stored::responses::ResponseWrite;
    use rusqlite::Connection;

    /// Grok CLI's tables as its migrations create them (`src/storage/migrations.ts`,
    /// the columns read and those beside them).
    const SCHEMA: &str = "CREATE TABLE workspaces (id TEXT PRIMARY KEY, scope_key TEXT NOT NULL UNIQUE,
            canonical_path TEXT NOT NULL, git_root TEXT, display_name TEXT NOT NULL, last_seen_at TEXT NOT NULL) STRICT;
        CREATE TABLE sessions (id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            title TEXT, recap_text TEXT, recap_model TEXT, recap_updated_at TEXT, model TEXT NOT NULL,
            mode TEXT NOT NULL, cwd_at_start TEXT NOT NULL, cwd_last TEXT NOT NULL, status TEXT NOT NULL,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL) STRICT;
        CREATE TABLE usage_events (id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, message_seq INTEGER,
            source TEXT NOT NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0, total_tokens INTEGER NOT NULL DEFAULT 0,
            cost_micros INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL) STRICT;
        CREATE INDEX idx_usage_events_session_created ON usage_events(session_id, created_at DESC);
        INSERT INTO workspaces VALUES ('w1', 'k1', '/home/dev/app', '/home/dev/app', 'app', '2026-05-15T09:59:00.000Z');";

    /// A session, as Grok CLI's `SessionStore` creates it.
    fn session(db: &Connection, id: &str, cwd: &str) {
        db.execute(
            "INSERT INTO sessions (id, workspace_id, model, mode, cwd_at_start, cwd_last, status, created_at, updated_at)
             VALUES (?1, 'w1', 'grok-4.3', 'agent', ?2, ?2, 'active', '2026-05-15T09:59:00.000Z',
                '2026-05-15T09:59:00.000Z')",
            (id, cwd),
        )
        .unwrap();
    }

    /// Grok CLI's `recordUsageEvent`: (session, source, model, input,
    /// output, total, cost µUSD, created_at).
    type Event<'a> = (&'a str, &'a str, &'a str, i64, i64, i64, i64, &'a str);

    fn insert(db: &Connection, e: Event<'_>) {
        db.execute(
            "INSERT INTO usage_events (session_id, message_seq, source, model, input_tokens, output_tokens,
                total_tokens, cost_micros, created_at) VALUES (?1, NULL, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![e.0, e.1, e.2, e.3, e.4, e.5, e.6, e.7],
        )
        .unwrap();
    }

    /// What a pass from `state` finds: its evidence, what the reader keeps
    /// now, and the rows it refused.
    fn read_from(path: &Path, state: &AgentState) -> (Vec<Evidence>, AgentState, u64) {
        let mut evidence = Vec::new();
        let (state, refused) = read(path, state, &mut evidence).unwrap();
        (evidence, state, refused)
    }

    fn responses(path: &Path, state: &AgentState) -> (Vec<ResponseWrite>, AgentState) {
        let (evidence, state, _) = read_from(path, state);
        (responses_of(evidence), state)
    }

    /// A turn and its side calls, each one entry read exactly: input the
    /// whole input (its cached part inside, no cache counter), output,
    /// the total adding up, Grok CLI's own estimate in USD, its model, its
    /// time, its session's starting directory as the project.
    #[test]
    fn each_turn_and_side_call_is_one_entry_read_exactly() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        session(&db, "s-1", "/home/dev/app");
        insert(&db, ("s-1", "message", "grok-4.3", 48_200, 1_350, 49_550, 63_625, "2026-05-15T10:00:00.000Z"));
        insert(&db, ("s-1", "title", "grok-4-1-fast-non-reasoning", 410, 12, 422, 0, "2026-05-15T10:00:01.000Z"));
        insert(&db, ("s-1", "task", "grok-4.3", 9_000, 700, 9_700, 13_000, "2026-05-15T10:02:00.000Z"));
        let (evidence, _, refused) = read_from(&path, &AgentState::default());
        assert_eq!(refused, 0);
        let projects: Vec<_> = evidence
            .iter()
            .filter_map(|e| match e {
                Evidence::SessionProject(SessionProject { session_id, project, .. }) => {
                    Some((session_id.as_str(), project.as_str()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(projects, [("s-1", "-home-dev-app")]);
        let writes = responses_of(evidence);
        let s = Some;
        assert_eq!(
            rows(Provider::GrokCli, &writes),
            [
                ("s-1\u{1f}1".into(), s(48_200), None, None, s(1_350), None, s(49_550)),
                ("s-1\u{1f}2".into(), s(410), None, None, s(12), None, s(422)),
                ("s-1\u{1f}3".into(), s(9_000), None, None, s(700), None, s(9_700)),
            ]
        );
        let first = &writes[0];
        assert_eq!(first.at_ms, bee_proto::time::parse_rfc3339_ms("2026-05-15T10:00:00.000Z").unwrap());
        assert_eq!((first.model.as_deref(), first.session_id.as_deref()), (Some("grok-4.3"), Some("s-1")));
        assert_eq!(first.own_figure, Some(0.063625));
        assert_eq!(writes[1].own_figure, None, "0 µUSD: a model missing from its price table");
        let t = &first.tokens;
        assert_eq!(
            (t.cache_read_input_tokens, t.cache_creation_input_tokens, t.reasoning_output_tokens),
            (None, None, None)
        );
    }

    /// A row of the xAI batch API: its output leaves reasoning out and its
    /// total counts it, so the output is the total less the input; a total
    /// below the parts is left out (the parts are summed); an input of 0
    /// (not reported) is unknown, never 0.
    #[test]
    fn a_batch_rows_reasoning_is_inside_its_output() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        session(&db, "s-1", "/home/dev/app");
        insert(&db, ("s-1", "message", "grok-4.3", 37, 530, 800, 1_371, "2026-05-15T10:00:00.000Z"));
        insert(&db, ("s-1", "message", "grok-4.3", 100, 50, 120, 250, "2026-05-15T10:01:00.000Z"));
        insert(&db, ("s-1", "other", "grok-4.3", 0, 9, 9, 23, "2026-05-15T10:02:00.000Z"));
        let (writes, _) = responses(&path, &AgentState::default());
        let s = Some;
        assert_eq!(
            rows(Provider::GrokCli, &writes),
            [
                ("s-1\u{1f}1".into(), s(37), None, None, s(763), None, s(800)),
                ("s-1\u{1f}2".into(), s(100), None, None, s(50), None, s(150)),
                ("s-1\u{1f}3".into(), None, None, None, s(9), None, None),
            ]
        );
    }

    /// Read again from where it stopped, nothing is added; a turn appended
    /// is read alone; read from its start, the same keys again (the ledger
    /// keeps each once); a deleted session's rows gone, the rest read again
    /// adds nothing new; a database made anew is read from its start.
    #[test]
    fn a_row_read_again_adds_nothing_and_a_new_database_is_read_whole() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        session(&db, "s-1", "/home/dev/app");
        session(&db, "s-2", "/home/dev/lib");
        insert(&db, ("s-1", "message", "grok-4.3", 10, 1, 11, 15, "2026-05-15T10:00:00.000Z"));
        let (first, state) = responses(&path, &AgentState::default());
        assert_eq!(first.len(), 1);
        let (again, state) = responses(&path, &state);
        assert!(again.is_empty(), "nothing written since: nothing read");
        insert(&db, ("s-2", "message", "grok-4.3", 20, 2, 22, 30, "2026-05-15T10:05:00.000Z"));
        let (appended, state) = responses(&path, &state);
        assert_eq!(appended.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["s-2\u{1f}2"]);
        let (whole, _) = responses(&path, &AgentState::default());
        let keys = |writes: &[ResponseWrite]| writes.iter().map(|w| w.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&whole), [keys(&first), keys(&appended)].concat());
        // The last row read is gone with its session: read from the start.
        db.execute_batch("DELETE FROM usage_events WHERE session_id = 's-2'").unwrap();
        let (reread, state) = responses(&path, &state);
        assert_eq!(keys(&reread), keys(&first), "the same key: nothing counted twice");
        // Made anew: its first row is another turn of another session.
        db.execute_batch("DROP TABLE usage_events; DELETE FROM sessions;").unwrap();
        db.execute_batch(
            &SCHEMA[SCHEMA.find("CREATE TABLE usage_events").unwrap()..SCHEMA.find("CREATE INDEX").unwrap()],
        )
        .unwrap();
        session(&db, "s-9", "/home/dev/app");
        insert(&db, ("s-9", "message", "grok-4.3", 30, 3, 33, 45, "2026-05-16T08:00:00.000Z"));
        let (anew, _) = responses(&path, &state);
        assert_eq!(keys(&anew), ["s-9\u{1f}1"]);
    }

    /// A row without a session or a time, or whose session id is past any
    /// name's length, is refused and the rest read; a counter that is no
    /// count is unknown; text past any name's length is unknown; a row of
    /// no tokens is none; a database without the sessions table is read
    /// without projects; a file that is no database is an error.
    #[test]
    fn broken_rows_are_refused_and_the_rest_read() {
        let (_dir, path, db) = database(
            DATABASE,
            "CREATE TABLE usage_events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, message_seq INTEGER,
                source TEXT, model TEXT, input_tokens INTEGER, output_tokens INTEGER, total_tokens INTEGER,
                cost_micros INTEGER, created_at TEXT)",
        );
        let long = "x".repeat(MAX_TEXT_BYTES + 1);
        db.execute_batch(&format!(
            "INSERT INTO usage_events (session_id, source, model, input_tokens, output_tokens, total_tokens,
                cost_micros, created_at) VALUES
             (NULL, 'message', 'grok-4.3', 10, 1, 11, 0, '2026-05-15T10:00:00.000Z'),
             ('s1', 'message', 'grok-4.3', 10, 1, 11, 0, 'soon'),
             ('{long}', 'message', 'grok-4.3', 10, 1, 11, 0, '2026-05-15T10:00:00.000Z'),
             ('s1', 'message', '{long}', 'ten', 3, X'FF', -5, '2026-05-15T10:00:01.000Z'),
             ('s1', 'message', 'grok-4.3', 0, 0, 0, 0, '2026-05-15T10:00:02.000Z'),
             ('s1', 'message', 'grok-4.3', 10, 1, 11, 15, '2026-05-15T10:00:03.000Z');"
        ))
        .unwrap();
        let (evidence, state, refused) = read_from(&path, &AgentState::default());
        assert_eq!(refused, 3, "no session; no time; a session id past any name's length");
        assert!(!evidence.iter().any(|e| matches!(e, Evidence::SessionProject(_))));
        let writes = responses_of(evidence);
        let kept: Vec<_> = writes
            .iter()
            .map(|w| (w.key.as_str(), w.model.as_deref(), w.tokens.input_tokens, w.tokens.output_tokens, w.own_figure))
            .collect();
        assert_eq!(
            kept,
            [
                ("s1\u{1f}4", None, None, Some(3), None),
                ("s1\u{1f}6", Some("grok-4.3"), Some(10), Some(1), Some(0.000015))
            ]
        );
        assert!(read_from(&path, &state).0.is_empty());
        let not_db = path.with_file_name("broken.db");
        std::fs::write(&not_db, b"not a database, only text \xff\xfe").unwrap();
        assert!(read(&not_db, &AgentState::default(), &mut Vec::new()).is_err());
    }

    /// A database without the table (before its migrations ran), and one
    /// whose table is empty, hold nothing.
    #[test]
    fn an_empty_store_holds_nothing() {
        let (_dir, path, _db) = database(DATABASE, "CREATE TABLE workspaces (id TEXT PRIMARY KEY)");
        let (evidence, state, refused) = read_from(&path, &AgentState::default());
        assert_eq!((evidence.len(), refused), (0, 0));
        let (_dir, path, _db) = database(DATABASE, SCHEMA);
        let (evidence, state, refused) = read_from(&path, &state);
        assert_eq!((evidence.len(), refused), (0, 0));
        assert!(read_from(&path, &state).0.is_empty());
    }
}
