//! Ingestion's reader of OpenClaw session logs never panics on any bytes, counts no
//! more unparseable lines than there are lines, and hands the store nothing
//! it would refuse without saying so.
#![no_main]

use bee_proto::ledger::Provider;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let at = Path::new("sessions/project/session/wire.jsonl");
    let (evidence, unparseable) = bee_daemon::ledger::agents::read_log_at(Provider::OpenClaw, at, data);
    assert!(unparseable <= data.split_inclusive(|b| *b == b'\n').count() as u64);
    for item in &evidence {
        let _ = item.is_valid();
    }
});
