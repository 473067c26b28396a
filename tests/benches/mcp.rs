//! `beectl mcp serve` benchmarks, each against a baseline in the same run:
//!
//! 1. from spawning the server to the answer of its first `tools/list`
//!    (after `initialize`), against spawning `beectl --version` to its exit
//!    (process start); target ≤ 50 ms;
//! 2. `bee_quota` (a 7-day window) over a ledger of 1,000,000 calls, per
//!    call on a running server, against the same question as a whole
//!    `beectl quota --window 7d` command; target ≤ 20 ms per call.
//!
//! 3. `bee_context_packet` of 200 Rust files as index + outline, per call on
//!    a running server, against the same 200 files as index only (read,
//!    hashed, counted: no parsing); and from a cold start (spawn the server,
//!    initialize, one call), against spawning it for its first
//!    `tools/list`; target ≤ 200 ms both.
//!
//! `cargo bench -p bee-tests --bench mcp`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_daemon::ledger::stored::evidence::Evidence;
use bee_daemon::ledger::stored::store::Ledger;
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
    context_packet_of_200_files(&home);
    quota_over_a_million_calls(&home);
}

fn context_packet_of_200_files(home: &TestHome) {
    let root = home.path();
    // 200 files of about 2 KB (a manifest reads at most 1 MiB in all, as
    // token estimate does), each with 8 functions, a struct and an impl: the
    // 400 selections' answer fits the largest budget.
    let mut source = String::from("//! A generated module.\n\nuse std::collections::HashMap;\n\n");
    source.push_str("pub struct Store {\n    items: HashMap<String, u64>,\n}\n\nimpl Store {\n    pub fn new() -> Self {\n        Store { items: HashMap::new() }\n    }\n}\n\n");
    for f in 0..8 {
        source.push_str(&format!(
            "/// Adds {f} to the total of `key`.\npub fn add_{f}(store: &mut Store, key: &str) -> u64 {{\n    let entry = store.items.entry(key.to_owned()).or_insert(0);\n    *entry += {f};\n    *entry\n}}\n\n"
        ));
    }
    let mut outline = Vec::new();
    let mut index = Vec::new();
    for n in 0..200 {
        let path = format!("src/file{n:03}.rs");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join(&path), &source).unwrap();
        index.push(json!({"id": format!("i{n}"), "path": path, "representation": "index"}));
        outline.push(json!({"id": format!("o{n}"), "path": path, "representation": "outline"}));
    }
    let both: Vec<Value> = index.iter().cloned().chain(outline).collect();
    let call = |id: u64, selections: &[Value]| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "bee_context_packet",
            "arguments": {"manifestJson": json!({"selections": selections}).to_string(), "budgetBytes": 262_144}}})
    };
    // Cold: a server spawned for the one call, as a client that starts it
    // per task does; the baseline spawns it for its first tools/list.
    let (mut cold, mut listed) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let mut server = Server::start(home);
        server.initialize();
        assert_eq!(server.ask(&call(9, &both))["result"]["isError"], false);
        cold.push(started.elapsed());
        server.stop();
        let started = Instant::now();
        let mut server = Server::start(home);
        server.initialize();
        assert!(server.ask(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))["result"]["tools"].is_array());
        listed.push(started.elapsed());
        server.stop();
    }
    let (cold, listed) = (Spread::of(&cold), Spread::of(&listed));
    let mut server = Server::start(home);
    server.initialize();
    let first = server.ask(&call(10, &both));
    assert_eq!(first["result"]["isError"], false, "{first}");
    let packet: Value = serde_json::from_str(first["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!((packet["status"].as_str(), packet["selections"].as_array().unwrap().len()), (Some("complete"), 400));
    let (mut full, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let started = Instant::now();
        assert_eq!(server.ask(&call(11, &both))["result"]["isError"], false);
        full.push(started.elapsed());
        let started = Instant::now();
        assert_eq!(server.ask(&call(12, &index))["result"]["isError"], false);
        bare.push(started.elapsed());
    }
    server.stop();
    let (full, bare) = (Spread::of(&full), Spread::of(&bare));
    println!(
        "\nbee_context_packet of 200 Rust files ({} bytes each), {ROUNDS} rounds (target ≤ 200 ms):",
        source.len()
    );
    println!("  index + outline (tree-sitter), o200k counted   {full}");
    println!("  baseline index only                             {bare}");
    println!("  ratio median {:.2}x", full.median / bare.median);
    println!("  cold: spawn, initialize, one packet (target ≤ 200 ms)   {cold}");
    println!("  baseline cold: spawn, initialize, tools/list        {listed}");
    println!("  ratio median {:.2}x", cold.median / listed.median);
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
        assert!(listed["result"]["tools"].as_array().unwrap().len() >= 20, "the whole catalogue: {listed}");
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
    let mut random = xorshift(0x9e37_79b9_7f4a_7c15);
    let started = Instant::now();
    for _ in 0..CALLS / 10_000 {
        let batch: Vec<Evidence> = (0..10_000)
            .map(|_| {
                let at = now - 1_000 - random() % (week - 3_600_000);
                let provider = if random().is_multiple_of(3) { Provider::Codex } else { Provider::Claude };
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
