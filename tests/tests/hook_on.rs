//! `bee-hook on EVENT`: every role of one hook event in one process. Each
//! role keeps the contract its own subcommand has — the block's bytes and
//! exit status, the deadline, the spool, the event's receipt — whatever
//! beed does, and one report reaches beed for all of them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

const SESSION: &str = "4c5d6e7f-8091-4a2b-9c3d-4e5f60718293";
const BLOCK: &[u8] = b"Run the tests before you say done.\n";

fn envelope(home: &TestHome, event: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"session_id": SESSION, "cwd": "/home/dev/app", "permission_mode": "default",
        "transcript_path": home.path().join("transcript.jsonl"), "hook_event_name": event,
        "prompt": "add a test", "stop_hook_active": false}))
    .unwrap()
}

fn on(home: &TestHome, args: &[&str], stdin: &[u8]) -> (Output, Duration) {
    let mut command = home.command(bin("bee-hook"));
    command.env("BEE_HOOK_DEBUG", "1");
    let mut all = vec!["on"];
    all.extend_from_slice(args);
    home.hook_with(command, &all, stdin)
}

fn prompt_roles(block: &Path) -> Vec<String> {
    ["UserPromptSubmit", "--block", block.to_str().unwrap(), "--surface", "context-json", "--turn", "--event"]
        .into_iter()
        .chain(["--source-app", "app"])
        .map(str::to_owned)
        .collect()
}

fn lines(home: &TestHome, file: &str) -> usize {
    std::fs::read(home.spool_dir().join(file)).map(|b| b.iter().filter(|&&c| c == b'\n').count()).unwrap_or(0)
}

/// (delivery, ledger, events) lines waiting in the spool.
fn spooled(home: &TestHome) -> (usize, usize, usize) {
    (lines(home, "delivery-v1.jsonl"), lines(home, "ledger-v1.jsonl"), lines(home, "events.jsonl"))
}

fn turn_marks(home: &TestHome) -> i64 {
    let ledger = rusqlite::Connection::open_with_flags(
        home.bee_dir().join("usage/ledger-v1/ledger.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    ledger.query_row("SELECT count(*) FROM turn_mark", [], |row| row.get(0)).unwrap()
}

fn stored_events(home: &TestHome) -> Vec<Value> {
    let output = home.beectl(&["events", "recent", "--limit", "100", "--json"]);
    let answer = parse_json_line(&output.stdout);
    answer.as_array().cloned().unwrap_or_else(|| answer["events"].as_array().cloned().unwrap_or_default())
}

#[test]
fn one_process_plays_every_role_of_its_event_whatever_beed_does() {
    let home = TestHome::new();
    let block = home.file("steering.md", BLOCK);
    let roles = prompt_roles(&block);
    let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
    let prompt = envelope(&home, "UserPromptSubmit");
    // The block's bytes are exactly `bee-hook prompt`'s, whatever happens after.
    let (alone, _) = home.hook(&["prompt", "--surface", "context-json", "--block", block.to_str().unwrap()], &prompt);
    assert_eq!(alone.status.code(), Some(0));
    let expected_stdout = alone.stdout.clone();
    assert!(contains(&expected_stdout, b"additionalContext"), "{}", String::from_utf8_lossy(&expected_stdout));
    std::fs::remove_dir_all(home.spool_dir()).unwrap();

    // beed down: the output is the agent's at once; every part is spooled.
    let (down, down_time) = on(&home, &roles, &prompt);
    assert_eq!((down.stdout.clone(), down.status.code()), (expected_stdout.clone(), Some(0)));
    assert!(down_time < Duration::from_secs(2), "{down_time:?}");
    assert_eq!(spooled(&home), (1, 1, 1), "the observation, the turn mark and the event");
    let said = String::from_utf8_lossy(&down.stderr).into_owned();
    assert!(said.contains("event not delivered: beed is not reachable; kept in the spool"), "{said}");
    assert!(said.contains("spooled ("), "{said}");

    // beed up: it takes the spool on start, then one report carries all three.
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    assert!(eventually(Duration::from_secs(10), || spooled(&home) == (0, 0, 0)), "{:?}", spooled(&home));
    let (up, _) = on(&home, &roles, &prompt);
    assert_eq!((up.stdout.clone(), up.status.code()), (expected_stdout.clone(), Some(0)));
    let said = String::from_utf8_lossy(&up.stderr).into_owned();
    let (event_id, outcome) = receipt(&up.stderr).unwrap_or_else(|| panic!("no observation receipt: {said}"));
    assert_eq!(outcome, "accepted by beed", "{said}");
    let stored_id: i64 = said
        .lines()
        .find_map(|line| line.strip_prefix(bee_proto::events::RECEIPT_PREFIX))
        .and_then(|rest| rest.strip_suffix(" stored"))
        .unwrap_or_else(|| panic!("no event receipt: {said}"))
        .parse()
        .unwrap();
    assert_eq!(spooled(&home), (0, 0, 0), "nothing spooled when beed took it");
    assert_eq!(home.read_event(&event_id).0, 0, "the observation is in the delivery store");
    assert_eq!(home.report(&[]).1["observedEvents"], 2);
    let events = stored_events(&home);
    assert!(events.iter().any(|e| e["id"] == stored_id && e["hook_event_type"] == "UserPromptSubmit"), "{events:?}");
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(turn_marks(&home), 2, "both turn marks are in the ledger");

    // Stop: the turn mark and the event, nothing on stdout.
    let (stop, _) = on(&home, &["Stop", "--turn", "--event", "--source-app", "app"], &envelope(&home, "Stop"));
    assert_eq!((stop.stdout.clone(), stop.status.code()), (Vec::new(), Some(0)));
    assert_eq!((turn_marks(&home), stored_events(&home).len()), (3, 3));

    // beed frozen: the hook gives up at its deadline; every part is spooled once.
    daemon.freeze();
    let (slow, slow_time) = on(&home, &roles, &prompt);
    assert_eq!((slow.stdout.clone(), slow.status.code()), (expected_stdout.clone(), Some(0)));
    assert!(slow_time >= Duration::from_millis(100) && slow_time < Duration::from_secs(2), "{slow_time:?}");
    assert_eq!(spooled(&home), (1, 1, 1));
    let said = String::from_utf8_lossy(&slow.stderr).into_owned();
    assert!(said.contains("did not answer within 100ms"), "{said}");
    daemon.resume();
    // The late report commits and the spooled copies are recognised: each once.
    assert!(eventually(Duration::from_secs(15), || spooled(&home) == (0, 0, 0)), "{:?}", spooled(&home));
    assert!(eventually(Duration::from_secs(5), || home.report(&[]).1["observedEvents"] == 3));
    assert!(eventually(Duration::from_secs(5), || stored_events(&home).len() == 4), "{:?}", stored_events(&home));
    assert_eq!(turn_marks(&home), 4);
    drop(daemon);
}

#[test]
fn a_block_that_cannot_be_delivered_fails_alone_and_usage_errors_keep_each_roles_exit() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let prompt = envelope(&home, "UserPromptSubmit");
    let missing = home.path().join("missing.md");
    let roles = prompt_roles(&missing);
    let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
    let (failed, _) = on(&home, &roles, &prompt);
    assert_eq!((failed.stdout.clone(), failed.status.code()), (Vec::new(), Some(1)), "prompt's own failure");
    assert!(contains(&failed.stderr, b"cannot read block file"), "{}", String::from_utf8_lossy(&failed.stderr));
    // The other roles still did their work.
    assert_eq!((turn_marks(&home), stored_events(&home).len()), (1, 1));
    assert_eq!(home.report(&[]).1["observedEvents"], 0);

    // Usage errors: monitoring roles never block (0); a block role is an error (1).
    for (args, code) in [
        (vec!["Stop", "--event"], 0),
        (vec!["Stop", "--turn", "--source-app", "app"], 0),
        (vec!["Stop", "--turn", "--bogus"], 0),
        (vec!["UserPromptSubmit", "--block", "x.md"], 1),
        (vec!["UserPromptSubmit", "--block=x.md", "--surface", "yaml"], 1),
    ] {
        let (output, _) = on(&home, &args, &prompt);
        assert_eq!((output.stdout.clone(), output.status.code()), (Vec::new(), Some(code)), "{args:?}");
    }
    // Hostile input: not JSON, not UTF-8, oversized — no panic, nothing stored, exit 0.
    let huge = [
        format!("{{\"session_id\":\"{SESSION}\",\"hook_event_name\":\"Stop\",\"pad\":\"").as_bytes(),
        &vec![b'a'; 70 << 20],
        b"\"}",
    ]
    .concat();
    for input in [b"not json".to_vec(), vec![0xff, 0xfe, 0x00], huge] {
        let (output, _) = on(&home, &["Stop", "--turn", "--event", "--source-app", "app"], &input);
        assert_eq!((output.stdout.clone(), output.status.code()), (Vec::new(), Some(0)));
        assert!(contains(&output.stderr, b"event not sent"), "{}", String::from_utf8_lossy(&output.stderr));
    }
    assert_eq!((turn_marks(&home), stored_events(&home).len()), (1, 1));
    drop(daemon);
}

/// The report route holds each part to its own route's rules: a part its
/// route refuses is refused alone, with that route's status and body.
#[test]
fn the_report_route_answers_each_part_as_its_own_route_would() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let event = json!({"source_app": "app", "session_id": "s", "hook_event_type": "Stop", "payload": {}});
    let body = json!({"observation": {"not": "an observation"}, "ledger": {"records": []}, "event": event});
    let request = post_request(bee_proto::api::HOOK_PATH, "", body.to_string().as_bytes());
    let (status, head, answer) = raw_http(&home.socket(), &request);
    assert_eq!(status, 200, "{head}");
    assert!(head.to_ascii_lowercase().contains("bee-protocol: 1"), "{head}");
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["observation"]["status"], 400, "{answer}");
    assert_eq!(answer["observation"]["body"]["errorCode"], "invalid_request");
    assert_eq!(answer["ledger"]["status"], 200, "{answer}");
    assert_eq!(answer["event"]["status"], 200, "{answer}");
    assert!(answer["event"]["body"]["id"].as_i64().unwrap() > 0);
    // Only the parts sent are answered; a body that is no report is refused whole.
    let (status, _, answer) = raw_http(&home.socket(), &post_request(bee_proto::api::HOOK_PATH, "", b"{}"));
    assert_eq!((status, serde_json::from_slice::<Value>(&answer).unwrap()), (200, json!({})));
    for bad in [b"[1]".as_slice(), b"{\"extra\":1}", b"\xff", b"{\"event\":"] {
        let (status, _, answer) = raw_http(&home.socket(), &post_request(bee_proto::api::HOOK_PATH, "", bad));
        assert_eq!(status, 400, "{}", String::from_utf8_lossy(&answer));
    }
    // An oversized event part is refused as the event route refuses it.
    let big = json!({"event": {"source_app": "app", "session_id": "s", "hook_event_type": "Stop",
        "payload": {"x": "a".repeat(bee_proto::events::MAX_EVENT_BYTES)}}});
    let (status, _, answer) =
        raw_http(&home.socket(), &post_request(bee_proto::api::HOOK_PATH, "", big.to_string().as_bytes()));
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!((status, answer["event"]["status"].clone()), (200, json!(413)), "{answer}");
    drop(daemon);
}
