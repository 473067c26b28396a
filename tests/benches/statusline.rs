//! Wall time of `bee-hook statusline` (Bee's own line, a Pro/Max input with
//! `rate_limits`, whose snapshots it records) against `cat` of the same
//! input, interleaved in the same run: with beed up over a ledger holding
//! today's usage, and with beed down. The target is at most 5 ms added
//! over `cat` with beed up.
//!
//! `cargo bench -p bee-tests --bench statusline [-- RUNS]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_tests::*;
use serde_json::json;

fn main() {
    let runs: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(300);
    let home = TestHome::new();
    // A day of usage in the ledger: 2,000 responses today.
    let dir = home.path().join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&dir).unwrap();
    let now = bee_proto::time::now_unix_ms();
    let mut transcript = String::new();
    for n in 0..2_000i64 {
        let at = bee_proto::time::format_unix_ms(now - (n % 600) * 1_000);
        transcript +=
            &(json!({"type": "assistant", "sessionId": SESSION, "timestamp": at, "requestId": format!("req_{n}"),
            "message": {"id": format!("msg_{n}"), "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 20_000,
                          "output_tokens": 300}}})
            .to_string()
                + "\n");
    }
    let path = dir.join(format!("{SESSION}.jsonl"));
    write_quiet(&path, &transcript);
    let resets = now / 1000 + 7_800;
    let input = serde_json::to_vec(&json!({
        "hook_event_name": "Status", "session_id": SESSION, "cwd": "/home/dev/app", "version": "2.1.332",
        "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": "/home/dev/app", "project_dir": "/home/dev/app"},
        "cost": {"total_cost_usd": 0.4567, "total_duration_ms": 120_000},
        "context_window": {"context_window_size": 200_000, "used_percentage": 42.4},
        "rate_limits": {"five_hour": {"used_percentage": 37.0, "resets_at": resets},
                        "seven_day": {"used_percentage": 12.0, "resets_at": resets + 86_400}}
    }))
    .unwrap();
    let cat = || home.hook_with(home.command("cat"), &[], &input).1;
    let line = || {
        let (output, elapsed) = home.hook(&["statusline"], &input);
        assert_eq!(output.status.code(), Some(0));
        elapsed
    };
    for _ in 0..20 {
        cat();
        line();
    }
    println!("status line latency, {runs} interleaved runs each, {} byte input", input.len());
    let daemon = home.start_daemon();
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let shown = String::from_utf8(home.hook(&["statusline"], &input).0.stdout).unwrap();
    assert!(shown.contains("today "), "the ledger's figures are in the line: {shown}");
    println!("  the line: {}", shown.trim_end());
    let (cat_up, line_up) = interleave(runs, &cat, &line);
    report_against_cat("beed up", &cat_up, &line_up);
    drop(daemon);
    let (cat_down, line_down) = interleave(runs, &cat, &line);
    report_against_cat("beed down (no socket)", &cat_down, &line_down);
}
