//! OpenClaw: its agents' session logs (`<state dir>/agents/<agent>/
//! sessions/<session>.jsonl`, and the `.jsonl.reset.*` / `.jsonl.deleted.*`
//! archives it renames them to), which are pi's session logs: OpenClaw runs
//! pi's agent. `README.md` beside this file describes the format.

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, env_or_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::agents::pi::session::{PiLog, Session};
use crate::ledger::stored::evidence::AgentState;

/// OpenClaw, as [`Agent`].
#[derive(Debug)]
pub struct OpenClaw;

impl PiLog for OpenClaw {
    const PROVIDER: Provider = Provider::OpenClaw;
}

impl Agent for OpenClaw {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::OpenClaw,
            title: "OpenClaw",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some("compaction and summary calls"),
            // pi's sessions: cache writes and its own `usage.cost`, no
            // reasoning, no limit notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// `agents/` of `OPENCLAW_STATE_DIR`, else of `~/.openclaw` (the rest
    /// of its state directory is the user's workspace, never walked).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        env_or_home(env, "OPENCLAW_STATE_DIR", ".openclaw").map(|dir| dir.join("agents")).into_iter().collect()
    }

    /// A session log, live or archived by a reset or a delete.
    fn is_record_file(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        name.find(".jsonl").is_some_and(|at| {
            let suffix = &name[at..];
            suffix == ".jsonl" || suffix.starts_with(".jsonl.reset.") || suffix.starts_with(".jsonl.deleted.")
        })
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<Session<OpenClaw>>::new(path, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{responses, rows};

    /// A session, its reset archive (the same entries under another
    /// name) and a fork: each response once by its id; an entry without an
    /// id is keyed by what its copies keep; a response through the
    /// `claude-cli` backend is Claude Code's, not OpenClaw's; a broken line
    /// is counted.
    #[test]
    fn archives_and_forks_count_each_response_once() {
        let log = include_bytes!("../testdata/openclaw-session.jsonl");
        let (writes, unparseable) = responses(Provider::OpenClaw, log);
        assert_eq!(unparseable, 1, "the truncated line");
        let s = Some;
        let found = rows(Provider::OpenClaw, &writes);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            found[1..],
            [
                ("msg_oc_1".into(), s(12), s(1000), s(500), s(30), None, s(1542)),
                ("msg_oc_2".into(), s(8), s(40), s(1500), s(20), None, s(1568)),
            ]
        );
        assert_eq!((found[0].1, found[0].4, found[0].6), (s(5), s(7), s(12)), "the entry without an id: {found:?}");
        assert!(OpenClaw.is_record_file(Path::new("a/s.jsonl.reset.2026-03-20T06-34-44.520Z")));
        assert!(!OpenClaw.is_record_file(Path::new("a/s.json")));
    }
}
