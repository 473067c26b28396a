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
//!
//! `--by session` shows each response in the session that made it: a fork
//! holds copies of its parent's responses (same times, same ids), which
//! count there as copied responses only. Where an agent writes its own cost
//! beside each response (OpenCode, Kilo, pi, priced here by their configs),
//! `agentCostUsd` is, day by day, the sum of what it wrote.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::providers::{MockProvider, Served, assert_columns_add_up, usage_sums};
use bee_tests::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A pinned agent CLI's launcher in `tests/node`, and its version.
fn node_cli(name: &str) -> (PathBuf, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node/node_modules/.bin").join(name);
    assert!(path.exists(), "this test needs the real {name} CLI: `npm install --prefix tests/node` (.ci/run does it)");
    let package = path.canonicalize().unwrap();
    let package = package.ancestors().find(|dir| dir.join("package.json").exists()).unwrap();
    let pinned: Value = serde_json::from_slice(&std::fs::read(package.join("package.json")).unwrap()).unwrap();
    (path, pinned["version"].as_str().unwrap().to_owned())
}

/// A pinned agent CLI's launcher in the Python environment `.ci/run`
/// makes (`tests/python/.venv`, from `tests/python/requirements.txt`), and
/// the version of `distribution` installed there.
fn python_cli(name: &str, distribution: &str) -> (PathBuf, String) {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/.venv");
    let path = venv.join("bin").join(name);
    assert!(
        path.exists(),
        "this test needs the real {name} CLI: `python3 -m venv tests/python/.venv && \
         tests/python/.venv/bin/pip install -r tests/python/requirements.txt` (.ci/run does it)"
    );
    let prefix = format!("{}-", distribution.replace('-', "_"));
    let version = files_under(&venv.join("lib"))
        .iter()
        .filter_map(|file| file.parent()?.file_name()?.to_str()?.strip_suffix(".dist-info")?.strip_prefix(&prefix))
        .map(str::to_owned)
        .next()
        .unwrap_or_else(|| panic!("{distribution} is installed in {}", venv.display()));
    (path, version)
}

/// One agent's CLI against its mock, in a test home.
struct Driven {
    home: TestHome,
    mock: MockProvider,
    cli: PathBuf,
    /// The version of the CLI driven, as its package says.
    version: String,
    project: PathBuf,
    env: Vec<(&'static str, String)>,
    args: Vec<String>,
    /// The CLI's flag before a prompt, if it takes one.
    prompt_flag: Option<&'static str>,
}

impl Driven {
    fn new(cli: &str, mock: MockProvider) -> Driven {
        Driven::with(node_cli(cli), mock)
    }

    /// The CLI at a launcher, of a version.
    fn with((cli, version): (PathBuf, String), mock: MockProvider) -> Driven {
        let home = TestHome::new();
        let project = home.path().join("app");
        std::fs::create_dir_all(&project).unwrap();
        Driven { home, mock, cli, version, project, env: Vec::new(), args: Vec::new(), prompt_flag: Some("-p") }
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
    /// arguments for it), then forked (`fork`, where the CLI forks: given
    /// the CLI's home, its arguments), and a refused request. Where each
    /// step's responses went (see [`Steps`]).
    fn converse(&self, tool: &str, resume: &[&str], fork: Option<ForkArgs<'_>>) -> Steps {
        let mut steps = Steps::default();
        self.ask(&[], "hello there");
        steps.ended(&self.mock, Session::First);
        self.ask(&[], tool);
        steps.ended(&self.mock, Session::Resumed);
        self.ask(resume, "and once more");
        steps.ended(&self.mock, Session::Resumed);
        if let Some(fork) = fork {
            // A fork copies the parent's records: counted once, in the parent.
            let args = fork(self);
            self.ask(&args.iter().map(String::as_str).collect::<Vec<_>>(), "forked");
            steps.ended(&self.mock, Session::Fork);
        }
        self.ask(&[], "APIERROR please");
        steps.ended(&self.mock, Session::Refused);
        let last = self.mock.requests().last().map(|(path, body)| format!("{path} {body}")).unwrap_or_default();
        assert!(
            self.mock.refused() >= 1,
            "the mock refused the request; the last was {}",
            &last[last.len().saturating_sub(3000)..]
        );
        steps
    }

    /// `beectl usage --by session`: each session row's own responses and
    /// copied ones are what `steps` served to it (those `keep` keeps, as
    /// the agent's records do); a fork copied every response of the
    /// session it forked.
    fn assert_sessions(&self, provider: &str, steps: &Steps, keep: impl Fn(&Served) -> bool) {
        let served = self.mock.served();
        let mut made: std::collections::BTreeMap<Session, u64> = Default::default();
        let mut from = 0;
        for &(to, session) in &steps.0 {
            *made.entry(session).or_default() += served[from..to].iter().filter(|s| keep(s)).count() as u64;
            from = to;
        }
        let copied = |session: &Session| if *session == Session::Fork { made[&Session::Resumed] } else { 0 };
        let mut expected: Vec<(u64, u64)> = made
            .iter()
            .map(|(session, &responses)| (responses, copied(session)))
            .filter(|&(responses, copied)| responses + copied > 0)
            .collect();
        expected.sort();
        let report = self.beectl(&["usage", "--by", "session", "--provider", provider]);
        let mut rows: Vec<(u64, u64)> = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| (row["responses"].as_u64().unwrap(), row["copiedResponses"].as_u64().unwrap_or(0)))
            .collect();
        rows.sort();
        assert_eq!(rows, expected, "each response in the session that made it (responses, copied): {report}");
    }

    /// `agentCostUsd` of each `--by day` row and of the totals is the sum of
    /// what the agent wrote beside each of its responses on that day
    /// (`written`: the day and cost of each, once).
    fn assert_agent_costs(&self, provider: &str, written: &[(String, f64)]) {
        let mut by_day: std::collections::BTreeMap<&str, f64> = Default::default();
        for (day, usd) in written {
            *by_day.entry(day).or_default() += usd;
        }
        assert!(by_day.values().sum::<f64>() > 0.0, "the agent priced its responses: {written:?}");
        let report = self.beectl(&["usage", "--by", "day", "--provider", provider]);
        let rows = report["rows"].as_array().unwrap();
        assert_eq!(rows.len(), by_day.len(), "{report}");
        for row in rows {
            let day = row["key"].as_str().unwrap();
            let usd = row["agentCostUsd"].as_f64().unwrap_or(f64::NAN);
            assert!((usd - by_day[day]).abs() < 1e-8, "{day}: {usd} vs {} written: {report}", by_day[day]);
            assert!(row.get("agentCostUnknownParts").is_none(), "every response carried its cost: {row}");
        }
        let total = report["totals"]["agentCostUsd"].as_f64().unwrap_or(f64::NAN);
        assert!((total - by_day.values().sum::<f64>()).abs() < 1e-8, "{report}");
    }

    /// An agent that writes no cost of its own: `agentCostUsd` is `null`
    /// everywhere, never 0.
    fn assert_no_agent_cost(&self, provider: &str) {
        let report = self.beectl(&["usage", "--by", "day", "--provider", provider]);
        let rows = report["rows"].as_array().unwrap().iter().chain([&report["totals"]]);
        for row in rows {
            assert!(row["agentCostUsd"].is_null(), "{row}");
        }
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
        assert_eq!(row["verified"], format!("real CLI {}", self.version), "{row}");
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

/// A CLI's arguments to fork the session just resumed, given the CLI as
/// driven (its home holds the session to fork).
type ForkArgs<'a> = &'a dyn Fn(&Driven) -> Vec<String>;

/// Responses the agent's own records keep: all but its side calls.
fn main_calls(served: &Served) -> bool {
    !served.side
}

/// Every response served.
fn all_calls(_: &Served) -> bool {
    true
}

/// The session a step's prompt went to: a new one, the one resumed (the
/// tool turn's, which the resume goes on), a fork of that one, and a new
/// one for the refused request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Session {
    First,
    Resumed,
    Fork,
    Refused,
}

/// How many responses the mock had served when each step ended, and the
/// session the step's prompt went to.
#[derive(Debug, Default)]
struct Steps(Vec<(usize, Session)>);

impl Steps {
    fn ended(&mut self, mock: &MockProvider, session: Session) {
        self.0.push((mock.served().len(), session));
    }
}

/// The UTC day (`YYYY-MM-DD`) of unix milliseconds, as `--by day` keys it
/// in the tests' zone.
fn day_of(ms: i64) -> String {
    bee_proto::time::format_unix_ms(ms)[..10].to_owned()
}

/// The files under `dir`, sorted.
fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() { dirs.push(path) } else { files.push(path) }
        }
    }
    files.sort();
    files
}

#[test]
fn gemini_cli_counts_each_served_response_its_chats_record() {
    let mut gemini = Driven::new("gemini", MockProvider::gemini());
    let settings = gemini.home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // Session retention off: 0.61.0's cleanup at start-up runs beside the
    // new session and deletes every chat file holding no message yet, its
    // own included, when the machine is busy (its records then lost).
    let settings_json = json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"sessionRetention": {"enabled": false}}});
    std::fs::write(&settings, settings_json.to_string()).unwrap();
    gemini.env = vec![
        ("GOOGLE_GEMINI_BASE_URL", gemini.mock.base_url()),
        ("GEMINI_API_KEY", "not-a-real-key".into()),
        ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
    ];
    gemini.args = vec!["--approval-mode".into(), "yolo".into()];
    let steps = gemini.converse("please TOOL now", &["--resume", "latest"], None);
    let served = gemini.mock.served();
    assert!(served.iter().any(|s| s.side), "the CLI routed its prompts with a JSON-mode call");
    assert!(served.iter().filter(|s| !s.side).count() >= 4, "prompt, two of the tool turn, the resumed one");
    gemini.assert_usage_equals("gemini", &gemini.mock.served_usage_of(main_calls), &["cacheCreationInputTokens"], true);
    gemini.assert_sessions("gemini", &steps, main_calls);
    gemini.assert_no_agent_cost("gemini");
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
    let fork = |_: &Driven| vec!["--continue".to_owned(), "--fork-session".to_owned()];
    let steps = qwen.converse("please TOOL now", &["--continue"], Some(&fork));
    qwen.assert_usage_equals("qwen", &qwen.mock.served_usage(), &["cacheCreationInputTokens"], false);
    // The fork's id sorts before its parent's as often as not (both random).
    qwen.assert_sessions("qwen", &steps, all_calls);
    qwen.assert_no_agent_cost("qwen");
}

/// An OpenCode-family CLI (`cli`, its config at `~/.config/<config>`)
/// with a custom OpenAI-compatible provider pointing at the mock: each
/// response once through a fork, its session title call named as left out.
fn opencode_family_counts_each_response_once_through_a_fork(cli: &str, config: &str, agent: &str) {
    let mut driven = Driven::new(cli, MockProvider::chat());
    let config = driven.home.path().join(".config").join(config);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    // Priced, so that the CLI writes its own cost of each response.
    let provider = json!({"npm": "@ai-sdk/openai-compatible", "name": "Mock",
        "options": {"baseURL": format!("{}/v1", driven.mock.base_url()), "apiKey": "not-a-real-key"},
        "models": {"qwen3-coder-plus": {"name": "Qwen3 Coder Plus",
            "cost": {"input": 0.4, "output": 1.6, "cache_read": 0.1, "cache_write": 0.5}}}});
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
    // The fork copies every earlier message under new ids, into a session
    // whose id sorts first (the CLI's ids sort newest first).
    let fork = |_: &Driven| vec!["--continue".to_owned(), "--fork".to_owned()];
    let steps = driven.converse("please TOOL now", &["--continue"], Some(&fork));
    // The title call runs beside the answer, and the CLI does not wait for
    // it when it ends first (as on a busy machine): left out or not made,
    // it is never counted, and every report names it.
    if !driven.mock.served().iter().any(|s| s.side) {
        eprintln!("{cli} ended before it titled a session");
    }
    driven.assert_usage_equals(agent, &driven.mock.served_usage_of(main_calls), &[], true);
    driven.assert_sessions(agent, &steps, main_calls);
    // What the CLI wrote as each response's cost, each response once: as
    // the session that made it wrote it (a fork's copy keeps the original's
    // times, in a session begun later; Kilo writes its cost there as 0).
    let database = home.join(".local/share").join(cli).join(format!("{cli}.db"));
    let db = rusqlite::Connection::open_with_flags(&database, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut written: std::collections::BTreeMap<(i64, i64), (i64, f64)> = Default::default();
    let mut statement =
        db.prepare("SELECT m.data, s.time_created FROM message m JOIN session s ON s.id = m.session_id").unwrap();
    let rows = statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))).unwrap();
    for row in rows {
        let (data, session_began) = row.unwrap();
        let message: Value = serde_json::from_str(&data).unwrap();
        let (Some(created), Some(completed)) =
            (message["time"]["created"].as_i64(), message["time"]["completed"].as_i64())
        else {
            continue;
        };
        if message["role"] == "assistant" && message["tokens"]["input"].as_u64().unwrap_or(0) > 0 {
            let usd = message["cost"].as_f64().unwrap();
            let held = written.entry((created, completed)).or_insert((session_began, usd));
            if session_began < held.0 {
                *held = (session_began, usd);
            }
        }
    }
    let written: Vec<(String, f64)> =
        written.into_iter().map(|((created, _), (_, usd))| (day_of(created), usd)).collect();
    driven.assert_agent_costs(agent, &written);
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
    // Priced, so that the CLI writes its own cost of each response.
    let cost = json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75});
    let mock = json!({"baseUrl": pi.mock.base_url(), "api": "anthropic-messages", "apiKey": "not-a-real-key",
        "models": [{"id": "claude-sonnet-4-5", "cost": cost}]});
    std::fs::write(&models, json!({"providers": {"mock": mock}}).to_string()).unwrap();
    pi.env = vec![("PI_OFFLINE", "1".into())];
    pi.args = ["--provider", "mock", "--model", "claude-sonnet-4-5"].map(str::to_owned).to_vec();
    let sessions = pi.home.path().join(".pi/agent/sessions");
    // The newest session's file (named by its start): the one resumed.
    let fork = |pi: &Driven| {
        let newest = files_under(&pi.home.path().join(".pi/agent/sessions")).pop().unwrap();
        vec!["--fork".to_owned(), newest.display().to_string()]
    };
    let steps = pi.converse("please TOOL:notes.txt now", &["-c"], Some(&fork));
    pi.assert_usage_equals("pi", &pi.mock.served_usage(), &["reasoningOutputTokens"], true);
    pi.assert_sessions("pi", &steps, all_calls);
    // What the CLI wrote as each response's cost, each response once (a
    // fork copies its parent's entries, ids included).
    let mut written: std::collections::BTreeMap<String, (String, f64)> = Default::default();
    for file in files_under(&sessions) {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let entry: Value = serde_json::from_str(line).unwrap();
            let message = &entry["message"];
            if let (Some(id), Some(usd)) = (message["responseId"].as_str(), message["usage"]["cost"]["total"].as_f64())
            {
                written.insert(id.to_owned(), (day_of(message["timestamp"].as_i64().unwrap()), usd));
            }
        }
    }
    pi.assert_agent_costs("pi", &written.into_values().collect::<Vec<_>>());
}

/// Hermes Agent (PyPI) against an OpenAI-compatible mock: its state
/// database keeps running totals per session, model and task (a title
/// call's apart), never one call's, so each total is one entry; every
/// counter equals what the mock served, reasoning inside output once.
/// Hermes's fork (`/branch`) is a command of its interactive session only.
#[test]
fn hermes_counts_every_served_token_in_its_running_totals() {
    let mut hermes = Driven::with(python_cli("hermes", "hermes-agent"), MockProvider::chat());
    let config = hermes.home.path().join(".hermes/config.yaml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let url = format!("{}/v1", hermes.mock.base_url());
    std::fs::write(
        &config,
        format!(
            "model:\n  provider: custom\n  default: qwen3-coder-plus\n  base_url: {url}\n  api_key: not-a-real-key\n"
        ),
    )
    .unwrap();
    hermes.args = ["chat", "-Q", "--yolo"].map(str::to_owned).to_vec();
    hermes.prompt_flag = Some("-q");
    let steps = hermes.converse("please TOOL now", &["-c"], None);
    let served = hermes.mock.served();
    assert!(
        served.iter().filter(|s| !s.side).count() >= 4,
        "prompt, two of the tool turn, the resumed one: {served:?}"
    );
    assert!(served.iter().all(|s| s.reasoning > 0), "the mock served reasoning inside every output");
    // One entry per running total Hermes keeps (a session's model and task).
    let db = rusqlite::Connection::open_with_flags(
        hermes.home.path().join(".hermes/state.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let totals: u64 = db
        .query_row("SELECT COUNT(*) FROM session_model_usage WHERE input_tokens + output_tokens > 0", [], |r| r.get(0))
        .unwrap();
    let sessions: u64 = db
        .query_row(
            "SELECT COUNT(DISTINCT session_id) FROM session_model_usage WHERE input_tokens + output_tokens > 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sessions, 2, "the first session and the tool turn's, resumed; the refused one has no usage");
    let mut expected = hermes.mock.served_usage();
    expected["responses"] = json!(totals);
    hermes.assert_usage_equals("hermes", &expected, &[], true);
    let by_session = hermes.beectl(&["usage", "--by", "session", "--agent", "hermes"]);
    assert_eq!(by_session["rows"].as_array().unwrap().len() as u64, sessions, "{by_session}");
    assert_eq!(steps.0.len(), 4, "four steps, no fork");
    hermes.assert_no_agent_cost("hermes");
}

/// Droid (`droid exec` with a custom model, no Factory login) against a
/// mock of OpenAI's Responses API: a session's settings keep its running
/// total, one entry a session; every counter equals what the mock served,
/// the thinking inside output once. A fork (`--fork ID`) copies its
/// parent's messages, not its usage. Resuming (`-s ID`) asks Factory's
/// service for the session first, so it cannot run offline.
#[test]
fn droid_counts_every_served_token_in_its_session_totals() {
    let mut droid = Driven::new("droid", MockProvider::openai());
    // The launcher's package is 0.225.1; the binary it runs, its platform
    // package's, is the version that wrote the records.
    let platform =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node/node_modules/@factory/cli-linux-x64/package.json");
    let platform: Value = serde_json::from_slice(&std::fs::read(platform).unwrap()).unwrap();
    droid.version = platform["version"].as_str().unwrap().to_owned();
    let settings = droid.home.path().join(".factory/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let model = json!({"model": "gpt-5", "displayName": "Mock", "baseUrl": format!("{}/v1", droid.mock.base_url()),
        "apiKey": "not-a-real-key", "provider": "openai", "maxOutputTokens": 4096});
    std::fs::write(&settings, json!({"cloudSessionSync": false, "customModels": [model]}).to_string()).unwrap();
    droid.args = ["exec", "-m", "custom:Mock-0", "-o", "json"].map(str::to_owned).to_vec();
    droid.prompt_flag = None;
    let session_of = |output: &Output| -> String {
        let printed = String::from_utf8_lossy(&output.stdout);
        let result: Value = printed.lines().rev().find_map(|line| serde_json::from_str(line).ok()).unwrap();
        result["session_id"].as_str().unwrap().to_owned()
    };
    droid.ask(&[], "hello there");
    let tool = session_of(&droid.ask(&[], "please TOOL now"));
    droid.ask(&["--fork", &tool], "forked");
    droid.ask(&[], "APIERROR please");
    assert!(droid.mock.refused() >= 1, "the mock refused a request");
    let served = droid.mock.served();
    assert!(served.len() >= 4, "prompt, two of the tool turn, the fork's: {served:?}");
    assert!(served.iter().all(|s| s.reasoning > 0), "the mock served reasoning inside every output");
    let totals = files_under(&droid.home.path().join(".factory/sessions"))
        .iter()
        .filter(|file| file.to_string_lossy().ends_with(".settings.json"))
        .filter(|file| {
            let settings: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
            let usage = settings["tokenUsage"].as_object().cloned().unwrap_or_default();
            usage.values().any(|count| count.as_u64().unwrap_or(0) > 0)
        })
        .count();
    assert_eq!(totals, 3, "the first session, the tool turn's and its fork");
    let mut expected = droid.mock.served_usage();
    expected["responses"] = json!(totals);
    droid.assert_usage_equals("droid", &expected, &[], true);
    let by_session = droid.beectl(&["usage", "--by", "session", "--agent", "droid"]);
    assert_eq!(by_session["rows"].as_array().unwrap().len(), totals, "{by_session}");
    droid.assert_no_agent_cost("droid");
}

/// An interactive CLI in a real terminal (`script` gives it a pty): what
/// is typed goes to its prompt, and its terminal queries are answered as a
/// terminal would (a cursor-position report), so its screen draws.
struct Terminal {
    child: std::process::Child,
    input: std::sync::Arc<std::sync::Mutex<std::process::ChildStdin>>,
    /// How many bytes it has drawn so far.
    drawn: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Terminal {
    fn start(mut command: Command, line: &str) -> Terminal {
        command.args(["-qfec", line, "/dev/null"]).env("TERM", "xterm-256color").stdin(Stdio::piped());
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let input = std::sync::Arc::new(std::sync::Mutex::new(child.stdin.take().unwrap()));
        let (answer, mut screen) = (input.clone(), child.stdout.take().unwrap());
        let drawn = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = drawn.clone();
        std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = screen.read(&mut buffer) {
                counted.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
                if buffer[..n].windows(4).any(|w| w == b"\x1b[6n") {
                    let _ = answer.lock().unwrap().write_all(b"\x1b[1;1R");
                }
            }
        });
        Terminal { child, input, drawn }
    }

    /// Waits until its screen is drawn and has been still for a second
    /// (a loaded machine starts it slowly; keys typed before are lost).
    fn wait_drawn(&self) {
        let mut last = (0, std::time::Instant::now());
        let still = || {
            let now = self.drawn.load(std::sync::atomic::Ordering::SeqCst);
            if now != last.0 {
                last = (now, std::time::Instant::now());
            }
            now > 0 && last.1.elapsed() > std::time::Duration::from_secs(1)
        };
        assert!(eventually(std::time::Duration::from_secs(60), still), "the terminal program drew its screen");
    }

    /// Types `text` a key at a time, then Enter.
    fn type_line(&self, text: &str) {
        use std::io::Write;
        for key in text.bytes().chain([b'\r']) {
            self.input.lock().unwrap().write_all(&[key]).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(30));
        }
    }

    /// Ctrl-C twice, then Ctrl-D; killed if it is still there.
    fn leave(mut self) {
        use std::io::Write;
        for key in [b"\x03", b"\x03", b"\x04"] {
            let _ = self.input.lock().unwrap().write_all(key);
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        if !eventually(std::time::Duration::from_secs(10), || self.child.try_wait().unwrap().is_some()) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Stops every process whose command line names `home` and `marker` (a
/// CLI's background helper, which outlives the command that started it).
fn stop_processes_of(home: &std::path::Path, marker: &str) {
    let home = home.display().to_string();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let line = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let line = String::from_utf8_lossy(&line).replace('\0', " ");
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let in_home = line.contains(&home) || String::from_utf8_lossy(&environ).contains(&format!("HOME={home}"));
        if line.contains(marker) && in_home {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            let gone = || !std::path::Path::new(&format!("/proc/{pid}")).exists();
            if !eventually(std::time::Duration::from_secs(5), gone) {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
        }
    }
}

/// The Cline CLI (npm `cline`) against an OpenAI-compatible mock: each
/// response its own assistant message with its counters (input with both
/// caches in it, output with the reasoning), once. Resuming a session
/// (`--id`) is its interactive mode only: driven in a real terminal.
/// The CLI's background hub, which outlives each command, is stopped.
#[test]
fn cline_counts_every_served_response_once() {
    let mut cline = Driven::new("cline", MockProvider::chat());
    let url = format!("{}/v1", cline.mock.base_url());
    let home = cline.home.path().to_owned();
    struct StopHub(PathBuf);
    impl Drop for StopHub {
        fn drop(&mut self) {
            stop_processes_of(&self.0, "--cline-hub-daemon");
        }
    }
    let _hub = StopHub(home.clone());
    cline.prompt_flag = None;
    cline.run(&["auth", "-p", "openai", "-k", "not-a-real-key", "-m", "qwen3-coder-plus", "-b", &url]);
    let project = cline.project.display().to_string();
    cline.args = ["--json", "-c", &project].map(str::to_owned).to_vec();
    let mut steps = Steps::default();
    let newest_session = || -> String {
        let sessions = std::fs::read_dir(home.join(".cline/data/sessions")).unwrap();
        sessions.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).max().unwrap()
    };
    cline.ask(&[], "hello there");
    steps.ended(&cline.mock, Session::First);
    cline.ask(&[], "please TOOL now");
    steps.ended(&cline.mock, Session::Resumed);
    let resumed = newest_session();
    let before = cline.mock.served().len();
    let line = format!("'{}' -c '{project}' --id '{resumed}'", cline.cli.display());
    let mut command = cline.home.command("script");
    command.current_dir(&cline.project).env("NO_COLOR", "1");
    let terminal = Terminal::start(command, &line);
    terminal.wait_drawn();
    terminal.type_line("and once more");
    let answered = eventually(std::time::Duration::from_secs(60), || cline.mock.served().len() > before);
    std::thread::sleep(std::time::Duration::from_secs(2));
    terminal.leave();
    assert!(answered, "the resumed session asked the mock");
    steps.ended(&cline.mock, Session::Resumed);
    cline.ask(&[], "APIERROR please");
    steps.ended(&cline.mock, Session::Refused);
    assert!(cline.mock.refused() >= 1, "the mock refused a request");
    // Its records keep no reasoning count (the output holds it): null.
    let mut expected = cline.mock.served_usage();
    expected.as_object_mut().unwrap().remove("reasoningOutputTokens");
    cline.assert_usage_equals("cline", &expected, &["reasoningOutputTokens"], true);
    cline.assert_sessions("cline", &steps, all_calls);
    cline.assert_no_agent_cost("cline");
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
