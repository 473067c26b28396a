//! Readers of the provider CLIs' own logs, one file per provider: Claude Code
//! transcripts ([`claude`]) and Codex rollout logs ([`codex`]). They extract
//! what the provider reported — token counters, rate-limit snapshots,
//! usage-limit hits — and nothing is estimated.
//!
//! Two readers share them: ingestion's incremental parsers ([`LogParser`],
//! driven by `ledger::ingest`), and `budget --measured`'s whole-log reader
//! ([`read_session`]), which accounts for every line: matched to the
//! session, to another session, or unparseable with its line number.

pub mod claude;
pub mod codex;

use bee_proto::ledger::{LedgerRecord, Provider};
use bee_proto::usage::{
    Harness, HistoryStream, LimitHit, LineCounts, RateLimitSnapshot, ResponseStream, UsageIssue, UsageIssueCode,
    note_line_issue,
};
use serde_json::Value;
use std::io::{self, Read};
use std::sync::Arc;

use crate::storage::lines::{self, Line};
use claude::{ClaudeParser, ClaudeState};
use codex::{CodexParser, CodexState};

/// Longest line parsed; Claude transcripts carry tool output inline, so this
/// is generous, and a longer line is reported (or skipped), not parsed.
pub const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;
/// Namespace of the record ids derived from provider ids.
const NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6265_6500_6c65_6467_6572_2d69_6e67_6573);

/// Where ingestion resumes in one log file, and what it learnt there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOffset {
    pub dev: u64,
    pub ino: u64,
    pub offset: u64,
    /// Codex: the session the rollout belongs to (from its first line).
    pub session_id: Option<String>,
    /// Codex: the model of the current turn.
    pub model: Option<String>,
    /// Codex: the rollout writes `token_usage_record` lines (0.169 on), so
    /// its `token_count` lines are no responses of their own.
    pub usage_records: bool,
    /// The turn open where reading stopped: when its prompt was written,
    /// and its last response so far.
    pub turn_ms: Option<i64>,
    pub turn_end_ms: Option<i64>,
}

/// A turn as a log's own timestamps show it: from its prompt to its last
/// response (or, for Codex, its completion) so far. A longer one for the
/// same start supersedes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedTurn {
    pub provider: Provider,
    pub session_id: String,
    pub started_at_ms: i64,
    pub ended_at_ms: i64,
}

/// What a log reader hands the store.
#[derive(Debug, Clone, PartialEq)]
pub enum Evidence {
    Record(LedgerRecord),
    Response(crate::ledger::responses::ResponseWrite),
    /// A log of this session exists: producers' own counters no longer
    /// stand in for it (even when its log holds no response, say a request
    /// the provider refused).
    SessionLogged(Provider, String),
    Turn(DerivedTurn),
    SessionCost(SessionCost),
    /// A request the provider CLI's own telemetry timed (a call of source
    /// `api_request`): beed's own reading, like a derived turn, so never
    /// something a producer may append.
    TimedRequest(Box<bee_proto::ledger::CallRecord>),
}

/// A session's cumulative cost as its CLI wrote it in its log.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionCost {
    pub provider: Provider,
    pub session_id: String,
    pub at_ms: i64,
    pub total_usd: f64,
}

impl Evidence {
    /// Within Bee's bounds (a hostile or broken line is not).
    pub fn is_valid(&self) -> bool {
        match self {
            Evidence::Record(record) => crate::ledger::store::validate(record).is_ok(),
            Evidence::TimedRequest(call) => {
                call.source == bee_proto::ledger::CallSource::ApiRequest
                    && crate::ledger::store::validate_call(call).is_ok()
            }
            Evidence::Response(write) => write.is_valid(),
            Evidence::SessionLogged(_, session) => !session.is_empty() && session.len() <= 128,
            Evidence::SessionCost(cost) => {
                !cost.session_id.is_empty()
                    && cost.session_id.len() <= 128
                    && cost.total_usd.is_finite()
                    && (0.0..=bee_proto::ledger::bounds::MAX_CALL_COST_USD).contains(&cost.total_usd)
            }
            Evidence::Turn(turn) => {
                !turn.session_id.is_empty()
                    && turn.session_id.len() <= 128
                    && turn.ended_at_ms >= turn.started_at_ms
                    && turn.ended_at_ms - turn.started_at_ms <= bee_proto::ledger::bounds::MAX_CALL_DURATION_MS as i64
            }
        }
    }
}

pub(crate) fn record_id(parts: &[&str]) -> uuid::Uuid {
    uuid::Uuid::new_v5(&NAMESPACE, parts.join("\u{1f}").as_bytes())
}

/// A byte string looked for in every line before any parsing, its
/// searcher built once rather than per line.
pub(crate) type Marker = std::sync::LazyLock<memchr::memmem::Finder<'static>>;

/// Declares `static`s of [`Marker`]s.
macro_rules! markers {
    ($($(#[$doc:meta])* $name:ident = $needle:expr;)*) => {
        $($(#[$doc])* static $name: $crate::ledger::logs::Marker =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));)*
    };
}
pub(crate) use markers;

pub(crate) fn contains(haystack: &[u8], marker: &Marker) -> bool {
    marker.find(haystack).is_some()
}

/// Namespace of response write digests.
pub(crate) const RESPONSE_NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6265_6500_7265_7370_6f6e_7365_2d76_3100);

/// 63 bits of the name-based UUID of the name `parts` spell (one after
/// another) in [`RESPONSE_NAMESPACE`]: the high half of
/// `Uuid::new_v5(&RESPONSE_NAMESPACE, name)`, shifted right by one, so
/// that stored digests keep their values. Ingestion hashes every response
/// write twice; this SHA-1 uses the CPU's SHA instructions where it has them
/// and needs no copy of the name.
pub(crate) fn response_hash(parts: &[&[u8]]) -> i64 {
    use sha1::Digest;
    let mut hasher = sha1::Sha1::new();
    hasher.update(RESPONSE_NAMESPACE.as_bytes());
    for part in parts {
        hasher.update(part);
    }
    let hash = hasher.finalize();
    let mut high = [0u8; 8];
    high.copy_from_slice(&hash[..8]);
    // The version nibble, as a v5 UUID carries it.
    high[6] = (high[6] & 0x0f) | 0x50;
    (u64::from_be_bytes(high) >> 1) as i64
}

/// The usage marker every Claude response line carries.
pub(crate) static USAGE_MARKER: Marker = std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"usage\""));

/// `contains` ignoring ASCII case; `needle` is lowercase and starts with a letter.
pub(crate) fn contains_ignoring_case(haystack: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else { return true };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), haystack)
        .any(|at| haystack.get(at..at + needle.len()).is_some_and(|w| w.eq_ignore_ascii_case(needle)))
}

/// The name of a kind (a session, a model) a file's reader met last, one
/// copy shared by the writes that name it again.
#[derive(Debug, Default)]
pub(crate) struct LastName(Option<Arc<str>>);

impl LastName {
    pub(crate) fn shared(&mut self, name: &str) -> Arc<str> {
        match &self.0 {
            Some(last) if **last == *name => last.clone(),
            _ => self.0.insert(Arc::from(name)).clone(),
        }
    }
}

/// Ingestion's per-provider parser of one file.
pub(crate) enum LogParser {
    Claude(ClaudeParser),
    Codex(CodexParser),
}

impl LogParser {
    pub(crate) fn new(provider: Provider, start: FileOffset) -> LogParser {
        match provider {
            Provider::Claude => LogParser::Claude(ClaudeParser {
                start,
                open: None,
                logged: None,
                sessions: LastName::default(),
                models: LastName::default(),
            }),
            Provider::Codex => LogParser::Codex(CodexParser {
                start,
                full_window: None,
                sessions: LastName::default(),
                models: LastName::default(),
            }),
        }
    }

    /// Reads one complete line; `false` when it had a marker but did not parse.
    pub(crate) fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        match self {
            LogParser::Claude(claude) => claude.line(line, at, out),
            LogParser::Codex(codex) => codex.line(line, out),
        }
    }

    /// The end of what could be read: a Claude response still open is
    /// stored final when its file is quiet, else as pending.
    pub(crate) fn finish(&mut self, settled: bool, out: &mut Vec<Evidence>) {
        let (start, provider) = match self {
            LogParser::Claude(claude) => (&claude.start, Provider::Claude),
            LogParser::Codex(codex) => (&codex.start, Provider::Codex),
        };
        // The open turn as far as it went: a later pass may lengthen it.
        if let (Some(started), Some(ended), Some(session)) = (start.turn_ms, start.turn_end_ms, turn_session(self)) {
            out.push(Evidence::Turn(DerivedTurn {
                provider,
                session_id: session,
                started_at_ms: started,
                ended_at_ms: ended,
            }));
        }
        if let LogParser::Claude(claude) = self
            && let Some(open) = &claude.open
        {
            let mut write = open.write.clone();
            write.is_final |= settled;
            let over = write.is_final;
            out.push(Evidence::Response(write));
            if over {
                claude.open = None;
            }
        }
    }

    /// Where the next pass resumes: after everything read, except a Claude
    /// response still open (its first line is read again, until it is final).
    pub(crate) fn resume_point(&self, offset: u64, settled: bool) -> FileOffset {
        match self {
            LogParser::Claude(claude) => {
                let at = match (&claude.open, settled) {
                    (Some(open), false) => open.first_offset,
                    _ => offset,
                };
                FileOffset { offset: at, ..claude.start.clone() }
            }
            LogParser::Codex(codex) => FileOffset { offset, ..codex.start.clone() },
        }
    }
}

/// What ingestion reads from `log`, a whole file of `provider`'s, read in
/// one pass as if the file were quiet: the evidence and the number of lines
/// that carried a marker but did not parse. For fuzzing and tests; ingestion
/// itself reads files incrementally.
pub fn read_log(provider: Provider, log: &[u8]) -> (Vec<Evidence>, u64) {
    let mut parser = LogParser::new(provider, FileOffset::default());
    let (mut evidence, mut unparseable, mut at) = (Vec::new(), 0u64, 0u64);
    let mut rest = log;
    while let Some(end) = memchr::memchr(b'\n', rest) {
        let (line, after) = rest.split_at(end + 1);
        if line.len() as u64 <= MAX_LINE_BYTES && !parser.line(line, at, &mut evidence) {
            unparseable += 1;
        }
        at += line.len() as u64;
        rest = after;
    }
    parser.finish(true, &mut evidence);
    (evidence, unparseable)
}

/// The session the parser's open turn belongs to.
fn turn_session(parser: &LogParser) -> Option<String> {
    match parser {
        LogParser::Claude(claude) => claude.logged.clone(),
        LogParser::Codex(codex) => codex.start.session_id.clone(),
    }
}

/// What one log says about one session.
#[derive(Debug, Clone, Default)]
pub struct SessionUsage {
    pub lines: LineCounts,
    pub response: Option<ResponseStream>,
    pub history: Option<HistoryStream>,
    pub rate_limits: Vec<RateLimitSnapshot>,
    pub limits: Vec<LimitHit>,
    pub issues: Vec<UsageIssue>,
}

/// Reads `log` (a whole file) for `session`.
pub fn read_session(harness: Harness, log: impl Read, session: &str) -> io::Result<SessionUsage> {
    let mut reader = io::BufReader::with_capacity(1 << 16, log);
    let mut state = match harness {
        Harness::Claude => SessionState::Claude(ClaudeState::default()),
        Harness::Codex => SessionState::Codex(Box::default()),
    };
    let mut usage = SessionUsage::default();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        let (kind, _) = lines::next(&mut reader, MAX_LINE_BYTES, &mut line)?;
        if kind == Line::End {
            break;
        }
        number += 1;
        usage.lines.read += 1;
        match kind {
            Line::Oversized { .. } => {
                note_line_issue(&mut usage.issues, UsageIssueCode::OversizedLine, number);
                usage.lines.unparseable += 1;
                continue;
            }
            Line::Partial => note_line_issue(&mut usage.issues, UsageIssueCode::TruncatedLastLine, number),
            Line::Complete | Line::End => {}
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            usage.lines.other_session += 1;
            continue;
        }
        let value = match serde_json::from_slice::<Value>(text) {
            Ok(value @ Value::Object(_)) => value,
            _ => {
                usage.lines.unparseable += 1;
                note_line_issue(&mut usage.issues, UsageIssueCode::UnparseableLine, number);
                continue;
            }
        };
        let matched = match &mut state {
            SessionState::Claude(claude) => claude.line(&value, number, session, &mut usage),
            SessionState::Codex(codex) => codex.line(&value, number, session, &mut usage),
        };
        if matched {
            usage.lines.matched_session += 1;
        } else {
            usage.lines.other_session += 1;
        }
    }
    match state {
        SessionState::Claude(claude) => claude.finish(&mut usage),
        SessionState::Codex(codex) => (*codex).finish(&mut usage),
    }
    if usage.lines.matched_session == 0 {
        usage.issues.insert(0, UsageIssue { code: UsageIssueCode::NoMatchingSession, line: None, omitted: None });
    } else if usage.response.as_ref().is_none_or(|r| r.counters.is_none()) {
        usage.issues.insert(0, UsageIssue { code: UsageIssueCode::NoTokenCount, line: None, omitted: None });
    }
    Ok(usage)
}

/// `read_session`'s per-provider state.
enum SessionState {
    Claude(ClaudeState),
    Codex(Box<CodexState>),
}

/// A counter: a non-negative integer that fits, else an issue and `None`.
pub(crate) fn counter(value: Option<&Value>, line: u64, issues: &mut Vec<UsageIssue>) -> Option<u64> {
    match value? {
        Value::Null => None,
        Value::Number(n) => match n.as_u64() {
            Some(n) => Some(n),
            None => {
                note_line_issue(issues, UsageIssueCode::InvalidCounter, line);
                None
            }
        },
        _ => {
            note_line_issue(issues, UsageIssueCode::InvalidCounter, line);
            None
        }
    }
}

pub(crate) fn line_time(value: &Value) -> Option<String> {
    value.get("timestamp").and_then(Value::as_str).filter(|t| bee_proto::time::is_rfc3339_utc(t)).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names met again in a row share one copy; another name gets its own,
    /// and every copy spells its name.
    #[test]
    fn a_name_met_again_is_shared() {
        let mut sessions = LastName::default();
        let (first, again) = (sessions.shared("s1"), sessions.shared("s1"));
        assert!(Arc::ptr_eq(&first, &again));
        let other = sessions.shared("s2");
        assert_eq!((&*first, &*other), ("s1", "s2"));
        assert!(!Arc::ptr_eq(&other, &sessions.shared("s1")));
    }

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
