//! The delivery store: a directory holding one SQLite database in WAL mode.
//!
//! Layout: `<store>/delivery.sqlite3` (0600) plus SQLite's `-wal`/`-shm`
//! files, and `<store>/writer.lock`, held by the one writer (beed). The schema
//! is versioned with `PRAGMA user_version` and migrated forward only.
//! Every record carries a checksum over its metadata; readers keep the verified
//! prefix and name `corrupt` at the first record that does not verify.

use bee_proto::api::AppendAnswer;
use bee_proto::delivery::{
    AppendOutcome, DEFAULT_CAPACITY, ESTIMATOR_ID, ESTIMATOR_VERSION, Estimate, Issue, Observation, ObservationKind,
    RecordedObservation, SCHEMA_VERSION, StoredObservation, Surface,
};
use bee_proto::identity::Identity;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::storage::writer::{BatchStore, WriterHandle};
use crate::storage::{files, sqlite};

/// Database file inside the store directory.
pub const DB_FILE: &str = "delivery.sqlite3";

/// Forward migrations; entry `n` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
    ) STRICT;
    CREATE TABLE observation (
        sequence          INTEGER PRIMARY KEY NOT NULL,
        event_id          TEXT NOT NULL UNIQUE,
        kind              TEXT NOT NULL,
        observed_at_utc   TEXT NOT NULL,
        session_kind      TEXT NOT NULL,
        session_id        TEXT NOT NULL,
        session_sequence  INTEGER NOT NULL,
        surface           TEXT NOT NULL,
        item_id           TEXT NOT NULL,
        item_version      TEXT NOT NULL,
        utf8_bytes        INTEGER NOT NULL,
        estimator         TEXT NOT NULL,
        estimator_version INTEGER NOT NULL,
        estimated_tokens  INTEGER NOT NULL,
        checksum          TEXT NOT NULL
    ) STRICT;
    INSERT INTO meta (key, value) VALUES ('capacity', '2048');
"#,
    // The delivered text's own bytes (the envelope excluded); NULL for
    // records from before hooks recorded it, which the checksum never covered.
    r#"
    ALTER TABLE observation ADD COLUMN content_utf8_bytes INTEGER;
"#,
];

pub use crate::storage::sqlite::DbError as StoreError;

/// Why one observation was not appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendRefusal {
    /// The store holds `capacity` records; appends stop.
    Capacity(u64),
    /// The store could not be written.
    Io(String),
}

/// Beside the database: the highest sequence beed has acknowledged, written
/// and synced after each commit, outside the WAL. A store holding fewer
/// records than this lost acknowledged ones (a damaged WAL frame makes SQLite
/// drop that frame and every later one, silently): readers name it `corrupt`.
pub const ACKNOWLEDGED_FILE: &str = "acknowledged";

/// The store as a writer holds it.
pub struct WritableStore {
    db: sqlite::Writer,
    acknowledged: std::fs::File,
    /// The mark last written: a batch that recorded nothing costs no sync.
    marked: Option<u64>,
    capacity: u64,
    records: u64,
    /// Records per (session kind, session id), so that numbering a session's
    /// next record does not scan the session's earlier ones.
    session_records: HashMap<(Identity, Identity), u64>,
}

impl WritableStore {
    /// Opens the store at `dir` for writing, creating it (0700/0600) if needed.
    pub fn open(dir: &Path) -> Result<WritableStore, StoreError> {
        let db = sqlite::open_writer(dir, DB_FILE, MIGRATIONS)?;
        let verified = verify(&db.conn);
        if let Some((_, reason)) = verified.failure {
            return Err(StoreError::Corrupt { path: dir.to_owned(), reason });
        }
        let records = verified.records.len() as u64;
        if let Some(mark) = acknowledged_mark(dir)
            && mark > records
        {
            // Acknowledged observations are gone (a damaged WAL frame, or a
            // power loss under synchronous=NORMAL). The loss is written down
            // for good — every report names it `corrupt` from now on — and
            // appending goes on, so hooks are not left spooling forever.
            tracing::error!(
                store = %dir.display(),
                acknowledged = mark,
                held = records,
                "acknowledged observations are missing from the store; recorded as lost"
            );
            note_lost(dir, mark, records)?;
        }
        let acknowledged = files::open_private_file(&dir.join(ACKNOWLEDGED_FILE))?;
        let capacity = verified.capacity.unwrap_or(DEFAULT_CAPACITY);
        let session_records = session_counts(&verified.records);
        let mut store = WritableStore { db, acknowledged, marked: None, capacity, records, session_records };
        store.acknowledge();
        Ok(store)
    }

    /// Records held.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Appends `batch` in one transaction (one sync), answering each entry.
    ///
    /// An error of the whole transaction refuses every entry of the batch.
    pub fn append_batch(&mut self, batch: &[Observation]) -> Vec<Result<AppendAnswer, AppendRefusal>> {
        let records_before = self.records;
        let sessions_before = self.session_records.clone();
        match self.try_append_batch(batch) {
            Ok(answers) => answers,
            Err(err) => {
                self.records = records_before;
                self.session_records = sessions_before;
                let reason = err.to_string();
                tracing::error!(error = %reason, "delivery append failed; batch refused");
                batch.iter().map(|_| Err(AppendRefusal::Io(reason.clone()))).collect()
            }
        }
    }

    fn try_append_batch(
        &mut self,
        batch: &[Observation],
    ) -> Result<Vec<Result<AppendAnswer, AppendRefusal>>, rusqlite::Error> {
        let tx = self.db.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut answers = Vec::with_capacity(batch.len());
        for observation in batch {
            if self.records >= self.capacity {
                // Full: only a repeat of a stored event still gets its answer.
                answers.push(match repeat_of(&tx, observation)? {
                    Some(answer) => Ok(answer),
                    None => Err(AppendRefusal::Capacity(self.capacity)),
                });
                continue;
            }
            let session_key = (observation.session_kind.clone(), observation.session_id.clone());
            let session_sequence = self.session_records.get(&session_key).copied().unwrap_or(0) + 1;
            let sequence = self.records + 1;
            let stored = StoredObservation::new(observation.clone(), session_sequence);
            let checksum = checksum(sequence, &stored);
            if !insert(&tx, sequence, &stored, &checksum)? {
                // The event id is taken: an exact repeat or a conflict.
                match repeat_of(&tx, observation)? {
                    Some(answer) => answers.push(Ok(answer)),
                    None => return Err(rusqlite::Error::QueryReturnedNoRows),
                }
                continue;
            }
            self.records = sequence;
            self.session_records.insert(session_key, session_sequence);
            answers.push(Ok(AppendAnswer { outcome: AppendOutcome::Recorded, sequence }));
        }
        tx.commit()?;
        self.acknowledge();
        Ok(answers)
    }

    /// Writes and syncs the acknowledged mark (the records committed so
    /// far), before any answer goes out. A failure is logged: the records
    /// are safe, only the loss check is weaker until the next commit.
    fn acknowledge(&mut self) {
        use std::io::{Seek, Write};
        if self.marked == Some(self.records) {
            return;
        }
        let mark = format!("{:020}\n", self.records);
        let written = self
            .acknowledged
            .rewind()
            .and_then(|()| self.acknowledged.write_all(mark.as_bytes()))
            .and_then(|()| self.acknowledged.sync_data());
        match written {
            Ok(()) => self.marked = Some(self.records),
            Err(err) => tracing::warn!(error = %err, "acknowledged mark not written"),
        }
    }
}

/// Beside the database: one line per time beed found acknowledged
/// observations missing (how many were acknowledged, how many were held).
pub const LOST_FILE: &str = "acknowledged-lost";

fn note_lost(dir: &Path, acknowledged: u64, held: u64) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    let mut file = files::open_private_file(&dir.join(LOST_FILE))?;
    file.seek(std::io::SeekFrom::End(0))?;
    let line =
        serde_json::json!({"acknowledged": acknowledged, "held": held, "foundAtUtc": bee_proto::time::now_rfc3339()});
    writeln!(file, "{line}")?;
    file.sync_all()
}

/// Whether acknowledged observations of the store at `dir` were lost: the
/// mark is above what the store holds, or a loss was written down before.
fn lost_acknowledged(dir: &Path, held: u64) -> bool {
    acknowledged_mark(dir).is_some_and(|mark| mark > held)
        || std::fs::symlink_metadata(dir.join(LOST_FILE)).is_ok_and(|meta| meta.is_file() && meta.len() > 0)
}

/// The acknowledged mark beside the store at `dir`, when there is one.
pub fn acknowledged_mark(dir: &Path) -> Option<u64> {
    files::read_small_text(&dir.join(ACKNOWLEDGED_FILE)).ok()?.parse().ok()
}

fn session_counts(records: &[RecordedObservation]) -> HashMap<(Identity, Identity), u64> {
    let mut counts = HashMap::new();
    for record in records {
        let key = (record.observation.session_kind.clone(), record.observation.session_id.clone());
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

/// The answer for `observation` if its event id is already stored.
fn repeat_of(conn: &Connection, observation: &Observation) -> rusqlite::Result<Option<AppendAnswer>> {
    Ok(find_by_event(conn, &observation.event_id)?.map(|(sequence, existing)| {
        let outcome = if existing.same_metadata(observation) {
            AppendOutcome::Duplicate
        } else {
            tracing::warn!(event = %observation.event_id, "conflicting repeat of an event id; first record kept");
            AppendOutcome::ConflictKeptFirst
        };
        AppendAnswer { outcome, sequence }
    }))
}

/// Inserts the record; `false` when its event id is already stored.
fn insert(
    tx: &rusqlite::Transaction<'_>,
    sequence: u64,
    stored: &StoredObservation,
    checksum: &str,
) -> rusqlite::Result<bool> {
    let (estimator, estimator_version, estimated_tokens) = match stored.estimates.first() {
        Some(e) => (e.estimator.as_str(), e.version, e.estimated_tokens),
        None => (ESTIMATOR_ID, ESTIMATOR_VERSION, 0),
    };
    // Cached: the writer inserts every observation through this one statement.
    tx.prepare_cached(
        "INSERT INTO observation (sequence, event_id, kind, observed_at_utc, session_kind,
             session_id, session_sequence, surface, item_id, item_version, utf8_bytes,
             estimator, estimator_version, estimated_tokens, checksum, content_utf8_bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
         ON CONFLICT (event_id) DO NOTHING",
    )?
    .execute(params![
        sequence as i64,
        stored.event_id.hyphenated().to_string(),
        stored.kind.as_str(),
        stored.observed_at_utc,
        stored.session_kind.as_str(),
        stored.session_id.as_str(),
        stored.session_sequence as i64,
        stored.surface.as_str(),
        stored.item_id.as_str(),
        stored.item_version.as_str(),
        stored.utf8_bytes as i64,
        estimator,
        estimator_version,
        estimated_tokens as i64,
        checksum,
        stored.content_utf8_bytes.map(|bytes| bytes as i64),
    ])
    .map(|inserted| inserted == 1)
}

const SELECT_COLUMNS: &str = "sequence, event_id, kind, observed_at_utc, session_kind, session_id,
    session_sequence, surface, item_id, item_version, utf8_bytes, estimator,
    estimator_version, estimated_tokens, checksum, content_utf8_bytes";

fn find_by_event(conn: &Connection, event_id: &uuid::Uuid) -> rusqlite::Result<Option<(u64, StoredObservation)>> {
    let sql = format!("SELECT {SELECT_COLUMNS} FROM observation WHERE event_id = ?1");
    let row = conn.prepare_cached(&sql)?.query_row(params![event_id.hyphenated().to_string()], raw_row).optional()?;
    Ok(row.and_then(|raw| raw.into_record().ok()).map(|r| (r.sequence, r.observation)))
}

/// The checksum a record at `sequence` holding `stored` must carry.
pub fn checksum(sequence: u64, stored: &StoredObservation) -> String {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&SCHEMA_VERSION.to_le_bytes());
    hasher.update(&sequence.to_le_bytes());
    // Serializing a struct of validated fields cannot fail; an empty slice on
    // the impossible path would only make the checksum not verify.
    hasher.update(&serde_json::to_vec(stored).unwrap_or_default());
    format!("crc32:{:08x}", hasher.finalize())
}

/// A row as SQLite returned it, before any validation.
struct RawRow {
    sequence: i64,
    event_id: String,
    kind: String,
    observed_at_utc: String,
    session_kind: String,
    session_id: String,
    session_sequence: i64,
    surface: String,
    item_id: String,
    item_version: String,
    utf8_bytes: i64,
    estimator: String,
    estimator_version: i64,
    estimated_tokens: i64,
    checksum: String,
    content_utf8_bytes: Option<i64>,
}

fn raw_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        sequence: row.get(0)?,
        event_id: row.get(1)?,
        kind: row.get(2)?,
        observed_at_utc: row.get(3)?,
        session_kind: row.get(4)?,
        session_id: row.get(5)?,
        session_sequence: row.get(6)?,
        surface: row.get(7)?,
        item_id: row.get(8)?,
        item_version: row.get(9)?,
        utf8_bytes: row.get(10)?,
        estimator: row.get(11)?,
        estimator_version: row.get(12)?,
        estimated_tokens: row.get(13)?,
        checksum: row.get(14)?,
        content_utf8_bytes: row.get(15)?,
    })
}

impl RawRow {
    /// Validates every field and the checksum.
    fn into_record(self) -> Result<RecordedObservation, String> {
        let bad = |what: &str| format!("record {}: invalid {what}", self.sequence);
        let kind = ObservationKind::from_name(&self.kind).ok_or_else(|| bad("kind"))?;
        let surface = Surface::from_name(&self.surface).ok_or_else(|| bad("surface"))?;
        let sequence = u64::try_from(self.sequence).map_err(|_| bad("sequence"))?;
        let observation = Observation {
            kind,
            observed_at_utc: self.observed_at_utc.clone(),
            event_id: uuid::Uuid::parse_str(&self.event_id).map_err(|_| bad("event id"))?,
            session_kind: Identity::parse(&self.session_kind).map_err(|_| bad("session kind"))?,
            session_id: Identity::parse(&self.session_id).map_err(|_| bad("session id"))?,
            surface,
            item_id: Identity::parse(&self.item_id).map_err(|_| bad("item id"))?,
            item_version: Identity::parse(&self.item_version).map_err(|_| bad("item version"))?,
            utf8_bytes: u64::try_from(self.utf8_bytes).map_err(|_| bad("byte count"))?,
            estimates: vec![Estimate {
                estimator: self.estimator.clone(),
                version: u32::try_from(self.estimator_version).map_err(|_| bad("estimator"))?,
                estimated_tokens: u64::try_from(self.estimated_tokens).map_err(|_| bad("estimate"))?,
            }],
            content_utf8_bytes: match self.content_utf8_bytes {
                Some(bytes) => Some(u64::try_from(bytes).map_err(|_| bad("content byte count"))?),
                None => None,
            },
        };
        observation.validate().map_err(|err| format!("record {}: {err}", self.sequence))?;
        let session_sequence = u64::try_from(self.session_sequence).map_err(|_| bad("session sequence"))?;
        let stored = StoredObservation::new(observation, session_sequence);
        if checksum(sequence, &stored) != self.checksum {
            return Err(format!("record {}: checksum does not verify", self.sequence));
        }
        Ok(RecordedObservation {
            schema_version: SCHEMA_VERSION,
            sequence,
            observation: stored,
            checksum: self.checksum,
        })
    }
}

/// What a reader could verify of a store.
#[derive(Debug, Clone, Default)]
pub struct VerifiedStore {
    /// The verified prefix, in store order.
    pub records: Vec<RecordedObservation>,
    pub capacity: Option<u64>,
    pub schema_version: Option<u32>,
    /// `missing`, `busy`, `corrupt`, `capacity` or `io`, as found.
    pub issues: BTreeSet<Issue>,
}

/// Share of the capacity from which a report warns that appends will stop.
const CAPACITY_NEAR_PERCENT: u64 = 80;

/// The store's verified records followed by `pending`, the observations
/// waiting in the hooks' spool, exactly as beed will store them: verified,
/// a repeated event id kept once (the first), numbered in the order beed
/// ingests them, refused at capacity. So what a hook saw is reported at once,
/// with no service running, and the report does not change when beed takes
/// the spool. A store that cannot be appended to (`corrupt`, `io`, `busy`)
/// takes nothing from the spool, as beed would not.
pub fn read_verified_with(dir: &Path, pending: Vec<Observation>) -> VerifiedStore {
    let mut store = read_verified(dir);
    let appendable = !store.issues.iter().any(|issue| matches!(issue, Issue::Corrupt | Issue::Io | Issue::Busy));
    if !appendable {
        return store;
    }
    let capacity = store.capacity.unwrap_or(DEFAULT_CAPACITY);
    let mut seen: std::collections::HashSet<uuid::Uuid> =
        store.records.iter().map(|record| record.observation.event_id).collect();
    let mut sessions = session_counts(&store.records);
    let mut taken = 0usize;
    for observation in pending {
        if !seen.insert(observation.event_id) {
            continue;
        }
        if store.records.len() as u64 >= capacity {
            store.issues.insert(Issue::Capacity);
            continue;
        }
        let key = (observation.session_kind.clone(), observation.session_id.clone());
        let session_sequence = sessions.get(&key).copied().unwrap_or(0) + 1;
        sessions.insert(key, session_sequence);
        let sequence = store.records.len() as u64 + 1;
        let stored = StoredObservation::new(observation, session_sequence);
        let checksum = checksum(sequence, &stored);
        store.records.push(RecordedObservation {
            schema_version: SCHEMA_VERSION,
            sequence,
            observation: stored,
            checksum,
        });
        taken += 1;
    }
    if taken > 0 {
        // The evidence exists, in the spool, even where no store file does yet.
        store.issues.remove(&Issue::Missing);
    }
    note_capacity(&mut store, capacity);
    store
}

/// `capacity` once the store is full (appends stop), `capacity_near` from
/// 80 % of it, so the stop is announced before it comes.
fn note_capacity(store: &mut VerifiedStore, capacity: u64) {
    let records = store.records.len() as u64;
    store.issues.remove(&Issue::CapacityNear);
    if records >= capacity {
        store.issues.insert(Issue::Capacity);
    } else if records * 100 >= capacity * CAPACITY_NEAR_PERCENT {
        store.issues.insert(Issue::CapacityNear);
    }
}

struct Verification {
    records: Vec<RecordedObservation>,
    capacity: Option<u64>,
    /// Why verification stopped early, if it did, and the issue that names it.
    failure: Option<(Issue, String)>,
}

/// Reads and verifies the store at `dir` without creating anything.
pub fn read_verified(dir: &Path) -> VerifiedStore {
    let mut store = VerifiedStore::default();
    let conn = match sqlite::open_reader(dir, DB_FILE, MIGRATIONS.len()) {
        Ok((conn, version)) => {
            store.schema_version = Some(version);
            conn
        }
        Err(issue) => {
            // A store that acknowledged records and now shows none (or no
            // schema) lost them: that is damage, not an absence of evidence.
            let lost = issue == Issue::Missing && lost_acknowledged(dir, 0);
            store.issues.insert(if lost { Issue::Corrupt } else { issue });
            return store;
        }
    };
    let verification = verify(&conn);
    if let Some((issue, _)) = &verification.failure {
        store.issues.insert(*issue);
    }
    store.records = verification.records;
    store.capacity = verification.capacity;
    if verification.failure.is_none() && lost_acknowledged(dir, store.records.len() as u64) {
        store.issues.insert(Issue::Corrupt);
    }
    if let Some(capacity) = store.capacity {
        note_capacity(&mut store, capacity);
    }
    store
}

fn verify(conn: &Connection) -> Verification {
    let mut verification = Verification { records: Vec::new(), capacity: None, failure: None };
    let capacity =
        conn.query_row("SELECT value FROM meta WHERE key = 'capacity'", [], |row| row.get::<_, String>(0)).optional();
    match capacity {
        Ok(Some(text)) => match text.parse::<u64>() {
            Ok(capacity) => verification.capacity = Some(capacity),
            Err(_) => verification.failure = Some((Issue::Corrupt, "capacity is not a number".into())),
        },
        Ok(None) => verification.failure = Some((Issue::Corrupt, "capacity is missing".into())),
        Err(err) => verification.failure = Some((sqlite::issue_of(&err), err.to_string())),
    }
    let sql = format!("SELECT {SELECT_COLUMNS} FROM observation ORDER BY sequence");
    let result = (|| -> rusqlite::Result<()> {
        let mut statement = conn.prepare(&sql)?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            let expected = verification.records.len() as u64 + 1;
            let record = raw_row(row).map_err(|err| {
                rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                    Some(err.to_string()),
                )
            })?;
            match record.into_record() {
                Ok(record) if record.sequence == expected => verification.records.push(record),
                Ok(record) => {
                    verification.failure = Some((
                        Issue::Corrupt,
                        format!("record {} found where {expected} was expected", record.sequence),
                    ));
                    return Ok(());
                }
                Err(reason) => {
                    verification.failure = Some((Issue::Corrupt, reason));
                    return Ok(());
                }
            }
        }
        Ok(())
    })();
    if let Err(err) = result {
        verification.failure.get_or_insert((sqlite::issue_of(&err), err.to_string()));
    }
    verification
}

// The delivery store behind beed's single writer thread.
impl BatchStore for WritableStore {
    type Item = Observation;
    type Answer = Result<AppendAnswer, AppendRefusal>;

    fn append_batch(&mut self, items: &[Observation]) -> Vec<Self::Answer> {
        WritableStore::append_batch(self, items)
    }
}

impl WriterHandle<WritableStore> {
    /// Appends `observation` and waits until it is committed (or refused).
    pub async fn append(&self, observation: Observation) -> Result<AppendAnswer, AppendRefusal> {
        self.submit(observation)
            .await
            .unwrap_or_else(|| Err(AppendRefusal::Io("writer queue is full or stopped".into())))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bee_proto::delivery::Observation;

    const SID: &str = "3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c";

    pub(crate) fn observation(session: &str, bytes: u64) -> Observation {
        Observation {
            kind: ObservationKind::Delivered,
            observed_at_utc: "2026-11-30T12:00:00.000Z".into(),
            event_id: uuid::Uuid::new_v4(),
            session_kind: Identity::parse(bee_proto::identity::NATIVE_SESSION_KIND).unwrap(),
            session_id: Identity::parse(session).unwrap(),
            surface: Surface::Plain,
            item_id: Identity::parse("steering-block").unwrap(),
            item_version: Identity::parse("1").unwrap(),
            utf8_bytes: bytes,
            estimates: vec![Estimate {
                estimator: ESTIMATOR_ID.into(),
                version: 1,
                estimated_tokens: bytes.div_ceil(4),
            }],
            content_utf8_bytes: Some(bytes),
        }
    }

    #[test]
    fn appends_are_idempotent_and_conflicts_keep_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let store_dir = dir.path().join("delivery-v1");
        let mut store = WritableStore::open(&store_dir).unwrap();
        let first = observation(SID, 10);
        let mut conflicting = first.clone();
        conflicting.utf8_bytes = 11;
        let other = observation("9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", 3);
        let answers = store.append_batch(&[first.clone(), first.clone(), conflicting, other, observation(SID, 1)]);
        let outcomes: Vec<_> = answers.into_iter().map(|a| a.unwrap()).map(|a| (a.outcome, a.sequence)).collect();
        assert_eq!(
            outcomes,
            vec![
                (AppendOutcome::Recorded, 1),
                (AppendOutcome::Duplicate, 1),
                (AppendOutcome::ConflictKeptFirst, 1),
                (AppendOutcome::Recorded, 2),
                (AppendOutcome::Recorded, 3),
            ]
        );
        drop(store);
        let verified = read_verified(&store_dir);
        assert!(verified.issues.is_empty(), "{:?}", verified.issues);
        assert_eq!(verified.capacity, Some(DEFAULT_CAPACITY), "the migration's capacity is the contract's");
        let sessions: Vec<_> = verified.records.iter().map(|r| r.observation.session_sequence).collect();
        assert_eq!(sessions, vec![1, 1, 2]);
        assert_eq!(verified.records[0].observation.utf8_bytes, 10);
    }

    /// A store written before records carried the texts' own bytes: its rows
    /// verify after the migration (the checksum never covered the field) and
    /// read back as not recorded, never as 0.
    #[test]
    fn records_from_before_the_content_column_still_verify() {
        let dir = tempfile::tempdir().unwrap();
        let store_dir = dir.path().join("delivery-v1");
        {
            // The first schema, and a record as its writer inserted it.
            std::fs::create_dir_all(&store_dir).unwrap();
            let conn = Connection::open(store_dir.join(DB_FILE)).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            let mut old = observation(SID, 10);
            old.content_utf8_bytes = None;
            let stored = StoredObservation::new(old, 1);
            let checksum = checksum(1, &stored);
            conn.execute(
                "INSERT INTO observation (sequence, event_id, kind, observed_at_utc, session_kind, session_id,
                     session_sequence, surface, item_id, item_version, utf8_bytes, estimator, estimator_version,
                     estimated_tokens, checksum)
                 VALUES (1, ?1, 'Delivered', ?2, 'claude-native-session', ?3, 1, 'hook.prompt.plain',
                         'steering-block', '1', 10, 'utf16-ceil-div4', 1, 3, ?4)",
                params![stored.event_id.hyphenated().to_string(), stored.observed_at_utc, SID, checksum],
            )
            .unwrap();
        }
        let mut store = WritableStore::open(&store_dir).unwrap();
        store.append_batch(&[observation(SID, 5)]).into_iter().for_each(|a| assert!(a.is_ok()));
        drop(store);
        let verified = read_verified(&store_dir);
        assert!(verified.issues.is_empty(), "{:?}", verified.issues);
        let content: Vec<_> = verified.records.iter().map(|r| r.observation.content_utf8_bytes).collect();
        assert_eq!(content, vec![None, Some(5)]);
    }

    #[test]
    fn a_second_writer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = WritableStore::open(dir.path()).unwrap();
        assert!(matches!(WritableStore::open(dir.path()), Err(StoreError::Locked(_))));
    }

    #[test]
    fn capacity_stops_appends_and_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        drop(WritableStore::open(dir.path()).unwrap());
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'capacity'", []).unwrap();
        drop(conn);
        let mut store = WritableStore::open(dir.path()).unwrap();
        let kept = observation(SID, 1);
        let answers = store.append_batch(&[kept.clone(), observation(SID, 2), observation(SID, 3), kept]);
        assert!(answers[0].is_ok() && answers[1].is_ok());
        assert_eq!(answers[2], Err(AppendRefusal::Capacity(2)));
        // A repeat of a stored event is still recognised at capacity.
        assert_eq!(answers[3].as_ref().map(|a| a.outcome), Ok(AppendOutcome::Duplicate));
        drop(store);
        let verified = read_verified(dir.path());
        assert_eq!(verified.records.len(), 2);
        assert!(verified.issues.contains(&Issue::Capacity));
        assert!(!verified.issues.contains(&Issue::CapacityNear), "full, not near");
    }

    #[test]
    fn nearing_capacity_is_said_before_appends_stop() {
        let dir = tempfile::tempdir().unwrap();
        drop(WritableStore::open(dir.path()).unwrap());
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'capacity'", []).unwrap();
        drop(conn);
        let mut store = WritableStore::open(dir.path()).unwrap();
        for n in 1..=3 {
            assert!(store.append_batch(&[observation(SID, n)])[0].is_ok());
        }
        assert!(read_verified(dir.path()).issues.is_empty(), "3 of 5: 60 %");
        assert!(store.append_batch(&[observation(SID, 4)])[0].is_ok());
        let verified = read_verified(dir.path());
        assert_eq!(verified.issues.iter().copied().collect::<Vec<_>>(), [Issue::CapacityNear], "4 of 5: 80 %");
    }

    #[test]
    fn a_newer_schema_is_refused_by_writers_and_unreadable_to_readers() {
        let dir = tempfile::tempdir().unwrap();
        drop(WritableStore::open(dir.path()).unwrap());
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        drop(conn);
        assert!(matches!(WritableStore::open(dir.path()), Err(StoreError::NewerSchema { found: 99, .. })));
        let verified = read_verified(dir.path());
        assert!(verified.issues.contains(&Issue::Io));
        assert!(verified.records.is_empty());
    }

    #[test]
    fn readers_create_nothing_and_refuse_links() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope").join("delivery-v1");
        assert_eq!(read_verified(&missing).issues, BTreeSet::from([Issue::Missing]));
        assert!(!dir.path().join("nope").exists());
        let real = dir.path().join("real");
        drop(WritableStore::open(&real).unwrap());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read_verified(&link).issues, BTreeSet::from([Issue::Io]));
        std::fs::rename(real.join(DB_FILE), real.join("moved")).unwrap();
        std::os::unix::fs::symlink(real.join("moved"), real.join(DB_FILE)).unwrap();
        assert_eq!(read_verified(&real).issues, BTreeSet::from([Issue::Io]));
    }

    #[test]
    fn a_sequence_gap_ends_the_verified_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = WritableStore::open(dir.path()).unwrap();
        let _ = store.append_batch(&[observation(SID, 1), observation(SID, 2), observation(SID, 3)]);
        drop(store);
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.execute("DELETE FROM observation WHERE sequence = 2", []).unwrap();
        drop(conn);
        let verified = read_verified(dir.path());
        assert_eq!(verified.records.len(), 1);
        assert!(verified.issues.contains(&Issue::Corrupt));
    }
}
