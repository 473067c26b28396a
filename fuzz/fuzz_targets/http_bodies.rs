//! The bodies and headers beed parses on its socket and loopback listener
//! never panic it: every `/v1/` request body, with the checks that follow
//! the parse, and the Host and Origin checks of the loopback guard. An
//! origin that passes is an http(s) origin naming this machine.
#![no_main]

use bee_proto::api::{DeliveryReadRequest, DeliveryReportRequest};
use bee_proto::delivery::{Observation, SessionSelector};
use bee_proto::ledger::LedgerAppend;
use bee_proto::tokens::CountRequest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = serde_json::from_slice::<DeliveryReportRequest>(data)
        && let Some(session) = request.session
    {
        let _ = SessionSelector::new(session.kind, session.id);
    }
    let _ = serde_json::from_slice::<DeliveryReadRequest>(data);
    if let Ok(observation) = serde_json::from_slice::<Observation>(data) {
        let _ = observation.validate();
    }
    if let Ok(append) = serde_json::from_slice::<LedgerAppend>(data) {
        for record in &append.records {
            let _ = bee_daemon::ledger::stored::validate::validate(record);
        }
    }
    let _ = serde_json::from_slice::<CountRequest>(data);
    let _ = bee_proto::events::accept(data, |_| true, 1_796_000_000_000);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = bee_daemon::server::http::is_loopback_host(text);
        if bee_daemon::server::http::is_loopback_origin(text) {
            assert!(text.starts_with("http://") || text.starts_with("https://"), "{text}");
        }
    }
});
