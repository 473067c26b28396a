//! No zero for what an agent never records: agents whose records time no
//! turn and keep no usage-limit notice (Qwen Code, OpenCode, pi) are
//! `null` with an issue naming them in `quota`, `status` and `top`, never
//! the zeros that would say they had no turn and hit no limit; a sum over
//! them and agents whose records can say it is `partial`. `beectl agents`
//! shows each agent's newest record by the record's own time, and a first
//! import of old, complete records calls none of them pending, whatever
//! their files' modification times. Real binaries, real SQLite, a temp
//! `BEE_HOME`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The agents written by [`write_quiet_agents`], in the contract's order.
const QUIET_AGENTS: [&str; 3] = ["qwen", "opencode", "pi"];

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../daemon/src/ledger/agents/testdata").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Qwen Code's, OpenCode's and pi's own records of 2026-12-05, at their
/// default places: responses, and nothing that times a turn or notes a
/// limit (their records cannot).
fn write_quiet_agents(home: &TestHome) {
    let at = |relative: &str| home.path().join(relative);
    write_quiet(&at(".qwen/projects/-home-dev-app/chats/qwen-session.jsonl"), &fixture("qwen-0.24.4-tool.jsonl"));
    write_quiet(
        &at(".pi/agent/sessions/--home-dev-app--/2026-12-05T03-22-45_s.jsonl"),
        &fixture("pi-0.73.1-tool-and-continue.jsonl"),
    );
    let db = at(".local/share/opencode/opencode.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let message = json!({"role": "assistant", "providerID": "mock", "modelID": "claude-sonnet-4-5",
        "time": {"created": 1_796_440_939_675_i64, "completed": 1_796_440_940_522_i64},
        "tokens": {"total": 2450, "input": 100, "output": 40, "reasoning": 10, "cache": {"read": 2000, "write": 300}}})
    .to_string();
    rusqlite::Connection::open(&db)
        .and_then(|conn| {
            conn.execute_batch(&format!(
                "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL);
                 CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
                    time_updated INTEGER NOT NULL, data TEXT NOT NULL);
                 INSERT INTO session VALUES ('ses_a', '/home/dev/app');
                 INSERT INTO message VALUES ('m1', 'ses_a', 1796440939675, 1796440940522, '{message}');"
            ))
        })
        .unwrap();
    make_quiet(&db);
}

/// A Claude Code transcript of 2026-12-05: a prompt, its response (a
/// derived turn), then a usage-limit notice (a hit).
fn write_claude_turn_and_hit(home: &TestHome) {
    let session = "6b1c0000-0000-4000-8000-00000000c1a0";
    let prompt = json!({"type": "user", "sessionId": session, "timestamp": "2026-12-05T04:00:00.000Z",
        "message": {"role": "user", "content": "fix it"}});
    let response = json!({"type": "assistant", "sessionId": session, "timestamp": "2026-12-05T04:01:00.000Z",
        "requestId": "req_nr_1", "message": {"id": "msg_nr_1", "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5}}});
    let hit = json!({"type": "assistant", "sessionId": session, "timestamp": "2026-12-05T04:02:00.000Z",
        "isApiErrorMessage": true, "message": {"id": "msg_nr_limit", "model": "<synthetic>",
        "content": [{"type": "text", "text": "Claude AI usage limit reached|1796450000"}],
        "usage": {"input_tokens": 0, "output_tokens": 0}}});
    write_quiet(
        &home.path().join(format!(".claude/projects/-home-dev-app/{session}.jsonl")),
        &[prompt, response, hit].iter().map(|line| format!("{line}\n")).collect::<String>(),
    );
}

fn beectl_json(home: &TestHome, args: &[&str]) -> Value {
    let output = home.beectl(args);
    assert_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    parse_json_line(&output.stdout)
}

fn ingest(home: &TestHome) {
    let ingested = beectl_json(home, &["ingest"]);
    assert!(ingested["summary"]["recordsAppended"].as_u64().unwrap_or(0) > 0, "{ingested}");
}

fn names(value: &Value) -> Vec<&str> {
    value.as_array().unwrap().iter().map(|name| name.as_str().unwrap()).collect()
}

fn issues(report: &Value) -> Vec<&str> {
    names(&report["issues"])
}

/// The quota words of `report` (a `quota` or a `status` answer) for agents
/// that record neither time nor limits: each `null`, with its issues.
fn assert_null_for_the_quiet_agents(report: &Value) {
    for agent in QUIET_AGENTS {
        let row = report["providers"].as_array().unwrap().iter().find(|p| p["provider"] == agent);
        let row = row.unwrap_or_else(|| panic!("{agent} is in the report: {report}"));
        assert!(row["derived"].is_null(), "{agent}: no turn it never records is 0: {row}");
        assert!(row["crossed"].is_null(), "{agent}: no hit it never records is 0: {row}");
        assert!(row["agentTimeMs"].is_null(), "{row}");
        assert_eq!(issues(row), ["time_not_measured", "limits_not_recorded"], "{agent}: {row}");
    }
    assert_eq!(names(&report["notRecorded"]["time"]), QUIET_AGENTS, "{report}");
    assert_eq!(names(&report["notRecorded"]["limits"]), QUIET_AGENTS, "{report}");
}

/// `quota --json` over agents that record neither time nor limits: their
/// turns and hits are `null` and named, never 0, overall and each; beside
/// Claude Code (a turn, a hit), the sums are Claude's and `partial`.
#[test]
fn quota_says_null_and_names_the_agents_that_never_record_time_or_limits() {
    let home = TestHome::new();
    write_quiet_agents(&home);
    ingest(&home);
    let quota = beectl_json(&home, &["quota", "--json", "--since", "2026-11-01"]);
    assert_null_for_the_quiet_agents(&quota);
    assert!(quota["derived"].is_null() && quota["crossed"].is_null(), "{quota}");
    assert!(quota["agentTimeMs"].is_null() && quota["idleMs"].is_null(), "{quota}");
    assert_eq!(issues(&quota), ["time_not_measured", "limits_not_recorded"], "nothing known, nothing partial");
    let table =
        String::from_utf8(home.beectl(&["quota", "--since", "2026-11-01", "--format", "table"]).stdout).unwrap();
    assert!(table.contains("Crossed unknown") && table.contains("crossed unknown"), "{table}");
    assert!(table.contains("Limit hits not recorded by qwen, opencode, pi"), "{table}");
    assert!(!table.contains("rossed 0"), "{table}");

    write_claude_turn_and_hit(&home);
    ingest(&home);
    let mixed = beectl_json(&home, &["quota", "--json", "--since", "2026-11-01"]);
    assert_null_for_the_quiet_agents(&mixed);
    assert_eq!((mixed["crossed"].clone(), mixed["derived"]["turns"].clone()), (json!(1), json!(1)), "{mixed}");
    assert_eq!(issues(&mixed), ["time_not_measured", "limits_not_recorded", "partial"], "{mixed}");
    let claude = mixed["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "claude").unwrap();
    assert_eq!((claude["crossed"].clone(), claude["derived"]["turns"].clone()), (json!(1), json!(1)), "{claude}");
    assert_eq!(issues(claude), ["time_not_measured"], "its hits are known; its time derived, not measured");
    // One of them alone, by name.
    let pi = beectl_json(&home, &["quota", "--json", "--since", "2026-11-01", "--provider", "pi"]);
    assert!(pi["crossed"].is_null() && pi["derived"].is_null(), "{pi}");
    assert_eq!(names(&pi["notRecorded"]["limits"]), ["pi"], "{pi}");
}

/// `status --json` carries the same words: `null` and named, never 0.
#[test]
fn status_says_null_and_names_the_agents_that_never_record_time_or_limits() {
    let home = TestHome::new();
    write_quiet_agents(&home);
    ingest(&home);
    let status = beectl_json(&home, &["status", "--json", "--since", "2026-11-01"]);
    assert_null_for_the_quiet_agents(&status);
    assert!(status["derived"].is_null() && status["crossed"].is_null(), "{status}");
    assert!(issues(&status).contains(&"time_not_measured") && issues(&status).contains(&"limits_not_recorded"));
    write_claude_turn_and_hit(&home);
    ingest(&home);
    let mixed = beectl_json(&home, &["status", "--json", "--since", "2026-11-01"]);
    assert_eq!(mixed["crossed"], 1, "{mixed}");
    assert_eq!(issues(&mixed).iter().filter(|issue| **issue == "partial").count(), 1, "{mixed}");
}

/// A pi session and a Claude Code response of the last minutes: `top`
/// knows Claude's hits (none) and not pi's, whose records keep no limit
/// notice — its JSON says `null` and names pi, its table never says
/// "none" of pi's hits.
#[test]
fn top_never_says_no_hits_of_an_agent_that_cannot_record_them() {
    let home = TestHome::new();
    let now_ms = bee_proto::time::now_unix_ms() - 5 * 60_000;
    let now = bee_proto::time::format_unix_ms(now_ms);
    let pi = [
        json!({"type": "session", "version": 3, "id": "0b2c0000-0000-4000-8000-0000000000e1", "timestamp": now,
            "cwd": "/home/dev/app"}),
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": now, "message": {"role": "assistant",
            "content": [], "provider": "mock", "model": "claude-sonnet-4-5", "usage": {"input": 10, "output": 5,
            "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}, "stopReason": "stop", "timestamp": now_ms,
            "responseId": "msg_top_pi_1"}}),
    ];
    write_quiet(
        &home.path().join(".pi/agent/sessions/--home-dev-app--/now_s.jsonl"),
        &pi.iter().map(|line| format!("{line}\n")).collect::<String>(),
    );
    let claude = json!({"type": "assistant", "sessionId": SESSION, "timestamp": now, "requestId": "req_top_1",
        "message": {"id": "msg_top_1", "model": "claude-sonnet-4-5", "stop_reason": "end_turn", "usage": {
            "input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5}}});
    write_quiet(&home.path().join(format!(".claude/projects/-home-dev-app/{SESSION}.jsonl")), &format!("{claude}\n"));
    ingest(&home);
    let top = beectl_json(&home, &["top", "--json"]);
    assert_eq!(
        top["limitHits"],
        json!([{"agent": "claude", "hits": 0}, {"agent": "pi", "hits": null}]),
        "Claude's records would hold a hit; pi's cannot: {top}"
    );
    assert_eq!(names(&top["notRecorded"]["limits"]), ["pi"], "{top}");
    assert!(issues(&top).contains(&"limits_not_recorded"), "{top}");
    let text = String::from_utf8(home.beectl(&["top"]).stdout).unwrap();
    let hits = text.split("Limit hits (last 24 hours):").nth(1).unwrap_or_default();
    assert!(hits.contains("none from claude"), "{text}");
    assert!(hits.contains("unknown for pi: their records keep no usage-limit notice"), "{text}");
    assert!(!hits.lines().any(|line| line.trim() == "none"), "{text}");
}

/// `beectl agents`: the newest record is the newest record's own time in
/// the ledger — a transcript written (copied) just now whose newest
/// response is of 2026-11-21 shows 2026-11-21 — `null` before the ledger
/// holds any; and each agent says what its records can say.
#[test]
fn agents_shows_the_newest_records_own_time_not_its_files() {
    let home = TestHome::new();
    let line = |message: &str, at: &str| claude_response_line(SESSION, message, &format!("req_{message}"), at, 10, 5);
    let transcript = home.path().join(format!(".claude/projects/-home-dev-app/{SESSION}.jsonl"));
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    // Out of order in the file, as a resumed session's copies can be.
    let body = [line("msg_new", "2026-11-21T09:30:00.000Z"), line("msg_old", "2026-11-20T10:00:00.000Z")].concat();
    std::fs::write(&transcript, body).unwrap();
    write_quiet_agents(&home);
    let row = |listing: &Value, agent: &str| -> Value {
        listing["agents"].as_array().unwrap().iter().find(|row| row["agent"] == agent).unwrap().clone()
    };
    let before = beectl_json(&home, &["agents", "--json"]);
    let claude = row(&before, "claude");
    assert_eq!((claude["files"].clone(), claude["newestRecordUtc"].clone()), (json!(1), Value::Null), "{claude}");
    ingest(&home);
    let listing = beectl_json(&home, &["agents", "--json"]);
    let claude = row(&listing, "claude");
    assert_eq!(claude["newestRecordUtc"], "2026-11-21T09:30:00.000Z", "the record's time, not the file's: {claude}");
    assert_eq!(
        claude["records"],
        json!({"timeSpans": true, "limitNotices": true, "reasoning": false, "cacheWrites": true, "ownCost": true})
    );
    let opencode = row(&listing, "opencode");
    assert_eq!(opencode["newestRecordUtc"], "2026-12-05T03:22:19.675Z", "its message's creation: {opencode}");
    assert_eq!(
        opencode["records"],
        json!({"timeSpans": false, "limitNotices": false, "reasoning": true, "cacheWrites": true, "ownCost": true})
    );
    for agent in QUIET_AGENTS {
        let row = row(&listing, agent);
        let newest = row["newestRecordUtc"].as_str().unwrap_or_else(|| panic!("{row}"));
        assert!(newest.starts_with("2026-12-05T03:2"), "{agent}: the fixture's own time, not today's: {row}");
    }
    assert!(row(&listing, "codex")["newestRecordUtc"].is_null(), "no record, no time");
}

/// A first import of Claude Code transcripts copied today (modified now)
/// whose responses were written weeks ago, each session's last one
/// without its stop reason (as a streaming write ends): none is "still
/// being written". A response written a moment ago without its stop
/// reason is, whatever its file's time.
#[test]
fn a_first_import_of_old_complete_records_calls_none_pending() {
    let home = TestHome::new();
    let dir = home.path().join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&dir).unwrap();
    let sessions: Vec<String> = (0..4).map(|n| format!("7c2d0000-0000-4000-8000-0000000000{n:02}")).collect();
    for (n, session) in sessions.iter().enumerate() {
        let at = |minute: usize| format!("2026-11-{:02}T10:{minute:02}:00.000Z", 10 + n);
        let lines = [
            claude_response_line(session, &format!("msg_{n}_a"), &format!("req_{n}_a"), &at(1), 10, 5),
            claude_response_line(session, &format!("msg_{n}_b"), &format!("req_{n}_b"), &at(2), 10, 7),
        ];
        // Copied now: the files' modification time is this moment.
        std::fs::write(dir.join(format!("{session}.jsonl")), lines.concat()).unwrap();
    }
    ingest(&home);
    let usage = beectl_json(&home, &["usage", "--by", "session", "--since", "2026-11-01"]);
    assert_eq!(usage["totals"]["responses"], 8, "{usage}");
    assert_eq!(usage["totals"]["pendingResponses"], 0, "weeks-old records are over: {usage}");
    assert!(!issues(&usage).contains(&"pending"), "{usage}");

    // Being written now: the last write, a moment ago, without its stop reason.
    let now = bee_proto::time::now_rfc3339();
    let live = "7c2d0000-0000-4000-8000-0000000000ff";
    let path: &Path = &dir.join(format!("{live}.jsonl"));
    std::fs::write(path, claude_response_line(live, "msg_live", "req_live", &now, 10, 3)).unwrap();
    make_quiet(path);
    ingest(&home);
    let usage = beectl_json(&home, &["usage", "--by", "session", "--since", "2026-11-01"]);
    assert_eq!(usage["totals"]["pendingResponses"], 1, "a quiet file does not make it final: {usage}");
    assert!(issues(&usage).contains(&"pending"), "{usage}");
}
