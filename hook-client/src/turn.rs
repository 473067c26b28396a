//! `bee-hook turn`: wired on `UserPromptSubmit` and `Stop`, it marks the
//! start and end of an interactive turn; beed makes the turn a `call`
//! (timed from the two marks, tokens from the transcript lines between them).
//! It prints nothing and always exits 0: a turn mark never blocks the agent.

use bee_proto::identity::parse_hyphenated_uuid;
use bee_proto::ledger::{LedgerRecord, TurnEdge, TurnMark};
use serde::Deserialize;
use std::process::ExitCode;

use crate::{ledger, prompt};

#[derive(Deserialize)]
struct Envelope {
    session_id: Option<String>,
    hook_event_name: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
}

pub fn run() -> ExitCode {
    let (input, whole) = prompt::read_stdin_prefix();
    if whole && let Some(mark) = mark_of(&input, &bee_proto::time::now_rfc3339()) {
        ledger::record(vec![LedgerRecord::TurnMark(mark)]);
    }
    ExitCode::SUCCESS
}

/// The turn mark an envelope stands for, if it is one.
pub(crate) fn mark_of(input: &[u8], now: &str) -> Option<TurnMark> {
    let text = std::str::from_utf8(input).ok()?;
    if bee_proto::text::utf16_units(text) > bee_proto::delivery::MAX_ENVELOPE_UTF16_UNITS {
        return None;
    }
    let envelope: Envelope = serde_json::from_str(text).ok()?;
    let edge = match envelope.hook_event_name.as_deref()? {
        "UserPromptSubmit" => TurnEdge::Start,
        "Stop" => TurnEdge::Stop,
        _ => return None,
    };
    let session = parse_hyphenated_uuid(envelope.session_id.as_deref()?)?;
    let absolute = |p: Option<String>| p.filter(|p| p.starts_with('/') && p.len() <= 4_096);
    Some(TurnMark {
        edge,
        at_utc: now.to_owned(),
        session_id: session.hyphenated().to_string(),
        transcript_path: absolute(envelope.transcript_path),
        cwd: absolute(envelope.cwd),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_only_prompt_and_stop_envelopes_with_a_session() {
        let now = "2026-11-30T10:00:00.000Z";
        let stop = br#"{"session_id":"3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c","transcript_path":"/home/u/.claude/projects/p/x.jsonl","cwd":"/home/u/p","hook_event_name":"Stop","stop_hook_active":false}"#;
        let mark = mark_of(stop, now).unwrap();
        assert_eq!(
            (mark.edge, mark.transcript_path.as_deref()),
            (TurnEdge::Stop, Some("/home/u/.claude/projects/p/x.jsonl"))
        );
        let tool = br#"{"session_id":"3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c","hook_event_name":"PreToolUse"}"#;
        assert!(mark_of(tool, now).is_none());
        let nil = br#"{"session_id":"00000000-0000-0000-0000-000000000000","hook_event_name":"Stop"}"#;
        assert!(mark_of(nil, now).is_none());
        assert!(mark_of(b"\xff", now).is_none());
        let relative = br#"{"session_id":"3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c","hook_event_name":"Stop","transcript_path":"x.jsonl"}"#;
        assert_eq!(mark_of(relative, now).unwrap().transcript_path, None);
    }
}
