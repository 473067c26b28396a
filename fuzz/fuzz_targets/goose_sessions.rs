//! Ingestion's reader of Goose's sessions database (any file at its place) never panics on any
//! bytes, and hands the store nothing it would refuse without saying so.
//! Run with `-rss_limit_mb=256`: a database value is read within its
//! bound, for the fields its reader reads, so an input that takes more
//! memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "whole_file.rs"]
mod whole_file;

fuzz_target!(|data: &[u8]| whole_file::read(Provider::Goose, "sessions.db", data));
