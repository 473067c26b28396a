//! Kiro (AWS's agentic IDE, and its CLI from v3): each session's event log
//! (`~/.kiro/sessions/<bucket>/<session>/messages.jsonl`), whose
//! `usage_summary` events list every model call of a turn by its request
//! id beside the turn's credits — and no token count anywhere. `README.md`
//! beside this file describes the format and its sources.
//!
//! - [`events`]: the incremental reader of a session's log.
//! - here: where the logs are.

mod events;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, under_home};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Kiro, as [`Agent`].
#[derive(Debug)]
pub struct Kiro;

impl Agent for Kiro {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Kiro,
            title: "Kiro",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "every call's tokens (it keeps a turn's credits, Kiro's own unit, shown as credits, and no token count) \
                 and the credits it bills outside a turn (compaction, session start)",
            ),
            // Credits a turn, no token, no cost in money, no limit notice,
            // no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `sessions` of `KIRO_HOME`, and of `~/.kiro` (the IDE and some CLI
    /// versions keep `~/.kiro` whatever `KIRO_HOME` says).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let named = env("KIRO_HOME").filter(|home| !home.is_empty()).map(|home| PathBuf::from(home).join("sessions"));
        let mut dirs: Vec<PathBuf> = named.into_iter().collect();
        if let Some(default) = under_home(env, ".kiro/sessions").filter(|default| !dirs.contains(default)) {
            dirs.push(default);
        }
        dirs
    }

    /// A session's `messages.jsonl` (`sessions/<bucket>/<session>/`); the
    /// CLI v2's `sessions/cli/<id>.jsonl` are no event logs.
    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "messages.jsonl")
            && path.ancestors().nth(3).and_then(Path::file_name).is_some_and(|name| name == "sessions")
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
    fn its_logs_are_under_kiro_home_and_the_default() {
        let env = |named: Option<&'static str>| {
            move |name: &str| match name {
                "HOME" => Some(OsString::from("/h")),
                "KIRO_HOME" => named.map(OsString::from),
                _ => None,
            }
        };
        assert_eq!(Kiro.record_dirs(&env(None)), [PathBuf::from("/h/.kiro/sessions")]);
        assert_eq!(
            Kiro.record_dirs(&env(Some("/k"))),
            [PathBuf::from("/k/sessions"), PathBuf::from("/h/.kiro/sessions")]
        );
        assert_eq!(Kiro.record_dirs(&env(Some("/h/.kiro"))), [PathBuf::from("/h/.kiro/sessions")]);
        assert!(Kiro.is_record_file(Path::new("/h/.kiro/sessions/9f3c1d0b7a4e2856/sess_0a1b/messages.jsonl")));
        assert!(!Kiro.is_record_file(Path::new("/h/.kiro/sessions/cli/0a1b.jsonl")));
        assert!(!Kiro.is_record_file(Path::new("/h/.kiro/sessions/9f3c/sess_0a1b/sub-executions/messages.jsonl")));
    }
}
