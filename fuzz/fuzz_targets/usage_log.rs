//! The provider log readers never panic, and account for every line.
//! Run with `-rss_limit_mb=256`: a line is parsed only for the fields its
//! reader reads, within a bound of about its own size, so an input that takes
//! more memory is a finding.
#![no_main]

use bee_proto::usage::Harness;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for harness in [Harness::Claude, Harness::Codex] {
        let usage = bee_daemon::ledger::agents::read_session(harness, data, "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d")
            .expect("reading from memory cannot fail");
        let lines = &usage.lines;
        assert_eq!(lines.read, lines.matched_session + lines.other_session + lines.unparseable);
    }
});
