//! One export push against the ledger's size: a ledger of 100,000 and of
//! 1,000,000 records (responses, producer calls, Codex quota snapshots,
//! limit hits) at one user's pace, about 1,700 a day — so the larger is
//! ten times the history (600 days), not ten times the activity — and in
//! each of three processes the same
//! twenty sends, each after one fresh response was appended as beed
//! appends it:
//!
//! - `off`: beed without export (the appends alone): the baseline;
//! - `push`: the exporter's read of every series (the ledger's from its
//!   kept totals, [`bee_daemon::export::counters`]) and both encodings;
//! - `whole`: the same series read from the whole store at every send,
//!   as the exporter read them before it kept totals.
//!
//! Reported per push: CPU time (user + system, this process), median and
//! spread, and as a ratio to `whole`; resident memory after the sends
//! (VmRSS) and at its peak (VmHWM), against `off`. The first push of
//! `push` reads the whole store once (a week at a time) and is reported
//! apart.
//!
//! `cargo bench -p bee-tests --bench export_push`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_daemon::ledger::stored::evidence::Evidence;
use bee_daemon::ledger::stored::store::Ledger;
use bee_proto::ledger::{CallRecord, CallSource, LedgerRecord, LimitRecord, Provider, QuotaSnapshot};
use bee_proto::usage::WindowKind;
use bee_tests::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Set in a child: its role and the home whose stores it reads.
const ROLE_ENV: &str = "BEE_BENCH_EXPORT_ROLE";
const PUSHES: usize = 20;
const DAY_MS: u64 = 24 * 3_600_000;
/// One user's pace: the history's length grows with the ledger.
const RECORDS_PER_DAY: u64 = 100_000 / 60;

fn main() {
    if let Ok(role) = std::env::var(ROLE_ENV) {
        return child(&role);
    }
    for records in [100_000, 1_000_000] {
        let home = TestHome::new();
        let dir = ledger_dir(home.path());
        let written = build(&dir, records);
        println!("\nexport push, a ledger of {written} records ({} days):", records / RECORDS_PER_DAY);
        let roles: Vec<(&str, Value)> =
            ["off", "push", "whole"].iter().map(|role| (*role, spawn(role, home.path()))).collect();
        let of = |role: &str| roles.iter().find(|(name, _)| *name == role).map(|(_, report)| report.clone()).unwrap();
        let (off, push, whole) = (of("off"), of("push"), of("whole"));
        let cpu = |report: &Value| {
            let samples: Vec<Duration> = report["cpuMs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|ms| Duration::from_secs_f64(ms.as_f64().unwrap() / 1e3))
                .collect();
            Spread::of(&samples)
        };
        let mb = |report: &Value, field: &str| report[field].as_f64().unwrap() / 1024.0;
        let (push_cpu, whole_cpu) = (cpu(&push), cpu(&whole));
        println!("  CPU per push, kept totals:  {push_cpu}");
        println!("  CPU per push, whole store:  {whole_cpu}");
        println!("  ratio kept/whole (median):  {:.4}", push_cpu.median / whole_cpu.median);
        println!(
            "  first push after start (whole store, a week at a time): {:.1} ms",
            push["firstCpuMs"].as_f64().unwrap()
        );
        for (name, report) in [("off", &off), ("push", &push), ("whole", &whole)] {
            println!(
                "  RSS {name:<5} after {PUSHES} pushes {:7.1} MB, peak {:7.1} MB; over off: {:+7.1} MB, peak {:+7.1} MB",
                mb(report, "rssKb"),
                mb(report, "hwmKb"),
                mb(report, "rssKb") - mb(&off, "rssKb"),
                mb(report, "hwmKb") - mb(&off, "hwmKb"),
            );
        }
    }
}

fn ledger_dir(home: &Path) -> PathBuf {
    home.join(".bee").join("usage").join("ledger-v1")
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

fn utc(ms: u64) -> String {
    bee_proto::time::format_rfc3339(UNIX_EPOCH + Duration::from_millis(ms))
}

/// A response of now-ish, as beed appends one from a log.
fn response(key: String, at_ms: u64, provider: Provider, model: &str, random: &mut impl FnMut() -> u64) -> Evidence {
    let session = format!("session-{}", random() % 2_000);
    bee_tests::bench_ledger::response(provider, key, session, at_ms as i64, model, None, random)
}

/// Writes about `records` records at [`RECORDS_PER_DAY`], ending now; how
/// many the store counts.
fn build(dir: &Path, records: u64) -> u64 {
    let mut ledger = Ledger::open(dir).unwrap();
    let now = now_ms();
    let mut random = xorshift(0x5eed_0e47_0000_0001);
    let span = records / RECORDS_PER_DAY * DAY_MS;
    for _ in 0..records / 10_000 {
        let mut batch = Vec::with_capacity(10_000);
        for n in 0..10_000 {
            let at = now - 600_000 - random() % span;
            let provider = if random().is_multiple_of(3) { Provider::Codex } else { Provider::Claude };
            let model = ["claude-sonnet-4-5", "claude-opus-4-1", "gpt-5-codex"][(random() % 3) as usize];
            if n % 2 == 0 {
                batch.push(response(uuid::Uuid::new_v4().to_string(), at, provider, model, &mut random));
                continue;
            }
            if n % 2_001 == 1 {
                batch.push(Evidence::Record(LedgerRecord::Limit(LimitRecord {
                    record_id: uuid::Uuid::new_v4(),
                    at_utc: utc(at),
                    provider,
                    resets_at_utc: Some(utc(at + 3 * 3_600_000)),
                    detection: bee_proto::usage::Detection::Structured,
                    window: Some(WindowKind::FiveHour),
                    window_minutes: Some(300),
                    limit_id: None,
                    session_id: None,
                })));
                continue;
            }
            // Codex reports its windows with every call.
            let snapshots = if provider == Provider::Codex {
                let resets = (at / (5 * 3_600_000) + 1) * 5 * 3_600_000;
                vec![QuotaSnapshot {
                    observed_at_utc: utc(at),
                    window: WindowKind::FiveHour,
                    window_minutes: Some(300),
                    used_percent: (random() % 100) as f64,
                    resets_at_utc: Some(utc(resets)),
                    limit_id: Some("codex".to_owned()),
                }]
            } else {
                Vec::new()
            };
            batch.push(Evidence::Record(LedgerRecord::Call(Box::new(CallRecord {
                record_id: uuid::Uuid::new_v4(),
                source: CallSource::Run,
                provider,
                started_at_utc: utc(at),
                duration_ms: Some(1_000 + random() % 300_000),
                success: Some(true),
                model: Some(model.to_owned()),
                project_path: Some("/home/dev/app".to_owned()),
                cost_usd: Some(0.01),
                tokens: None,
                quota_snapshots: snapshots,
                model_invocations: Some(1),
                context_window: None,
                context_tokens: None,
                compactions: None,
                session_id: Some(format!("session-{}", random() % 2_000)),
                outcome: None,
            }))));
        }
        ledger.append_at(&batch, &[]).unwrap();
    }
    ledger.settle();
    drop(ledger);
    bee_daemon::ledger::stored::store::store_status(dir).records.unwrap()
}

/// Runs this bench again as the child `role` over `home`'s stores; its report.
fn spawn(role: &str, home: &Path) -> Value {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .env(ROLE_ENV, role)
        .env("BEE_HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{role}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// This process's CPU time (user + system, every thread), ms.
fn cpu_ms() -> f64 {
    let time = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    time.tv_sec as f64 * 1e3 + time.tv_nsec as f64 / 1e6
}

/// `VmRSS` and `VmHWM` of this process, KB.
fn resident_kb() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn child(role: &str) {
    let home = PathBuf::from(std::env::var("BEE_HOME").unwrap());
    let usage = home.join(".bee").join("usage");
    let stores = bee_daemon::export::Stores {
        ledger: ledger_dir(&home),
        delivery: usage.join("delivery-v1"),
        events: usage.join("events-v1"),
        manifests: Vec::new(),
        spool: home.join("spool"),
        socket: home.join("beed.sock"),
    };
    // beed's own writer, with export on or off.
    let mut ledger = Ledger::open(&stores.ledger).unwrap();
    let mut random = xorshift(0x5eed_0e47_0000_0002);
    let mut counters = None;
    let mut first_cpu_ms = 0.0;
    if role == "push" {
        let started = cpu_ms();
        std::hint::black_box(send(&stores, &mut counters, now_ms()));
        first_cpu_ms = cpu_ms() - started;
    }
    let mut samples = Vec::with_capacity(PUSHES);
    for n in 0..PUSHES {
        let fresh =
            response(format!("fresh-{n}"), now_ms() - 1_000, Provider::Claude, "claude-sonnet-4-5", &mut random);
        ledger.append_at(&[fresh], &[]).unwrap();
        let started = cpu_ms();
        match role {
            "push" => {
                std::hint::black_box(send(&stores, &mut counters, now_ms()));
            }
            "whole" => {
                std::hint::black_box(whole_store_series(&stores.ledger, now_ms() as i64));
            }
            _ => {}
        }
        samples.push(cpu_ms() - started);
    }
    let (rss, hwm) = resident_kb();
    println!("{}", json!({"cpuMs": samples, "firstCpuMs": first_cpu_ms, "rssKb": rss, "hwmKb": hwm}));
}

/// One send's work: every series read, both encodings made.
fn send(
    stores: &bee_daemon::export::Stores,
    counters: &mut Option<bee_daemon::export::CounterState>,
    now: u64,
) -> usize {
    // No floors: what a destination was sent only raises parts after a lost
    // state, and costs a map look-up a series otherwise.
    let reading = bee_daemon::export::read(stores, "bench", "host", now as i64, counters, &Default::default());
    assert!(reading.problems.is_empty(), "{:?}", reading.problems);
    let remote = bee_daemon::export::remote_write::encode(&reading.series, now as i64, |_| None).unwrap();
    let otlp = bee_daemon::export::otlp::encode(&reading.series, "host", 0, now * 1_000_000);
    remote.len() + otlp.len()
}

/// The ledger's figures as the exporter read them before it kept totals:
/// `beectl usage --by model` per provider and `beectl quota` over the
/// whole store, at every send.
fn whole_store_series(ledger: &Path, now_ms: i64) -> usize {
    use bee_daemon::ledger::stored::schema::Range;
    use bee_daemon::ledger::views::calendar::Zone;
    use bee_daemon::ledger::views::usage::UsageAsk;
    use bee_proto::ledger::{UsageFilters, UsageGrouping};
    let range = Range { since_ms: 0, until_ms: now_ms };
    let ask = UsageAsk::new(range, UsageGrouping::Model, Zone::utc());
    let each: Vec<UsageFilters> = Provider::ALL
        .iter()
        .map(|provider| UsageFilters { provider: Some(*provider), ..UsageFilters::default() })
        .collect();
    let prices = bee_daemon::ledger::views::prices::PriceTable::bundled();
    let reports = bee_daemon::ledger::views::usage::reports(ledger, &ask, &each, &prices).unwrap();
    let view = bee_daemon::ledger::stored::store::read_range(ledger, range).unwrap();
    let quota = bee_daemon::ledger::views::quota::quota(&view, range, None);
    reports.iter().map(|report| report.rows.len()).sum::<usize>() + quota.providers.len()
}
