//! Ingestion's reader of Windsurf's workspace state database (any file at its place) never
//! panics on any bytes, and hands the store nothing it would refuse without
//! saying so.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;

#[path = "whole_file.rs"]
mod whole_file;

fuzz_target!(|data: &[u8]| whole_file::read(Provider::Windsurf, "state.vscdb", data));
