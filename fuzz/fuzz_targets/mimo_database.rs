//! Ingestion's reader of MiMo Code's databases (OpenCode's reader, with
//! MiMo's table of imported sessions; any file at their places) never
//! panics on any bytes, and hands the store nothing it would refuse
//! without saying so. Run with `-rss_limit_mb=256`: a message's `data` and
//! an import's list of ids are read within their bounds, so an input that
//! takes more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "whole_file.rs"]
mod whole_file;

fuzz_target!(|data: &[u8]| {
    whole_file::read(Provider::MiMo, "mimocode.db", data);
});
