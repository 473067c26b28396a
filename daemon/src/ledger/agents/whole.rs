//! What the readers of record files read whole share (see
//! [`Agent::whole_file`](crate::ledger::agents::agent::Agent::whole_file)):
//! an agent's database opened read-only, a JSON document read within a
//! bound, and the reader of JSON documents.

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use std::path::Path;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{Found, LastName};
use crate::ledger::evidence::{AgentState, Evidence};
use bee_proto::ledger::Provider;

/// Longest JSON document read whole; a longer one is no record's.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

/// An agent's database, opened read-only as the agent goes on writing it.
pub(crate) fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let connection =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    connection.busy_timeout(std::time::Duration::from_secs(2))?;
    Ok(connection)
}

/// A JSON document, when it is one within [`MAX_DOCUMENT_BYTES`]; `None`
/// for a document being written (not JSON yet) or too long.
pub(crate) fn read_document(path: &Path) -> std::io::Result<Option<Value>> {
    read_document_within(path, MAX_DOCUMENT_BYTES)
}

/// A JSON document, when it is one within `max_bytes` (read as every
/// file Bee reads whole: a regular file, no link followed).
pub(crate) fn read_document_within(path: &Path, max_bytes: u64) -> std::io::Result<Option<Value>> {
    match crate::storage::files::read_text_at_most(path, max_bytes) {
        Ok(text) => Ok(serde_json::from_str(&text).ok()),
        // Too long, or not UTF-8: no document of the agent's.
        Err(err) if err.kind() == std::io::ErrorKind::InvalidData => Ok(None),
        Err(err) => Err(err),
    }
}

/// When the file was last written (ms), for records that carry no time of
/// their own: the agent's own write is the producer's time.
pub(crate) fn modified_ms(path: &Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let ms = modified.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok().filter(|&ms| bee_proto::time::spells_as_rfc3339(ms))
}

/// The reader of an agent whose record files are JSON documents it
/// rewrites whole: each change is read whole again, and every record
/// found again adds nothing twice (each is keyed), so nothing is kept
/// between passes and the reader is the function that reads one document
/// (and counts the records it refused).
pub(crate) struct Documents {
    pub(crate) provider: Provider,
    pub(crate) read: fn(&Path, &Value, &mut Found<'_>) -> u64,
}

impl Documents {
    /// What one document at `path` holds, and how many of its records
    /// were refused.
    pub(crate) fn evidence(&self, path: &Path, document: &Value, out: &mut Vec<Evidence>) -> u64 {
        let (mut sessions, mut models) = (LastName::default(), LastName::default());
        (self.read)(path, document, &mut Found::new(self.provider, &mut sessions, &mut models, out))
    }
}

impl WholeFileReader for Documents {
    fn read(&self, path: &Path, _state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let refused = match read_document(path)? {
            Some(document) => self.evidence(path, &document, out),
            None => 0,
        };
        Ok((AgentState::default(), refused))
    }
}

/// The reader of an agent whose records are the rows of one query over
/// its database, few enough to read them all whenever it changes (one a
/// session, or one a conversation's turn); a row read again adds nothing
/// twice (each is keyed).
pub(crate) struct Rows {
    pub(crate) provider: Provider,
    pub(crate) query: &'static str,
    /// Reads one row; `false` when the row is refused as unreadable.
    pub(crate) read: fn(&Path, &rusqlite::Row<'_>, &mut Found<'_>) -> bool,
}

impl WholeFileReader for Rows {
    fn read(&self, path: &Path, _state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let mut read = || -> rusqlite::Result<u64> {
            let connection = open_read_only(path)?;
            let mut statement = connection.prepare(self.query)?;
            let mut rows = statement.query([])?;
            let (mut sessions, mut models) = (LastName::default(), LastName::default());
            let mut found = Found::new(self.provider, &mut sessions, &mut models, out);
            let mut refused = 0;
            while let Some(row) = rows.next()? {
                refused += u64::from(!(self.read)(path, row, &mut found));
            }
            Ok(refused)
        };
        Ok((AgentState::default(), read().map_err(std::io::Error::other)?))
    }
}

/// A column holding a count: a non-negative integer, else unknown.
pub(crate) fn column_count(row: &rusqlite::Row<'_>, column: usize) -> Option<u64> {
    row.get_ref(column).ok()?.as_i64().ok().and_then(|n| u64::try_from(n).ok())
}

/// A column holding text.
pub(crate) fn column_text<'r>(row: &'r rusqlite::Row<'_>, column: usize) -> Option<&'r str> {
    row.get_ref(column).ok()?.as_str().ok().filter(|text| !text.is_empty())
}

/// A column holding a time: unix seconds or milliseconds (an integer or
/// a real), RFC 3339 text, or SQLite's `YYYY-MM-DD HH:MM:SS` (UTC).
pub(crate) fn column_time_ms(row: &rusqlite::Row<'_>, column: usize) -> Option<i64> {
    use rusqlite::types::ValueRef;
    let ms = match row.get_ref(column).ok()? {
        ValueRef::Integer(n) if n < 100_000_000_000 => n.checked_mul(1000)?,
        ValueRef::Integer(n) => n,
        ValueRef::Real(seconds) if (0.0..1e11).contains(&seconds) => (seconds * 1000.0).round() as i64,
        ValueRef::Text(text) => {
            let text = std::str::from_utf8(text).ok()?;
            match text.as_bytes().get(10) {
                Some(b' ') if text.len() == 19 => {
                    bee_proto::time::parse_rfc3339_ms(&format!("{}T{}Z", &text[..10], &text[11..]))?
                }
                _ => bee_proto::time::parse_rfc3339_ms(text)?,
            }
        }
        _ => return None,
    };
    bee_proto::time::spells_as_rfc3339(ms).then_some(ms)
}
