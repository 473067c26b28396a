//! Claiming a producer spool and reading it: the mechanism every store's
//! spool ingestion shares. A spool file is claimed by rename, each line's
//! record is checked against the line's CRC-32 (a damaged line is set aside
//! with the reason in beed's log) and parsed by the caller, and the caller settles them in its store; only then
//! are unusable lines moved to the rejected file (never dropped) and the
//! claimed file removed. A file whose records could not be settled is read
//! again on the next pass.

use bee_proto::spool;
use std::io::{self, BufReader};
use std::path::Path;

use crate::storage::files;
use crate::storage::lines::{self, Line};

/// What one ingestion pass over a spool did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IngestSummary {
    pub files: u64,
    pub recorded: u64,
    pub duplicates: u64,
    pub refused_capacity: u64,
    pub rejected_lines: u64,
}

/// Longest unusable line moved to a rejected file whole.
const MAX_KEPT_LINE: u64 = 1024 * 1024;

/// One spool: its file names and line bound.
pub struct Spool {
    pub name: &'static str,
    pub file: &'static str,
    pub rejected: &'static str,
    pub max_line: usize,
}

/// Claims every file of `spool_kind` in `dir`, hands its parsed records to
/// `settle`, and removes the file once they are settled.
pub fn ingest_spool<T>(
    dir: &Path,
    spool_kind: &Spool,
    parse: impl Fn(&[u8]) -> Option<T>,
    mut settle: impl FnMut(Vec<T>, &mut IngestSummary) -> bool,
) -> io::Result<IngestSummary> {
    let mut summary = IngestSummary::default();
    for path in spool::claim(dir, spool_kind.file)? {
        summary.files += 1;
        let (records, rejected) = read_lines(&path, spool_kind.max_line, &parse)?;
        let rejected_lines = rejected.iter().filter(|&&b| b == b'\n').count() as u64;
        if !settle(records, &mut summary) {
            // Read again next pass; moving its bad lines now would move them twice.
            continue;
        }
        if rejected_lines > 0 {
            summary.rejected_lines += rejected_lines;
            tracing::warn!(lines = rejected_lines, "unparseable spool lines moved to {}", spool_kind.rejected);
            spool::append_raw_lines(dir, spool_kind.rejected, &rejected)?;
        }
        std::fs::remove_file(&path)?;
    }
    if summary.files > 0 {
        tracing::info!(
            spool = spool_kind.name,
            "ingested the spool: {} files, {} recorded, {} already stored, {} refused at capacity, {} lines rejected",
            summary.files,
            summary.recorded,
            summary.duplicates,
            summary.refused_capacity,
            summary.rejected_lines
        );
    }
    Ok(summary)
}

/// The records of one spool file, and its unusable lines (each ending in a
/// newline): what ingestion stores and what it sets aside.
pub fn read_lines<T>(
    path: &Path,
    max_line: usize,
    parse: &impl Fn(&[u8]) -> Option<T>,
) -> io::Result<(Vec<T>, Vec<u8>)> {
    let mut reader = BufReader::new(files::open_regular(path)?);
    let mut records = Vec::new();
    let mut rejected = Vec::new();
    let mut line = Vec::with_capacity(max_line + 2);
    loop {
        // Read generously so that a line over the record bound is still kept
        // whole in the rejected file; only a giant one is merely noted.
        match lines::next(&mut reader, MAX_KEPT_LINE.max(max_line as u64 + 2), &mut line)?.0 {
            Line::End => break,
            Line::Complete if line.len() > max_line + 1 => rejected.extend_from_slice(&line),
            Line::Complete => match spool::unseal(&line[..line.len() - 1]).map(parse) {
                Ok(Some(record)) => records.push(record),
                Ok(None) => rejected.extend_from_slice(&line),
                Err(damage) => {
                    tracing::warn!(file = %path.display(), %damage, "a damaged spool line set aside");
                    rejected.extend_from_slice(&line);
                }
            },
            // A last line a crash cut short: kept, aside, with its newline.
            Line::Partial => {
                rejected.extend_from_slice(&line);
                rejected.push(b'\n');
            }
            // Longer than any record can be: noted, not kept.
            Line::Oversized { .. } => rejected.extend_from_slice(b"(oversized line)\n"),
        }
    }
    Ok((records, rejected))
}
