//! `beectl usage`: token usage from the ledger by local day, week, month,
//! session, model or five-hour block, filtered by provider, project or
//! model, with the cost providers reported beside the cost the price table
//! estimates. Each figure says what it is: a sum with unknown parts is a
//! lower bound with their count, a model the table does not name has no
//! estimate, a block without the provider's own window is `inferred`.

use bee_proto::delivery::Issue;
use bee_proto::ledger::{
    BlockSource, BlockSpan, PriceSource, Provider, UsageFilters, UsageGrouping, UsageReport, UsageRow,
};
use bee_proto::time::format_unix_ms;
use bee_proto::usage::WindowKind;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::ledger::stored::rollup::{PartKey, Parts};
use crate::ledger::stored::schema::{HOUR_MS, Range};
use crate::ledger::stored::store::{LedgerView, Reader, ReportedCost, SnapshotRow};
use crate::ledger::views::calendar::Zone;
use crate::ledger::views::prices::PriceTable;

/// A five-hour window.
pub const BLOCK_MS: i64 = 5 * HOUR_MS;

/// Reset times of one window seen this close together are the same window
/// (Codex gives the reset as seconds from its own clock).
const SAME_RESET_MS: i64 = 60_000;

/// What `beectl usage` asks for.
#[derive(Debug, Clone)]
pub struct UsageAsk {
    pub range: Range,
    pub by: UsageGrouping,
    pub zone: Zone,
    pub filters: UsageFilters,
}

/// The report of `ask` from the ledger at `dir`, priced with `prices`.
pub fn report(dir: &Path, ask: &UsageAsk, prices: &PriceTable) -> Result<UsageReport, Issue> {
    let mut reports = reports(dir, ask, std::slice::from_ref(&ask.filters), prices)?;
    reports.pop().ok_or(Issue::Io)
}

/// One report of `ask` per set of `filters`, from one read of the ledger
/// (the export asks for each provider's; the reading is what costs).
pub fn reports(
    dir: &Path,
    ask: &UsageAsk,
    filters: &[UsageFilters],
    prices: &PriceTable,
) -> Result<Vec<UsageReport>, Issue> {
    Ok(reports_with(&Reader::open(dir)?, ask, filters, prices)?.0)
}

/// [`reports`] from an open `reader`, with the summary they were built
/// from (its time tallies: the export's agent time of the same range).
pub fn reports_with(
    reader: &Reader,
    ask: &UsageAsk,
    filters: &[UsageFilters],
    prices: &PriceTable,
) -> Result<(Vec<UsageReport>, crate::ledger::stored::rollup::Summary), Issue> {
    let windows = match ask.by {
        UsageGrouping::Block => {
            // Windows that reach into the range were observed up to five hours after it starts.
            let seen = Range { since_ms: ask.range.since_ms, until_ms: ask.range.until_ms.saturating_add(BLOCK_MS) };
            provider_windows(&reader.snapshots(seen)?.0)
        }
        _ => Windows::new(),
    };
    let bucket = bucketing(ask.by, &ask.zone, &windows);
    let summary = reader.usage(ask.range, &bucket)?;
    let (reported, damaged_costs) = reader.reported_costs(ask.range)?;
    let projects = if filters.iter().any(|f| f.project.is_some()) || ask.by == UsageGrouping::Session {
        reader.session_projects()?
    } else {
        HashMap::new()
    };
    let inputs = Inputs {
        parts: &summary.parts,
        reported: &reported,
        projects: &projects,
        windows: &windows,
        damaged: summary.damaged_records + damaged_costs,
        bucket: &bucket,
    };
    let reports = filters
        .iter()
        .map(|filters| build(&UsageAsk { filters: filters.clone(), ..ask.clone() }, prices, &inputs))
        .collect();
    Ok((reports, summary))
}

/// Sessions with usage in `range` whose cost no CLI reported there, as
/// `beectl usage` counts them in its totals: what `beectl status` says its
/// reported cost leaves out.
pub fn sessions_without_cost(reader: &Reader, range: Range) -> Result<u64, Issue> {
    let whole: crate::ledger::stored::rollup::Bucket<'_> = &|_, _| 0;
    let summary = reader.usage(range, whole)?;
    let (reported, _) = reader.reported_costs(range)?;
    let inputs = Inputs {
        parts: &summary.parts,
        reported: &reported,
        projects: &HashMap::new(),
        windows: &Windows::new(),
        damaged: 0,
        bucket: whole,
    };
    let ask = UsageAsk { range, by: UsageGrouping::Day, zone: Zone::utc(), filters: UsageFilters::default() };
    // Prices play no part in the count.
    Ok(build(&ask, &PriceTable::default(), &inputs).totals.sessions_without_cost.unwrap_or(0))
}

/// The time and quota figures of `range` in the ledger at `dir`, and how
/// many sessions with usage in the range have no reported cost there (parts
/// of unknown cost): what `beectl status` needs, from one opening of the
/// ledger.
pub fn read_status_range(dir: &Path, range: Range) -> Result<(LedgerView, u64), Issue> {
    let reader = Reader::open(dir)?;
    Ok((reader.view(range)?, sessions_without_cost(&reader, range)?))
}

/// The five-hour windows each provider's snapshots named, as
/// `[start, end)`, sorted and disjoint.
pub type Windows = BTreeMap<Provider, Vec<(i64, i64)>>;

/// The windows `snapshots` name: five-hour snapshots with a reset time,
/// one window per reset (nearby resets are one), a later window starting
/// where an earlier one ends if they overlap.
pub fn provider_windows(snapshots: &[SnapshotRow]) -> Windows {
    let mut resets: BTreeMap<Provider, Vec<i64>> = BTreeMap::new();
    for snapshot in snapshots {
        let five_hours = crate::ledger::stored::store::kind_of(snapshot) == WindowKind::FiveHour;
        if let (true, Some(resets_ms)) = (five_hours, snapshot.resets_ms) {
            resets.entry(snapshot.provider).or_default().push(resets_ms);
        }
    }
    let mut windows = Windows::new();
    for (provider, mut ends) in resets {
        ends.sort_unstable();
        let mut spans: Vec<(i64, i64)> = Vec::new();
        for end in ends {
            match spans.last_mut() {
                Some(last) if end - last.1 < SAME_RESET_MS => {}
                Some(last) => {
                    let start = (end - BLOCK_MS).max(last.1);
                    spans.push((start, end));
                }
                None => spans.push((end - BLOCK_MS, end)),
            }
        }
        windows.insert(provider, spans);
    }
    windows
}

/// The bucket function of a grouping: local day, week or month starts;
/// one bucket for session and model; for blocks, the provider's window
/// that holds the time, else the hour (blocks are inferred from hours).
fn bucketing<'a>(by: UsageGrouping, zone: &'a Zone, windows: &'a Windows) -> impl Fn(Provider, i64) -> i64 + 'a {
    move |provider, at| match by {
        UsageGrouping::Day => zone.day_start(at),
        UsageGrouping::Week => zone.week_start(at),
        UsageGrouping::Month => zone.month_start(at),
        UsageGrouping::Session | UsageGrouping::Model => 0,
        UsageGrouping::Block => window_of(windows, provider, at).map_or(at.div_euclid(HOUR_MS) * HOUR_MS, |w| w.0),
    }
}

fn window_of(windows: &Windows, provider: Provider, at: i64) -> Option<(i64, i64)> {
    let spans = windows.get(&provider)?;
    let after = spans.partition_point(|(start, _)| *start <= at);
    spans[..after].last().copied().filter(|(_, end)| at < *end)
}

/// What a report is built from.
pub struct Inputs<'a> {
    pub parts: &'a Parts,
    pub reported: &'a [ReportedCost],
    pub projects: &'a HashMap<String, String>,
    pub windows: &'a Windows,
    pub damaged: u64,
    pub bucket: &'a dyn Fn(Provider, i64) -> i64,
}

/// A group's identity while rows are gathered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum GroupKey {
    /// A bucket of time (its start).
    Time(i64),
    /// A block: its start, provider, end and where its bounds come from.
    Block(i64, Provider, i64, BlockSource),
    /// A session or a model (`None`: the parts did not say).
    Name(Option<String>),
}

/// The report from gathered inputs (no store involved: tests build them).
pub fn build(ask: &UsageAsk, prices: &PriceTable, inputs: &Inputs<'_>) -> UsageReport {
    let filters = &ask.filters;
    let model_wanted = |model: Option<&str>| {
        filters.model.as_deref().is_none_or(|want| {
            model.is_some_and(|model| model.to_ascii_lowercase().contains(&want.to_ascii_lowercase()))
        })
    };
    let mut project_unknown = 0;
    // Whether a session's usage is wanted; unknown projects counted when a project was asked.
    let mut project_wanted = |session: Option<&str>, parts: u64| match filters.project.as_deref() {
        None => true,
        Some(want) => match session.and_then(|s| inputs.projects.get(s)) {
            Some(project) => project.contains(want),
            None => {
                project_unknown += parts;
                false
            }
        },
    };
    // Blocks come out in order of start, then provider: their group keys sort so.
    let block_of = if ask.by == UsageGrouping::Block {
        let mut starts: Vec<(Provider, i64)> = inputs.parts.keys().map(|k| (k.provider, k.bucket)).collect();
        starts.extend(inputs.reported.iter().map(|c| (c.provider, (inputs.bucket)(c.provider, c.at_ms))));
        infer_blocks(starts, inputs.windows)
    } else {
        BlockMap::new()
    };
    let group_of = |provider: Provider, bucket: i64, session: &Option<String>, model: &Option<String>| match ask.by {
        UsageGrouping::Day | UsageGrouping::Week | UsageGrouping::Month => GroupKey::Time(bucket),
        UsageGrouping::Session => GroupKey::Name(session.clone()),
        UsageGrouping::Model => GroupKey::Name(model.clone()),
        UsageGrouping::Block => match block_of.get(&(provider, bucket)) {
            Some(&(start, end, source)) => GroupKey::Block(start, provider, end, source),
            None => GroupKey::Block(bucket, provider, bucket + BLOCK_MS, BlockSource::Inferred),
        },
    };
    let mut groups: BTreeMap<GroupKey, UsageRow> = BTreeMap::new();
    let mut unpriced_models: Vec<String> = Vec::new();
    let mut agents_counted: std::collections::BTreeSet<Provider> = std::collections::BTreeSet::new();
    // The sessions each group used and those a CLI reported a cost for in
    // it (a provider's session-less usage counting as one); `None`: the
    // whole report.
    let mut sessions: BTreeMap<Option<GroupKey>, (SessionSet<'_>, SessionSet<'_>)> = BTreeMap::new();
    for (key, part) in inputs.parts {
        let PartKey { bucket, provider, session, model, tier } = key;
        let counted = part.responses + part.producer_calls;
        if filters.provider.is_some_and(|p| p != *provider)
            || !model_wanted(model.as_deref())
            || !project_wanted(session.as_deref(), counted)
        {
            continue;
        }
        let group = group_of(*provider, *bucket, session, model);
        if part.responses > 0 {
            agents_counted.insert(*provider);
        }
        if counted > 0 {
            for of in [Some(group.clone()), None] {
                sessions.entry(of).or_default().0.push((*provider, session.as_deref()));
            }
        }
        let sum = groups.entry(group).or_default();
        // Priced from what the provider reported; shown in the one set of columns.
        part.add_to(sum, &crate::ledger::agents::agent(*provider).columns(&part.tokens));
        match prices.cost(*provider, model.as_deref(), *tier, &part.tokens) {
            Some(cost) => bee_proto::ledger::add_cost(&mut sum.estimated_cost_usd, Some(cost)),
            None => {
                sum.unpriced_parts += counted;
                unpriced_models.push(model.clone().unwrap_or_else(|| "(unknown)".to_owned()));
            }
        }
        // The group's models, each once, in order; copied only when new.
        if let Some(model) = model
            && let Err(at) = sum.models.binary_search_by(|known| known.as_str().cmp(model))
        {
            sum.models.insert(at, model.clone());
        }
    }
    // Session cost lines name no model: a view by model counts them in its
    // totals only.
    let mut unattributed: Option<f64> = None;
    for cost in inputs.reported {
        if filters.provider.is_some_and(|p| p != cost.provider)
            || (filters.model.is_some() && !model_wanted(cost.model.as_deref()))
            || !project_wanted(cost.session.as_deref(), 0)
        {
            continue;
        }
        let session = (cost.provider, cost.session.as_deref());
        sessions.entry(None).or_default().1.push(session);
        if ask.by == UsageGrouping::Model && cost.model.is_none() {
            bee_proto::ledger::add_cost(&mut unattributed, Some(cost.usd));
            continue;
        }
        let bucket = (inputs.bucket)(cost.provider, cost.at_ms);
        let group = group_of(cost.provider, bucket, &cost.session, &cost.model);
        sessions.entry(Some(group.clone())).or_default().1.push(session);
        let row = groups.entry(group).or_default();
        bee_proto::ledger::add_cost(&mut row.reported_cost_usd, Some(cost.usd));
    }
    // Gathered with repeats (a session has many parts), each set once.
    for (used, costed) in sessions.values_mut() {
        for set in [used, costed] {
            set.sort_unstable();
            set.dedup();
        }
    }
    let without_cost = |of: Option<GroupKey>| {
        Some(sessions.get(&of).map_or(0, |(used, costed)| {
            used.iter().filter(|session| costed.binary_search(session).is_err()).count() as u64
        }))
    };
    let mut rows: Vec<UsageRow> = groups
        .into_iter()
        .map(|(key, mut row)| {
            row.sessions_without_cost = without_cost(Some(key.clone()));
            match key {
                GroupKey::Time(start) => {
                    row.key = Some(match ask.by {
                        UsageGrouping::Month => ask.zone.month_key(start),
                        _ => ask.zone.day_key(start),
                    })
                }
                GroupKey::Block(start, provider, end, source) => {
                    row.key = Some(format_unix_ms(start));
                    row.block = Some(BlockSpan {
                        provider,
                        start_utc: format_unix_ms(start),
                        end_utc: format_unix_ms(end),
                        source,
                    });
                }
                GroupKey::Name(name) => {
                    if ask.by == UsageGrouping::Session {
                        row.project = name.as_ref().and_then(|s| inputs.projects.get(s)).cloned();
                    }
                    row.key = name;
                }
            }
            row
        })
        .collect();
    let mut totals = UsageRow::default();
    for row in &rows {
        totals.add(row);
    }
    bee_proto::ledger::add_cost(&mut totals.reported_cost_usd, unattributed);
    totals.sessions_without_cost = without_cost(None);
    for row in rows.iter_mut().chain(std::iter::once(&mut totals)) {
        round_costs(row);
    }
    unpriced_models.sort();
    unpriced_models.dedup();
    let mut issues = Vec::new();
    // Unknown counters, or a reported cost that leaves used sessions out.
    let reported_partial =
        |row: &UsageRow| row.reported_cost_usd.is_some() && row.sessions_without_cost.is_some_and(|n| n > 0);
    if totals.partial_parts > 0 || rows.iter().chain([&totals]).any(reported_partial) {
        issues.push(bee_proto::ledger::PARTIAL_ISSUE.to_owned());
    }
    if totals.pending_responses > 0 {
        issues.push(bee_proto::ledger::PENDING_ISSUE.to_owned());
    }
    if totals.unpriced_parts > 0 {
        issues.push(bee_proto::ledger::UNPRICED_ISSUE.to_owned());
    }
    if project_unknown > 0 {
        issues.push(bee_proto::ledger::PROJECT_UNKNOWN_ISSUE.to_owned());
    }
    if inputs.damaged > 0 {
        issues.push(bee_proto::ledger::CORRUPT_ISSUE.to_owned());
    }
    let unrecorded_calls: Vec<bee_proto::ledger::UnrecordedCalls> = agents_counted
        .into_iter()
        .filter_map(|agent| {
            let calls = crate::ledger::agents::agent(agent).unrecorded_calls()?;
            Some(bee_proto::ledger::UnrecordedCalls { agent, calls: calls.to_owned() })
        })
        .collect();
    if !unrecorded_calls.is_empty() {
        issues.push(bee_proto::ledger::UNRECORDED_CALLS_ISSUE.to_owned());
    }
    UsageReport {
        schema_version: 3,
        by: ask.by,
        since_utc: format_unix_ms(ask.range.since_ms),
        until_utc: format_unix_ms(ask.range.until_ms),
        timezone: ask.zone.name.clone(),
        source: "provider_reported_counters".to_owned(),
        prices: PriceSource {
            source: prices.source.clone(),
            date: prices.date.clone(),
            models: prices.models.len() as u64,
        },
        filters: filters.clone(),
        partial_parts: totals.partial_parts,
        pending_responses: totals.pending_responses,
        unpriced_models,
        project_unknown_parts: project_unknown,
        unrecorded_calls,
        rows,
        totals,
        issues,
    }
}

/// (provider, session) pairs; `None`: usage that named no session.
type SessionSet<'a> = Vec<(Provider, Option<&'a str>)>;

/// Sums of many small products carry binary noise (0.0029100000000000003):
/// costs are shown to a ten-billionth of a dollar.
fn round_costs(row: &mut UsageRow) {
    for cost in [&mut row.reported_cost_usd, &mut row.estimated_cost_usd] {
        *cost = cost.map(round_usd);
    }
}

/// `usd` to a ten-billionth of a dollar, as every cost a view shows.
pub fn round_usd(usd: f64) -> f64 {
    (usd * 1e10).round() / 1e10
}

/// Each (provider, bucket) with activity → its block: `(start, end, source)`.
type BlockMap = BTreeMap<(Provider, i64), (i64, i64, BlockSource)>;

/// Blocks over the buckets with activity: a bucket that is a provider's
/// window start is that window; other (hour) buckets open an inferred
/// block of five hours from that hour, which the following hours join
/// until it ends or the provider's next window begins.
fn infer_blocks(mut starts: Vec<(Provider, i64)>, windows: &Windows) -> BlockMap {
    starts.sort_unstable();
    starts.dedup();
    let mut blocks = BlockMap::new();
    let mut open: Option<(Provider, i64, i64)> = None;
    for (provider, bucket) in starts {
        if let Some(window) = windows.get(&provider).and_then(|spans| spans.iter().find(|w| w.0 == bucket)) {
            blocks.insert((provider, bucket), (window.0, window.1, BlockSource::ProviderWindow));
            continue;
        }
        let block = match open {
            Some((p, start, end)) if p == provider && bucket < end => (start, end),
            _ => {
                let next_window = windows
                    .get(&provider)
                    .and_then(|spans| spans.iter().map(|w| w.0).find(|start| *start > bucket))
                    .unwrap_or(i64::MAX);
                (bucket, (bucket + BLOCK_MS).min(next_window))
            }
        };
        open = Some((provider, block.0, block.1));
        blocks.insert((provider, bucket), (block.0, block.1, BlockSource::Inferred));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::stored::responses::Response;
    use crate::ledger::stored::rollup::{CallRow, Summary};
    use bee_proto::ledger::CallSource;
    use bee_proto::usage::Counters;

    const H: i64 = HOUR_MS;

    /// A Claude session's own cost line: it names no model.
    fn session_cost(at_ms: i64, session: &str, usd: f64) -> ReportedCost {
        ReportedCost { at_ms, provider: Provider::Claude, session: Some(session.into()), model: None, usd }
    }

    fn response(at_ms: i64, session: &str, model: Option<&str>, input: u64, output: u64) -> Response {
        Response {
            provider: Provider::Claude,
            at_ms,
            session_id: Some(session.into()),
            model: model.map(Into::into),
            tokens: Counters {
                input_tokens: Some(input),
                cache_creation_input_tokens: Some(0),
                cache_read_input_tokens: Some(0),
                output_tokens: Some(output),
                total_tokens: Some(input + output),
                ..Counters::default()
            },
            partial: false,
            pending: false,
        }
    }

    fn ask(by: UsageGrouping, zone: &str) -> UsageAsk {
        UsageAsk {
            range: Range { since_ms: 0, until_ms: 1_000 * H },
            by,
            zone: Zone::named(zone).unwrap(),
            filters: UsageFilters::default(),
        }
    }

    fn run(
        ask: &UsageAsk,
        calls: &[CallRow],
        responses: &[Response],
        reported: &[ReportedCost],
        windows: &Windows,
    ) -> UsageReport {
        let bucket = bucketing(ask.by, &ask.zone, windows);
        let summary = Summary::of_records(calls, responses, ask.range, Some(&bucket));
        let projects = HashMap::from([("s1".to_owned(), "-home-me-bee".to_owned())]);
        let inputs =
            Inputs { parts: &summary.parts, reported, projects: &projects, windows, damaged: 0, bucket: &bucket };
        build(ask, &PriceTable::bundled(), &inputs)
    }

    #[test]
    fn days_are_local_and_totals_add_up_with_estimates_beside_reported_costs() {
        // 1970-01-01T23:30Z is 1970-01-02 in Paris.
        let responses = [
            response(23 * H + 30 * 60_000, "s1", Some("claude-sonnet-4-5"), 1_000, 100),
            response(2 * H, "s1", Some("claude-sonnet-4-5"), 2_000, 200),
            response(3 * H, "s2", Some("claude-mystery-9"), 5, 5),
        ];
        let reported = [session_cost(3 * H, "s2", 0.5)];
        let paris = run(&ask(UsageGrouping::Day, "Europe/Paris"), &[], &responses, &reported, &Windows::new());
        let keys: Vec<_> = paris.rows.iter().map(|r| r.key.clone().unwrap()).collect();
        assert_eq!(keys, ["1970-01-01", "1970-01-02"]);
        let utc = run(&ask(UsageGrouping::Day, "UTC"), &[], &responses, &reported, &Windows::new());
        assert_eq!(utc.rows.len(), 1);
        let day = &paris.rows[0];
        assert_eq!(day.tokens.input_tokens, Some(2_005));
        assert_eq!(day.reported_cost_usd, Some(0.5));
        let priced = 2_000.0 * 3e-6 + 200.0 * 1.5e-5;
        assert!((day.estimated_cost_usd.unwrap() - priced).abs() < 1e-12);
        assert_eq!(day.unpriced_parts, 1, "the unknown model's response is counted, not priced");
        assert_eq!(paris.totals.tokens.input_tokens, Some(3_005));
        assert_eq!(paris.totals.responses, 3);
        assert_eq!(paris.unpriced_models, ["claude-mystery-9"]);
        assert!(paris.issues.contains(&"unpriced_model".to_owned()));
        let by_model = run(&ask(UsageGrouping::Model, "UTC"), &[], &responses, &reported, &Windows::new());
        let mystery = by_model.rows.iter().find(|r| r.key.as_deref() == Some("claude-mystery-9")).unwrap();
        assert_eq!(mystery.estimated_cost_usd, None, "never another model's price");
        assert_eq!(by_model.totals.reported_cost_usd, Some(0.5), "a session's cost counts in the totals");
    }

    /// A reported cost is what the sessions that reported one cost: a row
    /// with a session that reported none is a lower bound (`partial`); a row
    /// where nothing was reported is null and needs no bound.
    #[test]
    fn a_reported_cost_that_leaves_a_used_session_out_is_partial() {
        let responses = [
            response(H, "s1", Some("claude-sonnet-4-5"), 1_000, 100),
            response(2 * H, "s2", Some("claude-sonnet-4-5"), 2_000, 200),
            response(30 * H, "s1", Some("claude-sonnet-4-5"), 3_000, 300),
        ];
        let reported = [session_cost(2 * H, "s2", 0.5)];
        let report = run(&ask(UsageGrouping::Day, "UTC"), &[], &responses, &reported, &Windows::new());
        let costs: Vec<_> = report.rows.iter().map(|r| (r.reported_cost_usd, r.sessions_without_cost)).collect();
        assert_eq!(costs, [(Some(0.5), Some(1)), (None, Some(1))], "s1 reported nothing on either day");
        assert_eq!(report.totals.sessions_without_cost, Some(1));
        assert_eq!(report.issues, ["partial"]);
        let by_session = run(&ask(UsageGrouping::Session, "UTC"), &[], &responses, &reported, &Windows::new());
        let s2 = by_session.rows.iter().find(|r| r.key.as_deref() == Some("s2")).unwrap();
        assert_eq!((s2.reported_cost_usd, s2.sessions_without_cost), (Some(0.5), Some(0)), "s2's own cost is whole");
        let all = [session_cost(2 * H, "s1", 0.5), reported[0].clone()];
        let whole = run(&ask(UsageGrouping::Day, "UTC"), &[], &responses[..2], &all, &Windows::new());
        assert_eq!((whole.totals.sessions_without_cost, whole.issues.len()), (Some(0), 0), "{:?}", whole.issues);
    }

    #[test]
    fn producer_counters_stand_in_for_unlogged_sessions_and_unknown_parts_are_counted() {
        let call = |start: i64, tokens: Option<Counters>, logged: bool| CallRow {
            started_ms: start,
            duration_ms: Some(60_000),
            provider: Provider::Claude,
            source: CallSource::Run,
            model: Some("claude-sonnet-4-5".into()),
            session_id: None,
            cost_usd: None,
            tokens,
            logged,
            folded: false,
        };
        let ten = Some(Counters {
            input_tokens: Some(10),
            cache_creation_input_tokens: Some(0),
            cache_read_input_tokens: Some(0),
            output_tokens: Some(1),
            ..Counters::default()
        });
        let calls = [call(H, ten.clone(), false), call(2 * H, ten, true), call(3 * H, None, false)];
        let report = run(&ask(UsageGrouping::Day, "UTC"), &calls, &[], &[], &Windows::new());
        let day = &report.rows[0];
        assert_eq!((day.producer_counted_calls, day.tokens.input_tokens), (2, Some(10)));
        assert_eq!(day.partial_parts, 1, "a call that reported nothing is an unknown part");
        assert_eq!(report.issues, ["partial"]);
    }

    #[test]
    fn blocks_come_from_provider_windows_and_are_inferred_elsewhere() {
        let responses = [
            response(H + 10 * 60_000, "s1", Some("claude-sonnet-4-5"), 1, 1),
            response(4 * H, "s1", Some("claude-sonnet-4-5"), 1, 1),
            response(7 * H, "s1", Some("claude-sonnet-4-5"), 1, 1),
            response(20 * H + 45 * 60_000, "s1", Some("claude-sonnet-4-5"), 1, 1),
        ];
        let snapshots = [SnapshotRow {
            provider: Provider::Claude,
            observed_ms: 21 * H,
            window: WindowKind::FiveHour,
            window_minutes: None,
            used_percent: 10.0,
            resets_ms: Some(25 * H + 20 * 60_000),
            limit_id: None,
        }];
        let windows = provider_windows(&snapshots);
        let report = run(&ask(UsageGrouping::Block, "UTC"), &[], &responses, &[], &windows);
        let spans: Vec<_> = report.rows.iter().map(|r| r.block.clone().unwrap()).collect();
        assert_eq!(spans.len(), 3, "{spans:#?}");
        assert_eq!((spans[0].start_utc.as_str(), spans[0].source), ("1970-01-01T01:00:00.000Z", BlockSource::Inferred));
        assert_eq!(report.rows[0].responses, 2, "01:10 and 04:00 share the block from 01:00");
        assert_eq!(
            (spans[1].start_utc.as_str(), spans[1].end_utc.as_str()),
            ("1970-01-01T07:00:00.000Z", "1970-01-01T12:00:00.000Z")
        );
        assert_eq!(
            (spans[2].start_utc.as_str(), spans[2].source),
            ("1970-01-01T20:20:00.000Z", BlockSource::ProviderWindow),
            "the provider's own window, not the hour"
        );
    }

    #[test]
    fn filters_keep_what_was_asked_and_count_unknown_projects() {
        let mut codex = response(2 * H, "s9", Some("gpt-5-codex"), 10, 10);
        codex.provider = Provider::Codex;
        let responses = [response(H, "s1", Some("claude-sonnet-4-5"), 1, 1), codex];
        let mut asked = ask(UsageGrouping::Session, "UTC");
        asked.filters.project = Some("bee".into());
        let report = run(&asked, &[], &responses, &[], &Windows::new());
        assert_eq!(report.rows.len(), 1);
        assert_eq!(report.rows[0].project.as_deref(), Some("-home-me-bee"));
        assert_eq!(report.project_unknown_parts, 1);
        assert!(report.issues.contains(&"project_unknown".to_owned()));
        let mut asked = ask(UsageGrouping::Model, "UTC");
        asked.filters.model = Some("CODEX".into());
        let report = run(&asked, &[], &responses, &[], &Windows::new());
        assert_eq!(report.rows.iter().map(|r| r.key.clone().unwrap()).collect::<Vec<_>>(), ["gpt-5-codex"]);
        let mut asked = ask(UsageGrouping::Model, "UTC");
        asked.filters.provider = Some(Provider::Claude);
        assert_eq!(run(&asked, &[], &responses, &[], &Windows::new()).totals.responses, 1);
    }
}
