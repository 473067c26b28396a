//! The ledger (spec/30): the append-only store of calls, limits and work,
//! every agent's own records read into it (`agents/`, one folder per agent)
//! and their incremental ingestion, the agents' own OpenTelemetry, the
//! hourly aggregates, the quota words and usage views, and the journal of
//! ledger writes that were lost.
//!
//! May use: `storage`, `bee_proto`. Never `server` or `client`.
//!
//! Its files form a one-way stack (`tests/tests/layering.rs` checks that no
//! file reaches itself through others), top to bottom:
//!
//! - the views: [`live`] → [`glance`] → [`usage`] → [`quota`], with
//!   [`calendar`] and [`prices`] beneath them;
//! - the ways in: [`ingest`] (a pass over every agent's records), [`otel`]
//!   (OTLP logs, within [`otlp_budget`]), [`spool`] (producers' spooled appends);
//! - [`store`]: the tables, their migrations and the read-only [`store::Reader`];
//! - [`rollup`]: the hourly aggregates, with [`part_pack`] beneath;
//! - [`agents`]: each agent's reader behind one seam, [`agents::Agent`];
//! - [`evidence`]: what a reader hands the store, and where a file resumes;
//! - [`responses`]: response writes, their identity and their merge, with
//!   [`pack`] beneath;
//! - [`validate`]: the bounds every record is let in by;
//! - [`schema`]: the schema versions, the hour, a range, a table's columns;
//! - [`record_failures`]: the journal of writes that were lost (stands alone).

pub mod agents;
pub mod calendar;
pub mod evidence;
pub mod glance;
pub mod ingest;
pub mod live;
pub mod otel;
pub mod otlp_budget;
pub mod pack;
pub mod part_pack;
pub mod prices;
pub mod quota;
pub mod record_failures;
pub mod responses;
pub mod rollup;
pub mod schema;
pub mod spool;
pub mod store;
pub mod usage;
pub mod validate;

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
