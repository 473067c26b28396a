//! Qwen Code: its chat logs (`<qwen dir>/projects/<project>/chats/
//! <session>.jsonl`). `README.md` beside this file describes the format as
//! observed from the real CLI.
//!
//! - [`chat`]: the incremental reader.

mod chat;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Qwen Code, as [`Agent`].
#[derive(Debug)]
pub struct Qwen;

impl Agent for Qwen {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Qwen,
            title: "Qwen Code",
            verified: Verified::RealCli("0.24.4"),
            unrecorded_calls: None,
            // Its `api_response` events keep thoughts, no cache writes, no cost;
            // Bee times no turn from them, and a refused request leaves no
            // record.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `projects/` of each directory the CLI writes sessions to:
    /// `QWEN_RUNTIME_DIR` (its runtime output), and its own directory,
    /// `QWEN_HOME`, else `~/.qwen`.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let home =
            env("QWEN_HOME").map(PathBuf::from).or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".qwen")));
        let mut dirs: Vec<PathBuf> = env("QWEN_RUNTIME_DIR")
            .map(PathBuf::from)
            .into_iter()
            .chain(home)
            .map(|dir| dir.join("projects"))
            .collect();
        dirs.dedup();
        dirs
    }

    /// `chats/*.jsonl`: the CLI's other files there are no chats.
    fn is_record_file(&self, path: &Path) -> bool {
        path.parent().and_then(Path::file_name).is_some_and(|dir| dir == "chats")
            && path.extension().is_some_and(|extension| extension == "jsonl")
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<chat::Chat>::new(path, state))
    }
}
