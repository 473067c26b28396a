//! The ledger's response packs: any bytes decode without panicking, within
//! their bounds, or are refused; a pack that decodes packs back to exactly
//! its bytes (one spelling per set of writes).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(difference) = bee_daemon::ledger::stored::pack::decodes_exactly(data) {
        panic!("{difference}");
    }
});
