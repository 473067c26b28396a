//! Meept (a Go agent daemon): its metrics database
//! (`$MEEPT_HOME/metrics.db`, by default `~/.meept/metrics.db`), whose
//! `llm_calls` table keeps one row a provider call. `README.md` beside
//! this file describes the format.
//!
//! - [`calls`]: the reader of the calls.

mod calls;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// Meept, as [`Agent`].
#[derive(Debug)]
pub struct Meept;

/// Meept's reader: the calls of its metrics database, read whenever it
/// changes from where the last pass stopped.
struct Calls;

impl WholeFileReader for Calls {
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        calls::read(path, state, out)
    }
}

impl Agent for Meept {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Meept,
            title: "Meept",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // One row a call: reasoning and cache writes where its provider
            // reported them, no cost, no limit notice, no turn.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// The metrics database of `MEEPT_HOME`, else `~/.meept/metrics.db`
    /// (the rest of its home is the agent's own state and never walked).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        env_or_home(env, "MEEPT_HOME", ".meept").map(|home| home.join(calls::DATABASE)).into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        calls::is_database(path)
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Calls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_database_in_its_home() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Meept.record_dirs(&env), [PathBuf::from("/h/.meept/metrics.db")]);
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "MEEPT_HOME" => Some(OsString::from("/m")),
            _ => None,
        };
        assert_eq!(Meept.record_dirs(&env), [PathBuf::from("/m/metrics.db")]);
        assert!(Meept.record_dirs(&|_: &str| None).is_empty());
        assert!(Meept.is_record_file(Path::new("/h/.meept/metrics.db")));
        assert!(!Meept.is_record_file(Path::new("/h/.meept/metrics.db-wal")));
        assert!(!Meept.is_record_file(Path::new("/h/.meept/memory.db")));
    }
}
