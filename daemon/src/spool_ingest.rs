//! Ingestion of the hooks' spool into the store, on start and periodically.
//!
//! Idempotent by event id: an observation that reached the daemon late *and*
//! was spooled is stored once. Lines that do not parse are moved to the
//! rejected file (never dropped); a file is removed only after every line in
//! it is committed, refused for capacity, or moved aside.

use bee_proto::delivery::{MAX_RECORD_BYTES, Observation};
use bee_proto::spool::{self, DELIVERY_REJECTED_FILE, DELIVERY_SPOOL_FILE};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use crate::store::AppendRefusal;
use crate::writer::{Pending, WriterHandle};

/// What one ingestion pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IngestSummary {
    pub files: u64,
    pub recorded: u64,
    pub duplicates: u64,
    pub refused_capacity: u64,
    pub rejected_lines: u64,
}

/// Claims the delivery spool in `dir` and ingests every claimed file.
///
/// A file whose appends failed for I/O is kept for the next pass.
pub fn ingest(dir: &Path, writer: &WriterHandle) -> io::Result<IngestSummary> {
    let mut summary = IngestSummary::default();
    for path in spool::claim(dir, DELIVERY_SPOOL_FILE)? {
        summary.files += 1;
        if ingest_file(dir, &path, writer, &mut summary)? {
            std::fs::remove_file(&path)?;
        }
    }
    if summary.files > 0 {
        tracing::info!(?summary, "ingested delivery spool");
    }
    Ok(summary)
}

/// Returns whether every line was settled (so the file may go).
fn ingest_file(dir: &Path, path: &Path, writer: &WriterHandle, summary: &mut IngestSummary) -> io::Result<bool> {
    let mut reader = BufReader::new(File::open(path)?);
    let mut pending: Vec<Pending> = Vec::new();
    let mut rejected = Vec::new();
    let mut line = Vec::with_capacity(MAX_RECORD_BYTES + 2);
    loop {
        line.clear();
        let read = (&mut reader).take(MAX_RECORD_BYTES as u64 + 1).read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        if line.last() != Some(&b'\n') {
            // Too long, or a last line a crash cut short: keep it, aside.
            let mut rest = Vec::new();
            reader.read_until(b'\n', &mut rest)?;
            line.extend_from_slice(&rest);
            if line.last() != Some(&b'\n') {
                line.push(b'\n');
            }
            rejected.extend_from_slice(&line);
            summary.rejected_lines += 1;
            continue;
        }
        match parse_line(&line[..line.len() - 1]) {
            Some(observation) => pending.push(writer.submit_blocking(observation)),
            None => {
                rejected.extend_from_slice(&line);
                summary.rejected_lines += 1;
            }
        }
    }
    let mut settled = true;
    for answer in pending {
        match answer.wait() {
            Ok(answer) if answer.outcome == bee_proto::delivery::AppendOutcome::Recorded => {
                summary.recorded += 1;
            }
            Ok(_) => summary.duplicates += 1,
            Err(AppendRefusal::Capacity(_)) => summary.refused_capacity += 1,
            Err(AppendRefusal::Io(reason)) => {
                tracing::warn!(%reason, file = %path.display(), "spool ingestion failed; kept for later");
                settled = false;
            }
        }
    }
    // An unsettled file is read again next pass; moving its bad lines now
    // would move them twice.
    if settled && !rejected.is_empty() {
        tracing::warn!(lines = summary.rejected_lines, "unparseable spool lines moved to {DELIVERY_REJECTED_FILE}");
        spool::append_raw_lines(dir, DELIVERY_REJECTED_FILE, &rejected)?;
    }
    Ok(settled)
}

fn parse_line(line: &[u8]) -> Option<Observation> {
    let observation: Observation = serde_json::from_slice(line).ok()?;
    observation.validate().ok()?;
    Some(observation)
}
