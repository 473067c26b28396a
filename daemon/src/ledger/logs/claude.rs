//! Claude Code transcripts (`~/.claude/projects/**/<session>.jsonl`): the
//! incremental parser ingestion uses, the span reader for a turn measured by
//! hooks, and `budget --measured`'s per-session state.

use bee_proto::ledger::{CallRecord, CallSource, Detection, LedgerRecord, LimitRecord, Provider};
use bee_proto::usage::{Counters, HistoryStream, LimitHit, ResponseStream};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{self, BufReader};
use std::path::Path;

use super::{FileOffset, MAX_LINE_BYTES, SessionUsage, contains, counter, line_time, record_id};
use crate::storage::lines::{self, Line};

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
pub(super) struct OpenResponse {
    key: String,
    pub(super) first_offset: u64,
    pub(super) record: LedgerRecord,
}

pub(crate) struct ClaudeParser {
    pub(super) start: FileOffset,
    pub(super) open: Option<OpenResponse>,
}

impl ClaudeParser {
    pub(super) fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<LedgerRecord>) -> bool {
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

#[derive(Default)]
pub(super) struct ClaudeState {
    /// Deduplicated responses: key → (line, counters, model).
    responses: HashMap<String, (u64, Counters)>,
    order: Vec<String>,
    models: Vec<String>,
}

impl ClaudeState {
    pub(super) fn line(&mut self, value: &Value, number: u64, session: &str, usage: &mut SessionUsage) -> bool {
        if value.get("sessionId").and_then(Value::as_str) != Some(session) {
            return false;
        }
        let message = value.get("message");
        if let Some(resets) = message.and_then(claude_limit_text) {
            usage.limits.push(LimitHit {
                line: number,
                observed_at_utc: line_time(value),
                resets_at_utc: resets,
                detection: Detection::Text,
            });
            // The error line's zeroed usage is not a response.
            return true;
        }
        let Some(raw) = message.and_then(|m| m.get("usage")).filter(|u| u.is_object()) else { return true };
        let counters = Counters {
            input_tokens: counter(raw.get("input_tokens"), number, &mut usage.issues),
            cache_creation_input_tokens: counter(raw.get("cache_creation_input_tokens"), number, &mut usage.issues),
            cache_read_input_tokens: counter(raw.get("cache_read_input_tokens"), number, &mut usage.issues),
            output_tokens: counter(raw.get("output_tokens"), number, &mut usage.issues),
            ..Counters::default()
        };
        let key = bee_proto::usage::claude_response_key(
            message.and_then(|m| m.get("id")).and_then(Value::as_str),
            value.get("requestId").and_then(Value::as_str),
        )
        .unwrap_or_else(|| format!("line:{number}"));
        if let Some(model) = message.and_then(|m| m.get("model")).and_then(Value::as_str)
            && model != "<synthetic>"
            && !self.models.iter().any(|m| m == model)
        {
            self.models.push(model.to_owned());
        }
        match self.responses.get_mut(&key) {
            Some((line, kept)) => {
                if counters.completeness() > kept.completeness() {
                    *line = number;
                    *kept = counters;
                }
            }
            None => {
                self.order.push(key.clone());
                self.responses.insert(key, (number, counters));
            }
        }
        true
    }

    pub(super) fn finish(self, usage: &mut SessionUsage) {
        let mut total: Option<Counters> = None;
        let mut last: Option<(u64, &Counters)> = None;
        for key in &self.order {
            if let Some((line, counters)) = self.responses.get(key) {
                if counters.reported() > 0 {
                    total.get_or_insert_with(Counters::default).add(counters);
                }
                if last.is_none_or(|(at, _)| *line > at) {
                    last = Some((*line, counters));
                }
            }
        }
        let last_context_tokens = last.and_then(|(_, c)| c.claude_context_size());
        usage.response =
            Some(ResponseStream { responses: self.order.len() as u64, counters: total, models: self.models });
        usage.history = Some(HistoryStream { total_counters: None, model_context_window: None, last_context_tokens });
    }
}

/// `Some(reset)` when the message is Claude's usage-limit text.
fn claude_limit_text(message: &Value) -> Option<Option<String>> {
    let content = message.get("content")?;
    let texts: Vec<&str> = match content {
        Value::String(text) => vec![text.as_str()],
        Value::Array(parts) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect(),
        _ => return None,
    };
    texts.iter().find_map(|text| bee_proto::usage::claude_limit_reset(text))
}
