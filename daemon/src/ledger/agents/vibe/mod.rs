//! Mistral Vibe (Mistral AI's terminal coding agent, PyPI `mistral-vibe`):
//! its sessions under `$VIBE_HOME/logs/session/` (by default `~/.vibe`),
//! each a JSON document it rewrites whole that keeps the session's running
//! totals: a unified store's projection (Vibe 2.26 and later), a 2.x
//! session's `meta.json`, a 1.x session file. `README.md` beside this file
//! describes the format.
//!
//! - [`unified`]: the reader of a unified store's projection.
//! - [`meta`]: the reader of a 2.x `meta.json` or a 1.x session file.

pub(crate) mod meta;
pub(crate) mod unified;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, under_home};
use crate::ledger::agents::whole::Documents;
use crate::ledger::stored::evidence::{AgentState, Evidence};

/// Mistral Vibe, as [`Agent`].
#[derive(Debug)]
pub struct MistralVibe;

/// The reader of a 2.x `meta.json` or a 1.x session file, read whole.
pub(crate) static SESSIONS: Documents =
    Documents { provider: Provider::MistralVibe, keep: &meta::META, read: meta::read };

/// The reader of a unified store's projection, read whole.
pub(crate) static PROJECTIONS: Documents =
    Documents { provider: Provider::MistralVibe, keep: &unified::PROJECTION, read: unified::read };

/// Vibe's reader: each document read whole by the reader of its kind.
struct Kinds;

impl WholeFileReader for Kinds {
    fn reads_documents(&self) -> bool {
        true
    }

    fn read(&self, path: &Path, state: &AgentState, out: &mut Vec<Evidence>) -> std::io::Result<(AgentState, u64)> {
        if unified::is_projection(path) { PROJECTIONS.read(path, state, out) } else { SESSIONS.read(path, state, out) }
    }
}

impl Agent for MistralVibe {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::MistralVibe,
            title: "Mistral Vibe",
            verified: Verified::RealCli("3.0.3"),
            unrecorded_calls: Some(
                "its calls one by one: it keeps one running total a session, counted here as one response",
            ),
            // A session's running totals: no turn, no limit notice, no
            // reasoning, no cache writes (cache reads where its version
            // counts them); its worst-case cost estimate is not read.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `logs/session/` of `VIBE_HOME` (a leading `~` is the home, as Vibe
    /// expands it), else of `~/.vibe`.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let home = match env("VIBE_HOME") {
            Some(set) => match set.to_str() {
                Some("~") => under_home(env, ""),
                Some(text) => match text.strip_prefix("~/") {
                    Some(rest) => under_home(env, rest),
                    None => Some(PathBuf::from(text)),
                },
                None => Some(PathBuf::from(set)),
            },
            None => under_home(env, ".vibe"),
        };
        home.map(|home| home.join("logs").join("session")).into_iter().collect()
    }

    /// A unified store's projection (`unified/<id>/generations/<generation>/
    /// projection-state.json`); a 2.x session folder's `meta.json` (a
    /// sub-agent's too, under its session's `agents/`; not a unified
    /// store's, which keeps no usage); a Vibe 1.x session file: a `.json`
    /// directly in `logs/session/`.
    fn is_record_file(&self, path: &Path) -> bool {
        let named = |path: Option<&Path>, name: &str| path.and_then(Path::file_name).is_some_and(|n| n == name);
        let folder = path.parent();
        unified::is_projection(path)
            || (named(Some(path), meta::META_FILE) && !named(folder.and_then(Path::parent), "unified"))
            || (path.extension().is_some_and(|extension| extension == "json")
                && named(folder, "session")
                && named(folder.and_then(Path::parent), "logs"))
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&Kinds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn its_session_logs_under_its_home() {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(MistralVibe.record_dirs(&env), [PathBuf::from("/h/.vibe/logs/session")]);
        let with = |value: &'static str| {
            move |name: &str| match name {
                "HOME" => Some(OsString::from("/h")),
                "VIBE_HOME" => Some(OsString::from(value)),
                _ => None,
            }
        };
        assert_eq!(MistralVibe.record_dirs(&with("/v")), [PathBuf::from("/v/logs/session")]);
        assert_eq!(MistralVibe.record_dirs(&with("~/vibe-home")), [PathBuf::from("/h/vibe-home/logs/session")]);
        assert_eq!(MistralVibe.record_dirs(&with("~")), [PathBuf::from("/h/logs/session")]);
        assert!(MistralVibe.record_dirs(&|_: &str| None).is_empty());
        // macOS keeps it in the same place.
        let mac = |name: &str| (name == "HOME").then(|| OsString::from("/Users/dev"));
        assert_eq!(MistralVibe.record_dirs(&mac), [PathBuf::from("/Users/dev/.vibe/logs/session")]);
        for record in [
            "/h/.vibe/logs/session/session_20260511_100000_019e1e27/meta.json",
            "/h/.vibe/logs/session/session_20260511_100000_019e1e27/agents/explore_20260511_100200_9a8b7c6d/meta.json",
            "/h/.vibe/logs/session/session_20251215_101500_1f0e2d3c.json",
            "/h/.vibe/logs/session/unified/a4d376b7-0cc4-10b7-82e8-8f70cde27217/generations/0000000000000016/projection-state.json",
        ] {
            assert!(MistralVibe.is_record_file(Path::new(record)), "{record}");
        }
        for other in [
            "/h/.vibe/logs/session/session_20260511_100000_019e1e27/messages.jsonl",
            "/h/.vibe/logs/session/session_20260511_100000_019e1e27/tmpab12.json.tmp",
            "/h/.vibe/logs/session/session_20260511_100000_019e1e27/other.json",
            "/h/.vibe/logs/session/unified/a4d376b7-0cc4-10b7-82e8-8f70cde27217/meta.json",
            "/h/.vibe/logs/session/unified/a4d376b7-0cc4-10b7-82e8-8f70cde27217/generations/0000000000000016/runtime-state.json",
            "/h/.vibe/logs/session/unified/a4d376b7-0cc4-10b7-82e8-8f70cde27217/journal/0000000000000017.jsonl",
            "/h/.vibe/logs/session/unified/a4d376b7-0cc4-10b7-82e8-8f70cde27217/chunks/b08ba1e3.json",
            "/h/.vibe/logs/session/unified/.session-index.json",
        ] {
            assert!(!MistralVibe.is_record_file(Path::new(other)), "{other}");
        }
    }
}
