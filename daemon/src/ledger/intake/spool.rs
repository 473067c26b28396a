//! Ingesting the ledger producers' spool: records `beectl run` and the hooks
//! could not hand to beed are appended now, idempotent by record id.

use bee_proto::ledger::{LEDGER_REJECTED_FILE, LEDGER_SPOOL_FILE, LedgerRecord, MAX_LEDGER_RECORD_BYTES};
use std::io;
use std::path::Path;
use std::sync::Mutex;

use crate::ledger::stored::store::Ledger;
use crate::ledger::stored::validate::validate;
use crate::storage::spool::{self, IngestSummary, Spool};

const LEDGER: Spool = Spool {
    name: "ledger",
    file: LEDGER_SPOOL_FILE,
    rejected: LEDGER_REJECTED_FILE,
    max_line: MAX_LEDGER_RECORD_BYTES,
};

/// Claims the ledger spool in `dir` and appends every claimed file's records.
pub fn ingest(dir: &Path, ledger: &Mutex<Ledger>) -> io::Result<IngestSummary> {
    spool::ingest_spool(
        dir,
        &LEDGER,
        |line| serde_json::from_slice::<LedgerRecord>(line).ok().filter(|r| validate(r).is_ok()),
        |records, summary| {
            let Ok(mut ledger) = ledger.lock() else { return false };
            match ledger.append(&records) {
                Ok(answer) => {
                    summary.recorded += answer.appended;
                    summary.duplicates += answer.duplicates;
                    true
                }
                Err(err) => {
                    tracing::warn!(code = bee_proto::ledger::RECORD_FAILED, error = %err, "ledger spool ingestion failed; kept for later");
                    false
                }
            }
        },
    )
}
