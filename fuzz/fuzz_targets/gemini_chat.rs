//! Ingestion's reader of Gemini CLI chat logs never panics on any bytes, counts no
//! more unparseable lines than there are lines, and hands the store nothing
//! it would refuse without saying so.
//! Run with `-rss_limit_mb=256`: a line is parsed only for the fields its
//! reader reads, within a bound of about its own size, so an input that takes
//! more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "line_log.rs"]
mod line_log;

fuzz_target!(|data: &[u8]| {
    let chat = std::path::Path::new(".gemini/tmp/project/chats/session-2026-12-05T03-21-8ed41bc8.jsonl");
    line_log::read_at(Provider::Gemini, chat, data)
});
