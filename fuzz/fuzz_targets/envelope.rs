//! The hook envelope parser never panics, and never observes an envelope
//! over the size limit or one that is not UTF-8.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let session = bee_proto::envelope::session_of(data, Some("3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c"));
    if session.is_ok() {
        let text = std::str::from_utf8(data).expect("observed envelopes are UTF-8");
        assert!(bee_proto::text::utf16_units(text) <= bee_proto::delivery::MAX_ENVELOPE_UTF16_UNITS);
    }
});
