//! Ledger benchmarks, each against a baseline in the same run:
//!
//! 1. first ingestion of Claude transcripts, MB/s, against reading the same
//!    files raw (the I/O floor);
//! 2. a re-run on unchanged logs, ms per GB (offsets, no re-read);
//! 3. `beectl quota --window 7d` and `beectl usage --by day` over 500,000
//!    calls and 500,000 responses, whole-command wall time, against
//!    `beectl --version` (process start) and a raw `COUNT(*)` scan of both.
//!
//! `cargo bench -p bee-tests --bench ledger`; `BEE_BENCH_KEEP=DIR` writes
//! the views' ledger to DIR and stops there, for a profiler or for
//! `tests/benches/against-build.sh REV`, which times a warm `beectl` command
//! of this tree against an earlier build's, in turns.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_daemon::ledger::intake::ingest::{self, Roots};
use bee_daemon::ledger::stored::evidence::Evidence;
use bee_daemon::ledger::stored::responses::ResponseWrite;
use bee_daemon::ledger::stored::store::Ledger;
use bee_proto::ledger::{CallRecord, CallSource, LedgerRecord, Provider};
use bee_proto::usage::Counters;
use bee_tests::*;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn main() {
    // Kept for another run (`against-build.sh`): the views' ledger alone.
    if std::env::var_os("BEE_BENCH_KEEP").is_none() {
        ingestion();
    }
    views();
}

fn transcript_set(root: &std::path::Path, files: usize, bytes_per_file: usize) -> u64 {
    let tool_output = "fn main() { println!(\"hello\"); }\n".repeat(60);
    let mut total = 0;
    for f in 0..files {
        let session = uuid::Uuid::new_v4().to_string();
        let mut body = String::with_capacity(bytes_per_file + 4096);
        let mut n = 0;
        while body.len() < bytes_per_file {
            body.push_str(&serde_json::json!({"type": "user", "sessionId": session, "timestamp": "2026-11-30T10:00:00.000Z",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": tool_output}]}}).to_string());
            body.push('\n');
            body.push_str(&serde_json::json!({"type": "assistant", "sessionId": session, "timestamp": "2026-11-30T10:00:01.000Z",
                "requestId": format!("req_{f}_{n}"), "cwd": "/home/dev/app",
                "message": {"id": format!("msg_{f}_{n}"), "model": "claude-sonnet-4-5", "role": "assistant",
                            "content": [{"type": "text", "text": "I'll read the file and then run the tests to check the change."}],
                            "usage": {"input_tokens": 4, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 20000, "output_tokens": 120}}}).to_string());
            body.push('\n');
            n += 1;
        }
        let path = root.join(format!("{session}.jsonl"));
        write_quiet(&path, &body);
        total += body.len() as u64;
    }
    total
}

fn ingestion() {
    let home = TestHome::new();
    let root = home.path().join("projects/-home-dev-app");
    std::fs::create_dir_all(&root).unwrap();
    let bytes = transcript_set(&root, 40, 5 << 20);
    let mb = bytes as f64 / 1e6;
    // Baseline: read every file, nothing else.
    let started = Instant::now();
    let mut read = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        read += std::fs::read(entry.unwrap().path()).unwrap().len();
    }
    let raw = started.elapsed();
    assert_eq!(read as u64, bytes);
    let roots = Roots::of(bee_proto::ledger::Provider::Claude, vec![root.clone()]);
    // Five first ingestions, each into a fresh ledger.
    let mut firsts = Vec::new();
    let mut ledger = None;
    for round in 0..5 {
        let fresh = Mutex::new(Ledger::open(&home.path().join(format!("ledger-{round}"))).unwrap());
        let started = Instant::now();
        let first = ingest::pass(&fresh, &roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
        firsts.push(started.elapsed());
        assert_eq!(first.bytes_read, bytes);
        ledger = Some((fresh, first.records_appended));
    }
    let (ledger, records) = ledger.unwrap();
    let first = Spread::of(&firsts);
    let mut reruns = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        let again = ingest::pass(&ledger, &roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
        reruns.push(started.elapsed());
        assert_eq!(again.bytes_read, 0);
    }
    let rerun = Spread::of(&reruns);
    println!("ingestion of {mb:.0} MB of Claude transcripts in 40 files ({records} records):");
    println!("  raw read        {:.0} MB/s", mb / raw.as_secs_f64());
    println!(
        "  first ingestion, 5 fresh ledgers: median {:.0} MB/s (min {:.0}, max {:.0}); ratio to raw read {:.3}x",
        mb * 1e3 / first.median,
        mb * 1e3 / first.max,
        mb * 1e3 / first.min,
        raw.as_secs_f64() * 1e3 / first.median
    );
    println!("  re-run, unchanged: {rerun}; {:.1} ms per GB", rerun.median * 1e9 / bytes as f64);
}

fn views() {
    let home = TestHome::new();
    let dir = home.bee_dir().join("usage").join("ledger-v1");
    let mut ledger = Ledger::open(&dir).unwrap();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let week = 7 * 24 * 3_600_000u64;
    let mut random = xorshift(0x9e37_79b9_7f4a_7c15);
    let started = Instant::now();
    for _ in 0..100 {
        let batch: Vec<Evidence> = (0..10_000)
            .map(|n| {
                let at = now - 1_000 - random() % (week - 3_600_000);
                let at_utc = bee_proto::time::format_rfc3339(UNIX_EPOCH + Duration::from_millis(at));
                let provider = if random().is_multiple_of(3) { Provider::Codex } else { Provider::Claude };
                let model = ["claude-sonnet-4-5", "claude-opus-4-1", "gpt-5-codex"][(random() % 3) as usize].to_owned();
                let session = format!("session-{}", random() % 1_000);
                let tokens = Counters {
                    input_tokens: Some(random() % 5_000),
                    cache_creation_input_tokens: Some(random() % 500),
                    cache_read_input_tokens: Some(random() % 50_000),
                    output_tokens: Some(random() % 900),
                    ..Counters::default()
                };
                // Half producer calls (the time), half provider responses (the tokens).
                if n % 2 == 0 {
                    return Evidence::Response(ResponseWrite {
                        provider,
                        key: uuid::Uuid::new_v4().to_string(),
                        session_id: Some(session.into()),
                        at_ms: at as i64,
                        model: Some(model.into()),
                        tokens,
                        context_tokens: None,
                        context_window: None,
                        is_final: true,
                        own_figure: None,
                        copied: false,
                    });
                }
                Evidence::Record(LedgerRecord::Call(Box::new(CallRecord {
                    record_id: uuid::Uuid::new_v4(),
                    source: CallSource::Run,
                    provider,
                    started_at_utc: at_utc,
                    duration_ms: Some(1_000 + random() % 300_000),
                    success: Some(true),
                    model: Some(model),
                    project_path: Some("/home/dev/app".to_owned()),
                    cost_usd: Some(0.01),
                    tokens: Some(tokens),
                    quota_snapshots: Vec::new(),
                    model_invocations: Some(1),
                    context_window: None,
                    context_tokens: None,
                    compactions: None,
                    session_id: Some(session),
                    outcome: None,
                })))
            })
            .collect();
        ledger.append_at(&batch, &[]).unwrap();
    }
    let written = started.elapsed();
    let started = Instant::now();
    ledger.settle();
    println!(
        "\n500,000 calls and 500,000 responses written in {:.1} s, their aggregates settled in {:.1} s",
        written.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    drop(ledger);
    if let Some(keep) = std::env::var_os("BEE_BENCH_KEEP") {
        std::process::Command::new("cp").arg("-a").arg(home.path()).arg(&keep).status().unwrap();
        return;
    }
    let run = |args: &[&str]| {
        let started = Instant::now();
        let output = home.command(bin("beectl")).args(args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
        started.elapsed()
    };
    let conn = rusqlite::Connection::open(dir.join("ledger.sqlite3")).unwrap();
    let mut scans = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let calls: i64 =
            conn.query_row("SELECT COUNT(*) FROM call WHERE started_at_ms >= 0", [], |r| r.get(0)).unwrap();
        let responses: i64 =
            conn.query_row("SELECT COUNT(*) FROM response_write WHERE at_ms >= 0", [], |r| r.get(0)).unwrap();
        scans.push(started.elapsed());
        assert_eq!(calls + responses, 1_000_000);
    }
    let scan = Spread::of(&scans);
    run(&["--version"]); // builds the binaries on first use; not timed
    let version = Spread::of(&(0..10).map(|_| run(&["--version"])).collect::<Vec<_>>());
    println!("  baseline beectl --version     {version}");
    println!("  baseline COUNT(*) scan        {scan}");
    // What beed's exporter reads at every send: every series over the whole store.
    let stores = bee_daemon::export::Stores {
        ledger: dir.clone(),
        delivery: home.bee_dir().join("usage").join("delivery-v1"),
        events: home.bee_dir().join("usage").join("events-v1"),
        manifests: Vec::new(),
        spool: home.spool_dir(),
        socket: home.socket(),
    };
    let mut reads = Vec::new();
    let mut count = 0;
    for _ in 0..5 {
        let started = Instant::now();
        let (series, _, problems) = bee_daemon::export::read_series(&stores, "bench", "host", now as i64);
        reads.push(started.elapsed());
        assert!(problems.is_empty(), "{problems:?}");
        count = series.len();
    }
    let read = Spread::of(&reads);
    println!("  export: every series ({count}) read {read}; {:.1}x the raw scan", read.median / scan.median);
    // A send while nothing changed only counts the stores' records.
    let checks: Vec<_> = (0..5)
        .map(|_| {
            let started = Instant::now();
            bee_daemon::export::cursor(&stores);
            started.elapsed()
        })
        .collect();
    let check = Spread::of(&checks);
    println!("  export: stores unchanged, checked {check}; {:.1}x the raw scan", check.median / scan.median);
    for args in [&["quota", "--window", "7d"][..], &["usage", "--by", "day"], &["status", "--window", "7d"]] {
        run(args);
        let times = Spread::of(&(0..7).map(|_| run(args)).collect::<Vec<_>>());
        println!(
            "  beectl {:<22} {times}; {:.1}x --version, {:.1}x the raw scan",
            args.join(" "),
            times.median / version.median,
            times.median / scan.median
        );
    }
}
