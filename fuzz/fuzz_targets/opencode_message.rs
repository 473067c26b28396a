//! OpenCode's reader of one `message` row's `data` never panics on any
//! bytes, and what it finds keeps its columns adding up.
//! Run with `-rss_limit_mb=256`: a database value is read within its
//! bound, for the fields its reader reads, so an input that takes more
//! memory is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for item in bee_daemon::ledger::agents::opencode::read_message("ses_fuzz", data) {
        let _ = item.is_valid();
    }
});
