//! Warp (the terminal's Agent Mode): its state database, one row an agent
//! conversation, keeping each conversation's running token totals by
//! model — input and output together, no part apart. `README.md` beside
//! this file describes the format and why no token of it is shown.
//!
//! - [`conversations`]: the reader of the database.
//! - here: where it is.

mod conversations;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home, under_home};

/// Warp, as [`Agent`].
#[derive(Debug)]
pub struct Warp;

impl Agent for Warp {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Warp,
            title: "Warp",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "its calls one by one and every token's part: it keeps one total a conversation and model, input and \
                 output together, counted here as one response with its token columns unknown and its total under \
                 unsplit tokens",
            ),
            // Running totals with no part apart: no turn, no limit notice, no
            // reasoning, cache or cost (its credits are its own unit).
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// Stable's and Preview's databases: on Linux under `XDG_STATE_HOME`
    /// (by default `~/.local/state`), on macOS in Warp's group container,
    /// else its application support folder.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let state = env_or_home(env, "XDG_STATE_HOME", ".local/state");
        let linux = ["warp-terminal", "warp-terminal-preview"]
            .into_iter()
            .filter_map(|channel| state.as_ref().map(|state| state.join(channel)));
        let group = under_home(env, "Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support");
        let support = under_home(env, "Library/Application Support");
        let macos = [group, support]
            .into_iter()
            .flatten()
            .flat_map(|folder| ["dev.warp.Warp-Stable", "dev.warp.Warp-Preview"].map(|channel| folder.join(channel)));
        linux.chain(macos).map(|folder| folder.join("warp.sqlite")).collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "warp.sqlite")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&conversations::Conversations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_databases_on_linux_and_macos() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        let found: Vec<String> = Warp.record_dirs(&env).iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            found,
            [
                "/h/.local/state/warp-terminal/warp.sqlite",
                "/h/.local/state/warp-terminal-preview/warp.sqlite",
                "/h/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support/dev.warp.Warp-Stable/warp.sqlite",
                "/h/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support/dev.warp.Warp-Preview/warp.sqlite",
                "/h/Library/Application Support/dev.warp.Warp-Stable/warp.sqlite",
                "/h/Library/Application Support/dev.warp.Warp-Preview/warp.sqlite",
            ]
        );
        assert!(Warp.is_record_file(Path::new("/h/.local/state/warp-terminal/warp.sqlite")));
        assert!(!Warp.is_record_file(Path::new("/h/.local/state/warp-terminal/warp.sqlite-wal")));
    }
}
