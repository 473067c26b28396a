//! Ingestion's reader of agy's conversation databases (any file at its
//! place) never panics on any bytes, and hands the store nothing it would
//! refuse without saying so. Run with `-rss_limit_mb=256`: a blob is read
//! in one pass within its bound, so an input that takes more memory is a
//! finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "whole_file.rs"]
mod whole_file;

fuzz_target!(|data: &[u8]| whole_file::read(Provider::Agy, "conversation.db", data));
