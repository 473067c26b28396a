//! The ledger store: append-only SQLite tables for `call`, `limit` and
//! `work` records and the quota snapshots calls and status lines carry.
//!
//! There is no update or delete path in this code, and triggers refuse both
//! in the database itself. Times are kept as given (RFC 3339 UTC) and as
//! unix milliseconds for window queries; a field the producer did not report
//! is NULL.

use bee_proto::delivery::Issue;
use bee_proto::ledger::{
    CallRecord, CallSource, LedgerAppended, LedgerRecord, Provider, QuotaSnapshot, TurnEdge, TurnMark,
};
use bee_proto::usage::WindowKind;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::ledger::agents;
pub use crate::ledger::stored::evidence::Evidence;
use crate::ledger::stored::evidence::{AgentState, DerivedTurn, FileOffset, SessionCost, Staged};
use crate::ledger::stored::responses::{self, PacksAhead, Prepared};
use crate::ledger::stored::rollup::{self, Summary, Touched};
use crate::ledger::stored::schema::{
    self, Columns, DERIVED_TURN_COLUMNS, LIMIT_COLUMNS, Range, SESSION_COST_COLUMNS, SNAPSHOT_COLUMNS,
    TURN_MARK_COLUMNS, WORK_COLUMNS,
};
use crate::ledger::stored::validate::{InvalidRecord, optional_ms, required_ms, validate, validate_call};
use crate::storage::sqlite::{self, DbError, sql_integer};

/// Database file inside the ledger directory.
pub const DB_FILE: &str = "ledger.sqlite3";
/// Beside the database: written once the ledger holds a record (with the
/// time it was first seen to), so a ledger removed or emptied later is
/// named as lost rather than built again from nothing as a new one.
pub const HELD_FILE: &str = "held-records";
/// Whether the ledger holds any record of any kind.
const HOLDS_ANY_RECORD: &str = "SELECT EXISTS (SELECT 1 FROM response) OR EXISTS (SELECT 1 FROM call) \
     OR EXISTS (SELECT 1 FROM turn_mark) OR EXISTS (SELECT 1 FROM limit_hit) OR EXISTS (SELECT 1 FROM quota_snapshot)";

/// When the ledger at `dir` was first seen to hold records, if it was.
pub fn held_since(dir: &Path) -> Option<String> {
    let text = crate::storage::files::read_text_at_most(&dir.join(HELD_FILE), 64).ok()?;
    Some(text.trim().to_owned()).filter(|at| !at.is_empty())
}

/// What a lost ledger means, and what to do about it.
pub fn lost_reason(dir: &Path, since: &str) -> String {
    format!(
        "the ledger is gone, though it held records (since {since}): the records only beed held — `beectl run` calls, \
         hook-observed turns, limit notices from status lines — are lost with it; restore {} from a backup, or remove \
         {} to let a new ledger be built from the agents' logs",
        dir.join(DB_FILE).display(),
        dir.join(HELD_FILE).display()
    )
}

pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
    -- Clustered by start time: a window is one sequential range of the table.
    CREATE TABLE call (
        record_id                    TEXT NOT NULL UNIQUE,
        source                       TEXT NOT NULL,
        provider                     TEXT NOT NULL,
        started_at_utc               TEXT NOT NULL,
        started_at_ms                INTEGER NOT NULL,
        duration_ms                  INTEGER,
        success                      INTEGER,
        model                        TEXT,
        project_path                 TEXT,
        cost_usd                     REAL,
        input_tokens                 INTEGER,
        cached_input_tokens          INTEGER,
        cache_creation_input_tokens  INTEGER,
        cache_read_input_tokens      INTEGER,
        output_tokens                INTEGER,
        reasoning_output_tokens      INTEGER,
        total_tokens                 INTEGER,
        model_invocations            INTEGER,
        context_window               INTEGER,
        context_tokens               INTEGER,
        compactions                  INTEGER,
        session_id                   TEXT,
        PRIMARY KEY (started_at_ms, record_id)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE quota_snapshot (
        seq             INTEGER PRIMARY KEY NOT NULL,
        call_record_id  TEXT,
        provider        TEXT NOT NULL,
        observed_at_utc TEXT NOT NULL,
        observed_at_ms  INTEGER NOT NULL,
        window          TEXT NOT NULL,
        window_minutes  INTEGER,
        used_percent    REAL NOT NULL,
        resets_at_utc   TEXT,
        resets_at_ms    INTEGER
    ) STRICT;
    CREATE INDEX quota_snapshot_observed ON quota_snapshot (observed_at_ms);
    CREATE TABLE limit_hit (
        seq            INTEGER PRIMARY KEY NOT NULL,
        record_id      TEXT NOT NULL UNIQUE,
        provider       TEXT NOT NULL,
        at_utc         TEXT NOT NULL,
        at_ms          INTEGER NOT NULL,
        resets_at_utc  TEXT,
        detection      TEXT NOT NULL,
        window         TEXT
    ) STRICT;
    CREATE INDEX limit_hit_at ON limit_hit (at_ms);
    CREATE TABLE work (
        seq          INTEGER PRIMARY KEY NOT NULL,
        record_id    TEXT NOT NULL UNIQUE,
        provider     TEXT NOT NULL,
        at_utc       TEXT NOT NULL,
        at_ms        INTEGER NOT NULL,
        commit_hash  TEXT NOT NULL,
        run_mode     TEXT NOT NULL,
        task_id      TEXT NOT NULL
    ) STRICT;
    CREATE INDEX work_at ON work (at_ms);
    CREATE TRIGGER call_no_update BEFORE UPDATE ON call BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER call_no_delete BEFORE DELETE ON call BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER snapshot_no_update BEFORE UPDATE ON quota_snapshot BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER snapshot_no_delete BEFORE DELETE ON quota_snapshot BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER limit_no_update BEFORE UPDATE ON limit_hit BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER limit_no_delete BEFORE DELETE ON limit_hit BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER work_no_update BEFORE UPDATE ON work BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER work_no_delete BEFORE DELETE ON work BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
"#,
    r#"
    CREATE TABLE ingest_offset (
        path        TEXT PRIMARY KEY NOT NULL,
        dev         INTEGER NOT NULL,
        ino         INTEGER NOT NULL,
        offset      INTEGER NOT NULL,
        session_id  TEXT,
        model       TEXT
    ) STRICT;
"#,
    r#"
    CREATE TABLE turn_mark (
        seq              INTEGER PRIMARY KEY NOT NULL,
        edge             TEXT NOT NULL,
        session_id       TEXT NOT NULL,
        at_utc           TEXT NOT NULL,
        at_ms            INTEGER NOT NULL,
        transcript_path  TEXT,
        cwd              TEXT
    ) STRICT;
    CREATE INDEX turn_mark_session ON turn_mark (session_id, at_ms);
    CREATE TRIGGER turn_mark_no_update BEFORE UPDATE ON turn_mark BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER turn_mark_no_delete BEFORE DELETE ON turn_mark BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
"#,
    rollup::MIGRATION,
    // A checksum per record, checked whenever the record is read; records a
    // writer found damaged are listed, so every view can say `corrupt`.
    r#"
    ALTER TABLE call ADD COLUMN crc INTEGER;
    ALTER TABLE quota_snapshot ADD COLUMN crc INTEGER;
    ALTER TABLE limit_hit ADD COLUMN crc INTEGER;
    ALTER TABLE work ADD COLUMN crc INTEGER;
    ALTER TABLE turn_mark ADD COLUMN crc INTEGER;
    CREATE TABLE damaged_record (
        tbl       TEXT NOT NULL,
        key       TEXT NOT NULL,
        found_ms  INTEGER NOT NULL,
        PRIMARY KEY (tbl, key)
    ) STRICT, WITHOUT ROWID;
"#,
    // Responses become the token evidence (see `responses`): the logs are
    // read once more into them, ingested calls leave every figure, and the
    // usage aggregates are recomputed with their unknown and pending parts.
    r#"
    CREATE TABLE response (
        digest                       INTEGER NOT NULL,
        key_hash                     INTEGER NOT NULL,
        provider                     TEXT NOT NULL,
        response_key                 TEXT NOT NULL,
        session_id                   TEXT,
        at_utc                       TEXT NOT NULL,
        at_ms                        INTEGER NOT NULL,
        model                        TEXT,
        input_tokens                 INTEGER,
        cached_input_tokens          INTEGER,
        cache_creation_input_tokens  INTEGER,
        cache_read_input_tokens      INTEGER,
        output_tokens                INTEGER,
        reasoning_output_tokens      INTEGER,
        total_tokens                 INTEGER,
        context_tokens               INTEGER,
        context_window               INTEGER,
        final                        INTEGER NOT NULL,
        crc                          INTEGER,
        -- The same write read again (another pass, the same line) is stored
        -- once: its time and digest (which names its response) are the same.
        PRIMARY KEY (at_ms, digest)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX response_key_hash ON response (key_hash);
    CREATE TRIGGER response_no_update BEFORE UPDATE ON response BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER response_no_delete BEFORE DELETE ON response BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;

    -- Sessions some log told about: their producer calls' own counters no
    -- longer stand in for them.
    CREATE TABLE logged_session (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;
    DROP TABLE measured_session;
    -- From now on: where a session's producer calls lie.
    DELETE FROM session_span;
    INSERT INTO session_span
        SELECT provider, session_id, MIN(started_at_ms), MAX(started_at_ms + MIN(COALESCE(duration_ms, 0), 604800000))
        FROM call WHERE source != 'ingested' AND session_id IS NOT NULL GROUP BY provider, session_id;

    DROP TABLE rollup_usage;
    CREATE TABLE rollup_usage (
        grouping                     TEXT NOT NULL,
        hour_ms                      INTEGER NOT NULL,
        key                          TEXT,
        responses                    INTEGER NOT NULL,
        input_tokens                 INTEGER,
        cached_input_tokens          INTEGER,
        cache_creation_input_tokens  INTEGER,
        cache_read_input_tokens      INTEGER,
        output_tokens                INTEGER,
        reasoning_output_tokens      INTEGER,
        total_tokens                 INTEGER,
        partial_parts                INTEGER NOT NULL,
        pending_responses            INTEGER NOT NULL,
        producer_calls               INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX rollup_usage_hour ON rollup_usage (grouping, hour_ms);
    INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT DISTINCT hour_ms FROM rollup_time;

    ALTER TABLE ingest_offset ADD COLUMN usage_records INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE ingest_offset ADD COLUMN turn_ms INTEGER;
    ALTER TABLE ingest_offset ADD COLUMN turn_end_ms INTEGER;
    DELETE FROM ingest_offset;

    -- Turns no producer measured, as the logs' own timestamps show them; a
    -- longer one for the same start supersedes the shorter (append-only).
    CREATE TABLE derived_turn (
        provider       TEXT NOT NULL,
        session_id     TEXT NOT NULL,
        started_at_ms  INTEGER NOT NULL,
        ended_at_ms    INTEGER NOT NULL,
        crc            INTEGER,
        PRIMARY KEY (started_at_ms, provider, session_id, ended_at_ms)
    ) STRICT, WITHOUT ROWID;
    CREATE TRIGGER derived_turn_no_update BEFORE UPDATE ON derived_turn BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER derived_turn_no_delete BEFORE DELETE ON derived_turn BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    -- Producer calls by session: whether one measured a derived turn.
    CREATE INDEX call_session ON call (provider, session_id, started_at_ms);

    -- A session's cumulative cost as its CLI wrote it in its log (Claude
    -- Code's cost-state lines); the cost of a range is the growth in it.
    CREATE TABLE session_cost (
        provider    TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        at_ms       INTEGER NOT NULL,
        total_usd   REAL NOT NULL,
        crc         INTEGER,
        PRIMARY KEY (provider, session_id, at_ms, total_usd)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX session_cost_at ON session_cost (at_ms);
    CREATE TRIGGER session_cost_no_update BEFORE UPDATE ON session_cost BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER session_cost_no_delete BEFORE DELETE ON session_cost BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    -- Sessions whose log reports their cost: producers' costs for them are
    -- not added again.
    CREATE TABLE costed_session (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;

    -- Grown columns (NULL in older records, outside their checksums).
    ALTER TABLE call ADD COLUMN outcome TEXT;
    ALTER TABLE limit_hit ADD COLUMN window_minutes INTEGER;
    ALTER TABLE limit_hit ADD COLUMN limit_id TEXT;
    ALTER TABLE limit_hit ADD COLUMN session_id TEXT;
    ALTER TABLE quota_snapshot ADD COLUMN limit_id TEXT;
"#,
    rollup::PART_MIGRATION,
    responses::PACK_MIGRATION,
    rollup::PART_PACK_MIGRATION,
    AGENT_STATE_MIGRATION,
    SESSION_PROJECT_MIGRATION,
    KNOWN_TOTAL_MIGRATION,
    CHANGE_MIGRATION,
    AGENT_COST_MIGRATION,
    TURN_AGENT_MIGRATION,
];

/// What a reader that keeps figures needs to learn what moved, without
/// reading the records (triggers, so no writer can forget them):
///
/// - each hour an append makes dirty is numbered with that change, the
///   numbers rising: the exporter keeps each series' total over past hours
///   and reads again only what changed ([`Reader::hours_changed_since`]);
/// - each table's record count, kept as records are inserted: the
///   exporter's cursor at every send ([`store_status`]) without counting a
///   million rows.
const CHANGE_MIGRATION: &str = r#"
    CREATE TABLE IF NOT EXISTS hour_change (
        hour_ms INTEGER PRIMARY KEY NOT NULL,
        change  INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX IF NOT EXISTS hour_change_change ON hour_change (change);
    -- An update, then an insert of a new hour: the marking statement's own
    -- conflict policy (OR IGNORE) would override a REPLACE in here.
    CREATE TRIGGER IF NOT EXISTS rollup_dirty_change AFTER INSERT ON rollup_dirty BEGIN
        UPDATE hour_change SET change = (SELECT MAX(change) + 1 FROM hour_change) WHERE hour_ms = NEW.hour_ms;
        INSERT OR IGNORE INTO hour_change (hour_ms, change)
        VALUES (NEW.hour_ms, (SELECT COALESCE(MAX(change), 0) + 1 FROM hour_change));
    END;
    CREATE TABLE IF NOT EXISTS record_count (
        tbl TEXT PRIMARY KEY NOT NULL,
        n   INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;
    INSERT OR REPLACE INTO record_count (tbl, n) VALUES
        ('call', (SELECT COUNT(*) FROM call)),
        ('response', (SELECT COUNT(*) FROM response)),
        ('quota_snapshot', (SELECT COUNT(*) FROM quota_snapshot)),
        ('limit_hit', (SELECT COUNT(*) FROM limit_hit)),
        ('work', (SELECT COUNT(*) FROM work)),
        ('session_cost', (SELECT COUNT(*) FROM session_cost)),
        ('derived_turn', (SELECT COUNT(*) FROM derived_turn)),
        ('response_pack', (SELECT COALESCE(SUM(writes), 0) FROM response_pack));
    CREATE TRIGGER IF NOT EXISTS call_counted AFTER INSERT ON call BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'call'; END;
    CREATE TRIGGER IF NOT EXISTS response_counted AFTER INSERT ON response BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'response'; END;
    CREATE TRIGGER IF NOT EXISTS quota_snapshot_counted AFTER INSERT ON quota_snapshot BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'quota_snapshot'; END;
    CREATE TRIGGER IF NOT EXISTS limit_hit_counted AFTER INSERT ON limit_hit BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'limit_hit'; END;
    CREATE TRIGGER IF NOT EXISTS work_counted AFTER INSERT ON work BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'work'; END;
    CREATE TRIGGER IF NOT EXISTS session_cost_counted AFTER INSERT ON session_cost BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'session_cost'; END;
    CREATE TRIGGER IF NOT EXISTS derived_turn_counted AFTER INSERT ON derived_turn BEGIN
        UPDATE record_count SET n = n + 1 WHERE tbl = 'derived_turn'; END;
    CREATE TRIGGER IF NOT EXISTS response_pack_counted AFTER INSERT ON response_pack BEGIN
        UPDATE record_count SET n = n + NEW.writes WHERE tbl = 'response_pack'; END;
"#;

/// A view's row sums the known parts of a response with a part of unknown
/// size into its total too (`responses::with_known_total`), so its columns
/// add up: every hour's aggregates are made again from the records.
const KNOWN_TOTAL_MIGRATION: &str = r#"
    INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT DISTINCT hour_ms FROM rollup_time;
"#;

/// A session's project as its log says it (Codex names its working
/// directory in `session_meta`), first word kept. Codex rollouts already
/// read are read again once from their start, so their sessions get their
/// projects; that adds nothing twice (record ids and response digests come
/// from what the agents logged).
const SESSION_PROJECT_MIGRATION: &str = r#"
    CREATE TABLE IF NOT EXISTS session_project (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        project    TEXT NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;
    DELETE FROM ingest_offset WHERE path LIKE '%rollout-%';
"#;

/// Each file's resume state becomes its agent's own (`agent_state`, see
/// [`AgentState`]) in place of the columns only Codex's reader used. The
/// old states are not carried over: every file is read again from its
/// start once, which adds nothing twice (record ids and response digests
/// come from what the agents logged, as for a rotated file).
const AGENT_STATE_MIGRATION: &str = r#"
    CREATE TABLE ingest_offset_by_agent (
        path         TEXT PRIMARY KEY NOT NULL,
        dev          INTEGER NOT NULL,
        ino          INTEGER NOT NULL,
        offset       INTEGER NOT NULL,
        agent_state  TEXT
    ) STRICT;
    DROP TABLE ingest_offset;
    ALTER TABLE ingest_offset_by_agent RENAME TO ingest_offset;
"#;

/// Readers now mark the writes a session holds as copies of another
/// session's responses and carry the cost an agent wrote beside each
/// response (`responses::ResponseWrite`), and an hour's usage parts keep
/// both, with their first and last response times (`part_pack` format 2).
/// Every file is read again once from its start: a write that now carries
/// a mark or a cost is stored beside the one stored before (the merge takes
/// both), and anything else read again adds nothing twice (record ids and
/// response digests come from what the agents logged). Every hour's
/// aggregates are made again.
const AGENT_COST_MIGRATION: &str = r#"
    DELETE FROM ingest_offset;
    INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT hour_ms FROM rollup_parts;
    INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT DISTINCT hour_ms FROM rollup_time;
"#;

/// Turn marks of other agents than Claude Code name theirs (Gemini CLI's
/// and Qwen Code's hooks mark turns too): a mark with no row here is
/// Claude Code's, as every mark before was. A table of its own, so that
/// no mark's checksum changes.
const TURN_AGENT_MIGRATION: &str = r#"
    CREATE TABLE IF NOT EXISTS turn_mark_agent (
        seq       INTEGER PRIMARY KEY NOT NULL,
        provider  TEXT NOT NULL
    ) STRICT;
    CREATE TRIGGER IF NOT EXISTS turn_mark_agent_no_update BEFORE UPDATE ON turn_mark_agent
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER IF NOT EXISTS turn_mark_agent_no_delete BEFORE DELETE ON turn_mark_agent
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
"#;

static INSERT_CALL: LazyLock<String> =
    LazyLock::new(|| schema::CALL_COLUMNS.insert_sql("call", "ON CONFLICT (record_id) DO NOTHING"));
static INSERT_LIMIT: LazyLock<String> =
    LazyLock::new(|| LIMIT_COLUMNS.insert_sql("limit_hit", "ON CONFLICT (record_id) DO NOTHING"));
static INSERT_WORK: LazyLock<String> =
    LazyLock::new(|| WORK_COLUMNS.insert_sql("work", "ON CONFLICT (record_id) DO NOTHING"));
static INSERT_SNAPSHOT: LazyLock<String> = LazyLock::new(|| SNAPSHOT_COLUMNS.insert_sql("quota_snapshot", ""));
static INSERT_TURN_MARK: LazyLock<String> = LazyLock::new(|| TURN_MARK_COLUMNS.insert_sql("turn_mark", ""));
static INSERT_DERIVED_TURN: LazyLock<String> =
    LazyLock::new(|| DERIVED_TURN_COLUMNS.insert_sql("derived_turn", "ON CONFLICT DO NOTHING"));
static INSERT_SESSION_COST: LazyLock<String> =
    LazyLock::new(|| SESSION_COST_COLUMNS.insert_sql("session_cost", "ON CONFLICT DO NOTHING"));

/// Appends one record row of a table with `columns` (`sql` built from
/// them) with the checksum of its values. The number of rows inserted.
pub(crate) fn insert_row(
    tx: &Connection,
    columns: Columns,
    sql: &str,
    values: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<usize> {
    let crc = sqlite::params_crc_grown(values, columns.base_count())?;
    let mut all: Vec<&dyn rusqlite::ToSql> = values.to_vec();
    all.push(&crc);
    tx.prepare_cached(sql)?.execute(all.as_slice())
}

/// The ledger as its one writer (beed) holds it.
pub struct Ledger {
    db: sqlite::Writer,
    /// Told after every commit that added a record: live views wait on it
    /// instead of asking again and again.
    on_change: Option<Box<dyn Fn() + Send>>,
    /// The ledger's directory, and whether [`HELD_FILE`] says it holds records.
    dir: PathBuf,
    held_noted: bool,
}

/// The schema (and rows) every migration builds, as SQL written at once
/// for a new store: altering tables step by step costs SQLite a reading of
/// the whole schema each time, and a new store's first import waits for
/// it. Generated from a migrated store; a test holds the two equal.
const LATEST_SCHEMA: &str = include_str!("schema.sql");

/// How a first pass's bulk load writes ([`Ledger::begin_bulk_load`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BulkJournal {
    /// Straight into the database file, behind a rollback journal.
    Rollback,
    /// Into the WAL, copied into the database at the end.
    Wal,
}

impl Ledger {
    pub fn open(dir: &Path) -> Result<Ledger, DbError> {
        // A ledger that held records and is gone is a loss to name, never a
        // new empty ledger built in its place without a word.
        let db_file = dir.join(DB_FILE);
        if let Some(since) = held_since(dir) {
            let emptied = std::fs::symlink_metadata(&db_file).is_ok_and(|meta| meta.is_file() && meta.len() == 0);
            let gone =
                matches!(crate::storage::files::classify(&db_file), Ok(crate::storage::files::PathKind::Missing));
            if emptied || gone {
                let lost = lost_reason(dir, &since);
                let reason = if emptied { format!("it was emptied (0 bytes): {lost}") } else { lost };
                return Err(DbError::Corrupt { path: db_file, reason });
            }
        }
        let db = sqlite::open_writer_at(dir, DB_FILE, MIGRATIONS, Some(LATEST_SCHEMA))?;
        let mut ledger = Ledger { db, on_change: None, dir: dir.to_owned(), held_noted: held_since(dir).is_some() };
        if !ledger.held_noted && ledger.db.conn.query_row(HOLDS_ANY_RECORD, [], |row| row.get::<_, bool>(0))? {
            ledger.note_held();
        }
        // Ingestion appends tens of thousands of calls a pass, and record ids
        // are random: every commit touches pages all over the id index. A
        // 64 MiB page cache keeps them in memory instead of re-reading them
        // from the file at each commit.
        ledger.db.conn.pragma_update(None, "cache_size", -65_536)?;
        // The response index an earlier version's first pass dropped, if it
        // stopped before building it again.
        ledger.db.conn.execute_batch(RESPONSE_KEY_INDEX)?;
        Ok(ledger)
    }

    /// Writes [`HELD_FILE`]: from now on, this ledger gone is a loss.
    fn note_held(&mut self) {
        let at = bee_proto::time::format_rfc3339(std::time::SystemTime::now());
        // As durable as the commit it follows (the ledger syncs at its
        // checkpoints, not at each commit).
        match crate::storage::files::write_private_unsynced(&self.dir.join(HELD_FILE), at.as_bytes()) {
            Ok(()) => self.held_noted = true,
            Err(err) => tracing::warn!(error = %err, "the ledger's note that it holds records not written"),
        }
    }

    /// Appends `records` in one transaction; a record id seen before is a
    /// duplicate. The aggregates of the hours they touch are settled right
    /// after: producers append a few records at a time.
    pub fn append(&mut self, records: &[LedgerRecord]) -> Result<LedgerAppended, DbError> {
        // Records need no preparing: staged as they are, copied once.
        let staged: Vec<Staged> =
            records.iter().cloned().map(|record| Staged::Other(Evidence::Record(record))).collect();
        let (appended, _) = self.append_staged(&staged, &[], || None)?;
        self.settle();
        Ok(appended)
    }

    /// Appends beed's own evidence (say Claude Code's telemetry) in one
    /// transaction and settles the hours it touched, as [`Ledger::append`]
    /// does for producers' records.
    pub fn append_evidence(&mut self, evidence: &[Evidence]) -> Result<LedgerAppended, DbError> {
        let appended = self.append_at(evidence, &[])?;
        self.settle();
        Ok(appended)
    }

    /// Brings the aggregates up to date with the records. A failure leaves
    /// hours dirty, which readers then take from the records: logged, not
    /// returned, because the records themselves are safe.
    pub fn settle(&mut self) {
        if let Err(err) = rollup::settle(&self.db.conn) {
            tracing::warn!(error = %err, "ledger aggregates not settled; views read those hours from the records");
        }
    }

    /// Settles from the responses an ingestion pass held (see
    /// [`rollup::settle_held`]); logged like [`Ledger::settle`].
    pub(crate) fn settle_held(&mut self, held: &mut rollup::HeldResponses, written: u64) {
        if let Err(err) = rollup::settle_held(&self.db.conn, held, written) {
            tracing::warn!(error = %err, "ledger aggregates not settled; views read those hours from the records");
        }
    }

    /// Before a first ingestion pass fills a store that holds no response
    /// yet: written through a rollback journal when no other connection
    /// has the store open ([`sqlite::Writer::leave_wal`]), else through
    /// the WAL, copied into the database once at the end rather than each
    /// time it grows past its checkpoint size (a pass rewrites the same
    /// pages commit after commit).
    pub(crate) fn begin_bulk_load(&mut self) -> Result<BulkJournal, DbError> {
        if self.db.leave_wal() {
            return Ok(BulkJournal::Rollback);
        }
        self.db.conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        Ok(BulkJournal::Wal)
    }

    /// Ends [`Ledger::begin_bulk_load`], whatever became of the pass: back
    /// in WAL mode, or checkpointing as usual again with the WAL copied
    /// into the database now rather than at the next commit.
    pub(crate) fn end_bulk_load(&mut self, journal: BulkJournal) -> Result<(), DbError> {
        match journal {
            BulkJournal::Rollback => self.db.return_to_wal(),
            BulkJournal::Wal => {
                self.resume_checkpoints()?;
                Ok(sqlite::checkpoint(&self.db.conn)?)
            }
        }
    }

    /// Checkpoints again whenever the WAL grows past its usual size, as
    /// before a bulk load.
    pub(crate) fn resume_checkpoints(&mut self) -> Result<(), DbError> {
        Ok(self.db.conn.pragma_update(None, "wal_autocheckpoint", sqlite::WAL_AUTOCHECKPOINT_PAGES)?)
    }

    /// A connection to checkpoint the ledger on while this one writes
    /// ([`sqlite::Writer::checkpointer`]).
    pub(crate) fn checkpointer(&self) -> Result<sqlite::Checkpointer, DbError> {
        self.db.checkpointer()
    }

    #[cfg(test)]
    pub(crate) fn db_conn(&self) -> &rusqlite::Connection {
        &self.db.conn
    }

    /// Whether no response was ever stored.
    pub(crate) fn holds_no_response(&self) -> Result<bool, DbError> {
        Ok(self.db.conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM response_write)", [], |row| row.get(0))?)
    }

    /// Where ingestion stopped in each file it read.
    pub fn offsets(&self) -> Result<HashMap<String, FileOffset>, DbError> {
        Ok(read_offsets(&self.db.conn, u32::MAX)?)
    }

    /// Appends `records` and, in the same transaction, moves the offsets of
    /// the files they were read from (in order; a later one for the same file
    /// wins): what was ingested and where to resume can never disagree.
    pub fn append_at(
        &mut self,
        evidence: &[Evidence],
        offsets: &[(String, FileOffset)],
    ) -> Result<LedgerAppended, DbError> {
        let staged: Vec<Staged> = evidence.iter().cloned().map(Staged::of).collect::<Result<_, _>>()?;
        self.append_staged(&staged, offsets, || None).map(|(answer, _)| answer)
    }

    /// The number of the store's last response pack (0 for none), as
    /// [`PacksAhead::encode`] takes it.
    pub(crate) fn last_pack(&self) -> Result<i64, DbError> {
        Ok(responses::last_pack(&self.db.conn)?)
    }

    /// [`Ledger::append_at`] of staged evidence, and how many response
    /// writes were new. `packs_ahead` may give their packs encoded already
    /// (see [`PacksAhead`]).
    pub(crate) fn append_staged<'e>(
        &mut self,
        evidence: impl IntoIterator<Item = &'e Staged>,
        offsets: &[(String, FileOffset)],
        packs_ahead: impl FnOnce() -> Option<PacksAhead>,
    ) -> Result<(LedgerAppended, u64), DbError> {
        let tx = self.db.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        for (path, at) in offsets {
            exec(
                &tx,
                "INSERT INTO ingest_offset (path, dev, ino, offset, agent_state) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (path) DO UPDATE SET dev = ?2, ino = ?3, offset = ?4, agent_state = ?5",
                params![path, at.dev as i64, at.ino as i64, at.offset as i64, at.state.0],
            )?;
        }
        let mut answer = LedgerAppended { appended: 0, duplicates: 0 };
        let mut touched = Touched::default();
        // Response writes go in by their key, (time, digest): neighbours in
        // the table are written together, each page once per batch.
        let mut writes: Vec<&Prepared> = Vec::new();
        let mut count = |inserted: bool| {
            if inserted {
                answer.appended += 1;
            } else {
                answer.duplicates += 1;
            }
        };
        for item in evidence {
            match item {
                Staged::Response(prepared) => {
                    if let Some(session) = &prepared.write.session_id {
                        touched.logged(prepared.write.provider, session);
                    }
                    writes.push(prepared);
                }
                Staged::Other(Evidence::Record(record)) => {
                    validate(record).map_err(|err| DbError::Invalid(err.0))?;
                    count(insert(&tx, record, &mut touched)?);
                }
                Staged::Other(Evidence::Response(_)) => return Err(DbError::Invalid("a response write not prepared")),
                Staged::Other(Evidence::SessionLogged(provider, session)) => touched.logged(*provider, session),
                Staged::Other(Evidence::SessionProject(project)) => {
                    tx.prepare_cached(
                        "INSERT OR IGNORE INTO session_project (provider, session_id, project) VALUES (?1, ?2, ?3)",
                    )?
                    .execute(params![
                        project.provider.as_str(),
                        project.session_id,
                        project.project
                    ])?;
                }
                Staged::Other(Evidence::Turn(turn)) => count(insert_turn(&tx, turn, &mut touched)?),
                Staged::Other(Evidence::SessionCost(cost)) => count(insert_cost(&tx, cost, &mut touched)?),
                Staged::Other(Evidence::TimedRequest(call)) => {
                    if call.source != CallSource::ApiRequest {
                        return Err(DbError::Invalid("a timed request's source"));
                    }
                    validate_call(call).map_err(|err| DbError::Invalid(err.0))?;
                    count(insert_call(&tx, call, &mut touched)?);
                }
            }
        }
        let (fresh, duplicates) = responses::store(&tx, writes, packs_ahead)?;
        fresh.iter().for_each(|write| touched.response(write.write.at_ms));
        answer.appended += fresh.len() as u64;
        answer.duplicates += duplicates;
        let responses = fresh.len() as u64;
        touched.write(&tx)?;
        tx.commit()?;
        if answer.appended > 0 && !self.held_noted {
            self.note_held();
        }
        if answer.appended > 0
            && let Some(on_change) = &self.on_change
        {
            on_change();
        }
        Ok((answer, responses))
    }

    /// `on_change` is called after every commit that added a record.
    pub fn on_change(&mut self, on_change: Box<dyn Fn() + Send>) {
        self.on_change = Some(on_change);
    }
}

/// The index a response's rows (stored before packs) are found by
/// ([`crate::ledger::stored::responses::ResponseWrite::key_hash`]).
const RESPONSE_KEY_INDEX: &str = "CREATE INDEX IF NOT EXISTS response_key_hash ON response (key_hash);";

/// A producer call now measures the derived turns of its session that it
/// overlaps: they leave the aggregates of every hour they lie in.
fn mark_derived_turns(
    tx: &rusqlite::Transaction<'_>,
    provider: Provider,
    session: &str,
    started_ms: i64,
    duration_ms: Option<u64>,
    touched: &mut Touched,
) -> Result<(), DbError> {
    let end = started_ms.saturating_add(duration_ms.map_or(0, sql_integer).min(schema::MAX_CALL_MS));
    let mut turns = tx.prepare_cached(
        "SELECT started_at_ms, MAX(ended_at_ms) FROM derived_turn
         WHERE started_at_ms >= ?1 AND started_at_ms < ?2 AND provider = ?3 AND session_id = ?4
         GROUP BY started_at_ms",
    )?;
    let spans: Vec<(i64, i64)> = turns
        .query_map(
            params![
                started_ms.saturating_sub(schema::MAX_CALL_MS),
                end.max(started_ms + 1),
                provider.as_str(),
                session
            ],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?
        .collect::<rusqlite::Result<_>>()?;
    for (start, turn_end) in spans.into_iter().filter(|(_, turn_end)| *turn_end >= started_ms) {
        touched.derived(start, turn_end);
    }
    Ok(())
}

/// Appends a session's cumulative cost unless the same one is stored.
fn insert_cost(tx: &rusqlite::Transaction<'_>, cost: &SessionCost, touched: &mut Touched) -> Result<bool, DbError> {
    let inserted = insert_row(
        tx,
        SESSION_COST_COLUMNS,
        &INSERT_SESSION_COST,
        params![cost.provider.as_str(), cost.session_id, cost.at_ms, cost.total_usd],
    )? == 1;
    touched.costed(cost.provider, &cost.session_id);
    if inserted {
        touched.cost_line(cost.at_ms);
    }
    Ok(inserted)
}

/// Appends a derived turn unless the same one is stored.
fn insert_turn(tx: &rusqlite::Transaction<'_>, turn: &DerivedTurn, touched: &mut Touched) -> Result<bool, DbError> {
    let inserted = insert_row(
        tx,
        DERIVED_TURN_COLUMNS,
        &INSERT_DERIVED_TURN,
        params![turn.provider.as_str(), turn.session_id, turn.started_at_ms, turn.ended_at_ms],
    )? == 1;
    if inserted {
        touched.derived(turn.started_at_ms, turn.ended_at_ms);
    }
    Ok(inserted)
}

/// Appends a call unless its record id is stored, with what it changes
/// elsewhere and its quota snapshots.
fn insert_call(tx: &rusqlite::Transaction<'_>, call: &CallRecord, touched: &mut Touched) -> Result<bool, DbError> {
    let started = required_ms(&call.started_at_utc, "startedAtUtc").map_err(|err| DbError::Invalid(err.0))?;
    let tokens = call.tokens.clone().unwrap_or_default();
    let id = call.record_id.hyphenated().to_string();
    let inserted = insert_row(
        tx,
        schema::CALL_COLUMNS,
        &INSERT_CALL,
        params![
            id,
            call.source.as_str(),
            call.provider.as_str(),
            call.started_at_utc,
            started,
            call.duration_ms.map(sql_integer),
            call.success,
            call.model,
            call.project_path,
            call.cost_usd,
            tokens.input_tokens.map(sql_integer),
            tokens.cached_input_tokens.map(sql_integer),
            tokens.cache_creation_input_tokens.map(sql_integer),
            tokens.cache_read_input_tokens.map(sql_integer),
            tokens.output_tokens.map(sql_integer),
            tokens.reasoning_output_tokens.map(sql_integer),
            tokens.total_tokens.map(sql_integer),
            call.model_invocations.map(sql_integer),
            call.context_window.map(sql_integer),
            call.context_tokens.map(sql_integer),
            call.compactions.map(sql_integer),
            call.session_id,
            call.outcome.map(bee_proto::ledger::CallOutcome::as_str),
        ],
    )? == 1;
    if inserted {
        touched.call(call.provider, call.session_id.as_deref(), started, call.duration_ms.map(sql_integer));
        if let Some(session) = &call.session_id {
            mark_derived_turns(tx, call.provider, session, started, call.duration_ms, touched)?;
        }
        for snapshot in &call.quota_snapshots {
            insert_snapshot(tx, Some(&id), call.provider, snapshot)?;
        }
    }
    Ok(inserted)
}

fn insert(tx: &rusqlite::Transaction<'_>, record: &LedgerRecord, touched: &mut Touched) -> Result<bool, DbError> {
    let invalid = |err: InvalidRecord| DbError::Invalid(err.0);
    match record {
        LedgerRecord::Call(call) => insert_call(tx, call, touched),
        LedgerRecord::Limit(limit) => {
            let at = required_ms(&limit.at_utc, "atUtc").map_err(invalid)?;
            Ok(insert_row(
                tx,
                LIMIT_COLUMNS,
                &INSERT_LIMIT,
                params![
                    limit.record_id.hyphenated().to_string(),
                    limit.provider.as_str(),
                    limit.at_utc,
                    at,
                    limit.resets_at_utc,
                    limit.detection.as_str(),
                    limit.window.map(WindowKind::as_str),
                    limit.window_minutes.map(sql_integer),
                    limit.limit_id,
                    limit.session_id,
                ],
            )? == 1)
        }
        LedgerRecord::Work(work) => {
            let at = required_ms(&work.at_utc, "atUtc").map_err(invalid)?;
            Ok(insert_row(
                tx,
                WORK_COLUMNS,
                &INSERT_WORK,
                params![
                    work.record_id.hyphenated().to_string(),
                    work.provider.as_str(),
                    work.at_utc,
                    at,
                    work.commit_hash,
                    work.run_mode,
                    work.task_id
                ],
            )? == 1)
        }
        LedgerRecord::TurnMark(mark) => {
            let at = required_ms(&mark.at_utc, "atUtc").map_err(invalid)?;
            // A hook that missed its deadline spools the mark its late post
            // still delivered: the same mark twice is one mark.
            let seen: bool = tx
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM turn_mark
                 WHERE session_id = ?1 AND at_ms = ?2 AND edge = ?3 AND at_utc = ?4)",
                )?
                .query_row(params![mark.session_id, at, mark.edge.as_str(), mark.at_utc], |row| row.get(0))?;
            if seen {
                return Ok(false);
            }
            insert_row(
                tx,
                TURN_MARK_COLUMNS,
                &INSERT_TURN_MARK,
                params![mark.edge.as_str(), mark.session_id, mark.at_utc, at, mark.transcript_path, mark.cwd],
            )?;
            if mark.provider != Provider::Claude {
                exec(
                    tx,
                    "INSERT INTO turn_mark_agent (seq, provider) VALUES (last_insert_rowid(), ?1)",
                    params![mark.provider.as_str()],
                )?;
            }
            if mark.edge == TurnEdge::Stop {
                close_turn(tx, mark, at, touched)?;
            }
            Ok(true)
        }
        LedgerRecord::Snapshot { provider, snapshot } => {
            // Status lines repeat themselves every few seconds: a snapshot
            // equal to the window's latest one adds no evidence.
            let resets = optional_ms(snapshot.resets_at_utc.as_deref(), "resetsAtUtc").map_err(invalid)?;
            let latest: Option<f64> = tx
                .query_row(
                    "SELECT used_percent FROM quota_snapshot
                     WHERE call_record_id IS NULL AND provider = ?1 AND window = ?2 AND resets_at_ms IS ?3
                       AND limit_id IS ?4
                     ORDER BY seq DESC LIMIT 1",
                    params![provider.as_str(), snapshot.window.as_str(), resets, snapshot.limit_id],
                    |row| row.get(0),
                )
                .optional()?;
            if latest == Some(snapshot.used_percent) {
                return Ok(false);
            }
            insert_snapshot(tx, None, *provider, snapshot)?;
            Ok(true)
        }
    }
}

/// The turn a `Stop` ends: from the session's latest start before it. The
/// call is the span alone: its tokens are the session's responses, which
/// the logs bring (often after Stop fired: Claude Code writes the turn's
/// last line later), so nothing is read or frozen here.
fn close_turn(
    tx: &rusqlite::Transaction<'_>,
    stop: &TurnMark,
    stop_ms: i64,
    touched: &mut Touched,
) -> Result<(), DbError> {
    // Claude Code's marks name no agent (every mark before others' did).
    let agent = (stop.provider != Provider::Claude).then_some(stop.provider.as_str());
    let start: Option<(String, i64, Option<String>)> = tx
        .query_row(
            "SELECT at_utc, at_ms, cwd FROM turn_mark
             WHERE session_id = ?1 AND edge = 'start' AND at_ms <= ?2
               AND (SELECT provider FROM turn_mark_agent WHERE seq = turn_mark.seq) IS ?3
             ORDER BY at_ms DESC, seq DESC LIMIT 1",
            params![stop.session_id, stop_ms, agent],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()?;
    let Some((start_utc, start_ms, start_cwd)) = start else { return Ok(()) };
    // A later stop already closed this start: one call per turn.
    let closed: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM turn_mark
         WHERE session_id = ?1 AND edge = 'stop' AND at_ms >= ?2 AND at_ms < ?3
           AND (SELECT provider FROM turn_mark_agent WHERE seq = turn_mark.seq) IS ?4)",
        params![stop.session_id, start_ms, stop_ms, agent],
        |row| row.get(0),
    )?;
    if closed {
        return Ok(());
    }
    let record_id = uuid::Uuid::new_v5(
        &uuid::Uuid::NAMESPACE_OID,
        match agent {
            None => format!("bee-turn\u{1f}{}\u{1f}{start_utc}", stop.session_id),
            Some(agent) => format!("bee-turn\u{1f}{agent}\u{1f}{}\u{1f}{start_utc}", stop.session_id),
        }
        .as_bytes(),
    );
    let duration = Some((stop_ms - start_ms).max(0) as u64);
    let call = CallRecord {
        project_path: stop.cwd.clone().or(start_cwd),
        ..CallRecord::span(
            record_id,
            CallSource::HookTurn,
            stop.provider,
            start_utc,
            duration,
            Some(stop.session_id.clone()),
        )
    };
    insert(tx, &LedgerRecord::Call(Box::new(call)), touched)?;
    Ok(())
}

/// Runs `sql` through the connection's statement cache: ingestion appends
/// tens of thousands of rows a pass, and preparing each costs more than the insert.
fn exec(tx: &rusqlite::Transaction<'_>, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    tx.prepare_cached(sql)?.execute(params)
}

fn insert_snapshot(
    tx: &rusqlite::Transaction<'_>,
    call: Option<&str>,
    provider: Provider,
    snapshot: &QuotaSnapshot,
) -> Result<(), DbError> {
    let observed = required_ms(&snapshot.observed_at_utc, "observedAtUtc").map_err(|e| DbError::Invalid(e.0))?;
    let resets = optional_ms(snapshot.resets_at_utc.as_deref(), "resetsAtUtc").map_err(|e| DbError::Invalid(e.0))?;
    insert_row(
        tx,
        SNAPSHOT_COLUMNS,
        &INSERT_SNAPSHOT,
        params![
            call,
            provider.as_str(),
            snapshot.observed_at_utc,
            observed,
            snapshot.window.as_str(),
            snapshot.window_minutes.map(sql_integer),
            snapshot.used_percent,
            snapshot.resets_at_utc,
            resets,
            snapshot.limit_id
        ],
    )?;
    Ok(())
}

/// A snapshot row.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotRow {
    pub provider: Provider,
    pub observed_ms: i64,
    pub window: WindowKind,
    pub window_minutes: Option<i64>,
    pub used_percent: f64,
    pub resets_ms: Option<i64>,
    pub limit_id: Option<String>,
}

/// A snapshot's window, by its kind or else its length.
pub fn kind_of(snapshot: &SnapshotRow) -> WindowKind {
    match (snapshot.window, snapshot.window_minutes) {
        (WindowKind::Other, Some(300)) => WindowKind::FiveHour,
        (WindowKind::Other, Some(10_080)) => WindowKind::Weekly,
        (kind, _) => kind,
    }
}

/// A usage-limit hit.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitRow {
    pub provider: Provider,
    pub at_ms: i64,
    /// The window the evidence named, if it named one.
    pub window: Option<WindowKind>,
    pub window_minutes: Option<i64>,
    pub limit_id: Option<String>,
}

/// The growth of each session's cumulative cost over `range`, summed; the
/// number of sessions that grew. `None` when no session reported a cost.
fn session_costs(conn: &Connection, range: Range, damaged: &mut u64) -> rusqlite::Result<(Option<f64>, u64)> {
    let growth = session_cost_growth(conn, range, damaged)?;
    if growth.is_empty() {
        return Ok((None, 0));
    }
    let mut grown: Vec<&str> = growth.iter().filter(|g| g.usd > 0.0).filter_map(|g| g.session.as_deref()).collect();
    grown.sort_unstable();
    grown.dedup();
    Ok((Some(growth.iter().map(|g| g.usd).sum()), grown.len() as u64))
}

/// Each cost line in `range` of a session, as the growth of that session's
/// cumulative cost over the highest total it had reported before (lines
/// before the range count as before). A session that reported in the range
/// and did not grow is there with 0.
fn session_cost_growth(conn: &Connection, range: Range, damaged: &mut u64) -> rusqlite::Result<Vec<ReportedCost>> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {}, crc FROM session_cost
         WHERE session_id IN (SELECT session_id FROM session_cost WHERE at_ms >= ?1 AND at_ms < ?2)
           AND at_ms < ?2
         ORDER BY provider, session_id, at_ms",
        SESSION_COST_COLUMNS.base
    ))?;
    let mut rows = statement.query(params![range.since_ms, range.until_ms])?;
    let mut growth = Vec::new();
    let mut highest: Option<((String, String), f64)> = None;
    while let Some(row) = rows.next()? {
        if !SESSION_COST_COLUMNS.verifies(row, 0)? {
            *damaged += 1;
            continue;
        }
        let Some(provider) = Provider::from_name(row.get_ref(0)?.as_str()?) else { continue };
        let session: (String, String) = (row.get(0)?, row.get(1)?);
        let (at, total): (i64, f64) = (row.get(2)?, row.get(3)?);
        let before = match &highest {
            Some((current, high)) if *current == session => *high,
            _ => 0.0,
        };
        if at >= range.since_ms {
            growth.push(ReportedCost {
                at_ms: at,
                provider,
                session: Some(session.1.clone()),
                model: None,
                usd: (total - before).max(0.0),
            });
        }
        highest = Some((session, before.max(total)));
    }
    Ok(growth)
}

/// Notices of one provider this close together are one hit: the same hit
/// reaches the ledger through `beectl run`'s output and the provider's own
/// log, and a CLI reports it on more than one line.
pub const SAME_HIT_MS: i64 = 5 * 60_000;

/// Which hit each notice belongs to, given each one's provider and time
/// (in time order): the index of its hit's first notice. A notice that
/// follows its provider's previous one within [`SAME_HIT_MS`] is that
/// one's hit.
pub fn hit_of_each(notices: impl IntoIterator<Item = (Provider, i64)>) -> Vec<usize> {
    let mut open: std::collections::HashMap<Provider, (usize, i64)> = std::collections::HashMap::new();
    let mut hit_of = Vec::new();
    for (at, (provider, at_ms)) in notices.into_iter().enumerate() {
        let first = match open.get(&provider) {
            Some(&(first, previous)) if at_ms - previous <= SAME_HIT_MS => first,
            _ => at,
        };
        open.insert(provider, (first, at_ms));
        hit_of.push(first);
    }
    hit_of
}

/// One limit per hit: `limits` (in time order) merged by [`hit_of_each`];
/// the hit keeps the first time and whatever window any of its notices
/// named.
pub fn one_per_hit(limits: Vec<LimitRow>) -> Vec<LimitRow> {
    let hit_of = hit_of_each(limits.iter().map(|limit| (limit.provider, limit.at_ms)));
    let mut hits: Vec<LimitRow> = Vec::new();
    // Where each hit's first notice went among `hits`.
    let mut placed: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (at, limit) in limits.into_iter().enumerate() {
        match placed.get(&hit_of[at]) {
            Some(&index) => {
                let hit = &mut hits[index];
                if hit.window.is_none() {
                    hit.window = limit.window;
                    hit.window_minutes = limit.window_minutes;
                }
                hit.limit_id = hit.limit_id.take().or(limit.limit_id);
            }
            None => {
                placed.insert(at, hits.len());
                hits.push(limit);
            }
        }
    }
    hits
}

/// What the views need of a range of the ledger.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LedgerView {
    /// The calls overlapping the range (a call that started before it but
    /// ran into it counts, clipped).
    pub summary: Summary,
    /// Limits (one per hit), work and snapshots inside the range.
    pub limits: Vec<LimitRow>,
    /// What sessions' logs say they cost in the range (the growth of their
    /// cumulative cost); `None` when no log reported a cost.
    pub session_cost_usd: Option<f64>,
    pub sessions_with_cost: u64,
    pub work: Vec<(Provider, i64)>,
    pub snapshots: Vec<SnapshotRow>,
    /// The providers that wrote a response in the range: activity, whether
    /// or not anything timed it.
    pub responded: Vec<Provider>,
}

/// Reads the ledger at `dir` read-only: the time and quota figures of `range`.
pub fn read_range(dir: &Path, range: Range) -> Result<LedgerView, Issue> {
    let reader = Reader::open(dir)?;
    load(&reader.conn, reader.version, range).map_err(|err| sqlite::issue_of(&err))
}

/// A cost a provider reported, where it lies.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportedCost {
    pub at_ms: i64,
    pub provider: Provider,
    pub session: Option<String>,
    pub model: Option<String>,
    pub usd: f64,
}

/// Each usage table's time column, each the head of an index.
const EARLIEST_COLUMNS: [(&str, &str); 6] = [
    ("call", "started_at_ms"),
    ("response", "at_ms"),
    ("response_pack", "hour_ms"),
    ("session_cost", "at_ms"),
    ("derived_turn", "started_at_ms"),
    ("limit_hit", "at_ms"),
];

/// The ledger opened read-only, for views that read it piece by piece.
pub struct Reader {
    conn: Connection,
    version: u32,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader").field("version", &self.version).finish_non_exhaustive()
    }
}

impl Reader {
    /// Opens the ledger and begins one read transaction for the reader's
    /// life: every view it answers comes from one snapshot. (Read piece by
    /// piece outside one, a view could take an hour's aggregate from after
    /// a settle and the same hour's records from before it, as dirty: the
    /// hour counted twice.)
    pub fn open(dir: &Path) -> Result<Reader, Issue> {
        let (conn, version) = sqlite::open_reader(dir, DB_FILE, MIGRATIONS.len())?;
        conn.execute_batch("BEGIN DEFERRED").map_err(|e| sqlite::issue_of(&e))?;
        Ok(Reader { conn, version })
    }

    /// The place of the newest limit notice in the ledger's insertion
    /// order (`limit_hit.seq`; 0 for none): where a reader of notices by
    /// arrival stands.
    pub fn newest_limit_seq(&self) -> Result<i64, Issue> {
        self.conn
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM limit_hit", [], |row| row.get(0))
            .map_err(|err| sqlite::issue_of(&err))
    }

    /// Every limit notice of the ledger with its place in insertion order,
    /// in time order; a notice that fails its checksum is left out.
    pub fn limit_notices(&self) -> Result<Vec<(i64, LimitRow)>, Issue> {
        let crc = if self.version < schema::CHECKSUM_SCHEMA { "NULL" } else { "crc" };
        let read = || -> rusqlite::Result<Vec<(i64, LimitRow)>> {
            let mut statement = self.conn.prepare(&format!(
                "SELECT {}, {crc}, seq FROM limit_hit ORDER BY at_ms, seq",
                LIMIT_COLUMNS.select(self.version)
            ))?;
            let seq_column = LIMIT_COLUMNS.count() + 1;
            let mut rows = statement.query([])?;
            let mut notices = Vec::new();
            while let Some(row) = rows.next()? {
                if !LIMIT_COLUMNS.verifies(row, 0)? {
                    continue;
                }
                let Some(provider) = Provider::from_name(row.get_ref(1)?.as_str()?) else { continue };
                notices.push((
                    row.get(seq_column)?,
                    LimitRow {
                        provider,
                        at_ms: row.get(3)?,
                        window: row.get_ref(6)?.as_str_or_null()?.and_then(WindowKind::from_name),
                        window_minutes: row.get(7)?,
                        limit_id: row.get(8)?,
                    },
                ));
            }
            Ok(notices)
        };
        read().map_err(|err| sqlite::issue_of(&err))
    }

    /// What moved in the aggregates' hours since change number `seen`:
    /// the newest change number, and the earliest hour that changed after
    /// `seen` or is dirty now (an append into an hour already dirty takes
    /// no new number). On a store from before change numbers every hour
    /// may have moved: `(0, Some(i64::MIN))`.
    pub fn hours_changed_since(&self, seen: i64) -> Result<(i64, Option<i64>), Issue> {
        if self.version < schema::CHANGE_SCHEMA {
            return Ok((0, Some(i64::MIN)));
        }
        let read = || -> rusqlite::Result<(i64, Option<i64>)> {
            let newest: i64 =
                self.conn.query_row("SELECT COALESCE(MAX(change), 0) FROM hour_change", [], |row| row.get(0))?;
            let changed: Option<i64> =
                self.conn
                    .query_row("SELECT MIN(hour_ms) FROM hour_change WHERE change > ?1", [seen], |row| row.get(0))?;
            let dirty: Option<i64> =
                self.conn.query_row("SELECT MIN(hour_ms) FROM rollup_dirty", [], |row| row.get(0))?;
            Ok((newest, changed.into_iter().chain(dirty).min()))
        };
        read().map_err(|err| sqlite::issue_of(&err))
    }

    /// The time of the ledger's earliest usage record (`None`: it holds
    /// none), from the tables' time indexes.
    pub fn earliest_ms(&self) -> Result<Option<i64>, Issue> {
        let mut earliest: Option<i64> = None;
        for (table, column) in EARLIEST_COLUMNS {
            // A table a store from before some migration lacks holds nothing.
            let Ok(mut statement) = self.conn.prepare(&format!("SELECT MIN({column}) FROM {table}")) else {
                continue;
            };
            let found: Option<i64> = statement.query_row([], |row| row.get(0)).map_err(|err| sqlite::issue_of(&err))?;
            earliest = earliest.into_iter().chain(found).min();
        }
        Ok(earliest)
    }

    /// The time and quota figures of `range` (see [`read_range`]).
    pub fn view(&self, range: Range) -> Result<LedgerView, Issue> {
        load(&self.conn, self.version, range).map_err(|err| sqlite::issue_of(&err))
    }

    /// Every log file's ingestion offset, by path.
    pub fn offsets(&self) -> Result<HashMap<String, FileOffset>, Issue> {
        read_offsets(&self.conn, self.version).map_err(|e| sqlite::issue_of(&e))
    }

    /// The place of the newest quota snapshot in the ledger's insertion
    /// order (`quota_snapshot.seq`; 0 for none).
    pub fn newest_snapshot_seq(&self) -> Result<i64, Issue> {
        self.conn
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM quota_snapshot", [], |row| row.get(0))
            .map_err(|err| sqlite::issue_of(&err))
    }

    /// The quota snapshots stored after place `seq`, in the order they were
    /// stored (one that fails its checksum left out), and the place of the
    /// last one read.
    pub fn snapshots_after(&self, seq: i64) -> Result<(Vec<SnapshotRow>, i64), Issue> {
        let crc = if self.version < schema::CHECKSUM_SCHEMA { "NULL" } else { "crc" };
        let read = || -> rusqlite::Result<(Vec<SnapshotRow>, i64)> {
            let mut statement = self.conn.prepare_cached(&format!(
                "SELECT {}, {crc}, seq FROM quota_snapshot WHERE seq > ?1 ORDER BY seq",
                SNAPSHOT_COLUMNS.select(self.version)
            ))?;
            let seq_column = SNAPSHOT_COLUMNS.count() + 1;
            let mut rows = statement.query([seq])?;
            let (mut snapshots, mut last) = (Vec::new(), seq);
            while let Some(row) = rows.next()? {
                last = row.get(seq_column)?;
                if !SNAPSHOT_COLUMNS.verifies(row, 0)? {
                    continue;
                }
                if let Some(provider) = Provider::from_name(row.get_ref(1)?.as_str()?) {
                    snapshots.push(snapshot_of(row, provider)?);
                }
            }
            Ok((snapshots, last))
        };
        read().map_err(|err| sqlite::issue_of(&err))
    }

    /// Quota snapshots observed in `range`, and how many records failed their checksum.
    pub fn snapshots(&self, range: Range) -> Result<(Vec<SnapshotRow>, u64), Issue> {
        let mut damaged = 0;
        let rows = read_snapshots(&self.conn, self.version, range, &mut damaged).map_err(|e| sqlite::issue_of(&e))?;
        Ok((rows, damaged))
    }

    /// The summary of `range` with usage by part, in the buckets `bucket` makes.
    pub fn usage(&self, range: Range, bucket: rollup::Bucket<'_>) -> Result<Summary, Issue> {
        rollup::summarize(&self.conn, self.version, range, Some(bucket)).map_err(|e| sqlite::issue_of(&e))
    }

    /// The costs providers reported in `range`: producer calls' own (unless
    /// their session's log reports the session's cost) and the growth of
    /// each session's cumulative cost at each of its cost lines.
    pub fn reported_costs(&self, range: Range) -> Result<(Vec<ReportedCost>, u64), Issue> {
        let read = || -> rusqlite::Result<(Vec<ReportedCost>, u64)> {
            let (calls, damaged) = rollup::load_calls(&self.conn, self.version, range, true)?;
            let mut costs: Vec<ReportedCost> = calls
                .into_iter()
                .filter(|call| range.contains(call.started_ms))
                .filter_map(|call| {
                    Some(ReportedCost {
                        at_ms: call.started_ms,
                        provider: call.provider,
                        usd: call.cost_usd?,
                        session: call.session_id,
                        model: call.model,
                    })
                })
                .collect();
            let mut damaged = damaged.len() as u64;
            if self.version >= schema::RESPONSE_SCHEMA {
                costs.extend(session_cost_growth(&self.conn, range, &mut damaged)?);
            }
            Ok((costs, damaged))
        };
        read().map_err(|e| sqlite::issue_of(&e))
    }

    /// Each session's project, as far as the logs' places tell it (see
    /// [`agents::Agent::project_and_session`]) or their own words do
    /// ([`Evidence::SessionProject`]).
    pub fn session_projects(&self) -> Result<HashMap<String, String>, Issue> {
        let read = || -> rusqlite::Result<HashMap<String, String>> {
            let mut statement = self.conn.prepare("SELECT path FROM ingest_offset")?;
            let mut rows = statement.query([])?;
            let mut projects = HashMap::new();
            while let Some(row) = rows.next()? {
                let Ok(path) = row.get_ref(0)?.as_str() else { continue };
                if let Some((project, session)) = agents::all().find_map(|agent| agent.project_and_session(path)) {
                    projects.insert(session.to_owned(), project.to_owned());
                }
            }
            if self.version >= schema::SESSION_PROJECT_SCHEMA {
                let mut statement = self.conn.prepare("SELECT session_id, project FROM session_project")?;
                let mut rows = statement.query([])?;
                while let Some(row) = rows.next()? {
                    let (Ok(session), Ok(project)) = (row.get_ref(0)?.as_str(), row.get_ref(1)?.as_str()) else {
                        continue;
                    };
                    projects.entry(session.to_owned()).or_insert_with(|| project.to_owned());
                }
            }
            Ok(projects)
        };
        read().map_err(|e| sqlite::issue_of(&e))
    }
}

/// Every log file's ingestion offset, by path, in a store at `version`.
/// A store before [`schema::AGENT_STATE_SCHEMA`] (read, not migrated) has
/// offsets without agents' states: enough to say how far each file was read.
fn read_offsets(conn: &Connection, version: u32) -> rusqlite::Result<HashMap<String, FileOffset>> {
    let state = if version >= schema::AGENT_STATE_SCHEMA { "agent_state" } else { "NULL" };
    let mut statement = conn.prepare(&format!("SELECT path, dev, ino, offset, {state} FROM ingest_offset"))?;
    let rows = statement.query_map([], |row| {
        Ok((
            row.get::<_, String>(0)?,
            FileOffset {
                dev: row.get::<_, i64>(1)? as u64,
                ino: row.get::<_, i64>(2)? as u64,
                offset: row.get::<_, i64>(3)? as u64,
                state: AgentState(row.get(4)?),
            },
        ))
    })?;
    rows.collect()
}

/// Every record table's rows, counted (a pack holds many response writes:
/// each counts); a table a store from before some migration lacks counts
/// nothing.
fn counted_records(conn: &Connection) -> u64 {
    let tables = ["call", "response", "quota_snapshot", "limit_hit", "work", "session_cost", "derived_turn"];
    let counts = tables.map(|table| format!("SELECT COUNT(*) FROM {table}"));
    let packed = "SELECT COALESCE(SUM(writes), 0) FROM response_pack".to_owned();
    counts
        .iter()
        .chain([&packed])
        .filter_map(|count| conn.query_row(count, [], |row| row.get::<_, i64>(0)).ok())
        .filter_map(|n| u64::try_from(n).ok())
        .sum()
}

/// The ledger as `daemon status` shows it: its records (every record
/// table's rows) and size; unknown counts are `null`.
pub fn store_status(dir: &Path) -> bee_proto::api::StoreStatus {
    let counted = Reader::open(dir).map(|reader| {
        // Kept as records are inserted, from the schema that keeps them.
        let kept = (reader.version >= schema::CHANGE_SCHEMA)
            .then(|| reader.conn.query_row("SELECT COALESCE(SUM(n), 0) FROM record_count", [], |row| row.get(0)).ok())
            .flatten()
            .and_then(|n: i64| u64::try_from(n).ok());
        (kept.unwrap_or_else(|| counted_records(&reader.conn)), reader.version)
    });
    bee_proto::api::StoreStatus {
        name: "ledger".to_owned(),
        path: dir.display().to_string(),
        schema_version: counted.as_ref().ok().map(|(_, version)| *version),
        records: counted.as_ref().ok().map(|(records, _)| *records),
        capacity: None,
        issues: counted.err().into_iter().collect(),
        size_bytes: crate::storage::files::dir_size(dir).ok(),
    }
}

fn read_snapshots(
    conn: &Connection,
    version: u32,
    range: Range,
    damaged: &mut u64,
) -> rusqlite::Result<Vec<SnapshotRow>> {
    read_records(conn, version, ("quota_snapshot", "observed_at_ms"), SNAPSHOT_COLUMNS, range, damaged, snapshot_of)
}

/// A row of [`SNAPSHOT_COLUMNS`] made a snapshot of `provider`.
fn snapshot_of(row: &rusqlite::Row<'_>, provider: Provider) -> rusqlite::Result<SnapshotRow> {
    Ok(SnapshotRow {
        provider,
        observed_ms: row.get(3)?,
        window: WindowKind::from_name(row.get_ref(4)?.as_str()?).unwrap_or(WindowKind::Other),
        window_minutes: row.get(5)?,
        used_percent: row.get(6)?,
        resets_ms: row.get(8)?,
        limit_id: row.get(9)?,
    })
}

fn load(conn: &Connection, version: u32, range: Range) -> rusqlite::Result<LedgerView> {
    let mut view = LedgerView { summary: rollup::summarize(conn, version, range, None)?, ..LedgerView::default() };
    let damaged = &mut view.summary.damaged_records;
    let limits =
        read_records(conn, version, ("limit_hit", "at_ms"), LIMIT_COLUMNS, range, damaged, |row, provider| {
            Ok(LimitRow {
                provider,
                at_ms: row.get(3)?,
                window: row.get_ref(6)?.as_str_or_null()?.and_then(WindowKind::from_name),
                window_minutes: row.get(7)?,
                limit_id: row.get(8)?,
            })
        })?;
    view.limits = one_per_hit(limits);
    view.work = read_records(conn, version, ("work", "at_ms"), WORK_COLUMNS, range, damaged, |row, provider| {
        Ok((provider, row.get(3)?))
    })?;
    view.snapshots = read_snapshots(conn, version, range, damaged)?;
    if version >= schema::RESPONSE_SCHEMA {
        (view.session_cost_usd, view.sessions_with_cost) = session_costs(conn, range, damaged)?;
        view.responded = responses::providers_in(conn, version, range, damaged)?;
    }
    Ok(view)
}

/// The records of `table` whose time column falls in `range`, in time
/// order, each made a `T` by `row_of` with its provider (column 1); a record
/// that fails its checksum is counted in `damaged`, one of an unknown
/// provider skipped.
fn read_records<T>(
    conn: &Connection,
    version: u32,
    (table, time_column): (&str, &str),
    columns: Columns,
    range: Range,
    damaged: &mut u64,
    row_of: impl Fn(&rusqlite::Row<'_>, Provider) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    let crc = if version < schema::CHECKSUM_SCHEMA { "NULL" } else { "crc" };
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {}, {crc} FROM {table} WHERE {time_column} >= ?1 AND {time_column} < ?2 ORDER BY {time_column}",
        columns.select(version)
    ))?;
    let mut rows = statement.query(params![range.since_ms, range.until_ms])?;
    let mut records = Vec::new();
    while let Some(row) = rows.next()? {
        if !columns.verifies(row, 0)? {
            *damaged += 1;
            continue;
        }
        if let Some(provider) = Provider::from_name(row.get_ref(1)?.as_str()?) {
            records.push(row_of(row, provider)?);
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first lines of `schema.sql`.
    const SCHEMA_HEADER: &str = "-- The ledger's schema at its latest version, and its rows: what every\n\
        -- migration in store.rs builds, written at once for a new store.\n\
        -- Generated (BEE_WRITE_LATEST_SCHEMA=1 cargo test -p bee-daemon latest_schema); do not edit.\n";

    /// A store as SQL that builds it again: its objects in the order they
    /// were made, then every row of every table.
    fn dump(conn: &Connection) -> String {
        let mut sql = SCHEMA_HEADER.to_owned();
        let objects: Vec<(String, String, String)> = conn
            .prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        for (_, _, create) in &objects {
            sql.push_str(create);
            sql.push_str(";\n");
        }
        for (_, table, _) in objects.iter().filter(|(kind, _, _)| kind == "table") {
            let columns: Vec<String> = conn
                .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
                .unwrap()
                .query_map([table], |row| row.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let quoted: Vec<String> = columns.iter().map(|column| format!("quote(\"{column}\")")).collect();
            let mut rows = conn.prepare(&format!("SELECT {} FROM \"{table}\" ORDER BY 1", quoted.join(", "))).unwrap();
            let values: Vec<Vec<String>> = rows
                .query_map([], |row| (0..columns.len()).map(|i| row.get::<_, String>(i)).collect())
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            for row in values {
                sql.push_str(&format!("INSERT INTO {table} VALUES ({});\n", row.join(", ")));
            }
        }
        sql
    }

    /// `schema.sql` is exactly what every migration builds, rows included;
    /// when a migration is added, this regenerates it on request.
    #[test]
    fn the_latest_schema_is_what_every_migration_builds() {
        let conn = Connection::open_in_memory().unwrap();
        for migration in MIGRATIONS {
            conn.execute_batch(migration).unwrap();
        }
        let built = dump(&conn);
        if std::env::var_os("BEE_WRITE_LATEST_SCHEMA").is_some() {
            std::fs::write(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ledger/stored/schema.sql"), &built).unwrap();
        }
        assert!(
            built == LATEST_SCHEMA,
            "schema.sql is not what the migrations build; regenerate it with \
             BEE_WRITE_LATEST_SCHEMA=1 cargo test -p bee-daemon latest_schema"
        );
    }

    /// A new store is built from `schema.sql` into the same schema and rows,
    /// at the latest version, in WAL mode, 0600; and one migrated from an
    /// older version reaches the same.
    #[test]
    fn a_new_store_is_the_latest_schema_and_an_old_one_migrates_to_it() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        let ledger = Ledger::open(&dir).unwrap();
        let conn = &ledger.db.conn;
        assert_eq!(dump(conn), LATEST_SCHEMA);
        let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
        let mode: String = conn.pragma_query_value(None, "journal_mode", |row| row.get(0)).unwrap();
        assert_eq!((version, mode.as_str()), (MIGRATIONS.len() as i64, "wal"));
        let file = std::fs::metadata(dir.join(DB_FILE)).unwrap();
        assert_eq!(file.permissions().mode() & 0o777, 0o600);
        assert!(!dir.join(format!("{DB_FILE}.new")).exists());
        drop(ledger);
        // A store made by the first migration only, then opened.
        let old = home.path().join("old");
        std::fs::create_dir(&old).unwrap();
        let conn = Connection::open(old.join(DB_FILE)).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        drop(conn);
        let ledger = Ledger::open(&old).unwrap();
        let migrated = dump(&ledger.db.conn);
        let objects = |sql: &str| {
            let mut lines: Vec<String> = sql.split(";\n").map(str::to_owned).collect();
            lines.sort();
            lines
        };
        // Dropped and made again, tables sit elsewhere in the order of objects.
        assert_eq!(objects(&migrated), objects(LATEST_SCHEMA));
    }

    /// A store of schema 13 moving to 14: every file is read again from
    /// its start (its writes now carry copies' marks and agents' costs),
    /// and every hour's aggregates, settled as format 1 parts, are made
    /// again; until then a view takes its usage from the records.
    #[test]
    fn the_move_to_agents_costs_reads_every_file_again_and_settles_every_hour() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        std::fs::create_dir(&dir).unwrap();
        let before = schema::AGENT_COST_SCHEMA as usize - 1;
        let conn = Connection::open(dir.join(DB_FILE)).unwrap();
        for migration in &MIGRATIONS[..before] {
            conn.execute_batch(migration).unwrap();
        }
        conn.pragma_update(None, "user_version", before as i64).unwrap();
        let hour = 1_764_583_200_000i64;
        conn.execute_batch(&format!(
            "INSERT INTO ingest_offset (path, dev, ino, offset, agent_state) VALUES ('/h/.local/share/opencode/opencode.db', 1, 2, 3, '{{}}');
             INSERT INTO rollup_parts (hour_ms, body) VALUES ({hour}, X'0100');
             INSERT INTO rollup_time VALUES ({}, '', 1, 0, 10, 10, NULL, 0);",
            hour + schema::HOUR_MS
        ))
        .unwrap();
        drop(conn);
        let ledger = Ledger::open(&dir).unwrap();
        let conn = &ledger.db.conn;
        let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
        let offsets: i64 = conn.query_row("SELECT COUNT(*) FROM ingest_offset", [], |row| row.get(0)).unwrap();
        assert_eq!(offsets, 0, "every file is read again");
        let dirty: Vec<i64> = conn
            .prepare("SELECT hour_ms FROM rollup_dirty ORDER BY hour_ms")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(dirty, [hour, hour + schema::HOUR_MS]);
    }

    /// The record counts the store keeps as records are inserted are the
    /// tables' own: calls with their snapshots, limits, costs, packed
    /// responses, appended as beed appends them.
    #[test]
    fn the_kept_record_counts_are_the_tables_counts() {
        use crate::ledger::stored::responses::ResponseWrite;
        use bee_proto::ledger::{CallRecord, CallSource, LimitRecord, QuotaSnapshot};
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        let mut ledger = Ledger::open(&dir).unwrap();
        let at = "2026-11-03T10:00:00.000Z";
        let snapshot = QuotaSnapshot {
            observed_at_utc: at.to_owned(),
            window: WindowKind::FiveHour,
            window_minutes: Some(300),
            used_percent: 40.0,
            resets_at_utc: None,
            limit_id: None,
        };
        let mut call =
            CallRecord::span(uuid::Uuid::new_v4(), CallSource::Run, Provider::Codex, at.to_owned(), Some(1_000), None);
        call.session_id = Some("s".to_owned());
        call.quota_snapshots = vec![snapshot.clone(), snapshot];
        let limit = LimitRecord {
            record_id: uuid::Uuid::new_v4(),
            at_utc: at.to_owned(),
            provider: Provider::Codex,
            resets_at_utc: None,
            detection: bee_proto::usage::Detection::Structured,
            window: None,
            window_minutes: None,
            limit_id: None,
            session_id: None,
        };
        let response = |key: &str| {
            Evidence::Response(ResponseWrite {
                provider: Provider::Claude,
                key: key.to_owned(),
                session_id: Some("s".into()),
                at_ms: 1_793_700_000_000,
                model: None,
                tokens: bee_proto::usage::Counters { output_tokens: Some(1), ..Default::default() },
                context_tokens: None,
                context_window: None,
                is_final: true,
                own_figure: None,
                copied: false,
            })
        };
        let evidence = [
            Evidence::Record(LedgerRecord::Call(Box::new(call))),
            Evidence::Record(LedgerRecord::Limit(limit)),
            response("a"),
            response("b"),
            Evidence::SessionCost(SessionCost {
                provider: Provider::Claude,
                session_id: "s".to_owned(),
                at_ms: 1_793_700_000_000,
                total_usd: 1.5,
            }),
        ];
        ledger.append_at(&evidence, &[]).unwrap();
        ledger.append_at(&evidence[2..], &[]).unwrap();
        let counted = counted_records(&ledger.db.conn);
        assert_eq!(counted, 7, "a call, its two snapshots, a limit, two responses, a cost line");
        assert_eq!(store_status(&dir).records, Some(counted));
    }

    /// A creation a crash stopped leaves a half-built file beside the
    /// store's place and no store: the next open builds it again, whole.
    #[test]
    fn a_half_built_store_left_by_a_crash_is_built_again() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        std::fs::create_dir(&dir).unwrap();
        let building = dir.join(format!("{DB_FILE}.new"));
        std::fs::write(&building, b"SQLite format 3\0 and then the crash").unwrap();
        let mut ledger = Ledger::open(&dir).unwrap();
        assert!(!building.exists());
        assert_eq!(dump(&ledger.db.conn), LATEST_SCHEMA);
        assert!(ledger.holds_no_response().unwrap());
        ledger.append(&[]).unwrap();
    }
}
