//! Wall time of `bee-hook prompt --block FILE` against `cat FILE`, timed the
//! same way, interleaved, in the same run: with beed up, with beed down (no
//! socket), and with beed frozen (the 100 ms deadline bounds the hook).
//!
//! `cargo bench -p bee-tests --bench hook_latency [-- RUNS]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_tests::*;
use std::time::Duration;

fn main() {
    let runs: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(300);
    let home = TestHome::new();
    let block =
        home.file("block.md", &"Steering: keep functions small; test what you change.\n".repeat(19).into_bytes());
    let envelope = prompt_envelope(SESSION, "benchmark the hook");
    let block_arg = block.to_str().unwrap().to_owned();
    let hook_args = ["prompt", "--surface", "plain", "--block", block_arg.as_str()];
    let cat = || home.hook_with(home.command("cat"), &[block_arg.as_str()], &envelope).1;
    let hook = || {
        let (output, elapsed) = home.hook(&hook_args, &envelope);
        assert_eq!(output.status.code(), Some(0));
        elapsed
    };
    // Warm the page cache and the binaries.
    for _ in 0..20 {
        cat();
        hook();
    }

    println!("hook latency, {runs} interleaved runs each, {} byte block", std::fs::metadata(&block).unwrap().len());
    let daemon = home.start_daemon();
    let (cat_up, hook_up) = interleave(runs, &cat, &hook);
    report("beed up", &cat_up, &hook_up);
    home.settle();
    let recorded = home.report(&["--limit", "0"]).1["observedEvents"].as_u64().unwrap();
    drop(daemon);
    println!("  observations recorded with beed up: {recorded}");

    let (cat_down, hook_down) = interleave(runs, &cat, &hook);
    report("beed down (no socket)", &cat_down, &hook_down);

    let daemon = home.start_daemon();
    daemon.freeze();
    let frozen_runs = runs.min(40);
    let (cat_frozen, hook_frozen) = interleave(frozen_runs, &cat, &hook);
    report("beed frozen (deadline)", &cat_frozen, &hook_frozen);
    daemon.resume();
    drop(daemon);
}

fn interleave(runs: usize, cat: &dyn Fn() -> Duration, hook: &dyn Fn() -> Duration) -> (Vec<Duration>, Vec<Duration>) {
    let mut cats = Vec::with_capacity(runs);
    let mut hooks = Vec::with_capacity(runs);
    for _ in 0..runs {
        cats.push(cat());
        hooks.push(hook());
    }
    (cats, hooks)
}

fn report(label: &str, cat: &[Duration], hook: &[Duration]) {
    let (c, h) = (Spread::of(cat), Spread::of(hook));
    println!("{label}:");
    println!("  cat      {c}");
    println!("  bee-hook {h}");
    println!(
        "  added over cat: median {:+.3} ms, p99 {:+.3} ms; ratio hook/cat: median {:.2}x, p99 {:.2}x",
        h.median - c.median,
        h.p99 - c.p99,
        h.median / c.median,
        h.p99 / c.p99
    );
}
