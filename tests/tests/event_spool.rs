//! The events spool loses nothing: a post answered without a stored id keeps
//! its whole event and is stored once; a spooled event as large as a live
//! post is taken; and under kill -9 at random points every event a hook sent
//! is stored exactly once, whether beed acknowledged it or it was spooled.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

fn recent(home: &TestHome) -> Vec<Value> {
    let (status, _, body) = raw_http(&home.socket(), &get_request("/events/recent?limit=5000", "localhost", ""));
    assert_eq!(status, 200);
    serde_json::from_slice::<Value>(&body).unwrap().as_array().unwrap().clone()
}

fn spool_line(failure: Value, event: Value) -> String {
    json!({"failure": failure, "atUtc": "2026-11-30T12:00:00.000Z", "event": event}).to_string() + "\n"
}

fn event(session: &str, key: &str) -> Value {
    json!({"source_app": "app", "session_id": session, "hook_event_type": "Stop", "payload": {},
           "timestamp": 1_796_000_000_000i64, "bee_event_id": key})
}

#[test]
fn an_unreceipted_post_is_stored_once_and_named_a_persistence_problem() {
    let home = TestHome::new();
    let spool = home.spool_dir();
    std::fs::create_dir_all(&spool).unwrap();
    // The same event twice (posted late *and* spooled), one only spooled,
    // and one as large as a live post may be (2 MiB of payload, captured).
    let big = json!({"source_app": "big", "session_id": "s-big", "hook_event_type": "PostToolUse",
                     "payload": {"tool_response": "x".repeat(2 * 1024 * 1024)}, "bee_event_id": "k-big"});
    let lines = [
        spool_line(json!("no_receipt"), event("s-cut", "k-1")),
        spool_line(json!("no_receipt"), event("s-cut", "k-1")),
        spool_line(json!("unreachable"), event("s-down", "k-2")),
        spool_line(json!("late"), big),
    ]
    .concat();
    std::fs::write(spool.join("events.jsonl"), lines).unwrap();
    let daemon = home.start_daemon_with(&["--ingest-every", "0", "--capture-payload", "big"]);
    assert!(eventually(Duration::from_secs(10), || recent(&home).len() == 3), "{:?}", recent(&home).len());
    let events = recent(&home);
    let sessions: Vec<&str> = events.iter().map(|e| e["session_id"].as_str().unwrap()).collect();
    assert_eq!(sessions, ["s-cut", "s-down", "s-big"]);
    assert_eq!(events[2]["payload"]["tool_response"].as_str().unwrap().len(), 2 * 1024 * 1024);
    assert!(!spool.join("events.rejected.jsonl").exists(), "nothing set aside");

    let audit = |session: &str| parse_json_line(&home.beectl(&["audit", "--session", session]).stdout);
    assert_eq!(audit("s-cut")["class"], "persistence_unverified", "{}", audit("s-cut"));
    assert_eq!(audit("s-down")["class"], "delivery_failed_hidden");
    drop(daemon);
}

/// Sends one event through the real `bee-hook event`; true when it exited 0.
fn hook_event(home: &TestHome, session: &str) -> bool {
    let mut child = home
        .command(bin("bee-hook"))
        .args(["event", "--source-app", "killer"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let envelope = json!({"session_id": session, "hook_event_name": "PreToolUse", "tool_name": "Bash"});
    child.stdin.take().unwrap().write_all(envelope.to_string().as_bytes()).unwrap();
    child.wait().unwrap().code() == Some(0)
}

#[test]
fn every_sent_event_survives_kill_9_exactly_once() {
    let home = TestHome::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (rounds, senders, per_sender) = (20, 6, 3);
    for round in 0..rounds {
        let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
        // A random kill point while six senders post three events each:
        // some before, some during, some after the kill.
        let kill_after = Duration::from_millis(next() % 60);
        std::thread::scope(|scope| {
            for n in 0..senders {
                let home = &home;
                scope.spawn(move || {
                    for attempt in 0..per_sender {
                        assert!(hook_event(home, &format!("kill-{round}-{n}-{attempt}")), "bee-hook exits 0");
                    }
                });
            }
            std::thread::sleep(kill_after);
            daemon.kill9();
        });
    }
    // The last start takes every spool line; nothing sent is missing or doubled.
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    assert!(eventually(Duration::from_secs(20), || !home.spool_dir().join("events.jsonl").exists()));
    let mut stored: Vec<String> =
        recent(&home).iter().map(|event| event["session_id"].as_str().unwrap().to_owned()).collect();
    stored.sort();
    let doubled: Vec<&String> = stored.windows(2).filter(|w| w[0] == w[1]).map(|w| &w[0]).collect();
    assert!(doubled.is_empty(), "stored twice: {doubled:?}");
    let mut missing = Vec::new();
    for round in 0..rounds {
        for n in 0..senders {
            for attempt in 0..per_sender {
                let session = format!("kill-{round}-{n}-{attempt}");
                if stored.binary_search(&session).is_err() {
                    missing.push(session);
                }
            }
        }
    }
    assert!(missing.is_empty(), "lost: {missing:?}");
    assert_eq!(stored.len(), rounds * senders * per_sender);
    assert!(!home.spool_dir().join("events.rejected.jsonl").exists());
    drop(daemon);
}
