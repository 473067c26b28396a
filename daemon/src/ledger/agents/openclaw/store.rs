//! OpenClaw's agent database (`agents/<agent>/agent/openclaw-agent.sqlite`,
//! 2026.9.6 on): table `transcript_events` (`session_id`, `seq`,
//! `event_json`, `created_at`, `event_zstd`, `event_utf8_bytes`,
//! `navigation_json`), one row an event of a session's transcript — the
//! very entries pi's session log holds, one a line (a `session` header,
//! then `message` entries whose assistant ones carry `responseId`,
//! `provider`, `model`, `timestamp` and `usage`). An event of 1 KiB or more
//! that zstd shrinks enough is kept compressed in `event_zstd` (its size in
//! `event_utf8_bytes`), with `event_json` null.
//!
//! Each event is read as the line of a session log is
//! ([`Session`](crate::ledger::agents::pi::session::Session), pi's rules
//! under OpenClaw's name), so a response is keyed as in a log (its
//! `responseId`): one in both this database and a log (a history Doctor
//! imported, a deleted session's archive) counts once.
//!
//! Rows are read by `rowid`, each pass the rows after the last one read
//! (OpenClaw only appends; a transcript it rewrites is rows deleted and
//! inserted anew, after every row there). A table whose row last read is
//! gone or another (rows deleted, a `VACUUM`) is read again from its
//! start, adding nothing twice. A session met in a pass is named by its
//! header (its first event) before its rows are read, as a log's lines are
//! read after its header.
//!
//! A value is selected by its length first ([`column_within`]): one over
//! the bound of a database value is passed over and named by its length
//! alone; a compressed one is decompressed within the same bound (a frame
//! asking for a window past it is refused before anything is allocated).

use bee_proto::ledger::{Provider, SkipReason};
use rusqlite::types::ValueRef;
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use super::entries::OpenClawEntries;
use crate::ledger::agents::lines::{Found, LastName, LineRules, decode_state, encode_state, text};
use crate::ledger::agents::pi::session::Session;
use crate::ledger::agents::sparse::{self, Refused};
use crate::ledger::agents::whole::{
    MAX_DOCUMENT_BYTES, Unzipped, column_within, open_read_only, pass_over_value, unzstd_within,
};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// The database's name, in `agents/<agent>/agent/`.
pub(super) const DATABASE: &str = "openclaw-agent.sqlite";

/// Whether `path` is an agent's database (not its `-wal`, nor the
/// `.memory-reindex-*` and lock databases OpenClaw keeps beside it).
pub(super) fn is_database(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == DATABASE)
}

/// The events after row `?1`, each value by its length first (`?2` the
/// bound).
const EVENTS: &str = "SELECT rowid, session_id, seq,
        octet_length(event_json), CASE WHEN octet_length(event_json) <= ?2 THEN event_json END,
        octet_length(event_zstd), CASE WHEN octet_length(event_zstd) <= ?2 THEN event_zstd END
   FROM transcript_events WHERE rowid > ?1 ORDER BY rowid";

/// A session's first event (its header), by its length first (`?2` the
/// bound).
const HEADER: &str = "SELECT octet_length(event_json), CASE WHEN octet_length(event_json) <= ?2 THEN event_json END
   FROM transcript_events WHERE session_id = ?1 ORDER BY seq LIMIT 1";

/// What the reader keeps of the database where it stopped: the last row
/// read, and which event it held (to tell the row is still that event).
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resume {
    /// The `rowid` of the last row read.
    row: Option<i64>,
    /// Its session and place in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<i64>,
}

/// Reads the events of the database at `path` written since `state`:
/// their evidence, where the reader stops now, and how many events were
/// refused as unreadable.
pub(super) fn read(path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
    let mut resume: Resume = decode_state(state);
    // A large database is one large read (the token ingestion leaves to
    // this reader, see `Files::reads_documents`).
    let _large = crate::storage::large::if_large(std::fs::metadata(path)?.len());
    let refused = read_events(path, &mut resume, out).map_err(std::io::Error::other)?;
    Ok((encode_state(&resume), refused))
}

fn read_events(path: &Path, resume: &mut Resume, out: &mut Vec<Evidence>) -> rusqlite::Result<u64> {
    let connection = open_read_only(path)?;
    // One snapshot of the database, however OpenClaw writes meanwhile.
    let snapshot = connection.unchecked_transaction()?;
    let has_table: bool = snapshot.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'transcript_events')",
        [],
        |row| row.get(0),
    )?;
    if !has_table {
        *resume = Resume::default();
        return Ok(0);
    }
    if let Some(row) = resume.row {
        let same: bool = snapshot.query_row(
            "SELECT EXISTS (SELECT 1 FROM transcript_events WHERE rowid = ?1 AND session_id IS ?2 AND seq IS ?3)",
            params![row, resume.session, resume.seq],
            |row| row.get(0),
        )?;
        if !same {
            // Rows deleted (a rowid may be given again) or renumbered: all
            // of it again, every response already held adding nothing.
            *resume = Resume::default();
        }
    }
    let mut headers = snapshot.prepare(HEADER)?;
    let mut statement = snapshot.prepare(EVENTS)?;
    // 64 MiB: an SQLite integer whatever the platform.
    let mut rows = statement.query(params![resume.row.unwrap_or(i64::MIN), MAX_DOCUMENT_BYTES as i64])?;
    let (mut names, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(Provider::OpenClaw, &mut names, &mut models, out);
    let mut sessions: HashMap<String, Session<OpenClawEntries>> = HashMap::new();
    let mut refused = 0;
    while let Some(row) = rows.next()? {
        let Ok(rowid) = row.get_ref(0)?.as_i64() else { continue };
        let session = row.get_ref(1)?.as_str().ok().filter(|session| !session.is_empty());
        let seq = row.get_ref(2)?.as_i64().ok();
        resume.row = Some(rowid);
        resume.seq = seq;
        if resume.session.as_deref() != session {
            resume.session = session.map(str::to_owned);
        }
        let Some(session) = session else {
            refused += 1;
            continue;
        };
        let name = Place(session, seq);
        let event = match event(row, path, &name) {
            Ok(Some(event)) => event,
            // Passed over, and named.
            Ok(None) => continue,
            Err(()) => {
                refused += 1;
                continue;
            }
        };
        if !Session::<OpenClawEntries>::is_marked(&event) {
            continue;
        }
        let event = match sparse::parse(&event, Session::<OpenClawEntries>::keep()) {
            Ok(event @ Value::Object(_)) => event,
            Ok(_) | Err(Refused::Malformed) => {
                refused += 1;
                continue;
            }
            Err(Refused::TooComplex) => {
                pass_over_value(SkipReason::TooComplex, event.len() as u64, path, &name);
                continue;
            }
        };
        if !sessions.contains_key(session) {
            let mut rules = Session::<OpenClawEntries>::default();
            rules.read(&header(&mut headers, session)?, &mut found);
            sessions.insert(session.to_owned(), rules);
        }
        let Some(rules) = sessions.get_mut(session) else { continue };
        refused += u64::from(!rules.read(&event, &mut found));
    }
    Ok(refused)
}

/// Where an event is in the database, for naming it.
struct Place<'a>(&'a str, Option<i64>);

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(seq) => write!(f, "transcript_events {} #{seq}", self.0),
            None => write!(f, "transcript_events {}", self.0),
        }
    }
}

/// The header of `session` as its first event holds it; where that is no
/// header (or cannot be read), one naming the session by its row.
fn header(headers: &mut rusqlite::Statement<'_>, session: &str) -> rusqlite::Result<Value> {
    let first = headers
        .query_row(params![session, MAX_DOCUMENT_BYTES as i64], |row| {
            Ok(row
                .get_ref(1)?
                .as_str()
                .ok()
                .and_then(|json| sparse::parse_str(json, Session::<OpenClawEntries>::keep()).ok()))
        })
        .optional()?
        .flatten()
        .filter(|first| text(first, "/type") == Some("session") && text(first, "/id").is_some_and(|id| !id.is_empty()));
    Ok(first.unwrap_or_else(|| serde_json::json!({"type": "session", "id": session})))
}

/// One event's JSON: `event_json`, or `event_zstd` decompressed. `None`
/// when it is passed over (and named); `Err` when it is refused: neither
/// column holds one, or the frame breaks.
fn event<'r>(
    row: &'r rusqlite::Row<'_>,
    path: &Path,
    name: &dyn std::fmt::Display,
) -> Result<Option<Cow<'r, [u8]>>, ()> {
    let passed = |bytes| {
        pass_over_value(SkipReason::OversizedDocument, bytes, path, name);
        Ok(None)
    };
    match column_within(row, 3) {
        Ok(ValueRef::Text(json)) => return Ok(Some(Cow::Borrowed(json))),
        Ok(ValueRef::Null) => {}
        Ok(_) => return Err(()),
        Err(bytes) => return passed(bytes),
    }
    match column_within(row, 5) {
        Ok(ValueRef::Blob(frame)) => match unzstd_within(frame) {
            Ok(json) => Ok(Some(Cow::Owned(json))),
            Err(Unzipped::Broken) => Err(()),
            Err(Unzipped::Oversized(bytes)) => passed(bytes),
        },
        Ok(_) => Err(()),
        Err(bytes) => passed(bytes),
    }
}
