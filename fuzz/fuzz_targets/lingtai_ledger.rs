//! Ingestion's reader of LingTai agents' token ledgers never panics on any bytes, counts no
//! more unparseable lines than there are lines, and hands the store nothing
//! it would refuse without saying so.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "line_log.rs"]
mod line_log;

fuzz_target!(|data: &[u8]| line_log::read(Provider::LingTai, data));
