//! The usage page's data on beed's loopback listener (`GET /api/usage`):
//! for the same words, byte for byte `beectl usage --json`'s answer, read
//! from the same ledger — over a home holding every agent's records — and
//! guarded as every read of the dashboard is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::every_agent::write_every_agent;
use bee_tests::*;
use serde_json::Value;

/// `GET path` on `addr` with the headers given; the status and the body.
fn get(addr: &str, path: &str, headers: &[(&str, &str)]) -> (u16, Vec<u8>) {
    let extra: String = headers.iter().map(|(name, value)| format!("{name}: {value}\r\n")).collect();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n");
    let (status, _, body) = tcp_http(addr, request.as_bytes());
    (status, body)
}

#[test]
fn the_data_route_answers_as_the_command_line_and_only_with_the_secret() {
    let home = TestHome::new();
    write_every_agent(&home);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let daemon = home.start_daemon_with(&["--http", "127.0.0.1:0", "--ingest-every", "0"]);
    let addr = daemon.http_addr();
    let url = String::from_utf8(home.beectl(&["dashboard"]).stdout).unwrap();
    let secret = url.trim().split("token=").nth(1).expect("the dashboard URL's secret").to_owned();
    let bearer = format!("Bearer {secret}");
    let authorized = [("Authorization", bearer.as_str())];
    let range = ["--since", "2026-01-01", "--until", "2026-12-31", "--timezone", "UTC"];
    for (by, agent) in [("day,agent", None), ("session", None), ("model", Some("claude")), ("block", None)] {
        let mut words = vec!["usage", "--json", "--no-import", "--by", by];
        words.extend(range);
        let mut query =
            format!("{}?by={by}&since=2026-01-01&until=2026-12-31&timezone=UTC", bee_proto::events::USAGE_DATA_PATH);
        if let Some(agent) = agent {
            words.extend(["--agent", agent]);
            query.push_str(&format!("&agent={agent}"));
        }
        let cli = home.beectl(&words);
        assert_eq!(cli.status.code(), Some(0));
        let (status, body) = get(&addr, &query, &authorized);
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        assert_eq!(
            String::from_utf8(body).unwrap(),
            String::from_utf8(cli.stdout).unwrap(),
            "--by {by}: the same bytes"
        );
    }

    let data = format!("{}?by=day", bee_proto::events::USAGE_DATA_PATH);
    assert_eq!(get(&addr, &data, &[]).0, 401, "a read needs the secret");
    let foreign = [("Authorization", bearer.as_str()), ("Origin", "http://evil.example")];
    assert_eq!(get(&addr, &data, &foreign).0, 403, "another origin is refused");
    for (query, said) in [
        ("by=fortnight", "--by"),
        ("since=2026-12-31&until=2026-01-01", "--since must be before --until"),
        ("timezone=Mars/Olympus", "--timezone"),
        ("agent=nobody", "--agent"),
        ("colour=red", "colour"),
    ] {
        let (status, body) = get(&addr, &format!("{}?{query}", bee_proto::events::USAGE_DATA_PATH), &authorized);
        let answer: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(status, 400, "{query}: {answer}");
        assert!(answer["error"].as_str().is_some_and(|error| error.contains(said)), "{query}: {answer}");
    }
    drop(daemon);
}
