//! beed's library, one room per domain. `beectl` links it so that reading a
//! store offline runs exactly the code the daemon runs: both paths print
//! byte-identical answers.
//!
//! - [`storage`]: SQLite opening, the single-writer thread, private files,
//!   the bounded line reader. Uses nothing else of this crate.
//! - [`delivery`]: the delivery store and its report and read (spec/10).
//! - [`tokens`]: the token counters and the estimate report (spec/20).
//! - [`ledger`]: the ledger store, the provider-log readers and their
//!   ingestion, aggregates, quota words and usage views (spec/30).
//! - [`events`]: the hook events store, the audit, Claude Code's settings
//!   (spec/40).
//! - [`context`]: what an agent's context is made of (spec/50): artifacts,
//!   skills, plans, the `bee-json-v1` representation and prose compression.
//! - [`export`]: the series and log events a team's engine receives
//!   (Prometheus remote write, OTLP), read from the ledger, delivery and
//!   events stores (spec/60); the one domain that uses `client`, to read
//!   beed's stream as the audit's presentation receipt.
//! - [`client`]: the socket and stream clients of a running beed.
//! - [`server`] (feature `server`, on for `beed`): beed's lifecycle, its
//!   routes for every domain, spool ingestion and the loopback listener.
//! - [`rendered`]: a finished answer (bytes and exit status), shared by the
//!   domains' reports and both the daemon and offline paths.
//!
//! Dependencies point one way: `server` → domains → `storage`. A domain never
//! uses `server`, nor `client` (save `export`, above);
//! `tests/tests/layering.rs` checks it.

pub mod client;
pub mod context;
pub mod delivery;
pub mod events;
pub mod export;
pub mod ledger;
pub mod rendered;
#[cfg(feature = "server")]
pub mod server;
pub mod storage;
pub mod tokens;
