//! What the readers of record files read whole share (see
//! [`Agent::whole_file`](crate::ledger::agents::agent::Agent::whole_file)):
//! an agent's database opened read-only, a JSON document read within a
//! bound, a database value read within the same bound, and the readers of
//! JSON documents and of a database's rows.
//!
//! A document or value over the bound is passed over and named
//! ([`skipped::note`]) by its length alone, never read into memory; one
//! within it is parsed for the paths its reader reads ([`sparse`]), and
//! one whose kept parts pass their bound is passed over and named too.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::sync::LazyLock;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{Found, LastName};
use crate::ledger::agents::skipped;
use crate::ledger::agents::sparse::{self, Keep, Refused};
use crate::ledger::stored::evidence::{AgentState, Evidence};
use bee_proto::ledger::{Provider, SkipReason};

/// Longest JSON document, or database value, read whole; a longer one is
/// passed over and named. The same bound as a line's
/// ([`MAX_LINE_BYTES`](crate::ledger::agents::lines::MAX_LINE_BYTES)):
/// one bound for every record of every agent.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = crate::ledger::agents::lines::MAX_LINE_BYTES;

/// An agent's database, opened read-only as the agent goes on writing it.
pub(crate) fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let connection =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    connection.busy_timeout(std::time::Duration::from_secs(2))?;
    Ok(connection)
}

/// Whether the database at `path` has a table named `table`: which of
/// its tables an agent's reader reads, where its versions differ.
pub(crate) fn has_table(path: &Path, table: &str) -> std::io::Result<bool> {
    let has = || -> rusqlite::Result<bool> {
        open_read_only(path)?.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
            [table],
            |row| row.get(0),
        )
    };
    has().map_err(std::io::Error::other)
}

/// What a JSON document file turned out to be.
#[derive(Debug)]
pub(crate) enum Document {
    /// The parts its reader reads.
    Read(Value),
    /// Longer than its bound, this many bytes: not read.
    Oversized(u64),
    /// What its reader reads of it passes the bound; this many bytes.
    TooComplex(u64),
    /// Not JSON (being written), or not UTF-8: no document of the agent's.
    NotJson,
}

/// What a text file read whole within a bound turned out to be.
#[derive(Debug)]
pub(crate) enum Text<R> {
    /// What its reader made of its text.
    Read(R),
    /// Longer than its bound, this many bytes: not read.
    Oversized(u64),
    /// Not UTF-8: no document of the agent's.
    NotUtf8,
}

/// The text of the file at `path` handed to `use_text`, when it is one
/// within `max_bytes` (read as every file Bee reads whole: a regular file,
/// no link followed). Its length is looked at before anything is read: a
/// longer file is never read into memory; a large one is read into the one
/// large buffer, with its token.
pub(crate) fn read_text_within<R>(
    path: &Path,
    max_bytes: u64,
    use_text: impl FnOnce(&str) -> R,
) -> std::io::Result<Text<R>> {
    let file = crate::storage::files::open_regular(path)?;
    let length = file.metadata()?.len();
    if length > max_bytes {
        return Ok(Text::Oversized(length));
    }
    let mut large = crate::storage::large::if_large(length);
    let mut own = Vec::new();
    let bytes = match large.as_mut() {
        Some(large) => large.buffer(),
        None => &mut own,
    };
    bytes.clear();
    bytes.reserve_exact(usize::try_from(length.saturating_add(1)).unwrap_or(0));
    // Read to one byte past the bound: a file that grew since its length
    // was looked at is no longer read whole either.
    file.take(max_bytes.saturating_add(1)).read_to_end(bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Ok(Text::Oversized(bytes.len() as u64));
    }
    Ok(match std::str::from_utf8(bytes) {
        Ok(text) => Text::Read(use_text(text)),
        Err(_) => Text::NotUtf8,
    })
}

/// The parts `keep` names of the JSON document at `path`, when it is one
/// within `max_bytes` ([`read_text_within`]).
pub(crate) fn read_document_within(path: &Path, max_bytes: u64, keep: &Keep) -> std::io::Result<Document> {
    Ok(match read_text_within(path, max_bytes, |text| (sparse::parse_str(text, keep), text.len() as u64))? {
        Text::Read((Ok(document), _)) => Document::Read(document),
        Text::Read((Err(Refused::TooComplex), bytes)) => Document::TooComplex(bytes),
        Text::Read((Err(Refused::Malformed), _)) | Text::NotUtf8 => Document::NotJson,
        Text::Oversized(bytes) => Document::Oversized(bytes),
    })
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
    /// What `read` reads of a document: every path it looks at.
    pub(crate) keep: &'static LazyLock<Keep>,
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
    fn reads_documents(&self) -> bool {
        true
    }

    fn read(&self, path: &Path, _state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let refused = match read_document_within(path, MAX_DOCUMENT_BYTES, self.keep)? {
            Document::Read(document) => self.evidence(path, &document, out),
            Document::Oversized(bytes) => {
                skipped::note(SkipReason::OversizedDocument, 0, bytes);
                0
            }
            Document::TooComplex(bytes) => {
                skipped::note(SkipReason::TooComplex, 0, bytes);
                0
            }
            Document::NotJson => 0,
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
    /// The query; one that names `?1` is given [`MAX_DOCUMENT_BYTES`]
    /// there, to select a long value by its length first
    /// ([`column_within`]).
    pub(crate) query: &'static str,
    /// Reads one row; `false` when the row is refused as unreadable.
    pub(crate) read: fn(&Path, &rusqlite::Row<'_>, &mut Found<'_>) -> bool,
}

impl WholeFileReader for Rows {
    fn read(&self, path: &Path, _state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let mut read = || -> rusqlite::Result<u64> {
            let connection = open_read_only(path)?;
            let mut statement = connection.prepare(self.query)?;
            let mut rows = match statement.parameter_count() {
                0 => statement.query([])?,
                // 64 MiB: an SQLite integer whatever the platform.
                _ => statement.query([MAX_DOCUMENT_BYTES as i64])?,
            };
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

/// Why a zstd frame in a record was not decompressed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unzipped {
    /// No zstd frame, or one that breaks (or asks for a window past the
    /// bound).
    Broken,
    /// Decompressed, it passes the bound: at least this many bytes.
    Oversized(u64),
}

/// A record's zstd frame decompressed, within [`MAX_DOCUMENT_BYTES`]:
/// never more than one byte past it is produced, and no window past it is
/// allocated.
pub(crate) fn unzstd_within(frame: &[u8]) -> Result<Vec<u8>, Unzipped> {
    let mut decoder = ruzstd::decoding::StreamingDecoder::new_with_max_window_size(frame, MAX_DOCUMENT_BYTES)
        .map_err(|_| Unzipped::Broken)?;
    let mut json = Vec::new();
    (&mut decoder).take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut json).map_err(|_| Unzipped::Broken)?;
    if json.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(Unzipped::Oversized(json.len() as u64));
    }
    Ok(json)
}

/// A database value selected by its length first, as two columns from
/// `at`: `octet_length(x), CASE WHEN octet_length(x) <= ?1 THEN x END`
/// (`?1` the bound): SQLite then tells a value's length without reading
/// it, and never reads one over the bound into memory. The value (`Null`
/// when there is none), or `Err` with the length of one over the bound.
pub(crate) fn column_within<'r>(row: &'r rusqlite::Row<'_>, at: usize) -> Result<ValueRef<'r>, u64> {
    let length = row.get_ref(at).ok().and_then(|length| length.as_i64().ok());
    match length.and_then(|length| u64::try_from(length).ok()) {
        Some(length) if length > MAX_DOCUMENT_BYTES => Err(length),
        _ => Ok(row.get_ref(at + 1).unwrap_or(ValueRef::Null)),
    }
}

/// A database value passed over: named by ingestion with its file
/// ([`skipped::note`], offset 0 as for a document), and by its row here,
/// since the note has no place for a row.
pub(crate) fn pass_over_value(reason: SkipReason, bytes: u64, path: &Path, row: &dyn std::fmt::Display) {
    skipped::note(reason, 0, bytes);
    tracing::warn!(file = %path.display(), %row, bytes, reason = reason.as_str(), "a database value was passed over");
}

/// The parts `keep` names of a database value holding JSON text (the
/// `row` of the database at `path`, for naming it): `None` when there is
/// none, it is no JSON, or it is passed over (and named).
pub(crate) fn column_json(
    value: Result<ValueRef<'_>, u64>,
    keep: &Keep,
    path: &Path,
    row: &dyn std::fmt::Display,
) -> Option<Value> {
    let text = match value {
        Ok(ValueRef::Text(text)) => text,
        Ok(_) => return None,
        Err(bytes) => {
            pass_over_value(SkipReason::OversizedDocument, bytes, path, row);
            return None;
        }
    };
    match sparse::parse(text, keep) {
        Ok(value) => Some(value),
        Err(Refused::TooComplex) => {
            pass_over_value(SkipReason::TooComplex, text.len() as u64, path, row);
            None
        }
        Err(Refused::Malformed) => None,
    }
}

/// Where a reader of a table read in rowid order stopped: the last row it
/// read and that row's time, so that a database made anew (the row gone,
/// or another in its place) is read again from its start.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RowidResume {
    pub(crate) last: Option<LastRow>,
}

/// A row read: its rowid and its time (ms, where it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LastRow {
    pub(crate) row: i64,
    pub(crate) at_ms: Option<i64>,
}

impl RowidResume {
    /// Forgets the last row when `table`'s row of that rowid no longer has
    /// its time (`time`: the column that holds it, read within the text
    /// bound; `None` where the table has none).
    pub(crate) fn check(&mut self, snapshot: &Connection, table: &str, time: Option<&str>) -> rusqlite::Result<()> {
        use rusqlite::OptionalExtension;
        let Some(last) = self.last else { return Ok(()) };
        // The bound is bound as `?2` either way.
        let time = time.map_or_else(
            || "NULLIF(?2, ?2)".to_owned(),
            |column| format!("CASE WHEN octet_length({column}) <= ?2 THEN {column} END"),
        );
        let bound = bee_proto::ledger::bounds::MAX_TEXT_BYTES as i64;
        let again = snapshot
            .query_row(
                &format!("SELECT {time} FROM {table} WHERE rowid = ?1"),
                rusqlite::params![last.row, bound],
                |row| Ok(column_time_ms(row, 0)),
            )
            .optional()?;
        if again != Some(last.at_ms) {
            self.last = None;
        }
        Ok(())
    }

    /// The rowid the next read starts after.
    pub(crate) fn after(&self) -> i64 {
        self.last.map_or(i64::MIN, |last| last.row)
    }
}

/// The names of the columns `table` has; none when there is no such
/// table (a database from before its agent made it).
pub(crate) fn columns_of(connection: &Connection, table: &str) -> rusqlite::Result<std::collections::HashSet<String>> {
    let mut statement = connection.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = statement.query_map([table], |row| row.get::<_, String>(0))?;
    names.collect()
}

/// `columns` (each a name, and whether it is text) as select items of the
/// table `alias` names (`""`: none): a column the table lacks (`present`
/// says which it has) as `NULL`, a text column only within the bound the
/// query binds as `?2`, so SQLite never reads a longer one into memory.
pub(crate) fn bounded_columns(
    columns: &[(&str, bool)],
    present: &std::collections::HashSet<String>,
    alias: &str,
) -> Vec<String> {
    columns
        .iter()
        .map(|&(name, text)| match (present.contains(name), text) {
            (false, _) => "NULL".to_owned(),
            (true, false) => format!("{alias}{name}"),
            (true, true) => format!("CASE WHEN octet_length({alias}{name}) <= ?2 THEN {alias}{name} END"),
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{noted, responses_of, tiny_items};

    /// What the reader of `provider`'s documents finds in one written at
    /// `name` (under a directory of its own): its responses, and the
    /// records it refused.
    fn read(provider: Provider, name: &str, document: &[u8]) -> (usize, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, document).unwrap();
        let mut evidence = Vec::new();
        let reader = crate::ledger::agents::agent(provider).whole_file().unwrap();
        let (_, refused) = reader.read(&path, &AgentState::default(), &mut evidence).unwrap();
        (responses_of(evidence).len(), refused)
    }

    /// Each agent whose records are JSON documents: a document in its
    /// shape with `@skip@` a value its reader does not read, and one whose
    /// read parts are `@junk@`.
    const CASES: &[(Provider, &str, &str, &str)] = &[
        (
            Provider::Amp,
            "T-1.json",
            r#"{"id":"T-1","messages":[{"role":"user","content":@skip@},{"role":"assistant","messageId":1,"content":@skip@,"usage":{"model":"claude-sonnet-4-5","timestamp":"2026-11-30T10:00:00.000Z","inputTokens":12,"cacheCreationInputTokens":0,"cacheReadInputTokens":0,"outputTokens":5,"totalTokens":17}}]}"#,
            r#"{"id":"T-1","messages":@junk@}"#,
        ),
        (
            Provider::Codebuff,
            "chats/c1/chat-messages.json",
            r#"[{"variant":"user","content":@skip@},{"variant":"ai","id":"m1","content":@skip@,"timestamp":"2026-11-30T10:00:00.000Z","metadata":{"usage":{"inputTokens":88,"outputTokens":12,"model":"gpt-5.1"}}}]"#,
            "@junk@",
        ),
        (
            Provider::Droid,
            "s1.settings.json",
            r#"{"model":"claude-opus-4-5-20251101","providerLockTimestamp":"2026-11-30T10:00:00.000Z","sessionDefaultSettings":@skip@,"tokenUsage":{"inputTokens":1,"outputTokens":2,"cacheCreationTokens":0,"cacheReadTokens":0,"thinkingTokens":0}}"#,
            r#"{"tokenUsage":{"inputTokens":@junk@}}"#,
        ),
    ];

    /// Millions of tiny items where a reader does not look cost nothing
    /// and hide nothing; where it looks, the document is passed over and
    /// named (offset 0, its length) instead of read into a tree.
    #[test]
    fn tiny_items_in_documents_are_passed_over_or_named() {
        let junk = tiny_items(1_500_000);
        for &(provider, name, good, bad) in CASES {
            let _ = noted();
            assert_eq!(read(provider, name, good.replace("@skip@", "0").as_bytes()), (1, 0), "{provider:?}");
            assert_eq!(read(provider, name, good.replace("@skip@", &junk).as_bytes()), (1, 0), "{provider:?}");
            assert!(noted().is_empty());
            let bad = bad.replace("@junk@", &junk);
            assert_eq!(read(provider, name, bad.as_bytes()), (0, 0), "{provider:?}");
            assert_eq!(noted(), [(0, bad.len() as u64, SkipReason::TooComplex)], "{provider:?}");
        }
    }

    /// A document over the bound is named by its length, never read (a
    /// sparse file: its bytes are never there to read); one cut short or
    /// not UTF-8 is none of the agent's, and says nothing.
    #[test]
    fn oversized_broken_and_non_utf8_documents() {
        for &(provider, name, good, _) in CASES {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::File::create(&path).unwrap().set_len(MAX_DOCUMENT_BYTES + 1).unwrap();
            let reader = crate::ledger::agents::agent(provider).whole_file().unwrap();
            let mut evidence = Vec::new();
            let _ = noted();
            assert_eq!(reader.read(&path, &AgentState::default(), &mut evidence).unwrap().1, 0);
            assert!(evidence.is_empty());
            assert_eq!(noted(), [(0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument)], "{provider:?}");

            let good = good.replace("@skip@", "0");
            assert_eq!(read(provider, name, &good.as_bytes()[..good.len() - 2]), (0, 0), "{provider:?}");
            // A byte that is no UTF-8 in the first key.
            let mut not_utf8 = good.into_bytes();
            let quote = not_utf8.iter().position(|&b| b == b'"').unwrap();
            not_utf8.insert(quote + 1, 0xff);
            assert_eq!(read(provider, name, &not_utf8), (0, 0), "{provider:?}");
            assert!(noted().is_empty());
        }
    }

    /// The bound is looked at before anything is read, and a bound of
    /// another reader's (Crush's list of projects) holds the same way.
    #[test]
    fn a_document_is_read_within_the_bound_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("projects.json");
        std::fs::write(&path, br#"{"projects":[{"data_dir":"/a"}]}"#).unwrap();
        let keep = Keep::paths(&["projects/data_dir"]);
        assert!(matches!(read_document_within(&path, 1024, &keep), Ok(Document::Read(_))));
        assert!(matches!(read_document_within(&path, 10, &keep), Ok(Document::Oversized(32))));
        assert!(read_document_within(&dir.path().join("none.json"), 10, &keep).is_err());
    }
}
