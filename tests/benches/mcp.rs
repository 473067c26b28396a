//! `beectl mcp serve` benchmarks, each against a baseline in the same run:
//!
//! 1. from spawning the server to the answer of its first `tools/list`
//!    (after `initialize`), against spawning `beectl --version` to its exit
//!    (process start); target ≤ 50 ms;
//! 2. `bee_quota` (a 7-day window) over a ledger of 1,000,000 calls, per
//!    call on a running server, against the same question as a whole
//!    `beectl quota --window 7d` command; target ≤ 20 ms per call.
//!
//! `cargo bench -p bee-tests --bench mcp`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_daemon::ledger::logs::Evidence;
use bee_daemon::ledger::store::Ledger;
use bee_proto::ledger::{CallRecord, CallSource, LedgerRecord, Provider};
use bee_proto::usage::Counters;
use bee_tests::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const ROUNDS: usize = 20;
const CALLS: usize = 1_000_000;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(home: &TestHome) -> Server {
        let mut command = home.command(bin("beectl"));
        command.args(["mcp", "serve", "--root", home.path().to_str().unwrap()]);
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server { child, stdin, stdout }
    }

    fn ask(&mut self, request: &Value) -> Value {
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        if request.get("id").is_none() {
            return Value::Null;
        }
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    fn initialize(&mut self) {
        let answer = self.ask(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}));
        assert_eq!(answer["id"], 1);
        self.ask(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn main() {
    let home = TestHome::new();
    start_to_tools_list(&home);
    quota_over_a_million_calls(&home);
}

fn start_to_tools_list(home: &TestHome) {
    let version = |_: usize| {
        let started = Instant::now();
        let status = home.command(bin("beectl")).arg("--version").stdout(Stdio::null()).status().unwrap();
        assert!(status.success());
        started.elapsed()
    };
    version(0); // builds the binaries on first use; not timed
    let mut first_list = Vec::new();
    let mut baseline = Vec::new();
    for round in 0..ROUNDS {
        baseline.push(version(round));
        let started = Instant::now();
        let mut server = Server::start(home);
        server.initialize();
        let listed = server.ask(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        first_list.push(started.elapsed());
        assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 7);
        server.stop();
    }
    let (list, base) = (Spread::of(&first_list), Spread::of(&baseline));
    println!("server start to the first tools/list answer, {ROUNDS} rounds (target ≤ 50 ms):");
    println!("  beectl mcp serve: spawn, initialize, tools/list   {list}");
    println!("  baseline beectl --version (process start)        {base}");
    println!("  ratio median {:.2}x", list.median / base.median);
}

fn quota_over_a_million_calls(home: &TestHome) {
    let dir = home.bee_dir().join("usage").join("ledger-v1");
    let mut ledger = Ledger::open(&dir).unwrap();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let week = 7 * 24 * 3_600_000u64;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let started = Instant::now();
    for _ in 0..CALLS / 10_000 {
        let batch: Vec<Evidence> = (0..10_000)
            .map(|_| {
                let at = now - 1_000 - random() % (week - 3_600_000);
                let provider = if random() % 3 == 0 { Provider::Codex } else { Provider::Claude };
                Evidence::Record(LedgerRecord::Call(Box::new(CallRecord {
                    record_id: uuid::Uuid::new_v4(),
                    source: CallSource::Run,
                    provider,
                    started_at_utc: bee_proto::time::format_rfc3339(UNIX_EPOCH + Duration::from_millis(at)),
                    duration_ms: Some(1_000 + random() % 300_000),
                    success: Some(true),
                    model: Some("claude-sonnet-4-5".to_owned()),
                    project_path: None,
                    cost_usd: None,
                    tokens: Some(Counters { input_tokens: Some(random() % 5_000), ..Counters::default() }),
                    quota_snapshots: Vec::new(),
                    model_invocations: Some(1),
                    context_window: None,
                    context_tokens: None,
                    compactions: None,
                    session_id: Some(format!("session-{}", random() % 1_000)),
                    outcome: None,
                })))
            })
            .collect();
        ledger.append_at(&batch, &[]).unwrap();
    }
    ledger.settle();
    drop(ledger);
    println!("\n{CALLS} calls written and settled in {:.1} s", started.elapsed().as_secs_f64());

    let mut server = Server::start(home);
    server.initialize();
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "bee_quota", "arguments": {"window": "7d"}}});
    let first = server.ask(&call);
    assert_eq!(first["result"]["isError"], false, "{first}");
    let mut per_call = Vec::new();
    let mut whole = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let answer = server.ask(&call);
        per_call.push(started.elapsed());
        assert_eq!(answer["result"]["isError"], false);
        let started = Instant::now();
        let output =
            home.command(bin("beectl")).args(["quota", "--window", "7d"]).stdin(Stdio::null()).output().unwrap();
        whole.push(started.elapsed());
        assert_eq!(output.status.code(), Some(0));
    }
    server.stop();
    let (mcp, cli) = (Spread::of(&per_call), Spread::of(&whole));
    println!("bee_quota --window 7d over {CALLS} calls, {ROUNDS} rounds (target ≤ 20 ms per call):");
    println!("  MCP call on a running server       {mcp}");
    println!("  baseline whole beectl quota        {cli}");
    println!("  ratio median {:.2}x", mcp.median / cli.median);
}
