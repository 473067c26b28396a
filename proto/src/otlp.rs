//! What `beed --otlp` receives (spec/60, "In"): the OTLP/HTTP paths and
//! media types, and the names of Claude Code's `api_request` event and of
//! the attributes Bee reads from it, as Claude Code 2.1.332 (the version the
//! tests pin) sends them. Every name is spelled here once.

/// OTLP/HTTP logs: where Claude Code's events arrive.
pub const LOGS_PATH: &str = "/v1/logs";
/// OTLP/HTTP metrics: accepted and dropped (the events carry what Bee needs).
pub const METRICS_PATH: &str = "/v1/metrics";
/// OTLP/HTTP traces: accepted and dropped.
pub const TRACES_PATH: &str = "/v1/traces";

/// The two encodings OTLP/HTTP defines.
pub const MEDIA_JSON: &str = "application/json";
pub const MEDIA_PROTOBUF: &str = "application/x-protobuf";

/// Largest request body, compressed or not, and largest after `gzip` is
/// undone: Claude Code sends batches of a few dozen events (about 10 KiB).
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// A log record's body naming the event (`claude_code.` + the event name).
pub const API_REQUEST_BODY: &str = "claude_code.api_request";
/// The same event by its `event.name` attribute.
pub const API_REQUEST_EVENT: &str = "api_request";

/// Attribute keys of an `api_request` event.
pub mod attribute {
    pub const EVENT_NAME: &str = "event.name";
    /// RFC 3339, set when Claude Code emitted the event: the response's end.
    pub const EVENT_TIMESTAMP: &str = "event.timestamp";
    pub const EVENT_SEQUENCE: &str = "event.sequence";
    pub const SESSION_ID: &str = "session.id";
    pub const PROMPT_ID: &str = "prompt.id";
    pub const MODEL: &str = "model";
    pub const INPUT_TOKENS: &str = "input_tokens";
    pub const OUTPUT_TOKENS: &str = "output_tokens";
    pub const CACHE_READ_TOKENS: &str = "cache_read_tokens";
    pub const CACHE_CREATION_TOKENS: &str = "cache_creation_tokens";
    /// US dollars, as Claude Code priced the request.
    pub const COST_USD: &str = "cost_usd";
    /// The request's wall time, milliseconds.
    pub const DURATION_MS: &str = "duration_ms";
    /// The provider's request id (Anthropic's `request-id` header): the
    /// transcript's `requestId` for the same response.
    pub const REQUEST_ID: &str = "request_id";
}
