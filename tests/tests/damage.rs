//! Damage a store cannot hide: acknowledged observations lost with a damaged
//! WAL frame, and a damaged schema page, are both `corrupt` — never a smaller
//! total that looks exact, never only `missing` (which alone would read as
//! "nothing was ever observed"). A damaged ledger record or response pack is
//! named and left out of every figure the records answer. An events store
//! whose index disagrees with its table, or that does not read as a
//! database, is `corrupt` (named), and left as it is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use std::io::{Seek, SeekFrom, Write};

const BLOCK: &[u8] = b"Keep commits small.\n";

/// Fires `n` observed prompt hooks, each acknowledged by beed.
fn acknowledged(home: &TestHome, n: usize) {
    let block = home.file("block.md", BLOCK);
    for _ in 0..n {
        let (_, receipt) = home.fire_with_receipt("plain", &block, &prompt_envelope(SESSION, "x"));
        assert_eq!(receipt.unwrap().1, "accepted by beed");
    }
}

fn flip_byte(path: &std::path::Path, at: u64) {
    let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let mut byte = [0u8; 1];
    file.seek(SeekFrom::Start(at)).unwrap();
    std::io::Read::read_exact(&mut file, &mut byte).unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(&[byte[0] ^ 0x10]).unwrap();
}

#[test]
fn acknowledged_observations_lost_with_a_damaged_wal_frame_are_corrupt() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    acknowledged(&home, 20);
    let (_, before) = home.report(&[]);
    assert_eq!(before["observedEvents"], 20);
    // beed dies with the records in the WAL; one bit of its first frame flips.
    daemon.kill9();
    let wal = home.store().join("delivery.sqlite3-wal");
    assert!(std::fs::metadata(&wal).unwrap().len() > 32 + 24, "the records are in the WAL");
    flip_byte(&wal, 32 + 24 + 200);
    let (code, report) = home.report(&[]);
    let issues = report["issues"].as_array().unwrap();
    assert!(issues.contains(&"corrupt".into()), "{report}");
    assert!(report["observedEvents"].as_u64().unwrap() < 20, "the loss is real: {report}");
    assert!(code == 0 || code == 5, "{code}");
    // beed writes the loss down and goes on: every later report names it,
    // and new observations are still taken.
    let daemon = home.start_daemon();
    assert!(daemon.log().contains("recorded as lost"), "{}", daemon.log());
    acknowledged(&home, 2);
    let (code, report) = home.report(&[]);
    assert_eq!(code, 0);
    assert!(report["issues"].as_array().unwrap().contains(&"corrupt".into()), "{report}");
    let lost = std::fs::read_to_string(home.store().join("acknowledged-lost")).unwrap();
    assert!(lost.contains("\"acknowledged\":20"), "{lost}");
    drop(daemon);
}

#[test]
fn a_damaged_schema_page_is_corrupt_not_only_missing() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    acknowledged(&home, 3);
    // A clean stop checkpoints the WAL into the database file.
    assert_eq!(daemon.stop(), Some(0));
    let db = home.store().join("delivery.sqlite3");
    // Page 1 holds the schema (sqlite_master) after the 100-byte header.
    let mut file = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    file.seek(SeekFrom::Start(100)).unwrap();
    file.write_all(&[0xA5; 3_000]).unwrap();
    drop(file);
    let (code, report) = home.report(&[]);
    assert_eq!(code, 5);
    assert_eq!(report["issues"], serde_json::json!(["missing", "corrupt", "observation_window_open"]), "{report}");
}

/// Stores one `PreToolUse` event of `session` per tool id, through beed.
fn post_tool_events(home: &TestHome, session: &str, tools: &[&str]) {
    for tool in tools {
        let body = serde_json::json!({"source_app": "app", "session_id": session, "hook_event_type": "PreToolUse",
                                      "payload": {}, "tool_use_id": tool});
        let (status, _, _) = raw_http(&home.socket(), &post_request("/events", "", body.to_string().as_bytes()));
        assert_eq!(status, 200);
    }
}

/// The events store's database file.
fn events_db(home: &TestHome) -> std::path::PathBuf {
    home.bee_dir().join("usage/events-v1/events.sqlite3")
}

#[test]
fn a_flipped_bit_in_a_stored_event_is_named_not_believed() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    post_tool_events(&home, "s-flip", &["toolu_FIRST", "toolu_MARKED", "toolu_LAST"]);
    assert_eq!(daemon.stop(), Some(0));
    let db = events_db(&home);
    let bytes = std::fs::read(&db).unwrap();
    let at = bytes.windows(12).position(|w| w == b"toolu_MARKED").expect("the event on disk");
    flip_byte(&db, at as u64 + 6);

    let audit = parse_json_line(&home.beectl(&["audit", "--session", "s-flip"]).stdout);
    assert_eq!(audit["class"], "persistence_unverified", "{audit}");
    let persistence = audit["receipts"].as_array().unwrap().iter().find(|r| r["boundary"] == "persistence").unwrap();
    assert!(persistence["evidence"].as_str().unwrap().contains("fail their checksum"), "{persistence}");

    let offline = home.beectl(&["events", "recent"]);
    assert!(String::from_utf8_lossy(&offline.stderr).contains("1 stored event(s) fail their checksum"), "{offline:?}");
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let (_, headers, body) = raw_http(&home.socket(), &get_request("/events/recent", "localhost", ""));
    let recent: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let tools: Vec<&str> = recent.as_array().unwrap().iter().map(|e| e["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(tools, ["toolu_FIRST", "toolu_LAST"], "the damaged event is not shown as evidence");
    assert!(headers.to_ascii_lowercase().contains("x-bee-damaged-events: 1"), "the damage is named: {headers}");
    drop(daemon);
}

#[test]
fn a_flipped_bit_in_a_ledger_record_is_named_not_counted() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    for (n, model) in ["claude-sonnet-FIRST", "claude-sonnet-MARKED"].iter().enumerate() {
        let call = serde_json::json!({"kind": "call", "recordId": format!("7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7c0{n}"),
            "source": "run", "provider": "claude", "startedAtUtc": format!("2026-11-30T10:1{n}:00.000Z"),
            "durationMs": 60_000, "success": true, "model": model,
            "tokens": {"inputTokens": 100, "outputTokens": 10}, "quotaSnapshots": []});
        let body = serde_json::json!({"records": [call]}).to_string();
        let (status, _, _) = raw_http(&home.socket(), &post_request("/v1/ledger/records", "", body.as_bytes()));
        assert_eq!(status, 200);
    }
    assert_eq!(daemon.stop(), Some(0));
    let db = home.bee_dir().join("usage/ledger-v1/ledger.sqlite3");
    let bytes = std::fs::read(&db).unwrap();
    let at = bytes.windows(20).position(|w| w == b"claude-sonnet-MARKED").expect("the call on disk");
    flip_byte(&db, at as u64 + 14);

    // A range the records answer (not whole hours): the damaged call is left
    // out and named.
    let usage = |by: &str| {
        let output =
            home.beectl(&["usage", "--by", by, "--since", "2026-11-30T10:05:00Z", "--until", "2026-11-30T10:55:00Z"]);
        parse_json_line(&output.stdout)
    };
    let report = usage("model");
    assert_eq!(
        report["issues"],
        serde_json::json!(["partial", "unpriced_model", "corrupt"]),
        "the runs reported no cache counters, of a model no price table names: {report}"
    );
    let models: Vec<&str> = report["rows"].as_array().unwrap().iter().filter_map(|r| r["key"].as_str()).collect();
    assert_eq!(models, ["claude-sonnet-first"], "the surviving model's label: {report}");
    assert_eq!(report["rows"][0]["modelIds"], serde_json::json!(["claude-sonnet-FIRST"]), "as written: {report}");
    let status = parse_json_line(
        &home.beectl(&["status", "--since", "2026-11-30T10:05:00Z", "--until", "2026-11-30T10:55:00Z"]).stdout,
    );
    assert!(status["issues"].as_array().unwrap().contains(&"corrupt".into()), "{status}");
}

/// One Claude Code response line at `hour`:10.
fn claude_response(message: &str, hour: u32, output: u64) -> String {
    let at = format!("2026-11-30T{hour:02}:10:00.000Z");
    claude_response_line(SESSION, message, &format!("req_{message}"), &at, 10, output)
}

#[test]
fn a_flipped_bit_in_a_response_pack_is_named_not_counted() {
    let home = TestHome::new();
    let projects = home.path().join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&projects).unwrap();
    let log = projects.join(format!("{SESSION}.jsonl"));
    // Two hours, two packs: the second holds the marked response alone.
    let lines = [claude_response("msg_FIRST", 10, 7), claude_response("msg_MARKED_RESPONSE", 11, 9)];
    std::fs::write(&log, lines.concat()).unwrap();
    make_quiet(&log);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let db = home.bee_dir().join("usage/ledger-v1/ledger.sqlite3");
    let bytes = std::fs::read(&db).unwrap();
    let at = bytes.windows(19).position(|w| w == b"msg_MARKED_RESPONSE").expect("the pack on disk");
    flip_byte(&db, at as u64 + 4);

    // A range the records answer (not whole hours): the damaged pack is
    // left out and named.
    let output =
        home.beectl(&["usage", "--by", "day", "--since", "2026-11-30T10:05:00Z", "--until", "2026-11-30T11:55:00Z"]);
    let report = parse_json_line(&output.stdout);
    assert_eq!(report["issues"], serde_json::json!(["corrupt"]), "{report}");
    assert_eq!(report["totals"]["responses"], 1, "{report}");
    assert_eq!(report["totals"]["tokens"]["outputTokens"], 7, "{report}");
    let status = parse_json_line(
        &home.beectl(&["status", "--since", "2026-11-30T10:05:00Z", "--until", "2026-11-30T11:55:00Z"]).stdout,
    );
    assert!(status["issues"].as_array().unwrap().contains(&"corrupt".into()), "{status}");
}

/// One damaged event body never takes the audit down: a key damaged to
/// the same length (`"hook_event_type#:`, malformed JSON) and bit flips
/// anywhere in the stored bodies leave that row out, named as a persistence
/// failure of its session, while `beectl audit` and beed's audit route
/// answer — never an `io` error about malformed JSON.
#[test]
fn a_damaged_event_body_is_left_out_and_named_and_the_audit_still_answers() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    post_tool_events(&home, "s-key", &["toolu_FIRST", "toolu_MARKED", "toolu_LAST"]);
    assert_eq!(daemon.stop(), Some(0));
    let db = events_db(&home);
    let pristine = std::fs::read(&db).unwrap();
    let marked = pristine.windows(12).position(|w| w == b"toolu_MARKED").expect("the event on disk");
    // The damaged row's own key: the nearest `"hook_event_type":` with no
    // other event's tool id between it and the marked one.
    let find_all = |needle: &[u8]| -> Vec<usize> {
        pristine.windows(needle.len()).enumerate().filter(|(_, w)| *w == needle).map(|(at, _)| at).collect()
    };
    let others: Vec<usize> = [find_all(b"toolu_FIRST"), find_all(b"toolu_LAST")].concat();
    let key = find_all(b"\"hook_event_type\":")
        .into_iter()
        .filter(|&at| others.iter().all(|&other| other < at.min(marked) || other > at.max(marked)))
        .min_by_key(|&at| at.abs_diff(marked))
        .expect("the key in the marked body");
    let mut damaged = pristine.clone();
    damaged[key..key + 18].copy_from_slice(b"\"hook_event_type#:");
    std::fs::write(&db, &damaged).unwrap();

    let output = home.beectl(&["audit", "--session", "s-key"]);
    let audit = parse_json_line(&output.stdout);
    assert_ne!(output.status.code(), Some(5), "{audit}");
    assert_eq!(audit["class"], "persistence_unverified", "{audit}");
    let persistence = audit["receipts"].as_array().unwrap().iter().find(|r| r["boundary"] == "persistence").unwrap();
    assert!(persistence["evidence"].as_str().unwrap().contains("fail their checksum"), "{persistence}");
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let (status, _, body) = raw_http(&home.socket(), &get_request("/v1/audit/sessions", "localhost", ""));
    let sessions = String::from_utf8_lossy(&body).into_owned();
    assert_eq!(status, 200, "{sessions}");
    assert!(!sessions.contains("malformed"), "{sessions}");
    assert_eq!(daemon.stop(), Some(0));

    // Bit flips anywhere around the three stored rows: whatever a flip
    // hits, the audit never fails on a row's text (a flip in the page's own
    // bookkeeping may make the store itself unreadable: `corrupt`).
    let bodies = {
        let ids = [find_all(b"toolu_FIRST"), find_all(b"toolu_MARKED"), find_all(b"toolu_LAST")].concat();
        let (low, high) = (ids.iter().min().copied().unwrap_or(0), ids.iter().max().copied().unwrap_or(0));
        (low.saturating_sub(120), high + 40)
    };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for trial in 0..30 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = bodies.0 + (seed % (bodies.1 - bodies.0) as u64) as usize;
        let mut flipped = pristine.clone();
        flipped[at] ^= 1 << (seed >> 61);
        std::fs::write(&db, &flipped).unwrap();
        let output = home.beectl(&["audit", "--session", "s-key"]);
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(!text.contains("malformed JSON"), "trial {trial}, byte {at}: {text}");
    }
}

/// Random bit flips anywhere in the ledger's and the events store's files
/// (every table: records, responses and their packs, aggregates, offsets,
/// events, answers): every view still answers with one JSON document,
/// exit 0 or 5, never a panic, never a text column's error for its message.
#[test]
fn random_bit_flips_over_every_table_never_take_a_view_down() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let projects = home.path().join(".claude/projects/p");
    std::fs::create_dir_all(&projects).unwrap();
    let log: String = (0..6).map(|n| claude_response(&format!("msg_{n}"), 9 + n, 10 + u64::from(n))).collect();
    std::fs::write(projects.join("4c3b2a19-0817-4f6e-9d5c-4b3a29180706.jsonl"), log).unwrap();
    let call = serde_json::json!({"kind": "call", "recordId": "7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7c10",
        "source": "run", "provider": "claude", "startedAtUtc": "2026-11-30T10:10:00.000Z",
        "durationMs": 60_000, "success": true, "model": "claude-sonnet-4-5",
        "tokens": {"inputTokens": 100, "outputTokens": 10}, "quotaSnapshots": []});
    let body = serde_json::json!({"records": [call]}).to_string();
    assert_eq!(raw_http(&home.socket(), &post_request("/v1/ledger/records", "", body.as_bytes())).0, 200);
    post_tool_events(&home, "s-bits", &["toolu_A", "toolu_B"]);
    let ingested = parse_json_line(&home.beectl(&["ingest"]).stdout);
    assert_eq!(daemon.stop(), Some(0));
    let whole = parse_json_line(&home.beectl(&["usage", "--by", "day", "--since", "2026-11-30T00:00:00Z"]).stdout);
    assert_eq!(whole["totals"]["responses"], 6, "the log was read ({ingested}): {whole}");
    let ledger = home.bee_dir().join("usage/ledger-v1/ledger.sqlite3");
    let events = events_db(&home);
    let (ledger_bytes, events_bytes) = (std::fs::read(&ledger).unwrap(), std::fs::read(&events).unwrap());
    let views: [&[&str]; 5] = [
        &["usage", "--by", "day", "--since", "2026-11-30T00:00:00Z", "--until", "2026-12-01T00:00:00Z"],
        &["usage", "--by", "session", "--since", "2026-11-30T09:30:00Z", "--until", "2026-11-30T14:30:00Z"],
        &["quota", "--since", "2026-11-30T00:00:00Z", "--until", "2026-12-01T00:00:00Z"],
        &["audit", "--session", "s-bits"],
        &["events", "recent"],
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for trial in 0..40 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let (path, pristine) = if trial % 2 == 0 { (&ledger, &ledger_bytes) } else { (&events, &events_bytes) };
        // Past the 100-byte header, which only says the file is no database.
        let at = 100 + (seed % (pristine.len() as u64 - 100)) as usize;
        let mut flipped = pristine.clone();
        flipped[at] ^= 1 << (seed >> 61);
        std::fs::write(path, &flipped).unwrap();
        for view in views {
            let output = home.beectl(view);
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            assert!(!stderr.contains("panicked"), "trial {trial}, byte {at}, {view:?}: {stderr}");
            assert!(
                matches!(output.status.code(), Some(0 | 5)),
                "trial {trial}, byte {at}, {view:?}: {:?}",
                output.status
            );
            let text = String::from_utf8_lossy(&output.stdout).into_owned();
            assert!(serde_json::from_str::<serde_json::Value>(text.trim()).is_ok(), "trial {trial}, {view:?}: {text}");
            assert!(
                !text.contains("malformed JSON") && !text.contains("Utf8"),
                "trial {trial}, byte {at}, {view:?}: {text}"
            );
        }
        std::fs::write(path, pristine).unwrap();
    }
}

/// The byte ranges of `index`'s pages in the database file at `db`, as
/// SQLite's `dbstat` table lists them.
fn index_pages(db: &std::path::Path, index: &str) -> Vec<std::ops::Range<usize>> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let size: usize = conn.pragma_query_value(None, "page_size", |row| row.get(0)).unwrap();
    let pages: Vec<usize> = conn
        .prepare("SELECT pageno FROM dbstat WHERE name = ?1")
        .unwrap()
        .query_map([index], |row| row.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    pages.into_iter().map(|page| (page - 1) * size..page * size).collect()
}

/// `beectl audit` (of one session, and of the recent ones) on a damaged
/// events store: `corrupt`, exit 5, and what it says.
fn audit_refused(home: &TestHome, session: &str) -> String {
    let mut said = String::new();
    for args in [&["audit", "--session", session][..], &["audit"][..]] {
        let output = home.beectl(args);
        let answer = parse_json_line(&output.stdout);
        assert_eq!(output.status.code(), Some(5), "{args:?}: {answer}");
        assert_eq!(answer["issues"], serde_json::json!(["corrupt"]), "{args:?}: {answer}");
        said = answer["message"].as_str().unwrap_or_default().to_owned();
    }
    said
}

/// A byte flipped in a session id inside the `event_session` index (which
/// no row's checksum covers): every page still reads, and a read of the
/// session through the index finds none of its events — an audit that
/// believed it would call the session `persistence_unverified`, "nothing
/// stored", with no issue. The integrity check finds the index disagreeing
/// with its table: `corrupt`, the index and its table named, for the audit
/// and for beed, which refuses to start on it; the store stays byte for
/// byte as it was found.
#[test]
fn a_flipped_byte_in_the_session_index_is_corrupt_and_named() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    post_tool_events(&home, "s-index", &["toolu_FIRST", "toolu_SECOND", "toolu_LAST"]);
    assert_eq!(daemon.stop(), Some(0));
    let db = events_db(&home);
    let pristine = std::fs::read(&db).unwrap();
    let at = index_pages(&db, "event_session")
        .into_iter()
        .find_map(|page| pristine[page.clone()].windows(7).position(|w| w == b"s-index").map(|at| page.start + at))
        .expect("the session in its index");
    flip_byte(&db, at as u64 + 4);
    let damaged = std::fs::read(&db).unwrap();

    let said = audit_refused(&home, "s-index");
    assert!(said.contains("index event_session of table event"), "{said}");
    assert_eq!(std::fs::read(&db).unwrap(), damaged, "the audit changed nothing");
    let (code, said) = refused_start(&home);
    assert_eq!(code, Some(5), "{said}");
    assert!(said.contains("corrupt") && said.contains("event_session"), "{said}");
    assert_eq!(std::fs::read(&db).unwrap(), damaged, "beed did not touch the evidence");
}

/// An events store that SQLite cannot read as one — garbage from its first
/// byte, or a sound header and schema page before garbage — is `corrupt`,
/// never `io` (the audit used to answer "database disk image is malformed"
/// as `io`), and beed refuses it, leaving it as it is.
#[test]
fn a_malformed_events_store_is_corrupt_never_io() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    post_tool_events(&home, "s-bad", &["toolu_A", "toolu_B"]);
    assert_eq!(daemon.stop(), Some(0));
    let db = events_db(&home);
    let pristine = std::fs::read(&db).unwrap();
    let page = usize::from(u16::from_be_bytes([pristine[16], pristine[17]]));
    assert!(pristine.len() > 2 * page, "pages past the schema's");
    let noise = |n: usize| (n * 7_919 % 251) as u8;
    let garbage: Vec<u8> = (0..pristine.len()).map(noise).collect();
    let mut schema_only = pristine.clone();
    schema_only[page..].iter_mut().enumerate().for_each(|(n, byte)| *byte = noise(n));
    for (case, damaged) in [("garbage", garbage), ("garbage past the schema page", schema_only)] {
        std::fs::write(&db, &damaged).unwrap();
        let said = audit_refused(&home, "s-bad");
        assert!(!said.is_empty(), "{case}");
        assert_eq!(std::fs::read(&db).unwrap(), damaged, "{case}: the audit changed nothing");
        let (code, said) = refused_start(&home);
        assert_eq!(code, Some(5), "{case}: {said}");
        assert!(said.contains("corrupt"), "{case}: {said}");
        assert_eq!(std::fs::read(&db).unwrap(), damaged, "{case}: beed did not touch the evidence");
    }
}
