//! `beectl usage` by agent and by session against by day, on one ledger of
//! a million responses from every agent Bee reads (20,000 sessions, several
//! models each, over 30 days), each whole command's wall time in the same
//! run: `--by day,agent`, `--by session`, `--by agent,model` and
//! `--by session,model` as ratios of `--by day` (target ≤ 1.5×), beside
//! `beectl --version` (process start).
//!
//! `cargo bench -p bee-tests --bench usage_groupings`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_tests::bench_ledger::RESPONSES;
use bee_tests::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn main() {
    let home = TestHome::new();
    bee_tests::bench_ledger::million_responses(&home);
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
