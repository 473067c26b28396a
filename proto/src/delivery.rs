//! Delivery accounting: the observation a prompt hook records, the stored
//! record, and the `beectl delivery report | read` documents.
//!
//! Field order in these structs is the order the contract prints them in.

use crate::identity::{Identity, IdentityError, validate_session};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Version of every delivery document and record.
pub const SCHEMA_VERSION: u32 = 1;
/// Observations a store takes before appends stop (16 parts of 128).
pub const DEFAULT_CAPACITY: u64 = 2_048;
/// An envelope longer than this many UTF-16 code units is not observed.
pub const MAX_ENVELOPE_UTF16_UNITS: u64 = 65_536;
/// Bound on one serialized record (spool line or request), excluding the newline.
pub const MAX_RECORD_BYTES: usize = 4_096;
/// A report larger than this many UTF-8 bytes is replaced by a cap answer.
pub const REPORT_CAP_BYTES: usize = 262_144;
/// `--limit` range and default.
pub const MAX_GROUP_LIMIT: u32 = 100;
/// Item identity of the steering block.
pub const STEERING_BLOCK_ITEM: &str = "steering-block";
/// Item identity of a wrapped command's output.
pub const WRAPPED_COMMAND_ITEM: &str = "wrapped-command";
/// Version of the built-in item identities.
pub const BUILTIN_ITEM_VERSION: &str = "1";
/// Version reported for a surface group (the surface format version).
pub const SURFACE_VERSION: &str = "1";
/// The labelled estimator and its version.
pub const ESTIMATOR_ID: &str = "utf16-ceil-div4";
pub const ESTIMATOR_VERSION: u32 = 1;
/// Status of native withheld events: no native producer exists.
pub const NATIVE_WITHHELD_STATUS: &str = "unavailable_no_native_producer";

named! {
    /// What happened to the write of a hook's output.
    pub enum ObservationKind {
        /// Every byte was written and flushed.
        Delivered => "Delivered",
        /// Nothing was written.
        WriteFailed => "WriteFailed",
        /// Some bytes were written, then the write failed.
        PartialWrite => "PartialWrite",
    }
}

named! {
    /// The output surface of a prompt hook.
    pub enum Surface {
        /// Plain text that Claude Code adds to the context.
        Plain => "hook.prompt.plain",
        /// `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":…}}`.
        ContextJson => "hook.prompt.context-json",
    }
}

impl Surface {
    /// Parses the hook's command line: the short form or the full name.
    pub fn from_cli(text: &str) -> Option<Surface> {
        match text {
            "plain" => Some(Surface::Plain),
            "context-json" => Some(Surface::ContextJson),
            _ => Surface::from_name(text),
        }
    }
}

/// A named, versioned estimate attached to one observation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Estimate {
    pub estimator: String,
    pub version: u32,
    pub estimated_tokens: u64,
}

/// What a prompt hook reports after writing its output: metadata only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Observation {
    pub kind: ObservationKind,
    pub observed_at_utc: String,
    pub event_id: Uuid,
    pub session_kind: Identity,
    pub session_id: Identity,
    pub surface: Surface,
    pub item_id: Identity,
    pub item_version: Identity,
    /// Bytes delivered, or for failed and partial writes the attempted size:
    /// the whole output, the surface's JSON envelope and newline included.
    pub utf8_bytes: u64,
    pub estimates: Vec<Estimate>,
    /// The delivered text's own bytes, without the surface's envelope: the
    /// `additionalContext` of `context-json`, the whole output of `plain`.
    /// Absent when the hook could not tell (records from before it did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_utf8_bytes: Option<u64>,
}

/// Why an observation is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObservationError {
    NilEventId,
    Session(IdentityError),
    Timestamp,
    Estimates,
    /// A byte count no hook output can have, or an estimate its bytes cannot give.
    Counts,
}

/// Most bytes one hook output is taken to have: far beyond anything an agent
/// reads as context, and small enough that the store's totals (2,048 records
/// by default) can never overflow.
pub const MAX_OBSERVED_UTF8_BYTES: u64 = 1 << 30;

impl std::fmt::Display for ObservationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObservationError::NilEventId => f.write_str("event id must be a non-nil UUID"),
            ObservationError::Session(err) => write!(f, "invalid session: {err}"),
            ObservationError::Timestamp => f.write_str("observedAtUtc must be RFC 3339 UTC with Z"),
            ObservationError::Estimates => {
                f.write_str("estimates must be exactly one utf16-ceil-div4 version 1 estimate")
            }
            ObservationError::Counts => write!(
                f,
                "utf8Bytes must be at most {MAX_OBSERVED_UTF8_BYTES}, the estimate at most a quarter of them, rounded up, and contentUtf8Bytes all of them (plain) or fewer (context-json)"
            ),
        }
    }
}

impl std::error::Error for ObservationError {}

impl Observation {
    /// Checks the rules serde cannot express.
    pub fn validate(&self) -> Result<(), ObservationError> {
        if self.event_id.is_nil() {
            return Err(ObservationError::NilEventId);
        }
        validate_session(&self.session_kind, &self.session_id).map_err(ObservationError::Session)?;
        if !crate::time::is_rfc3339_utc(&self.observed_at_utc) {
            return Err(ObservationError::Timestamp);
        }
        let estimate = match self.estimates.as_slice() {
            [only] if only.estimator == ESTIMATOR_ID && only.version == ESTIMATOR_VERSION => only,
            _ => return Err(ObservationError::Estimates),
        };
        // UTF-16 code units never outnumber UTF-8 bytes, so ceil(units / 4)
        // is at most ceil(bytes / 4).
        // The content is the whole output of `plain`, and less than the
        // output of `context-json`, whose JSON envelope adds to it.
        let content_fits = |content: u64| match self.surface {
            Surface::Plain => content == self.utf8_bytes,
            Surface::ContextJson => content < self.utf8_bytes,
        };
        if self.utf8_bytes > MAX_OBSERVED_UTF8_BYTES
            || estimate.estimated_tokens > self.utf8_bytes.div_ceil(4)
            || self.content_utf8_bytes.is_some_and(|content| !content_fits(content))
        {
            return Err(ObservationError::Counts);
        }
        Ok(())
    }
}

/// What the store did with an append.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AppendOutcome {
    /// A new record.
    Recorded,
    /// Exact repeat of a recorded event: nothing changed.
    Duplicate,
    /// Same event id with other metadata: the first record is kept.
    ConflictKeptFirst,
}

/// The observation as stored, with the sequence it got in its session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StoredObservation {
    pub kind: ObservationKind,
    pub observed_at_utc: String,
    pub event_id: Uuid,
    pub session_kind: Identity,
    pub session_id: Identity,
    /// 1-based position among this session's records in the store.
    pub session_sequence: u64,
    pub surface: Surface,
    pub item_id: Identity,
    pub item_version: Identity,
    pub utf8_bytes: u64,
    pub estimates: Vec<Estimate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_utf8_bytes: Option<u64>,
}

impl StoredObservation {
    /// Stores `observation` as the `session_sequence`-th record of its session.
    pub fn new(observation: Observation, session_sequence: u64) -> StoredObservation {
        StoredObservation {
            kind: observation.kind,
            observed_at_utc: observation.observed_at_utc,
            event_id: observation.event_id,
            session_kind: observation.session_kind,
            session_id: observation.session_id,
            session_sequence,
            surface: observation.surface,
            item_id: observation.item_id,
            item_version: observation.item_version,
            utf8_bytes: observation.utf8_bytes,
            estimates: observation.estimates,
            content_utf8_bytes: observation.content_utf8_bytes,
        }
    }

    /// Tokens of the labelled estimate (`utf16-ceil-div4` version 1).
    pub fn labelled_tokens(&self) -> u64 {
        self.estimates
            .iter()
            .find(|e| e.estimator == ESTIMATOR_ID && e.version == ESTIMATOR_VERSION)
            .map_or(0, |e| e.estimated_tokens)
    }

    /// Whether this record holds exactly the metadata of `observation`.
    pub fn same_metadata(&self, observation: &Observation) -> bool {
        self.kind == observation.kind
            && self.observed_at_utc == observation.observed_at_utc
            && self.event_id == observation.event_id
            && self.session_kind == observation.session_kind
            && self.session_id == observation.session_id
            && self.surface == observation.surface
            && self.item_id == observation.item_id
            && self.item_version == observation.item_version
            && self.utf8_bytes == observation.utf8_bytes
            && self.estimates == observation.estimates
            && self.content_utf8_bytes == observation.content_utf8_bytes
    }
}

/// One record of the store, as `read` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedObservation {
    pub schema_version: u32,
    /// 1-based position in the store.
    pub sequence: u64,
    pub observation: StoredObservation,
    /// Checksum over the metadata: detects inconsistency, proves nothing.
    pub checksum: String,
}

/// `beectl delivery read` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadAnswer {
    pub status: ReadStatus,
    pub observation: Option<RecordedObservation>,
}

/// Status of a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadStatus {
    RecordedObservation,
    Unavailable,
}

/// A report restricted to one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionSelector {
    pub kind: Identity,
    pub id: Identity,
}

impl SessionSelector {
    /// Validates the pair; a native kind needs a non-nil lowercase UUID.
    pub fn new(kind: Identity, id: Identity) -> Result<SessionSelector, IdentityError> {
        validate_session(&kind, &id)?;
        Ok(SessionSelector { kind, id })
    }

    /// Whether `record` belongs to this session (exact, case-sensitive).
    pub fn matches(&self, record: &StoredObservation) -> bool {
        record.session_kind == self.kind && record.session_id == self.id
    }
}

/// `totalsStatus` of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TotalsStatus {
    /// Nothing observed: the totals say nothing.
    Unknown,
    /// Observations exist; the true totals are at least these.
    LowerBound,
}

named! {
    /// Issues a report may name, in the order they are listed.
    pub enum Issue {
        Missing => "missing",
        Busy => "busy",
        Corrupt => "corrupt",
        Capacity => "capacity",
        /// 80 % of the capacity is used: appends will stop at 100 %.
        CapacityNear => "capacity_near",
        Io => "io",
        ObservationWindowOpen => "observation_window_open",
    }
}

/// A delivered-token estimate in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportEstimate {
    pub estimator: String,
    pub version: u32,
    pub delivered_estimated_tokens: u64,
}

impl ReportEstimate {
    /// The labelled estimate with `tokens` delivered estimated tokens.
    pub fn labelled(tokens: u64) -> ReportEstimate {
        ReportEstimate {
            estimator: ESTIMATOR_ID.to_owned(),
            version: ESTIMATOR_VERSION,
            delivered_estimated_tokens: tokens,
        }
    }
}

/// Counts by observation kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventKinds {
    #[serde(rename = "Delivered")]
    pub delivered: u64,
    #[serde(rename = "WriteFailed")]
    pub write_failed: u64,
    #[serde(rename = "PartialWrite")]
    pub partial_write: u64,
}

/// The view a group belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    Item,
    Surface,
    Session,
}

/// Delivered output of one item, surface or session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub dimension: Dimension,
    pub identity: String,
    pub version: String,
    pub delivered_events: u64,
    pub delivered_utf8_bytes: u64,
    pub estimates: Vec<ReportEstimate>,
    /// The delivered text's own bytes, envelope excluded; `null` when any
    /// delivered event of the group did not record it.
    pub delivered_content_utf8_bytes: Option<u64>,
}

/// What `deliveredUtf8Bytes` counts: the whole output as written and
/// flushed, the surface's envelope (the `context-json` wrapper) and the
/// trailing newline included.
pub const DELIVERED_BYTES_COUNTED: &str = "whole_output_with_envelope_and_newline";

/// `beectl delivery report` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub totals_status: TotalsStatus,
    pub observed_events: u64,
    pub delivered_events: u64,
    pub delivered_utf8_bytes: u64,
    /// [`DELIVERED_BYTES_COUNTED`]: which bytes `deliveredUtf8Bytes` counts.
    pub delivered_utf8_bytes_counted: String,
    /// The delivered text's own bytes, envelope excluded; `null` when
    /// `contentUnknownEvents` is not 0 (never a smaller sum that looks exact).
    pub delivered_content_utf8_bytes: Option<u64>,
    /// Delivered events that did not record their text's own bytes.
    pub content_unknown_events: u64,
    pub estimates: Vec<ReportEstimate>,
    pub event_kinds: EventKinds,
    pub groups: Vec<Group>,
    pub omitted_groups: u64,
    pub issues: Vec<Issue>,
    /// Always `false`: no observation window is ever proven complete.
    pub observation_window_complete: bool,
    /// Always `null`: no evidence counts every lost observation.
    pub dropped_observation_count: Option<u64>,
    pub measured_provider_tokens: Option<u64>,
    pub native_withheld_events: Option<u64>,
    pub native_withheld_status: String,
    pub source_ref_hash: Option<String>,
    pub recipe_hash: Option<String>,
}

/// Answer when the report would exceed [`REPORT_CAP_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportCapAnswer {
    pub status: String,
    pub error_code: String,
    pub cap_bytes: usize,
}

impl ReportCapAnswer {
    pub fn new() -> ReportCapAnswer {
        ReportCapAnswer {
            status: "report_cap".to_owned(),
            error_code: "report_cap".to_owned(),
            cap_bytes: REPORT_CAP_BYTES,
        }
    }
}

impl Default for ReportCapAnswer {
    fn default() -> Self {
        Self::new()
    }
}

/// Answer of a beectl command that failed before it had anything to report:
/// its status, a stable error code and a message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandError {
    pub status: String,
    pub error_code: String,
    pub message: String,
}

impl CommandError {
    /// Invalid arguments (exit 4): status `invalid`, code `invalid_usage`.
    pub fn invalid_usage(message: impl Into<String>) -> CommandError {
        CommandError { status: "invalid".to_owned(), error_code: "invalid_usage".to_owned(), message: message.into() }
    }

    /// Evidence unavailable (exit 5): status `unavailable` and `error_code`.
    pub fn unavailable(error_code: &str, message: impl Into<String>) -> CommandError {
        CommandError { status: "unavailable".to_owned(), error_code: error_code.to_owned(), message: message.into() }
    }
}

/// The `hook.prompt.context-json` output: what Claude Code reads from a
/// `UserPromptSubmit` hook that adds context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextJsonOutput {
    pub hook_specific_output: HookSpecificOutput,
}

/// Inner object of [`ContextJsonOutput`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    pub hook_event_name: String,
    pub additional_context: String,
}

impl ContextJsonOutput {
    /// Wraps `context` for the `UserPromptSubmit` event.
    pub fn user_prompt_submit(context: &str) -> ContextJsonOutput {
        ContextJsonOutput {
            hook_specific_output: HookSpecificOutput {
                hook_event_name: "UserPromptSubmit".to_owned(),
                additional_context: context.to_owned(),
            },
        }
    }
}
