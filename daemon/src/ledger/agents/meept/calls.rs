//! Meept's metrics database (`metrics.db`): table `llm_calls`, one row a
//! provider call, appended after the call (never changed after): `id`
//! (SQLite's autoincrement), `timestamp` (RFC 3339, UTC), `provider` (the
//! provider id of Meept's configuration), `model_id`, `agent_id`,
//! `session_id` (`''` when unknown), `tokens_sent`, `tokens_received`,
//! `tokens_cached` (cache reads), `reasoning_tokens`,
//! `cache_creation_tokens` (cache writes), `error` (1 for a failed call),
//! `error_message`, `latency_ms`, `duration`. `session_id`,
//! `reasoning_tokens` and `cache_creation_tokens` came later (a database
//! Meept made before lacks them; one it upgraded gives its older rows
//! `''` and 0 there), as `agent_id` did: a column the database lacks is
//! read as unknown, never as 0, and the row is still read.
//!
//! One row is one response, keyed by its row id and time (a database made
//! anew numbers its rows from 1 again), dated at `timestamp`, counted in
//! its session (a row without one: in a stand-in session of the Meept
//! agent that made the call). Rows are read by rowid: each pass reads the
//! rows after the last one it read, and a database whose last row read is
//! gone or dated otherwise (made anew) is read from its start again (a
//! row read again adds nothing twice).
//!
//! Meept writes each client's own counts: its Anthropic client's
//! `tokens_sent` is Anthropic's `input_tokens` (without either cache), its
//! OpenAI-compatible client's is `prompt_tokens`, whose cached part is
//! `tokens_cached`. The row does not name the client; [`counters`] tells
//! them apart (see it). Meept writes 0 for a reasoning or cache-write count
//! its provider did not report, so a 0 there is unknown, never 0.
//!
//! Text values are selected within the bound of a name (`?2`): a longer
//! one is never read into memory, and is unknown.

use bee_proto::ledger::Provider;
use bee_proto::ledger::bounds::MAX_TEXT_BYTES;
use bee_proto::usage::Counters;
use rusqlite::params;
use std::collections::HashSet;
use std::path::Path;

use crate::ledger::agents::lines::{Found, LastName, decode_state, encode_state};
use crate::ledger::agents::whole::{
    LastRow, RowidResume, bounded_columns, column_count, column_text, column_time_ms, columns_of, open_read_only,
};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The metrics database's file name, in Meept's home.
pub(super) const DATABASE: &str = "metrics.db";

/// The table of calls.
const CALLS: &str = "llm_calls";

/// The provider id Meept gives its Anthropic client (its
/// `ProviderIDAnthropic`).
const ANTHROPIC: &str = "anthropic";

/// The columns [`read_call`] reads after the rowid, in order, and whether
/// each is text (selected within the bound of a name); then the length of
/// `session_id` (to tell one past the bound from none).
const COLUMNS: [(&str, bool); 11] = [
    ("timestamp", true),
    ("provider", true),
    ("model_id", true),
    ("agent_id", true),
    ("session_id", true),
    ("tokens_sent", false),
    ("tokens_received", false),
    ("tokens_cached", false),
    ("cache_creation_tokens", false),
    ("reasoning_tokens", false),
    ("error", false),
];

/// Whether `path` is a metrics database (by name).
pub(super) fn is_database(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == DATABASE)
}

/// Reads the calls of the metrics database at `path` after where `state`
/// says the last pass stopped: their evidence, where it stops now, and
/// how many rows were refused.
pub(super) fn read(path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
    let mut resume: RowidResume = decode_state(state);
    let refused = read_calls(path, &mut resume, out).map_err(std::io::Error::other)?;
    Ok((encode_state(&resume), refused))
}

fn read_calls(path: &Path, resume: &mut RowidResume, out: &mut Vec<Evidence>) -> rusqlite::Result<u64> {
    let connection = open_read_only(path)?;
    // One snapshot of the database, however Meept writes meanwhile.
    let snapshot = connection.unchecked_transaction()?;
    let present = columns_of(&snapshot, CALLS)?;
    if present.is_empty() {
        // A database from before Meept kept its calls: nothing yet.
        *resume = RowidResume::default();
        return Ok(0);
    }
    let select = select_list(&present);
    // The last row read gone or another: the database was made anew.
    resume.check(&snapshot, "llm_calls", present.contains("timestamp").then_some("timestamp"))?;
    let query = format!("SELECT rowid, {select} FROM llm_calls WHERE rowid > ?1 ORDER BY rowid");
    let mut statement = snapshot.prepare(&query)?;
    // 4 KiB: an SQLite integer whatever the platform.
    let mut rows = statement.query(params![resume.after(), MAX_TEXT_BYTES as i64])?;
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(Provider::Meept, &mut sessions, &mut models, out);
    let mut named = HashSet::new();
    let mut refused = 0;
    while let Some(row) = rows.next()? {
        // The rowid is always an integer.
        let Ok(rowid) = row.get_ref(0)?.as_i64() else { continue };
        resume.last = Some(LastRow { row: rowid, at_ms: column_time_ms(row, 1) });
        refused += u64::from(!read_call(row, rowid, &mut named, &mut found));
    }
    Ok(refused)
}

/// [`COLUMNS`] as a select list: a column the table lacks as `NULL`, a
/// text column within the bound `?2`; then the session id's length.
fn select_list(present: &HashSet<String>) -> String {
    let selected: Vec<String> = bounded_columns(&COLUMNS, present, "")
        .into_iter()
        .chain([if present.contains("session_id") { "octet_length(session_id)" } else { "NULL" }.to_owned()])
        .collect();
    selected.join(", ")
}

/// Reads the row `rowid` (its columns from 1 in [`COLUMNS`]' order);
/// `false` when it is refused: no time, or a session id past any name's
/// length.
fn read_call(row: &rusqlite::Row<'_>, rowid: i64, named: &mut HashSet<String>, found: &mut Found<'_>) -> bool {
    let Some(at_ms) = column_time_ms(row, 1) else { return false };
    let provider = column_text(row, 2);
    let [sent, received, cached, writes, reasoning] = [6, 7, 8, 9, 10].map(|at| column_count(row, at));
    let failed = column_count(row, 11).is_some_and(|error| error != 0);
    let served = [sent, received, cached, writes].iter().any(|count| count.is_some_and(|n| n > 0));
    if failed && !served {
        // A failed call that served nothing (as Meept writes every one):
        // no response.
        return true;
    }
    let counters = if served {
        counters(provider, sent, received, cached, writes, reasoning)
    } else {
        // A call that completed, its provider reporting no usage (Meept
        // writes 0 for what was not reported): a response, its counts unknown.
        Counters::default()
    };
    let agent = column_text(row, 4);
    let session = match column_text(row, 5) {
        Some(session) => session.to_owned(),
        // Past the bound, the session id is no name: refused.
        None if column_count(row, 12).is_some_and(|length| length > MAX_TEXT_BYTES as u64) => return false,
        None => stand_in_session(agent),
    };
    if named.insert(session.clone()) {
        found.session(&session, None);
    }
    found.response(format!("{rowid}\u{1f}{at_ms}"), &session, at_ms, column_text(row, 3), counters);
    true
}

/// The session of a call whose row names none (a database from before
/// Meept kept sessions, or a call outside any conversation): the Meept
/// agent that made it.
fn stand_in_session(agent: Option<&str>) -> String {
    let named = agent.map(|agent| format!("agent:{agent}")).filter(|session| session.len() <= MAX_TEXT_BYTES);
    named.unwrap_or_else(|| "meept".to_owned())
}

/// A call's counters in Bee's columns (Anthropic's shape: input without
/// either cache). Meept's rows do not say which of its clients counted
/// them: its Anthropic client's `tokens_sent` leaves both caches out, its
/// OpenAI-compatible client's includes its cached part. A row is the
/// Anthropic client's when its provider is `anthropic` (Meept picks that
/// client for it), when it has cache writes (only that client writes
/// them), or when its cache reads are more than its input (no prompt
/// holds more cached tokens than it has); otherwise its cache reads are
/// taken out of its input (when a row has none, both readings agree). A
/// row of the Anthropic client under a provider id of another name (a
/// configured provider whose URL is Anthropic's), with no cache writes
/// and fewer cache reads than input, is read as the other client's.
///
/// Cache reads are as written (both clients' providers report them: a 0 is
/// none). A cache-write or reasoning count of 0 is unknown (Meept writes 0
/// for one its provider did not report); reasoning is part of
/// `tokens_received` (OpenAI's `completion_tokens` include it), and one
/// larger than it is no part of it, so unknown.
fn counters(
    provider: Option<&str>,
    sent: Option<u64>,
    received: Option<u64>,
    cached: Option<u64>,
    writes: Option<u64>,
    reasoning: Option<u64>,
) -> Counters {
    let writes = writes.filter(|&writes| writes > 0);
    let leaves_caches_out =
        provider == Some(ANTHROPIC) || writes.is_some() || sent.zip(cached).is_some_and(|(sent, cached)| cached > sent);
    let input =
        if leaves_caches_out { sent } else { sent.zip(cached).and_then(|(sent, cached)| sent.checked_sub(cached)) };
    let reasoning =
        reasoning.filter(|&reasoning| reasoning > 0 && received.is_none_or(|received| reasoning <= received));
    Counters {
        input_tokens: input,
        cache_creation_input_tokens: writes,
        cache_read_input_tokens: cached,
        output_tokens: received,
        reasoning_output_tokens: reasoning,
        ..Counters::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, responses_of};
    use crate::ledger::stored::responses::ResponseWrite;
    use rusqlite::Connection;

    /// `llm_calls` as Meept creates it (its `store.go`, and tokscale's
    /// fixture of the same contract).
    const SCHEMA: &str = "CREATE TABLE llm_calls (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        timestamp TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
        provider TEXT NOT NULL DEFAULT '',
        model_id TEXT NOT NULL DEFAULT '',
        agent_id TEXT NOT NULL DEFAULT '',
        session_id TEXT NOT NULL DEFAULT '',
        tokens_sent INTEGER NOT NULL DEFAULT 0,
        tokens_received INTEGER NOT NULL DEFAULT 0,
        tokens_cached INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens INTEGER NOT NULL DEFAULT 0,
        cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
        error INTEGER NOT NULL DEFAULT 0,
        error_message TEXT NOT NULL DEFAULT '',
        latency_ms INTEGER NOT NULL DEFAULT 0,
        duration REAL NOT NULL DEFAULT 0)";

    /// Meept's `RecordLLMCall`, for a fixture: (timestamp, provider, model,
    /// agent, session, sent, received, cached, cache writes, reasoning, error).
    const INSERT: &str = "INSERT INTO llm_calls (timestamp, provider, model_id, agent_id, session_id,
        tokens_sent, tokens_received, tokens_cached, cache_creation_tokens, reasoning_tokens, error)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

    type Call<'a> = (&'a str, &'a str, &'a str, &'a str, &'a str, i64, i64, i64, i64, i64, i64);

    fn insert(db: &Connection, call: Call<'_>) {
        db.execute(
            INSERT,
            params![call.0, call.1, call.2, call.3, call.4, call.5, call.6, call.7, call.8, call.9, call.10],
        )
        .unwrap();
    }

    /// The calls read from `state` on, what the reader keeps now, and the
    /// rows it refused.
    fn read_from(path: &Path, state: &AgentState) -> (Vec<ResponseWrite>, AgentState, u64) {
        let mut evidence = Vec::new();
        let (state, refused) = read(path, state, &mut evidence).unwrap();
        (responses_of(evidence), state, refused)
    }

    /// A response's raw counters: (key, session, input, cache writes,
    /// cache reads, output, reasoning).
    type Raw = (String, String, Option<u64>, Option<u64>, Option<u64>, Option<u64>, Option<u64>);

    fn raw(writes: &[ResponseWrite]) -> Vec<Raw> {
        writes
            .iter()
            .map(|w| {
                let t = &w.tokens;
                (
                    w.key.clone(),
                    w.session_id.as_deref().unwrap_or("").to_owned(),
                    t.input_tokens,
                    t.cache_creation_input_tokens,
                    t.cache_read_input_tokens,
                    t.output_tokens,
                    t.reasoning_output_tokens,
                )
            })
            .collect()
    }

    /// Meept's own contract fixture (its `tokscale_ingest_test.go`): each
    /// call once, every counter as written, the Anthropic client's input
    /// as its own; the failed call, which served nothing, is none.
    #[test]
    fn each_call_once_every_counter_read() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        insert(
            &db,
            ("2026-09-06T12:00:00Z", "anthropic", "claude-test", "coder", "convA", 1000, 500, 200, 150, 100, 0),
        );
        insert(&db, ("2026-09-06T12:01:00Z", "anthropic", "claude-test", "coder", "convA", 800, 300, 0, 0, 0, 0));
        insert(&db, ("2026-09-06T12:02:00Z", "anthropic", "other-test", "coder", "convA", 100, 40, 0, 0, 0, 0));
        insert(&db, ("2026-09-06T12:03:00Z", "openai", "gpt-test", "reviewer", "convB", 50, 25, 0, 0, 0, 0));
        insert(&db, ("2026-09-06T12:04:00Z", "openai", "gpt-test", "reviewer", "convB", 0, 0, 0, 0, 0, 1));
        let (writes, _, refused) = read_from(&path, &AgentState::default());
        assert_eq!(refused, 0);
        let at = |time: &str| bee_proto::time::parse_rfc3339_ms(time).unwrap();
        let key = |row: i64, time: &str| format!("{row}\u{1f}{}", at(time));
        let s = Some;
        assert_eq!(
            raw(&writes),
            [
                (key(1, "2026-09-06T12:00:00Z"), "convA".into(), s(1000), s(150), s(200), s(500), s(100)),
                (key(2, "2026-09-06T12:01:00Z"), "convA".into(), s(800), None, s(0), s(300), None),
                (key(3, "2026-09-06T12:02:00Z"), "convA".into(), s(100), None, s(0), s(40), None),
                (key(4, "2026-09-06T12:03:00Z"), "convB".into(), s(50), None, s(0), s(25), None),
            ]
        );
        assert_eq!(writes[0].at_ms, at("2026-09-06T12:00:00Z"));
        assert_eq!(writes[0].model.as_deref(), Some("claude-test"));
        assert_eq!(writes[3].model.as_deref(), Some("gpt-test"));
    }

    /// The OpenAI-compatible client's `tokens_sent` includes its cached
    /// part (Meept's `client_usage_store_test.go`: 1000 sent, 800 cached),
    /// taken out; the Anthropic client's under another provider id is told
    /// by its cache writes or by cache reads larger than its input.
    #[test]
    fn each_clients_input_without_its_cache_reads() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        let t = "2026-09-06T12:00:00Z";
        insert(&db, (t, "prov-x", "test-model", "coder", "c1", 1000, 50, 800, 0, 0, 0));
        insert(&db, (t, "zai", "glm-5.1", "coder", "c1", 12, 90, 5000, 0, 0, 0));
        insert(&db, (t, "zai", "glm-5.1", "coder", "c1", 300, 90, 200, 64, 0, 0));
        insert(&db, (t, "openai", "o4-mini", "coder", "c1", 2000, 700, 1500, 0, 512, 0));
        let (writes, _, _) = read_from(&path, &AgentState::default());
        let counts: Vec<_> = raw(&writes).into_iter().map(|(_, _, i, w, r, o, x)| (i, w, r, o, x)).collect();
        let s = Some;
        assert_eq!(
            counts,
            [
                (s(200), None, s(800), s(50), None),
                (s(12), None, s(5000), s(90), None),
                (s(300), s(64), s(200), s(90), None),
                (s(500), None, s(1500), s(700), s(512)),
            ]
        );
    }

    /// A failed call that served tokens is a response (its tokens were
    /// served, as OpenCode's failed message with tokens is); a completed
    /// call whose provider reported no usage is a response whose counts
    /// are unknown, never 0; reasoning larger than the output it is part
    /// of is unknown.
    #[test]
    fn failures_with_tokens_count_and_unreported_usage_is_unknown() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        let t = "2026-09-06T12:00:00Z";
        insert(&db, (t, "anthropic", "claude-test", "coder", "c1", 400, 7, 0, 0, 0, 1));
        insert(&db, (t, "ollama", "qwen3", "coder", "c1", 0, 0, 0, 0, 0, 0));
        insert(&db, (t, "openai", "o4-mini", "coder", "c1", 10, 5, 0, 0, 9, 0));
        let (writes, _, refused) = read_from(&path, &AgentState::default());
        assert_eq!(refused, 0);
        let counts: Vec<_> = raw(&writes).into_iter().map(|(_, _, i, w, r, o, x)| (i, w, r, o, x)).collect();
        let s = Some;
        assert_eq!(
            counts,
            [(s(400), None, s(0), s(7), None), (None, None, None, None, None), (s(10), None, s(0), s(5), None)]
        );
    }

    /// Read again from where it stopped, nothing is added; a call appended
    /// is read alone; a database made anew (its rows numbered from 1 again,
    /// other times) is read from its start.
    #[test]
    fn a_call_read_again_adds_nothing_and_a_new_database_is_read_whole() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        insert(&db, ("2026-09-06T12:00:00Z", "anthropic", "m", "coder", "c1", 10, 1, 0, 0, 0, 0));
        let (first, state, _) = read_from(&path, &AgentState::default());
        assert_eq!(first.len(), 1);
        let (again, state, _) = read_from(&path, &state);
        assert!(again.is_empty(), "nothing written since: nothing read");
        insert(&db, ("2026-09-06T12:05:00Z", "anthropic", "m", "coder", "c1", 20, 2, 0, 0, 0, 0));
        let (appended, state, _) = read_from(&path, &state);
        assert_eq!(raw(&appended).iter().map(|r| r.2).collect::<Vec<_>>(), [Some(20)]);
        // Read from its start, the same keys again: the ledger keeps each once.
        let (whole, _, _) = read_from(&path, &AgentState::default());
        let keys = |writes: &[ResponseWrite]| writes.iter().map(|w| w.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&whole), [keys(&first), keys(&appended)].concat());
        // Made anew: its first row is another call.
        db.execute_batch("DROP TABLE llm_calls").unwrap();
        db.execute_batch(SCHEMA).unwrap();
        insert(&db, ("2026-09-07T08:00:00Z", "anthropic", "m", "coder", "c2", 30, 3, 0, 0, 0, 0));
        let (anew, _, _) = read_from(&path, &state);
        assert_eq!(raw(&anew).iter().map(|r| (r.1.as_str(), r.2)).collect::<Vec<_>>(), [("c2", Some(30))]);
    }

    /// A database from before Meept kept sessions, reasoning and cache
    /// writes (and agents) is read: those are unknown, never 0, and each
    /// call is in its agent's stand-in session.
    #[test]
    fn an_older_database_is_read_with_what_it_lacks_unknown() {
        let (_dir, path, db) = database(
            DATABASE,
            "CREATE TABLE llm_calls (id INTEGER PRIMARY KEY AUTOINCREMENT,
                timestamp TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                provider TEXT NOT NULL DEFAULT '', model_id TEXT NOT NULL DEFAULT '',
                agent_id TEXT NOT NULL DEFAULT '', tokens_sent INTEGER NOT NULL DEFAULT 0,
                tokens_received INTEGER NOT NULL DEFAULT 0, tokens_cached INTEGER NOT NULL DEFAULT 0,
                error INTEGER NOT NULL DEFAULT 0, error_message TEXT NOT NULL DEFAULT '',
                latency_ms INTEGER NOT NULL DEFAULT 0)",
        );
        db.execute_batch(
            "INSERT INTO llm_calls (timestamp, provider, model_id, agent_id, tokens_sent, tokens_received,
                tokens_cached) VALUES ('2026-08-01T09:00:00Z', 'anthropic', 'claude-test', 'coder', 900, 80, 4000);
             INSERT INTO llm_calls (timestamp, provider, model_id, tokens_sent, tokens_received)
                VALUES ('2026-08-01T09:01:00Z', 'openai', 'gpt-test', 60, 6);",
        )
        .unwrap();
        let (writes, _, refused) = read_from(&path, &AgentState::default());
        assert_eq!(refused, 0);
        let rest: Vec<_> = raw(&writes).into_iter().map(|r| (r.1, r.2, r.3, r.4, r.5, r.6)).collect();
        let s = Some;
        assert_eq!(
            rest,
            [
                ("agent:coder".into(), s(900), None, s(4000), s(80), None),
                ("meept".into(), s(60), None, s(0), s(6), None),
            ]
        );
        // Older still: no agent either.
        let (_dir, path, db) = database(
            DATABASE,
            "CREATE TABLE llm_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL,
                provider TEXT, model_id TEXT, tokens_sent INTEGER, tokens_received INTEGER)",
        );
        db.execute_batch("INSERT INTO llm_calls VALUES (1, '2026-07-01T09:00:00Z', 'openai', 'gpt', 5, 1)").unwrap();
        let (writes, _, _) = read_from(&path, &AgentState::default());
        assert_eq!(
            raw(&writes).into_iter().map(|r| (r.1, r.2, r.4)).collect::<Vec<_>>(),
            [("meept".into(), None, None)]
        );
    }

    /// A call without a time, or whose session id is past any name's
    /// length, is refused and the rest read; a counter that is no count is
    /// unknown; a model name past any name's is unknown; a file that is
    /// no database is an error, never a panic.
    #[test]
    fn broken_rows_are_refused_and_the_rest_read() {
        let (_dir, path, db) = database(DATABASE, SCHEMA);
        insert(&db, ("yesterday", "anthropic", "m", "coder", "c1", 10, 1, 0, 0, 0, 0));
        let long = "s".repeat(MAX_TEXT_BYTES + 1);
        insert(&db, ("2026-09-06T12:00:00Z", "anthropic", "m", "coder", &long, 10, 1, 0, 0, 0, 0));
        insert(&db, ("2026-09-06T12:00:01Z", "anthropic", &long, "coder", "c1", 10, 1, 0, 0, 0, 0));
        db.execute(
            "INSERT INTO llm_calls (timestamp, provider, session_id, tokens_sent, tokens_received, tokens_cached)
             VALUES ('2026-09-06T12:00:02Z', 'prov-x', 'c1', 'many', -5, X'FF')",
            [],
        )
        .unwrap();
        insert(&db, ("2026-09-06T12:00:03Z", "anthropic", "m", "coder", "c1", 10, 1, 0, 0, 0, 0));
        let (writes, _, refused) = read_from(&path, &AgentState::default());
        assert_eq!(refused, 2, "no time; a session id past any name's length");
        let rest: Vec<_> = raw(&writes).into_iter().map(|r| (r.2, r.4, r.5)).collect();
        let s = Some;
        assert_eq!(rest, [(s(10), s(0), s(1)), (None, None, None), (s(10), s(0), s(1))]);
        assert_eq!(writes[0].model, None);
        let not_db = path.with_file_name("broken.db");
        std::fs::write(&not_db, b"not a database, only text").unwrap();
        assert!(read(&not_db, &AgentState::default(), &mut Vec::new()).is_err());
    }

    /// A database without the table (Meept's before its first call), and
    /// one whose table is empty, hold nothing.
    #[test]
    fn an_empty_store_holds_nothing() {
        let (_dir, path, _db) = database(DATABASE, "CREATE TABLE metrics_live (id INTEGER PRIMARY KEY)");
        let (writes, state, refused) = read_from(&path, &AgentState::default());
        assert_eq!((writes.len(), refused), (0, 0));
        let (_dir, path, _db) = database(DATABASE, SCHEMA);
        let (writes, state, refused) = read_from(&path, &state);
        assert_eq!((writes.len(), refused), (0, 0));
        assert!(read_from(&path, &state).0.is_empty());
    }
}
