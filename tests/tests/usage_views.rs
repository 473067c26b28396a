//! `beectl usage` for people and scripts, on a fixture of real log shapes
//! with known totals: Claude Code transcripts across midnight and the DST
//! change in Paris, a long-context request, a model no price table names, a
//! session cost line, and a Codex rollout with the provider's own five-hour
//! window. The tables (80 and 140 columns, no colour) and the JSON of
//! every grouping are golden files; the totals and the cost are checked
//! against the fixture and an independent reading of the bundled price
//! list, not against another Bee figure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::path::Path;

const SESSION_A: &str = "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d";
const SESSION_B: &str = "6e1b0d2c-3f4a-4b5c-9d7e-8f9a0b1c2d3e";
const CODEX: &str = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

/// One Claude response: (session, time, model, input, cache write, cache read, output).
type Response = (&'static str, &'static str, &'static str, u64, u64, u64, u64);

/// Paris: 2026-03-28T22:30Z is 23:30 on the 28th (CET); the clocks go
/// forward at 01:00Z on the 29th; 2026-03-29T22:30Z is 00:30 on the 30th
/// (CEST), though still the 29th in UTC.
const CLAUDE: [Response; 5] = [
    (SESSION_A, "2026-03-28T22:30:00.000Z", "claude-sonnet-4-5-20250929", 1_200, 3_000, 40_000, 800),
    (SESSION_A, "2026-03-29T00:30:00.000Z", "claude-sonnet-4-5-20250929", 15, 500, 43_000, 1_500),
    // A long-context request: over 200k tokens of prompt.
    (SESSION_A, "2026-03-29T10:00:00.000Z", "claude-sonnet-4-5-20250929", 10, 2_000, 250_000, 4_000),
    (SESSION_B, "2026-03-29T12:00:00.000Z", "claude-mystery-9", 100, 0, 0, 50),
    (SESSION_A, "2026-03-29T22:30:00.000Z", "claude-opus-4-1", 7, 0, 60_000, 300),
];

/// The Codex response: input (its cached part included), cached, output, reasoning.
const CODEX_USAGE: (u64, u64, u64, u64) = (10_000, 8_000, 500, 200);

fn fixture() -> TestHome {
    let home = TestHome::new();
    for (session, project) in [(SESSION_A, "-home-dev-app"), (SESSION_B, "-home-dev-other")] {
        let mut body = String::new();
        for (n, r) in CLAUDE.iter().enumerate().filter(|(_, r)| r.0 == session) {
            body += &(json!({"parentUuid": null, "isSidechain": false, "type": "assistant", "sessionId": session,
                "timestamp": r.1, "requestId": format!("req_{n}"), "cwd": "/home/dev/app", "version": "2.1.332",
                "message": {"id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": r.2,
                    "stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}],
                    "usage": {"input_tokens": r.3, "cache_creation_input_tokens": r.4,
                              "cache_read_input_tokens": r.5, "output_tokens": r.6}}})
            .to_string()
                + "\n");
        }
        if session == SESSION_A {
            // Claude Code's cumulative cost: $1.25 at 10:00Z (start 09:00Z + 1 h).
            let start = 1_774_774_800_000u64; // 2026-03-29T09:00:00Z
            body += &(json!({"type": "cost-state", "sessionId": session, "totalCostUSD": 1.25,
                "startTime": start, "totalDuration": 3_600_000})
            .to_string()
                + "\n");
        }
        write_quiet(&home.path().join(format!(".claude/projects/{project}/{session}.jsonl")), &body);
    }
    let line = |time: &str, kind: &str, payload: Value| {
        json!({"timestamp": time, "type": kind, "payload": payload}).to_string() + "\n"
    };
    let (input, cached, output, reasoning) = CODEX_USAGE;
    let usage = json!({"input_tokens": input, "cached_input_tokens": cached, "output_tokens": output,
        "reasoning_output_tokens": reasoning, "total_tokens": input + output});
    let rollout = [
        line("2026-03-29T15:00:00.000Z", "session_meta", json!({"id": CODEX, "cwd": "/home/dev/app"})),
        line("2026-03-29T15:00:01.000Z", "turn_context", json!({"model": "gpt-5-codex"})),
        line(
            "2026-03-29T15:10:00.000Z",
            "event_msg",
            json!({"type": "token_count",
                "info": {"total_token_usage": usage, "last_token_usage": usage, "model_context_window": 272000},
                // The window resets at 2026-03-29T17:20:00Z: it began at 12:20Z.
                "rate_limits": {"primary": {"used_percent": 4.0, "window_minutes": 300, "resets_at": 1_774_804_800u64}}}),
        ),
    ]
    .concat();
    write_quiet(
        &home.path().join(format!(".codex/sessions/2026/03/29/rollout-2026-03-29T15-00-00-{CODEX}.jsonl")),
        &rollout,
    );
    let ingest = home.beectl(&["ingest"]);
    assert_eq!(ingest.status.code(), Some(0), "{}", String::from_utf8_lossy(&ingest.stdout));
    home
}

const RANGE: [&str; 4] = ["--since", "2026-03-01", "--until", "2026-03-31"];
const PARIS: [&str; 2] = ["--timezone", "Europe/Paris"];

/// `beectl usage` over March, in Paris unless `extra` names a zone.
fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let zone: &[&str] = if extra.contains(&"--timezone") { &[] } else { &PARIS };
    [&["usage"], &RANGE[..], zone, extra].concat()
}

fn usage(home: &TestHome, extra: &[&str]) -> Value {
    let output = home.beectl(&args(extra));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    parse_json_line(&output.stdout)
}

fn table(home: &TestHome, columns: &str, extra: &[&str]) -> String {
    let mut command = home.command(bin("beectl"));
    command.args(args(&[&["--format", "table"], extra].concat())).env("COLUMNS", columns).env("NO_COLOR", "1");
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    String::from_utf8(output.stdout).unwrap()
}

/// A price from the bundled list read here on its own (LiteLLM's format),
/// so the estimate is checked against the list, not Bee's pricing code.
fn list_price(model: &str, field: &str) -> Option<f64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../daemon/src/ledger/views/prices.json");
    let list: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    list[model][field].as_f64()
}

fn expected_estimate() -> f64 {
    let mut cost = 0.0;
    for (_, _, model, input, write, read, output) in CLAUDE.iter().filter(|r| r.2 != "claude-mystery-9") {
        // Anthropic prices a request whose prompt is over 200k tokens whole
        // at its long-context rates, where the model has them.
        let long = input + write + read > 200_000;
        let price = |field: &str| {
            let above = list_price(model, &format!("{field}_above_200k_tokens")).filter(|_| long);
            above.or_else(|| list_price(model, field)).unwrap()
        };
        cost += *input as f64 * price("input_cost_per_token")
            + *write as f64 * price("cache_creation_input_token_cost")
            + *read as f64 * price("cache_read_input_token_cost")
            + *output as f64 * price("output_cost_per_token");
    }
    let (input, cached, output, _) = CODEX_USAGE;
    let codex = |field: &str| list_price("gpt-5-codex", field).unwrap();
    cost + (input - cached) as f64 * codex("input_cost_per_token")
        + cached as f64 * codex("cache_read_input_token_cost")
        + output as f64 * codex("output_cost_per_token")
}

#[test]
fn every_grouping_has_its_golden_json_and_the_fixtures_totals() {
    let home = fixture();
    let sum = |field: fn(&Response) -> u64| CLAUDE.iter().map(field).sum::<u64>();
    for by in ["day", "week", "month", "session", "model", "block"] {
        let report = usage(&home, &["--by", by]);
        assert_golden(&format!("usage-by-{by}.json"), &(serde_json::to_string_pretty(&report).unwrap() + "\n"));
        bee_tests::providers::assert_columns_add_up(&report);
        let totals = &report["totals"];
        assert_eq!(totals["responses"], 6, "--by {by}");
        // One set of columns: Codex's cached input (part of its input) is
        // shown once, under cache reads, beside Claude's.
        assert_eq!(totals["tokens"]["inputTokens"], sum(|r| r.3) + CODEX_USAGE.0 - CODEX_USAGE.1, "--by {by}");
        assert_eq!(totals["tokens"]["cacheCreationInputTokens"], sum(|r| r.4), "--by {by}");
        assert_eq!(totals["tokens"]["cacheReadInputTokens"], sum(|r| r.5) + CODEX_USAGE.1, "--by {by}");
        assert_eq!(totals["tokens"]["cachedInputTokens"], Value::Null, "--by {by}");
        assert_eq!(totals["tokens"]["outputTokens"], sum(|r| r.6) + CODEX_USAGE.2, "--by {by}");
        assert_eq!(totals["reportedCostUsd"], 1.25, "--by {by}: the session's cost line");
        let estimate = totals["estimatedCostUsd"].as_f64().unwrap();
        assert!((estimate - expected_estimate()).abs() < 1e-9, "--by {by}: {estimate} vs {}", expected_estimate());
        assert_eq!(totals["unpricedParts"], 1, "--by {by}: the unknown model's response is not priced");
        assert_eq!(report["unpricedModels"], json!(["claude-mystery-9"]));
        assert_eq!(
            totals["sessionsWithoutCost"], 2,
            "--by {by}: session B and the Codex session reported no cost: the reported total leaves them out"
        );
        assert_eq!(report["issues"], json!(["partial", "unpriced_model"]), "--by {by}");
        let rows = report["rows"].as_array().unwrap();
        let row_sum: u64 = rows.iter().map(|r| r["tokens"]["outputTokens"].as_u64().unwrap_or(0)).sum();
        assert_eq!(row_sum, totals["tokens"]["outputTokens"].as_u64().unwrap(), "--by {by}: the rows add up");
    }
}

#[test]
fn days_are_the_zones_days_across_midnight_and_the_dst_change() {
    let home = fixture();
    let keys = |report: &Value| -> Vec<String> {
        report["rows"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap().to_owned()).collect()
    };
    let paris = usage(&home, &["--by", "day"]);
    assert_eq!(keys(&paris), ["2026-03-28", "2026-03-29", "2026-03-30"]);
    assert_eq!(paris["rows"][0]["tokens"]["outputTokens"], 800, "23:30 CET is still the 28th");
    assert_eq!(paris["rows"][2]["tokens"]["outputTokens"], 300, "22:30Z is 00:30 CEST on the 30th");
    let utc = usage(&home, &["--by", "day", "--timezone", "UTC"]);
    assert_eq!(keys(&utc), ["2026-03-28", "2026-03-29"]);
    let kolkata = usage(&home, &["--by", "day", "--timezone", "Asia/Kolkata"]);
    // 2026-03-28T22:30Z is 04:00 on the 29th in Kolkata: every response is a later day.
    assert_eq!(keys(&kolkata), ["2026-03-29", "2026-03-30"]);
    let model = usage(&home, &["--by", "model"]);
    let mystery = model["rows"].as_array().unwrap().iter().find(|r| r["key"] == "claude-mystery-9").unwrap();
    assert_eq!(mystery["estimatedCostUsd"], Value::Null, "never another model's price");
}

#[test]
fn filters_keep_what_was_asked() {
    let home = fixture();
    let codex = usage(&home, &["--by", "model", "--provider", "codex"]);
    assert_eq!(codex["totals"]["responses"], 1);
    assert_eq!(codex["totals"]["reportedCostUsd"], Value::Null, "Codex reported no cost");
    let opus = usage(&home, &["--by", "day", "--model", "opus"]);
    assert_eq!(opus["totals"]["tokens"]["outputTokens"], 300);
    let other = usage(&home, &["--by", "session", "--project", "other"]);
    assert_eq!(other["rows"].as_array().unwrap().len(), 1);
    assert_eq!(other["rows"][0]["project"], "-home-dev-other");
    assert_eq!(other["projectUnknownParts"], 0, "the Codex thread's project is known: {other}");
    assert_eq!(other["issues"], json!(["unpriced_model"]));
    // The Codex thread ran in /home/dev/app (its session_meta says so): the
    // project Claude Code's sessions there have too.
    let app = usage(&home, &["--by", "session", "--project", "-home-dev-app", "--provider", "codex"]);
    assert_eq!(
        (app["totals"]["responses"].clone(), app["rows"][0]["project"].clone()),
        (json!(1), json!("-home-dev-app"))
    );
}

#[test]
fn tables_have_golden_layouts_at_80_and_140_columns_without_colour() {
    let home = fixture();
    for by in
        ["day", "week", "month", "session", "model", "block", "agent", "day,agent", "agent,model", "project,model"]
    {
        for columns in ["80", "140"] {
            let text = table(&home, columns, &["--by", by]);
            assert!(!text.contains('\u{1b}'), "NO_COLOR and a pipe: no colour");
            assert!(text.lines().all(|l| l.chars().count() <= columns.parse().unwrap()), "fits {columns}:\n{text}");
            assert_golden(&format!("usage-by-{}-{columns}.txt", by.replace(',', "-")), &text);
        }
    }
    // --verbose shows the cache columns and the price table at 80 columns too, and still fits.
    for by in ["day", "session", "day,agent"] {
        let text = table(&home, "80", &["--by", by, "--verbose"]);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "--verbose --by {by} fits 80:\n{text}");
        assert!(text.contains("CACHE W") && text.contains("Prices: "), "{text}");
        assert!(text.contains("2026-03-29") || by == "session", "the day is never cut:\n{text}");
        assert_golden(&format!("usage-by-{}-verbose-80.txt", by.replace(',', "-")), &text);
    }
    let verbose = table(&home, "140", &["--by", "day", "--verbose"]);
    assert!(verbose.contains("Prices: LiteLLM"), "{verbose}");
    assert!(verbose.contains("as of 2026-11-20"), "{verbose}");
}

#[test]
fn json_is_the_default_when_piped_and_prices_are_listed() {
    let home = fixture();
    let piped = home.beectl(&["usage"]);
    assert_eq!(piped.status.code(), Some(0));
    let report = parse_json_line(&piped.stdout);
    assert_eq!(report["by"], "day");
    assert_eq!(report["timezone"], "UTC", "the local zone (TZ)");
    let prices = parse_json_line(&home.beectl(&["prices"]).stdout);
    assert_eq!(prices["date"], "2026-11-20");
    let sonnet = prices["models"].as_array().unwrap().iter().find(|m| m["model"] == "claude-sonnet-4-5").unwrap();
    assert_eq!((sonnet["input"].clone(), sonnet["output"].clone()), (json!(3.0), json!(15.0)));
    let sonnet_4 =
        prices["models"].as_array().unwrap().iter().find(|m| m["model"] == "claude-sonnet-4-20250514").unwrap();
    assert_eq!(sonnet_4["tiers"][0]["aboveTokens"], 200_000);
    // An override file, in LiteLLM's format: its prices, and nothing else priced.
    let file = home
        .file("prices.json", br#"{"claude-mystery-9": {"input_cost_per_token": 1e-3, "output_cost_per_token": 2e-3}}"#);
    let priced = usage(&home, &["--by", "model", "--prices", file.to_str().unwrap()]);
    let mystery = priced["rows"].as_array().unwrap().iter().find(|r| r["key"] == "claude-mystery-9").unwrap();
    assert_eq!(mystery["estimatedCostUsd"], 0.2, "100 × $0.001 + 50 × $0.002");
    assert_eq!(priced["totals"]["unpricedParts"], 5, "the models the file does not name");
    for bad in [&b"{"[..], b"[1,2]", b"\xff\xfe"] {
        let file = home.file("bad.json", bad);
        let refused = home.beectl(&["usage", "--prices", file.to_str().unwrap()]);
        assert_eq!(refused.status.code(), Some(4), "{}", String::from_utf8_lossy(&refused.stdout));
        assert_eq!(parse_json_line(&refused.stdout)["errorCode"], "invalid_usage");
    }
}

#[test]
fn with_beed_down_usage_imports_what_is_new_first() {
    let home = TestHome::new();
    let dir = home.path().join(".claude/projects/-home-dev-app");
    let line = |n: u64, at: &str| {
        json!({"type": "assistant", "sessionId": SESSION_A, "timestamp": at, "requestId": format!("req_{n}"),
            "message": {"id": format!("msg_{n}"), "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                "usage": {"input_tokens": n, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}})
        .to_string()
            + "\n"
    };
    let path = dir.join(format!("{SESSION_A}.jsonl"));
    write_quiet(&path, &line(5, "2026-03-29T10:00:00.000Z"));
    let first = usage(&home, &["--by", "day"]);
    assert_eq!(first["totals"]["tokens"]["inputTokens"], 5, "imported before the answer: {first}");
    write_quiet(&path, &(line(5, "2026-03-29T10:00:00.000Z") + &line(7, "2026-03-29T11:00:00.000Z")));
    let second = usage(&home, &["--by", "day"]);
    assert_eq!(second["totals"]["tokens"]["inputTokens"], 12, "the new line, and the old one once: {second}");
}

/// A generated tree: random responses of priced models (some over 200k
/// tokens of prompt), of a model no table names, and Codex responses; the
/// estimate equals the one computed here from the bundled list, response by
/// response, and the unknown model is never priced.
#[test]
fn the_estimate_on_a_generated_tree_equals_an_independent_computation() {
    let home = TestHome::new();
    let mut sequence = xorshift(0x9e37_79b9_7f4a_7c15);
    let mut random = |n: u64| sequence() % n;
    let models = ["claude-sonnet-4-5-20250929", "claude-opus-4-1", "claude-haiku-4-5", "claude-mystery-9"];
    let (mut expected, mut unknown) = (0.0, 0u64);
    for session in 0..6u64 {
        let id = format!("5eed0000-0000-4000-8000-{session:012}");
        let mut body = String::new();
        for n in 0..50u64 {
            let model = models[random(4) as usize];
            let (input, write, read, output) = (random(2_000), random(5_000), random(300_000), random(4_000));
            body += &(json!({"type": "assistant", "sessionId": id, "timestamp": format!("2026-03-{:02}T{:02}:00:00.000Z", 1 + random(28), random(24)),
                "requestId": format!("req_{session}_{n}"),
                "message": {"id": format!("msg_{session}_{n}"), "model": model, "stop_reason": "end_turn",
                    "usage": {"input_tokens": input, "cache_creation_input_tokens": write,
                              "cache_read_input_tokens": read, "output_tokens": output}}})
            .to_string()
                + "\n");
            if model == "claude-mystery-9" {
                unknown += 1;
                continue;
            }
            let long = input + write + read > 200_000;
            let price = |field: &str| {
                let above = list_price(model, &format!("{field}_above_200k_tokens")).filter(|_| long);
                above.or_else(|| list_price(model, field)).unwrap()
            };
            expected += input as f64 * price("input_cost_per_token")
                + write as f64 * price("cache_creation_input_token_cost")
                + read as f64 * price("cache_read_input_token_cost")
                + output as f64 * price("output_cost_per_token");
        }
        write_quiet(&home.path().join(format!(".claude/projects/-home-dev-app{session}/{id}.jsonl")), &body);
    }
    let report = usage(&home, &["--by", "month"]);
    let estimate = report["totals"]["estimatedCostUsd"].as_f64().unwrap();
    assert!((estimate - expected).abs() < 1e-6, "{estimate} vs {expected}");
    assert_eq!(report["totals"]["unpricedParts"], unknown);
    assert_eq!(report["unpricedModels"], json!(["claude-mystery-9"]));
    let by_model = usage(&home, &["--by", "model", "--model", "mystery"]);
    assert_eq!(by_model["rows"][0]["estimatedCostUsd"], serde_json::Value::Null);
    assert_eq!(by_model["totals"]["estimatedCostUsd"], serde_json::Value::Null, "nothing priced, nothing summed");
}

/// `status` sums the costs the CLIs reported. Sessions of the range that
/// reported none are left out of that sum, which then says it is a lower
/// bound and how many it left out; a range with nothing reported is null.
#[test]
fn a_reported_cost_that_leaves_sessions_out_is_a_lower_bound() {
    let home = fixture();
    let status = |extra: &[&str], table: bool| {
        let mut args = vec!["status"];
        args.extend_from_slice(extra);
        if table {
            args.extend(["--format", "table"]);
        }
        let output = home.beectl(&args);
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        output.stdout
    };
    let day = ["--since", "2026-03-29T00:00:00Z", "--until", "2026-03-30T00:00:00Z"];
    let report = parse_json_line(&status(&day, false));
    assert_eq!(report["estCostUsd"], 1.25, "session A's own cost line: {report}");
    assert_eq!(report["sessionsWithCost"], 1, "{report}");
    assert_eq!(report["sessionsWithoutCost"], 2, "session B and the Codex session reported none: {report}");
    assert!(report["issues"].as_array().unwrap().contains(&json!("partial")), "{report}");
    let text = String::from_utf8(status(&day, true)).unwrap();
    assert!(text.contains("est. cost ≥$1.2500 (2 sessions with no reported cost left out)"), "{text}");

    let before = ["--since", "2026-03-28T00:00:00Z", "--until", "2026-03-29T00:00:00Z"];
    let report = parse_json_line(&status(&before, false));
    assert_eq!(report["estCostUsd"], Value::Null, "nothing reported that day: unknown, not zero: {report}");
    assert_eq!(report["sessionsWithoutCost"], 1, "{report}");
    assert!(!report["issues"].as_array().unwrap().contains(&json!("partial")), "null needs no lower bound: {report}");
}
