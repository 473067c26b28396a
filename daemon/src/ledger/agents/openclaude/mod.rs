//! OpenClaude (a fork of Claude Code that runs its agent loop against any
//! model provider): its transcripts (`~/.openclaude/projects/<project>/
//! <session>.jsonl`), Claude Code's format, read by Claude Code's reader
//! ([`transcript_reader`]) under OpenClaude's own name. What differs from
//! Claude Code is where the transcripts are, and that a provider other
//! than Anthropic's has its usage put in Anthropic's shape by OpenClaude
//! itself before it is written. `README.md` beside this file describes the
//! format and where it was read from.

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified};
use crate::ledger::agents::claude::{Claude, transcript_reader};
use crate::ledger::stored::evidence::AgentState;

/// OpenClaude, as [`Agent`].
#[derive(Debug)]
pub struct OpenClaude;

impl Agent for OpenClaude {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::OpenClaude,
            title: "OpenClaude",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Claude Code's transcripts: turns Bee times from their own
            // timestamps, a refused request written as an API-error line of
            // kind `rate_limit`, cache writes apart, reasoning inside output.
            // No cost is known to be written (its transcripts carry none).
            records: Records {
                time_spans: true,
                limit_notices: true,
                reasoning: false,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `projects/` of its configuration directory, as OpenClaude finds it:
    /// `OPENCLAUDE_CONFIG_DIR`, else `~/.openclaude` (it never reads
    /// `CLAUDE_CONFIG_DIR`). A directory Claude Code's reader already reads
    /// (or one within or around it: OpenClaude's configuration pointed at
    /// Claude Code's) is left to it, so no transcript is read twice.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let config = env("OPENCLAUDE_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".openclaude")));
        let claudes = Claude.record_dirs(env);
        config
            .map(|config| config.join("projects"))
            .filter(|dir| !claudes.iter().any(|claude| dir.starts_with(claude) || claude.starts_with(dir)))
            .into_iter()
            .collect()
    }

    fn file_reader(&self, _path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        transcript_reader(Provider::OpenClaude, state)
    }

    /// As Claude Code's: `<project>/<session>.jsonl`, or a sub-agent's
    /// under `<project>/<session>/subagents/`.
    fn project_and_session<'p>(&self, path: &'p str) -> Option<(&'p str, &'p str)> {
        Claude.project_and_session(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::env_of;
    use crate::ledger::agents::tests::{responses, rows};
    use crate::ledger::agents::{LogParser, read_log};
    use crate::ledger::stored::evidence::{Evidence, FileOffset};
    use bee_proto::ledger::LedgerRecord;
    use serde_json::{Value, json};

    const SESSION: &str = "7c1e5a2b-3d4f-4a6b-8c9d-0e1f2a3b4c5d";

    fn prompt(at: &str) -> Value {
        json!({"parentUuid": null, "isSidechain": false, "type": "user", "sessionId": SESSION, "timestamp": at,
            "cwd": "/home/dev/app", "message": {"role": "user", "content": "fix the parser"}})
    }

    /// A response line as OpenClaude writes one for a model behind its
    /// OpenAI-compatible shim: Anthropic's usage shape, input already net
    /// of the cached part, no cache writes.
    fn response(n: u32, at: &str, usage: Value, stop: Option<&str>, sidechain: bool) -> Value {
        json!({"parentUuid": "p", "isSidechain": sidechain, "sessionId": SESSION, "timestamp": at,
            "requestId": format!("req_{n}"), "message": {"id": format!("chatcmpl-{n}"), "type": "message",
            "role": "assistant", "model": "deepseek-chat", "content": [{"type": "text", "text": "done"}],
            "stop_reason": stop, "usage": usage}, "type": "assistant", "uuid": format!("u{n}")})
    }

    fn usage(input: u64, reads: u64, output: u64) -> Value {
        json!({"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": reads,
            "output_tokens": output})
    }

    fn log(lines: &[Value]) -> String {
        lines.iter().map(|line| format!("{line}\n")).collect()
    }

    /// A turn of OpenClaude's read exactly under its own name: a response
    /// streamed in two writes (the fuller one kept), a sub-agent's line
    /// (real spend), the turn timed from prompt to last response; the same
    /// responses copied into a resumed session's file are the same
    /// responses; a line cut short is counted unparseable and the rest read.
    #[test]
    fn openclaudes_responses_read_exactly_and_once() {
        let first = response(1, "2026-12-07T10:00:03.000Z", usage(1200, 18_000, 1), None, false);
        let full = response(1, "2026-12-07T10:00:04.000Z", usage(1200, 18_000, 240), Some("tool_use"), false);
        let side = response(2, "2026-12-07T10:00:06.000Z", usage(300, 0, 55), Some("end_turn"), true);
        let cut = format!("{}", response(3, "2026-12-07T10:00:07.000Z", usage(1, 1, 1), None, false));
        let text = format!(
            "{}{}\n{}",
            log(&[prompt("2026-12-07T10:00:00.000Z"), first, full.clone(), side.clone()]),
            &cut[..cut.len() - 30],
            log(&[prompt("2026-12-07T10:01:00.000Z")])
        );
        let (evidence, unparseable) = read_log(Provider::OpenClaude, text.as_bytes());
        assert_eq!(unparseable, 1, "the line cut short");
        let turns: Vec<_> = evidence
            .iter()
            .filter_map(|e| match e {
                Evidence::Turn(turn) => Some((turn.provider, turn.started_at_ms, turn.ended_at_ms)),
                _ => None,
            })
            .collect();
        assert_eq!(turns, [(Provider::OpenClaude, 1_796_637_600_000, 1_796_637_606_000)]);
        assert!(evidence.iter().any(|e| matches!(e, Evidence::SessionLogged(Provider::OpenClaude, s) if s == SESSION)));
        let (mut writes, _) = responses(Provider::OpenClaude, text.as_bytes());
        let s = Some;
        let expected = [
            ("chatcmpl-1\u{1f}req_1".to_owned(), s(1200), s(0), s(18_000), s(240), None, s(19_440)),
            ("chatcmpl-2\u{1f}req_2".to_owned(), s(300), s(0), s(0), s(55), None, s(355)),
        ];
        assert_eq!(rows(Provider::OpenClaude, &writes), expected);
        assert!(writes.iter().all(|w| w.provider == Provider::OpenClaude && w.own_figure.is_none()));
        assert_eq!(writes[0].model.as_deref(), Some("deepseek-chat"));
        // A resumed session's file copies the history, ids and all.
        let (resumed, _) = responses(Provider::OpenClaude, log(&[full, side]).as_bytes());
        writes.extend(resumed);
        assert_eq!(rows(Provider::OpenClaude, &writes), expected, "the copies are the same responses");
    }

    /// A request OpenClaude's provider refused (its API-error line of kind
    /// `rate_limit`) is a limit hit under OpenClaude's name, no response.
    #[test]
    fn a_refused_request_is_a_limit_hit_of_openclaudes() {
        let refused = json!({"type": "assistant", "sessionId": SESSION, "timestamp": "2026-12-07T10:00:05.000Z",
            "isApiErrorMessage": true, "error": "rate_limit", "message": {"id": "m", "model": "<synthetic>",
            "role": "assistant", "content": [{"type": "text", "text": "API Error: Provider rate limit reached. Retry in a few seconds."}],
            "usage": {"input_tokens": 0, "output_tokens": 0}}});
        let (evidence, unparseable) = read_log(Provider::OpenClaude, log(&[refused]).as_bytes());
        assert_eq!(unparseable, 0);
        let limits: Vec<_> = evidence
            .iter()
            .filter_map(|e| match e {
                Evidence::Record(LedgerRecord::Limit(hit)) => Some(hit.provider),
                _ => None,
            })
            .collect();
        assert_eq!(limits, [Provider::OpenClaude]);
        assert!(!evidence.iter().any(|e| matches!(e, Evidence::Response(_))));
    }

    /// An empty transcript, one of bookkeeping lines only, and bytes that
    /// are no UTF-8 or no JSON hold no response and do not panic; the last
    /// response of a file, without its stop reason, is held until its own
    /// time is quiet long enough, then read.
    #[test]
    fn empty_broken_and_open_transcripts() {
        assert_eq!(responses(Provider::OpenClaude, b""), (vec![], 0));
        let bookkeeping = "{\"type\":\"queue-operation\",\"operation\":\"enqueue\",\"sessionId\":\"s\"}\n\
            {\"type\":\"last-prompt\",\"sessionId\":\"s\"}\n";
        assert_eq!(responses(Provider::OpenClaude, bookkeeping.as_bytes()), (vec![], 0));
        let (writes, unparseable) = responses(
            Provider::OpenClaude,
            b"{\"type\":\"assistant\",\"usage\":\xff\xfe}\n\xff\xfe\n{\"usage\": [1,\n",
        );
        assert_eq!((writes.len(), unparseable), (0, 2));
        let open = log(&[response(9, "2026-12-07T10:00:03.000Z", usage(5, 0, 7), None, false)]);
        let mut parser = LogParser::new(Provider::OpenClaude, Path::new(""), FileOffset::default());
        let mut out = Vec::new();
        assert!(parser.line(open.as_bytes(), 0, &mut out));
        parser.finish(1_796_637_603_000, &mut out);
        let finals: Vec<bool> = out
            .iter()
            .filter_map(|e| match e {
                Evidence::Response(w) => Some(w.is_final),
                _ => None,
            })
            .collect();
        assert_eq!(finals, [false], "held while it may still stream");
    }

    /// Where OpenClaude keeps its transcripts, and never where Claude Code's
    /// reader reads.
    #[test]
    fn its_transcripts_where_openclaude_keeps_them_and_never_claude_codes() {
        assert_eq!(OpenClaude.record_dirs(&env_of(&[("HOME", "/h")])), [PathBuf::from("/h/.openclaude/projects")]);
        let dirs = OpenClaude.record_dirs(&env_of(&[("HOME", "/h"), ("OPENCLAUDE_CONFIG_DIR", "/o")]));
        assert_eq!(dirs, [PathBuf::from("/o/projects")]);
        let dirs = OpenClaude.record_dirs(&env_of(&[("HOME", "/h"), ("CLAUDE_CONFIG_DIR", "/c")]));
        assert_eq!(dirs, [PathBuf::from("/h/.openclaude/projects")], "CLAUDE_CONFIG_DIR is Claude Code's");
        let dirs = OpenClaude.record_dirs(&env_of(&[("HOME", "/h"), ("OPENCLAUDE_CONFIG_DIR", "/h/.claude")]));
        assert!(dirs.is_empty(), "Claude Code's directory is read once, as Claude Code's: {dirs:?}");
        let dirs = OpenClaude.record_dirs(&env_of(&[("OPENCLAUDE_CONFIG_DIR", "/o"), ("CLAUDE_CONFIG_DIR", "/o")]));
        assert!(dirs.is_empty());
        assert!(OpenClaude.record_dirs(&env_of(&[])).is_empty());
        let path = "/h/.openclaude/projects/-home-dev-app/7c1e5a2b.jsonl";
        assert_eq!(OpenClaude.project_and_session(path), Some(("-home-dev-app", "7c1e5a2b")));
        assert!(OpenClaude.is_record_file(Path::new(path)));
        assert!(!OpenClaude.is_record_file(Path::new("/h/.openclaude/projects/-home-dev-app/7c1e5a2b.replay.json")));
    }
}
