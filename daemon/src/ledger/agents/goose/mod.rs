//! Goose (Block's agent, now AAIF's): its sessions database
//! (`$GOOSE_PATH_ROOT/data/sessions/sessions.db`, by default
//! `~/.local/share/goose/sessions/sessions.db`), which keeps one row a
//! provider call (`usage_ledger`, schema v15 on) and each session's
//! running token totals. `README.md` beside this file describes the
//! format.
//!
//! - [`ledger`]: the reader of one row a call.
//! - [`sessions`]: the reader of one session row, for the sessions no row
//!   a call covers.

pub mod ledger;
pub(crate) mod sessions;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, xdg_data};
use crate::ledger::agents::lines::{Found, LastName};
use crate::ledger::agents::whole::{MAX_DOCUMENT_BYTES, open_read_only};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// Goose, as [`Agent`].
#[derive(Debug)]
pub struct Goose;

/// Goose's reader, whenever the database changes: every row of
/// `usage_ledger`, and the running totals of every session it holds no
/// row of (all of them, in a database from before it), each session's
/// spend read from one of the two, never both.
struct Store;

impl WholeFileReader for Store {
    fn read(&self, path: &Path, _state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let mut read = || -> rusqlite::Result<u64> {
            let mut connection = open_read_only(path)?;
            // One snapshot for both tables: a call Goose records between
            // the two reads moves no session from one to the other.
            let snapshot = connection.transaction()?;
            let (mut sessions, mut models) = (LastName::default(), LastName::default());
            let mut found = Found::new(Provider::Goose, &mut sessions, &mut models, out);
            let mut refused = 0;
            let has_ledger: bool = snapshot.query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
                [ledger::TABLE],
                |row| row.get(0),
            )?;
            if has_ledger {
                let mut statement = snapshot.prepare(ledger::QUERY)?;
                // 64 MiB: an SQLite integer whatever the platform.
                let mut rows = statement.query([MAX_DOCUMENT_BYTES as i64])?;
                let mut reader = ledger::Rows::default();
                while let Some(row) = rows.next()? {
                    refused += u64::from(!reader.read(path, row, &mut found));
                }
            }
            let query = if has_ledger { sessions::UNCOVERED_QUERY } else { sessions::QUERY };
            let mut statement = snapshot.prepare(query)?;
            let mut rows = statement.query([MAX_DOCUMENT_BYTES as i64])?;
            while let Some(row) = rows.next()? {
                refused += u64::from(!sessions::read(path, row, &mut found));
            }
            Ok(refused)
        };
        Ok((AgentState::default(), read().map_err(std::io::Error::other)?))
    }
}

impl Agent for Goose {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Goose,
            title: "Goose",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "its calls one by one before its usage ledger (schema v15): a session from before it is one running total, counted here as one response",
            ),
            // A call's input, output and caches (its usage ledger; a session
            // from before it: running totals of input and output only): no
            // turn, no limit notice, no reasoning apart from output, and its
            // cost not read.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `data/sessions/` of `GOOSE_PATH_ROOT`, else the `goose/sessions/`
    /// directory of `XDG_DATA_HOME` (by default `~/.local/share`).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let dir = match env("GOOSE_PATH_ROOT") {
            Some(root) => Some(PathBuf::from(root).join("data").join("sessions")),
            None => xdg_data(env, "goose").map(|dir| dir.join("sessions")),
        };
        dir.into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "sessions.db")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, env_of, read_whole};
    use crate::ledger::stored::responses::ResponseWrite;

    /// Goose's two tables as its source creates them (schema v15 on), the
    /// columns read and a few around them.
    const SCHEMA: &str = "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
        working_dir TEXT NOT NULL DEFAULT '/w', created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER,
        cache_write_tokens INTEGER, accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER,
        accumulated_output_tokens INTEGER, accumulated_cache_read_tokens INTEGER,
        accumulated_cache_write_tokens INTEGER, accumulated_cost REAL, provider_name TEXT,
        model_config_json TEXT, parent_session_id TEXT);
      CREATE TABLE usage_ledger (id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_timestamp INTEGER NOT NULL, model TEXT, input_tokens INTEGER, output_tokens INTEGER,
        total_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, cost REAL,
        cost_source TEXT, is_compaction INTEGER DEFAULT 0);
      CREATE INDEX idx_usage_ledger_session ON usage_ledger(session_id);";

    /// A session row: id, created, provider, accumulated input, output, total.
    const SESSION: &str = "INSERT INTO sessions (id, created_at, provider_name, model_config_json,
        accumulated_input_tokens, accumulated_output_tokens, accumulated_total_tokens)
        VALUES (?1, ?2, ?3, '{\"model_name\":\"claude-sonnet-4-5\",\"context_limit\":null}', ?4, ?5, ?6)";

    /// A ledger row as Goose's `insert_usage_ledger_row` writes it: session,
    /// unix seconds, model, input, output, total, cache reads, cache
    /// writes, cost source.
    const CALL: &str = "INSERT INTO usage_ledger (session_id, created_timestamp, model, input_tokens,
        output_tokens, total_tokens, cache_read_tokens, cache_write_tokens, cost, cost_source)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0.01, ?9)";

    /// Each response by its key, from the counters the reader wrote: key,
    /// input, cache writes, cache reads, output, time, model. (The total
    /// kept is the ledger's to say, by what the agent's records report.)
    type Part = (String, Option<u64>, Option<u64>, Option<u64>, Option<u64>, i64, Option<String>);

    fn parts(writes: &[ResponseWrite]) -> Vec<Part> {
        let mut parts: Vec<Part> = writes
            .iter()
            .map(|w| {
                let t = &w.tokens;
                let model = w.model.as_deref().map(str::to_owned);
                (
                    w.key.clone(),
                    t.input_tokens,
                    t.cache_creation_input_tokens,
                    t.cache_read_input_tokens,
                    t.output_tokens,
                    w.at_ms,
                    model,
                )
            })
            .collect();
        parts.sort();
        parts
    }

    /// Responses and refused rows of the database at `path`.
    fn read(path: &Path) -> (Vec<ResponseWrite>, u64) {
        let mut evidence = Vec::new();
        let (_, refused) = Store.read(path, &AgentState::default(), &mut evidence).unwrap();
        (crate::ledger::agents::tests::responses_of(evidence), refused)
    }

    fn ms(rfc3339: &str) -> i64 {
        bee_proto::time::parse_rfc3339_ms(rfc3339).unwrap()
    }

    /// Every row a call, read exactly: input without the caches Goose
    /// folds into it, each cache, output, dated when Goose wrote the row,
    /// its own model, keyed by its session and id (two calls of one second
    /// stay two); a row with no cache counted leaves them unknown.
    #[test]
    fn each_call_is_one_response() {
        let (_dir, path, db) = database("sessions.db", SCHEMA);
        db.execute(SESSION, ("20261201_1", "2026-12-01 09:00:00", "anthropic", 12_120, 415, 12_535)).unwrap();
        let at = 1_796_115_600_i64; // 2026-12-01T09:00:00Z
        let call = |model: &str, input: i64, output: i64, reads: Option<i64>, writes: Option<i64>| {
            let total = input + output;
            db.execute(CALL, ("20261201_1", at, model, input, output, total, reads, writes, "provider_reported"))
                .unwrap();
        };
        call("claude-sonnet-4-5", 12_000, 400, Some(9000), Some(1500));
        call("claude-haiku-4-5", 120, 15, None, None);
        let (writes, refused) = read(&path);
        assert_eq!(refused, 0);
        let s = Some;
        let model = |name: &str| Some(name.to_owned());
        assert_eq!(
            parts(&writes),
            [
                (
                    "ledger\u{1f}20261201_1\u{1f}1".into(),
                    s(1500),
                    s(1500),
                    s(9000),
                    s(400),
                    at * 1000,
                    model("claude-sonnet-4-5")
                ),
                (
                    "ledger\u{1f}20261201_1\u{1f}2".into(),
                    s(120),
                    None,
                    None,
                    s(15),
                    at * 1000,
                    model("claude-haiku-4-5")
                ),
            ]
        );
        // Goose's total is input + output, its caches inside input.
        assert!(writes.iter().all(|w| w.tokens.total_tokens.is_none_or(|total| total == 12_400 || total == 135)));
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some("20261201_1")));
    }

    /// A database with both: a session the ledger covers is read from its
    /// rows alone, never its running totals too; one it does not (older,
    /// never resumed) from its totals, as before. The row Goose carries a
    /// session's older spend forward in keeps the key and date its totals
    /// had, so totals read before Goose moved them count once; a later
    /// carried row is a response of its own.
    #[test]
    fn a_session_is_counted_from_its_rows_or_its_totals_never_both() {
        let (_dir, path, db) = database("sessions.db", SCHEMA);
        db.execute(SESSION, ("20261130_1", "2026-11-30 08:00:00", "openai", 5000, 300, 5300)).unwrap();
        db.execute(SESSION, ("20261130_2", "2026-11-30 09:00:00", "openai", 700, 70, 770)).unwrap();
        // Read before Goose kept calls one by one: both sessions' totals.
        let (before, _) = read(&path);
        // Goose upgraded; session 1 resumed: its totals carried forward,
        // then its call, then its totals updated to the rows' sum.
        let at = 1_796_032_800_i64; // 2026-11-30T10:00:00Z
        db.execute(CALL, ("20261130_1", at, None::<String>, 5000, 300, 5300, 0, 0, "carried_forward")).unwrap();
        db.execute(CALL, ("20261130_1", at, "gpt-5.1", 6000, 50, 6050, 4000, None::<i64>, "estimated")).unwrap();
        db.execute(CALL, ("20261130_1", at + 60, None::<String>, 10, 0, 10, 0, 0, "carried_forward")).unwrap();
        db.execute(
            "UPDATE sessions SET accumulated_input_tokens = 11010, accumulated_output_tokens = 350,
                accumulated_total_tokens = 11360 WHERE id = '20261130_1'",
            [],
        )
        .unwrap();
        let (after, refused) = read(&path);
        assert_eq!(refused, 0);
        let s = Some;
        let sonnet = Some("claude-sonnet-4-5".to_owned());
        let created = ms("2026-11-30T08:00:00Z");
        assert_eq!(
            parts(&before),
            [
                ("session\u{1f}20261130_1".into(), s(5000), None, None, s(300), created, sonnet.clone()),
                (
                    "session\u{1f}20261130_2".into(),
                    s(700),
                    None,
                    None,
                    s(70),
                    ms("2026-11-30T09:00:00Z"),
                    sonnet.clone()
                ),
            ]
        );
        assert_eq!(
            parts(&after),
            [
                (
                    "ledger\u{1f}20261130_1\u{1f}2".into(),
                    s(2000),
                    None,
                    s(4000),
                    s(50),
                    at * 1000,
                    Some("gpt-5.1".into())
                ),
                ("ledger\u{1f}20261130_1\u{1f}3".into(), s(10), s(0), s(0), s(0), (at + 60) * 1000, sonnet.clone()),
                ("session\u{1f}20261130_1".into(), s(5000), s(0), s(0), s(300), created, sonnet.clone()),
                ("session\u{1f}20261130_2".into(), s(700), None, None, s(70), ms("2026-11-30T09:00:00Z"), sonnet),
            ]
        );
        // Across both reads, one response a key: the session's older spend
        // once (its fuller write), each call once.
        let keys: std::collections::BTreeSet<_> = before.iter().chain(&after).map(|w| w.key.as_str()).collect();
        assert_eq!(keys.len(), 4);
    }

    /// A database from before the ledger reads every session from its
    /// totals, as before (`sessions::tests` reads them in full).
    #[test]
    fn an_older_database_is_read_from_its_totals() {
        let (_dir, path, db) = database(
            "sessions.db",
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TIMESTAMP, provider_name TEXT,
                model_config_json TEXT, total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
                accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER)",
        );
        db.execute(SESSION, ("20261130_1", "2026-11-30 08:00:00", "openai", 5000, 300, 5300)).unwrap();
        let (writes, refused) = read(&path);
        assert_eq!(refused, 0);
        let s = Some;
        let sonnet = Some("claude-sonnet-4-5".to_owned());
        assert_eq!(
            parts(&writes),
            [("session\u{1f}20261130_1".into(), s(5000), None, None, s(300), ms("2026-11-30T08:00:00Z"), sonnet)]
        );
    }

    /// A malformed row (no session, no time, a counter that is no count,
    /// an id that is not Goose's) is refused and counted, the rest still
    /// read; a row that says nothing is passed over; the rows of a session
    /// run through Claude Code's CLI are Claude Code's, not read here; its
    /// session is covered all the same, its totals not read either.
    #[test]
    fn a_malformed_row_is_refused_and_the_rest_read() {
        let (_dir, path, db) = database("sessions.db", SCHEMA);
        db.execute(SESSION, ("20261201_1", "2026-12-01 09:00:00", "openai", 10, 5, 15)).unwrap();
        db.execute(SESSION, ("20261201_2", "2026-12-01 09:00:00", "claude-code", 10, 5, 15)).unwrap();
        let at = 1_796_115_600_i64;
        let good = || db.execute(CALL, ("20261201_1", at, "gpt-5.1", 10, 5, 15, 0, 0, "estimated")).unwrap();
        good();
        // What a broken or hostile writer may leave, its foreign keys off.
        db.execute_batch(
            "PRAGMA foreign_keys = OFF;
             INSERT INTO usage_ledger (session_id, created_timestamp, input_tokens) VALUES ('', 1796115600, 5);
             INSERT INTO usage_ledger (session_id, created_timestamp, input_tokens) VALUES ('20261201_1', 'soon', 5);
             INSERT INTO usage_ledger (session_id, created_timestamp, input_tokens) VALUES ('20261201_1', 1796115600, 'many');
             INSERT INTO usage_ledger (session_id, created_timestamp, input_tokens) VALUES ('20261201_1', 1796115600, -5);
             INSERT INTO usage_ledger (session_id, created_timestamp, output_tokens) VALUES ('20261201_1', 1796115600, 2.5);
             INSERT INTO usage_ledger (session_id, created_timestamp, input_tokens) VALUES (x'ff00', 1796115600, 5);
             INSERT INTO usage_ledger (session_id, created_timestamp, input_tokens, output_tokens)
                 VALUES ('20261201_1', 1796115600, 0, 0);
             INSERT INTO usage_ledger (session_id, created_timestamp, input_tokens, output_tokens)
                 VALUES ('20261201_2', 1796115600, 10, 5);",
        )
        .unwrap();
        good();
        let (writes, refused) = read(&path);
        assert_eq!(refused, 6);
        let keys: Vec<_> = parts(&writes).into_iter().map(|part| part.0).collect();
        assert_eq!(keys, ["ledger\u{1f}20261201_1\u{1f}1", "ledger\u{1f}20261201_1\u{1f}10"]);
    }

    /// An empty store says nothing and refuses nothing; a file that is no
    /// database is an error of the file, never a panic.
    #[test]
    fn an_empty_store_and_a_broken_file() {
        let (_dir, path, _db) = database("sessions.db", SCHEMA);
        assert_eq!(read(&path), (Vec::new(), 0));
        let (writes, _) = read_whole(Provider::Goose, &path, &AgentState::default());
        assert!(writes.is_empty());
        std::fs::write(&path, b"no database, \xff\xfe and no text either. ".repeat(40)).unwrap();
        let mut evidence = Vec::new();
        assert!(Store.read(&path, &AgentState::default(), &mut evidence).is_err());
        assert!(evidence.is_empty());
    }

    /// `GOOSE_PATH_ROOT`'s `data/sessions/`, else the XDG data directory's
    /// `goose/sessions/` (on macOS too: Goose uses the XDG layout there),
    /// else the home's `.local/share/goose/sessions/`; only `sessions.db`.
    #[test]
    fn its_database_is_where_goose_keeps_it() {
        fn dirs(vars: &'static [(&'static str, &'static str)]) -> Vec<PathBuf> {
            Goose.record_dirs(&env_of(vars))
        }
        assert_eq!(dirs(&[("HOME", "/h")]), [PathBuf::from("/h/.local/share/goose/sessions")]);
        assert_eq!(dirs(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x")]), [PathBuf::from("/x/goose/sessions")]);
        assert_eq!(
            dirs(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x"), ("GOOSE_PATH_ROOT", "/g")]),
            [PathBuf::from("/g/data/sessions")]
        );
        assert!(dirs(&[]).is_empty());
        assert!(Goose.is_record_file(Path::new("/h/.local/share/goose/sessions/sessions.db")));
        assert!(!Goose.is_record_file(Path::new("/h/.local/share/goose/sessions/sessions.db-wal")));
    }
}
