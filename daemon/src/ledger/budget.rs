//! Readers of the provider CLIs' own logs: Claude Code transcripts and Codex
//! rollout logs. They extract what the provider reported — token counters,
//! rate-limit snapshots, usage-limit hits — and account for every line:
//! each is matched to the session, to another session, or counted as
//! unparseable with its line number. Nothing is estimated.

use bee_proto::usage::{
    Counters, Detection, Harness, HistoryStream, LimitHit, LineCounts, RateLimitSnapshot, ResponseStream, UsageIssue,
    UsageIssueCode, WindowKind,
};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{self, Read};

use crate::storage::lines::{self, Line};
use std::time::UNIX_EPOCH;

/// Longest line parsed; Claude transcripts carry tool output inline, so this
/// is generous, and a longer line is reported, not parsed.
pub const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

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
        Harness::Claude => Parser::Claude(ClaudeState::default()),
        Harness::Codex => Parser::Codex(CodexState::default()),
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
                usage.issues.push(issue(UsageIssueCode::OversizedLine, number));
                usage.lines.unparseable += 1;
                continue;
            }
            Line::Partial => usage.issues.push(issue(UsageIssueCode::TruncatedLastLine, number)),
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
                usage.issues.push(issue(UsageIssueCode::UnparseableLine, number));
                continue;
            }
        };
        let matched = match &mut state {
            Parser::Claude(claude) => claude.line(&value, number, session, &mut usage),
            Parser::Codex(codex) => codex.line(&value, number, session, &mut usage),
        };
        if matched {
            usage.lines.matched_session += 1;
        } else {
            usage.lines.other_session += 1;
        }
    }
    match state {
        Parser::Claude(claude) => claude.finish(&mut usage),
        Parser::Codex(codex) => codex.finish(&mut usage),
    }
    if usage.lines.matched_session == 0 {
        usage.issues.insert(0, UsageIssue { code: UsageIssueCode::NoMatchingSession, line: None });
    } else if usage.response.as_ref().is_none_or(|r| r.counters.is_none()) {
        usage.issues.insert(0, UsageIssue { code: UsageIssueCode::NoTokenCount, line: None });
    }
    Ok(usage)
}

enum Parser {
    Claude(ClaudeState),
    Codex(CodexState),
}

fn issue(code: UsageIssueCode, line: u64) -> UsageIssue {
    UsageIssue { code, line: Some(line) }
}

/// A counter: a non-negative integer that fits, else an issue and `None`.
fn counter(value: Option<&Value>, line: u64, issues: &mut Vec<UsageIssue>) -> Option<u64> {
    match value? {
        Value::Null => None,
        Value::Number(n) => match n.as_u64() {
            Some(n) => Some(n),
            None => {
                issues.push(issue(UsageIssueCode::InvalidCounter, line));
                None
            }
        },
        _ => {
            issues.push(issue(UsageIssueCode::InvalidCounter, line));
            None
        }
    }
}

fn line_time(value: &Value) -> Option<String> {
    value.get("timestamp").and_then(Value::as_str).filter(|t| bee_proto::time::is_rfc3339_utc(t)).map(str::to_owned)
}

#[derive(Default)]
struct ClaudeState {
    /// Deduplicated responses: key → (line, counters, model).
    responses: HashMap<String, (u64, Counters)>,
    order: Vec<String>,
    models: Vec<String>,
}

impl ClaudeState {
    fn line(&mut self, value: &Value, number: u64, session: &str, usage: &mut SessionUsage) -> bool {
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

    fn finish(self, usage: &mut SessionUsage) {
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

#[derive(Default)]
struct CodexState {
    /// The session the log is about (its first `session_meta`), once seen.
    log_session: Option<String>,
    responses: u64,
    response_counters: Option<Counters>,
    last_total: Option<Counters>,
    context_window: Option<u64>,
    models: Vec<String>,
}

impl CodexState {
    fn line(&mut self, value: &Value, number: u64, session: &str, usage: &mut SessionUsage) -> bool {
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
            Some("error") => {
                let message = payload.get("message").and_then(Value::as_str).unwrap_or("");
                if bee_proto::usage::codex_limit_notice(message) {
                    usage.limits.push(LimitHit {
                        line: number,
                        observed_at_utc: line_time(value),
                        resets_at_utc: None,
                        detection: Detection::Text,
                    });
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
            if used.is_some_and(|p| p >= 100.0) {
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

    fn finish(self, usage: &mut SessionUsage) {
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
