//! Windsurf: its workspace state databases
//! (`User/workspaceStorage/<hash>/state.vscdb`), which hold its editor's
//! state and no usage: Windsurf keeps its Cascade conversations encrypted,
//! elsewhere. `README.md` beside this file describes what is there.
//!
//! - [`state`]: the reader, which finds no response to count.

pub(crate) mod state;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader};
use crate::ledger::agents::cursor::user_dirs;

/// Windsurf, as [`Agent`].
#[derive(Debug)]
pub struct Windsurf;

impl Agent for Windsurf {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Windsurf,
            title: "Windsurf",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "every call: it keeps its Cascade conversations only encrypted, and its state databases hold no usage",
            ),
            // Nothing of a call is in its readable records: no turn, no
            // limit notice, no counter, no cost.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `workspaceStorage/` of Windsurf's `User` directory (Linux's under
    /// `XDG_CONFIG_HOME`, by default `~/.config`, and macOS's).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        user_dirs(env, "Windsurf").into_iter().map(|user| user.join("workspaceStorage")).collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "state.vscdb")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&state::WorkspaceState)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_workspace_databases_under_linux_and_macos_user_directories() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(
            Windsurf.record_dirs(&env),
            [
                PathBuf::from("/h/.config/Windsurf/User/workspaceStorage"),
                PathBuf::from("/h/Library/Application Support/Windsurf/User/workspaceStorage"),
            ]
        );
        assert!(Windsurf.is_record_file(Path::new("/w/workspaceStorage/9f1e/state.vscdb")));
        assert!(!Windsurf.is_record_file(Path::new("/w/workspaceStorage/9f1e/workspace.json")));
    }
}
