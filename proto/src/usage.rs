//! `beectl budget --measured`: one session's counters as the provider CLI
//! recorded them in its own log. Two streams are kept apart and never added:
//! per-response counters and cumulative (history) counters.

use serde::{Deserialize, Serialize};

/// Which CLI wrote the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Harness {
    Claude,
    Codex,
}

impl Harness {
    pub fn from_cli(text: &str) -> Option<Harness> {
        match text {
            "claude" => Some(Harness::Claude),
            "codex" => Some(Harness::Codex),
            _ => None,
        }
    }
}

/// What Claude Code writes when a usage limit is hit: `…|<unix seconds>`.
pub const CLAUDE_LIMIT_TEXT: &str = "Claude AI usage limit reached|";

/// `Some(reset time)` when `text` carries Claude's usage-limit notice; the
/// reset is `None` when the notice gives no usable time.
pub fn claude_limit_reset(text: &str) -> Option<Option<String>> {
    let at = text.find(CLAUDE_LIMIT_TEXT)?;
    let digits: String =
        text[at + CLAUDE_LIMIT_TEXT.len()..].chars().take_while(char::is_ascii_digit).take(20).collect();
    Some(digits.parse::<u64>().ok().and_then(crate::time::format_unix_seconds))
}

/// Whether `text` is Codex's usage-limit message.
pub fn codex_limit_notice(text: &str) -> bool {
    text.to_ascii_lowercase().contains("usage limit")
}

/// A cost in US dollars for people: cents, and under a cent two
/// significant digits, so a small cost never reads as a zero.
pub fn usd_text(cost: f64) -> String {
    if cost > 0.0 && cost < 0.01 {
        let decimals = (-cost.log10().floor()).clamp(2.0, 10.0) as usize + 1;
        format!("${cost:.decimals$}")
    } else {
        format!("${cost:.2}")
    }
}

/// [`usd_text`], marked `≥` when the cost is a lower bound (priced from a
/// partial sum, or leaving parts out).
pub fn usd_text_bounded(cost: f64, lower_bound: bool) -> String {
    format!("{}{}", if lower_bound { "≥" } else { "" }, usd_text(cost))
}

/// The identity of one Claude response in a transcript: streaming writes a
/// request several times under the same (`message.id`, `requestId`); a
/// sidechain replay reuses the message id without a request id. `None` when
/// the line names no message id.
pub fn claude_response_key(message_id: Option<&str>, request_id: Option<&str>) -> Option<String> {
    let id = message_id?;
    Some(match request_id {
        // Spelled once per response line read: without the formatter.
        Some(request) => [id, "\u{1f}", request].concat(),
        None => id.to_owned(),
    })
}

/// Token counters as a provider reports them; a counter it did not report is `null`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counters {
    pub input_tokens: Option<u64>,
    /// Codex `cached_input_tokens` (part of input). As reported in
    /// `budget --measured`; the ledger's views show it under cache reads
    /// (their one set of columns), and this is `null` there.
    pub cached_input_tokens: Option<u64>,
    /// Claude `cache_creation_input_tokens`.
    pub cache_creation_input_tokens: Option<u64>,
    /// Claude `cache_read_input_tokens`.
    pub cache_read_input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Codex `reasoning_output_tokens` (part of output).
    pub reasoning_output_tokens: Option<u64>,
    /// Codex `total_tokens`.
    pub total_tokens: Option<u64>,
}

impl Counters {
    /// The context a Claude request carried: its input, cache writes and
    /// cache reads together; `None` when the input was not reported.
    pub fn claude_context_size(&self) -> Option<u64> {
        self.input_tokens.map(|input| {
            input
                .saturating_add(self.cache_creation_input_tokens.unwrap_or(0))
                .saturating_add(self.cache_read_input_tokens.unwrap_or(0))
        })
    }

    /// Adds `other` field by field; a field stays `null` only if neither reported it.
    pub fn add(&mut self, other: &Counters) {
        fn sum(a: &mut Option<u64>, b: Option<u64>) {
            if let Some(b) = b {
                *a = Some(a.unwrap_or(0).saturating_add(b));
            }
        }
        sum(&mut self.input_tokens, other.input_tokens);
        sum(&mut self.cached_input_tokens, other.cached_input_tokens);
        sum(&mut self.cache_creation_input_tokens, other.cache_creation_input_tokens);
        sum(&mut self.cache_read_input_tokens, other.cache_read_input_tokens);
        sum(&mut self.output_tokens, other.output_tokens);
        sum(&mut self.reasoning_output_tokens, other.reasoning_output_tokens);
        sum(&mut self.total_tokens, other.total_tokens);
    }

    /// Codex's usage object (`input_tokens`, `cached_input_tokens`,
    /// `output_tokens`, `reasoning_output_tokens`, `total_tokens`); a field
    /// that is absent or not a counter stays `None`.
    pub fn from_codex(usage: &serde_json::Value) -> Counters {
        let field = |name: &str| usage.get(name).and_then(serde_json::Value::as_u64);
        Counters {
            input_tokens: field("input_tokens"),
            cached_input_tokens: field("cached_input_tokens"),
            output_tokens: field("output_tokens"),
            reasoning_output_tokens: field("reasoning_output_tokens"),
            total_tokens: field("total_tokens"),
            ..Counters::default()
        }
    }

    /// Whether no counter is above 0 (each is 0 or unknown): the record of
    /// a request that was never served, not a response.
    pub fn counts_nothing(&self) -> bool {
        self.values().iter().all(|counter| counter.unwrap_or(0) == 0)
    }

    /// How complete a write of a streamed response is: more counters
    /// reported, then more output. The fuller write of a response is kept.
    pub fn completeness(&self) -> (usize, u64) {
        (self.reported(), self.output_tokens.unwrap_or(0))
    }

    /// The seven counters, in field order.
    pub fn values(&self) -> [Option<u64>; 7] {
        [
            self.input_tokens,
            self.cached_input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
            self.output_tokens,
            self.reasoning_output_tokens,
            self.total_tokens,
        ]
    }

    /// How many counters were reported: more is "more complete".
    pub fn reported(&self) -> usize {
        self.values().iter().filter(|c| c.is_some()).count()
    }
}

/// Per-response counters, summed over distinct responses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseStream {
    /// Distinct responses (after deduplication).
    pub responses: u64,
    /// `null` when no response reported counters.
    pub counters: Option<Counters>,
    /// Models named by the responses, in first-seen order.
    pub models: Vec<String>,
}

/// Cumulative counters, as last reported; never added to the response stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryStream {
    /// Codex: the last `total_token_usage`. Claude writes none: `null`.
    pub total_counters: Option<Counters>,
    /// Codex `model_context_window`, when reported.
    pub model_context_window: Option<u64>,
    /// Claude: input + cache creation + cache read of the last response, the
    /// context that request carried. Codex: `null`.
    pub last_context_tokens: Option<u64>,
}

named! {
    /// Which quota window a rate-limit snapshot is about, by its length.
    pub enum WindowKind {
        FiveHour => "five_hour",
        Weekly => "weekly",
        /// Another length, or none given.
        Other => "other",
    }
}

named! {
    /// How a usage limit was detected.
    pub enum Detection {
        /// A field said so.
        Structured => "structured",
        /// A message said so.
        Text => "text",
    }
}

impl WindowKind {
    pub fn from_minutes(minutes: Option<u64>) -> WindowKind {
        match minutes {
            Some(300) => WindowKind::FiveHour,
            Some(10_080) => WindowKind::Weekly,
            _ => WindowKind::Other,
        }
    }
}

/// One rate-limit snapshot as logged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitSnapshot {
    pub line: u64,
    pub observed_at_utc: Option<String>,
    pub window: WindowKind,
    pub window_minutes: Option<u64>,
    pub used_percent: Option<f64>,
    /// Absolute reset time: `resets_at`, or the line's time plus `resets_in_seconds`.
    pub resets_at_utc: Option<String>,
}

/// A usage limit the log shows being hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitHit {
    pub line: u64,
    pub observed_at_utc: Option<String>,
    pub resets_at_utc: Option<String>,
    pub detection: Detection,
}

/// Missing or doubtful evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageIssue {
    pub code: UsageIssueCode,
    /// 1-based line, where one line is to blame.
    pub line: Option<u64>,
    /// On the one issue without a line that follows the first
    /// [`MAX_LINE_ISSUES`] of a code: how many more lines had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<u64>,
}

/// Issues of one code listed with their line numbers; later lines of that
/// code are only counted (in `omitted`), so a log of ten million bad lines
/// gives a short answer — `lines.unparseable` stays the exact count.
pub const MAX_LINE_ISSUES: usize = 100;

/// Notes an issue of `code` at `line`, listing at most [`MAX_LINE_ISSUES`]
/// lines per code and counting the rest.
pub fn note_line_issue(issues: &mut Vec<UsageIssue>, code: UsageIssueCode, line: u64) {
    // Once a code is past its list, its count is usually the last issue: a
    // log of millions of bad lines costs one look per line, not a scan.
    if let Some(more) = issues.iter_mut().rev().find(|issue| issue.code == code && issue.omitted.is_some()) {
        more.omitted = more.omitted.map(|n| n.saturating_add(1));
        return;
    }
    let listed = issues.iter().filter(|issue| issue.code == code && issue.line.is_some()).count();
    if listed < MAX_LINE_ISSUES {
        issues.push(UsageIssue { code, line: Some(line), omitted: None });
    } else {
        issues.push(UsageIssue { code, line: None, omitted: Some(1) });
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageIssueCode {
    /// Nothing in the log belongs to the selected session.
    NoMatchingSession,
    /// The session is there but reported no token counters.
    NoTokenCount,
    /// A line that is not a JSON object of a known shape.
    UnparseableLine,
    /// The last line has no newline: a write in progress or cut short.
    TruncatedLastLine,
    /// A line over the per-line bound; not parsed.
    OversizedLine,
    /// A counter out of range (negative, fractional or too large): ignored.
    InvalidCounter,
    /// A response without a counter its provider reports: the sums it is
    /// in leave that counter out and are lower bounds.
    Partial,
}

/// Line accounting: every line is somewhere.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineCounts {
    pub read: u64,
    pub matched_session: u64,
    pub other_session: u64,
    pub unparseable: u64,
    /// Lines of the session the provider CLI wrote about its own failure
    /// (Claude Code's `<synthetic>` / `isApiErrorMessage` lines, Codex
    /// `error` events) that were no limit hit: never a response. Part of
    /// `matchedSession`.
    #[serde(default)]
    pub error_lines: u64,
}

/// The `beectl budget --measured` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeasuredBudget {
    pub schema_version: u32,
    pub status: String,
    pub error_code: Option<String>,
    pub harness: Option<Harness>,
    pub session: Option<String>,
    /// Always `provider_reported_counters`: nothing here is estimated.
    pub source: String,
    pub lines: Option<LineCounts>,
    pub response: Option<ResponseStream>,
    pub history: Option<HistoryStream>,
    pub rate_limits: Vec<RateLimitSnapshot>,
    pub limits: Vec<LimitHit>,
    pub issues: Vec<UsageIssue>,
    /// Never a bill: no cost is computed here.
    pub money: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_under_a_cent_never_reads_as_a_zero() {
        assert_eq!(usd_text(0.0), "$0.00");
        assert_eq!(usd_text(3.456), "$3.46");
        assert_eq!(usd_text(0.01), "$0.01");
        assert_eq!(usd_text(0.00163875), "$0.0016");
        assert_eq!(usd_text(0.005), "$0.0050");
        assert_eq!(usd_text(0.000012), "$0.000012");
        assert_eq!((usd_text_bounded(0.5, false), usd_text_bounded(0.0016, true)), ("$0.50".into(), "≥$0.0016".into()));
    }
}
