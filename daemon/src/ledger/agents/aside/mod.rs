//! Aside (a browser agent): each session's transcript
//! (`~/.aside/u/<account>/sessions/<session>/messages.jsonl`), one message a
//! line. `README.md` beside this file describes the format.
//!
//! - [`messages`]: the incremental reader.

mod messages;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, under_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Aside, as [`Agent`].
#[derive(Debug)]
pub struct Aside;

impl Agent for Aside {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Aside,
            title: "Aside",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its assistant messages keep both caches, reasoning (a part of
            // output) and its own cost; no limit notice Bee reads, no turn
            // Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// `~/.aside/u` (every account's folder; Aside reads no variable for it).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        under_home(env, ".aside/u").into_iter().collect()
    }

    /// A session's `messages.jsonl` (`<account>/sessions/<session>/`), not a
    /// file of that name elsewhere in an account (its memory, a session's
    /// artifacts).
    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "messages.jsonl")
            && path.parent().and_then(Path::parent).and_then(Path::file_name).is_some_and(|name| name == "sessions")
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<messages::Messages>::new(path, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn every_accounts_session_transcripts() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Aside.record_dirs(&env), [PathBuf::from("/h/.aside/u")]);
        assert!(Aside.record_dirs(&|_: &str| None).is_empty());
        assert!(Aside.is_record_file(Path::new("/h/.aside/u/0/sessions/2026-09-05_one/messages.jsonl")));
        assert!(Aside.is_record_file(Path::new("/h/.aside/u/1/sessions/s/messages.jsonl")));
        for other in [
            "/h/.aside/u/0/memory/messages.jsonl",
            "/h/.aside/u/0/passwords/messages.jsonl",
            "/h/.aside/u/0/sessions/s/artifacts/messages.jsonl",
            "/h/.aside/u/0/sessions/s/other.jsonl",
        ] {
            assert!(!Aside.is_record_file(Path::new(other)), "{other}");
        }
    }
}
