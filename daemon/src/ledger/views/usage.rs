//! `beectl usage`: token usage from the ledger by local day, week, month,
//! session, model or five-hour block, filtered by provider, project or
//! model, with the cost providers reported beside the cost the price table
//! estimates. Each figure says what it is: a sum with unknown parts is a
//! lower bound with their count, a model the table does not name has no
//! estimate, a block without the provider's own window is `inferred`.

use bee_proto::delivery::Issue;
use bee_proto::ledger::{
    BlockSource, BlockSpan, PriceSource, Provider, UsageBy, UsageFilters, UsageGrouping, UsageOrder, UsageReport,
    UsageRow,
};
use bee_proto::time::format_unix_ms;
use bee_proto::usage::Counters;
use bee_proto::usage::WindowKind;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::ledger::FastMap;
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
    pub by: UsageBy,
    pub zone: Zone,
    pub filters: UsageFilters,
    /// Rows oldest first (names A to Z), or the reverse.
    pub order: UsageOrder,
    /// Only the rows (first keys) of the N latest last activities.
    pub last: Option<usize>,
}

impl UsageAsk {
    /// `by` over `range` in `zone`, everything else as by default.
    pub fn new(range: Range, by: UsageGrouping, zone: Zone) -> UsageAsk {
        UsageAsk {
            range,
            by: UsageBy::one(by),
            zone,
            filters: UsageFilters::default(),
            order: UsageOrder::Asc,
            last: None,
        }
    }
}

/// `beectl usage`'s question in words, as its command line and the usage
/// page's data route both put it: read by one rule ([`UsageWords::ask`]),
/// so the two answer alike. Each is `None` where not given.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageWords {
    /// `day`, …, or two joined by a comma [default: `day`].
    pub by: Option<String>,
    /// YYYY-MM-DD, RFC 3339, `today`, `yesterday`, or `30m`/`5h`/`7d`/`2w` ago.
    pub since: Option<String>,
    pub until: Option<String>,
    /// An IANA zone [default: the local zone].
    pub timezone: Option<String>,
    pub agent: Option<String>,
    pub project: Option<String>,
    pub model: Option<String>,
    /// `asc` or `desc`.
    pub order: Option<String>,
    pub last: Option<usize>,
}

impl UsageWords {
    /// The question these words ask at `now_ms`, or what is wrong with
    /// them, named by the option that says it (`--since: …`).
    pub fn ask(&self, now_ms: i64) -> Result<UsageAsk, String> {
        let zone = match self.timezone.as_deref() {
            Some(name) => Zone::named(name).map_err(|message| format!("--timezone: {message}"))?,
            None => Zone::local(),
        };
        let time = |text: &Option<String>, end: bool, flag: &str| -> Result<Option<i64>, String> {
            text.as_deref().map(|t| zone.parse_time(t, end, now_ms).map_err(|m| format!("{flag}: {m}"))).transpose()
        };
        let range = Range {
            since_ms: time(&self.since, false, "--since")?.unwrap_or(0),
            until_ms: time(&self.until, true, "--until")?.unwrap_or(now_ms),
        };
        if range.since_ms >= range.until_ms {
            return Err("--since must be before --until".to_owned());
        }
        let by = UsageBy::parse(self.by.as_deref().unwrap_or("day")).map_err(|message| format!("--by: {message}"))?;
        let order = match self.order.as_deref() {
            None => UsageOrder::Asc,
            Some(name) => UsageOrder::from_name(name).ok_or("--order: asc or desc")?,
        };
        let provider = match self.agent.as_deref() {
            None => None,
            Some(name) => Some(Provider::from_name(name).ok_or_else(|| format!("--agent: `{name}` is no agent"))?),
        };
        if self.last == Some(0) {
            return Err("--last: at least 1".to_owned());
        }
        for (flag, text) in [("--project", &self.project), ("--model", &self.model)] {
            if text.as_deref() == Some("") {
                return Err(format!("{flag}: empty"));
            }
        }
        let filters = UsageFilters { provider, project: self.project.clone(), model: self.model.clone() };
        Ok(UsageAsk { by, order, last: self.last, filters, ..UsageAsk::new(range, UsageGrouping::Day, zone) })
    }
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
    let windows = match ask.by.first {
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
    let projects = if filters.iter().any(|f| f.project.is_some())
        || ask.by.has(UsageGrouping::Session)
        || ask.by.has(UsageGrouping::Project)
    {
        reader.session_projects()?
    } else {
        HashMap::new()
    };
    let damaged = summary.damaged_records + damaged_costs;
    let inputs = Inputs::new(&summary.parts, &reported, &projects, &windows, damaged, &bucket);
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
    let (projects, windows) = (HashMap::new(), Windows::new());
    let inputs = Inputs::new(&summary.parts, &reported, &projects, &windows, 0, whole);
    let ask = UsageAsk::new(range, UsageGrouping::Day, Zone::utc());
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

/// The bucket function of a grouping: its time grouping's local hour, day,
/// week or month starts; one bucket when neither key is time; for blocks,
/// the provider's window that holds the time, else the hour (blocks are
/// inferred from hours).
fn bucketing<'a>(by: UsageBy, zone: &'a Zone, windows: &'a Windows) -> impl Fn(Provider, i64) -> i64 + 'a {
    let time = by.groupings().find(|g| g.is_time() || *g == UsageGrouping::Block);
    move |provider, at| match time {
        Some(UsageGrouping::Day) => zone.day_start(at),
        Some(UsageGrouping::Hour) => at.div_euclid(HOUR_MS) * HOUR_MS,
        Some(UsageGrouping::Week) => zone.week_start(at),
        Some(UsageGrouping::Month) => zone.month_start(at),
        Some(UsageGrouping::Block) => {
            window_of(windows, provider, at).map_or(at.div_euclid(HOUR_MS) * HOUR_MS, |w| w.0)
        }
        _ => 0,
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
    /// Each model id's label, worked out once for every report built
    /// from these inputs (the exporter builds one per agent).
    models: ModelTable<'a>,
}

impl<'a> Inputs<'a> {
    pub fn new(
        parts: &'a Parts,
        reported: &'a [ReportedCost],
        projects: &'a HashMap<String, String>,
        windows: &'a Windows,
        damaged: u64,
        bucket: &'a dyn Fn(Provider, i64) -> i64,
    ) -> Self {
        let ids = parts.keys().filter_map(|k| k.model.as_deref());
        let models = ModelTable::of(ids.chain(reported.iter().filter_map(|c| c.model.as_deref())));
        Inputs { parts, reported, projects, windows, damaged, bucket, models }
    }
}

/// The model ids of a report's inputs, each numbered in the order of its
/// id (so a set of numbers in order is a set of ids in order), with its
/// label: a row keeps the numbers of its models and spells them once,
/// when it is made.
struct ModelTable<'a> {
    numbers: FastMap<&'a str, u32>,
    /// Each number's id and label.
    models: Vec<(&'a str, String)>,
}

impl<'a> ModelTable<'a> {
    fn of(ids: impl Iterator<Item = &'a str>) -> Self {
        let mut distinct: Vec<&str> = ids.collect();
        distinct.sort_unstable();
        distinct.dedup();
        let numbers = distinct.iter().enumerate().map(|(number, id)| (*id, number as u32)).collect();
        let models = distinct.into_iter().map(|id| (id, crate::ledger::views::models::label(id))).collect();
        ModelTable { numbers, models }
    }

    fn number(&self, id: &str) -> Option<u32> {
        self.numbers.get(id).copied()
    }

    fn label(&self, number: u32) -> &str {
        &self.models[number as usize].1
    }
}

/// One key of a group while rows are gathered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Key<'k> {
    /// A bucket of time (its start).
    Time(i64),
    /// A block: its start, provider, end and where its bounds come from.
    Block(i64, Provider, i64, BlockSource),
    Agent(Provider),
    /// A session of an agent (two agents may spell the same id).
    Session(Provider, Option<&'k str>),
    /// A model's label or a project (`None`: the records did not say).
    Name(Option<&'k str>),
}

/// A row's identity: its first key and, grouped by two, its second.
type GroupKey<'k> = (Key<'k>, Option<Key<'k>>);

/// One token column of [`Counters`].
type Column = fn(&Counters) -> Option<u64>;

/// The token columns a view shows, each with its JSON name: what
/// `partialColumns` names.
const COLUMNS: [(&str, Column); 6] = [
    ("inputTokens", |c| c.input_tokens),
    ("cacheCreationInputTokens", |c| c.cache_creation_input_tokens),
    ("cacheReadInputTokens", |c| c.cache_read_input_tokens),
    ("outputTokens", |c| c.output_tokens),
    ("reasoningOutputTokens", |c| c.reasoning_output_tokens),
    ("totalTokens", |c| c.total_tokens),
];

// Sets of agents are bits of a `u64`, one per agent.
const _: () = assert!(Provider::ALL.len() <= 64);

/// A row while it is gathered: its sums, and what decides its agent(s),
/// its span of time, its sessions with and without a reported cost and
/// the columns some of its parts could not report.
#[derive(Default)]
struct Gathered {
    row: UsageRow,
    /// Bit `provider as u32` for each agent with usage or cost in it.
    agents: u64,
    span: Option<(i64, i64)>,
    used: SessionSet,
    costed: SessionSet,
    /// The numbers (in the [`ModelTable`]) of the models of its counted parts.
    models: Vec<u32>,
    known: [bool; COLUMNS.len()],
    unknown: [u64; COLUMNS.len()],
}

impl Gathered {
    fn agent(&mut self, provider: Provider) {
        self.agents |= 1 << (provider as u32);
    }

    fn seen(&mut self, from: i64, to: i64) {
        self.span = Some(self.span.map_or((from, to), |(a, b)| (a.min(from), b.max(to))));
    }

    fn columns(&mut self, columns: &Counters, parts: u64) {
        for (at, (_, column)) in COLUMNS.iter().enumerate() {
            match column(columns) {
                Some(_) => self.known[at] = true,
                None => self.unknown[at] += parts,
            }
        }
    }

    /// Adds `session` to `set`: parts come in key order, so a session's
    /// parts mostly follow one another, and each is added once.
    fn add_session(set: &mut SessionSet, session: u32) {
        if set.last() != Some(&session) {
            set.push(session);
        }
    }

    /// The row, its sets counted and its agents and models named.
    fn finish(mut self, models: &ModelTable<'_>) -> UsageRow {
        self.models.sort_unstable();
        self.models.dedup();
        for &number in &self.models {
            let (id, label) = &models.models[number as usize];
            self.row.model_ids.push((*id).to_owned());
            self.row.models.push(label.clone());
        }
        self.row.models.sort_unstable();
        self.row.models.dedup();
        for set in [&mut self.used, &mut self.costed] {
            set.sort_unstable();
            set.dedup();
        }
        let costed = &self.costed;
        self.row.sessions_without_cost =
            Some(self.used.iter().filter(|session| costed.binary_search(session).is_err()).count() as u64);
        let agents: Vec<Provider> =
            Provider::ALL.iter().copied().filter(|p| self.agents & (1 << (*p as u32)) != 0).collect();
        match agents.as_slice() {
            [one] => self.row.agent = Some(*one),
            _ => self.row.agents = agents,
        }
        for (at, (name, _)) in COLUMNS.iter().enumerate() {
            if self.known[at] && self.unknown[at] > 0 {
                self.row.partial_columns.insert((*name).to_owned(), self.unknown[at]);
            }
        }
        self.row
    }
}

/// Rows while they are gathered, each found by its key. Parts come in key
/// order, so the row of a part is mostly the row of the part before it:
/// that one is found without hashing its key.
struct Groups<K> {
    at: FastMap<K, usize>,
    gathered: Vec<(K, Gathered)>,
    last: Option<(K, usize)>,
}

impl<K> Default for Groups<K> {
    fn default() -> Self {
        Groups { at: FastMap::default(), gathered: Vec::new(), last: None }
    }
}

impl<K: std::hash::Hash + Eq + Copy> Groups<K> {
    /// The row of `key`, a new one if there is none.
    fn entry(&mut self, key: K) -> &mut Gathered {
        let at = match self.last {
            Some((last, at)) if last == key => at,
            _ => {
                let next = self.gathered.len();
                let at = *self.at.entry(key).or_insert(next);
                if at == next {
                    self.gathered.push((key, Gathered::default()));
                }
                self.last = Some((key, at));
                at
            }
        };
        &mut self.gathered[at].1
    }

    fn get(&self, key: &K) -> Option<&Gathered> {
        self.at.get(key).map(|&at| &self.gathered[at].1)
    }

    /// The row of `key`, taken out (an empty one stays in its place).
    fn take(&mut self, key: &K) -> Option<Gathered> {
        let at = self.at.remove(key)?;
        self.last = None;
        Some(std::mem::take(&mut self.gathered[at].1))
    }
}

/// The report from gathered inputs (no store involved: tests build them).
pub fn build(ask: &UsageAsk, prices: &PriceTable, inputs: &Inputs<'_>) -> UsageReport {
    let filters = &ask.filters;
    let by = ask.by;
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
    // Blocks come out in order of start, then provider: their keys sort so.
    let block_of = if by.has(UsageGrouping::Block) {
        let mut starts: Vec<(Provider, i64)> = inputs.parts.keys().map(|k| (k.provider, k.bucket)).collect();
        starts.extend(inputs.reported.iter().map(|c| (c.provider, (inputs.bucket)(c.provider, c.at_ms))));
        infer_blocks(starts, inputs.windows)
    } else {
        BlockMap::new()
    };
    // A price per model id, worked out once per id; the keys rows are
    // gathered under borrow their names, copied once a row is made.
    let models = &inputs.models;
    let mut unpriced: Vec<Option<u32>> = Vec::new();
    let label_of = |id: &str| models.number(id).map(|number| models.label(number));
    // Each model's price, by its number.
    let mut looked_up: Vec<Option<Option<&crate::ledger::views::prices::ModelPrice>>> = vec![None; models.models.len()];
    // Each (agent, session) a number, for the rows' sets of sessions.
    let mut sessions: FastMap<(Provider, Option<&str>), u32> = FastMap::default();
    let mut last_session: Option<(Provider, Option<&str>, u32)> = None;
    let key_of = |grouping, provider, bucket, session, label| {
        group_key(grouping, provider, bucket, session, label, inputs.projects, &block_of)
    };
    let mut rows: Groups<GroupKey<'_>> = Groups::default();
    let mut subtotals: Groups<Key<'_>> = Groups::default();
    let mut totals = Gathered::default();
    // Bit `provider as u32` for each agent with a response counted.
    let mut agents_counted: u64 = 0;
    for (key, part) in inputs.parts {
        let PartKey { bucket, provider, session, model, tier } = key;
        let counted = part.responses + part.producer_calls;
        if filters.provider.is_some_and(|p| p != *provider)
            || !model_wanted(model.as_deref())
            || !project_wanted(session.as_deref(), counted)
        {
            continue;
        }
        if part.responses > 0 {
            agents_counted |= 1 << (*provider as u32);
        }
        let number = model.as_deref().and_then(|id| models.number(id));
        let label = number.map(|number| models.label(number));
        let first = key_of(by.first, *provider, *bucket, session.as_deref(), label);
        let then = by.then.map(|then| key_of(then, *provider, *bucket, session.as_deref(), label));
        // Priced from what the provider reported; shown in the one set of columns.
        let columns = crate::ledger::agents::agent(*provider).columns(&part.tokens);
        // A part of copies alone holds no response of its own: nothing to price.
        let price = number.and_then(|number| {
            *looked_up[number as usize]
                .get_or_insert_with(|| prices.lookup(models.models[number as usize].0).map(|found| found.1))
        });
        // Responses none of whose counters is known (Warp's, Crush's) have
        // nothing to price: no estimate, not even $0, and no unpriced model.
        let nothing_known = part.tokens.reported() == 0;
        let cost =
            price.filter(|_| counted > 0).and_then(|price| PriceTable::cost_at(price, *provider, *tier, &part.tokens));
        if cost.is_none() && counted > 0 && !nothing_known && unpriced.last() != Some(&number) {
            unpriced.push(number);
        }
        // Parts come in key order: a session's follow one another.
        let session_number = (counted > 0).then(|| match last_session {
            Some((of, named, number)) if of == *provider && named == session.as_deref() => number,
            _ => {
                let number = session_number(&mut sessions, *provider, session.as_deref());
                last_session = Some((*provider, session.as_deref(), number));
                number
            }
        });
        let span = part_span(part);
        let is_two = then.is_some();
        let sinks = [
            Some(rows.entry((first, then))),
            if is_two { Some(subtotals.entry(first)) } else { None },
            Some(&mut totals),
        ];
        for sum in sinks.into_iter().flatten() {
            part.add_to(*provider, &mut sum.row, &columns);
            sum.columns(&columns, counted);
            sum.agent(*provider);
            if let Some((from, to)) = span {
                sum.seen(from, to);
            }
            match cost {
                _ if nothing_known => {}
                Some(cost) => bee_proto::ledger::add_cost(&mut sum.row.estimated_cost_usd, Some(cost)),
                None => sum.row.unpriced_parts += counted,
            }
            let Some(session) = session_number else { continue };
            Gathered::add_session(&mut sum.used, session);
            // The group's models, each once, spelled when the row is made.
            if let Some(number) = number
                && sum.models.last() != Some(&number)
            {
                sum.models.push(number);
            }
        }
    }
    // A reported cost line that names no model belongs to no model's row:
    // grouped by model, it counts in the totals (and the subtotals of a
    // first key that is not the model) only.
    for cost in inputs.reported {
        if filters.provider.is_some_and(|p| p != cost.provider)
            || (filters.model.is_some() && !model_wanted(cost.model.as_deref()))
            || !project_wanted(cost.session.as_deref(), 0)
        {
            continue;
        }
        let session = session_number(&mut sessions, cost.provider, cost.session.as_deref());
        let bucket = (inputs.bucket)(cost.provider, cost.at_ms);
        let label = cost.model.as_deref().and_then(label_of);
        let keyed = |grouping: UsageGrouping| {
            (!(label.is_none() && grouping == UsageGrouping::Model))
                .then(|| key_of(grouping, cost.provider, bucket, cost.session.as_deref(), label))
        };
        let first = keyed(by.first);
        let then = by.then.map(keyed);
        let row = match (&first, &then) {
            (Some(first), None) if by.then.is_none() => Some(rows.entry((*first, None))),
            (Some(first), Some(Some(then))) => Some(rows.entry((*first, Some(*then)))),
            _ => None,
        };
        let subtotal = match (&first, by.then) {
            (Some(first), Some(_)) => Some(subtotals.entry(*first)),
            _ => None,
        };
        for sum in [row, subtotal, Some(&mut totals)].into_iter().flatten() {
            bee_proto::ledger::add_cost(&mut sum.row.reported_cost_usd, Some(cost.usd));
            Gathered::add_session(&mut sum.costed, session);
            sum.agent(cost.provider);
        }
    }
    let zone = &ask.zone;
    let name = |key: &Key<'_>, grouping: UsageGrouping, row: &mut UsageRow| -> Option<String> {
        match key {
            Key::Time(start) => Some(match grouping {
                UsageGrouping::Month => zone.month_key(*start),
                UsageGrouping::Hour => zone.local_minute(*start),
                _ => zone.day_key(*start),
            }),
            Key::Block(start, provider, end, source) => {
                row.block = Some(BlockSpan {
                    provider: *provider,
                    start_utc: format_unix_ms(*start),
                    end_utc: format_unix_ms(*end),
                    source: *source,
                });
                Some(format_unix_ms(*start))
            }
            Key::Agent(provider) => Some(provider.as_str().to_owned()),
            Key::Session(_, session) => {
                row.project = session.and_then(|s| inputs.projects.get(s)).cloned();
                session.map(str::to_owned)
            }
            Key::Name(name) => name.map(str::to_owned),
        }
    };
    let finish = |gathered: Gathered| {
        let span = gathered.span;
        let mut row = gathered.finish(models);
        if let Some((first, last)) = span {
            row.first_at_utc = Some(format_unix_ms(first));
            row.last_at_utc = Some(format_unix_ms(last));
        }
        row
    };
    // Rows in the order asked: time and blocks by time; sessions by their
    // first response; names by name; then `--order` and `--last`.
    // Each row's place worked out once: its first key's time (a session's
    // first activity; 0 for every other key, which sorts by itself), then
    // its second key's likewise.
    let session_start = |key: &Key<'_>, gathered: &Gathered| match key {
        Key::Session(..) => gathered.span.map_or(i64::MIN, |s| s.0),
        _ => 0,
    };
    // Rows are large: they stay where they are, and only their keys and
    // places are sorted.
    let mut gathered: Vec<Option<Gathered>> = Vec::with_capacity(rows.gathered.len());
    let mut ordered: Vec<(i64, i64, GroupKey<'_>, usize)> = Vec::with_capacity(rows.gathered.len());
    for (key, row) in rows.gathered {
        let first = match &key.0 {
            Key::Session(..) if by.then.is_some() => {
                subtotals.get(&key.0).map_or(i64::MIN, |s| session_start(&key.0, s))
            }
            first => session_start(first, &row),
        };
        let then = key.1.as_ref().map_or(0, |then| session_start(then, &row));
        ordered.push((first, then, key, gathered.len()));
        gathered.push(Some(row));
    }
    ordered.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| a.2.0.cmp(&b.2.0)).then(a.1.cmp(&b.1)).then_with(|| a.2.1.cmp(&b.2.1))
    });
    let mut firsts: Vec<Key<'_>> = Vec::new();
    for (_, _, (first, _), _) in &ordered {
        if firsts.last() != Some(first) {
            firsts.push(*first);
        }
    }
    if ask.order == UsageOrder::Desc {
        firsts.reverse();
    }
    // `--last N`: the N first keys whose last activity is latest.
    let mut left_out = 0;
    if let Some(last) = ask.last {
        let mut latest: FastMap<&Key<'_>, i64> = FastMap::default();
        for (_, _, (first, _), at) in &ordered {
            let last = gathered[*at].as_ref().and_then(|row| row.span).map_or(i64::MIN, |s| s.1);
            let entry = latest.entry(first).or_insert(i64::MIN);
            *entry = (*entry).max(last);
        }
        let mut by_recency: Vec<(i64, usize)> =
            firsts.iter().enumerate().map(|(at, key)| (latest.get(key).copied().unwrap_or(i64::MIN), at)).collect();
        by_recency.sort_by(|a, b| b.cmp(a));
        let kept: std::collections::BTreeSet<usize> = by_recency.iter().take(last).map(|(_, at)| *at).collect();
        left_out = (firsts.len() - kept.len()) as u64;
        firsts = firsts.into_iter().enumerate().filter(|(at, _)| kept.contains(at)).map(|(_, k)| k).collect();
    }
    let rank: FastMap<&Key<'_>, usize> = firsts.iter().enumerate().map(|(at, key)| (key, at)).collect();
    let mut placed: Vec<(usize, usize, usize)> = Vec::with_capacity(ordered.len());
    for (within, (_, _, (first, _), at)) in ordered.iter().enumerate() {
        let Some(&rank) = rank.get(first) else { continue };
        let within = if ask.order == UsageOrder::Desc { usize::MAX - within } else { within };
        placed.push((rank, within, *at));
    }
    placed.sort_unstable();
    let mut keys: Vec<Option<GroupKey<'_>>> = vec![None; gathered.len()];
    for (_, _, key, at) in &ordered {
        keys[*at] = Some(*key);
    }
    let mut rows: Vec<UsageRow> = Vec::with_capacity(placed.len());
    for (_, _, at) in placed {
        let (Some(row), Some(Some((first, then)))) = (gathered[at].take(), keys.get(at)) else { continue };
        let mut row = finish(row);
        row.key = name(first, by.first, &mut row);
        if let (Some(then), Some(grouping)) = (then, by.then) {
            row.subkey = name(then, grouping, &mut row);
        }
        rows.push(row);
    }
    let mut subtotal_rows: Vec<UsageRow> = firsts
        .iter()
        .filter_map(|key| {
            let gathered = subtotals.take(key)?;
            let mut row = finish(gathered);
            row.key = name(key, by.first, &mut row);
            Some(row)
        })
        .collect();
    let mut totals = finish(totals);
    totals.first_at_utc = None;
    totals.last_at_utc = None;
    for row in rows.iter_mut().chain(subtotal_rows.iter_mut()).chain(std::iter::once(&mut totals)) {
        round_costs(row);
    }
    let mut unpriced_models: Vec<String> = unpriced
        .into_iter()
        .map(|number| {
            number.map_or_else(|| "(unknown)".to_owned(), |number| models.models[number as usize].0.to_owned())
        })
        .collect();
    unpriced_models.sort();
    unpriced_models.dedup();
    let mut issues = Vec::new();
    // Unknown counters, columns some parts could not report, or a reported
    // cost that leaves used sessions out.
    let reported_partial = |row: &UsageRow| {
        (row.reported_cost_usd.is_some() && row.sessions_without_cost.is_some_and(|n| n > 0))
            || (row.agent_cost_usd.is_some() && row.agent_cost_unknown_parts > 0)
            || (row.agent_credits.is_some() && row.agent_credits_unknown_parts > 0)
            || (row.unsplit_tokens.is_some() && row.unsplit_tokens_unknown_parts > 0)
            || (row.agent_estimated_tokens.is_some() && row.agent_estimated_tokens_unknown_parts > 0)
    };
    let all_rows = || rows.iter().chain(&subtotal_rows).chain([&totals]);
    if totals.partial_parts > 0 || all_rows().any(|row| reported_partial(row) || !row.partial_columns.is_empty()) {
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
    // The agent asked for by name is told of even with nothing counted:
    // that its records leave calls out is the answer to why (Windsurf's
    // hold none at all).
    if let Some(asked) = filters.provider {
        agents_counted |= 1 << (asked as u32);
    }
    let unrecorded_calls: Vec<bee_proto::ledger::UnrecordedCalls> = Provider::ALL
        .iter()
        .copied()
        .filter(|agent| agents_counted & (1 << (*agent as u32)) != 0)
        .filter_map(|agent| {
            let calls = crate::ledger::agents::agent(agent).unrecorded_calls()?;
            Some(bee_proto::ledger::UnrecordedCalls { agent, calls: calls.to_owned() })
        })
        .collect();
    if !unrecorded_calls.is_empty() {
        issues.push(bee_proto::ledger::UNRECORDED_CALLS_ISSUE.to_owned());
    }
    if by.then.is_none() {
        subtotal_rows.clear();
    }
    UsageReport {
        schema_version: 4,
        by,
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
        subtotals: subtotal_rows,
        rows_left_out: left_out,
        totals,
        issues,
    }
}

/// The key of `grouping` for usage of `provider` at `bucket` in `session`
/// of the model labelled `label`, borrowing its names.
fn group_key<'k>(
    grouping: UsageGrouping,
    provider: Provider,
    bucket: i64,
    session: Option<&'k str>,
    label: Option<&'k str>,
    projects: &'k HashMap<String, String>,
    block_of: &BlockMap,
) -> Key<'k> {
    match grouping {
        UsageGrouping::Day | UsageGrouping::Hour | UsageGrouping::Week | UsageGrouping::Month => Key::Time(bucket),
        UsageGrouping::Session => Key::Session(provider, session),
        UsageGrouping::Model => Key::Name(label),
        UsageGrouping::Agent => Key::Agent(provider),
        UsageGrouping::Project => Key::Name(session.and_then(|s| projects.get(s)).map(String::as_str)),
        UsageGrouping::Block => match block_of.get(&(provider, bucket)) {
            Some(&(start, end, source)) => Key::Block(start, provider, end, source),
            None => Key::Block(bucket, provider, bucket + BLOCK_MS, BlockSource::Inferred),
        },
    }
}

/// The first and last response time of a part, where it has responses.
fn part_span(part: &crate::ledger::stored::rollup::PartFigures) -> Option<(i64, i64)> {
    part.first_ms.zip(part.last_ms)
}

/// (provider, session) pairs (`None`: usage that named no session), each
/// by its number in the report.
type SessionSet = Vec<u32>;

/// The number of `provider`'s `session` in `sessions`, a new one if it is new.
fn session_number<'k>(
    sessions: &mut FastMap<(Provider, Option<&'k str>), u32>,
    provider: Provider,
    session: Option<&'k str>,
) -> u32 {
    let next = sessions.len() as u32;
    *sessions.entry((provider, session)).or_insert(next)
}

/// Sums of many small products carry binary noise (0.0029100000000000003):
/// costs are shown to a ten-billionth of a dollar.
fn round_costs(row: &mut UsageRow) {
    for cost in [&mut row.reported_cost_usd, &mut row.agent_cost_usd, &mut row.estimated_cost_usd] {
        *cost = cost.map(round_usd);
    }
    // Credits are summed in billionths as costs are: the same noise.
    row.agent_credits = row.agent_credits.map(round_usd);
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
            own_figure: None,
            copied_into: Vec::new(),
        }
    }

    fn ask(by: UsageGrouping, zone: &str) -> UsageAsk {
        UsageAsk::new(Range { since_ms: 0, until_ms: 1_000 * H }, by, Zone::named(zone).unwrap())
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
        let inputs = Inputs::new(&summary.parts, reported, &projects, windows, 0, &bucket);
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

    /// Figures agents write in their own units stand in their own columns:
    /// Kiro's credits, Warp's unsplit totals and Aider's own estimates are
    /// never summed with each other, with dollars or into the token columns; one unknown makes its
    /// sum a lower bound (`partial`); a response with no counter known has
    /// nothing to price (no estimate, no `unpriced` model).
    #[test]
    fn credits_unsplit_totals_and_agent_estimates_stand_apart_and_unknowns_are_bounds() {
        let own = |provider: Provider, at_ms: i64, session: &str, model: Option<&str>, figure: Option<f64>| Response {
            provider,
            tokens: Counters::default(),
            partial: true,
            own_figure: figure,
            ..response(at_ms, session, model, 0, 0)
        };
        let responses = [
            own(Provider::Kiro, H, "k1", None, Some(0.75)),
            own(Provider::Kiro, H + 1, "k1", None, Some(0.0)),
            own(Provider::Warp, 2 * H, "w1", Some("claude-sonnet-4-5"), Some(12_000.0)),
            own(Provider::Warp, 2 * H + 1, "w1", Some("gpt-5.1"), Some(800.0)),
            own(Provider::Aider, 2 * H, "a1", Some("gpt-4o"), Some(2_354.0)),
            own(Provider::Aider, 2 * H + 5, "a1", Some("gpt-4o"), Some(640.0)),
            response(3 * H, "s1", Some("claude-sonnet-4-5"), 1_000, 100),
        ];
        let report = run(&ask(UsageGrouping::Agent, "UTC"), &[], &responses, &[], &Windows::new());
        let row = |agent: &str| report.rows.iter().find(|r| r.key.as_deref() == Some(agent)).unwrap();
        let (kiro, warp, aider, claude) = (row("kiro"), row("warp"), row("aider"), row("claude"));
        assert_eq!((kiro.agent_credits, kiro.unsplit_tokens, kiro.agent_cost_usd), (Some(0.75), None, None));
        assert_eq!((warp.agent_credits, warp.unsplit_tokens, warp.agent_cost_usd), (None, Some(12_800), None));
        assert_eq!(
            (aider.agent_estimated_tokens, aider.unsplit_tokens, aider.agent_cost_usd),
            (Some(2_994), None, None)
        );
        assert_eq!((claude.agent_credits, claude.unsplit_tokens, claude.agent_estimated_tokens), (None, None, None));
        for nothing_known in [kiro, warp, aider] {
            assert_eq!(nothing_known.tokens.total_tokens, None, "no part known, no total");
            assert_eq!((nothing_known.estimated_cost_usd, nothing_known.unpriced_parts), (None, 0), "nothing to price");
        }
        assert_eq!(report.totals.tokens.total_tokens, Some(1_100), "unsplit tokens are in no column and not in TOTAL");
        assert_eq!((report.totals.agent_credits, report.totals.unsplit_tokens), (Some(0.75), Some(12_800)));
        assert_eq!(report.totals.agent_estimated_tokens, Some(2_994), "estimates are in no column and not in TOTAL");
        assert!(report.unpriced_models.is_empty(), "{:?}", report.unpriced_models);
        // A Kiro turn and a Warp entry whose figure could not be read: the
        // sums are lower bounds, never sums that look whole.
        let unknown = [
            own(Provider::Kiro, 4 * H, "k2", None, None),
            own(Provider::Warp, 4 * H, "w2", None, None),
            own(Provider::Aider, 4 * H, "a2", None, None),
        ];
        let all: Vec<Response> = responses.iter().cloned().chain(unknown).collect();
        let report = run(&ask(UsageGrouping::Agent, "UTC"), &[], &all, &[], &Windows::new());
        let totals = &report.totals;
        assert_eq!((totals.agent_credits, totals.agent_credits_unknown_parts), (Some(0.75), 1));
        assert_eq!((totals.unsplit_tokens, totals.unsplit_tokens_unknown_parts), (Some(12_800), 1));
        assert_eq!((totals.agent_estimated_tokens, totals.agent_estimated_tokens_unknown_parts), (Some(2_994), 1));
        assert!(report.issues.contains(&"partial".to_owned()));
        let json = serde_json::to_value(totals).unwrap();
        assert_eq!((json["agentCredits"].as_f64(), json["unsplitTokens"].as_u64()), (Some(0.75), Some(12_800)));
        assert_eq!(
            (json["agentCreditsUnknownParts"].as_u64(), json["unsplitTokensUnknownParts"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(
            (json["agentEstimatedTokens"].as_u64(), json["agentEstimatedTokensUnknownParts"].as_u64()),
            (Some(2_994), Some(1))
        );
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

    fn codex(at_ms: i64, session: &str, model: &str, input: u64, reasoning: u64) -> Response {
        let mut response = response(at_ms, session, Some(model), input, 10);
        response.provider = Provider::Codex;
        response.tokens = Counters {
            input_tokens: Some(input),
            cached_input_tokens: Some(0),
            output_tokens: Some(10),
            reasoning_output_tokens: Some(reasoning),
            total_tokens: Some(input + 10),
            ..Counters::default()
        };
        response
    }

    #[test]
    fn two_keys_give_rows_under_each_first_key_with_their_subtotal_and_name_their_agents() {
        let responses = [
            response(H, "s1", Some("claude-sonnet-4-5-20250929"), 100, 10),
            response(2 * H, "s1", Some("anthropic/claude-sonnet-4.5"), 200, 20),
            codex(3 * H, "c1", "gpt-5-codex", 1_000, 5),
            codex(30 * H, "c1", "gpt-5-codex", 2_000, 5),
        ];
        let mut asked = ask(UsageGrouping::Day, "UTC");
        asked.by = UsageBy::parse("day,agent").unwrap();
        let report = run(&asked, &[], &responses, &[], &Windows::new());
        let keys: Vec<_> = report.rows.iter().map(|r| (r.key.clone().unwrap(), r.subkey.clone().unwrap())).collect();
        assert_eq!(
            keys,
            [
                ("1970-01-01".into(), "claude".into()),
                ("1970-01-01".into(), "codex".into()),
                ("1970-01-02".into(), "codex".into())
            ]
        );
        assert_eq!(report.rows[0].agent, Some(Provider::Claude));
        let subtotals: Vec<_> = report.subtotals.iter().map(|r| (r.key.clone().unwrap(), r.responses)).collect();
        assert_eq!(subtotals, [("1970-01-01".into(), 3), ("1970-01-02".into(), 1)]);
        assert_eq!(report.subtotals[0].agents, [Provider::Claude, Provider::Codex], "a day of two agents names both");
        assert_eq!(report.subtotals[0].agent, None);
        // One model under two spellings is one label, its ids kept.
        assert_eq!(report.rows[0].models, ["claude-sonnet-4-5"]);
        assert_eq!(report.rows[0].model_ids, ["anthropic/claude-sonnet-4.5", "claude-sonnet-4-5-20250929"]);
        // Claude records no reasoning: beside Codex's, that column is partial, never a whole.
        assert_eq!(report.subtotals[0].partial_columns.get("reasoningOutputTokens"), Some(&2));
        assert!(report.rows[0].partial_columns.is_empty(), "one agent alone is not mixed");
        assert!(report.issues.contains(&"partial".to_owned()), "{:?}", report.issues);
        // The newest first, and only the latest day.
        asked.order = UsageOrder::Desc;
        asked.last = Some(1);
        let newest = run(&asked, &[], &responses, &[], &Windows::new());
        assert_eq!(newest.rows.iter().map(|r| r.key.clone().unwrap()).collect::<Vec<_>>(), ["1970-01-02"]);
        assert_eq!((newest.rows_left_out, newest.totals.responses), (1, 4), "--last leaves rows out, not usage");
    }

    #[test]
    fn sessions_carry_their_agent_project_and_span_and_come_by_first_activity() {
        let responses = [
            response(5 * H, "s1", Some("claude-sonnet-4-5"), 1, 1),
            response(9 * H, "s1", Some("claude-sonnet-4-5"), 1, 1),
            codex(2 * H, "s1", "gpt-5-codex", 1, 0),
        ];
        let report = run(&ask(UsageGrouping::Session, "UTC"), &[], &responses, &[], &Windows::new());
        let rows: Vec<_> = report
            .rows
            .iter()
            .map(|r| (r.key.clone().unwrap(), r.agent, r.first_at_utc.clone().unwrap(), r.last_at_utc.clone().unwrap()))
            .collect();
        assert_eq!(
            rows,
            [
                ("s1".into(), Some(Provider::Codex), format_unix_ms(2 * H), format_unix_ms(2 * H)),
                ("s1".into(), Some(Provider::Claude), format_unix_ms(5 * H), format_unix_ms(9 * H)),
            ],
            "two agents' sessions of one id are two rows, by their first activity"
        );
        assert_eq!(report.rows[1].project.as_deref(), Some("-home-me-bee"));
    }
}
