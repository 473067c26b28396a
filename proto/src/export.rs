//! Export to a team's engine (spec/60): the series beed sends (to a
//! Prometheus remote-write endpoint, and as OTLP metrics), their labels, the
//! OTLP log events, and the status document `beectl export status` and
//! `beectl daemon status` show. Every series, label and event name is
//! spelled here once.
//!
//! Counters are cumulative over the whole store, so a resend is harmless and
//! a collector that was down catches up with the next send. A figure nobody
//! observed is no series at all, never a 0.

use serde::{Deserialize, Serialize};

/// Provider responses, counted once by provider id. Labels: provider, model.
pub const RESPONSES_TOTAL: &str = "bee_responses_total";
/// Summed provider counters. Labels: provider, model, kind ([`TOKEN_KINDS`]).
/// A kind no response reported has no series.
pub const TOKENS_TOTAL: &str = "bee_tokens_total";
/// Parts of the token sums that lacked a counter their provider reports:
/// while above 0, `bee_tokens_total` of that provider and model is a lower
/// bound. Labels: provider, model.
pub const USAGE_PARTIAL_PARTS: &str = "bee_usage_partial_parts";
/// Cost the provider reported. Labels: provider, model.
pub const REPORTED_COST_TOTAL: &str = "bee_reported_cost_usd_total";
/// Cost estimated from the bundled price table; never a bill. Labels:
/// provider, model. No series for a model the table does not name.
pub const ESTIMATED_COST_TOTAL: &str = "bee_estimated_cost_usd_total";
/// Responses the price table could not price. Labels: provider, model.
pub const UNPRICED_PARTS: &str = "bee_unpriced_parts";
/// Agent time. Labels: provider, measure (`measured` by a producer, or
/// `derived` from the logs' own timestamps). `measured` has no series while
/// no producer measured a call: unknown, not zero.
pub const AGENT_TIME_SECONDS_TOTAL: &str = "bee_agent_time_seconds_total";
/// Limit hits, one per hit. Labels: provider. An agent whose records keep
/// no usage-limit notice (`AgentRecords::limit_notices`: OpenCode, pi, …)
/// has no series, never a 0 that would say it hit no limit.
pub const LIMIT_HITS_TOTAL: &str = "bee_limit_hits_total";
/// The highest utilisation a current quota window reported, 0–1. Labels:
/// provider, window, limit_id (when the provider named one).
pub const WINDOW_UTILISATION: &str = "bee_window_utilisation_ratio";
/// When a current quota window resets, Unix seconds. Labels as
/// [`WINDOW_UTILISATION`].
pub const WINDOW_RESET_TIMESTAMP: &str = "bee_window_reset_timestamp_seconds";
/// Delivered hook outputs the delivery store observed. Labels: surface.
pub const DELIVERY_OBSERVATIONS_TOTAL: &str = "bee_delivery_observations_total";
/// Their UTF-8 bytes as written (the surface's wrapper included). Labels: surface.
pub const DELIVERY_BYTES_TOTAL: &str = "bee_delivery_bytes_total";
/// Hook events stored. Labels: type (the hook event), source_app.
pub const HOOK_EVENTS_TOTAL: &str = "bee_hook_events_total";
/// Recent sessions (their last event within a day, as the dashboard shows
/// them) by audit verdict. Labels: class (every class, 0 included: the
/// events store was read). No series when the events store cannot be read.
pub const AUDIT_SESSIONS: &str = "bee_audit_sessions";

/// When the newest limit hit of a provider happened, by the hit's own
/// time (however late it reached the ledger), Unix seconds: what an alert
/// on "a hit in the last 15 minutes" compares with `time()`. Labels:
/// provider. No series for a provider that never hit a limit.
pub const LAST_LIMIT_HIT_TIMESTAMP: &str = "bee_last_limit_hit_timestamp_seconds";
/// When this send was made, Unix seconds. Its last value stays the
/// machine's last send after its samples stop (`last_over_time`), so a
/// silent machine's age keeps growing instead of its series going stale.
pub const LAST_SEND_TIMESTAMP: &str = "bee_last_send_timestamp_seconds";

/// Always 1, with the exporting Bee's `version`: present whenever beed sends,
/// so a silent machine shows (its samples stop) even with empty stores.
pub const BUILD_INFO: &str = "bee_build_info";
pub const LABEL_VERSION: &str = "version";

/// What a receiver is told of a series beside its samples (remote write's
/// metadata, OTLP's description and unit): spelled here once, for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesMeta {
    pub name: &'static str,
    /// A cumulative counter (`_total`); every other series is a gauge.
    pub counter: bool,
    /// One line on what it counts.
    pub help: &'static str,
    /// Its unit, in Prometheus's words (`seconds`, `bytes`, `ratio`,
    /// `tokens`, `usd`); empty for a count of things.
    pub unit: &'static str,
}

const fn meta(name: &'static str, counter: bool, help: &'static str, unit: &'static str) -> SeriesMeta {
    SeriesMeta { name, counter, help, unit }
}

/// Every series Bee exports (contrib's rules and dashboard name no other).
pub const ALL_SERIES: [SeriesMeta; 17] = [
    meta(BUILD_INFO, false, "Always 1 while beed sends, with the exporting Bee's version.", ""),
    meta(LAST_SEND_TIMESTAMP, false, "When this send was made, Unix seconds.", "seconds"),
    meta(RESPONSES_TOTAL, true, "Provider responses, each counted once by its provider id.", ""),
    meta(
        TOKENS_TOTAL,
        true,
        "Tokens in Bee's one set of columns, by kind; no series for a kind nobody reported.",
        "tokens",
    ),
    meta(
        USAGE_PARTIAL_PARTS,
        false,
        "Parts lacking a counter their provider reports: the token sums are lower bounds.",
        "",
    ),
    meta(REPORTED_COST_TOTAL, true, "Cost the provider reported.", "usd"),
    meta(ESTIMATED_COST_TOTAL, true, "Cost estimated from the bundled price table; never a bill.", "usd"),
    meta(UNPRICED_PARTS, false, "Responses the price table could not price.", ""),
    meta(AGENT_TIME_SECONDS_TOTAL, true, "Agent time, measured by a producer or derived from the logs.", "seconds"),
    meta(LIMIT_HITS_TOTAL, true, "Usage-limit hits, one per hit.", ""),
    meta(LAST_LIMIT_HIT_TIMESTAMP, false, "The newest limit hit's own time, Unix seconds.", "seconds"),
    meta(WINDOW_UTILISATION, false, "A current quota window's highest reported utilisation, 0 to 1.", "ratio"),
    meta(WINDOW_RESET_TIMESTAMP, false, "When a current quota window resets, Unix seconds.", "seconds"),
    meta(DELIVERY_OBSERVATIONS_TOTAL, true, "Delivered hook outputs the delivery store observed.", ""),
    meta(DELIVERY_BYTES_TOTAL, true, "Their UTF-8 bytes as written.", "bytes"),
    meta(HOOK_EVENTS_TOTAL, true, "Hook events stored.", ""),
    meta(AUDIT_SESSIONS, false, "Recent sessions by audit verdict.", ""),
];

/// The metadata of the series named `name`.
pub fn series_meta(name: &str) -> Option<&'static SeriesMeta> {
    ALL_SERIES.iter().find(|series| series.name == name)
}

/// OTLP log events (metadata only): a usage-limit hit (attributes
/// provider, window, limit_id), ledger records a producer could not write
/// (attributes producer, records), and a recent session's audit verdict
/// that changed, or was seen for the first time (attributes session_id,
/// source_app, class, previous_class when there was one).
pub const LOG_LIMIT_HIT: &str = "bee.limit_hit";
pub const LOG_RECORD_FAILED: &str = "bee.record_failed";
pub const LOG_AUDIT_VERDICT_CHANGED: &str = "bee.audit_verdict_changed";

/// On every series: who (the config's `user`) and which machine.
pub const LABEL_USER: &str = "user";
pub const LABEL_HOST: &str = "host";
pub const LABEL_PROVIDER: &str = "provider";
pub const LABEL_MODEL: &str = "model";
pub const LABEL_KIND: &str = "kind";
pub const LABEL_MEASURE: &str = "measure";
pub const LABEL_WINDOW: &str = "window";
pub const LABEL_LIMIT_ID: &str = "limit_id";
pub const LABEL_SURFACE: &str = "surface";
pub const LABEL_TYPE: &str = "type";
pub const LABEL_SOURCE_APP: &str = "source_app";
pub const LABEL_CLASS: &str = "class";
pub const LABEL_SESSION_ID: &str = "session_id";
pub const LABEL_PREVIOUS_CLASS: &str = "previous_class";
/// On the counters of [`BY_ORIGIN`]: [`ORIGIN_LIVE`] or [`ORIGIN_BACKFILL`].
pub const LABEL_ORIGIN: &str = "origin";
/// Usage that reached Bee within about an hour of happening: its
/// `increase()` over a range describes that range.
pub const ORIGIN_LIVE: &str = "live";
/// Usage that reached Bee later than that (a first import of old logs, a
/// rollout read late, a beed that was down): counted when it arrived, so
/// it is kept out of "the last hour".
pub const ORIGIN_BACKFILL: &str = "backfill";

/// The counters of usage time, each sent as its [`ORIGIN_LIVE`] and
/// [`ORIGIN_BACKFILL`] parts (their sum is the total).
pub const BY_ORIGIN: [&str; 6] = [
    RESPONSES_TOTAL,
    TOKENS_TOTAL,
    REPORTED_COST_TOTAL,
    ESTIMATED_COST_TOTAL,
    AGENT_TIME_SECONDS_TOTAL,
    LIMIT_HITS_TOTAL,
];

/// Every label Bee puts on a series.
pub const ALL_LABELS: [&str; 14] = [
    LABEL_USER,
    LABEL_HOST,
    LABEL_VERSION,
    LABEL_PROVIDER,
    LABEL_MODEL,
    LABEL_KIND,
    LABEL_MEASURE,
    LABEL_WINDOW,
    LABEL_LIMIT_ID,
    LABEL_SURFACE,
    LABEL_TYPE,
    LABEL_SOURCE_APP,
    LABEL_CLASS,
    LABEL_ORIGIN,
];

/// The label named `name`, as spelled here.
pub fn label_name(name: &str) -> Option<&'static str> {
    ALL_LABELS.iter().find(|label| **label == name).copied()
}

/// `kind` values of [`TOKENS_TOTAL`], the provider counters' own names
/// without `_tokens`.
pub const TOKEN_KINDS: [&str; 7] =
    ["input", "cached_input", "cache_creation_input", "cache_read_input", "output", "reasoning_output", "total"];

/// The exporter's state, written by beed after every attempt and read by
/// `beectl export status` and `beectl daemon status`: one entry per
/// destination.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportState {
    /// Prometheus remote write.
    #[serde(default)]
    pub prometheus: Option<DestinationState>,
    /// OTLP/HTTP (metrics).
    #[serde(default)]
    pub otlp: Option<DestinationState>,
}

/// How sending to one destination went.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestinationState {
    /// Where it sends (the configured URL; credentials never written).
    pub url: String,
    pub last_attempt_utc: Option<String>,
    pub last_success_utc: Option<String>,
    /// The last failure's description (an HTTP status and the collector's
    /// first line, or the connection error); `null` after a success.
    pub last_error: Option<String>,
    pub consecutive_failures: u64,
    /// Series in the last successful send.
    pub series_sent: u64,
    /// The stores' record counts the last successful send covered: the
    /// cursor. What the stores hold beyond it is the backlog.
    pub cursor: Option<StoreCursor>,
    /// OTLP: how far log events were sent. A log record is not a total, so
    /// it is sent once, after the metrics, and only then is this moved on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_cursor: Option<LogCursor>,
    /// OTLP: log events sent since the exporter first ran.
    #[serde(default)]
    pub log_events_sent: u64,
    /// OTLP: the start of every cumulative sum (Unix ms), fixed when the
    /// exporter first ran, so a restarted beed is no counter reset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series_start_ms: Option<i64>,
}

/// Where OTLP log events stand.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogCursor {
    /// Limit notices at or before this instant (Unix ms) count as sent: the
    /// cursor of exporters that followed usage time, kept as it was; 0 for
    /// an exporter that never did.
    pub limit_hits_through_ms: i64,
    /// Limit notices up to this place in the ledger's insertion order
    /// (`seq`) were read: each was sent in its hit, or merged into a hit
    /// already sent. A notice however late it reached the ledger is read.
    #[serde(default)]
    pub limit_notices_through_seq: i64,
    /// Record failures up to this byte of the journal were sent.
    pub record_failures_offset: u64,
    /// The verdict last sent for each recent session (session id → class);
    /// a session no longer recent leaves it.
    #[serde(default)]
    pub verdicts: std::collections::BTreeMap<String, String>,
}

impl ExportState {
    /// The destinations that ran, by name.
    pub fn destinations(&self) -> impl Iterator<Item = (&'static str, &DestinationState)> {
        [("prometheus", &self.prometheus), ("otlp", &self.otlp)]
            .into_iter()
            .filter_map(|(name, state)| state.as_ref().map(|state| (name, state)))
    }
}

/// Record counts of the stores an export reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreCursor {
    pub ledger_records: u64,
    pub delivery_records: u64,
    pub event_records: u64,
}

/// `beectl export status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportStatus {
    pub schema_version: u32,
    /// `[export]` in config.toml names a destination.
    pub enabled: bool,
    pub user: Option<String>,
    pub interval_seconds: Option<u64>,
    /// What config.toml's `[export]` got wrong; export is off while any.
    pub config_errors: Vec<String>,
    /// The exporter's last state; `null` when beed never ran one.
    pub state: Option<ExportState>,
    /// Records the stores hold beyond the furthest-behind destination's
    /// cursor (all of them before its first successful send); `null` when
    /// no exporter ever ran.
    pub backlog_records: Option<u64>,
}
