//! The usage page's data route against the command line, on one ledger of
//! a million responses (the benches' ledger), in the same run: `GET
//! /api/usage?by=day` on beed's loopback listener (the request's whole
//! round trip) as a ratio of `beectl usage --json --by day` (the whole
//! command; target ≤ 1.2×), and the page's load — the page, then the four
//! answers its script asks for together, as a browser does (target <
//! 300 ms).
//!
//! `cargo bench -p bee-tests --bench usage_page`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_proto::events::{USAGE_DATA_PATH, USAGE_LIVE_PATH, USAGE_PAGE_PATH};
use bee_tests::bench_ledger::RESPONSES;
use bee_tests::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn main() {
    let home = TestHome::new();
    bee_tests::bench_ledger::million_responses(&home);
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let url = String::from_utf8(home.beectl(&["dashboard"]).stdout).unwrap();
    let secret = url.trim().split("token=").nth(1).expect("the dashboard URL's secret").to_owned();
    let get = |path: &str| {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {secret}\r\nConnection: close\r\n\r\n"
        );
        let started = Instant::now();
        let (status, _, body) = tcp_http(&addr, request.as_bytes());
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        (started.elapsed(), body)
    };
    let cli = || {
        let started = Instant::now();
        let output = home
            .command(bin("beectl"))
            .args(["usage", "--no-import", "--json", "--by", "day", "--timezone", "UTC"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        (started.elapsed(), output.stdout)
    };
    let route = format!("{USAGE_DATA_PATH}?by=day&timezone=UTC");
    let answers = [
        format!("{USAGE_DATA_PATH}?by=day,agent&timezone=UTC&since=30d"),
        format!("{USAGE_DATA_PATH}?by=session&timezone=UTC&since=30d"),
        format!("{USAGE_DATA_PATH}?by=hour&timezone=UTC&since=365d"),
        format!("{USAGE_LIVE_PATH}?timezone=UTC"),
    ];
    // The first of each warms the page cache and checks the answers agree.
    let (_, from_route) = get(&route);
    let (_, from_cli) = cli();
    let answered = parse_json_line(&from_route);
    assert_eq!(answered["totals"]["responses"].as_u64(), Some(RESPONSES), "every response counted");
    assert_eq!(answered["rows"], parse_json_line(&from_cli)["rows"], "the route's rows are the command's");
    let (mut routes, mut commands, mut loads) = (Vec::new(), Vec::new(), Vec::new());
    let mut each: Vec<Vec<Duration>> = vec![Vec::new(); answers.len()];
    // Rounds interleave them, so a slow moment of the machine falls on each.
    for _ in 0..9 {
        routes.push(get(&route).0);
        commands.push(cli().0);
        let started = Instant::now();
        get(USAGE_PAGE_PATH);
        let took: Vec<Duration> = std::thread::scope(|scope| {
            let asked: Vec<_> = answers.iter().map(|path| scope.spawn(|| get(path).0)).collect();
            asked.into_iter().map(|answer| answer.join().unwrap()).collect()
        });
        loads.push(started.elapsed());
        for (times, took) in each.iter_mut().zip(took) {
            times.push(took);
        }
    }
    let (routes, commands, loads) = (Spread::of(&routes), Spread::of(&commands), Spread::of(&loads));
    println!("  beectl usage --json --by day      {commands}");
    println!("  GET {USAGE_DATA_PATH}?by=day           {routes}");
    println!(
        "  the route is {:.2}x the command's time (median over median; min {:.2}x, max {:.2}x; target <= 1.2x)",
        routes.median / commands.median,
        routes.min / commands.median,
        routes.max / commands.median
    );
    println!("  the page's load (the page, then its four answers together)  {loads} (target < 300 ms)");
    for (path, times) in answers.iter().zip(&each) {
        println!("    {path:<52} {}", Spread::of(times));
    }
    drop(daemon);
}
