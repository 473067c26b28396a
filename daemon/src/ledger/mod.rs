//! The ledger (spec/30): the append-only store of calls, limits and work,
//! every agent's own records read into it and the views that show them, in
//! four rooms:
//!
//! - [`views`]: what is shown — usage, quota, the live stream, the glance
//!   at a day, with the calendar and the price table beneath them;
//! - [`intake`]: how records arrive — a pass over every agent's records, the
//!   agents' own OpenTelemetry, producers' spooled appends, and the journal
//!   of writes that were lost;
//! - [`stored`]: what is stored — the tables and their migrations, the
//!   bounds every record is let in by, response identity and packing, and
//!   the hourly aggregates the views read;
//! - [`agents`]: each agent's reader behind one seam, [`agents::Agent`].
//!
//! May use: `storage`, `bee_proto`. Never `server` or `client`.
//!
//! Its files form a one-way stack (`tests/tests/layering.rs` checks that no
//! file reaches itself through others): the views over the ways in over
//! `stored::store` and its aggregates, which read records through `agents`,
//! whose readers hand `stored::evidence` and response writes below them.

pub mod agents;
pub mod intake;
pub mod stored;
pub mod views;

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
