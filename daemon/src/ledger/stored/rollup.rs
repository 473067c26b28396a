//! The aggregates `beectl quota`, `status` and `usage` read instead of a
//! million call rows: per hour and provider (and for all providers together)
//! the calls that started, their agent time and Used clipped to the hour,
//! calls of unknown duration and the reported cost; per hour, the token
//! counters by day, session and model.
//!
//! They are derived data, never evidence. An append marks every hour it
//! touches dirty in its own transaction; [`settle`] recomputes dirty hours
//! from the records. A reader takes clean hours from the aggregates and the
//! partial hours at a range's edges, and any dirty hour, from the records
//! themselves — so an aggregate is used only once it agrees with the ledger,
//! and Used stays exact: intervals clipped to different hours are disjoint,
//! so the union over a range is the sum of the unions within its hours.

use bee_proto::ledger::{CallSource, OwnUnit, Provider, UsageRow};
use bee_proto::usage::Counters;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::ledger::stored::part_pack;
use crate::ledger::stored::responses::{self, Response};
use crate::ledger::stored::schema::{
    AGENT_COST_SCHEMA, CALL_COLUMN_COUNT, CALL_COLUMNS, CHECKSUM_SCHEMA, HOUR_MS, MAX_CALL_MS, PACK_SCHEMA,
    RESPONSE_SCHEMA, ROLLUP_SCHEMA, Range, counters_at, hour_of,
};
use crate::storage::sqlite::sql_integer;

/// Adds the aggregates and marks every hour already in the ledger dirty.
pub const MIGRATION: &str = r#"
    CREATE TABLE rollup_time (
        hour_ms           INTEGER NOT NULL,
        provider          TEXT NOT NULL,   -- '' for all providers: their union
        calls             INTEGER NOT NULL,
        without_duration  INTEGER NOT NULL,
        agent_ms          INTEGER NOT NULL,
        used_ms           INTEGER NOT NULL,
        cost_usd          REAL,            -- NULL when no call reported one
        cost_calls        INTEGER NOT NULL,
        PRIMARY KEY (hour_ms, provider)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE rollup_usage (
        grouping                     TEXT NOT NULL,
        hour_ms                      INTEGER NOT NULL,
        key                          TEXT,
        calls                        INTEGER NOT NULL,
        input_tokens                 INTEGER,
        cached_input_tokens          INTEGER,
        cache_creation_input_tokens  INTEGER,
        cache_read_input_tokens      INTEGER,
        output_tokens                INTEGER,
        reasoning_output_tokens      INTEGER,
        total_tokens                 INTEGER
    ) STRICT;
    CREATE INDEX rollup_usage_hour ON rollup_usage (grouping, hour_ms);
    CREATE TABLE rollup_dirty (hour_ms INTEGER PRIMARY KEY NOT NULL) STRICT;
    -- Sessions a producer measured: their ingested calls are not counted again.
    CREATE TABLE measured_session (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;
    -- Where a session's ingested calls lie: the hours to settle again when a
    -- producer measures that session later.
    CREATE TABLE session_span (
        provider   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        first_ms   INTEGER NOT NULL,
        end_ms     INTEGER NOT NULL,
        PRIMARY KEY (provider, session_id)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE longest_call (id INTEGER PRIMARY KEY CHECK (id = 1), duration_ms INTEGER NOT NULL) STRICT;

    INSERT INTO measured_session
        SELECT DISTINCT provider, session_id FROM call WHERE source != 'ingested' AND session_id IS NOT NULL;
    INSERT INTO session_span
        SELECT provider, session_id, MIN(started_at_ms), MAX(started_at_ms + MIN(COALESCE(duration_ms, 0), 604800000))
        FROM call WHERE source = 'ingested' AND session_id IS NOT NULL GROUP BY provider, session_id;
    INSERT INTO longest_call VALUES (1, MIN(COALESCE((SELECT MAX(duration_ms) FROM call), 0), 604800000));
    WITH RECURSIVE hours(at, last) AS (
        SELECT started_at_ms / 3600000 * 3600000,
               (started_at_ms + MIN(MAX(COALESCE(duration_ms, 0), 1), 604800000) - 1) / 3600000 * 3600000
        FROM call
        UNION ALL SELECT at + 3600000, last FROM hours WHERE at < last
    )
    INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT at FROM hours;
"#;

/// Usage per hour by part instead of by three fixed groupings: any bucket of
/// time, any filter and a price per model and tier derive from it. Every
/// hour with usage is settled again.
pub const PART_MIGRATION: &str = r#"
    DROP TABLE rollup_usage;
    CREATE TABLE rollup_part (
        hour_ms                      INTEGER NOT NULL,
        provider                     TEXT NOT NULL,
        session_id                   TEXT,
        model                        TEXT,
        tier                         INTEGER NOT NULL,
        responses                    INTEGER NOT NULL,
        input_tokens                 INTEGER,
        cached_input_tokens          INTEGER,
        cache_creation_input_tokens  INTEGER,
        cache_read_input_tokens      INTEGER,
        output_tokens                INTEGER,
        reasoning_output_tokens      INTEGER,
        total_tokens                 INTEGER,
        partial_parts                INTEGER NOT NULL,
        pending_responses            INTEGER NOT NULL,
        producer_calls               INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX rollup_part_hour ON rollup_part (hour_ms);
    INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT DISTINCT hour_ms FROM rollup_time;
    INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT DISTINCT at_ms / 3600000 * 3600000 FROM response;
"#;

/// An hour's usage parts in one pack instead of a row each. The hours that
/// had parts are settled again (the aggregates derive from the records).
pub const PART_PACK_MIGRATION: &str = r#"
    INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT DISTINCT hour_ms FROM rollup_part;
    DROP TABLE rollup_part;
    CREATE TABLE rollup_parts (
        hour_ms  INTEGER PRIMARY KEY NOT NULL,
        body     BLOB NOT NULL
    ) STRICT;
"#;

/// The aggregates' provider name of derived turns.
const DERIVED: &str = "derived";

/// `[start, end)` of a call, when its duration is known; at most [`MAX_CALL_MS`].
fn interval(started_ms: i64, duration_ms: Option<i64>) -> Option<(i64, i64)> {
    duration_ms.map(|d| (started_ms, started_ms.saturating_add(d.clamp(0, MAX_CALL_MS))))
}

/// A call (a producer's span) as the views need it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRow {
    pub started_ms: i64,
    pub duration_ms: Option<i64>,
    pub provider: Provider,
    pub source: CallSource,
    pub model: Option<String>,
    pub session_id: Option<String>,
    pub cost_usd: Option<f64>,
    /// The producer's own counters; `None` when it reported none.
    pub tokens: Option<Counters>,
    /// A log of the call's session exists: its responses are the token
    /// evidence, and the producer's own counters stand in for nothing.
    pub logged: bool,
    /// A part of another call (a timed request inside a hook turn that
    /// reported no cost): only its reported cost counts, nothing else.
    pub folded: bool,
}

impl CallRow {
    /// `[start, end)`, when the duration is known; at most [`MAX_CALL_MS`].
    fn interval(&self) -> Option<(i64, i64)> {
        interval(self.started_ms, self.duration_ms)
    }

    /// Whether the call started before `at` and was still running then.
    fn runs_into(&self, at: i64) -> bool {
        self.interval().is_some_and(|(start, end)| start < at && end > at)
    }

    /// Whether the call has a part in `range`; at an empty range's instant,
    /// whether it was running then.
    fn overlaps(&self, range: Range) -> bool {
        range.contains(self.started_ms)
            || self.runs_into(range.since_ms)
            || self.interval().is_some_and(|(start, end)| range.clip(start, end).is_some())
    }

    /// Whether `inner` is a part of this call of the same session, not
    /// another call: a hook-measured turn inside a `beectl run` (the run is
    /// the call), or a request the provider's telemetry timed inside a run
    /// or a hook turn (the turn spans its requests and the time between
    /// them: `UserPromptSubmit` runs before the first request is sent, `Stop`
    /// after the last response). Inside, not merely overlapping: every range
    /// a part lies in then holds its call too, so each hour folds alike.
    /// [`Outer::around`] finds such a call without trying each; the tests
    /// hold it to this rule.
    #[cfg(test)]
    fn contains(&self, inner: &CallRow) -> bool {
        let same_session =
            self.provider == inner.provider && self.session_id.is_some() && self.session_id == inner.session_id;
        let (Some((start, end)), Some((inner_start, inner_end))) = (self.interval(), inner.interval()) else {
            return false;
        };
        same_session
            && start <= inner_start
            && inner_end <= end
            && matches!(
                (self.source, inner.source),
                (CallSource::Run, CallSource::HookTurn)
                    | (CallSource::Run | CallSource::HookTurn, CallSource::ApiRequest)
            )
    }
}

/// Additive time figures of a set of calls over a range.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Calls that started in the range (and, at a range's start, those that
    /// started earlier and ran into it).
    pub calls: u64,
    pub without_duration: u64,
    pub agent_ms: u64,
    pub used_ms: u64,
    /// Sum of the costs reported by calls that started in the range; `None`
    /// when none reported one.
    pub cost_usd: Option<f64>,
    pub cost_calls: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.calls += other.calls;
        self.without_duration += other.without_duration;
        self.agent_ms += other.agent_ms;
        self.used_ms += other.used_ms;
        self.cost_calls += other.cost_calls;
        if let Some(cost) = other.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + cost);
        }
    }

    /// The figures of `calls` (those overlapping `range`) over `range`.
    fn of<'a>(calls: impl Iterator<Item = &'a CallRow>, range: Range, count_earlier: bool) -> Tally {
        let mut tally = Tally::default();
        let mut clipped = Vec::new();
        for call in calls {
            let started_here = range.contains(call.started_ms);
            if let (true, Some(cost)) = (started_here, call.cost_usd) {
                tally.cost_calls += 1;
                tally.cost_usd = Some(tally.cost_usd.unwrap_or(0.0) + cost);
            }
            // A part of another call brings its cost, and nothing else.
            if call.folded {
                continue;
            }
            let interval = call.interval();
            if started_here || (count_earlier && call.runs_into(range.since_ms)) {
                tally.calls += 1;
            }
            if started_here {
                tally.without_duration += u64::from(interval.is_none());
            }
            clipped.extend(interval.and_then(|(start, end)| range.clip(start, end)));
        }
        let (agent, used) = times(&mut clipped);
        tally.agent_ms = agent;
        tally.used_ms = used;
        tally
    }
}

/// Summed lengths and the length of the union of `[start, end)` intervals.
fn times(intervals: &mut [(i64, i64)]) -> (u64, u64) {
    let agent = intervals.iter().map(|(s, e)| (e - s) as u64).sum();
    intervals.sort_unstable();
    let mut used = 0u64;
    let mut current: Option<(i64, i64)> = None;
    for &(start, end) in intervals.iter() {
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

/// Where a part of usage lies: the bucket of time it fell in (the start
/// of the hour, day, week… a view asked for), its provider, session and
/// model, and the prompt-size tier that prices it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartKey {
    pub bucket: i64,
    pub provider: Provider,
    pub session: Option<String>,
    pub model: Option<String>,
    pub tier: u8,
}

/// Usage by part: the responses first written in a range, and the producer
/// calls started in it whose session left no log.
pub type Parts = BTreeMap<PartKey, PartFigures>;

/// Which bucket of time a provider's usage at a unix millisecond falls in,
/// as the start of that bucket. Buckets are intervals: an hour whose first
/// and last millisecond fall in the same bucket lies wholly inside it.
pub type Bucket<'a> = &'a dyn Fn(Provider, i64) -> i64;

/// An agent's own figure (a cost, credits, unsplit or estimated tokens) as whole steps
/// of its unit ([`OwnUnit::steps_per_unit`]: billionths of a dollar or a
/// credit, whole tokens), so a sum is the same whichever order its parts
/// meet in (from the records, or hour by hour from the aggregates), and
/// each response's figure is off by half a step at most. Figures are not
/// negative and within their unit's bound.
fn steps_of(unit: OwnUnit, figure: f64) -> u64 {
    (figure * unit.steps_per_unit()).round() as u64
}

/// A part's figures: its few counts, as an hour's pack holds them and as
/// views and settling sum them. A view makes rows of them only once it has
/// grouped them, so a range's thousands of parts stay small.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartFigures {
    /// Distinct provider responses.
    pub responses: u64,
    /// The provider's own counters, summed; one no response reported stays `None`.
    pub tokens: Counters,
    /// Parts that lack a counter their provider reports (or producer calls).
    pub partial_parts: u64,
    /// Responses whose log was still being written.
    pub pending_responses: u64,
    /// Calls whose own counters stand in because no log of their session exists.
    pub producer_calls: u64,
    /// Responses another session made that this part's session holds a copy
    /// of (counted there as responses, here only as copies).
    pub copied_responses: u64,
    /// The figures the agent wrote itself beside its responses, in steps of
    /// its unit ([`PartFigures::own_figure`]); `None` when no response of
    /// it carried one. A part is one agent's, so one unit's.
    pub own_figure_steps: Option<u64>,
    /// Responses of agents that write a figure of their own
    /// (`responses::writes_own_figure`) that carried none: the sum is a
    /// lower bound while above 0.
    pub own_figure_unknown: u64,
    /// The first and last time (unix ms) one of its responses was first
    /// written; `None` for a part of producer calls or copies alone.
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
}

impl PartFigures {
    /// A stored part's figures.
    fn of(part: &part_pack::StoredPart<'_>) -> PartFigures {
        PartFigures {
            responses: part.responses,
            tokens: part.tokens.clone(),
            partial_parts: part.partial_parts,
            pending_responses: part.pending_responses,
            producer_calls: part.producer_calls,
            copied_responses: part.copied_responses,
            own_figure_steps: part.own_figure_steps,
            own_figure_unknown: part.own_figure_unknown,
            first_ms: part.first_ms,
            last_ms: part.last_ms,
        }
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &PartFigures) {
        self.responses += other.responses;
        self.tokens.add(&other.tokens);
        self.partial_parts += other.partial_parts;
        self.pending_responses += other.pending_responses;
        self.producer_calls += other.producer_calls;
        self.copied_responses += other.copied_responses;
        if let Some(nanos) = other.own_figure_steps {
            self.own_figure_steps = Some(self.own_figure_steps.unwrap_or(0).saturating_add(nanos));
        }
        self.own_figure_unknown += other.own_figure_unknown;
        self.first_ms = min_known(self.first_ms, other.first_ms);
        self.last_ms = self.last_ms.max(other.last_ms);
    }

    /// One response of `provider` first written at `at_ms` with the
    /// figure the agent wrote beside it.
    fn add_response(&mut self, provider: Provider, at_ms: i64, figure: Option<f64>) {
        self.responses += 1;
        self.first_ms = min_known(self.first_ms, Some(at_ms));
        self.last_ms = self.last_ms.max(Some(at_ms));
        match figure {
            Some(figure) => {
                let steps = steps_of(provider.own_unit(), figure);
                self.own_figure_steps = Some(self.own_figure_steps.unwrap_or(0).saturating_add(steps));
            }
            None => self.own_figure_unknown += u64::from(responses::writes_own_figure(provider)),
        }
    }

    /// The figures `provider` (the part's agent) wrote itself, summed in
    /// its unit; `None` when no response carried one.
    pub fn own_figure(&self, provider: Provider) -> Option<f64> {
        self.own_figure_steps.map(|steps| steps as f64 / provider.own_unit().steps_per_unit())
    }

    /// Adds these figures, of `provider`'s responses, to a view's `row`,
    /// with `tokens` in place of their own counters (mapped into Bee's one
    /// set of columns); the agent's own figure goes to its unit's column.
    /// Its first and last response times are for the view to place.
    pub fn add_to(&self, provider: Provider, row: &mut UsageRow, tokens: &Counters) {
        row.responses += self.responses;
        row.tokens.add(tokens);
        row.partial_parts += self.partial_parts;
        row.pending_responses += self.pending_responses;
        row.producer_counted_calls += self.producer_calls;
        row.copied_responses += self.copied_responses;
        let figure = self.own_figure(provider);
        let unknown = self.own_figure_unknown;
        match provider.own_unit() {
            OwnUnit::Usd => {
                bee_proto::ledger::add_cost(&mut row.agent_cost_usd, figure);
                row.agent_cost_unknown_parts += unknown;
            }
            OwnUnit::Credits => {
                bee_proto::ledger::add_cost(&mut row.agent_credits, figure);
                row.agent_credits_unknown_parts += unknown;
            }
            OwnUnit::UnsplitTokens => {
                bee_proto::ledger::add_tokens(&mut row.unsplit_tokens, figure.map(|tokens| tokens as u64));
                row.unsplit_tokens_unknown_parts += unknown;
            }
            OwnUnit::EstimatedTokens => {
                bee_proto::ledger::add_tokens(&mut row.agent_estimated_tokens, figure.map(|tokens| tokens as u64));
                row.agent_estimated_tokens_unknown_parts += unknown;
            }
        }
    }
}

/// The lesser of two times, either of which may be unknown.
fn min_known(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A [`PartKey`] borrowing its session and model from a response or call.
#[derive(PartialEq, Eq, Hash)]
struct PartOf<'a> {
    bucket: i64,
    provider: Provider,
    session: Option<&'a str>,
    model: Option<&'a str>,
    tier: u8,
}

fn parts_of<'a>(
    responses: impl Iterator<Item = &'a Response>,
    calls: impl Iterator<Item = &'a CallRow>,
    range: Range,
    bucket: Bucket<'_>,
    into: &mut Parts,
) {
    // Summed under borrowed keys first: a part's session and model are
    // copied once, not once per response or call.
    let mut sums: crate::ledger::FastMap<PartOf<'_>, PartFigures> = Default::default();
    for response in responses.filter(|r| range.contains(r.at_ms)) {
        let (bucket, tier) = (
            bucket(response.provider, response.at_ms),
            crate::ledger::views::prices::tier_of(response.provider, &response.tokens),
        );
        let part_of = |session: Option<&'a str>| PartOf {
            bucket,
            provider: response.provider,
            session,
            model: response.model.as_deref(),
            tier,
        };
        let row = sums.entry(part_of(response.session_id.as_deref())).or_default();
        row.add_response(response.provider, response.at_ms, response.own_figure);
        row.tokens.add(&responses::with_known_total(response.provider, &response.tokens));
        row.partial_parts += u64::from(response.partial);
        row.pending_responses += u64::from(response.pending);
        // The sessions holding a copy say so, in the same bucket.
        for copy in &response.copied_into {
            sums.entry(part_of(Some(&**copy))).or_default().copied_responses += 1;
        }
    }
    for call in calls.filter(|c| range.contains(c.started_ms) && !c.logged) {
        let key = PartOf {
            bucket: bucket(call.provider, call.started_ms),
            provider: call.provider,
            session: call.session_id.as_deref(),
            model: call.model.as_deref(),
            tier: call.tokens.as_ref().map_or(0, |t| crate::ledger::views::prices::tier_of(call.provider, t)),
        };
        let row = sums.entry(key).or_default();
        row.producer_calls += 1;
        match &call.tokens {
            Some(tokens) => {
                row.tokens.add(&responses::with_known_total(call.provider, tokens));
                row.partial_parts += u64::from(!responses::reports_all(call.provider, tokens));
            }
            None => row.partial_parts += 1,
        }
    }
    for (key, sum) in sums {
        let key = PartKey {
            bucket: key.bucket,
            provider: key.provider,
            session: key.session.map(str::to_owned),
            model: key.model.map(str::to_owned),
            tier: key.tier,
        };
        into.entry(key).or_default().add(&sum);
    }
}

/// What the views say about the calls of a range.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Measured calls, all providers together (Used is their union, not a sum).
    pub all: Tally,
    pub providers: BTreeMap<Provider, Tally>,
    /// Derived turns (no producer measured them), apart from measured calls.
    pub derived_all: Tally,
    pub derived_providers: BTreeMap<Provider, Tally>,
    /// Filled when usage was asked for, by the buckets asked for.
    pub parts: Parts,
    /// Records that fail their checksum: read in the range, or found by the
    /// writer anywhere in the ledger. Not counted in any figure.
    pub damaged_records: u64,
}

impl Summary {
    /// Computed from the records themselves: `calls` overlapping `range` and
    /// `responses` first written in it.
    pub fn of_records(calls: &[CallRow], responses: &[Response], range: Range, by: Option<Bucket<'_>>) -> Summary {
        Summary::of(calls, responses, range, by, true)
    }

    fn of(
        calls: &[CallRow],
        responses: &[Response],
        range: Range,
        by: Option<Bucket<'_>>,
        count_earlier: bool,
    ) -> Summary {
        let mut providers: Vec<Provider> = calls.iter().map(|c| c.provider).collect();
        providers.sort();
        providers.dedup();
        let (derived, measured): (Vec<&CallRow>, Vec<&CallRow>) =
            calls.iter().partition(|c| c.source == CallSource::Derived);
        let mut summary = Summary {
            all: Tally::of(measured.iter().copied(), range, count_earlier),
            derived_all: Tally::of(derived.iter().copied(), range, count_earlier),
            ..Summary::default()
        };
        for provider in providers {
            for (rows, into) in [(&measured, &mut summary.providers), (&derived, &mut summary.derived_providers)] {
                let tally = Tally::of(rows.iter().copied().filter(|c| c.provider == provider), range, count_earlier);
                if tally.calls > 0 || tally.agent_ms > 0 {
                    into.insert(provider, tally);
                }
            }
        }
        if let Some(by) = by {
            parts_of(responses.iter(), calls.iter(), range, by, &mut summary.parts);
        }
        summary
    }

    fn add(&mut self, other: Summary) {
        self.all.add(&other.all);
        self.derived_all.add(&other.derived_all);
        self.damaged_records += other.damaged_records;
        for (provider, tally) in other.providers {
            self.providers.entry(provider).or_default().add(&tally);
        }
        for (provider, tally) in other.derived_providers {
            self.derived_providers.entry(provider).or_default().add(&tally);
        }
        for (key, row) in other.parts {
            self.parts.entry(key).or_default().add(&row);
        }
    }
}

/// What an append did to the calls and responses, collected while it
/// inserts and written in the same transaction.
#[derive(Debug, Default)]
pub struct Touched {
    hours: BTreeSet<i64>,
    longest: i64,
    /// Where each session's producer calls lie.
    produced: HashMap<(Provider, String), (i64, i64)>,
    /// Sessions a log told about.
    logged: BTreeSet<(Provider, String)>,
    /// Sessions whose log reported their cost.
    costed: BTreeSet<(Provider, String)>,
    last_logged: Option<(Provider, String)>,
    /// The hour a response was last marked in.
    last_hour: Option<i64>,
}

impl Touched {
    /// A producer's call was inserted.
    pub fn call(&mut self, provider: Provider, session: Option<&str>, started_ms: i64, duration_ms: Option<i64>) {
        let (start, end) = self.span(started_ms, duration_ms);
        if let Some(session) = session {
            let span = self.produced.entry((provider, session.to_owned())).or_insert((start, end));
            *span = (span.0.min(start), span.1.max(end));
        }
    }

    /// A write of a response was inserted. Its hour is dirty; if its
    /// response was first written in an earlier hour, settling this one
    /// finds that and settles that hour too.
    pub fn response(&mut self, at_ms: i64) {
        // A commit's responses come in time order: runs of one hour.
        let hour = hour_of(at_ms);
        if self.last_hour != Some(hour) {
            self.last_hour = Some(hour);
            self.hours.insert(hour);
        }
    }

    /// A derived turn was inserted: its hours are settled again.
    pub fn derived(&mut self, started_ms: i64, ended_ms: i64) {
        self.span(started_ms, Some(ended_ms - started_ms));
    }

    /// A span of time was inserted: the hours it lies in are dirty, and a
    /// range looks back as far as the longest one. Its `[start, end)`.
    fn span(&mut self, started_ms: i64, duration_ms: Option<i64>) -> (i64, i64) {
        let (start, end) = interval(started_ms, duration_ms).unwrap_or((started_ms, started_ms));
        self.longest = self.longest.max(end - start);
        self.mark(start, end);
        (start, end)
    }

    /// A cost line was inserted: its hour changed for a reader that keeps
    /// past hours' costs (the aggregates hold none, so nothing is settled
    /// for it but the hour's own figures).
    pub fn cost_line(&mut self, at_ms: i64) {
        self.hours.insert(hour_of(at_ms));
    }

    /// A log reported `session`'s cost.
    pub fn costed(&mut self, provider: Provider, session: &str) {
        self.costed.insert((provider, session.to_owned()));
    }

    /// A log of `session` was read.
    pub fn logged(&mut self, provider: Provider, session: &str) {
        // Runs of one session's responses are the rule: no allocation for them.
        if self.last_logged.as_ref().is_some_and(|(p, s)| *p == provider && s == session) {
            return;
        }
        self.last_logged = Some((provider, session.to_owned()));
        self.logged.insert((provider, session.to_owned()));
    }

    fn mark(&mut self, start: i64, end: i64) {
        let mut hour = hour_of(start);
        let last = hour_of(end.max(start + 1) - 1);
        while hour <= last {
            self.hours.insert(hour);
            hour += HOUR_MS;
        }
    }

    /// Writes what changed for the aggregates; part of the append's transaction.
    pub fn write(mut self, tx: &Connection) -> rusqlite::Result<()> {
        if self.hours.is_empty() && self.logged.is_empty() && self.costed.is_empty() {
            return Ok(());
        }
        tx.prepare_cached("UPDATE longest_call SET duration_ms = MAX(duration_ms, ?1) WHERE id = 1")?
            .execute([self.longest])?;
        let mut span = tx.prepare_cached(
            "INSERT INTO session_span (provider, session_id, first_ms, end_ms) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (provider, session_id) DO UPDATE SET first_ms = MIN(first_ms, ?3), end_ms = MAX(end_ms, ?4)",
        )?;
        for ((provider, session), (first, end)) in &self.produced {
            span.execute(params![provider.as_str(), session, first, end])?;
        }
        // A session logged for the first time: its producer calls' own
        // counters stop standing in for it in every hour they lie in.
        let mut logged =
            tx.prepare_cached("INSERT OR IGNORE INTO logged_session (provider, session_id) VALUES (?1, ?2)")?;
        let mut spans =
            tx.prepare_cached("SELECT first_ms, end_ms FROM session_span WHERE provider = ?1 AND session_id = ?2")?;
        let mut costed =
            tx.prepare_cached("INSERT OR IGNORE INTO costed_session (provider, session_id) VALUES (?1, ?2)")?;
        // A session costed for the first time: its producer calls' costs
        // leave the aggregates of every hour they lie in.
        let mut first_time = Vec::new();
        for (provider, session) in std::mem::take(&mut self.costed) {
            if costed.execute(params![provider.as_str(), session])? == 1 {
                first_time.push((provider, session));
            }
        }
        for (provider, session) in std::mem::take(&mut self.logged) {
            if logged.execute(params![provider.as_str(), session])? == 1 {
                first_time.push((provider, session));
            }
        }
        for (provider, session) in first_time {
            let span: Option<(i64, i64)> = spans
                .query_row(params![provider.as_str(), session], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()?;
            if let Some((first, end)) = span {
                self.mark(first, end);
            }
        }
        let mut dirty = tx.prepare_cached("INSERT OR IGNORE INTO rollup_dirty (hour_ms) VALUES (?1)")?;
        for hour in &self.hours {
            dirty.execute([hour])?;
        }
        Ok(())
    }
}

/// How far before a range a call that runs into it can have started.
fn lookback(conn: &Connection, version: u32) -> rusqlite::Result<i64> {
    if version < ROLLUP_SCHEMA {
        return Ok(MAX_CALL_MS);
    }
    let longest: Option<i64> =
        conn.query_row("SELECT duration_ms FROM longest_call WHERE id = 1", [], |row| row.get(0)).optional()?;
    Ok(longest.unwrap_or(MAX_CALL_MS).clamp(0, MAX_CALL_MS))
}

/// Producer calls overlapping `range` (calls once ingested from logs are no
/// evidence of time: responses carry the tokens now), without hook turns
/// that lie inside a `beectl run` of their session and requests that lie in
/// a run or a hook turn (one call, not two: see [`fold_parts_into_calls`]),
/// and the record ids of calls that fail their checksum (left out: damaged).
pub fn load_calls(
    conn: &Connection,
    version: u32,
    range: Range,
    details: bool,
) -> rusqlite::Result<(Vec<CallRow>, Vec<String>)> {
    let lookback = lookback(conn, version)?;
    let crc = if version < CHECKSUM_SCHEMA { "NULL" } else { "crc" };
    let (logged, costed) = if version < RESPONSE_SCHEMA {
        ("0", "0")
    } else {
        (
            "EXISTS (SELECT 1 FROM logged_session l WHERE l.provider = c.provider AND l.session_id = c.session_id)",
            "EXISTS (SELECT 1 FROM costed_session k WHERE k.provider = c.provider AND k.session_id = c.session_id)",
        )
    };
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {}, {crc}, {logged}, {costed}
         FROM call c WHERE started_at_ms >= ?1 AND started_at_ms < ?2 AND source != ?3",
        CALL_COLUMNS.select(version)
    ))?;
    let mut rows = statement.query(params![
        range.since_ms.saturating_sub(lookback),
        range.until_ms,
        CallSource::Ingested.as_str()
    ])?;
    let (mut calls, mut damaged) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next()? {
        if !CALL_COLUMNS.verifies(row, 0)? {
            damaged.push(row.get_ref(0)?.as_str().unwrap_or_default().to_owned());
            continue;
        }
        // Borrowed, not allocated: a range may hold a million calls.
        let Some(provider) = Provider::from_name(row.get_ref(2)?.as_str()?) else { continue };
        let Some(source) = CallSource::from_name(row.get_ref(1)?.as_str()?) else { continue };
        let tokens = if details { Some(counters_at(row, 10)?).filter(|t| t.reported() > 0) } else { None };
        let call = CallRow {
            started_ms: row.get(4)?,
            duration_ms: row.get(5)?,
            provider,
            source,
            // The session's log reports its cost: the producer's is not
            // added again.
            cost_usd: if row.get(CALL_COLUMN_COUNT + 2)? { None } else { row.get(9)? },
            model: if details { row.get(7)? } else { None },
            session_id: row.get(21)?,
            tokens,
            // A timed request's tokens are always a response write of its
            // own: it stands in for no log.
            logged: source == CallSource::ApiRequest || row.get(CALL_COLUMN_COUNT + 1)?,
            folded: false,
        };
        if call.overlaps(range) {
            calls.push(call);
        }
    }
    fold_parts_into_calls(&mut calls);
    if version >= RESPONSE_SCHEMA {
        let derived = load_derived(conn, range, lookback, &mut damaged)?;
        calls.extend(derived);
    }
    Ok((calls, damaged))
}

/// Folds the calls that are parts of another call of theirs (see
/// [`CallRow::contains`]): dropped, but a request's reported cost is kept
/// (as a [`CallRow::folded`] part, where it started) when the call around
/// it reported none. A run is matched before a hook turn, so a request
/// inside both goes to the run. Each part is judged by its own call alone,
/// which every range holding the part holds too: hours fold alike.
fn fold_parts_into_calls(calls: &mut Vec<CallRow>) {
    let outer = Outer::of(calls);
    let parts = calls_as_parts(calls, |at| outer.around(calls, at));
    apply_parts(calls, parts);
}

/// For each call, whether it is a part of another (the one `around` names):
/// `Some(true)` when it stays for its cost alone, `Some(false)` when it
/// goes; `None` for a call of its own.
fn calls_as_parts(calls: &[CallRow], around: impl Fn(usize) -> Option<usize>) -> Vec<Option<bool>> {
    calls
        .iter()
        .enumerate()
        .map(|(at, call)| {
            let into = around(at)?;
            Some(call.source == CallSource::ApiRequest && call.cost_usd.is_some() && calls[into].cost_usd.is_none())
        })
        .collect()
}

/// Drops the parts [`calls_as_parts`] found and marks those kept for their cost.
fn apply_parts(calls: &mut Vec<CallRow>, parts: Vec<Option<bool>>) {
    for (call, part) in calls.iter_mut().zip(&parts) {
        call.folded = *part == Some(true);
    }
    let mut parts = parts.into_iter();
    calls.retain(|_| parts.next().flatten() != Some(false));
}

/// The calls other calls of their session can be parts of (runs and hook
/// turns with a known duration), per session and source, by start: each
/// part finds its call by two binary searches, not by trying every call of
/// its session (which took seconds over a ledger of a million records).
struct Outer<'a> {
    /// For each session, its runs and its hook turns: each as (start, end,
    /// index) in start order, and the largest end so far at each.
    spans: HashMap<(Provider, &'a str), [Spans; 2]>,
}

#[derive(Default)]
struct Spans {
    by_start: Vec<(i64, i64, usize)>,
    widest_end: Vec<i64>,
}

impl<'a> Outer<'a> {
    fn of(calls: &'a [CallRow]) -> Outer<'a> {
        let mut spans: HashMap<(Provider, &str), [Spans; 2]> = HashMap::new();
        for (at, call) in calls.iter().enumerate() {
            let kind = match call.source {
                CallSource::Run => 0,
                CallSource::HookTurn => 1,
                _ => continue,
            };
            if let (Some(session), Some((start, end))) = (call.session_id.as_deref(), call.interval()) {
                spans.entry((call.provider, session)).or_default()[kind].by_start.push((start, end, at));
            }
        }
        for kinds in spans.values_mut() {
            for kind in kinds {
                // Ties in start stay in the order the calls came.
                kind.by_start.sort_unstable_by_key(|&(start, _, at)| (start, at));
                kind.widest_end = kind
                    .by_start
                    .iter()
                    .scan(i64::MIN, |widest, &(_, end, _)| {
                        *widest = (*widest).max(end);
                        Some(*widest)
                    })
                    .collect();
            }
        }
        Outer { spans }
    }

    /// The call `calls[at]` is a part of ([`CallRow::contains`]): a run
    /// before a hook turn, and of those the first to start (the first
    /// stored, among ties). A call is never among its own candidates: a
    /// hook turn is looked for among runs only, and a request is neither.
    fn around(&self, calls: &[CallRow], at: usize) -> Option<usize> {
        let inner = &calls[at];
        let kinds = self.spans.get(&(inner.provider, inner.session_id.as_deref()?))?;
        let (start, end) = inner.interval()?;
        let candidates: &[Spans] = match inner.source {
            CallSource::HookTurn => &kinds[..1],
            CallSource::ApiRequest => &kinds[..],
            _ => return None,
        };
        candidates.iter().find_map(|spans| {
            // Of the spans starting no later, the first whose end reaches
            // `end`: where the largest end so far first does.
            let started = spans.by_start.partition_point(|&(span_start, _, _)| span_start <= start);
            let first = spans.widest_end[..started].partition_point(|&widest| widest < end);
            spans.by_start[first..started].iter().find(|&&(_, span_end, _)| span_end >= end).map(|&(_, _, span)| span)
        })
    }
}

/// Derived turns overlapping `range` (each start at its longest end) that
/// no producer call of their session overlaps: a measured turn is never
/// counted twice. (A producer call stored later marks the hours of the
/// derived turns it overlaps dirty, so the aggregates follow.)
fn load_derived(
    conn: &Connection,
    range: Range,
    lookback: i64,
    damaged: &mut Vec<String>,
) -> rusqlite::Result<Vec<CallRow>> {
    let columns = crate::ledger::stored::schema::DERIVED_TURN_COLUMNS;
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {}, crc FROM derived_turn WHERE started_at_ms >= ?1 AND started_at_ms < ?2",
        columns.base
    ))?;
    let mut rows = statement.query(params![range.since_ms.saturating_sub(lookback), range.until_ms])?;
    let mut longest: BTreeMap<(Provider, String, i64), i64> = BTreeMap::new();
    while let Some(row) = rows.next()? {
        if !columns.verifies(row, 0)? {
            damaged.push(format!("derived_turn:{}", row.get::<_, i64>(2)?));
            continue;
        }
        let Some(provider) = Provider::from_name(row.get_ref(0)?.as_str()?) else { continue };
        let end: i64 = row.get(3)?;
        let entry = longest.entry((provider, row.get(1)?, row.get(2)?)).or_insert(end);
        *entry = (*entry).max(end);
    }
    // Whether a producer measured the turn: any producer call of its session
    // overlapping it, wherever that call lies (not only within `range`, so
    // every range and every hour agree).
    let mut overlapping = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM call
           WHERE provider = ?1 AND session_id = ?2 AND source IN ('run', 'hook_turn', 'api_request')
             AND started_at_ms >= ?3 AND started_at_ms < ?4
             AND started_at_ms + MIN(COALESCE(duration_ms, 0), ?5) > ?6)",
    )?;
    let mut turns = Vec::new();
    for ((provider, session, start), end) in longest {
        let call = CallRow {
            started_ms: start,
            duration_ms: Some(end - start),
            provider,
            source: CallSource::Derived,
            model: None,
            session_id: None,
            cost_usd: None,
            tokens: None,
            logged: true,
            folded: false,
        };
        if !call.overlaps(range) {
            continue;
        }
        let measured: bool = overlapping.query_row(
            params![provider.as_str(), session, start.saturating_sub(lookback), end.max(start + 1), MAX_CALL_MS, start],
            |row| row.get(0),
        )?;
        if !measured {
            turns.push(CallRow { session_id: Some(session), ..call });
        }
    }
    Ok(turns)
}

/// Recomputes every dirty hour from the records; returns how many.
pub fn settle(conn: &Connection) -> rusqlite::Result<u64> {
    let mut settled = 0;
    // A round can find earlier hours to settle again (late writes of their
    // responses); they are settled in the next round. Rounds are bounded:
    // hours left dirty are read from the records, never wrong.
    for _ in 0..8 {
        let (hours, more) = settle_round(conn)?;
        settled += hours;
        if !more {
            break;
        }
    }
    Ok(settled)
}

/// Settles the hours dirty now; whether it marked more.
fn settle_round(conn: &Connection) -> rusqlite::Result<(u64, bool)> {
    let mut more = false;
    let dirty = dirty_days(conn)?;
    for chunk in &dirty {
        let tx = conn.unchecked_transaction()?;
        more |= settle_chunk(&tx, chunk, None)?;
        tx.commit()?;
    }
    Ok((dirty.iter().map(|chunk| chunk.len() as u64).sum(), more))
}

/// The store's responses as one ingestion pass merged them while
/// committing, in the order of their first writes, with each hour's parts
/// already summed from them: the thread that merged them sums them while
/// the commit goes on, so settling adds only the hours' calls.
#[derive(Debug, Default)]
pub struct HeldResponses {
    responses: Vec<Response>,
    /// By the hour's start; each taken when its hour is settled.
    parts: BTreeMap<i64, Parts>,
}

impl HeldResponses {
    pub fn new(responses: Vec<Response>) -> HeldResponses {
        let parts = responses
            .chunk_by(|a, b| hour_of(a.at_ms) == hour_of(b.at_ms))
            .map(|hour| {
                let hour_ms = hour_of(hour[0].at_ms);
                (hour_ms, response_parts(hour, Range::hour(hour_ms)))
            })
            .collect();
        HeldResponses { responses, parts }
    }
}

/// The parts of the `responses` first written in `hour`, their calls not yet added.
fn response_parts(responses: &[Response], hour: Range) -> Parts {
    let mut parts = Parts::new();
    parts_of(responses.iter(), std::iter::empty(), hour, &|_, _| hour.since_ms, &mut parts);
    parts
}

/// Settles every dirty hour from `held`, instead of reading the responses
/// back: only when the store holds exactly the `written` response writes
/// that pass inserted (it began empty and nothing else wrote since), checked
/// in the same transaction. Otherwise settles from the store.
pub fn settle_held(conn: &Connection, held: &mut HeldResponses, written: u64) -> rusqlite::Result<u64> {
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    let rows: i64 = tx.query_row("SELECT COUNT(*) FROM response_write", [], |row| row.get(0))?;
    if u64::try_from(rows).ok() != Some(written) {
        drop(tx);
        tracing::debug!(rows, written, "the stored responses are not the pass's alone; settling from the store");
        return settle(conn);
    }
    let dirty = dirty_days(&tx)?;
    for chunk in &dirty {
        settle_chunk(&tx, chunk, Some(&mut *held))?;
    }
    tx.commit()?;
    Ok(dirty.iter().map(|chunk| chunk.len() as u64).sum())
}

/// Dirty hours, contiguous ones a day at a time: one read of the records
/// per day, memory bounded by a day's calls.
fn dirty_days(conn: &Connection) -> rusqlite::Result<Vec<Vec<i64>>> {
    let dirty: Vec<i64> = conn
        .prepare("SELECT hour_ms FROM rollup_dirty ORDER BY hour_ms")?
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut chunks: Vec<Vec<i64>> = Vec::new();
    for hour in dirty {
        match chunks.last_mut() {
            Some(chunk) if chunk.len() < 24 && chunk.last().is_some_and(|last| last + HOUR_MS == hour) => {
                chunk.push(hour)
            }
            _ => chunks.push(vec![hour]),
        }
    }
    Ok(chunks)
}

/// Settles one run of contiguous hours, its responses from `held` when
/// given (every response of the store), else from the store; whether it
/// marked earlier hours to settle again.
fn settle_chunk(tx: &Connection, chunk: &[i64], held: Option<&mut HeldResponses>) -> rusqlite::Result<bool> {
    let (Some(&first), Some(&last)) = (chunk.first(), chunk.last()) else { return Ok(false) };
    let span = Range { since_ms: first, until_ms: last + HOUR_MS };
    let (calls, damaged_calls) = load_calls(tx, RESPONSE_SCHEMA, span, true)?;
    let (held, mut summed) = match held {
        Some(HeldResponses { responses, parts }) => (Some(&responses[..]), Some(parts)),
        None => (None, None),
    };
    // Either way in the order of their first writes, which the hours slice.
    let (responses, damaged_responses, earlier) = match held {
        Some(held) => (std::borrow::Cow::Borrowed(within(held, span)), Vec::new(), Vec::new()),
        None => {
            let (loaded, damaged, earlier) = responses::load_with_earlier(tx, PACK_SCHEMA, span)?;
            (std::borrow::Cow::Owned(loaded), damaged, earlier)
        }
    };
    // Late writes of responses first written before this chunk: those
    // responses live in earlier hours, which are settled again.
    let more = !earlier.is_empty();
    let mut again = tx.prepare_cached("INSERT OR IGNORE INTO rollup_dirty (hour_ms) VALUES (?1)")?;
    for at in earlier {
        again.execute([hour_of(at)])?;
    }
    drop(again);
    // Named once, so every view of the ledger can say `corrupt`.
    for (table, damaged) in [("call", damaged_calls), ("response", damaged_responses)] {
        for record in damaged {
            tracing::warn!(table, record = %record, "a ledger record fails its checksum; left out of the aggregates");
            tx.prepare_cached("INSERT OR IGNORE INTO damaged_record (tbl, key, found_ms) VALUES (?1, ?2, ?3)")?
                .execute(params![table, record, bee_proto::time::now_unix_ms()])?;
        }
    }
    for &hour in chunk {
        let range = Range::hour(hour);
        let mine: Vec<CallRow> = calls.iter().filter(|c| c.overlaps(range)).cloned().collect();
        let parts = summed.as_mut().and_then(|summed| summed.remove(&hour));
        write_hour(tx, range, &mine, within(&responses, range), parts)?;
    }
    Ok(more)
}

/// The responses first written in `range`, of `responses` in the order of
/// their first writes.
fn within(responses: &[Response], range: Range) -> &[Response] {
    let from = responses.partition_point(|r| r.at_ms < range.since_ms);
    let to = responses.partition_point(|r| r.at_ms < range.until_ms);
    &responses[from..to.max(from)]
}

/// Writes the aggregates of `hour`: its `calls`, and its `responses`, whose
/// parts are `summed` already when given.
fn write_hour(
    tx: &Connection,
    hour: Range,
    calls: &[CallRow],
    responses: &[Response],
    summed: Option<Parts>,
) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM rollup_time WHERE hour_ms = ?1")?.execute([hour.since_ms])?;
    tx.prepare_cached("DELETE FROM rollup_parts WHERE hour_ms = ?1")?.execute([hour.since_ms])?;
    let summary = Summary::of(calls, responses, hour, None, false);
    let mut insert = tx.prepare_cached(
        "INSERT INTO rollup_time (hour_ms, provider, calls, without_duration, agent_ms, used_ms, cost_usd, cost_calls)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    // Rows by provider ('' for all of them); derived turns under `derived`
    // and `derived:<provider>`, never mixed with measured calls.
    let mut rows: Vec<(String, &Tally)> = Vec::new();
    if calls.iter().any(|c| c.source != CallSource::Derived) {
        rows.push((String::new(), &summary.all));
    }
    if calls.iter().any(|c| c.source == CallSource::Derived) {
        rows.push((DERIVED.to_owned(), &summary.derived_all));
    }
    rows.extend(summary.providers.iter().map(|(p, t)| (p.as_str().to_owned(), t)));
    rows.extend(summary.derived_providers.iter().map(|(p, t)| (format!("{DERIVED}:{}", p.as_str()), t)));
    for (provider, tally) in rows {
        insert.execute(params![
            hour.since_ms,
            provider,
            sql_integer(tally.calls),
            sql_integer(tally.without_duration),
            sql_integer(tally.agent_ms),
            sql_integer(tally.used_ms),
            tally.cost_usd,
            sql_integer(tally.cost_calls)
        ])?;
    }
    let mut parts = summed.unwrap_or_else(|| response_parts(responses, hour));
    parts_of(std::iter::empty(), calls.iter(), hour, &|_, _| hour.since_ms, &mut parts);
    if !parts.is_empty() {
        let stored = parts.iter().map(|(key, figures)| part_pack::StoredPart {
            provider: key.provider,
            session: key.session.as_deref(),
            model: key.model.as_deref(),
            tier: key.tier,
            responses: figures.responses,
            tokens: figures.tokens.clone(),
            partial_parts: figures.partial_parts,
            pending_responses: figures.pending_responses,
            producer_calls: figures.producer_calls,
            copied_responses: figures.copied_responses,
            own_figure_steps: figures.own_figure_steps,
            own_figure_unknown: figures.own_figure_unknown,
            first_ms: figures.first_ms,
            last_ms: figures.last_ms,
        });
        // Bee's own bounds keep every session and model packable.
        let body = part_pack::encode(stored).map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))?;
        tx.prepare_cached("INSERT INTO rollup_parts (hour_ms, body) VALUES (?1, ?2)")?
            .execute(params![hour.since_ms, body])?;
    }
    tx.prepare_cached("DELETE FROM rollup_dirty WHERE hour_ms = ?1")?.execute([hour.since_ms])?;
    Ok(())
}

/// The summary of `range`: clean whole hours from the aggregates, the rest
/// (the range's partial first and last hours, dirty hours, hours a bucket
/// boundary cuts, or everything on a store from before the aggregates)
/// from the records.
pub fn summarize(conn: &Connection, version: u32, range: Range, by: Option<Bucket<'_>>) -> rusqlite::Result<Summary> {
    let first_full = hour_of(range.since_ms.saturating_add(HOUR_MS - 1));
    let last_full = hour_of(range.until_ms);
    // Aggregates from before responses counted calls, not responses; those
    // from before parts knew no model per session, and parts before their
    // packs, or before they kept copies, agents' costs and times, are read
    // from the records.
    if version < RESPONSE_SCHEMA || (by.is_some() && version < AGENT_COST_SCHEMA) || first_full >= last_full {
        return from_records(conn, version, range, by, true);
    }
    let full = Range { since_ms: first_full, until_ms: last_full };
    let dirty: Vec<i64> = conn
        .prepare_cached("SELECT hour_ms FROM rollup_dirty WHERE hour_ms >= ?1 AND hour_ms < ?2 ORDER BY hour_ms")?
        .query_map(params![full.since_ms, full.until_ms], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let (mut summary, cut) = from_aggregates(conn, full, by)?;
    // Ranges read from the records, adjacent ones merged: the range's start
    // (even when empty: calls that ran into the range are counted there),
    // each dirty hour, the range's end.
    let mut raw: Vec<Range> = vec![Range { since_ms: range.since_ms, until_ms: first_full }];
    for hour in dirty.into_iter().chain(std::iter::once(last_full)) {
        let until = if hour == last_full { range.until_ms } else { hour + HOUR_MS };
        match raw.last_mut() {
            Some(last) if last.until_ms == hour => last.until_ms = until,
            _ => raw.push(Range { since_ms: hour, until_ms: until }),
        }
    }
    for part in raw {
        summary.add(from_records(conn, version, part, by, part.since_ms == range.since_ms)?);
    }
    // Clean hours a bucket boundary cuts (a day that starts on the half
    // hour): their time figures came from the aggregates, their usage
    // comes from the records.
    if let Some(by) = by {
        for hour in cut {
            let hour = Range::hour(hour);
            let (calls, _) = load_calls(conn, version, hour, true)?;
            let (responses, _) = responses::load_any(conn, version, hour)?;
            parts_of(responses.iter(), calls.iter(), hour, by, &mut summary.parts);
        }
    }
    if version >= CHECKSUM_SCHEMA {
        let found: i64 = conn.query_row("SELECT COUNT(*) FROM damaged_record", [], |row| row.get(0))?;
        summary.damaged_records = summary.damaged_records.max(u64::try_from(found).unwrap_or(0));
    }
    Ok(summary)
}

fn from_records(
    conn: &Connection,
    version: u32,
    range: Range,
    by: Option<Bucket<'_>>,
    count_earlier: bool,
) -> rusqlite::Result<Summary> {
    let (calls, damaged) = load_calls(conn, version, range, by.is_some())?;
    let (responses, damaged_responses) =
        if by.is_some() { responses::load_any(conn, version, range)? } else { (Vec::new(), Vec::new()) };
    let mut summary = Summary::of(&calls, &responses, range, by, count_earlier);
    summary.damaged_records = (damaged.len() + damaged_responses.len()) as u64;
    Ok(summary)
}

/// A [`PartKey`] with its session and model by their numbers in a
/// [`NameOrder`].
type NumberedKey = (i64, Provider, u32, u32, u8);

/// The names (sessions, models) of a range's packs, numbered as they are
/// met, then by the order of their text.
#[derive(Default)]
struct NameOrder<'a> {
    numbers: crate::ledger::FastMap<&'a str, u32>,
    /// Each number's name (0: none).
    names: Vec<Option<&'a str>>,
}

/// The names met in one pack, by where the pack spells them: a pack
/// spells each name once, so a place is a name, found without hashing
/// its text.
type PackNames = crate::ledger::FastMap<usize, u32>;

impl<'a> NameOrder<'a> {
    /// `name`'s number as met (0 for none), `pack` the names its pack
    /// spelled so far.
    fn number(&mut self, name: Option<&'a str>, pack: &mut PackNames) -> u32 {
        let Some(name) = name else { return 0 };
        if let Some(&number) = pack.get(&(name.as_ptr() as usize)) {
            return number;
        }
        if self.names.is_empty() {
            self.names.push(None);
        }
        let next = self.names.len() as u32;
        let number = *self.numbers.entry(name).or_insert(next);
        if number == next {
            self.names.push(Some(name));
        }
        pack.insert(name.as_ptr() as usize, number);
        number
    }

    /// Each number's place in the order of the names' text (none first).
    fn ranks(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.names.len().max(1) as u32).collect();
        order.sort_unstable_by_key(|&number| self.names.get(number as usize).copied().flatten());
        let mut ranks = vec![0; order.len()];
        for (rank, &number) in order.iter().enumerate() {
            ranks[number as usize] = rank as u32;
        }
        ranks
    }
}

/// The clean hours of `full` from the aggregates, and the clean hours whose
/// usage a bucket boundary cuts (left out here).
fn from_aggregates(conn: &Connection, full: Range, by: Option<Bucket<'_>>) -> rusqlite::Result<(Summary, Vec<i64>)> {
    let mut summary = Summary::default();
    let mut statement = conn.prepare_cached(
        "SELECT provider, SUM(calls), SUM(without_duration), SUM(agent_ms), SUM(used_ms), SUM(cost_usd), SUM(cost_calls)
         FROM rollup_time WHERE hour_ms >= ?1 AND hour_ms < ?2
           AND hour_ms NOT IN (SELECT hour_ms FROM rollup_dirty WHERE hour_ms >= ?1 AND hour_ms < ?2)
         GROUP BY provider",
    )?;
    let mut rows = statement.query(params![full.since_ms, full.until_ms])?;
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    while let Some(row) = rows.next()? {
        let tally = Tally {
            calls: count(row.get(1)?),
            without_duration: count(row.get(2)?),
            agent_ms: count(row.get(3)?),
            used_ms: count(row.get(4)?),
            cost_usd: row.get(5)?,
            cost_calls: count(row.get(6)?),
        };
        match row.get_ref(0)?.as_str()? {
            "" => summary.all = tally,
            DERIVED => summary.derived_all = tally,
            name => {
                if let Some(provider) = name.strip_prefix("derived:").and_then(Provider::from_name) {
                    summary.derived_providers.insert(provider, tally);
                } else if let Some(provider) = Provider::from_name(name) {
                    summary.providers.insert(provider, tally);
                }
            }
        }
    }
    let Some(bucket) = by else { return Ok((summary, Vec::new())) };
    let mut statement = conn.prepare_cached(
        "SELECT hour_ms, body FROM rollup_parts WHERE hour_ms >= ?1 AND hour_ms < ?2
           AND hour_ms NOT IN (SELECT hour_ms FROM rollup_dirty WHERE hour_ms >= ?1 AND hour_ms < ?2)
         ORDER BY hour_ms",
    )?;
    // The packs' bytes, copied out of the statement, so their parts can
    // borrow their names: a name is copied once per key of the range, not
    // once per hour it appears in.
    let mut packs: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut rows = statement.query(params![full.since_ms, full.until_ms])?;
    while let Some(row) = rows.next()? {
        packs.push((row.get(0)?, row.get_ref(1)?.as_blob()?.to_vec()));
    }
    // An hour a boundary cuts for any provider is read whole from the
    // records, as is an hour whose pack does not decode.
    let mut cut = BTreeSet::new();
    let mut decoded: Vec<(i64, Vec<part_pack::StoredPart<'_>>)> = Vec::with_capacity(packs.len());
    for (hour, body) in &packs {
        match part_pack::decode(body) {
            Ok(parts) => decoded.push((*hour, parts)),
            Err(err) => {
                tracing::warn!(hour_ms = hour, error = %err, "an hour's usage parts do not decode; read from the records");
                cut.insert(*hour);
            }
        }
    }
    // Each part's key (its bucket, then its pack's own key, its names by
    // number) and where it is: small, so sorting moves and compares little.
    let mut names = NameOrder::default();
    let mut keyed: Vec<(NumberedKey, u32, u32)> = Vec::new();
    let mut pack_names = PackNames::default();
    for (at, (hour, parts)) in decoded.iter().enumerate() {
        let before = keyed.len();
        pack_names.clear();
        // A pack holds its parts by provider: each provider's bucket of the
        // hour is found once.
        let mut last: Option<(Provider, Option<i64>)> = None;
        for (index, part) in parts.iter().enumerate() {
            let first = match last {
                Some((of, first)) if of == part.provider => first,
                _ => {
                    let first = bucket(part.provider, *hour);
                    let first = (first == bucket(part.provider, hour + HOUR_MS - 1)).then_some(first);
                    last = Some((part.provider, first));
                    first
                }
            };
            let Some(first) = first else {
                cut.insert(*hour);
                keyed.truncate(before);
                break;
            };
            let session = names.number(part.session, &mut pack_names);
            let model = names.number(part.model, &mut pack_names);
            keyed.push(((first, part.provider, session, model, part.tier), at as u32, index as u32));
        }
    }
    let ranks = names.ranks();
    // Each key as two integers that sort as it does (its names by their
    // ranks), and where its part is.
    let mut sorted: Vec<(u128, u64, u32, u32)> = keyed
        .into_iter()
        .map(|((bucket, provider, session, model, tier), at, index)| {
            // The bucket's sign bit flipped: earlier buckets, negative ones too, sort first.
            let bucket = u128::from((bucket as u64) ^ (1 << 63));
            let session = ranks[session as usize];
            let high = (bucket << 64) | (u128::from(provider as u8) << 32) | u128::from(session);
            let low = (u64::from(ranks[model as usize]) << 8) | u64::from(tier);
            (high, low, at, index)
        })
        .collect();
    sorted.sort_unstable();
    // Summed key by key and built into the map at once: a map built from
    // sorted keys compares each key about once. The sums are of integers,
    // so the order parts of one key meet in is the sums' own.
    let mut summed: Vec<(PartKey, PartFigures)> = Vec::new();
    let mut previous = None;
    for (high, low, at, index) in sorted {
        let part = &decoded[at as usize].1[index as usize];
        let figures = PartFigures::of(part);
        match summed.last_mut() {
            Some((_, sum)) if previous == Some((high, low)) => sum.add(&figures),
            _ => {
                let owned = PartKey {
                    bucket: ((high >> 64) as u64 ^ (1 << 63)) as i64,
                    provider: part.provider,
                    session: part.session.map(str::to_owned),
                    model: part.model.map(str::to_owned),
                    tier: part.tier,
                };
                summed.push((owned, figures));
            }
        }
        previous = Some((high, low));
    }
    summary.parts = summed.into_iter().collect();
    Ok((summary, cut.into_iter().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::stored::evidence::Evidence;
    use crate::ledger::stored::responses::ResponseWrite;
    use crate::ledger::stored::store::{self, Ledger};
    use bee_proto::ledger::{CallRecord, LedgerRecord};
    use bee_proto::time::format_unix_ms;

    use crate::ledger::Random;

    /// Folding as it was written first: each part tries every run, then
    /// every hook turn, of its session in start order.
    fn fold_by_trying_each(calls: &mut Vec<CallRow>) {
        let mut spans: Vec<usize> = (0..calls.len())
            .filter(|&span| matches!(calls[span].source, CallSource::Run | CallSource::HookTurn))
            .collect();
        spans.sort_by_key(|&span| (calls[span].source != CallSource::Run, calls[span].started_ms));
        let parts = calls_as_parts(calls, |at| {
            spans.iter().copied().find(|&span| span != at && calls[span].contains(&calls[at]))
        });
        apply_parts(calls, parts);
    }

    /// Calls crowded into a few sessions and milliseconds (equal starts,
    /// nested and overlapping spans, unknown durations): the binary searches
    /// fold exactly as trying every call does.
    #[test]
    fn parts_fold_into_the_same_calls_as_trying_each() {
        let mut random = Random(0x5eed_f01d);
        let sources = [CallSource::Run, CallSource::HookTurn, CallSource::ApiRequest, CallSource::Derived];
        let sessions = [None, Some("s1"), Some("s2"), Some("s3")];
        let (mut dropped, mut kept_for_cost) = (0, 0);
        for _ in 0..3_000 {
            let n = random.below(24) as usize;
            let calls: Vec<CallRow> = (0..n)
                .map(|_| CallRow {
                    started_ms: random.below(40) as i64,
                    duration_ms: (random.below(5) > 0).then(|| random.below(40) as i64),
                    provider: if random.below(4) == 0 { Provider::Codex } else { Provider::Claude },
                    source: sources[random.below(4) as usize],
                    model: None,
                    session_id: sessions[random.below(4) as usize].map(str::to_owned),
                    cost_usd: (random.below(2) == 0).then_some(0.25),
                    tokens: None,
                    logged: false,
                    folded: false,
                })
                .collect();
            let (mut fast, mut each) = (calls.clone(), calls);
            fold_parts_into_calls(&mut fast);
            fold_by_trying_each(&mut each);
            assert_eq!(fast, each);
            dropped += n - each.len();
            kept_for_cost += each.iter().filter(|call| call.folded).count();
        }
        assert!(dropped > 500 && kept_for_cost > 100, "the cases fold parts: {dropped} dropped, {kept_for_cost} kept");
    }

    /// A producer's call, or a turn derived from a log's timestamps.
    fn call(random: &mut Random, base: i64) -> Evidence {
        let at = base + random.below(72 * HOUR_MS as u64) as i64;
        let duration = match random.below(10) {
            0 => None,
            1 => Some(random.below(2 * MAX_CALL_MS as u64)), // beyond the longest call followed
            2 => Some(random.below(30 * HOUR_MS as u64)),
            _ => Some(random.below(20 * 60_000)),
        };
        let source =
            [CallSource::Run, CallSource::HookTurn, CallSource::ApiRequest, CallSource::Derived, CallSource::Derived]
                [random.below(5) as usize];
        if source == CallSource::Derived {
            return Evidence::Turn(crate::ledger::stored::evidence::DerivedTurn {
                provider: if random.below(3) == 0 { Provider::Codex } else { Provider::Claude },
                session_id: format!("session-{}", random.below(12)),
                started_at_ms: at,
                ended_at_ms: at + duration.unwrap_or(0).min(bee_proto::ledger::bounds::MAX_CALL_DURATION_MS) as i64,
            });
        }
        let record = Box::new(CallRecord {
            record_id: uuid::Uuid::from_u128(
                u128::from(random.below(u64::MAX)) << 64 | u128::from(random.below(u64::MAX)),
            ),
            source,
            provider: if random.below(3) == 0 { Provider::Codex } else { Provider::Claude },
            started_at_utc: format_unix_ms(at),
            duration_ms: duration,
            success: Some(true),
            model: (random.below(5) != 0).then(|| format!("model-{}", random.below(3))),
            project_path: None,
            cost_usd: (random.below(3) == 0).then(|| random.below(100) as f64 / 4.0),
            tokens: (random.below(4) != 0).then(|| Counters {
                input_tokens: Some(random.below(10_000)),
                output_tokens: (random.below(2) == 0).then(|| random.below(900)),
                ..Counters::default()
            }),
            quota_snapshots: Vec::new(),
            model_invocations: None,
            context_window: None,
            context_tokens: None,
            compactions: None,
            session_id: (random.below(6) != 0).then(|| format!("session-{}", random.below(12))),
            outcome: None,
        });
        // A timed request is beed's own reading (Claude Code's telemetry):
        // its tokens are a response write of their own.
        if source == CallSource::ApiRequest {
            return Evidence::TimedRequest(Box::new(CallRecord { tokens: None, ..*record }));
        }
        Evidence::Record(LedgerRecord::Call(record))
    }

    /// A write of one of a few hundred responses: the same response is
    /// written again (streaming, fuller or final), copied into other
    /// sessions, possibly hours later.
    fn response(random: &mut Random, base: i64) -> Evidence {
        let id = random.below(300);
        let at = base + (id as i64) * 15 * 60_000 + random.below(3) as i64 * random.below(6 * HOUR_MS as u64) as i64;
        // OpenCode writes its own cost of each response (or leaves it out).
        let provider = [Provider::Codex, Provider::Claude, Provider::Claude, Provider::OpenCode][id as usize % 4];
        // Claude's transcripts name message and request, its telemetry the
        // request alone: the same response either way.
        let key = match (provider, random.below(3)) {
            (Provider::Claude, 0) => format!("req_{id}"),
            (Provider::Claude, 1) => format!("msg_{id}\u{1f}req_{id}"),
            _ => format!("msg_{id}"),
        };
        Evidence::Response(ResponseWrite {
            provider,
            key,
            session_id: Some(format!("session-{}", random.below(12)).into()),
            at_ms: at,
            model: (random.below(5) != 0).then(|| format!("model-{}", id % 3).into()),
            tokens: Counters {
                input_tokens: Some(id * 10),
                cache_creation_input_tokens: (random.below(4) != 0).then_some(id),
                cache_read_input_tokens: Some(7),
                output_tokens: Some(random.below(900)),
                ..Counters::default()
            },
            context_tokens: None,
            context_window: None,
            is_final: random.below(3) != 0,
            own_figure: [None, Some(0.012_5), Some(1.0 / 3.0)][random.below(3) as usize]
                .filter(|_| provider == Provider::OpenCode),
            // Sessions are drawn at random: a response's writes name several,
            // some of them copies.
            copied: random.below(3) == 0,
        })
    }

    /// A ten-minute `beectl run` of Claude in `session`, with its own counters.
    fn run_call(at: i64, id: u128, session: &str) -> LedgerRecord {
        LedgerRecord::Call(Box::new(CallRecord {
            record_id: uuid::Uuid::from_u128(id),
            source: CallSource::Run,
            provider: Provider::Claude,
            started_at_utc: format_unix_ms(at),
            duration_ms: Some(600_000),
            success: Some(true),
            model: None,
            project_path: None,
            cost_usd: None,
            tokens: Some(Counters { input_tokens: Some(1_000), output_tokens: Some(10), ..Counters::default() }),
            quota_snapshots: Vec::new(),
            model_invocations: None,
            context_window: None,
            context_tokens: None,
            compactions: None,
            session_id: Some(session.to_owned()),
            outcome: Some(bee_proto::ledger::CallOutcome::Completed),
        }))
    }

    /// The figures computed from the records alone, for comparison.
    /// A first pass over an empty store settles from the writes it holds,
    /// never reading them back: what it leaves equals a computation from the
    /// store's records, for every grouping, with one response's writes
    /// spread over an hour's edge, apart in its file, and copied days later
    /// into another session's file; and with producer runs in those hours,
    /// one of a logged session, one of a session that left no log (whose
    /// counters stand in), added to the parts summed ahead of settling.
    #[test]
    fn a_first_pass_settles_as_the_records_say() {
        let home = tempfile::tempdir().unwrap();
        let projects = home.path().join("projects");
        std::fs::create_dir_all(&projects).unwrap();
        let line = |session: &str, id: u64, at: &str, output: u64, stop: bool| {
            serde_json::json!({"type": "assistant", "sessionId": session, "timestamp": at, "requestId": format!("req_{id}"),
                "message": {"id": format!("msg_{id}"), "model": if id.is_multiple_of(2) { "claude-opus-4-1" } else { "claude-sonnet-4-5" },
                "stop_reason": if stop { serde_json::json!("end_turn") } else { serde_json::Value::Null },
                "usage": {"input_tokens": id, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3, "output_tokens": output}}})
            .to_string()
                + "\n"
        };
        let (s1, s2) = ("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222");
        let first = [
            line(s1, 1, "2026-11-02T10:59:59.900Z", 4, false),
            line(s1, 2, "2026-11-02T11:00:00.000Z", 7, true),
            line(s1, 1, "2026-11-02T11:00:00.100Z", 40, true),
            line(s1, 3, "2026-11-02T23:59:59.999Z", 9, true),
            line(s1, 4, "2026-11-03T00:00:00.500Z", 1, true),
        ];
        let resumed =
            [line(s2, 1, "2026-11-05T08:00:00.000Z", 40, true), line(s2, 5, "2026-11-05T08:00:01.000Z", 6, true)];
        std::fs::write(projects.join(format!("{s1}.jsonl")), first.concat()).unwrap();
        std::fs::write(projects.join(format!("{s2}.jsonl")), resumed.concat()).unwrap();
        let store = home.path().join("ledger");
        let mut opened = Ledger::open(&store).unwrap();
        let at = |text: &str| bee_proto::time::parse_rfc3339_ms(text).unwrap();
        opened
            .append(&[
                run_call(at("2026-11-02T10:30:00Z"), 1, s1),
                run_call(at("2026-11-02T11:05:00Z"), 2, "s-unlogged"),
            ])
            .unwrap();
        let ledger = std::sync::Mutex::new(opened);
        let roots = crate::ledger::intake::ingest::Roots::of(Provider::Claude, vec![projects]);
        crate::ledger::intake::ingest::pass(&ledger, &roots, std::time::Duration::ZERO, 2, &|_, _| {}).unwrap();
        let range = Range { since_ms: 0, until_ms: i64::MAX / 2 };
        for by in 0..BUCKETINGS {
            let settled = read_usage(&store, range, by);
            assert!(same(&settled, &from_records_only(&store, range, by)), "{by:?}: {settled:#?}");
            let responses: u64 = settled.parts.values().map(|row| row.responses).sum();
            let output: u64 = settled.parts.values().map(|row| row.tokens.output_tokens.unwrap_or(0)).sum();
            // The unlogged session's run adds its own 10.
            assert_eq!((responses, output), (5, 40 + 7 + 9 + 1 + 6 + 10), "{by:?}");
            let standing_in: u64 = settled.parts.values().map(|row| row.producer_calls).sum();
            assert_eq!(standing_in, 1, "{by:?}: only the unlogged session's run stands in");
        }
        let conn = rusqlite::Connection::open(store.join(store::DB_FILE)).unwrap();
        let dirty: i64 = conn.query_row("SELECT COUNT(*) FROM rollup_dirty", [], |r| r.get(0)).unwrap();
        assert_eq!(dirty, 0, "every hour settled");
    }

    /// Writes held by a pass stand in for the store only while the store
    /// holds exactly the rows that pass wrote: any other row, and the
    /// hours are read from the store.
    #[test]
    fn held_writes_stand_in_only_for_a_store_that_is_the_pass_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(dir.path()).unwrap();
        let write = ResponseWrite {
            provider: Provider::Claude,
            key: "msg_1\u{1f}req_1".to_owned(),
            session_id: Some("s".into()),
            at_ms: bee_proto::time::parse_rfc3339_ms("2026-11-02T10:00:00.000Z").unwrap(),
            model: Some("claude-opus-4-1".into()),
            tokens: Counters { output_tokens: Some(5), ..Counters::default() },
            context_tokens: None,
            context_window: None,
            is_final: true,
            own_figure: None,
            copied: false,
        };
        ledger.append_at(&[Evidence::Response(write)], &[]).unwrap();
        let conn = rusqlite::Connection::open(dir.path().join(store::DB_FILE)).unwrap();
        conn.execute("INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT hour_ms FROM rollup_parts", []).unwrap();
        let range = Range { since_ms: 0, until_ms: i64::MAX / 2 };
        let responses = || -> u64 { read_usage(dir.path(), range, 0).parts.values().map(|row| row.responses).sum() };
        // One row more than "the pass" wrote: the held (empty) set is not trusted.
        settle_held(&conn, &mut HeldResponses::default(), 0).unwrap();
        assert_eq!(responses(), 1);
        // The store is exactly what "the pass" wrote: its held set is used,
        // here an empty one, which shows the store was not read.
        conn.execute("INSERT OR IGNORE INTO rollup_dirty (hour_ms) SELECT hour_ms FROM rollup_parts", []).unwrap();
        settle_held(&conn, &mut HeldResponses::default(), 1).unwrap();
        assert_eq!(responses(), 0);
    }

    /// A store whose parts were rows (schema 8) migrates to packs: the
    /// rows are not trusted, their hours are settled again from the
    /// records. A pack that does not decode leaves its hour to the records.
    #[test]
    fn parts_stored_as_rows_are_settled_again_as_packs_and_a_damaged_pack_is_read_from_the_records() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(dir.path()).unwrap();
        let write = |key: &str, session: &str, at_utc: &str, output: u64| {
            Evidence::Response(ResponseWrite {
                provider: Provider::Claude,
                key: key.to_owned(),
                session_id: Some(session.into()),
                at_ms: bee_proto::time::parse_rfc3339_ms(at_utc).unwrap(),
                model: Some("claude-opus-4-1".into()),
                tokens: Counters { output_tokens: Some(output), ..Counters::default() },
                context_tokens: None,
                context_window: None,
                is_final: true,
                own_figure: None,
                copied: false,
            })
        };
        let writes = [
            write("msg_1\u{1f}req_1", "s1", "2026-11-02T10:00:00.000Z", 5),
            write("msg_2\u{1f}req_2", "s2", "2026-11-02T10:30:00.000Z", 7),
            write("msg_3\u{1f}req_3", "s1", "2026-11-02T12:00:00.000Z", 11),
        ];
        ledger.append_at(&writes, &[]).unwrap();
        ledger.settle();
        drop(ledger);
        let range = Range { since_ms: 0, until_ms: i64::MAX / 2 };
        let outputs = |dir: &std::path::Path| -> Vec<(i64, Option<String>, Option<u64>)> {
            let summary = read_usage(dir, range, 3);
            summary.parts.iter().map(|(key, row)| (key.bucket, key.session.clone(), row.tokens.output_tokens)).collect()
        };
        let settled = outputs(dir.path());
        assert_eq!(settled.iter().filter_map(|(.., output)| *output).sum::<u64>(), 23);
        assert_eq!(settled, outputs_from_records(dir.path(), range));

        // As schema 8 left it: its part rows (the table schema 7 made, from
        // the table before it), one for each settled hour, here wrong ones;
        // no hour dirty.
        let conn = rusqlite::Connection::open(dir.path().join(store::DB_FILE)).unwrap();
        conn.execute_batch(&format!(
            "DROP TABLE rollup_parts; CREATE TABLE rollup_usage (hour_ms INTEGER);
             {PART_MIGRATION}
             DELETE FROM rollup_dirty;
             INSERT INTO rollup_part VALUES
                 (1793613600000, 'claude', 's1', 'claude-opus-4-1', 0, 1, NULL, NULL, NULL, NULL, 999, NULL, NULL, 0, 0, 0),
                 (1793620800000, 'claude', 's1', 'claude-opus-4-1', 0, 1, NULL, NULL, NULL, NULL, 999, NULL, NULL, 0, 0, 0);
             PRAGMA user_version = 8;"
        ))
        .unwrap();
        drop(conn);
        let mut ledger = Ledger::open(dir.path()).unwrap();
        // Migrated, not settled yet: the hour is read from the records.
        assert_eq!(outputs(dir.path()), settled);
        ledger.settle();
        drop(ledger);
        assert_eq!(outputs(dir.path()), settled);

        let conn = rusqlite::Connection::open(dir.path().join(store::DB_FILE)).unwrap();
        let damaged = conn.execute("UPDATE rollup_parts SET body = X'01ff' WHERE hour_ms = 1793613600000", []).unwrap();
        assert_eq!(damaged, 1);
        assert_eq!(outputs(dir.path()), settled);
    }

    fn outputs_from_records(dir: &std::path::Path, range: Range) -> Vec<(i64, Option<String>, Option<u64>)> {
        let summary = from_records_only(dir, range, 3);
        summary.parts.iter().map(|(key, row)| (key.bucket, key.session.clone(), row.tokens.output_tokens)).collect()
    }

    /// How many test bucketings [`bucketing`] has.
    const BUCKETINGS: usize = 4;

    /// Bucket functions as the views use them: one bucket (by session or
    /// model), UTC days, days that start on the half hour (every such day
    /// cuts an hour in two), and hours.
    fn bucketing(by: usize) -> Box<dyn Fn(Provider, i64) -> i64> {
        const DAY: i64 = 24 * HOUR_MS;
        match by {
            0 => Box::new(|_, _| 0),
            1 => Box::new(|_, at: i64| at.div_euclid(DAY) * DAY),
            2 => Box::new(|_, at: i64| (at - 30 * 60_000).div_euclid(DAY) * DAY + 30 * 60_000),
            _ => Box::new(|_, at: i64| at.div_euclid(HOUR_MS) * HOUR_MS),
        }
    }

    fn read_usage(dir: &std::path::Path, range: Range, by: usize) -> Summary {
        store::Reader::open(dir).unwrap().usage(range, &bucketing(by)).unwrap()
    }

    fn from_records_only(dir: &std::path::Path, range: Range, by: usize) -> Summary {
        let conn = rusqlite::Connection::open(dir.join(store::DB_FILE)).unwrap();
        let (calls, _) = load_calls(&conn, RESPONSE_SCHEMA, range, true).unwrap();
        let (responses, _) = responses::load(&conn, PACK_SCHEMA, range).unwrap();
        Summary::of_records(&calls, &responses, range, Some(&bucketing(by)))
    }

    fn same(a: &Summary, b: &Summary) -> bool {
        let cost = |t: &Tally| t.cost_usd.map(|c| (c * 4.0).round() as i64);
        let strip = |t: &Tally| Tally { cost_usd: None, ..t.clone() };
        let tallies = |s: &Summary| {
            [&s.all, &s.derived_all]
                .into_iter()
                .chain(s.providers.values())
                .chain(s.derived_providers.values())
                .map(|t| (strip(t), cost(t)))
                .collect::<Vec<_>>()
        };
        tallies(a) == tallies(b)
            && a.providers.keys().eq(b.providers.keys())
            && a.derived_providers.keys().eq(b.derived_providers.keys())
            && a.parts == b.parts
    }

    /// A view read while the writer settles is one snapshot: an hour that
    /// was dirty when the reader began is not also taken from the
    /// aggregate the settle wrote meanwhile (which counted it twice).
    #[test]
    fn a_reader_sees_one_snapshot_while_the_writer_settles() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("ledger");
        let mut ledger = Ledger::open(&store).unwrap();
        let mut random = Random(0x9e37_79b9_7f4a_7c15);
        let base = 1_764_000_000_000;
        let batch: Vec<Evidence> = (0..200).map(|_| response(&mut random, base)).collect();
        ledger.append_at(&batch, &[]).unwrap();
        let range = Range { since_ms: base - 2 * HOUR_MS, until_ms: base + 200 * HOUR_MS };
        let reader = store::Reader::open(&store).unwrap();
        let before = reader.usage(range, &bucketing(0)).unwrap();
        // Between any two reads of a view, the writer may append and settle.
        let more: Vec<Evidence> = (0..200).map(|_| response(&mut random, base)).collect();
        ledger.append_at(&more, &[]).unwrap();
        ledger.settle();
        let during = reader.usage(range, &bucketing(0)).unwrap();
        assert!(same(&before, &during), "{before:#?}\n{during:#?}");
        drop(reader);
        let after = read_usage(&store, range, 0);
        assert!(!same(&after, &before), "a new reader sees the new writes");
        assert!(same(&after, &from_records_only(&store, range, 0)));
    }

    /// The agents' own costs sum per part, alike from the aggregates and
    /// from the records: per agent and per day, the sum of what each wrote.
    /// A response of an agent that writes its cost but whose record had
    /// none is counted unknown, never $0; an agent that writes none has
    /// none. A fork's copy counts in the fork's session as a copy only, and
    /// each part knows its first and last response.
    #[test]
    fn agents_costs_and_copies_sum_per_part_as_the_records_say() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("ledger");
        let mut ledger = Ledger::open(&store).unwrap();
        const DAY: i64 = 24 * HOUR_MS;
        let base = 1_764_000_000_000 / DAY * DAY + 10 * HOUR_MS;
        let write = |provider: Provider, key: &str, session: &str, at_ms: i64, usd: Option<f64>, copied: bool| {
            Evidence::Response(ResponseWrite {
                provider,
                key: key.to_owned(),
                session_id: Some(session.into()),
                at_ms,
                model: Some("m".into()),
                tokens: Counters {
                    input_tokens: Some(10),
                    cache_creation_input_tokens: Some(0),
                    cache_read_input_tokens: Some(0),
                    output_tokens: Some(5),
                    ..Counters::default()
                },
                context_tokens: None,
                context_window: None,
                is_final: true,
                own_figure: usd,
                copied,
            })
        };
        let (opencode, pi, claude) = (Provider::OpenCode, Provider::Pi, Provider::Claude);
        let writes = [
            write(opencode, "r1", "ses_b", base, Some(0.25), false),
            // The fork `ses_a` (sorting first) copied r1, then made r2.
            write(opencode, "r1", "ses_a", base, Some(0.25), true),
            write(opencode, "r2", "ses_a", base + 60_000, Some(0.5), false),
            write(opencode, "r3", "ses_b", base + DAY, Some(0.125), false),
            write(opencode, "r4", "ses_b", base + DAY + 7, None, false),
            write(pi, "p1", "pi-1", base + 120_000, Some(1.0 / 3.0), false),
            write(claude, "c1", "cc-1", base, None, false),
        ];
        ledger.append_at(&writes, &[]).unwrap();
        let range = Range { since_ms: base - DAY, until_ms: base + 3 * DAY };
        let by_day = |summary: &Summary| {
            let mut rows: BTreeMap<(i64, Provider), PartFigures> = BTreeMap::new();
            for (key, part) in &summary.parts {
                rows.entry((key.bucket - base + 10 * HOUR_MS, key.provider)).or_default().add(part);
            }
            rows.into_iter()
                .map(|((day, provider), p)| {
                    (day / DAY, provider, p.responses, p.copied_responses, p.own_figure(provider), p.own_figure_unknown)
                })
                .collect::<Vec<_>>()
        };
        let expected = [
            (0, claude, 1, 0, None, 0),
            (0, opencode, 2, 1, Some(0.75), 0),
            (0, pi, 1, 0, Some(0.333_333_333), 0),
            (1, opencode, 2, 0, Some(0.125), 1),
        ];
        for settled in [false, true] {
            if settled {
                ledger.settle();
            }
            let view = read_usage(&store, range, 1);
            assert_eq!(by_day(&view), expected, "settled: {settled}");
            assert!(same(&view, &from_records_only(&store, range, 1)), "settled: {settled}");
            let session = |name: &str, day: i64| {
                let bucket = base - 10 * HOUR_MS + day * DAY;
                let key = view.parts.keys().find(|k| k.session.as_deref() == Some(name) && k.bucket == bucket).unwrap();
                let part = &view.parts[key];
                (part.responses, part.copied_responses, part.first_ms, part.last_ms)
            };
            assert_eq!(session("ses_b", 0), (1, 0, Some(base), Some(base)), "r1 is the original's");
            assert_eq!(session("ses_a", 0), (1, 1, Some(base + 60_000), Some(base + 60_000)), "the fork made r2 alone");
            assert_eq!(session("ses_b", 1), (2, 0, Some(base + DAY), Some(base + DAY + 7)));
        }
        let mut row = UsageRow::default();
        for (key, part) in &read_usage(&store, range, 0).parts {
            part.add_to(key.provider, &mut row, &part.tokens);
        }
        assert_eq!((row.responses, row.copied_responses, row.agent_cost_unknown_parts), (6, 1, 1));
        assert!((row.agent_cost_usd.unwrap() - (0.25 + 0.5 + 0.125 + 1.0 / 3.0)).abs() < 1e-9, "{row:?}");
    }

    #[test]
    fn aggregates_agree_with_the_records_for_any_range_settled_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("ledger");
        let mut ledger = Ledger::open(&store).unwrap();
        let mut random = Random(0x2545_f491_4f6c_dd1d);
        let base = 1_764_000_000_000 + 1_234_567;
        for round in 0..6 {
            let mut batch: Vec<Evidence> = (0..150).map(|_| call(&mut random, base)).collect();
            batch.extend((0..150).map(|_| response(&mut random, base)));
            ledger.append_at(&batch, &[]).unwrap();
            // Leave the last rounds unsettled: readers must take dirty hours from the records.
            if round < 4 {
                ledger.settle();
            }
            for _ in 0..12 {
                let since = base - 2 * HOUR_MS + random.below(80 * HOUR_MS as u64) as i64;
                let since = if random.below(3) == 0 { hour_of(since) } else { since };
                let until = since + 1 + random.below(40 * HOUR_MS as u64) as i64;
                let range = Range { since_ms: since, until_ms: until };
                let by = random.below(BUCKETINGS as u64) as usize;
                let view = read_usage(&store, range, by);
                let expected = from_records_only(&store, range, by);
                assert!(same(&view, &expected), "round {round} {range:?} {by:?}\n{view:#?}\n{expected:#?}");
            }
        }
    }

    #[test]
    fn a_timed_request_inside_a_turn_is_part_of_it_and_its_cost_counts_once() {
        let row = |source: CallSource, start: i64, duration: i64, cost: Option<f64>| CallRow {
            started_ms: start,
            duration_ms: Some(duration),
            provider: Provider::Claude,
            source,
            model: None,
            session_id: Some("s".to_owned()),
            cost_usd: cost,
            tokens: None,
            logged: true,
            folded: false,
        };
        let range = Range { since_ms: 0, until_ms: 100_000 };
        let summary = |calls: &[CallRow]| {
            let mut calls = calls.to_vec();
            fold_parts_into_calls(&mut calls);
            Summary::of_records(&calls, &[], range, None).all
        };
        // A hook turn (no cost) around two requests, and one request outside any turn.
        let calls = [
            row(CallSource::HookTurn, 1_000, 10_000, None),
            row(CallSource::ApiRequest, 2_000, 3_000, Some(0.5)),
            row(CallSource::ApiRequest, 6_000, 4_000, Some(0.25)),
            row(CallSource::ApiRequest, 20_000, 2_000, Some(1.0)),
        ];
        let all = summary(&calls);
        assert_eq!((all.calls, all.agent_ms, all.used_ms), (2, 12_000, 12_000), "the turn and the lone request");
        assert_eq!(
            (all.cost_usd, all.cost_calls),
            (Some(1.75), 3),
            "the turn reported none: its requests' costs count"
        );
        // A run that reported its own cost: the requests inside add none.
        let mut with_run = calls.to_vec();
        with_run.push(row(CallSource::Run, 500, 11_000, Some(2.0)));
        let all = summary(&with_run);
        assert_eq!((all.calls, all.agent_ms), (2, 13_000), "the run holds the turn and its requests");
        assert_eq!(all.cost_usd, Some(3.0), "the run's own cost and the lone request's");
        // Another session's turn, or a request sticking out of the turn, is no part of it.
        let mut apart = calls.to_vec();
        apart[1].session_id = Some("other".to_owned());
        apart[2].duration_ms = Some(40_000);
        assert_eq!(summary(&apart).calls, 4);
    }

    #[test]
    fn a_session_logged_later_stops_its_producer_counters_standing_in() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("ledger");
        let mut ledger = Ledger::open(&store).unwrap();
        let base = 1_764_000_000_000;
        let run = |at: i64, id: u128| run_call(at, id, "s-1");
        // Runs across three hours, settled: their own counters stand in.
        ledger.append(&(0..3).map(|h| run(base + h * HOUR_MS + 60_000, h as u128 + 1)).collect::<Vec<_>>()).unwrap();
        let range = Range { since_ms: hour_of(base) - HOUR_MS, until_ms: hour_of(base) + 5 * HOUR_MS };
        let session = |summary: &Summary| {
            let mut row = PartFigures::default();
            for (_, part) in summary.parts.iter().filter(|(key, _)| key.session.as_deref() == Some("s-1")) {
                row.add(part);
            }
            row
        };
        let row = &session(&read_usage(&store, range, 0));
        assert_eq!((row.producer_calls, row.responses, row.tokens.input_tokens), (3, 0, Some(3_000)));
        // The session's log arrives: its one response is the evidence now,
        // in every hour the runs lie in.
        let write = ResponseWrite {
            provider: Provider::Claude,
            key: "msg_1\u{1f}req_1".to_owned(),
            session_id: Some("s-1".into()),
            at_ms: base + 2 * 60_000,
            model: None,
            tokens: Counters {
                input_tokens: Some(4),
                cache_creation_input_tokens: Some(0),
                cache_read_input_tokens: Some(0),
                output_tokens: Some(2),
                ..Counters::default()
            },
            context_tokens: None,
            context_window: None,
            is_final: true,
            own_figure: None,
            copied: false,
        };
        ledger.append_at(&[Evidence::Response(write)], &[]).unwrap();
        ledger.settle();
        let after = read_usage(&store, range, 0);
        let row = &session(&after);
        assert_eq!((row.producer_calls, row.responses, row.tokens.input_tokens), (0, 1, Some(4)));
        assert_eq!(after.all.calls, 3, "the runs still measure the time");
    }

    #[test]
    fn upgrading_a_store_marks_its_hours_dirty_and_settles_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("ledger");
        let before = &store::MIGRATIONS[..ROLLUP_SCHEMA as usize - 1];
        let writer = crate::storage::sqlite::open_writer(&store, store::DB_FILE, before).unwrap();
        let base = 1_764_000_000_000i64;
        for (n, (source, at, duration, session)) in [
            ("run", base, Some(3 * HOUR_MS), Some("a")),
            ("ingested", base + 60_000, Some(60_000), Some("a")),
            ("ingested", base + 5 * HOUR_MS, None, Some("b")),
            ("hook_turn", base + 9 * HOUR_MS + 1, Some(10), None),
        ]
        .into_iter()
        .enumerate()
        {
            writer
                .conn
                .execute(
                    "INSERT INTO call (record_id, source, provider, started_at_utc, started_at_ms, duration_ms, session_id)
                     VALUES (?1, ?2, 'claude', ?3, ?4, ?5, ?6)",
                    params![n.to_string(), source, format_unix_ms(at), at, duration, session],
                )
                .unwrap();
        }
        drop(writer);
        let range = Range { since_ms: hour_of(base) - HOUR_MS, until_ms: hour_of(base) + 12 * HOUR_MS };
        // A reader of the old store takes its ingested calls as responses;
        // the upgraded store reads the logs again into responses instead.
        let old_store = read_usage(&store, range, 0);
        let old_responses: u64 = old_store.parts.values().map(|row| row.responses).sum();
        assert_eq!(old_responses, 2);
        let old_store = Summary { parts: Parts::new(), ..old_store };
        let mut ledger = Ledger::open(&store).unwrap();
        let expected = from_records_only(&store, range, 0);
        assert_eq!(
            (expected.all.calls, expected.all.agent_ms, expected.all.without_duration),
            (2, 3 * HOUR_MS as u64 + 10, 0)
        );
        assert!(same(&old_store, &Summary { parts: Parts::new(), ..expected.clone() }), "{old_store:#?}");
        assert!(same(&read_usage(&store, range, 0), &expected));
        ledger.settle();
        let conn = rusqlite::Connection::open(store.join(store::DB_FILE)).unwrap();
        let dirty: i64 = conn.query_row("SELECT COUNT(*) FROM rollup_dirty", [], |r| r.get(0)).unwrap();
        assert_eq!(dirty, 0);
        assert!(same(&read_usage(&store, range, 0), &expected));
    }
}
