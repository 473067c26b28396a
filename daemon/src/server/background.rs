//! beed's background work: spool ingestion on start and every few seconds,
//! the lost-write journal watch, and the periodic pass over the provider logs.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::delivery::store::WritableStore;
use crate::events::intake::EventsState;
use crate::ledger::intake::ingest;
use crate::ledger::stored::store::Ledger;
use crate::storage::writer::WriterHandle;

/// How long a transcript must be untouched before its last response is final.
pub(super) const QUIET: Duration = Duration::from_secs(30);

/// Ingests the provider logs now and then every `every`.
pub(super) async fn ingest_logs(ingestion: Arc<ingest::SinglePass>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let ingestion = ingestion.clone();
        match tokio::task::spawn_blocking(move || ingestion.run()).await {
            Ok(Ok(summary)) if summary.files_read > 0 => tracing::info!(
                "ingested provider logs: {} of {} files read ({} MB), {} records added, {} already there, \
                 {} lines unparseable, {} files read again from the start, {} unreadable",
                summary.files_read,
                summary.files_seen,
                summary.bytes_read >> 20,
                summary.records_appended,
                summary.duplicates,
                summary.unparseable_lines,
                summary.restarted_files,
                summary.unreadable_files
            ),
            Ok(Ok(_)) => {}
            Ok(Err(err)) => tracing::warn!(error = %err, "log ingestion failed"),
            Err(err) => tracing::error!(error = %err, "log ingestion panicked"),
        }
    }
}

/// Everything the spool ingestion needs.
#[derive(Clone)]
pub(super) struct Spools {
    pub(super) dir: PathBuf,
    pub(super) writer: WriterHandle<WritableStore>,
    pub(super) ledger: Arc<Mutex<Ledger>>,
    pub(super) events: Arc<EventsState>,
}

impl Spools {
    pub(super) async fn ingest(&self) {
        let spools = self.clone();
        let shown = self.dir.display().to_string();
        let done = tokio::task::spawn_blocking(move || {
            crate::delivery::spool::ingest(&spools.dir, &spools.writer)
                .and_then(|_| crate::ledger::intake::spool::ingest(&spools.dir, &spools.ledger))
                .and_then(|_| crate::events::spool::ingest(&spools.dir, &spools.events))
        })
        .await;
        match done {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => tracing::warn!(spool = %shown, error = %err, "spool ingestion failed"),
            Err(err) => tracing::error!(error = %err, "spool ingestion panicked"),
        }
    }

    pub(super) async fn poll(self, every: Duration, mut lost: crate::ledger::intake::record_failures::Watch) {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            self.ingest().await;
            lost.poll();
        }
    }
}
