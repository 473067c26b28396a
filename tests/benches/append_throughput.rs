//! Observations persisted per second through one beed from 8 concurrent
//! writers over the unix socket, each a connect–POST–close like the hook,
//! acknowledged after commit (WAL, synchronous=NORMAL, as beed runs).
//!
//! Baselines in the same run: a writer committing one SQLite transaction per
//! observation in-process (no socket, no HTTP), with the same durability, and
//! with a sync per commit (FULL). The ratios show what the daemon path costs
//! against the bare store, and where it stands against syncing every append.
//!
//! `cargo bench -p bee-tests --bench append_throughput [-- ROUNDS]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_tests::*;
use std::time::{Duration, Instant};

const WRITERS: usize = 8;
/// A fresh store per round holds exactly its capacity.
const PER_WRITER: usize = 2048 / WRITERS;

fn main() {
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(7);
    let mut beed_rates = Vec::new();
    let mut normal_rates = Vec::new();
    let mut full_rates = Vec::new();
    for _ in 0..rounds {
        beed_rates.push(beed_round());
        normal_rates.push(naive_round("NORMAL"));
        full_rates.push(naive_round("FULL"));
    }
    let (b, n, f) = (stats(&mut beed_rates), stats(&mut normal_rates), stats(&mut full_rates));
    println!("append throughput, {rounds} rounds of {} observations, {WRITERS} writers", WRITERS * PER_WRITER);
    println!("  beed (8 writers, socket, NORMAL):     median {:.0}/s (min {:.0}, max {:.0})", b.0, b.1, b.2);
    println!("  in-process commit-per-row, NORMAL:    median {:.0}/s (min {:.0}, max {:.0})", n.0, n.1, n.2);
    println!("  in-process commit-per-row, FULL sync: median {:.0}/s (min {:.0}, max {:.0})", f.0, f.1, f.2);
    println!("  ratio beed / in-process NORMAL: {:.2}x; beed / FULL-sync writer: {:.2}x", b.0 / n.0, b.0 / f.0);
}

fn stats(rates: &mut [f64]) -> (f64, f64, f64) {
    rates.sort_by(f64::total_cmp);
    (rates[rates.len() / 2], rates[0], rates[rates.len() - 1])
}

fn observation(event: &uuid::Uuid) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "kind": "Delivered", "observedAtUtc": "2026-11-30T12:00:00.000Z", "eventId": event,
        "sessionKind": "claude-native-session", "sessionId": SESSION, "surface": "hook.prompt.plain",
        "itemId": "steering-block", "itemVersion": "1", "utf8Bytes": 1024,
        "estimates": [{"estimator": "utf16-ceil-div4", "version": 1, "estimatedTokens": 256}]
    }))
    .unwrap()
}

fn beed_round() -> f64 {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let socket = home.socket();
    let bodies: Vec<Vec<Vec<u8>>> =
        (0..WRITERS).map(|_| (0..PER_WRITER).map(|_| observation(&uuid::Uuid::new_v4())).collect()).collect();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for mine in &bodies {
            let socket = &socket;
            scope.spawn(move || {
                for body in mine {
                    let (status, _, _) =
                        raw_http(socket, &post_request("/v1/delivery/observations", "bee-protocol: 1\r\n", body));
                    assert_eq!(status, 200);
                }
            });
        }
    });
    let elapsed = started.elapsed();
    assert_eq!(home.report(&["--limit", "0"]).1["observedEvents"], (WRITERS * PER_WRITER) as u64);
    drop(daemon);
    rate(elapsed)
}

fn naive_round(synchronous: &str) -> f64 {
    let home = TestHome::new();
    let conn = rusqlite::Connection::open(home.path().join("naive.sqlite3")).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", synchronous).unwrap();
    conn.execute_batch("CREATE TABLE o (id TEXT PRIMARY KEY, body TEXT NOT NULL)").unwrap();
    let started = Instant::now();
    for _ in 0..WRITERS * PER_WRITER {
        let id = uuid::Uuid::new_v4();
        let body = observation(&id);
        conn.execute("INSERT INTO o VALUES (?1, ?2)", (id.to_string(), String::from_utf8(body).unwrap())).unwrap();
    }
    rate(started.elapsed())
}

fn rate(elapsed: Duration) -> f64 {
    (WRITERS * PER_WRITER) as f64 / elapsed.as_secs_f64()
}
