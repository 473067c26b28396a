//! Junie (JetBrains' coding agent, its CLI): each session's event log
//! (`~/.junie/sessions/<session>/events.jsonl`). `README.md` beside this
//! file describes the format.
//!
//! - [`events`]: the incremental reader.

mod events;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, env_or_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Junie, as [`Agent`].
#[derive(Debug)]
pub struct Junie;

impl Agent for Junie {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Junie,
            title: "Junie",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its usage events keep cache writes and its own cost estimate; no
            // reasoning count, no limit notice Bee reads, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// `sessions/` of `JUNIE_HOME`, else of `~/.junie`.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        env_or_home(env, "JUNIE_HOME", ".junie").map(|dir| dir.join("sessions")).into_iter().collect()
    }

    /// A session's `events.jsonl` (not one in a task's folder under it).
    fn is_record_file(&self, path: &Path) -> bool {
        let in_task = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with("task-") || name.starts_with('.'));
        path.file_name().is_some_and(|name| name == "events.jsonl") && !in_task
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<events::Events>::new(path, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_sessions_and_their_event_logs() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Junie.record_dirs(&env), [PathBuf::from("/h/.junie/sessions")]);
        let env = |name: &str| (name == "JUNIE_HOME").then(|| OsString::from("/j"));
        assert_eq!(Junie.record_dirs(&env), [PathBuf::from("/j/sessions")]);
        assert!(Junie.record_dirs(&|_: &str| None).is_empty());
        assert!(Junie.is_record_file(Path::new("/h/.junie/sessions/session-260825-151015-1bxv/events.jsonl")));
        assert!(!Junie.is_record_file(Path::new("/h/.junie/sessions/s/task-260825-1/events.jsonl")));
        assert!(!Junie.is_record_file(Path::new("/h/.junie/sessions/index.jsonl")));
    }
}
