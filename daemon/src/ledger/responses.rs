//! Provider responses, the ledger's token evidence. A response is one
//! provider answer under its provider identity (Claude: `requestId`, else
//! `message.id`; Codex: `response_id`, else the rollout's own order), stored
//! once globally whichever file, session or producer brought it: a
//! transcript line, or Claude Code's own OpenTelemetry (which knows the
//! request id only).
//!
//! Logs write one response several times while it streams, and copy it into
//! other sessions' files when a session is resumed or forked. Each distinct
//! write is kept (append-only); a reader merges the writes of one identity
//! into one response with the most complete counters, the time and session
//! of its first write, and `final` once any write was read from a log that
//! had moved past it (or gone quiet).

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, params};

use crate::ledger::rollup::Range;
use crate::ledger::store::Columns;
use crate::storage::sqlite;

/// The provider identity a stored key names. A Claude transcript's key is
/// `message.id` and `requestId` ([`bee_proto::usage::claude_response_key`]);
/// the request id alone names the response, so a write that knows only it
/// (Claude Code's OpenTelemetry) is the same response. A key without a
/// request id is the message id alone.
pub fn identity(provider: Provider, key: &str) -> &str {
    match provider {
        Provider::Claude => match key.rsplit_once('\u{1f}') {
            Some((_, request)) if !request.is_empty() => request,
            _ => key,
        },
        Provider::Codex => key,
    }
}

/// [`ResponseWrite::key_hash`] of a write of `provider` keyed `key`.
fn key_hash(provider: Provider, key: &str) -> i64 {
    crate::ledger::logs::response_hash(&[provider.as_str().as_bytes(), b"\x1f", identity(provider, key).as_bytes()])
}

/// Columns of a `response` write, in the order its checksum covers them.
pub const RESPONSE_COLUMNS: Columns = Columns {
    base: "digest, key_hash, provider, response_key, session_id, at_utc, at_ms, model,
     input_tokens, cached_input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens,
     reasoning_output_tokens, total_tokens, context_tokens, context_window, final",
    grown: "",
};
const RESPONSE_COLUMN_COUNT: usize = RESPONSE_COLUMNS.count();

/// One write of a response, as a log reader found it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseWrite {
    pub provider: Provider,
    /// The provider identity (see the module doc).
    pub key: String,
    pub session_id: Option<String>,
    pub at_utc: String,
    pub model: Option<String>,
    pub tokens: Counters,
    pub context_tokens: Option<u64>,
    pub context_window: Option<u64>,
    /// The log had moved past this write (or was quiet): its stream is over.
    pub is_final: bool,
}

impl ResponseWrite {
    /// 63 bits naming the response (provider and provider id): the
    /// integer the store finds a response's writes by. Writes of different
    /// responses that share it are told apart by their keys when read.
    pub fn key_hash(&self) -> i64 {
        key_hash(self.provider, &self.key)
    }

    /// The same write read again (another pass, the same line) has the same
    /// digest and is stored once; a fuller or final write, or a copy in
    /// another session's file, is another write.
    /// 63 bits of a name-based UUID: the store's key is (time, digest).
    pub fn digest(&self) -> i64 {
        // Each counter as its value + 1, 0 for unreported: no two sets of
        // counters spell the same bytes.
        let mut counters = [0u8; 7 * 8];
        for (slot, value) in counters.chunks_exact_mut(8).zip(self.tokens.values()) {
            slot.copy_from_slice(&value.map_or(0, |v| v.saturating_add(1)).to_le_bytes());
        }
        // A copy in another session's file is kept as that session's write,
        // so which session a response belongs to never depends on which
        // file was read first.
        crate::ledger::logs::response_hash(&[
            self.provider.as_str().as_bytes(),
            b"\x1f",
            self.key.as_bytes(),
            b"\x1f",
            &counters,
            &[u8::from(self.is_final), 0x1f],
            self.session_id.as_deref().unwrap_or("").as_bytes(),
        ])
    }

    /// Bee's bounds on one response's figures: a write outside them is a
    /// broken or hostile line, never stored.
    pub fn is_valid(&self) -> bool {
        let counters = self.tokens.values().into_iter().chain([self.context_tokens, self.context_window]);
        let texts = [Some(self.key.as_str()), self.session_id.as_deref(), self.model.as_deref()];
        counters.flatten().all(|n| n <= bee_proto::ledger::bounds::MAX_CALL_TOKENS)
            && texts.into_iter().flatten().all(|t| t.len() <= 4_096)
            && !self.key.is_empty()
            && bee_proto::time::parse_rfc3339_ms(&self.at_utc).is_some()
    }

    /// This write made ready for the store: its time, digest, key hash
    /// and checksum computed (off the writer's thread, when ingestion
    /// prepares it); `None` when its time does not parse.
    pub(crate) fn prepare(self) -> Option<Prepared> {
        let at_ms = bee_proto::time::parse_rfc3339_ms(&self.at_utc)?;
        let mut prepared = Prepared {
            digest: self.digest(),
            key_hash: self.key_hash(),
            provider: self.provider.as_str(),
            at_ms,
            crc: 0,
            write: self,
        };
        prepared.crc = sqlite::values_crc_grown(prepared.stored(), RESPONSE_COLUMNS.base_count());
        Some(prepared)
    }
}

/// A write ready for the store (see [`ResponseWrite::prepare`]).
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) write: ResponseWrite,
    pub(crate) at_ms: i64,
    pub(crate) digest: i64,
    key_hash: i64,
    provider: &'static str,
    crc: i64,
}

impl Prepared {
    /// The values a write is stored as, in [`RESPONSE_COLUMNS`]' order (its
    /// checksum's): read in place, since every write of a pass is
    /// checksummed and bound.
    fn stored(&self) -> [ValueRef<'_>; RESPONSE_COLUMN_COUNT] {
        fn text(text: Option<&str>) -> ValueRef<'_> {
            text.map_or(ValueRef::Null, |text| ValueRef::Text(text.as_bytes()))
        }
        fn number(number: Option<u64>) -> ValueRef<'static> {
            number.map_or(ValueRef::Null, |n| ValueRef::Integer(sqlite::sql_integer(n)))
        }
        let w = &self.write;
        let [input, cached, creation, read, output, reasoning, total] = w.tokens.values().map(number);
        [
            ValueRef::Integer(self.digest),
            ValueRef::Integer(self.key_hash),
            ValueRef::Text(self.provider.as_bytes()),
            ValueRef::Text(w.key.as_bytes()),
            text(w.session_id.as_deref()),
            ValueRef::Text(w.at_utc.as_bytes()),
            ValueRef::Integer(self.at_ms),
            text(w.model.as_deref()),
            input,
            cached,
            creation,
            read,
            output,
            reasoning,
            total,
            number(w.context_tokens),
            number(w.context_window),
            ValueRef::Integer(i64::from(w.is_final)),
        ]
    }

    /// Writes [`Prepared::insert`] appends with one statement: a statement
    /// run costs about as much as a row it inserts, so rows go in together.
    pub(crate) const ROWS_PER_INSERT: usize = 16;

    /// The statement [`Prepared::insert`] binds for `rows` writes, prepared
    /// once per batch.
    pub(crate) fn statement(tx: &Connection, rows: usize) -> rusqlite::Result<rusqlite::CachedStatement<'_>> {
        tx.prepare_cached(&RESPONSE_COLUMNS.insert_rows_sql("response", rows, "ON CONFLICT DO NOTHING"))
    }

    /// Appends `writes` with `statement` ([`Prepared::statement`] for their
    /// number), each unless the same write is stored; how many were new.
    /// Bound value by value: the one writer of a pass does this for every
    /// response.
    pub(crate) fn insert(writes: &[&Prepared], statement: &mut rusqlite::Statement<'_>) -> rusqlite::Result<usize> {
        let values = writes.iter().flat_map(|write| write.stored().into_iter().chain([ValueRef::Integer(write.crc)]));
        for (index, value) in values.enumerate() {
            statement.raw_bind_parameter(index + 1, rusqlite::types::ToSqlOutput::Borrowed(value))?;
        }
        statement.raw_execute()
    }
}

/// The counters a provider reports for every response: a response missing
/// one of them is a part of unknown size in any sum.
pub(crate) fn reports_all(provider: Provider, t: &Counters) -> bool {
    match provider {
        Provider::Claude => [t.input_tokens, t.cache_creation_input_tokens, t.cache_read_input_tokens, t.output_tokens]
            .iter()
            .all(Option::is_some),
        Provider::Codex => [t.input_tokens, t.cached_input_tokens, t.output_tokens, t.reasoning_output_tokens]
            .iter()
            .all(Option::is_some),
    }
}

/// `tokens` with their total where the provider left it out: Claude never
/// reports one, so it is the sum of its four counters (as ccusage sums it);
/// Codex's is input + output (cached input and reasoning are parts of them),
/// which its `exec --json` output omits. Only when every part is known.
pub(crate) fn with_total(provider: Provider, mut tokens: Counters) -> Counters {
    if tokens.total_tokens.is_some() {
        return tokens;
    }
    tokens.total_tokens = match provider {
        Provider::Claude if reports_all(Provider::Claude, &tokens) => [
            tokens.input_tokens,
            tokens.cache_creation_input_tokens,
            tokens.cache_read_input_tokens,
            tokens.output_tokens,
        ]
        .into_iter()
        .flatten()
        .try_fold(0u64, u64::checked_add),
        Provider::Codex => tokens.input_tokens.zip(tokens.output_tokens).and_then(|(i, o)| i.checked_add(o)),
        Provider::Claude => None,
    };
    tokens
}

/// One response, its writes merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub provider: Provider,
    /// Time of its first write.
    pub at_ms: i64,
    /// Session of its first write (the session that asked for it).
    pub session_id: Option<String>,
    pub model: Option<String>,
    /// The most complete write's counters. Claude reports no total: it is
    /// the sum of the four counters Claude reports, when all four are known.
    pub tokens: Counters,
    /// A counter the provider reports is missing.
    pub partial: bool,
    /// No write of it was final yet.
    pub pending: bool,
}

/// A stored write, as read back.
#[derive(Debug, Clone)]
struct StoredWrite {
    provider: Provider,
    /// [`ResponseWrite::key_hash`]: writes of one response share it.
    key_hash: i64,
    key: String,
    session_id: Option<String>,
    at_ms: i64,
    model: Option<String>,
    tokens: Counters,
    is_final: bool,
}

/// Which of two writes of one response is the fuller: the provider-wide
/// rule (more counters, then more output), then more of everything.
fn fullness(t: &Counters) -> ((usize, u64), u64) {
    (t.completeness(), t.values().into_iter().flatten().fold(0u64, u64::saturating_add))
}

/// One write, borrowed, as the merge reads it: a stored write read back,
/// or a prepared one a pass is committing.
#[derive(Clone, Copy)]
pub(crate) struct WriteView<'a> {
    provider: Provider,
    key_hash: i64,
    key: &'a str,
    at_ms: i64,
    session_id: Option<&'a str>,
    model: Option<&'a str>,
    tokens: &'a Counters,
    is_final: bool,
}

impl StoredWrite {
    fn view(&self) -> WriteView<'_> {
        WriteView {
            provider: self.provider,
            key_hash: self.key_hash,
            key: &self.key,
            at_ms: self.at_ms,
            session_id: self.session_id.as_deref(),
            model: self.model.as_deref(),
            tokens: &self.tokens,
            is_final: self.is_final,
        }
    }
}

impl Prepared {
    pub(crate) fn view(&self) -> WriteView<'_> {
        let write = &self.write;
        WriteView {
            provider: write.provider,
            key_hash: self.key_hash,
            key: &write.key,
            at_ms: self.at_ms,
            session_id: write.session_id.as_deref(),
            model: write.model.as_deref(),
            tokens: &write.tokens,
            is_final: write.is_final,
        }
    }
}

/// The writes of one response folded together, in whatever order they
/// arrive: the same response whichever order a store or a pass saw them.
/// Borrowed from the writes until [`Merged::finish`]: most responses fold
/// several writes.
#[derive(Debug, Clone)]
struct Merged<'a> {
    provider: Provider,
    /// The first write's time and session (earliest, then least session).
    first: (i64, Option<&'a str>),
    /// The fullest write: ties go to the later write.
    fullest: (((usize, u64), u64), i64, Option<&'a str>),
    tokens: &'a Counters,
    model: Option<&'a str>,
    /// The model of the earliest write that named one.
    first_model: Option<(i64, Option<&'a str>, &'a str)>,
    is_final: bool,
}

impl<'a> Merged<'a> {
    fn new(write: WriteView<'a>) -> Merged<'a> {
        let order = (write.at_ms, write.session_id);
        Merged {
            provider: write.provider,
            first: order,
            fullest: (fullness(write.tokens), order.0, order.1),
            tokens: write.tokens,
            model: write.model,
            first_model: write.model.map(|model| (order.0, order.1, model)),
            is_final: write.is_final,
        }
    }

    fn absorb(&mut self, write: WriteView<'a>) {
        let order = (write.at_ms, write.session_id);
        if order < self.first {
            self.first = order;
        }
        let fuller = (fullness(write.tokens), order.0, order.1);
        if fuller >= self.fullest {
            self.fullest = fuller;
            self.tokens = write.tokens;
            self.model = write.model;
        }
        if let Some(model) = write.model
            && self.first_model.is_none_or(|(at, session, _)| order < (at, session))
        {
            self.first_model = Some((order.0, order.1, model));
        }
        self.is_final |= write.is_final;
    }

    fn finish(self) -> Response {
        let tokens = with_total(self.provider, self.tokens.clone());
        Response {
            provider: self.provider,
            at_ms: self.first.0,
            session_id: self.first.1.map(str::to_owned),
            model: self.model.or(self.first_model.map(|(_, _, model)| model)).map(str::to_owned),
            partial: !reports_all(self.provider, &tokens),
            pending: !self.is_final,
            tokens,
        }
    }
}

fn merge(writes: &[WriteView<'_>]) -> Vec<Response> {
    // Writes of one response side by side: by their hash first, an integer
    // comparison that nearly always decides. Sorted as indices, since
    // moving writes costs more than comparing them.
    let same_response = |a: &WriteView<'_>, b: &WriteView<'_>| {
        a.key_hash
            .cmp(&b.key_hash)
            .then_with(|| (a.provider, identity(a.provider, a.key)).cmp(&(b.provider, identity(b.provider, b.key))))
    };
    let mut by_response: Vec<usize> = (0..writes.len()).collect();
    by_response.sort_unstable_by(|&a, &b| same_response(&writes[a], &writes[b]));
    let mut responses: Vec<Response> = by_response
        .chunk_by(|&a, &b| same_response(&writes[a], &writes[b]).is_eq())
        .filter_map(|group| {
            let (first, rest) = group.split_first()?;
            let mut merged = Merged::new(writes[*first]);
            for &write in rest {
                merged.absorb(writes[write]);
            }
            Some(merged.finish())
        })
        .collect();
    // In the order views read them: by first write, then session.
    let mut in_order: Vec<usize> = (0..responses.len()).collect();
    in_order.sort_by(|&a, &b| {
        let (a, b) = (&responses[a], &responses[b]);
        (a.at_ms, &a.session_id).cmp(&(b.at_ms, &b.session_id))
    });
    permute(&mut responses, in_order);
    responses
}

fn merge_stored(writes: &[StoredWrite]) -> Vec<Response> {
    merge(&writes.iter().map(StoredWrite::view).collect::<Vec<_>>())
}

/// Reorders `items` so that item `i` is the one that was at `order[i]`;
/// `order` is a permutation of the indices.
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    // Each cycle of the permutation is walked once, by swaps.
    for start in 0..order.len() {
        let mut at = start;
        while order[at] != start {
            let from = order[at];
            items.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
    }
}

/// The response writes one ingestion pass committed. When the pass began
/// on a store without responses, these are every write the store holds,
/// and the pass settles the aggregates from them instead of reading back
/// what it just wrote.
#[derive(Debug, Default)]
pub(crate) struct Held {
    writes: Vec<StoredWrite>,
    /// Response writes the pass inserted (rows new to the store).
    pub(crate) written: u64,
}

impl Held {
    /// More writes than this are not held: the pass settles from the
    /// store, and first-pass memory stays bounded.
    const MOST: usize = 150_000;

    /// Takes in a committed batch's writes (see [`Held::has_room`]).
    pub(crate) fn absorb(&mut self, writes: impl Iterator<Item = Prepared>) {
        self.writes.extend(writes.map(|Prepared { write, at_ms, key_hash, .. }| StoredWrite {
            provider: write.provider,
            key_hash,
            key: write.key,
            session_id: write.session_id,
            at_ms,
            model: write.model,
            tokens: write.tokens,
            is_final: write.is_final,
        }));
    }

    /// The responses of the writes held and of `more` (a batch being
    /// committed), merged as a read of the store merges them.
    pub(crate) fn responses_with<'a>(&'a self, more: impl Iterator<Item = &'a Prepared>) -> Vec<Response> {
        let views: Vec<WriteView<'_>> =
            self.writes.iter().map(StoredWrite::view).chain(more.map(Prepared::view)).collect();
        merge(&views)
    }

    /// Whether `more` writes can be held too.
    pub(crate) fn has_room(&self, more: usize) -> bool {
        self.writes.len().saturating_add(more) <= Held::MOST
    }
}

/// The responses first written in `range`, all their writes merged, and the
/// record ids of writes that fail their checksum (left out: not evidence).
pub fn load(conn: &Connection, range: Range) -> rusqlite::Result<(Vec<Response>, Vec<String>)> {
    load_with_earlier(conn, range).map(|(responses, damaged, _)| (responses, damaged))
}

/// [`load`], and the first-write times of responses written in `range`
/// that were first written before it.
pub fn load_with_earlier(conn: &Connection, range: Range) -> rusqlite::Result<(Vec<Response>, Vec<String>, Vec<i64>)> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {}, crc FROM response
         WHERE key_hash IN (SELECT key_hash FROM response WHERE at_ms >= ?1 AND at_ms < ?2)",
        RESPONSE_COLUMNS.base
    ))?;
    let (writes, damaged) = read_writes(&mut statement, range)?;
    let (responses, earlier): (Vec<Response>, Vec<Response>) =
        merge_stored(&writes).into_iter().filter(|r| r.at_ms < range.until_ms).partition(|r| r.at_ms >= range.since_ms);
    Ok((responses, damaged, earlier.into_iter().map(|r| r.at_ms).collect()))
}

/// [`load`], or on a store from before responses, its ingested calls as
/// one final write each.
pub fn load_any(conn: &Connection, version: u32, range: Range) -> rusqlite::Result<(Vec<Response>, Vec<String>)> {
    if version >= crate::ledger::rollup::RESPONSE_SCHEMA {
        return load(conn, range);
    }
    // Laid out as a response write, with no checksum to check (these
    // records predate the response table; their own is checked as calls).
    let mut statement = conn.prepare_cached(
        "SELECT 0, 0, provider, record_id, session_id, started_at_utc, started_at_ms, model,
                input_tokens, cached_input_tokens, cache_creation_input_tokens, cache_read_input_tokens,
                output_tokens, reasoning_output_tokens, total_tokens, NULL, NULL, 1, NULL
         FROM call WHERE source = 'ingested' AND started_at_ms >= ?1 AND started_at_ms < ?2",
    )?;
    let (writes, _) = read_writes(&mut statement, range)?;
    Ok((merge_stored(&writes), Vec::new()))
}

/// The writes a statement selecting [`RESPONSE_COLUMNS`] and `crc` over
/// `range` finds, and the digests of those that fail their checksum.
fn read_writes(
    statement: &mut rusqlite::CachedStatement<'_>,
    range: Range,
) -> rusqlite::Result<(Vec<StoredWrite>, Vec<String>)> {
    let mut rows = statement.query(params![range.since_ms, range.until_ms])?;
    let (mut writes, mut damaged) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next()? {
        if !RESPONSE_COLUMNS.verifies(row, 0)? {
            damaged.push(row.get::<_, i64>(0)?.to_string());
            continue;
        }
        let Some(provider) = Provider::from_name(row.get_ref(2)?.as_str()?) else { continue };
        writes.push(StoredWrite {
            provider,
            key_hash: row.get(1)?,
            key: row.get(3)?,
            session_id: row.get(4)?,
            at_ms: row.get(6)?,
            model: row.get(7)?,
            tokens: crate::ledger::rollup::counters_at(row, 8)?,
            is_final: row.get(17)?,
        });
    }
    Ok((writes, damaged))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(key: &str, session: &str, at_ms: i64, output: Option<u64>, is_final: bool) -> StoredWrite {
        StoredWrite {
            provider: Provider::Claude,
            key_hash: key_hash(Provider::Claude, key),
            key: key.to_owned(),
            session_id: Some(session.to_owned()),
            at_ms,
            model: Some("claude-opus-4-1".to_owned()),
            tokens: Counters {
                input_tokens: Some(10),
                cache_creation_input_tokens: Some(0),
                cache_read_input_tokens: Some(100),
                output_tokens: output,
                ..Counters::default()
            },
            is_final,
        }
    }

    #[test]
    fn writes_of_one_response_merge_wherever_they_sit_and_copies_count_once() {
        // A, B, A, C as streaming writes them, then A copied into a resumed session.
        let writes = vec![
            write("A", "s1", 1_000, Some(112), true),
            write("B", "s1", 1_500, Some(40), true),
            write("A", "s1", 1_001, Some(607), true),
            write("C", "s1", 2_000, Some(9), false),
            write("A", "s2", 9_000, Some(607), true),
        ];
        let responses = merge_stored(&writes);
        assert_eq!(responses.len(), 3);
        let a = &responses[0];
        assert_eq!((a.tokens.output_tokens, a.session_id.as_deref(), a.at_ms), (Some(607), Some("s1"), 1_000));
        assert_eq!(a.tokens.total_tokens, Some(10 + 100 + 607), "Claude's total is the sum of its four counters");
        assert!(!a.partial && !a.pending);
        assert!(responses[2].pending, "C has no final write yet");
    }

    /// Whatever order a pass or a store hands the writes over in, the
    /// merged response is the same: ties of time and fullness included.
    #[test]
    fn the_merge_does_not_depend_on_the_order_of_the_writes() {
        let mut unnamed = write("A", "s0", 1_000, Some(50), false);
        unnamed.model = None;
        let writes = || {
            vec![
                write("A", "s1", 1_000, Some(50), false),
                write("A", "s2", 1_000, Some(50), true),
                unnamed.clone(),
                write("A", "s3", 5_000, Some(20), true),
            ]
        };
        let expected = merge_stored(&writes());
        assert_eq!(expected.len(), 1);
        assert_eq!(expected[0].session_id.as_deref(), Some("s0"), "the first write: earliest, then least session");
        let mut order: Vec<usize> = (0..4).collect();
        // Every permutation of four writes (Heap's algorithm).
        let mut c = [0usize; 4];
        let mut i = 0;
        while i < 4 {
            if c[i] < i {
                order.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
                let all = writes();
                let permuted: Vec<StoredWrite> = order.iter().map(|&n| all[n].clone()).collect();
                assert_eq!(merge_stored(&permuted), expected, "order {order:?}");
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
    }

    /// Digests and key hashes are stored: the SHA-1 that computes them now
    /// gives exactly what the whole-name UUID gave before it.
    #[test]
    fn hashes_and_checksums_keep_the_values_earlier_versions_stored() {
        let uuid_hash = |name: &[u8]| {
            (uuid::Uuid::new_v5(&crate::ledger::logs::RESPONSE_NAMESPACE, name).as_u64_pair().0 >> 1) as i64
        };
        let long = "k".repeat(300);
        let cases = [
            (Provider::Claude, "msg_1\u{1f}req_1", Some("s1"), Some(607), true),
            (Provider::Claude, "msg_only", None, None, false),
            (Provider::Codex, long.as_str(), Some("sé\u{1f}ssion"), Some(0), true),
            (Provider::Codex, "", Some(""), Some(u64::MAX), false),
        ];
        for (provider, key, session, output, is_final) in cases {
            let write = ResponseWrite {
                provider,
                key: key.to_owned(),
                session_id: session.map(str::to_owned),
                at_utc: "2026-11-30T10:00:00.000Z".to_owned(),
                model: session.map(|_| "claude-x".to_owned()),
                tokens: Counters { input_tokens: Some(3), output_tokens: output, ..Counters::default() },
                context_tokens: output,
                context_window: None,
                is_final,
            };
            // The checksum verifies as the write is stored.
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(&format!("CREATE TABLE response ({})", RESPONSE_COLUMNS.base.to_owned() + ", crc"))
                .unwrap();
            let prepared = write.clone().prepare().unwrap();
            assert_eq!(Prepared::insert(&[&prepared], &mut Prepared::statement(&conn, 1).unwrap()).unwrap(), 1);
            let select = format!("SELECT {}, crc FROM response", RESPONSE_COLUMNS.base);
            assert!(conn.query_row(&select, [], |row| RESPONSE_COLUMNS.verifies(row, 0)).unwrap(), "{key}");
            let mut name = format!("{}\u{1f}{}", provider.as_str(), identity(provider, key)).into_bytes();
            assert_eq!(write.key_hash(), uuid_hash(&name), "{key}");
            name = format!("{}\u{1f}{key}\u{1f}", provider.as_str()).into_bytes();
            for value in write.tokens.values() {
                name.extend_from_slice(&value.map_or(0, |v| v.saturating_add(1)).to_le_bytes());
            }
            name.push(u8::from(is_final));
            name.push(0x1f);
            name.extend_from_slice(session.unwrap_or("").as_bytes());
            assert_eq!(write.digest(), uuid_hash(&name), "{key}");
        }
    }

    #[test]
    fn permute_puts_each_item_where_the_order_says() {
        let mut random = crate::ledger::Random(7);
        for len in [0usize, 1, 2, 5, 64, 257] {
            let mut order: Vec<usize> = (0..len).collect();
            for i in (1..len).rev() {
                order.swap(i, random.below(i as u64 + 1) as usize);
            }
            let items: Vec<usize> = (0..len).map(|i| i * 10).collect();
            let expected: Vec<usize> = order.iter().map(|&i| items[i]).collect();
            let mut permuted = items.clone();
            permute(&mut permuted, order);
            assert_eq!(permuted, expected, "{len}");
        }
    }

    #[test]
    fn a_response_missing_a_counter_is_partial_and_has_no_total() {
        let responses = merge_stored(&[write("A", "s1", 1, None, true)]);
        assert!(responses[0].partial);
        assert_eq!(responses[0].tokens.total_tokens, None);
    }
}
