//! The real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned in
//! `tests/node/package.json`, installed by `.ci/run`) running Bee's prompt
//! hook against the harness's mock of the provider's Messages API: the
//! block reaches the model's request, and Bee observes exactly that prompt,
//! in the session Claude Code named — the variable it sets for every hook
//! process and the envelope agree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::providers::{MockProvider, claude_cli};
use bee_tests::*;
use serde_json::{Value, json};

#[test]
fn the_real_claude_code_runs_the_prompt_hook_and_bee_observes_its_session() {
    let claude = claude_cli();
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let provider = MockProvider::anthropic();
    let block_text = "Steering: run the linter before every commit (bee-e2e-marker).\n";
    let block = home.file("block.md", block_text.as_bytes());
    let hook = format!("'{}' prompt --surface plain --block '{}'", bin("bee-hook").display(), block.display());
    let event_hook = format!("'{}' event --source-app e2e", bin("bee-hook").display());
    let event_group = json!([{"hooks": [{"type": "command", "command": event_hook}]}]);
    let settings = home.file(
        "settings.json",
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": hook}]}],
                         "SessionStart": event_group, "Stop": event_group}})
        .to_string()
        .as_bytes(),
    );
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let session = "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";

    let mut command = home.command(&claude);
    provider.point_claude(&mut command);
    let output = command
        .current_dir(&project)
        .args(["-p", "say hi", "--settings", settings.to_str().unwrap(), "--session-id", session])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("Answer 1."), "the mock's answer reached the user");

    // The block reached the model: it is in the request the provider served.
    let requests = provider.requests();
    let to_model: Vec<&Value> = requests
        .iter()
        .filter(|(path, _)| path.starts_with("/v1/messages") && !path.contains("count_tokens"))
        .map(|(_, body)| body)
        .collect();
    assert!(!to_model.is_empty(), "Claude Code made no model request: {requests:?}");
    assert!(
        to_model.iter().any(|body| body.to_string().contains("bee-e2e-marker")),
        "the hook output is not in the request"
    );

    // Bee observed that one prompt, in the session Claude Code named.
    home.settle();
    let (code, report) = home.report(&[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["observedEvents"], 1, "{report}");
    assert_eq!(report["deliveredUtf8Bytes"], block_text.len(), "{report}");
    let sessions: Vec<&Value> =
        report["groups"].as_array().unwrap().iter().filter(|g| g["dimension"] == "session").collect();
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        (sessions[0]["identity"].as_str(), sessions[0]["version"].as_str()),
        (Some(session), Some("claude-native-session"))
    );

    // The event hooks: SessionStart keeps how the session started (a small
    // enum, no content), and Stop carries the model of the transcript's
    // latest answer, as the reference's sender reads it: a model the mock served.
    let (_, _, body) = raw_http(&home.socket(), &get_request("/events/recent", "beed", ""));
    let events: Value = serde_json::from_slice(&body).unwrap();
    let of = |kind: &str| events.as_array().unwrap().iter().find(|e| e["hook_event_type"] == kind).cloned();
    let start = of("SessionStart").unwrap_or_else(|| panic!("no SessionStart: {events}"));
    assert_eq!((start["session_id"].as_str(), start["payload"]["source"].as_str()), (Some(session), Some("startup")));
    let stop = of("Stop").unwrap_or_else(|| panic!("no Stop: {events}"));
    let served: Vec<String> = provider.served().iter().map(|s| s.model.clone()).collect();
    let model = stop["model_name"].as_str().unwrap_or_else(|| panic!("no model_name: {stop}"));
    assert!(served.iter().any(|m| m == model), "{model} is not a model the mock served: {served:?}");
    drop(daemon);
}

/// The real Claude Code with Bee as its MCP server (`beectl mcp serve`, from
/// an `--mcp-config`): the mock model asks for one Bee tool call, Claude
/// Code makes it, and Bee's answer — what the CLI prints — reaches the next
/// request the model gets.
#[test]
fn the_real_claude_code_calls_a_bee_tool_and_the_answer_reaches_the_model() {
    let claude = claude_cli();
    let home = TestHome::new();
    let provider = MockProvider::anthropic();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    // The snippet the README points at, with this build's beectl.
    let snippet =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../contrib/claude-code/mcp.json")).unwrap();
    let mut snippet: Value = serde_json::from_str(&snippet).unwrap();
    assert_eq!(snippet["mcpServers"]["bee"]["command"], "beectl");
    snippet["mcpServers"]["bee"]["command"] = json!(bin("beectl").display().to_string());
    let config = home.file("mcp.json", snippet.to_string().as_bytes());
    let tool = "mcp__bee__bee_token_estimate";
    let mut command = home.command(&claude);
    provider.point_claude(&mut command);
    let output = command
        .current_dir(&project)
        .args(["-p", &format!("MCP:{tool} ARGS:{{\"text\":\"Hello,world!\"}} estimate it")])
        .args(["--mcp-config", config.to_str().unwrap(), "--strict-mcp-config", "--allowedTools", tool])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));

    // The request after the tool call carries Bee's answer as the tool's result.
    let printed = {
        let mut estimate = home.command(bin("beectl"));
        estimate
            .args(["token", "estimate", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = estimate.spawn().unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"Hello,world!").unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let results: Vec<String> = provider
        .requests()
        .iter()
        .filter(|(path, _)| path.starts_with("/v1/messages") && !path.contains("count_tokens"))
        .flat_map(|(_, body)| body["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|part| part["type"] == "tool_result")
        .map(|part| match &part["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            other => other.to_string(),
        })
        .collect();
    let estimate: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(estimate["input"]["estimatedTokensPerCall"], 3);
    assert!(
        results.iter().any(|content| content.trim_end() == printed.trim_end()),
        "Bee's answer, as the CLI prints it, is not the tool result the model got: {results:?}"
    );
}
