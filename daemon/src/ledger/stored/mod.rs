//! What the ledger stores, top to bottom: [`store`] (the tables, their
//! migrations and the read-only [`store::Reader`]) → [`rollup`] (the hourly
//! aggregates the views read, derived from the records and settled with
//! them, with [`part_pack`] beneath) → [`evidence`] (what a reader hands the
//! store, and where a file resumes) → [`responses`] (response writes, their
//! identity and their merge, with [`pack`] beneath) → [`validate`] (the
//! bounds every record is let in by) → [`schema`] (the schema versions, the
//! hour, a range, a table's columns).

pub mod evidence;
pub mod pack;
pub mod part_pack;
pub mod responses;
pub mod rollup;
pub mod schema;
pub mod store;
pub mod validate;
