//! Handing ledger records to beed from a hook: one post within the hook's
//! deadline, else one spool line per record for beed to ingest later.

use bee_proto::ledger::{
    LEDGER_RECORDS_PATH, LEDGER_SPOOL_FILE, LedgerAppend, LedgerRecord, RecordFailure, RecordProducer,
};
use std::time::Instant;

use crate::post::{self, Delivery};

/// Records `records`; silent, since a hook's own output must not change. A
/// record neither beed nor the spool took is noted in the failure journal.
pub fn record(records: Vec<LedgerRecord>) {
    let Some(body) = body_of(&records) else { return };
    let deadline = Instant::now() + post::DEADLINE;
    let delivered = match bee_proto::paths::socket_path() {
        Some(socket) => post::post(socket, LEDGER_RECORDS_PATH, body.get().into(), deadline),
        None => Delivery::Unavailable("no socket path".into()),
    };
    settle(&records, &delivered);
}

/// The append's body; `None` for no records.
pub fn body_of(records: &[LedgerRecord]) -> Option<Box<serde_json::value::RawValue>> {
    if records.is_empty() {
        return None;
    }
    serde_json::value::to_raw_value(&LedgerAppend { records: records.to_vec() }).ok()
}

/// Spools what beed could not be reached for; a record neither took is
/// noted in the failure journal.
pub fn settle(records: &[LedgerRecord], delivered: &Delivery) {
    if let Delivery::Unavailable(_) = delivered {
        let dir = bee_proto::paths::spool_dir();
        let lost = records
            .iter()
            .filter(|record| {
                let line = serde_json::to_vec(record).ok();
                !matches!((&dir, line), (Some(dir), Some(line)) if bee_proto::spool::append(dir, LEDGER_SPOOL_FILE, &line).is_ok())
            })
            .count();
        if lost > 0 {
            let _ = RecordFailure::note(RecordProducer::Hook, lost);
        }
    }
}
