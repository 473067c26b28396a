//! The ledger end to end: `beectl run` around fake provider CLIs, records
//! through beed or its spool, and `beectl quota | status | usage` over them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::process::{Output, Stdio};

/// A stand-in for `claude -p --output-format json`: a result line on stdout,
/// a usage-limit notice on stderr, exit status from `FAKE_EXIT`.
const FAKE_CLAUDE: &str = r#"
case "$1" in --version) echo "2.0.14 (Claude Code)"; exit 0;; esac
cat > /dev/null
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"duration_ms":2345,"duration_api_ms":2000,"num_turns":3,"result":"Done: tests pass.","session_id":"5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d","total_cost_usd":0.0123,"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":50,"service_tier":"standard"},"modelUsage":{"claude-sonnet-4-5-20250929":{"inputTokens":10,"outputTokens":50,"cacheReadInputTokens":1000,"cacheCreationInputTokens":100,"webSearchRequests":0,"costUSD":0.0123,"contextWindow":200000}}}'
printf 'Claude AI usage limit reached|1796040000\n' >&2
exit "${FAKE_EXIT:-0}"
"#;

/// A stand-in for `codex exec --json` (0.169): `turn.completed` carries the
/// thread's cumulative usage, so the last one is the run's, never a sum.
const FAKE_CODEX: &str = r#"
printf '%s\n' '{"type":"thread.started","thread_id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}'
printf '%s\n' '{"type":"turn.started"}'
printf '%s\n' '{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":200,"output_tokens":50}}'
printf '%s\n' '{"type":"turn.completed","usage":{"input_tokens":2500,"cached_input_tokens":1200,"output_tokens":80}}'
printf '%s\n' '{"type":"error","message":"You have hit your usage limit. Try again later."}'
echo "progress on stderr" >&2
exit 1
"#;

fn run_with(home: &TestHome, program: &str, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut command = home.command(program);
    command.current_dir(home.path());
    for (key, value) in env {
        command.env(key, value);
    }
    home.hook_with(command, args, stdin).0
}

fn json_of(output: &Output) -> Value {
    parse_json_line(&output.stdout)
}

#[test]
fn run_passes_everything_through_and_records_the_call_and_the_limit() {
    let home = TestHome::new();
    let script = home.file("fake-claude.sh", FAKE_CLAUDE.as_bytes());
    let script = script.to_str().unwrap();
    let daemon = home.start_daemon();
    let beectl = bin("beectl");
    for exit in ["0", "3"] {
        let env = [("FAKE_EXIT", exit)];
        let direct = run_with(&home, "sh", &[script, "-p", "--output-format", "json"], b"prompt text", &env);
        let wrapped = run_with(
            &home,
            beectl.to_str().unwrap(),
            &["run", "--provider", "claude", "--", "sh", script, "-p", "--output-format", "json"],
            b"prompt text",
            &env,
        );
        assert_eq!(wrapped.stdout, direct.stdout, "stdout passes through");
        assert_eq!(wrapped.stderr, direct.stderr, "stderr passes through");
        assert_eq!(wrapped.status.code(), direct.status.code());
    }
    // A version probe makes no model call and is not recorded.
    let probe = run_with(
        &home,
        beectl.to_str().unwrap(),
        &["run", "--provider", "claude", "--", "sh", script, "--version"],
        b"",
        &[],
    );
    assert_eq!(probe.stdout, b"2.0.14 (Claude Code)\n");

    let usage = json_of(&home.beectl(&["usage", "--by", "model"]));
    assert_eq!(usage["source"], "provider_reported_counters");
    assert_eq!(
        usage["rows"],
        json!([{"key": "claude-sonnet-4-5", "agent": "claude", "modelIds": ["claude-sonnet-4-5-20250929"],
            "models": ["claude-sonnet-4-5"], "responses": 0, "tokens": {
            "inputTokens": 20, "cachedInputTokens": null, "cacheCreationInputTokens": 200, "cacheReadInputTokens": 2000,
            "outputTokens": 100, "reasoningOutputTokens": null, "totalTokens": 2320},
            "partialParts": 0, "pendingResponses": 0, "producerCountedCalls": 2,
            // As the runs reported it, and from the bundled table: 20 × $3 + 200 × $3.75
            // + 2,000 × $0.30 + 100 × $15 per million tokens.
            // Both runs reported their cost: none is left out.
            "reportedCostUsd": 0.0246, "agentCostUsd": null, "estimatedCostUsd": 0.00291, "unpricedParts": 0,
            "sessionsWithoutCost": 0}]),
        "no log of the session: the runs' own counters stand in, labelled"
    );
    let by_session = json_of(&home.beectl(&["usage", "--by", "session"]));
    assert_eq!(by_session["rows"][0]["key"], "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d");

    let quota = home.beectl(&["quota", "--window", "24h"]);
    assert_eq!(quota.status.code(), Some(0));
    let quota = json_of(&quota);
    assert_eq!(
        (quota["crossed"].clone(), quota["converted"].clone()),
        (json!(1), json!(0)),
        "two runs seconds apart reporting the limit: one hit"
    );
    assert_eq!(quota["providers"][0]["calls"], 2);
    assert_eq!(quota["providers"][0]["windows"], json!([]), "no snapshots: no window, no peak");
    assert!(quota["agentTimeMs"].as_u64().unwrap() > 0);
    assert!(quota["usedMs"].as_u64().unwrap() <= quota["agentTimeMs"].as_u64().unwrap());
    let text = String::from_utf8(home.beectl(&["quota", "--window", "24h"]).stdout).unwrap();
    assert!(!text.contains("cost") && !text.contains("Tokens"), "quota prints neither costs nor tokens: {text}");

    let status = json_of(&home.beectl(&["status"]));
    assert!((status["estCostUsd"].as_f64().unwrap() - 0.0246).abs() < 1e-9);
    assert_eq!(status["callsWithCost"], 2);
    assert_eq!(
        (&status["sessionsWithoutCost"], &status["issues"]),
        (&json!(0), &json!([])),
        "every session's cost: {status}"
    );
    let table = String::from_utf8(home.beectl(&["quota", "--format", "table"]).stdout).unwrap();
    assert!(table.contains("no quota snapshots: no window, no peak"), "{table}");
    drop(daemon);
}

#[test]
fn codex_runs_sum_turns_and_spool_when_beed_is_down() {
    let home = TestHome::new();
    let script = home.file("fake-codex.sh", FAKE_CODEX.as_bytes());
    let wrapped = run_with(
        &home,
        bin("beectl").to_str().unwrap(),
        &["run", "--provider", "codex", "--", "sh", script.to_str().unwrap(), "exec", "--json", "add a test"],
        b"",
        &[],
    );
    assert_eq!(wrapped.status.code(), Some(1));
    assert!(wrapped.stderr.ends_with(b"progress on stderr\n"), "no warning: the spool took the records");
    // beed down: nothing to read yet, and no zeros shown for it.
    let quota = home.beectl(&["quota"]);
    assert_eq!(quota.status.code(), Some(5));
    let missing = json_of(&quota);
    assert_eq!((&missing["status"], &missing["issues"]), (&json!("unavailable"), &json!(["missing"])), "{missing}");
    assert!(
        missing["message"].as_str().unwrap().contains(" already wait"),
        "what was recorded is not lost, and the message says where it is: {missing}"
    );
    let daemon = home.start_daemon();
    let usage = json_of(&home.beectl(&["usage", "--by", "day"]));
    assert_eq!(usage["rows"][0]["producerCountedCalls"], 1);
    // Codex's input includes its cached part: shown once, as cache reads.
    assert_eq!(usage["rows"][0]["tokens"]["inputTokens"], 2500 - 1200, "cumulative usage is the last, not a sum");
    assert_eq!(usage["rows"][0]["tokens"]["cacheReadInputTokens"], 1200);
    assert_eq!(usage["rows"][0]["tokens"]["outputTokens"], 80);
    assert_eq!(
        usage["rows"][0]["tokens"]["totalTokens"], 2_580,
        "Codex's total is input + output; exec output omits it"
    );
    let quota = json_of(&home.beectl(&["quota", "--provider", "codex"]));
    assert_eq!(quota["crossed"], 1);
    assert_eq!(
        quota["issues"],
        json!(["quota_snapshots_missing"]),
        "Codex sends its windows with every response: none is a warning"
    );
    let status = json_of(&home.beectl(&["status"]));
    assert_eq!(status["estCostUsd"], Value::Null, "no cost reported: unknown, not zero");
    drop(daemon);
}

#[test]
fn a_lost_ledger_write_never_fails_the_run_and_is_reported_everywhere() {
    let home = TestHome::new();
    let script = home.file("fake-claude.sh", FAKE_CLAUDE.as_bytes());
    let script = script.to_str().unwrap();
    // beed down and a spool that cannot be created: the records have nowhere to go.
    std::fs::create_dir_all(home.bee_dir()).unwrap();
    std::fs::write(home.spool_dir(), b"not a directory").unwrap();
    let direct = run_with(&home, "sh", &[script, "-p", "--output-format", "json"], b"", &[("FAKE_EXIT", "3")]);
    let wrapped = run_with(
        &home,
        bin("beectl").to_str().unwrap(),
        &["run", "--provider", "claude", "--", "sh", script, "-p", "--output-format", "json"],
        b"",
        &[("FAKE_EXIT", "3")],
    );
    assert_eq!((wrapped.stdout.clone(), wrapped.status.code()), (direct.stdout, Some(3)), "the run is untouched");
    let stderr = String::from_utf8(wrapped.stderr).unwrap();
    assert!(stderr.starts_with(&String::from_utf8(direct.stderr).unwrap()));
    assert!(stderr.contains("beectl: warning quota.record_failed:"), "{stderr}");
    let journal = std::fs::read_to_string(home.bee_dir().join("usage/record-failures.jsonl")).unwrap();
    assert!(journal.contains(r#""producer":"run","records":2"#), "{journal}");
    assert!(!journal.contains("Done: tests pass."), "metadata only");

    std::fs::remove_file(home.spool_dir()).unwrap();
    let daemon = home.start_daemon();
    assert!(daemon.log().contains("quota.record_failed"), "{}", daemon.log());
    let status = json_of(&home.beectl(&["status"]));
    assert_eq!(status["recordFailures"], 1);
    assert_eq!(status["issues"], json!(["quota.record_failed"]));
    assert_eq!(status["agentTimeMs"], 0, "nothing was recorded");
    let table = String::from_utf8(home.beectl(&["status", "--format", "table"]).stdout).unwrap();
    assert!(table.contains("warning quota.record_failed: 1 ledger writes were lost"), "{table}");
    let quota = json_of(&home.beectl(&["quota"]));
    assert_eq!(quota["issues"], json!([]), "quota shows the time words only");
    drop(daemon);
}

#[test]
fn the_ledger_refuses_updates_and_deletes() {
    let home = TestHome::new();
    let script = home.file("fake-claude.sh", FAKE_CLAUDE.as_bytes());
    let daemon = home.start_daemon();
    run_with(
        &home,
        bin("beectl").to_str().unwrap(),
        &["run", "--provider", "claude", "--", "sh", script.to_str().unwrap()],
        b"",
        &[],
    );
    drop(daemon);
    let db = home.bee_dir().join("usage/ledger-v1/ledger.sqlite3");
    let conn = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(conn.query_row("SELECT COUNT(*) FROM call", [], |r| r.get::<_, i64>(0)).unwrap(), 1);
    for sql in [
        "UPDATE call SET cost_usd = 0",
        "DELETE FROM call",
        "DELETE FROM limit_hit",
        "UPDATE limit_hit SET provider = 'codex'",
    ] {
        let err = conn.execute(sql, []).unwrap_err();
        assert!(err.to_string().contains("append-only"), "{sql}: {err}");
    }
}

/// A new user's first look, before any log or producer: the views say
/// what is missing, that no agent's records are there yet (and where to
/// see where Bee looks), and what to do — and create nothing.
#[test]
fn a_first_look_without_a_ledger_says_what_is_missing_and_what_to_do() {
    let home = TestHome::new();
    for args in [&["usage"][..], &["usage", "--by", "model", "--format", "table"], &["quota"], &["status"]] {
        let output = home.beectl(args);
        assert_eq!(output.status.code(), Some(5), "{args:?}");
        let answer = json_of(&output);
        assert_eq!(answer["issues"], json!(["missing"]), "{args:?}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        for part in [
            format!("no ledger yet at {}", home.path().join(".bee/usage/ledger-v1").display()),
            // Where every agent keeps its records is one command away.
            format!(
                "none there yet where any of the {} agents Bee reads keeps them: `beectl agents` lists each place",
                bee_proto::ledger::Provider::ALL.len()
            ),
            "beectl daemon start".to_owned(),
            "beectl ingest".to_owned(),
        ] {
            assert!(message.contains(&part), "{args:?}: {part:?} not in {message:?}");
        }
        assert!(!message.contains("spool"), "nothing waits: {message}");
    }
    assert!(!home.bee_dir().exists(), "looking created nothing");
    // Logs exist but nothing imported them yet (quota only reads).
    std::fs::create_dir_all(home.path().join(".claude/projects")).unwrap();
    let message = json_of(&home.beectl(&["quota"]))["message"].as_str().unwrap().to_owned();
    assert!(!message.contains("none there yet"), "{message}");
    let found = home.path().join(".claude/projects").display().to_string();
    assert!(message.contains(&format!("the agents' own records ({found})")), "only what is there: {message}");
}

#[test]
fn ledger_views_reject_bad_ranges() {
    let home = TestHome::new();
    for args in [
        vec!["quota", "--window", "3h"],
        vec!["quota", "--window", "5h", "--since", "2026-11-30T00:00:00Z"],
        vec!["quota", "--since", "tomorrow"],
        vec!["status", "--since", "2026-11-30", "--until", "2026-11-29"],
        vec!["usage", "--by", "fortnight"],
        vec!["usage", "--since", "next tuesday"],
        vec!["usage", "--until", "2026-02-30"],
        vec!["usage", "--timezone", "Mars/Olympus"],
        vec!["usage", "--json", "--format", "table"],
        vec!["usage", "--prices", "/nonexistent/prices.json"],
        vec!["quota", "--provider", "not-an-agent"],
        vec!["run", "--provider", "claude"],
        vec!["run", "--provider", "claude", "--"],
        vec!["run", "--", "claude"],
    ] {
        let output = home.beectl(&args);
        assert_eq!(output.status.code(), Some(4), "{args:?}");
    }
    let backwards =
        home.beectl(&["usage", "--by", "day", "--since", "2026-11-30T00:00:00Z", "--until", "2026-11-29T00:00:00Z"]);
    assert_eq!(backwards.status.code(), Some(4));
    assert!(!home.bee_dir().exists(), "reading created nothing");
}

#[test]
fn the_status_line_passes_through_and_records_quota_snapshots() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let input = |used: f64| {
        serde_json::to_vec(&json!({
            "hook_event_name": "Status", "session_id": "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d",
            "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
            "workspace": {"current_dir": "/home/dev/app", "project_dir": "/home/dev/app"},
            "rate_limits": {"five_hour": {"used_percentage": used, "resets_at": 1796040000u64},
                            "seven_day": {"used_percentage": 12.0, "resets_at": 1796300000u64}}
        }))
        .unwrap()
    };
    let script = "input=$(cat); printf '[%s] Sonnet' \"$(printf %s \"$input\" | wc -c | tr -d ' ')\"; exit 0";
    for used in [40.0, 40.0, 72.5] {
        let stdin = input(used);
        let wrapped = home.hook(&["statusline", "--", "sh", "-c", script], &stdin).0;
        let direct = run_with(&home, "sh", &["-c", script], &stdin, &[]);
        assert_eq!(
            (wrapped.stdout.clone(), wrapped.stderr.clone(), wrapped.status.code()),
            (direct.stdout, direct.stderr, direct.status.code())
        );
    }
    home.settle();
    let quota = json_of(&home.beectl(&["quota", "--provider", "claude"]));
    let windows = &quota["providers"][0]["windows"];
    assert_eq!(windows.as_array().unwrap().len(), 2, "{quota}");
    let five_hour = windows.as_array().unwrap().iter().find(|w| w["window"] == "five_hour").unwrap();
    assert_eq!((five_hour["peakPercent"].clone(), five_hour["snapshots"].clone()), (json!(72.5), json!(2)));
    assert_eq!(five_hour["resetsAtUtc"], "2026-11-30T12:00:00.000Z");
    assert_eq!(five_hour["exhausted"], false);
    drop(daemon);
}

#[test]
fn an_interactive_turn_is_one_call_from_its_hooks_and_its_tokens_come_from_the_log() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let session = "7e8f9a0b-1c2d-4e3f-8a9b-0c1d2e3f4a5b";
    let dir = home.path().join(".claude/projects/-home-dev-app");
    std::fs::create_dir_all(&dir).unwrap();
    let transcript = dir.join(format!("{session}.jsonl"));
    let envelope = |event: &str| {
        serde_json::to_vec(&json!({"session_id": session, "transcript_path": transcript, "cwd": "/home/dev/app",
            "permission_mode": "default", "hook_event_name": event, "prompt": "refactor", "stop_hook_active": false}))
        .unwrap()
    };
    let start = home.hook(&["turn"], &envelope("UserPromptSubmit")).0;
    assert_eq!((start.stdout.clone(), start.status.code()), (Vec::new(), Some(0)), "a turn mark prints nothing");
    // The turn's responses as Claude Code writes them: the first streamed
    // twice, a second response, the limit notice.
    let now = bee_proto::time::now_rfc3339();
    let response = |id: &str, output: u64| {
        json!({"sessionId": session, "timestamp": now, "requestId": format!("req_{id}"), "type": "assistant",
               "message": {"id": id, "model": "claude-opus-4-1", "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 50, "output_tokens": output}}})
        .to_string()
            + "\n"
    };
    let limit = json!({"sessionId": session, "timestamp": now, "type": "assistant", "isApiErrorMessage": true,
        "message": {"id": "msg_limit", "model": "<synthetic>", "content": [{"type": "text", "text": "Claude AI usage limit reached|1796040000"}],
                    "usage": {"input_tokens": 0, "output_tokens": 0}}})
    .to_string()
        + "\n";
    // Stop fires before Claude Code has written the turn's last lines (it
    // writes them tens of milliseconds later; for a new session the file
    // may not even exist yet).
    std::thread::sleep(std::time::Duration::from_millis(20));
    let stop = home.hook(&["turn"], &envelope("Stop")).0;
    assert_eq!(stop.status.code(), Some(0));
    std::fs::write(&transcript, [response("msg_1", 3), response("msg_1", 30), response("msg_2", 7), limit].concat())
        .unwrap();
    make_quiet(&transcript);
    assert_eq!(json_of(&home.beectl(&["ingest"]))["by"], "beed");
    let usage = json_of(&home.beectl(&["usage", "--by", "session"]));
    assert_eq!(usage["rows"][0]["key"], session);
    assert_eq!(usage["rows"][0]["responses"], 2, "{usage}");
    assert_eq!(usage["rows"][0]["tokens"]["outputTokens"], 37, "the last response, written after Stop, counts");
    assert_eq!(usage["rows"][0]["tokens"]["cacheReadInputTokens"], 100);
    assert_eq!(usage["rows"][0]["producerCountedCalls"], 0, "the turn's session has a log");
    assert_eq!(usage["issues"], json!([]));
    let quota = json_of(&home.beectl(&["quota"]));
    assert_eq!((quota["crossed"].clone(), quota["callsWithoutDuration"].clone()), (json!(1), json!(0)));
    assert_eq!(quota["providers"][0]["calls"], 1, "the turn is the one call: responses are no calls");
    assert!(quota["agentTimeMs"].as_u64().unwrap() >= 20);
    let ledger = rusqlite::Connection::open_with_flags(
        home.bee_dir().join("usage/ledger-v1/ledger.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let frozen: Option<i64> =
        ledger.query_row("SELECT output_tokens FROM call WHERE source = 'hook_turn'", [], |r| r.get(0)).unwrap();
    assert_eq!(frozen, None, "nothing is frozen when Stop fires");
    // Ingested again: nothing counts twice.
    json_of(&home.beectl(&["ingest"]));
    let again = json_of(&home.beectl(&["usage", "--by", "session"]));
    assert_eq!(again["rows"], usage["rows"]);
    assert_eq!(json_of(&home.beectl(&["quota"]))["crossed"], 1, "the limit notice counts once");
    drop(daemon);
}

#[test]
fn commits_are_credited_to_the_provider_whose_run_made_them() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let repo = home.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str], wrap: bool| {
        let mut command = home.command(if wrap { bin("beectl").into_os_string() } else { "git".into() });
        if wrap {
            command.args(["run", "--provider", "codex", "--", "git"]);
        }
        let output = command
            .args(args)
            .current_dir(&repo)
            .env("GIT_AUTHOR_NAME", "Dev")
            .env("GIT_AUTHOR_EMAIL", "dev@example.invalid")
            .env("GIT_COMMITTER_NAME", "Dev")
            .env("GIT_COMMITTER_EMAIL", "dev@example.invalid")
            .env_remove("CLAUDECODE")
            .env_remove("CODEX_SANDBOX")
            .env_remove("CODEX_SANDBOX_NETWORK_DISABLED")
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    };
    git(&["init", "-q"], false);
    let hook = repo.join(".git/hooks/post-commit");
    std::fs::write(&hook, format!("#!/bin/sh\nexec '{}' commit\n", bin("bee-hook").display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // By hand: nobody to credit.
    git(&["commit", "-q", "--allow-empty", "-m", "by hand"], false);
    // Through `beectl run`: credited to codex.
    git(&["commit", "-q", "--allow-empty", "-m", "by the agent"], true);
    home.settle();
    let quota = json_of(&home.beectl(&["quota"]));
    assert_eq!(quota["converted"], 1, "{quota}");
    let codex = quota["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "codex").unwrap();
    assert_eq!(codex["converted"], 1);
    drop(daemon);
}

/// A provider CLI that answers by its arguments: `--version` and `mcp` make
/// no model call; a prompt about "fail" fails before any request (as Claude
/// Code does without credentials); anything else is a normal call.
const GRAMMAR_CLAUDE: &str = r#"
case "$1" in --version) echo "2.1.332 (Claude Code)"; exit 0;; mcp) echo "No MCP servers configured."; exit 0;; esac
for arg in "$@"; do
  if [ "$arg" = "fail" ]; then
    printf '%s\n' '{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"result":"Invalid API key","session_id":"9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}'
    exit 1
  fi
done
printf '%s\n' '{"type":"assistant","message":{"id":"msg_1"}}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d","total_cost_usd":0.001,"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}'
"#;

fn outcomes(home: &TestHome) -> Vec<String> {
    let ledger = rusqlite::Connection::open_with_flags(
        home.bee_dir().join("usage/ledger-v1/ledger.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut statement = ledger.prepare("SELECT outcome FROM call ORDER BY started_at_ms").unwrap();
    statement.query_map([], |row| row.get::<_, String>(0)).unwrap().map(Result::unwrap).collect()
}

#[test]
fn probes_follow_the_cli_grammar_and_a_call_that_failed_early_is_still_a_call() {
    let home = TestHome::new();
    // An executable, as the real CLI is: its arguments are the CLI's own.
    let script = home.file("claude", format!("#!/bin/sh{GRAMMAR_CLAUDE}").as_bytes());
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let script = script.to_str().unwrap();
    let daemon = home.start_daemon();
    let beectl = bin("beectl");
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--provider", "claude", "--", script];
        all.extend_from_slice(args);
        run_with(&home, beectl.to_str().unwrap(), &all, b"", &[])
    };
    assert_eq!(run(&["--version"]).status.code(), Some(0));
    assert_eq!(run(&["mcp", "list"]).status.code(), Some(0));
    // "help" is the prompt here, not the help command: a real call.
    assert_eq!(run(&["-p", "help", "--output-format", "json"]).status.code(), Some(0));
    assert_eq!(run(&["-p", "fail", "--output-format", "json"]).status.code(), Some(1));
    assert_eq!(outcomes(&home), ["completed", "failed_before_request"], "probes are not calls; the rest are");
    drop(daemon);
}

/// A provider CLI that runs until a signal, notes which one reached it, and
/// exits as a shell does on it.
const LONG_CLAUDE: &str = r#"
trap 'echo TERM > "$MARKS/got"; exit 143' TERM
trap 'echo INT > "$MARKS/got"; exit 130' INT
trap 'echo HUP > "$MARKS/got"; exit 129' HUP
echo $$ > "$MARKS/pid"
sleep 30 &
wait
"#;

#[test]
fn a_signal_to_the_run_reaches_the_provider_which_is_waited_for_and_the_call_is_interrupted() {
    let home = TestHome::new();
    let script = home.file("long-claude.sh", LONG_CLAUDE.as_bytes());
    let daemon = home.start_daemon();
    let mut expected = Vec::new();
    for (signal, code, name) in [
        (rustix::process::Signal::TERM, 143, "TERM"),
        (rustix::process::Signal::INT, 130, "INT"),
        (rustix::process::Signal::HUP, 129, "HUP"),
    ] {
        let marks = home.path().join(format!("marks-{name}"));
        std::fs::create_dir_all(&marks).unwrap();
        let mut command = home.command(bin("beectl"));
        command
            .args(["run", "--provider", "claude", "--", "sh"])
            .arg(&script)
            .args(["-p", "long task"])
            .env("MARKS", &marks)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = command.spawn().unwrap();
        // The shell creates the file before it writes the pid into it: wait
        // for the pid itself, not for the file.
        let pid_written = || std::fs::read_to_string(marks.join("pid")).ok()?.trim().parse::<i32>().ok();
        assert!(eventually(std::time::Duration::from_secs(10), || pid_written().is_some()));
        let provider_pid = pid_written().unwrap();
        rustix::process::kill_process(rustix::process::Pid::from_raw(child.id() as i32).unwrap(), signal).unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(code), "beectl exits as the provider did on {name}");
        assert_eq!(std::fs::read_to_string(marks.join("got")).unwrap().trim(), name, "forwarded, not swallowed");
        let alive = rustix::process::test_kill_process(rustix::process::Pid::from_raw(provider_pid).unwrap()).is_ok();
        assert!(!alive, "the provider was waited for, never left running");
        expected.push("interrupted".to_owned());
    }
    assert_eq!(outcomes(&home), expected);
    drop(daemon);
}

/// Each call's outcome and measured duration, in the order they started.
fn calls(home: &TestHome) -> Vec<(String, i64)> {
    let ledger = rusqlite::Connection::open_with_flags(
        home.bee_dir().join("usage/ledger-v1/ledger.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut statement = ledger.prepare("SELECT outcome, duration_ms FROM call ORDER BY started_at_ms").unwrap();
    statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// A provider CLI that notes the signals QUIT and USR1 and exits as a shell
/// does on them; ignores INT and then finishes; leaves a process holding
/// its output; or cannot be started at all: beectl forwards every signal,
/// calls the run interrupted only when the CLI ended by the signal, ends
/// the call when the CLI exits, and records a CLI that never started as a
/// call that failed before its request.
#[test]
fn every_signal_is_forwarded_and_the_outcome_and_duration_are_the_cli_s_own() {
    let home = TestHome::new();
    let daemon = home.start_daemon();
    let marks = home.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let script = home.file(
        "signals.sh",
        br#"
trap 'echo QUIT >> "$MARKS/got"; exit 131' QUIT
trap 'echo USR1 >> "$MARKS/got"; exit 138' USR1
trap 'echo INT >> "$MARKS/got"' INT
echo $$ > "$MARKS/pid"
case "$MODE" in
  finish) sleep 1; echo done ;;
  linger) (sleep 4; echo late) & sleep 0.2; exit 0 ;;
  *) while :; do sleep 0.1; done ;;
esac
"#,
    );
    let run = |mode: &str| {
        let _ = std::fs::remove_file(marks.join("pid"));
        let mut command = home.command(bin("beectl"));
        command
            .args(["run", "--provider", "claude", "--", "sh"])
            .arg(&script)
            .args(["-p", "a task"])
            .env("MARKS", &marks)
            .env("MODE", mode)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = command.spawn().unwrap();
        let pid_written = || std::fs::read_to_string(marks.join("pid")).ok()?.trim().parse::<i32>().ok();
        assert!(eventually(std::time::Duration::from_secs(10), || pid_written().is_some()));
        (child, pid_written().unwrap())
    };
    for (signal, code) in [(rustix::process::Signal::QUIT, 131), (rustix::process::Signal::USR1, 138)] {
        let (child, provider) = run("wait");
        rustix::process::kill_process(rustix::process::Pid::from_raw(child.id() as i32).unwrap(), signal).unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(code), "{signal:?}");
        let alive = rustix::process::test_kill_process(rustix::process::Pid::from_raw(provider).unwrap()).is_ok();
        assert!(!alive, "{signal:?}: the provider is never left running");
    }
    assert_eq!(std::fs::read_to_string(marks.join("got")).unwrap(), "QUIT\nUSR1\n", "forwarded, not swallowed");
    // beectl killed outright (SIGKILL, which nothing can catch): the kernel
    // ends the CLI with it, never left running orphaned.
    let (mut child, provider) = run("wait");
    child.kill().unwrap();
    child.wait().unwrap();
    let gone = || rustix::process::test_kill_process(rustix::process::Pid::from_raw(provider).unwrap()).is_err();
    assert!(eventually(std::time::Duration::from_secs(5), gone), "the CLI outlived a killed beectl");
    // A Ctrl-C the CLI ignores, after which it finishes its work: completed.
    let (child, _) = run("finish");
    std::thread::sleep(std::time::Duration::from_millis(200));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    // A process left holding the output: the call ends when the CLI exits.
    let began = std::time::Instant::now();
    let (child, _) = run("linger");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("late"), "its output still passes through");
    assert!(began.elapsed() >= std::time::Duration::from_secs(3));
    // A CLI that cannot be started: 127, and a call that failed before its request.
    let missing = home.beectl(&["run", "--provider", "claude", "--", "/nonexistent/claude", "-p", "x"]);
    assert_eq!(missing.status.code(), Some(127));
    home.settle();
    let recorded = calls(&home);
    let outcomes: Vec<&str> = recorded.iter().map(|(outcome, _)| outcome.as_str()).collect();
    assert_eq!(outcomes, ["interrupted", "interrupted", "completed", "completed", "failed_before_request"]);
    let lingered = recorded[3].1;
    assert!(lingered < 2_000, "the call ended when the CLI exited, not its lingering child: {lingered} ms");
    drop(daemon);
}
