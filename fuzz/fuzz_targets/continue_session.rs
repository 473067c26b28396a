//! Ingestion's reader of Continue CLI session documents never panics on
//! any bytes, and hands the store nothing it would refuse without saying
//! so. Run with `-rss_limit_mb=256`: a document is parsed only for the
//! fields its reader reads, within a bound of about its own size, so an
//! input that takes more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "whole_file.rs"]
mod whole_file;

fuzz_target!(|data: &[u8]| whole_file::read(Provider::Continue, "0b8e3c1a-5d2f-4e6a-9b7c-1f2e3d4c5b6a.json", data));
