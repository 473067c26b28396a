//! `beectl usage --by` over a home holding every agent's records (the
//! real-CLI fixtures and the format fixtures, `every_agent`): every grouping
//! and every pair of groupings adds up to the same totals, row by row and
//! column by column; each agent's rows hold exactly that agent's records;
//! every row names its agent(s); and no two rows of a table read alike.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::every_agent::{Expected, write_every_agent};
use bee_tests::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const GROUPINGS: [&str; 8] = ["day", "hour", "week", "month", "session", "model", "agent", "project"];
const COLUMNS: [&str; 5] =
    ["inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens", "outputTokens", "totalTokens"];

fn home() -> (TestHome, Vec<Expected>) {
    let home = TestHome::new();
    let expected = write_every_agent(&home);
    let ingest = home.beectl(&["ingest"]);
    assert_eq!(ingest.status.code(), Some(0), "{}", String::from_utf8_lossy(&ingest.stdout));
    (home, expected)
}

fn usage(home: &TestHome, extra: &[&str]) -> Value {
    let output = home.beectl(&[&["usage", "--json", "--no-import", "--timezone", "UTC"], extra].concat());
    assert_eq!(output.status.code(), Some(0), "{extra:?}: {}", String::from_utf8_lossy(&output.stderr));
    parse_json_line(&output.stdout)
}

/// The figures of a row that must add up: responses, each column, and
/// how many parts left a column unknown.
fn figures(row: &Value) -> BTreeMap<String, Option<u64>> {
    let mut figures = BTreeMap::new();
    figures.insert("responses".to_owned(), row["responses"].as_u64());
    figures.insert("partialParts".to_owned(), row["partialParts"].as_u64());
    figures.insert("unpricedParts".to_owned(), row["unpricedParts"].as_u64());
    for column in COLUMNS {
        figures.insert(column.to_owned(), row["tokens"][column].as_u64());
    }
    figures
}

/// `rows` summed figure by figure (a figure no row knew stays unknown).
fn summed<'a>(rows: impl Iterator<Item = &'a Value>) -> BTreeMap<String, Option<u64>> {
    let mut sum: BTreeMap<String, Option<u64>> = BTreeMap::new();
    for row in rows {
        for (name, value) in figures(row) {
            let entry = sum.entry(name).or_insert(None);
            if let Some(value) = value {
                *entry = Some(entry.unwrap_or(0) + value);
            }
        }
    }
    sum
}

/// The cost of `rows` summed, to a ten-billionth.
fn cost<'a>(rows: impl Iterator<Item = &'a Value>, field: &str) -> Option<i64> {
    let known: Vec<f64> = rows.filter_map(|row| row[field].as_f64()).collect();
    (!known.is_empty()).then(|| (known.iter().sum::<f64>() * 1e10).round() as i64)
}

fn agents_of(row: &Value) -> BTreeSet<String> {
    let mut agents: BTreeSet<String> = row["agents"].as_array().into_iter().flatten().map(|a| a.to_string()).collect();
    if let Some(agent) = row["agent"].as_str() {
        agents.insert(format!("\"{agent}\""));
    }
    agents
}

#[test]
fn every_grouping_and_pair_adds_up_to_the_same_totals_and_names_its_agents() {
    let (home, _) = home();
    let whole = usage(&home, &[]);
    let totals = figures(&whole["totals"]);
    assert!(totals["responses"].unwrap() > 0);
    let mut pairs: Vec<String> = GROUPINGS.iter().map(|g| (*g).to_owned()).collect();
    pairs.push("block".to_owned());
    for first in GROUPINGS {
        for then in GROUPINGS {
            let times = ["day", "hour", "week", "month"];
            if first != then && !(times.contains(&first) && times.contains(&then)) {
                pairs.push(format!("{first},{then}"));
            }
        }
    }
    for by in &pairs {
        let report = usage(&home, &["--by", by]);
        assert_eq!(report["by"], by.as_str());
        let rows = report["rows"].as_array().unwrap();
        assert_eq!(figures(&report["totals"]), totals, "--by {by}: the same totals");
        assert_eq!(summed(rows.iter()), totals, "--by {by}: the rows add up to the totals");
        for field in ["estimatedCostUsd", "reportedCostUsd"] {
            assert_eq!(cost(rows.iter(), field), cost([&report["totals"]].into_iter(), field), "--by {by}: {field}");
        }
        providers::assert_columns_add_up(&report);
        for row in rows {
            assert!(!agents_of(row).is_empty(), "--by {by}: every row names its agent(s): {row}");
        }
        if by.contains(',') {
            // Each first key's subtotal is its rows together, and names their agents.
            let subtotals = report["subtotals"].as_array().unwrap();
            assert_eq!(summed(subtotals.iter()), totals, "--by {by}: the subtotals add up");
            for subtotal in subtotals {
                // Two agents may spell the same session id: a session is its agent's.
                let same_session = |r: &&Value| !by.starts_with("session,") || r["agent"] == subtotal["agent"];
                let under: Vec<&Value> =
                    rows.iter().filter(|r| r["key"] == subtotal["key"]).filter(same_session).collect();
                assert!(!under.is_empty(), "--by {by}: a subtotal without rows");
                assert_eq!(summed(under.iter().copied()), figures(subtotal), "--by {by}: {}", subtotal["key"]);
                let agents: BTreeSet<String> = under.iter().flat_map(|r| agents_of(r)).collect();
                assert_eq!(agents_of(subtotal), agents, "--by {by}");
            }
        }
        // No two rows share their keys.
        let keys: BTreeSet<(String, String)> = rows
            .iter()
            .map(|r| (r["key"].to_string(), format!("{} {}", r["subkey"], r["block"]["provider"])))
            .collect();
        let distinct_sessions = by.contains("session");
        if !distinct_sessions {
            assert_eq!(keys.len(), rows.len(), "--by {by}: two rows with the same keys");
        }
    }
}

#[test]
fn each_agents_rows_hold_exactly_its_own_records() {
    let (home, expected) = home();
    let by_agent = usage(&home, &["--by", "agent"]);
    let rows = by_agent["rows"].as_array().unwrap();
    for agent in &expected {
        let row = rows.iter().find(|r| r["key"] == agent.agent);
        let responses = row.map_or(0, |r| r["responses"].as_u64().unwrap());
        assert_eq!(responses, agent.responses, "{}: its rows hold its records", agent.agent);
        if let Some(row) = row {
            assert_eq!(row["agent"], agent.agent);
            // The agent alone, filtered: the same figures.
            let alone = usage(&home, &["--agent", agent.agent]);
            assert_eq!(figures(&alone["totals"]), figures(row), "{}", agent.agent);
            // And its rows under each day, summed.
            let by_day = usage(&home, &["--by", "day,agent"]);
            let under: Vec<&Value> =
                by_day["rows"].as_array().unwrap().iter().filter(|r| r["subkey"] == agent.agent).collect();
            assert_eq!(summed(under.iter().copied()), figures(row), "{}: its day rows", agent.agent);
        }
    }
    assert!(expected.iter().filter(|a| a.responses > 0).count() >= 6, "at least six agents with records");
}

#[test]
fn sessions_carry_agent_project_and_times_and_no_two_table_rows_read_alike() {
    let (home, _) = home();
    let report = usage(&home, &["--by", "session"]);
    let rows = report["rows"].as_array().unwrap();
    let mut previous = String::new();
    for row in rows {
        assert!(row["agent"].is_string(), "a session is one agent's: {row}");
        if row["responses"] == 0 {
            // A session that holds only copies (or a cost line) made no response of its own.
            assert!(row["firstAtUtc"].is_null() && row["lastAtUtc"].is_null(), "{row}");
            continue;
        }
        let (first, last) = (row["firstAtUtc"].as_str().unwrap(), row["lastAtUtc"].as_str().unwrap());
        assert!(first <= last, "{row}");
        assert!(previous.as_str() <= first, "sessions come by their first activity: {previous} then {first}");
        previous = first.to_owned();
    }
    let newest = usage(&home, &["--by", "session", "--order", "desc", "--last", "2"]);
    let kept = newest["rows"].as_array().unwrap();
    assert_eq!(kept.len(), 2.min(rows.len()));
    assert_eq!(newest["rowsLeftOut"].as_u64().unwrap_or(0), rows.len().saturating_sub(2) as u64);
    let mut latest: Vec<&str> = rows.iter().filter_map(|r| r["lastAtUtc"].as_str()).collect();
    latest.sort_unstable();
    assert!(kept.iter().all(|r| latest[latest.len() - 2..].contains(&r["lastAtUtc"].as_str().unwrap())), "{kept:?}");
    assert!(kept[0]["firstAtUtc"].as_str() >= kept[1]["firstAtUtc"].as_str(), "desc: newest first");
    assert_eq!(figures(&newest["totals"]), figures(&report["totals"]), "--last leaves rows out, not usage");

    for by in ["session", "session,model", "agent,session", "day,agent", "agent,model", "project,model", "model"] {
        for columns in ["80", "140"] {
            let mut command = home.command(bin("beectl"));
            command
                .args(["usage", "--format", "table", "--no-import", "--timezone", "UTC", "--by", by])
                .env("COLUMNS", columns)
                .env("NO_COLOR", "1");
            let output = command.output().unwrap();
            assert_eq!(output.status.code(), Some(0));
            let table = String::from_utf8(output.stdout).unwrap();
            let body: Vec<&str> =
                table.lines().skip(2).take_while(|line| !line.trim_start().starts_with('─')).collect();
            // A row reads as its line under its first key's (an indented row's parent).
            let mut parent = "";
            let read: Vec<(&str, &str)> = body
                .iter()
                .map(|line| {
                    if !line.starts_with("    ") {
                        parent = line;
                    }
                    (parent, line.trim_end())
                })
                .collect();
            let distinct: BTreeSet<&(&str, &str)> = read.iter().collect();
            assert_eq!(distinct.len(), body.len(), "--by {by} at {columns}: two rows read alike:\n{table}");
            let widest = table.lines().map(|line| line.chars().count()).max().unwrap_or(0);
            assert!(widest <= columns.parse().unwrap(), "--by {by} at {columns}: {widest} wide:\n{table}");
        }
    }
    // The two views a person with many agents asks first, over a fixed range: golden.
    for by in ["day,agent", "agent,model"] {
        for columns in ["80", "140"] {
            let mut command = home.command(bin("beectl"));
            command
                .args(["usage", "--format", "table", "--no-import", "--timezone", "UTC", "--by", by])
                .args(["--since", "2026-01-01", "--until", "2026-12-31"])
                .env("COLUMNS", columns)
                .env("NO_COLOR", "1");
            let output = command.output().unwrap();
            assert_eq!(output.status.code(), Some(0));
            let table = String::from_utf8(output.stdout).unwrap();
            assert_golden(&format!("every-agent-by-{}-{columns}.txt", by.replace(',', "-")), &table);
        }
    }
}

#[test]
fn one_model_reads_as_one_row_whatever_each_agent_calls_it() {
    let (home, _) = home();
    let report = usage(&home, &["--by", "model"]);
    let rows = report["rows"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().filter_map(|r| r["key"].as_str()).collect();
    let distinct: BTreeSet<&&str> = labels.iter().collect();
    assert_eq!(distinct.len(), labels.len(), "{labels:?}");
    for row in rows {
        for id in row["modelIds"].as_array().into_iter().flatten() {
            let id = id.as_str().unwrap();
            assert_eq!(bee_daemon::ledger::views::models::label(id), row["key"].as_str().unwrap(), "{id}");
        }
    }
}

#[test]
fn groupings_that_cannot_be_asked_are_refused_with_a_clear_error() {
    let home = TestHome::new();
    for (by, says) in [
        ("day,day", "twice"),
        ("day,week", "two groupings of time"),
        ("block,agent", "block"),
        ("day,agent,model", "at most two"),
        ("fortnight", "not a grouping"),
    ] {
        let output = home.beectl(&["usage", "--by", by, "--no-import"]);
        assert_eq!(output.status.code(), Some(4), "--by {by}: invalid usage");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "--by {by}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// `usage --chart` for a person at a terminal (a pseudo-terminal, as
/// `script` gives one), at 80 and 140 columns, with colour and with
/// `NO_COLOR`: golden, no line wider than the terminal, and each bar's
/// figure the JSON's total of its row. Piped, it is refused, saying what
/// to ask instead.
#[test]
fn the_chart_fits_the_terminal_and_is_for_people_only() {
    let (home, _) = home();
    let range = ["--since", "2026-01-01", "--until", "2026-12-31"];
    for by in ["day", "agent"] {
        let words = ["usage", "--chart", "--no-import", "--timezone", "UTC", "--by", by];
        let line = [bin("beectl").display().to_string()]
            .into_iter()
            .chain(words.iter().chain(&range).map(|word| (*word).to_owned()))
            .map(|word| format!("'{word}'"))
            .collect::<Vec<_>>()
            .join(" ");
        for columns in ["80", "140"] {
            for colour in [false, true] {
                let mut command = home.command("script");
                command.args(["-qec", &line, "/dev/null"]).env("COLUMNS", columns).env("TERM", "xterm");
                if colour {
                    command.env_remove("NO_COLOR");
                } else {
                    command.env("NO_COLOR", "1");
                }
                let output = command.output().unwrap();
                assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
                let chart = String::from_utf8(output.stdout).unwrap().replace("\r\n", "\n");
                let plain: String = strip_colour(&chart);
                assert_eq!(chart.contains("\x1b["), colour, "colour only where wanted:\n{chart}");
                let widest = plain.lines().map(|line| line.chars().count()).max().unwrap_or(0);
                assert!(widest <= columns.parse().unwrap(), "--by {by} at {columns}: {widest} wide:\n{plain}");
                let name = format!("every-agent-chart-{by}-{columns}{}.txt", if colour { "-colour" } else { "" });
                assert_golden(&name, &chart);
                // Each bar's figure is its row's total in `usage --json`
                // (a bar by day: its day's subtotal over the agents).
                let json = usage(&home, &[&["--by", if by == "day" { "day,agent" } else { by }], &range[..]].concat());
                let rows = if by == "day" { &json["subtotals"] } else { &json["rows"] };
                for row in rows.as_array().unwrap() {
                    let key = row["key"].as_str().unwrap();
                    let bar = plain.lines().find(|line| line.trim_start().starts_with(&format!("{key} "))).unwrap();
                    let shown = bar.split_whitespace().last().unwrap();
                    let expected = row["tokens"]["totalTokens"].as_u64().map_or("unknown".to_owned(), short_count);
                    assert_eq!(shown.trim_start_matches('≥'), expected, "{key}: {bar}");
                }
            }
        }
    }
    let piped = home.beectl(&["usage", "--chart", "--no-import"]);
    assert_eq!(piped.status.code(), Some(4), "charts are for people");
    let said = String::from_utf8_lossy(&piped.stdout);
    assert!(said.contains("--json") && said.contains("--format csv"), "{said}");
}

/// A count as a chart writes it: `9,999`, `12.3k`, `524k`, `3.4M`.
fn short_count(n: u64) -> String {
    let (value, unit) = match n {
        0..10_000 => {
            let digits = n.to_string();
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i).is_multiple_of(3) {
                    out.push(',');
                }
                out.push(c);
            }
            return out;
        }
        10_000..1_000_000 => (n as f64 / 1e3, "k"),
        1_000_000..1_000_000_000 => (n as f64 / 1e6, "M"),
        _ => (n as f64 / 1e9, "B"),
    };
    if value < 100.0 { format!("{value:.1}{unit}") } else { format!("{value:.0}{unit}") }
}

/// `text` without its colour codes.
fn strip_colour(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        match (in_code, c) {
            (false, '\x1b') => in_code = true,
            (true, 'm') => in_code = false,
            (true, _) => {}
            (false, c) => plain.push(c),
        }
    }
    plain
}

/// `usage --format csv`, read back by a CSV reader: a header of the JSON's
/// field names, then exactly the JSON's rows, field by field, a figure the
/// JSON holds as unknown an empty field (never 0), in one and two
/// groupings.
#[test]
fn csv_reads_back_as_the_json() {
    let (home, _) = home();
    for by in ["day", "agent,model", "session"] {
        let json = usage(&home, &["--by", by]);
        let output = home.beectl(&["usage", "--format", "csv", "--no-import", "--timezone", "UTC", "--by", by]);
        assert_eq!(output.status.code(), Some(0));
        assert!(output.stdout.ends_with(b"\r\n"), "RFC 4180 line ends");
        let mut reader = csv::Reader::from_reader(output.stdout.as_slice());
        let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let rows = json["rows"].as_array().unwrap();
        assert_eq!(records.len(), rows.len(), "--by {by}: a record a row");
        for (record, row) in records.iter().zip(rows) {
            for (name, field) in header.iter().zip(record.iter()) {
                let value = match name.as_str() {
                    "inputTokens"
                    | "outputTokens"
                    | "cacheCreationInputTokens"
                    | "cacheReadInputTokens"
                    | "reasoningOutputTokens"
                    | "totalTokens" => &row["tokens"][name],
                    other => &row[other],
                };
                let expected = match value {
                    Value::Null => String::new(),
                    Value::String(text) => text.clone(),
                    Value::Array(items) => items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(";"),
                    number => number.to_string(),
                };
                let same = match (field.parse::<f64>(), expected.parse::<f64>()) {
                    (Ok(a), Ok(b)) => a == b,
                    // A count the JSON leaves out while 0.
                    _ => field == expected || (expected.is_empty() && field == "0" && !name.ends_with("Tokens")),
                };
                assert!(same, "--by {by}, {name}: CSV {field:?}, JSON {expected:?}\n{row}");
            }
        }
    }
}
