//! The single writer: one thread owns the store and commits appends in groups.
//!
//! Requests queue on a channel; the thread takes everything waiting (up to
//! [`MAX_BATCH`]), appends it in one transaction with one sync, and only then
//! answers each request. Concurrent producers therefore share syncs instead of
//! paying one each, and an answer always means "committed".

use bee_proto::api::AppendAnswer;
use bee_proto::delivery::Observation;
use std::thread::JoinHandle;
use tokio::sync::{mpsc, oneshot};

use crate::store::{AppendRefusal, WritableStore};

/// Most appends committed in one transaction.
pub const MAX_BATCH: usize = 512;
/// Appends that may wait for the writer before producers are told it is busy.
const QUEUE_DEPTH: usize = 8_192;

type Reply = oneshot::Sender<Result<AppendAnswer, AppendRefusal>>;

/// Sends appends to the writer thread. Cloneable; the thread ends when the
/// last handle is dropped and the queue is drained.
#[derive(Clone)]
pub struct WriterHandle {
    queue: mpsc::Sender<(Observation, Reply)>,
}

impl WriterHandle {
    /// Appends `observation` and waits until it is committed (or refused).
    pub async fn append(&self, observation: Observation) -> Result<AppendAnswer, AppendRefusal> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .try_send((observation, reply))
            .map_err(|_| AppendRefusal::Io("writer queue is full or closed".into()))?;
        answer.await.map_err(|_| AppendRefusal::Io("writer stopped".into()))?
    }

    /// Queues `observation` from outside the async runtime without waiting
    /// for the commit; the returned [`Pending`] waits for it.
    pub fn submit_blocking(&self, observation: Observation) -> Pending {
        let (reply, answer) = oneshot::channel();
        match self.queue.blocking_send((observation, reply)) {
            Ok(()) => Pending(Some(answer)),
            Err(_) => Pending(None),
        }
    }
}

/// An append queued with [`WriterHandle::submit_blocking`].
pub struct Pending(Option<oneshot::Receiver<Result<AppendAnswer, AppendRefusal>>>);

impl Pending {
    /// Waits until the append is committed or refused.
    pub fn wait(self) -> Result<AppendAnswer, AppendRefusal> {
        let stopped = || AppendRefusal::Io("writer stopped".into());
        self.0.ok_or_else(stopped)?.blocking_recv().map_err(|_| stopped())?
    }
}

/// Starts the writer thread for `store`.
pub fn spawn(mut store: WritableStore) -> std::io::Result<(WriterHandle, JoinHandle<()>)> {
    let (queue, mut inbox) = mpsc::channel::<(Observation, Reply)>(QUEUE_DEPTH);
    let thread = std::thread::Builder::new().name("bee-writer".into()).spawn(move || {
        let mut observations = Vec::with_capacity(MAX_BATCH);
        let mut replies = Vec::with_capacity(MAX_BATCH);
        while let Some((observation, reply)) = inbox.blocking_recv() {
            observations.push(observation);
            replies.push(reply);
            while observations.len() < MAX_BATCH {
                match inbox.try_recv() {
                    Ok((observation, reply)) => {
                        observations.push(observation);
                        replies.push(reply);
                    }
                    Err(_) => break,
                }
            }
            let answers = store.append_batch(&observations);
            for (reply, answer) in replies.drain(..).zip(answers) {
                // A producer that stopped waiting is fine: the record is committed.
                let _ = reply.send(answer);
            }
            observations.clear();
        }
        tracing::debug!(records = store.records(), "writer drained and stopped");
    })?;
    Ok((WriterHandle { queue }, thread))
}
