//! agy's reader of a generation's protobuf blob never panics on any bytes,
//! and what it accepts keeps the invariant it checks: output is reasoning
//! and text, no counter is unknown, a model it names is text and a time it
//! gives is one RFC 3339 spells.
//! Run with `-rss_limit_mb=256`: a blob is read in one pass that keeps
//! only the fields asked for, so an input that takes more memory is a
//! finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(generation) = bee_daemon::ledger::agents::agy::read_generation(data) {
        let usage = &generation.counters;
        assert!(usage.output_tokens >= usage.reasoning_output_tokens);
        assert!(usage.input_tokens.is_some() && usage.cache_read_input_tokens.is_some());
        assert!(usage.cache_creation_input_tokens.is_some());
        assert!(generation.model.is_none_or(|model| !model.is_empty()));
        assert!(generation.at_ms.is_none_or(|ms| ms > 0 && bee_proto::time::spells_as_rfc3339(ms)));
    }
});
