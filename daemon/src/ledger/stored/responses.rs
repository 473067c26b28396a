//! Provider responses, the ledger's token evidence. A response is one
//! provider answer under its provider identity (Claude: `requestId`, else
//! `message.id`; Codex: `response_id`, else the rollout's own order), stored
//! once globally whichever file, session or producer brought it: a
//! transcript line, or Claude Code's own OpenTelemetry (which knows the
//! request id only).
//!
//! Logs write one response several times while it streams, and copy it into
//! other sessions' files when a session is resumed or forked. Each distinct
//! write is kept (append-only: since schema 8 in packs, see
//! [`crate::ledger::stored::pack`]; rows stored before stay rows and are read with
//! them); a reader merges the writes of one identity
//! into one response with the most complete counters, the time of its first
//! write, and `final` once any write was read from a log that had moved past
//! it (or gone quiet).
//!
//! A response belongs to the session that made it ([`owner_of`]): copies
//! keep the original's times to the millisecond (Claude Code's fork, OpenCode's
//! `--fork`, Qwen Code's `--fork-session`, pi's `--fork`), so the earliest
//! write alone cannot tell, and session ids say nothing of age (OpenCode's
//! sort newest first, Claude Code's and Qwen Code's are random). An agent's
//! reader marks a write `copied` where its records show it: written before
//! its session began, or marked as copied. The sessions holding copies count
//! them apart ([`Response::copied_into`]).
//!
//! A write also carries the figure its agent wrote beside it in its own
//! unit (a cost, Kiro's credits, Warp's unsplit tokens, Aider's estimate),
//! where the agent writes one ([`ResponseWrite::own_figure`]): the response's is that of
//! its fullest write that carries one.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use bee_proto::ledger::{CounterShape, Provider};
use bee_proto::usage::Counters;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, params};

use crate::ledger::FastMap;
use crate::ledger::stored::pack::{self, Entry, PackedWrite};
use crate::ledger::stored::schema::{Columns, HOUR_MS, PACK_SCHEMA, Range, hour_of};
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
        _ => key,
    }
}

/// [`ResponseWrite::key_hash`] of a write of `provider` keyed `key`.
fn key_hash(provider: Provider, key: &str) -> i64 {
    response_hash(&[provider.as_str().as_bytes(), b"\x1f", identity(provider, key).as_bytes()])
}

/// Namespace of response write digests.
pub(crate) const RESPONSE_NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6265_6500_7265_7370_6f6e_7365_2d76_3100);

/// 63 bits of the name-based UUID of the name `parts` spell (one after
/// another) in [`RESPONSE_NAMESPACE`]: the high half of
/// `Uuid::new_v5(&RESPONSE_NAMESPACE, name)`, shifted right by one, so
/// that stored digests keep their values. Ingestion hashes every response
/// write twice; this SHA-1 uses the CPU's SHA instructions where it has them
/// and needs no copy of the name.
pub(crate) fn response_hash(parts: &[&[u8]]) -> i64 {
    use sha1::Digest;
    let mut hasher = sha1::Sha1::new();
    hasher.update(RESPONSE_NAMESPACE.as_bytes());
    for part in parts {
        hasher.update(part);
    }
    let hash = hasher.finalize();
    let mut high = [0u8; 8];
    high.copy_from_slice(&hash[..8]);
    // The version nibble, as a v5 UUID carries it.
    high[6] = (high[6] & 0x0f) | 0x50;
    (u64::from_be_bytes(high) >> 1) as i64
}

/// Columns of a `response` write, in the order its checksum covers them.
pub const RESPONSE_COLUMNS: Columns = Columns {
    base: "digest, key_hash, provider, response_key, session_id, at_utc, at_ms, model,
     input_tokens, cached_input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens,
     reasoning_output_tokens, total_tokens, context_tokens, context_window, final",
    grown: "",
};

pub use crate::ledger::stored::validate::{MAX_AGENT_COST_USD, is_own_figure, own_figure};

/// Whether `provider`'s records carry a figure of its own beside each
/// response, in its unit ([`Provider::own_unit`]): a cost (OpenCode's and
/// Kilo's message `cost`, pi's and OpenClaw's `usage.cost.total`), Kiro's
/// credits, Warp's unsplit tokens, Aider's own count of its tokens. A response of it without one has an
/// unknown figure, never 0. Other agents write none per response (Claude
/// Code's cost lines are its provider's cost, per session; Crush's and
/// Hermes's are per session), and a view shows none for them.
pub fn writes_own_figure(provider: Provider) -> bool {
    matches!(
        provider,
        Provider::OpenCode
            | Provider::Kilo
            | Provider::Pi
            | Provider::OpenClaw
            | Provider::Kiro
            | Provider::Warp
            | Provider::Aider
    )
}

/// One write of a response, as a log reader found it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseWrite {
    pub provider: Provider,
    /// The provider identity (see the module doc).
    pub key: String,
    /// Shared by the writes a reader found naming the same session (or
    /// model): a file's writes nearly always name one session and a few
    /// models, and every later step reads these names for every write.
    pub session_id: Option<Arc<str>>,
    /// Unix milliseconds of the log line that wrote it.
    pub at_ms: i64,
    pub model: Option<Arc<str>>,
    pub tokens: Counters,
    pub context_tokens: Option<u64>,
    pub context_window: Option<u64>,
    /// The log had moved past this write (or was quiet): its stream is over.
    pub is_final: bool,
    /// The figure the agent itself wrote beside the response, in its own
    /// unit ([`Provider::own_unit`]: its cost in dollars — its own estimate
    /// or its provider's figure —, Kiro's credits, Warp's tokens of input
    /// and output together, Aider's own count of them), within Bee's bounds ([`own_figure`]); `None`
    /// where it wrote none. Never a price Bee worked out, never the
    /// provider's reported cost.
    pub own_figure: Option<f64>,
    /// The record shows that its session holds a copy of a response
    /// another session made: a fork or resume copied it in (written before
    /// the session began, or marked as copied by the agent).
    pub copied: bool,
}

/// Digest flags beside `final`: set only on writes that carry them, so a
/// write without either keeps the digest it always had.
const DIGEST_COPIED: u8 = 0b10;
const DIGEST_AGENT_COST: u8 = 0b100;

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
        // file was read first. Its mark and the agent's cost are part of
        // what the write says: a file read again by a reader that now sees
        // them stores the write that carries them.
        let flags = u8::from(self.is_final)
            | if self.copied { DIGEST_COPIED } else { 0 }
            | if self.own_figure.is_some() { DIGEST_AGENT_COST } else { 0 };
        let cost = self.own_figure.map(f64::to_le_bytes);
        response_hash(&[
            self.provider.as_str().as_bytes(),
            b"\x1f",
            self.key.as_bytes(),
            b"\x1f",
            &counters,
            &[flags],
            cost.as_ref().map_or(&[][..], |cost| &cost[..]),
            b"\x1f",
            self.session_id.as_deref().unwrap_or("").as_bytes(),
        ])
    }

    /// Bee's bounds on one response's figures and time: a write outside
    /// them is a broken or hostile line, never stored.
    pub fn is_valid(&self) -> bool {
        let counters = self.tokens.values().into_iter().chain([self.context_tokens, self.context_window]);
        let texts = [Some(self.key.as_str()), self.session_id.as_deref(), self.model.as_deref()];
        counters.flatten().all(|n| n <= bee_proto::ledger::bounds::MAX_CALL_TOKENS)
            && texts.into_iter().flatten().all(|t| t.len() <= bee_proto::ledger::bounds::MAX_TEXT_BYTES)
            && !self.key.is_empty()
            && bee_proto::time::spells_as_rfc3339(self.at_ms)
            && self.own_figure.is_none_or(|figure| is_own_figure(self.provider, figure))
    }

    /// This write made ready for the store: its digest and key hash
    /// computed (off the writer's thread, when ingestion prepares it).
    pub(crate) fn prepare(self) -> Prepared {
        Prepared { digest: self.digest(), key_hash: self.key_hash(), write: self }
    }
}

/// A write ready for the store (see [`ResponseWrite::prepare`]).
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) write: ResponseWrite,
    pub(crate) digest: i64,
    key_hash: i64,
}

impl Prepared {
    /// This write, borrowed: as a pack holds it, and as the merge reads it.
    pub(crate) fn entry(&self) -> Entry<'_> {
        let w = &self.write;
        Entry {
            provider: w.provider,
            key_hash: self.key_hash,
            key: &w.key,
            session_id: w.session_id.as_ref(),
            model: w.model.as_ref(),
            at_ms: w.at_ms,
            tokens: &w.tokens,
            context_tokens: w.context_tokens,
            context_window: w.context_window,
            is_final: w.is_final,
            own_figure: w.own_figure,
            copied: w.copied,
        }
    }
}

/// Writes from now on: packs, and one identity row per write, which finds
/// a response's writes by its key hash and keeps a write read again from
/// being stored twice. Rows stored before keep their place (and their own
/// checksums); their identities are copied so that a write read again is
/// known whichever form holds it.
pub const PACK_MIGRATION: &str = r#"
    CREATE TABLE response_pack (
        id       INTEGER PRIMARY KEY,
        hour_ms  INTEGER NOT NULL,
        writes   INTEGER NOT NULL,
        -- Which providers' writes it holds (`provider_bit`): which providers
        -- responded in whole hours, without decoding their packs.
        providers INTEGER NOT NULL,
        body     BLOB NOT NULL,
        crc      INTEGER NOT NULL
    ) STRICT;
    -- Also answers which providers responded, and how many writes are
    -- stored, without reading the packs themselves.
    CREATE INDEX response_pack_hour ON response_pack (hour_ms, providers, writes);
    CREATE TABLE response_write (
        key_hash  INTEGER NOT NULL,
        at_ms     INTEGER NOT NULL,
        digest    INTEGER NOT NULL,
        -- NULL: a row of `response`, stored before packs.
        pack      INTEGER,
        PRIMARY KEY (key_hash, at_ms, digest)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO response_write (key_hash, at_ms, digest, pack) SELECT key_hash, at_ms, digest, NULL FROM response;
    CREATE TRIGGER response_pack_no_update BEFORE UPDATE ON response_pack BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER response_pack_no_delete BEFORE DELETE ON response_pack BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER response_write_no_update BEFORE UPDATE ON response_write BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
    CREATE TRIGGER response_write_no_delete BEFORE DELETE ON response_write BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
"#;

/// Identity rows one statement inserts: a statement run costs about as
/// much as a row it inserts, so rows go in together.
const IDENTITIES_PER_INSERT: usize = 64;

/// A write's identity and its place among a commit's writes. The store
/// sorts and binds these rather than the writes: the writes lie in memory
/// in the order they were read, so reaching each in key order cost a cache
/// miss a comparison.
#[derive(Debug, Clone, Copy)]
struct Identity {
    key_hash: i64,
    at_ms: i64,
    digest: i64,
    index: usize,
}

impl Identity {
    /// The identity table's key.
    fn key(&self) -> (i64, i64, i64) {
        (self.key_hash, self.at_ms, self.digest)
    }
}

/// A commit's writes as the identity table keys them: their identities
/// sorted as the table is (its pages are each written once) with the same
/// write given twice kept once, and the hours they fall in.
struct Keyed {
    ids: Vec<Identity>,
    hours: Vec<i64>,
}

impl Keyed {
    fn of(writes: &[&Prepared]) -> Keyed {
        let mut ids: Vec<Identity> = writes
            .iter()
            .enumerate()
            .map(|(index, w)| Identity { key_hash: w.key_hash, at_ms: w.write.at_ms, digest: w.digest, index })
            .collect();
        ids.sort_unstable_by_key(Identity::key);
        ids.dedup_by_key(|id| id.key());
        let mut hours: Vec<i64> = ids.iter().map(|id| hour_of(id.at_ms)).collect();
        hours.sort_unstable();
        hours.dedup();
        Keyed { ids, hours }
    }

    /// The pack the write at `at_ms` goes into, after the store's `last`:
    /// each hour's pack is numbered before it is written, as the
    /// identities name it.
    fn pack_of(&self, last: i64, at_ms: i64) -> i64 {
        last + 1 + self.hours.partition_point(|&hour| hour < hour_of(at_ms)) as i64
    }
}

/// One hour's pack, encoded and checksummed.
#[derive(Debug)]
struct PackRow {
    id: i64,
    hour_ms: i64,
    writes: i64,
    providers: i64,
    body: Vec<u8>,
    crc: i64,
}

/// The packs of the `fresh` writes, in pack order ([`in_pack_order`]).
fn pack_rows(fresh: &[&Prepared], keyed: &Keyed, last: i64) -> Result<Vec<PackRow>, pack::PackError> {
    fresh
        .chunk_by(|a, b| hour_of(a.write.at_ms) == hour_of(b.write.at_ms))
        .map(|hour| {
            let hour_ms = hour_of(hour[0].write.at_ms);
            let entries: Vec<Entry<'_>> = hour.iter().map(|w| w.entry()).collect();
            touch(&entries);
            let (id, writes) = (keyed.pack_of(last, hour_ms), hour.len() as i64);
            let providers = hour.iter().fold(0, |mask, w| mask | provider_bit(w.write.provider));
            let body = pack::encode(hour_ms, &entries)?;
            let crc = pack_crc(id, hour_ms, writes, providers, &body);
            Ok(PackRow { id, hour_ms, writes, providers, body, crc })
        })
        .collect()
}

/// The writes `ids` name, in pack order: by time, then digest and key hash.
fn in_pack_order<'w>(mut ids: Vec<Identity>, writes: &[&'w Prepared]) -> Vec<&'w Prepared> {
    ids.sort_unstable_by_key(|id| (id.at_ms, id.digest, id.key_hash));
    ids.iter().map(|id| writes[id.index]).collect()
}

/// A commit's packs encoded before its identities go in, on the
/// assumption that every write is new to a store whose last pack is
/// `last` (a first pass's): another thread encodes them while the writer
/// inserts the identities, and the store takes them only when the
/// assumption held.
#[derive(Debug)]
pub(crate) struct PacksAhead {
    last: i64,
    rows: Vec<PackRow>,
}

impl PacksAhead {
    /// The packs of `writes` (the commit's, in the order given to
    /// [`store`]) should every one be new after pack `last`; `None` when
    /// one cannot be packed (the store then says why).
    pub(crate) fn encode(writes: &[&Prepared], last: i64) -> Option<PacksAhead> {
        let keyed = Keyed::of(writes);
        let fresh = in_pack_order(keyed.ids.clone(), writes);
        let rows = pack_rows(&fresh, &keyed, last).ok()?;
        Some(PacksAhead { last, rows })
    }
}

/// The number of the store's last pack (0 for none).
pub(crate) fn last_pack(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT COALESCE(MAX(id), 0) FROM response_pack", [], |row| row.get(0))
}

/// Stores one commit's `writes`, each unless the same write (time and
/// digest, which names its response) is stored: their identities, then one
/// pack per hour of those that were new, encoded here unless `ahead` gives
/// them encoded for exactly these. Returns the new ones in time order, and
/// how many of `writes` were not.
pub(crate) fn store<'w>(
    tx: &Connection,
    writes: Vec<&'w Prepared>,
    ahead: impl FnOnce() -> Option<PacksAhead>,
) -> rusqlite::Result<(Vec<&'w Prepared>, u64)> {
    let given = writes.len();
    let keyed = Keyed::of(&writes);
    let last = last_pack(tx)?;
    let mut fresh = Vec::with_capacity(keyed.ids.len());
    let mut together = tx.prepare_cached(&format!(
        "INSERT INTO response_write (key_hash, at_ms, digest, pack) VALUES {} ON CONFLICT DO NOTHING",
        vec!["(?, ?, ?, ?)"; IDENTITIES_PER_INSERT].join(", ")
    ))?;
    let mut alone = tx.prepare_cached(
        "INSERT INTO response_write (key_hash, at_ms, digest, pack) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
    )?;
    let mut stored_in =
        tx.prepare_cached("SELECT pack FROM response_write WHERE key_hash = ?1 AND at_ms = ?2 AND digest = ?3")?;
    let pack_of = |at_ms: i64| keyed.pack_of(last, at_ms);
    let (statements, rest) = keyed.ids.as_chunks::<IDENTITIES_PER_INSERT>();
    for rows in statements {
        for (at, id) in rows.iter().enumerate() {
            for (column, value) in [id.key_hash, id.at_ms, id.digest, pack_of(id.at_ms)].into_iter().enumerate() {
                together.raw_bind_parameter(at * 4 + column + 1, value)?;
            }
        }
        match together.raw_execute()? {
            0 => {}
            IDENTITIES_PER_INSERT => fresh.extend_from_slice(rows),
            // Which were new: those whose identity names this commit's pack.
            _ => {
                for id in rows {
                    let pack: Option<i64> =
                        stored_in.query_row(params![id.key_hash, id.at_ms, id.digest], |row| row.get(0))?;
                    if pack == Some(pack_of(id.at_ms)) {
                        fresh.push(*id);
                    }
                }
            }
        }
    }
    for id in rest {
        if alone.execute(params![id.key_hash, id.at_ms, id.digest, pack_of(id.at_ms)])? == 1 {
            fresh.push(*id);
        }
    }
    let all_new = fresh.len() == keyed.ids.len();
    let fresh = in_pack_order(fresh, &writes);
    let rows = match ahead() {
        Some(ahead) if all_new && ahead.last == last => ahead.rows,
        // Bee's own bounds (`ResponseWrite::is_valid`) keep every write packable.
        _ => pack_rows(&fresh, &keyed, last).map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))?,
    };
    let mut insert_pack =
        tx.prepare_cached(&format!("INSERT INTO response_pack ({PACK_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"))?;
    for PackRow { id, hour_ms, writes, providers, body, crc } in rows {
        insert_pack.execute(params![id, hour_ms, writes, providers, body, crc])?;
    }
    let duplicates = (given - fresh.len()) as u64;
    Ok((fresh, duplicates))
}

/// Reads a byte of everything encoding `entries` will read (their counters
/// and strings) in one short loop first. A pack visits its writes in time
/// order, scattered over memory in the order they were read; a short loop
/// lets the core wait for many of those cache misses at once, where the
/// encoder, with its long loop body, would wait for each in turn.
fn touch(entries: &[Entry<'_>]) {
    let first = |text: Option<&str>| text.and_then(|t| t.as_bytes().first().copied()).map_or(0, u64::from);
    let read = entries.iter().fold(0u64, |acc, e| {
        acc ^ e.tokens.output_tokens.unwrap_or(0)
            ^ first(Some(e.key))
            ^ first(e.session_id.map(|s| &**s))
            ^ first(e.model.map(|m| &**m))
    });
    std::hint::black_box(read);
}

/// A pack's columns, in the order its checksum covers them (then `crc`).
const PACK_COLUMNS: &str = "id, hour_ms, writes, providers, body, crc";

/// A pack's checksum: its number, hour, count, providers and body.
fn pack_crc(id: i64, hour_ms: i64, writes: i64, providers: i64, body: &[u8]) -> i64 {
    sqlite::values_crc([
        ValueRef::Integer(id),
        ValueRef::Integer(hour_ms),
        ValueRef::Integer(writes),
        ValueRef::Integer(providers),
        ValueRef::Blob(body),
    ])
}

/// Every provider has a bit of the 63 a mask holds.
const _: () = assert!(Provider::ALL.len() <= 63);

/// A provider's bit in a pack's `providers`.
fn provider_bit(provider: Provider) -> i64 {
    1 << provider.number()
}

/// Whether a response has every counter its agent keeps
/// ([`Provider::reports`]): a response missing one is a part of unknown
/// size in any sum.
pub(crate) fn reports_all(provider: Provider, t: &Counters) -> bool {
    let kept = provider.reports();
    let cache_reads = match provider.counter_shape() {
        CounterShape::Anthropic => t.cache_read_input_tokens,
        CounterShape::OpenAi => t.cached_input_tokens,
    };
    t.input_tokens.is_some()
        && t.output_tokens.is_some()
        && (!kept.cache_writes || t.cache_creation_input_tokens.is_some())
        && (!kept.cache_reads || cache_reads.is_some())
        && (!kept.reasoning || t.reasoning_output_tokens.is_some())
}

/// `tokens` with their total where the provider left it out: Claude never
/// reports one, so it is the sum of its four counters (as ccusage sums it),
/// as for every agent of Anthropic's shape; Codex's is input + output
/// (cached input and reasoning are parts of them), which its `exec --json`
/// output omits, as for every agent of OpenAI's shape. Only when every
/// part is known.
pub(crate) fn with_total(provider: Provider, mut tokens: Counters) -> Counters {
    if tokens.total_tokens.is_some() {
        return tokens;
    }
    tokens.total_tokens = match provider.counter_shape() {
        CounterShape::Anthropic if !reports_all(provider, &tokens) => None,
        _ => sum_of_parts(provider, &tokens),
    };
    tokens
}

/// `tokens` with a total for summing into a view's row: where a part is
/// unknown, the sum of the parts that are known, so the row's columns add
/// up to its total, which the row's `partial` count marks as a lower
/// bound; `None` only when no part is known.
pub(crate) fn with_known_total(provider: Provider, tokens: &Counters) -> Counters {
    let mut tokens = with_total(provider, tokens.clone());
    if tokens.total_tokens.is_none() {
        tokens.total_tokens = parts(provider, &tokens).iter().flatten().copied().reduce(u64::saturating_add);
    }
    tokens
}

/// A response's parts by its agent's shape: Anthropic's four; OpenAI's
/// input and output (its cached input and reasoning are inside them),
/// the last two places empty.
fn parts(provider: Provider, t: &Counters) -> [Option<u64>; 4] {
    match provider.counter_shape() {
        CounterShape::Anthropic => {
            [t.input_tokens, t.cache_creation_input_tokens, t.cache_read_input_tokens, t.output_tokens]
        }
        CounterShape::OpenAi => [t.input_tokens, t.output_tokens, None, None],
    }
}

/// What a response's parts add up to, by its agent's shape (see
/// [`with_total`]); `None` when a part is unknown. A cache counter the
/// agent never keeps is no part, not an unknown one.
pub(crate) fn sum_of_parts(provider: Provider, t: &Counters) -> Option<u64> {
    let parts = match provider.counter_shape() {
        CounterShape::Anthropic => {
            let kept = provider.reports();
            let unless_kept = |counter: Option<u64>, kept: bool| if kept { counter } else { counter.or(Some(0)) };
            [
                t.input_tokens,
                unless_kept(t.cache_creation_input_tokens, kept.cache_writes),
                unless_kept(t.cache_read_input_tokens, kept.cache_reads),
                t.output_tokens,
            ]
        }
        CounterShape::OpenAi => [t.input_tokens, t.output_tokens, Some(0), Some(0)],
    };
    parts.into_iter().try_fold(0u64, |sum, part| sum.checked_add(part?))
}

/// One response, its writes merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub provider: Provider,
    /// Time of its first write.
    pub at_ms: i64,
    /// The session that made it (that asked for it): see [`owner_of`].
    /// Shared by the responses of one merge that name the same session (as
    /// the model is): a pass's responses name a few hundred sessions and a
    /// handful of models, not one copy each.
    pub session_id: Option<Arc<str>>,
    pub model: Option<Arc<str>>,
    /// The most complete write's counters. Claude reports no total: it is
    /// the sum of the four counters Claude reports, when all four are known.
    pub tokens: Counters,
    /// A counter the provider reports is missing.
    pub partial: bool,
    /// No write of it was final yet.
    pub pending: bool,
    /// The cost the agent wrote for it: that of its fullest write that
    /// carries one, a write not marked copied before any copy (Kilo writes
    /// a fork's copy at $0: the fork paid nothing for it); ties: the later
    /// write, then the larger cost.
    pub own_figure: Option<f64>,
    /// The other sessions that hold a copy of it, in name order: each
    /// counts it as a copied response, never as its own. Empty (no
    /// allocation) for nearly every response.
    pub copied_into: Vec<Arc<str>>,
}

impl Default for Response {
    /// A response of no counters (for building one in a test).
    fn default() -> Response {
        Response {
            provider: Provider::Claude,
            at_ms: 0,
            session_id: None,
            model: None,
            tokens: Counters::default(),
            partial: false,
            pending: false,
            own_figure: None,
            copied_into: Vec::new(),
        }
    }
}

/// How full a write's counters are: see [`fullness`].
type Fullness = ((usize, u64), u64);

/// Which of two writes of one response is the fuller: the provider-wide
/// rule (more counters, then more output), then more of everything.
fn fullness(t: &Counters) -> Fullness {
    (t.completeness(), t.values().into_iter().flatten().fold(0u64, u64::saturating_add))
}

/// A session or model name, borrowed from a write's shared copy.
type Name<'a> = &'a Arc<str>;

/// The writes of one response folded together, in whatever order they
/// arrive: the same response whichever order a store or a pass saw them.
/// Borrowed from the writes until [`Merged::finish`]: most responses fold
/// several writes.
#[derive(Debug, Clone)]
struct Merged<'a> {
    provider: Provider,
    /// The first write's time and session (earliest, then least session):
    /// the response's time, and its session while every write names one.
    first: (i64, Option<Name<'a>>),
    /// The session of the write the fold began with.
    lead: Option<Name<'a>>,
    /// Some write names another session than `lead`: which of them made
    /// the response is [`owner_of`]'s to say.
    sessions_differ: bool,
    /// The fullest write: ties go to the later write.
    fullest: (Fullness, i64, Option<Name<'a>>),
    tokens: &'a Counters,
    model: Option<Name<'a>>,
    /// The model of the earliest write that named one.
    first_model: Option<(i64, Option<Name<'a>>, Name<'a>)>,
    /// The write whose cost the agent's is: (not a copy, fullness, time,
    /// the cost's bits), ordered so that any order of writes agrees.
    cost: Option<(bool, Fullness, i64, u64)>,
    is_final: bool,
}

impl<'a> Merged<'a> {
    fn new(write: Entry<'a>) -> Merged<'a> {
        let order = (write.at_ms, write.session_id);
        let fullness = fullness(write.tokens);
        Merged {
            provider: write.provider,
            first: order,
            lead: write.session_id,
            sessions_differ: false,
            fullest: (fullness, order.0, order.1),
            tokens: write.tokens,
            model: write.model,
            first_model: write.model.map(|model| (order.0, order.1, model)),
            cost: write.own_figure.map(|usd| (!write.copied, fullness, order.0, usd.to_bits())),
            is_final: write.is_final,
        }
    }

    fn absorb(&mut self, write: Entry<'a>) {
        let order = (write.at_ms, write.session_id);
        self.sessions_differ |= write.session_id != self.lead;
        if order < self.first {
            self.first = order;
        }
        let fullness = fullness(write.tokens);
        let fuller = (fullness, order.0, order.1);
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
        // Costs are not negative: their bits order as they do.
        if let Some(usd) = write.own_figure {
            let costed = (!write.copied, fullness, order.0, usd.to_bits());
            if self.cost.is_none_or(|cost| costed > cost) {
                self.cost = Some(costed);
            }
        }
        self.is_final |= write.is_final;
    }

    /// The response, its names the fullest or first write's own copies;
    /// its session `owner`'s when its writes name several.
    fn finish(self, owner: Option<Owner<'a>>) -> Response {
        let tokens = with_total(self.provider, self.tokens.clone());
        let (session, copied_into) = match owner {
            Some(owner) => (owner.session, owner.copied_into),
            None => (self.first.1, Vec::new()),
        };
        Response {
            provider: self.provider,
            at_ms: self.first.0,
            session_id: session.cloned(),
            model: self.model.or(self.first_model.map(|(_, _, model)| model)).cloned(),
            partial: !reports_all(self.provider, &tokens),
            pending: !self.is_final,
            tokens,
            own_figure: self.cost.map(|(.., bits)| f64::from_bits(bits)),
            copied_into,
        }
    }
}

/// The session that made a response whose writes name several, and the
/// others, which hold copies of it.
#[derive(Debug)]
struct Owner<'a> {
    session: Option<Name<'a>>,
    copied_into: Vec<Arc<str>>,
}

/// A write's session, whether it was marked copied, and its time: what
/// [`owner_of`] weighs.
type Holding<'a> = (Option<Name<'a>>, bool, i64);

/// Which of the sessions holding a response made it: one that did not copy
/// it (none of its writes of it is marked `copied`), the earliest to write
/// it, then the least by name; among sessions that all copied it (the one
/// that made it was never read), the same order. A session with a write
/// marked copied copied the response, whatever its other writes say: a
/// file read again by a newer reader adds the marked write beside the one
/// stored before without the mark. `holdings` is scratch space, sorted here.
fn owner_of<'a>(holdings: &mut [Holding<'a>]) -> Owner<'a> {
    holdings.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut best: Option<(bool, i64, Option<Name<'a>>)> = None;
    let mut sessions = 0;
    for held in holdings.chunk_by(|a, b| a.0 == b.0) {
        sessions += 1;
        let copied = held.iter().any(|&(_, copied, _)| copied);
        let first = held.iter().map(|&(_, _, at)| at).min().unwrap_or(i64::MAX);
        let this = (copied, first, held[0].0);
        if best.is_none_or(|best| this < best) {
            best = Some(this);
        }
    }
    let session = best.and_then(|(_, _, session)| session);
    let mut copied_into = Vec::with_capacity(sessions - 1);
    for held in holdings.chunk_by(|a, b| a.0 == b.0) {
        if let Some(copy) = held[0].0.filter(|&copy| Some(copy) != session) {
            copied_into.push(copy.clone());
        }
    }
    Owner { session, copied_into }
}

/// A write as the merge reads it: packed in the store, or prepared by a
/// pass. The merge borrows each where it lies, never a copy of them all.
trait AsEntry {
    fn as_entry(&self) -> Entry<'_>;
}

impl AsEntry for PackedWrite {
    fn as_entry(&self) -> Entry<'_> {
        self.entry()
    }
}

impl AsEntry for &Prepared {
    fn as_entry(&self) -> Entry<'_> {
        self.entry()
    }
}

fn merge(writes: &[impl AsEntry]) -> Vec<Response> {
    let (place, members) = group_by_response(writes);
    let count = place.iter().filter(|place| !matches!(place, Place::Folded)).count();
    // Finished where they lie, in the writes' order (reading each write's
    // strings in the order they were read), then put in order.
    let mut responses: Vec<Response> = Vec::with_capacity(count);
    // Each response's first write among `writes`: its identity breaks ties.
    let mut leads: Vec<u32> = Vec::with_capacity(count);
    // Scratch space for the few responses held by several sessions.
    let mut holdings: Vec<Holding<'_>> = Vec::new();
    for (at, write) in writes.iter().enumerate() {
        let write = write.as_entry();
        let (one, owner) = match place[at] {
            Place::Folded => continue,
            Place::Alone => (Merged::new(write), None),
            Place::Leads(group) => {
                let mut one = Merged::new(write);
                for &other in &members[group][1..] {
                    one.absorb(writes[other as usize].as_entry());
                }
                let owner = one.sessions_differ.then(|| {
                    holdings.clear();
                    holdings.extend(members[group].iter().map(|&other| {
                        let write = writes[other as usize].as_entry();
                        (write.session_id, write.copied, write.at_ms)
                    }));
                    owner_of(&mut holdings)
                });
                (one, owner)
            }
        };
        responses.push(one.finish(owner));
        leads.push(at as u32);
    }
    // In the order views read them: by first write, then session; ties as
    // the identities order them.
    let key = |response: u32| -> ResponseKey<'_> {
        let write = writes[leads[response as usize] as usize].as_entry();
        (write.key_hash, write.provider, identity(write.provider, write.key))
    };
    let ranks = session_ranks(responses.iter().map(|response| response.session_id.as_deref()));
    let mut order: Vec<(i64, u32, i64, u32)> = responses
        .iter()
        .zip(ranks)
        .enumerate()
        .map(|(at, (response, rank))| (response.at_ms, rank, key(at as u32).0, at as u32))
        .collect();
    order.sort_unstable_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)).then_with(|| key(a.3).cmp(&key(b.3))));
    permute(&mut responses, order.into_iter().map(|(.., at)| at as usize).collect());
    responses
}

/// Each item's session ranked among the distinct sessions in name order
/// (`None` first), so that sorting by session compares integers: a pass's
/// responses share a few sessions, and equal times are common. Items in a
/// row mostly share their session, which is then looked up once.
fn session_ranks<'a>(sessions: impl Iterator<Item = Option<&'a str>>) -> Vec<u32> {
    let mut ids: FastMap<Option<&str>, u32> = FastMap::default();
    let mut last: Option<(Option<&str>, u32)> = None;
    let found: Vec<u32> = sessions
        .map(|session| {
            let id = match last {
                Some((seen, id)) if seen == session => id,
                _ => {
                    let next = ids.len() as u32;
                    *ids.entry(session).or_insert(next)
                }
            };
            last = Some((session, id));
            id
        })
        .collect();
    let mut by_name: Vec<(Option<&str>, u32)> = ids.into_iter().collect();
    by_name.sort_unstable();
    let mut rank = vec![0u32; by_name.len()];
    for (place, (_, id)) in by_name.iter().enumerate() {
        rank[*id as usize] = place as u32;
    }
    found.into_iter().map(|id| rank[id as usize]).collect()
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

/// What orders responses that share a first write's time and session:
/// (key hash, provider, identity).
type ResponseKey<'a> = (i64, Provider, &'a str);

/// Where a write stands among the writes of its response.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// The only write of its response.
    Alone,
    /// The first of several: the group's index.
    Leads(usize),
    /// Folded into the group's first write.
    Folded,
}

/// Each write's place, and the groups of writes of one response (each in
/// the order given). Writes are sorted as (hash, index) pairs, which
/// touches no write: most responses have one write in a pass.
fn group_by_response(writes: &[impl AsEntry]) -> (Vec<Place>, Vec<Vec<u32>>) {
    let mut by_hash: Vec<(i64, u32)> =
        writes.iter().enumerate().map(|(at, w)| (w.as_entry().key_hash, at as u32)).collect();
    by_hash.sort_unstable();
    let same_response = |a: Entry<'_>, b: Entry<'_>| {
        (a.provider, identity(a.provider, a.key)) == (b.provider, identity(b.provider, b.key))
    };
    let mut place = vec![Place::Alone; writes.len()];
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for run in by_hash.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
        // Two identities that share a hash are told apart by the identity.
        let mut left: Vec<u32> = run.iter().map(|&(_, at)| at).collect();
        while let Some(&first) = left.first() {
            let (group, rest): (Vec<u32>, Vec<u32>) = left
                .iter()
                .partition(|&&at| same_response(writes[first as usize].as_entry(), writes[at as usize].as_entry()));
            left = rest;
            if group.len() > 1 {
                for &other in &group[1..] {
                    place[other as usize] = Place::Folded;
                }
                place[first as usize] = Place::Leads(groups.len());
                groups.push(group);
            }
        }
    }
    (place, groups)
}

/// Prepared writes (a pass's, held in memory) merged as a read of the
/// store merges them.
pub(crate) fn merge_prepared(writes: &[&Prepared]) -> Vec<Response> {
    merge(writes)
}

fn merge_stored(writes: &[PackedWrite]) -> Vec<Response> {
    merge(writes)
}

/// The responses first written in `range` of a store at `version`, all
/// their writes merged, and the writes that fail their checksum (left out:
/// not evidence): a row by its digest, a pack as `pack <id>`.
pub fn load(conn: &Connection, version: u32, range: Range) -> rusqlite::Result<(Vec<Response>, Vec<String>)> {
    load_with_earlier(conn, version, range).map(|(responses, damaged, _)| (responses, damaged))
}

/// [`load`], and the first-write times of responses written in `range`
/// that were first written before it.
pub fn load_with_earlier(
    conn: &Connection,
    version: u32,
    range: Range,
) -> rusqlite::Result<(Vec<Response>, Vec<String>, Vec<i64>)> {
    let mut found = Found::default();
    // Rows stored before packs: every row of each response with one in `range`.
    let mut rows = conn.prepare_cached(&format!(
        "SELECT {}, crc FROM response
         WHERE key_hash IN (SELECT key_hash FROM response WHERE at_ms >= ?1 AND at_ms < ?2)",
        RESPONSE_COLUMNS.base
    ))?;
    found.rows(&mut rows, params![range.since_ms, range.until_ms])?;
    let rows_of: HashSet<i64> = found.writes.iter().map(|w| w.key_hash).collect();
    if version >= PACK_SCHEMA {
        let mut packs = conn.prepare_cached(&packs_of_hours())?;
        found.packs(&mut packs, params![hour_of(range.since_ms), range.until_ms])?;
        // The responses: writes first stored elsewhere (another hour, or a
        // later pass's pack) are found by their identities.
        let keys: HashSet<i64> = found.writes.iter().filter(|w| range.contains(w.at_ms)).map(|w| w.key_hash).collect();
        let mut where_stored = conn.prepare_cached("SELECT pack FROM response_write WHERE key_hash = ?1")?;
        let (mut more_packs, mut more_rows) = (BTreeSet::new(), Vec::new());
        for &key in &keys {
            for pack in where_stored.query_map([key], |row| row.get::<_, Option<i64>>(0))? {
                match pack? {
                    Some(pack) if !found.read_packs.contains(&pack) => _ = more_packs.insert(pack),
                    None if !rows_of.contains(&key) => more_rows.push(key),
                    _ => {}
                }
            }
        }
        let mut pack = conn.prepare_cached(&format!("SELECT {PACK_COLUMNS} FROM response_pack WHERE id = ?1"))?;
        for id in more_packs {
            found.packs(&mut pack, [id])?;
        }
        more_rows.sort_unstable();
        more_rows.dedup();
        let mut rows_of_key =
            conn.prepare_cached(&format!("SELECT {}, crc FROM response WHERE key_hash = ?1", RESPONSE_COLUMNS.base))?;
        for key in more_rows {
            found.rows(&mut rows_of_key, [key])?;
        }
        found.writes.retain(|w| keys.contains(&w.key_hash));
    }
    let (responses, earlier): (Vec<Response>, Vec<Response>) = merge_stored(&found.writes)
        .into_iter()
        .filter(|r| r.at_ms < range.until_ms)
        .partition(|r| r.at_ms >= range.since_ms);
    Ok((responses, found.damaged, earlier.into_iter().map(|r| r.at_ms).collect()))
}

/// [`load`], or on a store from before responses, its ingested calls as
/// one final write each.
pub fn load_any(conn: &Connection, version: u32, range: Range) -> rusqlite::Result<(Vec<Response>, Vec<String>)> {
    if version >= crate::ledger::stored::schema::RESPONSE_SCHEMA {
        return load(conn, version, range);
    }
    // Laid out as a response write, with no checksum to check (these
    // records predate the response table; their own is checked as calls).
    let mut statement = conn.prepare_cached(
        "SELECT 0, 0, provider, record_id, session_id, started_at_utc, started_at_ms, model,
                input_tokens, cached_input_tokens, cache_creation_input_tokens, cache_read_input_tokens,
                output_tokens, reasoning_output_tokens, total_tokens, NULL, NULL, 1, NULL
         FROM call WHERE source = 'ingested' AND started_at_ms >= ?1 AND started_at_ms < ?2",
    )?;
    let mut found = Found::default();
    found.rows(&mut statement, params![range.since_ms, range.until_ms])?;
    Ok((merge_stored(&found.writes), Vec::new()))
}

/// The packs of the hours starting in `[?1, ?2)`.
fn packs_of_hours() -> String {
    format!("SELECT {PACK_COLUMNS} FROM response_pack WHERE hour_ms >= ?1 AND hour_ms < ?2")
}

/// The providers with a response write in `range` of a store at `version`;
/// a pack read for it that fails its checksum is counted in `damaged` (it
/// may hold a provider not named).
pub(crate) fn providers_in(
    conn: &Connection,
    version: u32,
    range: Range,
    damaged: &mut u64,
) -> rusqlite::Result<Vec<Provider>> {
    let mut mask = 0;
    if version >= PACK_SCHEMA {
        // Whole hours by their packs' providers; the hours the range cuts
        // by their writes' times, read only when they can still add one.
        let first_full = hour_of(range.since_ms.saturating_add(HOUR_MS - 1));
        let last_full = hour_of(range.until_ms).max(first_full);
        let mut whole =
            conn.prepare_cached("SELECT DISTINCT providers FROM response_pack WHERE hour_ms >= ?1 AND hour_ms < ?2")?;
        for providers in whole.query_map(params![first_full, last_full], |row| row.get::<_, i64>(0))? {
            mask |= providers?;
        }
        let every = Provider::ALL.iter().fold(0, |mask, &provider| mask | provider_bit(provider));
        if mask != every {
            let mut packed = Found::default();
            let mut packs = conn.prepare_cached(&packs_of_hours())?;
            for (since, until) in [(hour_of(range.since_ms), first_full), (last_full, range.until_ms)] {
                packed.packs(&mut packs, params![since, until])?;
            }
            *damaged += packed.damaged.len() as u64;
            for write in packed.writes.iter().filter(|w| range.contains(w.at_ms)) {
                mask |= provider_bit(write.provider);
            }
        }
    }
    // Rows stored before packs: each provider found by its first one there,
    // along the table's time order.
    let mut row_of = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM response WHERE at_ms >= ?1 AND at_ms < ?2 AND provider = ?3)")?;
    let mut found = Vec::new();
    for &provider in Provider::ALL {
        if mask & provider_bit(provider) != 0
            || row_of.query_row(params![range.since_ms, range.until_ms, provider.as_str()], |row| row.get(0))?
        {
            found.push(provider);
        }
    }
    Ok(found)
}

/// Writes read back, and what failed its checksum.
#[derive(Default)]
struct Found {
    writes: Vec<PackedWrite>,
    damaged: Vec<String>,
    read_packs: HashSet<i64>,
}

impl Found {
    /// The rows a statement selecting [`RESPONSE_COLUMNS`] and `crc` finds.
    fn rows(
        &mut self,
        statement: &mut rusqlite::CachedStatement<'_>,
        params: impl rusqlite::Params,
    ) -> rusqlite::Result<()> {
        let mut rows = statement.query(params)?;
        while let Some(row) = rows.next()? {
            if !RESPONSE_COLUMNS.verifies(row, 0)? {
                self.damaged.push(row.get::<_, i64>(0)?.to_string());
                continue;
            }
            let Some(provider) = Provider::from_name(row.get_ref(2)?.as_str()?) else { continue };
            self.writes.push(PackedWrite {
                provider,
                key_hash: row.get(1)?,
                key: row.get(3)?,
                session_id: row.get::<_, Option<String>>(4)?.map(Into::into),
                at_ms: row.get(6)?,
                model: row.get::<_, Option<String>>(7)?.map(Into::into),
                tokens: crate::ledger::stored::schema::counters_at(row, 8)?,
                context_tokens: crate::ledger::stored::schema::count_at(row, 15)?,
                context_window: crate::ledger::stored::schema::count_at(row, 16)?,
                is_final: row.get(17)?,
                // Rows were stored before either was read.
                own_figure: None,
                copied: false,
            });
        }
        Ok(())
    }

    /// The packs a statement selecting a pack's columns finds, each once.
    fn packs(
        &mut self,
        statement: &mut rusqlite::CachedStatement<'_>,
        params: impl rusqlite::Params,
    ) -> rusqlite::Result<()> {
        let mut rows = statement.query(params)?;
        while let Some(row) = rows.next()? {
            let (id, hour_ms, count, providers): (i64, i64, i64, i64) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            if !self.read_packs.insert(id) {
                continue;
            }
            let body = row.get_ref(4)?.as_blob()?;
            let checked = row.get::<_, i64>(5)? == pack_crc(id, hour_ms, count, providers, body);
            let holds = |writes: &[PackedWrite]| {
                writes.len() as i64 == count
                    && writes.iter().fold(0, |mask, w| mask | provider_bit(w.provider)) == providers
            };
            match pack::decode(hour_ms, body) {
                Ok(writes) if checked && holds(&writes) => self.writes.extend(writes),
                decoded => {
                    if let Err(err) = decoded {
                        tracing::warn!(pack = id, error = %err, "a response pack does not decode");
                    }
                    self.damaged.push(format!("pack {id}"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// A part of unknown size leaves a response's sum unknown in either
    /// shape, never counted as 0; a row's lower bound adds only what is
    /// known; a response with no counter at all has no total.
    #[test]
    fn an_unknown_part_is_never_summed_as_zero() {
        use bee_proto::usage::Counters;
        let output_unknown = Counters {
            input_tokens: Some(10),
            cached_input_tokens: Some(2),
            reasoning_output_tokens: Some(0),
            ..Counters::default()
        };
        assert_eq!(super::sum_of_parts(Provider::Codex, &output_unknown), None);
        assert_eq!(super::with_total(Provider::Codex, output_unknown.clone()).total_tokens, None);
        assert_eq!(super::with_known_total(Provider::Codex, &output_unknown).total_tokens, Some(10));
        for provider in [Provider::Copilot, Provider::Crush, Provider::Claude] {
            assert_eq!(super::with_known_total(provider, &Counters::default()).total_tokens, None, "{provider:?}");
        }
        let no_caches = Counters { input_tokens: Some(5), output_tokens: Some(1), ..Counters::default() };
        assert_eq!(super::sum_of_parts(Provider::Goose, &no_caches), Some(6), "a cache Goose never keeps is no part");
        assert_eq!(super::sum_of_parts(Provider::Claude, &no_caches), None, "one Claude Code keeps is unknown");
    }

    use super::*;
    use crate::ledger::intake::ingest::Held;
    use crate::ledger::stored::evidence::Staged;

    fn write(key: &str, session: &str, at_ms: i64, output: Option<u64>, is_final: bool) -> PackedWrite {
        PackedWrite {
            provider: Provider::Claude,
            key_hash: key_hash(Provider::Claude, key),
            key: key.to_owned(),
            session_id: Some(session.into()),
            at_ms,
            model: Some("claude-opus-4-1".into()),
            tokens: Counters {
                input_tokens: Some(10),
                cache_creation_input_tokens: Some(0),
                cache_read_input_tokens: Some(100),
                output_tokens: output,
                ..Counters::default()
            },
            context_tokens: None,
            context_window: None,
            is_final,
            own_figure: None,
            copied: false,
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

    /// The merge as its rule states it, slowly: writes grouped by response
    /// (provider, identity), folded, its session the one that made it (of
    /// the sessions that did not copy it, if any did not: the earliest to
    /// write it, then the least), the others holding copies, and
    /// stable-sorted by first write, then session, then (hash, provider,
    /// identity).
    fn merged_by_the_rule(writes: &[PackedWrite]) -> Vec<Response> {
        let mut groups: std::collections::BTreeMap<(Provider, &str), Vec<&PackedWrite>> = Default::default();
        for w in writes {
            groups.entry((w.provider, identity(w.provider, &w.key))).or_default().push(w);
        }
        let mut responses: Vec<(Response, (i64, Provider, &str))> = groups
            .into_iter()
            .map(|((provider, identity), group)| {
                let mut merged = Merged::new(group[0].entry());
                group[1..].iter().for_each(|w| merged.absorb(w.entry()));
                let mut response = merged.finish(None);
                let mut sessions: std::collections::BTreeMap<Option<&str>, (bool, i64)> = Default::default();
                for w in &group {
                    let held = sessions.entry(w.session_id.as_deref()).or_insert((false, i64::MAX));
                    *held = (held.0 || w.copied, held.1.min(w.at_ms));
                }
                let made = sessions.iter().map(|(&session, &(copied, at))| (copied, at, session)).min();
                let owner = made.and_then(|(_, _, session)| session);
                response.session_id = owner.map(Into::into);
                response.copied_into =
                    sessions.keys().flatten().filter(|&&s| Some(s) != owner).map(|&s| s.into()).collect();
                (response, (group[0].key_hash, provider, identity))
            })
            .collect();
        responses
            .sort_by(|(a, a_key), (b, b_key)| (a.at_ms, &a.session_id, a_key).cmp(&(b.at_ms, &b.session_id, b_key)));
        responses.into_iter().map(|(response, _)| response).collect()
    }

    #[test]
    fn crowded_writes_merge_and_order_as_the_rule_says() {
        let mut random = crate::ledger::Random(11);
        for round in 0..300 {
            let count = 1 + random.below(60) as usize;
            let writes: Vec<PackedWrite> = (0..count)
                .map(|_| {
                    let key = format!("msg_{}\u{1f}req_{}", random.below(3), random.below(8));
                    let session = format!("s{}", random.below(4));
                    let mut w = write(
                        &key,
                        &session,
                        1_000 * random.below(5) as i64,
                        Some(random.below(900)),
                        random.below(2) == 0,
                    );
                    w.copied = random.below(4) == 0;
                    w.own_figure = [None, Some(0.0), Some(0.25), Some(1.5)][random.below(4) as usize];
                    // Hashes two identities share: told apart by the identity.
                    if random.below(4) == 0 {
                        w.key_hash = 42;
                    }
                    w
                })
                .collect();
            // A hash shared by accident is shared by every write of those responses.
            let shared: HashSet<String> =
                writes.iter().filter(|w| w.key_hash == 42).map(|w| identity(w.provider, &w.key).to_owned()).collect();
            let writes: Vec<PackedWrite> = writes
                .into_iter()
                .map(|mut w| {
                    if shared.contains(identity(w.provider, &w.key)) {
                        w.key_hash = 42;
                    }
                    w
                })
                .collect();
            assert_eq!(merge_stored(&writes), merged_by_the_rule(&writes), "round {round}: {writes:?}");
        }
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
                let permuted: Vec<PackedWrite> = order.iter().map(|&n| all[n].clone()).collect();
                assert_eq!(merge_stored(&permuted), expected, "order {order:?}");
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
    }

    /// Every order of `writes` merges to the same responses.
    fn in_every_order(writes: &[PackedWrite]) -> Vec<Response> {
        let expected = merge_stored(writes);
        let mut order: Vec<usize> = (0..writes.len()).collect();
        let mut c = vec![0usize; writes.len()];
        let mut i = 0;
        // Heap's algorithm.
        while i < writes.len() {
            if c[i] < i {
                order.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
                let permuted: Vec<PackedWrite> = order.iter().map(|&n| writes[n].clone()).collect();
                assert_eq!(merge_stored(&permuted), expected, "order {order:?}");
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        expected
    }

    /// A fork or resume copies a response with its very times into a session
    /// whose id may sort first (OpenCode's newest sessions do; Claude Code's
    /// and Qwen Code's are random): the response stays the session's that
    /// made it, and the copy's session counts it as a copy.
    #[test]
    fn a_response_belongs_to_the_session_that_made_it_whatever_its_copies_are_named() {
        let copy = |key: &str, session: &str, at_ms: i64| PackedWrite {
            copied: true,
            ..write(key, session, at_ms, Some(607), true)
        };
        let owners = |responses: &[Response]| -> Vec<(Option<String>, Vec<String>)> {
            responses
                .iter()
                .map(|r| {
                    (r.session_id.as_deref().map(str::to_owned), r.copied_into.iter().map(|s| s.to_string()).collect())
                })
                .collect()
        };
        let made =
            |session: &str, copies: &[&str]| (Some(session.to_owned()), copies.iter().map(|s| s.to_string()).collect());
        // The original `ses_b`, its fork `ses_a` (sorting first), a fork of the fork.
        let writes = [
            write("A", "ses_b", 1_000, Some(607), true),
            copy("A", "ses_a", 1_000),
            copy("A", "ses_0", 1_000),
            write("B", "ses_a", 2_000, Some(9), true),
            copy("B", "ses_0", 2_000),
        ];
        let responses = in_every_order(&writes);
        assert_eq!(owners(&responses), [made("ses_b", &["ses_0", "ses_a"]), made("ses_a", &["ses_0"])]);
        assert_eq!(responses[0].at_ms, 1_000);
        // Streaming writes of the original, and a copy stored unmarked by an
        // earlier reader beside the marked one a newer reader stored.
        let writes = [
            write("A", "ses_b", 1_000, Some(100), false),
            write("A", "ses_b", 1_200, Some(607), true),
            write("A", "ses_a", 1_000, Some(607), true),
            copy("A", "ses_a", 1_000),
        ];
        let responses = in_every_order(&writes);
        assert_eq!(owners(&responses), [made("ses_b", &["ses_a"])]);
        assert_eq!(responses[0].tokens.output_tokens, Some(607));
        // Only copies were read (the original's log is gone): the earliest
        // of them, then the least; nothing marked: as before, the earliest,
        // then the least.
        let responses = in_every_order(&[copy("A", "s2", 1_000), copy("A", "s3", 900), copy("A", "s1", 1_000)]);
        assert_eq!(owners(&responses), [made("s3", &["s1", "s2"])]);
        let responses =
            in_every_order(&[write("A", "s2", 1_000, Some(1), true), write("A", "s1", 1_000, Some(1), true)]);
        assert_eq!(owners(&responses), [made("s1", &["s2"])]);
        // One session's writes alone: nothing is a copy.
        let responses = in_every_order(&[copy("A", "s2", 1_000), write("A", "s2", 1_001, Some(700), true)]);
        assert_eq!(owners(&responses), [made("s2", &[])]);
    }

    /// The agent's cost of a response is that of its fullest write that
    /// carries one, in any order: a fuller write without one (a store's
    /// write from before costs were read) takes nothing away.
    #[test]
    fn a_responses_agent_cost_is_its_fullest_costed_writes() {
        let costed = |output: u64, at_ms: i64, usd: Option<f64>| PackedWrite {
            own_figure: usd,
            ..write("A", "s1", at_ms, Some(output), true)
        };
        let cost = |writes: &[PackedWrite]| in_every_order(writes)[0].own_figure;
        assert_eq!(cost(&[costed(10, 1_000, Some(0.01)), costed(20, 1_001, Some(0.02))]), Some(0.02));
        assert_eq!(cost(&[costed(10, 1_000, Some(0.01)), costed(20, 1_001, None)]), Some(0.01));
        assert_eq!(
            cost(&[costed(20, 1_000, None), costed(20, 1_000, Some(0.03)), costed(20, 1_000, Some(0.02))]),
            Some(0.03)
        );
        assert_eq!(cost(&[costed(20, 1_000, None)]), None);
        assert_eq!(cost(&[costed(20, 1_000, Some(0.0))]), Some(0.0), "a cost the agent wrote as 0 is its figure");
        // Kilo's fork writes its copy's cost as 0, the copy as full as the original.
        let fork = PackedWrite { copied: true, session_id: Some("ses_a".into()), ..costed(20, 1_000, Some(0.0)) };
        assert_eq!(cost(&[costed(20, 1_000, Some(0.01)), fork.clone()]), Some(0.01));
        let fork = PackedWrite { own_figure: Some(0.5), ..fork };
        assert_eq!(cost(&[costed(20, 1_000, Some(0.01)), fork]), Some(0.01), "the copy's figure is not the response's");
    }

    #[test]
    fn an_agents_figure_outside_bees_bounds_for_its_unit_is_unknown() {
        let cost = |usd| own_figure(Provider::OpenCode, usd);
        for usd in [f64::NAN, f64::INFINITY, -0.01, MAX_AGENT_COST_USD * 2.0] {
            assert_eq!(cost(usd), None, "{usd}");
        }
        assert_eq!(cost(-0.0).map(f64::to_bits), Some(0.0f64.to_bits()));
        assert_eq!(cost(0.0123), Some(0.0123));
        // Kiro's credits may pass a dollar bound; Warp's and Aider's tokens are whole.
        assert_eq!(own_figure(Provider::Kiro, 5_000.25), Some(5_000.25));
        assert_eq!(own_figure(Provider::Kiro, -1.0), None);
        assert_eq!(own_figure(Provider::Warp, 2_500_000.0), Some(2_500_000.0));
        assert_eq!(own_figure(Provider::Warp, 0.5), None, "a token count is whole");
        assert_eq!(own_figure(Provider::Warp, 2e10), None);
        assert_eq!(own_figure(Provider::Aider, 2_354.0), Some(2_354.0));
        assert_eq!(own_figure(Provider::Aider, 2_354.5), None, "an estimate of tokens is whole too");
        let write = ResponseWrite { own_figure: Some(f64::NAN), ..logged("msg_1\u{1f}req_1", "s", HOUR, 7, true) };
        assert!(!write.is_valid());
    }

    /// Digests and key hashes are stored: the SHA-1 that computes them now
    /// gives exactly what the whole-name UUID gave before it.
    #[test]
    fn hashes_keep_the_values_earlier_versions_stored() {
        let uuid_hash = |name: &[u8]| (uuid::Uuid::new_v5(&RESPONSE_NAMESPACE, name).as_u64_pair().0 >> 1) as i64;
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
                session_id: session.map(Into::into),
                at_ms: bee_proto::time::parse_rfc3339_ms("2026-11-30T10:00:00.000Z").unwrap(),
                model: session.map(|_| "claude-x".into()),
                tokens: Counters { input_tokens: Some(3), output_tokens: output, ..Counters::default() },
                context_tokens: output,
                context_window: None,
                is_final,
                own_figure: None,
                copied: false,
            };
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
            // The same write marked copied, or with the agent's cost, is
            // another write: a file read again by a reader that sees them
            // stores it beside the one it stored before.
            let copied = ResponseWrite { copied: true, ..write.clone() };
            let costed = ResponseWrite { own_figure: Some(0.5), ..write.clone() };
            let other_cost = ResponseWrite { own_figure: Some(0.25), ..write.clone() };
            let digests = [write.digest(), copied.digest(), costed.digest(), other_cost.digest()];
            let distinct: HashSet<i64> = digests.into_iter().collect();
            assert_eq!(distinct.len(), 4, "{key}");
            assert_eq!((copied.key_hash(), costed.key_hash()), (write.key_hash(), write.key_hash()));
        }
    }

    const HOUR: i64 = 1_764_583_200_000;

    fn logged(key: &str, session: &str, at_ms: i64, output: u64, is_final: bool) -> ResponseWrite {
        ResponseWrite {
            provider: Provider::Claude,
            key: key.to_owned(),
            session_id: Some(session.into()),
            at_ms,
            model: Some("claude-sonnet-4-5".into()),
            tokens: Counters {
                input_tokens: Some(10),
                cache_creation_input_tokens: Some(0),
                cache_read_input_tokens: Some(100),
                output_tokens: Some(output),
                ..Counters::default()
            },
            context_tokens: Some(110),
            context_window: None,
            is_final,
            own_figure: None,
            copied: false,
        }
    }

    fn append(ledger: &mut crate::ledger::stored::store::Ledger, writes: &[ResponseWrite]) -> (u64, u64) {
        let evidence: Vec<_> =
            writes.iter().cloned().map(crate::ledger::stored::evidence::Evidence::Response).collect();
        let appended = ledger.append_at(&evidence, &[]).unwrap();
        (appended.appended, appended.duplicates)
    }

    fn outputs(conn: &Connection, range: Range) -> (Vec<(Option<u64>, bool)>, Vec<String>) {
        let (responses, damaged) = load(conn, PACK_SCHEMA, range).unwrap();
        (responses.iter().map(|r| (r.tokens.output_tokens, r.pending)).collect(), damaged)
    }

    /// A write as schema 6 and 7 stored it: one row, its own checksum.
    fn store_as_row(conn: &Connection, write: &ResponseWrite) {
        use rusqlite::types::Value;
        let prepared = write.clone().prepare();
        let text = |t: Option<&str>| t.map_or(Value::Null, |t| Value::Text(t.to_owned()));
        let number = |n: Option<u64>| n.map_or(Value::Null, |n| Value::Integer(n as i64));
        let mut values = vec![
            Value::Integer(prepared.digest),
            Value::Integer(prepared.key_hash),
            Value::Text(write.provider.as_str().to_owned()),
            Value::Text(write.key.clone()),
            text(write.session_id.as_deref()),
            Value::Text(bee_proto::time::format_unix_ms(write.at_ms)),
            Value::Integer(prepared.write.at_ms),
            text(write.model.as_deref()),
        ];
        values.extend(write.tokens.values().map(number));
        values.extend([
            number(write.context_tokens),
            number(write.context_window),
            Value::Integer(write.is_final.into()),
        ]);
        let crc = sqlite::values_crc_grown(values.iter().map(ValueRef::from), RESPONSE_COLUMNS.base_count());
        values.push(Value::Integer(crc));
        let sql = RESPONSE_COLUMNS.insert_rows_sql("response", 1, "");
        conn.execute(&sql, rusqlite::params_from_iter(values)).unwrap();
    }

    /// Each new write is stored once, in its hour's pack; a write read
    /// again (in the same commit or a later one) is a duplicate, also when
    /// only some of a statement's rows are new.
    #[test]
    fn a_commit_packs_each_new_write_once_in_its_hour() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = crate::ledger::stored::store::Ledger::open(dir.path()).unwrap();
        let first: Vec<ResponseWrite> = (0..20)
            .map(|n| logged(&format!("msg_{n}\u{1f}req_{n}"), "s1", HOUR + n * 150_000, n as u64, true))
            .collect();
        let mut with_copy = first.clone();
        with_copy.push(first[3].clone());
        assert_eq!(append(&mut ledger, &with_copy), (20, 1));
        let conn = ledger.db_conn();
        let packs = |conn: &Connection| -> Vec<(i64, i64)> {
            conn.prepare("SELECT hour_ms, writes FROM response_pack ORDER BY id")
                .unwrap()
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        // Twenty writes 2.5 minutes apart: all in the first hour.
        assert_eq!(packs(conn), [(HOUR, 20)]);
        // Seventeen known, three new (a fuller write, a final one, a copy in
        // another session): one statement of sixteen is partly new.
        let mut again = first[..17].to_vec();
        again.push(logged("msg_0\u{1f}req_0", "s1", HOUR, 900, true));
        again.push(logged("msg_19\u{1f}req_19", "s1", HOUR + HOUR_MS + 5, 30, false));
        again.push(logged("msg_1\u{1f}req_1", "s2", HOUR + 2 * HOUR_MS, 1, true));
        assert_eq!(append(&mut ledger, &again), (3, 17));
        assert_eq!(append(&mut ledger, &again), (0, 20), "the same commit again adds nothing");
        let conn = ledger.db_conn();
        assert_eq!(packs(conn), [(HOUR, 20), (HOUR, 1), (HOUR + HOUR_MS, 1), (HOUR + 2 * HOUR_MS, 1)]);
        let (responses, damaged) = outputs(conn, Range::hour(HOUR));
        assert!(damaged.is_empty());
        let mut expected: Vec<(Option<u64>, bool)> = (0..20).map(|n| (Some(n), false)).collect();
        (expected[0].0, expected[19].0) = (Some(900), Some(30));
        assert_eq!(responses, expected, "a later pack's fuller write and the copy merge into their responses");
        // The hour of the late writes alone: their responses were first
        // written before it.
        let later =
            load_with_earlier(conn, PACK_SCHEMA, Range { since_ms: HOUR + HOUR_MS, until_ms: HOUR + 3 * HOUR_MS });
        let (responses, _, earlier) = later.unwrap();
        assert!(responses.is_empty());
        assert_eq!(earlier, [HOUR + 150_000, HOUR + 19 * 150_000]);
    }

    /// A store from before packs keeps its rows and reads them with the
    /// packs written after it: the same write read again is known, a fuller
    /// one merges, and a damaged row or pack is named and left out.
    #[test]
    fn rows_from_before_packs_are_read_with_them_and_never_stored_twice() {
        let dir = tempfile::tempdir().unwrap();
        let before = &crate::ledger::stored::store::MIGRATIONS[..PACK_SCHEMA as usize - 1];
        let writer = sqlite::open_writer(dir.path(), crate::ledger::stored::store::DB_FILE, before).unwrap();
        let streamed = logged("msg_A\u{1f}req_A", "s1", HOUR + 1_000, 112, false);
        let other = logged("msg_B\u{1f}req_B", "s1", HOUR + 2_000, 40, true);
        let late = logged("msg_C\u{1f}req_C", "s1", HOUR + 3 * HOUR_MS, 5, true);
        for write in [&streamed, &other, &late] {
            store_as_row(&writer.conn, write);
        }
        drop(writer);
        let mut ledger = crate::ledger::stored::store::Ledger::open(dir.path()).unwrap();
        let range = Range::hour(HOUR);
        assert_eq!(outputs(ledger.db_conn(), range), (vec![(Some(112), true), (Some(40), false)], vec![]));
        // A's final write lands an hour later (a resumed session's copy);
        // C's write read again is a duplicate.
        let fuller = logged("msg_A\u{1f}req_A", "s2", HOUR + HOUR_MS + 1, 607, true);
        assert_eq!(append(&mut ledger, &[streamed.clone(), fuller, late.clone()]), (1, 2));
        assert_eq!(outputs(ledger.db_conn(), range), (vec![(Some(607), false), (Some(40), false)], vec![]));
        // The late row, found from the pack that holds A's copy.
        let wide = Range { since_ms: HOUR + HOUR_MS, until_ms: HOUR + 4 * HOUR_MS };
        let (responses, _, earlier) = load_with_earlier(ledger.db_conn(), PACK_SCHEMA, wide).unwrap();
        assert_eq!((responses.len(), earlier), (1, vec![HOUR + 1_000]));

        // Damage, as a flipped bit would leave it (the triggers that keep
        // the ledger append-only are lifted for it).
        let conn = ledger.db_conn();
        conn.execute_batch(
            "DROP TRIGGER response_no_update; DROP TRIGGER response_pack_no_update;
             UPDATE response SET output_tokens = 41 WHERE output_tokens = 40;
             UPDATE response_pack SET body = CAST(replace(CAST(body AS TEXT), 'msg_A', 'msg_Z') AS BLOB);",
        )
        .unwrap();
        let (responses, mut damaged) = outputs(conn, range);
        damaged.sort();
        let digest = other.clone().prepare().digest.to_string();
        // Packs are numbered by the hours a commit was given, new writes or not.
        assert_eq!(damaged, [digest, "pack 2".to_owned()]);
        assert_eq!(responses, [(Some(112), true)], "A's partial row stands; B's row and A's pack are not evidence");
    }

    /// Which providers responded: whole hours by their packs' providers,
    /// the hours a range cuts by their writes' own times.
    #[test]
    fn the_providers_of_a_range_are_those_with_a_write_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = crate::ledger::stored::store::Ledger::open(dir.path()).unwrap();
        let codex = |at_ms: i64| ResponseWrite {
            provider: Provider::Codex,
            key: format!("resp_{at_ms}"),
            model: Some("gpt-5-codex".into()),
            ..logged("unused", "t1", at_ms, 3, true)
        };
        let claude = logged("msg_A\u{1f}req_A", "s1", HOUR + 10 * 60_000, 5, true);
        append(&mut ledger, &[claude, codex(HOUR + 50 * 60_000), codex(HOUR + 2 * HOUR_MS + 1)]);
        let providers = |since_ms: i64, until_ms: i64| {
            let mut damaged = 0;
            let found =
                providers_in(ledger.db_conn(), PACK_SCHEMA, Range { since_ms, until_ms }, &mut damaged).unwrap();
            assert_eq!(damaged, 0);
            found
        };
        let minute = 60_000;
        assert_eq!(providers(HOUR, HOUR + 30 * minute), [Provider::Claude], "Codex's write is later in that hour");
        assert_eq!(providers(HOUR + 30 * minute, HOUR + HOUR_MS), [Provider::Codex]);
        assert_eq!(providers(HOUR, HOUR + HOUR_MS), [Provider::Claude, Provider::Codex]);
        assert_eq!(providers(HOUR + HOUR_MS, HOUR + 2 * HOUR_MS), []);
        assert_eq!(
            providers(HOUR + 20 * minute, HOUR + 3 * HOUR_MS + 5),
            [Provider::Codex],
            "whole hours and a cut one"
        );
        assert_eq!(providers(HOUR - HOUR_MS, HOUR + 3 * HOUR_MS), [Provider::Claude, Provider::Codex]);
    }

    #[test]
    fn writes_outside_bees_bounds_are_not_staged() {
        use crate::ledger::stored::evidence::Evidence;
        use crate::ledger::stored::evidence::Staged;
        let good = logged("msg_1\u{1f}req_1", "s", HOUR, 7, true);
        let staged = Staged::of_valid(Evidence::Response(good.clone()));
        assert_eq!(staged.as_ref().and_then(Staged::response).map(|p| p.write.at_ms), Some(HOUR));
        let broken = [
            ResponseWrite { at_ms: -1, ..good.clone() },
            ResponseWrite { at_ms: bee_proto::time::LATEST_RFC3339_MS + 1, ..good.clone() },
            ResponseWrite { key: String::new(), ..good.clone() },
            ResponseWrite {
                model: Some("m".repeat(bee_proto::ledger::bounds::MAX_TEXT_BYTES + 1).into()),
                ..good.clone()
            },
            ResponseWrite {
                tokens: Counters {
                    output_tokens: Some(bee_proto::ledger::bounds::MAX_CALL_TOKENS + 1),
                    ..Counters::default()
                },
                ..good.clone()
            },
        ];
        for write in broken {
            assert!(!write.is_valid(), "{write:?}");
            assert!(Staged::of_valid(Evidence::Response(write.clone())).is_none(), "{write:?}");
        }
        assert!(Staged::of_valid(Evidence::SessionLogged(Provider::Claude, String::new())).is_none());
        assert!(Staged::of_valid(Evidence::SessionLogged(Provider::Claude, "s".to_owned())).is_some());
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

    /// Writes over a few hours, of both providers, some of one response
    /// and some given twice.
    fn mixed_writes(random: &mut crate::ledger::Random, count: usize) -> Vec<ResponseWrite> {
        (0..count)
            .map(|_| {
                let n = random.below(40);
                let mut w = logged(
                    &format!("msg_{n}\u{1f}req_{n}"),
                    &format!("s{}", random.below(3)),
                    HOUR + random.below(3) as i64 * HOUR_MS + n as i64 * 1_000,
                    random.below(4) * 100,
                    random.below(2) == 0,
                );
                if random.below(3) == 0 {
                    w.provider = Provider::Codex;
                }
                w.copied = random.below(4) == 0;
                w.own_figure = [None, Some(0.0), Some(0.012_5)][random.below(3) as usize];
                w
            })
            .collect()
    }

    fn staged(writes: &[ResponseWrite]) -> Vec<Staged> {
        writes
            .iter()
            .cloned()
            .map(|w| Staged::of(crate::ledger::stored::evidence::Evidence::Response(w)).unwrap())
            .collect()
    }

    /// A stored pack's columns, and an identity's.
    type PackColumns = (i64, i64, i64, i64, Vec<u8>, i64);
    type IdentityColumns = (i64, i64, i64, i64);

    /// Everything a store holds of its responses: packs and identities.
    fn stored(ledger: &crate::ledger::stored::store::Ledger) -> (Vec<PackColumns>, Vec<IdentityColumns>) {
        let conn = ledger.db_conn();
        let packs = conn
            .prepare(&format!("SELECT {PACK_COLUMNS} FROM response_pack ORDER BY id"))
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let identities = conn
            .prepare("SELECT key_hash, at_ms, digest, pack FROM response_write ORDER BY key_hash, at_ms, digest")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        (packs, identities)
    }

    /// Packs encoded ahead of a commit are the packs the commit writes when
    /// every write is new after the same last pack; otherwise (a write
    /// stored already, or another last pack) they are not taken, and the
    /// commit stores what it stores without them.
    #[test]
    fn packs_encoded_ahead_are_taken_only_when_what_they_assumed_held() {
        let mut random = crate::ledger::Random(29);
        for round in 0..20 {
            let (earlier, now) = (1 + random.below(30) as usize, 1 + random.below(60) as usize);
            let (earlier, now) = (mixed_writes(&mut random, earlier), mixed_writes(&mut random, now));
            // 0: a first commit; 1: some of its writes stored before; 2: the
            // packs encoded after another last pack.
            for case in 0..3 {
                let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
                let mut ledgers =
                    dirs.each_ref().map(|dir| crate::ledger::stored::store::Ledger::open(dir.path()).unwrap());
                if case == 1 {
                    for ledger in &mut ledgers {
                        let mut before = earlier.clone();
                        before.push(now[0].clone());
                        ledger.append_staged(&staged(&before), &[], || None).unwrap();
                    }
                }
                let batch = staged(&now);
                let writes: Vec<&Prepared> = batch.iter().filter_map(Staged::response).collect();
                let last = ledgers[0].last_pack().unwrap() + if case == 2 { 3 } else { 0 };
                let ahead = PacksAhead::encode(&writes, last).unwrap();
                let assumed: Vec<_> = ahead.rows.iter().map(|row| (row.id, row.body.clone())).collect();
                let [plain, with_ahead] = &mut ledgers;
                let answer = plain.append_staged(&batch, &[], || None).unwrap();
                assert_eq!(with_ahead.append_staged(&batch, &[], || Some(ahead)).unwrap(), answer, "round {round}");
                let (packs, identities) = stored(plain);
                assert_eq!(stored(with_ahead), (packs.clone(), identities), "round {round}, case {case}");
                let written: Vec<_> =
                    packs.into_iter().filter(|pack| pack.0 > last).map(|pack| (pack.0, pack.4)).collect();
                assert_eq!(written == assumed, case == 0, "round {round}, case {case}: {written:?}");
            }
        }
    }

    /// A first pass's committed batches, held as the readers staged them,
    /// merge with its last batch as a store merges every write: whatever
    /// else the batches hold, and however the pass was cut into batches.
    #[test]
    fn held_batches_merge_with_the_last_as_a_store_merges_them_all() {
        let mut random = crate::ledger::Random(31);
        for round in 0..50 {
            let count = 1 + random.below(80) as usize;
            let writes = mixed_writes(&mut random, count);
            let mut batches: Vec<Vec<Staged>> = Vec::new();
            let mut rest = &writes[..];
            while !rest.is_empty() {
                let (batch, after) = rest.split_at(1 + (random.below(rest.len() as u64) as usize));
                let mut batch = staged(batch);
                batch.push(Staged::Other(crate::ledger::stored::evidence::Evidence::SessionLogged(
                    Provider::Claude,
                    "s".into(),
                )));
                batches.push(batch);
                rest = after;
            }
            let last = batches.pop().unwrap_or_default();
            let mut held = Held::default();
            for batch in batches.chunks(2) {
                held.absorb(batch.to_vec());
            }
            // Only the response writes count.
            let held_writes = writes.len() - (last.len() - 1);
            assert!(held.has_room(Held::MOST - held_writes));
            assert!(!held.has_room(Held::MOST - held_writes + 1), "round {round}");
            let all: Vec<PackedWrite> = staged(&writes)
                .iter()
                .filter_map(Staged::response)
                .map(|p| {
                    let e = p.entry();
                    PackedWrite {
                        provider: e.provider,
                        key_hash: e.key_hash,
                        key: e.key.to_owned(),
                        session_id: e.session_id.cloned(),
                        model: e.model.cloned(),
                        at_ms: e.at_ms,
                        tokens: e.tokens.clone(),
                        context_tokens: e.context_tokens,
                        context_window: e.context_window,
                        is_final: e.is_final,
                        own_figure: e.own_figure,
                        copied: e.copied,
                    }
                })
                .collect();
            let merged = held.responses_with(last.iter().filter_map(Staged::response));
            assert_eq!(merged, merged_by_the_rule(&all), "round {round}");
        }
    }
}
