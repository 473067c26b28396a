//! Ingestion's reader of Kiro's session event logs never panics on any
//! bytes, counts no more unparseable lines than there are lines, and hands
//! the store nothing it would refuse without saying so. The bytes are read
//! at a place that names a session, as its reader takes a session from its
//! log's folder. Run with `-rss_limit_mb=256`: a line is parsed only for
//! the fields its reader reads, within a bound of about its own size, so an
//! input that takes more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "line_log.rs"]
mod line_log;

fuzz_target!(|data: &[u8]| {
    let at = std::path::Path::new(".kiro/sessions/9f3c1d0b7a4e2856/sess_1/messages.jsonl");
    line_log::read_at(Provider::Kiro, at, data)
});
