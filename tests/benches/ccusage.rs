//! Bee against ccusage on ccusage's own ground: generated ~200 MB Claude
//! Code projects trees of two shapes, each read cold (a fresh ledger each
//! round), in the same run:
//!
//! - dense: a 2 KB tool result per response (~285 responses per MB);
//! - tool-heavy: tool results are most of the bytes, as in a session that
//!   reads files and runs commands — most a few KB, one response in
//!   twenty-five a line of 100–300 KB, their text escaped as JSON escapes
//!   code — about 65 responses per MB, in ~180 files.
//!
//! ccusage's figure is `ccusage claude daily --json --offline`; Bee's
//! is the command a user runs for the same answer, `beectl usage --by day`,
//! which imports the logs itself when beed is down. Bee is also timed as
//! two commands, `beectl ingest` then `beectl usage --by day`, on another
//! fresh ledger. Every answer is checked against the generator's own
//! totals, and the ratios of the wall times are printed with Bee's MB/s
//! and the first pass's peak memory (taken by time(1) in a run of its
//! own, so no timed run pays for it). A first round that warms both up is
//! not counted; the medians are over the rounds after it.
//!
//! Bee's one command is also split into the phases its ingestion pass logs
//! (`BEE_LOG`), so a change shows where it moved the time.
//!
//! ccusage (npm `ccusage@20.0.24`) is installed under `target/bench-tools`
//! when missing (`BEE_BENCH_CCUSAGE` names another binary); without npm the
//! bench still measures Bee and says the ratio could not be taken.
//!
//! `cargo bench -p bee-tests --bench ccusage` (`BEE_BENCH_SHAPE=tool-heavy`
//! for one shape; `BEE_BENCH_KEEP_TREE=DIR` keeps a copy of its tree)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_tests::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CCUSAGE_VERSION: &str = "20.0.24";
const TREE_BYTES: usize = 200_000_000;
/// Rounds counted, after one that warms up: enough that one slow run of
/// either tool (a busy neighbour) moves neither median much.
const ROUNDS: usize = 9;

/// What the generator wrote: the truth both tools must find.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Totals {
    responses: u64,
    input: u64,
    cache_creation: u64,
    cache_read: u64,
    output: u64,
}

/// How a tree's bytes are spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Dense,
    ToolHeavy,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Dense => "dense",
            Shape::ToolHeavy => "tool-heavy",
        }
    }

    /// The tool result before response `n`.
    fn tool_output(self, n: u64, source: &str) -> String {
        let bytes = match (self, n % 25) {
            (Shape::Dense, _) => return source[..source.len().min(2_040)].to_owned(),
            (Shape::ToolHeavy, 0) => 100_000 + (n * 7_919) % 200_000,
            (Shape::ToolHeavy, 1 | 2) => 20_000,
            (Shape::ToolHeavy, _) => 3_000 + (n * 31) % 5_000,
        } as usize;
        source.chars().cycle().take(bytes).collect()
    }
}

/// A tree of projects, each with sessions as Claude Code writes them: a
/// tool result, then a response written once per content block, each
/// line's keys in Claude Code 2.1's own order (an assistant line's type
/// after its message).
fn generate(root: &Path, shape: Shape) -> (u64, Totals) {
    // Code as a tool returns it: quotes, backslashes, tabs and newlines,
    // which the line carries escaped.
    let source = "fn main() { println!(\"hello\"); }\n".repeat(60)
        + "\tlet path = \"C:\\\\temp\\\\x\"; // a \"quoted\" path\n"
        + &"    assert_eq!(parse(\"{\\\"a\\\": 1}\"), Ok(1));\n".repeat(40);
    let mut totals = Totals::default();
    let mut bytes = 0usize;
    let mut n = 0u64;
    let mut file = 0u64;
    while bytes < TREE_BYTES {
        let project = root.join(format!("-home-dev-app{}", file % 20));
        std::fs::create_dir_all(&project).unwrap();
        let session = uuid::Uuid::from_u128(0x5eed_0000_0000_4000_8000_0000_0000_0000 | u128::from(file)).to_string();
        let mut body = String::with_capacity(1_100_000);
        while body.len() < 1_000_000 {
            n += 1;
            let tool_output = shape.tool_output(n, &source);
            body.push_str(
                &json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/dev/app",
                    "sessionId": session, "version": "2.1.332", "gitBranch": "main", "type": "user",
                    "message": {"role": "user", "content": [{"tool_use_id": "toolu_01", "type": "tool_result", "content": tool_output}]},
                    "uuid": uuid::Uuid::new_v4().to_string(), "timestamp": "2026-11-30T10:00:00.000Z"})
                .to_string(),
            );
            body.push('\n');
            let usage = (4 + n % 7, 300 + n % 3, 20_000 + n % 100, 120 + n % 13);
            for block in [
                json!({"type": "text", "text": "I'll read the file, then run the tests."}),
                json!({"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "/x"}}),
            ] {
                body.push_str(
                    &json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/dev/app",
                        "sessionId": session, "version": "2.1.332", "gitBranch": "main",
                        "message": {"id": format!("msg_{n}"), "type": "message", "role": "assistant",
                            "model": "claude-sonnet-4-5-20250929", "content": [block], "stop_reason": "tool_use",
                            "stop_sequence": null,
                            "usage": {"input_tokens": usage.0, "cache_creation_input_tokens": usage.1,
                                      "cache_read_input_tokens": usage.2, "output_tokens": usage.3,
                                      "service_tier": "standard"}},
                        "requestId": format!("req_{n}"), "type": "assistant", "uuid": uuid::Uuid::new_v4().to_string(),
                        "timestamp": format!("2026-11-{:02}T10:00:01.000Z", n % 28 + 1)})
                    .to_string(),
                );
                body.push('\n');
            }
            totals.responses += 1;
            totals.input += usage.0;
            totals.cache_creation += usage.1;
            totals.cache_read += usage.2;
            totals.output += usage.3;
        }
        let path = project.join(format!("{session}.jsonl"));
        std::fs::write(&path, &body).unwrap();
        make_quiet(&path);
        bytes += body.len();
        file += 1;
    }
    (bytes as u64, totals)
}

/// ccusage's binary, installed when missing.
fn ccusage() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BEE_BENCH_CCUSAGE") {
        return Some(path.into());
    }
    let tools = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-tools");
    let binary = tools.join("node_modules/.bin/ccusage");
    if !binary.exists() {
        std::fs::create_dir_all(&tools).ok()?;
        let installed = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&tools)
            .arg(format!("ccusage@{CCUSAGE_VERSION}"))
            .stdout(Stdio::null())
            .status()
            .ok()?;
        if !installed.success() {
            return None;
        }
    }
    binary.exists().then_some(binary)
}

/// One round of Bee's one command by phase, from the pass's own debug
/// lines (each the time since the pass began) and the command's wall time.
struct Phases {
    read: Duration,
    append: Duration,
    settle: Duration,
    /// Startup before the pass; closing the store, the report and exiting
    /// after it.
    around: Duration,
}

impl Phases {
    fn of(stderr: &str, whole: Duration) -> Phases {
        let mark = |name: &str| {
            let line = stderr
                .lines()
                .find(|line| line.contains(&format!("ingestion pass: {name} ")))
                .unwrap_or_else(|| panic!("the pass logs when it has {name}; its stderr was:\n{stderr}"));
            let ms = line.rsplit_once("elapsed_ms=").and_then(|(_, ms)| ms.trim().parse().ok()).unwrap();
            Duration::from_millis(ms)
        };
        let (read, committed, settled) = (mark("logs read"), mark("committed"), mark("settled"));
        Phases {
            read,
            append: committed.saturating_sub(read),
            settle: settled.saturating_sub(committed),
            around: whole.saturating_sub(settled),
        }
    }

    fn medians(rounds: &[Phases], mb: f64) -> String {
        let median = |phase: fn(&Phases) -> Duration| Spread::of(&rounds.iter().map(phase).collect::<Vec<_>>()).median;
        format!(
            "read and parse {:.0} ms ({:.0} MB/s), append {:.0} ms, index and settle {:.0} ms, startup, report and close {:.0} ms",
            median(|p| p.read),
            mb * 1e3 / median(|p| p.read),
            median(|p| p.append),
            median(|p| p.settle),
            median(|p| p.around),
        )
    }
}

/// A command's wall time, stdout and stderr; it must succeed.
fn timed(mut command: Command) -> (Duration, Vec<u8>, String) {
    let started = Instant::now();
    let output = command.stdin(Stdio::null()).output().unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    (elapsed, output.stdout, stderr)
}

fn ccusage_totals(stdout: &[u8]) -> Totals {
    let report: Value = serde_json::from_slice(stdout).unwrap();
    let t = &report["totals"];
    Totals {
        responses: 0,
        input: t["inputTokens"].as_u64().unwrap_or(0),
        cache_creation: t["cacheCreationTokens"].as_u64().unwrap_or(0),
        cache_read: t["cacheReadTokens"].as_u64().unwrap_or(0),
        output: t["outputTokens"].as_u64().unwrap_or(0),
    }
}

fn bee_totals(stdout: &[u8]) -> Totals {
    let report = parse_json_line(stdout);
    assert_eq!(report["issues"], json!([]), "{report}");
    let rows = report["rows"].as_array().unwrap();
    let sum = |field: &str| rows.iter().map(|r| r["tokens"][field].as_u64().unwrap_or(0)).sum();
    Totals {
        responses: rows.iter().map(|r| r["responses"].as_u64().unwrap()).sum(),
        input: sum("inputTokens"),
        cache_creation: sum("cacheCreationInputTokens"),
        cache_read: sum("cacheReadInputTokens"),
        output: sum("outputTokens"),
    }
}

/// Bee's `usage --by day` and ccusage's `daily` day by day: the same tokens
/// each day (both in UTC), and their costs (both from LiteLLM's prices;
/// Bee's is labelled an estimate) with the difference.
fn side_by_side(bee: &[u8], ccusage: &[u8]) {
    let bee = parse_json_line(bee);
    let theirs: Value = serde_json::from_slice(ccusage).unwrap();
    let days = theirs["daily"].as_array().unwrap();
    let rows = bee["rows"].as_array().unwrap();
    assert_eq!(rows.len(), days.len(), "the same days");
    for (row, day) in rows.iter().zip(days) {
        assert_eq!(row["key"], day["date"], "the same day");
        let t = &row["tokens"];
        let pairs = [
            ("inputTokens", "inputTokens"),
            ("outputTokens", "outputTokens"),
            ("cacheCreationInputTokens", "cacheCreationTokens"),
            ("cacheReadInputTokens", "cacheReadTokens"),
            ("totalTokens", "totalTokens"),
        ];
        for (ours, theirs) in pairs {
            assert_eq!(t[ours], day[theirs], "{} {ours}", day["date"]);
        }
    }
    let ours = bee["totals"]["estimatedCostUsd"].as_f64().unwrap_or(f64::NAN);
    let cost = theirs["totals"]["totalCost"].as_f64().unwrap_or(f64::NAN);
    println!(
        "  side by side: {} days, tokens equal every day; cost: Bee estimated ${ours:.2}, ccusage ${cost:.2} ({:+.4}%)",
        days.len(),
        (ours - cost) / cost * 100.0
    );
}

fn main() {
    // Built before any clock starts: `bin` builds stale binaries on first use.
    let beectl = bin("beectl");
    let ccusage = ccusage();
    // `BEE_BENCH_SHAPE=dense` or `tool-heavy` measures one shape alone.
    let only = std::env::var("BEE_BENCH_SHAPE").ok();
    for shape in [Shape::Dense, Shape::ToolHeavy] {
        if only.as_deref().is_none_or(|name| name == shape.name()) {
            measure(shape, &beectl, ccusage.as_deref());
        }
    }
}

fn measure(shape: Shape, beectl: &Path, ccusage: Option<&Path>) {
    let time = PathBuf::from("/usr/bin/time");
    let tree = TestHome::new();
    let projects = tree.path().join(".claude/projects");
    let (bytes, truth) = generate(&projects, shape);
    if let Some(keep) = std::env::var_os("BEE_BENCH_KEEP_TREE") {
        // For profiling one side by hand: a copy of the tree that outlives the run.
        let status = Command::new("cp").arg("-a").arg(tree.path().join(".claude")).arg(keep).status().unwrap();
        assert!(status.success());
    }
    let mb = bytes as f64 / 1e6;
    let files =
        std::fs::read_dir(&projects).unwrap().flatten().flat_map(|d| std::fs::read_dir(d.path()).unwrap()).count();
    println!(
        "a {} Claude projects tree of {mb:.0} MB, {} responses ({:.0} per MB) in {files} files",
        shape.name(),
        truth.responses,
        truth.responses as f64 / mb
    );
    let (mut one_runs, mut two_runs, mut ccusage_runs, mut peaks) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut phases: Vec<Phases> = Vec::new();
    let (mut bee_report, mut ccusage_report) = (Vec::new(), Vec::new());
    // A first round warms both tools' binaries and the tree's pages, and is
    // not counted; the rounds after it alternate the tools.
    for round in 0..=ROUNDS {
        let counted = round > 0;
        if let Some(ccusage) = ccusage {
            let mut command = Command::new(ccusage);
            command.args(["claude", "daily", "--json", "--offline"]).env("HOME", tree.path()).env("TZ", "UTC");
            let (elapsed, stdout, _) = timed(command);
            let found = ccusage_totals(&stdout);
            assert_eq!(found, Totals { responses: 0, ..truth }, "ccusage's totals, round {round}");
            if counted {
                ccusage_runs.push(elapsed);
            }
            ccusage_report = stdout;
        }
        // The one command on a fresh ledger: the first pass over the tree, cold.
        let home = TestHome::new();
        let mut usage = home.command(beectl);
        usage.args(["usage", "--by", "day"]).env("HOME", tree.path());
        usage.env("BEE_LOG", "bee_daemon::ledger::intake::ingest=debug");
        let (one, stdout, stderr) = timed(usage);
        assert_eq!(bee_totals(&stdout), truth, "Bee's totals, one command, round {round}");
        bee_report = stdout;
        // Its peak memory, on another fresh ledger: measured by time(1) in
        // a run of its own, so the timed run is the command alone.
        let home = TestHome::new();
        let mut measured = home.command(&time);
        measured.args(["-f", "max-rss-kb %M"]).arg(beectl).args(["usage", "--by", "day"]).env("HOME", tree.path());
        let (_, _, measured) = timed(measured);
        if let Some(kb) = measured.lines().find_map(|l| l.strip_prefix("max-rss-kb ")) {
            peaks.push(kb.trim().parse::<u64>().unwrap_or(0));
        }
        // The two commands, on another fresh ledger.
        let home = TestHome::new();
        let mut ingest = home.command(beectl);
        ingest.arg("ingest").env("HOME", tree.path());
        let (ingested, _, _) = timed(ingest);
        let mut usage = home.command(beectl);
        usage.args(["usage", "--by", "day"]).env("HOME", tree.path());
        let (reported, stdout, _) = timed(usage);
        assert_eq!(bee_totals(&stdout), truth, "Bee's totals, two commands, round {round}");
        if !counted {
            continue;
        }
        one_runs.push(one);
        phases.push(Phases::of(&stderr, one));
        two_runs.push(ingested + reported);
        println!(
            "  round {round}: Bee {:.0} ms (two commands {:.0} ms){}",
            one.as_secs_f64() * 1e3,
            (ingested + reported).as_secs_f64() * 1e3,
            ccusage_runs.last().map_or(String::new(), |c| format!(", ccusage {:.0} ms", c.as_secs_f64() * 1e3))
        );
    }
    let (one, two) = (Spread::of(&one_runs), Spread::of(&two_runs));
    println!("  Bee usage --by day, cold      {one}; {:.0} MB/s", mb * 1e3 / one.median);
    println!("  Bee ingest, then usage        {two}; {:.0} MB/s", mb * 1e3 / two.median);
    println!("  Bee's phases, medians         {}", Phases::medians(&phases, mb));
    if let Some(peak) = peaks.iter().max() {
        println!("  Bee first-pass peak memory    {:.1} MiB (max of {} rounds)", *peak as f64 / 1024.0, peaks.len());
    }
    if ccusage_runs.is_empty() {
        println!("  ccusage {CCUSAGE_VERSION} could not be installed: no ratio taken");
        return;
    }
    side_by_side(&bee_report, &ccusage_report);
    let theirs = Spread::of(&ccusage_runs);
    println!("  ccusage {CCUSAGE_VERSION} claude daily   {theirs}");
    println!(
        "  {}: Bee is {:.2}x ccusage's speed (median over median; target 5x), {:.2}x as two commands; totals exact in all",
        shape.name(),
        theirs.median / one.median,
        theirs.median / two.median
    );
}
