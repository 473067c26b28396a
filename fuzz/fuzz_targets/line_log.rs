//! What the fuzz targets of agents' line logs share: the bytes read as a
//! whole log at a session's place (an agent may name its session by it),
//! checked as ingestion would hand them to the store.

use bee_proto::ledger::Provider;
use std::path::Path;

/// Reads `data` as a whole log of `provider`'s.
pub fn read(provider: Provider, data: &[u8]) {
    let at = Path::new("sessions/project/session/wire.jsonl");
    let (evidence, unparseable) = bee_daemon::ledger::agents::read_log_at(provider, at, data);
    assert!(unparseable <= data.split_inclusive(|b| *b == b'\n').count() as u64);
    for item in &evidence {
        let _ = item.is_valid();
    }
}
