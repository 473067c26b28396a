//! `beectl usage` by agent and by session against by day, on one ledger of
//! a million responses from every agent Bee reads (20,000 sessions, several
//! models each, over 30 days), each whole command's wall time in the same
//! run: `--by day,agent`, `--by session`, `--by agent,model` and
//! `--by session,model` as ratios of `--by day` (target ≤ 1.5×), beside
//! `beectl --version` (process start).
//!
//! `cargo bench -p bee-tests --bench usage_groupings`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_daemon::ledger::stored::evidence::Evidence;
use bee_daemon::ledger::stored::responses::ResponseWrite;
use bee_daemon::ledger::stored::store::Ledger;
use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use bee_tests::*;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const RESPONSES: u64 = 1_000_000;
const SESSIONS: u64 = 20_000;
const MODELS: [&str; 6] = [
    "claude-sonnet-4-5-20250929",
    "anthropic/claude-sonnet-4-5",
    "gpt-5-codex",
    "gemini-2.5-pro",
    "qwen3-coder-plus",
    "glm-4.6",
];

fn main() {
    let home = TestHome::new();
    let dir = home.bee_dir().join("usage").join("ledger-v1");
    let mut ledger = Ledger::open(&dir).unwrap();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let month = 30 * 24 * 3_600_000u64;
    let mut random = xorshift(0x51f1_5eed_0dd5_1234);
    let started = Instant::now();
    let batch_size = 20_000;
    for batch in 0..RESPONSES / batch_size {
        let writes: Vec<Evidence> = (0..batch_size)
            .map(|n| {
                let session = random() % SESSIONS;
                // A session is one agent's: the agent follows from it.
                let provider = Provider::ALL[(session % Provider::ALL.len() as u64) as usize];
                let at = now - 1_000 - (session * 7_919 + random() % 3_600_000) % (month - 3_600_000);
                let model = MODELS[((session + random() % 2) % MODELS.len() as u64) as usize];
                Evidence::Response(ResponseWrite {
                    provider,
                    key: format!("r{batch}-{n}"),
                    session_id: Some(format!("{}-session-{session:05}", provider.as_str()).into()),
                    at_ms: at as i64,
                    model: Some(model.into()),
                    tokens: Counters {
                        input_tokens: Some(random() % 5_000),
                        cache_creation_input_tokens: Some(random() % 500),
                        cache_read_input_tokens: Some(random() % 50_000),
                        output_tokens: Some(random() % 900),
                        ..Counters::default()
                    },
                    context_tokens: None,
                    context_window: None,
                    is_final: true,
                    own_figure: Some(0.001).filter(|_| session.is_multiple_of(3)),
                    copied: false,
                })
            })
            .collect();
        ledger.append_at(&writes, &[]).unwrap();
    }
    let written = started.elapsed();
    let started = Instant::now();
    ledger.settle();
    println!(
        "\n{RESPONSES} responses of {} agents in {SESSIONS} sessions written in {:.1} s, settled in {:.1} s",
        Provider::ALL.len(),
        written.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    drop(ledger);
    let run = |args: &[&str]| {
        let started = Instant::now();
        let output = home.command(bin("beectl")).args(args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        (started.elapsed(), output.stdout)
    };
    run(&["--version"]); // builds the binaries on first use; not timed
    let version = Spread::of(&(0..10).map(|_| run(&["--version"]).0).collect::<Vec<_>>());
    println!("  baseline beectl --version          {version}");
    let asks: [&[&str]; 5] = [
        &["usage", "--no-import", "--json", "--by", "day"],
        &["usage", "--no-import", "--json", "--by", "day,agent"],
        &["usage", "--no-import", "--json", "--by", "session"],
        &["usage", "--no-import", "--json", "--by", "agent,model"],
        &["usage", "--no-import", "--json", "--by", "session,model"],
    ];
    // Rounds interleave the asks, so a slow moment of the machine falls on all of them.
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); asks.len()];
    let mut responses = Vec::new();
    let rounds = if std::env::var_os("BEE_BENCH_KEEP").is_some() { 1 } else { 8 };
    for round in 0..rounds {
        for (at, args) in asks.iter().enumerate() {
            let (took, stdout) = run(args);
            if round == 0 {
                let report = parse_json_line(&stdout);
                responses.push(report["totals"]["responses"].as_u64().unwrap_or(0));
                continue; // warms the page cache; not timed
            }
            samples[at].push(took);
        }
    }
    assert!(responses.iter().all(|n| *n == RESPONSES), "every grouping counts every response: {responses:?}");
    if std::env::var_os("BEE_BENCH_KEEP").is_some() {
        // For a profiler: the home stays, and says where it is.
        println!("  the ledger's home is kept at {}", home.path().display());
        std::mem::forget(home);
        return;
    }
    let day = Spread::of(&samples[0]);
    for (args, times) in asks.iter().zip(&samples) {
        let times = Spread::of(times);
        println!(
            "  beectl usage --by {:<14} {times}; {:.2}x --by day (min {:.2}x, max {:.2}x)",
            args[args.len() - 1],
            times.median / day.median,
            times.min / day.median,
            times.max / day.median,
        );
    }
}
