//! `beectl delivery report | read` end to end: real hooks, a real beed, real SQLite.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::json;

const BLOCK: &[u8] = b"Remember: run the tests before you say done.\n";

fn fire_block(home: &TestHome, surface: &str, session: &str, block: &std::path::Path) -> std::process::Output {
    let (output, _) = home.hook(
        &["prompt", "--surface", surface, "--block", block.to_str().unwrap()],
        &prompt_envelope(session, "please fix the flaky test"),
    );
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

#[test]
fn empty_or_missing_store_gives_the_exact_unknown_report_and_creates_nothing() {
    let home = TestHome::new();
    let (code, report) = home.report(&[]);
    assert_eq!(code, 5);
    assert_json_eq(
        &report,
        &json!({
            "schemaVersion": 1,
            "totalsStatus": "unknown",
            "observedEvents": 0, "deliveredEvents": 0, "deliveredUtf8Bytes": 0,
            "deliveredUtf8BytesCounted": "whole_output_with_envelope_and_newline",
            "deliveredContentUtf8Bytes": null, "contentUnknownEvents": 0,
            "estimates": [{"estimator": "utf16-ceil-div4", "version": 1, "deliveredEstimatedTokens": 0}],
            "eventKinds": {"Delivered": 0, "WriteFailed": 0, "PartialWrite": 0},
            "groups": [], "omittedGroups": 0,
            "issues": ["missing", "observation_window_open"],
            "observationWindowComplete": false,
            "droppedObservationCount": null,
            "measuredProviderTokens": null,
            "nativeWithheldEvents": null,
            "nativeWithheldStatus": "unavailable_no_native_producer",
            "sourceRefHash": null, "recipeHash": null
        }),
    );
    let read = home.beectl(&["delivery", "read", "--store", home.store().to_str().unwrap(), "--event", SESSION]);
    assert_eq!(read.status.code(), Some(5));
    assert_json_eq(&parse_json_line(&read.stdout), &json!({"status": "unavailable", "observation": null}));
    let status = home.beectl(&["daemon", "status"]);
    assert_eq!(status.status.code(), Some(5));
    assert_eq!(parse_json_line(&status.stdout)["daemon"], "not_running");
    assert!(!home.bee_dir().exists(), "reporting created {:?}", home.bee_files());
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0);

    // An empty store directory is no evidence either, and is left untouched.
    std::fs::create_dir_all(home.store()).unwrap();
    let (code, report) = home.report(&[]);
    assert_eq!((code, report["issues"].clone()), (5, json!(["missing", "observation_window_open"])));
    assert_eq!(std::fs::read_dir(home.store()).unwrap().count(), 0);
}

#[test]
fn hooks_are_counted_with_totals_groups_and_estimates() {
    let home = TestHome::new();
    let block = home.file("steering.md", BLOCK);
    let daemon = home.start_daemon();

    let plain = fire_block(&home, "plain", SESSION, &block);
    assert_eq!(plain.stdout, BLOCK);
    let json_out = fire_block(&home, "context-json", SESSION, &block);
    let expected_json = format!(
        "{{\"hookSpecificOutput\":{{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":{}}}}}\n",
        serde_json::to_string(std::str::from_utf8(BLOCK).unwrap()).unwrap()
    );
    assert_eq!(String::from_utf8(json_out.stdout.clone()).unwrap(), expected_json);
    fire_block(&home, "plain", OTHER_SESSION, &block);
    // A wrapped command: its stdout is the output (with a multi-byte character
    // and an astral one, so bytes, UTF-16 units and estimates all differ).
    let (wrapped, _) = home.hook(
        &[
            "prompt",
            "--surface",
            "plain",
            "--item",
            "repo-rules",
            "--item-version",
            "7",
            "--",
            "sh",
            "-c",
            "cat >/dev/null; printf 'Rules: é 😀\\n'",
        ],
        &prompt_envelope(SESSION, "and the docs"),
    );
    assert_eq!(wrapped.stdout, "Rules: é 😀\n".as_bytes());
    home.settle();

    let plain_bytes = BLOCK.len() as u64; // 46 bytes, 46 units
    let json_bytes = expected_json.len() as u64;
    let wrapped_bytes = "Rules: é 😀\n".len() as u64; // 14 bytes, 12 units
    let est = |units: u64| units.div_ceil(4);
    let (plain_est, json_est, wrapped_est) = (est(plain_bytes), est(json_bytes), est(12));
    let e = |tokens: u64| json!([{"estimator": "utf16-ceil-div4", "version": 1, "deliveredEstimatedTokens": tokens}]);
    // The texts' own bytes: the block's for both surfaces (the wrapper left out), the wrapped command's output.
    let (block_own, wrapped_own) = (BLOCK.len() as u64, wrapped_bytes);
    let own = |identity: &str| match identity {
        "steering-block" => 3 * block_own,
        "repo-rules" => wrapped_own,
        "hook.prompt.context-json" => block_own,
        "hook.prompt.plain" => 2 * block_own + wrapped_own,
        SESSION => 2 * block_own + wrapped_own,
        _ => block_own,
    };
    let group = |dimension: &str, identity: &str, version: &str, events: u64, bytes: u64, tokens: u64| {
        json!({"dimension": dimension, "identity": identity, "version": version,
               "deliveredEvents": events, "deliveredUtf8Bytes": bytes, "estimates": e(tokens),
               "deliveredContentUtf8Bytes": own(identity)})
    };
    let total_bytes = 2 * plain_bytes + json_bytes + wrapped_bytes;
    let total_est = 2 * plain_est + json_est + wrapped_est;
    let (code, report) = home.report(&[]);
    assert_eq!(code, 0);
    assert_json_eq(
        &report,
        &json!({
            "schemaVersion": 1, "totalsStatus": "lower_bound",
            "observedEvents": 4, "deliveredEvents": 4, "deliveredUtf8Bytes": total_bytes,
            "deliveredUtf8BytesCounted": "whole_output_with_envelope_and_newline",
            "deliveredContentUtf8Bytes": 3 * block_own + wrapped_own, "contentUnknownEvents": 0,
            "estimates": e(total_est),
            "eventKinds": {"Delivered": 4, "WriteFailed": 0, "PartialWrite": 0},
            "groups": [
                group("item", "steering-block", "1", 3, 2 * plain_bytes + json_bytes, 2 * plain_est + json_est),
                group("item", "repo-rules", "7", 1, wrapped_bytes, wrapped_est),
                group("surface", "hook.prompt.context-json", "1", 1, json_bytes, json_est),
                group("surface", "hook.prompt.plain", "1", 3, 2 * plain_bytes + wrapped_bytes, 2 * plain_est + wrapped_est),
                group("session", SESSION, "claude-native-session", 3, plain_bytes + json_bytes + wrapped_bytes, plain_est + json_est + wrapped_est),
                group("session", OTHER_SESSION, "claude-native-session", 1, plain_bytes, plain_est),
            ],
            "omittedGroups": 0,
            "issues": ["observation_window_open"],
            "observationWindowComplete": false, "droppedObservationCount": null,
            "measuredProviderTokens": null, "nativeWithheldEvents": null,
            "nativeWithheldStatus": "unavailable_no_native_producer",
            "sourceRefHash": null, "recipeHash": null
        }),
    );

    // --limit bounds groups per view, never totals; 0 gives totals only.
    let (code, limited) = home.report(&["--limit", "1"]);
    assert_eq!(code, 0);
    assert_eq!(limited["groups"].as_array().unwrap().len(), 3);
    assert_eq!(limited["omittedGroups"], 3);
    assert_eq!(limited["deliveredUtf8Bytes"], total_bytes);
    let (_, none) = home.report(&["--limit", "0"]);
    assert_eq!((none["groups"].clone(), none["omittedGroups"].clone()), (json!([]), json!(6)));
    assert_eq!(none["estimates"], e(total_est));

    // Session filter: exact match only.
    let (code, other) = home.report(&["--session-kind", "claude-native-session", "--session", OTHER_SESSION]);
    assert_eq!(
        (code, other["observedEvents"].clone(), other["deliveredUtf8Bytes"].clone()),
        (0, json!(1), json!(plain_bytes))
    );
    // The same UUID typed in capitals is the same session, as in `budget --measured`.
    let (code, shouted) =
        home.report(&["--session-kind", "claude-native-session", "--session", &OTHER_SESSION.to_uppercase()]);
    assert_eq!((code, shouted["observedEvents"].clone()), (0, json!(1)), "{shouted}");
    let unknown = "11111111-2222-4333-8444-555555555555";
    let (code, nothing) = home.report(&["--session-kind", "claude-native-session", "--session", unknown]);
    assert_eq!((code, nothing["totalsStatus"].clone()), (5, json!("unknown")));
    assert_eq!(nothing["issues"], json!(["missing", "observation_window_open"]));
    let (code, _) = home.report(&["--session-kind", "codex-session", "--session", SESSION]);
    assert_eq!(code, 5, "another identity kind is never treated as Claude");

    // The table view for people shows the same figures, and the same exit.
    let table = home.beectl(&["delivery", "report", "--store", home.store().to_str().unwrap(), "--format", "table"]);
    assert_eq!(table.status.code(), Some(0));
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains(&format!("delivered bytes   {total_bytes} ")), "{text}");
    assert!(text.contains(&format!("estimated tokens  {total_est} ")), "{text}");
    assert!(text.contains("repo-rules") && text.contains(OTHER_SESSION), "{text}");
    drop(daemon);
    let empty = TestHome::new();
    let table = empty.beectl(&["delivery", "report", "--store", empty.store().to_str().unwrap(), "--format", "table"]);
    assert_eq!(table.status.code(), Some(5));
    assert!(String::from_utf8(table.stdout).unwrap().contains("delivered bytes   unknown"));
}

#[test]
fn read_finds_a_receipt_and_reports_unknown_ids_unavailable() {
    let home = TestHome::new();
    let block = home.file("steering.md", BLOCK);
    let daemon = home.start_daemon();
    // Reports never list ids; the hook's receipt (BEE_HOOK_DEBUG) hands them over.
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (_, receipt) = home.fire_with_receipt("plain", &block, &prompt_envelope(SESSION, "go"));
        let (id, outcome) = receipt.expect("receipt");
        assert!(taken(&outcome), "{outcome}");
        ids.push(id);
    }
    home.settle();
    drop(daemon);
    let store = home.store();
    let read = home.beectl(&["delivery", "read", "--store", store.to_str().unwrap(), "--event", &ids[1]]);
    assert_eq!(read.status.code(), Some(0));
    let answer = parse_json_line(&read.stdout);
    assert_eq!(answer["status"], "recorded_observation");
    let record = &answer["observation"];
    assert_eq!(record["schemaVersion"], 1);
    assert_eq!(record["sequence"], 2);
    let observation = &record["observation"];
    assert_eq!(observation["kind"], "Delivered");
    assert_eq!(observation["eventId"], ids[1].as_str());
    assert_eq!(observation["sessionKind"], "claude-native-session");
    assert_eq!(observation["sessionId"], SESSION);
    assert_eq!(observation["sessionSequence"], 2);
    assert_eq!(observation["surface"], "hook.prompt.plain");
    assert_eq!(observation["itemId"], "steering-block");
    assert_eq!(observation["itemVersion"], "1");
    assert_eq!(observation["utf8Bytes"], BLOCK.len());
    assert!(observation["observedAtUtc"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        observation["estimates"],
        json!([{"estimator": "utf16-ceil-div4", "version": 1, "estimatedTokens": 12}])
    );
    assert!(record["checksum"].as_str().unwrap().starts_with("crc32:"));

    let unknown = home.beectl(&[
        "delivery",
        "read",
        "--store",
        store.to_str().unwrap(),
        "--event",
        "11111111-2222-4333-8444-555555555555",
    ]);
    assert_eq!(unknown.status.code(), Some(5));
    assert_json_eq(&parse_json_line(&unknown.stdout), &json!({"status": "unavailable", "observation": null}));
}

#[test]
fn daemon_and_offline_answers_are_byte_identical() {
    let home = TestHome::new();
    let block = home.file("steering.md", BLOCK);
    let daemon = home.start_daemon();
    for session in [SESSION, OTHER_SESSION, SESSION] {
        fire_block(&home, "plain", session, &block);
    }
    let (_, receipt) = home.fire_with_receipt("context-json", &block, &prompt_envelope(OTHER_SESSION, "go"));
    let ids = [receipt.expect("receipt").0];
    home.settle();
    let store = home.store();
    let store = store.to_str().unwrap();
    let queries: Vec<Vec<&str>> = vec![
        vec!["delivery", "report", "--store", store],
        vec!["delivery", "report", "--store", store, "--limit", "1"],
        vec!["delivery", "report", "--store", store, "--session-kind", "claude-native-session", "--session", SESSION],
        vec![
            "delivery",
            "report",
            "--store",
            store,
            "--session-kind",
            "claude-native-session",
            "--session",
            "11111111-2222-4333-8444-555555555555",
        ],
        vec!["delivery", "read", "--store", store, "--event", &ids[0]],
        vec!["delivery", "read", "--store", store, "--event", "11111111-2222-4333-8444-555555555555"],
    ];
    let via_daemon: Vec<_> = queries.iter().map(|q| home.beectl(q)).collect();
    assert!(daemon.log().contains("beed ready"));
    assert_eq!(daemon.stop(), Some(0));
    assert!(!home.socket().exists(), "beed removes its socket on shutdown");
    for (query, online) in queries.iter().zip(via_daemon) {
        let offline = home.beectl(query);
        assert_eq!(online.status.code(), offline.status.code(), "{query:?}");
        assert_eq!(String::from_utf8_lossy(&online.stdout), String::from_utf8_lossy(&offline.stdout), "{query:?}");
        assert!(online.stderr.is_empty() && offline.stderr.is_empty(), "{query:?}");
    }
}

#[test]
fn the_daemon_really_answers_reports_and_status() {
    let home = TestHome::new();
    let block = home.file("steering.md", BLOCK);
    let mut command = home.command(bin("beed"));
    command.env("BEE_LOG", "debug");
    let daemon = Daemon::start(&home, command);
    fire_block(&home, "plain", SESSION, &block);
    home.settle();
    // The online path is the daemon's: it logs every report it serves.
    let served = |d: &Daemon| d.log().matches("served delivery report").count();
    assert_eq!(served(&daemon), 0);
    let (code, report) = home.report(&[]);
    assert_eq!((code, report["observedEvents"].clone()), (0, json!(1)));
    assert_eq!(served(&daemon), 1);
    let status = home.beectl(&["daemon", "status"]);
    assert_eq!(status.status.code(), Some(0));
    let status = parse_json_line(&status.stdout);
    assert_eq!(status["daemon"], "running");
    assert_eq!(status["protocolVersion"], 1);
    assert_eq!(status["pid"], daemon.pid());
    assert_eq!(status["stores"][0]["records"], 1);
    assert_eq!(status["stores"][0]["capacity"], 2048);
    assert_eq!(status["stores"][0]["path"], home.store().to_str().unwrap());
    assert_eq!(status["socket"], home.socket().to_str().unwrap());
    assert_eq!(status["spool"]["pendingRecords"], 0);
}

#[test]
fn invalid_usage_is_exit_4_with_an_invalid_usage_document() {
    let home = TestHome::new();
    let sid = SESSION;
    let many: Vec<&str> = std::iter::repeat_n("--limit", 17).collect();
    let long = "x".repeat(16_385);
    let matrix: Vec<Vec<&str>> = vec![
        vec!["delivery", "report"],
        vec!["delivery", "report", "--store"],
        vec!["delivery", "report", "--store", ""],
        vec!["delivery", "report", "--store", "s", "--store", "s"],
        vec!["delivery", "report", "--store", "s", "--unknown", "x"],
        vec!["delivery", "report", "--store", "s", "--json"],
        vec!["delivery", "report", "--store", "s", "--limit", "101"],
        vec!["delivery", "report", "--store", "s", "--limit", ""],
        vec!["delivery", "report", "--store", "s", "--limit", "1", "--limit", "2"],
        vec!["delivery", "report", "--store", "s", "--limit=5"],
        vec!["delivery", "report", "--store", "s", "--session", sid],
        vec!["delivery", "report", "--store", "s", "--session-kind", "claude-native-session"],
        vec![
            "delivery",
            "report",
            "--store",
            "s",
            "--session-kind",
            "claude-native-session",
            "--session",
            "not-a-uuid",
        ],
        vec!["delivery", "read", "--store", "s"],
        vec!["delivery", "read", "--store", "s", "--event", "00000000-0000-0000-0000-000000000000"],
        vec!["delivery", "read", "--store", "s", "--event", sid, "--event", sid],
        vec!["delivery", "bogus"],
        many,
        vec!["delivery", "report", "--store", &long],
    ];
    for args in &matrix {
        let output = home.beectl(args);
        assert_eq!(output.status.code(), Some(4), "{args:?}: {}", String::from_utf8_lossy(&output.stdout));
        let answer = parse_json_line(&output.stdout);
        assert_eq!(answer["errorCode"], "invalid_usage", "{args:?}");
        assert_eq!(answer["status"], "invalid", "{args:?}");
    }
    let help = home.beectl(&["delivery", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("report"));
    let version = home.beectl(&["--version"]);
    assert_eq!(version.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("beectl "));
    assert!(!home.bee_dir().exists());
}

#[test]
fn with_beed_never_started_the_report_includes_the_spool_exactly_as_beed_will_store_it() {
    let home = TestHome::new();
    let block = home.file("block.md", b"Run the linter before committing.\n");
    let mut events = Vec::new();
    for (session, prompt) in [(SESSION, "a"), (OTHER_SESSION, "b"), (SESSION, "c")] {
        let (output, receipt) = home.fire_with_receipt("plain", &block, &prompt_envelope(session, prompt));
        assert_eq!(output.status.code(), Some(0));
        let (event, outcome) = receipt.unwrap();
        assert!(outcome.starts_with("spooled"), "{outcome}");
        events.push(event);
    }
    // A line a crash cut short, and a repeat of a spooled event: neither counts twice.
    let spool = home.spool_dir().join("delivery-v1.jsonl");
    let first_line = std::fs::read_to_string(&spool).unwrap().lines().next().unwrap().to_owned();
    let mut file = std::fs::OpenOptions::new().append(true).open(&spool).unwrap();
    use std::io::Write;
    writeln!(file, "{first_line}").unwrap();
    write!(file, "{{\"kind\":\"Deliv").unwrap();
    drop(file);

    let (code, before) = home.report(&[]);
    assert_eq!(code, 0, "{before}");
    assert_eq!(before["observedEvents"], 3, "{before}");
    assert_eq!(before["issues"], serde_json::json!(["observation_window_open"]), "{before}");
    assert!(!home.store().exists(), "reporting created nothing");
    let reads: Vec<(i32, serde_json::Value)> = events.iter().map(|event| home.read_event(event)).collect();
    assert_eq!(reads[2].0, 0);
    assert_eq!(reads[2].1["observation"]["sequence"], 3);
    assert_eq!(reads[2].1["observation"]["observation"]["sessionSequence"], 2);

    // beed takes the spool: the answers do not change by a byte.
    let daemon = home.start_daemon();
    assert!(eventually(std::time::Duration::from_secs(10), || home
        .bee_files()
        .iter()
        .any(|(path, _)| path.ends_with("delivery-v1.rejected.jsonl"))));
    home.settle();
    assert_eq!(home.report(&[]), (code, before));
    for (event, read) in events.iter().zip(reads) {
        assert_eq!(home.read_event(event), read, "{event}");
    }
    drop(daemon);
}
