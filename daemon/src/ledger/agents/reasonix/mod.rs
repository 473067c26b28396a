//! Reasonix (DeepSeek-Reasonix, the terminal and desktop coding agent): its
//! usage statistics, one JSON line a provider request appended to a file a
//! day (`<state root>/stats/YYYY-MM-DD.jsonl`). `README.md` beside this
//! file describes the format.
//!
//! - [`stats`]: the incremental reader of a day's file.
//! - here: where the files are, as Reasonix finds its state root.

mod stats;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, under_home};
use crate::ledger::stored::evidence::AgentState;

/// Reasonix, as [`Agent`].
#[derive(Debug)]
pub struct Reasonix;

impl Agent for Reasonix {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Reasonix,
            title: "Reasonix",
            verified: Verified::FormatFromSource,
            // Its recorder queues a record and drops it when the queue is
            // full rather than make a model stream wait for the disk.
            unrecorded_calls: Some("a request whose usage record its statistics queue dropped when full"),
            // Its usage rows keep reasoning and cache hits; no cache writes,
            // no cost Bee reads, no limit notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `stats/` of the state root: `REASONIX_STATE_HOME`, else
    /// `REASONIX_HOME` (`~` its home), else `~/.reasonix`.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let named = ["REASONIX_STATE_HOME", "REASONIX_HOME"].into_iter().find_map(env);
        let root = match named {
            Some(root) => with_home(env, PathBuf::from(root)),
            None => under_home(env, ".reasonix"),
        };
        root.map(|root| root.join("stats")).into_iter().collect()
    }

    /// A day's file, `YYYY-MM-DD.jsonl`, directly in `stats/`.
    fn is_record_file(&self, path: &Path) -> bool {
        let in_stats = path.parent().and_then(Path::file_name).is_some_and(|name| name == "stats");
        in_stats && path.file_name().and_then(|name| name.to_str()).is_some_and(stats::is_day_file)
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(stats::Stats::new(path, state))
    }
}

/// `path` with a leading `~` read as `HOME`, as Reasonix expands it.
fn with_home(env: Env<'_>, path: PathBuf) -> Option<PathBuf> {
    match path.strip_prefix("~") {
        Ok(rest) => under_home(env, "").map(|home| home.join(rest)),
        Err(_) => Some(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_state_root_and_day_files() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Reasonix.record_dirs(&env), [PathBuf::from("/h/.reasonix/stats")]);
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "REASONIX_HOME" => Some(OsString::from("/r")),
            _ => None,
        };
        assert_eq!(Reasonix.record_dirs(&env), [PathBuf::from("/r/stats")]);
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "REASONIX_HOME" => Some(OsString::from("/r")),
            "REASONIX_STATE_HOME" => Some(OsString::from("~/state")),
            _ => None,
        };
        assert_eq!(Reasonix.record_dirs(&env), [PathBuf::from("/h/state/stats")], "the state root first, `~` its home");
        assert!(Reasonix.record_dirs(&|_: &str| None).is_empty());
        assert!(Reasonix.is_record_file(Path::new("/h/.reasonix/stats/2026-08-04.jsonl")));
        assert!(!Reasonix.is_record_file(Path::new("/h/.reasonix/stats/.append.lock")));
        assert!(!Reasonix.is_record_file(Path::new("/h/.reasonix/stats/notes.jsonl")));
        assert!(!Reasonix.is_record_file(Path::new("/h/.reasonix/sessions/2026-08-04.jsonl")), "transcripts");
    }
}
