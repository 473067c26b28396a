//! The ledger's series for export, read flat in the ledger's size, each
//! counter of usage time told apart by origin (spec/60, "What a team can
//! rely on").
//!
//! Every figure read here adds up over usage time: a series' total over
//! `[0, now)` is its total before a cut plus its total since. The exporter
//! keeps each series' total before an hour-aligned cut ([`CounterState`],
//! saved across restarts), and a send reads only the hours since the cut,
//! from the aggregates beed keeps. Only when the ledger's hour-change
//! numbers say that an hour before the cut moved is the time before it
//! read again, a week at a time.
//!
//! That re-read is also what tells backfill apart. Whatever the total
//! before the cut grew by between two reads reached the ledger after its
//! usage time had passed the cut: a first import of old logs, a rollout
//! read late, usage a stopped beed read on its return. It is added to the
//! series' `origin="backfill"` part; the rest is `origin="live"`, usage
//! that reached Bee within about an hour of happening, so that
//! `increase()` over a range describes usage in that range. Both parts
//! only ever grow, and their sum is the total `beectl usage` prints.

use std::collections::BTreeMap;
use std::path::Path;

use bee_proto::delivery::Issue;
use bee_proto::export::{self as names};
use bee_proto::ledger::{Provider, UsageFilters, UsageGrouping};
use bee_proto::usage::WindowKind;
use serde::{Deserialize, Serialize};

use crate::ledger::agents;
use crate::ledger::stored::schema::{HOUR_MS, Range};
use crate::ledger::stored::store::{LimitRow, Reader, SnapshotRow};
use crate::ledger::views::calendar::Zone;
use crate::ledger::views::prices::PriceTable;
use crate::ledger::views::usage::{UsageAsk, reports_with, round_usd};

/// How late after its usage time a record still counts as live when it
/// reaches the ledger: the cut lies at least this far behind the read
/// (an agent's log is read within seconds; Claude Code's own telemetry
/// comes in batches of a minute).
const GRACE_MS: i64 = 5 * 60_000;
/// Totals are also kept at a cut a day older: a record that changes an
/// hour of the last day (a turn that began before the cut and ended
/// after it, a long `beectl run`) is read again from there, not from the
/// ledger's start.
const DAY_MS: i64 = 24 * HOUR_MS;
/// A re-read before the cut holds one week's records at a time.
const CHUNK_MS: i64 = 7 * 24 * HOUR_MS;
/// Quota windows are read from the snapshots of this long ago on: no
/// window a provider reports is longer than a month.
const WINDOWS_LOOK_BACK_MS: i64 = 35 * 24 * HOUR_MS;

/// A series without `user` and `host` (the push's own).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SeriesId {
    pub name: &'static str,
    /// Sorted by name, empty values left out.
    pub labels: Vec<(&'static str, String)>,
}

impl SeriesId {
    pub fn new(name: &'static str, labels: &[(&'static str, String)]) -> SeriesId {
        let mut labels: Vec<(&'static str, String)> = labels.iter().filter(|(_, v)| !v.is_empty()).cloned().collect();
        labels.sort();
        SeriesId { name, labels }
    }

    /// `name{label="value",…}`: how the state file names it.
    pub fn key(&self) -> String {
        series_key(self.name, &self.labels)
    }

    /// This series with `label` set to `value`.
    pub fn with(&self, label: &'static str, value: &str) -> SeriesId {
        let mut labels = self.labels.clone();
        labels.push((label, value.to_owned()));
        SeriesId::new(self.name, &labels)
    }

    /// The series named in a state file, when this Bee exports it.
    fn of_saved(saved: &SavedSeries) -> Option<SeriesId> {
        let name = names::series_meta(&saved.name)?.name;
        let labels: Option<Vec<(&'static str, String)>> = saved
            .labels
            .iter()
            .map(|(label, value)| names::label_name(label).map(|label| (label, value.clone())))
            .collect();
        Some(SeriesId::new(name, &labels?))
    }
}

/// `name{label="value",…}` of a series named `name` with (sorted) `labels`.
pub fn series_key(name: &str, labels: &[(&'static str, String)]) -> String {
    let labels: Vec<String> = labels.iter().map(|(label, value)| format!("{label}={value:?}")).collect();
    format!("{name}{{{}}}", labels.join(","))
}

/// Each series' figure over one span of usage time.
pub type Totals = BTreeMap<SeriesId, f64>;

fn add_totals(into: &mut Totals, more: Totals) {
    for (id, value) in more {
        *into.entry(id).or_default() += value;
    }
}

/// A series' figures, as the exporter keeps them between reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Split {
    /// Its total over usage time before the day-old cut, as last read.
    before_day: f64,
    /// Its total over usage time before the cut, as last read.
    before_cut: f64,
    /// Its total over usage time before the boundary, as last read.
    before_boundary: f64,
    /// Its total, as last read.
    total: f64,
    /// What reached the ledger after its usage time had passed the
    /// boundary of the read before, so far.
    backfilled: f64,
    /// Its live part as last sent (a part never falls: a receiver reads a
    /// fall as a counter reset).
    live: f64,
}

/// What the exporter keeps between reads (saved in `export/counters.json`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CounterState {
    /// When the last read was made.
    read_at_ms: i64,
    /// [`GRACE_MS`] before it: usage before it that reaches the ledger
    /// later is backfill.
    boundary_ms: i64,
    /// The hour the boundary lies in: usage before it is summed in
    /// `series`, and read again only when an hour before it moved.
    cut_ms: i64,
    /// [`DAY_MS`] before the cut: usage before it is summed too, and read
    /// again only when an hour before it moved.
    day_cut_ms: i64,
    /// The ledger's newest hour-change number at the last read.
    changes_seen: i64,
    /// Loaded from the file: the next read is the first of this beed's
    /// run, and what it finds beyond the last read arrived while beed was
    /// stopped or starting.
    resumed: bool,
    series: BTreeMap<SeriesId, Split>,
    /// The quota windows' peaks (in memory only: after a restart, the
    /// snapshots of the last month are read once).
    windows: Option<WindowPeaks>,
}

/// A series' line in the state file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedSeries {
    name: String,
    labels: Vec<(String, String)>,
    #[serde(flatten)]
    split: Split,
}

/// The state file's form of [`CounterState`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedCounters {
    read_at_ms: i64,
    boundary_ms: i64,
    cut_ms: i64,
    #[serde(default)]
    day_cut_ms: i64,
    changes_seen: i64,
    series: Vec<SavedSeries>,
}

#[cfg(test)]
impl SavedCounters {
    /// The names of the series saved, in order.
    pub(super) fn series_names(&self) -> Vec<&str> {
        self.series.iter().map(|line| line.name.as_str()).collect()
    }
}

/// A read's time may lie at most this far ahead of the clock (a clock
/// stepped back a little is not damage).
const CLOCK_SLACK_MS: i64 = 10 * 60_000;

impl SavedCounters {
    /// Whether the state could be one beed wrote by `now_ms`: every figure
    /// a finite, non-negative number, each part within its series' total,
    /// totals before each cut no larger than those after, the cuts in
    /// order and no read in the future.
    pub fn is_sound(&self, now_ms: i64) -> bool {
        let times = self.read_at_ms > 0
            && self.read_at_ms <= now_ms.saturating_add(CLOCK_SLACK_MS)
            && self.boundary_ms <= self.read_at_ms
            && self.cut_ms <= self.boundary_ms
            && self.day_cut_ms <= self.cut_ms
            && self.changes_seen >= 0;
        times && self.series.iter().all(|line| line.split.is_sound())
    }
}

impl Split {
    fn is_sound(&self) -> bool {
        let figures = [self.before_day, self.before_cut, self.before_boundary, self.total, self.backfilled, self.live];
        // Rounding of costs may leave a part a cent's fraction over.
        let slack = 1e-6 * self.total.abs().max(1.0);
        figures.iter().all(|figure| figure.is_finite() && *figure >= 0.0)
            && self.before_day <= self.before_cut + slack
            && self.before_cut <= self.before_boundary + slack
            && self.before_boundary <= self.total + slack
            && self.live + self.backfilled <= self.total + slack
    }
}

impl From<&CounterState> for SavedCounters {
    fn from(state: &CounterState) -> SavedCounters {
        let series = state
            .series
            .iter()
            .map(|(id, split)| SavedSeries {
                name: id.name.to_owned(),
                labels: id.labels.iter().map(|(label, value)| ((*label).to_owned(), value.clone())).collect(),
                split: *split,
            })
            .collect();
        SavedCounters {
            read_at_ms: state.read_at_ms,
            boundary_ms: state.boundary_ms,
            cut_ms: state.cut_ms,
            day_cut_ms: state.day_cut_ms,
            changes_seen: state.changes_seen,
            series,
        }
    }
}

impl From<SavedCounters> for CounterState {
    /// A series this Bee does not export is left out.
    fn from(saved: SavedCounters) -> CounterState {
        let series =
            saved.series.iter().filter_map(|line| SeriesId::of_saved(line).map(|id| (id, line.split))).collect();
        CounterState {
            read_at_ms: saved.read_at_ms,
            boundary_ms: saved.boundary_ms,
            cut_ms: saved.cut_ms,
            day_cut_ms: saved.day_cut_ms,
            changes_seen: saved.changes_seen,
            resumed: true,
            series,
            windows: None,
        }
    }
}

/// Whether a series is sent as its live and backfilled parts.
fn by_origin(name: &str) -> bool {
    names::BY_ORIGIN.contains(&name)
}

/// Rounded as costs are shown, so sums made in different orders agree.
fn tidy(name: &str, value: f64) -> f64 {
    if name == names::REPORTED_COST_TOTAL || name == names::ESTIMATED_COST_TOTAL { round_usd(value) } else { value }
}

/// What a series' figure before a read's boundary was at the last read.
#[derive(Clone, Copy)]
enum Was {
    /// The first read: nothing was sent.
    Nothing,
    /// Its whole total: the boundary lies past the last read.
    Total,
    /// Its total before the last read's boundary, the same boundary.
    BeforeBoundary,
}

/// The ledger's series at `now_ms` (without `user` and `host`), each
/// counter of usage time as its live and backfilled parts; `state` moves
/// on with a read that succeeds (`None`: the first read, whose history
/// before its boundary is all backfill).
///
/// What reached the ledger since the last read is backfill when its usage
/// time lies before that read's boundary, [`GRACE_MS`] before it. On the
/// first read of a run the boundary is this read's own: beed was stopped
/// since the last one, so nothing older reached the ledger in time.
///
/// `floors` are what was last sent of each series' parts (keyed as
/// [`SeriesId::key`] names them, with their origin): while they fit in the
/// series' total, no part is sent below its floor — the state they are
/// checked against may have been rebuilt from the ledger after a loss.
pub fn read(
    ledger: &Path,
    state: &mut Option<CounterState>,
    now_ms: i64,
    prices: &PriceTable,
    floors: &BTreeMap<String, f64>,
) -> Result<Vec<(SeriesId, f64)>, Issue> {
    let reader = Reader::open(ledger)?;
    let seen = state.as_ref().map_or(0, |state| state.changes_seen);
    let (newest_change, changed_from) = reader.hours_changed_since(seen)?;
    let hits =
        crate::ledger::stored::store::one_per_hit(reader.limit_notices()?.into_iter().map(|(_, hit)| hit).collect());
    let earliest = reader.earliest_ms()?;
    let sum = |range: Range| totals_between(&reader, earliest, range, &hits, prices);
    let boundary = now_ms - GRACE_MS;
    let cut = boundary.div_euclid(HOUR_MS) * HOUR_MS;
    // Moved on only once the whole read succeeded: a failed read leaves the
    // state as it was (a lost state would start every live part from 0).
    let mut kept = state.clone().unwrap_or_default();
    let first = kept.read_at_ms == 0;
    // The totals before the last cuts: as kept, unless an hour before one
    // moved (or the ledger is not the one read before); then read again
    // from the last day-old cut, or, for an older hour, from the start.
    let last_cut = if first { cut } else { kept.cut_ms.min(cut) };
    let last_day_cut = last_cut - DAY_MS;
    let same_ledger = !first && newest_change >= seen;
    let unmoved_from = |from: i64| same_ledger && changed_from.is_none_or(|hour| hour >= from);
    let kept_at = |part: fn(&Split) -> f64| -> Totals {
        kept.series.iter().map(|(id, split)| (id.clone(), part(split))).collect()
    };
    let before_last_day_cut: Totals = if unmoved_from(last_day_cut) {
        kept_at(|split| split.before_day)
    } else {
        sum(Range { since_ms: 0, until_ms: last_day_cut })?
    };
    let before_last_cut: Totals = if unmoved_from(last_cut) {
        kept_at(|split| split.before_cut)
    } else {
        let mut again = before_last_day_cut.clone();
        add_totals(&mut again, sum(Range { since_ms: last_day_cut, until_ms: last_cut })?);
        again
    };
    let day_cut = cut - DAY_MS;
    let mut before_day = before_last_day_cut;
    add_totals(&mut before_day, sum(Range { since_ms: last_day_cut, until_ms: day_cut })?);
    let mut before_cut = before_last_cut.clone();
    add_totals(&mut before_cut, sum(Range { since_ms: last_cut, until_ms: cut })?);
    let mut before_boundary = before_cut.clone();
    add_totals(&mut before_boundary, sum(Range { since_ms: cut, until_ms: boundary })?);
    let mut total = before_boundary.clone();
    add_totals(&mut total, sum(Range { since_ms: boundary, until_ms: now_ms })?);
    // What grew before the boundary that classifies this read's arrivals,
    // against what lay there at the last read, is backfill.
    let resumed_late = kept.resumed && boundary >= kept.read_at_ms;
    let (grown_before, was) = if first {
        (before_boundary.clone(), Was::Nothing)
    } else if resumed_late {
        (before_boundary.clone(), Was::Total)
    } else {
        let last_boundary = kept.boundary_ms.clamp(last_cut, boundary);
        let mut grown = before_last_cut;
        add_totals(&mut grown, sum(Range { since_ms: last_cut, until_ms: last_boundary })?);
        (grown, Was::BeforeBoundary)
    };
    for (id, value) in &grown_before {
        if by_origin(id.name) {
            let split = kept.series.entry(id.clone()).or_default();
            let was = match was {
                Was::Nothing => 0.0,
                Was::Total => split.total,
                Was::BeforeBoundary => split.before_boundary,
            };
            let grown = tidy(id.name, value - was);
            if grown > 0.0 {
                split.backfilled = tidy(id.name, split.backfilled + grown);
            }
        }
    }
    let mut out = Vec::with_capacity(total.len() + 16);
    // A part kept over what the ledger now holds for its series cannot be
    // one that was read from it: the kept state is not this ledger's.
    let beyond = kept.series.iter().find(|(id, split)| {
        let held = total.get(*id).copied().unwrap_or(0.0);
        by_origin(id.name) && split.live + split.backfilled > tidy(id.name, held) + 1e-6 * held.max(1.0)
    });
    if let Some((id, _)) = beyond {
        tracing::warn!(series = id.key(), "export: the kept state holds more than the ledger; read afresh");
        *state = None;
        return read(ledger, state, now_ms, prices, floors);
    }
    for (id, value) in &total {
        let value = tidy(id.name, *value);
        let split = kept.series.entry(id.clone()).or_default();
        split.before_day = before_day.get(id).copied().unwrap_or(0.0);
        split.before_cut = before_cut.get(id).copied().unwrap_or(0.0);
        split.before_boundary = before_boundary.get(id).copied().unwrap_or(0.0);
        split.total = value;
        if !by_origin(id.name) {
            out.push((id.clone(), value));
            continue;
        }
        let live = tidy(id.name, value - split.backfilled);
        if live < split.live {
            tracing::debug!(
                series = id.key(),
                live,
                sent = split.live,
                "export: a live part fell; kept at its last value"
            );
        }
        split.live = split.live.max(live);
        keep_above_floors(id, value, split, floors);
        // A part is sent once it holds something; a counter at 0 (a
        // provider that worked without a limit hit) is sent as live.
        if split.live > 0.0 || split.backfilled == 0.0 {
            out.push((id.with(names::LABEL_ORIGIN, names::ORIGIN_LIVE), split.live));
        }
        if split.backfilled > 0.0 {
            out.push((id.with(names::LABEL_ORIGIN, names::ORIGIN_BACKFILL), split.backfilled));
        }
    }
    kept.series.retain(|id, _| total.contains_key(id));
    let mut windows = kept.windows.take();
    out.extend(quota_series(&reader, &hits, &mut windows, now_ms)?);
    *state = Some(CounterState {
        read_at_ms: now_ms,
        boundary_ms: boundary,
        cut_ms: cut,
        day_cut_ms: day_cut,
        changes_seen: newest_change,
        resumed: false,
        series: kept.series,
        windows,
    });
    Ok(out)
}

/// Raises a series' parts to what was last sent of them (`floors`), as
/// far as its total allows: the live part to at least its floor and at
/// most what leaves the backfilled part its own, the backfilled part the
/// rest. Floors that do not fit in the total together (sent from another
/// ledger, or a damaged record) are not this ledger's and are passed over.
fn keep_above_floors(id: &SeriesId, total: f64, split: &mut Split, floors: &BTreeMap<String, f64>) {
    if floors.is_empty() {
        return;
    }
    let floor = |origin: &str| floors.get(&id.with(names::LABEL_ORIGIN, origin).key()).copied();
    let (live, backfill) = (floor(names::ORIGIN_LIVE), floor(names::ORIGIN_BACKFILL));
    if live.is_none() && backfill.is_none() {
        return;
    }
    let (live, backfill) = (live.unwrap_or(0.0), backfill.unwrap_or(0.0));
    let slack = 1e-6 * total.max(1.0);
    if live + backfill > total + slack {
        tracing::debug!(series = id.key(), "export: what was sent does not fit in the ledger's total; passed over");
        return;
    }
    let kept = split.live.clamp(live, (total - backfill).max(live));
    if kept != split.live || tidy(id.name, total - kept) != split.backfilled {
        split.live = tidy(id.name, kept);
        split.backfilled = tidy(id.name, (total - kept).max(0.0));
    }
}

/// The totals of usage in `range`, read a week at a time so a long range
/// holds one week's records, not the ledger's; nothing before the
/// ledger's first record (`earliest`; `None`: it holds none) is read.
fn totals_between(
    reader: &Reader,
    earliest: Option<i64>,
    range: Range,
    hits: &[LimitRow],
    prices: &PriceTable,
) -> Result<Totals, Issue> {
    let mut totals = Totals::new();
    let Some(earliest) = earliest.filter(|_| range.since_ms < range.until_ms) else { return Ok(totals) };
    let mut since_ms = range.since_ms;
    // Each week's end on an hour, so whole hours come from the aggregates.
    let mut until = since_ms.max(earliest).div_euclid(HOUR_MS) * HOUR_MS + CHUNK_MS;
    while since_ms < range.until_ms {
        let chunk = Range { since_ms, until_ms: until.min(range.until_ms) };
        add_totals(&mut totals, totals_in(reader, chunk, hits, prices)?);
        since_ms = chunk.until_ms;
        until += CHUNK_MS;
    }
    Ok(totals)
}

/// Each series' figure over usage time in `range`: what `beectl usage
/// --by model` and `beectl quota` say of it, per provider.
fn totals_in(reader: &Reader, range: Range, hits: &[LimitRow], prices: &PriceTable) -> Result<Totals, Issue> {
    let ask = UsageAsk::new(range, UsageGrouping::Model, Zone::utc());
    let each: Vec<UsageFilters> = Provider::ALL
        .iter()
        .map(|provider| UsageFilters { provider: Some(*provider), ..UsageFilters::default() })
        .collect();
    let (reports, summary) = reports_with(reader, &ask, &each, prices)?;
    let mut totals = Totals::new();
    let mut add = |name: &'static str, labels: &[(&'static str, String)], value: f64| {
        *totals.entry(SeriesId::new(name, labels)).or_default() += value;
    };
    let mut active: Vec<Provider> = Vec::new();
    for (provider, report) in Provider::ALL.iter().copied().zip(&reports) {
        let p = (names::LABEL_PROVIDER, provider.as_str().to_owned());
        if !report.rows.is_empty() {
            active.push(provider);
        }
        for row in &report.rows {
            let m = (names::LABEL_MODEL, row.key.clone().unwrap_or_default());
            add(names::RESPONSES_TOTAL, &[p.clone(), m.clone()], row.responses as f64);
            for (kind, value) in names::TOKEN_KINDS.iter().zip(row.tokens.values()) {
                if let Some(value) = value {
                    let k = (names::LABEL_KIND, (*kind).to_owned());
                    add(names::TOKENS_TOTAL, &[p.clone(), m.clone(), k], value as f64);
                }
            }
            add(names::USAGE_PARTIAL_PARTS, &[p.clone(), m.clone()], row.partial_parts as f64);
            if let Some(cost) = row.reported_cost_usd {
                add(names::REPORTED_COST_TOTAL, &[p.clone(), m.clone()], cost);
            }
            if let Some(cost) = row.estimated_cost_usd {
                add(names::ESTIMATED_COST_TOTAL, &[p.clone(), m.clone()], cost);
            }
            add(names::UNPRICED_PARTS, &[p.clone(), m], row.unpriced_parts as f64);
        }
        // Session cost lines name no model: a view by model keeps them in
        // its totals only. Exported as the provider's series without a
        // model, they are not lost from the team's sums.
        let by_model: f64 = report.rows.iter().filter_map(|row| row.reported_cost_usd).sum();
        if let Some(total) = report.totals.reported_cost_usd {
            let unattributed = round_usd(total - by_model);
            if unattributed > 0.0 {
                add(names::REPORTED_COST_TOTAL, std::slice::from_ref(&p), unattributed);
            }
        }
    }
    // Agent time: no series while no producer measured a call (unknown, not 0 s).
    let measured = summary.providers.iter().map(|(provider, tally)| (provider, tally, "measured"));
    let derived = summary.derived_providers.iter().map(|(provider, tally)| (provider, tally, "derived"));
    for (provider, tally, measure) in measured.chain(derived) {
        if tally.calls > 0 {
            active.push(*provider);
            let labels =
                [(names::LABEL_PROVIDER, provider.as_str().to_owned()), (names::LABEL_MEASURE, measure.to_owned())];
            add(names::AGENT_TIME_SECONDS_TOTAL, &labels, tally.agent_ms as f64 / 1000.0);
        }
    }
    // Limit hits by the hit's own time; 0 for a provider that worked in the
    // range without one (its logs were read and showed none) — but only for
    // an agent whose records keep usage-limit notices: one whose records
    // cannot (OpenCode's 429s are written nowhere) gets no series at all,
    // since a 0 would say it hit no limit. A hit of it that reached the
    // ledger anyway (a producer's) still counts.
    active.extend(hits.iter().map(|hit| hit.provider));
    active.sort();
    active.dedup();
    for provider in active {
        let in_range = hits.iter().filter(|hit| hit.provider == provider && range.contains(hit.at_ms)).count();
        let ever = hits.iter().any(|hit| hit.provider == provider);
        if !agents::records(provider).limit_notices && !ever {
            continue;
        }
        add(names::LIMIT_HITS_TOTAL, &[(names::LABEL_PROVIDER, provider.as_str().to_owned())], in_range as f64);
    }
    Ok(totals)
}

/// A quota window as its provider names it: provider, limit family, kind,
/// length in minutes, reset time.
type WindowKey = (Provider, Option<String>, WindowKind, Option<i64>, i64);

/// The quota windows' peaks, kept in memory between reads and brought up
/// to date with the snapshots stored since (a Codex call stores one; a
/// send reads those, not the month's).
#[derive(Debug, Clone, Default, PartialEq)]
struct WindowPeaks {
    /// The last snapshot read (`quota_snapshot.seq`).
    seen_seq: i64,
    /// Each window not reset at the last read: its highest used %.
    peaks: BTreeMap<WindowKey, f64>,
}

impl WindowPeaks {
    fn add(&mut self, snapshots: Vec<SnapshotRow>) {
        for snapshot in snapshots {
            // A window without a reset time is never current.
            let Some(resets_ms) = snapshot.resets_ms else { continue };
            let key = (snapshot.provider, snapshot.limit_id, snapshot.window, snapshot.window_minutes, resets_ms);
            let peak = self.peaks.entry(key).or_insert(0.0);
            *peak = peak.max(snapshot.used_percent);
        }
    }
}

/// The gauges of limits and quota windows at `now_ms`: each provider's
/// newest hit by its own time, and each current window, one per provider,
/// limit family and kind. Where two are current for one of those (a
/// provider that reported a reset time that moved by a minute, say), the
/// one that resets last is the window now; the other is the window it
/// replaced, and two series with one label set would be one series with
/// two values, of which a receiver keeps either. `windows` is what the
/// last read kept (`None`: the snapshots of the last
/// [`WINDOWS_LOOK_BACK_MS`] are read).
fn quota_series(
    reader: &Reader,
    hits: &[LimitRow],
    windows: &mut Option<WindowPeaks>,
    now_ms: i64,
) -> Result<Vec<(SeriesId, f64)>, Issue> {
    let mut out = Vec::new();
    let mut newest: BTreeMap<Provider, i64> = BTreeMap::new();
    for hit in hits {
        let at = newest.entry(hit.provider).or_insert(hit.at_ms);
        *at = (*at).max(hit.at_ms);
    }
    for (provider, at_ms) in newest {
        let p = (names::LABEL_PROVIDER, provider.as_str().to_owned());
        out.push((SeriesId::new(names::LAST_LIMIT_HIT_TIMESTAMP, &[p]), at_ms as f64 / 1000.0));
    }
    let mut peaks = match windows.take() {
        Some(mut kept) => {
            let (snapshots, last) = reader.snapshots_after(kept.seen_seq)?;
            kept.add(snapshots);
            kept.seen_seq = last;
            kept
        }
        None => {
            let mut fresh = WindowPeaks { seen_seq: reader.newest_snapshot_seq()?, ..WindowPeaks::default() };
            let look_back = Range { since_ms: now_ms - WINDOWS_LOOK_BACK_MS, until_ms: i64::MAX };
            fresh.add(reader.snapshots(look_back)?.0);
            fresh
        }
    };
    peaks.peaks.retain(|key, _| key.4 > now_ms);
    let mut current: BTreeMap<(Provider, Option<String>, WindowKind), (i64, f64)> = BTreeMap::new();
    for ((provider, limit_id, window, _, resets_ms), peak) in &peaks.peaks {
        let now = current.entry((*provider, limit_id.clone(), *window)).or_insert((*resets_ms, *peak));
        if *resets_ms > now.0 {
            *now = (*resets_ms, *peak);
        }
    }
    for ((provider, limit_id, window), (resets_ms, peak)) in current {
        let labels = [
            (names::LABEL_PROVIDER, provider.as_str().to_owned()),
            (names::LABEL_WINDOW, window.as_str().to_owned()),
            (names::LABEL_LIMIT_ID, limit_id.unwrap_or_default()),
        ];
        out.push((SeriesId::new(names::WINDOW_UTILISATION, &labels), peak / 100.0));
        out.push((SeriesId::new(names::WINDOW_RESET_TIMESTAMP, &labels), resets_ms as f64 / 1000.0));
    }
    *windows = Some(peaks);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::stored::evidence::Evidence;
    use crate::ledger::stored::responses::ResponseWrite;
    use crate::ledger::stored::store::Ledger;
    use bee_proto::usage::Counters;

    const MINUTE: i64 = 60_000;
    const DAY: i64 = 24 * HOUR_MS;
    /// 2026-06-01T10:30:00Z.
    const NOW: i64 = 1_780_309_800_000;

    /// A Claude response of `output` tokens at `at_ms`.
    fn response(key: &str, at_ms: i64, output: u64) -> Evidence {
        Evidence::Response(ResponseWrite {
            provider: Provider::Claude,
            key: key.to_owned(),
            session_id: Some("session".into()),
            at_ms,
            model: Some("claude-sonnet-4-5".into()),
            tokens: Counters { input_tokens: Some(1), output_tokens: Some(output), ..Counters::default() },
            context_tokens: None,
            context_window: None,
            is_final: true,
            own_figure: None,
            copied: false,
        })
    }

    fn append(dir: &Path, evidence: &[Evidence]) {
        let mut ledger = Ledger::open(dir).unwrap();
        ledger.append_at(evidence, &[]).unwrap();
        ledger.settle();
    }

    /// The output tokens sent as (live, backfilled), 0 for a part not sent.
    fn output(series: &[(SeriesId, f64)]) -> (f64, f64) {
        let part = |origin: &str| {
            series
                .iter()
                .find(|(id, _)| {
                    id.name == names::TOKENS_TOTAL
                        && id.labels.contains(&(names::LABEL_KIND, "output".to_owned()))
                        && id.labels.contains(&(names::LABEL_ORIGIN, origin.to_owned()))
                })
                .map_or(0.0, |(_, value)| *value)
        };
        (part(names::ORIGIN_LIVE), part(names::ORIGIN_BACKFILL))
    }

    fn read_at(dir: &Path, state: &mut Option<CounterState>, now_ms: i64) -> Vec<(SeriesId, f64)> {
        read_with_floors(dir, state, now_ms, &BTreeMap::new())
    }

    fn read_with_floors(
        dir: &Path,
        state: &mut Option<CounterState>,
        now_ms: i64,
        floors: &BTreeMap<String, f64>,
    ) -> Vec<(SeriesId, f64)> {
        read(dir, state, now_ms, &PriceTable::bundled(), floors).unwrap()
    }

    /// The first read finds history: what is older than its boundary is
    /// backfill, the last minutes live. Usage that reaches the ledger in
    /// time is live; usage of last week that reaches it now is backfill,
    /// however many hours were read from the aggregates meanwhile; the
    /// parts always add up to the total.
    #[test]
    fn late_usage_is_backfill_and_timely_usage_live() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        append(&dir, &[response("old", NOW - 30 * DAY, 1000), response("recent", NOW - MINUTE, 10)]);
        let mut state = None;
        assert_eq!(output(&read_at(&dir, &mut state, NOW)), (10.0, 1000.0));
        // Thirty seconds on: a response of now arrives, and one of last week.
        append(&dir, &[response("now", NOW + 20_000, 5), response("late", NOW - 7 * DAY, 300)]);
        assert_eq!(output(&read_at(&dir, &mut state, NOW + 30_000)), (15.0, 1300.0));
        // Two hours on (the cut moved past hours read from the aggregates):
        // a response of ten minutes ago reached the ledger in time.
        let later = NOW + 2 * HOUR_MS;
        assert_eq!(output(&read_at(&dir, &mut state, later - 30_000)), (15.0, 1300.0));
        append(&dir, &[response("timely", later - 40_000, 7)]);
        assert_eq!(output(&read_at(&dir, &mut state, later)), (22.0, 1300.0));
        // Nothing new: the same figures, and nothing is read twice.
        assert_eq!(output(&read_at(&dir, &mut state, later + 30_000)), (22.0, 1300.0));
    }

    /// beed stopped for hours while an agent ran: what it reads on its
    /// return is backfill, but for the last minutes; the state survives
    /// the state file.
    #[test]
    fn usage_read_after_a_stop_is_backfill() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        append(&dir, &[response("before", NOW - MINUTE, 10)]);
        let mut state = None;
        assert_eq!(output(&read_at(&dir, &mut state, NOW)), (10.0, 0.0));
        let saved = serde_json::to_string(&SavedCounters::from(state.as_ref().unwrap())).unwrap();
        let back = NOW + 5 * HOUR_MS;
        append(&dir, &[response("while-stopped", NOW + HOUR_MS, 200), response("just-now", back - MINUTE, 3)]);
        let mut state = Some(CounterState::from(serde_json::from_str::<SavedCounters>(&saved).unwrap()));
        assert_eq!(output(&read_at(&dir, &mut state, back)), (13.0, 200.0));
    }

    /// A part never falls: a receiver would read the fall as a reset and
    /// count the whole series again.
    #[test]
    fn a_part_never_falls() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        append(&dir, &[response("a", NOW - MINUTE, 10)]);
        let mut state = None;
        assert_eq!(output(&read_at(&dir, &mut state, NOW)), (10.0, 0.0));
        // A state that claims more backfill than arrived (another ledger's,
        // or a damaged file): input, not authority. Its parts would add up
        // past what the ledger holds, so the totals are read afresh: the
        // parts sum to the ledger's, and the live part does not fall.
        if let Some(state) = state.as_mut() {
            for split in state.series.values_mut() {
                split.backfilled += 4.0;
            }
        }
        assert_eq!(output(&read_at(&dir, &mut state, NOW + 30_000)), (10.0, 0.0));
    }

    /// A state lost with beed down longer than the grace: rebuilt from the
    /// ledger, no part falls below what was last sent of it, and the parts
    /// still add up to the ledger's total.
    #[test]
    fn a_lost_state_is_rebuilt_above_what_was_sent() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        append(&dir, &[response("old", NOW - 3 * HOUR_MS, 100), response("now", NOW - MINUTE, 10)]);
        let mut state = None;
        let first = read_at(&dir, &mut state, NOW);
        assert_eq!(output(&first), (10.0, 100.0));
        // What the destination holds: every series as sent.
        let floors: BTreeMap<String, f64> = first.iter().map(|(id, value)| (id.key(), *value)).collect();
        // Used while beed was down, and the state lost.
        append(&dir, &[response("while-down", NOW + 30 * MINUTE, 5)]);
        let later = NOW + HOUR_MS;
        let mut lost = None;
        assert_eq!(
            output(&read_at(&dir, &mut lost.clone(), later)),
            (0.0, 115.0),
            "without floors the live part falls"
        );
        let rebuilt = read_with_floors(&dir, &mut lost, later, &floors);
        let (live, backfill) = output(&rebuilt);
        assert!(live >= 10.0 && backfill >= 100.0, "({live}, {backfill})");
        assert_eq!(live + backfill, 115.0);
        // Floors that do not fit the ledger's totals are no floors.
        let too_high: BTreeMap<String, f64> = floors.iter().map(|(key, value)| (key.clone(), value * 10.0)).collect();
        let mut lost = None;
        assert_eq!(output(&read_with_floors(&dir, &mut lost, later, &too_high)), (0.0, 115.0));
    }

    /// A saved state that cannot be one beed wrote is no state at all.
    #[test]
    fn a_saved_state_is_checked_before_it_is_trusted() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        append(&dir, &[response("a", NOW - MINUTE, 10)]);
        let mut state = None;
        read_at(&dir, &mut state, NOW);
        let saved = SavedCounters::from(state.as_ref().unwrap());
        assert!(saved.is_sound(NOW));
        let damaged = |change: fn(&mut SavedCounters)| {
            let mut copy = saved.clone();
            change(&mut copy);
            copy.is_sound(NOW)
        };
        assert!(!damaged(|s| s.read_at_ms = NOW + 365 * DAY_MS), "a read in the future");
        assert!(!damaged(|s| s.cut_ms = s.read_at_ms + 1), "cuts out of order");
        assert!(!damaged(|s| s.series[0].split.live = -1.0), "a negative part");
        assert!(!damaged(|s| s.series[0].split.live = f64::NAN), "not a number");
        assert!(!damaged(|s| s.series[0].split.live = 1e18), "a part over its total");
        assert!(!damaged(|s| s.read_at_ms = 0), "no read");
    }

    /// A producer call of `minutes` minutes at `at_ms`, with a cost.
    fn call(at_ms: i64, minutes: u64, provider: Provider) -> Evidence {
        use bee_proto::ledger::{CallRecord, CallSource, LedgerRecord};
        let started_at_utc = bee_proto::time::format_unix_ms(at_ms);
        let session = Some(format!("call-{at_ms}"));
        let mut call = CallRecord::span(
            uuid::Uuid::new_v4(),
            CallSource::Run,
            provider,
            started_at_utc,
            Some(minutes * 60_000),
            session,
        );
        call.model = Some("gpt-5-codex".to_owned());
        call.cost_usd = Some(0.37);
        Evidence::Record(LedgerRecord::Call(Box::new(call)))
    }

    /// Each series' total over its parts (`origin` dropped), costs rounded.
    fn summed(series: &[(SeriesId, f64)]) -> BTreeMap<String, f64> {
        let mut sums = BTreeMap::new();
        for (id, value) in series {
            let labels: Vec<_> = id.labels.iter().filter(|(label, _)| *label != names::LABEL_ORIGIN).cloned().collect();
            *sums.entry(SeriesId::new(id.name, &labels).key()).or_insert(0.0) += value;
        }
        sums.into_iter().map(|(key, value)| (key, (value * 1e6).round() / 1e6)).collect()
    }

    /// The ledger's totals read at once over the whole store.
    fn whole_store(dir: &Path, now_ms: i64) -> BTreeMap<String, f64> {
        let reader = Reader::open(dir).unwrap();
        let hits = crate::ledger::stored::store::one_per_hit(
            reader.limit_notices().unwrap().into_iter().map(|(_, hit)| hit).collect(),
        );
        let range = Range { since_ms: 0, until_ms: now_ms };
        let totals = totals_in(&reader, range, &hits, &PriceTable::bundled()).unwrap();
        summed(&totals.into_iter().collect::<Vec<_>>())
    }

    /// However the totals are pieced together (kept hours, weeks read
    /// again, calls that run across an hour and a week's end), their parts
    /// sum to what one read of the whole store says, at every read.
    #[test]
    fn the_kept_totals_are_the_whole_stores() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        let mut history = Vec::new();
        for n in 0..40 {
            let at = NOW - 20 * DAY + n * 11 * HOUR_MS + n * 7 * MINUTE;
            history.push(response(&format!("r{n}"), at, 100 + n as u64));
            // Calls of 50 minutes to three hours: across hours, some across a week's end.
            history.push(call(at - 30 * MINUTE, 50 + 4 * n as u64, Provider::Codex));
        }
        history.push(call(NOW - 90 * MINUTE, 80, Provider::Codex));
        append(&dir, &history);
        let mut state = None;
        let mut now = NOW;
        for round in 0..8 {
            let read = read_at(&dir, &mut state, now);
            assert_eq!(
                summed(
                    &read
                        .into_iter()
                        .filter(|(id, _)| !id.name.contains("window") && !id.name.contains("timestamp"))
                        .collect::<Vec<_>>()
                ),
                whole_store(&dir, now),
                "round {round}"
            );
            // Fresh usage, usage of hours ago (read again from the day-old
            // cut), history of days ago every other round (read again from
            // the start), and time going on past hours.
            let mut more = vec![
                response(&format!("today{round}"), now - (2 + round) * HOUR_MS, 20),
                response(&format!("fresh{round}"), now - MINUTE, 5),
                call(now - 70 * MINUTE, 65, Provider::Codex),
            ];
            if round % 2 == 0 {
                more.push(response(&format!("late{round}"), NOW - (3 + round) * DAY, 50));
            }
            append(&dir, &more);
            now += 47 * MINUTE;
        }
    }

    /// A provider that worked without a hit is a 0 of limit hits only when
    /// its records could hold one: Claude Code's are a 0; OpenCode's, whose
    /// records keep no usage-limit notice, have no series at all (unknown,
    /// not "no hit"), while its tokens are exported as any agent's.
    #[test]
    fn no_zero_of_limit_hits_for_an_agent_that_records_none() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("ledger");
        let Evidence::Response(claude) = response("c1", NOW - HOUR_MS, 10) else { unreachable!() };
        let opencode = ResponseWrite { provider: Provider::OpenCode, key: "o1".to_owned(), ..claude.clone() };
        append(&dir, &[Evidence::Response(claude), Evidence::Response(opencode)]);
        let totals = whole_store(&dir, NOW);
        let hits = |agent: &str| {
            totals.get(&series_key(names::LIMIT_HITS_TOTAL, &[(names::LABEL_PROVIDER, agent.to_owned())]))
        };
        assert_eq!(hits("claude"), Some(&0.0), "{totals:?}");
        assert_eq!(hits("opencode"), None, "{totals:?}");
        let read = read_at(&dir, &mut None, NOW);
        let limit_series: Vec<&SeriesId> =
            read.iter().map(|(id, _)| id).filter(|id| id.name == names::LIMIT_HITS_TOTAL).collect();
        assert!(
            limit_series.iter().all(|id| !id.labels.contains(&(names::LABEL_PROVIDER, "opencode".to_owned()))),
            "{limit_series:?}"
        );
        assert!(read.iter().any(|(id, _)| id.name == names::TOKENS_TOTAL
            && id.labels.contains(&(names::LABEL_PROVIDER, "opencode".to_owned()))));
    }

    /// A state file names series by their labels; a name this Bee does not
    /// export is dropped, the rest come back as they were.
    #[test]
    fn the_state_file_round_trips() {
        let id = SeriesId::new(
            names::TOKENS_TOTAL,
            &[(names::LABEL_PROVIDER, "claude".to_owned()), (names::LABEL_KIND, "output".to_owned())],
        );
        let split =
            Split { before_day: 0.5, before_cut: 1.0, before_boundary: 2.0, total: 3.0, backfilled: 1.0, live: 2.0 };
        let state = CounterState {
            read_at_ms: NOW,
            boundary_ms: NOW - GRACE_MS,
            cut_ms: NOW - HOUR_MS,
            day_cut_ms: NOW - HOUR_MS - DAY_MS,
            changes_seen: 9,
            resumed: false,
            series: [(id.clone(), split)].into(),
            windows: None,
        };
        let mut saved = SavedCounters::from(&state);
        saved.series.push(SavedSeries {
            name: "bee_unknown_total".to_owned(),
            labels: Vec::new(),
            split: Split::default(),
        });
        let back =
            CounterState::from(serde_json::from_str::<SavedCounters>(&serde_json::to_string(&saved).unwrap()).unwrap());
        assert_eq!(back, CounterState { resumed: true, ..state });
        assert_eq!(id.key(), r#"bee_tokens_total{kind="output",provider="claude"}"#);
    }
}
