//! The Claude Code hook envelope, read only as far as identity needs.
//!
//! Only `session_id` and `hook_event_name` are looked at; the prompt is never
//! kept. A repeated key is ambiguous and makes the envelope unusable.

use crate::delivery::MAX_ENVELOPE_UTF16_UNITS;
use crate::identity::{Identity, NATIVE_SESSION_KIND, parse_hyphenated_uuid};
use serde::Deserialize;

/// Environment variable Claude Code sets to the session id.
pub const SESSION_ENV: &str = "CLAUDE_CODE_SESSION_ID";
/// The only hook event that produces delivery observations.
pub const PROMPT_EVENT: &str = "UserPromptSubmit";

#[derive(Deserialize)]
struct Envelope {
    session_id: Option<String>,
    hook_event_name: Option<String>,
}

/// Why an envelope gives no observation (the hook still works normally).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotObserved {
    NotUtf8,
    Oversized,
    Malformed,
    NotPromptEvent,
    NoValidSession,
    /// `CLAUDE_CODE_SESSION_ID` is unset or not a session id: the hook was
    /// not run by Claude Code (Codex and others reuse hooks without it).
    NotClaudeCode,
}

impl NotObserved {
    pub fn reason(self) -> &'static str {
        match self {
            NotObserved::NotUtf8 => "envelope is not UTF-8",
            NotObserved::Oversized => "envelope is over 65,536 UTF-16 units",
            NotObserved::Malformed => "envelope is not a well-formed JSON object",
            NotObserved::NotPromptEvent => "not a UserPromptSubmit envelope",
            NotObserved::NoValidSession => "no valid native session id",
            NotObserved::NotClaudeCode => "CLAUDE_CODE_SESSION_ID is not a valid session id: not run by Claude Code",
        }
    }
}

/// The session an envelope belongs to: the envelope's `session_id` when it has
/// one, else `CLAUDE_CODE_SESSION_ID` (`env_session`).
pub fn session_of(raw: &[u8], env_session: Option<&str>) -> Result<(Identity, Identity), NotObserved> {
    let text = std::str::from_utf8(raw).map_err(|_| NotObserved::NotUtf8)?;
    if crate::text::utf16_units(text) > MAX_ENVELOPE_UTF16_UNITS {
        return Err(NotObserved::Oversized);
    }
    let envelope: Envelope = serde_json::from_str(text).map_err(|_| NotObserved::Malformed)?;
    if envelope.hook_event_name.as_deref() != Some(PROMPT_EVENT) {
        return Err(NotObserved::NotPromptEvent);
    }
    // Claude Code sets its session id for every hook process; a harness
    // that reuses the hook (Codex, Hermes) does not. Both must be there.
    let env_session = env_session.and_then(parse_hyphenated_uuid).ok_or(NotObserved::NotClaudeCode)?;
    // An envelope that names a session decides; an invalid one is not
    // replaced by the environment's.
    let session = match envelope.session_id.as_deref() {
        Some(id) => parse_hyphenated_uuid(id).ok_or(NotObserved::NoValidSession)?,
        None => env_session,
    };
    let kind = Identity::parse(NATIVE_SESSION_KIND).map_err(|_| NotObserved::NoValidSession)?;
    let id = Identity::parse(&session.hyphenated().to_string()).map_err(|_| NotObserved::NoValidSession)?;
    Ok((kind, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SID: &str = "3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c";

    fn envelope(session: &str) -> String {
        format!(
            r#"{{"session_id":"{session}","transcript_path":"/home/u/.claude/projects/p/{session}.jsonl","cwd":"/home/u/p","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"fix the tests"}}"#
        )
    }

    #[test]
    fn envelope_session_wins_over_environment() {
        let other = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
        let (_, id) = session_of(envelope(SID).as_bytes(), Some(other)).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(id.as_str(), SID);
    }

    #[test]
    fn environment_used_only_without_envelope_session() {
        let raw = r#"{"hook_event_name":"UserPromptSubmit","prompt":"x"}"#;
        let (_, id) = session_of(raw.as_bytes(), Some(SID)).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(id.as_str(), SID);
        assert_eq!(session_of(raw.as_bytes(), None), Err(NotObserved::NotClaudeCode));
    }

    #[test]
    fn the_envelope_alone_is_not_claude_code() {
        // Codex and other harnesses send the same envelope without the variable.
        assert_eq!(session_of(envelope(SID).as_bytes(), None), Err(NotObserved::NotClaudeCode));
        for bogus in ["", "not-a-uuid", "00000000-0000-0000-0000-000000000000", "3F2B8C1E6A4D4E9B9C7A1D2E3F4A5B6C"] {
            assert_eq!(session_of(envelope(SID).as_bytes(), Some(bogus)), Err(NotObserved::NotClaudeCode), "{bogus}");
        }
    }

    #[test]
    fn hostile_envelopes_are_not_observed() {
        let nil = envelope("00000000-0000-0000-0000-000000000000");
        assert_eq!(session_of(nil.as_bytes(), Some(SID)), Err(NotObserved::NoValidSession));
        assert_eq!(session_of(b"\xff\xfe{}", None), Err(NotObserved::NotUtf8));
        assert_eq!(session_of(b"fix the tests", Some(SID)), Err(NotObserved::Malformed));
        assert_eq!(session_of(b"[]", Some(SID)), Err(NotObserved::Malformed));
        assert_eq!(session_of(b"", Some(SID)), Err(NotObserved::Malformed));
        let twice = format!(r#"{{"session_id":"{SID}","session_id":"{SID}","hook_event_name":"UserPromptSubmit"}}"#);
        assert_eq!(session_of(twice.as_bytes(), Some(SID)), Err(NotObserved::Malformed));
        let wrong_type = r#"{"session_id":42,"hook_event_name":"UserPromptSubmit"}"#;
        assert_eq!(session_of(wrong_type.as_bytes(), Some(SID)), Err(NotObserved::Malformed));
        let pre_tool = envelope(SID).replace("UserPromptSubmit", "PreToolUse");
        assert_eq!(session_of(pre_tool.as_bytes(), Some(SID)), Err(NotObserved::NotPromptEvent));
        let deep = "[".repeat(60_000);
        assert_eq!(session_of(deep.as_bytes(), Some(SID)), Err(NotObserved::Malformed));
    }

    #[test]
    fn envelope_size_is_counted_in_utf16_units() {
        let fits = envelope(SID).replace("fix the tests", &"é".repeat(65_536 - envelope(SID).len() + 13));
        assert!(session_of(fits.as_bytes(), Some(SID)).is_ok());
        let over = envelope(SID).replace("fix the tests", &"😀".repeat(32_768));
        assert_eq!(session_of(over.as_bytes(), Some(SID)), Err(NotObserved::Oversized));
    }
}
