//! The mapping of one row of Goose's `usage_ledger` (input with its caches
//! inside, output, total, cache reads, cache writes, any of them empty)
//! into Bee's columns never panics, and never makes a count up: input is
//! Goose's input less the caches it names, or unknown, never clamped; every
//! other column is Goose's own. (Whole databases, this table's rows among
//! them, are fuzzed by `goose_sessions`.)
#![no_main]

use bee_daemon::ledger::agents::goose::ledger::{Written, counters};
use libfuzzer_sys::fuzz_target;

/// Five counts from `data`: each a tag byte (odd: present) and 8 bytes.
fn written(data: &[u8]) -> Written {
    let mut counts = data.chunks(9).map(|chunk| {
        let (&tag, bytes) = chunk.split_first()?;
        let mut value = [0u8; 8];
        value[..bytes.len()].copy_from_slice(bytes);
        (tag % 2 == 1).then(|| u64::from_le_bytes(value))
    });
    let mut next = || counts.next().flatten();
    Written { input: next(), output: next(), total: next(), cache_reads: next(), cache_writes: next() }
}

fuzz_target!(|data: &[u8]| {
    let written = written(data);
    let t = counters(written);
    assert_eq!(t.output_tokens, written.output);
    assert_eq!(t.total_tokens, written.total);
    assert_eq!(t.cache_read_input_tokens, written.cache_reads);
    assert_eq!(t.cache_creation_input_tokens, written.cache_writes);
    assert_eq!(t.reasoning_output_tokens, None);
    if let Some(input) = t.input_tokens {
        let caches = written.cache_reads.unwrap_or(0) + written.cache_writes.unwrap_or(0);
        assert_eq!(written.input, Some(input + caches));
    }
});
