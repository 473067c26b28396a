//! The spool readers never panic on whatever a crash, a full disk or a
//! hostile local process leaves in a spool file: the delivery report's reader
//! (store plus spool), the audit's reader of the events spool, and the
//! ledger's line parser. What the delivery reader takes is what validates,
//! each event id once, numbered 1.. in order.
#![no_main]

use bee_proto::delivery::Observation;
use bee_proto::events::{SpooledEvent, accept_object};
use bee_proto::ledger::LedgerRecord;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let spool = dir.path().join("spool");
    std::fs::create_dir(&spool).unwrap();
    for file in [bee_proto::spool::DELIVERY_SPOOL_FILE, bee_proto::events::EVENTS_SPOOL_FILE] {
        std::fs::write(spool.join(file), data).unwrap();
    }
    let store = bee_daemon::delivery::spool::read_verified_with_spool(&dir.path().join("no-store"), &spool);
    let mut seen = std::collections::HashSet::new();
    for (n, record) in store.records.iter().enumerate() {
        assert_eq!(record.sequence, n as u64 + 1);
        assert!(seen.insert(record.observation.event_id), "an event id taken twice");
    }
    let _ = bee_daemon::events::audit::spooled(&spool, "5d0a9c1b-2e3f-4a5b-8c6d-7e8f9a0b1c2d");
    for line in data.split(|&b| b == b'\n') {
        if let Ok(observation) = serde_json::from_slice::<Observation>(line) {
            let _ = observation.validate();
        }
        if let Ok(record) = serde_json::from_slice::<LedgerRecord>(line) {
            let _ = bee_daemon::ledger::stored::validate::validate(&record);
        }
        if let Ok(SpooledEvent { event: serde_json::Value::Object(event), .. }) = serde_json::from_slice(line) {
            let _ = accept_object(event, |_| false, 1_796_000_000_000);
        }
    }
});
