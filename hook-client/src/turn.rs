//! `bee-hook turn [--agent NAME]`: wired on the events that start and end
//! an interactive turn (Claude Code's, Qwen Code's, Copilot CLI's and Codex's `UserPromptSubmit`
//! and `Stop`, Gemini CLI's `BeforeAgent` and `AfterAgent`, Cline's
//! `TaskStart` and `TaskComplete` hook files), it marks them;
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

/// What Cline sends its hook files (`hookName` `agent_start` or
/// `agent_end`): its session is the root session's id (`<ms>_<suffix>`, the
/// name its session folder takes), and a sub-agent's run names its parent.
/// The end's `turn` (the model's answer) is never read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClineEnvelope {
    hook_name: Option<String>,
    session_context: Option<ClineSession>,
    #[serde(rename = "parent_agent_id")]
    parent_agent_id: Option<serde::de::IgnoredAny>,
    workspace_roots: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClineSession {
    root_session_id: Option<String>,
}

/// `bee-hook turn`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct TurnArgs {
    /// The agent whose hook runs it: claude, gemini, qwen, copilot, codex or cline.
    #[arg(long, value_name = "NAME", default_value = "claude", value_parser = agent_of)]
    pub(crate) agent: Provider,
}

/// An agent whose turn events Bee knows, by name.
pub(crate) fn agent_of(name: &str) -> Result<Provider, String> {
    Provider::from_name(name)
        .filter(|&agent| TurnEdge::events(agent).is_some())
        .ok_or_else(|| format!("{name}: no agent whose turns Bee marks (claude, gemini, qwen, copilot, codex, cline)"))
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
    if agent == Provider::Cline {
        return cline_mark(text, now);
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

/// The turn mark of a Cline hook file's envelope: its top agent's run
/// starting or ending (a sub-agent's run is inside its parent's turn), in
/// the root session, whose id is an identity string (no UUID).
fn cline_mark(text: &str, now: &str) -> Option<TurnMark> {
    let envelope: ClineEnvelope = serde_json::from_str(text).ok()?;
    if envelope.parent_agent_id.is_some() {
        return None;
    }
    let event = match envelope.hook_name.as_deref()? {
        "agent_start" => "TaskStart",
        "agent_end" => "TaskComplete",
        _ => return None,
    };
    let edge = TurnEdge::of_event(Provider::Cline, event)?;
    // Cline's ids are `<ms>_<suffix>`: letters, digits, `_` and `-` only,
    // an identity string that is no path.
    let session = envelope.session_context?.root_session_id?;
    let fits = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let session = bee_proto::identity::Identity::parse(&session).ok().filter(|id| id.as_str().bytes().all(fits))?;
    let cwd = envelope.workspace_roots.and_then(|roots| roots.into_iter().next());
    Some(TurnMark {
        edge,
        at_utc: now.to_owned(),
        session_id: session.as_str().to_owned(),
        transcript_path: None,
        cwd: cwd.filter(|p| p.starts_with('/') && p.len() <= 4_096),
        provider: Provider::Cline,
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
        assert!(agent_of("codex").is_ok() && agent_of("cline").is_ok() && agent_of("nobody").is_err());
        assert!(agent_of("opencode").is_err(), "an agent whose hooks Bee wires none of");
    }

    /// Cline 3.0.65's hook files' envelopes, as it sends them (the end's
    /// answer shortened): its top agent's run is the turn, in the root
    /// session its folder is named by; a sub-agent's run, another event, an
    /// id that is no identity string or an envelope of another agent's
    /// shape marks nothing.
    #[test]
    fn cline_turns_by_its_top_agents_runs() {
        let now = "2026-12-07T00:22:49.600Z";
        let envelope = |hook: &str, session: &str, parent: &str| {
            format!(
                r#"{{"clineVersion":"","timestamp":"2026-12-07T00:22:49.354Z","taskId":"conv_1796602969332_fhg0obq","sessionContext":{{"rootSessionId":"{session}"}},"workspaceRoots":["/tmp/h/app"],"workspaceInfo":{{"rootPath":"/tmp/h/app","hint":"app"}},"userId":"unknown","agent_id":"agent_1796602969304_05jsjc","parent_agent_id":{parent},"hookName":"{hook}","iteration":1,"turn":{{"outputText":"Answer 1.","status":"completed"}},"taskComplete":{{"taskMetadata":{{}}}}}}"#
            )
        };
        let session = "1796602969203_gy89a";
        let start = mark_of(envelope("agent_start", session, "null").as_bytes(), now, Provider::Cline).unwrap();
        assert_eq!(
            (start.edge, start.session_id.as_str(), start.cwd.as_deref(), start.provider),
            (TurnEdge::Start, session, Some("/tmp/h/app"), Provider::Cline)
        );
        assert_eq!(start.transcript_path, None);
        let stop = mark_of(envelope("agent_end", session, "null").as_bytes(), now, Provider::Cline).unwrap();
        assert_eq!((stop.edge, stop.at_utc.as_str()), (TurnEdge::Stop, now));
        let sub_agent = envelope("agent_end", session, r#""agent_1796602969304_05jsjc""#);
        assert!(mark_of(sub_agent.as_bytes(), now, Provider::Cline).is_none(), "inside its parent's turn");
        for hook in ["tool_call", "prompt_submit", "agent_error", "TaskComplete"] {
            assert!(mark_of(envelope(hook, session, "null").as_bytes(), now, Provider::Cline).is_none(), "{hook}");
        }
        for bad in ["", "a b", "../x", &"9".repeat(129)] {
            let text = envelope("agent_end", bad, "null");
            assert!(mark_of(text.as_bytes(), now, Provider::Cline).is_none(), "{bad}");
        }
        let claude_shaped = r#"{"session_id":"3f2b8c1e-6a4d-4e9b-9c7a-1d2e3f4a5b6c","hook_event_name":"Stop"}"#;
        assert!(mark_of(claude_shaped.as_bytes(), now, Provider::Cline).is_none());
        assert!(mark_of(envelope("agent_end", session, "null").as_bytes(), now, Provider::Claude).is_none());
        assert!(mark_of(b"{\"hookName\":7}", now, Provider::Cline).is_none());
    }
}
