//! `bee-hook turn [--agent NAME]`: wired on the events that start and end
//! an interactive turn (Claude Code's, Qwen Code's, Copilot CLI's and Codex's `UserPromptSubmit`
//! and `Stop`, Gemini CLI's `BeforeAgent` and `AfterAgent`), it marks them;
//! beed makes the turn a `call` of that agent (timed from the two marks,
//! tokens from the agent's own records of the session). It prints nothing
//! and always exits 0: a turn mark never blocks the agent.

use bee_proto::identity::parse_hyphenated_uuid;
use bee_proto::ledger::{LedgerRecord, Provider, TurnEdge, TurnMark};
use serde::Deserialize;
use std::process::ExitCode;

use crate::{ledger, prompt};

#[derive(Deserialize)]
struct Envelope<'a> {
    session_id: Option<String>,
    hook_event_name: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    /// What the user submitted: Qwen Code fires `UserPromptSubmit` again,
    /// with an empty prompt, when it sends a tool's result back; that is
    /// no new turn. Borrowed from the input, so a long prompt is never
    /// copied on the hook's path (only whether it is empty matters).
    #[serde(borrow)]
    prompt: Option<std::borrow::Cow<'a, str>>,
}

/// `bee-hook turn`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct TurnArgs {
    /// The agent whose hook runs it: claude, gemini, qwen, copilot or codex.
    #[arg(long, value_name = "NAME", default_value = "claude", value_parser = agent_of)]
    pub(crate) agent: Provider,
}

/// An agent whose turn events Bee knows, by name.
pub(crate) fn agent_of(name: &str) -> Result<Provider, String> {
    Provider::from_name(name)
        .filter(|&agent| TurnEdge::events(agent).is_some())
        .ok_or_else(|| format!("{name}: no agent whose turns Bee marks (claude, gemini, qwen, copilot, codex)"))
}

pub fn run(args: &TurnArgs) -> ExitCode {
    let (input, whole) = prompt::read_stdin_prefix();
    if whole && let Some(mark) = mark_of(&input, &bee_proto::time::now_rfc3339(), args.agent) {
        ledger::record(vec![LedgerRecord::TurnMark(mark)]);
    }
    ExitCode::SUCCESS
}

/// The turn mark an envelope of `agent`'s hook stands for, if it is one.
pub(crate) fn mark_of(input: &[u8], now: &str, agent: Provider) -> Option<TurnMark> {
    let text = std::str::from_utf8(input).ok()?;
    if bee_proto::text::utf16_units(text) > bee_proto::delivery::MAX_ENVELOPE_UTF16_UNITS {
        return None;
    }
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    let edge = TurnEdge::of_event(agent, envelope.hook_event_name.as_deref()?)?;
    if agent == Provider::Qwen && edge == TurnEdge::Start && envelope.prompt.as_deref().is_none_or(str::is_empty) {
        return None;
    }
    let session = parse_hyphenated_uuid(envelope.session_id.as_deref()?)?;
    let absolute = |p: Option<String>| p.filter(|p| p.starts_with('/') && p.len() <= 4_096);
    Some(TurnMark {
        edge,
        at_utc: now.to_owned(),
        session_id: session.hyphenated().to_string(),
        transcript_path: absolute(envelope.transcript_path),
        cwd: absolute(envelope.cwd),
        provider: agent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_only_prompt_and_stop_envelopes_with_a_session() {
        let now = "2026-11-30T10:00:00.000Z";
        let stop = br#"{"session_id":"3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c","transcript_path":"/home/u/.claude/projects/p/x.jsonl","cwd":"/home/u/p","hook_event_name":"Stop","stop_hook_active":false}"#;
        let mark = mark_of(stop, now, Provider::Claude).unwrap();
        assert_eq!(
            (mark.edge, mark.transcript_path.as_deref()),
            (TurnEdge::Stop, Some("/home/u/.claude/projects/p/x.jsonl"))
        );
        let tool = br#"{"session_id":"3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c","hook_event_name":"PreToolUse"}"#;
        assert!(mark_of(tool, now, Provider::Claude).is_none());
        let nil = br#"{"session_id":"00000000-0000-0000-0000-000000000000","hook_event_name":"Stop"}"#;
        assert!(mark_of(nil, now, Provider::Claude).is_none());
        assert!(mark_of(b"\xff", now, Provider::Claude).is_none());
        let relative = br#"{"session_id":"3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c","hook_event_name":"Stop","transcript_path":"x.jsonl"}"#;
        assert_eq!(mark_of(relative, now, Provider::Claude).unwrap().transcript_path, None);
    }

    /// Gemini CLI's turn is `BeforeAgent` to `AfterAgent` (its envelopes
    /// as 0.61.0 sends them); Qwen Code's second `UserPromptSubmit` of a
    /// turn, with the tool's result and no prompt, is no start; an agent's
    /// events mean nothing under another's names; Copilot CLI sends Claude
    /// Code's names and fields.
    #[test]
    fn each_agent_by_its_own_event_names() {
        let now = "2026-11-30T10:00:00.000Z";
        let session = "8dfede0e-6a4d-4e9b-9c7a-1d2e3f4a5b6c";
        let gemini = |event: &str| {
            format!(
                r#"{{"session_id":"{session}","transcript_path":"/h/.gemini/tmp/p/chats/session-1.jsonl","cwd":"/h/p","hook_event_name":"{event}","timestamp":"2026-11-30T10:00:00.000Z","prompt":"list files"}}"#
            )
        };
        let start = mark_of(gemini("BeforeAgent").as_bytes(), now, Provider::Gemini).unwrap();
        assert_eq!((start.edge, start.provider), (TurnEdge::Start, Provider::Gemini));
        let stop = mark_of(gemini("AfterAgent").as_bytes(), now, Provider::Gemini).unwrap();
        assert_eq!((stop.edge, stop.session_id.as_str()), (TurnEdge::Stop, session));
        assert!(mark_of(gemini("BeforeAgent").as_bytes(), now, Provider::Claude).is_none());
        assert!(mark_of(gemini("AfterModel").as_bytes(), now, Provider::Gemini).is_none());
        let qwen = |prompt: &str| {
            format!(
                r#"{{"session_id":"{session}","hook_event_name":"UserPromptSubmit","cwd":"/h/p","prompt":"{prompt}"}}"#
            )
        };
        assert_eq!(mark_of(qwen("look").as_bytes(), now, Provider::Qwen).unwrap().provider, Provider::Qwen);
        assert!(mark_of(qwen("").as_bytes(), now, Provider::Qwen).is_none(), "a tool result sent back is no turn");
        assert!(mark_of(qwen("").as_bytes(), now, Provider::Claude).is_some());
        // Copilot CLI 1.0.102's PascalCase `Stop`, as it sends it.
        let copilot = format!(
            r#"{{"hook_event_name":"Stop","session_id":"{session}","timestamp":"2026-12-06T21:09:18.356Z","cwd":"/h/p","transcript_path":"/h/.copilot/session-state/{session}/events.jsonl","stop_reason":"end_turn","stop_hook_active":false}}"#
        );
        let stop = mark_of(copilot.as_bytes(), now, Provider::Copilot).unwrap();
        assert_eq!((stop.edge, stop.provider), (TurnEdge::Stop, Provider::Copilot));
        assert!(agent_of("codex").is_ok() && agent_of("cline").is_err() && agent_of("nobody").is_err());
    }
}
