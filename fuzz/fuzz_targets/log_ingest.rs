//! Ingestion's incremental readers of Claude Code transcripts and Codex
//! rollouts never panic on any bytes, and hand the store nothing it would
//! refuse without saying so: evidence outside Bee's bounds is dropped at
//! the door (`Evidence::is_valid`), never stored.
//! Run with `-rss_limit_mb=256`: a line is parsed only for the fields its
//! reader reads, within a bound of about its own size, so an input that takes
//! more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for provider in [Provider::Claude, Provider::Codex] {
        let (evidence, unparseable) = bee_daemon::ledger::agents::read_log(provider, data);
        let lines = data.split_inclusive(|b| *b == b'\n').count() as u64;
        assert!(unparseable <= lines);
        for item in &evidence {
            let _ = item.is_valid();
        }
    }
});
