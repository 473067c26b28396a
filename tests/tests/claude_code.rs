//! The real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned in
//! `tests/node/package.json`, installed by `.ci/run`) running Bee's prompt
//! hook against a mock of the provider's Messages API written here: the
//! block reaches the model's request, and Bee observes exactly that prompt,
//! in the session Claude Code named — the variable it sets for every hook
//! process and the envelope agree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn claude_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("BEE_TEST_CLAUDE") {
        return path.into();
    }
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node/node_modules/@anthropic-ai/claude-code-linux-x64/claude");
    assert!(path.exists(), "this test needs the Claude Code CLI: `npm ci --prefix tests/node` (.ci/run does it)");
    path
}

/// Each request the mock served: its path and body.
type Served = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A provider API that answers every `/v1/messages` request with one
/// streamed response and keeps each request body it served.
struct MockProvider {
    port: u16,
    requests: Served,
}

const ANSWER: &str = "Hello from the mock provider.";

fn sse(events: &[Value]) -> String {
    events.iter().map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap())).collect()
}

impl MockProvider {
    fn start() -> MockProvider {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, &seen));
            }
        });
        MockProvider { port, requests }
    }
}

fn serve(stream: std::net::TcpStream, seen: &Mutex<Vec<(String, Vec<u8>)>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    let path = request_line.split_whitespace().nth(1).unwrap_or("").to_owned();
    seen.lock().unwrap().push((path.clone(), body.clone()));
    let streaming = serde_json::from_slice::<Value>(&body).is_ok_and(|b| b["stream"] == true);
    let (content_type, answer) = if path.starts_with("/v1/messages") && !path.contains("count_tokens") && streaming {
        let usage = json!({"input_tokens": 25, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1});
        let message = json!({"id": "msg_mock_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                             "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage});
        let events = [
            json!({"type": "message_start", "message": message}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ANSWER}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 7}}),
            json!({"type": "message_stop"}),
        ];
        ("text/event-stream", sse(&events))
    } else if path.contains("count_tokens") {
        ("application/json", json!({"input_tokens": 25}).to_string())
    } else {
        ("application/json", "{}".to_owned())
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\nrequest-id: req_mock_01\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        answer.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(answer.as_bytes());
}

#[test]
fn the_real_claude_code_runs_the_prompt_hook_and_bee_observes_its_session() {
    let claude = claude_binary();
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let provider = MockProvider::start();
    let block_text = "Steering: run the linter before every commit (bee-e2e-marker).\n";
    let block = home.file("block.md", block_text.as_bytes());
    let hook = format!("'{}' prompt --surface plain --block '{}'", bin("bee-hook").display(), block.display());
    let settings = home.file(
        "settings.json",
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": hook}]}]}})
            .to_string()
            .as_bytes(),
    );
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let session = "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";

    let output = home
        .command(&claude)
        .current_dir(&project)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", provider.port))
        .env("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args(["-p", "say hi", "--settings", settings.to_str().unwrap(), "--session-id", session])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains(ANSWER));

    // The block reached the model: it is in the request the provider served.
    let requests = provider.requests.lock().unwrap().clone();
    let to_model: Vec<&Vec<u8>> = requests
        .iter()
        .filter(|(path, _)| path.starts_with("/v1/messages") && !path.contains("count_tokens"))
        .map(|(_, b)| b)
        .collect();
    assert!(!to_model.is_empty(), "Claude Code made no model request: {requests:?}");
    assert!(to_model.iter().any(|body| contains(body, b"bee-e2e-marker")), "the hook output is not in the request");

    // Bee observed that one prompt, in the session Claude Code named.
    home.settle();
    let (code, report) = home.report(&[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["observedEvents"], 1, "{report}");
    assert_eq!(report["deliveredUtf8Bytes"], block_text.len(), "{report}");
    let sessions: Vec<&Value> =
        report["groups"].as_array().unwrap().iter().filter(|g| g["dimension"] == "session").collect();
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        (sessions[0]["identity"].as_str(), sessions[0]["version"].as_str()),
        (Some(session), Some("claude-native-session"))
    );
    drop(daemon);
}
