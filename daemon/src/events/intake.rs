//! Taking an event in: storing it through the events writer and, when it is
//! new, handing it to live stream clients. The HTTP route and spool
//! ingestion both come through here, so an event is stored and broadcast the
//! same way whichever way it arrived.

use bee_proto::events::{NewEvent, stream_message};
use serde_json::Value;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::broadcast;

use crate::events::store::{Arrival, EventStore, EventWrite, Stored};
use crate::storage::writer::WriterHandle;

/// A stored event on its way to stream clients.
#[derive(Debug, Clone)]
pub struct Live {
    pub id: i64,
    /// Its session: a per-session stream forwards only its own.
    pub session: Arc<str>,
    pub message: Arc<str>,
    /// A stored event sent again because it changed (an operator answered
    /// it): every client gets it, whatever its replay held.
    pub update: bool,
}

/// What storing and streaming events share.
/// Tells what stopped the last ingestion pass over the agents' logs from
/// reading them all, if anything.
pub type IngestionFailure = Box<dyn Fn() -> Option<String> + Send + Sync>;

pub struct EventsState {
    pub writer: WriterHandle<EventStore>,
    pub store: PathBuf,
    pub live: broadcast::Sender<Live>,
    /// Source apps whose full payload is stored (opt-in).
    pub capture: HashSet<String>,
    /// Pinned manifests for the dashboard's verdicts (read at each audit,
    /// so an edit counts at once; a missing file is no manifest).
    pub manifests: Vec<PathBuf>,
    pub spool_dir: PathBuf,
    /// Becomes true when beed begins to stop: stream clients are closed.
    pub stopping: tokio::sync::watch::Receiver<bool>,
    /// What keeps the agents' logs from being ingested, if anything (asked
    /// by `/health`), once their ingestion runs.
    pub ingestion: std::sync::OnceLock<IngestionFailure>,
}

impl EventsState {
    /// Stores `event` as arrived; broadcasts it when new. The stored record.
    pub async fn store(&self, event: NewEvent, arrival: Arrival) -> Option<Value> {
        let body = event.clone();
        let Stored { id, fresh } = self.writer.submit(EventWrite::Event(Box::new(event), arrival)).await?.ok()?;
        Some(self.stored(&body, id, fresh))
    }

    /// [`EventsState::store`] from outside the runtime (spool ingestion).
    pub fn store_blocking(&self, event: NewEvent, arrival: Arrival) -> Option<Value> {
        let body = event.clone();
        let Stored { id, fresh } =
            self.writer.submit_blocking(EventWrite::Event(Box::new(event), arrival)).wait()?.ok()?;
        Some(self.stored(&body, id, fresh))
    }

    fn stored(&self, event: &NewEvent, id: i64, fresh: bool) -> Value {
        let stored = Value::Object(event.with_id(id));
        if fresh {
            // No receiver is fine: nobody is watching.
            let _ = self.live.send(Live {
                id,
                session: event.session_id.as_str().into(),
                message: stream_message("event", &stored).into(),
                update: false,
            });
        }
        stored
    }

    pub fn captures(&self, source_app: &str) -> bool {
        self.capture.contains(source_app)
    }
}
