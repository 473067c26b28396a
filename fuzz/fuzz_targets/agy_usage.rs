//! agy's reader of a generation's protobuf usage never panics on any
//! bytes, and what it accepts keeps the invariant it checks: output is
//! reasoning and text, and no counter is unknown.
//! Run with `-rss_limit_mb=256`: a blob is read in one pass that keeps
//! only the fields asked for, so an input that takes more memory is a
//! finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(usage) = bee_daemon::ledger::agents::agy::read_usage(data) {
        assert!(usage.output_tokens >= usage.reasoning_output_tokens);
        assert!(usage.input_tokens.is_some() && usage.cache_read_input_tokens.is_some());
    }
});
