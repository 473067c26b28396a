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
