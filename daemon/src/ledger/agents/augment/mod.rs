//! Auggie (Augment Code's CLI, npm `@augmentcode/auggie`): each session
//! (`~/.augment/sessions/<session id>.json`), a JSON document it rewrites
//! whole after each exchange with Augment's service. `README.md` beside
//! this file describes the format.
//!
//! - [`session`]: the reader of one session.

pub(crate) mod session;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home};
use crate::ledger::agents::whole::Documents;

/// Auggie, as [`Agent`].
#[derive(Debug)]
pub struct Augment;

/// Auggie's reader: each session read whole.
pub(crate) static SESSIONS: Documents =
    Documents { provider: Provider::Augment, keep: &session::SESSION, read: session::read };

impl Agent for Augment {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Augment,
            title: "Auggie (Augment Code)",
            verified: Verified::RealCli("0.36.0"),
            unrecorded_calls: Some(
                "its calls beside the conversation (prompt enhancement, history summarization and \
                 sub-agents, unless a feature flag records the last two; sub-agents are otherwise kept \
                 only as a session's credits or dollars)",
            ),
            // Its usage nodes keep cache writes and reads; no reasoning
            // count, no turn Bee times, no limit notice; its cost is
            // billed in credits by transaction, not by response, and is
            // not read.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `~/.augment/sessions`: the CLI moves it only with its
    /// `--augment-cache-dir` flag, which leaves no trace Bee could read,
    /// and reads no variable for it.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        under_home(env, ".augment/sessions").into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.extension().is_some_and(|extension| extension == "json")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&SESSIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::{noted, responses_of, tiny_items};
    use std::ffi::OsString;

    #[test]
    fn its_sessions_under_home() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Augment.record_dirs(&env), [PathBuf::from("/h/.augment/sessions")]);
        assert!(Augment.record_dirs(&|_: &str| None).is_empty());
        assert!(Augment.is_record_file(Path::new("/h/.augment/sessions/7524ff7e.json")));
        assert!(!Augment.is_record_file(Path::new("/h/.augment/task-storage/tasks/t1")));
    }

    /// A session on disk read whole, rewritten with another exchange and
    /// read again: each exchange once; an empty sessions folder, or a
    /// session cut short as it is being written, says nothing.
    #[test]
    fn a_session_on_disk_rewritten_adds_nothing_twice() {
        let dir = tempfile::tempdir().unwrap();
        let mut evidence = Vec::new();
        let path = dir.path().join("7524ff7e-7217-4996-9fcb-c8e23cc5623a.json");
        let whole = include_str!("../testdata/augment-0.36.0-continued.json");
        let mut first: serde_json::Value = serde_json::from_str(whole).unwrap();
        first["chatHistory"].as_array_mut().unwrap().truncate(1);
        std::fs::write(&path, first.to_string()).unwrap();
        SESSIONS.read(&path, &Default::default(), &mut evidence).unwrap();
        std::fs::write(&path, whole).unwrap();
        SESSIONS.read(&path, &Default::default(), &mut evidence).unwrap();
        let writes = responses_of(evidence);
        assert_eq!(crate::ledger::agents::tests::rows(Provider::Augment, &writes).len(), 2);

        let empty = tempfile::tempdir().unwrap();
        assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
        let cut = dir.path().join("cut.json");
        std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
        let mut evidence = Vec::new();
        assert_eq!(SESSIONS.read(&cut, &Default::default(), &mut evidence).unwrap().1, 0);
        assert!(evidence.is_empty());
    }

    /// Millions of tiny items where the reader does not look cost nothing
    /// and hide nothing; where it looks, the document is passed over and
    /// named (offset 0, its length), never read into a tree.
    #[test]
    fn tiny_items_are_passed_over_or_named() {
        let junk = tiny_items(1_500_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let read = |document: &str| {
            std::fs::write(&path, document).unwrap();
            let mut evidence = Vec::new();
            let (_, refused) = SESSIONS.read(&path, &Default::default(), &mut evidence).unwrap();
            (responses_of(evidence).len(), refused)
        };
        let _ = noted();
        assert_eq!(read(&r#"{"sessionId":"s","chatHistory":[{"exchange":{"request_id":"r1","request_message":@junk@,"response_nodes":[{"type":0,"content":@junk@},{"type":10,"timestamp_ms":1796560746569,"token_usage":{"input_tokens":5,"output_tokens":1}}]}}],"agentState":{"userGuidelines":@junk@}}"#.replace("@junk@", &junk)), (1, 0));
        assert!(noted().is_empty());
        let bad = r#"{"sessionId":"s","chatHistory":[{"exchange":{"request_id":"r1","response_nodes":[{"type":10,"token_usage":@junk@}]}}]}"#.replace("@junk@", &junk);
        assert_eq!(read(&bad), (0, 0));
        assert_eq!(noted(), [(0, bad.len() as u64, bee_proto::ledger::SkipReason::TooComplex)]);
    }
}
