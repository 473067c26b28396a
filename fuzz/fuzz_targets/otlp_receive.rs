//! `beed --otlp`: any body, as OTLP/JSON or protobuf logs, decodes to a
//! request or a named error, never a panic; whatever evidence it yields is
//! within Bee's bounds, and every `api_request` it saw is taken or refused.
#![no_main]

use bee_daemon::ledger::intake::otel::{Encoding, decode_logs, evidence};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for encoding in [Encoding::Json, Encoding::Protobuf] {
        let Ok(request) = decode_logs(data, encoding) else { continue };
        let received = evidence(&request);
        assert!(received.evidence.iter().all(|e| e.is_valid()));
        assert!(received.evidence.len() as u64 <= 2 * received.api_requests);
    }
});
