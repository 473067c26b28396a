//! Ingesting the event senders' spool: events `bee-hook event` could not
//! deliver are stored now, once (by their key), marked with how their post
//! failed (the audit's transport evidence). The spool's line bound is the
//! live body limit: what beed would take live, it takes from the spool.

use bee_proto::events::{EVENTS_REJECTED_FILE, EVENTS_SPOOL_FILE, MAX_EVENT_BYTES, PostFailure, SpooledEvent};
use std::io;
use std::path::Path;

use crate::events::intake::EventsState;
use crate::events::store::{Arrival, EventWrite};
use crate::storage::spool::{self, IngestSummary, Spool};

const EVENTS: Spool =
    Spool { name: "events", file: EVENTS_SPOOL_FILE, rejected: EVENTS_REJECTED_FILE, max_line: MAX_EVENT_BYTES + 4096 };

/// Claims the events spool in `dir`: events a sender could not deliver are
/// stored now, marked with how their post failed (the audit's evidence);
/// posts accepted without a receipt are kept as receipt issues.
pub fn ingest(dir: &Path, events: &EventsState) -> io::Result<IngestSummary> {
    spool::ingest_spool(
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
                // A post answered without a stored id may or may not have been
                // stored: keep the sender's report as evidence, and store the
                // event itself (once, by its key) so it is never lost.
                let mut stored = true;
                if line.failure == PostFailure::NoReceipt {
                    let at_ms = bee_proto::time::parse_rfc3339_ms(&line.at_utc).unwrap_or(event.timestamp_ms);
                    let issue = EventWrite::ReceiptIssue {
                        session_id: event.session_id.clone(),
                        hook_event_type: event.hook_event_type.clone(),
                        failure: line.failure.clone(),
                        at_ms,
                    };
                    stored = events.writer.submit_blocking(issue).wait().is_some_and(|answer| answer.is_ok());
                }
                let stored = stored && events.store_blocking(event, Arrival::Spooled(line.failure)).is_some();
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
