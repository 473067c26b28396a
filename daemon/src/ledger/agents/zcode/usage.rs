//! ZCode CLI's database (`~/.zcode/cli/db/db.sqlite`): table
//! `model_usage`, one row a model request: `id` (text, the row's key),
//! `session_id`, `turn_id`, `model_id`, `input_tokens`, `output_tokens`,
//! `reasoning_tokens`, `cache_creation_input_tokens`,
//! `cache_read_input_tokens`, `started_at` and `completed_at` (unix ms;
//! `completed_at` empty until the request completes), `duration_ms`,
//! `computed_total_tokens` (input + output); and table `session` (`id`,
//! `directory`: where the session ran).
//!
//! One row is one response, keyed by its `id`, dated when the request
//! started, counted in its session, whose directory names its project.
//! ZCode counts input as a whole prompt: `input_tokens` includes both
//! `cache_read_input_tokens` and `cache_creation_input_tokens`, taken out
//! here (a difference below 0 leaves input unknown, never 0), and
//! `output_tokens` includes `reasoning_tokens`.
//!
//! Rows are read by rowid, each pass the rows after the last one read; a
//! row read before its request completed is kept aside and read again
//! each pass until it has (its counts are filled in then: the fuller write
//! of the same response is kept), up to [`MAX_PENDING`] of them. A
//! database whose last row read is gone or another (made anew) is read
//! from its start again (a row read again adds nothing twice).
//!
//! Text values are selected within the bound of a name (`?2`): a longer
//! one is never read into memory, and is unknown.

use bee_proto::ledger::Provider;
use bee_proto::ledger::bounds::MAX_TEXT_BYTES;
use bee_proto::usage::Counters;
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use crate::ledger::agents::lines::{Found, LastName, decode_state, encode_state};
use crate::ledger::agents::whole::{
    bounded_columns, column_count, column_text, column_time_ms, columns_of, open_read_only,
};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The database's file name, in `~/.zcode/cli/db/`.
pub(super) const DATABASE: &str = "db.sqlite";

/// The table of requests.
const REQUESTS: &str = "model_usage";

/// The most rows still open a pass keeps aside to read again: a request
/// that never completes (ZCode stopped mid-request) is let go once this
/// many newer ones are open.
const MAX_PENDING: usize = 256;

/// The columns of `model_usage` [`read_request`] reads after the rowid,
/// in order, and whether each is text (selected within the bound of a
/// name); then the session's directory.
const COLUMNS: [(&str, bool); 11] = [
    ("id", true),
    ("session_id", true),
    ("model_id", true),
    ("started_at", false),
    ("completed_at", false),
    ("input_tokens", false),
    ("output_tokens", false),
    ("reasoning_tokens", false),
    ("cache_read_input_tokens", false),
    ("cache_creation_input_tokens", false),
    ("computed_total_tokens", false),
];

/// Where the reader stopped: the last row it read, and the rows it read
/// before their request completed.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resume {
    last: Option<LastRow>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pending: BTreeSet<i64>,
}

/// A row read: its rowid and its `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LastRow {
    row: i64,
    id: Option<String>,
}

/// Whether `path` is ZCode CLI's database (by name).
pub(super) fn is_database(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == DATABASE)
}

/// Reads the requests of the database at `path` written since `state`:
/// their evidence, where it stops now, and how many rows were refused.
pub(super) fn read(path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
    let mut resume: Resume = decode_state(state);
    let refused = read_requests(path, &mut resume, out).map_err(std::io::Error::other)?;
    Ok((encode_state(&resume), refused))
}

fn read_requests(path: &Path, resume: &mut Resume, out: &mut Vec<Evidence>) -> rusqlite::Result<u64> {
    let connection = open_read_only(path)?;
    // One snapshot of the database, however ZCode writes meanwhile.
    let snapshot = connection.unchecked_transaction()?;
    let present = columns_of(&snapshot, REQUESTS)?;
    if present.is_empty() {
        // A database from before ZCode kept its requests: nothing yet.
        *resume = Resume::default();
        return Ok(0);
    }
    if let Some(last) = &resume.last {
        let id = if present.contains("id") { "CASE WHEN octet_length(id) <= ?2 THEN id END" } else { "NULL" };
        let again = snapshot
            .query_row(
                &format!("SELECT {id} FROM model_usage WHERE rowid = ?1"),
                params![last.row, MAX_TEXT_BYTES as i64],
                |row| Ok(column_text(row, 0).map(str::to_owned)),
            )
            .optional()?;
        if again.as_ref() != Some(&last.id) {
            // The row is gone or another: the database was made anew.
            *resume = Resume::default();
        }
    }
    let directories = columns_of(&snapshot, "session")?;
    let query = format!(
        "SELECT u.rowid, {} FROM model_usage u {} WHERE {{where}}",
        select_list(&present, directories.contains("directory")),
        if directories.contains("id") { "LEFT JOIN session s ON s.id = u.session_id" } else { "" },
    );
    let mut again = snapshot.prepare(&query.replace("{where}", "u.rowid = ?1"))?;
    let mut after = snapshot.prepare(&query.replace("{where}", "u.rowid > ?1 ORDER BY u.rowid"))?;
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(Provider::ZCode, &mut sessions, &mut models, out);
    let mut named = HashSet::new();
    let mut refused = 0;
    // 4 KiB: an SQLite integer whatever the platform.
    let bound = MAX_TEXT_BYTES as i64;
    let mut pending = BTreeSet::new();
    // The rows left open before, each read again (one gone is let go).
    for &rowid in &resume.pending {
        let mut rows = again.query(params![rowid, bound])?;
        if let Some(row) = rows.next()? {
            match read_request(row, &mut named, &mut found) {
                Read::Over => {}
                Read::Open => {
                    pending.insert(rowid);
                }
                Read::Refused => refused += 1,
            }
        }
    }
    let mut rows = after.query(params![resume.last.as_ref().map_or(i64::MIN, |last| last.row), bound])?;
    while let Some(row) = rows.next()? {
        // The rowid is always an integer.
        let Ok(rowid) = row.get_ref(0)?.as_i64() else { continue };
        resume.last = Some(LastRow { row: rowid, id: column_text(row, 1).map(str::to_owned) });
        match read_request(row, &mut named, &mut found) {
            Read::Over => {}
            Read::Open => {
                pending.insert(rowid);
            }
            Read::Refused => refused += 1,
        }
    }
    while pending.len() > MAX_PENDING {
        pending.pop_first();
    }
    resume.pending = pending;
    Ok(refused)
}

/// [`COLUMNS`] as a select list: a column the table lacks as `NULL`, a
/// text column within the bound `?2`; then the session's directory, where
/// the database keeps it.
fn select_list(present: &HashSet<String>, has_directory: bool) -> String {
    let selected: Vec<String> = bounded_columns(&COLUMNS, present, "u.")
        .into_iter()
        .chain([if has_directory { "CASE WHEN octet_length(s.directory) <= ?2 THEN s.directory END" } else { "NULL" }
            .to_owned()])
        .collect();
    selected.join(", ")
}

/// What one row turned out to be.
#[derive(Debug, PartialEq, Eq)]
enum Read {
    /// Read to its end: a response, or a request that served nothing.
    Over,
    /// Its request has not completed: to be read again.
    Open,
    /// Refused as unreadable: no id, no session or no time.
    Refused,
}

/// Reads one row (its columns from 1 in [`COLUMNS`]' order, then the
/// session's directory).
fn read_request(row: &rusqlite::Row<'_>, named: &mut HashSet<String>, found: &mut Found<'_>) -> Read {
    let (Some(id), Some(session)) = (column_text(row, 1), column_text(row, 2)) else { return Read::Refused };
    let completed = row.get_ref(5).is_ok_and(|value| value != rusqlite::types::ValueRef::Null);
    let [input, output, reasoning, cache_reads, cache_writes, total] =
        [6, 7, 8, 9, 10, 11].map(|at| column_count(row, at));
    let counters = counters(input, output, reasoning, cache_reads, cache_writes, total);
    if counters.counts_nothing() {
        // Still running (its counts come when it completes), or a request
        // that served nothing (it failed): no response.
        return if completed { Read::Over } else { Read::Open };
    }
    let Some(at_ms) = column_time_ms(row, 4).or_else(|| column_time_ms(row, 5)) else { return Read::Refused };
    if named.insert(session.to_owned()) {
        found.session(session, column_text(row, 12));
    }
    found.response(id.to_owned(), session, at_ms, column_text(row, 3), counters);
    if completed { Read::Over } else { Read::Open }
}

/// A request's counters in Bee's columns (Anthropic's shape): input
/// without either cache (ZCode's includes both: a difference below 0, or
/// a cache part unknown, leaves it unknown, never 0), cache writes, cache
/// reads, output as ZCode counts it (reasoning included, so reasoning is
/// a part of it: one larger than it is unknown), and ZCode's total (input
/// + output: what the four columns add up to).
fn counters(
    input: Option<u64>,
    output: Option<u64>,
    reasoning: Option<u64>,
    cache_reads: Option<u64>,
    cache_writes: Option<u64>,
    total: Option<u64>,
) -> Counters {
    let cached = cache_reads.zip(cache_writes).and_then(|(reads, writes)| reads.checked_add(writes));
    Counters {
        input_tokens: input.zip(cached).and_then(|(input, cached)| input.checked_sub(cached)),
        cache_creation_input_tokens: cache_writes,
        cache_read_input_tokens: cache_reads,
        output_tokens: output,
        reasoning_output_tokens: reasoning.filter(|&reasoning| output.is_none_or(|output| reasoning <= output)),
        total_tokens: total,
        ..Counters::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, responses_of, rows};
    use crate::ledger::stored::evidence::SessionProject;
    use crate::ledger::stored::responses::ResponseWrite;
    use rusqlite::Connection;

    /// ZCode CLI's tables as its database (v0.14.8) has them, the columns
    /// read and a few beside them (codeburn's and tokscale's fixtures of
    /// the same schema).
    const SCHEMA: &str = "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, path TEXT);
        CREATE TABLE model_usage (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, turn_id TEXT,
            model_id TEXT NOT NULL, input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0, reasoning_tokens INTEGER NOT NULL DEFAULT 0,
            cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_input_tokens INTEGER NOT NULL DEFAULT 0, started_at INTEGER NOT NULL,
            completed_at INTEGER, duration_ms INTEGER, computed_total_tokens INTEGER, agent TEXT, mode TEXT,
            provider_metadata_json TEXT);
        CREATE TABLE tool_usage (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, turn_id TEXT,
            tool_name TEXT NOT NULL, started_at INTEGER NOT NULL);";

    /// A request, as ZCode writes it: (id, session, turn, model, input,
    /// output, reasoning, cache writes, cache reads, started, completed).
    const INSERT: &str = "INSERT INTO model_usage (id, session_id, turn_id, model_id, input_tokens, output_tokens,
        reasoning_tokens, cache_creation_input_tokens, cache_read_input_tokens, started_at, completed_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

    type Request<'a> = (&'a str, &'a str, &'a str, &'a str, i64, i64, i64, i64, i64, i64, Option<i64>);

    fn insert(db: &Connection, r: Request<'_>) {
        db.execute(INSERT, params![r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7, r.8, r.9, r.10]).unwrap();
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

    /// codeburn's fixture (9125 input of which 8064 cached) and tokscale's
    /// (both caches and reasoning): each request once by its id, input
    /// without either cache, reasoning inside output, the columns adding
    /// up to ZCode's own total; its session's directory names the project.
    #[test]
    fn each_request_once_input_without_its_caches() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        db.execute("INSERT INTO session (id, directory) VALUES ('sess-1', '/Users/me/proj')", []).unwrap();
        insert(&db, ("mu-1", "sess-1", "turn-1", "GLM-5.2", 9125, 27, 0, 0, 8064, 1781981181862, Some(1781981202412)));
        insert(&db, ("usage_1", "sess_1", "turn_1", "GLM-5.2", 100, 20, 5, 3, 7, 1782718000000, Some(1782718001000)));
        db.execute("UPDATE model_usage SET computed_total_tokens = 120, duration_ms = 1000 WHERE id = 'usage_1'", [])
            .unwrap();
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
        assert_eq!(projects, [("sess-1", "-Users-me-proj")]);
        let writes = responses_of(evidence);
        let s = Some;
        assert_eq!(
            rows(Provider::ZCode, &writes),
            [
                ("mu-1".into(), s(1061), s(0), s(8064), s(27), s(0), s(9152)),
                ("usage_1".into(), s(90), s(3), s(7), s(20), s(5), s(120)),
            ]
        );
        assert_eq!(writes[0].at_ms, 1_781_981_181_862, "dated when the request started");
        assert_eq!(writes[0].model.as_deref(), Some("GLM-5.2"));
        assert_eq!(writes[1].session_id.as_deref(), Some("sess_1"));
    }

    /// A row written when its request starts (no completion, no counts) is
    /// no response yet, and is read again when its request completes; read
    /// again from where it stopped, nothing else is added; a database made
    /// anew is read from its start.
    #[test]
    fn a_request_read_before_it_completes_is_read_again_and_nothing_twice() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        insert(&db, ("mu-1", "s1", "t1", "GLM-5.2", 500, 10, 0, 0, 0, 1781981181862, Some(1781981182862)));
        insert(&db, ("mu-2", "s1", "t1", "GLM-5.2", 0, 0, 0, 0, 0, 1781981190000, None));
        let (first, state) = responses(&path, &AgentState::default());
        assert_eq!(first.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["mu-1"]);
        let (again, state) = responses(&path, &state);
        assert!(again.is_empty(), "still running: nothing yet");
        db.execute(
            "UPDATE model_usage SET input_tokens = 900, output_tokens = 40, cache_read_input_tokens = 600,
                completed_at = 1781981195000 WHERE id = 'mu-2'",
            [],
        )
        .unwrap();
        let (completed, state) = responses(&path, &state);
        let s = Some;
        assert_eq!(rows(Provider::ZCode, &completed), [("mu-2".into(), s(300), s(0), s(600), s(40), s(0), s(940))]);
        assert!(responses(&path, &state).0.is_empty(), "completed and read: not read again");
        // Made anew: its rows are other requests.
        db.execute_batch("DELETE FROM model_usage").unwrap();
        insert(&db, ("mu-9", "s2", "t9", "GLM-5.2", 50, 5, 0, 0, 0, 1781990000000, Some(1781990001000)));
        let (anew, _) = responses(&path, &state);
        assert_eq!(anew.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["mu-9"]);
    }

    /// A request that completed and served nothing (it failed) is none; one
    /// whose caches are more than its input has input unknown, never 0;
    /// reasoning larger than the output it is part of is unknown.
    #[test]
    fn failures_are_none_and_impossible_parts_unknown() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        insert(&db, ("mu-1", "s1", "t1", "GLM-5.2", 0, 0, 0, 0, 0, 1781981181862, Some(1781981182862)));
        insert(&db, ("mu-2", "s1", "t1", "GLM-5.2", 10, 5, 9, 4, 20, 1781981181862, Some(1781981182862)));
        let (writes, state) = responses(&path, &AgentState::default());
        let s = Some;
        assert_eq!(rows(Provider::ZCode, &writes), [("mu-2".into(), None, s(4), s(20), s(5), None, None)]);
        assert!(decode_state::<Resume>(&state).pending.is_empty(), "no request left open");
    }

    /// A row without an id, a session or a time is refused and the rest
    /// read; a counter that is no count is unknown; text past any name's
    /// length is unknown; a database without the session table is read
    /// without projects; a file that is no database is an error.
    #[test]
    fn broken_rows_are_refused_and_the_rest_read() {
        let (_dir, path, db) = database(
            DATABASE,
            "CREATE TABLE model_usage (id TEXT PRIMARY KEY, session_id TEXT, model_id TEXT, input_tokens INTEGER,
                output_tokens INTEGER, reasoning_tokens INTEGER, cache_creation_input_tokens INTEGER,
                cache_read_input_tokens INTEGER, started_at INTEGER, completed_at INTEGER)",
        );
        let long = "m".repeat(MAX_TEXT_BYTES + 1);
        db.execute_batch(&format!(
            "INSERT INTO model_usage VALUES (NULL, 's1', 'GLM', 10, 1, 0, 0, 0, 1781981181862, 1781981182862);
             INSERT INTO model_usage VALUES ('a', NULL, 'GLM', 10, 1, 0, 0, 0, 1781981181862, 1781981182862);
             INSERT INTO model_usage VALUES ('b', 's1', 'GLM', 10, 1, 0, 0, 0, 'soon', 'later');
             INSERT INTO model_usage VALUES ('c', 's1', '{long}', 'ten', 3, -1, 0, 0, 1781981181862, 1781981182862);
             INSERT INTO model_usage VALUES ('{long}', 's1', 'GLM', 10, 1, 0, 0, 0, 1781981181862, 1781981182862);
             INSERT INTO model_usage VALUES ('d', 's1', 'GLM', 10, 1, 0, 0, 0, 1781981181862, 1781981182862);"
        ))
        .unwrap();
        let (evidence, _, refused) = read_from(&path, &AgentState::default());
        assert_eq!(refused, 4, "no id; no session; no time; an id past any name's length");
        assert!(!evidence.iter().any(|e| matches!(e, Evidence::SessionProject(_))));
        let writes = responses_of(evidence);
        let read: Vec<_> = writes.iter().map(|w| (w.key.as_str(), w.model.as_deref(), w.tokens.input_tokens)).collect();
        assert_eq!(read, [("c", None, None), ("d", Some("GLM"), Some(10))]);
        assert_eq!(writes[0].tokens.output_tokens, Some(3));
        assert_eq!(writes[0].tokens.reasoning_output_tokens, None, "a count below 0 is unknown");
        let not_db = path.with_file_name("broken.sqlite");
        std::fs::write(&not_db, b"not a database, only text").unwrap();
        assert!(read_from_result(&not_db).is_err());
    }

    fn read_from_result(path: &Path) -> std::io::Result<(AgentState, u64)> {
        read(path, &AgentState::default(), &mut Vec::new())
    }

    /// A database without the table (ZCode's before its first request),
    /// and one whose table is empty, hold nothing.
    #[test]
    fn an_empty_store_holds_nothing() {
        let (_dir, path, _db) = database(DATABASE, "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT)");
        let (evidence, state, refused) = read_from(&path, &AgentState::default());
        assert_eq!((evidence.len(), refused), (0, 0));
        let (_dir, path, _db) = database(DATABASE, SCHEMA);
        let (evidence, state, refused) = read_from(&path, &state);
        assert_eq!((evidence.len(), refused), (0, 0));
        assert!(read_from(&path, &state).0.is_empty());
    }

    /// Rows left open are kept aside up to [`MAX_PENDING`], the oldest let go.
    #[test]
    fn requests_left_open_are_bounded() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        for at in 0..(MAX_PENDING as i64 + 5) {
            insert(&db, (&format!("mu-{at}"), "s1", "t1", "GLM-5.2", 0, 0, 0, 0, 0, 1781981181862 + at, None));
        }
        let (_, state, _) = read_from(&path, &AgentState::default());
        let resume: Resume = decode_state(&state);
        assert_eq!(resume.pending.len(), MAX_PENDING);
        assert_eq!(resume.pending.first(), Some(&6), "the oldest five let go");
    }
}
