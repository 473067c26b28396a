//! Hook event pipeline benchmarks, each against a baseline in the same run:
//!
//! 1. events accepted and persisted per second from 8 concurrent senders
//!    over the unix socket (connect–POST–close, as `bee-hook event` does,
//!    answered after commit), against an in-process writer committing one
//!    transaction per event with the same durability (no socket, no HTTP);
//! 2. latency from a POST to each of 10 connected WebSocket clients, p99,
//!    against the POST's own round trip (the answer carries the stored id).
//!
//! 3. `bee-hook event` (a real process, beed running) for an envelope whose
//!    transcript is 200 MB — the model is read from its last MiB, as the
//!    reference's sender reads it from the whole file — against the same
//!    envelope naming no transcript.
//!
//! `cargo bench -p bee-tests --bench events [-- ROUNDS]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_tests::*;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SENDERS: usize = 8;
const PER_SENDER: usize = 500;
const CLIENTS: usize = 10;
const LATENCY_EVENTS: usize = 400;

fn main() {
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(5);
    let mut beed = Vec::new();
    let mut bare = Vec::new();
    for _ in 0..rounds {
        beed.push(throughput_round());
        bare.push(in_process_round());
    }
    let (b, n) = (stats(&mut beed), stats(&mut bare));
    println!("events persisted per second, {rounds} rounds of {} events from {SENDERS} senders", SENDERS * PER_SENDER);
    println!("  beed (unix socket, answered after commit): median {:.0}/s (min {:.0}, max {:.0})", b.0, b.1, b.2);
    println!("  in-process commit-per-event:               median {:.0}/s (min {:.0}, max {:.0})", n.0, n.1, n.2);
    println!("  ratio beed / in-process: {:.2}x", b.0 / n.0);
    latency();
    model_from_transcript();
}

/// Runs of each kind, interleaved.
const HOOK_RUNS: usize = 40;
/// The transcript's size: a long session's.
const TRANSCRIPT_BYTES: usize = 200 << 20;

fn model_from_transcript() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let transcript = home.path().join("transcript.jsonl");
    {
        use std::io::Write;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&transcript).unwrap());
        let line = json!({"type": "assistant", "message": {"role": "assistant", "model": "claude-sonnet-4-5-20250929",
                          "content": [{"type": "text", "text": "x".repeat(2_000)}]}})
        .to_string();
        let mut written = 0;
        while written < TRANSCRIPT_BYTES {
            writeln!(file, "{line}").unwrap();
            written += line.len() + 1;
        }
    }
    let envelope = |with: bool| {
        let mut envelope = json!({"session_id": "bench-session", "hook_event_name": "Stop", "stop_hook_active": false});
        if with {
            envelope["transcript_path"] = json!(transcript.display().to_string());
        }
        envelope.to_string().into_bytes()
    };
    let (with, without) = (envelope(true), envelope(false));
    let (mut read, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..HOOK_RUNS {
        let run = |body: &[u8]| {
            let mut command = home.command(bin("bee-hook"));
            command.args(["event", "--source-app", "bench"]);
            let (output, took) = home.hook_with(command, &[], body);
            assert_eq!(output.status.code(), Some(0));
            took
        };
        read.push(run(&with));
        bare.push(run(&without));
    }
    let (r, b) = (Spread::of(&read), Spread::of(&bare));
    println!("\nbee-hook event, {HOOK_RUNS} runs each, interleaved:");
    println!("  model read from a {} MB transcript  {r}", TRANSCRIPT_BYTES >> 20);
    println!("  no transcript (baseline)            {b}");
    println!("  ratio median {:.2}x, p99 {:.2}x", r.median / b.median, r.p99 / b.p99);
    let (_, _, body) = raw_http(&home.socket(), &get_request("/events/recent", "beed", ""));
    let recent: Value = serde_json::from_slice(&body).unwrap();
    let named = recent.as_array().unwrap().iter().filter(|e| e["model_name"] == "claude-sonnet-4-5-20250929").count();
    assert_eq!(named, HOOK_RUNS, "the model was read every time, and only from the transcript");
    drop(daemon);
}

fn stats(rates: &mut [f64]) -> (f64, f64, f64) {
    rates.sort_by(f64::total_cmp);
    (rates[rates.len() / 2], rates[0], rates[rates.len() - 1])
}

fn event(sender: usize, n: usize) -> Vec<u8> {
    json!({"source_app": "bench", "session_id": format!("session-{sender}"), "hook_event_type": "PreToolUse",
           "payload": {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": format!("toolu_{sender}_{n}")},
           "tool_name": "Bash", "bee_event_id": uuid::Uuid::new_v4().to_string()})
    .to_string()
    .into_bytes()
}

fn throughput_round() -> f64 {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let socket = home.socket();
    let bodies: Vec<Vec<Vec<u8>>> = (0..SENDERS).map(|s| (0..PER_SENDER).map(|n| event(s, n)).collect()).collect();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for mine in &bodies {
            let socket = &socket;
            scope.spawn(move || {
                for body in mine {
                    let (status, _, answer) = raw_http(socket, &post_request("/events", "", body));
                    assert_eq!(status, 200);
                    assert!(serde_json::from_slice::<Value>(&answer).unwrap()["id"].as_i64().is_some());
                }
            });
        }
    });
    let rate = (SENDERS * PER_SENDER) as f64 / started.elapsed().as_secs_f64();
    drop(daemon);
    rate
}

fn in_process_round() -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let mut store = bee_daemon::events::store::EventStore::open(&dir.path().join("events")).unwrap();
    let events: Vec<_> = (0..SENDERS * PER_SENDER)
        .map(|n| bee_proto::events::accept(&event(n % SENDERS, n), |_| false, 1_796_000_000_000).unwrap())
        .collect();
    let started = Instant::now();
    for event in events {
        use bee_daemon::storage::writer::BatchStore;
        let write =
            bee_daemon::events::store::EventWrite::Event(Box::new(event), bee_daemon::events::store::Arrival::Direct);
        assert!(store.append_batch(std::slice::from_ref(&write))[0].is_ok());
    }
    (SENDERS * PER_SENDER) as f64 / started.elapsed().as_secs_f64()
}

/// Stream clients record when each event id reaches them.
type Arrivals = Arc<Mutex<HashMap<i64, Vec<Instant>>>>;

fn latency() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let secret = daemon.http_secret().expect("the read secret");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let arrivals: Arrivals = Arc::default();
    let connected = Arc::new(std::sync::Barrier::new(CLIENTS + 1));
    for _ in 0..CLIENTS {
        let (addr, arrivals, connected, secret) = (addr.clone(), arrivals.clone(), connected.clone(), secret.clone());
        runtime.spawn(async move {
            use tokio_tungstenite::tungstenite::client::IntoClientRequest;
            let tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
            tcp.set_nodelay(true).unwrap();
            let mut request = format!("ws://{addr}/stream").into_client_request().unwrap();
            request.headers_mut().insert("Authorization", format!("Bearer {secret}").parse().unwrap());
            let (mut socket, _) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
            let _initial = socket.next().await;
            tokio::task::spawn_blocking(move || connected.wait()).await.unwrap();
            while let Some(Ok(message)) = socket.next().await {
                let at = Instant::now();
                if let Ok(text) = message.to_text()
                    && let Ok(value) = serde_json::from_str::<Value>(text)
                    && let Some(id) = value["data"]["id"].as_i64()
                {
                    arrivals.lock().unwrap().entry(id).or_default().push(at);
                }
            }
        });
    }
    connected.wait();
    let mut round_trips = Vec::new();
    let mut sent: Vec<(i64, Instant)> = Vec::new();
    for n in 0..LATENCY_EVENTS {
        let body = event(0, n);
        let request = format!(
            "POST /events HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(&body);
        let started = Instant::now();
        let (status, _, answer) = tcp_http(&addr, &bytes);
        round_trips.push(started.elapsed());
        assert_eq!(status, 200);
        sent.push((serde_json::from_slice::<Value>(&answer).unwrap()["id"].as_i64().unwrap(), started));
        std::thread::sleep(Duration::from_millis(5));
    }
    let complete = eventually(Duration::from_secs(10), || {
        let arrivals = arrivals.lock().unwrap();
        sent.iter().all(|(id, _)| arrivals.get(id).is_some_and(|a| a.len() == CLIENTS))
    });
    assert!(complete, "every client got every event");
    let arrivals = arrivals.lock().unwrap();
    let latencies: Vec<Duration> =
        sent.iter().flat_map(|(id, started)| arrivals[id].iter().map(move |at| at.duration_since(*started))).collect();
    let stream = Spread::of(&latencies);
    let post = Spread::of(&round_trips);
    println!("\nPOST to stream client, {CLIENTS} clients, {LATENCY_EVENTS} events ({} deliveries):", latencies.len());
    println!("  POST → each stream client   {stream}");
    println!("  baseline POST round trip    {post}");
    println!(
        "  ratio p99 stream / p99 POST round trip: {:.2}x; median {:.2}x",
        stream.p99 / post.p99,
        stream.median / post.median
    );
    drop(arrivals);
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(daemon);
}
