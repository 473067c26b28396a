//! Ingesting the hooks' delivery spool: observations `bee-hook` could not
//! hand to beed are appended now, idempotent by event id, so a post that was
//! late *and* spooled is stored once.

use bee_proto::delivery::{MAX_RECORD_BYTES, Observation};
use bee_proto::spool::{DELIVERY_REJECTED_FILE, DELIVERY_SPOOL_FILE};
use std::io;
use std::path::Path;

use crate::delivery::store::{AppendRefusal, WritableStore};
use crate::storage::spool::{self, IngestSummary, Spool};
use crate::storage::writer::WriterHandle;

const DELIVERY: Spool =
    Spool { name: "delivery", file: DELIVERY_SPOOL_FILE, rejected: DELIVERY_REJECTED_FILE, max_line: MAX_RECORD_BYTES };

/// A spool line as beed takes it: an observation that validates.
fn parse_line(line: &[u8]) -> Option<Observation> {
    serde_json::from_slice::<Observation>(line).ok().filter(|o| o.validate().is_ok())
}

/// The observations waiting in the spool at `dir`, in the order beed will
/// take them, parsed as beed will parse them; nothing is claimed or moved.
pub fn pending(dir: &Path) -> Vec<Observation> {
    let files = bee_proto::spool::pending_files(dir, DELIVERY_SPOOL_FILE).unwrap_or_default();
    files
        .iter()
        .filter_map(|path| spool::read_lines(path, DELIVERY.max_line, &parse_line).ok())
        .flat_map(|(o, _)| o)
        .collect()
}

/// Claims the delivery spool in `dir` and ingests every claimed file.
pub fn ingest(dir: &Path, writer: &WriterHandle<WritableStore>) -> io::Result<IngestSummary> {
    spool::ingest_spool(dir, &DELIVERY, parse_line, |observations, summary| {
        // Queue every append first, then wait: one group commit, not one per line.
        let pending: Vec<_> = observations.into_iter().map(|o| writer.submit_blocking(o)).collect();
        let mut settled = true;
        for answer in pending {
            match answer.wait().unwrap_or_else(|| Err(AppendRefusal::Io("writer stopped".into()))) {
                Ok(answer) if answer.outcome == bee_proto::delivery::AppendOutcome::Recorded => summary.recorded += 1,
                Ok(_) => summary.duplicates += 1,
                Err(AppendRefusal::Capacity(_)) => summary.refused_capacity += 1,
                Err(AppendRefusal::Io(reason)) => {
                    tracing::warn!(%reason, "delivery spool ingestion failed; kept for later");
                    settled = false;
                }
            }
        }
        settled
    })
}

/// The store's verified records followed by the observations waiting in the
/// hooks' spool at `spool_dir`, exactly as beed will store them (see
/// [`crate::delivery::store::read_verified_with`]).
pub fn read_verified_with_spool(dir: &Path, spool_dir: &Path) -> crate::delivery::store::VerifiedStore {
    crate::delivery::store::read_verified_with(dir, pending(spool_dir))
}
