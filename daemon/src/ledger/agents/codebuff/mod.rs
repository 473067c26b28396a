//! Codebuff: each chat's messages (`~/.config/manicode/projects/<project>/
//! chats/<chat>/chat-messages.json`, and the `manicode-dev` and
//! `manicode-staging` channels'), JSON documents it rewrites whole.
//! `README.md` beside this file describes the format.
//!
//! - [`chat`]: the reader of one chat.

pub(crate) mod chat;

use bee_proto::ledger::Provider;
use std::path::{Path, PathBuf};

use crate::ledger::agents::agent::{About, Agent, Env, Records, Verified, WholeFileReader, env_or_home};
use crate::ledger::agents::whole::Documents;

/// Codebuff, as [`Agent`].
#[derive(Debug)]
pub struct Codebuff;

/// Codebuff's reader: each chat document read whole.
pub(crate) static CHATS: Documents = Documents { provider: Provider::Codebuff, keep: &chat::CHAT, read: chat::read };

/// Its release channels, each a directory of its own.
const CHANNELS: [&str; 3] = ["manicode", "manicode-dev", "manicode-staging"];

impl Agent for Codebuff {
    fn about(&self) -> &'static About {
        &About {
            provider: Provider::Codebuff,
            title: "Codebuff",
            verified: Verified::FormatFromSource,
            unrecorded_calls: None,
            // Its chats keep cache writes where the provider reports them; no
            // reasoning, no cost in money, no limit notice, no turn Bee times.
            records: Records {
                time_spans: false,
                limit_notices: false,
                reasoning: false,
                cache_writes: true,
                own_cost: false,
            },
        }
    }

    /// `projects/` of each channel's directory under `XDG_CONFIG_HOME`
    /// (by default `~/.config`).
    fn record_dirs(&self, env: Env<'_>) -> Vec<PathBuf> {
        let Some(config) = env_or_home(env, "XDG_CONFIG_HOME", ".config") else { return Vec::new() };
        CHANNELS.iter().map(|channel| config.join(channel).join("projects")).collect()
    }

    fn is_record_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == "chat-messages.json")
    }

    fn whole_file(&self) -> Option<&dyn WholeFileReader> {
        Some(&CHATS)
    }
}
