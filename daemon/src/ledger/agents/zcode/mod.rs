//! ZCode (Z.ai's coding agent) CLI: its database
//! (`~/.zcode/cli/db/db.sqlite`), whose `model_usage` table keeps one row
//! a model request. `README.md` beside this file describes the format.
//!
//! - [`usage`]: the reader of the requests.

mod usage;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home};
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// ZCode (Z.ai), as [`Agent`].
#[derive(Debug)]
pub struct ZCode;

/// ZCode's reader: the requests of its database, read whenever it changes
/// from where the last pass stopped.
struct Requests;

impl WholeFileReader for Requests {
    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        usage::read(path, state, out)
    }
}

impl Agent for ZCode {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::ZCode,
            title: "ZCode (Z.ai)",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // One row a request: reasoning and both caches; no cost, no
            // limit notice; turns are not derived from its times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `~/.zcode/cli/db/db.sqlite` (ZCode reads no variable that moves it;
    /// the rest of its home is never walked).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        under_home(env, ".zcode/cli/db").map(|db| db.join(usage::DATABASE)).into_iter().collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        usage::is_database(path)
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// The same place on Linux and macOS (the desktop app's
    /// `~/Library/Application Support/ZCode` keeps no usage).
    #[test]
    fn its_database_under_its_home() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(ZCode.record_dirs(&env), [PathBuf::from("/h/.zcode/cli/db/db.sqlite")]);
        assert!(ZCode.record_dirs(&|_: &str| None).is_empty());
        assert!(ZCode.is_record_file(Path::new("/h/.zcode/cli/db/db.sqlite")));
        assert!(!ZCode.is_record_file(Path::new("/h/.zcode/cli/db/db.sqlite-wal")));
        assert!(!ZCode.is_record_file(Path::new("/h/.zcode/cli/log/2026-06-20.jsonl")));
    }
}
