//! Token estimates (spec/20): the heuristic and exact BPE counters and the
//! `token estimate` report built from their counts.
//!
//! May use: `rendered`, `bee_proto`. Never `server` or `client`.

pub mod encoders;
pub mod report;
