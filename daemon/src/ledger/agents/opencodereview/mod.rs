//! OpenCodeReview (Alibaba's `ocr`, an AI code reviewer): each review
//! session's log (`~/.opencodereview/sessions/<repository>/<session>.jsonl`).
//! `README.md` beside this file describes the format.
//!
//! - [`session`]: the incremental reader of a session's log.

mod session;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, under_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// OpenCodeReview, as [`Agent`].
#[derive(Debug)]
pub struct OpenCodeReview;

impl Agent for OpenCodeReview {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::OpenCodeReview,
            title: "OpenCodeReview",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its `llm_response` records keep cache reads and writes; no
            // reasoning count, no cost, no limit notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `~/.opencodereview/sessions` (it reads no variable for it).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        under_home(env, ".opencodereview/sessions").into_iter().collect()
    }

    /// A session's log, in its repository's folder.
    fn is_record_file(&self, path: &Path) -> bool {
        path.extension().is_some_and(|extension| extension == "jsonl")
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<session::SessionLog>::new(path, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_sessions_under_home() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(OpenCodeReview.record_dirs(&env), [PathBuf::from("/h/.opencodereview/sessions")]);
        assert!(OpenCodeReview.record_dirs(&|_: &str| None).is_empty());
        assert!(OpenCodeReview.is_record_file(Path::new("/h/.opencodereview/sessions/home-dev-app/5f0c.jsonl")));
        assert!(!OpenCodeReview.is_record_file(Path::new("/h/.opencodereview/sessions/home-dev-app/5f0c.lock")));
    }
}
