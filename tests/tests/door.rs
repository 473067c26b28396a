//! Validation at the door: a figure no producer can honestly report is
//! refused before it is written, so no input can brick a store, wrap a
//! total or turn a sum into `null` next to a count that says otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};

fn observation(event: &str, bytes: u64, tokens: u64) -> Value {
    json!({"kind": "Delivered", "observedAtUtc": "2026-11-30T12:00:00.000Z", "eventId": event,
           "sessionKind": "claude-native-session", "sessionId": SESSION, "surface": "hook.prompt.plain",
           "itemId": "steering-block", "itemVersion": "1", "utf8Bytes": bytes,
           "estimates": [{"estimator": "utf16-ceil-div4", "version": 1, "estimatedTokens": tokens}]})
}

fn post(home: &TestHome, path: &str, body: &Value) -> (u16, Value) {
    let (status, _, answer) = raw_http(&home.socket(), &post_request(path, "", body.to_string().as_bytes()));
    (status, serde_json::from_slice(&answer).unwrap_or(Value::Null))
}

#[test]
fn impossible_delivery_counts_are_refused_and_the_store_stays_readable() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let path = "/v1/delivery/observations";
    let refused = [
        observation("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f70", u64::MAX, 1),
        observation("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f71", 10, u64::MAX),
        observation("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f72", i64::MAX as u64, 1),
        observation("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f73", (1 << 30) + 1, 1),
        observation("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f74", 8, 3),
    ];
    for body in &refused {
        let (status, answer) = post(&home, path, body);
        assert_eq!((status, answer["errorCode"].as_str()), (400, Some("invalid_request")), "{body}");
    }
    for (n, bytes) in [(0u8, 35u64), (1, 1 << 30)] {
        let body = observation(&format!("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f8{n}"), bytes, bytes.div_ceil(4));
        assert_eq!(post(&home, path, &body).0, 200, "{body}");
    }
    // The same hostile records through the spool: set aside, not stored.
    let spool = home.spool_dir();
    std::fs::create_dir_all(&spool).unwrap();
    let lines: String = refused.iter().map(|body| body.to_string() + "\n").collect();
    std::fs::write(spool.join("delivery-v1.jsonl"), lines).unwrap();
    home.settle();
    let rejected = std::fs::read_to_string(spool.join("delivery-v1.rejected.jsonl")).unwrap();
    assert_eq!(rejected.lines().count(), refused.len());

    let (code, report) = home.report(&[]);
    assert_eq!(code, 0);
    assert_eq!(report["deliveredUtf8Bytes"], 35 + (1u64 << 30), "{report}");
    assert_eq!(report["issues"], json!(["observation_window_open"]), "no corrupt, no wrap: {report}");
    // beed restarts on the same store: nothing in it is unreadable.
    drop(daemon);
    let daemon = home.start_daemon();
    assert_eq!(home.report(&[]).1["deliveredEvents"], 2);
    drop(daemon);
}

fn call(id: &str, cost: Value, input: Value) -> Value {
    json!({"kind": "call", "recordId": id, "source": "run", "provider": "claude",
           "startedAtUtc": "2026-11-30T10:00:00.000Z", "durationMs": 1000, "success": true,
           "costUsd": cost, "tokens": {"inputTokens": input, "outputTokens": 5}, "quotaSnapshots": []})
}

#[test]
fn impossible_ledger_figures_are_refused_and_totals_stay_exact() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let path = "/v1/ledger/records";
    let refused = [
        call("7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7a01", json!(1e308), json!(10)),
        call("7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7a02", json!(2_000_000.0), json!(10)),
        call("7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7a03", json!(0.5), json!(u64::MAX)),
        call("7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7a04", json!(0.5), json!(i64::MAX)),
    ];
    // Only beed's reading of the logs makes derived or ingested evidence;
    // a limit's family and session are short names.
    let mut derived = call("7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7a05", json!(0.5), json!(10));
    derived["source"] = json!("derived");
    let limit = json!({"kind": "limit", "recordId": "7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7a06", "atUtc": "2026-11-30T10:00:00Z",
        "provider": "codex", "resetsAtUtc": null, "detection": "structured", "window": "five_hour", "limitId": "x".repeat(200)});
    for record in refused.iter().chain([&derived, &limit]) {
        let (status, answer) = post(&home, path, &json!({"records": [record]}));
        assert_eq!((status, answer["errorCode"].as_str()), (400, Some("invalid_request")), "{record}");
    }
    for (n, cost) in [(1, 0.25), (2, 0.5)] {
        let record = call(&format!("7d2b8f63-1c6e-4d4f-8a2b-3c4d5e6f7b0{n}"), json!(cost), json!(10));
        assert_eq!(post(&home, path, &json!({"records": [record]})).0, 200);
    }
    let status = parse_json_line(
        &home.beectl(&["status", "--since", "2026-11-30T00:00:00Z", "--until", "2026-12-01T00:00:00Z"]).stdout,
    );
    assert_eq!((status["estCostUsd"].clone(), status["callsWithCost"].clone()), (json!(0.75), json!(2)), "{status}");
    drop(daemon);
}

#[test]
fn a_provider_log_with_an_impossible_counter_is_skipped_line_by_line() {
    let home = TestHome::new();
    let dir = home.path().join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&dir).unwrap();
    let line = |id: &str, input: Value| {
        json!({"type": "assistant", "sessionId": SESSION, "timestamp": "2026-11-30T10:01:00.000Z", "requestId": format!("req_{id}"),
               "message": {"id": id, "model": "claude-sonnet-4-5", "usage": {"input_tokens": input, "output_tokens": 7}}})
        .to_string()
            + "\n"
    };
    let path = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(
        &path,
        [line("msg_A", json!(11)), line("msg_B", json!(u64::MAX)), line("msg_C", json!(13))].concat(),
    )
    .unwrap();
    make_quiet(&path);
    let summary = parse_json_line(&home.beectl(&["ingest"]).stdout);
    assert_eq!(summary["summary"]["unparseableLines"], 1, "{summary}");
    let usage = parse_json_line(&home.beectl(&["usage", "--by", "session"]).stdout);
    assert_eq!(usage["rows"][0]["responses"], 2, "{usage}");
    assert_eq!(usage["rows"][0]["tokens"]["inputTokens"], 24, "{usage}");
}

/// A spooled observation whose line was changed on disk (`utf8Bytes` 4 → 6
/// beside `contentUtf8Bytes` 4 on the plain surface: an impossible record)
/// is set aside, not stored as delivered: by its line's CRC-32, and by the
/// rule that the plain surface's content is all of its bytes.
#[test]
fn a_spooled_observation_changed_on_disk_is_set_aside() {
    let home = TestHome::new();
    let spool = home.spool_dir();
    std::fs::create_dir_all(&spool).unwrap();
    let mut record = observation("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f90", 4, 1);
    record["contentUtf8Bytes"] = json!(4);
    let sealed = String::from_utf8(bee_proto::spool::seal(record.to_string().as_bytes())).unwrap();
    let tampered = sealed.replace("\"utf8Bytes\":4", "\"utf8Bytes\":6");
    assert_ne!(tampered, sealed);
    // Unsealed, as an older bee-hook wrote lines: the consistency rule alone.
    let mut impossible = record.clone();
    impossible["eventId"] = json!("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f91");
    impossible["utf8Bytes"] = json!(6);
    let mut good = record.clone();
    good["eventId"] = json!("6c1a7e52-0b5d-4c3e-9f1a-2b3c4d5e6f92");
    let good = String::from_utf8(bee_proto::spool::seal(good.to_string().as_bytes())).unwrap();
    std::fs::write(spool.join("delivery-v1.jsonl"), format!("{tampered}\n{impossible}\n{good}\n")).unwrap();
    let daemon = home.start_daemon();
    home.settle();
    let rejected = std::fs::read_to_string(spool.join("delivery-v1.rejected.jsonl")).unwrap();
    assert_eq!(rejected.lines().collect::<Vec<_>>(), [tampered.as_str(), impossible.to_string().as_str()]);
    assert!(daemon.log().contains("does not match the line's CRC-32"), "{}", daemon.log());
    let (_, report) = home.report(&[]);
    assert_eq!(
        (report["deliveredEvents"].clone(), report["deliveredUtf8Bytes"].clone()),
        (json!(1), json!(4)),
        "{report}"
    );
    drop(daemon);
}
