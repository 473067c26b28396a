//! The loopback listener against web pages and other local users: foreign
//! origins refused on upgrades and posts, posts only as JSON, reads only with
//! the per-user secret (or `--http-open-reads`), the secret and the dashboard
//! URL private, and `.bee` directories tightened.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

fn upgrade(addr: &str, extra: &str) -> u16 {
    let request = stream_upgrade_request(addr, extra);
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    use std::io::{Read, Write};
    stream.write_all(&request).unwrap();
    let mut head = [0u8; 512];
    let n = stream.read(&mut head).unwrap();
    let text = String::from_utf8_lossy(&head[..n]);
    text.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap()
}

fn post_raw(addr: &str, content_type: &str, extra: &str, body: &str) -> (u16, Vec<u8>) {
    let request = format!(
        "POST /events HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, _, answer) = tcp_http(addr, request.as_bytes());
    (status, answer)
}

fn stored_sessions(home: &TestHome) -> Vec<String> {
    let (_, _, body) = raw_http(&home.socket(), &get_request("/events/recent?limit=100", "localhost", ""));
    let events: Value = serde_json::from_slice(&body).unwrap();
    events.as_array().unwrap().iter().map(|e| e["session_id"].as_str().unwrap().to_owned()).collect()
}

fn event(session: &str) -> String {
    json!({"source_app": "app", "session_id": session, "hook_event_type": "Stop", "payload": {}}).to_string()
}

#[test]
fn foreign_origins_are_refused_and_posts_must_be_json() {
    let home = TestHome::new();
    // Open reads: the origin check alone must refuse a foreign page's stream.
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--http-open-reads", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    assert_eq!(upgrade(&addr, "Origin: https://evil.example\r\n"), 403);
    assert_eq!(upgrade(&addr, "Origin: null\r\n"), 403);
    assert_eq!(upgrade(&addr, "Origin: http://localhost.evil.example\r\n"), 403);
    assert_eq!(upgrade(&addr, "Origin: http://localhost:5173\r\n"), 101, "the reference client's own port");
    assert_eq!(upgrade(&addr, ""), 101, "no Origin: not a browser page");

    // A "simple" cross-site POST: refused, stored nowhere.
    let (status, _) = post_raw(&addr, "text/plain", "Origin: https://evil.example\r\n", &event("forged-1"));
    assert_eq!(status, 403);
    let (status, _) = post_raw(&addr, "application/json", "Origin: https://evil.example\r\n", &event("forged-2"));
    assert_eq!(status, 403);
    let (status, answer) = post_raw(&addr, "text/plain", "", &event("forged-3"));
    assert_eq!(status, 415, "{}", String::from_utf8_lossy(&answer));
    let (status, _) = post_raw(&addr, "application/x-www-form-urlencoded", "", &event("forged-4"));
    assert_eq!(status, 415);
    // The reference senders: JSON, no Origin.
    assert_eq!(post_raw(&addr, "application/json", "", &event("real-1")).0, 200);
    assert_eq!(
        post_raw(&addr, "application/json; charset=utf-8", "Origin: http://127.0.0.1:3000\r\n", &event("real-2")).0,
        200
    );
    assert_eq!(stored_sessions(&home), ["real-1", "real-2"]);
    // Open reads still keep the per-user secret: answers to an agent need it.
    assert!(daemon.http_secret().is_some());
    drop(daemon);
}

#[test]
fn reads_need_the_per_user_secret_and_the_dashboard_url_sets_it() {
    let home = TestHome::new();
    assert_eq!(home.beectl(&["dashboard"]).status.code(), Some(5), "beed not running");
    let plain = home.start_daemon_with(&["--ingest-every", "0"]);
    let answer = home.beectl(&["dashboard"]);
    assert_eq!(answer.status.code(), Some(5));
    assert_eq!(parse_json_line(&answer.stdout)["errorCode"], "no_dashboard");
    drop(plain);

    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let secret = daemon.http_secret().expect("a secret beside the socket");
    assert_eq!(secret.len(), 64);
    let run = home.socket().parent().unwrap().to_owned();
    for file in ["http-token", "dashboard-url"] {
        let mode = std::fs::metadata(run.join(file)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{file}");
    }
    assert_eq!(post_raw(&addr, "application/json", "", &event("s-1")).0, 200, "writes stay open to senders");

    let get = |path: &str, extra: &str| tcp_http(&addr, &get_request(path, &addr, extra));
    for path in ["/events/recent", "/events/filter-options", "/v1/audit/sessions"] {
        assert_eq!(get(path, "").0, 401, "{path}");
        assert_eq!(get(path, "Authorization: Bearer 00\r\n").0, 401, "{path}");
        assert_eq!(get(path, &format!("Authorization: Bearer {secret}\r\n")).0, 200, "{path}");
        assert_eq!(get(path, &format!("Cookie: other=1; bee_dashboard={secret}\r\n")).0, 200, "{path}");
    }
    assert_eq!(get(&format!("/events/recent?limit=5&token={secret}"), "").0, 200);
    // The cookie comes with any page on this host, any port: with it, only
    // the dashboard's own origin reads (a local user's page on another port does not).
    let cookie = format!("Cookie: bee_dashboard={secret}\r\n");
    assert_eq!(get("/events/recent", &format!("{cookie}Origin: http://{addr}\r\n")).0, 200);
    assert_eq!(get("/events/recent", &format!("{cookie}Origin: http://127.0.0.1:1\r\n")).0, 403);
    assert_eq!(upgrade(&addr, &format!("{cookie}Origin: http://localhost:8888\r\n")), 403);
    assert_eq!(upgrade(&addr, &format!("{cookie}Origin: http://{addr}\r\n")), 101);
    assert_eq!(upgrade(&addr, ""), 401, "the stream is a read");
    assert_eq!(upgrade(&addr, &format!("Authorization: Bearer {secret}\r\n")), 101);
    assert_eq!(get("/health", "").0, 200, "health shows no events");
    assert_eq!(get("/", "").0, 200, "the page itself carries no data");

    // The URL beectl prints sets the cookie and leaves the address bar clean.
    let url = String::from_utf8(home.beectl(&["dashboard"]).stdout).unwrap();
    assert_eq!(url, format!("http://{addr}/?token={secret}\n"));
    let (status, head, _) = get(&format!("/?token={secret}"), "");
    let head = head.to_ascii_lowercase();
    assert_eq!(status, 303, "{head}");
    assert!(head.contains("location: /\r\n"), "{head}");
    assert!(head.contains(&format!("set-cookie: bee_dashboard={secret}; path=/; httponly; samesite=strict")), "{head}");
    assert_eq!(get("/?token=0123", "").0, 401, "an old URL is refused, not silently open");

    // The secret survives a restart, so an open dashboard reconnects.
    drop(daemon);
    assert!(!run.join("dashboard-url").exists(), "the URL goes with the listener");
    let daemon = home.start_daemon_with(&["--http", &addr, "--ingest-every", "0"]);
    assert_eq!(daemon.http_secret().as_deref(), Some(secret.as_str()));
    drop(daemon);
}

/// Runs `script` in bash as the unprivileged `nobody` user (the test runs as
/// root in CI); `None` when this machine cannot switch users.
fn as_other_user(script: &str) -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return None;
    }
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", script])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn another_local_user_reads_nothing_and_loose_directories_are_tightened() {
    let home = TestHome::new();
    // Directories made loose before beed ever ran.
    let bee = home.bee_dir();
    std::fs::create_dir_all(bee.join("usage")).unwrap();
    std::fs::set_permissions(&bee, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(bee.join("usage"), std::fs::Permissions::from_mode(0o777)).unwrap();
    // Traversable home, so only Bee's own modes keep the other user out.
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    for dir in [bee.clone(), bee.join("usage"), bee.join("run")] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    let addr = daemon.http_addr();
    assert_eq!(post_raw(&addr, "application/json", "", &event("victim")).0, 200);
    let (host, port) = addr.rsplit_once(':').unwrap();
    let request = |path: &str| {
        format!(
            "exec 3<>/dev/tcp/{host}/{port}; printf 'GET {path} HTTP/1.1\\r\\nHost: {addr}\\r\\nConnection: close\\r\\n\\r\\n' >&3; head -c 200 <&3"
        )
    };
    let Some(recent) = as_other_user(&request("/events/recent")) else {
        eprintln!("not root: the second-user half of this test needs root to switch users");
        return;
    };
    assert!(recent.starts_with("HTTP/1.1 401"), "{recent}");
    let token = home.socket().parent().unwrap().join("http-token");
    let stolen = as_other_user(&format!("cat '{}' 2>&1; ls '{}' 2>&1", token.display(), bee.display())).unwrap();
    assert!(stolen.contains("Permission denied") && !stolen.contains(&daemon.http_secret().unwrap()), "{stolen}");
    let verdicts = as_other_user(&request("/v1/audit/sessions")).unwrap();
    assert!(verdicts.starts_with("HTTP/1.1 401"), "{verdicts}");
    drop(daemon);
}

/// One `claude_code.api_request` log record as Claude Code sends it over
/// OTLP/JSON.
fn api_request_logs(request_id: &str) -> Vec<u8> {
    let attributes = json!([
        {"key": "session.id", "value": {"stringValue": "otlp-session"}},
        {"key": "event.name", "value": {"stringValue": "api_request"}},
        {"key": "event.timestamp", "value": {"stringValue": "2026-11-30T10:00:00.500Z"}},
        {"key": "model", "value": {"stringValue": "claude-opus-5-5"}},
        {"key": "input_tokens", "value": {"intValue": 11}},
        {"key": "output_tokens", "value": {"intValue": 22}},
        {"key": "cache_read_tokens", "value": {"intValue": 33}},
        {"key": "cache_creation_tokens", "value": {"intValue": 44}},
        {"key": "cost_usd", "value": {"doubleValue": 0.25}},
        {"key": "duration_ms", "value": {"intValue": 1500}},
        {"key": "request_id", "value": {"stringValue": request_id}},
    ]);
    json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"timeUnixNano": "1796032800500000000", "body": {"stringValue": "claude_code.api_request"}, "attributes": attributes}
    ]}]}]})
    .to_string()
    .into_bytes()
}

fn otlp_post(addr: &str, path: &str, headers: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut request =
        format!("POST {path} HTTP/1.1\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n", body.len())
            .into_bytes();
    request.extend_from_slice(body);
    let (status, _, answer) = tcp_http(addr, &request);
    (status, answer)
}

fn gzip(body: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(body).unwrap();
    encoder.finish().unwrap()
}

#[test]
fn the_otlp_receiver_takes_claude_codes_requests_under_the_listener_rules() {
    let home = TestHome::new();
    let refused = home.command(bin("beed")).args(["--otlp", "0.0.0.0:4318"]).output().unwrap();
    assert_ne!(refused.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--otlp must name a loopback address"));

    let daemon = home.start_daemon_with(&["--ingest-every", "0", "--otlp", "127.0.0.1:0"]);
    let addr = daemon.otlp_addr();
    let json_headers = format!("Host: {addr}\r\nContent-Type: application/json\r\n");
    let body = api_request_logs("req_otlp_1");

    // Web pages and names that are not loopback are refused, as on the
    // event listener; so are media types a page may post without asking.
    let (status, _) = otlp_post(&addr, "/v1/logs", &format!("{json_headers}Origin: https://evil.example\r\n"), &body);
    assert_eq!(status, 403);
    let (status, _) = otlp_post(&addr, "/v1/logs", "Host: evil.example\r\nContent-Type: application/json\r\n", &body);
    assert_eq!(status, 403);
    for media in ["text/plain", "application/x-www-form-urlencoded"] {
        let (status, answer) =
            otlp_post(&addr, "/v1/logs", &format!("Host: {addr}\r\nContent-Type: {media}\r\n"), &body);
        assert_eq!(status, 415, "{media}: {}", String::from_utf8_lossy(&answer));
    }

    // Malformed, non-UTF-8, oversized and bomb bodies: a clear error, nothing stored.
    let (status, answer) = otlp_post(&addr, "/v1/logs", &json_headers, b"{\"resourceLogs\": [");
    assert_eq!(status, 400);
    let error: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(error["code"], 3, "{error}");
    let (status, _) = otlp_post(&addr, "/v1/logs", &json_headers, b"\xff\xfe\x00{");
    assert_eq!(status, 400);
    let (status, _) = otlp_post(&addr, "/v1/logs", &json_headers, &vec![b' '; 9 * 1024 * 1024]);
    assert_eq!(status, 413);
    let bomb = gzip(&vec![b' '; 9 * 1024 * 1024]);
    let (status, answer) = otlp_post(&addr, "/v1/logs", &format!("{json_headers}Content-Encoding: gzip\r\n"), &bomb);
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&answer));
    let (status, _) = otlp_post(&addr, "/v1/logs", &format!("{json_headers}Content-Encoding: br\r\n"), &body);
    assert_eq!(status, 400);
    let (status, _) = otlp_post(&addr, "/v1/nothing", &json_headers, &body);
    assert_eq!(status, 404);
    let usage =
        |home: &TestHome| parse_json_line(&home.beectl(&["usage", "--by", "model", "--since", "2026-11-01"]).stdout);
    assert_eq!(usage(&home)["rows"], json!([]), "nothing refused was stored");

    // JSON, the same request again gzipped, and as protobuf: one response.
    let (status, answer) = otlp_post(&addr, "/v1/logs", &json_headers, &body);
    assert_eq!((status, answer), (200, b"{}".to_vec()));
    let (status, _) = otlp_post(&addr, "/v1/logs", &format!("{json_headers}Content-Encoding: gzip\r\n"), &gzip(&body));
    assert_eq!(status, 200);
    let request: opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest =
        serde_json::from_slice(&body).unwrap();
    let protobuf = prost::Message::encode_to_vec(&request);
    let (status, answer) =
        otlp_post(&addr, "/v1/logs", &format!("Host: {addr}\r\nContent-Type: application/x-protobuf\r\n"), &protobuf);
    assert_eq!((status, answer), (200, Vec::new()), "an empty ExportLogsServiceResponse");
    // Metrics are accepted and dropped.
    let (status, _) = otlp_post(&addr, "/v1/metrics", &json_headers, b"{\"resourceMetrics\": []}");
    assert_eq!(status, 200);

    let report = usage(&home);
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{report}");
    let tokens = &rows[0]["tokens"];
    assert_eq!(rows[0]["responses"], 1, "{report}");
    assert_eq!(
        [
            &tokens["inputTokens"],
            &tokens["outputTokens"],
            &tokens["cacheReadInputTokens"],
            &tokens["cacheCreationInputTokens"]
        ],
        [&json!(11), &json!(22), &json!(33), &json!(44)],
        "{report}"
    );
    assert_eq!(rows[0]["reportedCostUsd"], 0.25, "the cost Claude Code reported: {report}");
    let quota = parse_json_line(&home.beectl(&["quota", "--since", "2026-11-30T09:00:00Z"]).stdout);
    drop(daemon);
    assert_eq!(
        (quota["agentTimeMs"].clone(), quota["providers"][0]["calls"].clone()),
        (json!(1500), json!(1)),
        "{quota}"
    );
}

/// beed's peak resident memory (`VmHWM`), in KiB.
fn peak_rss_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Any local user may send the OTLP receiver four 8 MiB bodies of empty
/// log records at once (`0x12 0x00` repeated inside one ResourceLogs and
/// ScopeLogs, and the JSON equivalent): each is refused before it is
/// decoded, beed's resident memory grows by at most four times the bodies'
/// size, and a prompt hook fired meanwhile is answered by beed, not spooled.
#[test]
fn a_flood_of_empty_otlp_records_stays_within_its_memory_budget_and_the_hooks_are_served() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0", "--otlp", "127.0.0.1:0"]);
    let addr = daemon.otlp_addr();
    // Warm: one real request and one hook, so the baseline holds what any run holds.
    let json_headers = format!("Host: {addr}\r\nContent-Type: application/json\r\n");
    assert_eq!(otlp_post(&addr, "/v1/logs", &json_headers, &api_request_logs("req_warm")).0, 200);
    let block = home.file("block.md", b"Keep commits small.\n");
    // The first hook after beed starts may miss its 100 ms on a loaded
    // machine (a full test run) and spool: warm until one is answered. The
    // hook under test is the one fired during the flood, below.
    let answered = (0..10).any(|_| {
        let (_, receipt) = home.fire_with_receipt("plain", &block, &prompt_envelope(SESSION, "warm"));
        receipt.is_some_and(|receipt| receipt.1 == "accepted by beed")
    });
    assert!(answered, "no warm-up hook was answered by beed");
    let before = peak_rss_kib(daemon.pid());

    const BODY: usize = 8 * 1024 * 1024;
    let protobuf = {
        // ResourceLogs(1) { ScopeLogs(2) { LogRecord(2) {} × n } }, lengths as varints.
        let varint = |mut n: usize| {
            let mut out = Vec::new();
            loop {
                let byte = (n & 0x7f) as u8;
                n >>= 7;
                if n == 0 {
                    out.push(byte);
                    return out;
                }
                out.push(byte | 0x80);
            }
        };
        let records = [0x12u8, 0x00].repeat((BODY - 16) / 2);
        let scope = [&[0x12u8][..], &varint(records.len()), &records].concat();
        [&[0x0au8][..], &varint(scope.len()), &scope].concat()
    };
    let json = {
        let head = br#"{"resourceLogs":[{"scopeLogs":[{"logRecords":["#;
        let mut body = head.to_vec();
        while body.len() + 16 < BODY {
            body.extend_from_slice(b"{},");
        }
        body.extend_from_slice(b"{}]}]}]}");
        body
    };
    let senders: Vec<_> = [&protobuf, &json, &protobuf, &json]
        .into_iter()
        .enumerate()
        .map(|(n, body)| {
            let (addr, body) = (addr.clone(), body.clone());
            let media = if n % 2 == 0 { "application/x-protobuf" } else { "application/json" };
            std::thread::spawn(move || {
                otlp_post(&addr, "/v1/logs", &format!("Host: {addr}\r\nContent-Type: {media}\r\n"), &body)
            })
        })
        .collect();
    let (_, receipt) = home.fire_with_receipt("plain", &block, &prompt_envelope(SESSION, "meanwhile"));
    assert_eq!(receipt.unwrap().1, "accepted by beed", "the hook was answered by beed while the bodies came");
    for sender in senders {
        let (status, answer) = sender.join().unwrap();
        assert_eq!(status, 400, "{}", String::from_utf8_lossy(&answer));
    }
    let after = peak_rss_kib(daemon.pid());
    let growth_kib = after.saturating_sub(before);
    let budget_kib = 4 * (4 * BODY as u64) / 1024;
    println!(
        "beed peak RSS {before} KiB before, {after} KiB after four 8 MiB bodies (+{growth_kib} KiB; budget {budget_kib} KiB)"
    );
    assert!(growth_kib <= budget_kib, "beed grew by {growth_kib} KiB for four 8 MiB bodies (budget {budget_kib} KiB)");
    // The receiver still takes real requests.
    assert_eq!(otlp_post(&addr, "/v1/logs", &json_headers, &api_request_logs("req_after")).0, 200);
    drop(daemon);
}

/// One record out of Bee's bounds (a duration of 2^64 - 1 ms) or that does
/// not decode (`"NaN"` as a double, an int64 out of range) is rejected
/// alone, with OTLP's partial success: the batch's good record is taken,
/// and nothing is clamped into seven days of measured time.
#[test]
fn a_bad_otlp_record_is_rejected_alone_and_never_clamped() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0", "--otlp", "127.0.0.1:0"]);
    let addr = daemon.otlp_addr();
    let json_headers = format!("Host: {addr}\r\nContent-Type: application/json\r\n");
    let mut batch: Value = serde_json::from_slice(&api_request_logs("req_good")).unwrap();
    let good = batch["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0].clone();
    let with = |request: &str, key: &str, value: Value| {
        let mut record = good.clone();
        let attributes = record["attributes"].as_array_mut().unwrap();
        for attribute in attributes.iter_mut() {
            if attribute["key"] == "request_id" {
                attribute["value"] = json!({"stringValue": request});
            }
        }
        attributes.retain(|a| a["key"] != key);
        attributes.push(json!({"key": key, "value": value}));
        record
    };
    let records = batch["resourceLogs"][0]["scopeLogs"][0]["logRecords"].as_array_mut().unwrap();
    records.push(with("req_forever", "duration_ms", json!({"stringValue": "18446744073709551615"})));
    records.push(with("req_nan", "cost_usd", json!({"doubleValue": "NaN"})));
    records.push(with("req_huge", "input_tokens", json!({"intValue": "99999999999999999999999"})));
    let (status, answer) = otlp_post(&addr, "/v1/logs", &json_headers, batch.to_string().as_bytes());
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["partialSuccess"]["rejectedLogRecords"], "3", "{answer}");
    let quota = parse_json_line(&home.beectl(&["quota", "--since", "2026-11-30T09:00:00Z"]).stdout);
    assert_eq!(
        (quota["agentTimeMs"].clone(), quota["providers"][0]["calls"].clone()),
        (json!(1500), json!(1)),
        "only the good record's time: {quota}"
    );
    drop(daemon);
}

/// With `--http-open-reads`, another local user (as root: uid 65534) reads
/// the stored events, as open reads mean, but cannot answer a permission
/// request: 401, and the question stays pending.
#[test]
fn another_local_user_cannot_answer_a_permission_request_even_with_open_reads() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--http-open-reads", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let id = pending_question(&addr);
    let (host, port) = addr.rsplit_once(':').unwrap();
    let Some(refused) = as_other_user(&answer_script(&addr, id, "")) else {
        eprintln!("not root: the second-user half of this test needs root to switch users");
        return;
    };
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let recent = as_other_user(&format!(
        "exec 3<>/dev/tcp/{host}/{port}; printf 'GET /events/recent HTTP/1.1\\r\\nHost: {addr}\\r\\nConnection: close\\r\\n\\r\\n' >&3; cat <&3"
    ))
    .unwrap();
    assert!(recent.starts_with("HTTP/1.1 200"), "open reads are open: {recent}");
    assert!(recent.contains(r#""humanInTheLoopStatus":{"status":"pending"}"#), "still unanswered: {recent}");
    drop(daemon);
}

/// A permission question stored through beed's listener at `addr`: its id.
fn pending_question(addr: &str) -> i64 {
    let question = json!({"source_app": "app", "session_id": "s-ask", "hook_event_type": "PermissionRequest",
        "payload": {}, "humanInTheLoop": {"question": "Allow rm?", "type": "permission", "requiresResponse": true,
        "responseWebSocketUrl": "ws://127.0.0.1:9/"}});
    let (status, stored) = post_raw(addr, "application/json", "", &question.to_string());
    assert_eq!(status, 200);
    serde_json::from_slice::<Value>(&stored).unwrap()["id"].as_i64().unwrap()
}

/// A bash script that answers question `id` at `addr` without the secret
/// (`origin`: a header line, or nothing) and prints beed's reply.
fn answer_script(addr: &str, id: i64, origin: &str) -> String {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let body = r#"{"permission":true}"#;
    format!(
        "exec 3<>/dev/tcp/{host}/{port}; printf 'POST /events/{id}/respond HTTP/1.1\\r\\nHost: {addr}\\r\\n{origin}\
         Content-Type: application/json\\r\\nContent-Length: {}\\r\\nConnection: close\\r\\n\\r\\n{body}' >&3; head -c 300 <&3",
        body.len()
    )
}

/// [`as_other_user`], where the test cannot go on without it.
fn as_nobody(script: &str) -> String {
    as_other_user(script)
        .expect("this test acts as another local user (uid 65534, setpriv): run it as root, as CI does")
}

/// The answer without the secret that beed takes from its own user's
/// processes is refused to another local user — 401, with no origin as
/// `curl` sends it and with the very origin `--http-allow-origin` allows —
/// and the question stays open; the same request from beed's uid is taken.
#[test]
fn another_local_user_cannot_answer_without_the_secret_even_from_an_allowed_origin() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&[
        "--http",
        "127.0.0.1:0",
        "--http-allow-origin",
        "http://localhost:5173",
        "--ingest-every",
        "0",
    ]);
    let addr = daemon.http_addr();
    let id = pending_question(&addr);
    let answer = |origin: &str| answer_script(&addr, id, origin);
    for origin in ["", "Origin: http://localhost:5173\\r\\n"] {
        let refused = as_nobody(&answer(origin));
        assert!(refused.starts_with("HTTP/1.1 401"), "{origin}: {refused}");
    }
    let pending = || {
        let (_, _, body) = raw_http(&home.socket(), &get_request("/events/recent?limit=100", "localhost", ""));
        let events: Value = serde_json::from_slice(&body).unwrap();
        events[0]["humanInTheLoopStatus"]["status"] == "pending"
    };
    assert!(pending(), "still unanswered");
    // The same request from beed's own uid is the user's own answer.
    let body = r#"{"permission":true}"#;
    let request = format!(
        "POST /events/{id}/respond HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://localhost:5173\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, _, answered) = tcp_http(&addr, request.as_bytes());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answered));
    assert!(!pending());
    drop(daemon);
}
