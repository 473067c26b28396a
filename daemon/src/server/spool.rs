//! Ingestion of the producers' spools into the stores, on start and
//! periodically: delivery observations from hooks, ledger records from
//! `beectl run` and the other ledger producers.
//!
//! Idempotent by event or record id: a record that reached the daemon late
//! *and* was spooled is stored once. Lines that do not parse are moved to the
//! rejected file (never dropped); a file is removed only after every line in
//! it is committed, refused for capacity, or moved aside.

use bee_proto::delivery::{MAX_RECORD_BYTES, Observation};
use bee_proto::events::{EVENTS_REJECTED_FILE, EVENTS_SPOOL_FILE, MAX_EVENT_BYTES, PostFailure, SpooledEvent};
use bee_proto::ledger::{LEDGER_REJECTED_FILE, LEDGER_SPOOL_FILE, LedgerRecord, MAX_LEDGER_RECORD_BYTES};
use bee_proto::spool::{self, DELIVERY_REJECTED_FILE, DELIVERY_SPOOL_FILE};
use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;
use std::sync::Mutex;

use crate::delivery::store::{AppendRefusal, WritableStore};
use crate::events::store::{Arrival, EventWrite};
use crate::ledger::store::Ledger;
use crate::server::events::EventsState;
use crate::storage::lines::{self, Line};
use crate::storage::writer::WriterHandle;

/// What one ingestion pass did.
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
struct Spool {
    name: &'static str,
    file: &'static str,
    rejected: &'static str,
    max_line: usize,
}

const DELIVERY: Spool =
    Spool { name: "delivery", file: DELIVERY_SPOOL_FILE, rejected: DELIVERY_REJECTED_FILE, max_line: MAX_RECORD_BYTES };
const EVENTS: Spool =
    Spool { name: "events", file: EVENTS_SPOOL_FILE, rejected: EVENTS_REJECTED_FILE, max_line: MAX_EVENT_BYTES + 4096 };
const LEDGER: Spool = Spool {
    name: "ledger",
    file: LEDGER_SPOOL_FILE,
    rejected: LEDGER_REJECTED_FILE,
    max_line: MAX_LEDGER_RECORD_BYTES,
};

/// Claims the delivery spool in `dir` and ingests every claimed file.
pub fn ingest(dir: &Path, writer: &WriterHandle<WritableStore>) -> io::Result<IngestSummary> {
    ingest_spool(
        dir,
        &DELIVERY,
        |line| serde_json::from_slice::<Observation>(line).ok().filter(|o| o.validate().is_ok()),
        |observations, summary| {
            // Queue every append first, then wait: one group commit, not one per line.
            let pending: Vec<_> = observations.into_iter().map(|o| writer.submit_blocking(o)).collect();
            let mut settled = true;
            for answer in pending {
                match answer.wait().unwrap_or_else(|| Err(AppendRefusal::Io("writer stopped".into()))) {
                    Ok(answer) if answer.outcome == bee_proto::delivery::AppendOutcome::Recorded => {
                        summary.recorded += 1
                    }
                    Ok(_) => summary.duplicates += 1,
                    Err(AppendRefusal::Capacity(_)) => summary.refused_capacity += 1,
                    Err(AppendRefusal::Io(reason)) => {
                        tracing::warn!(%reason, "delivery spool ingestion failed; kept for later");
                        settled = false;
                    }
                }
            }
            settled
        },
    )
}

/// Claims the ledger spool in `dir` and appends every claimed file's records.
pub fn ingest_ledger(dir: &Path, ledger: &Mutex<Ledger>) -> io::Result<IngestSummary> {
    ingest_spool(
        dir,
        &LEDGER,
        |line| serde_json::from_slice::<LedgerRecord>(line).ok().filter(|r| crate::ledger::store::validate(r).is_ok()),
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

/// Claims the events spool in `dir`: events a sender could not deliver are
/// stored now, marked with how their post failed (the audit's evidence);
/// posts accepted without a receipt are kept as receipt issues.
pub fn ingest_events(dir: &Path, events: &EventsState) -> io::Result<IngestSummary> {
    ingest_spool(
        dir,
        &EVENTS,
        // A line whose event beed would refuse goes to the rejected file, like any unusable line.
        |line| {
            serde_json::from_slice::<SpooledEvent>(line).ok().filter(|spooled| {
                spooled
                    .event
                    .as_object()
                    .is_some_and(|event| bee_proto::events::accept_object(event.clone(), |_| false, 0).is_ok())
            })
        },
        |lines, summary| {
            let mut settled = true;
            for line in lines {
                let serde_json::Value::Object(body) = line.event else {
                    summary.rejected_lines += 1;
                    continue;
                };
                let now = bee_proto::time::now_unix_ms();
                let Ok(event) = bee_proto::events::accept_object(body, |app| events.captures(app), now) else {
                    summary.rejected_lines += 1;
                    continue;
                };
                let stored = if line.failure == PostFailure::NoReceipt {
                    let at_ms = bee_proto::time::parse_rfc3339_ms(&line.at_utc).unwrap_or(event.timestamp_ms);
                    let issue = EventWrite::ReceiptIssue {
                        session_id: event.session_id,
                        hook_event_type: event.hook_event_type,
                        failure: line.failure,
                        at_ms,
                    };
                    events.writer.submit_blocking(issue).wait().is_some_and(|answer| answer.is_ok())
                } else {
                    events.store_blocking(event, Arrival::Spooled(line.failure)).is_some()
                };
                if stored {
                    summary.recorded += 1;
                } else {
                    settled = false;
                }
            }
            settled
        },
    )
}

fn ingest_spool<T>(
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
        tracing::info!(spool = spool_kind.name, ?summary, "ingested spool");
    }
    Ok(summary)
}

/// The records of one claimed file, and its unusable lines (each ending in a newline).
fn read_lines<T>(path: &Path, max_line: usize, parse: &impl Fn(&[u8]) -> Option<T>) -> io::Result<(Vec<T>, Vec<u8>)> {
    let mut reader = BufReader::new(File::open(path)?);
    let mut records = Vec::new();
    let mut rejected = Vec::new();
    let mut line = Vec::with_capacity(max_line + 2);
    loop {
        // Read generously so that a line over the record bound is still kept
        // whole in the rejected file; only a giant one is merely noted.
        match lines::next(&mut reader, MAX_KEPT_LINE, &mut line)?.0 {
            Line::End => break,
            Line::Complete if line.len() > max_line + 1 => rejected.extend_from_slice(&line),
            Line::Complete => match parse(&line[..line.len() - 1]) {
                Some(record) => records.push(record),
                None => rejected.extend_from_slice(&line),
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
