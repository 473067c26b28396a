//! Gemini CLI: its chat logs (`<home>/.gemini/tmp/<project>/chats/
//! session-*.jsonl`, one per session). `README.md` beside this file
//! describes the format as observed from the real CLI.
//!
//! - [`chat`]: the incremental reader.

mod chat;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, FileReader, Records, Verified};
use crate::ledger::agents::lines::JsonLines;
use crate::ledger::stored::evidence::AgentState;

/// Gemini CLI, as [`Agent`].
#[derive(Debug)]
pub struct Gemini;

impl Agent for Gemini {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Gemini,
            title: "Gemini CLI",
            verified: Verified::RealCli("0.61.0"),
            unrecorded_calls: Some("the routing call before each prompt, chat summaries and failed attempts"),
            // Its chats keep responses with their thoughts; no turn Bee times, no
            // limit notice (a refused request leaves no line), no cache
            // writes, no cost.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: true,
                cache_writes: false,
                own_cost: false,
            },
        }
    }

    /// `.gemini/tmp` of `GEMINI_CLI_HOME`, else of `HOME`, as the CLI finds it.
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        env("GEMINI_CLI_HOME")
            .or_else(|| env("HOME"))
            .map(|home| PathBuf::from(home).join(".gemini").join("tmp"))
            .into_iter()
            .collect()
    }

    /// `chats/session-*.jsonl`: the CLI's other files there (logs, shell
    /// history, plans) are no chats.
    fn is_record_file(&self, path: &Path) -> bool {
        let in_chats = path.parent().and_then(Path::file_name).is_some_and(|dir| dir == "chats");
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
        in_chats && name.starts_with("session-") && name.ends_with(".jsonl")
    }

    fn file_reader(&self, path: &Path, state: &AgentState) -> Box<dyn FileReader> {
        Box::new(JsonLines::<chat::Chat>::new(path, state))
    }
}
