//! Claude Code transcripts (`<config dir>/projects/<project>/<session>.jsonl`):
//! the incremental parser ingestion uses and `budget --measured`'s
//! per-session state.

use bee_proto::ledger::{Detection, LedgerRecord, LimitRecord, Provider};
use bee_proto::usage::{Counters, HistoryStream, LimitHit, ResponseStream, UsageIssueCode, WindowKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

use super::line::ClaudeLine;
use super::scan;
use crate::ledger::agents::agent::{FileReader, SessionReader, SessionUsage};
use crate::ledger::agents::lines::{
    LastName, Marker, before_start, contains, counter, decode_state, encode_state, line_time, markers, open_turn,
};
use crate::ledger::stored::evidence::{AgentState, DerivedTurn, Evidence, SessionCost, record_id};
use crate::ledger::stored::responses::ResponseWrite;

/// The usage marker every Claude response line carries.
static USAGE_MARKER: Marker = std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"usage\""));

/// What the reader keeps of a transcript where it stopped: the turn open
/// there, from its prompt to its last response so far, and when the file
/// began.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Resume {
    pub(super) turn_ms: Option<i64>,
    pub(super) turn_end_ms: Option<i64>,
    /// The time of the file's first line that has one: when its session's
    /// file was begun. A fork (`--fork-session`) begins its file with its
    /// own lines, then copies the parent's with their times, so a response
    /// written before it is a copy. Unknown where the file was not read
    /// from its start by a reader that kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) first_ms: Option<i64>,
    /// Reading began at the file's start and no line with a time was met yet.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) seeking_first: bool,
}

/// The time of a line's own `timestamp`, parsed whole (the first lines of
/// a file only, until one has it).
fn own_time(line: &[u8]) -> Option<i64> {
    #[derive(Deserialize)]
    struct Stamped<'a> {
        #[serde(borrow)]
        timestamp: Option<std::borrow::Cow<'a, str>>,
    }
    markers! {
        TIMESTAMP = b"\"timestamp\"";
    }
    if !contains(line, &TIMESTAMP) {
        return None;
    }
    let stamped: Stamped<'_> = serde_json::from_slice(line).ok()?;
    bee_proto::time::parse_rfc3339_ms(&stamped.timestamp?)
}

/// A response whose stream may not be over yet: its fullest write so far.
pub(super) struct OpenResponse {
    pub(super) first_offset: u64,
    pub(super) write: ResponseWrite,
}

pub(crate) struct ClaudeParser {
    /// The agent whose transcripts these are: Claude Code, or a fork that
    /// keeps its format (OpenClaude).
    pub(super) provider: Provider,
    pub(super) start: Resume,
    pub(super) open: Option<OpenResponse>,
    /// The session last said to be logged (a file is nearly always one).
    pub(super) logged: Option<String>,
    pub(super) sessions: LastName,
    pub(super) models: LastName,
}

/// A user line: a prompt, unless Claude Code wrote it for itself.
#[derive(Deserialize)]
struct UserLine {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    timestamp: Option<String>,
    #[serde(rename = "isMeta", default)]
    is_meta: bool,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: bool,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: bool,
}

impl ClaudeParser {
    pub(super) fn new(provider: Provider, state: &AgentState) -> ClaudeParser {
        ClaudeParser {
            provider,
            start: decode_state(state),
            open: None,
            logged: None,
            sessions: LastName::default(),
            models: LastName::default(),
        }
    }

    /// A prompt begins a turn, and ends the one before.
    fn prompt(&mut self, line: &[u8], out: &mut Vec<Evidence>) -> bool {
        let Ok(user) = serde_json::from_slice::<UserLine>(line) else { return false };
        if user.is_meta || user.is_sidechain || user.is_compact_summary {
            return true;
        }
        let (Some(session), Some(at)) =
            (user.session_id, user.timestamp.as_deref().and_then(bee_proto::time::parse_rfc3339_ms))
        else {
            return true;
        };
        self.note_session(&session, out);
        if let (Some(started), Some(ended)) = (self.start.turn_ms, self.start.turn_end_ms) {
            out.push(Evidence::Turn(DerivedTurn {
                provider: self.provider,
                session_id: session,
                started_at_ms: started,
                ended_at_ms: ended,
            }));
        }
        self.start.turn_ms = Some(at);
        self.start.turn_end_ms = None;
        true
    }

    /// Claude Code wrote a line of another kind after the response still
    /// open (a prompt, a tool result, an API error): that response's stream
    /// is over, whatever its last write lacked — the record says so, not
    /// the file's quiet. (A write of it further on would still merge in the
    /// store.)
    fn close_open(&mut self, out: &mut Vec<Evidence>) {
        if let Some(mut done) = self.open.take() {
            done.write.is_final = true;
            out.push(Evidence::Response(done.write));
        }
    }

    fn note_session(&mut self, session: &str, out: &mut Vec<Evidence>) {
        if self.logged.as_deref() != Some(session) {
            self.logged = Some(session.to_owned());
            out.push(Evidence::SessionLogged(self.provider, session.to_owned()));
        }
    }

    pub(super) fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        if self.start.first_ms.is_none() {
            self.start.seeking_first |= at == 0;
            if self.start.seeking_first
                && let Some(first) = own_time(line)
            {
                (self.start.first_ms, self.start.seeking_first) = (Some(first), false);
            }
        }
        // Prompts are short user lines; tool results (user lines too) are
        // the bulk of a transcript and are never parsed.
        markers! {
            USER = b"\"type\":\"user\"";
            TOOL_RESULT = b"\"tool_result\"";
            COST_STATE = b"\"type\":\"cost-state\"";
            LIMIT = bee_proto::usage::CLAUDE_LIMIT_TEXT.as_bytes();
        }
        // The line's own type decides where Claude Code wrote it first. A
        // user line is a prompt or a tool result, never a response, a cost
        // or a limit notice: tool results (the bulk of the bytes) are not
        // searched further, so one quoting a notice or a usage object is
        // neither. An assistant line is a response, or a limit notice when
        // Claude Code wrote it itself (see `claude_code_wrote`), whatever
        // its text or tool input quotes. Claude Code writes a user line's
        // type before its message, an assistant line's after it: a line
        // whose type comes later and that has the usage marker is scanned
        // for its type first. Other lines go by their markers.
        let mut scanned = None;
        let assistant = match top_level_type(line) {
            Some(b"user") => {
                self.close_open(out);
                return contains(line, &TOOL_RESULT) || self.prompt(line, out);
            }
            Some(b"assistant") => true,
            early => {
                if early.is_none() && contains(line, &USAGE_MARKER) {
                    scanned = Some(scan::scan(line).or_else(|| serde_json::from_slice(line).ok()));
                }
                let late = scanned.as_ref().is_some_and(|read| read.as_ref().is_some_and(ClaudeLine::is_assistant));
                if !late && contains(line, &USER) && !contains(line, &TOOL_RESULT) {
                    self.close_open(out);
                    return self.prompt(line, out);
                }
                if !late && contains(line, &COST_STATE) {
                    return cost_state(self.provider, line, out);
                }
                late
            }
        };
        let limit_text = || contains(line, &LIMIT);
        // Only a line with the usage marker or a limit notice is read. A
        // line typed assistant is nearly always a response: it is scanned
        // at once, and a usage object the scan found is the marker (the
        // scan reads keys without escapes only), so the search is spared.
        let marked = || contains(line, &USAGE_MARKER) || limit_text();
        let scanned = match scanned {
            Some(scanned) => scanned,
            None if assistant || marked() => scan::scan(line),
            None => return true,
        };
        let parsed = match scanned {
            Some(parsed) if parsed.message.as_ref().is_some_and(|message| message.usage.is_some()) => parsed,
            Some(parsed) if !assistant || marked() => parsed,
            None if !assistant || marked() => match serde_json::from_slice::<ClaudeLine<'_>>(line) {
                Ok(parsed) => parsed,
                Err(_) => return false,
            },
            Some(_) | None => return true,
        };
        // A model's response is never searched for the notice: only Claude
        // Code's own lines carry it.
        let assistant = assistant || parsed.is_assistant();
        let model = parsed.message.as_ref().and_then(|message| message.model.as_deref());
        let own = claude_code_wrote(parsed.is_api_error, model);
        let limit = (!assistant || own) && limit_text();
        let (Some(session), Some(timestamp)) = (parsed.session_id, parsed.timestamp) else { return true };
        // Read once: the same test as `is_rfc3339_utc`, and the turn's end.
        let Some(at_ms) = bee_proto::time::parse_rfc3339_ms(&timestamp) else { return false };
        self.note_session(&session, out);
        // Claude Code 2.1: a request a limit refused is an API-error line of
        // kind `rate_limit` (structured); its text may name the window.
        if parsed.is_api_error == Some(true) && parsed.error.is_some_and(|kind| kind.0 == "\"rate_limit\"") {
            self.close_open(out);
            let text = String::from_utf8_lossy(line);
            let mut hit = LimitRecord::new(
                record_id(&["claude-limit", &session, &timestamp]),
                timestamp.into_owned(),
                self.provider,
                bee_proto::usage::claude_limit_reset(&text).flatten(),
                Detection::Structured,
            );
            hit.window = claude_limit_window(&text);
            hit.session_id = Some(session.into_owned());
            out.push(Evidence::Record(LedgerRecord::Limit(hit)));
            return true;
        }
        if limit {
            self.close_open(out);
            // Rare lines: the lossy copy costs nothing worth saving.
            let resets = bee_proto::usage::claude_limit_reset(&String::from_utf8_lossy(line)).flatten();
            let id = record_id(&["claude-limit", &session, &timestamp]);
            out.push(Evidence::Record(LedgerRecord::Limit(LimitRecord::new(
                id,
                timestamp.into_owned(),
                self.provider,
                resets,
                Detection::Text,
            ))));
            return true;
        }
        let Some(message) = parsed.message else { return true };
        let Some(usage) = message.usage else { return true };
        let tokens = Counters {
            input_tokens: usage.input_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
            output_tokens: usage.output_tokens,
            ..Counters::default()
        };
        if let Some(started) = self.start.turn_ms
            && at_ms >= started
        {
            self.start.turn_end_ms = Some(self.start.turn_end_ms.map_or(at_ms, |end| end.max(at_ms)));
        }
        // A line Claude Code wrote about its own failure (an API error, its
        // `<synthetic>` model) is no response: it ends the turn (and the
        // stream of the response before it), counts nothing.
        if assistant && own {
            self.close_open(out);
            return true;
        }
        let model = message.model.filter(|m| m != "<synthetic>");
        // A write with a stop reason was made after its stream ended; one
        // without may still be followed by fuller ones.
        let is_final = message.stop_reason.is_some();
        // Streaming writes a response several times, usually in a row: keep
        // the fullest of a run, and store it once another response begins.
        // Writes of one response further apart are merged by the store.
        let (id, request) = (message.id.as_deref(), parsed.request_id.as_deref());
        if let Some(open) =
            self.open.as_mut().filter(|open| id.is_some_and(|id| names_response(&open.write.key, id, request)))
        {
            if tokens.completeness() < open.write.tokens.completeness() {
                return true;
            }
            // The fuller write replaces the open one where it lies.
            let write = &mut open.write;
            write.at_ms = at_ms;
            write.session_id = Some(self.sessions.shared(&session));
            write.model = model.map(|model| self.models.shared(&model));
            write.context_tokens = tokens.claude_context_size();
            write.tokens = tokens;
            write.is_final = is_final;
            return true;
        }
        // The provider's identity of the response, the same in every file it
        // is copied into; a line without one is known by its place.
        let key =
            bee_proto::usage::claude_response_key(id, request).unwrap_or_else(|| format!("{session}\u{1f}offset:{at}"));
        let write = ResponseWrite {
            provider: self.provider,
            key,
            session_id: Some(self.sessions.shared(&session)),
            at_ms,
            model: model.map(|model| self.models.shared(&model)),
            context_tokens: tokens.claude_context_size(),
            tokens,
            context_window: None,
            is_final,
            own_figure: None,
            copied: before_start(at_ms, self.start.first_ms),
        };
        if let Some(mut done) = self.open.take() {
            // Another response began: this one's stream is over.
            done.write.is_final = true;
            out.push(Evidence::Response(done.write));
        }
        self.open = Some(OpenResponse { first_offset: at, write });
        true
    }
}

/// Whether `key` is [`bee_proto::usage::claude_response_key`] of `id` and
/// `request`, found without spelling that key.
fn names_response(key: &str, id: &str, request: Option<&str>) -> bool {
    match (key.strip_prefix(id), request) {
        (Some(rest), Some(request)) => rest.strip_prefix('\u{1f}') == Some(request),
        (Some(rest), None) => rest.is_empty(),
        (None, _) => false,
    }
}

/// The line's own `type`, found without parsing it, when the line names
/// it before any nested object (Claude Code writes it before the message):
/// the first `"type":"` with no `{` before it but the line's own is a key
/// of the line itself, since a string cannot hold those quotes unescaped.
fn top_level_type(line: &[u8]) -> Option<&[u8]> {
    const KEY: &[u8] = b"\"type\":\"";
    markers! {
        TYPE_KEY = KEY;
    }
    let at = TYPE_KEY.find(line)?;
    if line.first() != Some(&b'{') || memchr::memchr(b'{', line.get(1..at)?).is_some() {
        return None;
    }
    let value = line.get(at + KEY.len()..)?;
    Some(&value[..memchr::memchr(b'"', value)?])
}

impl FileReader for ClaudeParser {
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        ClaudeParser::line(self, line, at, out)
    }

    /// The open turn as far as it went (a later pass may lengthen it), and
    /// a response still open, judged by its own record: final when it
    /// carries its stop reason, or when its last write's own time is
    /// before `quiet_before_ms` (a stream quiet that long is over, however
    /// recently its file was copied); else stored as pending.
    fn finish(&mut self, quiet_before_ms: i64, out: &mut Vec<Evidence>) {
        open_turn(self.provider, self.logged.as_deref(), self.start.turn_ms, self.start.turn_end_ms, out);
        if let Some(open) = &self.open {
            let mut write = open.write.clone();
            write.is_final |= write.at_ms < quiet_before_ms;
            let over = write.is_final;
            out.push(Evidence::Response(write));
            if over {
                self.open = None;
            }
        }
    }

    /// After everything read, except a response still open (not over at
    /// [`FileReader::finish`], or not finished yet in the middle of a
    /// pass): its first line is read again, until it is final.
    fn resume(&self, offset: u64) -> (u64, AgentState) {
        let at = self.open.as_ref().map_or(offset, |open| open.first_offset);
        (at, encode_state(&self.start))
    }
}

#[derive(Default)]
pub(super) struct ClaudeState {
    /// Deduplicated responses: key → (line, counters, model).
    responses: HashMap<String, (u64, Counters)>,
    order: Vec<String>,
    models: Vec<String>,
}

/// What `budget --measured` reads of a transcript line: of a message's
/// content, only the text of each part (a usage-limit notice).
const SESSION_PATHS: &[&str] = &[
    "sessionId",
    "type",
    "isApiErrorMessage",
    "timestamp",
    "requestId",
    "message/model",
    "message/id",
    "message/content/text",
    "message/usage/input_tokens",
    "message/usage/cache_creation_input_tokens",
    "message/usage/cache_read_input_tokens",
    "message/usage/output_tokens",
];

impl SessionReader for ClaudeState {
    fn kept(&self) -> &'static [&'static str] {
        SESSION_PATHS
    }

    fn line(&mut self, value: &Value, number: u64, session: &str, usage: &mut SessionUsage) -> bool {
        if value.get("sessionId").and_then(Value::as_str) != Some(session) {
            return false;
        }
        let message = value.get("message");
        let own = value.get("type").and_then(Value::as_str) == Some("assistant")
            && claude_code_wrote(
                value.get("isApiErrorMessage").and_then(Value::as_bool),
                message.and_then(|m| m.get("model")).and_then(Value::as_str),
            );
        if let Some(resets) = message.filter(|_| own).and_then(claude_limit_text) {
            usage.limits.push(LimitHit {
                line: number,
                observed_at_utc: line_time(value),
                resets_at_utc: resets,
                detection: Detection::Text,
            });
            // The error line's zeroed usage is not a response.
            return true;
        }
        if own {
            // Claude Code's line about its own failure: of the session, an
            // error line, no response.
            usage.lines.error_lines += 1;
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

    fn finish(self: Box<Self>, usage: &mut SessionUsage) {
        let mut total: Option<Counters> = None;
        let mut last: Option<(u64, &Counters)> = None;
        for key in &self.order {
            if let Some((line, counters)) = self.responses.get(key) {
                if !crate::ledger::stored::responses::reports_all(Provider::Claude, counters) {
                    bee_proto::usage::note_line_issue(&mut usage.issues, UsageIssueCode::Partial, *line);
                }
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

/// Claude Code 2.1's record of what the session cost so far (cumulative;
/// written when it changes, without a timestamp of its own: it is as of the
/// session's start plus its duration).
fn cost_state(provider: Provider, line: &[u8], out: &mut Vec<Evidence>) -> bool {
    #[derive(Deserialize)]
    struct CostState {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        #[serde(rename = "totalCostUSD")]
        total_cost_usd: Option<f64>,
        #[serde(rename = "startTime")]
        start_time: Option<f64>,
        #[serde(rename = "totalDuration")]
        total_duration: Option<f64>,
    }
    let Ok(cost) = serde_json::from_slice::<CostState>(line) else { return false };
    let (Some(session), Some(total), Some(start), Some(duration)) =
        (cost.session_id, cost.total_cost_usd, cost.start_time, cost.total_duration)
    else {
        return true;
    };
    let at = start + duration;
    if !(at.is_finite() && (0.0..9.0e15).contains(&at)) {
        return false;
    }
    out.push(Evidence::SessionCost(SessionCost { provider, session_id: session, at_ms: at as i64, total_usd: total }));
    true
}

/// The window a Claude Code 2.1 limit notice names ("You've hit your
/// session limit", "… weekly limit"), if it names one.
fn claude_limit_window(text: &str) -> Option<WindowKind> {
    if text.contains("session limit") || text.contains("5-hour limit") {
        Some(WindowKind::FiveHour)
    } else if text.contains("weekly limit") {
        Some(WindowKind::Weekly)
    } else {
        None
    }
}

/// Whether Claude Code wrote an assistant line itself, by its
/// `isApiErrorMessage` and its message's model (an API error, or its
/// `<synthetic>` model): the only assistant lines that carry its limit
/// notices. A model's response that quotes one is a response.
fn claude_code_wrote(is_api_error: Option<bool>, model: Option<&str>) -> bool {
    is_api_error == Some(true) || model == Some("<synthetic>")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::LogParser;
    use crate::ledger::stored::evidence::FileOffset;

    /// The output tokens of each response write found.
    fn output_tokens(out: &[Evidence]) -> Vec<Option<u64>> {
        out.iter()
            .filter_map(|e| match e {
                Evidence::Response(write) => Some(write.tokens.output_tokens),
                _ => None,
            })
            .collect()
    }

    /// Claude Code 2.1's fork (`--resume <id> --fork-session`), as its
    /// file begins: its own lines first (a mode line without a time, the
    /// queued prompt at the fork's time), then the parent's lines copied
    /// with their times, then its own turn. The copied response is marked;
    /// the fork's own is not, nor is anything in a file whose first timed
    /// line comes first (the parent's).
    #[test]
    fn a_forks_copies_are_the_responses_written_before_its_file_began() {
        let fork = "03d34234-85ac-43d1-a582-eb70c7321d4b";
        let line = |kind: &str, at: &str, id: Option<&str>| {
            let mut line = serde_json::json!({"type": kind, "sessionId": fork, "timestamp": at});
            if let Some(id) = id {
                line["requestId"] = format!("req_{id}").into();
                line["message"] = serde_json::json!({"id": format!("msg_{id}"), "model": "claude-sonnet-4-5",
                    "stop_reason": "end_turn", "usage": {"input_tokens": 3, "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0, "output_tokens": 9}});
            } else if kind == "user" {
                line["message"] = serde_json::json!({"role": "user", "content": "hi"});
            }
            format!("{line}\n")
        };
        let log = [
            format!("{{\"type\":\"mode\",\"mode\":\"default\",\"sessionId\":\"{fork}\"}}\n"),
            line("queue-operation", "2026-12-06T09:10:58.789Z", None),
            line("user", "2026-12-06T09:10:56.922Z", None),
            line("assistant", "2026-12-06T09:10:57.020Z", Some("mock_001")),
            line("user", "2026-12-06T09:10:58.854Z", None),
            line("assistant", "2026-12-06T09:10:58.934Z", Some("mock_004")),
        ]
        .concat();
        let (writes, unparseable) = crate::ledger::agents::tests::responses(Provider::Claude, log.as_bytes());
        assert_eq!(unparseable, 0);
        let read: Vec<(&str, bool)> = writes.iter().map(|w| (w.key.as_str(), w.copied)).collect();
        assert_eq!(read, [("msg_mock_001\u{1f}req_mock_001", true), ("msg_mock_004\u{1f}req_mock_004", false)]);
        // The parent's file: its first timed line precedes its responses.
        let parent = log.lines().skip(2).map(|l| format!("{l}\n")).collect::<String>();
        let (writes, _) = crate::ledger::agents::tests::responses(Provider::Claude, parent.as_bytes());
        assert!(writes.iter().all(|w| !w.copied), "{writes:?}");
        // A file read on from where a reader that kept no start stopped:
        // when it began is unknown, and nothing is taken as a copy.
        let mut parser = LogParser::new(Provider::Claude, std::path::Path::new(""), FileOffset::default());
        let mut out = Vec::new();
        let mut at = 100;
        for l in log.lines().skip(1) {
            assert!(parser.line(format!("{l}\n").as_bytes(), at, &mut out));
            at += l.len() as u64 + 1;
        }
        parser.finish(i64::MAX, &mut out);
        let copied: Vec<bool> = out
            .iter()
            .filter_map(|e| match e {
                Evidence::Response(w) => Some(w.copied),
                _ => None,
            })
            .collect();
        assert_eq!(copied, [false, false]);
    }

    #[test]
    fn a_lines_own_type_is_found_only_before_any_nested_object() {
        assert_eq!(top_level_type(br#"{"parentUuid":null,"type":"user","message":{"type":"x"}}"#), Some(&b"user"[..]));
        assert_eq!(top_level_type(br#"{"message":{"type":"user"},"type":"assistant"}"#), None);
        assert_eq!(top_level_type(br#"{"cwd":"a\"type\":\"user\"","type":"assistant"}"#), Some(&b"assistant"[..]));
        assert_eq!(top_level_type(br#" {"type":"user"}"#), None, "not a line Claude Code writes: parsed");
        assert_eq!(top_level_type(br#"{"type":"us"#), None, "cut short");
        assert_eq!(top_level_type(b"{\"type\":\"\xff\xfe\"}"), Some(&b"\xff\xfe"[..]));
        assert_eq!(top_level_type(b""), None);
    }

    /// A tool result that quotes a limit notice and a usage object (an
    /// agent reading its own logs) is neither: only the response counts.
    #[test]
    fn a_tool_result_quoting_a_limit_or_usage_is_neither() {
        let session = "5eed0000-0000-4000-8000-000000000001";
        let quoted =
            format!("{} {{\"usage\":{{\"input_tokens\":5,\"output_tokens\":7}}}}", bee_proto::usage::CLAUDE_LIMIT_TEXT);
        let tool_result = serde_json::json!({"parentUuid": null, "type": "user", "sessionId": session,
            "timestamp": "2026-11-30T10:00:00.000Z", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": quoted}]}});
        let response = serde_json::json!({"type": "assistant", "sessionId": session,
            "timestamp": "2026-11-30T10:00:01.000Z", "requestId": "req_1", "message": {"id": "msg_1",
            "model": "claude-sonnet-4-5", "stop_reason": "end_turn", "usage": {"input_tokens": 3,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 9}}});
        let mut parser = LogParser::new(Provider::Claude, std::path::Path::new(""), FileOffset::default());
        let mut out = Vec::new();
        for (at, line) in [tool_result, response].iter().enumerate() {
            assert!(parser.line(format!("{line}\n").as_bytes(), at as u64, &mut out));
        }
        parser.finish(i64::MAX, &mut out);
        let limits = out.iter().filter(|e| matches!(e, Evidence::Record(LedgerRecord::Limit(_)))).count();
        assert_eq!((limits, output_tokens(&out)), (0, vec![Some(9)]));
    }

    /// A model's response that quotes Claude Code's limit notice, in its
    /// text or in a tool's input (an agent working on a tool like this
    /// one), is a response with its tokens, not a hit; only the notice
    /// Claude Code writes itself is a hit. The same for a session read whole.
    #[test]
    fn only_claude_codes_own_lines_carry_its_limit_notice() {
        let session = "5eed0000-0000-4000-8000-000000000001";
        let notice = format!("{}1796040000", bee_proto::usage::CLAUDE_LIMIT_TEXT);
        let usage = |output: u64| {
            serde_json::json!({"input_tokens": 3, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": output})
        };
        let response = |n: u64, content: serde_json::Value, output: u64| {
            serde_json::json!({"type": "assistant", "sessionId": session,
                "timestamp": format!("2026-11-30T10:00:0{n}.000Z"), "requestId": format!("req_{n}"),
                "message": {"id": format!("msg_{n}"), "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                    "content": [content], "usage": usage(output)}})
        };
        let lines = [
            response(1, serde_json::json!({"type": "text", "text": notice}), 9),
            response(
                2,
                serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Write",
                    "input": {"file_path": "/t.rs", "content": format!("let notice = {notice:?};")}}),
                11,
            ),
            serde_json::json!({"type": "assistant", "sessionId": session, "timestamp": "2026-11-30T10:00:03.000Z",
                "isApiErrorMessage": true, "message": {"id": "msg_3", "model": "<synthetic>",
                    "content": [{"type": "text", "text": notice}], "usage": {"input_tokens": 0, "output_tokens": 0}}}),
        ];
        let log: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let (out, unparseable) = crate::ledger::agents::read_log(Provider::Claude, log.as_bytes());
        let limits = out.iter().filter(|e| matches!(e, Evidence::Record(LedgerRecord::Limit(_)))).count();
        assert_eq!((limits, output_tokens(&out), unparseable), (1, vec![Some(9), Some(11)], 0));
        let read =
            crate::ledger::agents::read_session(bee_proto::usage::Harness::Claude, log.as_bytes(), session).unwrap();
        let output = read.response.and_then(|stream| stream.counters).and_then(|counters| counters.output_tokens);
        assert_eq!((read.limits.len(), output), (1, Some(20)));
    }

    /// Claude Code writes an assistant line's own type after its message.
    /// Such a line is an assistant line all the same: a response quoting the
    /// limit notice is a response, not a hit, and one whose tool input holds
    /// an object typed `user` is not a prompt; Claude Code's own notice in
    /// that shape is the one hit.
    #[test]
    fn an_assistant_line_with_its_type_after_its_message_is_read_as_one() {
        let session = "3f1c2a9e-8d7b-4c61-9f0e-2b5d7a4e6c10";
        let notice = format!("{}1796040000", bee_proto::usage::CLAUDE_LIMIT_TEXT);
        // As Claude Code 2.1 orders the keys: the message, then the type.
        let line = |n: u64, model: &str, content: serde_json::Value, output: Option<u64>, error: bool| {
            let head = format!(
                r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/app","sessionId":"{session}","version":"2.1.332","gitBranch":"main","#
            );
            let mut message = serde_json::json!({"id": format!("msg_{n}"), "type": "message",
                "role": "assistant", "model": model, "content": [content], "stop_reason": "end_turn"});
            if let Some(output) = output {
                message["usage"] = serde_json::json!({"input_tokens": 3, "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0, "output_tokens": output});
            }
            let error = if error { r#""isApiErrorMessage":true,"# } else { "" };
            format!(
                r#"{head}"message":{message},"requestId":"req_{n}",{error}"type":"assistant","uuid":"u{n}","timestamp":"2026-11-30T10:00:0{n}.000Z"}}"#
            ) + "\n"
        };
        let log = [
            line(1, "claude-sonnet-4-5", serde_json::json!({"type": "text", "text": notice}), Some(9), false),
            line(
                2,
                "claude-sonnet-4-5",
                serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "mcp__chat__post",
                    "input": {"message": {"type": "user", "content": "hi"}}}),
                Some(11),
                false,
            ),
            line(3, "<synthetic>", serde_json::json!({"type": "text", "text": notice}), Some(0), true),
            // A model's line without usage that quotes it: no response, no hit.
            line(4, "claude-sonnet-4-5", serde_json::json!({"type": "text", "text": notice}), None, false),
        ]
        .concat();
        for line in log.lines() {
            assert_eq!(super::scan::agrees_with_serde(line.as_bytes()), Ok(()), "{line}");
            assert!(top_level_type(line.as_bytes()).is_none(), "the type comes after the message: {line}");
        }
        let (out, unparseable) = crate::ledger::agents::read_log(Provider::Claude, log.as_bytes());
        let limits = out.iter().filter(|e| matches!(e, Evidence::Record(LedgerRecord::Limit(_)))).count();
        let turns = out.iter().filter(|e| matches!(e, Evidence::Turn(_))).count();
        assert_eq!((limits, turns, unparseable), (1, 0, 0));
        assert_eq!(output_tokens(&out), vec![Some(9), Some(11)]);
    }

    /// Claude Code's line about an API error (its `<synthetic>` model,
    /// `isApiErrorMessage`, zero usage) is no response: one real response
    /// and one error line are one response of one priced model, in
    /// ingestion and in `budget --measured` alike; the error still ends the turn.
    #[test]
    fn an_api_error_line_is_no_response() {
        let session = "5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d";
        let prompt = serde_json::json!({"type": "user", "sessionId": session,
            "timestamp": "2026-11-30T10:00:00.000Z", "message": {"role": "user", "content": "hi"}});
        let real = serde_json::json!({"type": "assistant", "sessionId": session, "requestId": "req_1",
            "timestamp": "2026-11-30T10:00:02.000Z", "message": {"id": "msg_1", "model": "claude-sonnet-4-5",
            "stop_reason": "end_turn", "usage": {"input_tokens": 3, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 5, "output_tokens": 7}}});
        let error = serde_json::json!({"type": "assistant", "sessionId": session, "isApiErrorMessage": true,
            "timestamp": "2026-11-30T10:00:09.000Z", "message": {"id": "msg_err", "model": "<synthetic>",
            "stop_reason": "stop_sequence", "content": [{"type": "text", "text": "API Error: 500 Internal server error"}],
            "usage": {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
            "output_tokens": 0}}});
        let log = format!("{prompt}\n{real}\n{error}\n");
        let (out, unparseable) = crate::ledger::agents::read_log(Provider::Claude, log.as_bytes());
        assert_eq!((output_tokens(&out), unparseable), (vec![Some(7)], 0));
        let turn = out.iter().find_map(|e| match e {
            Evidence::Turn(turn) => Some(turn.ended_at_ms - turn.started_at_ms),
            _ => None,
        });
        assert_eq!(turn, Some(9_000), "the error line ends the turn");
        let read =
            crate::ledger::agents::read_session(bee_proto::usage::Harness::Claude, log.as_bytes(), session).unwrap();
        assert_eq!((read.lines.matched_session, read.lines.error_lines), (3, 1), "counted as an error line");
        assert!(read.limits.is_empty());
        let stream = read.response.unwrap();
        assert_eq!((stream.responses, stream.models), (1, vec!["claude-sonnet-4-5".to_owned()]));
    }

    /// Streaming writes of one response in a row: the fullest is the one
    /// stored, with its own time, model and counters; a write with fewer
    /// counters than the open one changes nothing; another response ends it.
    #[test]
    fn the_fullest_write_of_a_run_is_stored_as_it_was_written() {
        let line = |id: u64, second: u64, model: Option<&str>, usage: serde_json::Value, stop: Option<&str>| {
            let mut message = serde_json::json!({"id": format!("msg_{id}"), "stop_reason": stop, "usage": usage});
            if let Some(model) = model {
                message["model"] = model.into();
            }
            let line = serde_json::json!({"type": "assistant", "sessionId": "s1", "requestId": format!("req_{id}"),
                "timestamp": format!("2026-11-30T10:00:{second:02}.000Z"), "message": message});
            format!("{line}\n")
        };
        let full = |output: u64| {
            serde_json::json!({"input_tokens": 3, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 7,
                "output_tokens": output})
        };
        let lines = [
            line(1, 1, Some("claude-sonnet-4-5"), full(1), None),
            line(1, 2, Some("claude-opus-4-1"), full(50), Some("end_turn")),
            line(1, 3, Some("claude-haiku-4-5"), serde_json::json!({"output_tokens": 60}), None),
            line(2, 4, None, full(5), None),
            line(2, 5, None, full(8), None),
        ];
        let (out, unparseable) = crate::ledger::agents::read_log(Provider::Claude, lines.concat().as_bytes());
        assert_eq!(unparseable, 0);
        let written: Vec<_> = out
            .iter()
            .filter_map(|e| match e {
                Evidence::Response(w) => {
                    let at = bee_proto::time::format_unix_ms(w.at_ms);
                    Some((w.key.as_str(), at, w.model.as_deref(), w.tokens.output_tokens, w.is_final))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            written,
            vec![
                ("msg_1\u{1f}req_1", "2026-11-30T10:00:02.000Z".to_owned(), Some("claude-opus-4-1"), Some(50), true),
                ("msg_2\u{1f}req_2", "2026-11-30T10:00:05.000Z".to_owned(), None, Some(8), true),
            ]
        );
        let Some(Evidence::Response(first)) = out.iter().find(|e| matches!(e, Evidence::Response(_))) else {
            panic!("no response in {out:?}")
        };
        assert_eq!((first.session_id.as_deref(), first.context_tokens), (Some("s1"), Some(10)));
    }

    /// An assistant line without the usage marker is read as any other
    /// unmarked line: no response, no session, never unparseable, whether
    /// the scan or serde_json would read it; one with a usage object in its
    /// content but none in its message logs its session only.
    #[test]
    fn an_assistant_line_without_usage_is_no_response() {
        let lines = [
            r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-11-30T10:00:01.000Z","message":{"id":"m","content":[]}}"#,
            r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-11-30T10:00:01.000Z","message":{"id":"m","id":"n"}}"#,
            r#"{"type":"assistant","sessionId":"s1","timestamp":"not a time","message":{"id":"m"}}"#,
            r#"{"type":"assistant","sessionId":"s1","message":{"id":"m","content":[tr"#,
        ];
        for line in lines {
            let (out, unparseable) = crate::ledger::agents::read_log(Provider::Claude, format!("{line}\n").as_bytes());
            assert_eq!((out.len(), unparseable), (0, 0), "{line}: {out:?}");
        }
        let quoted = r#"{"type":"assistant","sessionId":"s2","timestamp":"2026-11-30T10:00:01.000Z","message":{"id":"m","content":[{"type":"text","text":"x","usage":{"output_tokens":4}}]}}"#;
        let (out, unparseable) = crate::ledger::agents::read_log(Provider::Claude, format!("{quoted}\n").as_bytes());
        assert_eq!(unparseable, 0);
        assert!(matches!(&out[..], [Evidence::SessionLogged(Provider::Claude, session)] if session == "s2"), "{out:?}");
    }

    /// A response whose tool call's input is an object of type `user` (an
    /// agent writing a transcript line, say) is a response, not a prompt:
    /// its tokens count and no turn begins.
    #[test]
    fn a_tool_input_of_type_user_is_no_prompt() {
        let session = "5eed0000-0000-4000-8000-000000000002";
        let response = serde_json::json!({"parentUuid": null, "type": "assistant", "sessionId": session,
            "timestamp": "2026-11-30T10:00:01.000Z", "requestId": "req_1", "message": {"id": "msg_1",
            "model": "claude-sonnet-4-5", "stop_reason": "tool_use", "content": [{"type": "tool_use",
            "id": "toolu_01", "name": "Write", "input": {"type": "user", "content": "hi"}}],
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
            "output_tokens": 9}}});
        let (out, unparseable) = crate::ledger::agents::read_log(Provider::Claude, format!("{response}\n").as_bytes());
        assert_eq!(unparseable, 0);
        assert_eq!(output_tokens(&out), vec![Some(9)]);
        assert!(!out.iter().any(|e| matches!(e, Evidence::Turn(_))), "no turn: {out:?}");
    }

    /// Whether the last response is still being written is judged from its
    /// record: without a stop reason it is pending while its own time is
    /// recent, final once that time is past the quiet span (however new
    /// its file), final at once when Claude Code wrote another line after
    /// it, and always final with its stop reason.
    #[test]
    fn pending_is_judged_from_the_record_not_the_file() {
        let at = "2026-11-30T10:00:01.000Z";
        let at_ms = bee_proto::time::parse_rfc3339_ms(at).unwrap();
        let response = |stop: Option<&str>| {
            let mut message = serde_json::json!({"id": "msg_1", "model": "claude-sonnet-4-5", "usage": {
                "input_tokens": 3, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 9}});
            if let Some(stop) = stop {
                message["stop_reason"] = stop.into();
            }
            let line = serde_json::json!({"type": "assistant", "sessionId": "s1", "timestamp": at,
                "requestId": "req_1", "message": message});
            format!("{line}\n")
        };
        let prompt = "{\"type\":\"user\",\"sessionId\":\"s1\",\"timestamp\":\"2026-11-30T10:00:02.000Z\",\"message\":{\"role\":\"user\",\"content\":\"go on\"}}\n";
        let finals = |lines: &[&str], quiet_before_ms: i64| -> (Vec<bool>, u64) {
            let mut parser = LogParser::new(Provider::Claude, std::path::Path::new(""), FileOffset::default());
            let (mut out, mut offset) = (Vec::new(), 0u64);
            for line in lines {
                assert!(parser.line(line.as_bytes(), offset, &mut out));
                offset += line.len() as u64;
            }
            parser.finish(quiet_before_ms, &mut out);
            let finals = out
                .iter()
                .filter_map(|e| match e {
                    Evidence::Response(write) => Some(write.is_final),
                    _ => None,
                })
                .collect();
            (finals, parser.resume_point(offset).offset)
        };
        let open = response(None);
        let length = open.len() as u64;
        assert_eq!(finals(&[&open], at_ms), (vec![false], 0), "recent: pending, read again from its line");
        assert_eq!(finals(&[&open], at_ms + 1), (vec![true], length), "its own time is past: final");
        assert_eq!(finals(&[&open, prompt], at_ms).0, vec![true], "a later line of Claude Code's ends its stream");
        assert_eq!(finals(&[&response(Some("end_turn"))], at_ms).0, vec![true], "its stop reason says it");
    }
}
