//! Incremental ingestion of Claude transcripts and Codex rollouts into the
//! ledger: idempotent, offset-based, safe against truncation, rotation and
//! half-written lines, bounded in memory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const SESSION: &str = "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d";
const CODEX: &str = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

fn assistant(message: &str, request: &str, input: u64, output: u64, minute: u32) -> String {
    claude_response_line(SESSION, message, request, &format!("2026-11-30T10:{minute:02}:00.000Z"), input, output)
}

fn user(minute: u32, text: &str) -> String {
    json!({"type": "user", "sessionId": SESSION, "timestamp": format!("2026-11-30T10:{minute:02}:00.000Z"),
           "message": {"role": "user", "content": text}})
    .to_string()
        + "\n"
}

/// A home whose `~/.claude/projects` holds one transcript.
fn home_with_transcript(lines: &[String]) -> (TestHome, PathBuf) {
    let home = TestHome::new();
    let dir = home.path().join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(&path, lines.concat()).unwrap();
    make_quiet(&path);
    (home, path)
}

fn ingest(home: &TestHome) -> Value {
    let output = home.beectl(&["ingest"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    parse_json_line(&output.stdout)
}

fn usage(home: &TestHome) -> Value {
    parse_json_line(&home.beectl(&["usage", "--by", "session"]).stdout)
}

#[test]
fn twice_is_once_appends_are_read_alone_truncation_and_rotation_count_nothing_twice() {
    let lines = vec![
        user(0, "fix the flaky test"),
        assistant("msg_A", "req_A", 10, 5, 1),
        assistant("msg_A", "req_A", 10, 42, 1), // streaming: the fuller write wins
        assistant("msg_B", "req_B", 3, 7, 2),
    ];
    let (home, path) = home_with_transcript(&lines);
    let first = ingest(&home);
    assert_eq!(first["summary"]["recordsAppended"], 3, "two responses and the turn they answered: {first}");
    let after_first = usage(&home);
    assert_eq!(after_first["rows"][0]["responses"], 2);
    assert_eq!(after_first["rows"][0]["tokens"]["outputTokens"], 49);
    // The same logs again: nothing read, the same ledger.
    let second = ingest(&home);
    assert_eq!((second["summary"]["filesRead"].clone(), second["summary"]["bytesRead"].clone()), (json!(0), json!(0)));
    assert_eq!(usage(&home)["rows"], after_first["rows"]);

    // Appended lines, and a half-written one: only the complete new lines count.
    let mut log = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    let appended = assistant("msg_C", "req_C", 1, 1, 3);
    log.write_all(appended.as_bytes()).unwrap();
    let half = assistant("msg_D", "req_D", 2, 2, 4);
    log.write_all(&half.as_bytes()[..40]).unwrap();
    drop(log);
    make_quiet(&path);
    let third = ingest(&home);
    assert_eq!(third["summary"]["bytesRead"], appended.len(), "only the new complete line: {third}");
    assert_eq!(usage(&home)["rows"][0]["responses"], 3);
    let mut log = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    log.write_all(&half.as_bytes()[40..]).unwrap();
    drop(log);
    make_quiet(&path);
    ingest(&home);
    assert_eq!(usage(&home)["rows"][0]["responses"], 4);

    // Truncated (rewritten shorter): detected, read again, nothing counted twice.
    std::fs::write(&path, lines[..2].concat()).unwrap();
    make_quiet(&path);
    let truncated = ingest(&home);
    assert_eq!(truncated["summary"]["restartedFiles"], 1, "{truncated}");
    assert_eq!(usage(&home)["rows"][0]["responses"], 4);
    // Rotated: another file at the same path, with an old line and a new one.
    let moved = path.with_extension("old");
    std::fs::rename(&path, &moved).unwrap();
    std::fs::write(&path, [lines[1].clone(), assistant("msg_E", "req_E", 5, 5, 5)].concat()).unwrap();
    make_quiet(&path);
    ingest(&home);
    let rows = usage(&home);
    assert_eq!(rows["rows"][0]["responses"], 5, "{rows}");
}

/// A response being streamed now: its last write, without its stop reason
/// and written a moment ago, is counted and said to be pending — whether
/// or not its file is quiet, since that is the record's to say — until the
/// write with its stop reason arrives.
#[test]
fn a_streaming_response_waits_until_its_record_says_it_is_over() {
    // Built first: "a moment ago" must not include the binaries' build.
    bin("beectl");
    let now = bee_proto::time::now_rfc3339();
    let streaming = |output: u64, stop: Option<&str>| {
        let mut line: Value =
            serde_json::from_str(&claude_response_line(SESSION, "msg_A", "req_A", &now, 10, output)).unwrap();
        if let Some(stop) = stop {
            line["message"]["stop_reason"] = stop.into();
        }
        line.to_string() + "\n"
    };
    let (home, path) = home_with_transcript(&[user(0, "go"), streaming(5, None)]);
    ingest(&home);
    let pending = usage(&home);
    assert_eq!(
        (pending["rows"][0]["tokens"]["outputTokens"].clone(), pending["rows"][0]["pendingResponses"].clone()),
        (json!(5), json!(1)),
        "{pending}"
    );
    assert_eq!((pending["pendingResponses"].clone(), pending["issues"].clone()), (json!(1), json!(["pending"])));
    // The stream's final write arrives, its stop reason with it.
    let mut log = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    log.write_all(streaming(99, Some("end_turn")).as_bytes()).unwrap();
    drop(log);
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(SystemTime::now()).unwrap();
    ingest(&home);
    let rows = usage(&home);
    assert_eq!(
        (rows["rows"][0]["responses"].clone(), rows["rows"][0]["tokens"]["outputTokens"].clone()),
        (json!(1), json!(99))
    );
    assert_eq!((rows["pendingResponses"].clone(), rows["issues"].clone()), (json!(0), json!([])), "{rows}");
}

#[test]
fn hostile_lines_are_counted_not_fatal() {
    let huge_number = r#"{"sessionId":"5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d","timestamp":"2026-11-30T10:09:00.000Z","message":{"id":"m","usage":{"input_tokens":1e400}}}"#;
    let lines = vec![
        assistant("msg_A", "req_A", 1, 1, 1),
        "not json but has \"usage\" in it\n".to_owned(),
        String::from_utf8_lossy(b"\xff\xfe\"usage\"\x00\x01\n").into_owned(),
        format!("{huge_number}\n"),
        r#"{"sessionId":"5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d","message":{"usage":{}}}"#.to_owned() + "\n",
        r#"{"type":"assistant","timestamp":"not a time","sessionId":"x","message":{"usage":{}}}"#.to_owned() + "\n",
        assistant("msg_B", "req_B", 1, 1, 2),
    ];
    let (home, _) = home_with_transcript(&lines);
    let summary = ingest(&home);
    assert_eq!(summary["summary"]["unparseableLines"], 4, "{summary}");
    assert_eq!(usage(&home)["rows"][0]["responses"], 2);
}

#[test]
fn codex_rollouts_give_calls_snapshots_and_limits() {
    let home = TestHome::new();
    let dir = home.path().join(".codex/sessions/2026/11/30");
    std::fs::create_dir_all(&dir).unwrap();
    let line = |time: &str, kind: &str, payload: Value| {
        json!({"timestamp": time, "type": kind, "payload": payload}).to_string() + "\n"
    };
    let usage_of = |input: u64, output: u64| json!({"input_tokens": input, "cached_input_tokens": 0, "output_tokens": output, "reasoning_output_tokens": 0, "total_tokens": input + output});
    let info = json!({"total_token_usage": usage_of(1000, 50), "last_token_usage": usage_of(1000, 50), "model_context_window": 272000});
    let rollout = [
        line("2026-11-30T09:00:00.000Z", "session_meta", json!({"id": CODEX, "cwd": "/home/dev/app"})),
        line("2026-11-30T09:00:01.000Z", "turn_context", json!({"model": "gpt-5-codex"})),
        line(
            "2026-11-30T09:01:00.000Z",
            "event_msg",
            json!({"type": "token_count", "info": info,
            "rate_limits": {"primary": {"used_percent": 12.5, "window_minutes": 300, "resets_at": 1796040000u64}}}),
        ),
        line(
            "2026-11-30T09:01:00.000Z",
            "event_msg",
            json!({"type": "token_count", "info": info,
            "rate_limits": {"secondary": {"used_percent": 3.0, "window_minutes": 10080, "resets_in_seconds": 600}}}),
        ),
        line(
            "2026-11-30T09:02:01.000Z",
            "event_msg",
            json!({"type": "error", "message": "You've hit your usage limit."}),
        ),
    ]
    .concat();
    let path = dir.join(format!("rollout-2026-11-30T09-00-00-{CODEX}.jsonl"));
    std::fs::write(&path, rollout).unwrap();
    ingest(&home);
    let by_model = parse_json_line(&home.beectl(&["usage", "--by", "model", "--since", "2026-11-30T00:00:00Z"]).stdout);
    assert_eq!(
        by_model["rows"],
        json!([{"key": "gpt-5-codex", "agent": "codex", "firstAtUtc": "2026-11-30T09:01:00.000Z",
        "lastAtUtc": "2026-11-30T09:01:00.000Z", "modelIds": ["gpt-5-codex"], "models": ["gpt-5-codex"],
        "responses": 1, "tokens": {
        "inputTokens": 1000, "cachedInputTokens": null, "cacheCreationInputTokens": null, "cacheReadInputTokens": 0,
        "outputTokens": 50, "reasoningOutputTokens": 0, "totalTokens": 1050},
        "partialParts": 0, "pendingResponses": 0, "producerCountedCalls": 0,
        // gpt-5-codex at $1.25 and $10 per million input and output tokens.
        // Codex reports no cost: its session is one the reported cost leaves out;
        // nor does it write one of its own.
        "reportedCostUsd": null, "agentCostUsd": null, "estimatedCostUsd": 0.00175, "unpricedParts": 0,
        "sessionsWithoutCost": 1}]),
        "the repeated token_count counts once"
    );
    let quota = parse_json_line(
        &home.beectl(&["quota", "--since", "2026-11-30T00:00:00Z", "--until", "2026-11-30T23:00:00Z"]).stdout,
    );
    assert_eq!(quota["crossed"], 1);
    assert_eq!(quota["callsWithoutDuration"], 0, "responses are token evidence, not calls of unknown duration");
    let windows = quota["providers"][0]["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 2, "{quota}");
    let five = windows.iter().find(|w| w["window"] == "five_hour").unwrap();
    assert_eq!(
        (five["peakPercent"].clone(), five["exhausted"].clone()),
        (json!(12.5), Value::Null),
        "a notice that named no window, in a window at 12.5 %: which window hit is unknown"
    );
}

#[test]
fn beed_ingests_by_itself_and_beectl_ingest_asks_it() {
    let (home, _) = home_with_transcript(&[assistant("msg_A", "req_A", 1, 1, 1)]);
    let mut command = home.command(bin("beed"));
    command.args(["--ingest-every", "1"]);
    let daemon = Daemon::start(&home, command);
    assert!(eventually(Duration::from_secs(15), || usage(&home)["rows"][0]["responses"] == 1));
    let through = ingest(&home);
    assert_eq!(through["by"], "beed");
    drop(daemon);
}

#[test]
fn a_100_mb_set_is_ingested_with_bounded_memory() {
    let home = TestHome::new();
    let dir = home.path().join(".claude/projects/-home-dev-big");
    std::fs::create_dir_all(&dir).unwrap();
    // Ten files of about 10 MB: responses with sizeable content, tool results.
    let filler = "x".repeat(2_000);
    let mut expected = 0u64;
    for file in 0..10 {
        let mut body = String::with_capacity(11 << 20);
        let mut n = 0;
        while body.len() < 10 << 20 {
            body.push_str(
                &json!({"type": "user", "sessionId": SESSION, "timestamp": "2026-11-30T10:00:00.000Z",
                "message": {"role": "user", "content": [{"type": "tool_result", "content": filler}]}})
                .to_string(),
            );
            body.push('\n');
            body.push_str(&assistant(&format!("msg_{file}_{n}"), &format!("req_{file}_{n}"), 1, 1, 1));
            n += 1;
        }
        expected += n;
        let path = dir.join(format!("{file}.jsonl"));
        std::fs::write(&path, body).unwrap();
        make_quiet(&path);
    }
    let output = home
        .command("/usr/bin/time")
        .args(["-f", "max-rss-kb %M"])
        .arg(bin("beectl"))
        .arg("ingest")
        .output()
        .expect("GNU time");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let rss_kb: u64 = stderr.lines().find_map(|l| l.strip_prefix("max-rss-kb ")).unwrap().trim().parse().unwrap();
    // The first pass stays under 100 MiB (the page cache is 64 MiB of it).
    assert!(rss_kb < 100 * 1024, "ingesting 100 MB took {rss_kb} KiB of memory");
    assert_eq!(parse_json_line(&output.stdout)["summary"]["recordsAppended"], expected);
}

#[test]
fn beed_waits_for_an_offline_ingestion_instead_of_exiting() {
    let home = TestHome::new();
    // An offline `beectl ingest` holds the ledger's writer lock.
    let ledger = home.bee_dir().join("usage/ledger-v1");
    std::fs::create_dir_all(&ledger).unwrap();
    let lock = std::fs::File::create(ledger.join("writer.lock")).unwrap();
    lock.lock().unwrap();
    let mut command = home.command(bin("beed"));
    command.args(["--ingest-every", "0"]);
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1_500));
        drop(lock);
    });
    // Daemon::start panics if beed exits before it is ready.
    let daemon = Daemon::start(&home, command);
    releaser.join().unwrap();
    assert!(daemon.log().contains("an offline ingestion holds the ledger; waiting"), "{}", daemon.log());
    assert_eq!(ingest(&home)["by"], "beed", "beed now owns the ledger");
    drop(daemon);
}

fn quiet_transcript(dir: &Path, session: &str, lines: &[String]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("{session}.jsonl"));
    std::fs::write(&path, lines.concat()).unwrap();
    make_quiet(&path);
    path
}

#[test]
fn writes_of_one_response_apart_in_the_file_merge_and_copies_in_other_sessions_count_once() {
    let home = TestHome::new();
    let projects = home.path().join(".claude/projects/-home-dev-app");
    // A, B, A, C: the fuller write of A comes after B.
    let lines = [
        assistant("msg_A", "req_A", 10, 112, 1),
        assistant("msg_B", "req_B", 3, 7, 2),
        assistant("msg_A", "req_A", 10, 607, 1),
        assistant("msg_C", "req_C", 1, 1, 3),
    ];
    quiet_transcript(&projects, SESSION, &lines);
    // A resumed session's file copies A and B (same message and request ids).
    let resumed = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d";
    let copies: Vec<String> = lines[..3].iter().map(|line| line.replace(SESSION, resumed)).collect();
    quiet_transcript(&projects, resumed, &copies);
    ingest(&home);
    let report = usage(&home);
    let rows = report["rows"].as_array().unwrap();
    let responses: u64 = rows.iter().map(|r| r["responses"].as_u64().unwrap()).sum();
    let output: u64 = rows.iter().map(|r| r["tokens"]["outputTokens"].as_u64().unwrap_or(0)).sum();
    assert_eq!((responses, output), (3, 607 + 7 + 1), "{report}");
    // Each response belongs to the session that asked for it; the resumed
    // one holds copies of two, counted apart, with no tokens of its own.
    let row = |session: &str| rows.iter().find(|r| r["key"] == session).unwrap();
    assert_eq!((row(SESSION)["responses"].clone(), row(SESSION).get("copiedResponses")), (json!(3), None), "{report}");
    let copies = row(resumed);
    assert_eq!((copies["responses"].clone(), copies["copiedResponses"].clone()), (json!(0), json!(2)), "{report}");
    assert!(copies["tokens"]["totalTokens"].is_null(), "{report}");
    assert_eq!(report["totals"]["copiedResponses"], 2, "{report}");
}

/// A log of responses without a prompt line (nothing to time a turn by)
/// and no producer: the agent worked that day, so its time is unknown —
/// an issue, not a measured zero — while a day without responses is idle.
/// `quota` takes the same day words as `usage`.
#[test]
fn responses_nothing_timed_leave_the_time_unknown_not_zero() {
    let (home, _) =
        home_with_transcript(&[assistant("msg_A", "req_A", 10, 20, 1), assistant("msg_B", "req_B", 3, 7, 2)]);
    assert_eq!(ingest(&home)["summary"]["recordsAppended"], 2);
    let quota = |day: &str| parse_json_line(&home.beectl(&["quota", "--since", day, "--until", day]).stdout);
    let worked = quota("2026-11-30");
    assert_eq!(
        (&worked["sinceUtc"], &worked["untilUtc"]),
        (&json!("2026-11-30T00:00:00.000Z"), &json!("2026-12-01T00:00:00.000Z")),
        "a day counts whole: {worked}"
    );
    assert_eq!((&worked["agentTimeMs"], &worked["derived"]["turns"]), (&Value::Null, &json!(0)), "{worked}");
    assert_eq!((&worked["usedMs"], &worked["idleMs"]), (&Value::Null, &Value::Null), "{worked}");
    assert_eq!(worked["issues"], json!(["time_not_measured"]), "{worked}");
    let status = parse_json_line(&home.beectl(&["status", "--since", "2026-11-30", "--until", "2026-11-30"]).stdout);
    assert_eq!(status["issues"], json!(["time_not_measured"]), "{status}");
    let idle = quota("2026-11-29");
    assert_eq!((&idle["idleMs"], &idle["issues"]), (&json!(86_400_000), &json!([])), "{idle}");
}

#[test]
fn every_claude_config_dir_is_read() {
    let home = TestHome::new();
    let (first, second) = (home.path().join("claude-a"), home.path().join("claude-b"));
    quiet_transcript(&first.join("projects/p"), SESSION, &[assistant("msg_A", "req_A", 1, 1, 1)]);
    quiet_transcript(
        &second.join("projects/q"),
        "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a",
        &[assistant("msg_B", "req_B", 1, 1, 2)],
    );
    let list = format!("{},{}", first.display(), second.display());
    let output = home.command(bin("beectl")).arg("ingest").env("CLAUDE_CONFIG_DIR", &list).output().unwrap();
    assert_eq!(parse_json_line(&output.stdout)["summary"]["filesRead"], 2);
    assert_eq!(usage(&home)["rows"][0]["responses"], 2);
}

#[test]
fn two_ingestions_at_once_are_one_pass() {
    let home = TestHome::new();
    let projects = home.path().join(".claude/projects/-home-dev-app");
    let filler = "x".repeat(4_000);
    let mut lines = Vec::new();
    for n in 0..6_000 {
        lines.push(user(0, &filler));
        lines.push(assistant(&format!("msg_{n}"), &format!("req_{n}"), 1, 1, 1));
    }
    quiet_transcript(&projects, SESSION, &lines);
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let callers: Vec<_> = (0..2)
        .map(|_| home.command(bin("beectl")).arg("ingest").stdout(std::process::Stdio::piped()).spawn().unwrap())
        .collect();
    let answers: Vec<Value> =
        callers.into_iter().map(|c| parse_json_line(&c.wait_with_output().unwrap().stdout)).collect();
    // Either the second caller waited for the running pass and got its
    // summary, or it came after and found nothing new: never a second read.
    let nothing_new = |a: &Value| a["summary"]["bytesRead"] == 0 && a["summary"]["recordsAppended"] == 0;
    assert!(answers[0] == answers[1] || answers.iter().any(nothing_new), "{answers:?}");
    assert!(answers.iter().any(|a| a["summary"]["bytesRead"].as_u64() > Some(0)), "{answers:?}");
    assert_eq!(usage(&home)["rows"][0]["responses"], 6_000);
    drop(daemon);
}
