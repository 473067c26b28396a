//! The daemon's socket API: protocol version, paths, headers and message bodies.
//!
//! Every response carries [`PROTOCOL_HEADER`]; a client that sees another value
//! (or none) is talking to a daemon of another protocol and must not trust
//! the body. Requests may carry the header too; the daemon refuses a mismatch.

use crate::delivery::{AppendOutcome, SessionSelector};
use serde::{Deserialize, Serialize};

/// Version of the socket API spoken by this build.
pub const PROTOCOL_VERSION: u32 = 1;
/// Header naming the protocol version, on requests and responses.
pub const PROTOCOL_HEADER: &str = "bee-protocol";
/// Header carrying the exit status of a report answered by the daemon.
pub const EXIT_CODE_HEADER: &str = "bee-exit-code";

/// `GET`: daemon status ([`DaemonStatus`]).
pub const STATUS_PATH: &str = "/v1/status";
/// `POST` one [`crate::delivery::Observation`]; answers [`AppendAnswer`].
pub const DELIVERY_OBSERVATIONS_PATH: &str = "/v1/delivery/observations";
/// `POST` a [`DeliveryReportRequest`]; answers the report bytes.
pub const DELIVERY_REPORT_PATH: &str = "/v1/delivery/report";
/// `POST` a [`DeliveryReadRequest`]; answers the read bytes.
pub const DELIVERY_READ_PATH: &str = "/v1/delivery/read";

/// `POST` a [`HookReport`]: all one hook process has to say, in one round
/// trip; answers [`HookReceipts`].
pub const HOOK_PATH: &str = "/v1/hook";

/// Largest request body the daemon accepts.
pub const MAX_REQUEST_BODY_BYTES: usize = 64 * 1024;

/// Stable error codes of the socket API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiErrorCode {
    /// The body was not valid JSON of the expected shape.
    InvalidRequest,
    /// The body was larger than [`MAX_REQUEST_BODY_BYTES`].
    PayloadTooLarge,
    /// Client and daemon speak different protocol versions.
    ProtocolMismatch,
    /// The store is at capacity; appends stop.
    Capacity,
    /// The store could not be written or read.
    Io,
    /// The daemon does not serve the store the request names.
    StoreNotServed,
    /// The path or method is not part of the API.
    NotFound,
}

/// Body of every error answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    pub error_code: ApiErrorCode,
    pub message: String,
}

/// Answer to an accepted append.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendAnswer {
    pub outcome: AppendOutcome,
    /// Store sequence of the record now holding this event id.
    pub sequence: u64,
}

/// What one `bee-hook on` process reports for its event. Each part is
/// exactly the body its own route takes — an observation
/// ([`DELIVERY_OBSERVATIONS_PATH`]), a ledger append
/// ([`crate::ledger::LEDGER_RECORDS_PATH`]), an event
/// ([`crate::events::EVENTS_PATH`]) — and beed handles it by that route's
/// rules, so a part's fate never depends on the others'. The hook sends
/// parts it borrows (`HookReport<&RawValue>`); beed reads them owned.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookReport<Part = Box<serde_json::value::RawValue>> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<Part>,
}

/// What a part's own route answered: its status and its JSON body.
#[derive(Debug, Serialize, Deserialize)]
pub struct HookReceipt {
    pub status: u16,
    pub body: Box<serde_json::value::RawValue>,
}

/// The answer to a [`HookReport`]: a receipt for each part it carried.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct HookReceipts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<HookReceipt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<HookReceipt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<HookReceipt>,
}

/// Request for a delivery report from the store at `store`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeliveryReportRequest {
    /// Absolute path of the store, as the client resolved it.
    pub store: String,
    pub session: Option<SessionSelector>,
    pub limit: u32,
}

/// Request to read one recorded observation by event id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeliveryReadRequest {
    pub store: String,
    pub event: uuid::Uuid,
}

/// `GET /v1/status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatus {
    pub protocol_version: u32,
    pub daemon_version: String,
    pub pid: u32,
    pub socket: String,
    pub started_at_utc: String,
    pub socket_activated: bool,
    pub stores: Vec<StoreStatus>,
}

/// One store as the daemon or an offline reader sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreStatus {
    pub name: String,
    pub path: String,
    /// `null` when the store could not be read.
    pub schema_version: Option<u32>,
    /// Verified records; `null` when the store could not be read.
    pub records: Option<u64>,
    pub capacity: Option<u64>,
    pub issues: Vec<crate::delivery::Issue>,
    /// Bytes its files take on disk; `null` when they could not be listed.
    #[serde(default)]
    pub size_bytes: Option<u64>,
}

/// How far the ledger is behind one provider's logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestionLag {
    pub provider: crate::ledger::Provider,
    pub files: u64,
    /// Files with lines the ledger has not read yet, and those lines' bytes.
    pub files_behind: u64,
    pub bytes_behind: u64,
    /// What is in its folders but is not read: links, FIFOs, sockets and
    /// devices (never followed nor opened).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_files: Vec<crate::ledger::SkippedFile>,
}

/// One spool's backlog: lines waiting for beed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpoolBacklog {
    pub file: String,
    /// `null` when the spool could not be read.
    pub pending_lines: Option<u64>,
}

/// Whether beectl found a daemon to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DaemonState {
    Running,
    NotRunning,
    /// A socket answered, but not usefully (another protocol, an error, a hang).
    Unreachable,
}

/// `beectl daemon status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    pub daemon: DaemonState,
    pub socket: String,
    pub cli_version: String,
    pub protocol_version: u32,
    /// `null` unless the daemon answered.
    pub daemon_version: Option<String>,
    pub pid: Option<u32>,
    pub started_at_utc: Option<String>,
    pub socket_activated: Option<bool>,
    /// From the daemon when it runs; read offline otherwise.
    pub stores: Vec<StoreStatus>,
    pub spool: SpoolStatus,
    /// Why the daemon could not be asked, when it could not.
    pub message: Option<String>,
    /// Every spool's backlog (the delivery one is `spool` too).
    #[serde(default)]
    pub spools: Vec<SpoolBacklog>,
    /// How far the ledger is behind the provider logs.
    #[serde(default)]
    pub ingestion: Vec<IngestionLag>,
    /// The dashboard's URL (with its read secret) when beed serves one.
    #[serde(default)]
    pub dashboard_url: Option<String>,
    /// Export to a team's engine: settings, last attempt and error, backlog.
    #[serde(default)]
    pub export: Option<crate::export::ExportStatus>,
}

/// The hooks' spool as beectl sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpoolStatus {
    pub path: String,
    /// Records waiting for the daemon; `null` when the spool could not be read.
    pub pending_records: Option<u64>,
}
