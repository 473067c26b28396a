//! beed's library: the delivery store, the report and read logic, the socket
//! server, spool ingestion and the socket client.
//!
//! `beectl` links this library so that reading a store offline runs exactly
//! the code the daemon runs: both paths print byte-identical answers.

pub mod audit;
pub mod claude_settings;
pub mod client;
pub mod delivery;
pub mod event_routes;
pub mod events;
pub mod fsutil;
pub mod ingest;
pub mod ledger;
pub mod lines;
pub mod quota;
pub mod record_failures;
pub mod rendered;
pub mod rollup;
pub mod server;
pub mod spool_ingest;
pub mod sqlite;
pub mod store;
pub mod stream_client;
pub mod token_report;
pub mod tokens;
pub mod usage_logs;
pub mod writer;
