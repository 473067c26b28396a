//! `bee-hook statusline` with a line of its own, fed Claude Code's real
//! status-line input shape (with and without `rate_limits`), beed up and
//! down: the input's figures first, then the ledger's, and nothing guessed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};

const SESSION: &str = "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d";

/// Claude Code 2.1's status-line input, as its documentation and its own
/// writes spell it; `rate_limits` only on Pro/Max plans.
fn status_input(rate_limits: Option<Value>) -> Vec<u8> {
    let mut input = json!({
        "hook_event_name": "Status", "session_id": SESSION,
        "transcript_path": format!("/home/dev/.claude/projects/-home-dev-app/{SESSION}.jsonl"),
        "cwd": "/home/dev/app", "version": "2.1.332",
        "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": "/home/dev/app", "project_dir": "/home/dev/app"},
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": 0.4567, "total_duration_ms": 120_000, "total_api_duration_ms": 30_000,
                 "total_lines_added": 12, "total_lines_removed": 3},
        "context_window": {"total_input_tokens": 84_000, "total_output_tokens": 2_100, "context_window_size": 200_000,
                           "used_percentage": 42.4, "remaining_percentage": 57.6},
        "exceeds_200k_tokens": false
    });
    if let Some(limits) = rate_limits {
        input["rate_limits"] = limits;
    }
    serde_json::to_vec(&input).unwrap()
}

fn now_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// Five hours whose reset is 2 h 10 m (and a few seconds) away.
fn limits(used: f64) -> Value {
    json!({"five_hour": {"used_percentage": used, "resets_at": now_seconds() + 130 * 60 - 5},
           "seven_day": {"used_percentage": 12.0, "resets_at": now_seconds() + 3 * 86_400}})
}

fn line(home: &TestHome, args: &[&str], input: &[u8]) -> String {
    let (output, _) = home.hook(&[&["statusline"], args].concat(), input);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// A transcript with one response written now (today, whatever the clock).
fn todays_transcript(home: &TestHome) {
    let dir = home.path().join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&dir).unwrap();
    let now = bee_proto::time::now_rfc3339();
    let line = json!({"type": "assistant", "sessionId": SESSION, "timestamp": now, "requestId": "req_1",
        "message": {"id": "msg_1", "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
            "usage": {"input_tokens": 1_000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 200,
                      "output_tokens": 300}}});
    let path = dir.join(format!("{SESSION}.jsonl"));
    write_quiet(&path, &(line.to_string() + "\n"));
}

#[test]
fn beed_down_the_line_is_the_inputs_alone() {
    let home = TestHome::new();
    todays_transcript(&home);
    assert_eq!(
        line(&home, &[], &status_input(Some(limits(37.0)))),
        "Sonnet 4.5 | ctx 42% | 5h 37% | resets in 2h 10m | session $0.46\n"
    );
    assert_eq!(
        line(&home, &[], &status_input(None)),
        "Sonnet 4.5 | ctx 42% | session $0.46\n",
        "no rate_limits, no ledger: no window, no guess"
    );
}

#[test]
fn beed_up_the_line_adds_todays_usage_and_the_ledgers_window() {
    let home = TestHome::new();
    todays_transcript(&home);
    let daemon = home.start_daemon();
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    home.settle();
    // A line with rate_limits records the window's snapshot… A glance that
    // misses bee-hook's 50 ms while beed is still busy after the ingestion
    // leaves today's usage out of that line rather than wait: the next
    // line has it.
    let mut first = String::new();
    for _ in 0..20 {
        first = line(&home, &[], &status_input(Some(limits(37.0))));
        if first.contains("today") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    // 1,000 + 200 + 300 tokens; 1,000 × $3 + 200 × $0.30 + 300 × $15 per million:
    // $0.00756, under a cent, in two significant digits.
    assert_eq!(first, "Sonnet 4.5 | ctx 42% | 5h 37% | resets in 2h 10m | today 1.5k est $0.0076 | session $0.46\n");
    home.settle();
    // …which a later input without them still shows, from the ledger.
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let later = line(&home, &[], &status_input(None));
    assert!(later.starts_with("Sonnet 4.5 | ctx 42% | 5h 37% | resets in 2h "), "{later}");
    assert!(later.ends_with(" | today 1.5k est $0.0076 | session $0.46\n"), "{later}");
    let custom = line(&home, &["--format", "{today_tokens} tokens today | {weekly} of the week"], &status_input(None));
    assert_eq!(custom, "1.5k tokens today | 12% of the week\n");
    let appended =
        line(&home, &["--append", "--format", "{model}", "--", "sh", "-c", "cat >/dev/null; echo mine"], b"{}");
    assert_eq!(appended, "mine\n", "an input without a model: Bee's segment is empty, the command's line unchanged");
    let appended = line(
        &home,
        &["--append", "--format", "{model}", "--", "sh", "-c", "cat >/dev/null; echo mine"],
        &status_input(None),
    );
    assert_eq!(appended, "mine | Sonnet 4.5\n");
    drop(daemon);
}

#[test]
fn hostile_input_and_bad_formats_never_break_the_line() {
    let home = TestHome::new();
    for input in [
        &b""[..],
        b"\xff\xfe not json",
        b"[1,2,3]",
        b"{\"model\": {\"display_name\": 7}}",
        b"{\"rate_limits\": {\"five_hour\": {\"used_percentage\": 1e999}}}",
    ] {
        assert_eq!(line(&home, &[], input), "\n", "{input:?}");
    }
    let huge = [b"{\"model\":{\"display_name\":\"Opus\"},\"pad\":\"".as_slice(), &vec![b'x'; 4 << 20], b"\"}"].concat();
    let (output, _) = home.hook(&["statusline"], &huge);
    assert_eq!(output.status.code(), Some(0));
    // An unknown field drops its segment, as the README says; the rest of
    // the line shows, and stderr names the field.
    let (bad, _) = home.hook(&["statusline", "--format", "{model} | {nope} left out"], &status_input(None));
    assert_eq!(bad.status.code(), Some(0));
    let shown = String::from_utf8(bad.stdout).unwrap();
    assert!(!shown.trim().is_empty() && !shown.contains("left out") && !shown.contains('{'), "{shown:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown field {nope}"));
    let (wrapped, _) = home.hook(&["statusline", "--format", "{nope}", "--", "echo", "theirs"], &status_input(None));
    assert_eq!((wrapped.stdout, wrapped.status.code()), (b"theirs\n".to_vec(), Some(0)), "their command still runs");
}
