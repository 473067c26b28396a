//! GitHub Copilot in VS Code: the Copilot Chat extension's span store
//! (`User/globalStorage/github.copilot-chat/agent-traces.db`), an SQLite
//! database of the OpenTelemetry spans of its model calls. `README.md`
//! beside this file describes the format.
//!
//! - [`traces`]: the reader of one chat span.

pub(crate) mod traces;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home, under_home};
use crate::ledger::agents::whole::Rows;

/// GitHub Copilot in VS Code, as [`Agent`].
#[derive(Debug)]
pub struct CopilotVsCode;

/// Its reader: every chat span of the store, whenever it changes.
static SPANS: Rows = Rows { provider: Provider::CopilotVsCode, query: traces::QUERY, read: traces::read };

/// The VS Code builds whose `User` directories hold the extension's
/// storage.
const BUILDS: [&str; 3] = ["Code", "Code - Insiders", "VSCodium"];

/// The store's name, under the extension's global storage.
const STORE: &str = "agent-traces.db";

/// Each build's `User` directory: Linux's under `XDG_CONFIG_HOME` (by
/// default `~/.config`), macOS's under `~/Library/Application Support`,
/// and a remote server's (`~/.vscode-server/data/User`).
fn user_dirs(env: Env<'_>) -> Vec<PathBuf> {
    let linux = env_or_home(env, "XDG_CONFIG_HOME", ".config");
    let macos = under_home(env, "Library/Application Support");
    let mut dirs: Vec<PathBuf> = [linux, macos]
        .into_iter()
        .flatten()
        .flat_map(|base| BUILDS.iter().map(move |build| base.join(build).join("User")))
        .collect();
    for server in [".vscode-server/data/User", ".vscode-server-insiders/data/User"] {
        dirs.extend(under_home(env, server));
    }
    dirs
}

impl Agent for CopilotVsCode {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::CopilotVsCode,
            title: "GitHub Copilot in VS Code",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "every call while its span store is off (`github.copilot.chat.otel.dbSpanExporter.enabled`), and calls older than the store's seven days or past its hundred sessions",
            ),
            // Its chat spans keep cached input and, where the model reports
            // it, reasoning; no cache writes, no cost, no limit notice, no turn
            // Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// The store in the extension's global storage of each build's `User`
    /// directory (the extension reads no variable that moves it).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        user_dirs(env).into_iter().map(|user| user.join("globalStorage/github.copilot-chat").join(STORE)).collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == STORE)
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&SPANS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_store_under_every_build_on_linux_and_macos() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        let dirs = CopilotVsCode.record_dirs(&env);
        let store = "User/globalStorage/github.copilot-chat/agent-traces.db";
        assert_eq!(dirs.len(), 8);
        assert_eq!(dirs[0], PathBuf::from(format!("/h/.config/Code/{store}")));
        assert_eq!(dirs[1], PathBuf::from(format!("/h/.config/Code - Insiders/{store}")));
        assert_eq!(dirs[2], PathBuf::from(format!("/h/.config/VSCodium/{store}")));
        assert_eq!(dirs[3], PathBuf::from(format!("/h/Library/Application Support/Code/{store}")));
        assert_eq!(
            dirs[6],
            PathBuf::from("/h/.vscode-server/data/User/globalStorage/github.copilot-chat/agent-traces.db")
        );
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "XDG_CONFIG_HOME" => Some(OsString::from("/x")),
            _ => None,
        };
        assert_eq!(CopilotVsCode.record_dirs(&env)[0], PathBuf::from(format!("/x/Code/{store}")));
        assert!(CopilotVsCode.record_dirs(&|_: &str| None).is_empty());
        assert!(CopilotVsCode.is_record_file(Path::new(&format!("/h/.config/Code/{store}"))));
        assert!(!CopilotVsCode.is_record_file(Path::new("/h/.config/Code/User/agent-traces.db-wal")));
    }
}
