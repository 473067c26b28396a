//! Crush (Charm's agent): each project's database (`<project>/.crush/
//! crush.db`, or the data directory its config names), found through the
//! list of projects Crush keeps (`projects.json` in its global data
//! directory). `README.md` beside this file describes the format.
//!
//! - [`messages`]: the reader of one message row.

pub(crate) mod messages;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Verified, WholeFileReader, xdg_data};
use crate::ledger::agents::whole::Rows;

/// Crush, as [`Agent`].
#[derive(Debug)]
pub struct Crush;

/// Crush's reader: every assistant message, whenever the database changes.
static MESSAGES: Rows = Rows { provider: Provider::Crush, query: messages::QUERY, read: messages::read };

/// Longest list of projects read.
const MAX_PROJECTS_BYTES: u64 = 4 * 1024 * 1024;

impl Agent for Crush {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Crush,
            title: "Crush",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "every call's tokens: it keeps each response but only the latest call's context size, so its tokens are unknown",
            ),
        }
    }

    /// The data directory of each project `projects.json` lists (in
    /// `CRUSH_GLOBAL_DATA`, else the `crush/` directory of `XDG_DATA_HOME`,
    /// by default `~/.local/share`). A list that cannot be read is no
    /// project; an entry that is no absolute path is skipped.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let data = env("CRUSH_GLOBAL_DATA").map(PathBuf::from).or_else(|| xdg_data(env, "crush"));
        let Some(list) = data.map(|data| data.join("projects.json")) else { return Vec::new() };
        let Ok(Some(list)) = crate::ledger::agents::whole::read_document_within(&list, MAX_PROJECTS_BYTES) else {
            return Vec::new();
        };
        let projects =
            list.get("projects").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or_default();
        projects
            .iter()
            .filter_map(|project| project.get("data_dir").and_then(serde_json::Value::as_str))
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "crush.db")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&MESSAGES)
    }
}
