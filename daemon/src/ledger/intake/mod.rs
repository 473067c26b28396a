//! How records arrive in the ledger: [`ingest`] (one pass over every
//! agent's own records), [`otel`] (the agents' OTLP logs, within
//! [`otlp_budget`]), [`spool`] (producers' appends spooled while beed was
//! away) and [`record_failures`] (the journal of writes that were lost,
//! standing alone).

pub mod ingest;
pub mod otel;
pub mod otlp_budget;
pub mod record_failures;
pub mod spool;
