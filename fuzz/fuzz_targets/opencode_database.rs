//! Ingestion's reader of OpenCode's and Kilo's databases (any file at
//! their places) never panics on any bytes, and hands the store nothing
//! it would refuse without saying so. Run with `-rss_limit_mb=256`: a
//! message's `data` is read within its bound for its few fields, so an
//! input that takes more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "whole_file.rs"]
mod whole_file;

fuzz_target!(|data: &[u8]| {
    whole_file::read(Provider::OpenCode, "opencode.db", data);
    whole_file::read(Provider::Kilo, "kilo.db", data);
});
