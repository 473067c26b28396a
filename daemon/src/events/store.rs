//! The events store: hook lifecycle events in SQLite (`events-v1/`), written
//! by one writer thread in group commits, read by the recent view, the
//! filter options, the stream replay and the audit.
//!
//! Each row keeps the event object as answered (without its id) and the
//! fields the views filter on; how it arrived (`direct`, or the sender's
//! failure when it came through the spool) is the audit's transport evidence.
//! A row's checksum covers its columns, not the indexes: the audit reads
//! the store, and beed writes it, only once SQLite's integrity check (every
//! index against its table) passes ([`open_checked`], [`EventStore::open`]).

use bee_proto::delivery::Issue;
use bee_proto::events::{FILTER_SESSIONS, FilterOptions, NewEvent, PostFailure};
pub use rusqlite::Connection;
use rusqlite::{OptionalExtension, params};
use serde_json::Value;
use std::path::Path;

use crate::storage::sqlite::{self, DbError};
use crate::storage::writer::BatchStore;

/// Database file inside the events store directory.
pub const DB_FILE: &str = "events.sqlite3";

const MIGRATIONS: &[&str] = &[
    r#"
    CREATE TABLE event (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        source_app       TEXT NOT NULL,
        session_id       TEXT NOT NULL,
        hook_event_type  TEXT NOT NULL,
        timestamp_ms     INTEGER NOT NULL,
        tool_name        TEXT,
        event_key        TEXT UNIQUE,
        delivery         TEXT NOT NULL,
        received_at_ms   INTEGER NOT NULL,
        body             TEXT NOT NULL
    ) STRICT;
    CREATE INDEX event_session ON event (session_id, id);
    CREATE INDEX event_source ON event (source_app);
    CREATE INDEX event_type ON event (hook_event_type);
    -- Posts a server accepted without a stored id coming back: evidence only.
    CREATE TABLE receipt_issue (
        seq              INTEGER PRIMARY KEY,
        session_id       TEXT NOT NULL,
        hook_event_type  TEXT NOT NULL,
        failure          TEXT NOT NULL,
        at_ms            INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX receipt_issue_session ON receipt_issue (session_id);
    CREATE TABLE health_probe (id INTEGER PRIMARY KEY CHECK (id = 1), nonce INTEGER NOT NULL) STRICT;
"#,
    // The audit's "sessions of the last day" reads by arrival time.
    r#"
    CREATE INDEX event_received ON event (received_at_ms);
"#,
    // A checksum per event over every column, so a flipped bit is named, not
    // believed. Rows from before it have none: unverifiable, not corrupt.
    r#"
    ALTER TABLE event ADD COLUMN crc INTEGER;
"#,
    // Recent events are the latest by the producer's timestamp, as in the
    // reference; an operator's answer to a human-in-the-loop request is kept
    // beside its event (whose row, the receipt, never changes).
    r#"
    CREATE INDEX event_time ON event (timestamp_ms);
    CREATE TABLE hitl_response (
        event_id         INTEGER PRIMARY KEY REFERENCES event (id),
        status           TEXT NOT NULL,
        responded_at_ms  INTEGER NOT NULL
    ) STRICT;
"#,
];

/// The columns an event's checksum covers, in order.
const CRC_COLUMNS: &str =
    "id, source_app, session_id, hook_event_type, timestamp_ms, tool_name, event_key, delivery, received_at_ms, body";
/// Number of [`CRC_COLUMNS`].
const CRC_COLUMN_COUNT: usize = sqlite::column_count(CRC_COLUMNS);

/// How an event reached the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrival {
    /// Posted and answered.
    Direct,
    /// Taken from a sender's spool after its post failed.
    Spooled(PostFailure),
}

impl Arrival {
    fn as_text(&self) -> String {
        match self {
            Arrival::Direct => "direct".to_owned(),
            Arrival::Spooled(failure) => failure_name(failure),
        }
    }
}

/// A failure's stable name (`unreachable`, `late`, `refused`, `no_receipt`).
pub fn failure_name(failure: &PostFailure) -> String {
    match failure {
        PostFailure::Unreachable => "unreachable".to_owned(),
        PostFailure::Late => "late".to_owned(),
        PostFailure::Refused { status } => format!("refused_{status}"),
        PostFailure::NoReceipt => "no_receipt".to_owned(),
    }
}

/// What the events writer is asked to do.
#[derive(Debug)]
pub enum EventWrite {
    /// Store an event; answered with its id.
    Event(Box<NewEvent>, Arrival),
    /// Keep a sender's report of an accepted post without a receipt.
    ReceiptIssue { session_id: String, hook_event_type: String, failure: PostFailure, at_ms: i64 },
    /// Write `nonce` to the health probe row; answered with 0.
    Probe(i64),
    /// Keep an operator's answer (the new `humanInTheLoopStatus`) for an
    /// event; answered with the event's id, `fresh` false when there is no
    /// such event or it was answered already (the first answer stands).
    Response { event_id: i64, status: String, at_ms: i64 },
}

/// What a write did: the event's id (0 for other writes) and whether it is new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    pub id: i64,
    pub fresh: bool,
}

/// The events store as its writer holds it.
pub struct EventStore {
    db: sqlite::Writer,
}

impl EventStore {
    /// Opens the store for its one writer, creating it when there is none.
    /// An existing store is opened only once it passes the integrity check
    /// [`check`] runs too ([`sqlite::open_writer`] runs it before any
    /// migration or append): a damaged store is refused, left byte for
    /// byte as it was found. A file SQLite does not read as a database at
    /// all is refused as corrupt too, by its path.
    pub fn open(dir: &Path) -> Result<EventStore, DbError> {
        let db = sqlite::open_writer(dir, DB_FILE, MIGRATIONS).map_err(|err| match err {
            DbError::Sqlite(err) if sqlite::issue_of(&err) == Issue::Corrupt => {
                DbError::Corrupt { path: dir.join(DB_FILE), reason: err.to_string() }
            }
            other => other,
        })?;
        Ok(EventStore { db })
    }

    fn write(tx: &rusqlite::Transaction<'_>, item: &EventWrite) -> rusqlite::Result<Stored> {
        match item {
            EventWrite::Event(event, arrival) => {
                let body = Value::Object(event.body.clone()).to_string();
                let (delivery, received_at_ms) = (arrival.as_text(), bee_proto::time::now_unix_ms());
                // Every column of [`CRC_COLUMNS`] but the id, in order.
                let values: [&dyn rusqlite::ToSql; 9] = [
                    &event.source_app,
                    &event.session_id,
                    &event.hook_event_type,
                    &event.timestamp_ms,
                    &event.tool_name(),
                    &event.key(),
                    &delivery,
                    &received_at_ms,
                    &body,
                ];
                let inserted = tx
                    .prepare_cached(
                        "INSERT INTO event (source_app, session_id, hook_event_type, timestamp_ms, tool_name, event_key,
                                            delivery, received_at_ms, body)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (event_key) DO NOTHING",
                    )?
                    .execute(values.as_slice())?;
                if inserted == 1 {
                    // The checksum covers the id, known only now: from the
                    // values just written.
                    let id = tx.last_insert_rowid();
                    let mut covered: Vec<&dyn rusqlite::ToSql> = vec![&id];
                    covered.extend(values);
                    let crc = sqlite::params_crc(&covered)?;
                    tx.prepare_cached("UPDATE event SET crc = ?1 WHERE id = ?2")?.execute([crc, id])?;
                    return Ok(Stored { id, fresh: true });
                }
                // Stored before (a late post that was also spooled): its id.
                let id = tx
                    .prepare_cached("SELECT id FROM event WHERE event_key = ?1")?
                    .query_row([event.key()], |row| row.get(0))?;
                Ok(Stored { id, fresh: false })
            }
            EventWrite::ReceiptIssue { session_id, hook_event_type, failure, at_ms } => {
                tx.prepare_cached(
                    "INSERT INTO receipt_issue (session_id, hook_event_type, failure, at_ms) VALUES (?1, ?2, ?3, ?4)",
                )?
                .execute(params![session_id, hook_event_type, failure_name(failure), at_ms])?;
                Ok(Stored { id: 0, fresh: true })
            }
            EventWrite::Response { event_id, status, at_ms } => {
                let kept = tx
                    .prepare_cached(
                        "INSERT INTO hitl_response (event_id, status, responded_at_ms)
                         SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM event WHERE id = ?1)
                         ON CONFLICT (event_id) DO NOTHING",
                    )?
                    .execute(params![event_id, status, at_ms])?;
                Ok(Stored { id: *event_id, fresh: kept == 1 })
            }
            EventWrite::Probe(nonce) => {
                tx.prepare_cached(
                    "INSERT INTO health_probe (id, nonce) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET nonce = ?1",
                )?
                .execute([nonce])?;
                Ok(Stored { id: 0, fresh: true })
            }
        }
    }
}

impl BatchStore for EventStore {
    type Item = EventWrite;
    type Answer = Result<Stored, String>;

    fn append_batch(&mut self, items: &[EventWrite]) -> Vec<Self::Answer> {
        let written = (|| {
            let tx = self.db.conn.transaction()?;
            let ids = items.iter().map(|item| EventStore::write(&tx, item)).collect::<rusqlite::Result<Vec<_>>>()?;
            tx.commit()?;
            Ok::<_, rusqlite::Error>(ids)
        })();
        match written {
            Ok(ids) => ids.into_iter().map(Ok).collect(),
            Err(err) => {
                tracing::warn!(error = %err, "events not stored");
                items.iter().map(|_| Err(err.to_string())).collect()
            }
        }
    }
}

/// Opens the events store at `dir` read-only. Cheap: what the views open
/// per request. It does not look at every page; [`open_checked`] does.
pub fn open_reader(dir: &Path) -> Result<Connection, Issue> {
    Ok(sqlite::open_reader(dir, DB_FILE, MIGRATIONS.len())?.0)
}

/// Why the events store was not opened: the issue a report names, and what
/// was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} ({reason})", issue.as_str())]
pub struct Refusal {
    pub issue: Issue,
    pub reason: String,
}

impl From<Refusal> for Issue {
    fn from(refusal: Refusal) -> Issue {
        refusal.issue
    }
}

/// Opens the events store at `dir` read-only, as [`open_reader`] does, once
/// it passes [`check`]: what `beectl audit` reads through. Nothing is
/// written to the store.
pub fn open_checked(dir: &Path) -> Result<Connection, Refusal> {
    let conn = open_reader(dir).map_err(|issue| Refusal {
        issue,
        reason: match issue {
            Issue::Missing => "no event stored yet".to_owned(),
            Issue::Busy => "another process holds it; try again".to_owned(),
            Issue::Corrupt => "it does not read as Bee's events store".to_owned(),
            _ => "it could not be read (not a regular file, too large, or of a newer schema)".to_owned(),
        },
    })?;
    check(&conn)?;
    Ok(conn)
}

/// The integrity check beed's writer opens the store after
/// ([`sqlite::check_integrity`], within [`sqlite::INTEGRITY_BUDGET`]):
/// every page, and every index against its table — an index whose entries
/// disagree with its rows makes reads through it miss (or invent) events,
/// and no row's checksum covers it. Damage is `corrupt`, named by its table
/// and index. A check that ran out of its time found nothing in what it
/// read: the store is used, as beed uses it.
pub fn check(conn: &Connection) -> Result<(), Refusal> {
    match sqlite::check_integrity(conn, sqlite::INTEGRITY_BUDGET) {
        sqlite::Integrity::Sound => Ok(()),
        sqlite::Integrity::Unfinished => {
            tracing::warn!("the events store's integrity check did not finish in its time; reading it");
            Ok(())
        }
        sqlite::Integrity::Damaged(found) => Err(Refusal { issue: Issue::Corrupt, reason: named_damage(conn, &found) }),
    }
}

/// What the integrity check `found`, each finding behind the table (and
/// index) it is in: SQLite names an index by its name only, and a damaged
/// b-tree by its root page.
fn named_damage(conn: &Connection, found: &str) -> String {
    // (type, name, table, root page); none when the schema does not read.
    let objects: Vec<(String, String, String, i64)> = conn
        .prepare("SELECT type, name, tbl_name, rootpage FROM sqlite_master WHERE type IN ('table', 'index')")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .unwrap_or_default();
    let label = |(kind, name, table, _): &(String, String, String, i64)| {
        if kind == "index" { format!("index {name} of table {table}") } else { format!("table {name}") }
    };
    // Findings are joined by "; ", and one may hold several lines (the
    // first saying which database).
    let findings = found
        .split("; ")
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("*** in database"));
    let named = findings.map(|finding| {
        let tree = finding
            .strip_prefix("Tree ")
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|root| root.parse::<i64>().ok());
        let words: Vec<&str> = finding.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
        let object = match tree {
            Some(root) => objects.iter().find(|object| object.3 == root),
            // An index named wins over its table (`NULL value in event.x`
            // names only the table).
            None => objects
                .iter()
                .filter(|object| object.0 == "index")
                .chain(objects.iter().filter(|object| object.0 == "table"))
                .find(|object| words.contains(&object.1.as_str())),
        };
        match object {
            Some(object) => format!("{}: {finding}", label(object)),
            None => finding.to_owned(),
        }
    });
    format!("its integrity check found damage: {}", named.collect::<Vec<_>>().join("; "))
}

/// The events store as `daemon status` shows it; unknown counts are `null`.
pub fn store_status(dir: &Path) -> bee_proto::api::StoreStatus {
    let counted = open_reader(dir).and_then(|conn| {
        conn.query_row("SELECT COUNT(*) FROM event", [], |row| row.get::<_, i64>(0)).map_err(|e| sqlite::issue_of(&e))
    });
    bee_proto::api::StoreStatus {
        name: "events".to_owned(),
        path: dir.display().to_string(),
        schema_version: counted.is_ok().then_some(MIGRATIONS.len() as u32),
        records: counted.as_ref().ok().and_then(|n| u64::try_from(*n).ok()),
        capacity: None,
        issues: counted.err().into_iter().collect(),
        size_bytes: crate::storage::files::dir_size(dir).ok(),
    }
}

/// The latest events as one JSON array, oldest first, and the newest id in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recent {
    pub json: String,
    pub newest_id: i64,
    pub count: usize,
    /// Rows of the answer left out because they fail their checksum (or no
    /// longer read as an event): damage, named, never shown as events.
    pub damaged: usize,
}

/// The latest `limit` events by their timestamp (ties by id), oldest
/// first, holding to `max_bytes` of stored events (the newest are kept,
/// with no gap), as the reference orders them; `newest_id` is the store's
/// newest id when read, so a stream sends live only what came after. Each
/// is the stored text with its id appended (and its answer's status, when
/// an operator answered it) — the bytes a parse, insert and print would
/// give — written straight into the answer: one copy of it in memory.
pub fn recent(conn: &Connection, limit: usize, max_bytes: usize) -> rusqlite::Result<Recent> {
    recent_of(conn, None, limit, max_bytes)
}

/// [`recent`] of one session's events only, when `session` names one: a
/// stream's per-session replay, which no other session's traffic can push
/// out of the window.
pub fn recent_of(conn: &Connection, session: Option<&str>, limit: usize, max_bytes: usize) -> rusqlite::Result<Recent> {
    // Only this session's rows (the same text as a parameter, or no filter).
    let only = if session.is_some() { "session_id = ?2" } else { "?2 IS NULL" };
    // One snapshot for the sizes and the bodies.
    let tx = conn.unchecked_transaction()?;
    let newest_id: i64 = tx.query_row("SELECT coalesce(max(id), 0) FROM event", [], |row| row.get(0))?;
    // Sizes first, newest first, to find where the budget ends…
    let mut sizes = tx.prepare_cached(&format!(
        "SELECT id, timestamp_ms,
                length(CAST(body AS BLOB)) + coalesce((SELECT length(status) FROM hitl_response WHERE event_id = id), 0)
         FROM event WHERE {only} ORDER BY timestamp_ms DESC, id DESC LIMIT ?1"
    ))?;
    let mut rows = sizes.query(rusqlite::params![limit as i64, session])?;
    let (mut bytes, mut oldest, mut count) = (2usize, None, 0usize);
    while let Some(row) = rows.next()? {
        let (id, at_ms, size): (i64, i64, i64) = (row.get(0)?, row.get(1)?, row.get(2)?);
        // The text grows by `,"id":N` and a separating comma.
        let grown = usize::try_from(size).unwrap_or(usize::MAX).saturating_add(8 + 20);
        if bytes.saturating_add(grown) > max_bytes {
            break;
        }
        bytes += grown;
        oldest = Some((at_ms, id));
        count += 1;
    }
    drop(rows);
    drop(sizes);
    let mut json = String::with_capacity(bytes);
    let mut damaged = 0;
    json.push('[');
    if let Some((oldest_at, oldest_id)) = oldest {
        // …then the bodies, oldest first: exactly those rows, a prefix of
        // the newest-first order.
        let only = if session.is_some() { "session_id = ?3" } else { "?3 IS NULL" };
        let mut bodies = tx.prepare_cached(&format!(
            "SELECT id, body, {CRC_COLUMNS}, crc, (SELECT status FROM hitl_response WHERE event_id = id)
             FROM event WHERE (timestamp_ms, id) >= (?1, ?2) AND {only} ORDER BY timestamp_ms, id"
        ))?;
        let mut rows = bodies.query(rusqlite::params![oldest_at, oldest_id, session])?;
        let mut first = true;
        while let Some(row) = rows.next()? {
            let Some(text) = answered_row(row)? else {
                damaged += 1;
                continue;
            };
            if !first {
                json.push(',');
            }
            first = false;
            json.push_str(&text);
        }
    }
    json.push(']');
    Ok(Recent { json, newest_id, count, damaged })
}

/// A row of `id, body, CRC_COLUMNS…, crc, status` as the event answered:
/// the stored text with its id (and the answer's status in place of the
/// stored one). `None` for a row that does not match its checksum.
fn answered_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Option<String>> {
    let id: i64 = row.get(0)?;
    if !sqlite::row_verifies(row, 2, CRC_COLUMN_COUNT)? {
        // A damaged row is not shown as an event; the audit names it.
        tracing::warn!(id, "stored event does not match its checksum; left out");
        return Ok(None);
    }
    let body = row.get_ref(1)?.as_str()?;
    let status: Option<String> = row.get(2 + CRC_COLUMN_COUNT + 1)?;
    if let Some(status) = status {
        // Rare: parsed, so the stored status is replaced, not repeated.
        let (Ok(Value::Object(mut event)), Ok(status)) =
            (serde_json::from_str::<Value>(body), serde_json::from_str::<Value>(&status))
        else {
            return Ok(None);
        };
        event.insert(bee_proto::events::HITL_STATUS_FIELD.to_owned(), status);
        event.insert("id".to_owned(), Value::from(id));
        return Ok(Some(Value::Object(event).to_string()));
    }
    let Some(fields) = body.strip_prefix('{').and_then(|b| b.strip_suffix('}')) else {
        return Ok(None);
    };
    let mut text = String::with_capacity(fields.len() + 30);
    text.push('{');
    text.push_str(fields);
    if !fields.is_empty() {
        text.push(',');
    }
    text.push_str("\"id\":");
    text.push_str(&id.to_string());
    text.push('}');
    Ok(Some(text))
}

/// Stored events per hook event type and source app (the export's counters).
pub fn counts_by_type(conn: &Connection) -> rusqlite::Result<Vec<(String, String, u64)>> {
    let mut statement = conn.prepare(
        "SELECT hook_event_type, source_app, COUNT(*) FROM event GROUP BY hook_event_type, source_app ORDER BY 1, 2",
    )?;
    let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get::<_, i64>(2)?)))?;
    rows.map(|row| row.map(|(t, a, n)| (t, a, u64::try_from(n).unwrap_or(0)))).collect()
}

/// The source app of `session`'s first stored event.
pub fn session_source_app(conn: &Connection, session: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT source_app FROM event WHERE session_id = ?1 ORDER BY id LIMIT 1")?
        .query_row([session], |row| row.get(0))
        .optional()
}

/// One event as answered (with its id and any answer's status), when it is
/// stored and sound.
pub fn event_by_id(conn: &Connection, id: i64) -> rusqlite::Result<Option<Value>> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT id, body, {CRC_COLUMNS}, crc, (SELECT status FROM hitl_response WHERE event_id = id)
         FROM event WHERE id = ?1"
    ))?;
    let mut rows = statement.query([id])?;
    let Some(row) = rows.next()? else { return Ok(None) };
    Ok(answered_row(row)?.and_then(|text| serde_json::from_str(&text).ok()))
}

/// The distinct values the dashboard filters on.
pub fn filter_options(conn: &Connection) -> rusqlite::Result<FilterOptions> {
    let column = |sql: &str| -> rusqlite::Result<Vec<String>> {
        conn.prepare_cached(sql)?.query_map([], |row| row.get(0))?.collect()
    };
    Ok(FilterOptions {
        source_apps: column("SELECT DISTINCT source_app FROM event ORDER BY source_app")?,
        session_ids: column(&format!(
            "SELECT session_id FROM event GROUP BY session_id ORDER BY MAX(id) DESC LIMIT {FILTER_SESSIONS}"
        ))?,
        hook_event_types: column("SELECT DISTINCT hook_event_type FROM event ORDER BY hook_event_type")?,
    })
}

/// One stored event as the audit sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEvent {
    pub id: i64,
    pub source_app: String,
    pub hook_event_type: String,
    pub timestamp_ms: i64,
    pub received_at_ms: i64,
    pub delivery: String,
    /// `owner` and `deadline` of a permission request, when sent.
    pub owner: Option<String>,
    pub deadline_ms: Option<i64>,
    /// The tool the event names (the manifest's wait policies are per tool).
    pub tool_name: Option<String>,
    /// False when the row does not match its checksum: damaged, not evidence.
    pub verified: bool,
}

/// The events of `session`, in the order they were stored. Each row's
/// checksum is verified before anything of it is parsed: a damaged row (a
/// flipped bit in its body, text that is no longer UTF-8) is kept out of
/// the evidence as `verified: false` — named by the audit as a persistence
/// failure of its session — and never fails the read.
pub fn session_events(conn: &Connection, session: &str) -> rusqlite::Result<Vec<SessionEvent>> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT id, source_app, hook_event_type, timestamp_ms, received_at_ms, delivery, {CRC_COLUMNS}, crc
             FROM event WHERE session_id = ?1 ORDER BY id"
    ))?;
    let rows = statement.query_map([session], |row| {
        let text = |at: usize| -> rusqlite::Result<Option<String>> {
            Ok(match row.get_ref(at)? {
                rusqlite::types::ValueRef::Text(bytes) => std::str::from_utf8(bytes).ok().map(str::to_owned),
                _ => None,
            })
        };
        let integer = |at: usize| -> rusqlite::Result<Option<i64>> { Ok(row.get_ref(at)?.as_i64().ok()) };
        let (source_app, hook_event_type, delivery) = (text(1)?, text(2)?, text(5)?);
        let (timestamp_ms, received_at_ms) = (integer(3)?, integer(4)?);
        let sound = sqlite::row_verifies(row, 6, CRC_COLUMN_COUNT)?;
        // The body (the last checksummed column) is parsed only once the row verifies.
        let body = if sound { text(6 + CRC_COLUMN_COUNT - 1)? } else { None };
        let request = body.as_deref().and_then(|body| serde_json::from_str::<PermissionFields>(body).ok());
        let whole = (&source_app, &hook_event_type, &delivery, timestamp_ms, received_at_ms);
        let verified = sound && request.is_some() && matches!(whole, (Some(_), Some(_), Some(_), Some(_), Some(_)));
        let request = request.unwrap_or_default();
        Ok(SessionEvent {
            id: row.get(0)?,
            source_app: source_app.unwrap_or_default(),
            hook_event_type: hook_event_type.unwrap_or_default(),
            timestamp_ms: timestamp_ms.unwrap_or_default(),
            received_at_ms: received_at_ms.unwrap_or_default(),
            delivery: delivery.unwrap_or_default(),
            owner: match request.owner {
                Some(Value::String(owner)) => Some(owner),
                _ => None,
            },
            deadline_ms: request.deadline.as_ref().and_then(Value::as_i64),
            tool_name: match request.tool_name {
                Some(Value::String(tool)) => Some(tool),
                _ => None,
            },
            verified,
        })
    })?;
    rows.collect()
}

/// What the audit reads of a stored event's body: a permission request's
/// `owner` and `deadline`, as sent, and the tool it names (any JSON; only a
/// string owner or tool and an integer deadline count).
#[derive(Debug, Default, serde::Deserialize)]
struct PermissionFields {
    #[serde(default)]
    owner: Option<Value>,
    #[serde(default)]
    deadline: Option<Value>,
    #[serde(default)]
    tool_name: Option<Value>,
}

/// Receipt issues reported for `session`.
pub fn receipt_issues(conn: &Connection, session: &str) -> rusqlite::Result<Vec<(String, String, i64)>> {
    let mut statement = conn.prepare_cached(
        "SELECT hook_event_type, failure, at_ms FROM receipt_issue WHERE session_id = ?1 ORDER BY seq",
    )?;
    let rows = statement.query_map([session], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    rows.collect()
}

/// Sessions with an event received at or after `since_ms`, latest first.
pub fn recent_sessions(conn: &Connection, since_ms: i64, limit: usize) -> rusqlite::Result<Vec<String>> {
    // A store no beed has migrated yet has no time index: read it all.
    let mut statement = match conn.prepare_cached(RECENT_SESSIONS_SQL) {
        Ok(statement) => statement,
        Err(_) => conn.prepare_cached(&RECENT_SESSIONS_SQL.replace(" INDEXED BY event_received", ""))?,
    };
    let rows = statement.query_map(params![since_ms, limit as i64], |row| row.get(0))?;
    rows.collect()
}

/// Sessions with events received since a time, the latest first. The time
/// index bounds the work by the window, not by the whole store.
const RECENT_SESSIONS_SQL: &str = "SELECT session_id FROM event INDEXED BY event_received WHERE received_at_ms >= ?1
     GROUP BY session_id ORDER BY MAX(id) DESC LIMIT ?2";

/// The nonce last written by a health probe.
pub fn probe(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    conn.query_row("SELECT nonce FROM health_probe WHERE id = 1", [], |row| row.get(0)).optional()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_audit_reads_recent_sessions_through_the_time_index() {
        let dir = tempfile::tempdir().unwrap();
        drop(EventStore::open(&dir.path().join("events")).unwrap());
        let conn = open_reader(&dir.path().join("events")).unwrap();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {RECENT_SESSIONS_SQL}"))
            .unwrap()
            .query_map(params![0, 300], |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(plan.iter().any(|step| step.contains("event_received")), "{plan:?}");
    }

    /// A store of `events` events of sessions `s-0`…`s-6`, each with
    /// `pad` bytes of payload, written as beed writes them.
    fn stored(dir: &Path, events: usize, pad: usize) {
        let mut store = EventStore::open(dir).unwrap();
        let writes: Vec<EventWrite> = (0..events)
            .map(|n| {
                let mut body = serde_json::Map::new();
                body.insert("session_id".to_owned(), Value::from(format!("s-{}", n % 7)));
                body.insert("payload".to_owned(), serde_json::json!({"n": n, "pad": "x".repeat(pad)}));
                let event = NewEvent {
                    source_app: "app".to_owned(),
                    session_id: format!("s-{}", n % 7),
                    hook_event_type: "PreToolUse".to_owned(),
                    timestamp_ms: 1_700_000_000_000 + n as i64,
                    body,
                };
                EventWrite::Event(Box::new(event), Arrival::Direct)
            })
            .collect();
        for answer in store.append_batch(&writes) {
            answer.unwrap();
        }
    }

    /// A byte flipped in a session id inside the `event_session` index:
    /// every page still reads (`quick_check` passes it), no row's checksum
    /// covers an index, and reads by session miss the event. The check
    /// names it `corrupt`, by index and table, and neither it nor the
    /// writer's open changes a byte of the store.
    #[test]
    fn an_index_that_disagrees_with_its_table_is_corrupt_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events");
        stored(&events, 20, 0);
        assert_eq!(open_checked(&events).map(drop), Ok(()), "a sound store passes");
        let db = events.join(DB_FILE);
        let pages: Vec<(i64, i64)> = {
            let conn = open_reader(&events).unwrap();
            let size: i64 = conn.pragma_query_value(None, "page_size", |row| row.get(0)).unwrap();
            conn.prepare("SELECT pageno FROM dbstat WHERE name = 'event_session'")
                .unwrap()
                .query_map([], |row| Ok((row.get::<_, i64>(0)?, size)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let mut bytes = std::fs::read(&db).unwrap();
        let at = pages
            .iter()
            .find_map(|&(page, size)| {
                let start = usize::try_from((page - 1) * size).unwrap();
                let end = start + usize::try_from(size).unwrap();
                bytes[start..end].windows(3).position(|w| w == b"s-3").map(|at| start + at + 2)
            })
            .expect("a session id in the index");
        bytes[at] ^= 0x04;
        std::fs::write(&db, &bytes).unwrap();

        let conn = open_reader(&events).unwrap();
        let quick: String = conn.query_row("PRAGMA quick_check", [], |row| row.get(0)).unwrap();
        assert_eq!(quick, "ok", "what quick_check does not see");
        drop(conn);
        let refused = open_checked(&events).map(drop).unwrap_err();
        assert_eq!(refused.issue, Issue::Corrupt, "{refused}");
        assert!(refused.reason.contains("index event_session of table event"), "{refused}");
        let opened = EventStore::open(&events).map(drop);
        assert!(matches!(opened, Err(DbError::Corrupt { .. })), "{opened:?}");
        assert_eq!(std::fs::read(&db).unwrap(), bytes, "the damaged store is left as it was");
    }

    /// A file of garbage where the store was: `corrupt`, never `io`.
    #[test]
    fn a_store_of_garbage_is_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events");
        stored(&events, 3, 0);
        let db = events.join(DB_FILE);
        let garbage: Vec<u8> = (0..8_192u32).map(|n| (n * 7_919 % 251) as u8).collect();
        std::fs::write(&db, &garbage).unwrap();
        assert_eq!(open_checked(&events).map(drop).map_err(|refused| refused.issue), Err(Issue::Corrupt));
        let opened = EventStore::open(&events).map(drop);
        assert!(matches!(opened, Err(DbError::Corrupt { .. })), "{opened:?}");
        assert_eq!(std::fs::read(&db).unwrap(), garbage);
    }

    /// How long the check takes on a store of 100,000 events (run by hand:
    /// `cargo test -p bee-daemon --release -- --ignored --nocapture check_time`).
    #[test]
    #[ignore = "a measurement, not a check"]
    fn check_time_of_a_large_store() {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events");
        for _ in 0..100 {
            stored(&events, 1_000, 400);
        }
        let size = std::fs::metadata(events.join(DB_FILE)).unwrap().len();
        for _ in 0..3 {
            let started = std::time::Instant::now();
            open_checked(&events).unwrap();
            eprintln!("check of {size} bytes: {:?}", started.elapsed());
        }
    }
}
