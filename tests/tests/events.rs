//! The hook event pipeline end to end: the reference pipeline's senders and
//! client against beed's loopback listener, `bee-hook event` with beed up
//! and down, the audit and its canary, `hooks install`, hostile bodies.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::io::Write;
use std::net::TcpStream;
use std::process::{Output, Stdio};
use std::time::Duration;
use tokio_tungstenite::tungstenite::{self, Message};

const REFERENCE_APP: &str = "cc-hook-multi-agent-obvs";

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(bytes)))
}

/// The body the reference's `send_event.py` posts for a PreToolUse hook.
fn reference_body(session: &str, timestamp: i64) -> Value {
    let input = json!({
        "session_id": session,
        "transcript_path": format!("/home/dev/.claude/projects/-home-dev-app/{session}.jsonl"),
        "cwd": "/home/dev/app",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test", "description": "Run the tests"},
        "tool_use_id": "toolu_01ABCDEF"
    });
    json!({
        "source_app": REFERENCE_APP,
        "session_id": session,
        "hook_event_type": "PreToolUse",
        "payload": input,
        "timestamp": timestamp,
        "model_name": "claude-sonnet-4-5-20250929",
        "tool_name": "Bash",
        "tool_use_id": "toolu_01ABCDEF"
    })
}

fn reference_post(addr: &str, body: &[u8]) -> (u16, Value) {
    let request = format!(
        "POST /events HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nUser-Agent: Claude-Code-Hook/1.0\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    let (status, _, answer) = tcp_http(addr, &bytes);
    (status, json_of(&answer))
}

fn get_json(daemon: &Daemon, path: &str) -> (u16, Value) {
    let addr = daemon.http_addr();
    let (status, _, body) = tcp_http(&addr, &get_request(path, &addr, &daemon.read_header()));
    (status, json_of(&body))
}

type Client = tungstenite::WebSocket<TcpStream>;

fn stream_client(daemon: &Daemon) -> Client {
    use tungstenite::client::IntoClientRequest;
    let addr = daemon.http_addr();
    let tcp = TcpStream::connect(&addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut request = format!("ws://{addr}/stream").into_client_request().unwrap();
    if let Some(secret) = daemon.http_secret() {
        request.headers_mut().insert("Authorization", format!("Bearer {secret}").parse().unwrap());
    }
    tungstenite::client(request, tcp).unwrap().0
}

fn next_message(client: &mut Client) -> Value {
    loop {
        match client.read().unwrap() {
            Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
            Message::Close(_) => panic!("stream closed"),
            _ => {}
        }
    }
}

fn without_id(event: &Value) -> Value {
    let mut event = event.clone();
    event.as_object_mut().unwrap().remove("id");
    event
}

#[test]
fn the_reference_senders_and_client_work_unchanged_on_the_loopback_listener() {
    let home = TestHome::new();
    // The reference client sends no secret: it needs open reads.
    let daemon = home.start_daemon_with(&[
        "--http",
        "127.0.0.1:0",
        "--http-open-reads",
        "--ingest-every",
        "0",
        "--capture-payload",
        REFERENCE_APP,
    ]);
    let addr = daemon.http_addr();
    let mut watcher = stream_client(&daemon);
    assert_eq!(next_message(&mut watcher), json!({"type": "initial", "data": []}));

    let session = "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d";
    let first = reference_body(session, 1_796_000_000_000);
    let (status, saved) = reference_post(&addr, first.to_string().as_bytes());
    assert_eq!(status, 200);
    assert!(saved["id"].as_i64().unwrap() > 0, "the stored id is the transport receipt");
    assert_eq!(without_id(&saved), first, "the saved event is the input plus its id");
    assert_eq!(next_message(&mut watcher), json!({"type": "event", "data": saved}));

    // Without a timestamp the server stamps one; chat and summary (--add-chat, --summarize) are kept when opted in.
    let mut second = reference_body(session, 0);
    second.as_object_mut().unwrap().remove("timestamp");
    second["hook_event_type"] = json!("Stop");
    second["chat"] = json!([{"type": "user", "message": {"role": "user", "content": "run the tests"}}]);
    second["summary"] = json!("Ran the test suite");
    let (status, saved_second) = reference_post(&addr, second.to_string().as_bytes());
    assert_eq!(status, 200);
    assert!(saved_second["timestamp"].as_i64().unwrap() > 1_700_000_000_000);
    assert_eq!(saved_second["chat"], second["chat"]);
    assert_eq!(next_message(&mut watcher)["data"]["id"], saved_second["id"]);

    for (body, error) in [
        (
            json!({"source_app": REFERENCE_APP, "session_id": session, "payload": {}}).to_string(),
            "Missing required fields",
        ),
        (
            json!({"source_app": "", "session_id": session, "hook_event_type": "Stop", "payload": {}}).to_string(),
            "Missing required fields",
        ),
        ("{not json".to_owned(), "Invalid request"),
    ] {
        let (status, answer) = reference_post(&addr, body.as_bytes());
        assert_eq!((status, answer), (400, json!({"error": error})), "{body}");
    }

    let (status, recent) = get_json(&daemon, "/events/recent?limit=10");
    assert_eq!(status, 200);
    assert_eq!(recent, json!([saved, saved_second]), "oldest first");
    assert_eq!(get_json(&daemon, "/events/recent?limit=1").1, json!([saved_second]));
    let (_, options) = get_json(&daemon, "/events/filter-options");
    assert_eq!(
        options,
        json!({"source_apps": [REFERENCE_APP], "session_ids": [session], "hook_event_types": ["PreToolUse", "Stop"]})
    );
    let mut late_client = stream_client(&daemon);
    assert_eq!(next_message(&mut late_client), json!({"type": "initial", "data": [saved, saved_second]}));

    let (status, health) = get_json(&daemon, "/health");
    assert_eq!((status, health["status"].clone()), (200, json!("ok")));
    let checks: Vec<&str> = health["checks"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    // The agents' logs' ingestion is a check of its own (beed ingests here).
    assert_eq!(checks, ["store_write", "store_read", "stream", "ingestion"]);
    assert_eq!(tcp_http(&addr, &get_request("/no/such/path", &addr, "")).0, 404, "no catch-all 200");
    let (status, head, page) = tcp_http(&addr, &get_request("/", &addr, ""));
    assert_eq!(status, 200);
    assert!(head.to_ascii_lowercase().contains("content-type: text/html"));
    assert!(String::from_utf8_lossy(&page).contains("/stream"));

    // CORS for loopback origins only; a foreign Host is refused (DNS rebinding).
    let preflight = |origin: &str| {
        let request = format!(
            "OPTIONS /events HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n"
        );
        tcp_http(&addr, request.as_bytes()).1.to_ascii_lowercase()
    };
    assert!(preflight("http://localhost:5173").contains("access-control-allow-origin: http://localhost:5173"));
    assert!(!preflight("http://evil.example").contains("access-control-allow-origin"));
    assert_eq!(tcp_http(&addr, &get_request("/events/recent", "evil.example:4000", "")).0, 403);
    // The socket's own API is not on the TCP listener.
    assert_eq!(tcp_http(&addr, &get_request("/v1/status", &addr, "")).0, 404);
    drop(daemon);
}

#[test]
fn without_opt_in_only_metadata_is_stored() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let mut body = reference_body("s-private", 1_796_000_000_000);
    body["chat"] = json!([{"content": "secret plans"}]);
    body["error"] = json!("stack trace with /home/dev/secret");
    let (status, saved) = reference_post(&addr, body.to_string().as_bytes());
    assert_eq!(status, 200);
    assert_eq!(
        saved["payload"],
        json!({"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_use_id": "toolu_01ABCDEF"}),
        "ids and small enums only"
    );
    assert_eq!(saved["tool_name"], "Bash");
    drop(daemon);
    for (path, bytes) in home.bee_files() {
        let text = String::from_utf8_lossy(&bytes);
        for secret in ["cargo test", "secret plans", "stack trace", "/home/dev/app"] {
            assert!(!text.contains(secret), "{secret} stored in {}", path.display());
        }
    }
}

/// `bee-hook event --capture-payload` alone stores the whole hook input —
/// beed needs no `--capture-payload` of its own — and so does the spool's
/// replay of a captured event sent while beed was down; without it, only
/// metadata.
#[test]
fn the_hooks_own_capture_opt_in_is_enough() {
    let home = TestHome::new();
    let recent = || {
        let (_, _, body) = raw_http(&home.socket(), &get_request("/events/recent", "beed", ""));
        json_of(&body)
    };
    let stored = |session: &str| {
        recent().as_array().unwrap().iter().find(|e| e["session_id"] == session).cloned().unwrap_or(Value::Null)
    };
    // Down first: the captured event waits in the spool, whole.
    let spooled =
        hook_event(&home, &envelope("s-spooled", "PreToolUse"), &["--source-app", "web", "--capture-payload"]);
    assert_eq!(spooled.status.code(), Some(0));
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    assert!(eventually(Duration::from_secs(10), || !stored("s-spooled").is_null()));
    let direct = hook_event(&home, &envelope("s-direct", "PreToolUse"), &["--source-app", "web", "--capture-payload"]);
    assert_eq!(direct.status.code(), Some(0));
    let plain = hook_event(&home, &envelope("s-plain", "PreToolUse"), &["--source-app", "web"]);
    assert_eq!(plain.status.code(), Some(0));
    for session in ["s-spooled", "s-direct"] {
        let event = stored(session);
        assert_eq!(event["payload"]["tool_input"]["old_string"], "a", "{session}: {event}");
        assert!(event.get(bee_proto::events::CAPTURE_FIELD).is_none(), "the opt-in is not stored: {event}");
    }
    let event = stored("s-plain");
    assert!(event["payload"].get("tool_input").is_none() && event["payload"]["tool_name"] == "Edit", "{event}");
    drop(daemon);
}

#[test]
fn hostile_event_bodies_get_clear_errors_and_lose_nothing() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let good = reference_body("s-hostile", 1_796_000_000_000).to_string();
    assert_eq!(reference_post(&addr, good.as_bytes()).0, 200);
    let nested = "[".repeat(10_000) + &"]".repeat(10_000);
    let huge = vec![b'x'; 4 * 1024 * 1024 + 1];
    let cases: Vec<(Vec<u8>, u16)> = vec![
        (b"\xff\xfe\x00garbage".to_vec(), 400),
        (nested.into_bytes(), 400),
        (br#"{"source_app":"a","session_id":"s","hook_event_type":"X","payload":{},"timestamp":1e400}"#.to_vec(), 400),
        (br#"{"source_app":"a","session_id":"s","hook_event_type":"X","payload":[1]}"#.to_vec(), 400),
        (huge, 413),
    ];
    for (body, expected) in cases {
        let (status, _) = reference_post(&addr, &body);
        assert_eq!(status, expected, "{}", String::from_utf8_lossy(&body[..body.len().min(80)]));
    }
    let (_, recent) = get_json(&daemon, "/events/recent");
    assert_eq!(recent.as_array().unwrap().len(), 1, "the stored event is still there, nothing else");
    for limit in ["abc", "-1", "1e3", "99999999999999999999999", "%ZZ", "%FF%FE"] {
        let (status, answer) = get_json(&daemon, &format!("/events/recent?limit={limit}"));
        assert_eq!((status, answer), (400, json!({"error": "Invalid request"})), "{limit}");
    }
    assert_eq!(get_json(&daemon, "/events/recent?limit=0").1, json!([]));
    // The reference client's theme list: empty, not a 404.
    assert_eq!(get_json(&daemon, "/api/themes"), (200, json!([])));
    // Over the socket too, with the socket's protocol header on the answer.
    let (status, head, _) = raw_http(&home.socket(), &post_request("/events", "", b"{}"));
    assert_eq!(status, 400);
    assert!(head.contains("bee-protocol: 1"));
    drop(daemon);
}

fn hook_event(home: &TestHome, envelope: &[u8], extra: &[&str]) -> Output {
    let mut command = home.command(bin("bee-hook"));
    command.arg("event").args(extra).env("BEE_HOOK_DEBUG", "1");
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    // A misconfigured bee-hook exits without reading its input.
    let _ = child.stdin.take().unwrap().write_all(envelope);
    child.wait_with_output().unwrap()
}

fn envelope(session: &str, event: &str) -> Vec<u8> {
    json!({"session_id": session, "transcript_path": "/home/dev/.claude/projects/x.jsonl", "cwd": "/home/dev/app",
           "permission_mode": "default", "hook_event_name": event, "tool_name": "Edit",
           "tool_input": {"file_path": "/home/dev/app/src/main.rs", "old_string": "a", "new_string": "b"}, "tool_use_id": "toolu_9"})
    .to_string()
    .into_bytes()
}

/// `beectl audit …` with the real Claude Code CLI on PATH (the audit asks
/// it for its version), exit 0.
fn audit(home: &TestHome, args: &[&str]) -> Value {
    let output = audit_with_path(home, args, &with_claude_path());
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    parse_json_line(&output.stdout)
}

fn audit_with_path(home: &TestHome, args: &[&str], path: &str) -> std::process::Output {
    let mut command = home.command(bin("beectl"));
    command.arg("audit").args(args).env("PATH", path).stdin(std::process::Stdio::null());
    command.output().unwrap()
}

/// PATH with the pinned, real `claude` first.
fn with_claude_path() -> String {
    let claude = bee_tests::providers::claude_cli();
    format!("{}:{}", claude.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default())
}

/// PATH without any `claude`.
const NO_CLAUDE_PATH: &str = "/usr/bin:/bin";

#[test]
fn bee_hook_event_never_blocks_and_never_hides_a_failure() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let delivered = hook_event(&home, &envelope("s-up", "PreToolUse"), &["--source-app", "web"]);
    assert_eq!((delivered.status.code(), delivered.stdout.as_slice()), (Some(0), &b""[..]), "prints nothing");
    let said = String::from_utf8(delivered.stderr).unwrap();
    let id: i64 = said
        .trim()
        .strip_prefix(bee_proto::events::RECEIPT_PREFIX)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (_, _, recent) = raw_http(&home.socket(), &get_request("/events/recent", "beed", ""));
    let recent = json_of(&recent);
    assert_eq!(recent[0]["id"], id);
    assert_eq!(recent[0]["hook_event_type"], "PreToolUse");
    assert!(!recent.to_string().contains("old_string"), "tool input is not stored by default");
    drop(daemon);

    // beed down: still exit 0 and silent on stdout, but said and spooled.
    let lost = hook_event(&home, &envelope("s-down", "Stop"), &["--source-app", "web"]);
    assert_eq!((lost.status.code(), lost.stdout.as_slice()), (Some(0), &b""[..]));
    let said = String::from_utf8(lost.stderr).unwrap();
    assert!(said.contains("event not delivered: beed is not reachable; kept in the spool"), "{said}");
    let spool = std::fs::read_to_string(home.spool_dir().join("events.jsonl")).unwrap();
    assert!(spool.contains("\"failure\":\"unreachable\"") && spool.contains("s-down"));
    assert_eq!(audit(&home, &["--session", "s-down"])["class"], "delivery_failed_hidden");
    // Delivered and stored; but no manifest, no outcome check and (beed
    // down) no stream to check: never healthy, and it says what is unproven.
    let up = audit(&home, &["--session", "s-up"]);
    assert_eq!(up["class"], "dashboard_stale", "{up}");
    assert_eq!(up["evidence"]["unverified"], json!(["configuration", "presentation", "coverage", "outcome"]), "{up}");
    let unknown = home.beectl(&["audit", "--session", "never-seen"]);
    assert_eq!(unknown.status.code(), Some(5));
    assert_eq!(parse_json_line(&unknown.stdout)["errorCode"], "no_such_session");

    // Back up: the spooled event is stored, and the evidence of how it came stays.
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    assert!(eventually(Duration::from_secs(10), || !home.spool_dir().join("events.jsonl").exists()));
    let report = audit(&home, &["--session", "s-down"]);
    assert_eq!(report["class"], "delivery_failed_hidden");
    assert!(report["receipts"].to_string().contains("arrived through the spool (unreachable)"), "{report}");

    // Misconfigured or fed garbage: exit 0, a word on stderr, nothing spooled or stored.
    for (input, args) in [
        (b"\xff\xfe not json".to_vec(), vec!["--source-app", "web"]),
        (b"{\"hook_event_name\":\"Stop\"}".to_vec(), vec!["--source-app", "web"]),
        (envelope("s-x", "Stop"), vec![]),
    ] {
        let output = hook_event(&home, &input, &args);
        assert_eq!((output.status.code(), output.stdout.as_slice()), (Some(0), &b""[..]));
        assert!(!output.stderr.is_empty());
    }
    assert!(!home.spool_dir().join("events.jsonl").exists());
    drop(daemon);
}

#[test]
fn the_canary_proves_each_receipt_and_names_what_broke() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    // No manifest pinned: every receipt passes, and still the run is not healthy.
    let unpinned = audit(&home, &["canary"]);
    assert_eq!(unpinned["class"], "manifest_drift", "{unpinned}");
    assert_eq!(unpinned["evidence"]["unverified"], json!(["configuration", "outcome"]), "{unpinned}");
    let receipts = unpinned["receipts"].as_array().unwrap();
    let status = |boundary: &str| receipts.iter().find(|r| r["boundary"] == boundary).unwrap()["status"].clone();
    for boundary in ["transport", "persistence", "presentation", "coverage"] {
        assert_eq!(status(boundary), "pass", "{boundary}: {unpinned}");
    }
    let transport = receipts.iter().find(|r| r["boundary"] == "transport").unwrap()["evidence"].to_string();
    for event in ["SessionStart", "PreToolUse", "PostToolUse", "Stop"] {
        assert!(transport.contains(event), "the whole known sequence: {transport}");
    }
    // Pinned: the manifest's events configured for the canary's app, the
    // installed Claude Code's version, an outcome check.
    let project = home.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let events = "SessionStart,PreToolUse,PostToolUse,Stop";
    let wired = home.beectl(&[
        "hooks",
        "install",
        "--project",
        project.to_str().unwrap(),
        "--events",
        events,
        "--source-app",
        "bee-canary",
    ]);
    assert_eq!(wired.status.code(), Some(0));
    let settings = project.join(".claude/settings.json");
    let required: Vec<Value> = events.split(',').map(|event| json!({"event": event, "deadlineSeconds": 30})).collect();
    let pinned = |version: &str| {
        let manifest = json!({"schemaVersion": 1, "claudeCodeVersion": version, "sourceApp": "bee-canary",
            "requiredEvents": required, "outcome": [{"command": {"argv": ["true"]}}]});
        home.file(&format!("manifest-{version}.json"), manifest.to_string().as_bytes()).to_str().unwrap().to_owned()
    };
    let current = pinned("2.1");
    let args = ["canary", "--manifest", current.as_str(), "--settings", settings.to_str().unwrap()];
    let healthy = audit(&home, &args);
    assert_eq!(healthy["class"], "healthy", "{healthy}");
    assert_eq!(healthy["evidence"]["unverified"], json!([]));
    let table = String::from_utf8(
        audit_with_path(&home, &[&args[..], &["--format", "table"]].concat(), &with_claude_path()).stdout,
    )
    .unwrap();
    for boundary in ["configuration", "transport", "persistence", "presentation", "coverage", "outcome"] {
        assert!(table.contains(boundary), "{table}");
    }
    // No claude to ask: the pinned version was not checked, so no pass.
    let unchecked = parse_json_line(&audit_with_path(&home, &args, NO_CLAUDE_PATH).stdout);
    assert_eq!(unchecked["class"], "manifest_drift", "{unchecked}");
    let configuration = &unchecked["receipts"][0];
    assert_eq!(
        (configuration["boundary"].clone(), configuration["status"].clone()),
        (json!("configuration"), json!("unknown"))
    );
    assert!(configuration["evidence"].as_str().unwrap().contains("was not checked"), "{configuration}");
    // Another pinned version: drift names what was expected and what was found.
    let old = pinned("2.0");
    let drift = audit(&home, &["canary", "--manifest", old.as_str(), "--settings", settings.to_str().unwrap()]);
    assert_eq!(drift["class"], "manifest_drift");
    let said = drift["evidence"]["drift"][0].as_str().unwrap().to_owned();
    assert!(said.starts_with("claude_code_version:expected 2.0, found 2.1."), "{said}");
    // A gate a CI can use: exit 5 when the class is listed.
    let gated = audit_with_path(&home, &["canary", "--fail-on", "unhealthy"], &with_claude_path());
    assert_eq!(gated.status.code(), Some(5), "no manifest: not healthy, so the gate fails");
    assert_eq!(parse_json_line(&gated.stdout)["class"], "manifest_drift", "the report is printed all the same");
    let passed = audit_with_path(&home, &[&args[..], &["--fail-on", "unhealthy"]].concat(), &with_claude_path());
    assert_eq!(passed.status.code(), Some(0));
    let bad = audit_with_path(&home, &["canary", "--fail-on", "sad"], &with_claude_path());
    assert_eq!(bad.status.code(), Some(4));
    // The dashboard's own stream proves presentation too.
    let stream = format!("ws://{addr}/stream");
    let via_tcp = audit(&home, &[&args[..], &["--stream", stream.as_str()]].concat());
    assert_eq!(via_tcp["class"], "healthy");
    // A stream nobody serves: stored, not presented.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("ws://{}/stream", closed.local_addr().unwrap());
    drop(closed);
    let stale = audit(&home, &[&args[..], &["--stream", dead.as_str()]].concat());
    assert_eq!(stale["class"], "dashboard_stale", "{stale}");
    // The canary's events carry nothing but opaque fields.
    let (_, _, recent) = raw_http(&home.socket(), &get_request("/events/recent", "beed", ""));
    let recent = json_of(&recent);
    let last_four: Vec<&Value> = recent.as_array().unwrap().iter().rev().take(4).collect();
    let kinds: Vec<&str> = last_four.iter().rev().map(|e| e["hook_event_type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["SessionStart", "PreToolUse", "PostToolUse", "Stop"]);
    for event in last_four {
        assert_eq!(event["source_app"], "bee-canary");
        let tool = &event["payload"]["tool_name"];
        assert!(tool.is_null() || tool == "bee_canary", "{event}");
    }
    drop(daemon);

    let hidden = audit(&home, &args);
    assert_eq!(hidden["class"], "delivery_failed_hidden", "{hidden}");
    assert!(hidden["receipts"].to_string().contains("kept in the spool"));
}

#[test]
fn the_manifest_is_judged_against_settings_deadlines_and_outcomes() {
    let home = TestHome::new();
    let project = home.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let project_str = project.to_str().unwrap();
    let installed = home.beectl(&[
        "hooks",
        "install",
        "--project",
        project_str,
        "--events",
        "PreToolUse,Stop,PermissionRequest",
        "--source-app",
        "web",
    ]);
    assert_eq!(installed.status.code(), Some(0));
    let settings = project.join(".claude/settings.json");
    let manifest = |required: Value, outcome: Value| {
        let path = home.file(
            &format!("manifest-{}.json", uuid::Uuid::new_v4().simple()),
            json!({"schemaVersion": 1, "claudeCodeVersion": "2.1", "sourceApp": "web", "requiredEvents": required,
                   "outcome": outcome})
            .to_string()
            .as_bytes(),
        );
        path.to_str().unwrap().to_owned()
    };
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let session = "s-manifest";
    hook_event(&home, &envelope(session, "PreToolUse"), &["--source-app", "web"]);
    let judge = |manifest: &str| {
        audit(&home, &["--session", session, "--manifest", manifest, "--settings", settings.to_str().unwrap()])
    };
    let drift = judge(&manifest(json!([{"event": "PreToolUse"}, {"event": "TeammateIdle"}]), json!([])));
    assert_eq!(drift["class"], "manifest_drift");
    assert_eq!(drift["evidence"]["drift"], json!(["not_configured:TeammateIdle"]));
    let strict = manifest(
        json!([{"event": "PreToolUse", "deadlineSeconds": 0}, {"event": "Stop", "deadlineSeconds": 0}]),
        json!([]),
    );
    assert_eq!(judge(&strict)["class"], "coverage_gap");
    let relaxed = manifest(
        json!([{"event": "PreToolUse"}, {"event": "Stop", "deadlineSeconds": 3600}]),
        json!([{"command": {"argv": ["true"]}}]),
    );
    assert_eq!(judge(&relaxed)["class"], "healthy", "Stop is not due yet");
    let unchecked = manifest(json!([{"event": "PreToolUse"}, {"event": "Stop", "deadlineSeconds": 3600}]), json!([]));
    assert_eq!(judge(&unchecked)["class"], "false_complete", "no outcome check: never healthy");

    // A permission request routed to a named owner with a deadline ahead.
    let deadline = bee_proto::time::now_unix_ms() + 600_000;
    let wait = json!({"source_app": "web", "session_id": session, "hook_event_type": "PermissionRequest",
                      "payload": {"tool_name": "Bash"}, "owner": "release-manager", "deadline": deadline});
    let (status, _, _) = raw_http(&home.socket(), &post_request("/events", "", wait.to_string().as_bytes()));
    assert_eq!(status, 200);
    assert_eq!(judge(&strict)["class"], "waiting");

    hook_event(&home, &envelope(session, "Stop"), &["--source-app", "web"]);
    let done = home.file("app/DONE", b"release notes written\n");
    let with_outcome = |outcome: Value| manifest(json!([{"event": "PreToolUse"}, {"event": "Stop"}]), outcome);
    let passing = with_outcome(
        json!([{"file": {"path": done.to_str().unwrap(), "contains": "release notes"}}, {"command": {"argv": ["true"]}}]),
    );
    assert_eq!(judge(&passing)["class"], "healthy");
    let failing = with_outcome(json!([{"command": {"argv": ["false"]}}]));
    let report = judge(&failing);
    assert_eq!(report["class"], "false_complete");
    assert!(report["receipts"].to_string().contains("command false exited 1"));
    assert_eq!(judge(&with_outcome(json!([])))["class"], "false_complete", "Stop without an outcome receipt");

    // Claude Code's own PermissionRequest carries no owner and no deadline:
    // the manifest's wait policy for the event and tool names them.
    let asks = "s-asks";
    let request = json!({"session_id": asks, "transcript_path": "/home/dev/.claude/projects/x.jsonl", "cwd": "/home/dev/app",
        "permission_mode": "default", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": "cargo publish", "description": "Publish the crate"}});
    let mut envelope = request.clone();
    envelope["hook_event_name"] = json!("PreToolUse");
    hook_event(&home, envelope.to_string().as_bytes(), &["--source-app", "web"]);
    hook_event(&home, request.to_string().as_bytes(), &["--source-app", "web"]);
    let policy = |waits: Value| {
        let path = home.file(
            &format!("manifest-{}.json", uuid::Uuid::new_v4().simple()),
            json!({"schemaVersion": 1, "claudeCodeVersion": "2.1", "sourceApp": "web",
                   "requiredEvents": [{"event": "PreToolUse"}, {"event": "Stop", "deadlineSeconds": 3600}],
                   "outcome": [{"command": {"argv": ["true"]}}], "waitPolicies": waits})
            .to_string()
            .as_bytes(),
        );
        let manifest = path.to_str().unwrap().to_owned();
        audit(&home, &["--session", asks, "--manifest", &manifest, "--settings", settings.to_str().unwrap()])
    };
    let routed = policy(json!([
        {"event": "PermissionRequest", "owner": "anyone", "deadlineSeconds": 60},
        {"event": "PermissionRequest", "tool": "Bash", "owner": "release-manager", "deadlineSeconds": 900}
    ]));
    assert_eq!(routed["class"], "waiting", "{routed}");
    assert_eq!(routed["evidence"]["waiting"]["owner"], "release-manager", "the tool's own policy first: {routed}");
    let unrouted = policy(json!([]));
    assert_ne!(unrouted["class"], "waiting", "no owner, no wait: {unrouted}");
    let expired = policy(json!([{"event": "PermissionRequest", "owner": "release-manager", "deadlineSeconds": 0}]));
    assert_ne!(expired["class"], "waiting", "a deadline gone is no wait: {expired}");

    let broken = home.file("broken.json", b"{\"schemaVersion\": 1, \"surprise\": true}");
    let output = home.beectl(&["audit", "--manifest", broken.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(5));
    assert_eq!(parse_json_line(&output.stdout)["issues"], json!(["manifest_invalid"]));
    drop(daemon);
}

/// A session's presentation receipt is judged from what the stream
/// delivered for that session (its own replay), never from where its events
/// stand among everyone's latest 300: a flood from another app flips
/// neither the receipt nor the verdict, and a real finding (drift) still
/// shows through.
#[test]
fn another_apps_traffic_cannot_flip_a_sessions_presentation_or_hide_its_findings() {
    let home = TestHome::new();
    let project = home.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let installed = home.beectl(&[
        "hooks",
        "install",
        "--project",
        project.to_str().unwrap(),
        "--events",
        "PreToolUse",
        "--source-app",
        "web",
    ]);
    assert_eq!(installed.status.code(), Some(0));
    let settings = project.join(".claude/settings.json");
    let drifted = home.file(
        "manifest-drift.json",
        json!({"schemaVersion": 1, "claudeCodeVersion": "2.1", "sourceApp": "web",
               "requiredEvents": [{"event": "PreToolUse"}, {"event": "TeammateIdle"}], "outcome": []})
        .to_string()
        .as_bytes(),
    );
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let session = "s-quiet";
    hook_event(&home, &envelope(session, "PreToolUse"), &["--source-app", "web"]);
    let presentation = |report: &Value| {
        let receipts = report["receipts"].as_array().unwrap();
        receipts.iter().find(|r| r["boundary"] == "presentation").unwrap()["status"].clone()
    };
    let judge = || {
        audit(
            &home,
            &["--session", session, "--manifest", drifted.to_str().unwrap(), "--settings", settings.to_str().unwrap()],
        )
    };
    let before = judge();
    assert_eq!((presentation(&before), before["class"].clone()), (json!("pass"), json!("manifest_drift")), "{before}");
    // More than a whole replay of another app's events, all newer.
    let now = bee_proto::time::now_unix_ms();
    for n in 0..(bee_proto::events::REPLAY_EVENTS as i64 + 20) {
        let event = json!({"source_app": "busy", "session_id": "s-busy", "hook_event_type": "Notification",
                           "payload": {}, "timestamp": now + 1_000 + n});
        let (status, _, _) = raw_http(&home.socket(), &post_request("/events", "", event.to_string().as_bytes()));
        assert_eq!(status, 200);
    }
    let after = judge();
    assert_eq!((presentation(&after), after["class"].clone()), (json!("pass"), json!("manifest_drift")), "{after}");
    assert_eq!(after["evidence"]["unpresented"], 0, "{after}");
    assert_eq!(after["evidence"]["drift"], json!(["not_configured:TeammateIdle"]), "{after}");
    drop(daemon);
}

#[test]
fn hooks_install_keeps_every_hook_and_a_second_run_changes_nothing() {
    let home = TestHome::new();
    let project = home.path().join("proj");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let original = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "uv run .claude/hooks/send_event.py --source-app proj --event-type Stop"}]}]
        }
    });
    let settings = project.join(".claude/settings.json");
    std::fs::write(&settings, serde_json::to_string_pretty(&original).unwrap()).unwrap();
    let project_str = project.to_str().unwrap();

    let dry = home.beectl(&["hooks", "install", "--project", project_str, "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0));
    let diff = String::from_utf8(dry.stdout).unwrap();
    assert!(
        diff.contains("+++")
            && diff.contains("+            \"command\": \"")
            && diff.contains("event --source-app proj"),
        "{diff}"
    );
    assert_eq!(json_of(&std::fs::read(&settings).unwrap()), original, "a dry run writes nothing");

    let first = parse_json_line(&home.beectl(&["hooks", "install", "--project", project_str, "--reference"]).stdout);
    assert_eq!(first["changed"], true);
    assert_eq!(first["added"].as_array().unwrap().len(), 12, "the reference's twelve groups");
    let backup = first["backup"].as_str().unwrap();
    assert_eq!(json_of(&std::fs::read(backup).unwrap()), original, "the backup is the file as it was");
    let merged = json_of(&std::fs::read(&settings).unwrap());
    assert_eq!(merged["model"], "opus");
    assert_eq!(merged["permissions"], original["permissions"]);
    assert_eq!(merged["hooks"]["PreToolUse"][0], original["hooks"]["PreToolUse"][0], "the user's hook stays first");
    assert_eq!(merged["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
    assert_eq!(merged["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);

    let second = parse_json_line(&home.beectl(&["hooks", "install", "--project", project_str]).stdout);
    assert_eq!((second["changed"].clone(), second["backup"].clone()), (json!(false), Value::Null));
    assert_eq!(json_of(&std::fs::read(&settings).unwrap()), merged, "nothing changed");
    let dry_again =
        String::from_utf8(home.beectl(&["hooks", "install", "--project", project_str, "--dry-run"]).stdout).unwrap();
    assert!(dry_again.starts_with("no change"), "{dry_again}");
    // Backups live in ~/.bee/backups, never beside the settings (where they get committed).
    assert!(backup.starts_with(home.bee_dir().join("backups").to_str().unwrap()), "{backup}");
    let beside: Vec<_> = std::fs::read_dir(project.join(".claude")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, [std::ffi::OsString::from("settings.json")], "nothing else in .claude/");

    // Another source app replaces Bee's entry; it does not add a second one.
    let renamed = parse_json_line(
        &home.beectl(&["hooks", "install", "--project", project_str, "--reference", "--source-app", "renamed"]).stdout,
    );
    assert_eq!(renamed["added"].as_array().unwrap().len(), 12, "{renamed}");
    let replaced = json_of(&std::fs::read(&settings).unwrap());
    assert_eq!(replaced["hooks"]["PreToolUse"].as_array().unwrap().len(), 2, "replaced in place");
    let text = replaced.to_string();
    assert!(text.contains("event --source-app renamed") && !text.contains("event --source-app proj"), "{text}");

    // Uninstall takes out Bee's hooks and nothing else: the original, byte for byte as JSON.
    let dry_out =
        String::from_utf8(home.beectl(&["hooks", "uninstall", "--project", project_str, "--dry-run"]).stdout).unwrap();
    assert!(dry_out.contains("-") && dry_out.contains("bee-hook"), "{dry_out}");
    let removed = parse_json_line(&home.beectl(&["hooks", "uninstall", "--project", project_str]).stdout);
    assert_eq!(removed["removed"].as_array().unwrap().len(), 12, "{removed}");
    assert_eq!(json_of(&std::fs::read(&settings).unwrap()), original);
    let again = parse_json_line(&home.beectl(&["hooks", "uninstall", "--project", project_str]).stdout);
    assert_eq!(again["changed"], false);

    // --user writes under HOME (a temp dir here); a file that is not JSON is never touched.
    let user = parse_json_line(&home.beectl(&["hooks", "install", "--user", "--events", "Stop"]).stdout);
    assert_eq!(user["added"], json!(["Stop"]));
    assert!(user["settings"].as_str().unwrap().starts_with(home.path().to_str().unwrap()));
    std::fs::write(&settings, b"{ not json").unwrap();
    let refused = home.beectl(&["hooks", "install", "--project", project_str]);
    assert_eq!(refused.status.code(), Some(5));
    assert_eq!(std::fs::read(&settings).unwrap(), b"{ not json");
    let bad = home.beectl(&["hooks", "install", "--project", project_str, "--events", "Stop;rm -rf"]);
    assert_eq!(bad.status.code(), Some(4));
}

#[test]
fn beed_stops_promptly_with_stream_clients_connected() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let mut clients: Vec<Client> = (0..3).map(|_| stream_client(&daemon)).collect();
    for client in &mut clients {
        assert_eq!(next_message(client)["type"], "initial");
    }
    let started = std::time::Instant::now();
    assert_eq!(daemon.stop(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(5), "open streams do not hold the stop");
}

/// By default `hooks install` wires the minimal lifecycle and pins the
/// matching manifest (the installed Claude Code's version) beside the
/// settings, where the audit finds it; team events and the reference's
/// twelve are opt-in.
#[test]
fn hooks_install_wires_the_minimal_lifecycle_and_pins_its_manifest() {
    let home = TestHome::new();
    let project = home.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let install = |args: &[&str], path: &str| {
        let mut command = home.command(bin("beectl"));
        command.args(["hooks", "install", "--project", project.to_str().unwrap()]).args(args).env("PATH", path);
        parse_json_line(&command.output().unwrap().stdout)
    };
    let unpinned = install(&[], NO_CLAUDE_PATH);
    assert_eq!(unpinned["added"], json!(["SessionStart", "PreToolUse", "PostToolUse", "Stop"]));
    assert_eq!(unpinned["manifest"], Value::Null);
    assert!(unpinned["manifestStatus"].as_str().unwrap().contains("no claude"), "{unpinned}");
    let team = install(&["--team", "--source-app", "app"], &with_claude_path());
    assert_eq!(team["added"], json!(["SubagentStart", "SubagentStop", "TaskCreated", "TaskCompleted", "TeammateIdle"]));
    let manifest_path = project.join(".claude/bee-manifest.json");
    assert_eq!(team["manifest"], manifest_path.to_str().unwrap());
    let manifest = json_of(&std::fs::read(&manifest_path).unwrap());
    assert_eq!(manifest["claudeCodeVersion"], "2.1", "the installed Claude Code, major.minor: {manifest}");
    assert_eq!(manifest["requiredEvents"].as_array().unwrap().len(), 9);
    assert_eq!(mode_of(&manifest_path), 0o600);
    // A manifest there is the user's: kept, not rewritten.
    std::fs::write(
        &manifest_path,
        serde_json::to_vec(&json!({"schemaVersion": 1, "claudeCodeVersion": "2.1",
        "sourceApp": "app", "requiredEvents": [{"event": "Stop"}], "outcome": [{"command": {"argv": ["true"]}}]}))
        .unwrap(),
    )
    .unwrap();
    let kept = install(&["--source-app", "app"], &with_claude_path());
    assert_eq!(kept["manifestStatus"], "kept");
    // The audit run in the project finds it by itself.
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    hook_event(&home, &envelope("s-pinned", "Stop"), &["--source-app", "app"]);
    let mut audit = home.command(bin("beectl"));
    audit.args(["audit", "--session", "s-pinned"]).current_dir(&project).env("PATH", with_claude_path());
    let report = parse_json_line(&audit.output().unwrap().stdout);
    assert_eq!(report["class"], "healthy", "pinned manifest found, outcome passed: {report}");
    drop(daemon);
}

fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_contrib_snippet_configures_the_reference_events() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../contrib/claude-code/settings-events.json");
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let configured = bee_daemon::events::claude_settings::configured_events(&settings, "my-app");
    let reference: std::collections::BTreeSet<String> =
        bee_daemon::events::claude_settings::REFERENCE_EVENTS.iter().map(|e| (*e).to_owned()).collect();
    assert_eq!(configured, reference);
    // The same twelve with the turn marks and a steering block: one Bee
    // entry, so one process, per event.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../contrib/claude-code/settings-one-entry.json");
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(bee_daemon::events::claude_settings::configured_events(&settings, "my-app"), reference);
    for (event, groups) in settings["hooks"].as_object().unwrap() {
        let roles: Vec<_> = groups
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|group| group["hooks"].as_array().unwrap())
            .filter_map(|hook| bee_daemon::events::claude_settings::Roles::of_command(hook["command"].as_str()?))
            .collect();
        assert_eq!(roles.len(), 1, "{event}");
        assert_eq!(
            (roles[0].turn, roles[0].block.is_some()),
            (event == "UserPromptSubmit" || event == "Stop", event == "UserPromptSubmit"),
            "{event}"
        );
    }
}

/// `/events/recent` without a limit answers the reference client's 300.
#[test]
fn recent_events_default_to_the_reference_clients_300() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    for n in 0..310 {
        let event = json!({"source_app": "web", "session_id": "s-many", "hook_event_type": "Notification",
                           "payload": {}, "timestamp": 1_796_000_000_000i64 + n});
        let (status, _, _) = raw_http(&home.socket(), &post_request("/events", "", event.to_string().as_bytes()));
        assert_eq!(status, 200);
    }
    let (_, _, body) = raw_http(&home.socket(), &get_request("/events/recent", "beed", ""));
    let recent = json_of(&body);
    assert_eq!(recent.as_array().unwrap().len(), 300);
    drop(daemon);
}

/// The reference's human-in-the-loop round trip, with its exact bodies: an
/// agent (`utils/hitl.py`) posts a question with the WebSocket it waits on;
/// the event is stored pending and streamed; the reference client answers
/// with `POST /events/:id/respond`; beed keeps the answer, delivers it to
/// the agent's WebSocket and streams the answered event.
#[test]
fn a_human_in_the_loop_question_reaches_the_client_and_its_answer_the_agent() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--http-open-reads", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let mut watcher = stream_client(&daemon);
    assert_eq!(next_message(&mut watcher)["type"], "initial");

    // The agent's side: a WebSocket server waiting for one answer.
    let agent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let agent_port = agent.local_addr().unwrap().port();
    let (answered, answer) = std::sync::mpsc::channel();
    let waiting = std::thread::spawn(move || {
        let (tcp, _) = agent.accept().unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut socket = tungstenite::accept(tcp).unwrap();
        loop {
            match socket.read() {
                Ok(Message::Text(text)) => {
                    answered.send(text.to_string()).unwrap();
                    return;
                }
                Ok(_) => {}
                Err(err) => panic!("the agent got no answer: {err}"),
            }
        }
    });

    let session = "7c6b5a49-3827-4615-9504-f3e2d1c0b9a8";
    let question = json!({
        "question": "Deploy to staging?",
        "responseWebSocketUrl": format!("ws://localhost:{agent_port}"),
        "type": "choice",
        "choices": ["yes", "no"],
        "timeout": 300,
        "requiresResponse": true
    });
    let request = json!({
        "source_app": REFERENCE_APP,
        "session_id": session,
        "hook_event_type": "PreToolUse",
        "payload": {"tool_name": "Bash", "tool_input": {"command": "make deploy"}},
        "humanInTheLoop": question,
        "timestamp": 1_796_000_000_000i64
    });
    let (status, saved) = reference_post(&addr, request.to_string().as_bytes());
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["humanInTheLoop"], question, "the question is kept, capture or not: it is for the operator");
    assert_eq!(saved["humanInTheLoopStatus"], json!({"status": "pending"}));
    assert_eq!(saved["payload"], json!({"tool_name": "Bash"}), "the rest follows the capture rule");
    assert_eq!(next_message(&mut watcher), json!({"type": "event", "data": saved}));
    let id = saved["id"].as_i64().unwrap();

    // The reference client's answer (EventRow.vue's submitChoice), from its page's origin.
    let respond = |path: &str, body: &[u8], extra: &str| {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://localhost:5173\r\nContent-Type: application/json\r\n\
             {extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        let (status, _, answer) = tcp_http(&addr, &bytes);
        (status, json_of(&answer))
    };
    let choice = json!({"choice": "yes", "hookEvent": saved, "respondedAt": 1_796_000_001_000i64});
    // Open reads do not open answers: without the secret, only the user's
    // own processes answer, from no page or an origin `--http-allow-origin`
    // named — none here, so the client presents the secret `beectl dashboard` gives.
    let secret = daemon.read_header();
    assert!(!secret.is_empty(), "open reads still keep the secret answers need");
    let (status, refused) = respond(&format!("/events/{id}/respond"), choice.to_string().as_bytes(), "");
    assert_eq!(status, 403, "{refused}");
    let (status, updated) = respond(&format!("/events/{id}/respond"), choice.to_string().as_bytes(), &secret);
    assert_eq!(status, 200, "{updated}");
    let answered_at = updated["humanInTheLoopStatus"]["respondedAt"].as_i64().unwrap();
    assert!(answered_at > 1_796_000_001_000, "beed stamps the answer's time, as the reference does");
    assert_eq!(
        updated["humanInTheLoopStatus"],
        json!({"status": "responded", "respondedAt": answered_at,
               "response": {"choice": "yes", "respondedAt": answered_at}}),
        "the answer is kept without the client's copy of the event"
    );
    assert_eq!((updated["id"].clone(), updated["humanInTheLoop"].clone()), (json!(id), question));

    // The agent got the answer whole, the event included, as the reference sends it.
    let delivered: Value = serde_json::from_str(&answer.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    assert_eq!((delivered["choice"].clone(), delivered["hookEvent"]["id"].clone()), (json!("yes"), json!(id)));
    assert_eq!(delivered["respondedAt"], json!(answered_at));
    waiting.join().unwrap();

    // Every client sees the answered event, and the recent view keeps it.
    assert_eq!(next_message(&mut watcher), json!({"type": "event", "data": updated}));
    assert_eq!(get_json(&daemon, "/events/recent").1, json!([updated]));
    let mut late = stream_client(&daemon);
    assert_eq!(next_message(&mut late), json!({"type": "initial", "data": [updated]}));

    // A second answer is refused: the first stands, as the agent acted on it.
    let (status, second) = respond(&format!("/events/{id}/respond"), br#"{"choice":"no"}"#, &secret);
    assert_eq!((status, second["error"].as_str().unwrap_or_default().contains("first answer stands")), (409, true));
    assert_eq!(get_json(&daemon, "/events/recent").1, json!([updated]), "the stored answer is the first");
    // An event that asked nothing cannot be answered.
    let mut plain = request.clone();
    plain.as_object_mut().unwrap().remove("humanInTheLoop");
    let (_, asked_nothing) = reference_post(&addr, plain.to_string().as_bytes());
    let (status, _) = respond(&format!("/events/{}/respond", asked_nothing["id"]), br#"{"permission":true}"#, &secret);
    assert_eq!(status, 409);

    // The reference's errors: an unknown event, a body that is not JSON, a path that is no event id.
    assert_eq!(respond("/events/999999/respond", b"{}", &secret), (404, json!({"error": "Event not found"})));
    assert_eq!(
        respond(&format!("/events/{id}/respond"), b"{not json", &secret),
        (400, json!({"error": "Invalid request"}))
    );
    assert_eq!(respond("/events/abc/respond", b"{}", &secret).0, 404);
    // An answer goes only to this machine: a question naming another host is
    // stored and answerable, and nothing is sent there.
    let mut elsewhere = request.clone();
    elsewhere["humanInTheLoop"]["responseWebSocketUrl"] = json!("ws://198.51.100.7:80");
    let (_, stored) = reference_post(&addr, elsewhere.to_string().as_bytes());
    let started = std::time::Instant::now();
    let (status, _) = respond(&format!("/events/{}/respond", stored["id"]), br#"{"permission":true}"#, &secret);
    assert_eq!(status, 200);
    assert!(started.elapsed() < Duration::from_secs(3), "no connection attempt to another host");
    assert!(daemon.log().contains("not on this machine"), "{}", daemon.log());
    drop(daemon);

    // Without open reads an answer needs the dashboard's secret, or to come
    // from the user's own process and no page of another origin (another
    // local user gets 401: listener.rs).
    let guarded = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = guarded.http_addr();
    let (_, stored) = reference_post(&addr, request.to_string().as_bytes());
    let path = format!("/events/{}/respond", stored["id"]);
    let body = br#"{"permission":true}"#;
    let send = |extra: &str| {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        tcp_http(&addr, &[head.as_bytes(), body].concat()).0
    };
    assert_eq!(send("Origin: http://localhost:5173\r\n"), 403);
    assert_eq!(send("Authorization: Bearer 0000\r\nOrigin: http://localhost:5173\r\n"), 403);
    assert_eq!(send(&guarded.read_header()), 200);
    drop(guarded);
}

/// The reference client's other expectations: small enums (`source`,
/// PreCompact's `trigger`) stay in the payload without capture; recent
/// events come ordered by their timestamp, not by arrival; a timestamp
/// sent as a string or a float is taken, as the reference takes it.
#[test]
fn payload_enums_timestamp_order_and_timestamp_forms_match_the_reference() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--http-open-reads", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let session = "2b3c4d5e-6f70-4812-93a4-b5c6d7e8f901";
    let post = |kind: &str, payload: Value, timestamp: Value| {
        let body = json!({"source_app": REFERENCE_APP, "session_id": session, "hook_event_type": kind,
                          "payload": payload, "timestamp": timestamp});
        let (status, saved) = reference_post(&addr, body.to_string().as_bytes());
        assert_eq!(status, 200, "{saved}");
        saved
    };
    // Arrival order: compact, start, end; timestamp order: start, compact, end.
    let compact = post(
        "PreCompact",
        json!({"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": "keep my notes"}),
        json!("1796000002000"),
    );
    let start = post(
        "SessionStart",
        json!({"hook_event_name": "SessionStart", "source": "resume", "cwd": "/home/dev/secret-app"}),
        json!(1_796_000_001_000.5),
    );
    let end =
        post("SessionEnd", json!({"hook_event_name": "SessionEnd", "reason": "logout"}), json!(1_796_000_003_000i64));
    assert_eq!(compact["payload"], json!({"hook_event_name": "PreCompact", "trigger": "auto"}));
    assert_eq!(start["payload"], json!({"hook_event_name": "SessionStart", "source": "resume"}));
    assert_eq!(end["payload"]["reason"], "logout");
    assert_eq!(
        (compact["timestamp"].clone(), start["timestamp"].clone()),
        (json!(1_796_000_002_000i64), json!(1_796_000_001_000i64))
    );
    let recent = get_json(&daemon, "/events/recent").1;
    assert_eq!(recent, json!([start, compact, end]), "ordered by timestamp");
    assert_eq!(get_json(&daemon, "/events/recent?limit=2").1, json!([compact, end]), "the latest by timestamp");
    let mut client = stream_client(&daemon);
    assert_eq!(next_message(&mut client), json!({"type": "initial", "data": [start, compact, end]}));
    drop(daemon);
    for (path, bytes) in home.bee_files() {
        let text = String::from_utf8_lossy(&bytes);
        for secret in ["keep my notes", "secret-app"] {
            assert!(!text.contains(secret), "{secret} stored in {}", path.display());
        }
    }
}

/// Posts the reference agent's choice question (`utils/hitl.py`) waiting at
/// `agent_port`; returns the stored event.
fn ask(addr: &str, agent_port: u16, session: &str) -> Value {
    let request = json!({
        "source_app": REFERENCE_APP,
        "session_id": session,
        "hook_event_type": "PreToolUse",
        "payload": {"tool_name": "Bash", "tool_input": {"command": "make deploy"}},
        "humanInTheLoop": {"question": "Deploy to staging?", "responseWebSocketUrl": format!("ws://localhost:{agent_port}"),
                           "type": "choice", "choices": ["yes", "no"], "timeout": 300, "requiresResponse": true},
        "timestamp": 1_796_000_000_000i64
    });
    let (status, saved) = reference_post(addr, request.to_string().as_bytes());
    assert_eq!(status, 200, "{saved}");
    saved
}

/// `POST /events/ID/respond` with the reference client's body for `choice`
/// (EventRow.vue's submitChoice: no secret, `Content-Type: application/json`)
/// and extra header lines (an Origin).
fn submit_choice(addr: &str, event: &Value, choice: &str, extra: &str) -> (u16, Value) {
    let body = json!({"choice": choice, "hookEvent": event, "respondedAt": 1_796_000_001_000i64}).to_string();
    let request = format!(
        "POST /events/{}/respond HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{extra}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        event["id"],
        body.len()
    );
    let (status, _, answer) = tcp_http(addr, request.as_bytes());
    (status, json_of(&answer))
}

/// The reference client cannot send the secret: an answer without it is
/// taken from the user's own process — here this test, beed's uid — when it
/// comes from no page or from a page of an origin `--http-allow-origin`
/// names, and the agent gets it. A page of another loopback origin gets
/// 403 and the question stays open. (Another uid: listener.rs.)
#[test]
fn the_users_own_answer_without_the_secret_reaches_the_agent_from_an_allowed_origin_or_none() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&[
        "--http",
        "127.0.0.1:0",
        "--http-allow-origin",
        "http://localhost:5173/",
        "--ingest-every",
        "0",
    ]);
    let addr = daemon.http_addr();
    let pending = |id: &Value| {
        let (_, _, body) = raw_http(&home.socket(), &get_request("/events/recent?limit=100", "localhost", ""));
        let recent = json_of(&body);
        let event = recent.as_array().unwrap().iter().find(|e| e["id"] == *id).cloned().unwrap();
        event["humanInTheLoopStatus"]["status"] == "pending"
    };

    // The reference client's page, from its dev server's origin: its
    // preflight is granted, then its answer taken and delivered.
    let (agent_port, agent) = waiting_agent();
    let asked = ask(&addr, agent_port, "session-from-page");
    let preflight = format!(
        "OPTIONS /events/{}/respond HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://localhost:5173\r\n\
         Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type\r\nConnection: close\r\n\r\n",
        asked["id"]
    );
    let (status, head, _) = tcp_http(&addr, preflight.as_bytes());
    assert_eq!(status, 204, "{head}");
    assert!(head.to_ascii_lowercase().contains("access-control-allow-origin: http://localhost:5173"), "{head}");
    let (status, answered) = submit_choice(&addr, &asked, "yes", "Origin: http://localhost:5173\r\n");
    assert_eq!(status, 200, "{answered}");
    assert_eq!(answered["humanInTheLoopStatus"]["status"], "responded");
    let delivered = json_of(agent.recv_timeout(Duration::from_secs(10)).unwrap().as_bytes());
    assert_eq!(
        (delivered["choice"].clone(), delivered["hookEvent"]["id"].clone()),
        (json!("yes"), asked["id"].clone())
    );

    // A process of the user's with no page behind it (curl, a script).
    let (agent_port, agent) = waiting_agent();
    let asked = ask(&addr, agent_port, "session-from-script");
    let (status, answered) = submit_choice(&addr, &asked, "no", "");
    assert_eq!(status, 200, "{answered}");
    let delivered = json_of(agent.recv_timeout(Duration::from_secs(10)).unwrap().as_bytes());
    assert_eq!(delivered["choice"], "no");

    // A page of any other origin, in the user's own browser: refused, and
    // nothing reaches the agent. A wrong secret changes nothing.
    let (agent_port, agent) = waiting_agent();
    let asked = ask(&addr, agent_port, "session-from-elsewhere");
    for origin in [
        "Origin: http://localhost:5174\r\n".to_owned(),
        "Origin: https://localhost:5173\r\n".to_owned(),
        format!("Origin: http://{addr}\r\n"),
        "Origin: http://localhost:5174\r\nAuthorization: Bearer 0000\r\n".to_owned(),
    ] {
        let (status, refused) = submit_choice(&addr, &asked, "yes", &origin);
        assert_eq!(status, 403, "{origin}: {refused}");
        assert!(refused["error"].as_str().unwrap().contains("--http-allow-origin"), "{refused}");
    }
    assert!(pending(&asked["id"]), "the question is still open");
    assert!(agent.recv_timeout(Duration::from_millis(300)).is_err(), "nothing reached the agent");
    // The secret still answers from any loopback page.
    let (status, _) =
        submit_choice(&addr, &asked, "yes", &format!("Origin: http://localhost:5174\r\n{}", daemon.read_header()));
    assert_eq!(status, 200);
    drop(daemon);

    // Without --http-allow-origin no page answers without the secret.
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let asked = ask(&addr, 9, "session-no-origins");
    assert_eq!(submit_choice(&addr, &asked, "yes", "Origin: http://localhost:5173\r\n").0, 403);
    assert!(pending(&asked["id"]));
    drop(daemon);

    // Only loopback origins can be allowed: a page elsewhere is refused anyway.
    for origin in ["https://evil.example", "http://localhost:5173/app", "localhost:5173", "null"] {
        let output = home.command(bin("beed")).args(["--http-allow-origin", origin]).output().unwrap();
        assert_eq!(output.status.code(), Some(4), "{origin}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(String::from_utf8_lossy(&output.stderr).contains("not a loopback origin"), "{origin}");
    }
}
