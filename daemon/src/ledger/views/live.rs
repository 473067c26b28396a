//! `beectl top`'s figures: each current quota window with its trend and a
//! projection to its reset (labelled as such), each provider's burn rate
//! over the last 15 minutes, the sessions active in the last hour, and the
//! limit hits of the last day. Rates over unknown parts are lower bounds
//! with their count; a window without two snapshots has no trend; an agent
//! whose records keep no limit notice has unknown hits, never none.

use bee_proto::delivery::Issue;
use bee_proto::ledger::{
    ActiveSession, AgentLimitHits, BurnRate, HourTokens, LimitGlance, LiveView, LiveWindow, NotRecorded, Provider,
    UsageRow,
};
use bee_proto::time::{format_unix_ms, parse_rfc3339_ms};
use std::collections::BTreeMap;
use std::path::Path;

use crate::ledger::agents;
use crate::ledger::stored::schema::Range;
use crate::ledger::stored::store::{self, Reader, SnapshotRow};
use crate::ledger::views::calendar::Zone;
use crate::ledger::views::glance;
use crate::ledger::views::prices::PriceTable;

/// The burn rate's span.
pub const BURN_MINUTES: i64 = 15;
const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
/// Snapshots this recent make a window's trend.
const TREND_SPAN: i64 = 30 * MINUTE;
/// Shortest span of snapshots a trend is drawn over: closer ones move by
/// a rounding step and would project noise (thousands of percent).
pub const TREND_MIN_SPAN_MINUTES: i64 = 5;

/// The live view of the ledger in `dir` at `now_ms`.
pub fn view(dir: &Path, now_ms: i64, zone: &Zone, prices: &PriceTable) -> Result<LiveView, Issue> {
    let glance = glance::glance(dir, now_ms, zone, prices)?;
    let reader = Reader::open(dir)?;
    let (snapshots, _) = reader.snapshots(Range { since_ms: now_ms - 7 * 24 * HOUR, until_ms: now_ms + 1 })?;
    let windows = glance
        .windows
        .into_iter()
        .map(|window| {
            let resets = window.resets_at_utc.as_deref().and_then(parse_rfc3339_ms);
            let (trend, trend_snapshots) = trend(&snapshots, window.provider, window.window, resets, now_ms);
            // A window cannot be used past 100 % nor below 0 %: the
            // projection says where the trend leads, within them.
            let projected = trend.zip(resets).map(|(per_hour, at)| {
                (window.used_percent + per_hour * (at - now_ms) as f64 / HOUR as f64).clamp(0.0, 100.0)
            });
            let to_full =
                trend.filter(|t| *t > 0.0).map(|per_hour| (100.0 - window.used_percent).max(0.0) / per_hour * 60.0);
            let to_full =
                to_full.filter(|minutes| resets.is_none_or(|at| now_ms + (*minutes * MINUTE as f64) as i64 <= at));
            LiveWindow {
                window,
                trend_percent_per_hour: trend,
                trend_snapshots,
                projected_percent_at_reset: projected,
                minutes_to_full: to_full,
            }
        })
        .collect();
    // The last hour by minute: sessions' last activity, and the burn.
    let hour = Range { since_ms: now_ms - HOUR, until_ms: now_ms + 1 };
    let summary = reader.usage(hour, &|_, at: i64| at.div_euclid(MINUTE) * MINUTE)?;
    let mut sessions: BTreeMap<(Provider, Option<String>), ActiveSession> = BTreeMap::new();
    let mut burn: BTreeMap<Provider, (UsageRow, u64)> = BTreeMap::new();
    for (key, part) in &summary.parts {
        let session = sessions.entry((key.provider, key.session.clone())).or_insert_with(|| ActiveSession {
            provider: key.provider,
            session: key.session.clone(),
            models: Vec::new(),
            last_activity_utc: format_unix_ms(key.bucket),
            tokens_last_hour: None,
            partial_parts: 0,
            last_event: None,
        });
        if let Some(model) = &key.model
            && !session.models.contains(model)
        {
            session.models.push(model.clone());
        }
        if format_unix_ms(key.bucket) > session.last_activity_utc {
            session.last_activity_utc = format_unix_ms(key.bucket);
        }
        if let Some(total) = part.tokens.total_tokens {
            session.tokens_last_hour = Some(session.tokens_last_hour.unwrap_or(0) + total);
        }
        session.partial_parts += part.partial_parts;
        if key.bucket >= now_ms - BURN_MINUTES * MINUTE {
            let (row, unpriced) = burn.entry(key.provider).or_default();
            part.add_to(key.provider, row, &part.tokens);
            match prices.cost(key.provider, key.model.as_deref(), key.tier, &part.tokens) {
                Some(cost) => bee_proto::ledger::add_cost(&mut row.estimated_cost_usd, Some(cost)),
                None => *unpriced += part.responses + part.producer_calls,
            }
        }
    }
    let burn = burn
        .into_iter()
        .map(|(provider, (row, unpriced))| BurnRate {
            provider,
            minutes: BURN_MINUTES as u64,
            tokens_per_minute: row.tokens.total_tokens.map(|t| t as f64 / BURN_MINUTES as f64),
            estimated_usd_per_hour: row.estimated_cost_usd.map(|c| c * 60.0 / BURN_MINUTES as f64),
            partial_parts: row.partial_parts,
            unpriced_parts: unpriced,
        })
        .collect();
    let mut sessions: Vec<ActiveSession> = sessions.into_values().collect();
    sessions.sort_by(|a, b| b.last_activity_utc.cmp(&a.last_activity_utc));
    let today_by_hour = today_by_hour(&reader, zone.day_start(now_ms), now_ms)?;
    let day = Range { since_ms: now_ms - 24 * HOUR, until_ms: now_ms + 1 };
    let day_view = store::read_range(dir, day)?;
    let (limit_hits, not_recorded) = limit_hits(&day_view);
    let mut limits: Vec<LimitGlance> = day_view
        .limits
        .into_iter()
        .map(|hit| LimitGlance { provider: hit.provider, at_utc: format_unix_ms(hit.at_ms), window: hit.window })
        .collect();
    limits.reverse();
    let mut issues = Vec::new();
    if summary.damaged_records > 0 {
        issues.push(bee_proto::ledger::CORRUPT_ISSUE.to_owned());
    }
    if !not_recorded.limits.is_empty() {
        issues.push(bee_proto::ledger::LIMITS_NOT_RECORDED_ISSUE.to_owned());
    }
    Ok(LiveView {
        schema_version: 1,
        at_utc: glance.at_utc,
        timezone: glance.timezone,
        today: glance.today,
        windows,
        burn,
        sessions,
        limits,
        limit_hits,
        not_recorded,
        today_by_hour,
        issues,
    })
}

/// Today's tokens hour by hour, from the day's start (`day_ms`) to the hour
/// of `now_ms`: an hour without a response is 0, one whose responses'
/// tokens no part knows is `null`.
fn today_by_hour(reader: &Reader, day_ms: i64, now_ms: i64) -> Result<Vec<HourTokens>, Issue> {
    let hour_of = |at: i64| day_ms + (at - day_ms).div_euclid(HOUR) * HOUR;
    let today = Range { since_ms: day_ms, until_ms: now_ms + 1 };
    let summary = reader.usage(today, &|_, at: i64| hour_of(at))?;
    // Each hour's tokens summed over the parts that know theirs: `None`
    // while none has, then 0 for an hour without any response.
    let mut hours: BTreeMap<i64, HourTokens> = BTreeMap::new();
    let mut hour = day_ms;
    while hour <= now_ms {
        hours.insert(hour, HourTokens { hour_utc: format_unix_ms(hour), responses: 0, tokens: None, partial_parts: 0 });
        hour += HOUR;
    }
    for (key, part) in &summary.parts {
        let Some(entry) = hours.get_mut(&key.bucket) else { continue };
        entry.responses += part.responses + part.producer_calls;
        entry.partial_parts += part.partial_parts;
        if let Some(total) = part.tokens.total_tokens {
            entry.tokens = Some(entry.tokens.unwrap_or(0) + total);
        }
    }
    for entry in hours.values_mut().filter(|entry| entry.responses == 0) {
        entry.tokens = Some(0);
    }
    Ok(hours.into_values().collect())
}

/// Each agent active in `day` (a response or a hit) with its hits there:
/// `None` for one whose records keep no usage-limit notice (see
/// `agents::records`), so that an empty list of hits never says "no hit"
/// of it; and those agents, named.
fn limit_hits(day: &store::LedgerView) -> (Vec<AgentLimitHits>, NotRecorded) {
    let mut active: Vec<Provider> = day.responded.clone();
    active.extend(day.limits.iter().map(|hit| hit.provider));
    active.sort();
    active.dedup();
    let hits: Vec<AgentLimitHits> = active
        .into_iter()
        .map(|agent| {
            let hits = day.limits.iter().filter(|hit| hit.provider == agent).count() as u64;
            // A hit that reached the ledger anyway (a producer's) is known.
            let known = agents::records(agent).limit_notices || hits > 0;
            AgentLimitHits { agent, hits: known.then_some(hits) }
        })
        .collect();
    let limits = hits.iter().filter(|agent| agent.hits.is_none()).map(|agent| agent.agent).collect();
    (hits, NotRecorded { time: Vec::new(), limits })
}

/// Adds the hook events of the last hour (beed's `/events/recent`, newest
/// last) to `view`: each session's last event, and sessions that have
/// events but no usage yet.
pub fn add_events(view: &mut LiveView, events: &[serde_json::Value], now_ms: i64) {
    for event in events {
        let (Some(session), Some(kind), Some(at)) = (
            event.get("session_id").and_then(serde_json::Value::as_str),
            event.get("hook_event_type").and_then(serde_json::Value::as_str),
            event.get("timestamp").and_then(serde_json::Value::as_i64),
        ) else {
            continue;
        };
        if at < now_ms - HOUR {
            continue;
        }
        let tool = event.get("payload").and_then(|p| p.get("tool_name")).and_then(serde_json::Value::as_str);
        let text = tool.map_or_else(|| kind.to_owned(), |tool| format!("{kind} {tool}"));
        let at_utc = format_unix_ms(at);
        let found = view.sessions.iter_mut().find(|s| s.session.as_deref() == Some(session));
        let entry = match found {
            Some(entry) => entry,
            None => {
                view.sessions.push(ActiveSession {
                    provider: Provider::Claude,
                    session: Some(session.to_owned()),
                    models: Vec::new(),
                    last_activity_utc: at_utc.clone(),
                    tokens_last_hour: None,
                    partial_parts: 0,
                    last_event: None,
                });
                let last = view.sessions.len() - 1;
                &mut view.sessions[last]
            }
        };
        entry.last_event = Some(text);
        if at_utc > entry.last_activity_utc {
            entry.last_activity_utc = at_utc;
        }
    }
    view.sessions.sort_by(|a, b| b.last_activity_utc.cmp(&a.last_activity_utc));
}

/// Points per hour the window moved over its snapshots of the last half
/// hour (those of the same window: the same reset time, give or take a
/// minute), and how many there were; no trend without two of them
/// [`TREND_MIN_SPAN_MINUTES`] apart.
fn trend(
    snapshots: &[SnapshotRow],
    provider: Provider,
    kind: bee_proto::usage::WindowKind,
    resets: Option<i64>,
    now_ms: i64,
) -> (Option<f64>, u64) {
    let same: Vec<&SnapshotRow> = snapshots
        .iter()
        .filter(|s| s.provider == provider && store::kind_of(s) == kind && s.observed_ms >= now_ms - TREND_SPAN)
        .filter(|s| match (s.resets_ms, resets) {
            (Some(a), Some(b)) => (a - b).abs() < MINUTE,
            (None, None) => true,
            _ => false,
        })
        .collect();
    let count = same.len() as u64;
    let (Some(first), Some(last)) = (same.first(), same.last()) else { return (None, count) };
    let span = last.observed_ms - first.observed_ms;
    let trend = (span >= TREND_MIN_SPAN_MINUTES * MINUTE)
        .then(|| (last.used_percent - first.used_percent) * HOUR as f64 / span as f64);
    (trend, count)
}
