//! Copilot CLI's session store: `session-store.db` in its home (`~/.copilot`,
//! or `COPILOT_HOME`), SQLite in WAL mode, which the CLI (1.0.102: its
//! `schema_version` 8) writes whatever else is configured. Its table
//! `assistant_usage_events` holds one row a model call, inserted when the
//! response completes and never changed after: `id` (SQLite's
//! autoincrement), `session_id`, `created_at` (RFC 3339, ms), `model`,
//! `api_endpoint` and the call's counters `input_tokens`, `output_tokens`,
//! `cache_read_tokens`, `cache_write_tokens`, `reasoning_tokens`. The row
//! keeps no response id.
//!
//! One row is one response, keyed by the row's own identity (its session,
//! id and time: a database made anew numbers its rows from 1 again), dated
//! at `created_at`, counted in its session (a sub-agent's calls are rows
//! of the session that ran it). Rows are read by id: each pass reads the
//! rows after the last one it read, and a database whose last row read is
//! gone or dated otherwise (made anew) is read from its start again (a
//! row read again adds nothing twice).
//!
//! Copilot counts every call in OpenAI's way whatever the provider's API:
//! `input_tokens` is the whole prompt, cache reads and cache writes
//! included (Anthropic's `input_tokens` + `cache_read_input_tokens` +
//! `cache_creation_input_tokens`), `output_tokens` includes reasoning. The
//! row is kept so ([`counters`]); [`super::Copilot`]'s columns take both
//! caches out of input.

use bee_proto::ledger::Provider;
use bee_proto::ledger::bounds::MAX_CALL_TOKENS;
use bee_proto::usage::Counters;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use crate::ledger::agents::lines::{Found, LastName, decode_state, encode_state};
use crate::ledger::agents::whole::{column_text, column_time_ms, open_read_only};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The session store's file name, in Copilot's home.
pub(super) const DATABASE: &str = "session-store.db";

/// The table of calls.
const CALLS: &str = "assistant_usage_events";

/// Each call after `?1` (by id), the columns [`read_row`] reads in order;
/// `{cwd}` is the session's directory where the database keeps sessions.
const QUERY: &str = "SELECT u.id, u.session_id, u.created_at, u.model, u.api_endpoint,
        u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.reasoning_tokens, {cwd}
   FROM assistant_usage_events u {join}
  WHERE u.id > ?1 ORDER BY u.id";

/// Where the reader stopped: the last row it read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Cursor {
    last: Option<LastRow>,
}

/// A row read: its id and its time (ms, where it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LastRow {
    id: i64,
    at_ms: Option<i64>,
}

/// Whether `path` is a session store (by name).
pub(super) fn is_database(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == DATABASE)
}

/// Reads the calls of the session store at `path` after where `state`
/// says the last pass stopped: their evidence, where it stops now, and
/// how many rows were refused.
pub(super) fn read(path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
    let mut cursor: Cursor = decode_state(state);
    // A large store is one large read (the token ingestion leaves to this
    // reader, see `Files::reads_documents`).
    let _large = crate::storage::large::if_large(std::fs::metadata(path)?.len());
    let refused = read_calls(path, &mut cursor, out).map_err(std::io::Error::other)?;
    Ok((encode_state(&cursor), refused))
}

fn read_calls(path: &Path, cursor: &mut Cursor, out: &mut Vec<Evidence>) -> rusqlite::Result<u64> {
    let connection = open_read_only(path)?;
    if !has_table(&connection, CALLS)? {
        // A store from before the CLI kept its calls: nothing yet.
        *cursor = Cursor::default();
        return Ok(0);
    }
    if let Some(last) = cursor.last {
        let again = connection
            .query_row("SELECT created_at FROM assistant_usage_events WHERE id = ?1", [last.id], |row| {
                Ok(column_time_ms(row, 0))
            })
            .optional()?;
        if again != Some(last.at_ms) {
            // The row is gone or another: the database was made anew.
            cursor.last = None;
        }
    }
    let query = if has_table(&connection, "sessions")? {
        QUERY.replace("{cwd}", "s.cwd").replace("{join}", "LEFT JOIN sessions s ON s.id = u.session_id")
    } else {
        QUERY.replace("{cwd}", "NULL").replace("{join}", "")
    };
    let mut statement = connection.prepare(&query)?;
    let mut rows = statement.query([cursor.last.map_or(i64::MIN, |last| last.id)])?;
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(Provider::Copilot, &mut sessions, &mut models, out);
    let mut named = HashSet::new();
    let mut refused = 0;
    while let Some(row) = rows.next()? {
        // The id is the table's own key: always an integer.
        let Ok(id) = row.get_ref(0)?.as_i64() else { continue };
        cursor.last = Some(LastRow { id, at_ms: column_time_ms(row, 2) });
        refused += u64::from(!read_row(row, id, &mut named, &mut found));
    }
    Ok(refused)
}

/// Whether the database has a table named `table`.
fn has_table(connection: &Connection, table: &str) -> rusqlite::Result<bool> {
    connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [table],
        |row| row.get(0),
    )
}

/// Reads the row of call `id`; `false` when it is refused: no session, no
/// time, or a counter that is neither empty nor a count within Bee's
/// bounds, or cache parts larger than the input they are part of.
fn read_row(row: &rusqlite::Row<'_>, id: i64, named: &mut HashSet<String>, found: &mut Found<'_>) -> bool {
    let (Some(session), Some(at_ms)) = (column_text(row, 1), column_time_ms(row, 2)) else { return false };
    let mut counts = [None; 5];
    for (at, count) in counts.iter_mut().enumerate() {
        *count = match row.get_ref(5 + at) {
            Ok(ValueRef::Null) => None,
            Ok(ValueRef::Integer(n)) => match u64::try_from(n) {
                Ok(n) if n <= MAX_CALL_TOKENS => Some(n),
                _ => return false,
            },
            _ => return false,
        };
    }
    let [input, output, cache_read, cache_write, reasoning] = counts;
    let Some(counters) = counters(column_text(row, 4), input, output, cache_read, cache_write, reasoning) else {
        return false;
    };
    if counters.counts_nothing() {
        // A call that served nothing: no response.
        return true;
    }
    if named.insert(session.to_owned()) {
        found.session(session, column_text(row, 10));
    }
    found.response(key(session, id, at_ms), session, at_ms, column_text(row, 3), counters);
    true
}

/// A row's key: its session, id and time, which a database made anew
/// (numbering its rows from 1 again) does not repeat.
pub(super) fn key(session: &str, id: i64, at_ms: i64) -> String {
    format!("{session}\u{1f}{id}\u{1f}{at_ms}")
}

/// A call's counters as Bee keeps Copilot's (OpenAI's shape: input
/// includes its cached part): input is the row's, the whole prompt; cache
/// reads are its cached input; cache writes are kept beside it, where the
/// API reports them (Anthropic's Messages API, `…/messages`; OpenAI's
/// APIs have none, and a 0 Copilot writes for them is no count), and Bee's
/// columns take them out of input too ([`super::Copilot`]'s `columns`).
/// `None` when the cache parts add up to more than the input they are
/// part of: no call Copilot wrote.
pub(super) fn counters(
    endpoint: Option<&str>,
    input: Option<u64>,
    output: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    reasoning: Option<u64>,
) -> Option<Counters> {
    let writes_reported = endpoint.is_some_and(|endpoint| endpoint.ends_with("/messages"));
    let cache_write = cache_write.filter(|&writes| writes > 0 || writes_reported);
    if let Some(input) = input {
        let cached = cache_read.unwrap_or(0).checked_add(cache_write.unwrap_or(0))?;
        if cached > input {
            return None;
        }
    }
    Some(Counters {
        input_tokens: input,
        cached_input_tokens: cache_read,
        cache_creation_input_tokens: cache_write,
        output_tokens: output,
        reasoning_output_tokens: reasoning,
        ..Counters::default()
    })
}

/// Which of `sessions` the session store at `path` holds calls of, each
/// with the time (ms) of its first call the store holds (`i64::MIN` where
/// that row has none): none when it keeps no table of calls (yet).
pub(super) fn holding(path: &Path, sessions: &BTreeSet<&str>) -> rusqlite::Result<HashMap<String, i64>> {
    let connection = open_read_only(path)?;
    if !has_table(&connection, CALLS)? {
        return Ok(HashMap::new());
    }
    let mut statement = connection
        .prepare("SELECT created_at FROM assistant_usage_events WHERE session_id = ?1 ORDER BY id LIMIT 1")?;
    let mut held = HashMap::new();
    for &session in sessions {
        if let Some(first) = statement.query_row([session], |row| Ok(column_time_ms(row, 0))).optional()? {
            held.insert(session.to_owned(), first.unwrap_or(i64::MIN));
        }
    }
    Ok(held)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, read_whole, rows};

    /// The session store's tables Bee reads, as Copilot CLI 1.0.102 creates
    /// them (`schema_version` 8).
    pub(crate) const SCHEMA: &str = "
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (8);
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY, cwd TEXT, repository TEXT, host_type TEXT, branch TEXT, summary TEXT,
            created_at TEXT DEFAULT (datetime('now')), updated_at TEXT DEFAULT (datetime('now')));
        CREATE TABLE assistant_usage_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            turn_index INTEGER, agent_id TEXT, parent_tool_call_id TEXT,
            model TEXT NOT NULL, copilot_usage_model TEXT,
            input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER,
            reasoning_tokens INTEGER, total_nano_aiu INTEGER, request_multiplier REAL, duration_ms INTEGER,
            time_to_first_token_ms INTEGER, output_ttft_ms REAL, inter_token_latency_ms INTEGER,
            initiator TEXT, api_endpoint TEXT, reasoning_effort TEXT, finish_reason TEXT,
            content_filter_triggered INTEGER, token_details_json TEXT,
            created_at TEXT DEFAULT (datetime('now')));
        CREATE INDEX idx_assistant_usage_events_session ON assistant_usage_events(session_id, id);
    ";

    /// The three rows Copilot CLI 1.0.102 wrote against a mock of each
    /// provider API serving fixed usage (`README.md`: "Sources"), their
    /// sessions run in `/w`.
    pub(crate) const OBSERVED: &str = "
        INSERT INTO sessions (id, cwd) VALUES ('s-chat', '/w'), ('s-responses', '/w'), ('s-messages', '/w');
        INSERT INTO assistant_usage_events (session_id, turn_index, model, input_tokens, output_tokens,
            cache_read_tokens, cache_write_tokens, reasoning_tokens, request_multiplier, initiator, api_endpoint,
            finish_reason, created_at) VALUES
          ('s-chat', 0, 'gpt-4.1', 1000, 200, 400, 0, 50, 0.0, 'user', '/chat/completions', 'stop',
           '2026-12-06T12:29:51.353Z'),
          ('s-responses', 0, 'gpt-5', 1100, 210, 300, 0, 60, 0.0, 'user', '/responses', 'stop',
           '2026-12-06T12:30:05.245Z'),
          ('s-messages', 0, 'claude-sonnet-4-5', 2000, 220, 300, 500, NULL, 0.0, 'user', '/v1/messages', 'stop',
           '2026-12-06T12:30:02.939Z');
    ";

    fn read_all(path: &Path) -> (Vec<crate::ledger::stored::responses::ResponseWrite>, AgentState) {
        read_whole(Provider::Copilot, path, &AgentState::default())
    }

    /// A row of each provider API, in Bee's columns: OpenAI's cached input
    /// is shown once, under cache reads; Anthropic's input, which Copilot
    /// wrote with both caches in it, is shown without them, its cache writes
    /// apart; totals are the whole prompt and the output.
    #[test]
    fn a_row_of_each_api_in_bees_columns() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        db.execute_batch(OBSERVED).unwrap();
        let (writes, _) = read_all(&path);
        let s = Some;
        let key_at =
            |session: &str, id: i64, at: &str| key(session, id, bee_proto::time::parse_rfc3339_ms(at).unwrap());
        assert_eq!(
            rows(Provider::Copilot, &writes),
            [
                (key_at("s-chat", 1, "2026-12-06T12:29:51.353Z"), s(600), None, s(400), s(200), s(50), s(1200)),
                (key_at("s-messages", 3, "2026-12-06T12:30:02.939Z"), s(1200), s(500), s(300), s(220), None, s(2220)),
                (key_at("s-responses", 2, "2026-12-06T12:30:05.245Z"), s(800), None, s(300), s(210), s(60), s(1310)),
            ]
        );
        let messages = writes.iter().find(|w| w.session_id.as_deref() == Some("s-messages")).unwrap();
        assert_eq!(messages.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(messages.at_ms, bee_proto::time::parse_rfc3339_ms("2026-12-06T12:30:02.939Z").unwrap());
        assert!(writes.iter().all(|w| w.is_final && !w.copied));
    }

    /// Each pass reads the rows after the last it read; a store read again
    /// from its start (a lost state) writes the same responses under the
    /// same keys; one made anew, numbering its rows from 1 again, is read
    /// from its start, and its rows are other responses.
    #[test]
    fn rows_are_read_once_by_id_and_again_under_the_same_keys() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        db.execute_batch(OBSERVED).unwrap();
        let (first, state) = read_all(&path);
        assert_eq!(first.len(), 3);
        let (nothing, same) = read_whole(Provider::Copilot, &path, &state);
        assert!(nothing.is_empty());
        assert_eq!(same, state);
        db.execute(
            "INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, cache_read_tokens,
                 cache_write_tokens, reasoning_tokens, api_endpoint, created_at)
             VALUES ('s-chat', 'gpt-4.1', 1020, 202, 400, 0, 50, '/chat/completions', '2026-12-06T12:30:12.674Z')",
            [],
        )
        .unwrap();
        let (next, state) = read_whole(Provider::Copilot, &path, &state);
        assert_eq!(next.len(), 1);
        assert_eq!(
            next[0].key,
            key("s-chat", 4, bee_proto::time::parse_rfc3339_ms("2026-12-06T12:30:12.674Z").unwrap())
        );
        let (again, _) = read_all(&path);
        let keys = |writes: &[crate::ledger::stored::responses::ResponseWrite]| {
            writes.iter().map(|w| w.key.clone()).collect::<BTreeSet<_>>()
        };
        assert_eq!(keys(&again), keys(&first).union(&keys(&next)).cloned().collect());
        assert_eq!(again.iter().filter(|w| first.contains(w)).count(), 3, "the same writes");

        // Made anew (its last row read now another call's): read from the start.
        db.execute_batch(
            "DELETE FROM assistant_usage_events; DELETE FROM sqlite_sequence;
             INSERT INTO sessions (id) VALUES ('s-new');
             INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, api_endpoint, created_at)
             VALUES ('s-new', 'gpt-4.1', 10, 2, '/chat/completions', '2026-12-07T09:00:00.000Z');
             INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, api_endpoint, created_at)
             VALUES ('s-new', 'gpt-4.1', 11, 2, '/chat/completions', '2026-12-07T09:00:01.000Z');
             INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, api_endpoint, created_at)
             VALUES ('s-new', 'gpt-4.1', 12, 2, '/chat/completions', '2026-12-07T09:00:02.000Z');
             INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, api_endpoint, created_at)
             VALUES ('s-new', 'gpt-4.1', 13, 2, '/chat/completions', '2026-12-07T09:00:03.000Z');",
        )
        .unwrap();
        let (anew, _) = read_whole(Provider::Copilot, &path, &state);
        assert_eq!(anew.len(), 4, "every row of the new store");
        assert!(keys(&anew).is_disjoint(&keys(&again)), "none of them an earlier call");
    }

    /// A row whose counter is text, a fraction, negative, past Bee's
    /// bounds or past SQLite's integers (kept as a real), whose cache parts
    /// exceed its input, or with no session or no time is refused and
    /// counted; a row that served nothing is no response; an empty
    /// counter is unknown, and a model that is no text (a blob) an unknown model.
    #[test]
    fn malformed_rows_are_refused_and_counted() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        db.execute_batch("INSERT INTO sessions (id) VALUES ('s1'), ('')").unwrap();
        let insert = |session: &str, input: &str, created: &str| {
            db.execute_batch(&format!(
                "INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, cache_read_tokens,
                     api_endpoint, created_at) VALUES ({session}, 'gpt-4.1', {input}, 10, 0, '/chat/completions', {created})"
            ))
            .unwrap();
        };
        let at = "'2026-12-06T12:00:00.000Z'";
        for input in ["'many'", "1.5", "-1", "10000000001", "99999999999999999999", "x'00'"] {
            insert("'s1'", input, at);
        }
        insert("''", "100", at);
        insert("'s1'", "100", "'yesterday'");
        insert("'s1'", "100", "NULL");
        db.execute_batch(
            "INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, cache_read_tokens,
                 cache_write_tokens, api_endpoint, created_at)
             VALUES ('s1', 'claude-sonnet-4-5', 100, 10, 80, 40, '/v1/messages', '2026-12-06T12:00:01.000Z');
             INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, api_endpoint, created_at)
             VALUES ('s1', 'gpt-4.1', 0, 0, '/chat/completions', '2026-12-06T12:00:02.000Z');
             INSERT INTO assistant_usage_events (session_id, model, input_tokens, output_tokens, api_endpoint, created_at)
             VALUES ('s1', x'00ff', 100, NULL, '/chat/completions', '2026-12-06 12:00:03');",
        )
        .unwrap();
        let mut evidence = Vec::new();
        let reader = crate::ledger::agents::agent(Provider::Copilot).whole_file().unwrap();
        let (_, refused) = reader.read(&path, &AgentState::default(), &mut evidence).unwrap();
        assert_eq!(refused, 10, "six counters, the empty session, two times, the caches past the input");
        let writes = crate::ledger::agents::tests::responses_of(evidence);
        assert_eq!(writes.len(), 1, "{writes:?}");
        assert_eq!((writes[0].model.as_deref(), writes[0].tokens.output_tokens), (None, None));
        assert_eq!(writes[0].at_ms, bee_proto::time::parse_rfc3339_ms("2026-12-06T12:00:03Z").unwrap());
        assert!(writes.iter().all(|w| w.is_valid()));
    }

    /// A store with no calls yet, and one from before the CLI kept them
    /// (no table), hold no response and refuse nothing; neither holds any
    /// session.
    #[test]
    fn an_empty_store_holds_nothing() {
        for schema in [SCHEMA, "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT);"] {
            let (_dir, path, _db) = database(DATABASE, schema);
            let mut evidence = Vec::new();
            let reader = crate::ledger::agents::agent(Provider::Copilot).whole_file().unwrap();
            let (state, refused) = reader.read(&path, &AgentState::default(), &mut evidence).unwrap();
            assert!(evidence.is_empty());
            assert_eq!(refused, 0);
            assert_eq!(decode_state::<Cursor>(&state), Cursor::default());
            assert!(holding(&path, &BTreeSet::from(["s1"])).unwrap().is_empty());
        }
    }

    /// A row's session and its directory are said once per read.
    #[test]
    fn sessions_are_named_with_their_directory() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        db.execute_batch(OBSERVED).unwrap();
        let mut evidence = Vec::new();
        let reader = crate::ledger::agents::agent(Provider::Copilot).whole_file().unwrap();
        reader.read(&path, &AgentState::default(), &mut evidence).unwrap();
        let logged = evidence.iter().filter(|e| matches!(e, Evidence::SessionLogged(..))).count();
        let projects: Vec<_> = evidence
            .iter()
            .filter_map(|e| match e {
                Evidence::SessionProject(project) => Some(project.session_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!((logged, projects), (3, vec!["s-chat", "s-responses", "s-messages"]));
    }
}
