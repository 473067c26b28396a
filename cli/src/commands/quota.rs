//! `beectl quota` and `beectl status`: the ledger read
//! read-only (beed stays its only writer), a table for people on a
//! terminal, JSON when piped or asked.

use bee_daemon::ledger::stored::store;
use bee_daemon::ledger::views::quota::{self, Range};
use bee_daemon::ledger::views::usage;
use bee_daemon::rendered::Rendered;
use bee_proto::delivery::Issue;
use bee_proto::exit::Exit;
use bee_proto::ledger::{LedgerStatus, QuotaReport};
use std::fmt::Write;
use std::path::Path;

use crate::commands::ledger::{ledger_dir, ledger_unavailable};
use crate::render::terminal::{bar, counted, for_people};
use beectl::args::{LedgerAsk, RangeAsk};

pub fn quota(ask: LedgerAsk) -> Rendered {
    with_view(&ask, store::read_range, |view, range| {
        let report = quota::quota(view, range, ask.provider);
        if for_people(ask.table) { text(quota_table(&report)) } else { Rendered::json(Exit::Success, &report) }
    })
}

pub fn status(ask: LedgerAsk) -> Rendered {
    with_view(&ask, usage::read_status_range, |(view, sessions_without_cost), range| {
        let lost = bee_daemon::ledger::intake::record_failures::journal().map_or(0, |journal| {
            bee_daemon::ledger::intake::record_failures::count_in(&journal, range.since_ms, range.until_ms)
        });
        let report = quota::status(view, range, lost, *sessions_without_cost);
        if for_people(ask.table) { text(status_table(&report)) } else { Rendered::json(Exit::Success, &report) }
    })
}

fn with_view<T>(
    ask: &LedgerAsk,
    read: fn(&Path, Range) -> Result<T, Issue>,
    answer: impl FnOnce(&T, Range) -> Rendered,
) -> Rendered {
    let now = bee_proto::time::now_unix_ms();
    let range = match ask.range {
        RangeAsk::Last(ms) => Range { since_ms: now - ms, until_ms: now },
        RangeAsk::Between { since, until } => Range { since_ms: since.unwrap_or(0), until_ms: until.unwrap_or(now) },
    };
    if range.since_ms >= range.until_ms {
        return Rendered::invalid_usage("--since must be before --until");
    }
    let dir = match ledger_dir() {
        Ok(dir) => dir,
        Err(rendered) => return rendered,
    };
    match read(&dir, range) {
        Ok(view) => answer(&view, range),
        Err(issue) => ledger_unavailable(issue, &dir),
    }
}

fn text(body: String) -> Rendered {
    Rendered { exit: Exit::Success, bytes: body.into_bytes() }
}

/// A duration for people; under a minute in seconds, so a short measured
/// time never reads as a zero.
fn duration(ms: u64) -> String {
    match ms {
        0 => return "0m".to_owned(),
        1..1_000 => return "<1s".to_owned(),
        1_000..60_000 => return format!("{}s", ms / 1_000),
        _ => {}
    }
    let minutes = ms / 60_000;
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m}m"),
        (h, m) => format!("{h}h {m:02}m"),
    }
}

fn derived(time: &bee_proto::ledger::DerivedTime) -> String {
    format!(
        "{}, agent time {}, used {}",
        counted(time.turns, "turn"),
        duration(time.agent_time_ms),
        duration(time.used_ms)
    )
}

/// A count of hits for people: unknown where no record could hold one, a
/// lower bound (`≥`) where some agents' could not.
fn crossed(crossed: Option<u64>, some_unknown: bool) -> String {
    match (crossed, some_unknown) {
        (None, _) => "unknown".to_owned(),
        (Some(n), true) => format!("≥{n}"),
        (Some(n), false) => n.to_string(),
    }
}

/// Agents' names, joined.
fn named(agents: &[bee_proto::ledger::Provider]) -> String {
    agents.iter().map(|agent| agent.as_str()).collect::<Vec<_>>().join(", ")
}

fn quota_table(report: &QuotaReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Quota {} → {}", report.since_utc, report.until_utc);
    let not_recorded = &report.not_recorded;
    let hits = crossed(report.crossed, !not_recorded.limits.is_empty());
    match (report.agent_time_ms, report.used_ms, report.idle_ms) {
        (Some(agent), Some(used), Some(idle)) => {
            // Time that leaves out agents nothing timed is a lower bound.
            let bound = if not_recorded.time.is_empty() { "" } else { "≥" };
            let _ = writeln!(
                out,
                "  Agent time {bound}{}   Used {bound}{}   Idle {}   Converted {}   Crossed {hits}",
                duration(agent),
                duration(used),
                duration(idle),
                report.converted,
            );
        }
        // Nothing measured is not "0m" of work: the time is unknown.
        _ => {
            let _ = writeln!(
                out,
                "  Agent time unknown (no producer measured a call)   Converted {}   Crossed {hits}",
                report.converted
            );
        }
    }
    if let Some(derived_time) = report.derived.as_ref().filter(|d| d.turns > 0) {
        let _ = writeln!(
            out,
            "  Derived from the logs' timestamps (turns no producer measured, not added above): {}",
            derived(derived_time)
        );
    }
    if report.calls_without_duration > 0 {
        let _ = writeln!(out, "  {} calls of unknown duration are in no time figure", report.calls_without_duration);
    }
    if !not_recorded.time.is_empty() {
        let _ = writeln!(
            out,
            "  Time not recorded by {}: nothing measured their calls and their records time no turn",
            named(&not_recorded.time)
        );
    }
    if !not_recorded.limits.is_empty() {
        let _ = writeln!(
            out,
            "  Limit hits not recorded by {}: their records keep no usage-limit notice",
            named(&not_recorded.limits)
        );
    }
    for provider in &report.providers {
        // As above: no measured call is an unknown time, not "0m".
        let time = match (provider.agent_time_ms, provider.used_ms) {
            (Some(agent), Some(used)) => format!("agent time {}  used {}", duration(agent), duration(used)),
            _ => "agent time unknown".to_owned(),
        };
        let _ = writeln!(
            out,
            "\n  {}  calls {}  {time}  converted {}  crossed {}",
            provider.provider.as_str(),
            provider.calls,
            provider.converted,
            crossed(provider.crossed, false)
        );
        match &provider.derived {
            Some(time) if time.turns > 0 => {
                let _ = writeln!(out, "    derived: {}", derived(time));
            }
            Some(_) => {}
            None if provider.calls == 0 => {
                let _ = writeln!(out, "    no turn timed: its records give Bee no time span");
            }
            None => {}
        }
        if provider.crossed.is_none() {
            let _ = writeln!(out, "    limit hits unknown: its records keep no usage-limit notice");
        }
        if provider.issues.iter().any(|i| i == bee_proto::ledger::SNAPSHOTS_MISSING_ISSUE) {
            let _ = writeln!(
                out,
                "    warning {}: active with no quota snapshot, though it reports its windows with every response",
                bee_proto::ledger::SNAPSHOTS_MISSING_ISSUE
            );
        } else if provider.windows.is_empty() {
            let _ = writeln!(out, "    no quota snapshots: no window, no peak");
        }
        for window in &provider.windows {
            let exhausted = match window.exhausted {
                Some(true) => "exhausted",
                Some(false) => "",
                None => "exhausted: unknown",
            };
            let _ = writeln!(
                out,
                "    {:<9} resets {:<24} peak {:>5.1}% {} {}",
                window.window.as_str(),
                window.resets_at_utc.as_deref().unwrap_or("unknown"),
                window.peak_percent,
                bar(window.peak_percent),
                exhausted
            );
        }
    }
    out
}

fn status_table(report: &LedgerStatus) -> String {
    let mut out = quota_table(&report.quota);
    let cost = match (report.est_cost_usd, report.sessions_without_cost) {
        (None, _) => "unknown (no CLI reported one)".to_owned(),
        (Some(c), 0) => format!("${c:.4}"),
        (Some(c), n) => format!("≥${c:.4} ({} with no reported cost left out)", counted(n, "session")),
    };
    let _ = writeln!(out, "\n  est. cost {cost} — as the CLIs reported it, never computed by Bee");
    if report.record_failures > 0 {
        let _ = writeln!(
            out,
            "  warning {}: {} ledger writes were lost in this range (neither beed nor the spool took them)",
            bee_proto::ledger::RECORD_FAILED,
            report.record_failures
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bee_proto::ledger::{DerivedTime, NotRecorded, Provider, ProviderQuota};

    fn report(calls: u64, derived_turns: u64) -> QuotaReport {
        let derived = DerivedTime { turns: derived_turns, agent_time_ms: derived_turns * 120_000, used_ms: 0 };
        let measured = |ms: u64| (calls > 0).then_some(ms);
        let (agent_time_ms, used_ms) = (measured(calls * 60_000), measured(calls * 60_000));
        QuotaReport {
            schema_version: 1,
            since_utc: "2026-11-30T00:00:00.000Z".to_owned(),
            until_utc: "2026-12-01T00:00:00.000Z".to_owned(),
            provider: None,
            agent_time_ms,
            used_ms,
            idle_ms: used_ms.map(|used| 86_400_000 - used),
            converted: 0,
            crossed: Some(0),
            calls_without_duration: 0,
            derived: Some(derived.clone()),
            providers: vec![ProviderQuota {
                provider: Provider::Claude,
                calls,
                agent_time_ms,
                used_ms,
                derived: Some(derived),
                converted: 0,
                crossed: Some(0),
                windows: Vec::new(),
                issues: Vec::new(),
            }],
            not_recorded: NotRecorded::default(),
            issues: Vec::new(),
        }
    }

    /// With no measured call the table says the time is unknown, overall
    /// and per provider, and shows the derived turns apart: never "0m".
    #[test]
    fn no_measured_call_is_an_unknown_time_in_every_line() {
        let table = quota_table(&report(0, 3));
        assert!(table.contains("Agent time unknown"), "{table}");
        assert!(table.contains("claude  calls 0  agent time unknown"), "{table}");
        assert!(table.contains("derived: 3 turns, agent time 6m"), "{table}");
        assert!(!table.contains("agent time 0m") && !table.contains("Idle"), "{table}");
        let measured = quota_table(&report(2, 0));
        assert!(measured.contains("Agent time 2m   Used 2m   Idle 23h 58m"), "{measured}");
        assert!(measured.contains("claude  calls 2  agent time 2m  used 2m"), "{measured}");
    }

    /// The missing snapshots are said of the provider they concern.
    #[test]
    fn missing_snapshots_name_their_provider() {
        let mut missing = report(1, 0);
        missing.providers[0].provider = Provider::Codex;
        missing.providers[0].issues = vec![bee_proto::ledger::SNAPSHOTS_MISSING_ISSUE.to_owned()];
        let table = quota_table(&missing);
        assert!(
            table.contains("codex  calls 1") && table.contains("    warning quota_snapshots_missing: active"),
            "{table}"
        );
    }

    /// An agent whose records time no turn and keep no limit notice (pi)
    /// beside one whose do: its hits and turns read as unknown, never 0,
    /// and the sums over both as lower bounds, naming it.
    #[test]
    fn what_an_agent_never_records_reads_as_unknown_and_named() {
        let mut mixed = report(1, 0);
        mixed.crossed = Some(2);
        mixed.providers[0].crossed = Some(2);
        mixed.providers.push(ProviderQuota {
            provider: Provider::Pi,
            calls: 0,
            agent_time_ms: None,
            used_ms: None,
            derived: None,
            converted: 0,
            crossed: None,
            windows: Vec::new(),
            issues: vec!["time_not_measured".to_owned(), "limits_not_recorded".to_owned()],
        });
        mixed.not_recorded = NotRecorded { time: vec![Provider::Pi], limits: vec![Provider::Pi] };
        let table = quota_table(&mixed);
        assert!(table.contains("Agent time ≥1m   Used ≥1m") && table.contains("Crossed ≥2"), "{table}");
        assert!(
            table.contains("Time not recorded by pi") && table.contains("Limit hits not recorded by pi"),
            "{table}"
        );
        assert!(table.contains("pi  calls 0  agent time unknown  converted 0  crossed unknown"), "{table}");
        assert!(table.contains("    limit hits unknown: its records keep no usage-limit notice"), "{table}");
        assert!(!table.contains("crossed 0") && !table.contains("Crossed 0"), "{table}");
    }

    /// A short measured time reads in seconds: never "0m" for a turn that
    /// took five seconds.
    #[test]
    fn a_short_time_reads_in_seconds() {
        assert_eq!(duration(0), "0m");
        assert_eq!(duration(400), "<1s");
        assert_eq!(duration(5_000), "5s");
        assert_eq!(duration(59_999), "59s");
        assert_eq!(duration(60_000), "1m");
        assert_eq!(duration(3_900_000), "1h 05m");
        let mut one = report(0, 1);
        let five_seconds = DerivedTime { turns: 1, agent_time_ms: 5_000, used_ms: 5_000 };
        one.derived = Some(five_seconds.clone());
        one.providers[0].derived = Some(five_seconds);
        let table = quota_table(&one);
        assert!(table.contains("derived: 1 turn, agent time 5s, used 5s"), "{table}");
        assert!(!table.contains("0m"), "{table}");
    }
}
