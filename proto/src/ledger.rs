//! The ledger: append-only `call`, `limit` and `work` records, the quota
//! snapshots calls (and status lines) carry, and the `beectl quota` /
//! `beectl usage` / `beectl status` documents. Unknown is `null`, never 0.

use crate::usage::{Counters, WindowKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `POST`: append a [`LedgerAppend`]; answers [`LedgerAppended`].
pub const LEDGER_RECORDS_PATH: &str = "/v1/ledger/records";
/// `POST`: run one ingestion pass of the provider logs now.
pub const LEDGER_INGEST_PATH: &str = "/v1/ledger/ingest";
/// Producers spool here (inside the spool directory) when beed cannot take a record.
pub const LEDGER_SPOOL_FILE: &str = "ledger-v1.jsonl";
/// Unparseable ledger spool lines are moved here.
pub const LEDGER_REJECTED_FILE: &str = "ledger-v1.rejected.jsonl";
/// Bound on one serialized record.
pub const MAX_LEDGER_RECORD_BYTES: usize = 16 * 1024;

/// A view's issue when ledger records fail their checksum: they are left out
/// of every figure, so the figures are a lower bound.
pub const CORRUPT_ISSUE: &str = "corrupt";

/// Bounds a record's figures must keep to be stored. Each is far beyond what
/// one provider call reports, and small enough that no total over a ledger
/// can overflow: a record outside them is refused at the door, never stored.
pub mod bounds {
    /// One token counter of one call.
    pub const MAX_CALL_TOKENS: u64 = 10_000_000_000;
    /// A call's duration: 30 days.
    pub const MAX_CALL_DURATION_MS: u64 = 30 * 24 * 3_600_000;
    /// A call's reported cost, in US dollars.
    pub const MAX_CALL_COST_USD: f64 = 1_000_000.0;
    /// Model invocations or compactions of one call.
    pub const MAX_CALL_COUNT: u64 = 1_000_000;
    /// A quota window's used percent (providers report a little over 100).
    pub const MAX_USED_PERCENT: f64 = 10_000.0;
    /// One text of a record (a model, a session, a path, a response key), in bytes.
    pub const MAX_TEXT_BYTES: usize = 4_096;
}

/// The unit of the figure an agent writes itself beside a response
/// ([`Provider::own_unit`]). Figures of different units are never summed
/// together: each has its own column in a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnUnit {
    /// Its own cost in US dollars (`agentCostUsd`).
    Usd,
    /// Credits, the agent's own billing unit (Kiro's): neither tokens nor
    /// money (`agentCredits`).
    Credits,
    /// Tokens of input and output together, never told apart (Warp's
    /// totals): in none of the token columns (`unsplitTokens`).
    UnsplitTokens,
    /// Tokens of input and output together as the agent counted them
    /// itself, its own estimate unless its record proves otherwise (Aider's:
    /// its tokenizer's count of a streamed reply, the provider's of one not
    /// streamed, and nothing says which): in none of the token columns
    /// (`agentEstimatedTokens`), never shown as a count.
    EstimatedTokens,
}

impl OwnUnit {
    /// The largest figure Bee takes an agent to have written for one
    /// response; a larger one is a broken or hostile record.
    pub const fn max(self) -> f64 {
        match self {
            OwnUnit::Usd => 1_000.0,
            OwnUnit::Credits => 1_000_000.0,
            OwnUnit::UnsplitTokens | OwnUnit::EstimatedTokens => bounds::MAX_CALL_TOKENS as f64,
        }
    }

    /// Whether `figure` is one an agent can have written in this unit:
    /// finite, not negative (nor `-0`, so that figures order as their bits
    /// do), at most [`OwnUnit::max`], and whole where the unit is tokens.
    pub fn holds(self, figure: f64) -> bool {
        figure.is_finite()
            && figure.is_sign_positive()
            && figure <= self.max()
            && (!self.is_tokens() || figure.fract() == 0.0)
    }

    /// The steps a sum of figures counts in, per unit: billionths of a
    /// dollar or credit, whole tokens (a sum of steps stays exact).
    pub const fn steps_per_unit(self) -> f64 {
        match self {
            OwnUnit::Usd | OwnUnit::Credits => 1e9,
            OwnUnit::UnsplitTokens | OwnUnit::EstimatedTokens => 1.0,
        }
    }

    /// Whether the unit is whole tokens.
    pub const fn is_tokens(self) -> bool {
        matches!(self, OwnUnit::UnsplitTokens | OwnUnit::EstimatedTokens)
    }
}

named! {
    /// A provider CLI.
    pub enum Provider {
        Claude => "claude",
        Codex => "codex",
        Gemini => "gemini",
        Qwen => "qwen",
        OpenCode => "opencode",
        Pi => "pi",
        Copilot => "copilot",
        Amp => "amp",
        Droid => "droid",
        Goose => "goose",
        Kilo => "kilo",
        Kimi => "kimi",
        Codebuff => "codebuff",
        Crush => "crush",
        Hermes => "hermes",
        OpenClaw => "openclaw",
        Agy => "agy",
        CopilotVsCode => "copilot-vs",
        Junie => "junie",
        Devin => "devin",
        Mux => "mux",
        Cline => "cline",
        Roo => "roo",
        KiloCode => "kilocode",
        Continue => "continue",
        Cursor => "cursor",
        Zed => "zed",
        Aider => "aider",
        Augment => "augment",
        Meept => "meept",
        ZCode => "zcode",
        Reasonix => "reasonix",
        LingTai => "lingtai",
        OpenCodeReview => "opencodereview",
        Aside => "aside",
        Muse => "muse",
        KimiCode => "kimi-code",
        MiMo => "mimo",
        OpenClaude => "openclaude",
        Bob => "bob",
        OhMyPi => "omp",
        GrokCli => "grok-cli",
        MistralVibe => "vibe",
        Kiro => "kiro",
        Warp => "warp",
        Windsurf => "windsurf",
    }
}

/// How an agent's own counters split a response's tokens, as its records
/// store them: the one fact the ledger's arithmetic (totals, tiers,
/// prices, Bee's columns) needs of each agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterShape {
    /// Anthropic's: input without either cache, cache writes, cache reads
    /// and output are four parts of the whole.
    Anthropic,
    /// OpenAI's: input includes its cached part, output its reasoning part.
    OpenAi,
}

impl Provider {
    /// Its number in the ledger's packed forms: its place among the
    /// contract's names, which only ever grow at the end.
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// The provider numbered `number` (see [`Provider::number`]).
    pub fn from_number(number: u8) -> Option<Provider> {
        Provider::ALL.get(usize::from(number)).copied()
    }

    /// The unit of the figure this agent writes itself beside a response,
    /// where it writes one: dollars for most; Kiro's credits; Warp's tokens
    /// of input and output together; Aider's own count of them.
    pub const fn own_unit(self) -> OwnUnit {
        match self {
            Provider::Kiro => OwnUnit::Credits,
            Provider::Warp => OwnUnit::UnsplitTokens,
            Provider::Aider => OwnUnit::EstimatedTokens,
            _ => OwnUnit::Usd,
        }
    }

    /// How this agent's stored counters split a response's tokens.
    pub const fn counter_shape(self) -> CounterShape {
        match self {
            Provider::Codex
            | Provider::Gemini
            | Provider::Qwen
            | Provider::Copilot
            | Provider::CopilotVsCode
            | Provider::Devin
            | Provider::Aider
            | Provider::Kiro
            | Provider::Reasonix
            | Provider::LingTai => CounterShape::OpenAi,
            _ => CounterShape::Anthropic,
        }
    }

    /// The counters beyond input and output this agent's records keep for
    /// every response: a response missing one is partial, and one it never
    /// keeps is no part of any sum (it is `null` in every view, never 0).
    pub const fn reports(self) -> Reports {
        let (cache_writes, cache_reads, reasoning) = match self {
            Provider::Claude
            | Provider::Pi
            | Provider::Amp
            | Provider::Droid
            | Provider::Kimi
            | Provider::OpenClaw
            | Provider::Junie
            | Provider::Cline
            | Provider::Roo
            | Provider::KiloCode
            | Provider::Augment => (true, true, false),
            Provider::OpenCode | Provider::Kilo | Provider::Hermes | Provider::Mux | Provider::Continue => {
                (true, true, true)
            }
            Provider::Codex | Provider::Gemini | Provider::Qwen | Provider::Agy => (false, true, true),
            Provider::Copilot | Provider::CopilotVsCode | Provider::Devin => (false, true, false),
            Provider::Zed => (true, true, false),
            Provider::Goose
            | Provider::Codebuff
            | Provider::Crush
            | Provider::Cursor
            | Provider::Aider
            | Provider::GrokCli
            | Provider::MistralVibe
            | Provider::Kiro
            | Provider::Warp
            | Provider::Windsurf => (false, false, false),
            Provider::ZCode | Provider::Aside | Provider::Muse | Provider::MiMo => (true, true, true),
            // Meept writes 0 for a reasoning or cache-write count not reported.
            Provider::Meept => (false, true, false),
            Provider::Reasonix | Provider::LingTai => (false, true, true),
            Provider::OpenCodeReview | Provider::KimiCode | Provider::OpenClaude | Provider::Bob | Provider::OhMyPi => {
                (true, true, false)
            }
        };
        Reports { cache_writes, cache_reads, reasoning }
    }
}

/// Which counters beyond input and output an agent keeps
/// ([`Provider::reports`]); for an agent of OpenAI's shape, cache reads
/// are its cached input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reports {
    pub cache_writes: bool,
    pub cache_reads: bool,
    pub reasoning: bool,
}

impl From<crate::usage::Harness> for Provider {
    /// The provider whose records the CLI writes.
    fn from(harness: crate::usage::Harness) -> Provider {
        match harness {
            crate::usage::Harness::Claude => Provider::Claude,
            crate::usage::Harness::Codex => Provider::Codex,
        }
    }
}

named! {
    /// Who produced a call record.
    pub enum CallSource {
        /// `beectl run` around the provider CLI.
        Run => "run",
        /// `UserPromptSubmit` … `Stop` of an interactive session.
        HookTurn => "hook_turn",
        /// Read from the provider's own logs by beed (stores before
        /// responses; no longer written).
        Ingested => "ingested",
        /// A turn no producer measured, timed from the log's own
        /// timestamps (prompt → last response); never mixed with measured time.
        Derived => "derived",
        /// One provider request as the provider CLI's own OpenTelemetry
        /// reported it (Claude Code's `claude_code.api_request`, received by
        /// `beed --otlp`): measured time and reported cost. beed records
        /// these itself; a producer never appends one.
        ApiRequest => "api_request",
    }
}

/// A quota snapshot as a provider reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuotaSnapshot {
    pub observed_at_utc: String,
    pub window: WindowKind,
    pub window_minutes: Option<u64>,
    pub used_percent: f64,
    pub resets_at_utc: Option<String>,
    /// The limit family the window belongs to (Codex `rate_limits.limit_id`,
    /// e.g. `codex` or `codex_other`); `null` when the provider named none.
    #[serde(default)]
    pub limit_id: Option<String>,
}

named! {
    /// How a producer's call ended.
    pub enum CallOutcome {
        /// The CLI exited 0 and reported no error.
        Completed => "completed",
        /// The CLI failed or reported an error after asking the model.
        Failed => "failed",
        /// The CLI failed before any model request (its own output says so):
        /// still a call, labelled so.
        FailedBeforeRequest => "failed_before_request",
        /// A signal (SIGINT, SIGTERM, SIGHUP) ended it; forwarded and waited for.
        Interrupted => "interrupted",
    }
}

/// One provider call (also one that failed or errored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallRecord {
    /// Producer-assigned; a repeat of the same id is stored once.
    pub record_id: uuid::Uuid,
    pub source: CallSource,
    pub provider: Provider,
    pub started_at_utc: String,
    pub duration_ms: Option<u64>,
    pub success: Option<bool>,
    pub model: Option<String>,
    pub project_path: Option<String>,
    /// Cost the CLI reported, in USD; `null` when it reported none.
    pub cost_usd: Option<f64>,
    pub tokens: Option<Counters>,
    pub quota_snapshots: Vec<QuotaSnapshot>,
    pub model_invocations: Option<u64>,
    pub context_window: Option<u64>,
    pub context_tokens: Option<u64>,
    pub compactions: Option<u64>,
    /// Session id, where the call belongs to one.
    pub session_id: Option<String>,
    /// How it ended, where the producer knows.
    #[serde(default)]
    pub outcome: Option<CallOutcome>,
}

impl CallRecord {
    /// A call that is a span of time and nothing more yet: the rest unknown.
    pub fn span(
        record_id: uuid::Uuid,
        source: CallSource,
        provider: Provider,
        started_at_utc: String,
        duration_ms: Option<u64>,
        session_id: Option<String>,
    ) -> CallRecord {
        CallRecord {
            record_id,
            source,
            provider,
            started_at_utc,
            duration_ms,
            success: None,
            model: None,
            project_path: None,
            cost_usd: None,
            tokens: None,
            quota_snapshots: Vec::new(),
            model_invocations: None,
            context_window: None,
            context_tokens: None,
            compactions: None,
            session_id,
            outcome: None,
        }
    }
}

pub use crate::usage::Detection;

/// A call reported a usage limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitRecord {
    pub record_id: uuid::Uuid,
    pub at_utc: String,
    pub provider: Provider,
    pub resets_at_utc: Option<String>,
    pub detection: Detection,
    /// The window that hit; `null` when the evidence did not name one.
    pub window: Option<WindowKind>,
    #[serde(default)]
    pub window_minutes: Option<u64>,
    /// The limit family (see [`QuotaSnapshot::limit_id`]).
    #[serde(default)]
    pub limit_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
}

impl LimitRecord {
    /// A limit whose quota window the notice did not name.
    pub fn new(
        record_id: uuid::Uuid,
        at_utc: String,
        provider: Provider,
        resets_at_utc: Option<String>,
        detection: Detection,
    ) -> LimitRecord {
        LimitRecord {
            record_id,
            at_utc,
            provider,
            resets_at_utc,
            detection,
            window: None,
            window_minutes: None,
            limit_id: None,
            session_id: None,
        }
    }
}

/// A commit credited to a provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkRecord {
    pub record_id: uuid::Uuid,
    pub at_utc: String,
    pub provider: Provider,
    pub commit_hash: String,
    pub run_mode: String,
    pub task_id: String,
}

/// Anything a producer appends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LedgerRecord {
    Call(Box<CallRecord>),
    Limit(LimitRecord),
    Work(WorkRecord),
    /// Snapshots seen outside any call (a status line); evidence for peaks.
    Snapshot {
        provider: Provider,
        snapshot: QuotaSnapshot,
    },
    /// A hook saw an interactive turn start (Claude Code's
    /// `UserPromptSubmit`, Gemini CLI's `BeforeAgent`) or end (`Stop`,
    /// `AfterAgent`); the end makes the turn's `call`.
    TurnMark(TurnMark),
}

named! {
    /// Which end of a turn.
    pub enum TurnEdge {
        Start => "start",
        Stop => "stop",
    }
}

impl TurnEdge {
    /// The hook events that start and end an interactive turn of
    /// `provider`, as its settings name them: the agents whose hooks Bee
    /// wires (`beectl setup --agent`). Qwen Code took Claude Code's names;
    /// Copilot CLI answers to them too (its own are camelCase), and Codex
    /// uses them.
    pub const fn events(provider: Provider) -> Option<[&'static str; 2]> {
        match provider {
            Provider::Claude | Provider::Qwen | Provider::Copilot | Provider::Codex => {
                Some(["UserPromptSubmit", "Stop"])
            }
            Provider::Gemini => Some(["BeforeAgent", "AfterAgent"]),
            // Its hook files' names (`hookName` `agent_start` and `agent_end`
            // in what they are sent).
            Provider::Cline => Some(["TaskStart", "TaskComplete"]),
            _ => None,
        }
    }

    /// The edge `event` is for `provider`, if it is one.
    pub fn of_event(provider: Provider, event: &str) -> Option<TurnEdge> {
        let [start, stop] = TurnEdge::events(provider)?;
        if event == start {
            Some(TurnEdge::Start)
        } else if event == stop {
            Some(TurnEdge::Stop)
        } else {
            None
        }
    }
}

/// One end of an interactive turn, as a hook saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnMark {
    pub edge: TurnEdge,
    pub at_utc: String,
    pub session_id: String,
    /// The session's transcript, where the turn's token counters are.
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    /// The agent whose hook saw it: Claude Code unless said (marks spooled
    /// before other agents' hooks were wired name none).
    #[serde(default = "claude", skip_serializing_if = "is_claude")]
    pub provider: Provider,
}

fn claude() -> Provider {
    Provider::Claude
}

fn is_claude(provider: &Provider) -> bool {
    *provider == Provider::Claude
}

/// `POST /v1/ledger/records`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LedgerAppend {
    pub records: Vec<LedgerRecord>,
}

/// Answer to [`LedgerAppend`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerAppended {
    pub appended: u64,
    pub duplicates: u64,
}

/// One quota window of a provider, as its snapshots show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaWindow {
    /// The limit family; windows of different families are different windows.
    pub limit_id: Option<String>,
    pub window: WindowKind,
    pub window_minutes: Option<u64>,
    /// The window ends (resets) here; `null` when the provider did not say.
    pub resets_at_utc: Option<String>,
    /// Highest utilisation among the snapshots of this window.
    pub peak_percent: f64,
    pub snapshots: u64,
    /// A hit of this window: a `limit` record that named it, or one inside
    /// it while it stood at 100 %. `null` when its bounds are unknown, or a
    /// hit inside it named no window and it was below 100 % (which window
    /// hit is unknown).
    pub exhausted: Option<bool>,
}

/// A provider in the quota view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderQuota {
    pub provider: Provider,
    pub calls: u64,
    /// `null` when no producer measured a call of this provider: its time
    /// is unknown (see `derived`; issue `time_not_measured`), never 0.
    pub agent_time_ms: Option<u64>,
    pub used_ms: Option<u64>,
    /// Turns timed from its records' own timestamps. `null` (was a
    /// [`DerivedTime`] of zeros before) when its records give Bee no time
    /// span to derive a turn from (see [`AgentRecords::time_spans`]): its
    /// turns are unknown, not 0.
    pub derived: Option<DerivedTime>,
    pub converted: u64,
    /// `limit` records in the range. `null` (was a `u64`, 0) when its
    /// records keep no usage-limit notice (see
    /// [`AgentRecords::limit_notices`]; issue `limits_not_recorded`): a hit
    /// it met would have left no record, so no count is known.
    pub crossed: Option<u64>,
    /// Empty when the provider sent no snapshots: no window, no peak.
    pub windows: Vec<QuotaWindow>,
    /// This provider's own issues: `quota_snapshots_missing` (it was active
    /// and sent none of the windows it reports with every response),
    /// `time_not_measured` (no producer measured a call of it), and
    /// `limits_not_recorded` (`crossed` is `null`); the report's `issues`
    /// gathers them.
    #[serde(default)]
    pub issues: Vec<String>,
}

/// The agents of a view whose records cannot say one of its figures: for
/// each of them that figure is `null` (never 0), a sum over them and agents
/// that can say it is a lower bound (issue `partial`, the count of unknown
/// parts being the length of the list), and the view's issues say which
/// figure (`time_not_measured`, `limits_not_recorded`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotRecorded {
    /// Agents active in the range whose time no producer measured and
    /// whose records give Bee no time span (`derived` is `null` for them).
    #[serde(default)]
    pub time: Vec<Provider>,
    /// Agents active in the range whose records keep no usage-limit notice
    /// (`crossed` is `null` for them; `beectl top` cannot say "no hits").
    #[serde(default)]
    pub limits: Vec<Provider>,
}

impl NotRecorded {
    pub fn is_empty(&self) -> bool {
        self.time.is_empty() && self.limits.is_empty()
    }
}

/// What an agent's records can say, as Bee's reader of them reads them:
/// kept in the registry beside each reader (`About::records`), justified by
/// the agent's README, and listed by `beectl agents`. A view reports a
/// figure of an agent only where its records can say it; elsewhere the
/// figure is `null` with an issue naming the agent (`time_not_measured`,
/// `limits_not_recorded`), and a column it cannot fill makes a sum over it
/// `partial` — never a 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRecords {
    /// Time spans Bee derives turns from (prompt → last response, task
    /// started → complete); without them an agent's time is known only
    /// where a producer measured it.
    pub time_spans: bool,
    /// Usage-limit notices (a 429, "usage limit reached"): each one a
    /// `limit` record.
    pub limit_notices: bool,
    /// Reasoning tokens, told apart (as part of output).
    pub reasoning: bool,
    /// Cache writes (cache-creation input tokens).
    pub cache_writes: bool,
    /// A cost the agent wrote itself (its own estimate, or what its
    /// provider reported), beside the tokens.
    pub own_cost: bool,
}

/// `beectl quota`: time and quota words, never costs or tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaReport {
    pub schema_version: u32,
    pub since_utc: String,
    pub until_utc: String,
    pub provider: Option<Provider>,
    /// Call durations clipped to the range, summed (concurrent calls both
    /// count). `null` when agents worked in the range and no producer
    /// measured a call (issue `time_not_measured`, `derived` beside it):
    /// the time is unknown, never 0.
    pub agent_time_ms: Option<u64>,
    /// The union of call intervals in the range (overlaps once); `null`
    /// exactly when `agent_time_ms` is.
    pub used_ms: Option<u64>,
    /// Range length minus Used; `null` when Used is.
    pub idle_ms: Option<u64>,
    /// `work` records in the range.
    pub converted: u64,
    /// `limit` records in the range. `null` (was a `u64`) when no agent in
    /// the range keeps usage-limit notices in its records (issue
    /// `limits_not_recorded`, `notRecorded.limits` naming them); with some
    /// that do and some that do not, the count of those that do, a lower
    /// bound (`partial`). With no agent active at all, 0 is the truth.
    pub crossed: Option<u64>,
    /// Calls whose duration is unknown: in no time figure.
    pub calls_without_duration: u64,
    /// Turns no producer measured, timed from the logs' own timestamps:
    /// shown apart, never added to the measured figures above. `null` (was
    /// always a [`DerivedTime`]) when no agent in the range has records
    /// Bee derives turns from (`notRecorded.time`); a lower bound
    /// (`partial`) when some of them do not.
    pub derived: Option<DerivedTime>,
    pub providers: Vec<ProviderQuota>,
    /// The agents whose records cannot say a figure of this report (see
    /// [`NotRecorded`]); both lists empty when every agent's can.
    #[serde(default)]
    pub not_recorded: NotRecorded,
    pub issues: Vec<String>,
}

/// Time derived from the logs' own timestamps (prompt → last response of a
/// turn) for turns no producer measured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DerivedTime {
    pub turns: u64,
    pub agent_time_ms: u64,
    pub used_ms: u64,
}

/// `beectl status`: the quota words plus the cost the CLIs reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerStatus {
    #[serde(flatten)]
    pub quota: QuotaReport,
    /// Ledger writes noted as lost in the range (`quota.record_failed`).
    pub record_failures: u64,
    /// Sum of reported costs in USD; `null` when nothing reported one.
    pub est_cost_usd: Option<f64>,
    /// Calls that reported a cost (sessions whose log reports theirs aside).
    pub calls_with_cost: u64,
    /// Sessions whose log reported a cost that grew in the range (Claude
    /// Code's cost-state lines, interactive sessions included).
    pub sessions_with_cost: u64,
    /// Sessions with usage in the range (and producer calls without one)
    /// that no CLI reported a cost for: above 0, `est_cost_usd` leaves them
    /// out and is a lower bound (issue `partial`).
    #[serde(default)]
    pub sessions_without_cost: u64,
}

named! {
    /// How `beectl usage` groups usage.
    pub enum UsageGrouping {
        Day => "day",
        Hour => "hour",
        Week => "week",
        Month => "month",
        Session => "session",
        Model => "model",
        Block => "block",
        Agent => "agent",
        Project => "project",
    }
}

impl UsageGrouping {
    /// Whether its rows are buckets of time (they sort by time, not name).
    pub fn is_time(self) -> bool {
        matches!(self, UsageGrouping::Day | UsageGrouping::Hour | UsageGrouping::Week | UsageGrouping::Month)
    }
}

named! {
    /// `beectl usage --order`: rows oldest first (names A to Z), or the reverse.
    pub enum UsageOrder {
        Asc => "asc",
        Desc => "desc",
    }
}

/// `beectl usage --by`: one grouping, or two joined by a comma
/// (`day,agent`): rows keyed by both, each first key's rows with a subtotal.
/// Spelled in JSON as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UsageBy {
    pub first: UsageGrouping,
    pub then: Option<UsageGrouping>,
}

impl UsageBy {
    /// One grouping alone.
    pub const fn one(first: UsageGrouping) -> UsageBy {
        UsageBy { first, then: None }
    }

    /// The groupings, in order.
    pub fn groupings(self) -> impl Iterator<Item = UsageGrouping> {
        std::iter::once(self.first).chain(self.then)
    }

    /// Whether either key is `grouping`.
    pub fn has(self, grouping: UsageGrouping) -> bool {
        self.first == grouping || self.then == Some(grouping)
    }

    /// `day`, `day,agent`: at most two known groupings, not the same twice,
    /// and a block only alone (a block is its own provider's span of time).
    pub fn parse(text: &str) -> Result<UsageBy, String> {
        let names: Vec<&str> = text.split(',').map(str::trim).collect();
        let known = |name: &str| {
            UsageGrouping::from_name(name).ok_or_else(|| {
                let all: Vec<&str> = UsageGrouping::ALL.iter().map(|g| g.as_str()).collect();
                format!("`{name}` is not a grouping (one of {}, or two joined by a comma)", all.join(", "))
            })
        };
        let by = match names.as_slice() {
            [one] => UsageBy::one(known(one)?),
            [first, then] => UsageBy { first: known(first)?, then: Some(known(then)?) },
            _ => return Err("at most two groupings, joined by a comma (`day,agent`)".to_owned()),
        };
        if by.then == Some(by.first) {
            return Err(format!("`{}` twice", by.first.as_str()));
        }
        if by.then.is_some() && by.has(UsageGrouping::Block) {
            return Err("`block` groups alone: a block is one agent's span of time".to_owned());
        }
        if by.then.is_some_and(UsageGrouping::is_time) && by.first.is_time() {
            return Err("two groupings of time: choose one (`day`, `hour`, `week` or `month`)".to_owned());
        }
        Ok(by)
    }
}

impl std::fmt::Display for UsageBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.first.as_str())?;
        if let Some(then) = self.then {
            write!(f, ",{}", then.as_str())?;
        }
        Ok(())
    }
}

impl Serialize for UsageBy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for UsageBy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str> as Deserialize>::deserialize(deserializer)?;
        UsageBy::parse(&text).map_err(serde::de::Error::custom)
    }
}

named! {
    /// Where a five-hour block's bounds come from.
    pub enum BlockSource {
        /// The provider's own quota window (a snapshot's reset time).
        ProviderWindow => "provider_window",
        /// No snapshot covered it: five hours from the hour of its first
        /// activity, as ccusage infers them.
        Inferred => "inferred",
    }
}

/// A five-hour block of one provider's usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockSpan {
    pub provider: Provider,
    pub start_utc: String,
    pub end_utc: String,
    pub source: BlockSource,
}

/// One group of `beectl usage`: the provider responses that were first
/// written in the range, each counted once globally by its provider id,
/// plus producer calls standing in for sessions that left no log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    /// The local day (`YYYY-MM-DD`), the local hour (`YYYY-MM-DD HH:00`),
    /// the week's Monday, the month (`YYYY-MM`), the whole session id, the
    /// model's label, the agent, the project, or the block's start (RFC 3339
    /// UTC); `null` when the parts did not say which.
    pub key: Option<String>,
    /// A grouping by two keys (`--by day,agent`): the second key, spelled as
    /// `key` is; absent in a first key's subtotal and with one grouping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subkey: Option<String>,
    /// The agent whose records the row holds, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Provider>,
    /// The agents, when the row spans several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<Provider>,
    /// A session's (`--by session`): its first and last response in the
    /// range, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_at_utc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_at_utc: Option<String>,
    /// The model ids the agents wrote, each once, sorted: `models` holds
    /// their labels (one per model, whatever prefix or snapshot date).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_ids: Vec<String>,
    /// Columns some parts of the row reported and others could not (an
    /// agent that records no reasoning or cache writes beside one that
    /// does): each with the responses and calls that left it unknown.
    /// While one is named here that column's sum is a lower bound
    /// (`partial`), never a whole that looks exact.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub partial_columns: BTreeMap<String, u64>,
    /// `--by block`: the block's provider, bounds and their source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockSpan>,
    /// `--by session`: the session's project — the directory it ran in,
    /// named as Claude Code names its project folders — when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Models seen in the group, sorted.
    #[serde(default)]
    pub models: Vec<String>,
    /// Distinct provider responses.
    pub responses: u64,
    /// Summed counters; a counter no part reported stays `null`.
    pub tokens: Counters,
    /// Parts that lack a counter their provider reports (or, for a producer
    /// call, all of them): while above 0 the sums are lower bounds (`partial`).
    pub partial_parts: u64,
    /// Responses whose log was still being written: their counters may
    /// still grow (`pending`).
    pub pending_responses: u64,
    /// Calls whose own counters stand in because no log of their session
    /// exists (`beectl run` output, say): labelled, never mixed silently.
    pub producer_counted_calls: u64,
    /// Responses of other sessions that the group's sessions hold copies
    /// of (a fork or resume copied them in): each is counted once, in the
    /// session that made it, never here. Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub copied_responses: u64,
    /// Cost the provider reported (Claude Code's cost lines, `claude -p`
    /// results); `null` when nothing in the group reported one.
    #[serde(default)]
    pub reported_cost_usd: Option<f64>,
    /// Cost the agents wrote themselves beside each response (OpenCode's,
    /// Kilo's, pi's, OpenClaw's own `cost`), summed; never mixed with the
    /// provider's or Bee's. `null` when no part of the group is of an agent
    /// that wrote one. While `agentCostUnknownParts` is above 0 it is a
    /// lower bound.
    #[serde(default)]
    pub agent_cost_usd: Option<f64>,
    /// Responses of agents that write their own cost whose record had none
    /// Bee could read (unknown, never $0). Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub agent_cost_unknown_parts: u64,
    /// Credits the agents counted in their own billing unit (Kiro's),
    /// summed: neither tokens nor money, never converted to either. `null`
    /// when no part of the group is of an agent that counts credits. While
    /// `agentCreditsUnknownParts` is above 0 it is a lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_credits: Option<f64>,
    /// Responses of agents that count credits whose record had none Bee
    /// could read (unknown, never 0). Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub agent_credits_unknown_parts: u64,
    /// Tokens the agents counted only as totals of input and output
    /// together (Warp's), summed. They are in no token column and not in
    /// `tokens.totalTokens` (whose parts those columns are): the parts
    /// they hold are unknown, and each response of them is `partial`.
    /// `null` when no part of the group is of such an agent. While
    /// `unsplitTokensUnknownParts` is above 0 it is a lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsplit_tokens: Option<u64>,
    /// Responses of such agents whose record had no total Bee could read.
    /// Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unsplit_tokens_unknown_parts: u64,
    /// Tokens of input and output together that the agents counted
    /// themselves (Aider's), summed: their own estimates, not the
    /// provider's counts, so in no token column and not in
    /// `tokens.totalTokens`; each response of them is `partial`. `null`
    /// when no part of the group is of such an agent. While
    /// `agentEstimatedTokensUnknownParts` is above 0 it is a lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_estimated_tokens: Option<u64>,
    /// Responses of such agents whose record had no figure Bee could read.
    /// Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub agent_estimated_tokens_unknown_parts: u64,
    /// Cost estimated from the price table; `null` when no part of the
    /// group could be priced. While `unpricedParts` is above 0 it is a
    /// lower bound.
    #[serde(default)]
    pub estimated_cost_usd: Option<f64>,
    /// Responses and producer calls the table could not price (a model it
    /// does not name): never priced at another model's rates.
    #[serde(default)]
    pub unpriced_parts: u64,
    /// `beectl usage`: sessions with usage in the group that no CLI reported
    /// a cost for in it. Above 0, a `reportedCostUsd` leaves them out and is
    /// a lower bound (`partial`). Absent where it was not worked out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions_without_cost: Option<u64>,
}

impl UsageRow {
    /// Adds `other`'s parts to this row (not its key, block or project).
    pub fn add(&mut self, other: &UsageRow) {
        self.responses += other.responses;
        self.tokens.add(&other.tokens);
        self.partial_parts += other.partial_parts;
        self.pending_responses += other.pending_responses;
        self.producer_counted_calls += other.producer_counted_calls;
        self.copied_responses += other.copied_responses;
        self.unpriced_parts += other.unpriced_parts;
        add_cost(&mut self.reported_cost_usd, other.reported_cost_usd);
        add_cost(&mut self.agent_cost_usd, other.agent_cost_usd);
        self.agent_cost_unknown_parts += other.agent_cost_unknown_parts;
        add_cost(&mut self.agent_credits, other.agent_credits);
        self.agent_credits_unknown_parts += other.agent_credits_unknown_parts;
        add_tokens(&mut self.unsplit_tokens, other.unsplit_tokens);
        self.unsplit_tokens_unknown_parts += other.unsplit_tokens_unknown_parts;
        add_tokens(&mut self.agent_estimated_tokens, other.agent_estimated_tokens);
        self.agent_estimated_tokens_unknown_parts += other.agent_estimated_tokens_unknown_parts;
        add_cost(&mut self.estimated_cost_usd, other.estimated_cost_usd);
        for (into, from) in [(&mut self.models, &other.models), (&mut self.model_ids, &other.model_ids)] {
            for model in from {
                if let Err(at) = into.binary_search(model) {
                    into.insert(at, model.clone());
                }
            }
        }
        for (column, parts) in &other.partial_columns {
            *self.partial_columns.entry(column.clone()).or_default() += parts;
        }
    }
}

/// Adds a known cost to a sum that stays `None` while nothing was known.
pub fn add_cost(sum: &mut Option<f64>, cost: Option<f64>) {
    if let Some(cost) = cost {
        *sum = Some(sum.unwrap_or(0.0) + cost);
    }
}

/// Adds known tokens to a sum that stays `None` while nothing was known.
pub fn add_tokens(sum: &mut Option<u64>, tokens: Option<u64>) {
    if let Some(tokens) = tokens {
        *sum = Some(sum.unwrap_or(0).saturating_add(tokens));
    }
}

/// A quota issue: agents worked in the range (derived turns, responses,
/// limit hits) but no producer measured a call of some of them, so their
/// time is unknown (`null`), never 0; `notRecorded.time` names those whose
/// records give Bee no time span either. Said of a provider in its own
/// issues too.
pub const TIME_NOT_MEASURED_ISSUE: &str = "time_not_measured";

/// A quota and `top` issue: an agent active in the range keeps no
/// usage-limit notice in its records (see [`AgentRecords::limit_notices`]),
/// so its hits are unknown: its `crossed` is `null`, never 0, and
/// `notRecorded.limits` names it.
pub const LIMITS_NOT_RECORDED_ISSUE: &str = "limits_not_recorded";

/// A quota issue: a provider that reports its windows with every response
/// (Codex) was active in the range and sent none.
pub const SNAPSHOTS_MISSING_ISSUE: &str = "quota_snapshots_missing";

/// A usage issue: some parts of a sum are unknown, so it is a lower bound.
pub const PARTIAL_ISSUE: &str = "partial";
/// A usage issue: some responses are not final yet.
pub const PENDING_ISSUE: &str = "pending";
/// A usage issue: the price table does not name some models; their parts
/// have no estimate, and sums over them are lower bounds.
pub const UNPRICED_ISSUE: &str = "unpriced_model";
/// A usage issue: `--project` was asked and some usage has no known
/// project (producer calls without a log, say); it is left out.
pub const PROJECT_UNKNOWN_ISSUE: &str = "project_unknown";

/// A usage issue: an agent in the report keeps no record of some calls it
/// makes (`unrecordedCalls` names them): its figures are the responses its
/// records hold, a lower bound of what its provider served.
pub const UNRECORDED_CALLS_ISSUE: &str = "unrecorded_calls";

/// Calls an agent makes and keeps no record of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnrecordedCalls {
    pub agent: Provider,
    /// Which calls, in words.
    pub calls: String,
}

/// The price table an estimate used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceSource {
    pub source: String,
    /// `YYYY-MM-DD`; `null` when unknown.
    pub date: Option<String>,
    pub models: u64,
}

/// Whether a count is 0 (a field left out of a document while it is).
pub fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// The filters a usage view applied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageFilters {
    /// `--agent` (`--provider`, its earlier name).
    pub provider: Option<Provider>,
    pub project: Option<String>,
    pub model: Option<String>,
}

/// `beectl usage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    pub schema_version: u32,
    pub by: UsageBy,
    pub since_utc: String,
    pub until_utc: String,
    /// The zone whose days, weeks and months the rows are (IANA name).
    pub timezone: String,
    pub source: String,
    pub prices: PriceSource,
    pub filters: UsageFilters,
    pub rows: Vec<UsageRow>,
    /// A grouping by two keys: each first key's rows together (its `key`
    /// the first key's, no `subkey`), in the order of `rows`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subtotals: Vec<UsageRow>,
    /// Rows `--last N` left out (the oldest), counted in `totals`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows_left_out: u64,
    /// All rows together (its key is `null`).
    pub totals: UsageRow,
    /// Over all rows: parts of unknown counters (`partial`) and responses
    /// not final yet (`pending`).
    pub partial_parts: u64,
    pub pending_responses: u64,
    /// Models the price table does not name.
    pub unpriced_models: Vec<String>,
    /// `--project`: responses and calls left out for want of a project.
    pub project_unknown_parts: u64,
    /// The agents in the report whose records leave some of their calls out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrecorded_calls: Vec<UnrecordedCalls>,
    pub issues: Vec<String>,
}

/// What one ingestion pass over the provider logs did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PassSummary {
    pub files_seen: u64,
    pub files_read: u64,
    pub bytes_read: u64,
    pub records_appended: u64,
    pub duplicates: u64,
    pub unparseable_lines: u64,
    pub restarted_files: u64,
    /// Files with something new that could not be read this pass (left for
    /// the next one).
    #[serde(default)]
    pub unreadable_files: u64,
    /// Records passed over this pass (each is never read again), however
    /// many; the first [`MOST_SKIPPED_NAMED`] are named in `skipped`.
    #[serde(default)]
    pub skipped_records: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedRecord>,
}

/// Skipped records named in one pass's summary, at most.
pub const MOST_SKIPPED_NAMED: usize = 100;

/// A record an ingestion pass passed over, named so that its owner can
/// find it: its agent, its file, where in it and how long it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedRecord {
    pub agent: Provider,
    pub file: String,
    /// Where it starts in the file (0 for a file read whole).
    pub offset: u64,
    /// Its length in bytes.
    pub bytes: u64,
    pub reason: SkipReason,
}

/// Why a record was passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A line over the longest line read (never read into memory whole).
    OversizedLine,
    /// A document or database value over the longest one read.
    OversizedDocument,
    /// What Bee reads of it would take more memory than its bound.
    TooComplex,
    /// Its agent's reader failed on it (a fault caught, the pass went on).
    ReaderFailed,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::OversizedLine => "oversized_line",
            SkipReason::OversizedDocument => "oversized_document",
            SkipReason::TooComplex => "too_complex",
            SkipReason::ReaderFailed => "reader_failed",
        }
    }
}

/// Who ran an ingestion pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IngestedBy {
    /// beectl itself (beed was not running).
    Beectl,
    /// beed, which holds the ledger while it runs.
    Beed,
}

/// `beectl ingest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestReport {
    pub schema_version: u32,
    pub by: IngestedBy,
    pub summary: PassSummary,
}

/// A ledger command that found no evidence to answer with (exit 5): never
/// a document of zeros.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerUnavailable {
    pub schema_version: u32,
    pub status: String,
    /// `missing`, `busy`, `corrupt` or `io`.
    pub issues: Vec<String>,
    pub message: Option<String>,
}

impl LedgerUnavailable {
    pub fn new(issue: &str, message: Option<String>) -> LedgerUnavailable {
        LedgerUnavailable {
            schema_version: 1,
            status: "unavailable".to_owned(),
            issues: vec![issue.to_owned()],
            message,
        }
    }
}

/// The warning a ledger write that failed surfaces as (stderr of the
/// producer, beed's log, `beectl status`).
pub const RECORD_FAILED: &str = "quota.record_failed";

/// Journal, in the usage directory, of ledger writes that reached neither
/// beed nor the spool: the evidence `beectl status` and beed's log report.
pub const RECORD_FAILURES_FILE: &str = "record-failures.jsonl";

/// Longest journal line read back; ours are about 80 bytes.
pub const MAX_RECORD_FAILURE_BYTES: u64 = 1024;

named! {
    /// Who failed to write to the ledger.
    pub enum RecordProducer {
        /// `beectl run`.
        Run => "run",
        /// A `bee-hook` ledger producer (turn, statusline, commit).
        Hook => "hook",
    }
}

/// One journal line: metadata only, never the records or the error text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordFailure {
    pub at_utc: String,
    pub producer: RecordProducer,
    /// How many records were lost.
    pub records: u64,
}

impl RecordFailure {
    /// Notes in the journal that `records` records of `producer` were lost.
    /// Best effort: the disk that refused the spool may refuse this too.
    pub fn note(producer: RecordProducer, records: usize) -> std::io::Result<()> {
        let dir = crate::paths::usage_dir().ok_or_else(|| std::io::Error::other(crate::paths::NO_HOME))?;
        let failure = RecordFailure { at_utc: crate::time::now_rfc3339(), producer, records: records as u64 };
        let line = serde_json::to_vec(&failure).map_err(std::io::Error::other)?;
        crate::spool::append(&dir, RECORD_FAILURES_FILE, &line)
    }
}

/// One model of `beectl prices`, in USD per million tokens (`null`: the
/// list gives no price for that kind).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPriceRow {
    pub model: String,
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_write: Option<f64>,
    pub cache_read: Option<f64>,
    /// Rates of a request whose prompt is above `aboveTokens`.
    pub tiers: Vec<PriceTierRow>,
}

/// A long-context tier of [`ModelPriceRow`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceTierRow {
    pub above_tokens: u64,
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_write: Option<f64>,
    pub cache_read: Option<f64>,
}

/// `beectl prices`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceList {
    pub schema_version: u32,
    pub source: String,
    pub date: Option<String>,
    pub unit: String,
    pub models: Vec<ModelPriceRow>,
    /// Models the list names that cannot be applied, with why.
    pub skipped: BTreeMap<String, String>,
}

/// beed's socket path of [`LedgerGlance`].
pub const LEDGER_GLANCE_PATH: &str = "/v1/ledger/glance";

/// A quota window as its latest snapshot gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowGlance {
    pub provider: Provider,
    pub window: WindowKind,
    pub used_percent: f64,
    /// `null` when the snapshot gave no reset time.
    pub resets_at_utc: Option<String>,
    pub observed_at_utc: String,
}

/// What a status line or a live view shows at a glance: today's usage (a
/// local day) and each provider's latest quota windows that have not reset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerGlance {
    pub schema_version: u32,
    pub at_utc: String,
    pub timezone: String,
    /// Today's usage, all providers (`key` is the local date).
    pub today: UsageRow,
    pub windows: Vec<WindowGlance>,
}

/// beed's socket path that answers when the ledger or the hook events
/// change: `?after=N`
/// waits (up to [`CHANGES_WAIT_SECONDS`]) until the generation is not `N`.
pub const LEDGER_CHANGES_PATH: &str = "/v1/ledger/changes";
/// Longest a [`LEDGER_CHANGES_PATH`] request waits before answering anyway.
pub const CHANGES_WAIT_SECONDS: u64 = 25;

/// How many ledger commits that added records, and hook events stored,
/// since beed started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerChanges {
    pub generation: u64,
}

/// A quota window now, and where it is heading (`beectl top`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveWindow {
    #[serde(flatten)]
    pub window: WindowGlance,
    /// Points of the window used per hour over its recent snapshots (the
    /// last 30 minutes); `null` without two snapshots five minutes or more
    /// apart.
    pub trend_percent_per_hour: Option<f64>,
    /// The window's snapshots in the last 30 minutes (the trend's evidence).
    #[serde(default)]
    pub trend_snapshots: u64,
    /// A projection, not a measurement: the use at the reset if the trend
    /// holds, within 0–100 %; `null` without a trend or a reset time.
    pub projected_percent_at_reset: Option<f64>,
    /// A projection: minutes until 100 % at the trend, when that comes
    /// before the reset; `null` otherwise.
    pub minutes_to_full: Option<f64>,
}

/// A provider's burn rate over the last minutes (`beectl top`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BurnRate {
    pub provider: Provider,
    pub minutes: u64,
    pub tokens_per_minute: Option<f64>,
    /// Estimated (price table); `null` when nothing could be priced.
    pub estimated_usd_per_hour: Option<f64>,
    /// Parts the rate lacks (unknown counters or models): a lower bound.
    pub partial_parts: u64,
    pub unpriced_parts: u64,
}

/// A session with usage in the last hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActiveSession {
    pub provider: Provider,
    pub session: Option<String>,
    pub models: Vec<String>,
    /// The minute of its last response, or the time of its last hook event.
    pub last_activity_utc: String,
    pub tokens_last_hour: Option<u64>,
    /// Parts of its last hour that lacked a counter their provider reports:
    /// above 0, `tokens_last_hour` is a lower bound (`null` when no part had
    /// a total).
    #[serde(default)]
    pub partial_parts: u64,
    /// Its last hook event (`PreToolUse Bash`), when beed's event pipeline has one.
    #[serde(default)]
    pub last_event: Option<String>,
}

/// An agent's usage-limit hits in `beectl top`'s day: `null` when its
/// records keep no usage-limit notice (issue `limits_not_recorded`), so
/// that "no hit" is never said of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentLimitHits {
    pub agent: Provider,
    pub hits: Option<u64>,
}

/// A usage-limit hit (`beectl top`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitGlance {
    pub provider: Provider,
    pub at_utc: String,
    pub window: Option<WindowKind>,
}

/// `beectl top`: the windows, burn rates, active sessions and recent limit hits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveView {
    pub schema_version: u32,
    pub at_utc: String,
    pub timezone: String,
    pub today: UsageRow,
    pub windows: Vec<LiveWindow>,
    pub burn: Vec<BurnRate>,
    pub sessions: Vec<ActiveSession>,
    /// Hits of the last 24 hours, newest first.
    pub limits: Vec<LimitGlance>,
    /// Each agent active in the last 24 hours (a response or a hit) with
    /// its hits then: `null` for one whose records keep no usage-limit
    /// notice, so an empty `limits` never reads as "no hit" for it.
    #[serde(default)]
    pub limit_hits: Vec<AgentLimitHits>,
    /// The agents of the day whose records cannot say a figure of this
    /// view (`limits`: their hits; issue `limits_not_recorded`).
    #[serde(default)]
    pub not_recorded: NotRecorded,
    /// Today's tokens hour by hour, from the day's start in the zone to
    /// the current hour (the day's burn, drawn as a sparkline).
    #[serde(default)]
    pub today_by_hour: Vec<HourTokens>,
    pub issues: Vec<String>,
}

/// One hour of today's usage (`beectl top`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HourTokens {
    /// The hour's start, RFC 3339 UTC.
    pub hour_utc: String,
    pub responses: u64,
    /// Its responses' total tokens; 0 for an hour without one, `null` for
    /// one whose responses' tokens no part knows. A lower bound while
    /// `partialParts` is above 0.
    pub tokens: Option<u64>,
    pub partial_parts: u64,
}

/// `beectl agents`: every agent Bee reads, where it looks and what it found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentsReport {
    pub schema_version: u32,
    pub agents: Vec<AgentRow>,
}

/// One agent of [`AgentsReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRow {
    /// Its name, as `--provider`/`--agent` takes it.
    pub agent: Provider,
    /// What people call it.
    pub title: String,
    /// Where Bee looks for its records (from the agent's own variables).
    pub looks_in: Vec<String>,
    /// Whether any of those places exists.
    pub found: bool,
    /// Its record files there, and how many of them the ledger has read.
    pub files: u64,
    pub files_read: u64,
    /// Responses of it the ledger holds; `null` when there is no ledger.
    pub responses: Option<u64>,
    /// The time of its newest record in the ledger (a response's, a
    /// producer call's or a limit hit's own time, as the agent wrote it),
    /// never a file's modification time (a copied or touched file says
    /// nothing of when its records were written); `null` when the ledger
    /// holds none of its records, or there is no ledger.
    pub newest_record_utc: Option<String>,
    /// What its records can say (time spans, limit notices, reasoning,
    /// cache writes, its own cost), from the registry.
    #[serde(default)]
    pub records: AgentRecords,
    /// How its reader was verified: `real CLI <version>` (a test drives
    /// the real CLI against a mock of its provider's API) or `format from
    /// its source` (fixtures written from its format's definition).
    pub verified: String,
    /// Whether Bee's turn marks are wired into the agent's own hooks, in
    /// its user settings (`beectl setup --agent`); `null` for an agent
    /// whose hooks Bee does not wire.
    #[serde(default)]
    pub turn_hooks: Option<bool>,
    /// What is in its folders but is not read: links, FIFOs, sockets and
    /// devices (never followed nor opened).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_files: Vec<SkippedFile>,
}

/// An entry in an agent's folders that Bee does not read, and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedFile {
    pub path: String,
    /// `link`, `fifo`, `socket` or `device`.
    pub kind: String,
}

#[cfg(test)]
mod tests {
    use super::{UsageBy, UsageGrouping};

    #[test]
    fn a_grouping_is_one_or_two_known_names_and_anything_else_a_clear_refusal() {
        assert_eq!(
            UsageBy::parse("day,agent"),
            Ok(UsageBy { first: UsageGrouping::Day, then: Some(UsageGrouping::Agent) })
        );
        assert_eq!(UsageBy::parse(" session , model ").map(|by| by.to_string()), Ok("session,model".to_owned()));
        for hostile in
            ["", ",", "day,", ",day", "day,,agent", "DAY", "day\u{0},agent", "dáy", "day;agent", &"x".repeat(1 << 16)]
        {
            assert!(UsageBy::parse(hostile).is_err(), "{hostile:?}");
        }
        for (asked, says) in
            [("day,day", "twice"), ("hour,month", "two groupings of time"), ("agent,block", "groups alone")]
        {
            let refused = UsageBy::parse(asked).unwrap_err();
            assert!(refused.contains(says), "{asked}: {refused}");
        }
        let json: UsageBy = serde_json::from_str("\"project,model\"").unwrap();
        assert_eq!(serde_json::to_string(&json).unwrap(), "\"project,model\"");
        assert!(serde_json::from_str::<UsageBy>("\"week,day\"").is_err());
    }
}
