//! Crush (Charm's agent): each project's database (`<project>/.crush/
//! crush.db`, or the data directory its config names), found through the
//! list of projects Crush keeps (`projects.json` in its global data
//! directory). `README.md` beside this file describes the format.
//!
//! - [`messages`]: the reader of one message row.

pub(crate) mod messages;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, xdg_data};
use crate::ledger::agents::sparse::keep;
use crate::ledger::agents::whole::{Document, Rows, read_document_within};

/// Crush, as [`Agent`].
#[derive(Debug)]
pub struct Crush;

/// Crush's reader: every assistant message, whenever the database changes.
static MESSAGES: Rows = Rows { provider: Provider::Crush, query: messages::QUERY, read: messages::read };

/// Longest list of projects read.
const MAX_PROJECTS_BYTES: u64 = 4 * 1024 * 1024;

keep! {
    /// What is read of the list of projects.
    PROJECTS = ["projects/data_dir"];
}

impl Agent for Crush {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Crush,
            title: "Crush",
            verified: Verified::FormatFromSource,
            unrecorded_calls: Some(
                "every call's tokens: it keeps each response but only the latest call's context size, so its tokens are unknown",
            ),
            // Its messages keep no token counts at all; its sessions keep its
            // own cost estimate. No limit notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: true,
            },
        }
    }

    /// The data directory of each project `projects.json` lists (in
    /// `CRUSH_GLOBAL_DATA`, else the `crush/` directory of `XDG_DATA_HOME`,
    /// by default `~/.local/share`). A list that cannot be read is no
    /// project; an entry that is no absolute path is skipped.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let data = env("CRUSH_GLOBAL_DATA").map(PathBuf::from).or_else(|| xdg_data(env, "crush"));
        let Some(list) = data.map(|data| data.join("projects.json")) else { return Vec::new() };
        let list = match read_document_within(&list, MAX_PROJECTS_BYTES, &PROJECTS) {
            Ok(Document::Read(list)) => list,
            // Looked for on every walk, outside any file's reading: said
            // here, not named with a file's skipped records.
            Ok(Document::Oversized(bytes) | Document::TooComplex(bytes)) => {
                tracing::debug!(file = %list.display(), bytes, "Crush's list of projects passed over");
                return Vec::new();
            }
            Ok(Document::NotJson) | Err(_) => return Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::agents::tests::tiny_items;
    use std::ffi::OsString;

    /// The projects' data directories, read past millions of tiny items
    /// where nothing is read; a list over its bound is no project.
    #[test]
    fn projects_are_read_within_their_bound() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_owned();
        let env = |name: &str| (name == "CRUSH_GLOBAL_DATA").then(|| OsString::from(&data));
        let list = format!(
            r#"{{"projects":[{{"path":"/w","data_dir":"/w/.crush","history":{}}},{{"data_dir":"relative"}}]}}"#,
            tiny_items(1_000_000)
        );
        std::fs::write(data.join("projects.json"), &list).unwrap();
        assert_eq!(Crush.record_dirs(&env), [PathBuf::from("/w/.crush")]);
        std::fs::File::create(data.join("projects.json")).unwrap().set_len(MAX_PROJECTS_BYTES + 1).unwrap();
        assert!(Crush.record_dirs(&env).is_empty());
    }
}
