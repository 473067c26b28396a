//! OpenCode's reader of one `message` row's `data` never panics on any
//! bytes, and what it finds keeps its columns adding up.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for item in bee_daemon::ledger::agents::opencode::read_message("ses_fuzz", data) {
        let _ = item.is_valid();
    }
});
