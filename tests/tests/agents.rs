//! The agents beyond Claude Code and Codex, each its real CLI (pinned in
//! `tests/node`) driven headless against a mock of its provider's API: a
//! prompt, a turn with a tool call (two requests), a resumed session, and
//! a request the mock refuses. `beectl usage --by day|session|model`
//! equals what the mock served, counter by counter, offline and through
//! beed alike; ingesting again adds nothing.
//!
//! What an agent's own records leave out is left out of the expectation,
//! and named: Gemini CLI's routing call before each prompt (a JSON-mode
//! request) and OpenCode's and Kilo's title call (a request offering no
//! tools).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::providers::{MockProvider, Served, assert_columns_add_up, usage_sums};
use bee_tests::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A pinned agent CLI's launcher in `tests/node`.
fn node_cli(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node/node_modules/.bin").join(name);
    assert!(path.exists(), "this test needs the real {name} CLI: `npm install --prefix tests/node` (.ci/run does it)");
    path
}

/// One agent's CLI against its mock, in a test home.
struct Driven {
    home: TestHome,
    mock: MockProvider,
    cli: PathBuf,
    project: PathBuf,
    env: Vec<(&'static str, String)>,
    args: Vec<String>,
    /// The CLI's flag before a prompt, if it takes one.
    prompt_flag: Option<&'static str>,
}

impl Driven {
    fn new(cli: &str, mock: MockProvider) -> Driven {
        let home = TestHome::new();
        let project = home.path().join("app");
        std::fs::create_dir_all(&project).unwrap();
        Driven { home, mock, cli: node_cli(cli), project, env: Vec::new(), args: Vec::new(), prompt_flag: Some("-p") }
    }

    /// The CLI with `args`, headless, in the project; its output.
    fn run(&self, args: &[&str]) -> Output {
        let mut command: Command = self.home.command(&self.cli);
        command.current_dir(&self.project).env("PWD", &self.project).env("NO_COLOR", "1").stdin(Stdio::null());
        for (name, value) in &self.env {
            command.env(name, value);
        }
        let output = command.args(&self.args).args(args).output().unwrap();
        let printed = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        let refused = args.iter().any(|a| a.contains("APIERROR"));
        assert!(output.status.success() || refused, "{} {args:?} failed: {printed}", self.cli.display());
        output
    }

    fn beectl(&self, args: &[&str]) -> Value {
        parse_json_line(&self.home.beectl(args).stdout)
    }

    /// A prompt: `prompt` after the CLI's flag for one, after `before`.
    fn ask(&self, before: &[&str], prompt: &str) -> Output {
        let mut args = before.to_vec();
        args.extend(self.prompt_flag);
        args.push(prompt);
        self.run(&args)
    }

    /// A prompt, a tool turn, the session resumed (`resume`: the CLI's
    /// arguments for it), then forked (`fork`, where the CLI forks), and a
    /// refused request.
    fn converse(&self, tool: &str, resume: &[&str], fork: Option<&[&str]>) {
        self.ask(&[], "hello there");
        self.ask(&[], tool);
        self.ask(resume, "and once more");
        if let Some(fork) = fork {
            // A fork copies the parent's records: counted once.
            self.ask(fork, "forked");
        }
        self.ask(&[], "APIERROR please");
        let last = self.mock.requests().last().map(|(path, body)| format!("{path} {body}")).unwrap_or_default();
        assert!(
            self.mock.refused() >= 1,
            "the mock refused the request; the last was {}",
            &last[last.len().saturating_sub(3000)..]
        );
    }

    /// Ingests, then checks every grouping against `expected`, offline
    /// and through beed, and that a second ingestion adds nothing.
    /// `unreported`: the columns this agent never reports, `null` in every
    /// row; `leaves_out`: whether its records leave some calls out, which
    /// every report must say.
    fn assert_usage_equals(&self, provider: &str, expected: &Value, unreported: &[&str], leaves_out: bool) {
        let ingested = self.beectl(&["ingest"]);
        assert!(ingested["summary"]["recordsAppended"].as_u64().unwrap_or(0) > 0, "{ingested}");
        let offline = self.reports(provider, expected, unreported);
        for report in &offline {
            let said = report["issues"].as_array().unwrap().contains(&json!("unrecorded_calls"));
            assert_eq!(said, leaves_out, "{report}");
            assert_eq!(
                report["unrecordedCalls"].as_array().is_some_and(|calls| calls[0]["agent"] == provider),
                leaves_out
            );
        }
        self.assert_listed(provider, expected);
        let again = self.beectl(&["ingest"]);
        assert_eq!(again["summary"]["recordsAppended"], 0, "nothing is read twice: {again}");
        let daemon = self.home.start_daemon_with(&["--ingest-every", "0"]);
        let through_beed = self.reports(provider, expected, unreported);
        daemon.stop();
        assert_eq!(offline, through_beed, "the daemon path and the offline path answer alike");
    }

    /// `beectl agents` lists the agent: its records found and read, the
    /// responses counted, and the very CLI version the test drove.
    fn assert_listed(&self, provider: &str, expected: &Value) {
        let listing = self.beectl(&["agents", "--json"]);
        let row = listing["agents"].as_array().unwrap().iter().find(|row| row["agent"] == provider).unwrap().clone();
        assert_eq!(row["found"], true, "{row}");
        assert!(row["files"].as_u64().unwrap() > 0 && row["files"] == row["filesRead"], "{row}");
        assert_eq!(row["responses"], expected["responses"], "{row}");
        assert!(row["newestRecordUtc"].is_string(), "{row}");
        let package = self.cli.canonicalize().unwrap();
        let package = package.ancestors().find(|dir| dir.join("package.json").exists()).unwrap();
        let pinned: Value = serde_json::from_slice(&std::fs::read(package.join("package.json")).unwrap()).unwrap();
        assert_eq!(row["verified"], format!("real CLI {}", pinned["version"].as_str().unwrap()), "{row}");
    }

    /// Each grouping's report, checked, without the instant it was asked.
    fn reports(&self, provider: &str, expected: &Value, unreported: &[&str]) -> Vec<Value> {
        ["day", "session", "model"]
            .into_iter()
            .map(|by| {
                let report = self.beectl(&["usage", "--by", by, "--provider", provider]);
                assert_json_eq(&usage_sums(&report, expected), expected);
                assert_columns_add_up(&report);
                let rows = report["rows"].as_array().unwrap();
                for column in unreported {
                    assert!(
                        rows.iter().all(|row| row["tokens"][column].is_null()),
                        "{column} is null, never 0: {report}"
                    );
                }
                let mut report = report;
                report["untilUtc"] = Value::Null;
                report
            })
            .collect()
    }
}

/// Responses the agent's own records keep: all but its side calls.
fn main_calls(served: &Served) -> bool {
    !served.side
}

#[test]
fn gemini_cli_counts_each_served_response_its_chats_record() {
    let mut gemini = Driven::new("gemini", MockProvider::gemini());
    let settings = gemini.home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string()).unwrap();
    gemini.env = vec![
        ("GOOGLE_GEMINI_BASE_URL", gemini.mock.base_url()),
        ("GEMINI_API_KEY", "not-a-real-key".into()),
        ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
    ];
    gemini.args = vec!["--approval-mode".into(), "yolo".into()];
    gemini.converse("please TOOL now", &["--resume", "latest"], None);
    let served = gemini.mock.served();
    assert!(served.iter().any(|s| s.side), "the CLI routed its prompts with a JSON-mode call");
    assert!(served.iter().filter(|s| !s.side).count() >= 4, "prompt, two of the tool turn, the resumed one");
    gemini.assert_usage_equals("gemini", &gemini.mock.served_usage_of(main_calls), &["cacheCreationInputTokens"], true);
}

#[test]
fn qwen_code_counts_every_served_response_side_calls_included() {
    let mut qwen = Driven::new("qwen", MockProvider::chat());
    qwen.env = vec![
        ("OPENAI_BASE_URL", format!("{}/v1", qwen.mock.base_url())),
        ("OPENAI_API_KEY", "not-a-real-key".into()),
        ("OPENAI_MODEL", "qwen3-coder-plus".into()),
        ("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1".into()),
    ];
    qwen.args = vec!["--yolo".into()];
    qwen.converse("please TOOL now", &["--continue"], Some(&["--continue", "--fork-session"]));
    qwen.assert_usage_equals("qwen", &qwen.mock.served_usage(), &["cacheCreationInputTokens"], false);
}

/// An OpenCode-family CLI (`cli`, its config at `~/.config/<config>`)
/// with a custom OpenAI-compatible provider pointing at the mock: each
/// response once through a fork, its session title call named as left out.
fn opencode_family_counts_each_response_once_through_a_fork(cli: &str, config: &str, agent: &str) {
    let mut driven = Driven::new(cli, MockProvider::chat());
    let config = driven.home.path().join(".config").join(config);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let provider = json!({"npm": "@ai-sdk/openai-compatible", "name": "Mock",
        "options": {"baseURL": format!("{}/v1", driven.mock.base_url()), "apiKey": "not-a-real-key"},
        "models": {"qwen3-coder-plus": {"name": "Qwen3 Coder Plus"}}});
    let settings = json!({"autoupdate": false, "share": "disabled", "provider": {"mock": provider},
        "model": "mock/qwen3-coder-plus"});
    std::fs::write(&config, settings.to_string()).unwrap();
    let home = driven.home.path().to_owned();
    driven.env = vec![
        ("XDG_CONFIG_HOME", home.join(".config").display().to_string()),
        ("XDG_DATA_HOME", home.join(".local/share").display().to_string()),
        ("XDG_CACHE_HOME", home.join(".cache").display().to_string()),
        ("XDG_STATE_HOME", home.join(".local/state").display().to_string()),
    ];
    driven.args = vec!["run".into()];
    driven.prompt_flag = None;
    // The fork copies every earlier message under new ids.
    driven.converse("please TOOL now", &["--continue"], Some(&["--continue", "--fork"]));
    assert!(driven.mock.served().iter().any(|s| s.side), "{cli} titled its sessions");
    driven.assert_usage_equals(agent, &driven.mock.served_usage_of(main_calls), &[], true);
}

#[test]
fn opencode_counts_each_response_once_through_a_fork() {
    opencode_family_counts_each_response_once_through_a_fork("opencode", "opencode/opencode.json", "opencode");
}

/// Kilo, OpenCode's fork: its own database, read by OpenCode's reader.
#[test]
fn kilo_counts_each_response_once_through_a_fork() {
    opencode_family_counts_each_response_once_through_a_fork("kilo", "kilo/kilo.json", "kilo");
}

#[test]
fn pi_counts_each_served_response_once() {
    let mut pi = Driven::new("pi", MockProvider::anthropic());
    let models = pi.home.path().join(".pi/agent/models.json");
    std::fs::create_dir_all(models.parent().unwrap()).unwrap();
    let mock = json!({"baseUrl": pi.mock.base_url(), "api": "anthropic-messages", "apiKey": "not-a-real-key",
        "models": [{"id": "claude-sonnet-4-5"}]});
    std::fs::write(&models, json!({"providers": {"mock": mock}}).to_string()).unwrap();
    pi.env = vec![("PI_OFFLINE", "1".into())];
    pi.args = ["--provider", "mock", "--model", "claude-sonnet-4-5"].map(str::to_owned).to_vec();
    pi.converse("please TOOL:notes.txt now", &["-c"], None);
    pi.assert_usage_equals("pi", &pi.mock.served_usage(), &["reasoningOutputTokens"], true);
}

/// Every agent's records in one home, each at its default place: `beectl
/// agents` finds and reads every one; `usage` (every grouping, offline and
/// through beed), `quota` and `status` cover each agent; each agent's
/// columns add up; an agent whose records leave calls out says so, and
/// one that keeps no tokens (Crush) shows them `null`, never 0; the export
/// series carry every agent. A second ingestion adds nothing.
#[test]
fn every_view_covers_every_agent() {
    let home = TestHome::new();
    let expected = bee_tests::every_agent::write_every_agent(&home);
    let beectl = |args: &[&str]| parse_json_line(&home.beectl(args).stdout);
    let ingested = beectl(&["ingest"]);
    // The broken lines the fixtures hold on purpose: Copilot's two, Kimi's
    // two, OpenClaw's one.
    assert_eq!(ingested["summary"]["unparseableLines"], 5, "{ingested}");
    assert_eq!(beectl(&["ingest"])["summary"]["recordsAppended"], 0, "nothing is read twice");
    let listing = beectl(&["agents", "--json"]);
    let rows = listing["agents"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len() + 1, "every agent of the registry is listed (Codex, here without records)");
    for agent in &expected {
        let row = rows.iter().find(|row| row["agent"] == agent.agent).unwrap();
        assert_eq!((row["found"].clone(), row["responses"].clone()), (json!(true), json!(agent.responses)), "{row}");
        assert!(row["files"].as_u64().unwrap() > 0 && row["files"] == row["filesRead"], "{row}");
    }
    let views = |home: &TestHome| -> Vec<Value> {
        let beectl = |args: &[&str]| parse_json_line(&home.beectl(args).stdout);
        let mut reports = Vec::new();
        for agent in &expected {
            for by in ["day", "week", "month", "session", "model", "block"] {
                let mut report = beectl(&["usage", "--by", by, "--provider", agent.agent, "--since", "2026-01-01"]);
                let name = agent.agent;
                assert_eq!(report["totals"]["responses"], agent.responses, "{name} by {by}: {report}");
                assert_columns_add_up(&report);
                let said = report["issues"].as_array().unwrap().contains(&json!("unrecorded_calls"));
                assert_eq!(said, agent.leaves_calls_out, "{name} by {by}: {report}");
                if name == "crush" {
                    assert!(report["totals"]["tokens"]["totalTokens"].is_null(), "no token is 0: {report}");
                    assert!(report["issues"].as_array().unwrap().contains(&json!("partial")), "{report}");
                }
                report["untilUtc"] = Value::Null;
                reports.push(report);
            }
        }
        for view in ["quota", "status"] {
            let report = beectl(&[view, "--json", "--since", "2026-01-01"]);
            let providers: Vec<&str> =
                report["providers"].as_array().unwrap().iter().filter_map(|p| p["provider"].as_str()).collect();
            for agent in &expected {
                assert!(providers.contains(&agent.agent), "{view} covers {}: {report}", agent.agent);
            }
        }
        reports
    };
    let offline = views(&home);
    let daemon = home.start_daemon_with(&["--ingest-every", "0"]);
    let through_beed = views(&home);
    daemon.stop();
    assert_eq!(offline, through_beed, "the daemon path and the offline path answer alike");
    let all = beectl(&["usage", "--by", "model", "--since", "2026-01-01"]);
    let responses: u64 = expected.iter().map(|agent| agent.responses).sum();
    assert_eq!(all["totals"]["responses"], responses, "{all}");
    let stores = home.export_stores();
    let (series, _, problems) =
        bee_daemon::export::read_series(&stores, "alice", "host", bee_proto::time::now_unix_ms());
    assert!(problems.is_empty(), "{problems:?}");
    for agent in &expected {
        assert!(
            series.iter().any(|s| s.labels.iter().any(|(k, v)| *k == "provider" && v == agent.agent)),
            "the export series name {}",
            agent.agent
        );
    }
}
