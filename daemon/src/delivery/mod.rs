//! Delivery accounting (spec/10): the delivery store of prompt observations
//! and the `delivery report | read` answers over it.
//!
//! May use: `storage`, `rendered`, `bee_proto`. Never `server` or `client`.

pub mod report;
pub mod spool;
pub mod store;
