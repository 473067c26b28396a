//! Muse Code (Meta's coding agent): each session's event journal
//! (`~/.local/share/muse/sessions/YYYY/MM/DD/<session>/session.jsonl`, a
//! subagent's under its parent's `subagent/<child>/`). `README.md` beside
//! this file describes the format.
//!
//! - [`session`]: the incremental reader.

mod session;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified, under_home, xdg_data};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Muse Code, as [`Agent`].
#[derive(Debug)]
pub struct Muse;

impl Agent for Muse {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Muse,
            title: "Muse Code",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its `model_completed` events keep both caches and reasoning; no
            // cost, no limit notice Bee reads, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `muse/sessions/` of `XDG_DATA_HOME` (by default `~/.local/share`, on
    /// macOS too), and of `~/.local/share` where the variable moves the
    /// first (its readers find it there whatever the variable says).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = xdg_data(env, "muse/sessions").into_iter().collect();
        if let Some(default) = under_home(env, ".local/share/muse/sessions")
            && !dirs.contains(&default)
        {
            dirs.push(default);
        }
        dirs
    }

    /// A session's journal, the main agent's or a subagent's.
    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "session.jsonl")
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<session::Session>::new(path, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_sessions_under_the_data_directory() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Muse.record_dirs(&env), [PathBuf::from("/h/.local/share/muse/sessions")]);
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "XDG_DATA_HOME" => Some(OsString::from("/d")),
            _ => None,
        };
        assert_eq!(
            Muse.record_dirs(&env),
            [PathBuf::from("/d/muse/sessions"), PathBuf::from("/h/.local/share/muse/sessions")]
        );
        assert!(Muse.record_dirs(&|_: &str| None).is_empty());
        let session = "/h/.local/share/muse/sessions/2026/09/18/01a0b7d1-b7af-7de2-8369-4f4815ae1d72";
        assert!(Muse.is_record_file(Path::new(&format!("{session}/session.jsonl"))));
        assert!(Muse.is_record_file(Path::new(&format!(
            "{session}/subagent/01a0b7df-bac6-75d2-b28e-8dab127205f0/session.jsonl"
        ))));
        assert!(!Muse.is_record_file(Path::new(&format!("{session}/events.jsonl"))));
    }
}
