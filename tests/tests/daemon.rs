//! beed's lifecycle, durability, capacity, corruption handling and socket API
//! hardening, with real processes and a real socket.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::json;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::time::Duration;

const BLOCK: &[u8] = b"Keep commits small.\n";

fn mode(path: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

#[test]
fn one_daemon_per_socket_private_files_and_stale_socket_replaced() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let first = home.start_daemon();
    let second = home.command(bin("beed")).output().unwrap();
    assert_eq!(second.status.code(), Some(5));
    let message = String::from_utf8_lossy(&second.stderr);
    assert!(message.contains("another beed is already running"), "{message}");
    assert!(message.contains(&format!("pid {}", first.pid())), "{message}");

    home.fire_with_receipt("plain", &block, &prompt_envelope(SESSION, "x"));
    home.settle();
    assert_eq!(mode(&home.bee_dir().join("run")), 0o700);
    assert_eq!(mode(&home.socket()), 0o600);
    assert_eq!(mode(&home.store()), 0o700);
    assert_eq!(mode(&home.bee_dir().join("usage")), 0o700);
    for entry in std::fs::read_dir(home.store()).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }

    // A crash leaves the socket behind; the next beed replaces it.
    first.kill9();
    assert!(home.socket().exists());
    let again = home.start_daemon();
    assert!(again.log().contains("replacing a stale socket"), "{}", again.log());
    assert_eq!(home.report(&[]).1["observedEvents"], 1);
    // SIGINT is a graceful stop too.
    again.send(rustix::process::Signal::INT);
    assert!(eventually(Duration::from_secs(10), || !home.socket().exists()));
    assert!(again.log().contains("SIGINT received") && again.log().contains("beed stopped"));
    drop(again);

    // Something that is not a socket at the socket path is never deleted.
    std::fs::write(home.socket(), b"mine").unwrap();
    let refused = home.command(bin("beed")).output().unwrap();
    assert_eq!(refused.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is not a socket"));
    assert_eq!(std::fs::read(home.socket()).unwrap(), b"mine");
}

#[test]
fn the_spool_is_private_and_ingested_once_across_restarts() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    for _ in 0..3 {
        let (_, receipt) = home.fire_with_receipt("plain", &block, &prompt_envelope(SESSION, "x"));
        assert!(receipt.unwrap().1.starts_with("spooled"));
    }
    assert_eq!(mode(&home.spool_dir()), 0o700);
    assert_eq!(mode(&home.spool_dir().join("delivery-v1.jsonl")), 0o600);
    let status = parse_json_line(&home.beectl(&["daemon", "status"]).stdout);
    assert_eq!(status["spool"]["pendingRecords"], 3);
    // A torn last line (a crash mid-append) is moved aside, not lost, not fatal.
    let mut spool = std::fs::OpenOptions::new().append(true).open(home.spool_dir().join("delivery-v1.jsonl")).unwrap();
    std::io::Write::write_all(&mut spool, b"{\"kind\":\"Deliv").unwrap();
    drop(spool);
    for _ in 0..2 {
        let daemon = home.start_daemon();
        assert_eq!(home.report(&[]).1["observedEvents"], 3);
        drop(daemon);
    }
    assert_eq!(std::fs::read(home.spool_dir().join("delivery-v1.rejected.jsonl")).unwrap(), b"{\"kind\":\"Deliv\n");
}

#[test]
fn every_acknowledged_observation_survives_kill_9() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let daemon = home.start_daemon();
    // Kill mid-burst, once some appends were acknowledged.
    let runs = home.fire_in_parallel(&block, 8, 30, || {
        home.wait_for_records(60);
        daemon.send(rustix::process::Signal::KILL);
    });
    let receipts: Vec<Receipt> = runs.into_iter().filter_map(|(_, receipt)| receipt).collect();
    daemon.kill9();
    let acknowledged: Vec<_> = receipts.iter().filter(|(_, outcome)| outcome == "accepted by beed").collect();
    let spooled = receipts.iter().filter(|(_, outcome)| outcome.starts_with("spooled")).count();
    assert_eq!(receipts.len(), 240);
    assert!(!acknowledged.is_empty() && spooled > 0, "{} acknowledged, {spooled} spooled", acknowledged.len());
    // Offline, before any restart: what beed acknowledged is already there.
    for (id, _) in &acknowledged {
        assert_eq!(home.read_event(id).0, 0, "acknowledged {id} lost");
    }
    let restarted = home.start_daemon();
    for (id, _) in &receipts {
        assert_eq!(home.read_event(id).0, 0, "{id} lost");
    }
    assert_eq!(home.report(&[]).1["observedEvents"], 240);
    drop(restarted);
}

#[test]
fn appends_stop_at_capacity_and_the_first_2048_stay_intact() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let daemon = home.start_daemon();
    for (stdout, receipt) in home.fire_in_parallel(&block, 4, 512, || {}) {
        assert_eq!(stdout, BLOCK);
        let outcome = receipt.unwrap().1;
        assert!(taken(&outcome), "{outcome}");
    }
    home.settle();
    let (code, full) = home.report(&["--limit", "0"]);
    assert_eq!(code, 0);
    assert_eq!(full["observedEvents"], 2048);
    assert_eq!(full["issues"], json!(["capacity", "observation_window_open"]));

    let (output, receipt) = home.fire_with_receipt("plain", &block, &prompt_envelope(SESSION, "one more"));
    assert_eq!(output.stdout, BLOCK, "a full store never touches the hook output");
    assert_eq!(output.status.code(), Some(0));
    let (id, outcome) = receipt.unwrap();
    // Refused at once, or (when beed was slow) spooled and refused on ingestion.
    assert!(outcome.starts_with("refused by beed") || outcome.starts_with("spooled"), "{outcome}");
    home.settle();
    assert_eq!(home.read_event(&id).0, 5);
    let (_, after) = home.report(&["--limit", "0"]);
    assert_eq!(after, full, "the 2,049th changed nothing");
    drop(daemon);
}

#[test]
fn a_corrupt_store_keeps_its_verified_prefix_and_never_panics() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let daemon = home.start_daemon();
    for item in ["item-aaaa", "item-bbbb", "item-cccc"] {
        let args = ["prompt", "--surface", "plain", "--item", item, "--block", block.to_str().unwrap()];
        home.hook(&args, &prompt_envelope(SESSION, "x"));
        // In order: the test alters record 2 by its item.
        home.settle();
    }
    assert_eq!(daemon.stop(), Some(0));
    let db = home.store().join("delivery.sqlite3");
    let original = std::fs::read(&db).unwrap();

    // One record altered in place: its checksum no longer verifies.
    let at = original.windows(9).position(|w| w == b"item-bbbb").expect("record 2 on disk");
    let mut altered = original.clone();
    altered[at + 8] = b'x';
    std::fs::write(&db, &altered).unwrap();
    let (code, report) = home.report(&[]);
    assert_eq!(code, 0);
    assert_eq!(report["observedEvents"], 1, "only the verified prefix counts");
    assert_eq!(report["issues"], json!(["corrupt", "observation_window_open"]));
    assert_eq!(report["groups"][0]["identity"], "item-aaaa");
    let refused = home.command(bin("beed")).output().unwrap();
    assert_eq!(refused.status.code(), Some(5));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("corrupt"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert_eq!(std::fs::read(&db).unwrap(), altered, "beed did not touch the evidence");

    // The whole file overwritten with garbage.
    let garbage: Vec<u8> = (0..original.len()).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();
    let (code, report) = home.report(&[]);
    assert_eq!(code, 5);
    assert_eq!(report["issues"], json!(["missing", "corrupt", "observation_window_open"]));
    assert_eq!(report["totalsStatus"], "unknown");
    let read = home.beectl(&["delivery", "read", "--store", home.store().to_str().unwrap(), "--event", SESSION]);
    assert_eq!(read.status.code(), Some(5));
    // Truncated to half a page, and to nothing.
    std::fs::write(&db, &original[..original.len() / 2]).unwrap();
    let (code, _) = home.report(&[]);
    assert!(code == 0 || code == 5);
    std::fs::write(&db, b"").unwrap();
    let (code, report) = home.report(&[]);
    assert_eq!(code, 5);
    assert!(report["issues"].as_array().unwrap().contains(&json!("missing")));

    // A link or a non-directory where the store should be: io, nothing followed.
    let elsewhere = home.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = home.path().join("linked-store");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let output = home.beectl(&["delivery", "report", "--store", link.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(5));
    assert_eq!(parse_json_line(&output.stdout)["issues"], json!(["missing", "io", "observation_window_open"]));
    let output = home.beectl(&["delivery", "report", "--store", block.to_str().unwrap()]);
    assert_eq!(parse_json_line(&output.stdout)["issues"], json!(["missing", "io", "observation_window_open"]));
}

#[test]
fn the_socket_api_refuses_bad_input_with_json_errors() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let socket = home.socket();
    let observation = |event: &str| {
        json!({"kind": "Delivered", "observedAtUtc": "2026-11-30T12:00:00.000Z", "eventId": event,
               "sessionKind": "claude-native-session", "sessionId": SESSION, "surface": "hook.prompt.plain",
               "itemId": "steering-block", "itemVersion": "1", "utf8Bytes": 5,
               "estimates": [{"estimator": "utf16-ceil-div4", "version": 1, "estimatedTokens": 2}]})
    };
    let path = "/v1/delivery/observations";
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (post_request(path, "bee-protocol: 2\r\n", b"{}"), 409, "protocol_mismatch"),
        (post_request(path, "", b"{not json"), 400, "invalid_request"),
        (post_request(path, "", b"\xff\xfe\x00garbage"), 400, "invalid_request"),
        (post_request(path, "", b"[]"), 400, "invalid_request"),
        (
            post_request(path, "", &serde_json::to_vec(&observation("00000000-0000-0000-0000-000000000000")).unwrap()),
            400,
            "invalid_request",
        ),
        (post_request(path, "", &vec![b' '; 70_000]), 413, "payload_too_large"),
        (post_request(path, "", &vec![b' '; 4_097]), 413, "payload_too_large"),
        (post_request("/v1/nope", "", b"{}"), 404, "not_found"),
        (
            b"GET /v1/delivery/observations HTTP/1.1\r\nhost: beed\r\nconnection: close\r\n\r\n".to_vec(),
            404,
            "not_found",
        ),
        (
            post_request("/v1/delivery/report", "", b"{\"store\":\"/elsewhere\",\"session\":null,\"limit\":5}"),
            404,
            "store_not_served",
        ),
        (
            post_request(
                "/v1/delivery/report",
                "",
                format!("{{\"store\":{:?},\"session\":null,\"limit\":101}}", home.store()).as_bytes(),
            ),
            400,
            "invalid_request",
        ),
    ];
    for (request, status, code) in cases {
        let (got, head, body) = raw_http(&socket, &request);
        assert_eq!(got, status, "{head}{}", String::from_utf8_lossy(&body));
        assert!(head.to_ascii_lowercase().contains("bee-protocol: 1"), "{head}");
        let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(error["errorCode"], code);
    }
    // Extra fields are refused too: the contract is exact.
    let mut extra = observation(&uuid::Uuid::new_v4().to_string());
    extra["prompt"] = json!("must never be accepted");
    let (status, _, _) = raw_http(&socket, &post_request(path, "", &serde_json::to_vec(&extra).unwrap()));
    assert_eq!(status, 400);
    // A good one, then its exact repeat (idempotent), then a conflicting repeat (first kept).
    let id = uuid::Uuid::new_v4().to_string();
    let good = serde_json::to_vec(&observation(&id)).unwrap();
    for expected in ["recorded", "duplicate"] {
        let (status, _, body) = raw_http(&socket, &post_request(path, "bee-protocol: 1\r\n", &good));
        assert_eq!(status, 200);
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&body).unwrap(),
            json!({"outcome": expected, "sequence": 1})
        );
    }
    let mut conflicting = observation(&id);
    conflicting["utf8Bytes"] = json!(999);
    let (_, _, body) = raw_http(&socket, &post_request(path, "", &serde_json::to_vec(&conflicting).unwrap()));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&body).unwrap(),
        json!({"outcome": "conflict_kept_first", "sequence": 1})
    );
    let (_, read) = home.read_event(&id);
    assert_eq!(read["observation"]["observation"]["utf8Bytes"], 5);
    assert_eq!(home.report(&[]).1["observedEvents"], 1);
    drop(daemon);
}

#[test]
fn peers_of_another_user_are_refused() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("needs root to run a peer as another user; CI runs as root");
        return;
    }
    let home = TestHome::new();
    let daemon = home.start_daemon();
    // Let the other user reach the socket at all, so that only the peer
    // credential check stands in the way.
    for dir in [home.path().to_owned(), home.bee_dir(), home.bee_dir().join("run")] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::set_permissions(home.socket(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let mut command = home.command(bin("beectl"));
    std::os::unix::process::CommandExt::uid(&mut command, 65534);
    std::os::unix::process::CommandExt::gid(&mut command, 65534);
    let output = command.args(["daemon", "status"]).output().unwrap();
    let status = parse_json_line(&output.stdout);
    assert_eq!(output.status.code(), Some(5));
    assert_ne!(status["daemon"], "running");
    assert!(daemon.log().contains("refused a peer of another user"), "{}", daemon.log());
    assert_eq!(std::fs::metadata(home.socket()).unwrap().uid(), 0);
    // The owner is still served.
    assert_eq!(home.beectl(&["daemon", "status"]).status.code(), Some(0));
}

#[test]
fn socket_activation_and_readiness_notification() {
    let home = TestHome::new();
    std::fs::create_dir_all(home.bee_dir().join("run")).unwrap();
    let notify_path = home.path().join("notify.sock");
    let notify = std::os::unix::net::UnixDatagram::bind(&notify_path).unwrap();
    notify.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // What systemd does: bind the socket, pass it as fd 3, exec the service.
    let activator = r#"
import os, socket, sys
path, beed = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o600)
s.listen(64)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ["LISTEN_FDS"] = "1"
os.environ["LISTEN_PID"] = str(os.getpid())
os.execv(beed, [beed])
"#;
    let mut command = home.command("python3");
    command.env("NOTIFY_SOCKET", &notify_path).args(["-c", activator]).arg(home.socket()).arg(bin("beed"));
    let daemon = Daemon::start(&home, command);
    let mut buffer = [0u8; 256];
    let n = notify.recv(&mut buffer).unwrap();
    assert!(String::from_utf8_lossy(&buffer[..n]).contains("READY=1"));
    let status = parse_json_line(&home.beectl(&["daemon", "status"]).stdout);
    assert_eq!(status["socketActivated"], true);
    let block = home.file("block.md", BLOCK);
    let (_, receipt) = home.fire_with_receipt("plain", &block, &prompt_envelope(SESSION, "x"));
    assert!(taken(&receipt.unwrap().1));
    home.settle();
    assert_eq!(home.report(&[]).1["observedEvents"], 1);
    assert_eq!(daemon.stop(), Some(0));
    assert!(home.socket().exists(), "an inherited socket belongs to the service manager");
}

#[test]
fn sigterm_during_a_burst_commits_what_was_in_flight() {
    let home = TestHome::new();
    let block = home.file("block.md", BLOCK);
    let daemon = home.start_daemon();
    let runs = home.fire_in_parallel(&block, 6, 25, || {
        home.wait_for_records(40);
        daemon.send(rustix::process::Signal::TERM);
    });
    let receipts: Vec<Receipt> = runs.into_iter().filter_map(|(_, receipt)| receipt).collect();
    assert_eq!(daemon.stop(), Some(0), "a graceful stop exits 0");
    assert_eq!(receipts.len(), 150);
    for (id, outcome) in &receipts {
        if outcome == "accepted by beed" {
            assert_eq!(home.read_event(id).0, 0, "acknowledged {id} lost");
        } else {
            assert!(outcome.starts_with("spooled"), "{outcome}");
        }
    }
    let restarted = home.start_daemon();
    assert_eq!(home.report(&[]).1["observedEvents"], 150);
    drop(restarted);
}

/// Kills a beed that `beectl daemon start` started, should the test fail
/// before it stops it.
struct Started<'a>(&'a TestHome);

impl Drop for Started<'_> {
    fn drop(&mut self) {
        let status = parse_json_line(&self.0.beectl(&["daemon", "status"]).stdout);
        if let Some(pid) = status["pid"].as_i64().and_then(|p| i32::try_from(p).ok()) {
            let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

#[test]
fn daemon_start_stop_and_restart_from_beectl() {
    let home = TestHome::new();
    let _guard = Started(&home);
    let control = |action: &str| {
        let output = home.beectl(&["daemon", action]);
        (output.status.code(), parse_json_line(&output.stdout))
    };
    let (code, started) = control("start");
    assert_eq!(code, Some(0), "{started}");
    assert_eq!(started["outcome"], "started");
    let pid = started["pid"].as_u64().unwrap();
    assert_eq!(parse_json_line(&home.beectl(&["daemon", "status"]).stdout)["pid"], pid);
    let (_, again) = control("start");
    assert_eq!((again["outcome"].clone(), again["pid"].clone()), (json!("already_running"), json!(pid)));
    let (code, restarted) = control("restart");
    assert_eq!(
        (code, restarted["action"].clone(), restarted["outcome"].clone()),
        (Some(0), json!("restart"), json!("started"))
    );
    assert_ne!(restarted["pid"], pid, "a new beed");
    let (code, stopped) = control("stop");
    assert_eq!((code, stopped["outcome"].clone()), (Some(0), json!("stopped")));
    assert_eq!(home.beectl(&["daemon", "status"]).status.code(), Some(5), "gone");
    let (code, nothing) = control("stop");
    assert_eq!((code, nothing["outcome"].clone()), (Some(0), json!("not_running")));
    assert_eq!(mode(&home.bee_dir().join("run/beed.log")), 0o600);
}

#[test]
fn daemon_status_shows_every_store_the_ingestion_lag_and_the_spools() {
    let home = TestHome::new();
    let dir = home.path().join(".claude/projects/-home-dev-app");
    let line = serde_json::json!({"type": "assistant", "sessionId": SESSION, "timestamp": "2026-11-30T10:00:00.000Z",
        "requestId": "req_1", "message": {"id": "msg_1", "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}})
    .to_string()
        + "\n";
    write_quiet(&dir.join(format!("{SESSION}.jsonl")), &line);
    let offline = parse_json_line(&home.beectl(&["daemon", "status"]).stdout);
    let message = offline["message"].as_str().unwrap();
    assert!(message.starts_with("beed is not running (no socket at "), "{message}");
    assert!(message.ends_with("start it: `beectl daemon start`, or `beectl setup` for a user service"), "{message}");
    assert_eq!(
        offline["ingestion"][0],
        json!({"provider": "claude", "files": 1, "filesBehind": 1, "bytesBehind": line.len()})
    );
    let daemon = home.start_daemon_with(&["--ingest-every", "0", "--http", "127.0.0.1:0"]);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let status = parse_json_line(&home.beectl(&["daemon", "status"]).stdout);
    let names: Vec<&str> = status["stores"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["delivery", "ledger", "events"]);
    assert_eq!(status["stores"][1]["records"], 1, "one response: {status}");
    assert!(status["stores"][1]["sizeBytes"].as_u64().unwrap() > 0);
    assert_eq!(status["ingestion"][0]["filesBehind"], 0, "caught up");
    assert_eq!(status["spools"].as_array().unwrap().len(), 3);
    assert!(status["dashboardUrl"].as_str().unwrap().starts_with("http://127.0.0.1:"));
    let table = String::from_utf8(home.beectl(&["daemon", "status", "--format", "table"]).stdout).unwrap();
    for word in ["beed      running", "ledger", "events", "FILES BEHIND", "SPOOL", "dashboard http://"] {
        assert!(table.contains(word), "{word}: {table}");
    }
    drop(daemon);
}
