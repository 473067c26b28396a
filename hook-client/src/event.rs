//! `bee-hook event --source-app NAME`: posts any Claude Code lifecycle
//! event to beed. It prints nothing on stdout (some events read a hook's
//! stdout as a decision) and always exits 0, so monitoring never blocks the
//! agent — but it never hides a failure either: a failed, refused, late or
//! unreceipted post is said on stderr and kept in the spool, where beed
//! stores it later and the audit finds it.

use bee_proto::events::{
    EVENT_KEY_FIELD, EVENTS_PATH, EVENTS_SPOOL_FILE, KEPT_FIELDS, PostFailure, RECEIPT_PREFIX, SpooledEvent,
};
use serde_json::{Map, Value};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use crate::post::{self, ExchangeFailure};
use crate::prompt;

/// Largest answer read back: the stored event, which with capture on echoes the payload.
pub const MAX_ANSWER: u64 = bee_proto::events::MAX_EVENT_BYTES as u64 + 64 * 1024;

pub fn run(source_app: &str, capture: bool) -> ExitCode {
    let (input, whole) = prompt::read_stdin_prefix();
    let event = match event_of(&input, whole, source_app, capture) {
        Ok(event) => event,
        Err(why) => {
            say!("bee-hook: event not sent: {why}");
            return ExitCode::SUCCESS;
        }
    };
    let Ok(body) = serde_json::to_vec(&event) else { return ExitCode::SUCCESS };
    let deadline = Instant::now() + post::DEADLINE;
    let stored = match bee_proto::paths::socket_path() {
        None => Err(PostFailure::Unreachable),
        Some(socket) => match post::exchange(socket, "POST", EVENTS_PATH, body, deadline, MAX_ANSWER) {
            Ok(answer) => receipt(&answer),
            Err(failure) => Err(failure_of(&failure)),
        },
    };
    settle(event, stored);
    ExitCode::SUCCESS
}

/// How a failed exchange counts for an event.
pub fn failure_of(failure: &ExchangeFailure) -> PostFailure {
    match failure {
        ExchangeFailure::Late => PostFailure::Late,
        ExchangeFailure::Unreachable(_) => PostFailure::Unreachable,
    }
}

/// Says what became of the event: its receipt with `BEE_HOOK_DEBUG`, else
/// a failure on stderr, the event kept in the spool for beed and the audit.
pub fn settle(event: Value, stored: Result<i64, PostFailure>) {
    let failure = match stored {
        Ok(id) => {
            if std::env::var_os(prompt::DEBUG_ENV).is_some() {
                say!("{RECEIPT_PREFIX}{id} stored");
            }
            return;
        }
        Err(failure) => failure,
    };
    let kept = bee_proto::paths::spool_dir().is_some_and(|dir| {
        let line = SpooledEvent { failure: failure.clone(), at_utc: bee_proto::time::now_rfc3339(), event };
        serde_json::to_vec(&line).is_ok_and(|line| bee_proto::spool::append(&dir, EVENTS_SPOOL_FILE, &line).is_ok())
    });
    let what = match failure {
        PostFailure::Unreachable => "beed is not reachable".to_owned(),
        PostFailure::Late => format!("beed did not answer within {:?}", post::DEADLINE),
        PostFailure::Refused { status } => format!("beed refused it ({status})"),
        PostFailure::NoReceipt => "beed answered without a stored id".to_owned(),
    };
    let spooled = if kept { "kept in the spool for beed and the audit" } else { "and the spool could not keep it" };
    say!("bee-hook: event not delivered: {what}; {spooled}");
}

/// The stored id in a 200 answer, or how the post failed.
fn receipt(answer: &[u8]) -> Result<i64, PostFailure> {
    match post::status_and_body(answer) {
        Some((status, body)) => receipt_of(status, body),
        None => Err(PostFailure::NoReceipt),
    }
}

/// The stored id in the event route's answer of `status` and `body`.
pub fn receipt_of(status: u16, body: &[u8]) -> Result<i64, PostFailure> {
    match status {
        200 => serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|stored| stored.get("id").and_then(Value::as_i64))
            .filter(|id| *id > 0)
            .ok_or(PostFailure::NoReceipt),
        status => Err(PostFailure::Refused { status }),
    }
}

/// The event to post for a hook envelope: the reference's shape, reduced
/// to metadata unless `capture`, with a key that makes a retry idempotent.
pub fn event_of(input: &[u8], whole: bool, source_app: &str, capture: bool) -> Result<Value, &'static str> {
    if !whole {
        return Err("the hook input is larger than bee-hook reads");
    }
    let Ok(Value::Object(envelope)) = serde_json::from_slice::<Value>(input) else {
        return Err("the hook input is not a JSON object");
    };
    let text = |key: &str| envelope.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    let session = text("session_id").ok_or("the hook input has no session_id")?;
    let kind = text("hook_event_name").ok_or("the hook input has no hook_event_name")?;
    let mut event = Map::new();
    event.insert("source_app".into(), source_app.into());
    event.insert("session_id".into(), session.into());
    event.insert("hook_event_type".into(), kind.into());
    for key in KEPT_FIELDS {
        if !event.contains_key(*key)
            && let Some(value) = envelope.get(*key)
        {
            event.insert((*key).to_owned(), value.clone());
        }
    }
    if !event.contains_key("model_name") {
        // As the reference's sender does: the latest assistant message's
        // model in the transcript; else the model SessionStart names.
        let from_transcript = text("transcript_path").and_then(|path| transcript_model(Path::new(&path)));
        if let Some(model) = from_transcript.or_else(|| text("model")) {
            event.insert("model_name".into(), model.into());
        }
    }
    event.insert("timestamp".into(), bee_proto::time::now_unix_ms().into());
    event.insert(EVENT_KEY_FIELD.into(), uuid::Uuid::new_v4().hyphenated().to_string().into());
    event.insert("payload".into(), Value::Object(envelope));
    // The daemon's own rules decide what is kept, so both ends agree.
    let accepted = bee_proto::events::accept_object(event, |_| capture, bee_proto::time::now_unix_ms())
        .map_err(|rejection| rejection.message())?;
    let mut body = accepted.body;
    if capture {
        // The opt-in travels with the event, so beed (or the spool's
        // replay) keeps it whole without a `--capture-payload` of its own.
        body.insert(bee_proto::events::CAPTURE_FIELD.into(), Value::Bool(true));
    }
    Ok(Value::Object(body))
}

/// How far back from a transcript's end its model is looked for: the hook
/// reads at most this much, whatever the transcript's size.
const MODEL_TAIL_BYTES: u64 = 1 << 20;
/// The first look: the latest answer is almost always this near the end.
const MODEL_FIRST_LOOK_BYTES: u64 = 64 << 10;

/// The model of the transcript's latest assistant message within its last
/// [`MODEL_TAIL_BYTES`]; `None` when there is none there (never a guess).
fn transcript_model(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok().filter(std::fs::Metadata::is_file)?.len();
    for window in [MODEL_FIRST_LOOK_BYTES, MODEL_TAIL_BYTES] {
        let start = length.saturating_sub(window);
        if let Some(model) = latest_model(&mut file, start, window) {
            return Some(model);
        }
        if start == 0 {
            break;
        }
    }
    None
}

/// The latest assistant message's model among the whole lines of the
/// `window` bytes from `start`.
fn latest_model(file: &mut std::fs::File, start: u64, window: u64) -> Option<String> {
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut tail = Vec::with_capacity(usize::try_from(window).unwrap_or(0));
    file.take(window).read_to_end(&mut tail).ok()?;
    let mut lines = tail.rsplit(|byte| *byte == b'\n').peekable();
    std::iter::from_fn(|| {
        let line = lines.next()?;
        // The window cut the first line (the last one met): not a whole entry.
        (start == 0 || lines.peek().is_some()).then_some(line)
    })
    .filter(|line| line.windows(11).any(|w| w == b"\"assistant\""))
    .find_map(|line| {
        let entry: Value = serde_json::from_slice(line).ok()?;
        let model = entry.get("message")?.get("model")?.as_str()?;
        // Claude Code's own placeholder for messages no model wrote.
        (entry.get("type")?.as_str()? == "assistant" && !model.is_empty() && model != "<synthetic>")
            .then(|| model.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_envelope_becomes_a_minimal_event_unless_captured() {
        let envelope = json!({"session_id": "abc", "transcript_path": "/home/u/.claude/projects/x.jsonl",
            "cwd": "/home/u/app", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build"}, "tool_use_id": "toolu_1"})
        .to_string();
        let event = event_of(envelope.as_bytes(), true, "web", false).unwrap();
        assert_eq!(
            event["payload"],
            json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1"})
        );
        assert_eq!(
            (event["tool_name"].clone(), event["hook_event_type"].clone()),
            (json!("Bash"), json!("PreToolUse"))
        );
        assert!(!event.to_string().contains("rm -rf") && !event.to_string().contains("/home/u"));
        let captured = event_of(envelope.as_bytes(), true, "web", true).unwrap();
        assert_eq!(captured["payload"]["tool_input"]["command"], "rm -rf build");
        assert_eq!(captured[bee_proto::events::CAPTURE_FIELD], true, "the opt-in travels with the event");
        assert!(event_of(b"not json", true, "web", false).is_err());
        assert!(event_of(b"{\"hook_event_name\":\"Stop\"}", true, "web", false).is_err());
        assert!(event_of(envelope.as_bytes(), false, "web", false).is_err());
    }

    #[test]
    fn the_model_comes_from_the_transcripts_latest_assistant_message() {
        let dir = std::env::temp_dir().join(format!("bee-hook-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let transcript = dir.join("session.jsonl");
        let line = |kind: &str, model: &str| {
            json!({"type": kind, "message": {"role": kind, "model": model, "content": "x"}}).to_string() + "\n"
        };
        let mut text = line("assistant", "claude-opus-4-1-20250805");
        text += &line("assistant", "claude-sonnet-4-5-20250929");
        text += &line("user", "not-a-model");
        text += &line("assistant", "<synthetic>");
        text += "{broken\n";
        std::fs::write(&transcript, &text).unwrap();
        assert_eq!(transcript_model(&transcript).as_deref(), Some("claude-sonnet-4-5-20250929"));
        let envelope = json!({"session_id": "abc", "hook_event_name": "Stop",
            "transcript_path": transcript.display().to_string()});
        let event = event_of(envelope.to_string().as_bytes(), true, "web", false).unwrap();
        assert_eq!(event["model_name"], "claude-sonnet-4-5-20250929");
        // Past the first look (64 KiB), within the last MiB: still found.
        let filler = line("user", "x").repeat(200_000 / line("user", "x").len());
        std::fs::write(&transcript, line("assistant", "claude-opus-4-1-20250805") + &filler).unwrap();
        assert_eq!(transcript_model(&transcript).as_deref(), Some("claude-opus-4-1-20250805"));
        // Only the last MiB is read: a model further back is unknown, not guessed.
        let far = line("assistant", "claude-opus-4-1-20250805") + &"x".repeat(MODEL_TAIL_BYTES as usize) + "\n";
        std::fs::write(&transcript, far).unwrap();
        assert_eq!(transcript_model(&transcript), None);
        assert_eq!(transcript_model(&dir), None, "a directory is no transcript");
        assert_eq!(transcript_model(&dir.join("missing.jsonl")), None);
        // SessionStart names its model itself.
        let start = json!({"session_id": "abc", "hook_event_name": "SessionStart", "source": "startup",
            "model": "claude-haiku-4-5", "transcript_path": dir.join("missing.jsonl").display().to_string()});
        let event = event_of(start.to_string().as_bytes(), true, "web", false).unwrap();
        assert_eq!(
            (event["model_name"].clone(), event["payload"]["source"].clone()),
            (json!("claude-haiku-4-5"), json!("startup"))
        );
        let unknown = json!({"session_id": "abc", "hook_event_name": "Stop"});
        assert!(event_of(unknown.to_string().as_bytes(), true, "web", false).unwrap().get("model_name").is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_a_200_with_an_id_is_a_receipt() {
        assert_eq!(receipt(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n{\"id\":42}"), Ok(42));
        assert_eq!(receipt(b"HTTP/1.1 200 OK\r\n\r\n{\"ok\":true}"), Err(PostFailure::NoReceipt));
        assert_eq!(receipt(b"HTTP/1.1 400 Bad Request\r\n\r\n{}"), Err(PostFailure::Refused { status: 400 }));
        assert_eq!(receipt(b"garbage"), Err(PostFailure::NoReceipt));
    }
}
