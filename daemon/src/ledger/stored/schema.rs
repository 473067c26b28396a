//! The ledger's shape as every other file of it reads it: the schema
//! versions at which its tables changed, the hour its aggregates and packs
//! are cut by, a range of time, and each record table's columns and how a
//! row's counters are read. It uses nothing else of the
//! ledger, so the store, the packs and the aggregates all stand on it.

use bee_proto::usage::Counters;

use crate::storage::sqlite;

/// The aggregates' granularity.
pub const HOUR_MS: i64 = 3_600_000;

/// Longest call the views follow: a call is taken to end at most this long
/// after it started (a week: no quota window is longer), which also bounds
/// how far back a range looks for calls that ran into it.
pub const MAX_CALL_MS: i64 = 7 * 24 * HOUR_MS;

/// Schema version from which the aggregates exist.
pub const ROLLUP_SCHEMA: u32 = 4;
/// Schema version from which every record carries a checksum.
pub const CHECKSUM_SCHEMA: u32 = 5;
/// Schema version from which responses are the token evidence.
pub const RESPONSE_SCHEMA: u32 = 6;
/// Schema version from which response writes are stored in packs
/// ([`crate::ledger::stored::pack`]); the rows stored before stay where they are.
pub const PACK_SCHEMA: u32 = 8;
/// Schema version from which usage is aggregated by part (provider,
/// session, model, prompt-size tier) per hour, an hour's parts in one pack
/// ([`crate::ledger::stored::part_pack`]). A store before it (a row per part from
/// schema 7) is read from its records until it is migrated.
pub const PART_PACK_SCHEMA: u32 = 9;
/// Schema version from which a file's resume state is its agent's own
/// (`ingest_offset.agent_state`).
pub const AGENT_STATE_SCHEMA: u32 = 10;
/// Schema version from which a session's project can come from its log's
/// own words (`session_project`: Codex's `session_meta.cwd`), not only from
/// where the log lies.
pub const SESSION_PROJECT_SCHEMA: u32 = 11;
/// Schema version from which every hour whose aggregates an append made
/// dirty carries the number of that change (`hour_change`), and each
/// table's record count is kept (`record_count`): a reader that keeps
/// figures of past hours learns which of them moved since, and how many
/// records the store holds, without reading the records.
pub const CHANGE_SCHEMA: u32 = 13;
/// Schema version from which a response write carries the cost its agent
/// wrote beside it and whether its session holds it as a copy (bits of its
/// pack), and an hour's usage parts keep copies, the agents' costs and
/// their first and last response times (`part_pack` format 2). A store
/// before it takes usage parts from its records.
pub const AGENT_COST_SCHEMA: u32 = 14;

/// A half-open range of unix milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub since_ms: i64,
    pub until_ms: i64,
}

impl Range {
    pub fn len(self) -> u64 {
        (self.until_ms - self.since_ms).max(0) as u64
    }

    pub fn is_empty(self) -> bool {
        self.until_ms <= self.since_ms
    }

    pub fn contains(self, at: i64) -> bool {
        at >= self.since_ms && at < self.until_ms
    }

    /// The hour starting at `start_ms`.
    pub fn hour(start_ms: i64) -> Range {
        Range { since_ms: start_ms, until_ms: start_ms + HOUR_MS }
    }

    /// `[start, end)` clipped to the range, when they overlap.
    pub fn clip(self, start: i64, end: i64) -> Option<(i64, i64)> {
        let (start, end) = (start.max(self.since_ms), end.min(self.until_ms));
        (end > start).then_some((start, end))
    }
}

pub(crate) fn hour_of(ms: i64) -> i64 {
    ms.div_euclid(HOUR_MS) * HOUR_MS
}

/// A record table's columns: those it was created with, and those it grew
/// later (from [`RESPONSE_SCHEMA`]), which count in a record's
/// checksum only when they hold a value, so older records keep theirs.
#[derive(Debug, Clone, Copy)]
pub struct Columns {
    pub base: &'static str,
    pub grown: &'static str,
}

impl Columns {
    pub const fn base_count(self) -> usize {
        sqlite::column_count(self.base)
    }

    /// All columns, grown ones included.
    pub const fn count(self) -> usize {
        self.base_count() + if self.grown.is_empty() { 0 } else { sqlite::column_count(self.grown) }
    }

    /// The select list for a store at `version`: the grown columns are
    /// NULL where the store does not have them yet.
    pub fn select(self, version: u32) -> String {
        if self.grown.is_empty() {
            self.base.to_owned()
        } else if version >= RESPONSE_SCHEMA {
            format!("{}, {}", self.base, self.grown)
        } else {
            let nulls = vec!["NULL"; sqlite::column_count(self.grown)].join(", ");
            format!("{}, {nulls}", self.base)
        }
    }

    /// `INSERT INTO table (columns, crc) VALUES (?1 … ?n+1) suffix`.
    pub(crate) fn insert_sql(self, table: &str, suffix: &str) -> String {
        self.insert_rows_sql(table, 1, suffix)
    }

    /// [`Columns::insert_sql`] of `rows` records in one statement, their
    /// values one record after another.
    pub(crate) fn insert_rows_sql(self, table: &str, rows: usize, suffix: &str) -> String {
        let per_row = self.count() + 1;
        let values: Vec<String> = (0..rows)
            .map(|row| {
                let placeholders: Vec<String> = (1..=per_row).map(|n| format!("?{}", row * per_row + n)).collect();
                format!("({})", placeholders.join(", "))
            })
            .collect();
        format!("INSERT INTO {table} ({}, crc) VALUES {} {suffix}", self.select(u32::MAX), values.join(", "))
    }

    /// Whether a row selected with [`Columns::select`] from `first` on, then
    /// its checksum, verifies.
    pub fn verifies(self, row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<bool> {
        sqlite::row_verifies_grown(row, first, self.base_count(), self.count())
    }
}

/// Columns of a `call` record, in the order its checksum covers them.
pub const CALL_COLUMNS: Columns = Columns {
    base: "record_id, source, provider, started_at_utc, started_at_ms, duration_ms, success,
     model, project_path, cost_usd, input_tokens, cached_input_tokens, cache_creation_input_tokens,
     cache_read_input_tokens, output_tokens, reasoning_output_tokens, total_tokens,
     model_invocations, context_window, context_tokens, compactions, session_id",
    grown: "outcome",
};
/// Number of [`CALL_COLUMNS`].
pub(crate) const CALL_COLUMN_COUNT: usize = CALL_COLUMNS.count();

/// Columns of a `limit_hit`, `work`, `quota_snapshot` and `turn_mark` record.
pub const LIMIT_COLUMNS: Columns = Columns {
    base: "record_id, provider, at_utc, at_ms, resets_at_utc, detection, window",
    grown: "window_minutes, limit_id, session_id",
};
pub const WORK_COLUMNS: Columns =
    Columns { base: "record_id, provider, at_utc, at_ms, commit_hash, run_mode, task_id", grown: "" };
pub const SNAPSHOT_COLUMNS: Columns = Columns {
    base: "call_record_id, provider, observed_at_utc, observed_at_ms, window,
     window_minutes, used_percent, resets_at_utc, resets_at_ms",
    grown: "limit_id",
};
pub const TURN_MARK_COLUMNS: Columns =
    Columns { base: "edge, session_id, at_utc, at_ms, transcript_path, cwd", grown: "" };
/// Columns of a derived turn and of a session's reported running cost.
pub const DERIVED_TURN_COLUMNS: Columns =
    Columns { base: "provider, session_id, started_at_ms, ended_at_ms", grown: "" };
pub const SESSION_COST_COLUMNS: Columns = Columns { base: "provider, session_id, at_ms, total_usd", grown: "" };

/// The seven token counters in the columns from `first` on, in
/// [`Counters`] order; NULL (or a negative number) is not reported.
pub(crate) fn counters_at(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Counters> {
    let at = |n: usize| count_at(row, first + n);
    Ok(Counters {
        input_tokens: at(0)?,
        cached_input_tokens: at(1)?,
        cache_creation_input_tokens: at(2)?,
        cache_read_input_tokens: at(3)?,
        output_tokens: at(4)?,
        reasoning_output_tokens: at(5)?,
        total_tokens: at(6)?,
    })
}

/// A counter column: NULL when unreported; a negative one (which Bee never
/// stores) is no count either.
pub(crate) fn count_at(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Option<u64>> {
    Ok(row.get::<_, Option<i64>>(at)?.and_then(|v| u64::try_from(v).ok()))
}
