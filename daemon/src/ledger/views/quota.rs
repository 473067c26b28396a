//! The dashboard words over a range of the ledger: Agent time, Used, Idle,
//! Converted, Crossed, per-provider quota windows with their peak and
//! `exhausted`, and the reported cost (token usage is `usage`'s).

use bee_proto::ledger::{DerivedTime, LedgerStatus, NotRecorded, Provider, ProviderQuota, QuotaReport, QuotaWindow};
use std::collections::BTreeMap;

use crate::ledger::agents;
pub use crate::ledger::stored::schema::Range;
use crate::ledger::stored::store::{LedgerView, LimitRow};
use bee_proto::time::format_unix_ms;
use bee_proto::usage::WindowKind;

/// `beectl quota` over `view` for `range`, optionally one provider. A
/// figure an active agent's records cannot say (its turns, its limit hits:
/// see `agents::records`) is `null` for it, never 0, with an issue naming
/// it (`time_not_measured`, `limits_not_recorded`, and `notRecorded`); a
/// sum over it and agents that can say it is a lower bound (`partial`).
pub fn quota(view: &LedgerView, range: Range, only: Option<Provider>) -> QuotaReport {
    let wanted = |p: Provider| only.is_none_or(|o| o == p);
    let summary = &view.summary;
    let overall = match only {
        None => summary.all.clone(),
        Some(provider) => summary.providers.get(&provider).cloned().unwrap_or_default(),
    };
    let in_range = |at: i64| range.contains(at);
    let mut providers: Vec<Provider> =
        summary.providers.keys().chain(summary.derived_providers.keys()).copied().filter(|p| wanted(*p)).collect();
    providers.extend(view.snapshots.iter().map(|s| s.provider).filter(|p| wanted(*p)));
    providers.extend(view.responded.iter().copied().filter(|p| wanted(*p)));
    providers
        .extend(view.limits.iter().map(|l| l.provider).chain(view.work.iter().map(|(p, _)| *p)).filter(|p| wanted(*p)));
    providers.sort();
    providers.dedup();
    let per_provider: Vec<ProviderQuota> = providers
        .into_iter()
        .map(|provider| {
            let says = agents::records(provider);
            let tally = summary.providers.get(&provider).cloned().unwrap_or_default();
            let hits = view.limits.iter().filter(|l| l.provider == provider && in_range(l.at_ms)).count() as u64;
            // Hits its records cannot hold are unknown, not 0; a hit that
            // reached the ledger anyway (a producer's) is known.
            let crossed = (says.limit_notices || hits > 0).then_some(hits);
            let derived_tally = summary.derived_providers.get(&provider);
            let derived =
                (says.time_spans || derived_tally.is_some_and(|t| t.calls > 0)).then(|| derived_time(derived_tally));
            let windows = windows(view, provider);
            // Codex reports its windows with every response (rate-limit
            // headers): Codex activity without a single snapshot means they
            // went missing.
            let snapshots_missing = provider == Provider::Codex && (tally.calls > 0 || hits > 0) && windows.is_empty();
            let mut issues = Vec::new();
            if snapshots_missing {
                issues.push(bee_proto::ledger::SNAPSHOTS_MISSING_ISSUE.to_owned());
            }
            if tally.calls == 0 {
                issues.push(bee_proto::ledger::TIME_NOT_MEASURED_ISSUE.to_owned());
            }
            if crossed.is_none() {
                issues.push(bee_proto::ledger::LIMITS_NOT_RECORDED_ISSUE.to_owned());
            }
            ProviderQuota {
                provider,
                calls: tally.calls,
                agent_time_ms: (tally.calls > 0).then_some(tally.agent_ms),
                used_ms: (tally.calls > 0).then_some(tally.used_ms),
                derived,
                converted: view.work.iter().filter(|(p, at)| *p == provider && in_range(*at)).count() as u64,
                crossed,
                windows,
                issues,
            }
        })
        .collect();
    // The agents whose records cannot say a figure: nothing measured their
    // time and their records time no turn; their records hold no hit.
    let not_recorded = NotRecorded {
        time: per_provider.iter().filter(|p| p.calls == 0 && p.derived.is_none()).map(|p| p.provider).collect(),
        limits: per_provider.iter().filter(|p| p.crossed.is_none()).map(|p| p.provider).collect(),
    };
    let mut issues = Vec::new();
    if overall.without_duration > 0 {
        issues.push("calls_without_duration".to_owned());
    }
    if view.summary.damaged_records > 0 {
        issues.push(bee_proto::ledger::CORRUPT_ISSUE.to_owned());
    }
    // Known when any agent of the range can say it (their sum, a lower
    // bound while another cannot); with no agent active, 0 is the truth.
    let all_unknown = |unknown: &[Provider]| !per_provider.is_empty() && unknown.len() == per_provider.len();
    let derived = (!all_unknown(&not_recorded.time)).then(|| {
        derived_time(match only {
            None => Some(&summary.derived_all),
            Some(provider) => summary.derived_providers.get(&provider),
        })
    });
    let crossed = (!all_unknown(&not_recorded.limits))
        .then(|| view.limits.iter().filter(|l| wanted(l.provider) && in_range(l.at_ms)).count() as u64);
    // Turns the logs timed, or responses nothing timed: the agent worked,
    // and a measured time of zero would say it did not.
    let responded = view.responded.iter().any(|p| wanted(*p));
    let hit = view.limits.iter().any(|l| wanted(l.provider) && in_range(l.at_ms));
    let derived_turns = derived.as_ref().is_some_and(|d| d.turns > 0);
    let time_unknown = overall.calls == 0 && (derived_turns || responded || hit);
    if time_unknown || !not_recorded.time.is_empty() {
        issues.push(bee_proto::ledger::TIME_NOT_MEASURED_ISSUE.to_owned());
    }
    // Unknown time is null, never a 0 that reads as "no usage"; with
    // nothing happening at all, 0 is the truth.
    let measured = |ms: u64| (!time_unknown).then_some(ms);
    // Said of the provider it concerns, and in the report's issues.
    if per_provider.iter().any(|p| p.issues.iter().any(|i| i == bee_proto::ledger::SNAPSHOTS_MISSING_ISSUE)) {
        issues.push(bee_proto::ledger::SNAPSHOTS_MISSING_ISSUE.to_owned());
    }
    if !not_recorded.limits.is_empty() {
        issues.push(bee_proto::ledger::LIMITS_NOT_RECORDED_ISSUE.to_owned());
    }
    // A known sum with unknown parts: measured time or derived turns that
    // leave out agents nothing can time, hits that leave out agents whose
    // records hold none.
    let partial_time = !not_recorded.time.is_empty() && (!time_unknown || derived.is_some());
    let partial_hits = !not_recorded.limits.is_empty() && crossed.is_some();
    if partial_time || partial_hits {
        issues.push(bee_proto::ledger::PARTIAL_ISSUE.to_owned());
    }
    QuotaReport {
        schema_version: 1,
        since_utc: format_unix_ms(range.since_ms),
        until_utc: format_unix_ms(range.until_ms),
        provider: only,
        agent_time_ms: measured(overall.agent_ms),
        used_ms: measured(overall.used_ms),
        idle_ms: measured(range.len().saturating_sub(overall.used_ms)),
        converted: view.work.iter().filter(|(p, at)| wanted(*p) && in_range(*at)).count() as u64,
        crossed,
        calls_without_duration: overall.without_duration,
        derived,
        providers: per_provider,
        not_recorded,
        issues,
    }
}

fn derived_time(tally: Option<&crate::ledger::stored::rollup::Tally>) -> DerivedTime {
    tally.map_or_else(DerivedTime::default, |t| DerivedTime {
        turns: t.calls,
        agent_time_ms: t.agent_ms,
        used_ms: t.used_ms,
    })
}

/// A provider's quota windows: its snapshots grouped by limit family,
/// window and reset time.
fn windows(view: &LedgerView, provider: Provider) -> Vec<QuotaWindow> {
    type Key = (Option<String>, String, Option<i64>, Option<i64>);
    let mut groups: BTreeMap<Key, (WindowKind, Vec<f64>)> = BTreeMap::new();
    for snapshot in view.snapshots.iter().filter(|s| s.provider == provider) {
        let key = (
            snapshot.limit_id.clone(),
            snapshot.window.as_str().to_owned(),
            snapshot.window_minutes,
            snapshot.resets_ms,
        );
        groups.entry(key).or_insert_with(|| (snapshot.window, Vec::new())).1.push(snapshot.used_percent);
    }
    groups
        .into_iter()
        .map(|((limit_id, _, minutes, resets), (window, used))| {
            let peak = used.iter().copied().fold(0.0, f64::max);
            let exhausted = match (minutes, resets) {
                (Some(minutes), Some(resets)) => {
                    let hits = view
                        .limits
                        .iter()
                        .filter(|l| l.provider == provider && l.at_ms >= resets - minutes * 60_000 && l.at_ms < resets);
                    exhausted_by(hits, limit_id.as_deref(), window, minutes, peak)
                }
                // The window's bounds are unknown.
                _ => None,
            };
            QuotaWindow {
                limit_id,
                window,
                window_minutes: minutes.and_then(|m| u64::try_from(m).ok()),
                resets_at_utc: resets.map(format_unix_ms),
                peak_percent: peak,
                snapshots: used.len() as u64,
                exhausted,
            }
        })
        .collect()
}

/// Whether the `hits` inside a window (of family `limit_id`, kind `window`,
/// `minutes` long, peaking at `peak` %) exhausted it: a hit that named it,
/// or any hit of its family while it stood at 100 %; `None` when a hit named
/// no window and this one was below 100 % (which window hit is unknown).
fn exhausted_by<'a>(
    hits: impl Iterator<Item = &'a LimitRow>,
    limit_id: Option<&str>,
    window: WindowKind,
    minutes: i64,
    peak: f64,
) -> Option<bool> {
    let mut answer = Some(false);
    for hit in hits {
        let family_matches = hit.limit_id.as_deref().is_none_or(|id| Some(id) == limit_id);
        let named_this =
            family_matches && hit.window == Some(window) && hit.window_minutes.is_none_or(|m| m == minutes);
        if named_this || (family_matches && peak >= 100.0) {
            return Some(true);
        }
        if hit.window.is_none() {
            answer = None;
        }
    }
    answer
}

/// `beectl status`: the quota view plus reported costs and the ledger
/// writes noted as lost in the range; `sessions_without_cost` are the
/// range's sessions with usage whose cost nobody reported.
pub fn status(view: &LedgerView, range: Range, record_failures: u64, sessions_without_cost: u64) -> LedgerStatus {
    let mut quota = quota(view, range, None);
    if record_failures > 0 {
        quota.issues.push(bee_proto::ledger::RECORD_FAILED.to_owned());
    }
    // Costs the CLIs reported: the producers' (for sessions whose logs do
    // not report theirs) and the growth of the sessions' own cumulative cost.
    let est_cost_usd = match (view.summary.all.cost_usd, view.session_cost_usd) {
        (None, None) => None,
        (calls, sessions) => Some(calls.unwrap_or(0.0) + sessions.unwrap_or(0.0)),
    };
    // A sum that leaves out sessions whose cost nobody reported is a lower
    // bound, and says so; with nothing reported it is null already.
    let partial = bee_proto::ledger::PARTIAL_ISSUE;
    if est_cost_usd.is_some() && sessions_without_cost > 0 && !quota.issues.iter().any(|i| i == partial) {
        quota.issues.push(partial.to_owned());
    }
    LedgerStatus {
        quota,
        record_failures,
        est_cost_usd,
        calls_with_cost: view.summary.all.cost_calls,
        sessions_with_cost: view.sessions_with_cost,
        sessions_without_cost,
    }
}

/// `beectl usage`: the provider responses first written in `range` (each
/// once, globally), and producer calls standing in for sessions without a
/// log, as `view` was read grouped by `by`. A sum with unknown parts says
/// so (`partial`, with their count), and so do responses not final yet
/// (`pending`): the totals never look complete while they are not.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::stored::rollup::{CallRow, Summary};
    use crate::ledger::stored::store::{LimitRow, SnapshotRow};
    use bee_proto::ledger::CallSource;
    use bee_proto::usage::{Counters, WindowKind};

    const H: i64 = 3_600_000;
    const M: i64 = 60_000;

    fn call(provider: Provider, start: i64, duration: Option<i64>, cost: Option<f64>) -> CallRow {
        CallRow {
            started_ms: start,
            duration_ms: duration,
            provider,
            source: CallSource::Run,
            model: Some("claude-sonnet-4-5".into()),
            session_id: None,
            cost_usd: cost,
            tokens: Some(Counters {
                input_tokens: Some(10),
                cache_creation_input_tokens: Some(0),
                cache_read_input_tokens: Some(0),
                output_tokens: Some(1),
                ..Counters::default()
            }),
            logged: false,
            folded: false,
        }
    }

    /// The view of `calls` as the records give it (no aggregates involved).
    fn calls_view(calls: Vec<CallRow>, range: Range) -> LedgerView {
        LedgerView { summary: Summary::of_records(&calls, &[], range, None), ..LedgerView::default() }
    }

    #[test]
    fn overlapping_calls_count_twice_in_agent_time_once_in_used() {
        // Window 10:00–15:00 (as ms from 0 = 10:00).
        let range = Range { since_ms: 0, until_ms: 5 * H };
        let calls = vec![
            call(Provider::Claude, 60 * M, Some(60 * M), None),    // 11:00–12:00
            call(Provider::Codex, 90 * M, Some(60 * M), None),     // 11:30–12:30
            call(Provider::Claude, 4 * H + 30 * M, Some(H), None), // 14:30–15:30, clipped to 30 min
            call(Provider::Claude, -30 * M, Some(H), None),        // 09:30–10:30, clipped to 30 min
            call(Provider::Claude, 2 * H, None, None),             // duration unknown
        ];
        let view = calls_view(calls, range);
        let report = quota(&view, range, None);
        let ms = |v: Option<u64>| v.map(|v| v as i64);
        assert_eq!(ms(report.agent_time_ms), Some(60 * M + 60 * M + 30 * M + 30 * M));
        assert_eq!(ms(report.used_ms), Some(90 * M + 30 * M + 30 * M), "11:00–12:30 once, plus both clipped ends");
        assert_eq!(ms(report.idle_ms), Some(5 * H - 150 * M));
        assert_eq!(report.calls_without_duration, 1);
        assert_eq!(
            report.issues,
            ["calls_without_duration", "quota_snapshots_missing"],
            "Codex ran and sent no window: a warning"
        );
        assert_eq!(report.providers[1].issues, ["quota_snapshots_missing"], "said of Codex");
        assert!(report.providers[0].issues.is_empty(), "not of Claude");
        let claude = &report.providers[0];
        assert_eq!((claude.provider, claude.calls, ms(claude.agent_time_ms)), (Provider::Claude, 4, Some(120 * M)));
        assert!(claude.windows.is_empty(), "no snapshots: no window, no peak");
        // One provider only.
        let codex = quota(&view, range, Some(Provider::Codex));
        assert_eq!((ms(codex.agent_time_ms), codex.providers.len()), (Some(60 * M), 1));
    }

    fn snapshot(limit_id: &str, window: WindowKind, observed: i64, used: f64, resets: Option<i64>) -> SnapshotRow {
        SnapshotRow {
            provider: Provider::Codex,
            observed_ms: observed,
            window,
            window_minutes: Some(if window == WindowKind::FiveHour { 300 } else { 10_080 }),
            used_percent: used,
            resets_ms: resets,
            limit_id: Some(limit_id.to_owned()),
        }
    }

    fn hit(provider: Provider, at_ms: i64, window: Option<WindowKind>, limit_id: Option<&str>) -> LimitRow {
        LimitRow {
            provider,
            at_ms,
            window,
            window_minutes: window.map(|w| if w == WindowKind::FiveHour { 300 } else { 10_080 }),
            limit_id: limit_id.map(str::to_owned),
        }
    }

    #[test]
    fn only_the_window_that_hit_is_exhausted_and_peaks_are_per_window_and_family() {
        let range = Range { since_ms: 0, until_ms: 10 * H };
        let five = WindowKind::FiveHour;
        let view = LedgerView {
            snapshots: vec![
                snapshot("codex", five, H, 20.0, Some(5 * H)),
                snapshot("codex", five, 2 * H, 65.5, Some(5 * H)),
                snapshot("codex", WindowKind::Weekly, 2 * H, 40.0, Some(100 * H)),
                snapshot("codex_other", five, 2 * H, 12.0, Some(5 * H)),
                snapshot("codex", five, 6 * H, 10.0, Some(10 * H)),
                snapshot("codex", five, 7 * H, 30.0, None),
            ],
            limits: vec![
                hit(Provider::Codex, 4 * H, Some(five), Some("codex")),
                hit(Provider::Claude, 8 * H, None, None),
            ],
            work: vec![(Provider::Codex, 3 * H), (Provider::Codex, 11 * H)],
            ..LedgerView::default()
        };
        let report = quota(&view, range, None);
        assert_eq!((report.crossed, report.converted), (Some(2), 1));
        let codex = report.providers.iter().find(|p| p.provider == Provider::Codex).unwrap();
        let summary: Vec<(Option<&str>, f64, Option<bool>)> =
            codex.windows.iter().map(|w| (w.limit_id.as_deref(), w.peak_percent, w.exhausted)).collect();
        assert_eq!(
            summary,
            vec![
                (Some("codex"), 30.0, None),
                (Some("codex"), 65.5, Some(true)),
                (Some("codex"), 10.0, Some(false)),
                (Some("codex"), 40.0, Some(false)),
                (Some("codex_other"), 12.0, Some(false)),
            ],
            "the named five-hour window of its family hit; the weekly one and the other family did not"
        );
        let claude = report.providers.iter().find(|p| p.provider == Provider::Claude).unwrap();
        assert_eq!((claude.crossed, claude.windows.len()), (Some(1), 0));
    }

    #[test]
    fn a_hit_that_names_no_window_exhausts_the_full_one_and_leaves_the_others_unknown() {
        let range = Range { since_ms: 0, until_ms: 10 * H };
        let view = LedgerView {
            snapshots: vec![
                snapshot("codex", WindowKind::FiveHour, 2 * H, 100.0, Some(5 * H)),
                snapshot("codex", WindowKind::Weekly, 2 * H, 40.0, Some(100 * H)),
            ],
            limits: vec![hit(Provider::Codex, 2 * H + M, None, None)],
            ..LedgerView::default()
        };
        let report = quota(&view, range, None);
        let exhausted: Vec<Option<bool>> = report.providers[0].windows.iter().map(|w| w.exhausted).collect();
        assert_eq!(exhausted, vec![Some(true), None]);
    }

    #[test]
    fn notices_of_one_hit_are_one_limit() {
        let limits = vec![
            hit(Provider::Codex, 0, None, None),
            hit(Provider::Codex, M, Some(WindowKind::FiveHour), Some("codex")),
            hit(Provider::Claude, 2 * M, None, None),
            hit(Provider::Codex, H, None, None),
        ];
        let hits = crate::ledger::stored::store::one_per_hit(limits);
        assert_eq!(hits.len(), 3);
        assert_eq!(
            (hits[0].at_ms, hits[0].window, hits[0].limit_id.as_deref()),
            (0, Some(WindowKind::FiveHour), Some("codex"))
        );
    }

    /// Responses in the window that no call and no derived turn timed (a
    /// log without prompt lines, say): the time is unknown, not zero.
    #[test]
    fn responses_nothing_timed_make_the_time_unknown() {
        let range = Range { since_ms: 0, until_ms: H };
        let view = LedgerView { responded: vec![Provider::Codex], ..LedgerView::default() };
        let report = quota(&view, range, None);
        assert_eq!((report.agent_time_ms, report.used_ms, report.idle_ms), (None, None, None), "unknown, not 0");
        assert_eq!(report.derived.map(|d| d.turns), Some(0), "Codex's rollouts time turns: none here");
        assert_eq!(report.issues, ["time_not_measured"]);
        assert_eq!(report.providers[0].agent_time_ms, None);
        assert!(quota(&view, range, Some(Provider::Claude)).issues.is_empty(), "Claude did nothing");
        let timed = LedgerView {
            responded: vec![Provider::Claude],
            ..calls_view(vec![call(Provider::Claude, 0, Some(M), None)], range)
        };
        assert!(quota(&timed, range, None).issues.is_empty(), "{:?}", quota(&timed, range, None).issues);
        let idle = quota(&LedgerView::default(), range, None);
        assert!(idle.issues.is_empty(), "nothing happened: zero is the truth");
        assert_eq!((idle.agent_time_ms, idle.idle_ms), (Some(0), Some(H as u64)));
        // A limit hit with nothing timed: the agent worked, time unknown.
        let hit_only = LedgerView { limits: vec![hit(Provider::Claude, M, None, None)], ..LedgerView::default() };
        assert_eq!(quota(&hit_only, range, None).idle_ms, None);
    }

    /// Agents whose records time no turn and keep no limit notice (Qwen
    /// Code, OpenCode, pi) worked in the range: their turns and hits are
    /// unknown — `null`, with the issues naming them — never the zeros that
    /// would say they had none.
    #[test]
    fn what_an_agent_never_records_is_null_never_zero() {
        let range = Range { since_ms: 0, until_ms: H };
        let quiet = [Provider::Qwen, Provider::OpenCode, Provider::Pi];
        let view = LedgerView { responded: quiet.to_vec(), ..LedgerView::default() };
        let report = quota(&view, range, None);
        assert_eq!((report.derived.clone(), report.crossed), (None, None));
        assert_eq!((report.agent_time_ms, report.idle_ms), (None, None));
        let mut named = quiet.to_vec();
        named.sort();
        assert_eq!((&report.not_recorded.time, &report.not_recorded.limits), (&named, &named));
        assert_eq!(report.issues, ["time_not_measured", "limits_not_recorded"], "nothing known to be partial");
        for provider in &report.providers {
            assert_eq!((provider.derived.clone(), provider.crossed), (None, None), "{provider:?}");
            assert_eq!(provider.issues, ["time_not_measured", "limits_not_recorded"], "{provider:?}");
        }
        let json = serde_json::to_value(&report).unwrap();
        assert!(json["derived"].is_null() && json["crossed"].is_null(), "{json}");
        assert!(json["providers"][0]["derived"].is_null() && json["providers"][0]["crossed"].is_null(), "{json}");
        // One of them alone, asked for by name.
        let pi = quota(&view, range, Some(Provider::Pi));
        assert_eq!((pi.crossed, pi.not_recorded.limits.clone()), (None, vec![Provider::Pi]));
    }

    /// Claude Code (measured, its hit recorded) beside OpenCode (neither):
    /// the known sums are lower bounds, `partial`, and OpenCode is named;
    /// Claude's own figures stay whole.
    #[test]
    fn a_sum_over_agents_that_record_and_agents_that_do_not_is_partial() {
        let range = Range { since_ms: 0, until_ms: H };
        let view = LedgerView {
            responded: vec![Provider::Claude, Provider::OpenCode],
            limits: vec![hit(Provider::Claude, M, None, None)],
            ..calls_view(vec![call(Provider::Claude, 0, Some(10 * M), Some(0.5))], range)
        };
        let report = quota(&view, range, None);
        assert_eq!((report.crossed, report.agent_time_ms), (Some(1), Some(10 * M as u64)));
        assert_eq!(report.derived.map(|d| d.turns), Some(0));
        assert_eq!(
            (report.not_recorded.time.clone(), report.not_recorded.limits.clone()),
            (vec![Provider::OpenCode], vec![Provider::OpenCode])
        );
        assert_eq!(report.issues, ["time_not_measured", "limits_not_recorded", "partial"]);
        let claude = &report.providers[0];
        assert_eq!((claude.provider, claude.crossed, claude.issues.len()), (Provider::Claude, Some(1), 0));
        let opencode = &report.providers[1];
        assert_eq!((opencode.crossed, opencode.derived.clone()), (None, None));
        // Claude alone: nothing unknown, nothing partial.
        let alone = quota(&view, range, Some(Provider::Claude));
        assert!(alone.issues.is_empty() && alone.not_recorded.is_empty(), "{:?}", alone.issues);
        // `status` says `partial` once, whatever made it so.
        let status = status(&view, range, 0, 1);
        assert_eq!(status.quota.issues.iter().filter(|i| *i == "partial").count(), 1);
    }

    #[test]
    fn cost_unknown_is_null_and_a_reported_zero_is_zero() {
        let range = Range { since_ms: 0, until_ms: H };
        let unknown = calls_view(vec![call(Provider::Claude, 0, Some(M), None)], range);
        assert_eq!(status(&unknown, range, 0, 0).est_cost_usd, None);
        let zero = calls_view(vec![call(Provider::Claude, 0, Some(M), Some(0.0))], range);
        assert_eq!(
            (status(&zero, range, 0, 0).est_cost_usd, status(&zero, range, 0, 0).calls_with_cost),
            (Some(0.0), 1)
        );
    }

    /// A reported cost that leaves out sessions nobody reported one for is
    /// a lower bound (`partial`); with nothing reported it is null, and a
    /// null needs no bound.
    #[test]
    fn a_cost_sum_that_leaves_sessions_out_is_partial() {
        let range = Range { since_ms: 0, until_ms: H };
        let some = calls_view(vec![call(Provider::Claude, 0, Some(M), Some(0.5))], range);
        let report = status(&some, range, 0, 2);
        assert_eq!((report.est_cost_usd, report.sessions_without_cost), (Some(0.5), 2));
        assert_eq!(report.quota.issues, ["partial"]);
        let none = calls_view(vec![call(Provider::Claude, 0, Some(M), None)], range);
        let report = status(&none, range, 0, 2);
        assert_eq!((report.est_cost_usd, report.quota.issues.len()), (None, 0));
        let all = calls_view(vec![call(Provider::Claude, 0, Some(M), Some(0.5))], range);
        assert!(status(&all, range, 0, 0).quota.issues.is_empty());
    }
}
