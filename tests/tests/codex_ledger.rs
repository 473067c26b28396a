//! The ledger under the real Codex CLI 0.169 (pinned in `tests/node`)
//! against a mock of OpenAI's Responses API: `exec`, `exec resume`, turns
//! wrapped by `beectl run` and direct ones mixed in one thread, automatic
//! compaction, two limit families, usage-limit 429s with and without
//! rate-limit headers. Every figure equals what the mock served.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::providers::{MockProvider, assert_columns_add_up, codex_cli, expected_usage_issues, usage_sums};
use bee_tests::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Codex<'a> {
    home: &'a TestHome,
    provider: MockProvider,
    /// `CODEX_HOME`, away from the default, as a user may set it.
    codex_home: PathBuf,
    project: PathBuf,
}

impl<'a> Codex<'a> {
    fn new(home: &'a TestHome) -> Codex<'a> {
        let codex_home = home.path().join("codex-home");
        let project = home.path().join("project");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        Codex { home, provider: MockProvider::openai(), codex_home, project }
    }

    /// `codex exec --json … ARGS` against the mock, optionally through `beectl run`.
    fn exec(&self, wrapped: bool, args: &[&str]) -> Output {
        self.exec_with(wrapped, &[], args)
    }

    fn exec_with(&self, wrapped: bool, config: &[&str], args: &[&str]) -> Output {
        let mut command: Command = if wrapped {
            let mut command = self.home.command(bin("beectl"));
            command.args(["run", "--provider", "codex", "--"]).arg(codex_cli());
            command
        } else {
            self.home.command(codex_cli())
        };
        let provider = format!(
            "model_providers.mock={{name=\"mock\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"MOCK_KEY\"}}",
            self.provider.base_url()
        );
        command
            .current_dir(&self.project)
            .env("CODEX_HOME", &self.codex_home)
            .env("MOCK_KEY", "not-a-real-key")
            .args(["exec", "--json", "--skip-git-repo-check", "-c", &provider, "-c", "model_provider=mock"])
            .args(["-m", "gpt-5"])
            .args(config)
            .args(args)
            .stdin(Stdio::null());
        command.output().unwrap()
    }

    fn beectl(&self, args: &[&str]) -> Value {
        let output = self.home.command(bin("beectl")).env("CODEX_HOME", &self.codex_home).args(args).output().unwrap();
        parse_json_line(&output.stdout)
    }
}

fn thread_of(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let started = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["type"] == "thread.started")
        .unwrap_or_else(|| panic!("no thread.started: {stdout}\n{}", String::from_utf8_lossy(&output.stderr)));
    started["thread_id"].as_str().unwrap().to_owned()
}

fn ok(output: Output) -> Output {
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

fn assert_usage_equals_served(codex: &Codex<'_>) {
    let expected = codex.provider.served_usage();
    let served_models: Vec<String> = codex.provider.served().iter().map(|s| s.model.clone()).collect();
    for by in ["day", "week", "month", "session", "model", "block"] {
        let report = codex.beectl(&["usage", "--by", by]);
        assert_json_eq(&usage_sums(&report, &expected), &expected);
        assert_columns_add_up(&report);
        let (issues, expected_issues) = expected_usage_issues(&report, &served_models);
        assert_eq!(issues, expected_issues, "--by {by}: {report}");
        let producer: u64 =
            report["rows"].as_array().unwrap().iter().map(|r| r["producerCountedCalls"].as_u64().unwrap()).sum();
        assert_eq!(producer, 0, "the thread has a log: no run's own counters stand in: {report}");
    }
}

#[test]
fn exec_resume_wrapped_and_direct_turns_of_one_thread_equal_what_was_served() {
    let home = TestHome::new();
    let codex = Codex::new(&home);
    // A turn with a tool call: two requests.
    let first = ok(codex.exec(false, &["TOOL: check the tree"]));
    assert_eq!(codex.provider.served().len(), 2, "the tool call made a second request");
    let thread = thread_of(&first);
    // Wrapped and direct turns mixed in the thread; the wrapped one's own
    // cumulative usage (all turns so far) must not count again.
    ok(codex.exec(true, &["resume", &thread, "second turn"]));
    ok(codex.exec(false, &["resume", &thread, "third turn"]));
    ok(codex.exec(true, &["resume", &thread, "fourth turn"]));
    let ingested = codex.beectl(&["ingest"]);
    assert_eq!(ingested["by"], "beectl", "{ingested}");
    assert_usage_equals_served(&codex);
    let by_session = codex.beectl(&["usage", "--by", "session"]);
    assert_eq!(by_session["rows"].as_array().unwrap().len(), 1, "one thread: {by_session}");
    assert_eq!(by_session["rows"][0]["key"], thread.as_str());
    // The thread's project is the directory Codex ran in (its session_meta
    // says so), named as Claude Code names its project folders: `--project`
    // keeps all of it and leaves nothing out for want of a project.
    let project = bee_daemon::ledger::stored::evidence::project_of_directory(codex.project.to_str().unwrap());
    assert_eq!(by_session["rows"][0]["project"], project.as_str(), "{by_session}");
    let tail = project.rsplit('-').find(|part| !part.is_empty()).unwrap();
    let kept = codex.beectl(&["usage", "--by", "session", "--project", &project[project.len() - 12..]]);
    assert_json_eq(&usage_sums(&kept, &codex.provider.served_usage()), &codex.provider.served_usage());
    assert_eq!(kept["projectUnknownParts"], 0, "{kept}");
    assert!(!kept["issues"].as_array().unwrap().contains(&json!("project_unknown")), "{kept}");
    let elsewhere = codex.beectl(&["usage", "--by", "session", "--project", &format!("{tail}-not-this-one")]);
    assert_eq!((elsewhere["rows"].clone(), elsewhere["projectUnknownParts"].clone()), (json!([]), json!(0)));
    // Read again: nothing counts twice.
    codex.beectl(&["ingest"]);
    assert_usage_equals_served(&codex);

    let quota = codex.beectl(&["quota"]);
    assert_eq!((quota["crossed"].clone(), quota["providers"][0]["calls"].clone()), (json!(0), json!(2)), "{quota}");
    // The two direct turns are timed from the rollout (task started →
    // complete); the wrapped ones were measured by beectl run, once.
    assert_eq!(quota["derived"]["turns"], 2, "{quota}");
    let windows = quota["providers"][0]["windows"].as_array().unwrap();
    let families: std::collections::BTreeSet<&str> = windows.iter().filter_map(|w| w["limitId"].as_str()).collect();
    assert_eq!(families, ["codex", "codex_other"].into_iter().collect(), "two limit families: {quota}");
    assert!(windows.iter().all(|w| w["peakPercent"].as_f64() <= Some(42.0) && w["exhausted"] == false), "{quota}");
}

#[test]
fn automatic_compaction_keeps_every_served_response_once() {
    let home = TestHome::new();
    let codex = Codex::new(&home);
    // Every context of this mock is past the limit: Codex compacts before
    // each later turn, with a model request of its own.
    let compact = ["-c", "model_auto_compact_token_limit=1060"];
    let first = ok(codex.exec_with(false, &compact, &["start"]));
    let thread = thread_of(&first);
    for turn in 0..3 {
        ok(codex.exec_with(false, &compact, &["resume", &thread, &format!("turn {turn}")]));
    }
    let rollouts = walk_jsonl(&codex.codex_home);
    let compacted =
        rollouts.iter().any(|path| std::fs::read_to_string(path).unwrap().contains("\"type\":\"compacted\""));
    assert!(compacted, "the low auto-compact limit made Codex compact the thread");
    codex.beectl(&["ingest"]);
    assert_usage_equals_served(&codex);
}

#[test]
fn a_usage_limit_with_headers_is_one_hit_in_the_window_and_family_that_hit() {
    let home = TestHome::new();
    let codex = Codex::new(&home);
    let first = ok(codex.exec(false, &["hello"]));
    let thread = thread_of(&first);
    let limited = codex.exec(true, &["resume", &thread, "LIMIT please"]);
    assert_eq!(codex.provider.refused(), 1, "{}", String::from_utf8_lossy(&limited.stdout));
    codex.beectl(&["ingest"]);
    let quota = codex.beectl(&["quota"]);
    assert_eq!(quota["crossed"], 1, "the run's two notices and the rollout's error are one hit: {quota}");
    let windows = quota["providers"][0]["windows"].as_array().unwrap();
    let hit: Vec<(&str, &str, Value)> = windows
        .iter()
        .filter(|w| w["exhausted"] == true)
        .map(|w| (w["limitId"].as_str().unwrap(), w["window"].as_str().unwrap(), w["peakPercent"].clone()))
        .collect();
    assert_eq!(hit, vec![("codex", "five_hour", json!(100.0))], "only the window that hit: {quota}");
    assert_usage_equals_served(&codex);
}

#[test]
fn a_usage_limit_without_headers_is_still_one_hit() {
    let home = TestHome::new();
    let codex = Codex::new(&home);
    let first = ok(codex.exec(false, &["hello"]));
    let thread = thread_of(&first);
    let _ = codex.exec(false, &["resume", &thread, "LIMIT-NOHEADERS please"]);
    assert_eq!(codex.provider.refused(), 1);
    codex.beectl(&["ingest"]);
    let quota = codex.beectl(&["quota"]);
    assert_eq!(quota["crossed"], 1, "{quota}");
    assert_usage_equals_served(&codex);
}

/// An API error the mock serves (a 400, no limit): whatever Codex writes
/// about it is no response and no limit — the figures equal what was
/// served — and `budget --measured` counts each such line it wrote as an
/// error line.
#[test]
fn an_api_error_codex_writes_is_no_response() {
    let home = TestHome::new();
    let codex = Codex::new(&home);
    let first = ok(codex.exec(false, &["hello"]));
    let thread = thread_of(&first);
    let failed = codex.exec(false, &["resume", &thread, "APIERROR now"]);
    assert!(codex.provider.refused() >= 1, "{}", String::from_utf8_lossy(&failed.stdout));
    codex.beectl(&["ingest"]);
    assert_usage_equals_served(&codex);
    let quota = codex.beectl(&["quota"]);
    assert_eq!(quota["crossed"], 0, "an API error is no limit hit: {quota}");
    let rollout = walk_jsonl(&codex.codex_home)
        .into_iter()
        .find(|path| path.to_string_lossy().contains(&thread))
        .expect("the thread's rollout");
    let written = std::fs::read_to_string(&rollout).unwrap();
    // Codex 0.169 writes the failure in the turn's completion (`error`,
    // `codex_error_info: other`); before, as an `error` event.
    let errors = written
        .lines()
        .filter(|line| {
            line.contains(r#""type":"error""#)
                || (line.contains(r#""type":"task_complete""#) && line.contains(r#""codex_error_info""#))
        })
        .count() as u64;
    assert!(errors >= 1, "Codex wrote its failure");
    let measured = codex.beectl(&[
        "budget",
        "--measured",
        "--harness",
        "codex",
        "--session",
        &thread,
        "--log",
        rollout.to_str().unwrap(),
    ]);
    assert_eq!(measured["response"]["responses"], codex.provider.served().len(), "{measured}");
    assert_eq!(measured["lines"]["errorLines"], errors, "{measured}");
    assert_eq!(measured["limits"], json!([]), "{measured}");
}

fn walk_jsonl(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found
}
