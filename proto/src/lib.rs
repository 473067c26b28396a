//! Bee's contract as types.
//!
//! Everything a producer and a consumer must agree on lives here exactly once:
//! record and report shapes (their JSON field names), error and exit codes, the
//! socket API paths and protocol version, limits, default paths and the spool
//! line format. The crate is pure: no async runtime and no database, so the
//! tiny hook binary can depend on it.

#[macro_use]
pub mod names;

pub mod api;
pub mod audit;
pub mod delivery;
pub mod envelope;
pub mod events;
pub mod exit;
pub mod export;
pub mod identity;
pub mod ledger;
pub mod mcp;
pub mod otlp;
pub mod paths;
pub mod spool;
pub mod text;
pub mod time;
pub mod tokens;
pub mod usage;
