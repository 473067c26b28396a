//! The dashboard words over a range of the ledger: Agent time, Used, Idle,
//! Converted, Crossed, per-provider quota windows with their peak and
//! `exhausted`, the reported cost, and token usage by day, session or model.

use bee_proto::ledger::{
    LedgerStatus, Provider, ProviderQuota, QuotaReport, QuotaWindow, UsageGrouping, UsageReport, UsageRow,
};
use bee_proto::usage::Counters;
use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use crate::ledger::{CallRow, LedgerView};

/// A half-open range of unix milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub since_ms: i64,
    pub until_ms: i64,
}

impl Range {
    fn len(self) -> u64 {
        (self.until_ms - self.since_ms).max(0) as u64
    }

    /// `[start, end)` clipped to the range, when they overlap.
    fn clip(self, start: i64, end: i64) -> Option<(i64, i64)> {
        let (start, end) = (start.max(self.since_ms), end.min(self.until_ms));
        (end > start).then_some((start, end))
    }
}

/// RFC 3339 UTC (milliseconds) of unix milliseconds.
pub fn utc(ms: i64) -> String {
    bee_proto::time::format_rfc3339(UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64))
}

fn interval(call: &CallRow) -> Option<(i64, i64)> {
    call.duration_ms.map(|d| (call.started_ms, call.started_ms.saturating_add(d.max(0))))
}

/// Summed clipped durations and the length of their union.
fn times<'a>(calls: impl Iterator<Item = &'a CallRow>, range: Range) -> (u64, u64) {
    let mut clipped: Vec<(i64, i64)> =
        calls.filter_map(interval).filter_map(|(start, end)| range.clip(start, end)).collect();
    let agent: u64 = clipped.iter().map(|(s, e)| (e - s) as u64).sum();
    clipped.sort_unstable();
    let mut used = 0u64;
    let mut current: Option<(i64, i64)> = None;
    for (start, end) in clipped {
        match current {
            Some((s, e)) if start <= e => current = Some((s, e.max(end))),
            Some((s, e)) => {
                used += (e - s) as u64;
                current = Some((start, end));
            }
            None => current = Some((start, end)),
        }
    }
    if let Some((s, e)) = current {
        used += (e - s) as u64;
    }
    (agent, used)
}

/// `beectl quota` over `view` for `range`, optionally one provider.
pub fn quota(view: &LedgerView, range: Range, only: Option<Provider>) -> QuotaReport {
    let wanted = |p: Provider| only.is_none_or(|o| o == p);
    let calls: Vec<&CallRow> = view.calls.iter().filter(|c| wanted(c.provider)).collect();
    let (agent, used) = times(calls.iter().copied(), range);
    let in_range = |at: i64| at >= range.since_ms && at < range.until_ms;
    let mut providers: Vec<Provider> = calls.iter().map(|c| c.provider).collect();
    providers.extend(view.snapshots.iter().map(|s| s.provider).filter(|p| wanted(*p)));
    providers.extend(view.limits.iter().chain(&view.work).map(|(p, _)| *p).filter(|p| wanted(*p)));
    providers.sort();
    providers.dedup();
    let per_provider = providers
        .into_iter()
        .map(|provider| {
            let mine = || calls.iter().copied().filter(move |c| c.provider == provider);
            let (agent_time_ms, used_ms) = times(mine(), range);
            ProviderQuota {
                provider,
                calls: mine().count() as u64,
                agent_time_ms,
                used_ms,
                converted: view.work.iter().filter(|(p, at)| *p == provider && in_range(*at)).count() as u64,
                crossed: view.limits.iter().filter(|(p, at)| *p == provider && in_range(*at)).count() as u64,
                windows: windows(view, provider),
            }
        })
        .collect();
    let mut issues = Vec::new();
    let calls_without_duration = calls.iter().filter(|c| c.duration_ms.is_none()).count() as u64;
    if calls_without_duration > 0 {
        issues.push("calls_without_duration".to_owned());
    }
    QuotaReport {
        schema_version: 1,
        since_utc: utc(range.since_ms),
        until_utc: utc(range.until_ms),
        provider: only,
        agent_time_ms: agent,
        used_ms: used,
        idle_ms: range.len().saturating_sub(used),
        converted: view.work.iter().filter(|(p, at)| wanted(*p) && in_range(*at)).count() as u64,
        crossed: view.limits.iter().filter(|(p, at)| wanted(*p) && in_range(*at)).count() as u64,
        calls_without_duration,
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
                resets_at_utc: resets.map(utc),
                peak_percent: used.iter().copied().fold(0.0, f64::max),
                snapshots: used.len() as u64,
                exhausted: bounds
                    .map(|(start, end)| view.limits.iter().any(|(p, at)| *p == provider && *at >= start && *at < end)),
            }
        })
        .collect()
}

/// `beectl status`: the quota view plus reported costs.
pub fn status(view: &LedgerView, range: Range) -> LedgerStatus {
    let costs: Vec<f64> = view
        .calls
        .iter()
        .filter(|c| range.clip(c.started_ms, c.started_ms + 1).is_some())
        .filter_map(|c| c.cost_usd)
        .collect();
    LedgerStatus {
        quota: quota(view, range, None),
        est_cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
        calls_with_cost: costs.len() as u64,
    }
}

/// `beectl usage`: measured counters of the calls that started in `range`.
pub fn usage(view: &LedgerView, range: Range, by: UsageGrouping) -> UsageReport {
    let mut rows: BTreeMap<Option<String>, (u64, Counters)> = BTreeMap::new();
    for call in view.calls.iter().filter(|c| c.started_ms >= range.since_ms && c.started_ms < range.until_ms) {
        let key = match by {
            UsageGrouping::Day => Some(utc(call.started_ms)[..10].to_owned()),
            UsageGrouping::Session => call.session_id.clone(),
            UsageGrouping::Model => call.model.clone(),
        };
        let entry = rows.entry(key).or_default();
        entry.0 += 1;
        entry.1.add(&call.tokens);
    }
    UsageReport {
        schema_version: 1,
        by,
        since_utc: utc(range.since_ms),
        until_utc: utc(range.until_ms),
        source: "provider_reported_counters".to_owned(),
        rows: rows.into_iter().map(|(key, (calls, tokens))| UsageRow { key, calls, tokens }).collect(),
        issues: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::SnapshotRow;
    use bee_proto::usage::WindowKind;

    const H: i64 = 3_600_000;
    const M: i64 = 60_000;

    fn call(provider: Provider, start: i64, duration: Option<i64>, cost: Option<f64>) -> CallRow {
        CallRow {
            source: bee_proto::ledger::CallSource::Run,
            session_hash: None,
            started_ms: start,
            duration_ms: duration,
            provider,
            model: Some("claude-sonnet-4-5".into()),
            session_id: None,
            cost_usd: cost,
            tokens: Counters { input_tokens: Some(10), output_tokens: Some(1), ..Counters::default() },
        }
    }

    #[test]
    fn overlapping_calls_count_twice_in_agent_time_once_in_used() {
        // Window 10:00–15:00 (as ms from 0 = 10:00).
        let range = Range { since_ms: 0, until_ms: 5 * H };
        let view = LedgerView {
            calls: vec![
                call(Provider::Claude, 60 * M, Some(60 * M), None),    // 11:00–12:00
                call(Provider::Codex, 90 * M, Some(60 * M), None),     // 11:30–12:30
                call(Provider::Claude, 4 * H + 30 * M, Some(H), None), // 14:30–15:30, clipped to 30 min
                call(Provider::Claude, -30 * M, Some(H), None),        // 09:30–10:30, clipped to 30 min
                call(Provider::Claude, 2 * H, None, None),             // duration unknown
            ],
            ..LedgerView::default()
        };
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
        let unknown = LedgerView { calls: vec![call(Provider::Claude, 0, Some(M), None)], ..LedgerView::default() };
        assert_eq!(status(&unknown, range).est_cost_usd, None);
        let zero = LedgerView { calls: vec![call(Provider::Claude, 0, Some(M), Some(0.0))], ..LedgerView::default() };
        assert_eq!((status(&zero, range).est_cost_usd, status(&zero, range).calls_with_cost), (Some(0.0), 1));
    }

    #[test]
    fn usage_groups_keep_unreported_counters_null() {
        let range = Range { since_ms: 0, until_ms: 48 * H };
        let mut late = call(Provider::Codex, 30 * H, Some(M), None);
        late.model = None;
        late.tokens = Counters { input_tokens: Some(5), reasoning_output_tokens: Some(2), ..Counters::default() };
        let view = LedgerView { calls: vec![call(Provider::Claude, H, Some(M), None), late], ..LedgerView::default() };
        let by_day = usage(&view, range, UsageGrouping::Day);
        assert_eq!(by_day.rows.len(), 2);
        assert_eq!(by_day.rows[0].key.as_deref(), Some("1970-01-01"));
        assert_eq!(by_day.rows[1].tokens.output_tokens, None);
        assert_eq!(by_day.rows[1].tokens.reasoning_output_tokens, Some(2));
        let by_model = usage(&view, range, UsageGrouping::Model);
        assert_eq!(by_model.rows[0].key, None, "a call that named no model is grouped as unknown");
    }
}
