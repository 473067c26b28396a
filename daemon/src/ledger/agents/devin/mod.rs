//! Devin CLI (Cognition's terminal agent): each session's transcript
//! (`~/.local/share/devin/cli/transcripts/<session>.json`), a JSON document
//! in the Agent Trajectory Interchange Format that it rewrites whole.
//! `README.md` beside this file describes the format.
//!
//! - [`transcript`]: the reader of one transcript.

pub(crate) mod transcript;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home, xdg_data};
use crate::ledger::agents::whole::Documents;

/// Devin CLI, as [`Agent`].
#[derive(Debug)]
pub struct Devin;

/// Devin's reader: each transcript read whole.
pub(crate) static TRANSCRIPTS: Documents =
    Documents { provider: Provider::Devin, keep: &transcript::TRANSCRIPT, read: transcript::read };

impl Agent for Devin {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Devin,
            title: "Devin CLI",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its steps keep cached input; no reasoning count, no cache
            // writes, no cost in money (it bills in ACUs), no limit notice,
            // no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `devin/cli/transcripts/` of `XDG_DATA_HOME` (by default
    /// `~/.local/share`, on macOS too), and of `~/.local/share` where the
    /// variable moves the first.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = xdg_data(env, "devin/cli/transcripts").into_iter().collect();
        if let Some(default) = under_home(env, ".local/share/devin/cli/transcripts")
            && !dirs.contains(&default)
        {
            dirs.push(default);
        }
        dirs
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.extension().is_some_and(|extension| extension == "json")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&TRANSCRIPTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_transcripts_under_the_data_directory() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Devin.record_dirs(&env), [PathBuf::from("/h/.local/share/devin/cli/transcripts")]);
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/h")),
            "XDG_DATA_HOME" => Some(OsString::from("/d")),
            _ => None,
        };
        assert_eq!(
            Devin.record_dirs(&env),
            [PathBuf::from("/d/devin/cli/transcripts"), PathBuf::from("/h/.local/share/devin/cli/transcripts")]
        );
        assert!(Devin.record_dirs(&|_: &str| None).is_empty());
        assert!(Devin.is_record_file(Path::new("/h/.local/share/devin/cli/transcripts/acidic-stallion.json")));
        assert!(!Devin.is_record_file(Path::new("/h/.local/share/devin/cli/sessions.db")));
    }

    /// An empty transcript directory's only kind of file read whole: a
    /// document with no steps is a session with no response.
    #[test]
    fn an_empty_transcript_is_a_session_without_responses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quiet-otter.json");
        std::fs::write(&path, r#"{"schema_version":"ATIF-v1.7","session_id":"quiet-otter","agent":{},"steps":[]}"#)
            .unwrap();
        let mut evidence = Vec::new();
        let (_, refused) = TRANSCRIPTS.read(&path, &Default::default(), &mut evidence).unwrap();
        assert_eq!(refused, 0);
        assert!(crate::ledger::agents::tests::responses_of(evidence).is_empty());
    }

    /// Millions of tiny items where the reader does not look cost nothing
    /// and hide nothing; where it looks, the document is passed over and
    /// named (offset 0, its length), never read into a tree.
    #[test]
    fn tiny_items_are_passed_over_or_named() {
        use crate::ledger::agents::tests::{noted, responses_of, tiny_items};
        let junk = tiny_items(1_500_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let read = |document: &str| {
            std::fs::write(&path, document).unwrap();
            let mut evidence = Vec::new();
            let (_, refused) = TRANSCRIPTS.read(&path, &Default::default(), &mut evidence).unwrap();
            (responses_of(evidence).len(), refused)
        };
        let _ = noted();
        assert_eq!(read(&r#"{"schema_version":"ATIF-v1.7","session_id":"s","agent":{"tool_definitions":@junk@},"steps":[{"step_id":1,"timestamp":"2026-10-08T03:00:00Z","source":"agent","message":@junk@,"metrics":{"prompt_tokens":5,"completion_tokens":1}}]}"#.replace("@junk@", &junk)), (1, 0));
        assert!(noted().is_empty());
        let bad = r#"{"schema_version":"ATIF-v1.7","session_id":"s","steps":[{"step_id":1,"source":"agent","metrics":{"prompt_tokens":@junk@}}]}"#.replace("@junk@", &junk);
        assert_eq!(read(&bad), (0, 0));
        assert_eq!(noted(), [(0, bad.len() as u64, bee_proto::ledger::SkipReason::TooComplex)]);
    }
}
