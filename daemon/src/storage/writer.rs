//! The single writer of a store: one thread owns it and commits appends in groups.
//!
//! Requests queue on a channel; the thread takes everything waiting (up to
//! [`MAX_BATCH`]), appends it in one transaction, and only then answers each
//! request. Concurrent producers therefore share commits instead of paying
//! one each, and an answer always means "committed".

use std::thread::JoinHandle;
use tokio::sync::{mpsc, oneshot};

/// Most appends committed in one transaction.
pub const MAX_BATCH: usize = 512;
/// Appends that may wait for the writer before producers are told it is busy.
const QUEUE_DEPTH: usize = 8_192;

/// A store that appends a batch in one transaction, answering each item.
pub trait BatchStore: Send + 'static {
    type Item: Send + 'static;
    type Answer: Send + 'static;
    /// Appends `items` together; one answer per item, in order.
    fn append_batch(&mut self, items: &[Self::Item]) -> Vec<Self::Answer>;
}

type Queue<S> = mpsc::Sender<(<S as BatchStore>::Item, oneshot::Sender<<S as BatchStore>::Answer>)>;

/// Sends appends to a writer thread. Cloneable; the thread ends when the
/// last handle is dropped and the queue is drained.
pub struct WriterHandle<S: BatchStore> {
    queue: Queue<S>,
}

impl<S: BatchStore> Clone for WriterHandle<S> {
    fn clone(&self) -> Self {
        WriterHandle { queue: self.queue.clone() }
    }
}

impl<S: BatchStore> WriterHandle<S> {
    /// Appends `item` and waits until it is committed; `None` when the
    /// queue is full or the writer stopped.
    pub async fn submit(&self, item: S::Item) -> Option<S::Answer> {
        let (reply, answer) = oneshot::channel();
        self.queue.try_send((item, reply)).ok()?;
        answer.await.ok()
    }

    /// Queues `item` from outside the async runtime without waiting for the
    /// commit; the returned [`Pending`] waits for it.
    pub fn submit_blocking(&self, item: S::Item) -> Pending<S::Answer> {
        let (reply, answer) = oneshot::channel();
        match self.queue.blocking_send((item, reply)) {
            Ok(()) => Pending(Some(answer)),
            Err(_) => Pending(None),
        }
    }
}

/// An append queued with [`WriterHandle::submit_blocking`].
pub struct Pending<A>(Option<oneshot::Receiver<A>>);

impl<A> Pending<A> {
    /// Waits until the append is committed; `None` when the writer stopped.
    pub fn wait(self) -> Option<A> {
        self.0?.blocking_recv().ok()
    }
}

/// Starts the writer thread named `name` for `store`.
pub fn spawn<S: BatchStore>(mut store: S, name: &str) -> std::io::Result<(WriterHandle<S>, JoinHandle<()>)> {
    let (queue, mut inbox) = mpsc::channel::<(S::Item, oneshot::Sender<S::Answer>)>(QUEUE_DEPTH);
    let thread = std::thread::Builder::new().name(name.into()).spawn(move || {
        let mut items = Vec::with_capacity(MAX_BATCH);
        let mut replies = Vec::with_capacity(MAX_BATCH);
        while let Some((item, reply)) = inbox.blocking_recv() {
            items.push(item);
            replies.push(reply);
            while items.len() < MAX_BATCH {
                match inbox.try_recv() {
                    Ok((item, reply)) => {
                        items.push(item);
                        replies.push(reply);
                    }
                    Err(_) => break,
                }
            }
            let answers = store.append_batch(&items);
            for (reply, answer) in replies.drain(..).zip(answers) {
                // A producer that stopped waiting is fine: the record is committed.
                let _ = reply.send(answer);
            }
            items.clear();
        }
        tracing::debug!("writer drained and stopped");
    })?;
    Ok((WriterHandle { queue }, thread))
}
