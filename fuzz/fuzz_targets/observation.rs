//! Observation bodies (socket requests and spool lines) never panic the
//! parser, and whatever validates survives a round trip unchanged.
#![no_main]

use bee_proto::delivery::Observation;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(observation) = serde_json::from_slice::<Observation>(data) else { return };
    if observation.validate().is_ok() {
        let again: Observation = serde_json::from_slice(&serde_json::to_vec(&observation).unwrap()).unwrap();
        assert_eq!(again, observation);
    }
});
