//! Cursor's global state database: table `cursorDiskKV` (`key`, `value`),
//! one row a chat message ("bubble") under `bubbleId:<composer>:<bubble>`,
//! its `value` JSON: `type` (1 the user's, 2 the AI's), `createdAt` (RFC
//! 3339), `tokenCount {inputTokens, outputTokens}`, `modelInfo.modelName`.
//! Each AI bubble is one response, keyed by its composer (the
//! conversation, its session) and its bubble id.
//!
//! Cursor fills `tokenCount` in after the reply, by asking its server;
//! current builds leave it `{0, 0}`. A count of 0 is therefore no count:
//! it is unknown (`None`), never 0 and never estimated; the bubble still
//! counts as a response. A bubble written again with its counts filled in
//! is the same response (its key), its fuller write kept.
//!
//! The table holds every other kind of Cursor's state too, and grows to
//! gigabytes: rows are read by their `rowid`, each pass the rows after the
//! last one read. The table's `key` is `UNIQUE ON CONFLICT REPLACE`, so a
//! bubble Cursor writes again is a row deleted and inserted anew, after
//! every row there; a table whose last row is before the last one read
//! (rows deleted) is read again from its start, adding nothing twice.
//!
//! A value is selected by its length first ([`column_within`]): one over
//! the bound of a database value is passed over and named by its length
//! alone, never read into memory; one within it is parsed for the fields
//! read, and one whose fields pass their bound is passed over and named.

use bee_proto::ledger::{Provider, SkipReason};
use bee_proto::usage::Counters;
use rusqlite::params;
use rusqlite::types::ValueRef;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{Found, LastName, count, decode_state, encode_state, text, time_ms};
use crate::ledger::agents::sparse::{self, Refused, keep};
use crate::ledger::agents::whole::{MAX_DOCUMENT_BYTES, column_within, modified_ms, open_read_only, pass_over_value};
use crate::ledger::stored::evidence::{AgentState, Evidence};

keep! {
    /// What [`read_bubble`] reads of a bubble.
    BUBBLE = ["type", "createdAt", "tokenCount/inputTokens", "tokenCount/outputTokens", "modelInfo/modelName"];
}

/// A bubble's `type` when the AI wrote it.
const AI_BUBBLE: i64 = 2;

/// The bubbles after row `?1`, each value by its length first (`?2` the
/// bound); the key range is the bubbles' prefix (`;` follows `:`). The
/// unary `+` keeps SQLite off the key's index: walked by rowid, the rows
/// come in order with no sorter holding their values.
const QUERY: &str = "SELECT rowid, key, octet_length(value), CASE WHEN octet_length(value) <= ?2 THEN value END
   FROM cursorDiskKV WHERE rowid > ?1 AND +key >= 'bubbleId:' AND +key < 'bubbleId;' ORDER BY rowid";

/// The reader of Cursor's bubbles.
pub(crate) struct Bubbles;

/// What the reader keeps of the database where it stopped.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resume {
    /// The last `rowid` of `cursorDiskKV` read.
    row: Option<i64>,
}

impl WholeFileReader for Bubbles {
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let mut resume: Resume = decode_state(state);
        let refused = read_bubbles(path, &mut resume, out).map_err(std::io::Error::other)?;
        Ok((encode_state(&resume), refused))
    }
}

/// Reads the bubbles written since `resume`, and moves it on; the count
/// is of bubbles refused as unreadable.
fn read_bubbles(path: &Path, resume: &mut Resume, out: &mut Vec<Evidence>) -> rusqlite::Result<u64> {
    let connection = open_read_only(path)?;
    let has_table: bool = connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cursorDiskKV')",
        [],
        |row| row.get(0),
    )?;
    if !has_table {
        return Ok(0);
    }
    let last: Option<i64> = connection.query_row("SELECT max(rowid) FROM cursorDiskKV", [], |row| row.get(0))?;
    if resume.row > last {
        resume.row = None;
    }
    let mut statement = connection.prepare(QUERY)?;
    // 64 MiB: an SQLite integer whatever the platform.
    let mut rows = statement.query(params![resume.row.unwrap_or(i64::MIN), MAX_DOCUMENT_BYTES as i64])?;
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(Provider::Cursor, &mut sessions, &mut models, out);
    let mut named = HashSet::new();
    // A bubble without a time of its own is dated by the database's last
    // write before this read.
    let written_ms = modified_ms(path);
    let mut refused = 0;
    while let Some(row) = rows.next()? {
        if let Ok(rowid) = row.get_ref(0)?.as_i64() {
            resume.row = resume.row.max(Some(rowid));
        }
        refused += u64::from(!read_bubble(path, row, written_ms, &mut named, &mut found));
    }
    Ok(refused)
}

/// Reads one bubble row; `false` when it is refused as unreadable.
fn read_bubble(
    path: &Path,
    row: &rusqlite::Row<'_>,
    written_ms: Option<i64>,
    named: &mut HashSet<String>,
    found: &mut Found<'_>,
) -> bool {
    let Some(key) = row.get_ref(1).ok().and_then(|key| key.as_str().ok()) else { return false };
    let Some((composer, bubble)) = key.strip_prefix("bubbleId:").and_then(|rest| rest.split_once(':')) else {
        return false;
    };
    // A composer part spanning lines is a tool call's row, not a
    // conversation's bubble (as the readers of the format found it).
    if composer.contains(['\r', '\n', '\0']) {
        return true;
    }
    if composer.is_empty() || bubble.is_empty() {
        return false;
    }
    let value = match column_within(row, 2) {
        Ok(ValueRef::Text(value) | ValueRef::Blob(value)) => value,
        Ok(_) => return false,
        Err(bytes) => {
            // Named, so not also refused.
            pass_over_value(SkipReason::OversizedDocument, bytes, path, &format_args!("cursorDiskKV {key}"));
            return true;
        }
    };
    let bubble_json = match sparse::parse(value, &BUBBLE) {
        Ok(json @ Value::Object(_)) => json,
        Ok(_) | Err(Refused::Malformed) => return false,
        Err(Refused::TooComplex) => {
            pass_over_value(SkipReason::TooComplex, value.len() as u64, path, &format_args!("cursorDiskKV {key}"));
            return true;
        }
    };
    if bubble_json.get("type").and_then(Value::as_i64) != Some(AI_BUBBLE) {
        return true;
    }
    let Some(at_ms) = time_ms(bubble_json.get("createdAt")).or(written_ms) else { return false };
    if named.insert(composer.to_owned()) {
        found.session(composer, None);
    }
    let model = text(&bubble_json, "/modelInfo/modelName").filter(|model| !matches!(*model, "default" | "?"));
    found.response(format!("{composer}\u{1f}{bubble}"), composer, at_ms, model, counters(&bubble_json));
    true
}

/// A bubble's `tokenCount`: a count above 0 as written; 0, or anything
/// that is no count, unknown.
fn counters(bubble: &Value) -> Counters {
    let counted = |name: &str| count(bubble.pointer(&format!("/tokenCount/{name}"))).filter(|&tokens| tokens > 0);
    Counters { input_tokens: counted("inputTokens"), output_tokens: counted("outputTokens"), ..Counters::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, noted, read_whole, responses_of, rows, tiny_items};

    /// Cursor's table, as its global database has it.
    const SCHEMA: &str = "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
        CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);";

    const INSERT: &str = "INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)";

    /// A bubble's value: its type, time, token counts and model.
    fn bubble(kind: i64, created: &str, input: &str, output: &str, model: &str) -> String {
        format!(
            r#"{{"_v":3,"type":{kind},"bubbleId":"b","text":"a reply","createdAt":"{created}","requestId":"r1","tokenCount":{{"inputTokens":{input},"outputTokens":{output}}},"modelInfo":{{"modelName":"{model}"}},"codeBlocks":[]}}"#
        )
    }

    fn cursor_db() -> (tempfile::TempDir, std::path::PathBuf, rusqlite::Connection) {
        database("state.vscdb", SCHEMA)
    }

    /// A conversation's bubbles: the user's are no response; each AI
    /// bubble is one, its counts as written where above 0 and unknown
    /// where 0 (current builds), never 0; `default` names no model.
    #[test]
    fn each_ai_bubble_once_and_zero_counts_unknown() {
        let (_dir, path, db) = cursor_db();
        let c = "4f1c2a9e-7b3d-4e8f-9a0b-1c2d3e4f5a6b";
        db.execute(INSERT, (format!("composerData:{c}"), r#"{"_v":10,"composerId":"x","createdAt":1796440000000}"#))
            .unwrap();
        db.execute(INSERT, (format!("bubbleId:{c}:u1"), bubble(1, "2026-11-30T10:00:00.000Z", "0", "0", "default")))
            .unwrap();
        db.execute(
            INSERT,
            (format!("bubbleId:{c}:a1"), bubble(2, "2026-11-30T10:00:05.000Z", "5200", "310", "claude-4.5-sonnet")),
        )
        .unwrap();
        db.execute(INSERT, (format!("bubbleId:{c}:a2"), bubble(2, "2026-11-30T10:00:09.000Z", "0", "0", "default")))
            .unwrap();
        db.execute(INSERT, (format!("bubbleId:{c}:a3"), bubble(2, "2026-11-30T10:00:12.000Z", "0", "42", "gpt-5")))
            .unwrap();
        db.execute(INSERT, ("ItemTable-like:key", "{}")).unwrap();
        let (writes, _) = read_whole(Provider::Cursor, &path, &AgentState::default());
        let s = Some;
        assert_eq!(
            rows(Provider::Cursor, &writes),
            [
                (format!("{c}\u{1f}a1"), s(5200), None, None, s(310), None, s(5510)),
                (format!("{c}\u{1f}a2"), None, None, None, None, None, None),
                (format!("{c}\u{1f}a3"), None, None, None, s(42), None, None),
            ]
        );
        let by_key = |key: &str| writes.iter().find(|w| w.key.ends_with(key)).unwrap();
        assert_eq!(by_key("a1").model.as_deref(), Some("claude-4.5-sonnet"));
        assert_eq!(by_key("a2").model, None, "`default` is Cursor's own choice, no model");
        assert_eq!(by_key("a1").at_ms, 1_796_032_805_000);
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some(c)));
    }

    /// Read again from where it stopped, nothing is added; a bubble
    /// written again (its counts filled in) is a row anew, read once more
    /// under the same key; read from its start, the same responses again.
    #[test]
    fn a_bubble_read_again_adds_nothing_and_a_rewrite_is_the_same_response() {
        let (_dir, path, db) = cursor_db();
        db.execute(INSERT, ("bubbleId:c1:a1", bubble(2, "2026-11-30T10:00:05.000Z", "0", "0", "gpt-5"))).unwrap();
        db.execute(INSERT, ("bubbleId:c1:a2", bubble(2, "2026-11-30T10:00:06.000Z", "7", "3", "gpt-5"))).unwrap();
        let (first, state) = read_whole(Provider::Cursor, &path, &AgentState::default());
        assert_eq!(first.len(), 2);
        let (again, state) = read_whole(Provider::Cursor, &path, &state);
        assert!(again.is_empty(), "nothing written since: nothing read");
        db.execute(INSERT, ("bubbleId:c1:a1", bubble(2, "2026-11-30T10:00:05.000Z", "900", "80", "gpt-5"))).unwrap();
        let (rewritten, state) = read_whole(Provider::Cursor, &path, &state);
        assert_eq!(rewritten.len(), 1);
        assert_eq!((rewritten[0].key.as_str(), rewritten[0].tokens.input_tokens), ("c1\u{1f}a1", Some(900)));
        let (whole, _) = read_whole(Provider::Cursor, &path, &AgentState::default());
        let mut keys: Vec<_> = first.iter().chain(&rewritten).chain(&whole).map(|w| w.key.clone()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys, ["c1\u{1f}a1", "c1\u{1f}a2"]);
        // Rows deleted at the table's end: read again from its start.
        db.execute("DELETE FROM cursorDiskKV", []).unwrap();
        db.execute(INSERT, ("bubbleId:c2:a9", bubble(2, "2026-11-30T11:00:00.000Z", "1", "1", "gpt-5"))).unwrap();
        let (after_delete, _) = read_whole(Provider::Cursor, &path, &state);
        assert_eq!(after_delete.len(), 1);
        assert_eq!(after_delete[0].key, "c2\u{1f}a9");
    }

    /// A value that is no JSON object, or not UTF-8, and a key of no
    /// bubble's shape are refused; nothing panics, and the rest is read.
    #[test]
    fn malformed_bubbles_are_refused() {
        let (_dir, path, db) = cursor_db();
        db.execute(INSERT, ("bubbleId:c1:a1", "{\"type\": 2, \"createdAt\": ")).unwrap();
        db.execute(INSERT, ("bubbleId:c1:a2", b"\xff\xfe{\"type\":2}".to_vec())).unwrap();
        db.execute(INSERT, ("bubbleId:c1:a3", "[2]")).unwrap();
        db.execute(INSERT, ("bubbleId:c1", bubble(2, "2026-11-30T10:00:05.000Z", "1", "1", "m"))).unwrap();
        db.execute(INSERT, ("bubbleId::a4", bubble(2, "2026-11-30T10:00:05.000Z", "1", "1", "m"))).unwrap();
        db.execute(INSERT, ("bubbleId:c1:a5", rusqlite::types::Null)).unwrap();
        db.execute(INSERT, ("bubbleId:task-call_1\nfc_2:a6", bubble(2, "2026-11-30T10:00:05.000Z", "1", "1", "m")))
            .unwrap();
        db.execute(INSERT, ("bubbleId:c1:a7", bubble(2, "2026-11-30T10:00:07.000Z", "1", "1", "m"))).unwrap();
        let mut evidence = Vec::new();
        let (_, refused) = Bubbles.read(&path, &AgentState::default(), &mut evidence).unwrap();
        let writes = responses_of(evidence);
        assert_eq!(refused, 6, "cut short, not UTF-8, not an object, no bubble id, no composer, no value");
        assert_eq!(writes.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["c1\u{1f}a7"]);
        // Not a database at all: an error, no panic.
        let not_db = path.with_file_name("broken.vscdb");
        std::fs::write(&not_db, b"not a database, only text").unwrap();
        assert!(Bubbles.read(&not_db, &AgentState::default(), &mut Vec::new()).is_err());
    }

    /// A database without the table (Cursor's before its first chat) and
    /// one whose table is empty hold nothing.
    #[test]
    fn an_empty_store_holds_nothing() {
        let (_dir, path, _db) = database("state.vscdb", "CREATE TABLE ItemTable (key TEXT, value BLOB)");
        assert_eq!(Bubbles.read(&path, &AgentState::default(), &mut Vec::new()).unwrap().1, 0);
        let (_dir, path, _db) = cursor_db();
        let mut evidence = Vec::new();
        let (state, refused) = Bubbles.read(&path, &AgentState::default(), &mut evidence).unwrap();
        assert!(evidence.is_empty());
        assert_eq!(refused, 0);
        assert!(Bubbles.read(&path, &state, &mut evidence).is_ok());
    }

    /// Counts past any response's, of the wrong type, negative or
    /// fractional are never 0: past u64 or not a count they are unknown;
    /// a time that is no time dates the bubble by the database's write;
    /// a model name past any name's length is unknown; a value over the
    /// bound is named by its length, one of millions of tiny items where
    /// it is read is named too, and neither is refused.
    #[test]
    fn hostile_values() {
        let (_dir, path, db) = cursor_db();
        let value = |input: &str, output: &str, created: &str| {
            format!(
                r#"{{"type":2,"createdAt":{created},"tokenCount":{{"inputTokens":{input},"outputTokens":{output}}}}}"#
            )
        };
        db.execute(INSERT, ("bubbleId:c1:a1", value("18446744073709551615", "1e30", "\"2026-11-30T10:00:05.000Z\"")))
            .unwrap();
        db.execute(INSERT, ("bubbleId:c1:a2", value("-5", "\"12\"", "1796040006000"))).unwrap();
        db.execute(INSERT, ("bubbleId:c1:a3", value("2.5", "{}", "\"yesterday\""))).unwrap();
        let long_model = format!(r#"{{"type":2,"modelInfo":{{"modelName":"{}"}}}}"#, "m".repeat(5000));
        db.execute(INSERT, ("bubbleId:c1:a4", long_model)).unwrap();
        db.execute(
            INSERT,
            ("bubbleId:c1:a5", format!(r#"{{"type":2,"tokenCount":{{"inputTokens":{}}}}}"#, tiny_items(1_500_000))),
        )
        .unwrap();
        db.execute(
            "INSERT INTO cursorDiskKV (key, value) VALUES ('bubbleId:c1:a6', zeroblob(?1))",
            [MAX_DOCUMENT_BYTES as i64 + 1],
        )
        .unwrap();
        let _ = noted();
        let mut evidence = Vec::new();
        let (_, refused) = Bubbles.read(&path, &AgentState::default(), &mut evidence).unwrap();
        assert_eq!(refused, 0);
        let writes = responses_of(evidence);
        let tokens: Vec<_> =
            writes.iter().map(|w| (w.key.as_str(), w.tokens.input_tokens, w.tokens.output_tokens)).collect();
        assert_eq!(
            tokens,
            [
                ("c1\u{1f}a1", Some(u64::MAX), None),
                ("c1\u{1f}a2", None, None),
                ("c1\u{1f}a3", None, None),
                ("c1\u{1f}a4", None, None),
            ]
        );
        assert!(!writes[0].is_valid(), "a count past any call's is refused when stored, never summed");
        assert_eq!(writes[1].at_ms, 1_796_040_006_000, "unix ms");
        assert_eq!(Some(writes[2].at_ms), modified_ms(&path), "no time of its own: the database's write");
        assert_eq!(writes[3].model, None);
        let noted = noted();
        assert_eq!(noted.len(), 2, "{noted:?}");
        assert!(noted.contains(&(0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument)));
        assert!(noted.iter().any(|&(_, _, reason)| reason == SkipReason::TooComplex));
    }
}
