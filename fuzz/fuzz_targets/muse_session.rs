//! Ingestion's reader of Muse Code's session journals never panics on any bytes, counts no more
//! unparseable lines than there are lines, and hands the store nothing it
//! would refuse without saying so. The bytes are read at a place that names
//! a session, as its reader takes a session from its journal's folder where a record names none.
//! Run with `-rss_limit_mb=256`: a line is parsed only for the fields its
//! reader reads, within a bound of about its own size, so an input that takes
//! more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let at = Path::new("sessions/2026/09/18/session/session.jsonl");
    let (evidence, unparseable) = bee_daemon::ledger::agents::read_log_at(Provider::Muse, at, data);
    assert!(unparseable <= data.split_inclusive(|b| *b == b'\n').count() as u64);
    for item in &evidence {
        let _ = item.is_valid();
    }
});
