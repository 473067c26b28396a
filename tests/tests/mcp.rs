//! `beectl mcp serve` through a real MCP client (the official Rust SDK's,
//! over stdio): the catalogue and its annotations, each evidence tool
//! answering exactly what the CLI prints for the same arguments, the
//! documented errors as `isError` results with `{"errorCode","message"}`, a
//! result over budget refused (never cut), a timed-out call, and a frame
//! over 512 KiB answered with a JSON-RPC error while the server lives on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

const SESSION_LOG: &str = "4c3b2a19-0817-4f6e-9d5c-4b3a29180706";

type Client = RunningService<RoleClient, ()>;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// `beectl mcp serve --root ROOT` in `home`, as an MCP client starts it.
async fn connect(home: &TestHome, root: &Path, extra_env: &[(&str, &str)]) -> Client {
    connect_with(home, root, &[], extra_env).await
}

async fn connect_with(home: &TestHome, root: &Path, extra_args: &[&str], extra_env: &[(&str, &str)]) -> Client {
    let mut command = home.command(bin("beectl"));
    command.args(["mcp", "serve", "--root", root.to_str().unwrap()]).args(extra_args).stderr(Stdio::null());
    for (key, value) in extra_env {
        command.env(key, value);
    }
    let transport = TokioChildProcess::new(tokio::process::Command::from(command)).unwrap();
    ().serve(transport).await.unwrap()
}

async fn call(client: &Client, name: &'static str, arguments: Value) -> CallToolResult {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    client.call_tool(CallToolRequestParams::new(name).with_arguments(arguments)).await.unwrap()
}

fn text_of(result: &CallToolResult) -> String {
    let value = serde_json::to_value(result).unwrap();
    value["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {value}")).to_owned()
}

fn is_error(result: &CallToolResult) -> bool {
    serde_json::to_value(result).unwrap()["isError"] == json!(true)
}

/// A tool error's body.
fn error_of(result: &CallToolResult) -> Value {
    assert!(is_error(result), "{}", text_of(result));
    let body: Value = serde_json::from_str(&text_of(result)).unwrap();
    assert_eq!(body.as_object().unwrap().len(), 2, "exactly errorCode and message: {body}");
    assert!(!body["message"].as_str().unwrap().is_empty());
    body
}

/// The CLI's stdout for `args` (with `stdin`), as a string.
fn cli(home: &TestHome, root: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut command = home.command(bin("beectl"));
    command.current_dir(root).args(args).stdout(Stdio::piped()).stderr(Stdio::null());
    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = command.spawn().unwrap();
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
}

fn without(mut value: Value, key: &str) -> Value {
    if let Some(object) = value.as_object_mut() {
        object.remove(key);
    }
    if let Some(rows) = value.get_mut("sessions").and_then(Value::as_array_mut) {
        for row in rows {
            row.as_object_mut().unwrap().remove(key);
        }
    }
    value
}

/// Evidence in every store: a delivery observation, a ledger response, stored events.
fn evidence(home: &TestHome, root: &Path) -> String {
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let block = home.file("block.md", b"Run the tests before you say done.\n");
    let (output, _) = home.hook(
        &["prompt", "--surface", "context-json", "--block", block.to_str().unwrap()],
        &prompt_envelope(SESSION, "go"),
    );
    assert_eq!(output.status.code(), Some(0));
    for kind in ["SessionStart", "PreToolUse", "Stop"] {
        let event = json!({"source_app": "app", "session_id": "s-mcp", "hook_event_type": kind, "payload": {},
                           "timestamp": 1_796_000_000_000i64});
        let (status, _, _) = raw_http(&home.socket(), &post_request("/events", "", event.to_string().as_bytes()));
        assert_eq!(status, 200);
    }
    home.settle();
    // `beectl events recent` prints what beed answers, read with the same code.
    let (_, _, served) = raw_http(&home.socket(), &get_request("/events/recent?limit=3", "beed", ""));
    let printed = cli(home, root, &["events", "recent", "--limit", "3"], None);
    assert_eq!(printed.as_bytes(), [served.as_slice(), b"\n"].concat(), "the same bytes as beed's answer");
    drop(daemon);
    let log = json!({"type": "assistant", "sessionId": SESSION_LOG, "timestamp": "2026-11-20T10:00:00.000Z",
        "requestId": "req_mcp_1", "cwd": root.display().to_string(),
        "message": {"id": "msg_mcp_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 12, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000, "output_tokens": 34}}});
    write_quiet(
        &home.path().join(format!(".claude/projects/-work-app/{SESSION_LOG}.jsonl")),
        &(log.to_string() + "\n"),
    );
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let (code, report) = home.report(&[]);
    assert_eq!((code, report["deliveredEvents"].clone()), (0, json!(1)), "{report}");
    // The one observation's event id.
    let db = home.store().join("delivery.sqlite3");
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT event_id FROM observation LIMIT 1", [], |row| row.get(0)).unwrap()
}

#[test]
fn every_evidence_tool_answers_what_the_cli_prints() {
    let home = TestHome::new();
    let root = home.path().join("checkout");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.md"), "Keep the changelog current.\n").unwrap();
    let root = std::fs::canonicalize(&root).unwrap();
    let event_id = evidence(&home, &root);
    let store = home.store().display().to_string();
    runtime().block_on(async {
        let client = connect(&home, &root, &[]).await;
        let info = client.peer_info().unwrap();
        let version = String::from_utf8(home.beectl(&["--version"]).stdout).unwrap();
        let served = &info.server_info.as_ref().unwrap().version;
        assert!(
            version.starts_with(&format!("beectl {served} ")),
            "serverInfo.version {served} is beectl's: {version}"
        );
        let tools = client.list_all_tools().await.unwrap();
        let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "bee_artifact_list",
                "bee_artifact_query",
                "bee_artifact_read",
                "bee_artifact_search",
                "bee_audit",
                "bee_compression_recover",
                "bee_context_compress",
                "bee_context_packet",
                "bee_delivery_read",
                "bee_delivery_report",
                "bee_events_recent",
                "bee_plan_next",
                "bee_plan_show",
                "bee_quota",
                "bee_representation_decode",
                "bee_representation_encode",
                "bee_skill_get",
                "bee_skill_resolve",
                "bee_skill_search",
                "bee_token_estimate",
                "bee_usage"
            ]
        );
        for tool in &tools {
            let annotations = serde_json::to_value(tool.annotations.as_ref().unwrap()).unwrap();
            // Skill tools read directories outside the checkout; compression
            // keeps the original it compressed.
            let open_world = tool.name.starts_with("bee_skill_");
            let read_only = tool.name != "bee_context_compress";
            assert_eq!(
                (annotations["readOnlyHint"].clone(), annotations["openWorldHint"].clone()),
                (json!(read_only), json!(open_world)),
                "{}",
                tool.name
            );
        }

        let same = |tool: &str, mcp: &CallToolResult, printed: String| {
            assert!(!is_error(mcp), "{tool}: {}", text_of(mcp));
            assert_eq!(text_of(mcp), printed, "{tool} answers what the CLI prints");
        };
        let estimate = call(
            &client,
            "bee_token_estimate",
            json!({"files": ["notes.md"], "text": "Hello world!",
                                                                   "encoding": "o200k_base"}),
        )
        .await;
        same(
            "bee_token_estimate",
            &estimate,
            cli(
                &home,
                &root,
                &["token", "estimate", "--file", "notes.md", "--stdin", "--encoding", "o200k_base"],
                Some("Hello world!"),
            ),
        );
        let report = call(&client, "bee_delivery_report", json!({"limit": 5})).await;
        same(
            "bee_delivery_report",
            &report,
            cli(&home, &root, &["delivery", "report", "--store", &store, "--limit", "5"], None),
        );
        let read = call(&client, "bee_delivery_read", json!({"event": event_id})).await;
        same(
            "bee_delivery_read",
            &read,
            cli(&home, &root, &["delivery", "read", "--store", &store, "--event", &event_id], None),
        );
        let range = ["--since", "2026-11-01T00:00:00Z", "--until", "2026-11-30T00:00:00Z"];
        let quota = call(&client, "bee_quota", json!({"since": range[1], "until": range[3]})).await;
        same("bee_quota", &quota, cli(&home, &root, &[&["quota"][..], &range].concat(), None));
        let usage =
            call(&client, "bee_usage", json!({"since": "2026-11-01", "until": "2026-11-29", "timezone": "UTC"})).await;
        let printed = cli(
            &home,
            &root,
            &["usage", "--json", "--no-import", "--since", "2026-11-01", "--until", "2026-11-29", "--timezone", "UTC"],
            None,
        );
        same("bee_usage", &usage, printed.clone());
        // Two groupings, the agent filter and the order reach the tool as the command's flags.
        let paired = call(
            &client,
            "bee_usage",
            json!({"by": "day", "thenBy": "agent", "agent": "claude", "order": "desc", "last": 3,
                   "since": "2026-11-01", "until": "2026-11-29", "timezone": "UTC"}),
        )
        .await;
        let paired_cli = [
            "usage",
            "--json",
            "--no-import",
            "--by",
            "day,agent",
            "--agent",
            "claude",
            "--order",
            "desc",
            "--last",
            "3",
            "--since",
            "2026-11-01",
            "--until",
            "2026-11-29",
            "--timezone",
            "UTC",
        ];
        same("bee_usage", &paired, cli(&home, &root, &paired_cli, None));
        assert_eq!(serde_json::from_str::<Value>(&text_of(&paired)).unwrap()["by"], "day,agent");
        let usage: Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(usage["totals"]["tokens"]["outputTokens"], 34, "the ledger's response: {usage}");
        let recent = call(&client, "bee_events_recent", json!({"limit": 2})).await;
        same("bee_events_recent", &recent, cli(&home, &root, &["events", "recent", "--limit", "2"], None));
        assert_eq!(serde_json::from_str::<Value>(&text_of(&recent)).unwrap().as_array().unwrap().len(), 2);
        // The audit stamps its time: everything else is the same.
        let audit = call(&client, "bee_audit", json!({"session": "s-mcp"})).await;
        let printed = cli(&home, &root, &["audit", "--no-outcome-checks", "--session", "s-mcp"], None);
        assert_eq!(
            without(serde_json::from_str(&text_of(&audit)).unwrap(), "checkedAtUtc"),
            without(serde_json::from_str(&printed).unwrap(), "checkedAtUtc")
        );

        // Documented errors: stable codes, never a stack of text.
        let cases = [
            ("bee_delivery_read", json!({"event": "not-a-uuid"}), "invalid_usage"),
            ("bee_audit", json!({"session": "no-such-session"}), "no_such_session"),
            ("bee_usage", json!({"by": "fortnight"}), "invalid_usage"),
            ("bee_quota", json!({"window": "5h", "since": "2026-11-01T00:00:00Z"}), "invalid_usage"),
        ];
        for (tool, arguments, code) in cases {
            let result = call(&client, tool, arguments.clone()).await;
            assert_eq!(error_of(&result)["errorCode"], code, "{tool} {arguments}");
        }
        let outside = call(&client, "bee_token_estimate", json!({"files": ["../outside.txt"]})).await;
        assert!(is_error(&outside), "a path outside the checkout: {}", text_of(&outside));

        // --discovery: the same catalogue behind three tools, the same answers.
        let discovery = connect_with(&home, &root, &["--discovery"], &[]).await;
        let mut meta: Vec<String> =
            discovery.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
        meta.sort();
        assert_eq!(meta, ["bee_tool_call", "bee_tool_schema", "bee_tool_search"]);
        let found: Value = serde_json::from_str(&text_of(
            &call(&discovery, "bee_tool_search", json!({"query": "usage tokens"})).await,
        ))
        .unwrap();
        assert_eq!(found[0]["name"], "bee_usage", "{found}");
        // The README's example question, through the real server: the right
        // tool first, with the question it answers as its example.
        let asked: Value = serde_json::from_str(&text_of(
            &call(&discovery, "bee_tool_search", json!({"query": "how many tokens did I use today", "limit": 3})).await,
        ))
        .unwrap();
        assert_eq!(asked[0]["name"], "bee_usage", "{asked}");
        assert_eq!(asked[0]["answers"], "How many tokens did I use today?", "{asked}");
        let schema: Value =
            serde_json::from_str(&text_of(&call(&discovery, "bee_tool_schema", json!({"name": "bee_usage"})).await))
                .unwrap();
        let direct = tools.iter().find(|t| t.name == "bee_usage").unwrap();
        assert_eq!(schema["inputSchema"], serde_json::to_value(&direct.input_schema).unwrap());
        let through =
            call(&discovery, "bee_tool_call", json!({"name": "bee_events_recent", "arguments": {"limit": 2}})).await;
        assert_eq!(text_of(&through), text_of(&recent), "the same answer as the direct call");
        let failing = call(
            &discovery,
            "bee_tool_call",
            json!({"name": "bee_audit", "arguments": {"session": "no-such-session"}}),
        )
        .await;
        assert_eq!(error_of(&failing)["errorCode"], "no_such_session", "the same errors");
        let unknown = discovery
            .call_tool(
                CallToolRequestParams::new("bee_tool_call")
                    .with_arguments(json!({"name": "bee_nothing"}).as_object().cloned().unwrap()),
            )
            .await;
        assert!(unknown.is_err(), "an unknown tool is a protocol error, as a direct call's is");
        discovery.cancel().await.unwrap();
        client.cancel().await.unwrap();
    });
}

#[test]
fn an_answer_over_budget_is_an_error_and_a_slow_call_times_out() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    // More stored events than one result may carry.
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    for n in 0..2_000 {
        let event = json!({"source_app": "app", "session_id": format!("s-{n}"), "hook_event_type": "PreToolUse",
                           "payload": {"tool_name": "Bash"}, "tool_name": "Bash"});
        let (status, _, _) = raw_http(&home.socket(), &post_request("/events", "", event.to_string().as_bytes()));
        assert_eq!(status, 200);
    }
    drop(daemon);
    runtime().block_on(async {
        let client = connect(&home, &root, &[]).await;
        let whole = cli(&home, &root, &["events", "recent", "--limit", "2000"], None);
        assert!(whole.len() > 256 * 1024, "{} bytes", whole.len());
        let over = call(&client, "bee_events_recent", json!({"limit": 2000})).await;
        let body = error_of(&over);
        assert_eq!(body["errorCode"], "result_too_large");
        assert!(body["message"].as_str().unwrap().contains(&whole.len().to_string()), "{body}");
        let fits = call(&client, "bee_events_recent", json!({"limit": 10})).await;
        assert!(!is_error(&fits), "the server answers on");
        client.cancel().await.unwrap();

        // A call over the time limit (shortened here: counting with a
        // tokenizer built in-process takes longer than 1 ms).
        let slow = connect(&home, &root, &[("BEE_MCP_TOOL_TIMEOUT_MS", "1")]).await;
        let late = call(&slow, "bee_token_estimate", json!({"text": "Hello world!", "encoding": "o200k_base"})).await;
        assert_eq!(error_of(&late)["errorCode"], "timeout");
        slow.cancel().await.unwrap();
    });
}

/// `bee_quota` over pi's own records (which time no turn and keep no
/// usage-limit notice): its turns and hits are `null`, never 0, with the
/// issues naming pi — exactly what `beectl quota` prints.
#[test]
fn bee_quota_says_null_for_what_an_agent_never_records() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../daemon/src/ledger/agents/testdata/pi-0.73.1-tool-and-continue.jsonl");
    write_quiet(
        &home.path().join(".pi/agent/sessions/--home-dev-app--/2026-12-05T03-22-45_s.jsonl"),
        &std::fs::read_to_string(fixture).unwrap(),
    );
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    runtime().block_on(async {
        let client = connect(&home, &root, &[]).await;
        let range = ["--since", "2026-11-01", "--until", "2026-12-05"];
        let answer = call(&client, "bee_quota", json!({"since": range[1], "until": range[3]})).await;
        assert!(!is_error(&answer), "{}", text_of(&answer));
        assert_eq!(text_of(&answer), cli(&home, &root, &[&["quota"][..], &range].concat(), None));
        let quota: Value = serde_json::from_str(&text_of(&answer)).unwrap();
        let pi = &quota["providers"][0];
        assert_eq!(pi["provider"], "pi", "{quota}");
        assert!(pi["derived"].is_null() && pi["crossed"].is_null(), "{quota}");
        assert_eq!(pi["issues"], json!(["time_not_measured", "limits_not_recorded"]), "{quota}");
        assert!(quota["derived"].is_null() && quota["crossed"].is_null(), "{quota}");
        assert_eq!(quota["notRecorded"], json!({"time": ["pi"], "limits": ["pi"]}), "{quota}");
        assert_eq!(quota["issues"], json!(["time_not_measured", "limits_not_recorded"]), "{quota}");
        client.cancel().await.unwrap();
    });
}

/// `beectl mcp serve --root ROOT` spoken to raw, over its piped stdin and stdout.
fn raw_server(home: &TestHome, root: &Path, env: &[(&str, &str)]) -> std::process::Child {
    let mut command = home.command(bin("beectl"));
    command.args(["mcp", "serve", "--root", root.to_str().unwrap()]).envs(env.iter().copied());
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap()
}

#[test]
fn a_frame_over_512_kib_gets_an_error_and_the_server_lives_on() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    let mut child = raw_server(&home, &root, &[]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answer = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap_or_else(|err| panic!("{err}: {line}"))
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    writeln!(stdin, "{initialize}").unwrap();
    assert_eq!(answer()["id"], 1);
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let huge = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "bee_token_estimate",
        "arguments": {"text": "x".repeat(600 * 1024)}}});
    writeln!(stdin, "{huge}").unwrap();
    let refused = answer();
    assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (json!(7), json!(-32600)), "{refused}");
    assert_eq!(refused["error"]["data"]["errorCode"], "frame_too_large");
    // Arguments that are no object: invalid params, not an unknown method.
    let listed_args = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "bee_skill_search",
        "arguments": ["deploy"]}});
    writeln!(stdin, "{listed_args}").unwrap();
    let refused = answer();
    assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (json!(9), json!(-32602)), "{refused}");
    assert_eq!(refused["error"]["data"]["errorCode"], "invalid_usage");
    // Arguments that miss the schema: the spec's error body, as every tool error.
    let missing = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "bee_skill_search",
        "arguments": {}}});
    writeln!(stdin, "{missing}").unwrap();
    let result = answer();
    assert_eq!(result["result"]["isError"], true, "{result}");
    let body: Value = serde_json::from_str(result["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["errorCode"], "invalid_usage", "{body}");
    assert!(body["message"].as_str().unwrap().contains("missing field `query`"), "{body}");
    // A command whose error document has no message: its code's meaning,
    // never the document as an escaped string.
    let outside = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "bee_token_estimate",
        "arguments": {"files": ["/etc/hostname"]}}});
    writeln!(stdin, "{outside}").unwrap();
    let result = answer();
    let body: Value = serde_json::from_str(result["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["errorCode"], "path_escape", "{body}");
    assert!(!body["message"].as_str().unwrap().contains('{'), "a sentence: {body}");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})).unwrap();
    let listed = answer();
    assert_eq!(listed["id"], 8);
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 21, "the server lives on");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "it ends when its client closes stdin: {status}");
    // The checkout is pinned as given only when absolute and physical.
    let link = home.path().join("link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    for bad in ["relative/dir", link.to_str().unwrap(), "/nonexistent/checkout"] {
        let refused = home.beectl(&["mcp", "serve", "--root", bad]);
        assert_eq!(refused.status.code(), Some(4), "{bad}");
        // Said on stderr: stdout is the JSON-RPC channel.
        assert!(refused.stdout.is_empty(), "{bad}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains("--root"), "{bad}");
    }
}

/// The MCP Inspector's command-line client (npm, pinned in `tests/node`)
/// lists the tools and calls three of them against `beectl mcp serve`.
#[test]
fn the_mcp_inspector_lists_and_calls_the_tools() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    std::fs::write(root.join("notes.md"), "Keep the changelog current.\n").unwrap();
    let inspector = |method_args: &[&str]| -> Value {
        let mut command = home.command(bee_tests::providers::mcp_inspector_cli());
        command
            .arg("--cli")
            .arg(bin("beectl"))
            .args(["mcp", "serve", "--root", root.to_str().unwrap()])
            .args(method_args)
            .current_dir(&root)
            .stdin(Stdio::null());
        let output = command.output().unwrap();
        serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
            panic!("{err}: {}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
        })
    };
    let listed = inspector(&["--method", "tools/list"]);
    assert_eq!(listed["tools"].as_array().unwrap().len(), 21, "{listed}");
    // Every schema portable and exact: the Inspector's --strict finds
    // nothing in either server; optional fields are one type, integers carry
    // their real bounds, word-valued fields their words.
    for server in [
        &["mcp", "serve", "--root"][..],
        &["mcp", "serve", "--discovery", "--root"],
        &["design", "mcp", "--stdio", "--root"],
    ] {
        let output = home
            .command(bee_tests::providers::mcp_inspector_cli())
            .arg("--cli")
            .arg(bin("beectl"))
            .args(server)
            .arg(&root)
            .args(["--strict", "--method", "tools/list"])
            .current_dir(&root)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success() && !said.contains("Warning") && !said.contains("Error"), "{server:?}: {said}");
    }
    for tool in listed["tools"].as_array().unwrap() {
        for (name, property) in tool["inputSchema"]["properties"].as_object().unwrap() {
            assert!(property["type"].is_string(), "{}.{name}: {property}", tool["name"]);
        }
    }
    let property = |tool: &str, name: &str| -> Value {
        let tool = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == tool).unwrap();
        tool["inputSchema"]["properties"][name].clone()
    };
    let budget = property("bee_artifact_search", "budgetBytes");
    assert_eq!((budget["minimum"].clone(), budget["maximum"].clone()), (json!(512), json!(262_144)), "{budget}");
    let length = property("bee_artifact_read", "lengthBytes");
    assert_eq!((length["minimum"].clone(), length["maximum"].clone()), (json!(1), json!(65_536)), "{length}");
    assert_eq!(property("bee_skill_search", "limit")["maximum"], 20);
    assert_eq!(
        property("bee_usage", "by")["enum"],
        json!(["day", "hour", "week", "month", "session", "model", "block", "agent", "project"])
    );
    assert_eq!(property("bee_usage", "order")["enum"], json!(["asc", "desc"]));
    assert_eq!(
        property("bee_quota", "provider")["enum"],
        json!(bee_proto::ledger::Provider::ALL.iter().map(|p| p.as_str()).collect::<Vec<_>>()),
        "every agent's name"
    );
    assert_eq!(property("bee_context_compress", "contentKind")["enum"], json!(["prose"]));
    let estimate =
        inspector(&["--method", "tools/call", "--tool-name", "bee_token_estimate", "--tool-arg", "text=Hello world!"]);
    assert_eq!(estimate["isError"], false, "{estimate}");
    let text = estimate["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, cli(&home, &root, &["token", "estimate", "--stdin"], Some("Hello world!")));
    let report = inspector(&["--method", "tools/call", "--tool-name", "bee_delivery_report"]);
    let printed = cli(&home, &root, &["delivery", "report", "--store", home.store().to_str().unwrap()], None);
    assert_eq!(report["content"][0]["text"].as_str().unwrap(), printed, "an unknown report, as the CLI prints it");
    let audit = inspector(&["--method", "tools/call", "--tool-name", "bee_audit", "--tool-arg", "session=nope"]);
    assert_eq!(audit["isError"], true, "{audit}");
    let body: Value = serde_json::from_str(audit["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["errorCode"], "no_such_session");
}

/// `beectl artifact add | list | get` and the MCP artifact tools: a 1 MiB
/// binary read back page by page with an equal SHA-256, exact line search
/// with the total before paging, a declarative query, budgets that refuse
/// rather than cut, and a tampered artifact never served.
#[test]
fn artifacts_round_trip_through_the_cli_and_mcp() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    let mut random = xorshift(0x2545_f491_4f6c_dd1d);
    let binary: Vec<u8> = (0..1 << 20).map(|_| random() as u8).collect();
    let binary_path = home.file("blob.bin", &binary);
    let lines: String =
        (1..=300).map(|n| format!("line {n}: {}\n", if n % 7 == 0 { "needle here" } else { "hay" })).collect();
    let text_path = home.file("notes.txt", lines.as_bytes());
    let records: String = (1..=50)
        .map(|n| {
            json!({"n": n, "kind": if n % 2 == 0 { "even" } else { "odd" }, "meta": {"size": n * 10}}).to_string()
                + "\n"
        })
        .collect();
    let records_path = home.file("records.jsonl", records.as_bytes());
    let add = |path: &Path| -> Value {
        let output = home.beectl(&["artifact", "add", path.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
        parse_json_line(&output.stdout)
    };
    let blob = add(&binary_path);
    assert_eq!(blob["status"], "added");
    let id = blob["artifact"]["id"].as_str().unwrap().to_owned();
    let sha = blob["artifact"]["sha256"].as_str().unwrap().to_owned();
    let sha256sum = |bytes: &[u8]| -> String {
        let mut child =
            std::process::Command::new("sha256sum").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()[..64].to_owned()
    };
    assert_eq!(sha, sha256sum(&binary), "the recorded sha256 is the file's");
    assert_eq!(add(&binary_path)["status"], "already_stored", "content-addressed: stored once");
    let notes = add(&text_path)["artifact"]["id"].as_str().unwrap().to_owned();
    let records_id = add(&records_path)["artifact"]["id"].as_str().unwrap().to_owned();
    let listed = parse_json_line(&home.beectl(&["artifact", "list"]).stdout);
    assert_eq!(listed["artifacts"].as_array().unwrap().len(), 3);
    let stored = home.bee_dir().join("artifacts").join(format!("{id}.bin"));
    assert_eq!(std::fs::metadata(&stored).unwrap().permissions().mode() & 0o777, 0o600);
    let out = home.path().join("copy.bin");
    assert_eq!(home.beectl(&["artifact", "get", &id, "--out", out.to_str().unwrap()]).status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), binary);
    let again = home.beectl(&["artifact", "get", &id, "--out", out.to_str().unwrap()]);
    assert_eq!(
        (again.status.code(), parse_json_line(&again.stdout)["errorCode"].clone()),
        (Some(5), json!("out_exists"))
    );

    runtime().block_on(async {
        let client = connect(&home, &root, &[]).await;
        // The ids the other artifact tools take are listed, as the CLI lists them.
        let listed: Value =
            serde_json::from_str(&text_of(&call(&client, "bee_artifact_list", json!({})).await)).unwrap();
        let ids: Vec<&str> = listed["artifacts"].as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap()).collect();
        assert!(ids.contains(&id.as_str()), "{listed}");
        let printed = parse_json_line(&home.beectl(&["artifact", "list"]).stdout);
        assert_eq!(printed.to_string().matches("\"id\"").count(), ids.len(), "{printed}");
        // Page by page, following nextOffsetBytes until null.
        use base64::Engine as _;
        let (mut offset, mut pages, mut read) = (Some(0u64), 0, Vec::new());
        while let Some(at) = offset {
            let page: Value =
                serde_json::from_str(&text_of(&call(&client, "bee_artifact_read", json!({"id": id, "offsetBytes": at})).await))
                    .unwrap();
            assert_eq!((page["sourceSha256"].as_str(), page["sourceBytes"].as_u64()), (Some(sha.as_str()), Some(1 << 20)));
            read.extend(base64::engine::general_purpose::STANDARD.decode(page["base64"].as_str().unwrap()).unwrap());
            offset = page["nextOffsetBytes"].as_u64();
            pages += 1;
        }
        assert_eq!(pages, 16);
        assert_eq!(sha256sum(&read), sha, "the pages, decoded in order, have the recorded SHA-256");
        let wrong = call(&client, "bee_artifact_read", json!({"id": id, "lengthBytes": 65_537})).await;
        assert_eq!(error_of(&wrong)["errorCode"], "invalid_usage");
        let missing = call(&client, "bee_artifact_read", json!({"id": "0123456789abcdef"})).await;
        assert_eq!(error_of(&missing)["errorCode"], "artifact_not_found");

        // Exact line search: the total before paging, then the page.
        let found: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_artifact_search", json!({"text": "needle", "limit": 5, "offset": 2})).await,
        ))
        .unwrap();
        assert_eq!((found["total"].clone(), found["matches"].as_array().unwrap().len()), (json!(42), 5));
        assert_eq!(found["matches"][0], json!({"id": notes, "line": 21, "text": "line 21: needle here", "truncated": false}));
        let tight = call(&client, "bee_artifact_search", json!({"text": "line", "limit": 100, "budgetBytes": 512})).await;
        assert_eq!(error_of(&tight)["errorCode"], "budget_exceeded", "refused, never cut");

        // A declarative query over JSON lines.
        let query = json!({"where": [{"path": "kind", "op": "eq", "value": "even"}, {"path": "meta.size", "op": "gt", "value": 200}],
                           "select": ["n", "meta.size"], "limit": 3});
        let answer: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_artifact_query", json!({"id": records_id, "queryJson": query.to_string()})).await,
        ))
        .unwrap();
        assert_eq!(answer["total"], 15, "{answer}");
        assert_eq!(answer["rows"], json!([{"n": 22, "meta.size": 220}, {"n": 24, "meta.size": 240}, {"n": 26, "meta.size": 260}]));
        let code = call(&client, "bee_artifact_query", json!({"id": records_id, "queryJson": "{\"sql\": \"drop table\"}"})).await;
        assert_eq!(error_of(&code)["errorCode"], "query_invalid");
        let huge = call(&client, "bee_artifact_query", json!({"id": records_id, "queryJson": " ".repeat(65 * 1024)})).await;
        assert_eq!(error_of(&huge)["errorCode"], "query_too_large");

        // A stored artifact changed behind Bee's back is never served.
        let mut tampered = std::fs::read(&stored).unwrap();
        tampered[1000] ^= 0xff;
        std::fs::write(&stored, tampered).unwrap();
        let corrupt = call(&client, "bee_artifact_read", json!({"id": id})).await;
        assert_eq!(error_of(&corrupt)["errorCode"], "artifact_corrupt");
        client.cancel().await.unwrap();
    });
    let refused = home.beectl(&["artifact", "get", &id, "--out", home.path().join("other.bin").to_str().unwrap()]);
    assert_eq!(
        (refused.status.code(), parse_json_line(&refused.stdout)["errorCode"].clone()),
        (Some(5), json!("artifact_corrupt"))
    );
    assert!(!home.path().join("other.bin").exists(), "nothing written from a corrupt artifact");
}

fn write_skill(dir: &Path, name: &str, description: &str, dependencies: &[&str], body: &str) {
    let dir = dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let dependencies =
        if dependencies.is_empty() { String::new() } else { format!("dependencies: [{}]\n", dependencies.join(", ")) };
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n{dependencies}---\n{body}"),
    )
    .unwrap();
}

/// The skill bridge: the checkout's skills, the user's and a configured
/// root, ranked by relevance; one whole body; a chain, dependencies first;
/// cycles, missing dependencies, links and a missing bridge as errors.
#[test]
fn skills_are_searched_got_and_resolved_across_their_roots() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap().join("checkout");
    let checkout_skills = root.join(".claude/skills");
    write_skill(&checkout_skills, "deploy", "Deploy the service to staging", &["build"], "Run ./deploy.sh staging.\n");
    write_skill(
        &checkout_skills,
        "review",
        "Review a pull request",
        &[],
        "Read the diff. Never deploy from a review.\n",
    );
    write_skill(&checkout_skills, "loop-a", "First of a cycle", &["loop-b"], "a\n");
    write_skill(&checkout_skills, "loop-b", "Second of a cycle", &["loop-a"], "b\n");
    write_skill(&checkout_skills, "orphan", "Needs a skill nobody has", &["nowhere"], "o\n");
    let user_skills = home.path().join(".claude/skills");
    write_skill(&user_skills, "build", "Build the release binaries", &[], "cargo build --release\n");
    let shared = home.path().join("shared-skills");
    write_skill(&shared, "changelog", "Keep the changelog current", &[], "Add a line per change.\n");
    std::fs::create_dir_all(home.bee_dir()).unwrap();
    std::fs::write(
        home.bee_dir().join("config.toml"),
        format!("[skills]\nroots = [{:?}]\n", shared.display().to_string()),
    )
    .unwrap();
    // A linked skill is not followed.
    std::fs::create_dir_all(checkout_skills.join("linked")).unwrap();
    std::os::unix::fs::symlink(shared.join("changelog/SKILL.md"), checkout_skills.join("linked/SKILL.md")).unwrap();
    // Front matter that is not YAML.
    std::fs::create_dir_all(checkout_skills.join("broken")).unwrap();
    std::fs::write(checkout_skills.join("broken/SKILL.md"), "---\nname: [unclosed\n---\nbody\n").unwrap();

    runtime().block_on(async {
        let client = connect(&home, &root, &[]).await;
        let found: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_skill_search", json!({"query": "deploy staging"})).await,
        ))
        .unwrap();
        assert_eq!(found["roots"], json!(["checkout", "user", "config1"]));
        let names: Vec<&str> =
            found["skills"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["deploy", "review"], "{found}");
        assert_eq!(found["skills"][0]["path"], "checkout:deploy/SKILL.md");
        assert!(found["skills"][0].get("body").is_none(), "search never returns bodies");
        assert_eq!(found["invalid"][0]["path"], "checkout:broken/SKILL.md", "{found}");
        assert_eq!(found["invalid"][1]["path"], "checkout:linked/SKILL.md", "{found}");
        // Asked for by path, an unreadable skill says why.
        let broken = error_of(&call(&client, "bee_skill_get", json!({"path": "checkout:broken/SKILL.md"})).await);
        assert_eq!(broken["errorCode"], "skill_invalid", "{broken}");
        assert!(broken["message"].as_str().unwrap().contains("front matter:"), "{broken}");
        let changelog: Value =
            serde_json::from_str(&text_of(&call(&client, "bee_skill_search", json!({"query": "changelog"})).await))
                .unwrap();
        assert_eq!(changelog["skills"][0]["path"], "config1:changelog/SKILL.md");

        let got: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_skill_get", json!({"path": "user:build/SKILL.md"})).await,
        ))
        .unwrap();
        assert_eq!((got["name"].clone(), got["body"].clone()), (json!("build"), json!("cargo build --release\n")));
        let chain: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_skill_resolve", json!({"path": "checkout:deploy/SKILL.md"})).await,
        ))
        .unwrap();
        let order: Vec<&str> = chain["chain"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(order, ["build", "deploy"], "dependencies first");
        for (path, code) in [
            ("checkout:loop-a/SKILL.md", "skill_cycle"),
            ("checkout:orphan/SKILL.md", "skill_missing"),
            ("checkout:nope/SKILL.md", "skill_not_found"),
        ] {
            let result = call(&client, "bee_skill_resolve", json!({"path": path})).await;
            assert_eq!(error_of(&result)["errorCode"], code, "{path}");
        }
        client.cancel().await.unwrap();
    });

    // No skills directory anywhere: the bridge says so.
    let bare = TestHome::new();
    let bare_root = std::fs::canonicalize(bare.path()).unwrap();
    runtime().block_on(async {
        let client = connect(&bare, &bare_root, &[]).await;
        let result = call(&client, "bee_skill_search", json!({"query": "anything"})).await;
        assert_eq!(error_of(&result)["errorCode"], "skill_bridge_unavailable");
        client.cancel().await.unwrap();
    });
}

/// Context packets: outlines of this repository's own Rust and of small
/// files in the other languages, bodies by symbol and range, hash pins,
/// dependencies first, exact o200k counts, and a budget that makes required
/// content `needs_refinement` (never cut) and optional content omitted.
#[test]
fn context_packets_outline_select_pin_and_keep_to_their_budget() {
    let home = TestHome::new();
    let repository = std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap();
    let root = std::fs::canonicalize(home.path()).unwrap().join("fixtures");
    std::fs::create_dir_all(&root).unwrap();
    let files = [
        ("app.py", "import os\n\ndef main():\n    return 1\n\nclass Shop:\n    pass\n"),
        ("web.ts", "export function render(): string { return ''; }\ninterface Props { a: number }\n"),
        ("main.go", "package main\n\nfunc main() {}\n\ntype Store struct{}\n"),
        ("Program.cs", "namespace App {\n  public class Program {\n  }\n}\n"),
        ("notes.md", "# Notes\n\nKeep them short.\n\n## Later\n\nMore.\n"),
        ("big.txt", &"x".repeat(4000)),
    ];
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    runtime().block_on(async {
        // This repository's own Rust, through the server pinned to it.
        let own = connect(&home, &repository, &[]).await;
        let manifest = json!({"selections": [{"id": "skills", "path": "daemon/src/context/skills.rs", "representation": "outline"}]});
        let answer = call(&own, "bee_context_packet", json!({"manifestJson": manifest.to_string()})).await;
        let printed = cli(&home, &repository, &["context", "packet", "--manifest-json", &manifest.to_string()], None);
        assert_eq!(text_of(&answer), printed, "the tool answers what the CLI prints");
        let packet: Value = serde_json::from_str(&printed).unwrap();
        let symbols: Vec<&str> =
            packet["selections"][0]["outline"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        for name in ["roots", "parse", "all", "search", "get", "resolve"] {
            assert!(symbols.contains(&name), "{name} in {symbols:?}");
        }
        own.cancel().await.unwrap();

        let client = connect(&home, &root, &[]).await;
        let packet = |manifest: Value, budget: Option<u64>| {
            let mut arguments = json!({"manifestJson": manifest.to_string()});
            if let Some(budget) = budget {
                arguments["budgetBytes"] = json!(budget);
            }
            call(&client, "bee_context_packet", arguments)
        };
        let py_sha = {
            let output = std::process::Command::new("sha256sum").arg(root.join("app.py")).output().unwrap();
            String::from_utf8(output.stdout).unwrap()[..64].to_owned()
        };
        let manifest = json!({"selections": [
            {"id": "py-body", "path": "app.py", "representation": "body", "symbol": "main", "hash": py_sha, "dependsOn": ["ts"]},
            {"id": "ts", "path": "web.ts", "representation": "outline", "required": true},
            {"id": "go", "path": "main.go", "representation": "outline"},
            {"id": "cs", "path": "Program.cs", "representation": "outline"},
            {"id": "md", "path": "notes.md", "representation": "outline"},
            {"id": "lines", "path": "notes.md", "representation": "body", "range": "3-3"},
            {"id": "index", "path": "big.txt", "representation": "index"}
        ]});
        let answer: Value = serde_json::from_str(&text_of(&packet(manifest.clone(), None).await)).unwrap();
        assert_eq!(answer["status"], "complete", "{answer}");
        let ids: Vec<&str> = answer["selections"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["ts", "py-body", "go", "cs", "md", "lines", "index"], "dependencies first, then the manifest's order");
        let of = |id: &str| answer["selections"].as_array().unwrap().iter().find(|s| s["id"] == id).unwrap().clone();
        assert_eq!(of("py-body")["body"], "def main():\n    return 1\n");
        assert_eq!(of("py-body")["range"], "3-4");
        assert_eq!(of("ts")["outline"][0]["name"], "render");
        assert_eq!(of("go")["outline"].as_array().unwrap().len(), 2);
        assert_eq!(of("cs")["outline"][0]["name"], "Program");
        assert_eq!(of("md")["outline"][0]["name"], "Notes");
        assert_eq!(of("lines")["body"], "Keep them short.\n");
        assert_eq!((of("index")["bytes"].clone(), of("index").get("body").is_none()), (json!(4000), true));
        // The exact o200k count of what each selection carries.
        let tokenizer = tiktoken_rs::o200k_base().unwrap();
        assert_eq!(of("lines")["tokens"], json!(tokenizer.encode_ordinary("Keep them short.\n").len()));

        // A budget that holds the required outline but not everything else: the rest is omitted, by name.
        let tight: Value = serde_json::from_str(&text_of(&packet(manifest.clone(), Some(1_000)).await)).unwrap();
        assert_eq!(tight["status"], "complete", "{tight}");
        assert!(tight["selections"].as_array().unwrap().iter().any(|s| s["id"] == "ts"), "{tight}");
        assert!(!tight["omitted"].as_array().unwrap().is_empty(), "{tight}");
        assert!(serde_json::to_string(&tight).unwrap().len() <= 1_000, "the whole answer keeps to the budget");
        // Required content that cannot fit: needs_refinement naming it, nothing of it delivered.
        let big = json!({"selections": [{"id": "all-of-it", "path": "big.txt", "representation": "body", "required": true}]});
        let refined: Value = serde_json::from_str(&text_of(&packet(big, Some(512)).await)).unwrap();
        assert_eq!((refined["status"].clone(), refined["didNotFit"][0]["id"].clone()), (json!("needs_refinement"), json!("all-of-it")));
        assert!(!refined.to_string().contains("xxxxxxxx"), "no part of it is delivered");

        for (selection, code) in [
            (json!({"id": "a", "path": "app.py", "representation": "body", "hash": "0".repeat(64)}), "hash_mismatch"),
            (json!({"id": "a", "path": "app.py", "representation": "body", "symbol": "nope"}), "symbol_not_found"),
            (json!({"id": "a", "path": "big.txt", "representation": "outline"}), "outline_unsupported"),
            (json!({"id": "a", "path": "../outside.py", "representation": "index"}), "path_escape"),
            (json!({"id": "a", "path": "app.py", "representation": "body", "range": "9-99"}), "invalid_usage"),
        ] {
            let result = packet(json!({"selections": [selection.clone()]}), None).await;
            assert_eq!(error_of(&result)["errorCode"], code, "{selection}");
        }
        let cycle = json!({"selections": [
            {"id": "a", "path": "app.py", "representation": "index", "dependsOn": ["b"]},
            {"id": "b", "path": "web.ts", "representation": "index", "dependsOn": ["a"]}]});
        assert_eq!(error_of(&packet(cycle, None).await)["errorCode"], "dependency_cycle");
        client.cancel().await.unwrap();
    });
}

/// `beectl context doctor` names every problem of a manifest with its
/// selection before it is used; plain `beectl budget --manifest` says what
/// the selections cost per call and for N calls, in bytes and exact tokens.
#[test]
fn the_context_doctor_names_every_problem_and_plain_budget_counts() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    std::fs::write(root.join("lib.rs"), "pub fn alpha() {}\n\npub fn beta() {}\n").unwrap();
    std::fs::write(root.join("notes.md"), "# Notes\n\nShort.\n").unwrap();
    let broken = json!({"selections": [
        {"id": "pinned", "path": "lib.rs", "representation": "outline", "hash": "0".repeat(64)},
        {"id": "outside", "path": "../elsewhere.rs", "representation": "index"},
        {"id": "missing", "path": "gone.rs", "representation": "index"},
        {"id": "symbol", "path": "lib.rs", "representation": "body", "symbol": "gamma"},
        {"id": "range", "path": "notes.md", "representation": "body", "range": "2-40"},
        {"id": "loop-a", "path": "lib.rs", "representation": "index", "dependsOn": ["loop-b"]},
        {"id": "loop-b", "path": "lib.rs", "representation": "index", "dependsOn": ["loop-a"]}
    ]});
    // beectl in the root, with a manifest file.
    let run = |args: &[&str], manifest: &Path| {
        home.command(bin("beectl")).current_dir(&root).args(args).arg(manifest).output().unwrap()
    };
    let manifest = home.file("broken.json", broken.to_string().as_bytes());
    let output = run(&["context", "doctor", "--manifest"], &manifest);
    assert_eq!(output.status.code(), Some(5));
    let report = parse_json_line(&output.stdout);
    assert_eq!(report["status"], "problems");
    let found: Vec<(String, String)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap().to_owned(), p["code"].as_str().unwrap().to_owned()))
        .collect();
    for expected in [
        ("pinned", "hash_mismatch"),
        ("outside", "path_escape"),
        ("missing", "missing"),
        ("symbol", "symbol_not_found"),
        ("range", "invalid_usage"),
        ("loop-a", "dependency_cycle"),
        ("loop-b", "dependency_cycle"),
    ] {
        assert!(found.contains(&(expected.0.to_owned(), expected.1.to_owned())), "{expected:?} in {found:?}");
    }
    let good = json!({"selections": [
        {"id": "outline", "path": "lib.rs", "representation": "outline"},
        {"id": "notes", "path": "notes.md", "representation": "body", "dependsOn": ["outline"]}
    ]});
    let manifest = home.file("good.json", good.to_string().as_bytes());
    let doctor = run(&["context", "doctor", "--manifest"], &manifest);
    assert_eq!((doctor.status.code(), parse_json_line(&doctor.stdout)["status"].clone()), (Some(0), json!("ok")));

    let budget = run(&["budget", "--calls", "10", "--manifest"], &manifest);
    assert_eq!(budget.status.code(), Some(0), "{}", String::from_utf8_lossy(&budget.stdout));
    let cost = parse_json_line(&budget.stdout);
    let tokenizer = tiktoken_rs::o200k_base().unwrap();
    let notes_tokens = tokenizer.encode_ordinary("# Notes\n\nShort.\n").len() as u64;
    assert_eq!(cost["selections"][1]["tokens"], json!(notes_tokens), "exact o200k tokens of the body: {cost}");
    let per_call = cost["perCall"]["tokens"].as_u64().unwrap();
    assert_eq!(
        per_call,
        cost["selections"].as_array().unwrap().iter().map(|s| s["tokens"].as_u64().unwrap()).sum::<u64>()
    );
    assert_eq!(cost["forCalls"]["tokens"], json!(per_call * 10));
    // The packet of the same manifest carries exactly those selections and counts.
    let packet = run(&["context", "packet", "--manifest"], &manifest);
    let packet = parse_json_line(&packet.stdout);
    for (row, selection) in cost["selections"].as_array().unwrap().iter().zip(packet["selections"].as_array().unwrap())
    {
        assert_eq!((row["id"].clone(), row["tokens"].clone()), (selection["id"].clone(), selection["tokens"].clone()));
    }
}

/// Plans: a plan with dependencies driven through claim and report by the
/// CLI while `bee_plan_next` is asked through the MCP client; the binding
/// is checked on every call (removed, or the checkout moved →
/// `binding_unavailable`); owners and reports are labelled as declarations.
#[test]
fn plans_are_driven_by_the_cli_and_read_through_mcp_on_a_live_binding() {
    let home = TestHome::new();
    let checkout = std::fs::canonicalize(home.path()).unwrap().join("app");
    std::fs::create_dir_all(&checkout).unwrap();
    let plan = json!({"planId": "release-1", "space": "team", "title": "Ship 1.0", "steps": [
        {"id": "build", "title": "Build", "owner": "ana"},
        {"id": "test", "title": "Test", "dependsOn": ["build"], "owner": "bo"},
        {"id": "docs", "title": "Docs", "owner": "cy"},
        {"id": "ship", "title": "Ship", "dependsOn": ["test", "docs"], "owner": "ana"}
    ]});
    let file = home.file("plan.json", plan.to_string().as_bytes());
    let beectl = |args: &[&str]| -> (Option<i32>, Value) {
        let output = home.command(bin("beectl")).current_dir(&checkout).args(args).output().unwrap();
        (output.status.code(), parse_json_line(&output.stdout))
    };
    assert_eq!(beectl(&["plan", "create", file.to_str().unwrap()]).0, Some(0));
    assert_eq!(beectl(&["plan", "create", file.to_str().unwrap()]).1["errorCode"], "plan_exists");
    runtime().block_on(async {
        let client = connect(&home, &checkout, &[]).await;
        let next = |limit: u32| call(&client, "bee_plan_next", json!({"planId": "release-1", "limit": limit}));
        assert_eq!(error_of(&next(1).await)["errorCode"], "binding_unavailable", "not bound yet");
        assert_eq!(beectl(&["plan", "bind", "--space", "team"]).0, Some(0));
        let ready = |answer: &CallToolResult| -> (Vec<String>, Value, Value) {
            let answer: Value = serde_json::from_str(&text_of(answer)).unwrap();
            let ids =
                answer["ready"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect();
            (ids, answer["hasMore"].clone(), answer["skipped"].clone())
        };
        let (ids, more, skipped) = ready(&next(1).await);
        assert_eq!((ids, more), (vec!["build".to_owned()], json!(true)), "build and docs are ready; one asked for");
        assert_eq!(skipped, json!({"waiting": 2, "claimed": 0, "blocked": 0, "reportedComplete": 0}));
        let (ids, more, _) = ready(&next(5).await);
        assert_eq!((ids, more), (vec!["build".to_owned(), "docs".to_owned()], json!(false)));

        // Claims and reports by the CLI; the MCP side sees each at once, and never claims.
        assert_eq!(beectl(&["plan", "claim", "release-1", "test", "--owner", "bo"]).1["errorCode"], "step_not_ready");
        assert_eq!(beectl(&["plan", "claim", "release-1", "build", "--owner", "ana"]).0, Some(0));
        assert_eq!(beectl(&["plan", "claim", "release-1", "build", "--owner", "eve"]).1["errorCode"], "step_not_open");
        let (ids, _, skipped) = ready(&next(5).await);
        assert_eq!((ids, skipped["claimed"].clone()), (vec!["docs".to_owned()], json!(1)));
        assert_eq!(
            beectl(&["plan", "report", "release-1", "build", "--owner", "eve"]).1["errorCode"],
            "step_not_claimed"
        );
        assert_eq!(beectl(&["plan", "report", "release-1", "build", "--owner", "ana"]).0, Some(0));
        let (ids, _, _) = ready(&next(5).await);
        assert_eq!(ids, ["test", "docs"], "test's dependency is reported complete");
        for (step, owner) in [("test", "bo"), ("docs", "cy")] {
            assert_eq!(beectl(&["plan", "claim", "release-1", step, "--owner", owner]).0, Some(0));
            assert_eq!(beectl(&["plan", "report", "release-1", step, "--owner", owner]).0, Some(0));
        }
        let (ids, _, _) = ready(&next(5).await);
        assert_eq!(ids, ["ship"]);
        let shown: Value =
            serde_json::from_str(&text_of(&call(&client, "bee_plan_show", json!({"planId": "release-1"})).await))
                .unwrap();
        let states: Vec<&str> =
            shown["plan"]["steps"].as_array().unwrap().iter().map(|s| s["state"].as_str().unwrap()).collect();
        assert_eq!(states, ["reported_complete", "reported_complete", "reported_complete", "open"]);
        assert_eq!(shown["labels"]["reported_complete"], "the owner's report, not independent QA");
        assert_eq!(shown["plan"]["steps"][0]["by"], "ana");

        // The binding removed: the next call says so.
        assert_eq!(beectl(&["plan", "unbind"]).0, Some(0));
        assert_eq!(error_of(&next(1).await)["errorCode"], "binding_unavailable");
        assert_eq!(beectl(&["plan", "bind", "--space", "team"]).0, Some(0));
        assert!(!is_error(&next(1).await));
        // The checkout moved away (another directory now at its path): not the bound one.
        std::fs::rename(&checkout, home.path().join("app-moved")).unwrap();
        std::fs::create_dir_all(&checkout).unwrap();
        assert_eq!(error_of(&next(1).await)["errorCode"], "binding_unavailable");
        client.cancel().await.unwrap();
    });
}

/// Every document of the representation corpus through `beectl repr
/// encode` and `bee_representation_encode` (the same bytes), its token
/// counts equal to the tokenizer's own and below compact JSON's, decoded
/// back through MCP and the CLI to the same values; number spellings kept;
/// every documented error.
#[test]
fn representation_round_trips_through_the_cli_and_mcp() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    let corpus = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/repr-corpus");
    let mut documents: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
        .collect();
    documents.sort();
    assert!(documents.len() >= 20);
    let tokenizer = tiktoken_rs::o200k_base().unwrap();
    let most = "262144";
    runtime().block_on(async {
        let client = connect(&home, &root, &[]).await;
        for path in &documents {
            let text = std::fs::read_to_string(path).unwrap();
            let printed = cli(&home, &root, &["repr", "encode", path.to_str().unwrap(), "--budget-bytes", most], None);
            let mcp = call(&client, "bee_representation_encode", json!({"json": text, "budgetBytes": 262_144})).await;
            assert_eq!(text_of(&mcp), printed, "{}: the tool answers what the CLI prints", path.display());
            let answer: Value = serde_json::from_str(&printed).unwrap();
            let packet = answer["packet"].as_str().unwrap();
            let values: Vec<Value> =
                serde_json::Deserializer::from_str(&text).into_iter::<Value>().map(Result::unwrap).collect();
            // Compact JSON with every number as the document spells it: the
            // document without the white space between its tokens.
            let compact = text.lines().filter(|l| !l.trim().is_empty()).map(minified).collect::<Vec<_>>();
            let compact = if path.extension().unwrap() == "jsonl" { compact.join("\n") } else { minified(&text) };
            assert_eq!(answer["packetTokens"], json!(tokenizer.encode_ordinary(packet).len()));
            assert_eq!(answer["jsonTokens"], json!(tokenizer.encode_ordinary(&compact).len()));
            assert_eq!((answer["packetBytes"].clone(), answer["jsonBytes"].clone()), (json!(packet.len()), json!(compact.len())));
            assert!(answer["packetTokens"].as_u64() < answer["jsonTokens"].as_u64(), "{}: {answer}", path.display());
            let decoded = call(&client, "bee_representation_decode", json!({"packet": packet, "budgetBytes": 262_144})).await;
            let decoded_text = text_of(&decoded);
            assert_eq!(cli(&home, &root, &["repr", "decode", "--budget-bytes", most], Some(packet)), decoded_text);
            let decoded: Value = serde_json::from_str(&decoded_text).unwrap();
            assert_eq!(decoded["values"], Value::Array(values), "{}", path.display());
            assert_eq!(decoded["sequence"], json!(path.extension().unwrap() == "jsonl"));
        }

        // Every number keeps its spelling, whatever form carries it.
        let spelled = r#"{"a":1.0,"b":1e3,"c":123456789012345678901234567890,"rows":[{"x":-0,"y":"1.0","t":7},{"x":2.50,"y":"z","t":8},{"x":1E+2,"y":"","t":9}]}"#;
        let encoded: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_representation_encode", json!({"json": spelled})).await,
        ))
        .unwrap();
        let decoded = text_of(&call(&client, "bee_representation_decode", json!({"packet": encoded["packet"]})).await);
        for spelling in ["1.0", "1e3", "123456789012345678901234567890", "-0", "2.50", "1E+2", "\"1.0\""] {
            assert!(decoded.contains(spelling), "{spelling} in {decoded}");
        }

        // Small or irregular values, where a packet would cost more tokens
        // than compact JSON: the answer is the compact JSON, marked so, and
        // decodes to the same values.
        for small in [
            "\"a short string\"",
            "{\"a\":1}\n{\"a\":2}\n[3]",
            "[1,\"two\",3.0,null,true,{\"x\":[]}]",
            "[{\"a\":1},{\"b\":{\"c\":2}},{\"d\":[1,2]}]",
        ] {
            let answer: Value =
                serde_json::from_str(&text_of(&call(&client, "bee_representation_encode", json!({"json": small})).await))
                    .unwrap();
            assert!(answer["packetTokens"].as_u64() <= answer["jsonTokens"].as_u64(), "{small}: {answer}");
            let packet = answer["packet"].as_str().unwrap();
            assert_eq!(
                (answer["encoding"].clone(), answer["fallback"].clone(), answer["packetTokens"].clone()),
                (json!("json"), json!(true), answer["jsonTokens"].clone()),
                "{small}: {answer}"
            );
            assert!(!packet.starts_with("bee-json-v1"), "{answer}");
            let decoded: Value = serde_json::from_str(&text_of(
                &call(&client, "bee_representation_decode", json!({"packet": packet})).await,
            ))
            .unwrap();
            let values: Vec<Value> =
                serde_json::Deserializer::from_str(small).into_iter::<Value>().map(Result::unwrap).collect();
            assert_eq!(decoded["values"], Value::Array(values), "{small}");
        }

        for (tool, arguments, code) in [
            ("bee_representation_encode", json!({"json": "{\"a\":"}), "invalid_json"),
            ("bee_representation_encode", json!({"json": "{\"a\":1,\"a\":2}"}), "invalid_json"),
            ("bee_representation_encode", json!({"json": "[".repeat(200) + &"]".repeat(200)}), "too_deep"),
            ("bee_representation_encode", json!({"json": "1", "encoding": "toon"}), "unsupported_encoding"),
            ("bee_representation_encode", json!({"json": "1", "budgetBytes": 100}), "invalid_usage"),
            ("bee_representation_encode", json!({"json": format!("[{}]", "1,".repeat(150_000) + "1")}), "input_too_large"),
            ("bee_representation_encode", json!({"json": format!("[{}]", "\"word\",".repeat(20_000) + "1"), "budgetBytes": 512}), "budget_exceeded"),
            ("bee_representation_decode", json!({"packet": "bee-json-v1\na[3]:1,2"}), "invalid_packet"),
            ("bee_representation_decode", json!({"packet": "not a packet"}), "invalid_packet"),
            ("bee_representation_decode", json!({"packet": format!("bee-json-v1\n[20000]:{}", "xxxxxxxx,".repeat(19_999) + "x"), "budgetBytes": 512}), "budget_exceeded"),
        ] {
            let result = call(&client, tool, arguments).await;
            assert_eq!(error_of(&result)["errorCode"], code, "{tool}");
        }
        client.cancel().await.unwrap();
    });

    // The CLI refuses what is not text, and what is too large, with the same codes.
    let binary = home.file("bad.json", &[b'"', 0xff, 0xfe, b'"']);
    let output = home.beectl(&["repr", "encode", binary.to_str().unwrap()]);
    assert_eq!(
        (output.status.code(), parse_json_line(&output.stdout)["errorCode"].clone()),
        (Some(5), json!("not_utf8"))
    );
    let large = home.file("large.json", format!("[{}1]", "1,".repeat(140_000)).as_bytes());
    let output = home.beectl(&["repr", "encode", large.to_str().unwrap()]);
    assert_eq!(
        (output.status.code(), parse_json_line(&output.stdout)["errorCode"].clone()),
        (Some(5), json!("input_too_large"))
    );
}

/// Compression is off until `beectl compress enable`; then the kept share
/// comes back with its measured tokens, the original stored as a 0600
/// artifact and recovered whole after its sha256 verifies; a changed
/// original is never served; the bounds are errors.
#[test]
fn prose_compression_is_off_until_enabled_and_its_original_recovers_exactly() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    let prose = "The ledger counts each provider response once, by its provider id. \
                 It is the same response whoever brought it, so a copy in another session's file is not counted again. \
                 Well, you know, it is basically just a thing that is really quite important. \
                 Time comes from producers and tokens come from the provider's own logs.\n\n\
                 A window that was not observed is unknown, never zero.\n";
    let tokenizer = tiktoken_rs::o200k_base().unwrap();
    let all = tokenizer.encode_ordinary(prose).len();
    let status = parse_json_line(&home.beectl(&["compress", "status"]).stdout);
    assert_eq!(status["enabled"], json!(false));
    runtime().block_on(async {
        let client = connect(&home, &root, &[]).await;
        let off: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_context_compress", json!({"text": prose, "contentKind": "prose", "ratePercent": 50}))
                .await,
        ))
        .unwrap();
        assert_eq!((off["compressed"].clone(), off["text"].clone()), (json!(false), json!(prose)), "{off}");
        assert!(!home.bee_dir().join("artifacts").exists(), "nothing stored while off");

        // A comment and another table in config.toml survive enabling; a
        // config longer than 4 KiB is read whole (it was once cut there, and
        // the setting at its end was lost).
        std::fs::create_dir_all(home.bee_dir()).unwrap();
        let mine = format!("# mine\n{}[skills]\nroots = []\n", "# a long comment line of the user's own\n".repeat(150));
        std::fs::write(home.bee_dir().join("config.toml"), &mine).unwrap();
        assert_eq!(home.beectl(&["compress", "enable"]).status.code(), Some(0));
        let config = std::fs::read_to_string(home.bee_dir().join("config.toml")).unwrap();
        assert!(config.len() > 4096 && config.starts_with(&mine) && config.contains("[compression]\nenabled = true"));
        let status = parse_json_line(&home.beectl(&["compress", "status"]).stdout);
        assert_eq!(status["enabled"], json!(true), "{status}");

        let on: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_context_compress", json!({"text": prose, "contentKind": "prose", "ratePercent": 50}))
                .await,
        ))
        .unwrap();
        let text = on["text"].as_str().unwrap();
        assert_eq!((on["compressed"].clone(), on["semanticRisk"].clone()), (json!(true), json!(true)), "{on}");
        assert_eq!(on["originalTokens"], json!(all));
        assert_eq!(on["compressedTokens"], json!(tokenizer.encode_ordinary(text).len()));
        assert!(on["compressedTokens"].as_u64().unwrap() as usize <= all.div_ceil(2) + 4, "{on}");
        let mut rest = prose;
        for word in text.split_whitespace() {
            let at = rest.find(word).unwrap_or_else(|| panic!("{word}: kept words are the original's, in order"));
            rest = &rest[at + word.len()..];
        }
        let id = on["id"].as_str().unwrap().to_owned();
        let stored = home.bee_dir().join("artifacts").join(format!("{id}.bin"));
        assert_eq!(std::fs::metadata(&stored).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&stored).unwrap(), prose.as_bytes());

        let recovered: Value =
            serde_json::from_str(&text_of(&call(&client, "bee_compression_recover", json!({"id": id})).await)).unwrap();
        assert_eq!((recovered["text"].clone(), recovered["verified"].clone()), (json!(prose), json!(true)));
        assert_eq!(recovered["sha256"], on["originalSha256"]);
        let tight = call(&client, "bee_compression_recover", json!({"id": id, "budgetBytes": 512})).await;
        assert_eq!(error_of(&tight)["errorCode"], "budget_exceeded", "refused, never cut");

        for (arguments, code) in [
            (json!({"text": "fn main() {}", "contentKind": "code", "ratePercent": 50}), "unsupported_content_kind"),
            (json!({"text": prose, "contentKind": "prose", "ratePercent": 5}), "invalid_usage"),
            (json!({"text": prose, "contentKind": "prose", "ratePercent": 95}), "invalid_usage"),
            (json!({"text": "word ".repeat(14_000), "contentKind": "prose", "ratePercent": 50}), "input_too_large"),
            (json!({"text": "q1x9 ".repeat(9_000), "contentKind": "prose", "ratePercent": 50}), "input_too_large"),
        ] {
            let result = call(&client, "bee_context_compress", arguments).await;
            assert_eq!(error_of(&result)["errorCode"], code);
        }

        // Only a compression's original is recovered; a changed one never is.
        let other = home.file("other.txt", b"just a file\n");
        let added = parse_json_line(&home.beectl(&["artifact", "add", other.to_str().unwrap()]).stdout);
        let plain = call(&client, "bee_compression_recover", json!({"id": added["artifact"]["id"]})).await;
        assert_eq!(error_of(&plain)["errorCode"], "not_a_compression_original");
        std::fs::write(&stored, prose.replace("ledger", "LEDGER")).unwrap();
        let corrupt = call(&client, "bee_compression_recover", json!({"id": id})).await;
        assert_eq!(error_of(&corrupt)["errorCode"], "artifact_corrupt");

        // The prose corpus at 50 %: within ±5 points, and each original back byte for byte.
        let corpus = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/prose-corpus");
        let mut documents: Vec<_> = std::fs::read_dir(&corpus).unwrap().map(|e| e.unwrap().path()).collect();
        documents.retain(|p| p.file_name().unwrap() != "README.md");
        documents.sort();
        assert_eq!(documents.len(), 6);
        for path in documents {
            let text = std::fs::read_to_string(&path).unwrap();
            let answer: Value = serde_json::from_str(&text_of(
                &call(
                    &client,
                    "bee_context_compress",
                    json!({"text": text, "contentKind": "prose", "ratePercent": 50}),
                )
                .await,
            ))
            .unwrap();
            let kept = tokenizer.encode_ordinary(answer["text"].as_str().unwrap()).len() as f64;
            let achieved = 100.0 * kept / tokenizer.encode_ordinary(&text).len() as f64;
            assert!((45.0..=55.0).contains(&achieved), "{}: {achieved:.1} % kept", path.display());
            assert!((answer["achievedRatePercent"].as_f64().unwrap() - achieved).abs() < 0.06, "{answer}");
            let recovered: Value = serde_json::from_str(&text_of(
                &call(&client, "bee_compression_recover", json!({"id": answer["id"], "budgetBytes": 262_144})).await,
            ))
            .unwrap();
            assert_eq!(recovered["text"].as_str().unwrap().as_bytes(), text.as_bytes(), "{}", path.display());
        }

        assert_eq!(home.beectl(&["compress", "disable"]).status.code(), Some(0));
        let again: Value = serde_json::from_str(&text_of(
            &call(&client, "bee_context_compress", json!({"text": prose, "contentKind": "prose", "ratePercent": 50}))
                .await,
        ))
        .unwrap();
        assert_eq!(again["compressed"], json!(false));
        client.cancel().await.unwrap();
    });
}

/// `text` without white space outside its strings.
fn minified(text: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            (in_string, escaped) = match (escaped, c) {
                (true, _) => (true, false),
                (false, '\\') => (true, true),
                (false, '"') => (false, false),
                _ => (true, false),
            };
        } else if !c.is_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// `beectl design mcp --stdio --root ROOT`, as an MCP client starts it.
async fn connect_design(home: &TestHome, root: &Path) -> Client {
    let mut command = home.command(bin("beectl"));
    command.args(["design", "mcp", "--stdio", "--root", root.to_str().unwrap()]).stderr(Stdio::null());
    ().serve(TokioChildProcess::new(tokio::process::Command::from(command)).unwrap()).await.unwrap()
}

/// A design tool's answer: the envelope checked, its `data` (or `error`).
async fn design_call(client: &Client, name: &'static str, arguments: Value) -> (bool, Value) {
    let result = call(client, name, arguments).await;
    let body: Value = serde_json::from_str(&text_of(&result)).unwrap();
    assert_eq!(
        (body["schemaVersion"].clone(), body["trusted"].clone(), body["acceptance"].clone()),
        (json!(1), json!(false), json!(false)),
        "{body}"
    );
    assert_eq!(body["ok"], json!(!is_error(&result)), "{body}");
    if is_error(&result) { (false, body["error"].clone()) } else { (true, body["data"].clone()) }
}

/// Every file under `dir` with its bytes: what the server must not change.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path)
            } else {
                found.push((path.display().to_string(), std::fs::read(&path).unwrap()))
            }
        }
    }
    found.sort();
    found
}

/// Design bundles end to end: import (derived and declared manifests),
/// map, real headless Chromium captures, then the four read-only tools —
/// the list without markup, a slice that keeps to its budget and says when
/// it is incomplete, verify per check (a changed file, a cycle, a lost
/// symbol), and a visual report from stored evidence (consistent with the
/// reference, stale after a source change, different after a changed
/// rendering, a tampered capture). The server writes nothing.
#[test]
fn the_design_server_reads_bundles_and_reports_from_stored_evidence() {
    assert!(
        std::path::Path::new("/usr/bin/chromium").exists(),
        "this test needs Debian's chromium (.ci/run installs it)"
    );
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap().join("checkout");
    let export = root.join("export");
    std::fs::create_dir_all(export.join("components")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(export.join("home.html"), "<!doctype html><html><head><link rel=\"stylesheet\" href=\"style.css\"></head><body><div class=\"box\">Hi</div><img src=\"logo.svg\"></body></html>\n").unwrap();
    std::fs::write(
        export.join("style.css"),
        ".box{width:120px;height:60px;background:#2a6;color:#fff}body{margin:0;background:#fff}\n",
    )
    .unwrap();
    std::fs::write(export.join("logo.svg"), "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"/>\n")
        .unwrap();
    std::fs::write(export.join("components/card.html"), "<div class=\"card\"></div>\n").unwrap();
    std::fs::write(root.join("src/home.rs"), "pub fn render_home() -> String {\n    String::from(\"Hi\")\n}\n")
        .unwrap();
    let design = |args: &[&str]| -> (i32, Value) {
        let mut all = vec!["design"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--root", root.to_str().unwrap()]);
        let output = home.beectl(&all);
        (output.status.code().unwrap_or(-1), parse_json_line(&output.stdout))
    };

    let (code, imported) = design(&["import", export.to_str().unwrap(), "--bundle", "app"]);
    assert_eq!((code, imported["entries"].clone()), (0, json!(4)), "{imported}");
    assert_eq!(design(&["map", "home", "--source", "src/home.rs#render_home"]).0, 0);
    let (code, lost) = design(&["map", "home", "--source", "src/home.rs#nothing"]);
    assert_eq!((code, lost["errorCode"].clone()), (5, json!("symbol_not_found")));
    let (code, outside) = design(&["map", "home", "--source", "/etc/hostname"]);
    assert_eq!((code, outside["errorCode"].clone()), (5, json!("path_outside_root")));
    // The reference rendering: Chromium's own screenshot of the export,
    // shipped with it as home.png; a re-import keeps mappings and captures.
    let (code, captured) = design(&["capture", "home", "--file", "export/home.html", "--viewport", "320x200"]);
    assert_eq!(code, 0, "{captured}");
    let bundle = root.join(".bee/design/app");
    let png = std::fs::read(bundle.join(captured["capture"]["file"].as_str().unwrap())).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    std::fs::write(export.join("home.png"), &png).unwrap();
    assert_eq!(design(&["import", "export", "--bundle", "app"]).0, 0);

    // A declared manifest with a dependency cycle, in a second bundle.
    let cyclic = root.join("cyclic");
    std::fs::create_dir_all(&cyclic).unwrap();
    std::fs::write(cyclic.join("a.css"), "a{}\n").unwrap();
    std::fs::write(cyclic.join("b.css"), "b{}\n").unwrap();
    std::fs::write(
        cyclic.join("bee-design.json"),
        json!({"entries": [
        {"id": "a", "kind": "style", "file": "a.css", "dependsOn": ["b"], "status": "ready"},
        {"id": "b", "kind": "style", "file": "b.css", "dependsOn": ["a"]}]})
        .to_string(),
    )
    .unwrap();
    assert_eq!(design(&["import", "cyclic", "--bundle", "cyc"]).0, 0);

    let before = snapshot(&root.join(".bee"));
    runtime().block_on(async {
        let client = connect_design(&home, &root).await;
        let mut names: Vec<String> =
            client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
        names.sort();
        assert_eq!(names, ["bee_design_list", "bee_design_slice", "bee_design_verify", "bee_visual_report"]);

        let (ok, listed) = design_call(&client, "bee_design_list", json!({})).await;
        assert!(ok);
        assert!(!listed.to_string().contains("<div"), "never raw HTML: {listed}");
        let app = listed["bundles"].as_array().unwrap().iter().find(|b| b["bundle"] == "app").unwrap().clone();
        assert_eq!(app["path"], ".bee/design/app");
        let home_entry = app["entries"].as_array().unwrap().iter().find(|e| e["id"] == "home").unwrap().clone();
        assert_eq!(
            (home_entry["status"].clone(), home_entry["dependsOn"].clone(), home_entry["reference"].clone()),
            (json!("draft"), json!(["style", "logo.svg"]), json!("home.png"))
        );

        // A slice: dependencies first, then the entry, its mapped symbol.
        let (_, whole) =
            design_call(&client, "bee_design_slice", json!({"id": "home", "bundle": "app", "budgetBytes": 65_536}))
                .await;
        assert_eq!(whole["complete"], json!(true), "{whole}");
        let ids: Vec<Value> = whole["parts"].as_array().unwrap().iter().map(|p| p["id"].clone()).collect();
        assert_eq!(ids, [json!("style"), json!("logo.svg"), json!("home"), Value::Null]);
        assert!(whole["parts"][0]["text"].as_str().unwrap().contains(".box{"));
        assert_eq!(whole["parts"][1]["binary"], json!(true));
        assert_eq!(whole["parts"][3]["text"], "pub fn render_home() -> String {\n    String::from(\"Hi\")\n}");
        let (_, tight) =
            design_call(&client, "bee_design_slice", json!({"id": "home", "bundle": "app", "budgetBytes": 512})).await;
        assert_eq!(tight["complete"], json!(false), "{tight}");
        assert!(!tight["omitted"].as_array().unwrap().is_empty());
        assert!(tight.to_string().len() <= 512 + 120, "{} bytes", tight.to_string().len());
        let (ok, wrong) =
            design_call(&client, "bee_design_slice", json!({"id": "home", "bundle": "app", "budgetBytes": 100})).await;
        assert_eq!((ok, wrong["errorCode"].clone()), (false, json!("invalid_usage")));
        let (ok, several) = design_call(&client, "bee_design_slice", json!({"id": "home"})).await;
        assert_eq!((ok, several["errorCode"].clone()), (false, json!("invalid_usage")), "two bundles: name one");

        let (_, verified) = design_call(&client, "bee_design_verify", json!({"bundle": "app"})).await;
        assert_eq!(verified["failed"], json!(0), "{verified}");
        assert!(
            verified["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["check"] == "mapping_symbol" && c["ok"] == json!(true))
        );
        let (_, cyc) = design_call(&client, "bee_design_verify", json!({"bundle": "cyc"})).await;
        let acyclic: Vec<&Value> =
            cyc["checks"].as_array().unwrap().iter().filter(|c| c["check"] == "dependency_acyclic").collect();
        assert!(acyclic.len() == 2 && acyclic.iter().all(|c| c["ok"] == json!(false)), "{cyc}");
        let (_, cyc_slice) = design_call(&client, "bee_design_slice", json!({"id": "a", "bundle": "cyc"})).await;
        assert_eq!(cyc_slice["parts"].as_array().unwrap().len(), 2, "a cycle ends where it closes");

        let (_, report) = design_call(&client, "bee_visual_report", json!({"id": "home", "bundle": "app"})).await;
        assert_eq!(report["decision"], "consistent_with_reference", "{report}");
        let difference =
            report["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "pixel_difference").unwrap().clone();
        assert_eq!(
            (difference["differingPixels"].clone(), difference["totalPixels"].clone()),
            (json!(0), json!(320 * 200))
        );
        let (_, none) =
            design_call(&client, "bee_visual_report", json!({"id": "components/card", "bundle": "app"})).await;
        assert_eq!(none["decision"], "insufficient_evidence");
        assert_eq!(none["findings"][0]["kind"], "missing_capture");
        client.cancel().await.unwrap();
    });
    assert_eq!(snapshot(&root.join(".bee")), before, "the design server wrote nothing");

    // The source changes: the capture is stale. A new capture of another
    // rendering differs from the reference, pixel by pixel.
    std::fs::write(root.join("src/home.rs"), "pub fn render_home() -> String {\n    String::from(\"Hello\")\n}\n")
        .unwrap();
    runtime().block_on(async {
        let client = connect_design(&home, &root).await;
        let (_, stale) = design_call(&client, "bee_visual_report", json!({"id": "home", "bundle": "app"})).await;
        assert_eq!(stale["decision"], "insufficient_evidence", "{stale}");
        assert!(stale["findings"].as_array().unwrap().iter().any(|f| f["kind"] == "stale_capture"));
        client.cancel().await.unwrap();
    });
    std::fs::write(root.join("other.html"), "<!doctype html><html><body style=\"margin:0;background:#fff\"><div style=\"width:120px;height:60px;background:#a26\">Hi</div></body></html>\n").unwrap();
    assert_eq!(design(&["capture", "home", "--bundle", "app", "--file", "other.html", "--viewport", "320x200"]).0, 0);
    runtime().block_on(async {
        let client = connect_design(&home, &root).await;
        let (_, differs) = design_call(&client, "bee_visual_report", json!({"id": "home", "bundle": "app"})).await;
        assert_eq!(differs["decision"], "differs", "{differs}");
        let difference =
            differs["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "pixel_difference").unwrap().clone();
        assert!(difference["differingPixels"].as_u64().unwrap() > 1000, "{difference}");
        // A capture changed behind Bee's back, and a design file.
        let latest = root.join(".bee/design/app").join(differs["capture"]["file"].as_str().unwrap());
        std::fs::write(&latest, b"not a png").unwrap();
        std::fs::write(root.join(".bee/design/app/style.css"), "changed{}\n").unwrap();
        let (_, tampered) = design_call(&client, "bee_visual_report", json!({"id": "home", "bundle": "app"})).await;
        assert_eq!(tampered["decision"], "insufficient_evidence");
        assert!(
            tampered["findings"].as_array().unwrap().iter().any(|f| f["kind"] == "mismatched_capture"),
            "{tampered}"
        );
        let (_, verified) = design_call(&client, "bee_design_verify", json!({"bundle": "app", "id": "home"})).await;
        let hash = verified["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["entry"] == "style" && c["check"] == "hash")
            .unwrap()
            .clone();
        assert_eq!(hash["ok"], json!(false), "{verified}");
        client.cancel().await.unwrap();
    });
    // A page that never answers: the capture is stopped at its limit.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", silent.local_addr().unwrap());
    let mut command = home.command(bin("beectl"));
    command.env("BEE_CAPTURE_TIMEOUT_MS", "1500").args(["design", "capture", "home", "--bundle", "app", "--url", &url]);
    let output = command.arg("--root").arg(&root).output().unwrap();
    assert_eq!(
        (output.status.code(), parse_json_line(&output.stdout)["errorCode"].clone()),
        (Some(5), json!("capture_failed"))
    );
    drop(silent);
    let outside = home.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let (code, refused) = design(&["import", outside.to_str().unwrap(), "--bundle", "x"]);
    assert_eq!((code, refused["errorCode"].clone()), (5, json!("path_outside_root")));
    // A re-import mirrors the export: a file it no longer has goes; the captures stay.
    std::fs::remove_file(export.join("components/card.html")).unwrap();
    assert_eq!(design(&["import", "export", "--bundle", "app"]).0, 0);
    assert!(!root.join(".bee/design/app/components/card.html").exists());
    assert!(std::fs::read_dir(root.join(".bee/design/app/captures")).unwrap().count() >= 2);
    std::fs::create_dir_all(export.join("captures")).unwrap();
    std::fs::write(export.join("captures/x.png"), b"x").unwrap();
    let (code, taken) = design(&["import", "export", "--bundle", "app"]);
    assert_eq!((code, taken["errorCode"].clone()), (4, json!("invalid_usage")));
    let usage = home.beectl(&["design", "mcp", "--root", root.to_str().unwrap()]);
    assert_eq!(usage.status.code(), Some(4), "--stdio is the one transport and is asked for");
}

/// A checkout whose committed design manifest is hostile: entry files and
/// mapped sources that climb out of the root (`..`), are absolute, pass
/// through a symlinked directory or are a symlink in the bundle, and ones
/// that would never end (`/dev/zero`, a FIFO). Through a real MCP client,
/// every tool answers promptly, names the path rule a path broke, and
/// never returns the content or a hash of anything outside the root —
/// not even where the manifest's own sha256 matches the outside file.
#[test]
fn a_hostile_committed_design_manifest_reads_nothing_outside_the_root() {
    let home = TestHome::new();
    let base = std::fs::canonicalize(home.path()).unwrap();
    let root = base.join("checkout");
    let outside = base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let secret = "TOP SECRET OUTSIDE\n";
    std::fs::write(outside.join("secret.txt"), secret).unwrap();
    let secret_sha = {
        let output = std::process::Command::new("sha256sum").arg(outside.join("secret.txt")).output().unwrap();
        String::from_utf8(output.stdout).unwrap()[..64].to_owned()
    };
    let bundle = root.join(".bee/design/evil");
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/ok.rs"), "pub fn ok() {}\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), bundle.join("linked.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("via-link")).unwrap();
    for fifo in [bundle.join("fifo.html"), root.join("src/fifo.rs")] {
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    }
    let absolute = outside.join("secret.txt").display().to_string();
    let entry = |id: &str, file: &str, sources: Value| json!({"id": id, "kind": "screen", "file": file, "sha256": secret_sha, "status": "ready", "sources": sources});
    let manifest = json!({
        "schemaVersion": 1, "bundle": "evil", "importedAtUtc": "2026-12-01T00:00:00Z",
        "entries": [
            entry("climb", "../../../../outside/secret.txt", json!([{"path": "../outside/secret.txt"}])),
            entry("absolute", &absolute, json!([{"path": absolute}])),
            entry("linked", "linked.txt", json!([{"path": "via-link/secret.txt"}])),
            entry("zero", "/dev/zero", json!([{"path": "/dev/zero"}])),
            entry("fifo", "fifo.html", json!([{"path": "src/fifo.rs"}, {"path": "src/ok.rs", "symbol": "ok"}])),
        ],
    });
    std::fs::write(bundle.join("bee-design.json"), manifest.to_string()).unwrap();
    let expected_rules = [
        ("climb", "path_escape", "path_escape"),
        ("absolute", "path_escape", "path_escape"),
        ("linked", "path_link", "path_link"),
        ("zero", "path_escape", "path_escape"),
        ("fifo", "not_regular_file", "not_regular_file"),
    ];
    let leaks = |answer: &Value| {
        let text = answer.to_string();
        assert!(!text.contains("TOP SECRET"), "content from outside the root: {text}");
        assert!(!text.contains(&format!("sha256 {secret_sha}")), "a hash of a file outside the root: {text}");
    };

    runtime().block_on(async {
        let client = connect_design(&home, &root).await;
        for (id, entry_rule, source_rule) in expected_rules {
            let began = std::time::Instant::now();
            let (ok, slice) =
                design_call(&client, "bee_design_slice", json!({"id": id, "bundle": "evil", "budgetBytes": 65_536}))
                    .await;
            assert!(ok, "{slice}");
            assert!(began.elapsed() < std::time::Duration::from_secs(5), "{id}: {:?}", began.elapsed());
            leaks(&slice);
            assert_eq!(slice["complete"], false, "{slice}");
            let missing = slice["missing"].to_string();
            assert!(missing.contains(&format!("refused by the path rule ({entry_rule})")), "{id}: {missing}");
            assert!(missing.contains(&format!("refused by the path rule ({source_rule})")), "{id}: {missing}");
            assert!(
                slice["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|p| p.get("source").is_none() || p["source"] == "src/ok.rs"),
                "{slice}"
            );

            let (ok, verified) = design_call(&client, "bee_design_verify", json!({"bundle": "evil", "id": id})).await;
            assert!(ok, "{verified}");
            leaks(&verified);
            let checks = verified["checks"].as_array().unwrap();
            let hash = checks.iter().find(|c| c["check"] == "hash").unwrap();
            assert_eq!(hash["ok"], false, "{hash}");
            assert!(hash["detail"].as_str().unwrap().contains(&format!("({entry_rule})")), "{hash}");
            let mapping = checks.iter().find(|c| c["check"] == "mapping_file").unwrap();
            assert_eq!(mapping["ok"], false, "{mapping}");
            assert!(mapping["detail"].as_str().unwrap().contains(&format!("({source_rule})")), "{mapping}");

            let (_, report) = design_call(&client, "bee_visual_report", json!({"bundle": "evil", "id": id})).await;
            leaks(&report);
        }
        // A source inside the root is still read, its symbol found.
        let (_, slice) =
            design_call(&client, "bee_design_slice", json!({"id": "fifo", "bundle": "evil", "budgetBytes": 65_536}))
                .await;
        assert!(slice["parts"].to_string().contains("pub fn ok() {}"), "{slice}");
        let (ok, listed) = design_call(&client, "bee_design_list", json!({})).await;
        assert!(ok, "{listed}");
        leaks(&listed);
        client.cancel().await.unwrap();
    });
}

/// A client that pipelines 200,000 `tools/list` requests and never reads
/// an answer: the server takes a few, then stops reading stdin while their
/// answers wait, so its memory stays flat instead of holding the backlog
/// (5 GB in 8 s before the bound).
#[test]
fn pipelined_requests_never_read_leave_the_server_s_memory_bounded() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap();
    let mut child = raw_server(&home, &root, &[]);
    let mut stdin = child.stdin.take().unwrap();
    let _unread = child.stdout.take().unwrap();
    let pid = child.id();
    let writer = std::thread::spawn(move || {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}});
        let mut batch = format!("{initialize}\n{}\n", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let mut written = 0u64;
        for id in 1..=200_000u64 {
            batch.push_str(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string());
            batch.push('\n');
            if batch.len() > 64 * 1024 {
                if stdin.write_all(batch.as_bytes()).is_err() {
                    return written;
                }
                written = id;
                batch.clear();
            }
        }
        let _ = stdin.write_all(batch.as_bytes());
        200_000
    });
    let peak = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    };
    std::thread::sleep(std::time::Duration::from_secs(8));
    let peak_kib = peak().expect("the server runs");
    child.kill().unwrap();
    child.wait().unwrap();
    let written = writer.join().unwrap();
    println!("beectl mcp serve: peak RSS {peak_kib} KiB with {written} of 200,000 requests written, none read");
    assert!(written < 200_000, "the server stopped reading its stdin");
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}

/// CPU seconds a process has used so far (user + system), from /proc.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces): state is field 3.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// A context packet of 512 outlines that times out is answered `timeout`
/// and leaves nothing running behind it: the server's CPU is back to idle
/// right after the answer, instead of outlining on for seconds.
#[test]
fn a_timed_out_context_packet_leaves_nothing_running() {
    let home = TestHome::new();
    let root = std::fs::canonicalize(home.path()).unwrap().join("many");
    std::fs::create_dir_all(&root).unwrap();
    let source: String = (0..40).map(|n| format!("pub fn f{n}(x: u32) -> u32 {{\n    x + {n}\n}}\n\n")).collect();
    let selections: Vec<Value> = (0..512)
        .map(|n| {
            let name = format!("m{n}.rs");
            std::fs::write(root.join(&name), &source[..source.len().min(2000)]).unwrap();
            json!({"id": format!("s{n}"), "path": name, "representation": "outline"})
        })
        .collect();
    let manifest = json!({"selections": selections}).to_string();
    let mut child = raw_server(&home, &root, &[("BEE_MCP_TOOL_TIMEOUT_MS", "30")]);
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answer = |id: u64| loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the server ended");
        let value: Value = serde_json::from_str(&line).unwrap();
        if value["id"] == id {
            return value;
        }
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    writeln!(stdin, "{initialize}").unwrap();
    answer(1);
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    // Warm: the first count builds the o200k tables once per process (a
    // one-time cost, not work left behind by a call).
    let small = json!({"selections": [{"id": "one", "path": "m0.rs", "representation": "outline"}]}).to_string();
    let warm = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "bee_context_packet", "arguments": {"manifestJson": small}}});
    writeln!(stdin, "{warm}").unwrap();
    answer(2);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let mut timed_out = 0;
    for id in 3..6u64 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "bee_context_packet", "arguments": {"manifestJson": manifest}}});
        writeln!(stdin, "{call}").unwrap();
        let answered = answer(id);
        timed_out += usize::from(answered.to_string().contains("timeout"));
    }
    assert!(timed_out > 0, "a 30 ms limit times a 512-outline packet out");
    // Whatever was running stops between files: the 5 s after that are
    // idle (the runtime keeps its idle threads a while).
    let threads = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status.lines().find_map(|l| l.strip_prefix("Threads:")).map(|n| n.trim().to_owned()).unwrap_or_default()
    };
    // A second for a worker the scheduler held back to reach its next check.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (before, threads_before) = (cpu_seconds(pid), threads());
    std::thread::sleep(std::time::Duration::from_secs(5));
    let used = cpu_seconds(pid) - before;
    println!(
        "beectl mcp serve: {used:.2} CPU-s in the 5 s after {timed_out} timed-out calls; threads {threads_before} \
         then {}",
        threads()
    );
    assert!(used < 0.2, "{used} CPU-s used after the calls timed out");
    drop(stdin);
    child.wait().unwrap();
}
