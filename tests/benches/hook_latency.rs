//! Wall time of `bee-hook prompt --block FILE` against `cat FILE`, timed the
//! same way, interleaved, in the same run: with beed up, with beed up while
//! 1,100 idle connections are held on its loopback listener (a flood must not
//! slow the hooks on the unix socket), with beed exporting every second to a
//! collector that is down (against beed up without export; beed's memory
//! before and after), with beed down (no socket), and with beed frozen (the
//! 100 ms deadline bounds the hook).
//!
//! `cargo bench -p bee-tests --bench hook_latency [-- RUNS]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_tests::*;

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
    report_against_cat("beed up", &cat_up, &hook_up);
    home.settle();
    let recorded = home.report(&["--limit", "0"]).1["observedEvents"].as_u64().unwrap();
    drop(daemon);
    println!("  observations recorded with beed up: {recorded}");

    // Export every second to a collector that is not there: the hooks must
    // not notice, and beed's memory must not grow with the backlog.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = home.bee_dir().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[export]\nuser = \"bench\"\nprometheus_remote_write = \"http://127.0.0.1:{closed}/api/v1/write\"\n\
             otlp_endpoint = \"http://127.0.0.1:{closed}\"\ninterval_seconds = 1\n"
        ),
    )
    .unwrap();
    let daemon = home.start_daemon();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let before = memory_kib(daemon.pid());
    // Long enough for several failed sends while the backlog grows.
    let (cat_export, hook_export) = interleave(runs * 4, &cat, &hook);
    report_against_cat("beed up, exporting every second to a stopped collector", &cat_export, &hook_export);
    let after = memory_kib(daemon.pid());
    let status = parse_json_line(&home.beectl(&["export", "status"]).stdout);
    println!(
        "  export: {} and {} failed attempts (remote write, OTLP), backlog {} records; beed resident {} KiB before, {} KiB after (peak {} KiB)",
        status["state"]["prometheus"]["consecutiveFailures"],
        status["state"]["otlp"]["consecutiveFailures"],
        status["backlogRecords"],
        before.0,
        after.0,
        after.1
    );
    let (with, without) = (Spread::of(&hook_export), Spread::of(&hook_up));
    println!(
        "  bee-hook with export / without (same run): median {:.2}x, p99 {:.2}x",
        with.median / without.median,
        with.p99 / without.p99
    );
    drop(daemon);
    std::fs::remove_file(&config).unwrap();

    // This process holds 1,100 sockets.
    allow_open_files(4096);
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0"]);
    let addr = daemon.http_addr();
    let held: Vec<std::net::TcpStream> = (0..1_100)
        .filter_map(|_| {
            let mut stream = std::net::TcpStream::connect(&addr).ok()?;
            // Half a request: the connection stays open until the header timeout.
            std::io::Write::write_all(&mut stream, format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
                .ok()?;
            Some(stream)
        })
        .collect();
    let flood_runs = runs.min(200);
    let (cat_flood, hook_flood) = interleave(flood_runs, &cat, &hook);
    report_against_cat(&format!("beed up, {} idle TCP connections held", held.len()), &cat_flood, &hook_flood);
    drop(held);
    drop(daemon);

    let (cat_down, hook_down) = interleave(runs, &cat, &hook);
    report_against_cat("beed down (no socket)", &cat_down, &hook_down);

    let daemon = home.start_daemon();
    daemon.freeze();
    let frozen_runs = runs.min(40);
    let (cat_frozen, hook_frozen) = interleave(frozen_runs, &cat, &hook);
    report_against_cat("beed frozen (deadline)", &cat_frozen, &hook_frozen);
    daemon.resume();
    drop(daemon);
}

/// A process's resident and peak resident memory, KiB (`/proc/PID/status`).
fn memory_kib(pid: i32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}
