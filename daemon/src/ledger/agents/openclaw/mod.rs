//! OpenClaw: its agents' transcripts. From 2026.9.6 (and for a history
//! Doctor imported) the agent database, `<state dir>/agents/<agent>/agent/
//! openclaw-agent.sqlite`, table `transcript_events`; before it, session
//! logs (`<state dir>/agents/<agent>/sessions/<session>.jsonl`, and the
//! `.jsonl.reset.*` / `.jsonl.deleted.*` archives it renames them to);
//! beside the database, the zstd archive of a session it deletes. Every
//! one holds pi's session entries (OpenClaw runs pi's agent), a response
//! keyed alike in each, so one in several counts once. `README.md` beside
//! this file describes the formats.
//!
//! - [`store`]: the reader of the agent database.
//! - [`logs`]: the reader of a session log, and of a compressed archive.
//! - [`entries`]: pi's entries under OpenClaw's name.

mod entries;
mod logs;
mod store;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, WholeFileReader, under_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::agents::pi::session::Session;
use crate::ledger::stored::evidence::{AgentState, Evidence};
use entries::OpenClawEntries;

/// OpenClaw, as [`Agent`].
#[derive(Debug)]
pub struct OpenClaw;

/// OpenClaw's reader: the agent database from the rows after its last
/// pass, a session log from its last whole line, an archive whole; each
/// read whenever it changes.
struct Files;

impl WholeFileReader for Files {
    /// Each file takes the large-read token itself: a log's long line
    /// with its buffer (as ingestion reads a line log), a large database
    /// as one large read.
    fn reads_documents(&self) -> bool {
        true
    }

    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        if store::is_database(path) {
            store::read(path, state, out)
        } else if logs::is_archive(path) {
            logs::read_archive(path, out)
        } else {
            logs::read_log(path, state, out)
        }
    }
}

impl Agent for OpenClaw {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::OpenClaw,
            title: "OpenClaw",
            verified: Verified::RealCli("2026.9.6"),
            unrecorded_calls: Some("compaction and summary calls"),
            // pi's entries: cache writes and its own `usage.cost`; no
            // reasoning Bee reads (2026.9.6 writes `reasoningTokens`, a
            // part of output, for OpenAI's APIs only), no limit notice, no
            // turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// `agents/` of OpenClaw's state directory: `OPENCLAW_STATE_DIR`, else
    /// `.openclaw` in `OPENCLAW_HOME` (`~` its home), else in `HOME` (the
    /// rest of the state directory is the user's workspace, never walked).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let home = env("OPENCLAW_HOME").map(PathBuf::from).and_then(|home| match home.strip_prefix("~") {
            Ok(rest) => under_home(env, "").map(|os_home| os_home.join(rest)),
            Err(_) => Some(home),
        });
        let state = env("OPENCLAW_STATE_DIR")
            .map(PathBuf::from)
            .or_else(|| home.map(|home| home.join(".openclaw")))
            .or_else(|| under_home(env, ".openclaw"));
        state.map(|dir| dir.join("agents")).into_iter().collect()
    }

    /// The agent database; a session log, live or archived by a reset or
    /// a delete (compressed or not). Not a file OpenClaw is still writing
    /// to put in place (`*.tmp`), nor a cold archive
    /// (`sessions/cold/<sha256>.jsonl.zst`, see the README).
    fn is_record_file(&self, path: &Path) -> bool {
        if store::is_database(path) {
            return true;
        }
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        !name.ends_with(".tmp")
            && name.find(".jsonl").is_some_and(|at| {
                let suffix = &name[at..];
                suffix == ".jsonl" || suffix.starts_with(".jsonl.reset.") || suffix.starts_with(".jsonl.deleted.")
            })
    }

    /// A session log's lines, for the readers of a whole log at once
    /// (fuzzing, tests): ingestion reads every record file of OpenClaw's
    /// whole ([`Agent::whole_file`]).
    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<Session<OpenClawEntries>>::new(path, state))
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{database, noted, responses, responses_of, rle_frame, rows, tiny_items};
    use crate::ledger::agents::whole::MAX_DOCUMENT_BYTES;
    use crate::ledger::stored::evidence::SessionProject;
    use crate::ledger::stored::responses::ResponseWrite;
    use bee_proto::ledger::SkipReason;
    use rusqlite::params;

    /// OpenClaw 2026.9.6's own `transcript_events` (`sqlite3 .dump`) of
    /// one session, `agent:main:main`, driven against a mock: a chat
    /// completion, an Anthropic message and a Responses call (these two
    /// long, so kept zstd), two more chat completions (one kept zstd),
    /// an in-place `/reset` and a compaction (its summary call keeps no
    /// usage).
    const REAL: &str = include_str!("../testdata/openclaw-2026.9.6-transcript-events.sql");

    /// The archive 2026.9.6 wrote of a session it deleted (`openclaw
    /// sessions delete`): its events, one a line, zstd.
    const DELETED: &[u8] = include_bytes!("../testdata/openclaw-2026.9.6-deleted.jsonl.zst");
    const DELETED_SESSION: &str = "a49ee15d-f13b-4096-8249-fae8664b7323";
    const REAL_SESSION: &str = "ba4753d1-c794-4e66-b8ba-c68d4ba9fe71";

    /// The table as a hostile or older writer may leave it: no types, no
    /// checks.
    const LOOSE: &str = "CREATE TABLE transcript_events (session_id, seq, event_json, created_at, event_zstd,
        event_utf8_bytes, navigation_json, PRIMARY KEY (session_id, seq));";
    const INSERT: &str = "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd)
        VALUES (?1, ?2, ?3, 1796563744415, ?4)";

    /// Reads the record file at `path` as ingestion does, on from `state`:
    /// its evidence, what the reader keeps now, and what it refused.
    fn read_file(path: &Path, state: &AgentState) -> (Vec<Evidence>, AgentState, u64) {
        let mut evidence = Vec::new();
        let (state, refused) = OpenClaw.whole_file().unwrap().read(path, state, &mut evidence).unwrap();
        (evidence, state, refused)
    }

    fn read(path: &Path, state: &AgentState) -> (Vec<ResponseWrite>, AgentState, u64) {
        let (evidence, state, refused) = read_file(path, state);
        (responses_of(evidence), state, refused)
    }

    fn keys(writes: &[ResponseWrite]) -> Vec<&str> {
        let mut keys: Vec<&str> = writes.iter().map(|w| w.key.as_str()).collect();
        keys.sort_unstable();
        keys
    }

    fn zstd(json: &str) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(json.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest)
    }

    /// An assistant event in 2026.9.6's shape, `usage` its counters.
    fn assistant(id: &str, at_ms: i64, usage: &str) -> String {
        format!(
            r#"{{"type":"message","id":"e-{id}","parentId":null,"timestamp":"2026-12-06T13:29:06.686Z","message":{{"role":"assistant","content":[{{"type":"text","text":"hi"}}],"api":"openai-completions","provider":"mockoai","model":"mock-model","usage":{usage},"stopReason":"stop","timestamp":{at_ms},"responseId":"{id}"}}}}"#
        )
    }

    const CHAT: &str = r#"{"input":600,"output":200,"cacheRead":400,"cacheWrite":0,"reasoningTokens":50,"totalTokens":1200,"cost":{"total":0.0012}}"#;

    /// The state directory as OpenClaw finds it: its variable, else
    /// `.openclaw` in `OPENCLAW_HOME`, else in the home.
    #[test]
    fn its_state_directory() {
        let dirs = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
            OpenClaw.record_dirs(&move |name: &str| {
                vars.iter().find(|(k, _)| k == name).map(|(_, v)| std::ffi::OsString::from(v))
            })
        };
        assert_eq!(dirs(&[("HOME", "/h")]), [PathBuf::from("/h/.openclaw/agents")]);
        assert_eq!(dirs(&[("HOME", "/h"), ("OPENCLAW_HOME", "/o")]), [PathBuf::from("/o/.openclaw/agents")]);
        assert_eq!(dirs(&[("HOME", "/h"), ("OPENCLAW_HOME", "~/o")]), [PathBuf::from("/h/o/.openclaw/agents")]);
        let both = [("HOME", "/h"), ("OPENCLAW_HOME", "/o"), ("OPENCLAW_STATE_DIR", "/s")];
        assert_eq!(dirs(&both), [PathBuf::from("/s/agents")]);
        assert!(dirs(&[]).is_empty());
    }

    /// The agent database and its neighbours, a session log and its
    /// archives; not a file OpenClaw is still writing, nor a cold archive.
    #[test]
    fn its_record_files() {
        let is = |name: &str| OpenClaw.is_record_file(Path::new(name));
        assert!(is("a/agents/main/agent/openclaw-agent.sqlite"));
        for not in [
            "openclaw-agent.sqlite-wal",
            "openclaw-agent.sqlite-shm",
            "openclaw-agent.sqlite.memory-reindex-9e22d637-3a69-4a6d-9fc7-b823418235ab",
            "openclaw-agent.sqlite.reindex-lock.sqlite",
            "openclaw-agent.sqlite.generation-lock.sqlite",
            "s.jsonl.deleted.2026-12-06T13-35-53.385Z.d92d.zst.0b7c1e2a-7b0e-4c55-9d0e-1f6f0a3c2b1d.tmp",
            "cold/0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0.jsonl.zst",
            "sessions.json",
            "s.json",
        ] {
            assert!(!is(not), "{not}");
        }
        for log in [
            "s.jsonl",
            "s.jsonl.reset.2026-03-20T06-34-44.520Z",
            "a49ee15d-f13b-4096-8249-fae8664b7323.jsonl.deleted.2026-12-06T13-35-53.385Z.d92d00a4b01b4ff9bbdc4908e9f77291.zst",
        ] {
            assert!(is(log), "{log}");
        }
    }

    /// 2026.9.6's own database: each response once by its `responseId`,
    /// zstd-kept events read as plain ones; chat completions' input is
    /// already without its cached part, output with its reasoning; times
    /// and models the events', costs OpenClaw's own; the session named by
    /// its header, its directory its project. Summary and reset events
    /// are no responses.
    #[test]
    fn the_real_database_of_2026_9_6() {
        let (_dir, path, _db) = database(store::DATABASE, REAL);
        let (evidence, _, refused) = read_file(&path, &AgentState::default());
        assert_eq!(refused, 0);
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionProject(SessionProject { session_id, .. })
            if session_id == REAL_SESSION)));
        let writes = responses_of(evidence);
        let s = Some;
        assert_eq!(
            rows(Provider::OpenClaw, &writes),
            [
                ("chatcmpl-90859607052b".into(), s(600), s(0), s(400), s(200), None, s(1200)),
                ("chatcmpl-9478edc51774".into(), s(600), s(0), s(400), s(200), None, s(1200)),
                ("chatcmpl-bb2b5e6706d1".into(), s(600), s(0), s(400), s(200), None, s(1200)),
                ("msg_2bd0993f0e42".into(), s(1200), s(500), s(300), s(220), None, s(2220)),
                ("resp_34c47309722c".into(), s(800), s(0), s(300), s(210), None, s(1310)),
            ]
        );
        assert_eq!(writes.len(), 5, "each once");
        let of = |key: &str| writes.iter().find(|w| w.key == key).unwrap();
        let anthropic = of("msg_2bd0993f0e42");
        assert_eq!((anthropic.model.as_deref(), anthropic.at_ms), (Some("mock-model-ant"), 1_796_563_778_737));
        assert_eq!(anthropic.own_figure, Some(0.008_865));
        let responses = of("resp_34c47309722c");
        assert_eq!((responses.model.as_deref(), responses.own_figure), (Some("mock-model"), Some(0.00137)));
        assert!(writes.iter().all(|w| w.session_id.as_deref() == Some(REAL_SESSION) && !w.copied && w.is_valid()));
        assert!(noted().is_empty());
    }

    /// Read again from where it stopped, the database adds nothing; a row
    /// appended is read alone; rows deleted from its end and others put
    /// in their place (a rowid given again) make it read all again, and
    /// the responses it holds are the same ones.
    #[test]
    fn a_database_read_again_adds_nothing_twice() {
        let (_dir, path, db) = database(store::DATABASE, REAL);
        let (first, state, _) = read(&path, &AgentState::default());
        assert_eq!(first.len(), 5);
        let (again, state, refused) = read(&path, &state);
        assert_eq!((again.len(), refused), (0, 0), "nothing new");
        db.execute(
            INSERT,
            params![REAL_SESSION, 26, assistant("chatcmpl-new", 1_796_564_200_000, CHAT), None::<Vec<u8>>],
        )
        .unwrap();
        let (appended, state, _) = read(&path, &state);
        assert_eq!(keys(&appended), ["chatcmpl-new"]);
        assert!(appended.iter().all(|w| w.session_id.as_deref() == Some(REAL_SESSION)));
        // The session deleted, another begun: its rows take the rowids
        // the deleted ones had.
        db.execute("DELETE FROM transcript_events WHERE session_id = ?1", [REAL_SESSION]).unwrap();
        let other = "0c3b7e2a-5f6d-4e1a-9b8c-7d6e5f4a3b2c";
        let header = format!(
            r#"{{"type":"session","version":4,"id":"{other}","timestamp":"2026-12-06T14:00:00.000Z","cwd":"/w"}}"#
        );
        db.execute(INSERT, params![other, 0, header, None::<Vec<u8>>]).unwrap();
        for seq in 1..27 {
            let event = assistant(&format!("chatcmpl-o{seq}"), 1_796_570_000_000 + seq, CHAT);
            db.execute(INSERT, params![other, seq, event, None::<Vec<u8>>]).unwrap();
        }
        let (after, state, _) = read(&path, &state);
        assert_eq!(after.len(), 26, "the new session whole, though its rows end where the last read did");
        assert!(after.iter().all(|w| w.session_id.as_deref() == Some(other)));
        assert_eq!(read(&path, &state).0.len(), 0);
        let all: Vec<ResponseWrite> = first.into_iter().chain(appended).chain(after).collect();
        assert_eq!(rows(Provider::OpenClaw, &all).len(), 32, "each once");
    }

    /// The archive 2026.9.6 wrote of a session it deleted holds the same
    /// events its rows did: read beside the rows (a pass before the
    /// delete), each response counts once, alike.
    #[test]
    fn a_deleted_sessions_archive_and_its_rows_count_once() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join(format!(
            "{DELETED_SESSION}.jsonl.deleted.2026-12-06T13-35-53.385Z.d92d00a4b01b4ff9bbdc4908e9f77291.zst"
        ));
        std::fs::write(&archive, DELETED).unwrap();
        assert!(OpenClaw.is_record_file(&archive));
        let (from_archive, _, refused) = read(&archive, &AgentState::default());
        assert_eq!(refused, 0);
        let s = Some;
        assert_eq!(
            rows(Provider::OpenClaw, &from_archive),
            [
                ("chatcmpl-e34640d5cf7b".into(), s(600), s(0), s(400), s(200), None, s(1200)),
                ("msg_360e175c698e".into(), s(1200), s(500), s(300), s(220), None, s(2220)),
            ]
        );
        assert!(from_archive.iter().all(|w| w.session_id.as_deref() == Some(DELETED_SESSION)));
        // Its rows, as the database held them before the delete.
        let json = crate::ledger::agents::whole::unzstd_within(DELETED).unwrap();
        let (_db_dir, path, db) = database(store::DATABASE, LOOSE);
        for (seq, line) in std::str::from_utf8(&json).unwrap().lines().enumerate() {
            let event = if line.len() > 1024 { (None, Some(zstd(line))) } else { (Some(line), None) };
            db.execute(INSERT, params![DELETED_SESSION, seq as i64, event.0, event.1]).unwrap();
        }
        let (from_rows, _, _) = read(&path, &AgentState::default());
        let both: Vec<ResponseWrite> = from_archive.iter().cloned().chain(from_rows.iter().cloned()).collect();
        assert_eq!(rows(Provider::OpenClaw, &both), rows(Provider::OpenClaw, &from_archive), "the same responses");
        let at = |writes: &[ResponseWrite]| {
            writes.iter().map(|w| (w.key.clone(), w.at_ms, w.own_figure)).collect::<Vec<_>>()
        };
        let (mut a, mut b) = (at(&from_archive), at(&from_rows));
        a.sort_by(|x, y| x.0.cmp(&y.0));
        b.sort_by(|x, y| x.0.cmp(&y.0));
        assert_eq!(a, b);
    }

    /// A history Doctor imported from an older version's log holds the
    /// log's entries: the log and the database count each response once,
    /// the entry without an id too (keyed alike by its time and
    /// counters). A log is read as before, a pass at a time from its last
    /// whole line.
    #[test]
    fn a_log_and_its_imported_rows_count_once() {
        let log = include_bytes!("../testdata/openclaw-session.jsonl");
        let (from_log, unparseable) = responses(Provider::OpenClaw, log);
        assert_eq!((rows(Provider::OpenClaw, &from_log).len(), unparseable), (3, 1));
        // Ingestion's read, in two passes: the log cut after its fourth line.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("oc-session-1.jsonl");
        let cut = log.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(3).unwrap().0 + 1;
        std::fs::write(&file, &log[..cut]).unwrap();
        let (head, state, refused) = read(&file, &AgentState::default());
        assert_eq!((keys(&head), refused), (vec!["msg_oc_1"], 0));
        std::fs::write(&file, log).unwrap();
        let (rest, state, refused) = read(&file, &state);
        assert_eq!(refused, 1, "the truncated line");
        let both: Vec<ResponseWrite> = head.into_iter().chain(rest).collect();
        assert_eq!(rows(Provider::OpenClaw, &both), rows(Provider::OpenClaw, &from_log));
        assert_eq!(read(&file, &state).0.len(), 0, "read to its end");
        // The log's sessions imported as rows, in order.
        let (_db_dir, path, db) = database(store::DATABASE, LOOSE);
        let (mut session, mut seq) = (String::new(), 0);
        for line in std::str::from_utf8(log).unwrap().lines() {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(line)
                && value["type"] == "session"
            {
                (session, seq) = (value["id"].as_str().unwrap().to_owned(), 0);
            }
            db.execute(INSERT, params![session, seq, line, None::<Vec<u8>>]).unwrap();
            seq += 1;
        }
        let (from_rows, _, refused) = read(&path, &AgentState::default());
        assert_eq!(refused, 1, "the truncated entry");
        let all: Vec<ResponseWrite> = from_log.iter().cloned().chain(from_rows).collect();
        assert_eq!(rows(Provider::OpenClaw, &all), rows(Provider::OpenClaw, &from_log), "nothing twice");
    }

    /// A value of the wrong type, no event at all, a frame that is no
    /// zstd, an event that is no JSON object, a response without a time
    /// and a row without a session are refused; counts of the wrong type,
    /// negative, fractional or past u64 are unknown (never 0); a cost
    /// that is no cost is unknown; a model name past any name's length
    /// leaves the model unknown. Nothing panics, and the rest is read.
    #[test]
    fn malformed_rows_are_refused_and_bad_counts_unknown() {
        let (_dir, path, db) = database(store::DATABASE, LOOSE);
        let s = "5a1b2c3d-0000-4000-8000-000000000001";
        let insert = |seq: i64, json: Option<String>, zstd: Option<Vec<u8>>| {
            db.execute(INSERT, params![s, seq, json, zstd]).unwrap();
        };
        insert(0, Some(format!(r#"{{"type":"session","id":"{s}","timestamp":"2026-12-06T13:00:00.000Z"}}"#)), None);
        db.execute(INSERT, params![s, 1, 42, None::<Vec<u8>>]).unwrap();
        insert(2, None, None);
        insert(3, None, Some(b"not zstd at all".to_vec()));
        insert(4, None, Some(b"\x28\xb5\x2f\xfd garbage".to_vec()));
        insert(5, Some(r#"{"type":"message","message":{"role":"assistant","usage":{"input":1"#.into()), None);
        insert(6, Some(r#"["usage","session"]"#.into()), None);
        let untimed = assistant("r-untimed", 0, CHAT)
            .replace(r#""timestamp":0,"#, "")
            .replace(r#""timestamp":"2026-12-06T13:29:06.686Z","#, "");
        insert(7, Some(untimed), None);
        let hostile = r#"{"input":18446744073709551616,"output":-3,"cacheRead":"ten","cacheWrite":1.5,"totalTokens":1e30,"cost":{"total":"free"}}"#;
        insert(8, Some(assistant("r-hostile", 1_796_563_746_050, hostile)), None);
        let long_model = assistant("r-long", 1_796_563_746_051, CHAT).replace("mock-model", &"m".repeat(5000));
        insert(9, None, Some(zstd(&long_model)));
        insert(10, Some(assistant("r-good", 1_796_563_746_052, CHAT)), None);
        db.execute(INSERT, params![None::<String>, 11, assistant("r-nosession", 1, CHAT), None::<Vec<u8>>]).unwrap();
        db.execute(INSERT, params![7, 12, assistant("r-number", 1, CHAT), None::<Vec<u8>>]).unwrap();
        let (writes, _, refused) = read(&path, &AgentState::default());
        assert_eq!(refused, 9, "1 to 7, and the rows of no session");
        assert_eq!(keys(&writes), ["r-good", "r-hostile", "r-long"]);
        let of = |key: &str| writes.iter().find(|w| w.key == key).unwrap();
        let t = &of("r-hostile").tokens;
        assert_eq!(
            (t.input_tokens, t.output_tokens, t.cache_read_input_tokens, t.cache_creation_input_tokens, t.total_tokens),
            (None, None, None, None, None)
        );
        assert_eq!(of("r-hostile").own_figure, None);
        assert_eq!((of("r-long").model.as_deref(), of("r-long").tokens.output_tokens), (None, Some(200)));
        assert_eq!(of("r-good").own_figure, Some(0.0012));
        let not_db = path.with_file_name("broken.sqlite");
        std::fs::write(&not_db, b"SQLite format 2\0 broken").unwrap();
        let renamed = not_db.with_file_name(store::DATABASE);
        drop(db);
        std::fs::rename(&not_db, &renamed).unwrap();
        assert!(Files.read(&renamed, &AgentState::default(), &mut Vec::new()).is_err());
    }

    /// A frame asking for a window past the bound is refused before
    /// anything is allocated; one decompressing past the bound, and a
    /// value over it, compressed or not, are named by their length, not
    /// refused; an event whose read fields are millions of tiny items is
    /// named too. The rest is read.
    #[test]
    fn zstd_bombs_and_oversized_events_are_named() {
        let (_dir, path, db) = database(store::DATABASE, LOOSE);
        let s = "5a1b2c3d-0000-4000-8000-000000000002";
        db.execute(INSERT, params![s, 0, None::<String>, vec![0x28u8, 0xb5, 0x2f, 0xfd, 0x00, 0xf8]]).unwrap();
        let bomb = rle_frame(MAX_DOCUMENT_BYTES + 1);
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        db.execute(INSERT, params![s, 1, None::<String>, bomb]).unwrap();
        db.execute(
            "INSERT INTO transcript_events (session_id, seq, event_zstd, created_at) VALUES (?1, 2, zeroblob(?2), 0)",
            params![s, MAX_DOCUMENT_BYTES as i64 + 1],
        )
        .unwrap();
        db.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at)
                VALUES (?1, 3, CAST(zeroblob(?2) AS TEXT), 0)",
            params![s, MAX_DOCUMENT_BYTES as i64 + 2],
        )
        .unwrap();
        let tiny = assistant("r-tiny", 1_796_563_746_050, &CHAT.replace("600", &tiny_items(1_500_000)));
        db.execute(INSERT, params![s, 4, tiny.clone(), None::<Vec<u8>>]).unwrap();
        db.execute(INSERT, params![s, 5, assistant("r-good", 1_796_563_746_052, CHAT), None::<Vec<u8>>]).unwrap();
        let _ = noted();
        let (writes, _, refused) = read(&path, &AgentState::default());
        assert_eq!(refused, 1, "the frame asking for too large a window");
        assert_eq!(keys(&writes), ["r-good"]);
        let mut noted = noted();
        noted.sort();
        assert_eq!(
            noted,
            [
                (0, tiny.len() as u64, SkipReason::TooComplex),
                (0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument),
                (0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument),
                (0, MAX_DOCUMENT_BYTES + 2, SkipReason::OversizedDocument),
            ]
        );
    }

    /// An archive decompresses no further than its bound (the rest named
    /// by the length read); one that is no zstd frame, or one cut short,
    /// is refused, what was read before the break standing.
    #[test]
    fn archive_bombs_and_broken_archives() {
        let dir = tempfile::tempdir().unwrap();
        let bomb = dir.path().join("s.jsonl.deleted.2026-12-06T13-35-53.385Z.g.zst");
        std::fs::write(&bomb, rle_frame(4 << 20)).unwrap();
        let _ = noted();
        let mut evidence = Vec::new();
        let (_, refused) = logs::read_archive_within(&bomb, 1 << 20, &mut evidence).unwrap();
        assert_eq!((evidence.len(), refused), (0, 0));
        assert_eq!(noted(), [(0, (1 << 20) + 1, SkipReason::OversizedDocument)]);

        let broken = dir.path().join("t.jsonl.deleted.2026-12-06T13-35-53.385Z.g.zst");
        std::fs::write(&broken, b"not zstd at all").unwrap();
        assert_eq!(read(&broken, &AgentState::default()).2, 1);
        std::fs::write(&broken, &DELETED[..DELETED.len() - 40]).unwrap();
        let (writes, _, refused) = read(&broken, &AgentState::default());
        assert_eq!(refused, 1, "the frame cut short");
        assert!(writes.len() <= 2);
        assert!(noted().is_empty());
    }

    /// A database without the table holds nothing, and an empty table
    /// nothing; read again, still nothing.
    #[test]
    fn an_empty_database_holds_nothing() {
        let (_dir, path, _db) = database(store::DATABASE, "CREATE TABLE other (x)");
        let (evidence, state, refused) = read_file(&path, &AgentState::default());
        assert_eq!((evidence.len(), refused), (0, 0));
        let (_dir, path, _db) = database(store::DATABASE, LOOSE);
        let (evidence, state, refused) = read_file(&path, &state);
        assert_eq!((evidence.len(), refused), (0, 0));
        assert_eq!(read_file(&path, &state).0.len(), 0);
    }

    /// A session, its reset archive (the same entries under another
    /// name) and a fork: each response once by its id; an entry without an
    /// id is keyed by what its copies keep; a response through the
    /// `claude-cli` backend is Claude Code's, not OpenClaw's; a broken line
    /// is counted.
    #[test]
    fn archives_and_forks_count_each_response_once() {
        let log = include_bytes!("../testdata/openclaw-session.jsonl");
        let (writes, unparseable) = responses(Provider::OpenClaw, log);
        assert_eq!(unparseable, 1, "the truncated line");
        let s = Some;
        let found = rows(Provider::OpenClaw, &writes);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            found[1..],
            [
                ("msg_oc_1".into(), s(12), s(1000), s(500), s(30), None, s(1542)),
                ("msg_oc_2".into(), s(8), s(40), s(1500), s(20), None, s(1568)),
            ]
        );
        assert_eq!((found[0].1, found[0].4, found[0].6), (s(5), s(7), s(12)), "the entry without an id: {found:?}");
    }
}
