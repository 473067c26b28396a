//! The agents' parse of a record for only the parts its reader reads
//! agrees with serde_json's whole parse cut down to those parts, and
//! never panics or overflows its stack on any bytes. Run with
//! `-rss_limit_mb=256`: what it builds is bounded by its input, so an input
//! that takes more memory is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Short keys a fuzzer finds, at several depths, one through arrays.
const PATHS: &[&str] = &["a", "b/c", "b/d/e", "t", "m/u/i"];

fuzz_target!(|data: &[u8]| {
    assert!(bee_daemon::ledger::agents::sparse_agrees_with_serde(data, PATHS));
});
