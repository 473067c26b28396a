//! `beectl budget --measured` on realistic Claude Code transcripts and Codex
//! rollout logs, hostile lines included: every line is accounted for.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};

const CLAUDE_SESSION: &str = "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d";
const CODEX_SESSION: &str = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

fn claude_assistant(message_id: &str, request: Option<&str>, model: &str, usage: Value, extra: Value) -> String {
    let mut line = json!({
        "parentUuid": "b1c2d3e4-0000-4000-8000-000000000001", "isSidechain": false, "userType": "external",
        "cwd": "/home/dev/app", "sessionId": CLAUDE_SESSION, "version": "2.0.14", "gitBranch": "main",
        "type": "assistant", "uuid": uuid::Uuid::new_v4().to_string(), "timestamp": "2026-11-30T10:00:05.000Z",
        "message": {"id": message_id, "type": "message", "role": "assistant", "model": model,
                    "content": [{"type": "text", "text": "Done."}], "stop_reason": null, "usage": usage}
    });
    if let Some(request) = request {
        line["requestId"] = json!(request);
    }
    for (key, value) in extra.as_object().unwrap() {
        line[key] = value.clone();
    }
    line.to_string()
}

fn claude_transcript() -> Vec<u8> {
    let usage = |input: Value, creation: Value, read: Value, output: Value| {
        json!({"input_tokens": input, "cache_creation_input_tokens": creation, "cache_read_input_tokens": read,
               "output_tokens": output, "service_tier": "standard"})
    };
    let sidechain = claude_assistant(
        "msg_01C",
        None,
        "claude-haiku-4-5",
        json!({"input_tokens": 1, "output_tokens": 2}),
        json!({"isSidechain": true}),
    );
    let lines = [
        json!({"type": "user", "sessionId": CLAUDE_SESSION, "timestamp": "2026-11-30T10:00:00.000Z",
               "message": {"role": "user", "content": "fix the flaky test"}})
        .to_string(),
        // Streaming: the same request written twice, the second more complete.
        claude_assistant(
            "msg_01A",
            Some("req_011A"),
            "claude-sonnet-4-5",
            usage(json!(10), json!(100), json!(1000), json!(5)),
            json!({}),
        ),
        claude_assistant(
            "msg_01A",
            Some("req_011A"),
            "claude-sonnet-4-5",
            usage(json!(10), json!(100), json!(1000), json!(42)),
            json!({}),
        ),
        claude_assistant(
            "msg_01B",
            Some("req_011B"),
            "claude-opus-4-1",
            usage(json!(3), json!(0), json!(1200), json!(7)),
            json!({}),
        ),
        // A sidechain replay reuses the message id and has no request id.
        sidechain.clone(),
        sidechain,
        json!({"type": "summary", "summary": "Fixing tests", "leafUuid": "b1c2d3e4-0000-4000-8000-000000000009"})
            .to_string(),
        claude_assistant(
            "msg_01Z",
            Some("req_011Z"),
            "claude-sonnet-4-5",
            usage(json!(999), json!(0), json!(0), json!(999)),
            json!({"sessionId": "ffffffff-ffff-4fff-8fff-ffffffffffff"}),
        ),
        claude_assistant(
            "msg_01E",
            None,
            "<synthetic>",
            json!({"input_tokens": 0, "output_tokens": 0}),
            json!({"isApiErrorMessage": true, "message": {"id": "msg_01E", "role": "assistant", "model": "<synthetic>",
                   "content": [{"type": "text", "text": "Claude AI usage limit reached|1796036000"}],
                   "usage": {"input_tokens": 0, "output_tokens": 0}}}),
        ),
        "not json {".to_owned(),
        String::from_utf8_lossy(b"\xff\xfe\x00\x01binary").into_owned(),
        claude_assistant(
            "msg_01D",
            Some("req_011D"),
            "claude-sonnet-4-5",
            json!({"input_tokens": 2, "output_tokens": 1e30}),
            json!({}),
        ),
    ];
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    // A raw binary line, not even lossy text.
    bytes.extend_from_slice(b"\x00\x9f\x92\x96\n");
    bytes
}

fn codex_rollout() -> Vec<u8> {
    let usage = |input: u64, cached: u64, output: u64, reasoning: u64| {
        json!({"input_tokens": input, "cached_input_tokens": cached, "output_tokens": output,
               "reasoning_output_tokens": reasoning, "total_tokens": input + output})
    };
    let line = |time: &str, kind: &str, payload: Value| {
        json!({"timestamp": time, "type": kind, "payload": payload}).to_string()
    };
    let first = json!({"total_token_usage": usage(1000, 200, 50, 10), "last_token_usage": usage(1000, 200, 50, 10), "model_context_window": 272000});
    let lines = [
        line(
            "2026-11-30T09:00:00.000Z",
            "session_meta",
            json!({"id": CODEX_SESSION, "timestamp": "2026-11-30T09:00:00.000Z", "cwd": "/home/dev/app", "originator": "codex_cli_rs", "cli_version": "0.46.0"}),
        ),
        line(
            "2026-11-30T09:00:01.000Z",
            "turn_context",
            json!({"cwd": "/home/dev/app", "approval_policy": "on-request", "model": "gpt-5-codex"}),
        ),
        line(
            "2026-11-30T09:00:02.000Z",
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add a test"}]}),
        ),
        line(
            "2026-11-30T09:00:03.000Z",
            "event_msg",
            json!({"type": "token_count", "info": null, "rate_limits": null}),
        ),
        line(
            "2026-11-30T09:01:00.000Z",
            "event_msg",
            json!({"type": "token_count", "info": first,
            "rate_limits": {"primary": {"used_percent": 12.5, "window_minutes": 300, "resets_at": 1796040000u64},
                            "secondary": {"used_percent": 3.0, "window_minutes": 10080, "resets_in_seconds": 600}}}),
        ),
        // The same token_count again, for another rate-limit bucket.
        line(
            "2026-11-30T09:01:00.000Z",
            "event_msg",
            json!({"type": "token_count", "info": first,
            "rate_limits": {"primary": {"used_percent": 40.0, "window_minutes": 60}}}),
        ),
        line(
            "2026-11-30T09:02:00.000Z",
            "event_msg",
            json!({"type": "token_count",
            "info": {"total_token_usage": usage(2500, 1200, 80, 20), "last_token_usage": usage(1500, 1000, 30, 10), "model_context_window": 272000},
            "rate_limits": {"primary": {"used_percent": 100.0, "window_minutes": 300, "resets_at": 1796040000u64}}}),
        ),
        line(
            "2026-11-30T09:02:01.000Z",
            "event_msg",
            json!({"type": "error", "message": "You've hit your usage limit. Try again later."}),
        ),
        // Codex's line about its own failure that is no limit hit: an
        // error line, never a response.
        line(
            "2026-11-30T09:02:02.000Z",
            "event_msg",
            json!({"type": "error", "message": "stream disconnected before completion: Internal server error"}),
        ),
    ];
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    bytes.extend_from_slice(
        br#"{"timestamp":"2026-11-30T09:05:00.000Z","type":"event_msg","payload":{"type":"token_co"#,
    );
    bytes
}

fn budget(home: &TestHome, harness: &str, session: &str, log: &str) -> (i32, Value) {
    let output = home.beectl(&["budget", "--measured", "--harness", harness, "--session", session, "--log", log]);
    (output.status.code().unwrap(), parse_json_line(&output.stdout))
}

#[test]
fn claude_transcript_counters_dedup_limits_and_every_line_accounted() {
    let home = TestHome::new();
    let log = home.file("transcript.jsonl", &claude_transcript());
    let (code, value) = budget(&home, "claude", CLAUDE_SESSION, log.to_str().unwrap());
    assert_eq!(code, 0);
    assert_json_eq(
        &value,
        &json!({
            "schemaVersion": 1, "status": "complete", "errorCode": null, "harness": "claude",
            "session": CLAUDE_SESSION, "source": "provider_reported_counters",
            "lines": {"read": 13, "matchedSession": 8, "otherSession": 2, "unparseable": 3, "errorLines": 0},
            "response": {
                "responses": 4,
                "counters": {"inputTokens": 16, "cachedInputTokens": null, "cacheCreationInputTokens": 100,
                             "cacheReadInputTokens": 2200, "outputTokens": 51, "reasoningOutputTokens": null, "totalTokens": null},
                "models": ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"]
            },
            "history": {"totalCounters": null, "modelContextWindow": null, "lastContextTokens": 2},
            "rateLimits": [],
            "limits": [{"line": 9, "observedAtUtc": "2026-11-30T10:00:05.000Z", "resetsAtUtc": "2026-11-30T10:53:20.000Z", "detection": "text"}],
            "issues": [
                {"code": "unparseable_line", "line": 10},
                {"code": "unparseable_line", "line": 11},
                {"code": "invalid_counter", "line": 12},
                {"code": "unparseable_line", "line": 13},
                // The sidechain's response and the one with an invalid counter
                // lack counters Claude reports: the sums above are lower bounds.
                {"code": "partial", "line": 5},
                {"code": "partial", "line": 12}
            ],
            "money": null
        }),
    );
}

#[test]
fn codex_rollout_streams_windows_and_a_truncated_last_line() {
    let home = TestHome::new();
    let log = home.file("rollout-2026-11-30T09-00-00.jsonl", &codex_rollout());
    let (code, value) = budget(&home, "codex", CODEX_SESSION, log.to_str().unwrap());
    assert_eq!(code, 0);
    let counters = |input: u64, cached: u64, output: u64, reasoning: u64| {
        json!({"inputTokens": input, "cachedInputTokens": cached, "cacheCreationInputTokens": null,
               "cacheReadInputTokens": null, "outputTokens": output, "reasoningOutputTokens": reasoning, "totalTokens": input + output})
    };
    assert_json_eq(
        &value,
        &json!({
            "schemaVersion": 1, "status": "complete", "errorCode": null, "harness": "codex",
            "session": CODEX_SESSION, "source": "provider_reported_counters",
            "lines": {"read": 10, "matchedSession": 9, "otherSession": 0, "unparseable": 1, "errorLines": 1},
            "response": {"responses": 2, "counters": counters(2500, 1200, 80, 20), "models": ["gpt-5-codex"]},
            "history": {"totalCounters": counters(2500, 1200, 80, 20), "modelContextWindow": 272000, "lastContextTokens": null},
            "rateLimits": [
                {"line": 5, "observedAtUtc": "2026-11-30T09:01:00.000Z", "window": "five_hour", "windowMinutes": 300,
                 "usedPercent": 12.5, "resetsAtUtc": "2026-11-30T12:00:00.000Z"},
                {"line": 5, "observedAtUtc": "2026-11-30T09:01:00.000Z", "window": "weekly", "windowMinutes": 10080,
                 "usedPercent": 3.0, "resetsAtUtc": "2026-11-30T09:11:00.000Z"},
                {"line": 6, "observedAtUtc": "2026-11-30T09:01:00.000Z", "window": "other", "windowMinutes": 60,
                 "usedPercent": 40.0, "resetsAtUtc": null},
                {"line": 7, "observedAtUtc": "2026-11-30T09:02:00.000Z", "window": "five_hour", "windowMinutes": 300,
                 "usedPercent": 100.0, "resetsAtUtc": "2026-11-30T12:00:00.000Z"}
            ],
            "limits": [
                {"line": 7, "observedAtUtc": "2026-11-30T09:02:00.000Z", "resetsAtUtc": "2026-11-30T12:00:00.000Z", "detection": "structured"},
                {"line": 8, "observedAtUtc": "2026-11-30T09:02:01.000Z", "resetsAtUtc": null, "detection": "text"}
            ],
            "issues": [{"code": "truncated_last_line", "line": 10}, {"code": "unparseable_line", "line": 10}],
            "money": null
        }),
    );
}

#[test]
fn another_session_is_never_guessed() {
    let home = TestHome::new();
    let log = home.file("transcript.jsonl", &claude_transcript());
    let (code, value) = budget(&home, "claude", "11111111-2222-4333-8444-555555555555", log.to_str().unwrap());
    assert_eq!(code, 5);
    assert_eq!(value["status"], "incomplete");
    assert_eq!(value["issues"][0], json!({"code": "no_matching_session", "line": null}));
    assert_eq!(value["response"]["counters"], Value::Null);
    // A Claude transcript read as a Codex log matches nothing either.
    let (code, value) = budget(&home, "codex", CLAUDE_SESSION, log.to_str().unwrap());
    assert_eq!((code, value["lines"]["matchedSession"].clone()), (5, json!(0)));
}

#[test]
fn log_path_rules_and_invalid_usage() {
    let home = TestHome::new();
    let log = home.file("transcript.jsonl", &claude_transcript());
    let link = home.path().join("link.jsonl");
    std::os::unix::fs::symlink(&log, &link).unwrap();
    let cases = [
        ("transcript.jsonl", "path_not_absolute"),
        (link.to_str().unwrap(), "path_link"),
        (home.path().to_str().unwrap(), "not_regular_file"),
        ("/nonexistent/log.jsonl", "missing"),
    ];
    for (path, code) in cases {
        let (exit, value) = budget(&home, "claude", CLAUDE_SESSION, path);
        assert_eq!((exit, value["errorCode"].clone()), (5, json!(code)), "{path}");
        assert!(value["response"].is_null() && value["lines"].is_null());
    }
    let log = log.to_str().unwrap();
    for args in [
        vec!["budget", "--harness", "claude", "--session", CLAUDE_SESSION, "--log", log],
        vec!["budget", "--measured", "--session", CLAUDE_SESSION, "--log", log],
        vec!["budget", "--measured", "--harness", "claude", "--log", log],
        vec!["budget", "--measured", "--harness", "claude", "--session", CLAUDE_SESSION],
        vec!["budget", "--measured", "--harness", "gemini", "--session", CLAUDE_SESSION, "--log", log],
        vec!["budget", "--measured", "--harness", "claude", "--session", "latest", "--log", log],
        vec!["budget", "--measured", "--harness", "claude", "--session", CLAUDE_SESSION, "--log", log, "--log", log],
    ] {
        let output = home.beectl(&args);
        assert_eq!(output.status.code(), Some(4), "{args:?}");
        let value = parse_json_line(&output.stdout);
        assert_eq!((value["status"].clone(), value["errorCode"].clone()), (json!("invalid"), json!("invalid_usage")));
    }
}

#[test]
fn a_huge_line_is_reported_not_parsed() {
    let home = TestHome::new();
    let mut bytes = claude_transcript();
    // A tool result far over the per-line bound: skipped with its line number.
    let huge = format!("{{\"sessionId\":\"{CLAUDE_SESSION}\",\"x\":\"{}\"}}\n", "a".repeat(65 * 1024 * 1024));
    bytes.extend_from_slice(huge.as_bytes());
    bytes.extend_from_slice(
        claude_assistant(
            "msg_01F",
            Some("req_011F"),
            "claude-sonnet-4-5",
            json!({"input_tokens": 1, "output_tokens": 1}),
            json!({}),
        )
        .as_bytes(),
    );
    bytes.push(b'\n');
    let log = home.file("big.jsonl", &bytes);
    let (code, value) = budget(&home, "claude", CLAUDE_SESSION, log.to_str().unwrap());
    assert_eq!(code, 0);
    assert!(value["issues"].as_array().unwrap().contains(&json!({"code": "oversized_line", "line": 14})));
    assert_eq!(value["lines"]["read"], 15);
    assert_eq!(value["response"]["responses"], 5);
}

#[test]
fn a_log_of_many_bad_lines_gives_a_short_answer_with_exact_counts() {
    let home = TestHome::new();
    let mut log = claude_assistant(
        "msg_01A",
        Some("req_01A"),
        "claude-sonnet-4-5",
        json!({"input_tokens": 3, "output_tokens": 4}),
        json!({}),
    );
    log.push('\n');
    log.push_str(&"not json at all\n".repeat(50_000));
    let path = home.file("session.jsonl", log.as_bytes());
    let (code, answer) = budget(&home, "claude", CLAUDE_SESSION, path.to_str().unwrap());
    assert_eq!(code, 0);
    assert_eq!(answer["lines"]["unparseable"], 50_000, "the count stays exact");
    let issues = answer["issues"].as_array().unwrap();
    let listed = issues.iter().filter(|i| i["code"] == "unparseable_line" && i["line"].is_u64()).count();
    assert_eq!(listed, 100);
    let more: Vec<&Value> = issues.iter().filter(|i| i["code"] == "unparseable_line" && i["line"].is_null()).collect();
    assert_eq!(more.len(), 1, "{more:?}");
    assert_eq!(more[0]["omitted"], 49_900);
    let bytes = serde_json::to_vec(&answer).unwrap().len();
    assert!(bytes < 16 * 1024, "{bytes} bytes");
}
