//! Incremental ingestion of the provider CLIs' own logs into the ledger:
//! Claude Code transcripts (`~/.claude/projects/**.jsonl`) and Codex rollout
//! logs (`~/.codex/sessions/**.jsonl`), so the quota words work for people
//! who never used `beectl run`.
//!
//! Each file's offset (with its device and inode) is kept in the ledger and
//! moved in the same transaction as the records read up to it: what was
//! ingested is never read again. A file that shrank (truncated) or is another
//! file at the same path (rotated) is read from its start; record ids derived
//! from what the providers logged (session, message and request ids) make a
//! re-read add nothing twice. A partially written last line waits for its
//! newline; Claude's last response waits until its file has been quiet for a
//! while, since streaming may still rewrite it with fuller counters.
//!
//! Lines without a usage marker are skipped before any JSON parsing; the
//! rest are parsed into small typed shapes that skip message content.

use bee_proto::ledger::{CallRecord, CallSource, Detection, LedgerRecord, LimitRecord, Provider, QuotaSnapshot};
use bee_proto::usage::{Counters, WindowKind};
use serde::Deserialize;
use std::fs::File;
use std::io::{self, BufReader, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use crate::ledger::store::{FileOffset, Ledger};
use crate::storage::lines::{self, Line};
use crate::storage::sqlite::DbError;

/// Longest line looked at; a longer one (a huge tool result) is skipped.
const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;
/// Records committed per transaction, gathered across the files of a pass.
const RECORDS_PER_COMMIT: usize = 16_384;
/// Namespace of the record ids derived from provider ids.
const NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6265_6500_6c65_6467_6572_2d69_6e67_6573);

/// Where the logs are.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    pub claude_projects: Option<PathBuf>,
    pub codex_sessions: Option<PathBuf>,
}

impl Roots {
    /// `BEE_CLAUDE_PROJECTS` / `BEE_CODEX_SESSIONS`, else under `$HOME`.
    pub fn from_env() -> Roots {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let pick = |name: &str, under: &[&str]| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| under.iter().fold(h.clone(), |p, part| p.join(part))))
        };
        Roots {
            claude_projects: pick("BEE_CLAUDE_PROJECTS", &[".claude", "projects"]),
            codex_sessions: pick("BEE_CODEX_SESSIONS", &[".codex", "sessions"]),
        }
    }
}

pub use bee_proto::ledger::PassSummary;

/// Reports progress as (bytes done, bytes to read).
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// One ingestion pass over `roots`, with `workers` files read in parallel.
/// `quiet` is how long a Claude transcript must be untouched before its
/// last response is taken as final.
pub fn pass(
    ledger: &Mutex<Ledger>,
    roots: &Roots,
    quiet: Duration,
    workers: usize,
    progress: Progress<'_>,
) -> Result<PassSummary, DbError> {
    let offsets = lock(ledger)?.offsets()?;
    let mut files = Vec::new();
    for (root, provider) in [(&roots.claude_projects, Provider::Claude), (&roots.codex_sessions, Provider::Codex)] {
        if let Some(root) = root {
            walk(root, provider, &mut files);
        }
    }
    let mut summary = PassSummary { files_seen: files.len() as u64, ..PassSummary::default() };
    // Only files with something new are read.
    let todo: Vec<(PathBuf, Provider, std::fs::Metadata, FileOffset)> = files
        .into_iter()
        .filter_map(|(path, provider, meta)| {
            let key = path.to_string_lossy().into_owned();
            let known = offsets.get(&key).cloned();
            let start = match known {
                Some(k) if k.dev == meta.dev() && k.ino == meta.ino() && k.offset <= meta.len() => k,
                Some(_) => FileOffset { dev: meta.dev(), ino: meta.ino(), ..FileOffset::default() },
                None => FileOffset { dev: meta.dev(), ino: meta.ino(), ..FileOffset::default() },
            };
            (start.offset < meta.len()).then_some((path, provider, meta, start))
        })
        .collect();
    summary.restarted_files = todo
        .iter()
        .filter(|(path, _, _, start)| start.offset == 0 && offsets.contains_key(path.to_string_lossy().as_ref()))
        .count() as u64;
    let total: u64 = todo.iter().map(|(_, _, meta, start)| meta.len() - start.offset).sum();
    let done = AtomicU64::new(0);
    let next = AtomicUsize::new(0);
    let committer = Committer { ledger, pending: Mutex::new(Pending::default()), totals: Mutex::new(summary) };
    let totals = &committer.totals;
    let failure: Mutex<Option<DbError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..workers.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some((path, provider, meta, start)) = todo.get(index) else { break };
                    let result = read_file(&committer, path, *provider, meta, start.clone(), quiet, &|bytes| {
                        let now = done.fetch_add(bytes, Ordering::Relaxed) + bytes;
                        progress(now, total);
                    });
                    match result {
                        Ok(file) => {
                            if let Ok(mut totals) = totals.lock() {
                                totals.files_read += 1;
                                totals.bytes_read += file.bytes_read;
                                totals.unparseable_lines += file.unparseable;
                            }
                        }
                        Err(ReadError::Io(err)) => {
                            tracing::warn!(file = %path.display(), error = %err, "log not readable; skipped this pass")
                        }
                        Err(ReadError::Db(err)) => {
                            if let Ok(mut failure) = failure.lock() {
                                failure.get_or_insert(err);
                            }
                        }
                    }
                }
            });
        }
    });
    if let Some(err) = failure.into_inner().ok().flatten() {
        return Err(err);
    }
    committer.flush()?;
    let summary = committer.totals.into_inner().unwrap_or_default();
    // Also settles hours left dirty by a failed settle or a schema upgrade.
    lock(ledger)?.settle();
    Ok(summary)
}

fn lock<T>(mutex: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>, DbError> {
    mutex.lock().map_err(|_| DbError::Invalid("ledger lock poisoned"))
}

/// Records read and the offsets they were read up to, not committed yet.
#[derive(Default)]
struct Pending {
    records: Vec<LedgerRecord>,
    offsets: Vec<(String, FileOffset)>,
}

/// Commits what the workers read, many files' chunks per transaction: record
/// ids are random, so every commit rewrites pages all over the id index, and
/// fewer, larger commits write each page fewer times.
struct Committer<'a> {
    ledger: &'a Mutex<Ledger>,
    pending: Mutex<Pending>,
    totals: Mutex<PassSummary>,
}

impl Committer<'_> {
    /// Queues `records` read from `path` up to `at`; commits when enough are queued.
    fn push(&self, records: &mut Vec<LedgerRecord>, path: &str, at: FileOffset) -> Result<(), DbError> {
        let mut pending = lock(&self.pending)?;
        pending.records.append(records);
        pending.offsets.push((path.to_owned(), at));
        if pending.records.len() >= RECORDS_PER_COMMIT { self.commit(&mut pending) } else { Ok(()) }
    }

    fn flush(&self) -> Result<(), DbError> {
        self.commit(&mut *lock(&self.pending)?)
    }

    // Runs with the queue locked, so a file's offsets reach the ledger in
    // the order they were read and never move backwards.
    fn commit(&self, pending: &mut Pending) -> Result<(), DbError> {
        if pending.offsets.is_empty() {
            return Ok(());
        }
        let answer = lock(self.ledger)?.append_at(&pending.records, &pending.offsets)?;
        pending.records.clear();
        pending.offsets.clear();
        let mut totals = lock(&self.totals)?;
        totals.records_appended += answer.appended;
        totals.duplicates += answer.duplicates;
        Ok(())
    }
}

/// Regular `*.jsonl` files under `root`; links are not followed.
fn walk(root: &Path, provider: Provider, into: &mut Vec<(PathBuf, Provider, std::fs::Metadata)>) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && path.extension().is_some_and(|e| e == "jsonl")
                && let Ok(meta) = entry.metadata()
            {
                into.push((path, provider, meta));
            }
        }
    }
    into.sort_by(|a, b| a.0.cmp(&b.0));
}

enum ReadError {
    Io(io::Error),
    Db(DbError),
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

fn read_file(
    committer: &Committer<'_>,
    path: &Path,
    provider: Provider,
    meta: &std::fs::Metadata,
    start: FileOffset,
    quiet: Duration,
    progress: &dyn Fn(u64),
) -> Result<FileSummary, ReadError> {
    let mut file = File::open(path)?;
    let opened = file.metadata()?;
    if opened.ino() != meta.ino() || opened.dev() != meta.dev() {
        return Ok(FileSummary::default());
    }
    file.seek(SeekFrom::Start(start.offset))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let key = path.to_string_lossy().into_owned();
    let settled =
        meta.modified().ok().and_then(|m| SystemTime::now().duration_since(m).ok()).is_some_and(|age| age >= quiet);
    let mut state = Parser::new(provider, start.clone());
    let mut summary = FileSummary::default();
    let mut pending: Vec<LedgerRecord> = Vec::new();
    let mut offset = start.offset;
    let mut line = Vec::new();
    loop {
        let (kind, read) = lines::next(&mut reader, MAX_LINE_BYTES, &mut line)?;
        match kind {
            Line::Complete => {}
            Line::Oversized { complete: true } => {
                // A huge tool result: skipped, and reading goes on after it.
                summary.unparseable += 1;
                offset += read;
                progress(read);
                continue;
            }
            // End of file, or a last line still being written: resume here.
            Line::End | Line::Partial | Line::Oversized { complete: false } => break,
        }
        let at = offset;
        offset += read;
        summary.bytes_read += read;
        progress(read);
        if !state.line(&line, at, &mut pending) {
            summary.unparseable += 1;
        }
        if pending.len() >= RECORDS_PER_COMMIT / 4 {
            committer.push(&mut pending, &key, state.resume_point(offset, false))?;
        }
    }
    state.finish(settled, &mut pending);
    committer.push(&mut pending, &key, state.resume_point(offset, settled))?;
    Ok(summary)
}

fn record_id(parts: &[&str]) -> uuid::Uuid {
    uuid::Uuid::new_v5(&NAMESPACE, parts.join("\u{1f}").as_bytes())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// `contains` ignoring ASCII case; `needle` is lowercase and starts with a letter.
fn contains_ignoring_case(haystack: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else { return true };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), haystack)
        .any(|at| haystack.get(at..at + needle.len()).is_some_and(|w| w.eq_ignore_ascii_case(needle)))
}

enum Parser {
    Claude(ClaudeParser),
    Codex(CodexParser),
}

impl Parser {
    fn new(provider: Provider, start: FileOffset) -> Parser {
        match provider {
            Provider::Claude => Parser::Claude(ClaudeParser { start, open: None }),
            Provider::Codex => Parser::Codex(CodexParser { start }),
        }
    }

    /// Reads one complete line; `false` when it had a marker but did not parse.
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<LedgerRecord>) -> bool {
        match self {
            Parser::Claude(claude) => claude.line(line, at, out),
            Parser::Codex(codex) => codex.line(line, out),
        }
    }

    fn finish(&mut self, settled: bool, out: &mut Vec<LedgerRecord>) {
        if let Parser::Claude(claude) = self
            && settled
            && let Some(open) = claude.open.take()
        {
            out.push(open.record);
        }
    }

    /// Where the next pass resumes: after everything read, except a Claude
    /// response still open (its first line is read again).
    fn resume_point(&self, offset: u64, settled: bool) -> FileOffset {
        match self {
            Parser::Claude(claude) => {
                let at = match (&claude.open, settled) {
                    (Some(open), false) => open.first_offset,
                    _ => offset,
                };
                FileOffset { offset: at, ..claude.start.clone() }
            }
            Parser::Codex(codex) => FileOffset { offset, ..codex.start.clone() },
        }
    }
}

#[derive(Deserialize)]
struct ClaudeLine {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    timestamp: Option<String>,
    #[serde(rename = "requestId")]
    request_id: Option<String>,
    cwd: Option<String>,
    message: Option<ClaudeMessage>,
}

#[derive(Deserialize)]
struct ClaudeMessage {
    id: Option<String>,
    model: Option<String>,
    usage: Option<ClaudeUsage>,
}

#[derive(Deserialize)]
struct ClaudeUsage {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

/// A response whose stream may not be over yet.
struct OpenResponse {
    key: String,
    first_offset: u64,
    record: LedgerRecord,
}

struct ClaudeParser {
    start: FileOffset,
    open: Option<OpenResponse>,
}

impl ClaudeParser {
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<LedgerRecord>) -> bool {
        let limit = contains(line, bee_proto::usage::CLAUDE_LIMIT_TEXT.as_bytes());
        if !limit && !contains(line, b"\"usage\"") {
            return true;
        }
        let Ok(parsed) = serde_json::from_slice::<ClaudeLine>(line) else { return false };
        let (Some(session), Some(timestamp)) = (parsed.session_id, parsed.timestamp) else { return true };
        if !bee_proto::time::is_rfc3339_utc(&timestamp) {
            return false;
        }
        if limit {
            // Rare lines: the lossy copy costs nothing worth saving.
            let resets = bee_proto::usage::claude_limit_reset(&String::from_utf8_lossy(line)).flatten();
            let id = record_id(&["claude-limit", &session, &timestamp]);
            out.push(LedgerRecord::Limit(LimitRecord::new(id, timestamp, Provider::Claude, resets, Detection::Text)));
            return true;
        }
        let Some(message) = parsed.message else { return true };
        let Some(usage) = message.usage else { return true };
        let key = bee_proto::usage::claude_response_key(message.id.as_deref(), parsed.request_id.as_deref())
            .unwrap_or_else(|| format!("offset:{at}"));
        let tokens = Counters {
            input_tokens: usage.input_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
            output_tokens: usage.output_tokens,
            ..Counters::default()
        };
        let record = LedgerRecord::Call(Box::new(CallRecord {
            record_id: record_id(&["claude", &session, &key]),
            source: CallSource::Ingested,
            provider: Provider::Claude,
            started_at_utc: timestamp,
            duration_ms: None,
            success: None,
            model: message.model.filter(|m| m != "<synthetic>"),
            project_path: parsed.cwd,
            cost_usd: None,
            context_tokens: tokens.claude_context_size(),
            tokens: Some(tokens),
            quota_snapshots: Vec::new(),
            model_invocations: Some(1),
            context_window: None,
            compactions: None,
            session_id: Some(session),
        }));
        // Streaming writes one response several times in a row: keep the
        // most complete, and emit a response once another one begins.
        match &mut self.open {
            Some(open) if open.key == key => {
                if completeness(&record) >= completeness(&open.record) {
                    open.record = record;
                }
            }
            _ => {
                if let Some(done) = self.open.take() {
                    out.push(done.record);
                }
                self.open = Some(OpenResponse { key, first_offset: at, record });
            }
        }
        true
    }
}

fn completeness(record: &LedgerRecord) -> (usize, u64) {
    match record {
        LedgerRecord::Call(call) => call.tokens.as_ref().map_or((0, 0), Counters::completeness),
        _ => (0, 0),
    }
}

#[derive(Deserialize)]
struct CodexLine {
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    payload: Option<serde_json::Value>,
}

struct CodexParser {
    start: FileOffset,
}

impl CodexParser {
    fn line(&mut self, line: &[u8], out: &mut Vec<LedgerRecord>) -> bool {
        let marked = contains(line, b"token_count")
            || contains(line, b"session_meta")
            || contains(line, b"turn_context")
            || contains_ignoring_case(line, b"usage limit");
        if !marked {
            return true;
        }
        let Ok(parsed) = serde_json::from_slice::<CodexLine>(line) else { return false };
        let payload = parsed.payload.unwrap_or_default();
        match parsed.kind.as_deref() {
            Some("session_meta") if self.start.session_id.is_none() => {
                self.start.session_id = payload.get("id").and_then(|v| v.as_str()).map(str::to_owned);
            }
            Some("turn_context") => {
                if let Some(model) = payload.get("model").and_then(|v| v.as_str()) {
                    self.start.model = Some(model.to_owned());
                }
            }
            Some("event_msg") => {
                let (Some(session), Some(timestamp)) = (self.start.session_id.clone(), parsed.timestamp) else {
                    return true;
                };
                if !bee_proto::time::is_rfc3339_utc(&timestamp) {
                    return false;
                }
                match payload.get("type").and_then(|v| v.as_str()) {
                    Some("token_count") => self.token_count(&payload, &session, &timestamp, out),
                    Some("error") => {
                        let message = payload.get("message").and_then(|v| v.as_str()).unwrap_or("");
                        if bee_proto::usage::codex_limit_notice(message) {
                            let id = record_id(&["codex-limit", &session, &timestamp]);
                            out.push(LedgerRecord::Limit(LimitRecord::new(
                                id,
                                timestamp,
                                Provider::Codex,
                                None,
                                Detection::Text,
                            )));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        true
    }

    fn token_count(&self, payload: &serde_json::Value, session: &str, timestamp: &str, out: &mut Vec<LedgerRecord>) {
        let mut snapshots = Vec::new();
        if let Some(limits) = payload.get("rate_limits").filter(|l| l.is_object()) {
            for name in ["primary", "secondary"] {
                let Some(window) = limits.get(name).filter(|w| w.is_object()) else { continue };
                let Some(used) =
                    window.get("used_percent").and_then(|v| v.as_f64()).filter(|p| p.is_finite() && *p >= 0.0)
                else {
                    continue;
                };
                let minutes = window.get("window_minutes").and_then(|v| v.as_u64());
                let base = bee_proto::time::parse_rfc3339_ms(timestamp).map(|ms| ms / 1000);
                let resets = window
                    .get("resets_at")
                    .and_then(|v| v.as_u64())
                    .or_else(|| Some(base?.checked_add(window.get("resets_in_seconds")?.as_u64()? as i64)? as u64))
                    .and_then(bee_proto::time::format_unix_seconds);
                snapshots.push(QuotaSnapshot {
                    observed_at_utc: timestamp.to_owned(),
                    window: WindowKind::from_minutes(minutes),
                    window_minutes: minutes,
                    used_percent: used,
                    resets_at_utc: resets,
                });
            }
        }
        let info = payload.get("info").filter(|i| i.is_object());
        let Some(info) = info else {
            // Snapshots without counters are still evidence for peaks.
            out.extend(
                snapshots.into_iter().map(|snapshot| LedgerRecord::Snapshot { provider: Provider::Codex, snapshot }),
            );
            return;
        };
        let total = info.get("total_token_usage").map(Counters::from_codex).unwrap_or_default();
        // The same token_count once per rate-limit bucket shares its
        // cumulative total: the same record id, so it is stored once.
        let identity = serde_json::to_string(&total).unwrap_or_default();
        out.push(LedgerRecord::Call(Box::new(CallRecord {
            record_id: record_id(&["codex", session, &identity]),
            source: CallSource::Ingested,
            provider: Provider::Codex,
            started_at_utc: timestamp.to_owned(),
            duration_ms: None,
            success: None,
            model: self.start.model.clone(),
            project_path: None,
            cost_usd: None,
            tokens: info.get("last_token_usage").map(Counters::from_codex),
            quota_snapshots: Vec::new(),
            model_invocations: Some(1),
            context_window: info.get("model_context_window").and_then(|v| v.as_u64()),
            context_tokens: None,
            compactions: None,
            session_id: Some(session.to_owned()),
        })));
        out.extend(
            snapshots.into_iter().map(|snapshot| LedgerRecord::Snapshot { provider: Provider::Codex, snapshot }),
        );
    }
}

/// What a transcript says about one span of a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Span {
    pub responses: u64,
    pub tokens: Counters,
    pub model: Option<String>,
    pub limits: Vec<LimitRecord>,
    /// The context size of the span's last response.
    pub context_tokens: Option<u64>,
    /// Compaction boundaries Claude Code wrote in the span.
    pub compactions: u64,
}

/// Responses (deduplicated as in ingestion) and limit notices of `session`
/// whose timestamps fall in `[since_ms, until_ms]` of the transcript at `path`.
pub fn claude_span(path: &Path, session: &str, since_ms: i64, until_ms: i64) -> io::Result<Span> {
    if !path.is_absolute() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "transcript path is not absolute"));
    }
    let file = crate::storage::files::open_regular(path)?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut parser = ClaudeParser { start: FileOffset::default(), open: None };
    let mut records = Vec::new();
    let mut line = Vec::new();
    let mut at = 0u64;
    let mut compactions = Vec::new();
    loop {
        let (kind, read) = lines::next(&mut reader, MAX_LINE_BYTES, &mut line)?;
        match kind {
            Line::End => break,
            Line::Complete if contains(&line, b"\"compact_boundary\"") => {
                compactions.extend(compaction_time(&line, session));
            }
            Line::Complete => {
                parser.line(&line, at, &mut records);
            }
            Line::Partial | Line::Oversized { .. } => {}
        };
        at += read;
    }
    if let Some(open) = parser.open.take() {
        records.push(open.record);
    }
    let within = |utc: &str| bee_proto::time::parse_rfc3339_ms(utc).is_some_and(|ms| ms >= since_ms && ms <= until_ms);
    let mut span = Span {
        compactions: compactions.iter().filter(|ms| **ms >= since_ms && **ms <= until_ms).count() as u64,
        ..Span::default()
    };
    let mut models: Vec<(String, u64)> = Vec::new();
    for record in records {
        match record {
            LedgerRecord::Call(call) if call.session_id.as_deref() == Some(session) && within(&call.started_at_utc) => {
                span.responses += 1;
                if let Some(tokens) = &call.tokens {
                    span.tokens.add(tokens);
                }
                // A synthetic message (a limit notice) was no model request.
                if call.model.is_some() {
                    span.context_tokens = call.context_tokens.or(span.context_tokens);
                }
                if let Some(model) = call.model {
                    match models.iter_mut().find(|(m, _)| *m == model) {
                        Some((_, n)) => *n += 1,
                        None => models.push((model, 1)),
                    }
                }
            }
            LedgerRecord::Limit(limit)
                if within(&limit.at_utc) && limit.record_id == record_id(&["claude-limit", session, &limit.at_utc]) =>
            {
                span.limits.push(limit);
            }
            _ => {}
        }
    }
    span.model = models.into_iter().max_by_key(|(_, n)| *n).map(|(m, _)| m);
    Ok(span)
}

/// When a `compact_boundary` system line of `session` was written.
fn compaction_time(line: &[u8], session: &str) -> Option<i64> {
    #[derive(Deserialize)]
    struct Boundary<'a> {
        subtype: Option<&'a str>,
        #[serde(rename = "sessionId")]
        session_id: Option<&'a str>,
        timestamp: Option<&'a str>,
    }
    let boundary: Boundary<'_> = serde_json::from_slice(line).ok()?;
    if boundary.subtype != Some("compact_boundary") || boundary.session_id.is_some_and(|s| s != session) {
        return None;
    }
    bee_proto::time::parse_rfc3339_ms(boundary.timestamp?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codex_limit_prefilter_ignores_case_like_the_notice_reader() {
        for text in ["You've hit your usage limit.", "You've hit your Usage Limit", "USAGE LIMIT reached"] {
            let line =
                serde_json::json!({"type": "event_msg", "payload": {"type": "error", "message": text}}).to_string();
            assert!(contains_ignoring_case(line.as_bytes(), b"usage limit"), "{text}");
            assert!(bee_proto::usage::codex_limit_notice(text));
        }
        assert!(!contains_ignoring_case(b"usage: limited", b"usage limit"));
        assert!(!contains_ignoring_case(b"usage limi", b"usage limit"), "a needle running past the end");
    }
}
