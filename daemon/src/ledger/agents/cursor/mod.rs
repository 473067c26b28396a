//! Cursor: its global state database (`User/globalStorage/state.vscdb`),
//! whose `cursorDiskKV` table keeps each chat message ("bubble") as JSON
//! under `bubbleId:<composer>:<bubble>`. `README.md` beside this file
//! describes the format.
//!
//! - [`bubbles`]: the reader of the bubbles.

pub(crate) mod bubbles;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home, under_home};

/// Cursor, as [`Agent`].
#[derive(Debug)]
pub struct Cursor;

/// Cursor's `User` directories: Linux's under `XDG_CONFIG_HOME` (by
/// default `~/.config`), as Electron finds it, and macOS's.
pub(crate) fn user_dirs(env: Env<'_>, app: &str) -> Vec<PathBuf> {
    let linux = env_or_home(env, "XDG_CONFIG_HOME", ".config").map(|config| config.join(app).join("User"));
    let macos = under_home(env, "Library/Application Support").map(|support| support.join(app).join("User"));
    linux.into_iter().chain(macos).collect()
}

impl Agent for Cursor {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Cursor,
            title: "Cursor",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some("Tab completions and any request not kept as a chat bubble"),
            // A bubble keeps input and output counts (zeros in current
            // builds), its model and its time; no cache counter, reasoning,
            // cost, limit notice or turn.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `globalStorage/state.vscdb` of Cursor's `User` directory (Cursor
    /// reads no variable that moves it).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        user_dirs(env, "Cursor").into_iter().map(|user| user.join("globalStorage").join("state.vscdb")).collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "state.vscdb")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&bubbles::Bubbles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_database_under_linux_and_macos_user_directories() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(
            Cursor.record_dirs(&env),
            [
                PathBuf::from("/h/.config/Cursor/User/globalStorage/state.vscdb"),
                PathBuf::from("/h/Library/Application Support/Cursor/User/globalStorage/state.vscdb"),
            ]
        );
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "XDG_CONFIG_HOME" => Some(OsString::from("/x")),
            _ => None,
        };
        assert_eq!(Cursor.record_dirs(&env)[0], PathBuf::from("/x/Cursor/User/globalStorage/state.vscdb"));
        assert!(Cursor.record_dirs(&|_: &str| None).is_empty());
        assert!(Cursor.is_record_file(Path::new("/h/.config/Cursor/User/globalStorage/state.vscdb")));
        assert!(!Cursor.is_record_file(Path::new("/h/.config/Cursor/User/globalStorage/state.vscdb-wal")));
    }
}
