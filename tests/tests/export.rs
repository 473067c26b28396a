//! Export to a team's engine (spec/60) against a real Prometheus (Debian's
//! package, `.ci/run` installs it) started here with its remote-write
//! receiver on a loopback port: two beeds with different `user` labels
//! export their ledgers, and PromQL over Prometheus's HTTP API answers each
//! user's totals as that home's own `beectl usage` prints them, and the
//! team's as their sum. Then Prometheus stops, a ledger grows, Prometheus
//! starts again on the same storage, and the totals catch up exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bee_tests::*;
use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const PROMETHEUS: &str = "/usr/bin/prometheus";

/// A Prometheus on a loopback port with its storage in a temp directory;
/// stopped when dropped.
struct Prometheus {
    child: Option<Child>,
    addr: String,
    /// Served over TLS: the test's client, trusting the test's CA.
    tls: Option<std::sync::Arc<rustls::ClientConfig>>,
}

impl Prometheus {
    fn start(dir: &Path, port: u16) -> Prometheus {
        Prometheus::start_with(dir, port, None)
    }

    /// With `(ca, cert, key)`: TLS on its listener (`--web.config.file`), the test trusting `ca`.
    fn start_with(dir: &Path, port: u16, tls: Option<(&Path, &Path, &Path)>) -> Prometheus {
        assert!(Path::new(PROMETHEUS).exists(), "{PROMETHEUS} is missing: install Debian's prometheus (.ci/run does)");
        let config = dir.join("prometheus.yml");
        std::fs::write(&config, "global:\n  scrape_interval: 1h\n").unwrap();
        let addr = format!("127.0.0.1:{port}");
        let log = std::fs::File::create(dir.join(format!("prometheus-{}.log", uuid::Uuid::new_v4().simple()))).unwrap();
        let child = Command::new(PROMETHEUS)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--web.enable-remote-write-receiver")
            .args(tls.map(|(_, cert, key)| {
                let web = dir.join("web.yml");
                std::fs::write(
                    &web,
                    format!("tls_server_config:\n  cert_file: {}\n  key_file: {}\n", cert.display(), key.display()),
                )
                .unwrap();
                format!("--web.config.file={}", web.display())
            }))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let tls = tls.map(|(ca, _, _)| {
            use rustls::pki_types::CertificateDer;
            use rustls::pki_types::pem::PemObject;
            let mut roots = rustls::RootCertStore::empty();
            roots.add(CertificateDer::from_pem_file(ca).unwrap()).unwrap();
            let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth();
            std::sync::Arc::new(config)
        });
        let prometheus = Prometheus { child: Some(child), addr, tls };
        assert!(
            eventually(Duration::from_secs(30), || {
                std::net::TcpStream::connect(&prometheus.addr).is_ok_and(|_| prometheus.ready())
            }),
            "Prometheus did not become ready on {}",
            prometheus.addr
        );
        prometheus
    }

    fn ready(&self) -> bool {
        self.get("/-/ready").0 == 200
    }

    /// `GET path`, over TLS when Prometheus serves it.
    fn get(&self, path: &str) -> (u16, String, Vec<u8>) {
        let request = get_request(path, &self.addr, "");
        let Some(tls) = &self.tls else { return tcp_http(&self.addr, &request) };
        let Ok(stream) = std::net::TcpStream::connect(&self.addr) else { return (0, String::new(), Vec::new()) };
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let connection = rustls::ClientConnection::new(tls.clone(), name).unwrap();
        exchange(rustls::StreamOwned::new(connection, stream), &request)
    }

    /// The value of an instant PromQL query that answers one number.
    fn value(&self, promql: &str) -> Option<f64> {
        let (status, _, body) = self.get(&format!("/api/v1/query?query={}", percent_encoded(promql)));
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        assert_eq!(status, 200, "{promql}: {answer}");
        answer["data"]["result"][0]["value"][1].as_str().and_then(|v| v.parse().ok())
    }

    /// The value of an instant PromQL query evaluated at `time` (Unix seconds).
    fn value_at(&self, promql: &str, time: f64) -> Option<f64> {
        let path = format!("/api/v1/query?query={}&time={time:.3}", percent_encoded(promql));
        let (status, _, body) = self.get(&path);
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        assert_eq!(status, 200, "{promql}: {answer}");
        answer["data"]["result"][0]["value"][1].as_str().and_then(|v| v.parse().ok())
    }

    /// An instant query's status and how many series it answered.
    fn answer(&self, promql: &str) -> (u16, usize, Value) {
        let (status, _, body) = self.get(&format!("/api/v1/query?query={}", percent_encoded(promql)));
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let series = answer["data"]["result"].as_array().map_or(0, Vec::len);
        (status, series, answer)
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ =
                rustix::process::kill_process(rustix::process::Pid::from_child(&child), rustix::process::Signal::TERM);
            let _ = child.wait();
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Writes `sessions` finished Claude Code sessions of generated responses.
fn write_history(home: &TestHome, tag: &str, sessions: u64, seed: u64) {
    let mut random = xorshift(seed);
    for session in 0..sessions {
        let id = format!("5eed0000-0000-4000-8000-{:012}", seed % 1000 * 1000 + session);
        let mut body = String::new();
        for n in 0..40u64 {
            body += &(json!({"type": "assistant", "sessionId": id,
                "timestamp": format!("2026-11-{:02}T{:02}:00:00.000Z", 1 + random() % 28, random() % 24),
                "requestId": format!("req_{tag}_{session}_{n}"),
                "message": {"id": format!("msg_{tag}_{session}_{n}"), "model": "claude-sonnet-4-5-20250929",
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": random() % 2_000, "cache_creation_input_tokens": random() % 5_000,
                              "cache_read_input_tokens": random() % 300_000, "output_tokens": random() % 4_000}}})
            .to_string()
                + "\n");
        }
        write_quiet(&home.path().join(format!(".claude/projects/-home-dev-{tag}/{id}.jsonl")), &body);
    }
}

fn configure(home: &TestHome, user: &str, port: u16) {
    configure_with(home, user, &format!("http://127.0.0.1:{port}/api/v1/write"), "");
}

fn configure_with(home: &TestHome, user: &str, url: &str, more: &str) {
    std::fs::create_dir_all(home.bee_dir()).unwrap();
    std::fs::write(
        home.bee_dir().join("config.toml"),
        format!("[export]\nuser = \"{user}\"\nprometheus_remote_write = \"{url}\"\ninterval_seconds = 1\n{more}"),
    )
    .unwrap();
}

/// The home's own `beectl usage` totals: (responses, input, output, cache writes, cache reads).
fn usage_totals(home: &TestHome) -> [u64; 5] {
    let usage = parse_json_line(&home.beectl(&["usage", "--json", "--no-import"]).stdout);
    let totals = &usage["totals"];
    let field = |name: &str| totals["tokens"][name].as_u64().unwrap_or(0);
    [
        totals["responses"].as_u64().unwrap(),
        field("inputTokens"),
        field("outputTokens"),
        field("cacheCreationInputTokens"),
        field("cacheReadInputTokens"),
    ]
}

/// The same figures for `selector` (e.g. `user="alice"`) as PromQL sums.
fn prometheus_totals(prometheus: &Prometheus, selector: &str) -> Option<[u64; 5]> {
    let sum = |query: String| prometheus.value(&query).map(|v| v as u64);
    Some([
        sum(format!("sum(bee_responses_total{{{selector}}})"))?,
        sum(format!("sum(bee_tokens_total{{{selector},kind=\"input\"}})"))?,
        sum(format!("sum(bee_tokens_total{{{selector},kind=\"output\"}})"))?,
        sum(format!("sum(bee_tokens_total{{{selector},kind=\"cache_creation_input\"}})"))?,
        sum(format!("sum(bee_tokens_total{{{selector},kind=\"cache_read_input\"}})"))?,
    ])
}

fn sum(a: [u64; 5], b: [u64; 5]) -> [u64; 5] {
    std::array::from_fn(|i| a[i] + b[i])
}

/// Waits until the homes' ledgers hold what they should and Prometheus
/// answers each user's and the team's totals as the ledgers do.
fn assert_prometheus_matches(prometheus: &Prometheus, homes: &[(&TestHome, &str, u64)]) {
    let mut expected = Vec::new();
    for (home, user, responses) in homes {
        assert!(
            eventually(Duration::from_secs(30), || usage_totals(home)[0] == *responses),
            "{user}'s beed did not ingest {responses} responses: {:?}",
            usage_totals(home)
        );
        expected.push((format!("user=\"{user}\""), usage_totals(home)));
    }
    let team = expected.iter().fold([0; 5], |all, (_, totals)| sum(all, *totals));
    expected.push(("user=~\".+\"".to_owned(), team));
    for (selector, totals) in &expected {
        let matched = eventually(Duration::from_secs(30), || prometheus_totals(prometheus, selector) == Some(*totals));
        assert!(
            matched,
            "{selector}: Prometheus {:?}, ledger {totals:?}; its series {}",
            prometheus_totals(prometheus, selector),
            prometheus.answer(&format!("bee_responses_total{{{selector}}}")).2
        );
    }
}

fn export_status(home: &TestHome) -> Value {
    parse_json_line(&home.beectl(&["export", "status"]).stdout)
}

#[test]
fn two_machines_export_to_a_real_prometheus_and_an_outage_loses_nothing() {
    let storage = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut prometheus = Prometheus::start(storage.path(), port);
    let (alice, bob) = (TestHome::new(), TestHome::new());
    write_history(&alice, "alice", 3, 11);
    write_history(&bob, "bob", 2, 22);
    configure(&alice, "alice", port);
    configure(&bob, "bob", port);
    let alice_beed = alice.start_daemon_with(&["--ingest-every", "1"]);
    let _bob_beed = bob.start_daemon_with(&["--ingest-every", "1"]);
    assert_prometheus_matches(&prometheus, &[(&alice, "alice", 120), (&bob, "bob", 80)]);
    // One series per counter the ledger knows, none for a counter nobody
    // reported (Codex's cached input and reasoning here).
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    let usage = parse_json_line(&alice.beectl(&["usage", "--json", "--no-import"]).stdout);
    let known = usage["totals"]["tokens"].as_object().unwrap().values().filter(|v| !v.is_null()).count();
    assert_eq!(known, 5, "input, output, both cache counters and the total: {usage}");
    let series = format!(
        "count(bee_tokens_total{{user=\"alice\",host=\"{host}\",provider=\"claude\",model=\"claude-sonnet-4-5\"}})"
    );
    assert_eq!(prometheus.value(&series), Some(known as f64));
    let status = export_status(&alice);
    assert_eq!((status["enabled"].clone(), status["user"].clone()), (json!(true), json!("alice")), "{status}");
    assert!(
        status["state"]["prometheus"]["lastSuccessUtc"].is_string()
            && status["state"]["prometheus"]["lastError"].is_null(),
        "{status}"
    );

    contrib_queries_run_on_the_real_series(&prometheus);

    // The collector goes away; alice's agents go on working.
    prometheus.stop();
    write_history(&alice, "alice-later", 2, 33);
    assert!(eventually(Duration::from_secs(30), || usage_totals(&alice)[0] == 200), "{:?}", usage_totals(&alice));
    assert!(
        eventually(Duration::from_secs(30), || export_status(&alice)["state"]["prometheus"]["consecutiveFailures"]
            .as_u64()
            > Some(1)),
        "{}",
        export_status(&alice)
    );
    let status = export_status(&alice);
    assert!(
        status["state"]["prometheus"]["lastError"].as_str().unwrap().contains(&format!("127.0.0.1:{port}")),
        "{status}"
    );
    assert!(status["backlogRecords"].as_u64().unwrap() >= 80, "the 80 new responses wait: {status}");
    let daemon_status = parse_json_line(&alice.beectl(&["daemon", "status"]).stdout);
    assert_eq!(
        daemon_status["export"]["state"]["prometheus"]["lastError"], status["state"]["prometheus"]["lastError"],
        "{daemon_status}"
    );
    assert!(alice_beed.log().contains("export to http://127.0.0.1"), "{}", alice_beed.log());

    // It comes back on the same storage: every total catches up, nothing lost or doubled.
    let prometheus = Prometheus::start(storage.path(), port);
    assert_prometheus_matches(&prometheus, &[(&alice, "alice", 200), (&bob, "bob", 80)]);
    assert!(
        eventually(Duration::from_secs(30), || export_status(&alice)["backlogRecords"] == json!(0)),
        "{}",
        export_status(&alice)
    );
}

/// Writes a Claude Code session of `responses` responses made in the last
/// seconds (usage time now), each of 100 output tokens.
fn write_usage_now(home: &TestHome, tag: &str, responses: u64) {
    write_usage_aged(home, tag, responses, 10_000);
}

/// `responses` used `age_ms` ago.
fn write_usage_aged(home: &TestHome, tag: &str, responses: u64, age_ms: i64) {
    let id = format!("5eed0000-0000-4000-8000-{:0>12}", tag.len() * 1000 + responses as usize);
    let now_ms = bee_proto::time::now_unix_ms() - age_ms + 10_000;
    let body: String = (0..responses)
        .map(|n| {
            json!({"type": "assistant", "sessionId": id,
                "timestamp": bee_proto::time::format_unix_ms(now_ms - 10_000 + n as i64),
                "requestId": format!("req_{tag}_{n}"),
                "message": {"id": format!("msg_{tag}_{n}"), "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
                    "usage": {"input_tokens": 3, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 100}}})
            .to_string()
                + "\n"
        })
        .collect();
    write_quiet(&home.path().join(format!(".claude/projects/-home-dev-{tag}/{id}.jsonl")), &body);
}

/// The expression of contrib's recording rule `record`.
fn recording_rule(record: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let rules = std::fs::read_to_string(root.join("contrib/prometheus/bee-rules.yml")).unwrap();
    let mut lines = rules.lines().map(str::trim);
    lines.find(|line| line.strip_prefix("- record: ") == Some(record)).unwrap();
    lines.next().and_then(|line| line.strip_prefix("expr: ")).unwrap().to_owned()
}

/// `increase()` counts what was used in its range, to the token. A user
/// whose first send follows an outage (the collector was down all day)
/// finds the day's usage in the day's increase: each new series starts
/// from a 0 sample. History that reaches the ledger late (old sessions
/// read at start, a session of November read later) is backfill: it is in
/// every total, and out of the last hour's rules.
#[test]
fn increase_counts_usage_in_its_range_and_backfill_apart() {
    let storage = tempfile::tempdir().unwrap();
    let port = free_port();
    let alice = TestHome::new();
    write_history(&alice, "old", 2, 44);
    configure(&alice, "alice", port);
    let _beed = alice.start_daemon_with(&["--ingest-every", "1"]);
    // The collector is down; alice works.
    write_usage_now(&alice, "today", 30);
    assert!(eventually(Duration::from_secs(30), || usage_totals(&alice)[0] == 110), "{:?}", usage_totals(&alice));
    assert!(
        eventually(Duration::from_secs(30), || export_status(&alice)["state"]["prometheus"]["consecutiveFailures"]
            .as_u64()
            > Some(2)),
        "{}",
        export_status(&alice)
    );
    let today = parse_json_line(&alice.beectl(&["usage", "--json", "--no-import", "--since", "today"]).stdout);
    let today_output = today["totals"]["tokens"]["outputTokens"].as_f64().unwrap();
    assert_eq!(today_output, 3000.0, "{today}");

    let prometheus = Prometheus::start(storage.path(), port);
    assert_prometheus_matches(&prometheus, &[(&alice, "alice", 110)]);
    let output = r#"user="alice",kind="output""#;
    let last_sample = |origin: &str| {
        prometheus.value(&format!(r#"max(timestamp(bee_tokens_total{{{output},origin="{origin}"}}))"#)).unwrap()
    };
    // At its last sample, so PromQL has nothing to extrapolate.
    let at = last_sample("live");
    let day = format!(r#"sum(increase(bee_tokens_total{{{output},origin!="backfill"}}[1d]))"#);
    assert_eq!(prometheus.value_at(&day, at), Some(today_output), "the day's usage, though its first send came late");
    let hour_rule = recording_rule("user_kind:bee_tokens:increase1h");
    let last_hour = format!(r#"sum({hour_rule} and on (user, kind) bee_tokens_total{{{output},origin="live"}})"#);
    assert_eq!(prometheus.value_at(&last_hour, at), Some(today_output), "{last_hour}");

    // Sessions of November read now: in every total, not in the last hour.
    write_history(&alice, "late", 1, 55);
    assert_prometheus_matches(&prometheus, &[(&alice, "alice", 150)]);
    let at = last_sample("backfill");
    assert_eq!(prometheus.value_at(&last_hour, at), Some(today_output), "backfill stays out of the last hour");
    let everything = format!("sum(increase(bee_tokens_total{{{output}}}[1h]))");
    assert!(
        prometheus.value_at(&everything, at) > Some(today_output),
        "without the rule's selector, the backfill would be in the last hour"
    );
}

/// What beed sends is what the stores say, unknowns left out: no agent
/// time series while no producer measured a call, no estimate for a model
/// the price table does not name.
#[test]
fn unknowns_are_no_series_and_a_bad_config_exports_nothing() {
    let home = TestHome::new();
    std::fs::create_dir_all(home.bee_dir()).unwrap();
    std::fs::write(
        home.bee_dir().join("config.toml"),
        "[export]\nprometheus_remote_write = \"ftp://metrics.example/api/v1/write\"\n",
    )
    .unwrap();
    let status = export_status(&home);
    assert_eq!(status["enabled"], json!(false), "{status}");
    let errors = status["configErrors"].to_string();
    assert!(errors.contains("user: required") && errors.contains("ftp://"), "{status}");
    let beed = home.start_daemon();
    assert!(eventually(Duration::from_secs(5), || beed.log().contains("nothing is exported")), "{}", beed.log());
    drop(beed);
    assert_eq!(export_status(&home)["state"], Value::Null, "no exporter ran");
}

/// The series the exporter would send for `home`'s stores now, read by its
/// own library; reading them found no problem.
fn series_now(home: &TestHome) -> Vec<bee_daemon::export::Series> {
    let stores = home.export_stores();
    let (series, _, problems) =
        bee_daemon::export::read_series(&stores, "alice", "host", bee_proto::time::now_unix_ms());
    assert!(problems.is_empty(), "{problems:?}");
    series
}

/// A push never holds two series with one label set. Codex reported its
/// five-hour and weekly windows twice, their reset times 71 s apart (both
/// current): one series each, the window that resets last; beside them
/// every agent's usage, each series once.
#[test]
fn one_series_per_label_set_in_a_push() {
    let home = TestHome::new();
    bee_tests::every_agent::write_every_agent(&home);
    let now = bee_proto::time::now_unix_ms() / 1000;
    let at = |seconds_ago: i64| bee_proto::time::format_unix_ms((now - seconds_ago) * 1000);
    let limits = |seconds_ago: i64, used: f64, resets: i64| {
        json!({"timestamp": at(seconds_ago), "type": "event_msg", "payload": {"type": "token_count", "info": null,
            "rate_limits": {"primary": {"used_percent": used, "window_minutes": 300, "resets_at": resets},
                            "secondary": {"used_percent": used / 2.0, "window_minutes": 10080, "resets_at": resets + 86_400}}}})
        .to_string()
    };
    let session = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c";
    let meta =
        json!({"timestamp": at(600), "type": "session_meta", "payload": {"id": session, "cwd": "/home/dev/app"}});
    let rollout = [meta.to_string(), limits(300, 94.7, now + 7_200), limits(60, 94.8, now + 7_271)].join("\n") + "\n";
    write_quiet(&home.path().join(format!(".codex/sessions/2026/12/04/rollout-w-{session}.jsonl")), &rollout);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let series = series_now(&home);
    let mut seen = std::collections::BTreeSet::new();
    for s in &series {
        assert!(seen.insert((s.name, s.labels.clone())), "two series {} {:?}", s.name, s.labels);
    }
    let window = |name: &str, kind: &str| -> Vec<f64> {
        series
            .iter()
            .filter(|s| s.name == name && s.labels.iter().any(|(k, v)| *k == "window" && v == kind))
            .map(|s| s.value)
            .collect()
    };
    assert_eq!(window("bee_window_reset_timestamp_seconds", "five_hour"), [(now + 7_271) as f64]);
    assert_eq!(window("bee_window_reset_timestamp_seconds", "weekly"), [(now + 7_271 + 86_400) as f64]);
    assert_eq!(window("bee_window_utilisation_ratio", "five_hour").len(), 1);
}

/// The series of a ledger with an unknown model, no cache reads and no
/// measured time, read by the library the exporter uses.
#[test]
fn series_leave_out_what_nobody_observed() {
    let home = TestHome::new();
    let id = "5eed0000-0000-4000-8000-000000000001";
    let body = [("claude-sonnet-4-5-20250929", 1), ("claude-mystery-9", 2)]
        .iter()
        .map(|(model, n)| {
            json!({"type": "assistant", "sessionId": id, "timestamp": "2026-11-03T10:00:00.000Z",
                "requestId": format!("req_{n}"), "message": {"id": format!("msg_{n}"), "model": model,
                "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 20}}})
            .to_string()
                + "\n"
        })
        .collect::<String>();
    write_quiet(&home.path().join(format!(".claude/projects/-home-dev-app/{id}.jsonl")), &body);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let series = series_now(&home);
    let named = |name: &str, model: &str| {
        series.iter().filter(|s| s.name == name && s.labels.iter().any(|(k, v)| *k == "model" && v == model)).count()
    };
    // The model label is the model's, as `beectl usage --by model` shows it: one series per model.
    assert_eq!(named("bee_estimated_cost_usd_total", "claude-sonnet-4-5"), 1);
    assert_eq!(named("bee_estimated_cost_usd_total", "claude-mystery-9"), 0, "never another model's price");
    assert_eq!(named("bee_unpriced_parts", "claude-mystery-9"), 1);
    assert!(
        !series.iter().any(|s| s.name == "bee_agent_time_seconds_total"
            && s.labels.iter().any(|(k, v)| *k == "measure" && v == "measured")),
        "no producer measured a call: no measured time, not 0 s"
    );
    assert!(
        !series
            .iter()
            .any(|s| s.name == "bee_tokens_total"
                && s.labels.iter().any(|(k, v)| *k == "kind" && v == "cache_read_input")),
        "no response reported cache reads: no series"
    );
}

/// Claude Code's own session cost lines name no model, so a view by model
/// keeps them in its totals: the export sends them as the provider's
/// reported cost without a model, never drops them.
#[test]
fn a_sessions_own_cost_line_is_exported_without_a_model() {
    let home = TestHome::new();
    let id = "5eed0000-0000-4000-8000-000000000002";
    let response = json!({"type": "assistant", "sessionId": id, "timestamp": "2026-11-03T10:00:00.000Z",
        "requestId": "req_1", "message": {"id": "msg_1", "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 20}}});
    // $1.25 as of 2026-11-03T11:00:00Z (start + duration).
    let cost = json!({"type": "cost-state", "sessionId": id, "totalCostUSD": 1.25,
        "startTime": 1_793_700_000_000u64, "totalDuration": 3_600_000});
    let body = format!("{response}\n{cost}\n");
    write_quiet(&home.path().join(format!(".claude/projects/-home-dev-app/{id}.jsonl")), &body);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let series = series_now(&home);
    let reported: Vec<_> = series.iter().filter(|s| s.name == bee_proto::export::REPORTED_COST_TOTAL).collect();
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert_eq!(reported[0].value, 1.25, "{reported:?}");
    assert!(reported[0].labels.iter().any(|(k, v)| *k == "provider" && v == "claude"), "{reported:?}");
    assert!(!reported[0].labels.iter().any(|(k, _)| *k == "model"), "the cost line names no model: {reported:?}");
}

/// Every PromQL expression of contrib's rules and Grafana dashboard (with
/// the dashboard's `$user` as all users): Prometheus accepts it, it names
/// only series Bee exports, and the panels over always-present series
/// answer data.
fn contrib_queries_run_on_the_real_series(prometheus: &Prometheus) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let rules = std::fs::read_to_string(root.join("contrib/prometheus/bee-rules.yml")).unwrap();
    let mut expressions: Vec<String> =
        rules.lines().filter_map(|line| line.trim().strip_prefix("expr: ")).map(str::to_owned).collect();
    let rule_count = expressions.len();
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("contrib/grafana/bee-dashboard.json")).unwrap())
            .unwrap();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            expressions.push(target["expr"].as_str().unwrap().replace("$user", ".+").replace("$__range", "1d"));
        }
    }
    assert!(rule_count >= 10 && expressions.len() > rule_count, "{expressions:?}");
    for expression in &expressions {
        let words = expression.split(|c: char| !(c.is_ascii_lowercase() || c == '_'));
        for name in words.filter(|word| word.starts_with("bee_")) {
            assert!(bee_proto::export::series_meta(name).is_some(), "{expression}: {name} is not exported");
        }
        let (status, _, answer) = prometheus.answer(expression);
        assert_eq!((status, answer["status"].as_str()), (200, Some("success")), "{expression}: {answer}");
    }
    let (_, last_send, answer) =
        prometheus.answer("time() - max by (user, host) (timestamp(bee_build_info{user=~\".+\"}))");
    assert_eq!(last_send, 2, "one row per machine: {answer}");
}

/// `promtool check rules` (Debian's prometheus package) accepts contrib's
/// rules, and `promtool test rules` evaluates every recording rule and
/// alert on the fixture timeline of `bee-rules.test.yml` to its expected
/// values: a hit that arrived late is no fresh alert, a silent machine
/// alerts and keeps alerting, the day's increases are what was used.
#[test]
fn contrib_rules_pass_promtool() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../contrib/prometheus");
    for (command, file) in [("check", "bee-rules.yml"), ("test", "bee-rules.test.yml")] {
        let run = Command::new("/usr/bin/promtool").args([command, "rules", file]).current_dir(&dir).output().unwrap();
        let said = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success() && said.contains("SUCCESS"), "promtool {command} rules: {said}");
    }
    let tested = std::fs::read_to_string(dir.join("bee-rules.test.yml")).unwrap();
    let rules = std::fs::read_to_string(dir.join("bee-rules.yml")).unwrap();
    for line in rules.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("- record: ").or_else(|| line.strip_prefix("- alert: ")) {
            assert!(tested.contains(name), "{name} has expected values in bee-rules.test.yml");
        }
    }
}

/// The series in Prometheus's text exposition format, each family's HELP
/// and TYPE from the one table of them (`bee_proto::export::ALL_SERIES`).
fn exposition(series: &[bee_daemon::export::Series]) -> String {
    let mut text = String::new();
    for meta in bee_proto::export::ALL_SERIES {
        let family: Vec<_> = series.iter().filter(|one| one.name == meta.name).collect();
        if family.is_empty() {
            continue;
        }
        let kind = if meta.counter { "counter" } else { "gauge" };
        text += &format!("# HELP {} {}\n# TYPE {} {kind}\n", meta.name, meta.help, meta.name);
        for one in family {
            let labels: Vec<String> = one.labels.iter().map(|(name, value)| format!("{name}={value:?}")).collect();
            text += &format!("{}{{{}}} {}\n", one.name, labels.join(","), one.value);
        }
    }
    text
}

/// `promtool check metrics` finds nothing to say of Bee's series: names,
/// types, help and units as Prometheus's conventions want them, on every
/// agent's series and every family Bee exports.
#[test]
fn promtool_check_metrics_is_clean() {
    let home = TestHome::new();
    bee_tests::every_agent::write_every_agent(&home);
    assert_eq!(home.beectl(&["ingest"]).status.code(), Some(0));
    let mut series = series_now(&home);
    // A family these stores leave empty (windows, hooks, delivery) is
    // checked all the same, by one sample of it.
    for meta in bee_proto::export::ALL_SERIES {
        if !series.iter().any(|one| one.name == meta.name) {
            series.push(bee_daemon::export::Series {
                name: meta.name,
                labels: vec![("user", "alice".to_owned())],
                value: 0.0,
            });
        }
    }
    let text = exposition(&series);
    let mut check = Command::new("/usr/bin/promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut check.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let output = check.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && said.trim().is_empty(), "promtool check metrics: {said}\n{text}");
    let families = bee_proto::export::ALL_SERIES.iter().filter(|meta| text.contains(&format!("# TYPE {} ", meta.name)));
    assert_eq!(families.count(), bee_proto::export::ALL_SERIES.len(), "{text}");
}

/// A log record as the test compares it: event name, severity, sorted attributes.
type LoggedEvent = (String, i32, Vec<(String, String)>);

/// Each request's path, content type and body (gunzipped), as received.
type Received = std::sync::Arc<std::sync::Mutex<Vec<(String, String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver on a loopback port that answers 200 and keeps the
/// bodies POSTed to `/v1/metrics` and `/v1/logs`.
struct OtlpReceiver {
    port: u16,
    bodies: Received,
}

impl OtlpReceiver {
    fn start() -> OtlpReceiver {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let bodies = Received::default();
        let kept = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = kept.clone();
                std::thread::spawn(move || {
                    let mut writer = stream.try_clone().unwrap();
                    let mut reader = BufReader::new(stream);
                    // Keep-alive: one request after another on the connection.
                    loop {
                        let mut request_line = String::new();
                        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                            return;
                        }
                        let (mut length, mut content_type, mut encoding) = (0usize, String::new(), String::new());
                        loop {
                            let mut header = String::new();
                            reader.read_line(&mut header).unwrap();
                            let header = header.trim_end();
                            if header.is_empty() {
                                break;
                            }
                            let (name, value) = header.split_once(':').unwrap();
                            match name.to_ascii_lowercase().as_str() {
                                "content-length" => length = value.trim().parse().unwrap(),
                                "content-type" => content_type = value.trim().to_owned(),
                                "content-encoding" => encoding = value.trim().to_owned(),
                                _ => {}
                            }
                        }
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        let path = request_line.split(' ').nth(1).unwrap_or("").to_owned();
                        assert!(request_line.starts_with("POST "), "{request_line}");
                        // OTLP's one compression, as a collector takes it.
                        assert_eq!(encoding, "gzip", "{request_line}");
                        let mut unpacked = Vec::new();
                        flate2::read::GzDecoder::new(body.as_slice()).read_to_end(&mut unpacked).unwrap();
                        let body = unpacked;
                        kept.lock().unwrap().push((path, content_type, body));
                        writer
                            .write_all(
                                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n",
                            )
                            .unwrap();
                    }
                });
            }
        });
        OtlpReceiver { port, bodies }
    }

    /// The last metrics request, decoded with the official OpenTelemetry definitions.
    fn last(&self) -> Option<opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest> {
        use prost::Message;
        let bodies = self.bodies.lock().unwrap();
        let (_, content_type, body) = bodies.iter().rev().find(|(path, _, _)| path == "/v1/metrics")?;
        assert_eq!(content_type, "application/x-protobuf");
        Some(
            opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest::decode(body.as_slice())
                .unwrap(),
        )
    }

    /// Every log record received, decoded with the official definitions.
    fn log_records(&self) -> Vec<opentelemetry_proto::tonic::logs::v1::LogRecord> {
        use prost::Message;
        let bodies = self.bodies.lock().unwrap();
        let paths: Vec<&str> = bodies.iter().map(|(path, _, _)| path.as_str()).collect();
        assert!(paths.iter().all(|path| ["/v1/metrics", "/v1/logs"].contains(path)), "{paths:?}");
        bodies
            .iter()
            .filter(|(path, _, _)| path == "/v1/logs")
            .flat_map(|(_, _, body)| {
                opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest::decode(body.as_slice())
                    .unwrap()
                    .resource_logs
            })
            .flat_map(|resource| resource.scope_logs)
            .flat_map(|scope| scope.log_records)
            .collect()
    }
}

/// OTLP export, checked by decoding the requests with the official
/// OpenTelemetry protobuf definitions (`opentelemetry-proto`), not Bee's
/// types: the resource names Bee and the host; every counter is a
/// monotonic cumulative sum, the rest gauges; each carries the Prometheus
/// series' labels, and the token sums equal the ledger's `beectl usage`.
#[test]
fn otlp_export_decodes_with_the_official_definitions() {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use opentelemetry_proto::tonic::metrics::v1::{metric::Data, number_data_point::Value as Number};
    let receiver = OtlpReceiver::start();
    let home = TestHome::new();
    write_history(&home, "carol", 2, 44);
    // A usage-limit hit an hour ago, and records a producer could not write.
    let hit_ms = bee_proto::time::now_unix_ms() - 3_600_000;
    let mut ledger = bee_daemon::ledger::stored::store::Ledger::open(&home.bee_dir().join("usage/ledger-v1")).unwrap();
    let mut hit = bee_proto::ledger::LimitRecord::new(
        uuid::Uuid::new_v4(),
        bee_proto::time::format_unix_ms(hit_ms),
        bee_proto::ledger::Provider::Claude,
        None,
        bee_proto::usage::Detection::Structured,
    );
    hit.window = Some(bee_proto::usage::WindowKind::FiveHour);
    // A call `beectl run` measured in one of carol's sessions (agent time),
    // with the five-hour window the provider reported (utilisation, reset).
    let now_ms = bee_proto::time::now_unix_ms();
    let call = bee_proto::ledger::CallRecord {
        record_id: uuid::Uuid::new_v4(),
        source: bee_proto::ledger::CallSource::Run,
        provider: bee_proto::ledger::Provider::Claude,
        started_at_utc: bee_proto::time::format_unix_ms(hit_ms),
        duration_ms: Some(60_000),
        success: Some(true),
        model: Some("claude-sonnet-4-5-20250929".to_owned()),
        project_path: None,
        cost_usd: None,
        tokens: None,
        quota_snapshots: vec![bee_proto::ledger::QuotaSnapshot {
            observed_at_utc: bee_proto::time::format_unix_ms(now_ms - 600_000),
            window: bee_proto::usage::WindowKind::FiveHour,
            window_minutes: Some(300),
            used_percent: 42.0,
            resets_at_utc: Some(bee_proto::time::format_unix_ms(now_ms + 7_200_000)),
            limit_id: None,
        }],
        model_invocations: Some(1),
        context_window: None,
        context_tokens: None,
        compactions: None,
        session_id: Some("5eed0000-0000-4000-8000-000000044000".to_owned()),
        outcome: None,
    };
    ledger
        .append(&[bee_proto::ledger::LedgerRecord::Limit(hit), bee_proto::ledger::LedgerRecord::Call(Box::new(call))])
        .unwrap();
    drop(ledger);
    std::fs::write(
        home.bee_dir().join("usage/record-failures.jsonl"),
        format!("{{\"atUtc\":\"{}\",\"producer\":\"run\",\"records\":3}}\n", bee_proto::time::format_unix_ms(hit_ms)),
    )
    .unwrap();
    std::fs::create_dir_all(home.bee_dir()).unwrap();
    std::fs::write(
        home.bee_dir().join("config.toml"),
        format!(
            "[export]\nuser = \"carol\"\notlp_endpoint = \"http://127.0.0.1:{}\"\ninterval_seconds = 1\n",
            receiver.port
        ),
    )
    .unwrap();
    let beed = home.start_daemon_with(&["--ingest-every", "1"]);
    // A delivered prompt block and a hook event, through bee-hook.
    let block = home.file("block.md", b"Keep functions small.\n");
    let (delivered, _) = home.hook(
        &["prompt", "--surface", "plain", "--block", block.to_str().unwrap()],
        &prompt_envelope("5eed0000-0000-4000-8000-000000044000", "go"),
    );
    assert_eq!(delivered.status.code(), Some(0));
    let event = json!({"session_id": "5eed0000-0000-4000-8000-000000044000", "hook_event_name": "SessionStart", "source": "startup"});
    let (sent, _) = home.hook(&["event", "--source-app", "carol-app"], &serde_json::to_vec(&event).unwrap());
    assert_eq!(sent.status.code(), Some(0));
    assert!(eventually(Duration::from_secs(30), || usage_totals(&home)[0] == 80), "{:?}", usage_totals(&home));
    let expected = usage_totals(&home);
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    let text = |value: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>| match value
        .as_ref()
        .and_then(|v| v.value.as_ref())
    {
        Some(Any::StringValue(text)) => text.clone(),
        other => panic!("{other:?}"),
    };
    // The sums of one send over the points whose attributes include `want`.
    let sums = |request: &opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest| {
        let resource = &request.resource_metrics[0];
        let attributes: Vec<(String, String)> =
            resource.resource.as_ref().unwrap().attributes.iter().map(|kv| (kv.key.clone(), text(&kv.value))).collect();
        assert!(attributes.contains(&("service.name".to_owned(), "bee".to_owned())), "{attributes:?}");
        assert!(attributes.contains(&("host.name".to_owned(), host.clone())), "{attributes:?}");
        let mut found = std::collections::BTreeMap::new();
        for metric in &resource.scope_metrics[0].metrics {
            let points = match &metric.data {
                Some(Data::Sum(sum)) => {
                    assert!(sum.is_monotonic && sum.aggregation_temporality == 2, "{}: cumulative", metric.name);
                    assert!(!metric.name.ends_with("_total"), "{}", metric.name);
                    &sum.data_points
                }
                Some(Data::Gauge(gauge)) => &gauge.data_points,
                other => panic!("{}: {other:?}", metric.name),
            };
            for point in points {
                let labels: std::collections::BTreeMap<String, String> =
                    point.attributes.iter().map(|kv| (kv.key.clone(), text(&kv.value))).collect();
                assert_eq!((labels["user"].as_str(), labels["host"].as_str()), ("carol", host.as_str()), "{labels:?}");
                let Some(Number::AsDouble(value)) = point.value else { panic!("{point:?}") };
                let key = (metric.name.clone(), labels.get("kind").cloned().unwrap_or_default());
                *found.entry(key).or_insert(0.0) += value;
            }
        }
        found
    };
    let matched = eventually(Duration::from_secs(30), || {
        receiver.last().is_some_and(|request| {
            let found = sums(&request);
            let get = |name: &str, kind: &str| found.get(&(name.to_owned(), kind.to_owned())).map(|v| *v as u64);
            [
                get("bee_responses", ""),
                get("bee_tokens", "input"),
                get("bee_tokens", "output"),
                get("bee_tokens", "cache_creation_input"),
                get("bee_tokens", "cache_read_input"),
            ] == expected.map(Some)
                && get("bee_build_info", "") == Some(1)
                && get("bee_usage_partial_parts", "") == Some(0)
        })
    });
    assert!(matched, "ledger {expected:?}, last request {:?}", receiver.last().map(|r| sums(&r)));
    // Every series the stores have evidence for is there, under its OTLP
    // name; the reported cost is the only one with none (nothing reported one).
    let every = eventually(Duration::from_secs(30), || {
        receiver.last().is_some_and(|request| {
            let names: std::collections::BTreeSet<String> = sums(&request).into_keys().map(|(name, _)| name).collect();
            bee_proto::export::ALL_SERIES
                .iter()
                .map(|series| series.name)
                .filter(|name| *name != bee_proto::export::REPORTED_COST_TOTAL)
                .all(|name| names.contains(name.strip_suffix("_total").unwrap_or(name)))
        })
    });
    assert!(every, "{:?}", receiver.last().map(|r| sums(&r).into_keys().collect::<Vec<_>>()));
    let found = sums(&receiver.last().unwrap());
    let value = |name: &str| found.iter().find(|((n, _), _)| n == name).map(|(_, v)| *v);
    assert_eq!(value("bee_agent_time_seconds"), Some(60.0), "the measured call's minute");
    assert_eq!(value("bee_window_utilisation_ratio"), Some(0.42));
    assert_eq!(value("bee_limit_hits"), Some(1.0));
    assert_eq!(value("bee_hook_events"), Some(1.0));
    assert_eq!(value("bee_delivery_observations"), Some(1.0));
    assert_eq!(value("bee_delivery_bytes"), Some(22.0), "the block and its newline, as written");
    // The one recent session by its audit verdict: every class is a series,
    // and they sum to the sessions the events store holds.
    let classes = found.keys().filter(|(name, _)| name == "bee_audit_sessions").count();
    assert_eq!(classes, 1, "one name, its classes summed here");
    assert_eq!(value("bee_audit_sessions"), Some(1.0));
    // No manifest is pinned in this home: the session's configuration and
    // coverage are unproven, and a session that has not stopped is not
    // complete — the classifier's verdict for it (see `beectl audit`). Its
    // event is a stale dashboard until its presentation is proven, so an
    // export that reads in between sends that verdict first and the change
    // after it: each verdict change once.
    let class_now = || {
        let verdict =
            parse_json_line(&home.beectl(&["audit", "--session", "5eed0000-0000-4000-8000-000000044000"]).stdout);
        verdict["class"].as_str().unwrap().to_owned()
    };
    let attribute = |record: &opentelemetry_proto::tonic::logs::v1::LogRecord, key: &str| {
        record.attributes.iter().find(|kv| kv.key == key).map(|kv| text(&kv.value))
    };
    let verdicts = |records: &[opentelemetry_proto::tonic::logs::v1::LogRecord]| {
        let mut verdicts: Vec<_> = records.iter().filter(|r| r.event_name == "bee.audit_verdict_changed").collect();
        verdicts.sort_by_key(|r| r.time_unix_nano);
        verdicts.iter().map(|r| (attribute(r, "previous_class"), attribute(r, "class"))).collect::<Vec<_>>()
    };
    // The hit, the lost records and the session's verdicts arrive once
    // each as log events, whatever the number of sends since.
    let settled = || {
        let records = receiver.log_records();
        verdicts(&records).last().and_then(|(_, class)| class.clone()) == Some(class_now()) && records.len() >= 3
    };
    assert!(eventually(Duration::from_secs(30), settled), "{:?}", receiver.log_records());
    let sends = receiver.bodies.lock().unwrap().len();
    assert!(eventually(Duration::from_secs(30), || receiver.bodies.lock().unwrap().len() >= sends + 3));
    let records = receiver.log_records();
    let chain = verdicts(&records);
    // From no verdict to the session's, each change from the one before it.
    let mut previous: Option<String> = None;
    for (from, to) in &chain {
        assert_eq!((from, to.is_some()), (&previous, true), "{chain:?}");
        assert_ne!(from, to, "{chain:?}");
        previous = to.clone();
    }
    assert_eq!(previous, Some(class_now()), "{chain:?}");
    let mut got: Vec<LoggedEvent> = records
        .iter()
        .filter(|record| record.event_name != "bee.audit_verdict_changed")
        .map(|record| {
            let mut attributes: Vec<(String, String)> =
                record.attributes.iter().map(|kv| (kv.key.clone(), text(&kv.value))).collect();
            attributes.sort();
            (record.event_name.clone(), record.severity_number, attributes)
        })
        .collect();
    got.sort();
    let with_common = |pairs: &[(&str, &str)]| {
        let mut attributes: Vec<(String, String)> =
            pairs.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect();
        attributes.extend([("host".to_owned(), host.clone()), ("user".to_owned(), "carol".to_owned())]);
        attributes.sort();
        attributes
    };
    let expected = vec![
        ("bee.limit_hit".to_owned(), 13, with_common(&[("provider", "claude"), ("window", "five_hour")])),
        ("bee.record_failed".to_owned(), 17, with_common(&[("producer", "run"), ("records", "3")])),
    ];
    assert_eq!(got, expected, "each once, nothing sent twice");
    for record in records.iter().filter(|r| r.event_name == "bee.audit_verdict_changed") {
        assert_eq!(record.severity_number, 9, "{record:?}");
        assert_eq!(attribute(record, "session_id").as_deref(), Some("5eed0000-0000-4000-8000-000000044000"));
        assert_eq!(attribute(record, "source_app").as_deref(), Some("carol-app"));
        assert_eq!(
            (attribute(record, "user").as_deref(), attribute(record, "host")),
            (Some("carol"), Some(host.clone()))
        );
    }
    assert!(
        records
            .iter()
            .filter(|r| r.event_name != "bee.audit_verdict_changed")
            .all(|r| r.time_unix_nano == hit_ms as u64 * 1_000_000),
        "{records:?}"
    );
    // Every cumulative sum's start, which a restart must not move.
    let start_of = |request: opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest| {
        let mut starts = std::collections::BTreeSet::new();
        for metric in &request.resource_metrics[0].scope_metrics[0].metrics {
            if let Some(Data::Sum(sum)) = &metric.data {
                starts.extend(sum.data_points.iter().map(|point| point.start_time_unix_nano));
            }
        }
        starts
    };
    let started = start_of(receiver.last().unwrap());
    assert_eq!(started.len(), 1, "one start for every sum: {started:?}");
    // Beed is down while a Codex limit is hit two hours ago (a rollout read
    // late): the export has long passed that time, and still sends it, once.
    beed.stop();
    let late_ms = bee_proto::time::now_unix_ms() - 7_200_000;
    let late = bee_proto::ledger::LimitRecord::new(
        uuid::Uuid::new_v4(),
        bee_proto::time::format_unix_ms(late_ms),
        bee_proto::ledger::Provider::Codex,
        None,
        bee_proto::usage::Detection::Text,
    );
    let mut ledger = bee_daemon::ledger::stored::store::Ledger::open(&home.bee_dir().join("usage/ledger-v1")).unwrap();
    ledger.append(&[bee_proto::ledger::LedgerRecord::Limit(late)]).unwrap();
    drop(ledger);
    let _beed = home.start_daemon_with(&["--ingest-every", "1"]);
    let codex_hits =
        || receiver.log_records().iter().filter(|r| attribute(r, "provider").as_deref() == Some("codex")).count();
    assert!(eventually(Duration::from_secs(30), || codex_hits() == 1), "{:?}", receiver.log_records());
    let sends = receiver.bodies.lock().unwrap().len();
    assert!(eventually(Duration::from_secs(30), || receiver.bodies.lock().unwrap().len() >= sends + 3));
    let records = receiver.log_records();
    let late_hits: Vec<_> = records.iter().filter(|r| attribute(r, "provider").as_deref() == Some("codex")).collect();
    assert_eq!(late_hits.len(), 1, "sent once: {records:?}");
    assert_eq!(late_hits[0].time_unix_nano, late_ms as u64 * 1_000_000, "at the hit's own time");
    assert_eq!(start_of(receiver.last().unwrap()), started, "a restart is no counter reset");
    let status = export_status(&home);
    assert!(status["state"]["otlp"]["lastSuccessUtc"].is_string(), "{status}");
    assert_eq!(status["state"]["otlp"]["logEventsSent"], records.len(), "{status}");
    assert_eq!(status["state"]["prometheus"], Value::Null, "{status}");
}

/// HTTPS: Prometheus serves TLS with a certificate of its own (made here by
/// openssl for 127.0.0.1); a beed given it as `ca_file` exports and PromQL
/// over TLS answers its ledger's totals; a beed without it is refused by
/// the TLS check, says so in its state, and sends nothing.
#[test]
fn export_over_https_trusts_its_ca_file_and_nothing_else() {
    let storage = tempfile::tempdir().unwrap();
    // A CA, and a server certificate for 127.0.0.1 it signed.
    let at = |name: &str| storage.path().join(name);
    let (ca, cert, key) = (at("ca.pem"), at("cert.pem"), at("key.pem"));
    std::fs::write(
        at("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    for args in [
        "req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bee-test-ca -keyout ca.key -out ca.pem",
        "req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout key.pem -out server.csr",
        "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile server.ext -out cert.pem",
    ] {
        let made = Command::new("openssl").args(args.split(' ')).current_dir(storage.path()).output().unwrap();
        assert!(made.status.success(), "openssl {args}: {}", String::from_utf8_lossy(&made.stderr));
    }
    let port = free_port();
    let prometheus = Prometheus::start_with(storage.path(), port, Some((&ca, &cert, &key)));
    let url = format!("https://127.0.0.1:{port}/api/v1/write");
    let (dave, eve) = (TestHome::new(), TestHome::new());
    write_history(&dave, "dave", 1, 55);
    write_history(&eve, "eve", 1, 66);
    configure_with(&dave, "dave", &url, &format!("ca_file = \"{}\"\n", ca.display()));
    configure_with(&eve, "eve", &url, "");
    let _dave_beed = dave.start_daemon_with(&["--ingest-every", "1"]);
    let _eve_beed = eve.start_daemon_with(&["--ingest-every", "1"]);
    assert_prometheus_matches(&prometheus, &[(&dave, "dave", 40)]);
    let refused = eventually(Duration::from_secs(30), || {
        export_status(&eve)["state"]["prometheus"]["lastError"].as_str().is_some_and(|e| e.contains("certificate"))
    });
    assert!(refused, "{}", export_status(&eve));
    assert_eq!(prometheus.value("count(bee_build_info{user=\"eve\"})"), None, "nothing of eve's arrived");
}

/// A way to damage the exporter's state file.
type Damage = Box<dyn Fn(&Path) + Sync>;

/// The exporter's own state is input, not authority. With beed stopped
/// longer than an interval, `counters.json` damaged every way a file can
/// be (emptied, cut, not UTF-8, too large, a link to a device, a FIFO,
/// wrong types, its `taken` list emptied, a part of 1e18, a negative part,
/// a read in the year 9999), then usage while beed was down: at the real
/// Prometheus, no series ever falls (no counter reset), the totals equal
/// `beectl usage`, and `increase()` across the restart is what was used.
#[test]
fn a_damaged_or_lost_exporter_state_sends_no_series_backwards() {
    let storage = tempfile::tempdir().unwrap();
    let port = free_port();
    let prometheus = Prometheus::start(storage.path(), port);
    let edit = |path: &Path, change: &dyn Fn(&mut Value)| {
        let mut kept: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        change(&mut kept);
        std::fs::write(path, kept.to_string()).unwrap();
    };
    let set_every_series = |kept: &mut Value, field: &str, value: Value| {
        for series in kept["counters"]["series"].as_array_mut().unwrap() {
            series[field] = value.clone();
        }
    };
    let cases: Vec<(&str, Damage)> = vec![
        ("emptied", Box::new(|path| std::fs::write(path, b"").unwrap())),
        (
            "cut",
            Box::new(|path| {
                let bytes = std::fs::read(path).unwrap();
                std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
            }),
        ),
        ("not_utf8", Box::new(|path| std::fs::write(path, b"{\"counters\":\xff\xfe}").unwrap())),
        ("too_large", Box::new(|path| std::fs::write(path, vec![b' '; 17 << 20]).unwrap())),
        (
            "dev_zero",
            Box::new(|path| {
                std::fs::remove_file(path).unwrap();
                std::os::unix::fs::symlink("/dev/zero", path).unwrap();
            }),
        ),
        (
            "fifo",
            Box::new(|path| {
                std::fs::remove_file(path).unwrap();
                assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
            }),
        ),
        ("wrong_types", Box::new(|path| std::fs::write(path, br#"{"counters":"x","taken":5}"#).unwrap())),
        ("taken_emptied", Box::new(move |path| edit(path, &|kept| kept["taken"] = json!({})))),
        ("huge_part", Box::new(move |path| edit(path, &|kept| set_every_series(kept, "live", json!(1e18))))),
        ("negative_part", Box::new(move |path| edit(path, &|kept| set_every_series(kept, "live", json!(-5.0))))),
        (
            "year_9999",
            Box::new(move |path| edit(path, &|kept| kept["counters"]["readAtMs"] = json!(253_402_300_799_000_i64))),
        ),
    ];
    // Each case on a home and user of its own, all at once.
    std::thread::scope(|scope| {
        for (case, damage) in &cases {
            let prometheus = &prometheus;
            scope.spawn(move || damaged_state_case(prometheus, port, case, damage.as_ref()));
        }
    });
}

fn damaged_state_case(prometheus: &Prometheus, port: u16, case: &str, damage: &dyn Fn(&Path)) {
    {
        let user = format!("damage_{case}");
        let home = TestHome::new();
        write_history(&home, "old", 1, 66);
        // Used 4 min 20 s ago, read at once: live. Once the restart comes
        // more than 5 minutes after its use, a state rebuilt from the
        // ledger alone would call it backfill, and its live part would fall.
        let used_at = std::time::Instant::now();
        write_usage_aged(&home, "before", 10, 260_000);
        configure(&home, &user, port);
        let beed = home.start_daemon_with(&["--ingest-every", "1"]);
        user_matches(prometheus, &home, &user, 50);
        beed.stop();
        // Down longer than an interval, the state damaged, usage meanwhile.
        let counters = home.bee_dir().join("export/counters.json");
        damage(&counters);
        write_usage_now(&home, "while_down", 7);
        std::thread::sleep(Duration::from_secs(42).saturating_sub(used_at.elapsed()));
        let beed = home.start_daemon_with(&["--ingest-every", "1"]);
        user_matches(prometheus, &home, &user, 57);
        let selector = format!("user=\"{user}\"");
        for series in ["bee_responses_total", "bee_tokens_total"] {
            let resets = prometheus.value(&format!("sum(resets({series}{{{selector}}}[1h]))"));
            assert_eq!(
                resets,
                Some(0.0),
                "{case}: a {series} series fell: {}",
                prometheus.answer(&format!("{series}{{{selector}}}[1h]")).2
            );
        }
        let at = prometheus.value(&format!("max(timestamp(bee_responses_total{{{selector}}}))")).unwrap();
        let increase = prometheus.value_at(&format!("sum(increase(bee_responses_total{{{selector}}}[1h]))"), at);
        assert_eq!(increase.map(f64::round), Some(57.0), "{case}: increase() across the restart is what was used");
        beed.stop();
        // A FIFO or a link is never written through: left for the user.
        let _ = std::fs::remove_file(&counters);
    }
}

/// Waits until `home`'s ledger holds `responses` and Prometheus answers
/// `user`'s totals as the ledger does (other users' series aside).
fn user_matches(prometheus: &Prometheus, home: &TestHome, user: &str, responses: u64) {
    assert!(eventually(Duration::from_secs(30), || usage_totals(home)[0] == responses), "{:?}", usage_totals(home));
    let (selector, totals) = (format!("user=\"{user}\""), usage_totals(home));
    assert!(
        eventually(Duration::from_secs(30), || prometheus_totals(prometheus, &selector) == Some(totals)),
        "{selector}: Prometheus {:?}, ledger {totals:?}",
        prometheus_totals(prometheus, &selector)
    );
}
