//! Ingestion's reader of Gemini CLI's telemetry file (pretty-printed JSON
//! values, one after another) never panics on any bytes, counts no more
//! unparseable lines than there are lines, and hands the store nothing it
//! would refuse without saying so.
//! Run with `-rss_limit_mb=256`: only a record's short attribute lines are
//! parsed, so an input that takes more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "line_log.rs"]
mod line_log;

fuzz_target!(|data: &[u8]| line_log::read_at(Provider::Gemini, std::path::Path::new("/h/.gemini/telemetry.log"), data));
