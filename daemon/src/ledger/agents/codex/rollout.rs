//! Codex rollout logs (`<CODEX_HOME>/sessions/**/rollout-*.jsonl`): the
//! incremental parser ingestion uses and `budget --measured`'s per-session
//! state. Both parse a line for the fields they read ([`LINE_PATHS`]),
//! passing over the rest (a session's instructions, a tool's output).

use bee_proto::ledger::{Detection, LedgerRecord, LimitRecord, Provider, QuotaSnapshot};
use bee_proto::usage::{
    Counters, HistoryStream, LimitHit, RateLimitSnapshot, ResponseStream, UsageIssue, UsageIssueCode, WindowKind,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::LazyLock;
use std::time::UNIX_EPOCH;

use crate::ledger::agents::agent::{FileReader, SessionReader, SessionUsage};
use crate::ledger::agents::lines::{
    LastName, Unread, contains, contains_ignoring_case, counter, decode_state, encode_state, line_time, markers,
    open_turn, parse_record,
};
use crate::ledger::agents::sparse::Keep;
use crate::ledger::stored::evidence::{
    AgentState, DerivedTurn, Evidence, SessionProject, project_of_directory, record_id,
};
use crate::ledger::stored::responses::ResponseWrite;

/// What ingestion and `budget --measured` read of a rollout line (one
/// list for both). `thread_token_usage` is kept whole: it is written into
/// a response's key as it is.
pub(super) const LINE_PATHS: &[&str] = &[
    "timestamp",
    "type",
    "payload/id",
    "payload/cwd",
    "payload/model",
    "payload/type",
    "payload/message",
    "payload/turn_id",
    "payload/response_id",
    "payload/thread_token_usage",
    "payload/error/codex_error_info",
    "payload/usage/input_tokens",
    "payload/usage/cached_input_tokens",
    "payload/usage/output_tokens",
    "payload/usage/reasoning_output_tokens",
    "payload/usage/total_tokens",
    "payload/info/model_context_window",
    "payload/info/total_token_usage/input_tokens",
    "payload/info/total_token_usage/cached_input_tokens",
    "payload/info/total_token_usage/output_tokens",
    "payload/info/total_token_usage/reasoning_output_tokens",
    "payload/info/total_token_usage/total_tokens",
    "payload/info/last_token_usage/input_tokens",
    "payload/info/last_token_usage/cached_input_tokens",
    "payload/info/last_token_usage/output_tokens",
    "payload/info/last_token_usage/reasoning_output_tokens",
    "payload/info/last_token_usage/total_tokens",
    "payload/rate_limits/limit_id",
    "payload/rate_limits/primary/used_percent",
    "payload/rate_limits/primary/window_minutes",
    "payload/rate_limits/primary/resets_at",
    "payload/rate_limits/primary/resets_in_seconds",
    "payload/rate_limits/secondary/used_percent",
    "payload/rate_limits/secondary/window_minutes",
    "payload/rate_limits/secondary/resets_at",
    "payload/rate_limits/secondary/resets_in_seconds",
];

static LINE: LazyLock<Keep> = LazyLock::new(|| Keep::paths(LINE_PATHS));

/// A line as ingestion reads it: its time and type must be text (or
/// absent) for it to be read at all.
#[derive(Deserialize)]
struct CodexLine {
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    payload: Option<serde_json::Value>,
}

/// What the reader keeps of a rollout where it stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Resume {
    /// The session the rollout belongs to (from its first line).
    pub(super) session_id: Option<String>,
    /// The model of the current turn.
    pub(super) model: Option<String>,
    /// The rollout writes `token_usage_record` lines (0.169 on), so its
    /// `token_count` lines are no responses of their own.
    #[serde(default)]
    pub(super) usage_records: bool,
    /// The turn open: when its task started, and its last event so far.
    pub(super) turn_ms: Option<i64>,
    pub(super) turn_end_ms: Option<i64>,
}

pub(crate) struct CodexParser {
    pub(super) start: Resume,
    /// A quota window the current turn's last `token_count` showed at 100 %:
    /// the window a usage-limit hit of this turn belongs to.
    pub(super) full_window: Option<QuotaSnapshot>,
    pub(super) sessions: LastName,
    pub(super) models: LastName,
}

impl CodexParser {
    pub(super) fn new(state: &AgentState) -> CodexParser {
        CodexParser {
            start: decode_state(state),
            full_window: None,
            sessions: LastName::default(),
            models: LastName::default(),
        }
    }

    /// Reads one line, which starts at byte `at` of the rollout.
    pub(super) fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        markers! {
            TOKEN_COUNT = b"token_count";
            TOKEN_USAGE_RECORD = b"token_usage_record";
            SESSION_META = b"session_meta";
            TURN_CONTEXT = b"turn_context";
            TASK_STARTED = b"task_started";
            TASK_COMPLETE = b"task_complete";
            USAGE_LIMIT_EXCEEDED = b"usage_limit_exceeded";
        }
        let marked = [&TOKEN_COUNT, &TOKEN_USAGE_RECORD, &SESSION_META, &TURN_CONTEXT, &TASK_STARTED, &TASK_COMPLETE]
            .into_iter()
            .any(|marker| contains(line, marker))
            || contains_ignoring_case(line, b"usage limit")
            || contains(line, &USAGE_LIMIT_EXCEEDED);
        if !marked {
            return true;
        }
        let parsed = match parse_record(line, &LINE, at) {
            Ok(parsed) => parsed,
            Err(Unread::Malformed) => return false,
            // Named already: not also counted as unparseable.
            Err(Unread::Noted) => return true,
        };
        // The fields read, moved out of the parsed line (not copied).
        let Ok(parsed) = serde_json::from_value::<CodexLine>(parsed) else { return false };
        let payload = parsed.payload.unwrap_or_default();
        match parsed.kind.as_deref() {
            Some("session_meta") if self.start.session_id.is_none() => {
                self.start.session_id = payload.get("id").and_then(|v| v.as_str()).map(str::to_owned);
                if let Some(session) = &self.start.session_id {
                    out.push(Evidence::SessionLogged(Provider::Codex, session.clone()));
                    // The directory the session ran in is its project.
                    if let Some(cwd) = payload.get("cwd").and_then(|v| v.as_str()).filter(|cwd| !cwd.is_empty()) {
                        out.push(Evidence::SessionProject(SessionProject {
                            provider: Provider::Codex,
                            session_id: session.clone(),
                            project: project_of_directory(cwd),
                        }));
                    }
                }
            }
            Some("turn_context") => {
                if let Some(model) = payload.get("model").and_then(|v| v.as_str()) {
                    self.start.model = Some(model.to_owned());
                }
            }
            Some(kind @ ("event_msg" | "token_usage_record")) => {
                let (Some(session), Some(timestamp)) = (self.start.session_id.clone(), parsed.timestamp) else {
                    return true;
                };
                let Some(at_ms) = bee_proto::time::parse_rfc3339_ms(&timestamp) else { return false };
                if self.start.turn_ms.is_some() {
                    self.start.turn_end_ms = Some(at_ms);
                }
                if kind == "token_usage_record" {
                    self.usage_record(&payload, &session, at_ms, out);
                    return true;
                }
                match payload.get("type").and_then(|v| v.as_str()) {
                    Some("token_count") => self.token_count(&payload, &session, (&timestamp, at_ms), out),
                    Some("task_started") => {
                        self.full_window = None;
                        self.start.turn_ms = Some(at_ms);
                        self.start.turn_end_ms = Some(at_ms);
                    }
                    Some("task_complete") => self.task_complete(&payload, session, timestamp, out),
                    // Before 0.169 a hit was an `error` event with the notice text.
                    Some("error") => {
                        let message = payload.get("message").and_then(|v| v.as_str()).unwrap_or("");
                        if bee_proto::usage::codex_limit_notice(message) {
                            let id = record_id(&["codex-limit", &session, &timestamp]);
                            out.push(Evidence::Record(LedgerRecord::Limit(LimitRecord::new(
                                id,
                                timestamp,
                                Provider::Codex,
                                None,
                                Detection::Text,
                            ))));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        true
    }

    /// A turn ended: it is a derived turn (task started → complete), and,
    /// when 0.169 says the usage limit refused it, a hit in the window the
    /// turn's last token count showed at 100 %.
    fn task_complete(&mut self, payload: &Value, session: String, timestamp: String, out: &mut Vec<Evidence>) {
        if let (Some(started), Some(ended)) = (self.start.turn_ms.take(), self.start.turn_end_ms.take()) {
            out.push(Evidence::Turn(DerivedTurn {
                provider: Provider::Codex,
                session_id: session.clone(),
                started_at_ms: started,
                ended_at_ms: ended,
            }));
        }
        if payload.pointer("/error/codex_error_info").and_then(Value::as_str) != Some("usage_limit_exceeded") {
            return;
        }
        let turn = payload.get("turn_id").and_then(Value::as_str).unwrap_or(&timestamp);
        let id = record_id(&["codex-limit", &session, turn]);
        let window = self.full_window.take();
        out.push(Evidence::Record(LedgerRecord::Limit(LimitRecord {
            record_id: id,
            at_utc: timestamp,
            provider: Provider::Codex,
            resets_at_utc: window.as_ref().and_then(|w| w.resets_at_utc.clone()),
            detection: Detection::Structured,
            window: window.as_ref().map(|w| w.window),
            window_minutes: window.as_ref().and_then(|w| w.window_minutes),
            limit_id: window.and_then(|w| w.limit_id),
            session_id: Some(session),
        })));
    }

    /// 0.169's own record of one response: its provider id and counters.
    fn usage_record(&mut self, payload: &Value, session: &str, at_ms: i64, out: &mut Vec<Evidence>) {
        self.start.usage_records = true;
        let Some(usage) = payload.get("usage").filter(|u| u.is_object()) else { return };
        let key = match payload.get("response_id").and_then(|v| v.as_str()) {
            Some(id) => id.to_owned(),
            // No provider id: the rollout's own order names it.
            None => format!(
                "{session}\u{1f}{}",
                payload.get("thread_token_usage").map(Value::to_string).unwrap_or_default()
            ),
        };
        out.push(Evidence::Response(ResponseWrite {
            provider: Provider::Codex,
            key,
            session_id: Some(self.sessions.shared(session)),
            at_ms,
            model: self.start.model.as_deref().map(|model| self.models.shared(model)),
            tokens: Counters::from_codex(usage),
            context_tokens: None,
            context_window: None,
            is_final: true,
            own_figure: None,
            copied: false,
        }));
    }

    /// `at` is the line's time, as written and in unix milliseconds.
    fn token_count(&mut self, payload: &Value, session: &str, at: (&str, i64), out: &mut Vec<Evidence>) {
        let (timestamp, at_ms) = at;
        let mut snapshots = Vec::new();
        if let Some(limits) = payload.get("rate_limits").filter(|l| l.is_object()) {
            let limit_id = limits.get("limit_id").and_then(|v| v.as_str()).filter(|id| id.len() <= 128);
            for name in ["primary", "secondary"] {
                let Some(window) = limits.get(name).filter(|w| w.is_object()) else { continue };
                let Some(used) =
                    window.get("used_percent").and_then(|v| v.as_f64()).filter(|p| p.is_finite() && *p >= 0.0)
                else {
                    continue;
                };
                let minutes = window.get("window_minutes").and_then(|v| v.as_u64());
                let resets = window
                    .get("resets_at")
                    .and_then(|v| v.as_u64())
                    .or_else(|| {
                        Some((at_ms / 1000).checked_add(window.get("resets_in_seconds")?.as_u64()? as i64)? as u64)
                    })
                    .and_then(bee_proto::time::format_unix_seconds);
                snapshots.push(QuotaSnapshot {
                    observed_at_utc: timestamp.to_owned(),
                    window: WindowKind::from_minutes(minutes),
                    window_minutes: minutes,
                    used_percent: used,
                    resets_at_utc: resets,
                    limit_id: limit_id.map(str::to_owned),
                });
            }
        }
        if let Some(full) = snapshots.iter().find(|s| s.used_percent >= 100.0) {
            self.full_window = Some(full.clone());
        }
        // Snapshots without counters are still evidence for peaks.
        let snapshot_records = snapshots
            .into_iter()
            .map(|snapshot| Evidence::Record(LedgerRecord::Snapshot { provider: Provider::Codex, snapshot }));
        let info = payload.get("info").filter(|i| i.is_object());
        // From 0.169 on, `token_usage_record` lines are the responses.
        if let Some(info) = info.filter(|_| !self.start.usage_records) {
            let total = info.get("total_token_usage").map(Counters::from_codex).unwrap_or_default();
            // The thread's cumulative total names the response: the same
            // token_count written once per rate-limit bucket, or again on a
            // limit hit, is the same response.
            let identity = serde_json::to_string(&total).unwrap_or_default();
            out.push(Evidence::Response(ResponseWrite {
                provider: Provider::Codex,
                key: format!("{session}\u{1f}{identity}"),
                session_id: Some(self.sessions.shared(session)),
                at_ms,
                model: self.start.model.as_deref().map(|model| self.models.shared(model)),
                tokens: info.get("last_token_usage").map(Counters::from_codex).unwrap_or_default(),
                context_tokens: None,
                context_window: info.get("model_context_window").and_then(|v| v.as_u64()),
                is_final: true,
                own_figure: None,
                copied: false,
            }));
        }
        out.extend(snapshot_records);
    }
}

impl FileReader for CodexParser {
    fn line(&mut self, line: &[u8], at: u64, out: &mut Vec<Evidence>) -> bool {
        CodexParser::line(self, line, at, out)
    }

    /// The open turn as far as it went: a later pass may lengthen it.
    fn finish(&mut self, _quiet_before_ms: i64, out: &mut Vec<Evidence>) {
        open_turn(Provider::Codex, self.start.session_id.as_deref(), self.start.turn_ms, self.start.turn_end_ms, out);
    }

    /// After everything read: a rollout's lines are written whole.
    fn resume(&self, offset: u64) -> (u64, AgentState) {
        (offset, encode_state(&self.start))
    }
}

impl SessionReader for CodexState {
    fn kept(&self) -> &'static [&'static str] {
        LINE_PATHS
    }

    fn line(&mut self, value: &Value, number: u64, session: &str, usage: &mut SessionUsage) -> bool {
        CodexState::line(self, value, number, session, usage)
    }

    fn finish(self: Box<Self>, usage: &mut SessionUsage) {
        CodexState::finish(*self, usage);
    }
}

#[derive(Default)]
pub(super) struct CodexState {
    /// The session the log is about (its first `session_meta`), once seen.
    log_session: Option<String>,
    responses: u64,
    response_counters: Option<Counters>,
    last_total: Option<Counters>,
    context_window: Option<u64>,
    models: Vec<String>,
    /// The current turn already reported its usage-limit hit: one hit is
    /// one entry, whether a window at 100 % or the turn's error said it.
    hit_in_turn: bool,
}

impl CodexState {
    pub(super) fn line(&mut self, value: &Value, number: u64, session: &str, usage: &mut SessionUsage) -> bool {
        let payload = value.get("payload");
        let kind = value.get("type").and_then(Value::as_str);
        if kind == Some("session_meta") && self.log_session.is_none() {
            self.log_session = payload.and_then(|p| p.get("id")).and_then(Value::as_str).map(str::to_owned);
        }
        if self.log_session.as_deref() != Some(session) {
            return false;
        }
        if kind == Some("turn_context")
            && let Some(model) = payload.and_then(|p| p.get("model")).and_then(Value::as_str)
            && !self.models.iter().any(|m| m == model)
        {
            self.models.push(model.to_owned());
        }
        if kind != Some("event_msg") {
            return true;
        }
        let Some(payload) = payload else { return true };
        match payload.get("type").and_then(Value::as_str) {
            Some("token_count") => self.token_count(value, payload, number, usage),
            Some("task_started") => self.hit_in_turn = false,
            // 0.169: the hit is the turn's error, with or without headers.
            Some("task_complete")
                if payload.pointer("/error/codex_error_info").and_then(Value::as_str)
                    == Some("usage_limit_exceeded") =>
            {
                if !self.hit_in_turn {
                    usage.limits.push(LimitHit {
                        line: number,
                        observed_at_utc: line_time(value),
                        resets_at_utc: None,
                        detection: Detection::Structured,
                    });
                }
                self.hit_in_turn = true;
            }
            // 0.169 on: a turn that ended on an API error that is no limit
            // (`codex_error_info` "other", …) says so in its completion.
            Some("task_complete") if payload.get("error").is_some_and(|error| !error.is_null()) => {
                usage.lines.error_lines += 1;
            }
            Some("error") => {
                let message = payload.get("message").and_then(Value::as_str).unwrap_or("");
                if bee_proto::usage::codex_limit_notice(message) {
                    usage.limits.push(LimitHit {
                        line: number,
                        observed_at_utc: line_time(value),
                        resets_at_utc: None,
                        detection: Detection::Text,
                    });
                } else {
                    usage.lines.error_lines += 1;
                }
            }
            _ => {}
        }
        true
    }

    fn token_count(&mut self, line: &Value, payload: &Value, number: u64, usage: &mut SessionUsage) {
        if let Some(info) = payload.get("info").filter(|i| i.is_object()) {
            let total = info.get("total_token_usage").map(|u| codex_counters(u, number, &mut usage.issues));
            // Some versions write the same token_count once per rate-limit
            // bucket: an unchanged cumulative total is not a new response.
            let repeated = total.is_some() && total == self.last_total;
            if !repeated {
                if let Some(last) = info.get("last_token_usage").map(|u| codex_counters(u, number, &mut usage.issues)) {
                    if !crate::ledger::stored::responses::reports_all(Provider::Codex, &last) {
                        bee_proto::usage::note_line_issue(&mut usage.issues, UsageIssueCode::Partial, number);
                    }
                    self.responses += 1;
                    self.response_counters.get_or_insert_with(Counters::default).add(&last);
                }
                if total.is_some() {
                    self.last_total = total;
                }
            }
            if let Some(window) = counter(info.get("model_context_window"), number, &mut usage.issues) {
                self.context_window = Some(window);
            }
        }
        let Some(limits) = payload.get("rate_limits").filter(|r| r.is_object()) else { return };
        let observed = line_time(line);
        for name in ["primary", "secondary"] {
            let Some(window) = limits.get(name).filter(|w| w.is_object()) else { continue };
            let minutes = counter(window.get("window_minutes"), number, &mut usage.issues);
            let used = window.get("used_percent").and_then(Value::as_f64).filter(|p| p.is_finite() && *p >= 0.0);
            let resets_at = match counter(window.get("resets_at"), number, &mut usage.issues) {
                Some(at) => bee_proto::time::format_unix_seconds(at),
                None => {
                    let relative = counter(window.get("resets_in_seconds"), number, &mut usage.issues);
                    let base = observed.as_deref().and_then(unix_seconds);
                    match (relative, base) {
                        (Some(seconds), Some(base)) => {
                            base.checked_add(seconds).and_then(bee_proto::time::format_unix_seconds)
                        }
                        _ => None,
                    }
                }
            };
            let snapshot = RateLimitSnapshot {
                line: number,
                observed_at_utc: observed.clone(),
                window: WindowKind::from_minutes(minutes),
                window_minutes: minutes,
                used_percent: used,
                resets_at_utc: resets_at.clone(),
            };
            if used.is_some_and(|p| p >= 100.0) && !self.hit_in_turn {
                self.hit_in_turn = true;
                usage.limits.push(LimitHit {
                    line: number,
                    observed_at_utc: observed.clone(),
                    resets_at_utc: resets_at,
                    detection: Detection::Structured,
                });
            }
            usage.rate_limits.push(snapshot);
        }
    }

    pub(super) fn finish(self, usage: &mut SessionUsage) {
        usage.response =
            Some(ResponseStream { responses: self.responses, counters: self.response_counters, models: self.models });
        usage.history = Some(HistoryStream {
            total_counters: self.last_total,
            model_context_window: self.context_window,
            last_context_tokens: None,
        });
    }
}

fn unix_seconds(text: &str) -> Option<u64> {
    bee_proto::time::parse_rfc3339(text).and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_secs())
}

fn codex_counters(usage: &Value, line: u64, issues: &mut Vec<UsageIssue>) -> Counters {
    Counters {
        input_tokens: counter(usage.get("input_tokens"), line, issues),
        cached_input_tokens: counter(usage.get("cached_input_tokens"), line, issues),
        output_tokens: counter(usage.get("output_tokens"), line, issues),
        reasoning_output_tokens: counter(usage.get("reasoning_output_tokens"), line, issues),
        total_tokens: counter(usage.get("total_tokens"), line, issues),
        ..Counters::default()
    }
}
