//! What the fuzz targets of record files read whole share: the bytes
//! written as a file at an agent's place, read by its reader.

use bee_proto::ledger::Provider;

/// Reads `data` as `provider`'s record file named `name`.
pub fn read(provider: Provider, name: &str, data: &[u8]) {
    let Some(reader) = bee_daemon::ledger::agents::agent(provider).whole_file() else { return };
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join(name);
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let mut evidence = Vec::new();
    if reader.read(&path, &Default::default(), &mut evidence).is_ok() {
        for item in &evidence {
            let _ = item.is_valid();
        }
    }
}
