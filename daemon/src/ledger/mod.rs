//! The ledger (spec/30): the append-only store of calls, limits and work,
//! the provider-log readers (Claude Code transcripts, Codex rollouts) and
//! their incremental ingestion, Claude Code's own OpenTelemetry, the hourly aggregates, the quota words and
//! usage views, and the journal of ledger writes that were lost.
//!
//! May use: `storage`, `bee_proto`. Never `server` or `client`.

pub mod calendar;
pub mod glance;
pub mod ingest;
pub mod live;
pub mod logs;
pub mod otel;
pub mod pack;
pub mod part_pack;
pub mod prices;
pub mod quota;
pub mod record_failures;
pub mod responses;
pub mod rollup;
pub mod spool;
pub mod store;
pub mod usage;

/// A map keyed by what logs spell (sessions, models), on ingestion's hot
/// path: foldhash is several times cheaper than SipHash on short keys, and
/// its per-process random seed keeps colliding keys from being written
/// into a log ahead of time.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::quality::RandomState>;

/// A small deterministic generator for the ledger's generated-input tests.
#[cfg(test)]
pub(crate) struct Random(pub(crate) u64);

#[cfg(test)]
impl Random {
    /// A number below `n` (xorshift64).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}
