//! Grok CLI (superagent-ai's `grok-cli`, published as `grok-dev`; once
//! npm's `@vibe-kit/grok-cli`): its database (`~/.grok/grok.db`), whose
//! `usage_events` table keeps one row a user turn or side call, each the
//! total of that turn's LLM calls. `README.md` beside this file describes
//! the format.
//!
//! - [`events`]: the reader of the usage events.

mod events;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// Grok CLI, as [`Agent`].
#[derive(Debug)]
pub struct GrokCli;

/// Grok CLI's reader: the usage events of its database, read whenever it
/// changes from where the last pass stopped.
struct Events;

impl WholeFileReader for Events {
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        events::read(path, state, out)
    }
}

impl Agent for GrokCli {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::GrokCli,
            title: "Grok CLI",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "its calls one by one: it keeps one total a user turn (and one a title, recap or sub-agent run), counted here as one response",
            ),
            // One total a turn: input and output only (no cache counter, no
            // reasoning told apart), its own cost estimate; no call one by
            // one, so no turn span and no limit notice.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: true,
            },
        }
    }

    /// `~/.grok/grok.db` (Grok CLI reads no variable that moves it; the rest
    /// of `~/.grok`, which xAI's Grok Build shares, is never walked).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        under_home(env, ".grok").map(|home| home.join(events::DATABASE)).into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        events::is_database(path)
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// The same place on Linux and macOS (`os.homedir()`'s `.grok`).
    #[test]
    fn its_database_under_its_home() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(GrokCli.record_dirs(&env), [PathBuf::from("/h/.grok/grok.db")]);
        assert!(GrokCli.record_dirs(&|_: &str| None).is_empty());
        assert!(GrokCli.is_record_file(Path::new("/h/.grok/grok.db")));
        assert!(!GrokCli.is_record_file(Path::new("/h/.grok/grok.db-wal")));
        assert!(!GrokCli.is_record_file(Path::new("/h/.grok/user-settings.json")));
        assert!(!GrokCli.is_record_file(Path::new("/h/.grok/sessions/s1/unified.jsonl")));
    }
}
