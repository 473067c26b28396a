//! The ledger under the real Claude Code CLI (pinned in `tests/node`)
//! against a mock of Anthropic's Messages API: every figure of `beectl
//! usage --by day|session|model`, `quota` and `status` equals what the mock
//! served — each response once, whichever file, session or producer
//! brought it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::providers::{MockProvider, assert_columns_add_up, claude_cli, expected_usage_issues, usage_sums};
use bee_tests::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Claude Code confined to `home`, talking to `provider` only.
fn claude(home: &TestHome, provider: &MockProvider, project: &Path, program: Option<&Path>) -> Command {
    let mut command = match program {
        Some(program) => home.command(program),
        None => home.command(claude_cli()),
    };
    provider.point_claude(&mut command);
    command.current_dir(project).stdin(Stdio::null());
    command
}

/// Claude Code settings wiring `bee-hook turn` on UserPromptSubmit and Stop.
fn turn_hooks(home: &TestHome) -> PathBuf {
    let turn = format!("'{}' turn", bin("bee-hook").display());
    let hooks = json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": turn}]}],
        "Stop": [{"hooks": [{"type": "command", "command": turn}]}],
    }});
    home.file("settings.json", hooks.to_string().as_bytes())
}

fn run_ok(mut command: Command) -> Output {
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

fn project(home: &TestHome) -> PathBuf {
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("notes.txt"), "the notes\n").unwrap();
    project
}

fn json_of(output: &Output) -> Value {
    parse_json_line(&output.stdout)
}

/// Sums `rows` of a usage report, counter by counter.
/// Every usage view equals what the mock served, and says nothing is unknown.
fn assert_usage_equals_served(home: &TestHome, provider: &MockProvider) {
    let (served, expected) = (provider.served(), provider.served_usage());
    let served_models: Vec<String> = served.iter().map(|s| s.model.clone()).collect();
    for by in ["day", "week", "month", "session", "model", "block"] {
        let report = json_of(&home.beectl(&["usage", "--by", by]));
        assert_json_eq(&usage_sums(&report, &expected), &expected);
        assert_columns_add_up(&report);
        let (issues, expected_issues) = expected_usage_issues(&report, &served_models);
        assert_eq!(issues, expected_issues, "--by {by}: {report}");
        assert!(report["rows"].as_array().unwrap().iter().all(|r| r["key"].is_string()), "{report}");
    }
    let by_model = json_of(&home.beectl(&["usage", "--by", "model"]));
    let mut models: Vec<String> = served.iter().map(|s| s.model.clone()).collect();
    models.sort();
    models.dedup();
    let keys: Vec<String> =
        by_model["rows"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap().to_owned()).collect();
    assert_eq!(keys, models, "one row per model the mock answered as");
}

#[test]
fn print_continue_and_resume_count_each_served_response_once() {
    let home = TestHome::new();
    let provider = MockProvider::anthropic();
    let project = project(&home);
    let session = "0b5e1d2c-3a4f-4b6e-9d8c-7f6e5d4c3b2a";
    let notes = project.join("notes.txt");
    // A turn with a tool call: two requests.
    let mut first = claude(&home, &provider, &project, None);
    first.args(["-p", &format!("TOOL:{} read the notes", notes.display()), "--session-id", session]);
    first.args(["--output-format", "json"]);
    run_ok(first);
    assert_eq!(provider.served().len(), 2, "the tool call made a second request");
    let mut continued = claude(&home, &provider, &project, None);
    continued.args(["-p", "and now?", "--continue", "--output-format", "json"]);
    run_ok(continued);
    let mut resumed = claude(&home, &provider, &project, None);
    resumed.args(["-p", "one more thing", "--resume", session, "--output-format", "json"]);
    // Claude Code 2.1 continues the session (same id, same file), and its
    // cost is the session's running total: the last one is the session's.
    let reported_cost = json_of(&run_ok(resumed))["total_cost_usd"].as_f64().unwrap();
    let served = provider.served();
    assert_eq!(served.len(), 4);

    let ingested = json_of(&home.beectl(&["ingest"]));
    assert_eq!(ingested["by"], "beectl", "{ingested}");
    assert_usage_equals_served(&home, &provider);
    // Read again: nothing counts twice.
    json_of(&home.beectl(&["ingest"]));
    assert_usage_equals_served(&home, &provider);
    let quota = json_of(&home.beectl(&["quota"]));
    // No producer measured these turns: their time comes from the logs'
    // own timestamps, one turn per prompt, apart from measured time, which
    // is unknown: null, never a 0 that reads as "no usage" (nor an Idle
    // that claims the whole window).
    assert_eq!(
        (quota["crossed"].clone(), quota["issues"].clone()),
        (json!(0), json!(["time_not_measured"])),
        "{quota}"
    );
    assert_eq!(
        [&quota["agentTimeMs"], &quota["usedMs"], &quota["idleMs"], &quota["providers"][0]["agentTimeMs"]],
        [&Value::Null; 4],
        "{quota}"
    );
    assert_eq!(quota["derived"]["turns"], 3, "{quota}");
    assert!(quota["derived"]["agentTimeMs"].as_u64().unwrap() > 0, "{quota}");
    // Cost: what Claude Code itself reported, from its session's cost lines
    // (no producer ran), equal to what the CLI last said the session cost.
    let status = json_of(&home.beectl(&["status"]));
    assert!(reported_cost > 0.0);
    assert!((status["estCostUsd"].as_f64().unwrap() - reported_cost).abs() < 1e-9, "{status} vs {reported_cost}");
    assert_eq!(status["callsWithCost"], 0, "{status}");
}

/// `--resume <id> --fork-session` copies the session's lines, with their
/// very times, into a new session whose id sorts before the original's as
/// often as not: each response stays in the session that made it, the
/// fork's row counts the copies apart, and every figure is still what the
/// mock served, once.
#[test]
fn a_forked_session_shows_only_its_own_responses_and_counts_its_copies() {
    let home = TestHome::new();
    let provider = MockProvider::anthropic();
    let project = project(&home);
    // Sorting after any fork's id but one in sixteen: the bug this guards
    // against gave the fork every copied response whenever its id sorted first.
    let session = "f0b5e1d2-3a4f-4b6e-9d8c-7f6e5d4c3b2a";
    let notes = project.join("notes.txt");
    let mut first = claude(&home, &provider, &project, None);
    first.args(["-p", &format!("TOOL:{} read the notes", notes.display()), "--session-id", session]);
    run_ok(first);
    let mut resumed = claude(&home, &provider, &project, None);
    resumed.args(["-p", "one more thing", "--resume", session]);
    run_ok(resumed);
    let mut forked = claude(&home, &provider, &project, None);
    forked.args(["-p", "forked", "--resume", session, "--fork-session", "--output-format", "json"]);
    let fork = json_of(&run_ok(forked))["session_id"].as_str().unwrap().to_owned();
    assert_ne!(fork, session, "the fork is a session of its own");
    assert_eq!(provider.served().len(), 4, "two of the tool turn, the resumed one, the fork's own");

    json_of(&home.beectl(&["ingest"]));
    let (served, expected) = (provider.served(), provider.served_usage());
    let report = json_of(&home.beectl(&["usage", "--by", "session"]));
    assert_json_eq(&usage_sums(&report, &expected), &expected);
    let rows: Vec<(String, u64, u64)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let copied = row["copiedResponses"].as_u64().unwrap_or(0);
            (row["key"].as_str().unwrap().to_owned(), row["responses"].as_u64().unwrap(), copied)
        })
        .collect();
    let mut expected_rows = vec![(session.to_owned(), 3, 0), (fork, 1, 3)];
    expected_rows.sort();
    let mut rows = rows;
    rows.sort();
    assert_eq!(rows, expected_rows, "each response in the session that made it: {report}");
    assert_eq!(report["totals"]["responses"], served.len(), "{report}");
    assert_eq!(report["totals"]["copiedResponses"], 3, "{report}");
    // Read again: nothing moves.
    json_of(&home.beectl(&["ingest"]));
    assert_eq!(json_of(&home.beectl(&["usage", "--by", "session"]))["rows"], report["rows"]);
}

#[test]
fn a_run_with_turn_hooks_is_one_call_and_a_refused_request_one_limit() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let provider = MockProvider::anthropic();
    let project = project(&home);
    let settings = turn_hooks(&home);
    let notes = project.join("notes.txt");
    let mut wrapped = claude(&home, &provider, &project, Some(&bin("beectl")));
    wrapped.args(["run", "--provider", "claude", "--"]).arg(claude_cli()).args([
        "-p",
        &format!("TOOL:{} read the notes", notes.display()),
        "--output-format",
        "json",
        "--settings",
        settings.to_str().unwrap(),
    ]);
    let output = run_ok(wrapped);
    let result = json_of(&output);
    assert_eq!(result["type"], "result", "the CLI's output passes through");
    home.settle();
    json_of(&home.beectl(&["ingest"]));
    assert_usage_equals_served(&home, &provider);
    let quota = json_of(&home.beectl(&["quota"]));
    assert_eq!(quota["providers"][0]["calls"], 1, "the run and its hook turn are one call: {quota}");
    assert!(quota["usedMs"].as_u64().unwrap() > 0);
    assert_eq!(quota["agentTimeMs"], quota["usedMs"], "nothing overlaps itself");
    let status = json_of(&home.beectl(&["status"]));
    let reported = result["total_cost_usd"].as_f64().unwrap();
    assert!((status["estCostUsd"].as_f64().unwrap() - reported).abs() < 1e-9, "the CLI's own cost: {status}");

    // A request the provider refuses with a usage-limit 429: one hit,
    // though the run's output and the transcript both say so.
    let mut limited = claude(&home, &provider, &project, Some(&bin("beectl")));
    limited.args(["run", "--provider", "claude", "--"]).arg(claude_cli()).args([
        "-p",
        "LIMIT please",
        "--output-format",
        "json",
        "--settings",
        settings.to_str().unwrap(),
    ]);
    let _ = limited.output().unwrap();
    assert_eq!(provider.refused(), 1);
    home.settle();
    json_of(&home.beectl(&["ingest"]));
    let quota = json_of(&home.beectl(&["quota"]));
    assert_eq!(quota["crossed"], 1, "{quota}");
    assert_eq!(quota["providers"][0]["calls"], 2, "the refused run is a call too: {quota}");
    assert_usage_equals_served(&home, &provider);
    drop(daemon);
}

#[test]
fn turns_while_beed_is_down_are_spooled_and_counted_once_it_is_back() {
    let home = TestHome::new();
    let provider = MockProvider::anthropic();
    let project = project(&home);
    let settings = turn_hooks(&home);
    let mut direct = claude(&home, &provider, &project, None);
    direct.args(["-p", "hello", "--settings", settings.to_str().unwrap()]);
    run_ok(direct);
    let spooled = std::fs::read_to_string(home.spool_dir().join(bee_proto::ledger::LEDGER_SPOOL_FILE)).unwrap();
    assert_eq!(spooled.lines().count(), 2, "the turn's two marks waited in the spool");
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    home.settle();
    json_of(&home.beectl(&["ingest"]));
    assert_usage_equals_served(&home, &provider);
    let quota = json_of(&home.beectl(&["quota"]));
    assert_eq!(quota["providers"][0]["calls"], 1, "{quota}");
    drop(daemon);
}

/// An API error the mock serves (a 400 Claude Code does not retry): Claude
/// Code writes a `<synthetic>` / `isApiErrorMessage` line about it, which
/// is no response — the figures equal what was served, no `(unknown)`
/// model, no unpriced cost — and `budget --measured` counts it as an error
/// line.
#[test]
fn an_api_error_claude_code_writes_is_no_response() {
    let home = TestHome::new();
    let provider = MockProvider::anthropic();
    let project = project(&home);
    let session = "7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    let mut first = claude(&home, &provider, &project, None);
    first.args(["-p", "hello", "--session-id", session, "--output-format", "json"]);
    run_ok(first);
    let mut failing = claude(&home, &provider, &project, None);
    failing.args(["-p", "APIERROR now", "--resume", session, "--output-format", "json"]);
    let output = failing.output().unwrap();
    // Claude Code may ask again before it gives up: at least one refusal.
    assert!(provider.refused() >= 1, "{}", String::from_utf8_lossy(&output.stdout));
    let (transcript, written) = files_under(&home.path().join(".claude/projects"))
        .into_iter()
        .find(|(path, _)| path.ends_with(format!("{session}.jsonl")))
        .expect("the session's transcript");
    let written = String::from_utf8(written).unwrap();
    assert!(written.contains(r#""isApiErrorMessage":true"#), "Claude Code wrote its error line: {written}");

    json_of(&home.beectl(&["ingest"]));
    assert_usage_equals_served(&home, &provider);
    // Above: one row per model the mock answered as, and an unpriced model
    // only when the mock's own is: no `(unknown)` row for the error line.
    let by_model = json_of(&home.beectl(&["usage", "--by", "model"]));
    assert!(!by_model.to_string().contains("(unknown)"), "{by_model}");
    let measured = json_of(&home.beectl(&[
        "budget",
        "--measured",
        "--harness",
        "claude",
        "--session",
        session,
        "--log",
        transcript.to_str().unwrap(),
    ]));
    assert_eq!(measured["response"]["responses"], provider.served().len(), "{measured}");
    assert_eq!((measured["lines"]["errorLines"].clone(), measured["limits"].clone()), (json!(1), json!([])));
}

/// Claude Code's own settings for a fresh home: onboarding done, the test
/// key approved, the project trusted — what a user's home holds after the
/// first run, so the interactive session starts straight at the prompt.
fn interactive_home(home: &TestHome, project: &Path) {
    let key = bee_tests::providers::TEST_API_KEY;
    let config = json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [key[key.len() - 20..].to_owned()], "rejected": []},
        "projects": {project.display().to_string(): {"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
    });
    std::fs::write(home.path().join(".claude.json"), config.to_string()).unwrap();
}

#[test]
fn an_interactive_session_in_a_terminal_is_measured_by_its_hooks_and_counted_from_its_log() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let provider = MockProvider::anthropic();
    let project = project(&home);
    interactive_home(&home, &project);
    let settings = turn_hooks(&home);
    // A real terminal: `script` gives Claude Code a pty; what is written to
    // its stdin is typed at the prompt.
    let line = format!("'{}' 'hello there' --settings '{}'", claude_cli().display(), settings.display());
    let mut session = claude(&home, &provider, &project, Some(Path::new("script")));
    session
        .args(["-qfec", &line, "/dev/null"])
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    let mut child = session.spawn().unwrap();
    assert!(eventually(std::time::Duration::from_secs(60), || provider.served().len() == 1), "no model request");
    // The turn ends (Stop fires and its hook records the turn), then the
    // user leaves: waited for as it is seen, not for a fixed time.
    let measured = || json_of(&home.beectl(&["quota"]))["providers"][0]["calls"] == 1;
    assert!(eventually(std::time::Duration::from_secs(60), measured), "the Stop hook never recorded the turn");
    use std::io::Write;
    child.stdin.as_mut().unwrap().write_all(b"/exit\r").unwrap();
    let exited = eventually(std::time::Duration::from_secs(30), || child.try_wait().unwrap().is_some());
    if !exited {
        let _ = child.kill();
    }
    let _ = child.wait();
    assert!(exited, "the session ended on /exit");
    home.settle();
    json_of(&home.beectl(&["ingest"]));
    assert_usage_equals_served(&home, &provider);
    let quota = json_of(&home.beectl(&["quota"]));
    assert_eq!(quota["providers"][0]["calls"], 1, "the hooks measured the turn: {quota}");
    assert_eq!(quota["derived"]["turns"], 0, "a measured turn is not derived too: {quota}");
    let status = json_of(&home.beectl(&["status"]));
    assert_eq!(status["sessionsWithCost"], 1, "an interactive session's cost, as Claude Code wrote it: {status}");
    assert_eq!(status["sessionsWithoutCost"], 0, "{status}");
    assert!(status["estCostUsd"].as_f64().unwrap() > 0.0, "{status}");
    drop(daemon);
}

/// Points Claude Code's own OpenTelemetry at beed's OTLP receiver, in the
/// given OTLP/HTTP encoding (`http/json` or `http/protobuf`).
fn telemetry_to(command: &mut Command, daemon: &Daemon, protocol: &str) {
    command
        .env_remove("DISABLE_TELEMETRY")
        .env("CLAUDE_CODE_ENABLE_TELEMETRY", "1")
        .env("OTEL_METRICS_EXPORTER", "otlp")
        .env("OTEL_LOGS_EXPORTER", "otlp")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{}", daemon.otlp_addr()))
        .env("OTEL_LOGS_EXPORT_INTERVAL", "200")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "1000");
}

fn usage_responses(home: &TestHome) -> u64 {
    let report = json_of(&home.beectl(&["usage", "--by", "model"]));
    report["rows"].as_array().map_or(0, |rows| rows.iter().map(|r| r["responses"].as_u64().unwrap_or(0)).sum())
}

#[test]
fn claude_codes_own_telemetry_times_every_request_once_beside_its_transcript() {
    let home = TestHome::new();
    let daemon = home.start_daemon_with(&["--ingest-every", "0", "--otlp", "127.0.0.1:0"]);
    let provider = MockProvider::anthropic();
    let project = project(&home);
    let notes = project.join("notes.txt");
    let slow_ms = 250;
    // A turn with a tool call (two requests), telemetry as protobuf; then
    // one more turn of the same session as JSON. No hooks: the telemetry is
    // the only producer.
    let session = "5d1c7a2e-8b3f-4c6d-9e0a-1f2b3c4d5e6f";
    let mut first = claude(&home, &provider, &project, None);
    telemetry_to(&mut first, &daemon, "http/protobuf");
    first.args(["-p", &format!("TOOL:{} SLOW:{slow_ms} read the notes", notes.display()), "--session-id", session]);
    run_ok(first);
    let mut second = claude(&home, &provider, &project, None);
    telemetry_to(&mut second, &daemon, "http/json");
    second.args(["-p", "and now?", "--resume", session]);
    run_ok(second);
    let served = provider.served();
    assert_eq!(served.len(), 3, "two requests, then one");

    // Before any transcript is read, the telemetry alone brought every
    // served response, each with the mock's own counters.
    let arrived = eventually(std::time::Duration::from_secs(15), || usage_responses(&home) == 3);
    assert!(arrived, "{}\n{}", usage_responses(&home), daemon.log());
    assert_usage_equals_served(&home, &provider);
    let quota = json_of(&home.beectl(&["quota"]));
    assert_eq!(quota["providers"][0]["calls"], 3, "each request is one measured call: {quota}");
    let measured = quota["agentTimeMs"].as_u64().unwrap();
    // The mock held each request of the slow conversation back: the
    // durations Claude Code measured include that (the third request is
    // in the same conversation, so it is slow too).
    assert!(measured >= 3 * slow_ms, "{quota}");
    assert_eq!(quota["derived"]["turns"], 0, "{quota}");
    assert!(!quota["issues"].as_array().unwrap().contains(&json!("time_not_measured")), "{quota}");

    // The transcripts add nothing: the same responses, once.
    json_of(&home.beectl(&["ingest"]));
    assert_usage_equals_served(&home, &provider);
    let after = json_of(&home.beectl(&["quota"]));
    assert_eq!(after["providers"][0]["calls"], 3, "{after}");
    assert_eq!(after["agentTimeMs"], quota["agentTimeMs"], "{after}");
    assert_eq!(after["derived"]["turns"], 0, "the requests measured the turns the logs would derive: {after}");
    // Claude Code's telemetry resent (its retry after a lost answer) is the
    // same records.
    let before = usage_responses(&home);
    let mut again = claude(&home, &provider, &project, None);
    telemetry_to(&mut again, &daemon, "http/json");
    again.args(["-p", "hello again", "--settings", turn_hooks(&home).to_str().unwrap()]);
    run_ok(again);
    home.settle();
    assert!(eventually(std::time::Duration::from_secs(15), || usage_responses(&home) == before + 1));
    json_of(&home.beectl(&["ingest"]));
    assert_usage_equals_served(&home, &provider);
    // With the turn hooks, the turn is the call: its request lies inside it
    // and is not another call, nor more agent time.
    let hooked = json_of(&home.beectl(&["quota"]));
    assert_eq!(hooked["providers"][0]["calls"], 4, "{hooked}");
    assert_eq!(hooked["agentTimeMs"], hooked["usedMs"], "nothing overlaps itself: {hooked}");
    drop(daemon);
}
