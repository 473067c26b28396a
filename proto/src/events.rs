//! The hook event pipeline's contract: the paths and bodies beed serves
//! (wire-compatible with the public reference pipeline), what an event is
//! reduced to before it is stored, and the spool line a sender keeps when
//! a post fails.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `POST` an event; `GET` is not served.
pub const EVENTS_PATH: &str = "/events";
/// `GET ?limit=N`: the latest stored events, oldest first.
pub const EVENTS_RECENT_PATH: &str = "/events/recent";
/// `GET`: the distinct source apps, session ids and event types.
pub const FILTER_OPTIONS_PATH: &str = "/events/filter-options";
/// WebSocket: a replay of the latest events, then each new one.
pub const STREAM_PATH: &str = "/stream";
/// `/stream?session=ID`: that session's replay and live events only.
pub const STREAM_SESSION_PARAM: &str = "session";
/// Longest session id a per-session stream takes.
pub const MAX_SESSION_ID_BYTES: usize = 1024;
/// `GET`: a store write and read, proven and reported check by check.
pub const HEALTH_PATH: &str = "/health";
/// `GET ?by=…&since=…`: `beectl usage --json`'s document for the same
/// words (the usage page's data).
pub const USAGE_DATA_PATH: &str = "/api/usage";
/// `GET ?after=N`: the ledger's generation once it is not `N` (or after a
/// while), `{"generation"}`: the usage page redraws on a new record.
pub const USAGE_CHANGES_PATH: &str = "/api/usage/changes";
/// `GET ?timezone=Z`: `beectl top --json`'s view (the page's gauges).
pub const USAGE_LIVE_PATH: &str = "/api/usage/live";
/// `GET`: the usage page (its figures from [`USAGE_DATA_PATH`]).
pub const USAGE_PAGE_PATH: &str = "/usage";
/// `GET`: the audit class of each recent session (the dashboard's verdicts).
pub const AUDIT_SESSIONS_PATH: &str = "/v1/audit/sessions";
/// Beside `GET /events/recent`'s array (the reference's shape, unchanged):
/// how many stored events of the answer fail their checksum and were left out.
pub const DAMAGED_EVENTS_HEADER: &str = "x-bee-damaged-events";

/// Events a stream client is sent when it connects (the reference's figure).
pub const REPLAY_EVENTS: usize = 300;
/// `/events/recent` without a limit: the reference client's 300.
pub const DEFAULT_RECENT: usize = 300;
/// The reference client asks for its colour themes here; Bee has none to
/// offer and says so with an empty list, not a 404.
pub const THEMES_PATH: &str = "/api/themes";
/// Largest `/events/recent` limit served.
pub const MAX_RECENT: usize = 5_000;
/// Largest event body accepted: room for an opted-in transcript.
pub const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;
/// Longest kept metadata field when payload capture is off: a longer string
/// keeps its first bytes and a marker saying how many were dropped; a longer
/// object or array becomes the marker alone. Metadata names things; it never
/// needs to be large, and a 4 MiB `reason` must not cost 4 MiB per reader.
pub const MAX_KEPT_FIELD_BYTES: usize = 1024;
/// Most bytes of stored events one `/events/recent` answer or stream replay
/// carries; older events beyond it are left out (the newest are kept).
pub const MAX_EVENTS_ANSWER_BYTES: usize = 8 * 1024 * 1024;
/// Longest source app, session id or event type.
pub const MAX_NAME_CHARS: usize = 256;
/// Spool file of events a sender could not deliver.
pub const EVENTS_SPOOL_FILE: &str = "events.jsonl";
/// Where unusable events spool lines are moved.
pub const EVENTS_REJECTED_FILE: &str = "events.rejected.jsonl";
/// Distinct session ids `/events/filter-options` lists (the reference's figure).
pub const FILTER_SESSIONS: usize = 300;

/// Beside beed's socket (0600): the secret reads on the loopback listener need.
pub const HTTP_TOKEN_FILE: &str = "http-token";
/// Beside beed's socket (0600): the dashboard URL `beectl dashboard` prints.
pub const DASHBOARD_URL_FILE: &str = "dashboard-url";
/// The cookie the dashboard URL sets, carrying the read secret.
pub const DASHBOARD_COOKIE: &str = "bee_dashboard";

/// `beectl dashboard`'s error code when there is no dashboard to open (exit 5).
pub const NO_DASHBOARD: &str = "no_dashboard";

/// How `bee-hook event` states its receipt on stderr (with `BEE_HOOK_DEBUG`):
/// this prefix, the stored id, ` stored`.
pub const RECEIPT_PREFIX: &str = "bee-hook receipt: event ";

/// The reference's error answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventError {
    pub error: String,
}

/// Why an event body was refused; the texts are the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventRejection {
    /// `source_app`, `session_id`, `hook_event_type` or `payload` missing or empty.
    MissingFields,
    /// Not a JSON object, a field of the wrong type, a name over the limits.
    Invalid,
}

impl EventRejection {
    pub fn message(self) -> &'static str {
        match self {
            EventRejection::MissingFields => "Missing required fields",
            EventRejection::Invalid => "Invalid request",
        }
    }

    pub fn answer(self) -> EventError {
        EventError { error: self.message().to_owned() }
    }
}

/// Top-level fields kept when payload capture is off: names, ids and enums
/// that tell events apart, never content (prompts, tool inputs and outputs,
/// error text, transcripts, summaries).
pub const KEPT_FIELDS: &[&str] = &[
    "source_app",
    "session_id",
    "hook_event_type",
    "timestamp",
    "model_name",
    "tool_name",
    "tool_use_id",
    "agent_id",
    "agent_type",
    "notification_type",
    "source",
    "reason",
    "stop_hook_active",
    "is_interrupt",
    "owner",
    "deadline",
    EVENT_KEY_FIELD,
];

/// Top-level field carrying a sender's unique key for an event (bee-hook
/// sets it), so an event posted late and also spooled is stored once.
pub const EVENT_KEY_FIELD: &str = "bee_event_id";

/// Payload fields kept when capture is off: ids and small enums (how a
/// session started or ended, what triggered a compaction, the permission
/// mode, the model), which clients show and which carry no content.
pub const KEPT_PAYLOAD_FIELDS: &[&str] = &[
    "hook_event_name",
    "tool_name",
    "tool_use_id",
    "agent_id",
    "agent_type",
    "source",
    "trigger",
    "reason",
    "notification_type",
    "permission_mode",
    "model",
    "stop_hook_active",
];

/// The top-level field of a human-in-the-loop request (the reference's
/// `humanInTheLoop`: a question for the operator and where the agent waits
/// for the answer) and of its status.
pub const HITL_FIELD: &str = "humanInTheLoop";
pub const HITL_STATUS_FIELD: &str = "humanInTheLoopStatus";
/// The fields of a human-in-the-loop request Bee keeps, capture or not: the
/// question is addressed to the operator and has to be shown to be answered.
const HITL_KEPT: &[&str] = &["question", "responseWebSocketUrl", "type", "choices", "timeout", "requiresResponse"];
/// At most this many choices are kept.
const MAX_HITL_CHOICES: usize = 32;
/// The states a human-in-the-loop request can be in.
pub const HITL_STATES: &[&str] = &["pending", "responded", "timeout", "error"];

/// `humanInTheLoopStatus` as Bee writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HitlStatus {
    /// One of [`HITL_STATES`].
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_at: Option<i64>,
    /// The answer's kept fields (see [`kept_response`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Map<String, Value>>,
}

impl HitlStatus {
    /// A status with no answer.
    pub fn state(status: &str) -> HitlStatus {
        HitlStatus { status: status.to_owned(), responded_at: None, response: None }
    }

    /// An operator's answer, given at `at_ms`.
    pub fn responded(at_ms: i64, response: Map<String, Value>) -> HitlStatus {
        HitlStatus { status: "responded".to_owned(), responded_at: Some(at_ms), response: Some(response) }
    }

    pub fn value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// `POST /events/{id}/respond`: the operator's answer to a human-in-the-loop request.
pub const RESPOND_PATH: &str = "/events/{id}/respond";
/// The largest answer body taken.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// The fields of an answer that are stored (the rest, such as the client's
/// copy of the whole event, is forwarded to the agent but not kept).
pub const RESPONSE_KEPT: &[&str] = &["response", "permission", "choice", "respondedAt", "respondedBy"];

/// An event ready to store: its indexed fields and the object the store
/// keeps and answers with (everything but the id).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub source_app: String,
    pub session_id: String,
    pub hook_event_type: String,
    pub timestamp_ms: i64,
    pub body: Map<String, Value>,
}

impl NewEvent {
    /// The stored event as answered and streamed: the body with its `id`
    /// (placed where a sender's own `id` field was, else last).
    pub fn with_id(&self, id: i64) -> Map<String, Value> {
        let mut event = self.body.clone();
        event.insert("id".to_owned(), Value::from(id));
        event
    }

    /// The sender's key for this event, when it gave one.
    pub fn key(&self) -> Option<&str> {
        self.body.get(EVENT_KEY_FIELD).and_then(Value::as_str)
    }

    /// The tool named, when there is one.
    pub fn tool_name(&self) -> Option<&str> {
        self.body.get("tool_name").and_then(Value::as_str)
    }
}

/// JavaScript truthiness, which the reference uses to decide "missing".
fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

fn name(body: &Map<String, Value>, key: &str) -> Result<String, EventRejection> {
    match body.get(key) {
        Some(Value::String(text)) if text.chars().count() <= MAX_NAME_CHARS && !text.chars().any(char::is_control) => {
            Ok(text.clone())
        }
        _ => Err(EventRejection::Invalid),
    }
}

/// Validates a posted body and reduces it to what is stored: everything
/// when `capture` is on for its source app, else [`KEPT_FIELDS`] and a
/// payload of [`KEPT_PAYLOAD_FIELDS`]. A missing or zero `timestamp` is `now_ms`.
pub fn accept(body: &[u8], capture: impl Fn(&str) -> bool, now_ms: i64) -> Result<NewEvent, EventRejection> {
    let Ok(Value::Object(body)) = serde_json::from_slice::<Value>(body) else {
        return Err(EventRejection::Invalid);
    };
    accept_object(body, capture, now_ms)
}

/// A sender's opt-in to storing its event whole (the hook input with
/// prompts and tool inputs): `true` stores it whatever beed's own
/// `--capture-payload` list says; never stored itself.
pub const CAPTURE_FIELD: &str = "bee_capture_payload";

/// [`accept`] of a body already parsed (a sender's own event, a spool line's).
pub fn accept_object(
    mut body: Map<String, Value>,
    capture: impl Fn(&str) -> bool,
    now_ms: i64,
) -> Result<NewEvent, EventRejection> {
    let required = ["source_app", "session_id", "hook_event_type", "payload"];
    if !required.iter().all(|key| truthy(body.get(*key))) {
        return Err(EventRejection::MissingFields);
    }
    let source_app = name(&body, "source_app")?;
    let session_id = name(&body, "session_id")?;
    let hook_event_type = name(&body, "hook_event_type")?;
    if !body.get("payload").is_some_and(Value::is_object) {
        return Err(EventRejection::Invalid);
    }
    let timestamp_ms = match body.get("timestamp") {
        None | Some(Value::Null) => now_ms,
        Some(given) => match timestamp_ms(given) {
            Some(0) => now_ms,
            Some(ms) => ms,
            None => return Err(EventRejection::Invalid),
        },
    };
    // The sender's own opt-in (`bee-hook event --capture-payload`) or
    // beed's for this source app (`beed --capture-payload APP`).
    let asked = body.remove(CAPTURE_FIELD).is_some_and(|flag| flag == Value::Bool(true));
    let captured = asked || capture(&source_app);
    let hitl = match body.remove(HITL_FIELD) {
        Some(Value::Object(request)) => Some(hitl_request(request)),
        Some(_) => return Err(EventRejection::Invalid),
        None => None,
    };
    let status = body.remove(HITL_STATUS_FIELD);
    if !captured {
        body.retain(|key, _| KEPT_FIELDS.contains(&key.as_str()) || key == "payload");
        for (key, value) in body.iter_mut() {
            if key != "payload" {
                cap_field(value);
            }
        }
        if let Some(Value::Object(payload)) = body.get_mut("payload") {
            payload.retain(|key, value| {
                KEPT_PAYLOAD_FIELDS.contains(&key.as_str()) && (value.is_string() || value.is_boolean())
            });
            payload.values_mut().for_each(cap_field);
        }
    }
    if let Some(request) = hitl {
        body.insert(HITL_FIELD.to_owned(), Value::Object(request));
        // The reference marks a new request pending; a sender's own status
        // is kept whole only under capture (it may carry an answer).
        let status = match status {
            Some(Value::Object(status)) if captured => Value::Object(status),
            Some(Value::Object(status)) => {
                let state = status.get("status").and_then(Value::as_str).filter(|s| HITL_STATES.contains(s));
                HitlStatus::state(state.unwrap_or("pending")).value()
            }
            _ => HitlStatus::state("pending").value(),
        };
        body.insert(HITL_STATUS_FIELD.to_owned(), status);
    } else if let Some(status) = status.filter(|_| captured) {
        body.insert(HITL_STATUS_FIELD.to_owned(), status);
    }
    body.insert("timestamp".to_owned(), Value::from(timestamp_ms));
    body.remove("id");
    Ok(NewEvent { source_app, session_id, hook_event_type, timestamp_ms, body })
}

/// A sender's timestamp as milliseconds: a number, or a string holding one
/// (the reference stores either), a fraction dropped; or an RFC 3339 time.
/// `None` for anything else, or a negative time.
fn timestamp_ms(given: &Value) -> Option<i64> {
    // Below i64::MAX as a float, so the conversion cannot saturate.
    const LATEST_MS: f64 = 9.2e18;
    let number = match given {
        Value::Number(n) => match n.as_i64() {
            Some(ms) => return (ms >= 0).then_some(ms),
            None => n.as_f64()?,
        },
        Value::String(text) => match text.trim().parse::<f64>() {
            Ok(number) => number,
            Err(_) => return crate::time::parse_rfc3339_ms(text.trim()).filter(|ms| *ms >= 0),
        },
        _ => return None,
    };
    (number.is_finite() && (0.0..LATEST_MS).contains(&number)).then(|| number.floor() as i64)
}

/// The kept part of a human-in-the-loop request: its known fields, each
/// string held to [`MAX_KEPT_FIELD_BYTES`].
fn hitl_request(mut request: Map<String, Value>) -> Map<String, Value> {
    request.retain(|key, _| HITL_KEPT.contains(&key.as_str()));
    if let Some(Value::Array(choices)) = request.get_mut("choices") {
        choices.retain(Value::is_string);
        choices.truncate(MAX_HITL_CHOICES);
    }
    for value in request.values_mut() {
        match value {
            Value::Array(items) => items.iter_mut().for_each(cap_field),
            other => cap_field(other),
        }
    }
    request
}

/// The stored part of an operator's answer: the answer's own fields, each
/// held to [`MAX_KEPT_FIELD_BYTES`]; the typed answer (`response`) only
/// under capture — without it, whether and what was chosen or permitted.
pub fn kept_response(response: &Map<String, Value>, captured: bool) -> Map<String, Value> {
    let mut kept: Map<String, Value> = response
        .iter()
        .filter(|(key, _)| RESPONSE_KEPT.contains(&key.as_str()) && (captured || key.as_str() != "response"))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    kept.values_mut().for_each(cap_field);
    kept
}

/// Whether `url` is a WebSocket address on this machine: the only place
/// beed delivers an operator's answer to (never a host a sender names).
pub fn is_loopback_ws_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("ws://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    !authority.contains('@') && is_loopback_host(authority)
}

/// Whether `host` (a Host header, an Origin's or a URL's host, with or
/// without a port) names this machine: `localhost` or a loopback address.
pub fn is_loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Holds a kept field to [`MAX_KEPT_FIELD_BYTES`], marking what was dropped.
fn cap_field(value: &mut Value) {
    match value {
        Value::String(text) if text.len() > MAX_KEPT_FIELD_BYTES => {
            let mut end = MAX_KEPT_FIELD_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let dropped = text.len() - end;
            text.truncate(end);
            text.push_str(&format!("…[{dropped} bytes dropped]"));
        }
        Value::Array(_) | Value::Object(_) => {
            let size = value.to_string().len();
            if size > MAX_KEPT_FIELD_BYTES {
                *value = Value::String(format!("[{size} bytes dropped]"));
            }
        }
        _ => {}
    }
}

/// `GET /events/filter-options`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterOptions {
    pub source_apps: Vec<String>,
    pub session_ids: Vec<String>,
    pub hook_event_types: Vec<String>,
}

/// A stream message: `{"type":"initial","data":[…]}` then `{"type":"event","data":{…}}`.
pub fn stream_message(kind: &str, data: &Value) -> String {
    serde_json::json!({"type": kind, "data": data}).to_string()
}

/// How a sender's post ended, as its spool line records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PostFailure {
    /// No daemon at the socket, or the connection failed.
    Unreachable,
    /// No answer within the deadline.
    Late,
    /// An answer other than 200; the event was not stored.
    Refused { status: u16 },
    /// 200 without a stored id: transport without a persistence receipt.
    NoReceipt,
}

/// A spool line of the events spool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpooledEvent {
    pub failure: PostFailure,
    pub at_utc: String,
    /// The body that was posted (already reduced by the sender).
    pub event: Value,
}

/// `GET /health`: each check and what it proved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok` when every check passed; `degraded` when the event pipeline
    /// works but the agents' logs are not all being read (the `ingestion`
    /// check says why); else `failing`.
    pub status: String,
    pub checks: Vec<HealthCheck>,
}

/// One health check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheck {
    pub name: String,
    pub ok: bool,
    pub detail: String,
    pub millis: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn accept_json(value: Value, capture: bool) -> Result<NewEvent, EventRejection> {
        accept(value.to_string().as_bytes(), |_| capture, 1_000)
    }

    #[test]
    fn required_fields_follow_the_reference_and_types_are_checked() {
        let ok = json!({"source_app": "a", "session_id": "s", "hook_event_type": "Stop", "payload": {}});
        assert!(accept_json(ok.clone(), false).is_ok(), "an empty payload object is present");
        for key in ["source_app", "session_id", "hook_event_type", "payload"] {
            let mut missing = ok.clone();
            missing.as_object_mut().unwrap().remove(key);
            assert_eq!(accept_json(missing, false), Err(EventRejection::MissingFields), "{key}");
            let mut empty = ok.clone();
            empty[key] = json!("");
            assert_eq!(accept_json(empty, false), Err(EventRejection::MissingFields), "{key}");
        }
        for (key, bad) in [
            ("source_app", json!(7)),
            ("payload", json!("text")),
            ("timestamp", json!("soon")),
            ("timestamp", json!(-5)),
            ("session_id", json!("a\u{0}b")),
            ("hook_event_type", json!("x".repeat(MAX_NAME_CHARS + 1))),
        ] {
            let mut wrong = ok.clone();
            wrong[key] = bad;
            assert_eq!(accept_json(wrong, false), Err(EventRejection::Invalid), "{key}");
        }
        for garbage in [&b"not json"[..], b"[1,2]", b"\xff\xfe", b"", b"{\"source_app\":"] {
            assert_eq!(accept(garbage, |_| true, 0), Err(EventRejection::Invalid));
        }
    }

    #[test]
    fn without_capture_only_metadata_is_kept() {
        let event = accept_json(
            json!({"source_app": "a", "session_id": "s", "hook_event_type": "PostToolUseFailure", "timestamp": 0,
                   "payload": {"tool_name": "Bash", "tool_input": {"command": "cat ~/.ssh/id_rsa"}, "cwd": "/home/x"},
                   "tool_name": "Bash", "error": "permission denied: secret", "chat": [{"role": "user"}],
                   "summary": "read a key", "model_name": "claude-opus-4-1", "id": 99}),
            false,
        )
        .unwrap();
        assert_eq!(
            Value::Object(event.with_id(7)),
            json!({"source_app": "a", "session_id": "s", "hook_event_type": "PostToolUseFailure", "timestamp": 1_000,
                   "payload": {"tool_name": "Bash"}, "tool_name": "Bash", "model_name": "claude-opus-4-1", "id": 7})
        );
        let kept = accept_json(
            json!({"source_app": "a", "session_id": "s", "hook_event_type": "X",
            "payload": {"prompt": "p"}, "chat": [1], "timestamp": 5}),
            true,
        )
        .unwrap();
        assert_eq!(kept.body["payload"], json!({"prompt": "p"}));
        assert_eq!((kept.body["chat"].clone(), kept.timestamp_ms), (json!([1]), 5));
    }

    #[test]
    fn a_timestamp_may_be_a_number_a_numeric_string_a_fraction_or_rfc3339() {
        let at = |given: Value| {
            accept_json(
                json!({"source_app": "a", "session_id": "s", "hook_event_type": "X", "payload": {},
                               "timestamp": given}),
                false,
            )
            .map(|e| e.timestamp_ms)
        };
        assert_eq!(at(json!(1_796_000_000_000i64)), Ok(1_796_000_000_000));
        assert_eq!(at(json!("1796000000000")), Ok(1_796_000_000_000));
        assert_eq!(at(json!(1_796_000_000_000.75)), Ok(1_796_000_000_000));
        assert_eq!(at(json!(" 1796000000000.5 ")), Ok(1_796_000_000_000));
        assert_eq!(at(json!("2026-11-30T00:53:20Z")), Ok(1_796_000_000_000));
        assert_eq!(at(json!("0")), Ok(1_000), "zero is the server's now, as in the reference");
        for bad in
            [json!("soon"), json!("-1"), json!(-0.5), json!("NaN"), json!("inf"), json!(1e300), json!(true), json!([])]
        {
            assert_eq!(at(bad.clone()), Err(EventRejection::Invalid), "{bad}");
        }
    }

    #[test]
    fn a_human_in_the_loop_request_is_kept_and_starts_pending() {
        let body = json!({"source_app": "a", "session_id": "s", "hook_event_type": "PreToolUse", "payload": {
                "source": "startup", "trigger": "auto", "stop_hook_active": true, "cwd": "/home/x", "prompt": "p"},
            "humanInTheLoop": {"question": "Deploy?", "responseWebSocketUrl": "ws://localhost:4242", "type": "choice",
                "choices": ["yes", "no", 3], "timeout": 300, "requiresResponse": true, "secret": "s3cret"}});
        let event = accept_json(body.clone(), false).unwrap();
        assert_eq!(
            event.body["humanInTheLoop"],
            json!({"question": "Deploy?", "responseWebSocketUrl": "ws://localhost:4242", "type": "choice",
                   "choices": ["yes", "no"], "timeout": 300, "requiresResponse": true})
        );
        assert_eq!(event.body["humanInTheLoopStatus"], json!({"status": "pending"}));
        assert_eq!(event.body["payload"], json!({"source": "startup", "trigger": "auto", "stop_hook_active": true}));
        let mut answered = body.clone();
        answered["humanInTheLoopStatus"] = json!({"status": "responded", "response": {"response": "private"}});
        assert_eq!(
            accept_json(answered.clone(), false).unwrap().body["humanInTheLoopStatus"],
            json!({"status": "responded"})
        );
        assert_eq!(
            accept_json(answered, true).unwrap().body["humanInTheLoopStatus"]["response"]["response"],
            "private"
        );
        let mut wrong = body;
        wrong["humanInTheLoop"] = json!("Deploy?");
        assert_eq!(accept_json(wrong, true), Err(EventRejection::Invalid));
        let huge = json!({"source_app": "a", "session_id": "s", "hook_event_type": "X", "payload": {},
                          "humanInTheLoop": {"question": "q".repeat(10_000)}});
        assert!(accept_json(huge, false).unwrap().body["humanInTheLoop"]["question"].as_str().unwrap().len() < 1_100);
    }

    #[test]
    fn answers_go_only_to_websockets_on_this_machine() {
        for url in ["ws://localhost:4242", "ws://127.0.0.1:1/x", "ws://[::1]:80", "ws://LOCALHOST:9"] {
            assert!(is_loopback_ws_url(url), "{url}");
        }
        for url in [
            "wss://localhost:1",
            "ws://evil.example:80",
            "ws://127.0.0.1.evil:1",
            "ws://user@evil:1",
            "http://localhost:1",
            "ws://localhost@evil.example:1",
            "ws://[::2]:1",
            "",
        ] {
            assert!(!is_loopback_ws_url(url), "{url}");
        }
    }
}
