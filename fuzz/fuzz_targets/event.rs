//! Event bodies (POST /events, spool lines, manifests) never panic the
//! parsers; an accepted event keeps only metadata unless captured, always
//! carries its timestamp, and its stored form is accepted again unchanged.
#![no_main]

use bee_proto::audit::Manifest;
use bee_proto::events::{HITL_FIELD, HITL_STATUS_FIELD, KEPT_FIELDS, SpooledEvent, accept};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<SpooledEvent>(data);
    let _ = serde_json::from_slice::<Manifest>(data);
    let Ok(event) = accept(data, |_| false, 1_796_000_000_000) else { return };
    assert!(event.body.keys().all(|key| {
        KEPT_FIELDS.contains(&key.as_str()) || key == "payload" || key == HITL_FIELD || key == HITL_STATUS_FIELD
    }));
    assert_eq!(event.body["timestamp"].as_i64(), Some(event.timestamp_ms));
    let stored = serde_json::to_vec(&event.body).unwrap();
    let again = accept(&stored, |_| false, 0).unwrap();
    assert_eq!(again, event);
    let _ = accept(data, |_| true, 1_796_000_000_000).unwrap();
});
