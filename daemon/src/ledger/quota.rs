//! The dashboard words over a range of the ledger: Agent time, Used, Idle,
//! Converted, Crossed, per-provider quota windows with their peak and
//! `exhausted`, the reported cost, and token usage by day, session or model.

use bee_proto::ledger::{
    LedgerStatus, Provider, ProviderQuota, QuotaReport, QuotaWindow, UsageGrouping, UsageReport, UsageRow,
};
use std::collections::BTreeMap;

pub use crate::ledger::rollup::Range;
use crate::ledger::store::LedgerView;
use bee_proto::time::format_unix_ms;

/// `beectl quota` over `view` for `range`, optionally one provider.
pub fn quota(view: &LedgerView, range: Range, only: Option<Provider>) -> QuotaReport {
    let wanted = |p: Provider| only.is_none_or(|o| o == p);
    let summary = &view.summary;
    let overall = match only {
        None => summary.all.clone(),
        Some(provider) => summary.providers.get(&provider).cloned().unwrap_or_default(),
    };
    let in_range = |at: i64| range.contains(at);
    let mut providers: Vec<Provider> = summary.providers.keys().copied().filter(|p| wanted(*p)).collect();
    providers.extend(view.snapshots.iter().map(|s| s.provider).filter(|p| wanted(*p)));
    providers.extend(view.limits.iter().chain(&view.work).map(|(p, _)| *p).filter(|p| wanted(*p)));
    providers.sort();
    providers.dedup();
    let per_provider = providers
        .into_iter()
        .map(|provider| {
            let tally = summary.providers.get(&provider).cloned().unwrap_or_default();
            ProviderQuota {
                provider,
                calls: tally.calls,
                agent_time_ms: tally.agent_ms,
                used_ms: tally.used_ms,
                converted: view.work.iter().filter(|(p, at)| *p == provider && in_range(*at)).count() as u64,
                crossed: view.limits.iter().filter(|(p, at)| *p == provider && in_range(*at)).count() as u64,
                windows: windows(view, provider),
            }
        })
        .collect();
    let mut issues = Vec::new();
    if overall.without_duration > 0 {
        issues.push("calls_without_duration".to_owned());
    }
    if view.summary.damaged_records > 0 {
        issues.push(bee_proto::ledger::CORRUPT_ISSUE.to_owned());
    }
    QuotaReport {
        schema_version: 1,
        since_utc: format_unix_ms(range.since_ms),
        until_utc: format_unix_ms(range.until_ms),
        provider: only,
        agent_time_ms: overall.agent_ms,
        used_ms: overall.used_ms,
        idle_ms: range.len().saturating_sub(overall.used_ms),
        converted: view.work.iter().filter(|(p, at)| wanted(*p) && in_range(*at)).count() as u64,
        crossed: view.limits.iter().filter(|(p, at)| wanted(*p) && in_range(*at)).count() as u64,
        calls_without_duration: overall.without_duration,
        providers: per_provider,
        issues,
    }
}

/// A provider's quota windows: its snapshots grouped by window and reset time.
fn windows(view: &LedgerView, provider: Provider) -> Vec<QuotaWindow> {
    let mut groups: BTreeMap<(String, Option<i64>, Option<i64>), Vec<f64>> = BTreeMap::new();
    let mut kinds = BTreeMap::new();
    for snapshot in view.snapshots.iter().filter(|s| s.provider == provider) {
        let key = (format!("{:?}", snapshot.window), snapshot.window_minutes, snapshot.resets_ms);
        kinds.insert(key.clone(), snapshot.window);
        groups.entry(key).or_default().push(snapshot.used_percent);
    }
    groups
        .into_iter()
        .map(|(key, used)| {
            let (_, minutes, resets) = key.clone();
            let bounds = match (minutes, resets) {
                (Some(minutes), Some(resets)) => Some((resets - minutes * 60_000, resets)),
                _ => None,
            };
            QuotaWindow {
                window: kinds[&key],
                window_minutes: minutes.and_then(|m| u64::try_from(m).ok()),
                resets_at_utc: resets.map(format_unix_ms),
                peak_percent: used.iter().copied().fold(0.0, f64::max),
                snapshots: used.len() as u64,
                exhausted: bounds
                    .map(|(start, end)| view.limits.iter().any(|(p, at)| *p == provider && *at >= start && *at < end)),
            }
        })
        .collect()
}

/// `beectl status`: the quota view plus reported costs and the ledger
/// writes noted as lost in the range.
pub fn status(view: &LedgerView, range: Range, record_failures: u64) -> LedgerStatus {
    let mut quota = quota(view, range, None);
    if record_failures > 0 {
        quota.issues.push(bee_proto::ledger::RECORD_FAILED.to_owned());
    }
    LedgerStatus {
        quota,
        record_failures,
        est_cost_usd: view.summary.all.cost_usd,
        calls_with_cost: view.summary.all.cost_calls,
    }
}

/// `beectl usage`: measured counters of the calls that started in `range`,
/// as `view` was read grouped by `by`.
pub fn usage(view: &LedgerView, range: Range, by: UsageGrouping) -> UsageReport {
    UsageReport {
        schema_version: 1,
        by,
        since_utc: format_unix_ms(range.since_ms),
        until_utc: format_unix_ms(range.until_ms),
        source: "provider_reported_counters".to_owned(),
        rows: view
            .summary
            .usage
            .iter()
            .map(|(key, (calls, tokens))| UsageRow { key: key.clone(), calls: *calls, tokens: tokens.clone() })
            .collect(),
        issues: if view.summary.damaged_records > 0 {
            vec![bee_proto::ledger::CORRUPT_ISSUE.to_owned()]
        } else {
            Vec::new()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::rollup::{CallRow, Summary};
    use crate::ledger::store::SnapshotRow;
    use bee_proto::usage::{Counters, WindowKind};

    const H: i64 = 3_600_000;
    const M: i64 = 60_000;

    fn call(provider: Provider, start: i64, duration: Option<i64>, cost: Option<f64>) -> CallRow {
        CallRow {
            started_ms: start,
            duration_ms: duration,
            provider,
            model: Some("claude-sonnet-4-5".into()),
            session_id: None,
            cost_usd: cost,
            tokens: Counters { input_tokens: Some(10), output_tokens: Some(1), ..Counters::default() },
        }
    }

    /// The view of `calls` as the records give it (no aggregates involved).
    fn calls_view(calls: Vec<CallRow>, range: Range, by: Option<UsageGrouping>) -> LedgerView {
        LedgerView { summary: Summary::of_calls(&calls, range, by), ..LedgerView::default() }
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
        let view = calls_view(calls, range, None);
        let report = quota(&view, range, None);
        assert_eq!(report.agent_time_ms as i64, 60 * M + 60 * M + 30 * M + 30 * M);
        assert_eq!(report.used_ms as i64, 90 * M + 30 * M + 30 * M, "11:00–12:30 once, plus both clipped ends");
        assert_eq!(report.idle_ms as i64, 5 * H - 150 * M);
        assert_eq!(report.calls_without_duration, 1);
        assert_eq!(report.issues, vec!["calls_without_duration".to_owned()]);
        let claude = &report.providers[0];
        assert_eq!((claude.provider, claude.calls, claude.agent_time_ms as i64), (Provider::Claude, 4, 120 * M));
        assert!(claude.windows.is_empty(), "no snapshots: no window, no peak");
        // One provider only.
        let codex = quota(&view, range, Some(Provider::Codex));
        assert_eq!((codex.agent_time_ms as i64, codex.providers.len()), (60 * M, 1));
    }

    #[test]
    fn a_limit_inside_a_window_exhausts_it_and_peaks_are_per_window() {
        let range = Range { since_ms: 0, until_ms: 10 * H };
        let snapshot = |observed: i64, used: f64, resets: Option<i64>| SnapshotRow {
            provider: Provider::Codex,
            observed_ms: observed,
            window: WindowKind::FiveHour,
            window_minutes: Some(300),
            used_percent: used,
            resets_ms: resets,
        };
        let view = LedgerView {
            snapshots: vec![
                snapshot(H, 20.0, Some(5 * H)),
                snapshot(2 * H, 65.5, Some(5 * H)),
                snapshot(6 * H, 10.0, Some(10 * H)),
                snapshot(7 * H, 30.0, None),
            ],
            limits: vec![(Provider::Codex, 4 * H), (Provider::Claude, 8 * H)],
            work: vec![(Provider::Codex, 3 * H), (Provider::Codex, 11 * H)],
            ..LedgerView::default()
        };
        let report = quota(&view, range, None);
        assert_eq!((report.crossed, report.converted), (2, 1));
        let codex = report.providers.iter().find(|p| p.provider == Provider::Codex).unwrap();
        let summary: Vec<(f64, Option<bool>)> = codex.windows.iter().map(|w| (w.peak_percent, w.exhausted)).collect();
        assert_eq!(summary, vec![(30.0, None), (65.5, Some(true)), (10.0, Some(false))]);
        let claude = report.providers.iter().find(|p| p.provider == Provider::Claude).unwrap();
        assert_eq!((claude.crossed, claude.windows.len()), (1, 0));
    }

    #[test]
    fn cost_unknown_is_null_and_a_reported_zero_is_zero() {
        let range = Range { since_ms: 0, until_ms: H };
        let unknown = calls_view(vec![call(Provider::Claude, 0, Some(M), None)], range, None);
        assert_eq!(status(&unknown, range, 0).est_cost_usd, None);
        let zero = calls_view(vec![call(Provider::Claude, 0, Some(M), Some(0.0))], range, None);
        assert_eq!((status(&zero, range, 0).est_cost_usd, status(&zero, range, 0).calls_with_cost), (Some(0.0), 1));
    }

    #[test]
    fn usage_groups_keep_unreported_counters_null() {
        let range = Range { since_ms: 0, until_ms: 48 * H };
        let mut late = call(Provider::Codex, 30 * H, Some(M), None);
        late.model = None;
        late.tokens = Counters { input_tokens: Some(5), reasoning_output_tokens: Some(2), ..Counters::default() };
        let calls = vec![call(Provider::Claude, H, Some(M), None), late];
        let by_day = usage(&calls_view(calls.clone(), range, Some(UsageGrouping::Day)), range, UsageGrouping::Day);
        assert_eq!(by_day.rows.len(), 2);
        assert_eq!(by_day.rows[0].key.as_deref(), Some("1970-01-01"));
        assert_eq!(by_day.rows[1].tokens.output_tokens, None);
        assert_eq!(by_day.rows[1].tokens.reasoning_output_tokens, Some(2));
        let by_model = usage(&calls_view(calls, range, Some(UsageGrouping::Model)), range, UsageGrouping::Model);
        assert_eq!(by_model.rows[0].key, None, "a call that named no model is grouped as unknown");
    }
}
