//! What the fuzz targets of agents' line logs share: the bytes read as a
//! whole log at a session's place (an agent may name its session by it),
//! checked as ingestion would hand them to the store.

use bee_proto::ledger::Provider;
use std::path::Path;

/// Reads `data` as a whole log of `provider`'s.
#[allow(dead_code, reason = "a target that names its own file's place reads with `read_at` alone")]
pub fn read(provider: Provider, data: &[u8]) {
    read_at(provider, Path::new("sessions/project/session/wire.jsonl"), data);
}

/// Reads `data` as a whole log of `provider`'s at `at` (an agent that
/// tells its kinds of file by their names).
pub fn read_at(provider: Provider, at: &Path, data: &[u8]) {
    let (evidence, unparseable) = bee_daemon::ledger::agents::read_log_at(provider, at, data);
    assert!(unparseable <= data.split_inclusive(|b| *b == b'\n').count() as u64);
    for item in &evidence {
        let _ = item.is_valid();
    }
}
