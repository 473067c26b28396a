//! Zed's threads database: table `threads` (`id`, `summary`, `updated_at`,
//! `data_type`, `data`, and since 2025 `parent_id`, `folder_paths`,
//! `folder_paths_order`, `created_at`), one row a thread of Zed's agent.
//! `data` is the thread's JSON (`DbThread`, `version` "0.3.0"),
//! zstd-compressed where `data_type` is `zstd` (every thread Zed writes)
//! and plain where it is `json`. It keeps `request_token_usage`: for each
//! of the thread's prompts (user messages, by id), the usage of the latest
//! request made for it — `input_tokens` (without either cache),
//! `cache_creation_input_tokens`, `cache_read_input_tokens`,
//! `output_tokens`, each left out when 0 — and the thread's `model`
//! (`{provider, model}`).
//!
//! Each entry is one response, keyed by its thread and prompt: the entry
//! Zed overwrites as a prompt's requests go on is the same response, its
//! fullest write kept. No request carries a time: a response is dated by
//! its thread's `updated_at` when Bee first read it. An older thread (Zed's
//! first agent) keeps a list by message index instead, which Zed rekeys
//! with fresh ids when it opens the thread: such a list is not read, so
//! nothing is counted twice.
//!
//! Rows are read by `updated_at`, Zed's own change marker (RFC 3339 text
//! Zed itself sorts threads by): each pass reads the threads updated since
//! the newest it read, that instant again included, and a thread read
//! again adds nothing twice.
//!
//! A thread's data is selected by its length first ([`column_within`]);
//! compressed, it is decompressed within the same bound (a frame asking
//! for a window past it is refused before anything is allocated), and a
//! thread over the bound either way is passed over and named by its length
//! alone. Its JSON is parsed for the fields read; one whose fields pass
//! their bound is passed over and named too.

use bee_proto::ledger::{Provider, SkipReason};
use bee_proto::usage::Counters;
use rusqlite::params;
use rusqlite::types::ValueRef;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::path::Path;

use crate::ledger::agents::agent::WholeFileReader;
use crate::ledger::agents::lines::{Found, LastName, decode_state, encode_state, text};
use crate::ledger::agents::sparse::{self, Refused, keep};
use crate::ledger::agents::whole::{
    MAX_DOCUMENT_BYTES, Unzipped, column_within, open_read_only, pass_over_value, unzstd_within,
};
use crate::ledger::stored::evidence::{AgentState, Evidence};

keep! {
    /// What [`read_thread`] reads of a thread.
    THREAD = ["request_token_usage", "model/model"];
}

/// The reader of Zed's threads.
pub(crate) struct Threads;

/// What the reader keeps of the database where it stopped.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resume {
    /// The newest `updated_at` read, as Zed wrote it.
    updated_at: Option<String>,
}

impl WholeFileReader for Threads {
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        let mut resume: Resume = decode_state(state);
        let refused = read_threads(path, &mut resume, out).map_err(std::io::Error::other)?;
        Ok((encode_state(&resume), refused))
    }
}

/// Reads the threads updated since `resume`, and moves it on; the count
/// is of threads, and prompts' usages, refused as unreadable.
fn read_threads(path: &Path, resume: &mut Resume, out: &mut Vec<Evidence>) -> rusqlite::Result<u64> {
    let connection = open_read_only(path)?;
    let has_table: bool = connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'threads')",
        [],
        |row| row.get(0),
    )?;
    if !has_table {
        return Ok(0);
    }
    // A database no Zed since 2025 has opened has no `folder_paths`.
    let folders =
        if connection.prepare("SELECT 1 FROM pragma_table_info('threads') WHERE name = 'folder_paths'")?.exists([])? {
            "folder_paths"
        } else {
            "NULL"
        };
    // The rows in order of update first, then each thread's row alone:
    // sorting whole rows would hold a copy of every thread's data (each
    // up to the bound) in SQLite's sorter at once.
    let mut ordered =
        connection.prepare("SELECT rowid FROM threads WHERE ?1 IS NULL OR updated_at >= ?1 ORDER BY updated_at")?;
    let rowids: Vec<i64> =
        ordered.query_map(params![resume.updated_at.as_deref()], |row| row.get(0))?.collect::<Result<_, _>>()?;
    let mut statement = connection.prepare(&format!(
        "SELECT id, updated_at, data_type, octet_length(data), CASE WHEN octet_length(data) <= ?2 THEN data END,
                {folders}
           FROM threads WHERE rowid = ?1"
    ))?;
    let (mut sessions, mut models) = (LastName::default(), LastName::default());
    let mut found = Found::new(Provider::Zed, &mut sessions, &mut models, out);
    let mut refused = 0;
    for rowid in rowids {
        // 64 MiB: an SQLite integer whatever the platform.
        let mut rows = statement.query(params![rowid, MAX_DOCUMENT_BYTES as i64])?;
        // A thread deleted since its id was read is not there.
        let Some(row) = rows.next()? else { continue };
        if let Some(updated) = row.get_ref(1)?.as_str().ok().filter(|updated| time_ms(updated).is_some())
            && resume.updated_at.as_deref() < Some(updated)
        {
            resume.updated_at = Some(updated.to_owned());
        }
        refused += read_thread(path, row, &mut found);
    }
    Ok(refused)
}

/// Reads one thread row: its responses, and how many of its parts were
/// refused (the thread itself, or its prompts' usages).
fn read_thread(path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> u64 {
    let text_of = |at: usize| row.get_ref(at).ok().and_then(|value| value.as_str().ok());
    let Some(id) = text_of(0).filter(|id| !id.is_empty()) else { return 1 };
    let Some(at_ms) = text_of(1).and_then(time_ms) else { return 1 };
    let compressed = match text_of(2) {
        Some("zstd") => true,
        Some("json") => false,
        _ => return 1,
    };
    let data = match column_within(row, 3) {
        Ok(ValueRef::Blob(data) | ValueRef::Text(data)) => data,
        Ok(_) => return 1,
        Err(bytes) => {
            // Named, so not also refused.
            pass_over_value(SkipReason::OversizedDocument, bytes, path, &format_args!("thread {id}"));
            return 0;
        }
    };
    let json = if compressed {
        match unzstd_within(data) {
            Ok(json) => Cow::Owned(json),
            Err(Unzipped::Broken) => return 1,
            Err(Unzipped::Oversized(bytes)) => {
                pass_over_value(SkipReason::OversizedDocument, bytes, path, &format_args!("thread {id}"));
                return 0;
            }
        }
    } else {
        Cow::Borrowed(data)
    };
    let thread = match sparse::parse(&json, &THREAD) {
        Ok(thread @ Value::Object(_)) => thread,
        Ok(_) | Err(Refused::Malformed) => return 1,
        Err(Refused::TooComplex) => {
            pass_over_value(SkipReason::TooComplex, json.len() as u64, path, &format_args!("thread {id}"));
            return 0;
        }
    };
    // The project, where the thread ran in one folder (Zed joins several
    // with newlines).
    let directory = text_of(5).filter(|folders| !folders.contains('\n'));
    found.session(id, directory);
    let usages = match thread.get("request_token_usage") {
        Some(Value::Object(usages)) => usages,
        // An older thread's list by message index, or none at all.
        Some(Value::Array(_) | Value::Null) | None => return 0,
        Some(_) => return 1,
    };
    let model = text(&thread, "/model/model");
    let mut refused = 0;
    for (prompt, usage) in usages {
        let Some(counters) = counters(usage).filter(|_| !prompt.is_empty()) else {
            refused += 1;
            continue;
        };
        // A request that reported nothing (never served) is no response.
        if counters.counts_nothing() {
            continue;
        }
        found.response(format!("{id}\u{1f}{prompt}"), id, at_ms, model, counters);
    }
    refused
}

/// One prompt's usage, in Anthropic's shape as Zed keeps every provider's:
/// a counter left out is 0 (Zed leaves zeros out); one that is no count is
/// unknown. `None` when the usage is no object.
fn counters(usage: &Value) -> Option<Counters> {
    let usage = usage.as_object()?;
    let field = |name: &str| match usage.get(name) {
        None => Some(0),
        Some(value) => value.as_u64(),
    };
    Some(Counters {
        input_tokens: field("input_tokens"),
        cache_creation_input_tokens: field("cache_creation_input_tokens"),
        cache_read_input_tokens: field("cache_read_input_tokens"),
        output_tokens: field("output_tokens"),
        ..Counters::default()
    })
}

/// A time as Zed writes it (chrono's RFC 3339, offset `+00:00`), in ms.
fn time_ms(text: &str) -> Option<i64> {
    let at: jiff::Timestamp = text.parse().ok()?;
    Some(at.as_millisecond()).filter(|&ms| bee_proto::time::spells_as_rfc3339(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, noted, read_whole, responses_of, rle_frame, rows};
    use crate::ledger::stored::evidence::SessionProject;

    /// Zed's table, as a Zed of 2026 creates and alters it.
    const SCHEMA: &str = "CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,
            data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT, folder_paths TEXT,
            folder_paths_order TEXT, created_at TEXT);";

    const INSERT: &str = "INSERT OR REPLACE INTO threads (id, summary, updated_at, data_type, data, folder_paths)
        VALUES (?1, 'a thread', ?2, ?3, ?4, ?5)";

    /// A thread Zed 0.3.0 wrote (real zstd, level 3 as Zed compresses).
    const REAL: &[u8] = include_bytes!("testdata/thread-0.3.0.json.zst");

    fn zstd(json: &str) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(json.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest)
    }

    /// A thread's JSON with `usage` its `request_token_usage`.
    fn thread(usage: &str) -> String {
        format!(
            r#"{{"title":"t","messages":[{{"User":{{"id":"p1","content":[{{"Text":"hi"}}]}}}}],"updated_at":"2026-06-21T09:30:00Z","cumulative_token_usage":{{"input_tokens":9}},"request_token_usage":{usage},"model":{{"provider":"zed.dev","model":"gpt-5"}},"version":"0.3.0"}}"#
        )
    }

    /// Zed's own thread and a plain one: each prompt's usage once, by its
    /// thread and prompt, a counter Zed left out 0, dated by the thread's
    /// update, named by its model; its one folder is its project; an
    /// older thread's list by message index is not read; the usage of a
    /// request never served is no response.
    #[test]
    fn each_prompt_usage_once_from_real_zstd_and_plain_json() {
        let (_dir, path, db) = database("threads.db", SCHEMA);
        let t1 = "5e0f4c1a-8b2d-4e3f-9a1b-7c6d5e4f3a2b";
        db.execute(INSERT, (t1, "2026-06-21T09:30:00.123456789+00:00", "zstd", REAL, "/home/dev/app")).unwrap();
        db.execute(
            INSERT,
            (
                "t2",
                "2026-06-21T10:00:00+00:00",
                "json",
                thread(r#"{"p1":{"input_tokens":40,"output_tokens":2},"p2":{}}"#).into_bytes(),
                "/a\n/b",
            ),
        )
        .unwrap();
        let legacy = r#"{"summary":"old","messages":[],"updated_at":"2025-01-01T00:00:00Z","request_token_usage":[{"input_tokens":5,"output_tokens":1}],"version":"0.2.0"}"#;
        db.execute(INSERT, ("t3", "2025-01-01T00:00:00+00:00", "zstd", zstd(legacy), None::<String>)).unwrap();
        let mut evidence = Vec::new();
        let (_, refused) = Threads.read(&path, &AgentState::default(), &mut evidence).unwrap();
        assert_eq!(refused, 0);
        let projects: Vec<_> = evidence
            .iter()
            .filter_map(|e| match e {
                Evidence::SessionProject(SessionProject { session_id, .. }) => Some(session_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(projects, [t1], "one folder is a project; several are not");
        let writes = responses_of(evidence);
        let s = Some;
        let real = |prompt: &str| format!("{t1}\u{1f}{prompt}");
        assert_eq!(
            rows(Provider::Zed, &writes),
            [
                (real("6a1f0c52-3b7e-4d19-9c8a-2e5f7b1d4c90"), s(1200), s(5000), s(90000), s(300), None, s(96500)),
                (real("d3c2b1a0-9f8e-4d7c-8b6a-5f4e3d2c1b0a"), s(800), s(0), s(95000), s(150), None, s(95950)),
                ("t2\u{1f}p1".into(), s(40), s(0), s(0), s(2), None, s(42)),
            ]
        );
        let real_writes: Vec<_> = writes.iter().filter(|w| w.key.starts_with(t1)).collect();
        assert!(real_writes.iter().all(|w| w.model.as_deref() == Some("claude-sonnet-4-5")));
        assert!(real_writes.iter().all(|w| w.at_ms == 1_782_034_200_123), "{real_writes:?}");
        assert!(real_writes.iter().all(|w| w.session_id.as_deref() == Some(t1)));
    }

    /// libzstd's frame with a content checksum reads as without one.
    #[test]
    fn a_frame_with_its_checksum_decompresses_alike() {
        let with_checksum = include_bytes!("testdata/thread-0.3.0-checksum.json.zst");
        assert_eq!(unzstd_within(with_checksum), unzstd_within(REAL));
        let json = unzstd_within(REAL).unwrap();
        assert!(json.starts_with(br#"{"title":"Refactor the parser""#));
        assert_eq!(unzstd_within(&rle_frame(300_000)), Ok(vec![b' '; 300_000]));
    }

    /// Read again from where it stopped, a thread not updated since adds
    /// nothing; one updated (its prompt's usage overwritten by a later
    /// request, a new prompt) is read again, the prompt the same response;
    /// read whole again, the same responses.
    #[test]
    fn a_thread_read_again_adds_nothing_twice() {
        let (_dir, path, db) = database("threads.db", SCHEMA);
        let first = thread(r#"{"p1":{"input_tokens":10,"output_tokens":1}}"#);
        db.execute(INSERT, ("t1", "2026-06-21T09:30:00+00:00", "zstd", zstd(&first), None::<String>)).unwrap();
        db.execute(INSERT, ("t0", "2026-06-20T08:00:00+00:00", "json", thread("{}"), None::<String>)).unwrap();
        let (once, state) = read_whole(Provider::Zed, &path, &AgentState::default());
        assert_eq!(once.len(), 1);
        let (again, state) = read_whole(Provider::Zed, &path, &state);
        assert_eq!(again.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["t1\u{1f}p1"], "that instant again");
        let later = thread(r#"{"p1":{"input_tokens":30,"output_tokens":4},"p2":{"input_tokens":5,"output_tokens":5}}"#);
        db.execute(INSERT, ("t1", "2026-06-21T09:31:00.5+00:00", "zstd", zstd(&later), None::<String>)).unwrap();
        let (updated, state) = read_whole(Provider::Zed, &path, &state);
        assert_eq!(updated.len(), 2);
        let (same, _) = read_whole(Provider::Zed, &path, &state);
        assert_eq!(same.len(), 2, "the newest thread's instant again: the same responses, nothing new");
        let (whole, _) = read_whole(Provider::Zed, &path, &AgentState::default());
        let all: Vec<_> = once.into_iter().chain(again).chain(updated).chain(whole).collect();
        let keys = rows(Provider::Zed, &all).into_iter().map(|row| row.0).collect::<std::collections::BTreeSet<_>>();
        assert_eq!(keys.into_iter().collect::<Vec<_>>(), ["t1\u{1f}p1", "t1\u{1f}p2"]);
    }

    /// A data type Zed never writes, a frame that is no zstd, JSON cut
    /// short or not UTF-8, a time that is no time, and a prompt's usage
    /// that is no object are refused; nothing panics, and the rest is read.
    #[test]
    fn malformed_threads_are_refused() {
        let (_dir, path, db) = database("threads.db", SCHEMA);
        let at = "2026-06-21T09:30:00+00:00";
        let good = thread(r#"{"p1":{"input_tokens":1,"output_tokens":1}}"#);
        db.execute(INSERT, ("a", at, "gzip", zstd(&good), None::<String>)).unwrap();
        db.execute(INSERT, ("b", at, "zstd", b"\x28\xb5\x2f\xfd garbage".to_vec(), None::<String>)).unwrap();
        db.execute(INSERT, ("c", at, "zstd", b"not zstd at all".to_vec(), None::<String>)).unwrap();
        db.execute(INSERT, ("d", at, "json", good.as_bytes()[..good.len() - 3].to_vec(), None::<String>)).unwrap();
        db.execute(INSERT, ("e", at, "json", b"{\"request_token_usage\":{\"p\xff\":{}}}".to_vec(), None::<String>))
            .unwrap();
        db.execute(INSERT, ("f", "last tuesday", "zstd", zstd(&good), None::<String>)).unwrap();
        db.execute(INSERT, ("g", at, "json", thread(r#"{"p1":7,"p2":{"output_tokens":3}}"#), None::<String>)).unwrap();
        db.execute(INSERT, ("h", at, "json", r#"{"request_token_usage":"lots"}"#, None::<String>)).unwrap();
        let mut evidence = Vec::new();
        let (_, refused) = Threads.read(&path, &AgentState::default(), &mut evidence).unwrap();
        let writes = responses_of(evidence);
        assert_eq!(refused, 8, "a, b, c, d, e, f, g's p1, h");
        assert_eq!(writes.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["g\u{1f}p2"]);
        let not_db = path.with_file_name("broken.db");
        std::fs::write(&not_db, b"SQLite format 2\0 broken").unwrap();
        assert!(Threads.read(&not_db, &AgentState::default(), &mut Vec::new()).is_err());
    }

    /// A database without the table, one whose table is empty, and one
    /// from before `folder_paths` hold nothing, or read without it.
    #[test]
    fn an_empty_store_holds_nothing() {
        let (_dir, path, _db) = database("threads.db", "CREATE TABLE other (x)");
        assert_eq!(Threads.read(&path, &AgentState::default(), &mut Vec::new()).unwrap().1, 0);
        let (_dir, path, _db) = database("threads.db", SCHEMA);
        let mut evidence = Vec::new();
        assert_eq!(Threads.read(&path, &AgentState::default(), &mut evidence).unwrap().1, 0);
        assert!(evidence.is_empty());
        let (_dir, path, db) = database(
            "threads.db",
            "CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,
                data_type TEXT NOT NULL, data BLOB NOT NULL)",
        );
        let data = zstd(&thread(r#"{"p1":{"output_tokens":9}}"#));
        db.execute("INSERT INTO threads VALUES ('t1', 's', '2025-03-01T00:00:00+00:00', 'zstd', ?1)", [data]).unwrap();
        let (writes, _) = read_whole(Provider::Zed, &path, &AgentState::default());
        assert_eq!(writes.len(), 1);
        assert_eq!(writes[0].tokens.output_tokens, Some(9));
    }

    /// Counts past u64, negative, fractional or of the wrong type are
    /// unknown, never 0; a frame that asks for a window past the bound is
    /// refused before anything is allocated; one that decompresses past
    /// the bound, and data over it, are named by their length and not
    /// refused; a model name past any name's length leaves the model unknown.
    #[test]
    fn hostile_threads() {
        let (_dir, path, db) = database("threads.db", SCHEMA);
        let at = "2026-06-21T09:30:00+00:00";
        let usage = r#"{"p1":{"input_tokens":18446744073709551615,"output_tokens":1e30,"cache_read_input_tokens":-3,"cache_creation_input_tokens":"ten"}}"#;
        db.execute(INSERT, ("a", at, "json", thread(usage), None::<String>)).unwrap();
        let long_model = thread("{\"p1\":{\"output_tokens\":1}}").replace("gpt-5", &"m".repeat(5000));
        db.execute(INSERT, ("b", at, "json", long_model, None::<String>)).unwrap();
        // A frame header asking for a 2 TiB window, and nothing after it.
        db.execute(INSERT, ("c", at, "zstd", vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8], None::<String>)).unwrap();
        let bomb = rle_frame(MAX_DOCUMENT_BYTES + 1);
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        db.execute(INSERT, ("d", at, "zstd", bomb, None::<String>)).unwrap();
        db.execute(
            "INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES ('e', 's', ?1, 'zstd', zeroblob(?2))",
            params![at, MAX_DOCUMENT_BYTES as i64 + 1],
        )
        .unwrap();
        let _ = noted();
        let mut evidence = Vec::new();
        let (_, refused) = Threads.read(&path, &AgentState::default(), &mut evidence).unwrap();
        assert_eq!(refused, 1, "the frame asking for too large a window");
        let writes = responses_of(evidence);
        let a = writes.iter().find(|w| w.key == "a\u{1f}p1").unwrap();
        assert_eq!(
            (
                a.tokens.input_tokens,
                a.tokens.output_tokens,
                a.tokens.cache_read_input_tokens,
                a.tokens.cache_creation_input_tokens
            ),
            (Some(u64::MAX), None, None, None)
        );
        assert!(!a.is_valid(), "a count past any call's is refused when stored, never summed");
        let b = writes.iter().find(|w| w.key == "b\u{1f}p1").unwrap();
        assert_eq!((b.model.as_deref(), b.tokens.output_tokens), (None, Some(1)));
        assert_eq!(writes.len(), 2);
        let mut noted = noted();
        noted.sort();
        assert_eq!(
            noted,
            [
                (0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument),
                (0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument),
            ]
        );
    }
}
