//! Ingestion's scan of Claude Code response lines answers, for any bytes,
//! only with the fields serde_json reads from them: a line it cannot answer
//! for is left to serde_json, never read differently.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(difference) = bee_daemon::ledger::agents::claude::agrees_with_serde(data) {
        panic!("{difference}");
    }
});
