//! Incremental ingestion of every agent's own records into the ledger (the
//! agents and where each keeps its records: `ledger::agents`), so the quota
//! words work for people who never used `beectl run`.
//!
//! Each file's offset (with its device and inode) is kept in the ledger and
//! moved in the same transaction as the records read up to it: what was
//! ingested is never read again. A file that shrank (truncated) or is another
//! file at the same path (rotated) is read from its start; record ids derived
//! from what the providers logged (session, message and request ids) make a
//! re-read add nothing twice. A partially written last line waits for its
//! newline; Claude's last response without its stop reason waits until its
//! own time is a while past, since streaming may still rewrite it with
//! fuller counters (the record's time, not the file's: a log copied today
//! may hold records of weeks ago).
//!
//! Lines without a usage marker are skipped before any JSON parsing; the
//! rest are parsed into small typed shapes that skip message content (a
//! Claude response line by a checked scan of its few fields, see
//! `agents::claude`).

use bee_proto::ledger::{LedgerAppended, MOST_SKIPPED_NAMED, Provider, SkipReason, SkippedRecord};
use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use crate::ledger::agents::{self, LogParser, MAX_LINE_BYTES};
use crate::ledger::stored::evidence::{Evidence, FileOffset, Staged};
use crate::ledger::stored::responses::{self, PacksAhead, Prepared, Response};
use crate::ledger::stored::rollup::HeldResponses;
use crate::ledger::stored::store::{BulkJournal, Ledger};
use crate::storage::lines::{self, Line};
use crate::storage::sqlite::DbError;

/// Records committed per transaction, gathered across the files of a pass.
const RECORDS_PER_COMMIT: usize = 16_384;
/// Files with at most this much unread are read in one go (a reader
/// thread's buffer holds this much at most); larger ones a chunk at a time.
const WHOLE_READ_BYTES: u64 = 16 << 20;

/// Records committed per transaction by a first pass over an empty store:
/// the store's pages are written once and in order, and a history of
/// ordinary size (a few hundred megabytes of logs) is one transaction, at
/// about 30 MiB of records held.
const FIRST_PASS_RECORDS_PER_COMMIT: usize = 65_536;

/// Where each agent's records are.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    dirs: Vec<(Provider, Vec<PathBuf>)>,
}

impl Roots {
    /// As each agent itself finds its records (see [`agents::Agent::record_dirs`]).
    pub fn from_env() -> Roots {
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        Roots { dirs: agents::all().map(|agent| (agent.provider(), agent.record_dirs(&env))).collect() }
    }

    /// Only `provider`'s records, in `dirs`.
    pub fn of(provider: Provider, dirs: Vec<PathBuf>) -> Roots {
        Roots { dirs: vec![(provider, dirs)] }
    }

    /// `provider`'s records in `dirs`, instead of where they were said to be.
    pub fn set(&mut self, provider: Provider, dirs: Vec<PathBuf>) {
        self.dirs.retain(|(known, _)| *known != provider);
        self.dirs.push((provider, dirs));
    }

    /// Each agent's directories.
    pub fn by_agent(&self) -> impl Iterator<Item = (Provider, &[PathBuf])> {
        self.dirs.iter().map(|(provider, dirs)| (*provider, dirs.as_slice()))
    }

    /// Every directory, whoever's.
    pub fn all_dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.dirs.iter().flat_map(|(_, dirs)| dirs)
    }
}

pub use bee_proto::ledger::PassSummary;

/// One ingestion pass at a time over a ledger's log roots: a caller that
/// arrives while a pass runs waits for it and gets its summary, instead of
/// reading the same new lines again before the running pass committed them.
pub struct SinglePass {
    ledger: std::sync::Arc<Mutex<Ledger>>,
    roots: Roots,
    quiet: Duration,
    state: Mutex<PassState>,
    finished: std::sync::Condvar,
}

#[derive(Debug, Default)]
struct PassState {
    running: bool,
    /// Passes finished so far, and the last one's outcome.
    finished: u64,
    last: Option<Result<PassSummary, String>>,
}

impl SinglePass {
    pub fn new(ledger: std::sync::Arc<Mutex<Ledger>>, roots: Roots, quiet: Duration) -> SinglePass {
        SinglePass { ledger, roots, quiet, state: Mutex::default(), finished: std::sync::Condvar::new() }
    }

    /// What stops the last pass from having read every log, if anything:
    /// the pass failed, or an agent's reader failed on a file.
    pub fn last_failure(&self) -> Option<String> {
        let state = match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        match state.last.as_ref()? {
            Err(err) => Some(format!("the last ingestion pass failed: {err}")),
            Ok(summary) => {
                let failed: Vec<&str> = summary
                    .skipped
                    .iter()
                    .filter(|skipped| skipped.reason == SkipReason::ReaderFailed)
                    .map(|skipped| skipped.file.as_str())
                    .collect();
                (!failed.is_empty()).then(|| format!("an agent's reader failed on {}", failed.join(", ")))
            }
        }
    }

    /// Runs a pass, or waits for the one running and answers with its
    /// summary. Blocking: call it off the async runtime.
    pub fn run(&self) -> Result<PassSummary, String> {
        let mut state = self.state.lock().map_err(|_| "ingestion state poisoned".to_owned())?;
        if state.running {
            let waited_for = state.finished;
            while state.finished == waited_for {
                state = self.finished.wait(state).map_err(|_| "ingestion state poisoned".to_owned())?;
            }
            return state.last.clone().unwrap_or_else(|| Err("no pass finished".to_owned()));
        }
        state.running = true;
        drop(state);
        // Whatever happens to the pass — a panic included — the waiters are
        // told it ended, and the next caller runs a pass of its own.
        let mut finish = Finish { single: self, outcome: Err("the ingestion pass ended abnormally".to_owned()) };
        finish.outcome = pass(&self.ledger, &self.roots, self.quiet, 2, &|_, _| {}).map_err(|err| err.to_string());
        finish.outcome.clone()
    }
}

/// Marks a [`SinglePass`] pass finished when dropped.
struct Finish<'a> {
    single: &'a SinglePass,
    outcome: Result<PassSummary, String>,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        let mut state = match self.single.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        state.running = false;
        state.finished += 1;
        state.last = Some(self.outcome.clone());
        self.single.finished.notify_all();
    }
}

/// The response writes one ingestion pass committed. When the pass began
/// on a store without responses, these are every write the store holds,
/// and the pass settles the aggregates from them instead of reading back
/// what it just wrote.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// The committed batches as the readers staged them: kept, not copied
    /// (they are most of a first pass's memory). Only their response
    /// writes are read.
    batches: Vec<Vec<Staged>>,
    /// How many response writes `batches` holds.
    writes: usize,
    /// Response writes the pass inserted (rows new to the store).
    pub(crate) written: u64,
}

impl Held {
    /// More writes than this are not held: the pass settles from the
    /// store, and first-pass memory stays bounded.
    pub(crate) const MOST: usize = 150_000;

    /// Takes in a committed batch (see [`Held::has_room`]).
    pub(crate) fn absorb(&mut self, batch: Vec<Vec<Staged>>) {
        self.writes += batch.iter().flatten().filter(|staged| staged.response().is_some()).count();
        self.batches.extend(batch);
    }

    /// The responses of the writes held and of `more` (a batch being
    /// committed), merged as a read of the store merges them.
    pub(crate) fn responses_with<'a>(&'a self, more: impl Iterator<Item = &'a Prepared>) -> Vec<Response> {
        let writes: Vec<&Prepared> = self.batches.iter().flatten().filter_map(Staged::response).chain(more).collect();
        responses::merge_prepared(&writes)
    }

    /// Whether `more` writes can be held too.
    pub(crate) fn has_room(&self, more: usize) -> bool {
        self.writes.saturating_add(more) <= Held::MOST
    }
}

/// Reports progress as (bytes done, bytes to read).
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// One ingestion pass over `roots`, with `workers` files read in parallel.
/// `quiet` is how long after its own time a response whose record does not
/// say it is over (Claude's last write without a stop reason) is taken as
/// final.
pub fn pass(
    ledger: &Mutex<Ledger>,
    roots: &Roots,
    quiet: Duration,
    workers: usize,
    progress: Progress<'_>,
) -> Result<PassSummary, DbError> {
    pass_then(ledger, roots, quiet, workers, progress, || ()).map(|(summary, ())| summary)
}

/// [`pass`], then `then` (say, a view of the ledger read on a connection
/// of its own) as soon as the pass is settled: a first pass loaded through
/// the WAL goes on copying it into the database file meanwhile, and
/// neither waits for the other. Not run when the pass fails.
pub fn pass_then<T>(
    ledger: &Mutex<Ledger>,
    roots: &Roots,
    quiet: Duration,
    workers: usize,
    progress: Progress<'_>,
    then: impl FnOnce() -> T,
) -> Result<(PassSummary, T), DbError> {
    let began = std::time::Instant::now();
    let offsets = lock(ledger)?.offsets()?;
    let mut files = Vec::new();
    for (provider, dirs) in roots.by_agent() {
        for root in dirs {
            walk(root, provider, &mut files);
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
    let mut summary = PassSummary { files_seen: files.len() as u64, ..PassSummary::default() };
    // Only files with something new are read.
    let todo: Vec<ToRead> = files
        .into_iter()
        .filter_map(|(path, provider, meta)| {
            let known = offsets.get(path.to_string_lossy().as_ref());
            let news = news(provider, &path, &meta, known)?;
            Some(ToRead { path, provider, meta, news })
        })
        .collect();
    summary.restarted_files = todo
        .iter()
        .filter(|file| file.news.restarted && offsets.contains_key(file.path.to_string_lossy().as_ref()))
        .count() as u64;
    let total: u64 = todo.iter().map(|file| file.news.bytes).sum();
    let done = AtomicU64::new(0);
    let next = AtomicUsize::new(0);
    // A first pass over an empty store holds what it writes, to settle
    // from memory (see `Held`).
    let held = lock(ledger)?.holds_no_response()?.then(Held::default);
    let bulk = match held {
        Some(_) => Some(BulkLoad::begin(ledger)?),
        None => None,
    };
    // Batches wait here for the one writer: the readers go on reading while
    // it commits, and stop waiting once two are queued (a first pass's
    // larger batches: once one is).
    let queued = if held.is_some() { 0 } else { 2 };
    let (sender, batches) = std::sync::mpsc::sync_channel::<Pending>(queued);
    let committer = Committer {
        ledger,
        per_commit: if held.is_some() { FIRST_PASS_RECORDS_PER_COMMIT } else { RECORDS_PER_COMMIT },
        held: Mutex::new(held),
        merged: Mutex::new(None),
        queue: Mutex::new(Queue { pending: Pending::default(), sender: Some(sender) }),
        failure: Mutex::new(None),
        failed: AtomicBool::new(false),
        totals: Mutex::new(summary),
    };
    let totals = &committer.totals;
    std::thread::scope(|scope| {
        scope.spawn(|| committer.write(batches));
        // The writer ends once the queue closes: closed however the
        // readers end, so a reader's fault can never leave it waiting.
        let _closing = CloseQueue(&committer);
        std::thread::scope(|readers| {
            for _ in 0..workers.max(1) {
                readers.spawn(|| {
                    // One read buffer for all of this reader's files.
                    let mut buffer = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(file) = todo.get(index) else { break };
                        let path = &file.path;
                        let report = |bytes| {
                            let now = done.fetch_add(bytes, Ordering::Relaxed) + bytes;
                            progress(now, total);
                        };
                        // A reader that fails on a hostile record (a fault in a
                        // dependency included) costs its file, named, never the
                        // pass: the other files and the writer go on.
                        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            read_file(&committer, file, quiet, &report, &mut buffer)
                        }))
                        .unwrap_or_else(|_| {
                            buffer = Vec::new();
                            // Named as every record passed over is: the
                            // whole of what was new in the file.
                            let at = file.news.start.offset;
                            agents::skipped::note(SkipReason::ReaderFailed, at, file.news.bytes);
                            Err(ReadError::Failed)
                        });
                        let notes = agents::skipped::take();
                        if let Ok(mut totals) = totals.lock() {
                            name_skipped(&mut totals, file, notes);
                        }
                        match result {
                            Ok(file) => {
                                if let Ok(mut totals) = totals.lock() {
                                    totals.files_read += 1;
                                    totals.bytes_read += file.bytes_read;
                                    totals.unparseable_lines += file.unparseable;
                                }
                            }
                            Err(ReadError::Io(err)) => {
                                unreadable_warning(path, &file.meta, &err);
                                if let Ok(mut totals) = totals.lock() {
                                    totals.unreadable_files += 1;
                                }
                            }
                            Err(ReadError::Failed) => {
                                tracing::error!(file = %path.display(), "the agent's reader failed on this log; \
                                    the rest of the pass goes on");
                            }
                            Err(ReadError::Db(err)) => committer.fail(err),
                        }
                    }
                });
            }
        });
        tracing::debug!(elapsed_ms = began.elapsed().as_millis() as u64, "ingestion pass: logs read");
        committer.flush();
    });
    if let Some(err) = committer.failure.into_inner().ok().flatten() {
        drop(bulk);
        return Err(err);
    }
    let summary = committer.totals.into_inner().unwrap_or_default();
    tracing::debug!(elapsed_ms = began.elapsed().as_millis() as u64, "ingestion pass: committed");
    let mut merged = committer.merged.into_inner().ok().flatten();
    // Also settles hours left dirty by a failed settle or a schema upgrade.
    let mut settle = |ledger: &mut Ledger| {
        match &mut merged {
            Some((held, written)) => ledger.settle_held(held, *written),
            None => ledger.settle(),
        }
        tracing::debug!(elapsed_ms = began.elapsed().as_millis() as u64, "ingestion pass: settled");
    };
    let answer = match bulk {
        Some(bulk) => bulk.finish(settle, then)?,
        None => {
            settle(&mut *lock(ledger)?);
            then()
        }
    };
    // Only a first pass holds its responses: later passes start no thread.
    if let Some(merged) = merged {
        drop_aside(merged);
    }
    // A long line's buffer is not kept between passes.
    crate::storage::large::give_back_memory();
    Ok((summary, answer))
}

/// A first pass's bulk load ([`Ledger::begin_bulk_load`]): finished after
/// the writer's last commit, else ended when dropped, on any way out of
/// the pass.
struct BulkLoad<'a> {
    ledger: &'a Mutex<Ledger>,
    journal: BulkJournal,
    finished: bool,
}

impl<'a> BulkLoad<'a> {
    fn begin(ledger: &'a Mutex<Ledger>) -> Result<BulkLoad<'a>, DbError> {
        let journal = lock(ledger)?.begin_bulk_load()?;
        tracing::debug!(?journal, "ingestion pass: a first pass's bulk load");
        Ok(BulkLoad { ledger, journal, finished: false })
    }

    /// [`Ledger::end_bulk_load`] with `settle` and `then` in it. Loaded
    /// through a rollback journal, the pass is in the database already:
    /// `settle` writes the aggregates the same way, the store returns to
    /// WAL mode, and `then` runs. Loaded through the WAL, the WAL (the
    /// whole pass) is copied into the database on a connection of its own
    /// while `settle` writes the aggregates on the ledger's, and the
    /// settling commit is copied while `then` runs; checkpoints resume once
    /// all are done, so the settling commit never starts another. A step
    /// that fails is logged, and the load is ended when dropped, as on any
    /// other way out.
    fn finish<T>(mut self, settle: impl FnOnce(&mut Ledger), then: impl FnOnce() -> T) -> Result<T, DbError> {
        let mut ledger = lock(self.ledger)?;
        if self.journal == BulkJournal::Rollback {
            settle(&mut ledger);
            self.finished = ledger.end_bulk_load(BulkJournal::Rollback).is_ok();
            // The ledger is free while `then` runs.
            drop(ledger);
            return Ok(then());
        }
        let (answer, copied) = std::thread::scope(|scope| {
            let (settled, last_commit) = std::sync::mpsc::channel();
            let copying =
                ledger.checkpointer().map(|checkpointer| scope.spawn(move || checkpointer.copy_wal(last_commit)));
            settle(&mut ledger);
            drop(settled);
            // The ledger is free while `then` runs.
            drop(ledger);
            let answer = then();
            let copied = copying
                .and_then(|copying| copying.join().unwrap_or(Err(DbError::Invalid("the WAL copy stopped abnormally"))));
            (answer, copied)
        });
        match copied {
            Ok(()) => self.finished = lock(self.ledger).and_then(|mut ledger| ledger.resume_checkpoints()).is_ok(),
            Err(err) => tracing::warn!(error = %err, "the first pass's bulk load not finished; ending it now"),
        }
        Ok(answer)
    }
}

impl Drop for BulkLoad<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let ended = lock(self.ledger).and_then(|mut ledger| ledger.end_bulk_load(self.journal));
        if let Err(err) = ended {
            tracing::warn!(error = %err, "the first pass's bulk load not ended; the store's next open ends it");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>, DbError> {
    mutex.lock().map_err(|_| DbError::Invalid("ledger lock poisoned"))
}

/// Records read and the offsets they were read up to, not committed yet.
#[derive(Default)]
struct Pending {
    /// As the readers handed them over: gathered without copying them again.
    records: Vec<Vec<Staged>>,
    /// How many `records` holds.
    count: usize,
    offsets: Vec<(String, FileOffset)>,
    /// The pass's last batch.
    last: bool,
}

/// The batch being gathered, and the way to the writer.
struct Queue {
    pending: Pending,
    /// Dropped once the readers are done: the writer then ends.
    sender: Option<std::sync::mpsc::SyncSender<Pending>>,
}

/// Commits what the readers read, many files' chunks per transaction, on
/// a writer thread of its own: record ids are random, so every commit
/// rewrites pages all over the id index, and fewer, larger commits write
/// each page fewer times. Batches reach the ledger in the order they were
/// gathered, so a file's offset never moves back.
struct Committer<'a> {
    ledger: &'a Mutex<Ledger>,
    /// The pass's responses so far, while it may settle from them.
    held: Mutex<Option<Held>>,
    /// Once the last batch is committed: the pass's responses merged, with
    /// their hours' parts, and how many writes it inserted (see [`Held`]).
    merged: Mutex<Option<(HeldResponses, u64)>>,
    queue: Mutex<Queue>,
    /// The first error that stopped the pass; readers stop at the next push.
    failure: Mutex<Option<DbError>>,
    failed: AtomicBool,
    totals: Mutex<PassSummary>,
    per_commit: usize,
}

impl Committer<'_> {
    /// Queues `records` read from `path` up to `at`, prepared for the store
    /// here on the reader's thread; hands a batch to the writer when enough
    /// are queued. A record outside the ledger's bounds (a hostile or broken
    /// log line) is dropped here, so it can never hold a whole batch back:
    /// the number dropped.
    fn push(&self, records: &mut Vec<Evidence>, path: &str, at: FileOffset) -> Result<u64, DbError> {
        if self.failed.load(Ordering::Relaxed) {
            return Err(DbError::Invalid("the ingestion pass stopped"));
        }
        let before = records.len();
        let mut staged = Vec::with_capacity(before);
        staged.extend(records.drain(..).filter_map(Staged::of_valid));
        let dropped = (before - staged.len()) as u64;
        let mut queue = lock(&self.queue)?;
        queue.pending.count += staged.len();
        queue.pending.records.push(staged);
        queue.pending.offsets.push((path.to_owned(), at));
        if queue.pending.count >= self.per_commit {
            let batch = std::mem::take(&mut queue.pending);
            // Sent under the queue's lock: batches leave in the order taken.
            if let Some(sender) = &queue.sender
                && sender.send(batch).is_err()
            {
                return Err(DbError::Invalid("the ledger writer stopped"));
            }
        }
        Ok(dropped)
    }

    /// Hands the last batch to the writer and lets it end.
    /// Called again, it does nothing.
    fn flush(&self) {
        let mut queue = match self.queue.lock() {
            Ok(queue) => queue,
            // A reader failed while queueing: nothing more is committed,
            // and the writer is still let go.
            Err(poisoned) => {
                self.fail(DbError::Invalid("ingestion queue poisoned"));
                poisoned.into_inner()
            }
        };
        let batch = Pending { last: true, ..std::mem::take(&mut queue.pending) };
        if let Some(sender) = queue.sender.take()
            && !self.failed.load(Ordering::Relaxed)
        {
            // A writer that is gone has already recorded why.
            let _ = sender.send(batch);
        }
    }

    fn fail(&self, err: DbError) {
        self.failed.store(true, Ordering::Relaxed);
        if let Ok(mut failure) = self.failure.lock() {
            failure.get_or_insert(err);
        }
    }

    /// The writer: commits batches in order until the queue closes; after
    /// a failure, drains the rest without committing them.
    fn write(&self, batches: std::sync::mpsc::Receiver<Pending>) {
        for batch in batches {
            if self.failed.load(Ordering::Relaxed) {
                continue;
            }
            // A fault in a commit ends the pass with an error, never with
            // a writer gone and readers waiting on it.
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.commit(batch))) {
                Ok(Ok(())) => {}
                Ok(Err(err)) => self.fail(err),
                Err(_) => self.fail(DbError::Invalid("the ledger writer failed")),
            }
        }
    }

    fn commit(&self, pending: Pending) -> Result<(), DbError> {
        let mut held = lock(&self.held)?.take();
        if held.as_ref().is_some_and(|holding| !holding.has_room(responses_of(&pending.records).count())) {
            held = None;
        }
        let (answer, inserted, merged) = match &held {
            // The pass's last batch: while the writer inserts its
            // identities, another thread encodes its packs (every write of
            // a first pass is new), then merges the pass's responses and
            // sums their hours' parts.
            Some(holding) if pending.last => {
                let last = lock(self.ledger)?.last_pack()?;
                let (packed, packs) = std::sync::mpsc::sync_channel(1);
                std::thread::scope(|scope| {
                    let merging = scope.spawn(|| {
                        let writes: Vec<&Prepared> = responses_of(&pending.records).collect();
                        // A writer that is gone has failed and says why.
                        let _ = packed.send(PacksAhead::encode(&writes, last));
                        drop(packed);
                        HeldResponses::new(holding.responses_with(writes.into_iter()))
                    });
                    let appended = self.append(&pending, || packs.recv().ok().flatten());
                    // A merge that failed leaves the settling to the store.
                    let merged = merging.join().ok();
                    appended.map(|(answer, inserted)| (answer, inserted, merged))
                })?
            }
            _ => {
                let (answer, inserted) = self.append(&pending, || None)?;
                (answer, inserted, None)
            }
        };
        if let Some(mut holding) = held {
            holding.written += inserted;
            match merged {
                Some(responses) => {
                    *lock(&self.merged)? = Some((responses, holding.written));
                    drop_aside((pending.records, holding));
                }
                None if !pending.last => {
                    holding.absorb(pending.records);
                    *lock(&self.held)? = Some(holding);
                }
                None => {}
            }
        }
        let mut totals = lock(&self.totals)?;
        totals.records_appended += answer.appended;
        totals.duplicates += answer.duplicates;
        Ok(())
    }

    /// Appends a batch: its records and offsets, in one transaction
    /// (`packs_ahead` as [`Ledger::append_staged`] takes it).
    fn append(
        &self,
        pending: &Pending,
        packs_ahead: impl FnOnce() -> Option<PacksAhead>,
    ) -> Result<(LedgerAppended, u64), DbError> {
        if pending.offsets.is_empty() {
            return Ok((LedgerAppended { appended: 0, duplicates: 0 }, 0));
        }
        lock(self.ledger)?.append_staged(pending.records.iter().flatten(), &pending.offsets, packs_ahead)
    }
}

/// Frees `value` on a thread of its own: a first pass's records and
/// responses are a quarter of a million small allocations, milliseconds
/// of freeing that nothing after the pass waits for. Freed here when no
/// thread can be started.
fn drop_aside<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new().name("bee-free".into()).spawn(move || drop(value));
}

/// The response writes among `records`.
fn responses_of(records: &[Vec<Staged>]) -> impl Iterator<Item = &Prepared> {
    records.iter().flatten().filter_map(Staged::response)
}

/// How far the ledger (its `offsets`) is behind each provider's logs under `roots`.
pub fn lag(
    roots: &Roots,
    offsets: &std::collections::HashMap<String, FileOffset>,
) -> Vec<bee_proto::api::IngestionLag> {
    roots
        .by_agent()
        .map(|(provider, dirs)| {
            let (mut files, mut skipped_files) = (Vec::new(), Vec::new());
            for root in dirs {
                walk_naming_skipped(root, provider, &mut files, &mut skipped_files);
            }
            let mut lag = bee_proto::api::IngestionLag {
                provider,
                files: files.len() as u64,
                files_behind: 0,
                bytes_behind: 0,
                skipped_files,
            };
            for (path, _, meta) in &files {
                if let Some(news) = news(provider, path, meta, offsets.get(path.to_string_lossy().as_ref())) {
                    lag.files_behind += 1;
                    lag.bytes_behind += news.bytes;
                }
            }
            lag
        })
        .collect()
}

/// `beectl agents`: every agent, where it looks (`roots`), its record
/// files there, how many the ledger read (`offsets`), the responses of it
/// the ledger holds (`responses`, `None` with no ledger), the time of its
/// newest record there (`newest`, unix ms: the record's own time, never a
/// file's), and what its records can say.
pub fn agents_report(
    roots: &Roots,
    offsets: &std::collections::HashMap<String, FileOffset>,
    responses: Option<&std::collections::BTreeMap<Provider, u64>>,
    newest: Option<&std::collections::BTreeMap<Provider, i64>>,
) -> bee_proto::ledger::AgentsReport {
    let agents = agents::all()
        .map(|agent| {
            let provider = agent.provider();
            let dirs = roots.by_agent().find(|(known, _)| *known == provider).map_or(&[][..], |(_, dirs)| dirs);
            let (mut files, mut skipped_files) = (Vec::new(), Vec::new());
            for root in dirs {
                walk_naming_skipped(root, provider, &mut files, &mut skipped_files);
            }
            bee_proto::ledger::AgentRow {
                agent: provider,
                title: agent.title().to_owned(),
                looks_in: dirs.iter().map(|dir| dir.display().to_string()).collect(),
                found: dirs.iter().any(|dir| dir.exists()),
                files: files.len() as u64,
                files_read: files
                    .iter()
                    .filter(|(path, _, _)| offsets.contains_key(path.to_string_lossy().as_ref()))
                    .count() as u64,
                responses: responses.map(|counted| counted.get(&provider).copied().unwrap_or(0)),
                newest_record_utc: newest
                    .and_then(|newest| newest.get(&provider))
                    .map(|&at| bee_proto::time::format_unix_ms(at)),
                records: agent.records(),
                verified: agent.verified().to_string(),
                // Settings are the hooks' side: `beectl agents` fills it.
                turn_hooks: None,
                skipped_files,
            }
        })
        .collect();
    bee_proto::ledger::AgentsReport { schema_version: 1, agents }
}

/// `provider`'s record files under `root` (regular files its agent names
/// its own); links are not followed. A root that is a file (an agent's
/// database its own variable names) is that one record file.
fn walk(root: &Path, provider: Provider, into: &mut Vec<(PathBuf, Provider, std::fs::Metadata)>) {
    walk_naming_skipped(root, provider, into, &mut Vec::new());
}

/// [`walk`], naming in `skipped` what it passes over that is neither a
/// folder nor a regular file: links (a link is never followed), FIFOs,
/// sockets and devices.
fn walk_naming_skipped(
    root: &Path,
    provider: Provider,
    into: &mut Vec<(PathBuf, Provider, std::fs::Metadata)>,
    skipped: &mut Vec<bee_proto::ledger::SkippedFile>,
) {
    let agent = agents::agent(provider);
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotADirectory && dir == root => {
                if let Some(meta) = std::fs::symlink_metadata(root).ok().filter(std::fs::Metadata::is_file) {
                    into.push((root.to_path_buf(), provider, meta));
                }
                continue;
            }
            Err(_) => continue,
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                if agent.is_record_file(&path)
                    && let Ok(meta) = entry.metadata()
                {
                    into.push((path, provider, meta));
                }
            } else {
                use std::os::unix::fs::FileTypeExt;
                let what = if kind.is_symlink() {
                    "link"
                } else if kind.is_fifo() {
                    "fifo"
                } else if kind.is_socket() {
                    "socket"
                } else {
                    "device"
                };
                if skipped.len() < MOST_SKIPPED_NAMED {
                    skipped
                        .push(bee_proto::ledger::SkippedFile { path: path.display().to_string(), kind: what.into() });
                }
            }
        }
    }
}

enum ReadError {
    Io(io::Error),
    Db(DbError),
    /// The agent's reader failed (a fault caught): the file is named, the
    /// pass goes on.
    Failed,
}

/// Closes the committer's queue when dropped (see [`Committer::flush`]).
struct CloseQueue<'c, 'l>(&'c Committer<'l>);

impl Drop for CloseQueue<'_, '_> {
    fn drop(&mut self) {
        self.0.flush();
    }
}

/// Adds what a reader passed over in `file` to the pass's summary.
fn name_skipped(totals: &mut PassSummary, file: &ToRead, notes: agents::skipped::Notes) {
    totals.skipped_records += notes.count;
    for noted in notes.first {
        tracing::warn!(
            file = %file.path.display(),
            offset = noted.offset,
            bytes = noted.bytes,
            reason = noted.reason.as_str(),
            "a record was passed over"
        );
        if totals.skipped.len() < MOST_SKIPPED_NAMED {
            totals.skipped.push(SkippedRecord {
                agent: file.provider,
                file: file.path.display().to_string(),
                offset: noted.offset,
                bytes: noted.bytes,
                reason: noted.reason,
            });
        }
    }
}

/// Files warned about as unreadable, with the version they had then: a
/// file is warned about again only once it changed.
static WARNED_UNREADABLE: Mutex<Option<std::collections::HashMap<PathBuf, FileStamp>>> = Mutex::new(None);

/// A file's device, inode, size and modification time, folded.
type FileStamp = (u64, u64, i64, i64);

/// A log that could not be read: warned about once per change of it.
fn unreadable_warning(path: &Path, meta: &std::fs::Metadata, err: &io::Error) {
    let version = (meta.dev(), meta.ino(), meta.len() as i64, meta.mtime_nsec() ^ meta.mtime());
    let first = match WARNED_UNREADABLE.lock() {
        Ok(mut warned) => warned.get_or_insert_default().insert(path.to_owned(), version) != Some(version),
        Err(_) => true,
    };
    if first {
        tracing::warn!(file = %path.display(), error = %err, "log not readable; skipped until it changes");
    } else {
        tracing::debug!(file = %path.display(), error = %err, "log still not readable");
    }
}

impl From<io::Error> for ReadError {
    fn from(err: io::Error) -> Self {
        ReadError::Io(err)
    }
}

impl From<DbError> for ReadError {
    fn from(err: DbError) -> Self {
        ReadError::Db(err)
    }
}

#[derive(Default)]
struct FileSummary {
    bytes_read: u64,
    unparseable: u64,
}

/// How many bytes a reader reads between two reports of its progress.
const PROGRESS_STEP_BYTES: u64 = 1 << 20;

/// A log with something new to read, and where to start.
struct ToRead {
    path: PathBuf,
    provider: Provider,
    meta: std::fs::Metadata,
    news: News,
}

/// What a record file holds that was not read yet.
struct News {
    /// Where reading starts, and what its agent's reader kept there.
    start: FileOffset,
    /// Bytes to read (a file read whole: all of it).
    bytes: u64,
    /// Read from its start again, though it was read before (truncated,
    /// another file at its path).
    restarted: bool,
    /// A file read whole: its version now ([`file_version`]), stored as
    /// its offset once read.
    version: Option<u64>,
}

/// What `path` holds beyond `known` (where the ledger read it up to), if
/// anything: a line log grows past its offset; a file read whole (a
/// database, a JSON document) is read again whenever its version moved.
fn news(provider: Provider, path: &Path, meta: &std::fs::Metadata, known: Option<&FileOffset>) -> Option<News> {
    let same_file = known.filter(|known| known.dev == meta.dev() && known.ino == meta.ino());
    let fresh = FileOffset { dev: meta.dev(), ino: meta.ino(), ..FileOffset::default() };
    if agents::agent(provider).whole_file().is_some() {
        let version = file_version(path, meta);
        if same_file.is_some_and(|known| known.offset == version) {
            return None;
        }
        let start = same_file.cloned().unwrap_or(fresh);
        return Some(News { start, bytes: meta.len(), restarted: same_file.is_none(), version: Some(version) });
    }
    let start = same_file.filter(|known| known.offset <= meta.len()).cloned().unwrap_or(fresh);
    (start.offset < meta.len()).then(|| News {
        bytes: meta.len() - start.offset,
        restarted: start.offset == 0,
        start,
        version: None,
    })
}

/// A file's version as the file system shows it: its size and
/// modification time, and those of a database's write-ahead log, folded
/// into 62 bits (the ledger stores it where a line log's offset goes).
fn file_version(path: &Path, meta: &std::fs::Metadata) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let stamp = |meta: &std::fs::Metadata| [meta.len(), meta.mtime() as u64, meta.mtime_nsec() as u64];
    let wal = std::fs::metadata(&wal).map(|meta| stamp(&meta)).unwrap_or_default();
    let mut bytes = Vec::with_capacity(48);
    for value in stamp(meta).into_iter().chain(wal) {
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    (responses::response_hash(&[&bytes]) as u64) >> 1
}

/// Reads a file read whole whose version moved: what its agent's reader
/// finds changed since its state, committed with the new version.
fn read_whole_file(committer: &Committer<'_>, to_read: &ToRead) -> Result<FileSummary, ReadError> {
    let ToRead { path, provider, meta, news } = to_read;
    let Some(reader) = agents::agent(*provider).whole_file() else { return Ok(FileSummary::default()) };
    // A large database is one large read: one at a time (a document
    // reader takes the token itself, with its buffer).
    let _large = if reader.reads_documents() { None } else { crate::storage::large::if_large(meta.len()) };
    let mut found = Vec::new();
    let (state, refused) = reader.read(path, &news.start.state, &mut found)?;
    let at = FileOffset { dev: meta.dev(), ino: meta.ino(), offset: news.version.unwrap_or_default(), state };
    let unparseable = committer.push(&mut found, &path.to_string_lossy(), at)?;
    Ok(FileSummary { bytes_read: meta.len(), unparseable: unparseable + refused })
}

/// Reads `to_read` from its start to its last whole line, into `buffer`
/// (given back for the reader's next file).
fn read_file(
    committer: &Committer<'_>,
    to_read: &ToRead,
    quiet: Duration,
    progress: &dyn Fn(u64),
    buffer: &mut Vec<u8>,
) -> Result<FileSummary, ReadError> {
    if to_read.news.version.is_some() {
        return read_whole_file(committer, to_read);
    }
    let ToRead { path, provider, meta, news } = to_read;
    let (provider, start) = (*provider, news.start.clone());
    let mut file = File::open(path)?;
    let opened = file.metadata()?;
    if opened.ino() != meta.ino() || opened.dev() != meta.dev() {
        return Ok(FileSummary::default());
    }
    file.seek(SeekFrom::Start(start.offset))?;
    // A file of ordinary size is read whole, in one read: its long tool
    // results then cost one copy, not a move each time they cross a chunk.
    let unread = opened.len().saturating_sub(start.offset);
    let mut lines = if unread <= WHOLE_READ_BYTES {
        lines::Lines::whole(file, MAX_LINE_BYTES, std::mem::take(buffer), unread)?
    } else {
        lines::Lines::with_buffer(file, MAX_LINE_BYTES, std::mem::take(buffer))
    };
    let key = path.to_string_lossy().into_owned();
    // Whether a record still open at the end is over is the record's to
    // say (its own time, a stop reason), never the file's modification
    // time: a first import of logs copied or restored today would call
    // every last response of weeks ago "still being written".
    let quiet_ms = i64::try_from(quiet.as_millis()).unwrap_or(i64::MAX);
    let quiet_before_ms = bee_proto::time::now_unix_ms().saturating_sub(quiet_ms);
    let mut state = LogParser::new(provider, path, start.clone());
    let mut summary = FileSummary::default();
    let mut pending: Vec<Evidence> = Vec::new();
    let mut offset = start.offset;
    // Bytes read since progress was last reported: reported a step at a
    // time, as a counter the readers share costs a contended write a line.
    let mut unreported = 0u64;
    loop {
        if unreported >= PROGRESS_STEP_BYTES {
            progress(std::mem::take(&mut unreported));
        }
        let (kind, line, read) = lines.next_line()?;
        match kind {
            Line::Complete => {}
            Line::Oversized { complete: true } => {
                // A huge tool result (or a hostile line): skipped and named,
                // and reading goes on after it.
                agents::skipped::note(SkipReason::OversizedLine, offset, read);
                offset += read;
                unreported += read;
                continue;
            }
            // End of file, or a last line still being written: resume here.
            Line::End | Line::Partial | Line::Oversized { complete: false } => break,
        }
        let at = offset;
        offset += read;
        summary.bytes_read += read;
        unreported += read;
        if !state.line(line, at, &mut pending) {
            summary.unparseable += 1;
        }
        if pending.len() >= RECORDS_PER_COMMIT / 4 {
            summary.unparseable += committer.push(&mut pending, &key, state.resume_point(offset))?;
        }
    }
    progress(unreported);
    *buffer = lines.into_buffer();
    state.finish(quiet_before_ms, &mut pending);
    summary.unparseable += committer.push(&mut pending, &key, state.resume_point(offset))?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::stored::schema::Range;
    use std::collections::BTreeMap;
    use std::io::Write;

    use crate::ledger::Random;

    /// One write of response `id` with `output` tokens so far; the last write
    /// of a stream carries a stop reason.
    fn write(session: &str, id: u64, output: u64, last: bool) -> String {
        let stop = if last { serde_json::json!("end_turn") } else { serde_json::Value::Null };
        serde_json::json!({"type": "assistant", "sessionId": session, "timestamp": "2026-11-30T10:00:00.000Z",
            "requestId": format!("req_{id}"), "message": {"id": format!("msg_{id}"), "model": "claude-sonnet-4-5",
            "stop_reason": stop, "usage": {"input_tokens": id, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 1, "output_tokens": output}}})
        .to_string()
            + "\n"
    }

    fn output_total(dir: &Path) -> (u64, u64, u64) {
        let range = Range { since_ms: 0, until_ms: i64::MAX / 2 };
        let view = crate::ledger::stored::store::Reader::open(dir).unwrap().usage(range, &|_, _| 0).unwrap();
        let rows: Vec<_> = view.parts.values().collect();
        (
            rows.iter().map(|r| r.responses).sum(),
            rows.iter().map(|r| r.tokens.output_tokens.unwrap_or(0)).sum(),
            rows.iter().map(|r| r.pending_responses).sum(),
        )
    }

    /// Any interleaving of streaming writes, copies into other sessions'
    /// files, truncation and appends read over several passes gives the
    /// totals of the responses themselves: each once, at its fullest.
    #[test]
    fn generated_logs_total_the_per_response_truth() {
        for seed in 1..=12u64 {
            let mut random = Random(0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
            let home = tempfile::tempdir().unwrap();
            let projects = home.path().join("projects");
            std::fs::create_dir_all(&projects).unwrap();
            let ledger = Mutex::new(Ledger::open(&home.path().join("ledger")).unwrap());
            let roots = Roots::of(Provider::Claude, vec![projects.clone()]);
            let mut truth: BTreeMap<u64, u64> = BTreeMap::new();
            let sessions: Vec<String> = (0..3).map(|n| format!("0000000{n}-1111-4222-8333-444455556666")).collect();
            let mut next_id = 0;
            for round in 0..4 {
                for (index, session) in sessions.iter().enumerate() {
                    let path = projects.join(format!("{session}.jsonl"));
                    let mut lines: Vec<String> = Vec::new();
                    // New responses, their writes interleaved with each other.
                    let mut streams: Vec<(u64, u64, u64)> = Vec::new(); // id, writes left, output so far
                    for _ in 0..1 + random.below(4) {
                        next_id += 1;
                        streams.push((next_id, 1 + random.below(4), 0));
                    }
                    while !streams.is_empty() {
                        let pick = random.below(streams.len() as u64) as usize;
                        let (id, left, output) = &mut streams[pick];
                        *output += 1 + random.below(50);
                        *left -= 1;
                        lines.push(write(session, *id, *output, *left == 0));
                        if *left == 0 {
                            truth.insert(*id, *output);
                            streams.remove(pick);
                        }
                    }
                    // Copies of earlier responses, as a resumed session's file holds them.
                    if index > 0 && round > 0 && !truth.is_empty() {
                        for _ in 0..random.below(3) {
                            let id = random.below(next_id) + 1;
                            if let Some(output) = truth.get(&id) {
                                lines.push(write(session, id, *output, true));
                            }
                        }
                    }
                    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
                    let text = lines.concat();
                    // Sometimes a pass sees a half-written last line.
                    let cut =
                        if random.below(3) == 0 { text.len() - 1 - random.below(40) as usize } else { text.len() };
                    file.write_all(&text.as_bytes()[..cut]).unwrap();
                    drop(file);
                    pass(&ledger, &roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
                    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                    file.write_all(&text.as_bytes()[cut..]).unwrap();
                    drop(file);
                    // Sometimes the file is rewritten shorter (truncated), then grows again.
                    if random.below(4) == 0 {
                        let whole = std::fs::read(&path).unwrap();
                        let keep = whole.len() / 2;
                        std::fs::write(&path, &whole[..keep]).unwrap();
                        pass(&ledger, &roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
                        std::fs::write(&path, &whole).unwrap();
                    }
                }
                pass(&ledger, &roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
            }
            let expected = (truth.len() as u64, truth.values().sum::<u64>(), 0);
            assert_eq!(output_total(&home.path().join("ledger")), expected, "seed {seed}");
        }
    }

    const ONE_SESSION: &str = "00000000-1111-4222-8333-444455556666";

    /// A ledger and a projects tree for one session's log (`path`, not
    /// written yet).
    struct OneLog {
        _home: tempfile::TempDir,
        path: PathBuf,
        dir: PathBuf,
        ledger: Mutex<Ledger>,
        roots: Roots,
    }

    /// The ledger's database file alone, its WAL ignored.
    fn file_alone(dir: &Path) -> rusqlite::Connection {
        let file = format!("file:{}?immutable=1", dir.join(crate::ledger::stored::store::DB_FILE).display());
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI;
        rusqlite::Connection::open_with_flags(file, flags).unwrap()
    }

    impl OneLog {
        /// Writes `responses` final writes as the log, response `id` with
        /// `id % modulus + 1` output tokens: their output in all.
        fn written(&self, responses: u64, modulus: u64) -> u64 {
            let log: String = (1..=responses).map(|id| write(ONE_SESSION, id, id % modulus + 1, true)).collect();
            std::fs::write(&self.path, log).unwrap();
            (1..=responses).map(|id| id % modulus + 1).sum()
        }

        fn new() -> OneLog {
            let home = tempfile::tempdir().unwrap();
            let projects = home.path().join("projects");
            std::fs::create_dir_all(&projects).unwrap();
            let dir = home.path().join("ledger");
            OneLog {
                path: projects.join(format!("{ONE_SESSION}.jsonl")),
                ledger: Mutex::new(Ledger::open(&dir).unwrap()),
                dir,
                roots: Roots::of(Provider::Claude, vec![projects]),
                _home: home,
            }
        }
    }

    /// A store from before agents kept their own resume state (schema 9)
    /// still says how far each file was read until it is upgraded; the
    /// upgrade forgets the offsets, every file is read again from its start
    /// once, and that adds nothing twice.
    #[test]
    fn an_upgraded_store_reads_its_files_again_once_and_adds_nothing_twice() {
        let OneLog { _home, path, dir, ledger, roots } = OneLog::new();
        let log: String = (1..=40u64).map(|id| write(ONE_SESSION, id, id % 7 + 1, true)).collect();
        std::fs::write(&path, &log).unwrap();
        let output: u64 = (1..=40u64).map(|id| id % 7 + 1).sum();
        pass(&ledger, &roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
        drop(ledger);
        // As schema 9 kept it: the offsets' old columns, the file read to its end.
        let meta = std::fs::metadata(&path).unwrap();
        let conn = rusqlite::Connection::open(dir.join(crate::ledger::stored::store::DB_FILE)).unwrap();
        conn.execute_batch(
            "DROP TABLE ingest_offset;
             CREATE TABLE ingest_offset (path TEXT PRIMARY KEY NOT NULL, dev INTEGER NOT NULL, ino INTEGER NOT NULL,
                 offset INTEGER NOT NULL, session_id TEXT, model TEXT, usage_records INTEGER NOT NULL DEFAULT 0,
                 turn_ms INTEGER, turn_end_ms INTEGER) STRICT;
             PRAGMA user_version = 9;",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO ingest_offset (path, dev, ino, offset) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![path.to_string_lossy(), meta.dev() as i64, meta.ino() as i64, meta.len() as i64],
        )
        .unwrap();
        drop(conn);
        let before = crate::ledger::stored::store::Reader::open(&dir).unwrap().offsets().unwrap();
        let key = path.to_string_lossy().into_owned();
        assert_eq!(before[&key].offset, meta.len(), "a store read, not upgraded, says how far each file was read");
        assert_eq!(before[&key].state, crate::ledger::stored::evidence::AgentState(None));

        let ledger = Mutex::new(Ledger::open(&dir).unwrap());
        assert!(lock(&ledger).unwrap().offsets().unwrap().is_empty(), "the upgrade forgets the offsets");
        let again = pass(&ledger, &roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
        assert_eq!((again.records_appended, again.bytes_read), (0, meta.len()));
        assert_eq!(output_total(&dir), (40, output, 0));
        let after = lock(&ledger).unwrap().offsets().unwrap();
        assert_eq!(after[&key].offset, meta.len());
        assert!(after[&key].state.0.as_deref().is_some_and(|state| state.starts_with('{')), "{:?}", after[&key]);
        let once_more = pass(&ledger, &roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
        assert_eq!((once_more.files_read, once_more.records_appended), (0, 0));
    }

    /// Writes go in many to a statement: a log read again (a new file at
    /// the same path) whose old writes sit among new ones in every
    /// statement counts each write once, appended or duplicate, and the
    /// totals are the responses'.
    #[test]
    fn writes_read_again_among_new_ones_count_once() {
        let one = OneLog::new();
        let (session, path, dir, ledger, roots) = (ONE_SESSION, &one.path, &one.dir, &one.ledger, &one.roots);
        let old: Vec<u64> = (1..=100).filter(|id| id % 4 == 0).collect();
        std::fs::write(path, old.iter().map(|&id| write(session, id, id, true)).collect::<String>()).unwrap();
        let first = pass(ledger, roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
        assert_eq!((first.records_appended, first.duplicates), (25, 0));
        // Written beside the old file and renamed over it: a new inode,
        // which a file removed first might not get.
        let new = path.with_extension("new");
        std::fs::write(&new, (1..=100).map(|id| write(session, id, id, true)).collect::<String>()).unwrap();
        std::fs::rename(&new, path).unwrap();
        let again = pass(ledger, roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
        assert_eq!((again.records_appended, again.duplicates), (75, 25));
        assert_eq!(output_total(dir), (100, (1..=100).sum(), 0));
    }

    /// A first pass copies what it wrote into the database file while it
    /// settles (on a connection of its own), and leaves the ledger checkpointing
    /// as usual: with the ledger still open, the database file holds the
    /// pass and the aggregates are whole.
    #[test]
    fn a_first_pass_is_in_the_database_file_before_the_ledger_closes() {
        let one = OneLog::new();
        let (dir, ledger, roots) = (&one.dir, &one.ledger, &one.roots);
        let responses = 10_000u64;
        let output = one.written(responses, 97);
        let summary = pass(ledger, roots, Duration::from_secs(30), 2, &|_, _| {}).unwrap();
        assert_eq!(summary.records_appended, responses);
        let in_file = file_alone(dir);
        let packed: i64 = in_file.query_row("SELECT SUM(writes) FROM response_pack", [], |row| row.get(0)).unwrap();
        let identities: i64 = in_file.query_row("SELECT COUNT(*) FROM response_write", [], |row| row.get(0)).unwrap();
        assert_eq!((packed, identities), (responses as i64, responses as i64));
        let autocheckpoint: i64 =
            lock(ledger).unwrap().db_conn().pragma_query_value(None, "wal_autocheckpoint", |row| row.get(0)).unwrap();
        assert_eq!(autocheckpoint, crate::storage::sqlite::WAL_AUTOCHECKPOINT_PAGES);
        assert_eq!(output_total(dir), (responses, output, 0));
    }

    /// A view read as soon as a first pass is settled sees the whole pass;
    /// by the time the pass returns, the database file alone holds the
    /// settling commit too, so closing the ledger has nothing left to copy,
    /// and the store is in WAL mode. Alone, the pass loads through a
    /// rollback journal; with another connection open (say, beed's views),
    /// through the WAL, its copy into the file going on while the view is
    /// read. A later pass runs its view as well.
    fn a_view_read_once_a_first_pass_is_settled_sees_it_whole(another_connection: bool) {
        let one = OneLog::new();
        let (path, dir, ledger, roots) = (&one.path, &one.dir, &one.ledger, &one.roots);
        let db = dir.join(crate::ledger::stored::store::DB_FILE);
        let other = another_connection.then(|| rusqlite::Connection::open(&db).unwrap());
        let responses = 5_000u64;
        let output = one.written(responses, 89);
        let quiet = Duration::from_secs(30);
        let (summary, seen) = pass_then(ledger, roots, quiet, 2, &|_, _| {}, || output_total(dir)).unwrap();
        assert_eq!(summary.records_appended, responses);
        assert_eq!(seen, (responses, output, 0));
        let in_file = file_alone(dir);
        let packs: Vec<Vec<u8>> = in_file
            .prepare("SELECT body FROM rollup_parts")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let settled: u64 = packs
            .iter()
            .flat_map(|body| crate::ledger::stored::part_pack::decode(body).unwrap())
            .filter_map(|part| part.tokens.output_tokens)
            .sum();
        let dirty: i64 = in_file.query_row("SELECT COUNT(*) FROM rollup_dirty", [], |row| row.get(0)).unwrap();
        assert_eq!((settled, dirty), (output, 0));
        let mode: String =
            rusqlite::Connection::open(&db).unwrap().query_row("PRAGMA journal_mode", [], |row| row.get(0)).unwrap();
        assert_eq!(mode, "wal");
        std::fs::write(path, write(ONE_SESSION, responses + 1, 7, true)).unwrap();
        let (_, seen) = pass_then(ledger, roots, quiet, 2, &|_, _| {}, || output_total(dir)).unwrap();
        assert_eq!(seen, (responses + 1, output + 7, 0));
        drop(other);
    }

    #[test]
    fn a_first_pass_alone_loads_through_a_rollback_journal_and_is_seen_whole() {
        a_view_read_once_a_first_pass_is_settled_sees_it_whole(false);
    }

    #[test]
    fn a_first_pass_beside_another_connection_loads_through_the_wal_and_is_seen_whole() {
        a_view_read_once_a_first_pass_is_settled_sees_it_whole(true);
    }

    /// A bulk load leaves WAL mode only while no other connection has the
    /// store open, and returns to it; a load a crash cut short (the ledger
    /// dropped mid-load) is back in WAL mode at the next open.
    #[test]
    fn a_bulk_load_leaves_the_wal_only_alone_and_always_returns_to_it() {
        let OneLog { _home, dir, ledger, .. } = OneLog::new();
        let db = dir.join(crate::ledger::stored::store::DB_FILE);
        let mode = |conn: &rusqlite::Connection| -> String {
            conn.query_row("PRAGMA journal_mode", [], |row| row.get(0)).unwrap()
        };
        let mut ledger = ledger.into_inner().unwrap();
        let other = rusqlite::Connection::open(&db).unwrap();
        assert_eq!(mode(&other), "wal");
        assert_eq!(ledger.begin_bulk_load().unwrap(), BulkJournal::Wal);
        ledger.end_bulk_load(BulkJournal::Wal).unwrap();
        drop(other);
        assert_eq!(ledger.begin_bulk_load().unwrap(), BulkJournal::Rollback);
        assert_eq!(mode(ledger.db_conn()), "truncate");
        ledger.end_bulk_load(BulkJournal::Rollback).unwrap();
        assert_eq!(mode(ledger.db_conn()), "wal");
        assert_eq!(ledger.begin_bulk_load().unwrap(), BulkJournal::Rollback);
        drop(ledger);
        let reopened = Ledger::open(&dir).unwrap();
        assert_eq!(mode(reopened.db_conn()), "wal");
    }

    /// Progress is reported a step of bytes at a time, not a line at a
    /// time, and ends at the bytes there were to read.
    #[test]
    fn progress_is_reported_in_steps_up_to_the_whole() {
        let one = OneLog::new();
        let log: String = (1..=20_000u64).map(|id| write(ONE_SESSION, id, 7, true)).collect();
        std::fs::write(&one.path, &log).unwrap();
        let reports = Mutex::new(Vec::new());
        let record = |done: u64, total: u64| reports.lock().unwrap().push((done, total));
        pass(&one.ledger, &one.roots, Duration::from_secs(30), 2, &record).unwrap();
        let reports = reports.into_inner().unwrap();
        let bytes = log.len() as u64;
        assert_eq!(reports.last(), Some(&(bytes, bytes)), "{reports:?}");
        assert!(reports.windows(2).all(|pair| pair[0].0 < pair[1].0), "{reports:?}");
        assert!(reports.len() as u64 <= bytes / PROGRESS_STEP_BYTES + 1, "{} reports for {bytes} bytes", reports.len());
    }
}
