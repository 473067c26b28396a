//! OpenCode: its SQLite database (`$XDG_DATA_HOME/opencode/opencode.db`),
//! read by its own change markers. `README.md` beside this file describes
//! the format as observed from the real CLI.
//!
//! - [`database`]: the reader.

pub(crate) mod database;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader};
use crate::ledger::stored::evidence::Evidence;

/// What one `message` row's `data` of `session` is to the ledger, read
/// as ingestion reads it (within its bound, for the fields it reads): for
/// fuzzing, as ingestion reads rows in [`database`].
pub fn read_message(session: &str, data: &[u8]) -> Vec<Evidence> {
    let mut out = Vec::new();
    if let Ok(message) = database::parse_message(data) {
        database::read_message(session, &message, &mut out);
    }
    out
}

/// OpenCode, as [`Agent`].
#[derive(Debug)]
pub struct OpenCode;

impl Agent for OpenCode {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::OpenCode,
            title: "OpenCode",
            verified: Verified::RealCli("1.18.33"),
            unrecorded_calls: Some("the title call of each new session"),
            // Its messages keep reasoning, cache writes and its own `cost`; a
            // refused request (429) is recorded nowhere, and Bee times no turn
            // from its messages.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: true,
            },
        }
    }

    /// The database `OPENCODE_DB` names, else the `opencode/` directory of
    /// `XDG_DATA_HOME` (by default `~/.local/share`), as OpenCode finds it.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        if let Some(database) = env("OPENCODE_DB") {
            return vec![PathBuf::from(database)];
        }
        let data = env("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".local").join("share")));
        data.map(|data| data.join("opencode")).into_iter().collect()
    }

    /// `opencode.db`, or a channel's `opencode-<channel>.db`.
    fn is_record_file(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        name == "opencode.db" || (name.starts_with("opencode-") && name.ends_with(".db"))
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&database::Messages(Provider::OpenCode))
    }
}
