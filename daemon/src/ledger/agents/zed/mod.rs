//! Zed: its agent's threads database (`threads/threads.db` in Zed's data
//! directory), one row a thread, its data zstd-compressed JSON.
//! `README.md` beside this file describes the format.
//!
//! - [`threads`]: the reader of the threads.

pub(crate) mod threads;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home, xdg_data};

/// Zed, as [`Agent`].
#[derive(Debug)]
pub struct Zed;

impl Agent for Zed {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Zed,
            title: "Zed",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "every request of a prompt but its last: a thread keeps one usage a prompt, its latest request's, \
                 and only a running total of the rest",
            ),
            // A thread keeps each prompt's latest usage with cache writes,
            // no reasoning count, no cost, no limit notice, and no time but
            // the thread's own last update.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `threads/threads.db` of Zed's data directory: `zed/` of
    /// `XDG_DATA_HOME` (by default `~/.local/share`) on Linux,
    /// `~/Library/Application Support/Zed` on macOS. Zed reads no variable
    /// that moves it (its flatpak's `FLATPAK_XDG_DATA_HOME` is the host's
    /// `XDG_DATA_HOME`).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let linux = xdg_data(env, "zed");
        let macos = under_home(env, "Library/Application Support/Zed");
        linux.into_iter().chain(macos).map(|data| data.join("threads").join("threads.db")).collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "threads.db")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&threads::Threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_database_under_linux_and_macos_data_directories() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(
            Zed.record_dirs(&env),
            [
                PathBuf::from("/h/.local/share/zed/threads/threads.db"),
                PathBuf::from("/h/Library/Application Support/Zed/threads/threads.db"),
            ]
        );
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "XDG_DATA_HOME" => Some(OsString::from("/d")),
            _ => None,
        };
        assert_eq!(Zed.record_dirs(&env)[0], PathBuf::from("/d/zed/threads/threads.db"));
        assert!(Zed.is_record_file(Path::new("/d/zed/threads/threads.db")));
        assert!(!Zed.is_record_file(Path::new("/d/zed/threads/threads.db-wal")));
    }
}
