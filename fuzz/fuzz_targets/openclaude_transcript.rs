//! Ingestion's incremental reader of OpenClaude's transcripts (Claude
//! Code's reader, under OpenClaude's name) never panics on any bytes,
//! counts no more unparseable lines than there are lines, and hands the
//! store nothing it would refuse without saying so.
//! Run with `-rss_limit_mb=256`: a line is parsed only for the fields its
//! reader reads, within a bound of about its own size, so an input that
//! takes more memory is a finding.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "line_log.rs"]
mod line_log;

fuzz_target!(|data: &[u8]| line_log::read(Provider::OpenClaude, data));
